"""--audit-submission: the newcomer's audit (library and plugin), exit codes for CI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from builders import write
from leaderboard_audit.auditor import cases as all_cases, make_scope
from leaderboard_audit.records import Items, Records
from leaderboard_audit.records.grid import paper_grid
from leaderboard_audit.auditor import audit, scopes_of
from leaderboard_audit.simulate import demo_spec, simulate
from leaderboard_audit.reports.submission_text import render_submission_text
from leaderboard_audit.submission import overall, submission_audit, submission_cases

ARGS = ("-p", "no:cacheprovider", "-q")


def grid_records(right: dict[str, int], n_items: int = 60, extra: dict[str, dict[int, int]] | None = None) -> Records:
    """Stable models (the same items right under every config), plus per-config
    overrides: ``extra[model][k] = right count under config k``."""
    grid = paper_grid()
    names = sorted(right)
    C = np.zeros((len(names), n_items, len(grid)), dtype=bool)
    for m, name in enumerate(names):
        C[m, : right[name], :] = True
        for k, r in (extra or {}).get(name, {}).items():
            C[m, :, k] = False
            C[m, :r, k] = True
    items = Items(
        np.array(["bench"] * n_items, dtype=object),
        np.array([f"bench/q{i:03d}" for i in range(n_items)], dtype=object),
        [0] * n_items,
        [f"question {i}" for i in range(n_items)],
        [None] * n_items,
    )
    return Records(C, tuple(names), items, grid)


@pytest.fixture(scope="module")
def demo() -> Records:
    return simulate(demo_spec(items_per_benchmark=60))


@pytest.fixture(scope="module")
def demo_dir(demo, tmp_path_factory) -> Path:
    return write(demo, tmp_path_factory.mktemp("demo"))


# -- library ------------------------------------------------------------------------


def test_submission_verdicts_equal_the_full_audit(demo):
    rep = audit(demo, n_boot=1000)
    sub = submission_audit(demo, ["borealis-8b"], n_boot=1000)
    assert list(sub["scopes"]) == scopes_of(demo)
    for scope, s in sub["scopes"].items():
        full = {v["id"]: v for v in rep["scopes"][scope]["verdicts"]}
        assert s["checks"], scope
        for v in s["checks"]:
            assert full[v["id"]]["status"] == v["status"]
            assert full[v["id"]]["margin"] == v["margin"]
        n = s["newcomers"][0]
        assert s["leaderboard"] == [r["model"] for r in rep["scopes"][scope]["leaderboard"]]
        assert "borealis-8b" not in s["leaderboard_without"]
        assert n["rank_range"] == rep["scopes"][scope]["champions"]["rank_range"]["borealis-8b"]
        assert s["champions_with"] == rep["scopes"][scope]["champions"]["set"]


def test_newcomer_pairs_champion_entry_and_broken_orderings(demo):
    sub = submission_audit(demo, ["borealis-8b"], n_boot=1000)
    s = sub["scopes"]["pooled"]
    n = s["newcomers"][0]
    lb = s["leaderboard"]
    pos = lb.index("borealis-8b")
    assert n["position"] == pos + 1
    assert n["above"]["higher"] == lb[pos - 1] and n["above"]["lower"] == "borealis-8b"
    assert n["below"]["higher"] == "borealis-8b" and n["below"]["lower"] == lb[pos + 1]
    for p in (n["above"], n["below"]):
        assert {"robust_items", "higher_only", "lower_only", "reversing", "manufactured", "verdict"} <= set(p)
    # the planted second champion: wins likelihood configs over every existing model
    ch = n["champion"]
    assert ch["enters"] and ch["configs"]
    assert all(w["config"].startswith("ll|") for w in ch["configs"])
    assert all(w["margin_items"] >= 0 and w["displaced"] for w in ch["configs"])
    assert "borealis-8b" in s["champions_with"] and "borealis-8b" not in s["champions_without"]
    assert set(s["champions_without"]) <= set(s["champions_with"])
    # it lands between two models that were adjacent: that ordering is split
    split = [b for b in s["broken"] if b["how"] == "split"]
    assert [(b["higher"], b["lower"]) for b in split] == [(lb[pos - 1], lb[pos + 1])]
    assert split[0]["between"] == ["borealis-8b"]
    assert s["existing_pairs"] == len(s["leaderboard_without"]) - 1


def test_top_and_bottom_newcomers_and_two_at_once():
    r = grid_records({"alpha": 50, "beta": 30, "gamma": 10, "top": 55, "low": 5})
    sub = submission_audit(r, ["top", "low"], n_boot=500)
    s = sub["scopes"]["pooled"]
    top, low = s["newcomers"]
    assert top["above"] is None and top["below"]["lower"] == "alpha" and top["rank"] == 1
    assert low["below"] is None and low["above"]["higher"] == "gamma" and low["rank"] == 5
    assert top["champion"]["enters"] and all(w["margin_items"] == 5 for w in top["champion"]["configs"])
    assert s["champions_without"] == ["alpha"] and s["champions_with"] == ["top"]
    assert s["broken"] == []  # arriving at either end splits nothing
    text = render_submission_text({"submission_audit": sub, "records": {"path": "x"}, "seed": 1, "bootstrap": 500})
    assert "above: none (top of the leaderboard)" in text
    assert "below: none (bottom of the leaderboard)" in text


def test_overall_and_exit_code():
    mk = lambda st: {"id": st, "status": st, "margin": 0.0}  # noqa: E731
    assert overall([mk("pass"), mk("warn")])["exit_code"] == 0
    assert overall([mk("pass"), mk("warn")], strict=True)["exit_code"] == 1
    assert overall([mk("fail")])["exit_code"] == 1
    assert overall([mk("pass")])["status"] == "pass"


def test_unknown_model_is_an_error(demo):
    with pytest.raises(KeyError, match=r"--audit-submission \['nope'\]: not in the records \(models: atlas-70b,"):
        submission_audit(demo, ["nope"])


def test_filter_matches_ids_exactly():
    # "a" is a prefix of "a-b" and "a>b" contains ">": neither may pull in the other's pairs
    names = {"a": 50, "a-b": 40, "a>b": 30, "c": 20, "b": 45}
    r = grid_records(names)
    by_check = all_cases(r)
    for new in names:
        kept = {c.vid for c in submission_cases(by_check["manufactured"], [new])}
        order = make_scope(r, "pooled").ordered_names
        want = {f"manufactured[pooled-{h}>{lo}]" for h, lo in zip(order[:-1], order[1:]) if new in (h, lo)}
        want |= {f"manufactured[bench-{h}>{lo}]" for h, lo in zip(order[:-1], order[1:]) if new in (h, lo)}
        assert kept == want, new
        kept = {c.vid for c in submission_cases(by_check["band"], [new])}
        assert kept == {f"band[pooled-{new}]", f"band[bench-{new}]"}


# -- plugin ---------------------------------------------------------------------------


def test_gate_passes_on_a_clean_newcomer(pytester, tmp_path):
    d = write(grid_records({"alpha": 50, "beta": 30, "gamma": 10, "newbie": 40}), tmp_path / "r")
    out = tmp_path / "rep.json"
    r = pytester.runpytest("--audit", str(d), "--audit-submission", "newbie", "--audit-report", str(out), *ARGS)
    assert r.ret == 0
    # band x2 scopes, 2 pairs x 2 scopes, champions x 2 scopes: 8 verdicts in 4 tests (one
    # benchmark: each test judges the benchmark's verdict and pooled's)
    r.assert_outcomes(passed=4)
    r.stdout.fnmatch_lines(
        [
            "*leaderboard audit*",
            "submission audit of newbie*",
            "newbie: rank 2 of 4*PASS*",
            "  above: alpha > newbie: identified*",
            "  below: newbie > beta: identified*",
            "*breaks 1 of 2 existing adjacent orderings: alpha > beta (was PASS, split by newbie)*",
            "audit: 8 pass, 0 warn, 0 fail",
            "submission newbie: PASS - 8 pass, 0 warn, 0 fail in 8 checks; exit 0",
        ]
    )
    assert "verdicts needing attention" not in r.stdout.str()
    rep = json.loads(out.read_text())
    assert rep["submission"] == ["newbie"]
    assert rep["submission_audit"]["overall"]["exit_code"] == 0
    assert rep["legend"]["reference"] == "gen|letter_plain|p0" and len(rep["legend"]["configs"]) == 26


def test_gate_warn_exits_0_and_strict_exits_1(pytester, tmp_path):
    # newbie gets 2 more items under one config: spread 2/60 = 0.033, a band warn
    d = write(
        grid_records({"alpha": 50, "beta": 30, "gamma": 10, "newbie": 40}, extra={"newbie": {5: 42}}), tmp_path / "r"
    )
    r = pytester.runpytest("--audit", str(d), "--audit-submission", "newbie", *ARGS)
    assert r.ret == 0
    r.stdout.fnmatch_lines(
        ["submission newbie: WARN - * warn, 0 fail in 8 checks; worst band[[]pooled-newbie]; exit 0"]
    )
    s = pytester.runpytest("--audit", str(d), "--audit-submission", "newbie", "--audit-strict", *ARGS)
    assert s.ret == 1
    s.stdout.fnmatch_lines(["submission newbie: FAIL - * warn, 0 fail in 8 checks*exit 1 (--audit-strict: warn fails)"])


def test_gate_fails_on_the_demo_newcomer(pytester, demo_dir):
    r = pytester.runpytest("--audit", str(demo_dir), "--audit-submission", "borealis-8b", *ARGS)
    assert r.ret == 1
    r.stdout.fnmatch_lines(
        [
            "*--- pooled:*",
            "borealis-8b: rank * of 6*",
            "  above: *",
            "  below: *",
            "  champion: wins *",
            "champion set without: *; with: *borealis-8b*",
            "breaks * of 4 existing adjacent orderings*",
            "per benchmark:",
            "arc: borealis-8b*",
            "submission borealis-8b: FAIL - * fail in * checks*; exit 1",
        ]
    )
    # the full leaderboard tables are not printed in submission mode
    assert "most destructive" not in r.stdout.str()


def test_gate_unknown_model_is_a_usage_error(pytester, demo_dir):
    r = pytester.runpytest("--audit", str(demo_dir), "--audit-submission", "nope", *ARGS)
    assert r.ret == pytest.ExitCode.USAGE_ERROR


def test_gate_repeatable_and_under_xdist(pytester, demo_dir, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    args = ("--audit", str(demo_dir), "--audit-submission", "dune-1b", "--audit-submission", "cirrus-3b-dpo", *ARGS)
    r0 = pytester.runpytest_subprocess(*args, "--audit-report", str(a), "-n", "0")
    r2 = pytester.runpytest_subprocess(*args, "--audit-report", str(b), "-n", "2")
    assert a.read_bytes() == b.read_bytes()
    assert r0.ret == r2.ret
    rep = json.loads(a.read_text())
    assert rep["submission_audit"]["models"] == ["dune-1b", "cirrus-3b-dpo"]
    assert [n["model"] for n in rep["submission_audit"]["scopes"]["pooled"]["newcomers"]] == [
        "dune-1b",
        "cirrus-3b-dpo",
    ]
    line = [x for x in r0.stdout.lines if x.startswith("submission dune-1b, cirrus-3b-dpo: ")]
    assert line and line == [x for x in r2.stdout.lines if x.startswith("submission dune-1b, cirrus-3b-dpo: ")]


def test_committed_fixture_plus_one_extra_model(pytester, tmp_path):
    """Acceptance: the committed fixture grid plus one newcomer; the exit code is the one
    the report and the state line announce."""
    import dataclasses

    from leaderboard_audit.records import load_records

    root = Path(__file__).resolve().parents[1] / "fixtures" / "demo"
    if not (root / "grid.json").is_file():
        pytest.skip("fixtures/demo is not in this checkout")
    base = load_records(root)
    src = base.models.index("dune-1b")
    row = base.correct[src].copy()
    wrong = np.flatnonzero(~row.any(axis=1))
    row[wrong[::3]] = True  # a third of dune's robust-wrong items become robust-correct
    names = sorted((*base.models, "eos-2b"))
    C = np.stack([row if m == "eos-2b" else base.correct[base.models.index(m)] for m in names])
    rec = dataclasses.replace(base, correct=C, models=tuple(names), pred=None, margin=None)
    d = write(rec, tmp_path / "plus-one")
    out = tmp_path / "rep.json"
    r = pytester.runpytest("--audit", str(d), "--audit-submission", "eos-2b", "--audit-report", str(out), *ARGS)
    rep = json.loads(out.read_text())
    ov = rep["submission_audit"]["overall"]
    assert r.ret == ov["exit_code"] == (1 if ov["counts"]["fail"] else 0)
    r.stdout.fnmatch_lines(
        [
            "*--- pooled: 7 models*",
            "eos-2b: rank * of 7*",
            "  above: *",
            "  below: *",
            "  champion: *",
            "champion set without: *",
            "breaks * of 5 existing adjacent orderings*",
            f"submission eos-2b: * in {ov['checks']} checks*; exit {r.ret}",
        ]
    )
    outcome = outcomes_of(r)
    assert outcome.get("failed", 0) == ov["counts"]["fail"]
    assert outcome.get("passed", 0) == ov["counts"]["pass"]
    assert outcome.get("warn", 0) == ov["counts"]["warn"]


def outcomes_of(result) -> dict[str, int]:
    return {k: v for k, v in result.parseoutcomes().items() if k not in ("warnings", "warning")}

"""--audit-submission: the newcomer's audit (library and plugin), exit codes for CI."""

from __future__ import annotations

from leaderboard_audit.engine.gate import with_gate

import json
from pathlib import Path

import numpy as np
import pytest

import html as html_mod

from helpers.builders import write
from helpers.gate_boards import big_board, done_when_board
from leaderboard_audit.engine import audit, cases as all_cases, make_scope
from leaderboard_audit.records import Items, Records
from leaderboard_audit.records.grid import paper_grid
from leaderboard_audit.reports.html import render_html
from leaderboard_audit.reports.markdown import gate_markdown, render_markdown
from leaderboard_audit.reports.submission_text import (
    COMMENT_BYTES,
    gate_tables,
    render_submission_text,
    state_line,
)
from leaderboard_audit.records.simulate import demo_spec, simulate
from leaderboard_audit.engine.gate import GateError, gating_checks, submission_audit, submission_cases
from helpers.paths import REPO

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


@pytest.mark.parametrize(
    "kind, code, blocking",
    [
        ("clean", 0, []),
        ("twin", 1, ["manufactured[pooled-newbie>mid]"]),
        ("champ", 1, ["champions[pooled]"]),
    ],
)
def test_done_when_grids(kind, code, blocking):
    """26 configs, wide bands, an old manufactured pair already failing: only what the
    newcomer's arrival creates fails the gate, and the state line names it. One benchmark:
    its scope repeats pooled, so each verdict counts once (UX review 2026-12-04 #15: "2
    fail(s) created" was one verdict)."""
    r = done_when_board(kind)
    sub = submission_audit(r, ["newbie"], n_boot=1000)
    ov = sub["overall"]
    assert ov["exit_code"] == code
    assert set(blocking) <= set(ov["blocking"])
    assert not [b for b in ov["blocking"] if b.startswith(("manufactured[bench-", "champions[bench]"))]
    assert sub["scopes"]["bench"]["repeats"] == "pooled"
    if code:
        n = len(ov["blocking"])
        assert f"({n} fail{'s' if n > 1 else ''} created by the newcomer" in state_line(sub)
    else:
        assert ov["blocking"] == []
    rows = {x["id"]: x for x in sub["scopes"]["pooled"]["rows"]}
    band = rows["band[pooled-newbie]"]
    if kind == "clean":
        # AUDITS v4: the clean newcomer has no harness effect of its own; its spread is item sampling
        assert (band["status"], band["effect"]) == ("warn", "new warn")
    else:  # its config shifts make the band fail beyond item sampling: reported, does not gate
        assert (band["status"], band["effect"]) == ("fail", "not gating")
    assert rows["champions[pooled]"]["without"] == "fail"  # the board failed champions before it arrived
    line = state_line(sub)
    assert line.endswith(f"exit {code}")
    for b in blocking:
        assert b in line
    if kind == "champ":
        # v4: a significant win over the reference winner (exact McNemar, Holm), named with its counts
        assert "newbie beats the reference winner old-a-tuned under ll|" in rows["champions[pooled]"]["why"]
        assert "Holm p " in rows["champions[pooled]"]["why"]
        assert "newbie beats the reference winner old-a-tuned under ll|" in line


def test_pre_existing_fails_are_context_not_the_newcomers():
    sub = submission_audit(done_when_board("clean"), ["newbie"], n_boot=1000)
    ch = {x["id"]: x for x in sub["scopes"]["pooled"]["rows"]}["champions[pooled]"]
    assert (ch["status"], ch["without"], ch["effect"]) == ("fail", "fail", "pre-existing")
    assert sub["overall"]["effects"]["pre-existing"] >= 1 and sub["overall"]["exit_code"] == 0


def test_band_gates_only_when_opted_in():
    r = done_when_board("wide")  # v4: a band fail needs the newcomer's own harness effect
    sub = submission_audit(r, ["newbie"], n_boot=500)
    band = {x["id"]: x for x in sub["scopes"]["pooled"]["rows"]}["band[pooled-newbie]"]
    assert sub["overall"]["exit_code"] == 0 and (band["status"], band["effect"]) == ("fail", "not gating")
    sub = submission_audit(r, ["newbie"], n_boot=500, gate=["band"])
    assert sub["overall"]["exit_code"] == 1 and "band[pooled-newbie]" in sub["overall"]["blocking"]
    # nothing else; one benchmark: its scope repeats pooled, so the verdict counts once (UX review #15)
    assert sub["overall"]["blocking"] == ["band[pooled-newbie]"]
    assert sub["gate"]["gating"][0] == "band"
    with pytest.raises(GateError, match="closest: 'band'"):
        gating_checks(["bandd"])
    with pytest.raises(GateError, match="declares no gate role"):
        gating_checks(["compression"])


def test_unknown_model_gets_the_closest_match(demo):
    with pytest.raises(GateError, match=r"'borealis-8' \(closest: 'borealis-8b'\): not in the records"):
        submission_audit(demo, ["borealis-8"])


def test_one_configuration_skips_are_not_passes():
    r = big_board(n_models=40)
    sub = submission_audit(r, [r.models[20]], n_boot=200)
    rows = {x["id"]: x for x in sub["scopes"]["pooled"]["rows"]}
    assert rows["band[pooled]"]["status"] == rows["champions[pooled]"]["status"] == "skip"
    assert sub["overall"]["counts"]["skip"] == 2  # band and champions, once (one benchmark: pooled repeats it)
    text = render_submission_text({"submission_audit": sub, "records": {"path": "x"}})
    assert not [x for x in text.splitlines() if ("band[" in x or "champions[" in x) and " pass " in x.lower()]
    assert "2 skipped" in text


@pytest.mark.slow
def test_gate_markdown_fits_a_pr_comment_on_a_4278_model_board():
    r = big_board()
    sub = submission_audit(r, [r.models[2000]], n_boot=100)
    text = gate_markdown({"submission_audit": sub})
    assert len(text.encode()) <= COMMENT_BYTES
    assert "Verdicts that concern the newcomer" in text


def test_gate_markdown_caps_rows_and_counts_them():
    sub = submission_audit(done_when_board("clean"), ["newbie"], n_boot=200)
    s = sub["scopes"]["pooled"]
    many = dict(sub, scopes={f"s{j}": s for j in range(400)})
    text = gate_markdown({"submission_audit": many}, max_bytes=20_000)
    assert len(text.encode()) <= 20_000
    assert "rows left out" in text


def test_one_table_model_for_every_renderer(demo):
    rep = with_gate(audit(demo, n_boot=300), demo, ["borealis-8b"], n_boot=300)
    sub = rep["submission_audit"]
    line = state_line(sub)
    term = render_submission_text(rep)
    assert " ".join(line.split()) in " ".join(term.split())  # the terminal wraps it
    html = render_html(rep)
    assert html_mod.escape(line, quote=True) in html
    mdt = render_markdown(rep)
    assert "The whole leaderboard, every check (the gate is below)" in mdt
    assert "The whole leaderboard, every check (the gate is below)" in html
    c = sub["overall"]["counts"]
    assert f"{c['pass']} pass, {c['warn']} warn, {c['fail']} fail" in line
    # the same tables (titles, headers) in all three
    for t in gate_tables(sub):
        if hasattr(t, "headers"):
            assert t.title in term and t.title in html and t.title in mdt


def test_split_orderings_are_context_with_their_old_verdict(demo):
    sub = submission_audit(demo, ["borealis-8b"], n_boot=300)
    split = sub["scopes"]["pooled"]["split"]
    assert [(p["higher"], p["between"]) for p in split] == [("atlas-70b", ["borealis-8b"])]
    assert split[0]["status_without"] in ("pass", "warn", "fail")
    assert "breaks" not in render_submission_text({"submission_audit": sub, "records": {}})


def test_a_user_check_can_gate(monkeypatch):
    from leaderboard_audit.engine import gate as submission, scope as auditor
    from leaderboard_audit.checks import Check, registry
    from leaderboard_audit.checks.verdicts import make_verdict

    class Newcomers(Check):
        name = "uc_newcomer"
        gate = "scope"

        def judge(self, scope, section):
            st = "fail" if "newbie" in scope.names else "pass"
            return [
                make_verdict(self.name, f"uc_newcomer[{scope.name}]", st, 0.0, 0.0, -1.0 if st == "fail" else 0.0, st)
            ]

    reg = dict(registry())
    reg["uc_newcomer"] = Newcomers()
    monkeypatch.setattr(submission, "registry", lambda: reg)
    monkeypatch.setattr(auditor, "registry", lambda: reg)
    sub = submission_audit(done_when_board("clean"), ["newbie"], n_boot=200)
    assert "uc_newcomer[pooled]" in sub["overall"]["blocking"] and sub["overall"]["exit_code"] == 1


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
        assert {c.vid for c in submission_cases(by_check["champions"], [new])} == {
            "champions[pooled]",
            "champions[bench]",
        }


# -- plugin ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind, code", [("clean", 0), ("twin", 1), ("champ", 1)])
def test_gate_done_when_under_pytest(pytester, tmp_path, kind, code):
    d = write(done_when_board(kind), tmp_path / "r")
    md = tmp_path / "gate.md"
    r = pytester.runpytest(f"--audit={d}", "--audit-submission", "newbie", "--audit-markdown", str(md), *ARGS)
    assert r.ret == code
    out = r.stdout.str()
    assert "gating checks: manufactured, ranking, champions; context only: band" in out
    line = [x for x in r.stdout.lines if x.startswith("submission newbie: ")]
    assert line and line[0].startswith(f"submission newbie: {'FAIL' if code else 'WARN'}")
    if kind == "twin":
        assert "fails the gate: manufactured[pooled-newbie>mid]" in out
    if kind == "champ":
        assert "champions[pooled]" in out and "newbie beats the reference winner old-a-tuned under ll|" in out
    # counts agree: failed tests = fails the newcomer created; xfailed = context fails
    sub_rows = outcomes_of(r)
    assert sub_rows.get("failed", 0) == (0 if code == 0 else sub_rows["failed"]) and (code == 0) == (
        "failed" not in sub_rows
    )
    assert sub_rows.get("xfailed", 0) >= 1  # the board's own champions fail (and a failing band)
    assert len(md.read_bytes()) <= 65_536 and "Submission gate" in md.read_text()


def test_gate_band_opt_in_and_bad_gate_names(pytester, tmp_path):
    d = write(done_when_board("wide"), tmp_path / "r")
    r = pytester.runpytest(f"--audit={d}", "--audit-submission", "newbie", "--audit-gate", "band", *ARGS)
    assert r.ret == 1
    r.stdout.fnmatch_lines(["*fails the gate: band[[]pooled-newbie]*"])
    r = pytester.runpytest(f"--audit={d}", "--audit-submission", "newbie", "--audit-gate", "bnd", *ARGS)
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    r.stderr.fnmatch_lines(["*--audit-gate 'bnd': no such check (closest: 'band')*"])


def test_gate_passes_on_a_clean_newcomer(pytester, tmp_path):
    d = write(grid_records({"alpha": 50, "beta": 30, "gamma": 10, "newbie": 40}), tmp_path / "r")
    out = tmp_path / "rep.json"
    r = pytester.runpytest("--audit", str(d), "--audit-submission", "newbie", "--audit-report", str(out), *ARGS)
    assert r.ret == 0
    rep = json.loads(out.read_text())
    assert rep["submission"] == ["newbie"]
    assert rep["submission_audit"]["overall"]["exit_code"] == 0
    assert rep["legend"]["reference"] == "gen|letter_plain|p0" and len(rep["legend"]["configs"]) == 26


def test_gate_warn_exits_0_and_strict_exits_1(pytester, tmp_path):
    # newbie gets 2 more items under one config: its pair with alpha still identified; with
    # --audit-gate band its band warn (spread 2/60 = 0.033) is a new warn of a gating check
    d = write(
        grid_records({"alpha": 50, "beta": 30, "gamma": 10, "newbie": 40}, extra={"newbie": {5: 42}}), tmp_path / "r"
    )
    args = ("--audit", str(d), "--audit-submission", "newbie", "--audit-gate", "band", *ARGS)
    r = pytester.runpytest(*args)
    assert r.ret == 0
    r.stdout.fnmatch_lines(["submission newbie: WARN - * warn, 0 fail in * checks*; exit 0"])
    s = pytester.runpytest(*args, "--audit-strict")
    assert s.ret == 1
    s.stdout.fnmatch_lines(
        ["submission newbie: FAIL - *band[[]pooled-newbie]*exit 1 (--audit-strict: a new warn fails)"]
    )


def test_gate_fails_on_the_demo_newcomer(pytester, demo_dir):
    r = pytester.runpytest("--audit", str(demo_dir), "--audit-submission", "borealis-8b", *ARGS)
    assert r.ret == 1
    r.stdout.fnmatch_lines(
        ["Where the newcomer lands:", "Verdicts that concern the newcomer:", "submission borealis-8b: FAIL - *; exit 1"]
    )
    assert "most destructive" not in r.stdout.str()


def test_gate_unknown_model_is_a_usage_error(pytester, demo_dir):
    r = pytester.runpytest("--audit", str(demo_dir), "--audit-submission", "dune-1", *ARGS)
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    r.stderr.fnmatch_lines(["*--audit-submission 'dune-1' (closest: 'dune-1b'): not in the records (6 models*"])


@pytest.mark.slow
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


@pytest.mark.slow
def test_committed_fixture_plus_one_extra_model(pytester, tmp_path):
    """Acceptance: the committed fixture grid plus one newcomer; the exit code is the one
    the report and the state line announce."""
    import dataclasses

    from leaderboard_audit.records import load_records

    root = REPO / "fixtures" / "demo"
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
    # exit 1 exactly when the newcomer created a fail (AUDITS v4: the fails on this board are the
    # board's own champions, pre-existing, so the exit is 0 although the counts show fails)
    assert r.ret == ov["exit_code"] == (1 if ov["effects"]["created"] else 0)
    assert (
        ov["counts"]["fail"] == ov["effects"]["created"] + ov["effects"]["pre-existing"] + ov["effects"]["not gating"]
    )
    r.stdout.fnmatch_lines([f"submission eos-2b: * in {ov['checks']} checks*; exit {r.ret}"])
    outcome = outcomes_of(r)
    e = ov["effects"]
    assert outcome.get("failed", 0) == e["created"]
    assert outcome.get("xfailed", 0) == e["pre-existing"] + e["not gating"]


def outcomes_of(result) -> dict[str, int]:
    return {k: v for k, v in result.parseoutcomes().items() if k not in ("warnings", "warning")}

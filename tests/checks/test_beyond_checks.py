"""The beyond-the-paper checks in the registry (docs/audits.md, "Beyond the paper"): the
``mix`` verdicts on planted grids, the ``flip``/``compliance``/``robust_subset`` sections on
fixtures/real, their skips, and the terminal / Markdown / HTML renderings."""

from __future__ import annotations

import json

import numpy as np
import pytest

from helpers.builders import write
from leaderboard_audit.engine import audit, audit_scope, cases, dumps_report
from leaderboard_audit.checks import registry
from leaderboard_audit.checks.mix import compare, headline_from_sections
from helpers.table9 import headline_numbers
from leaderboard_audit.records import Items, Records, load_records
from leaderboard_audit.records.grid import paper_grid
from leaderboard_audit.reports.html import render_html
from leaderboard_audit.reports.markdown import render_markdown
from leaderboard_audit.reports.terminal import render_summary
from leaderboard_audit.records.simulate import demo_spec, simulate
from helpers.boards import carried_by_one_benchmark
from helpers.paths import REPO

REAL = REPO / "fixtures" / "real"
ARGS = ("-p", "no:cacheprovider", "-q")


def pooled_verdicts(report: dict) -> dict[str, dict]:
    return {v["id"]: v for v in report["scopes"]["pooled"]["verdicts"]}


def same_everywhere(n_bench: int = 3) -> Records:
    """Every benchmark holds the same 60 items' answers (50 / 30 / 10 right, same under every
    config): removing one changes no proportion."""
    g = paper_grid()
    n = 60
    C = np.zeros((3, n_bench * n, len(g)), dtype=bool)
    for j in range(n_bench):
        for m, right in enumerate((50, 30, 10)):
            C[m, j * n : j * n + right, :] = True
    names = [f"b{j}" for j in range(n_bench)]
    items = Items(
        np.array([b for b in names for _ in range(n)], dtype=object),
        np.array([f"{b}/{i}" for b in names for i in range(n)], dtype=object),
        [0] * n_bench * n,
        [None] * n_bench * n,
        [None] * n_bench * n,
    )
    return Records(C, ("alpha", "beta", "gamma"), items, g)


@pytest.mark.slow
def test_mix_fails_naming_the_benchmark_that_carries_the_champion_claim():
    # AUDITS v4: bolt's ll win must be beyond item sampling under random drops too (50 v 4 items
    # only one of the two gets right, c alone giving 50 v 0), or random drops of 50 items undo it
    # as often as dropping c does and the change is not specific to c
    rep = audit(carried_by_one_benchmark(c_ll=(0, 50)), n_boot=2000)
    v = pooled_verdicts(rep)
    assert v["champions[pooled]"]["status"] == "fail"
    c = v["mix[c]"]
    assert c["status"] == "fail" and "champions" in c["evidence"]["changed_checks"]
    assert "rests on c" in c["message"] and "champions[pooled] fail -> pass" in c["message"]
    assert "champion count 2 -> 1" in c["message"]
    for b in ("a", "b"):
        assert "champions" not in v[f"mix[{b}]"]["evidence"]["changed_checks"]
    mix = rep["scopes"]["pooled"]["mix"]
    # v5: value = changes specific to c; Monte-Carlo p = (hits + 1) / (draws + 1) <= 0.05 / (every
    # pooled verdict x benchmark), margin = the smallest such p minus that level
    level = 0.05 / mix["family"]
    assert mix["family"] == len(mix["without"]) * sum(x["check"] in mix["checks"] for x in rep_pooled(rep))
    assert mix["draws"] + 1 >= 20 * mix["family"]  # 0 hits reach the level
    assert mix["specific_level"] == level and mix["changes_total"] >= len(c["evidence"]["status_changes"])
    assert c["value"] == len(c["evidence"]["specific"]) and c["margin"] < 0
    assert c["evidence"]["p"]["champions[pooled]"] == 1 / (mix["draws"] + 1) <= level  # no random drop did it
    assert c["margin"] == min(round(1 / (mix["draws"] + 1) - level, 12), -1e-12)  # p = level: just below
    ch = {x["id"]: x for x in mix["without"]["c"]["status_changes"]}["champions[pooled]"]
    assert (ch["drops_judged"], ch["p_is_bound"], ch["q"]) == (mix["draws"], False, 0.0)
    assert mix["full"]["champion_count"] == 2 and mix["without"]["c"]["headline"]["champion_count"] == 1
    assert mix["without"]["c"]["items"] == 100 and "champions" in mix["checks"]
    assert not any(k in mix["checks"] for k in ("flip", "compliance", "robust_subset", "mix"))


@pytest.mark.slow
def test_mix_a_weak_claim_is_not_specific_to_the_benchmark():
    # the default plant (c: 40 v 10 under ll) fails champions on the full board, but random drops
    # of 50 items undo that fail about as often as dropping c: not specific (v3 failed mix[c])
    rep = audit(carried_by_one_benchmark(), n_boot=2000)
    v = pooled_verdicts(rep)
    assert v["champions[pooled]"]["status"] == "fail"
    assert "champions" not in v["mix[c]"]["evidence"]["changed_checks"]
    ch = {x["id"]: x for x in rep["scopes"]["pooled"]["mix"]["without"]["c"]["status_changes"]}["champions[pooled]"]
    assert ch["p"] > rep["scopes"]["pooled"]["mix"]["specific_level"]


@pytest.mark.slow
def test_mix_summary_line_counts_changes_that_random_drops_explain():
    """Exchangeable benchmarks: verdicts change without some benchmark, none specifically (every
    mix verdict passes); the summary says so rather than that nothing changed."""
    from leaderboard_audit.records.simulate import exchangeable_spec

    rep = audit(simulate(exchangeable_spec(2)), n_boot=200)
    pooled = rep["scopes"]["pooled"]
    assert {v["status"] for v in pooled["verdicts"] if v["check"] == "mix"} == {"pass"}
    line = registry()["mix"].tables("pooled", pooled)[-1].text
    n = pooled["mix"]["changes_total"]
    assert n > 1 and "keeps its status" not in line
    assert f"{n} pooled verdicts change status without some benchmark, none beyond what random drops" in line


def test_mix_passes_when_every_benchmark_tells_the_same_story():
    rep = audit(same_everywhere(), n_boot=2000)
    v = pooled_verdicts(rep)
    assert [v[f"mix[b{j}]"]["status"] for j in range(3)] == ["pass"] * 3
    assert all(v[f"mix[b{j}]"]["margin"] == 0 for j in range(3))
    assert "keeps its status" in v["mix[b0]"]["message"]
    assert (
        "every pooled verdict keeps its status" in registry()["mix"].tables("pooled", rep["scopes"]["pooled"])[-1].text
    )


def test_mix_warns_when_a_value_crosses_its_threshold_without_a_status_change():
    full = [{"check": "x", "id": "x[pooled]", "status": "warn", "value": 0.1, "threshold": 0.0, "margin": -0.1}]
    red = [{"check": "x", "id": "x[pooled]", "status": "warn", "value": -0.1, "threshold": 0.0, "margin": 0.1}]
    d = compare(full, red)
    assert d["status_changes"] == [] and d["check_status"] == {} and len(d["crossings"]) == 1
    red[0]["status"] = "pass"
    d = compare(full, red)
    assert d["status_changes"][0]["before"] == "warn" and d["check_status"] == {
        "x": {"before": "warn", "after": "pass"}
    }


def test_mix_needs_three_benchmarks():
    r = same_everywhere(n_bench=2)
    assert cases(r)["mix"] == []
    s = audit(r)["scopes"]["pooled"]
    assert "mix" not in s and not any(v["check"] == "mix" for v in s["verdicts"])
    assert len(cases(same_everywhere(3))["mix"]) == 3


def test_headline_from_sections_equals_headline_numbers():
    r = simulate(demo_spec(items_per_benchmark=50, seed=4))
    s = audit_scope(r, "pooled", seed=3, n_boot=2000)
    got = headline_from_sections(s, s["n_items"], list(r.benchmarks), s["reference"])
    want = headline_numbers(r, seed=3, n_boot=2000)
    for key, val in want.items():
        if isinstance(val, float):
            assert got[key] == pytest.approx(val, abs=1e-12), key
        else:
            assert got[key] == val, key


@pytest.mark.slow
@pytest.mark.skipif(not (REAL / "grid.json").exists(), reason="fixtures/real missing")
def test_real_fixture_sections_and_renderings():
    r = load_records(REAL)
    report = audit(r)
    rep = json.loads(dumps_report(report))  # what the JSON file holds (keys sorted)
    pooled = rep["scopes"]["pooled"]
    f = pooled["flip"]
    assert f["config"] == "ll|cloze_plain" and set(f["per_model"]) == set(r.models)
    # v3: tiny models have 3 robust items in all (399 v 1 per model): no AUC, and the reason
    assert f["pooled"]["auc"] is None and "too few items in a class" in f["pooled"]["reason"]
    assert len(f["pooled"]["calibration"]) == 10 and len(f["pooled"]["roc"]["fpr"]) <= 101
    c = pooled["compliance"]
    for e in c["per_model"].values():
        assert e["loss"] == pytest.approx(e["compliance"] + e["competence"] + e["unrecorded"], abs=1e-12)
    assert c["scoring_tau"]["per_config"]
    assert pooled["robust_subset"]["k"] == 100
    assert set(pooled["mix"]["without"]) == set(r.benchmarks)
    assert sum(v["check"] == "mix" for v in pooled["verdicts"]) == 4
    for b in r.benchmarks:
        s = rep["scopes"][b]
        assert s["flip"]["pooled"]["ci"] is None and s["flip"]["ci_note"] and "roc" not in s["flip"]["pooled"]
        assert "auc" in s["flip"]["pooled"] and s["flip"]["pooled"]["screen"]
        assert all("per_config" not in e for e in s["compliance"]["per_model"].values())
        assert "compliance" in s and "robust_subset" in s and "mix" not in s
    rep = report  # renderers take the report in scope order
    verdicts = [v for s in rep["scopes"].values() for v in s["verdicts"]]
    short = render_summary(rep, verdicts, width=200)
    for text in (
        "flip predictor (ll|cloze_plain margin): no AUC (too few items in a class",
        "compliance: unparseable answers carry",
        "robust subset (k=100)",
        "mix (leave one benchmark out)",
    ):
        assert text in short
    md = render_markdown(rep)
    for text in ("Flip predictor", "Compliance vs competence", "Robust subset vs top", "Leave one benchmark out"):
        assert text in md
    html = render_html(rep)
    drawn = sum(st["auc"] is not None for st in [*f["per_model"].values(), f["pooled"]])
    # v3: no model has 10 robust items, so no AUC and no Figure 5 (it would draw nothing)
    assert drawn == 0 and 'id="fig5-svg"' not in html
    assert "fragile rate by margin decile" in html


@pytest.mark.slow
def test_sections_skipped_without_margins_and_predictions():
    rep = audit(simulate(demo_spec(items_per_benchmark=40)), n_boot=500)
    pooled = rep["scopes"]["pooled"]
    assert pooled["flip"] == {"skipped": "the records carry no option margins"}
    assert "pred" in pooled["compliance"]["skipped"]
    assert "fig5" not in render_html(rep)
    full = render_summary(rep, pooled["verdicts"], detail="full", width=200)
    assert "flip predictor: skipped (the records carry no option margins)" in full


def test_new_checks_are_registered_after_the_paper_checks():
    names = list(registry())
    assert names[-4:] == ["flip", "compliance", "robust_subset", "mix"]
    for n in ("flip", "compliance", "robust_subset"):
        assert registry()[n].cases(None) == []  # report sections: no test of their own


@pytest.mark.slow
def test_plugin_runs_test_mix_per_benchmark(pytester, tmp_path):
    d = write(carried_by_one_benchmark(), tmp_path / "carried")
    result = pytester.runpytest("--audit", str(d), "-k", "mix", "--audit-boot", "2000", *ARGS)
    result.stdout.fnmatch_lines(["*test_mix*c*", "*rests on c*"])
    out = result.parseoutcomes()
    assert out["failed"] >= 1 and result.ret == 1


@pytest.mark.parametrize("n_models,n_items,configs", [(1, 6, None), (3, 3, None), (3, 9, 1), (2, 12, 2)])
def test_degenerate_grids_give_valid_sections(n_models, n_items, configs):
    """One model, one item per benchmark, one or two configurations, with margins and preds:
    no crash, no NaN in the JSON, three benchmarks so mix runs too."""
    from leaderboard_audit.records import PRED_UNPARSEABLE
    from leaderboard_audit.records.grid import Grid

    g = paper_grid()
    if configs is not None:
        keep = [g.configs[g.reference_index], *[c for c in g.configs if c.scoring == "ll"]][:configs]
        g = Grid(tuple(keep), g.reference)
    rng = np.random.default_rng(n_models * 100 + n_items)
    n = 3 * n_items
    C = rng.random((n_models, n, len(g))) < 0.5
    pred = np.where(C, 0, np.where(rng.random(C.shape) < 0.5, PRED_UNPARSEABLE, 1)).astype(np.int16)
    margin = np.where(rng.random(C.shape) < 0.8, rng.random(C.shape), np.nan)
    items = Items(
        np.array([b for b in "xyz" for _ in range(n_items)], dtype=object),
        np.array([f"{b}/{i}" for b in "xyz" for i in range(n_items)], dtype=object),
        [0] * n,
        [None] * n,
        [None] * n,
    )
    r = Records(C, tuple(f"m{j}" for j in range(n_models)), items, g, pred=pred, margin=margin)
    rep = json.loads(dumps_report(audit(r, n_boot=200)))
    pooled = rep["scopes"]["pooled"]
    for key in ("flip", "compliance", "robust_subset", "mix"):
        assert key in pooled
    assert {v["status"] for v in pooled["verdicts"]} <= {"pass", "warn", "fail", "skip"}
    render_html(rep)
    render_markdown(rep)


@pytest.mark.slow
def test_release_style_records_with_unparsed_counts_only():
    from dataclasses import replace as dc_replace

    r = simulate(demo_spec(items_per_benchmark=30))
    counts = np.random.default_rng(0).integers(0, 3, (len(r.models), r.shape[1])).astype(np.int16)
    rep = audit(dc_replace(r, unparsed=counts), n_boot=500)
    c = rep["scopes"]["pooled"]["compliance"]
    assert c["source"] == "unparsed" and "skipped" in c["scoring_tau"]
    verdicts = [v for s in rep["scopes"].values() for v in s["verdicts"]]
    assert "scoring-axis tau not split" in render_summary(rep, verdicts, width=200)
    render_html(rep)
    render_markdown(rep)


RELEASE = REPO / "fixtures" / "release" / "records"


@pytest.mark.skipif(not RELEASE.exists(), reason="fixtures/release missing")
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_release_layout_feeds_flip_and_compliance():
    """The paper's release layout: one margin (plain cloze) and per-item unparsed counts."""
    s = audit(load_records(RELEASE), n_boot=500)["scopes"]["pooled"]
    assert s["flip"]["config"] == "ll|cloze_plain" and s["flip"]["pooled"]["auc"] is not None
    assert s["compliance"]["source"] == "unparsed"


def rep_pooled(rep):
    """The pooled scope's verdicts."""
    return rep["scopes"]["pooled"]["verdicts"]

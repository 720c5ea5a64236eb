"""Every check on graded records (issue 47, item 2), on a tiny set computed by hand
(docs/audits.md, "Graded outcomes"): accuracies are mean outcomes, robust = won (outcome
1) under every configuration, the adjacent pairs read the jointly robust items."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard_audit.arena.stats import t_two_sided_p
from leaderboard_audit.engine import audit
from leaderboard_audit.records import Items, Records
from leaderboard_audit.records.grid import parse_grid

# outcomes per item (ref, alt): models a, b, c; items i1..i4
S = {
    "a": [(1, 1), (1, 0.5), (0.5, 0.5), (0, 0)],
    "b": [(1, 1), (0.5, 0.5), (0, 0), (0.5, 0)],
    "c": [(0, 0.5), (0, 1), (0, 0.5), (1, 1)],
}


def graded_records() -> Records:
    grid = parse_grid(
        {
            "reference": "ref",
            "configs": [{"key": "ref", "scoring": "judge"}, {"key": "alt", "scoring": "judge"}],
            "axis_groups": {"position": ["ref", "alt"]},
        },
        "grid.json",
    )
    score = np.array([S[m] for m in S], dtype=float)
    items = Items(
        np.array(["bench"] * 4, dtype=object),
        np.array([f"i{i}" for i in range(1, 5)], dtype=object),
        [None] * 4,
        [None] * 4,
        [None] * 4,
    )
    return Records(score == 1, tuple(S), items, grid, score=score)


@pytest.fixture(scope="module")
def scope():
    return audit(graded_records(), n_boot=200)["scopes"]["bench"]


def test_band_reads_mean_outcomes_and_won_items(scope):
    rows = {r["model"]: r for r in scope["leaderboard"]}
    assert [r["model"] for r in scope["leaderboard"]] == ["a", "b", "c"]  # 0.625 > 0.5 > 0.25
    want = {  # reference, min, max, spread (mean outcomes); robust, optimistic, config_lucky (won)
        "a": (0.625, 0.5, 0.625, 0.125, 0.25, 0.5, 0.5),
        "b": (0.5, 0.375, 0.5, 0.125, 0.25, 0.25, 0.0),
        "c": (0.25, 0.25, 0.75, 0.5, 0.25, 0.5, 0.0),
    }
    keys = ("reference", "min", "max", "spread", "robust", "optimistic", "config_lucky")
    for m, values in want.items():
        assert tuple(rows[m][k] for k in keys) == pytest.approx(values)
    assert rows["a"]["reference_items"] == 2.5
    # Hotelling's T^2 on c's contrasts alt - ref = (0.5, 1, 0.5, 0): mean 1/2, variance 1/6,
    # T^2 = 4 (1/2)^2 / (1/6) = 6 = F(1, 3), whose tail is t(3)'s at sqrt(6)
    assert rows["c"]["cochran_q"] == pytest.approx(6.0)
    assert rows["c"]["harness_p"] == pytest.approx(t_two_sided_p(6**0.5, 3), rel=1e-9)


def test_champions_on_mean_outcomes(scope):
    ch = scope["champions"]
    assert ch["set"] == ["a", "c"] and ch["count"] == 2  # ref: a 0.625; alt: c 0.75
    alt = next(c for c in ch["per_config"] if c["config"] == "alt")
    assert alt["winners"] == ["c"] and alt["margin"] == pytest.approx(0.25)
    assert alt["margin_items"] == 1 and alt["lead_items"] == 1  # (0.75 - 0.5) x 4 items
    ref = next(c for c in ch["per_config"] if c["config"] == "ref")
    assert ref["margin_items"] == 0.5  # half an item: a sum of outcomes, not rounded away


def test_adjacent_pairs_on_the_jointly_robust_items(scope):
    ab, bc = scope["pairs"]
    # a vs b: robust for both (won all or none) are i1, i3, i4; neither wins one alone there
    assert (ab["robust_items"], ab["higher_only"], ab["lower_only"]) == (3, 0, 0)
    assert ab["gap_items"] == 0.5 and ab["fragile_share"] == 1.0
    assert (ab["cause"], ab["manufactured"]) == ("undecidable", False)  # v5: manufactured = the harness cause
    # b vs c: i1 (b won, c never) and i4 (c won, b never)
    assert (bc["robust_items"], bc["higher_only"], bc["lower_only"]) == (3, 1, 1)
    # alt reverses b > c on the outcomes: c above b on i2, i3, i4, below on i1
    assert (bc["reversal"]["lower_only"], bc["reversal"]["higher_only"]) == (3, 1)


def test_averaged_order_on_item_mean_outcomes(scope):
    av = scope["averaged"]
    board = {r["model"]: r["averaged"] for r in av["board"]["rows"]}
    assert board == pytest.approx({"a": 0.5625, "b": 0.4375, "c": 0.5})
    ab = av["adjacent"][0]
    assert (ab["above"], ab["below"], ab["configs_won"]) == (2, 1, [2, 0])  # a above b on i2, i3; below on i4


def test_skipped_with_the_reason(scope):
    v = {x["id"]: x for x in scope["verdicts"]}
    assert v["compression[bench]"]["status"] == "skip" and "graded outcomes" in v["compression[bench]"]["message"]
    assert "graded outcomes" in scope["robust_subset"]["skipped"]


def test_outcomes_of_0_and_1_give_the_boolean_audit():
    """A graded set whose outcomes are all 0/1 is the boolean set: the same report."""
    rec = graded_records()
    bits = Records(rec.score >= 0.5, rec.models, rec.items, rec.grid)
    as_scores = Records(bits.correct, rec.models, rec.items, rec.grid, score=bits.correct.astype(float))
    a, b = audit(bits, n_boot=200), audit(as_scores, n_boot=200)
    for name in ("leaderboard", "champions", "pairs", "averaged", "axes", "brittleness", "identified"):
        assert a["scopes"]["bench"][name] == b["scopes"]["bench"][name], name


def test_random_drop_of_graded_records_reads_the_kept_outcomes():
    """mix's random drops (drop_scope.py) count from the parent's bits; on graded records
    they read the reduced set's outcomes, as a Scope of the same items does."""
    from dataclasses import replace

    from helpers.records import make_records

    from leaderboard_audit.checks.base import Scope
    from leaderboard_audit.checks.drop_scope import DropScope
    from leaderboard_audit.checks.thresholds import Thresholds

    rec = make_records(benches=(("arc", 6), ("mmlu", 5), ("race", 5)), seed=3)
    rng = np.random.default_rng(0)
    score = rng.choice([0.0, 0.25, 0.5, 1.0], size=rec.shape)
    g = replace(rec, correct=score == 1, score=score)
    keep = np.sort(rng.permutation(g.shape[1])[:11])
    labels = g.items.benchmark[keep]
    t = Thresholds()
    drop = DropScope(g, keep, np.setdiff1d(np.arange(g.shape[1]), keep), labels, seed=1, n_boot=10, thresholds=t)
    same = Scope(g.select_items(keep), "pooled", seed=1, n_boot=10, thresholds=t)
    assert np.array_equal(drop.counts, same.counts) and drop.counts.dtype.kind == "f"
    hs, ls = np.array([0, 1]), np.array([1, 2])
    assert all(np.array_equal(a, b) for a, b in zip(drop.config_discordance(hs, ls), same.config_discordance(hs, ls)))
    assert all(
        np.array_equal(a, b) for a, b in zip(drop.averaged_pair_counts(hs, ls), same.averaged_pair_counts(hs, ls))
    )
    assert all(np.array_equal(a, b) for a, b in zip(drop.reference_discordance, same.reference_discordance))
    assert all(np.array_equal(a, b) for a, b in zip(drop.pair_counts(hs, ls), same.pair_counts(hs, ls)))

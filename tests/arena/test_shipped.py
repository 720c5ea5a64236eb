"""The targets of issue 47 on the real shipped data (vendored under tests/data; see its README)."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from helpers.paths import DATA
from leaderboard_audit.arena.audit import audit_arena, audit_table
from leaderboard_audit.arena.data import read_counts
from leaderboard_audit.arena.table import read_table

ARENA = DATA / "arena" / "chatbotarena_20240814.json"
ALPACA = DATA / "alpaca_eval" / "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"


@pytest.fixture(scope="module")
def arena_report():
    return audit_arena(read_counts(ARENA), n_boot=1000, seed=1234)


@pytest.fixture(scope="module")
def alpaca_report():
    return audit_table(read_table(ALPACA))


def test_arena_counts_read_as_shipped():
    pc = read_counts(ARENA)
    assert (len(pc.models), len(pc.i), pc.n_battles) == (129, 3460, 1_670_250)


@pytest.mark.slow
def test_arena_champions(arena_report):
    champs = arena_report["champions"]
    assert len({m for ms in champs.values() for m in ms}) >= 2
    for rule in ("bt_ties_dropped", "bt_ties_halved", "bt_bothbad_halved"):
        assert champs[rule] == ["chatgpt-4o-latest"]
    # the schedule effect: the win rates crown the model that met fewer opponents
    assert champs["mean_pairwise"] == champs["win_share"] == ["gpt-3.5-turbo-0314"]
    assert arena_report["opponents"]["gpt-3.5-turbo-0314"] == 21
    assert arena_report["opponents"]["chatgpt-4o-latest"] == 31
    verdict = next(v for v in arena_report["verdicts"] if v["id"] == "champions[arena]")
    assert verdict["status"] == "fail" and verdict["value"] == 2


@pytest.mark.slow
def test_arena_tiers_from_1000_resamples(arena_report):
    ident = arena_report["identified"]
    assert arena_report["bootstrap"] == 1000
    tiers = ident["tiers"]
    assert sorted(m for t in tiers for m in t) == sorted(arena_report["models"])
    assert tiers[0] == ["chatgpt-4o-latest"]
    assert 1 < len(tiers) < 129
    assert 0 < ident["identified_pairs"] < ident["pairs"] == 129 * 128 // 2
    # every tier lists its models in the printed order
    pos = {m: k for k, m in enumerate(arena_report["models"])}
    assert all([pos[m] for m in t] == sorted(pos[m] for m in t) for t in tiers)


@pytest.mark.slow
def test_arena_rank_ranges(arena_report):
    rows = {r["model"]: r for r in arena_report["rank_ranges"]}
    assert rows["gpt-3.5-turbo-0314"]["best"] == 1
    assert rows["gpt-3.5-turbo-0314"]["worst"] > 10
    assert all(r["best"] <= r["ranks"][c] <= r["worst"] for r in rows.values() for c in r["ranks"])


def test_alpaca_null_model_flagged(alpaca_report):
    champs = alpaca_report["champions"]
    crowned = [c for c, ms in champs.items() if "NullModel" in ms]
    assert crowned == ["length_controlled_winrate"]
    assert len(champs) == 2
    flagged = [e["model"] for e in alpaca_report["exploit"] if e["flagged"]]
    assert flagged == ["NullModel"]
    assert alpaca_report["next_steps"][0].startswith("Examine NullModel first")
    verdict = next(v for v in alpaca_report["verdicts"] if v["id"] == "exploit[table]")
    assert verdict["status"] == "fail" and "NullModel" in verdict["message"]


def test_alpaca_reversals_and_tau_independently(alpaca_report):
    from scipy.stats import kendalltau

    with open(ALPACA, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    names = [r[""] for r in rows]
    wr = np.array([float(r["win_rate"]) for r in rows])
    lc = np.array([float(r["length_controlled_winrate"]) for r in rows])
    order = sorted(range(len(rows)), key=lambda k: (-wr[k], k))
    reversed_ = sum(lc[b] > lc[a] for a, b in zip(order, order[1:]))
    (o,) = alpaca_report["orders"]
    assert o["config"] == "length_controlled_winrate"
    assert (o["reversed"], o["adjacent_pairs"]) == (reversed_, len(rows) - 1) == (104, 222)
    assert o["kendall_tau"] == pytest.approx(kendalltau(wr, lc).statistic, abs=1e-12)
    assert round(o["kendall_tau"], 3) == 0.843
    assert len(names) == 223


def test_alpaca_skips_item_checks_with_reason(alpaca_report):
    skipped = [v for v in alpaca_report["verdicts"] if v["status"] == "skip"]
    assert {"flip", "manufactured", "robust_subset"} & {v["check"] for v in skipped}
    assert all("per-item records" in v["message"] for v in skipped if v["check"] not in ("axes", "band"))


def test_alpaca_boards_under_three_judges():
    """AlpacaEval 2's boards under three annotator configs (alpaca-eval 0.6.6, vendored):
    the judge is the configuration; 9 models are on every board."""
    from leaderboard_audit.arena.formats import sniff

    folder = DATA / "alpaca_eval" / "judges"
    assert sniff(folder) == "score-table"
    t = read_table(folder)
    assert len(t.models) == 9 and t.reference == "judge=weighted_alpaca_eval_gpt4_turbo"
    rep = audit_table(t)
    assert {m for ms in rep["champions"].values() for m in ms} == {"Yi-34B-Chat"}
    # cohere: 4th under the chain-of-thought judge, last under the weighted one
    ranks = next(r for r in rep["rank_ranges"] if r["model"] == "cohere")
    assert (ranks["best"], ranks["worst"]) == (4, 9)
    # the judge moves win rates by 3.4 points RMS: as a share 0.034, over band_pass 0.02
    by_hand = []
    for k, c in enumerate(t.configs):
        if c != t.reference:
            by_hand += list((t.scores[:, k] - t.scores[:, t.configs.index(t.reference)]) / 100)
    v = next(v for v in rep["verdicts"] if v["id"] == "judge_axis[table-judge]")
    assert v["value"] == pytest.approx(float(np.sqrt(np.mean(np.square(by_hand)))))
    assert v["status"] == "fail" and 0.03 < v["value"] < 0.04

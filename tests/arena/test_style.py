"""Style control: Bradley-Terry with FastChat's style covariates (conv_metadata)."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard_audit.arena.data import STYLE_FEATURES, battles_document, battles_from_list
from leaderboard_audit.arena.rules import ELO_SCALE, bt_style_control, rule_scores, style_features


def style_battles(n: int, seed: int, style_weight: float) -> list[dict]:
    """FastChat battles with conv_metadata (fastchat/serve/monitor/clean_battle_data.py adds
    sum_assistant_{a,b}_tokens, header_count_{a,b}, list_count_{a,b}, bold_count_{a,b}).
    'stylish' is as strong as 'plain' but writes long, marked-up answers; voters reward
    length by ``style_weight`` on the token ratio."""
    rng = np.random.default_rng(seed)
    strength = {"strong": 1.0, "plain": 0.0, "stylish": 0.0, "weak": -1.0}
    tokens = {"strong": 400, "plain": 400, "stylish": 1600, "weak": 400}
    names = list(strength)
    rows = []
    for k in range(n):
        a, b = rng.choice(4, 2, replace=False)
        ma, mb = names[a], names[b]
        ta, tb = (max(1, int(tokens[m] * rng.lognormal(0, 0.3))) for m in (ma, mb))
        z = strength[ma] - strength[mb] + style_weight * (ta - tb) / (ta + tb)
        u = rng.random()
        winner = "tie" if u < 0.1 else "model_a" if rng.random() < 1 / (1 + np.exp(-z)) else "model_b"
        meta = {
            "sum_assistant_a_tokens": ta,
            "sum_assistant_b_tokens": tb,
            "header_count_a": {"h1": int(rng.integers(0, 3)), "h2": 0},
            "header_count_b": {"h1": int(rng.integers(0, 3)), "h2": 0},
            "list_count_a": {"ordered": int(rng.integers(0, 4)), "unordered": 0},
            "list_count_b": {"ordered": int(rng.integers(0, 4)), "unordered": 0},
            "bold_count_a": {"**": int(rng.integers(0, 3)), "__": 0},
            "bold_count_b": {"**": int(rng.integers(0, 3)), "__": 0},
        }
        rows.append({"model_a": ma, "model_b": mb, "winner": winner, "tstamp": float(k), "conv_metadata": meta})
    return rows


def test_style_control_removes_a_planted_style_advantage():
    bt = battles_from_list(style_battles(6000, seed=2, style_weight=2.0), "planted")
    assert bt.style is not None and bt.style.shape == (6000, 2, len(STYLE_FEATURES))
    scores, skipped = rule_scores(bt.pair_counts(), bt, seed=1, n_shuffles=1)
    assert "bt_style_control" not in skipped
    s = dict(zip(bt.models, scores["bt_bothbad_halved"]))
    c = dict(zip(bt.models, scores["bt_style_control"]))
    assert s["stylish"] - s["plain"] > 40  # rewarded for length without control
    assert abs(c["stylish"] - c["plain"]) < 25  # as strong as planted, once style is controlled
    _, gamma = bt_style_control(bt)
    assert gamma[0] > 0.3  # the token ratio carries the planted weight


def test_style_fit_equals_an_independent_fit():
    from scipy.optimize import minimize

    bt = battles_from_list(style_battles(800, seed=3, style_weight=1.0), "small")
    got, gamma = bt_style_control(bt)
    F = style_features(bt)
    M = len(bt.models)
    # ties as two half-weighted battles, one won by each side (the Arena's compute_mle_elo)
    y = np.where(bt.outcome == 0, 1.0, np.where(bt.outcome == 1, 0.0, 0.5))

    def loss(w):
        z = w[bt.a] - w[bt.b] + F @ w[M:]
        p = 1 / (1 + np.exp(-z))
        return -np.sum(y * np.log(p) + (1 - y) * np.log(1 - p)) + 0.5e-4 * np.sum(w[:M] ** 2)

    w = minimize(loss, np.zeros(M + F.shape[1]), method="BFGS", options={"gtol": 1e-8}).x
    ref = 1000 + ELO_SCALE * (w[:M] - w[:M].mean())
    assert got == pytest.approx(ref, abs=0.05)
    assert gamma == pytest.approx(w[M:], abs=1e-3)


def test_style_survives_import_and_is_skipped_without_it(tmp_path):
    bt = battles_from_list(style_battles(200, seed=4, style_weight=1.0), "x")
    again = battles_from_list(battles_document(bt), "y")
    assert np.array_equal(again.style, bt.style)
    rows = style_battles(50, seed=5, style_weight=0.0)
    del rows[7]["conv_metadata"]
    plain = battles_from_list(rows, "z")
    assert plain.style is None
    _, skipped = rule_scores(plain.pair_counts(), plain, seed=1, n_shuffles=1)
    assert "style features" in skipped["bt_style_control"]

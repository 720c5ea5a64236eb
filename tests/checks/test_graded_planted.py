"""Planted truths on graded records (issue 47, item 4): judge outputs imported as graded
outcomes (importers/judged.py) and audited by the item-level checks (docs/audits.md,
"Graded outcomes")."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.judges import alpaca_annotations, arena_hard_judgments, null_graded_records

from leaderboard_audit.engine import audit
from leaderboard_audit.importers import load

STRENGTH = {"m1": 0.9, "m2": 0.6, "m3": 0.3, "m4": 0.0, "m5": -0.3}


def verdicts(scope):
    return {v["id"]: v for v in scope["verdicts"]}


def arena_hard_scope(tmp_path, bias):
    rec = load(arena_hard_judgments(tmp_path, STRENGTH, bias), "judged")
    assert rec.graded
    return audit(rec, n_boot=200)["scopes"]["arena-hard"]


def test_position_bias_that_reorders_is_load_bearing_on_the_position_axis(tmp_path):
    # the judge favours the first answer by 1.2 when judging m3 and m4 (answers close to the
    # baseline's, say), not the others: position alone reorders the models
    bias = {"m1": 0.0, "m2": 0.0, "m3": 1.2, "m4": 1.2, "m5": 0.0}
    v = verdicts(arena_hard_scope(tmp_path / "b", bias))["axes[arena-hard]"]
    assert v["status"] == "fail" and v["message"].startswith("the position axis is load-bearing")
    fair = verdicts(arena_hard_scope(tmp_path / "f", dict.fromkeys(STRENGTH, 0.0)))["axes[arena-hard]"]
    assert fair["status"] == "pass"


def test_uniform_position_bias_moves_every_models_band(tmp_path):
    # a bias shared by every model keeps the order (axes passes) and moves each model's mean
    # outcome between the positions beyond item sampling: every band fails, and the position
    # axis carries most of each model's configuration variance
    s = arena_hard_scope(tmp_path, dict.fromkeys(STRENGTH, 0.6))
    v = verdicts(s)
    assert all(v[f"band[arena-hard-{m}]"]["status"] == "fail" for m in STRENGTH)
    assert "Hotelling's T^2" in v["band[arena-hard-m3]"]["message"]
    assert v["axes[arena-hard]"]["status"] == "pass"
    shares = {m: s["brittleness"][m]["v_axis_share"] for m in STRENGTH}
    assert all(x["position"] > x["scale"] for x in shares.values())


def test_length_exploiting_model_is_flagged(tmp_path):
    quality = {"honest-a": 0.6, "honest-b": 0.45, "honest-c": 0.3, "verbose": 0.0}
    length = {"honest-a": 1000, "honest-b": 1000, "honest-c": 1000, "verbose": 3500}
    src = alpaca_annotations(tmp_path / "annotations.json", quality, length, gamma=2.0, n=150, seed=1)
    s = audit(load(src, "judged"), n_boot=200)["scopes"]["alpaca-eval"]
    v = verdicts(s)
    per = {c["config"]: c["winners"] for c in s["champions"]["per_config"]}
    assert per == {"judge=judge-x|length=raw": ["verbose"], "judge=judge-x|length=controlled": ["honest-a"]}
    ch = v["champions[alpaca-eval]"]
    assert ch["status"] == "fail" and "honest-a beats the reference winner verbose" in ch["message"]
    assert "on which one scores above the other" in ch["message"]
    assert (
        v["axes[alpaca-eval]"]["status"] == "fail"
        and "the length axis is load-bearing" in v["axes[alpaca-eval]"]["message"]
    )
    # verbose alone: its printed lead is the harness's, and only its band fails
    assert v["manufactured[alpaca-eval-verbose>honest-a]"]["status"] == "fail"
    assert [m for m in quality if v[f"band[alpaca-eval-{m}]"]["status"] == "fail"] == ["verbose"]


#: the checks whose fail is a test's alarm (brittleness, a share of variance, tests nothing:
#: a judge's game-to-game noise is configuration variance to it, docs/audits.md)
TESTED = ("band", "axes", "champions", "manufactured", "ranking")


@pytest.mark.slow
@pytest.mark.parametrize("seed", [47])
def test_false_alarms_under_no_real_differences(seed):
    rng = np.random.default_rng(seed)
    runs = 400
    alarms = dict.fromkeys(TESTED, 0)
    for _ in range(runs):
        scope = audit(null_graded_records(rng), n_boot=200)["scopes"]["judged"]
        failed = {v["check"] for v in scope["verdicts"] if v["status"] == "fail"}
        for c in TESTED:
            alarms[c] += c in failed
    rates = {c: n / runs for c, n in alarms.items()}
    # any fail in the scope (a family: Holm over models or pairs inside each check), nominal
    # 5% plus two Monte Carlo standard errors over 400 runs (rates measured over 1,000 null
    # grids are in docs/audits.md, "Graded outcomes")
    assert all(r <= 0.05 + 2 * (0.05 * 0.95 / runs) ** 0.5 for r in rates.values()), rates

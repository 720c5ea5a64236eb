"""Compliance vs competence (docs/audits.md, "Beyond the paper"): planted unparseable losses,
the scoring-axis tau with unparseable answers set aside, answer classes, skips."""

from __future__ import annotations


import numpy as np
import pytest

from leaderboard_audit.metrics.compliance import compliance, generation_configs, loss_split, parsed_accuracy
from leaderboard_audit.records import PRED_ABSENT, PRED_UNPARSEABLE, load_records
from leaderboard_audit.records.grid import paper_grid
from leaderboard_audit.records.simulate import SimModel, SimSpec, simulate
from helpers.paths import REPO

REAL = REPO / "fixtures" / "real"


def planted():
    """Three simulated models: 'mute' loses only through unparseable answers, 'wrong' only
    through parsed wrong answers, 'mixed' half and half (by item parity)."""
    spec = SimSpec(
        (SimModel("mute", 0.3), SimModel("wrong", 0.3), SimModel("mixed", 0.0)), {"arc": 120, "mmlu": 120}, seed=4
    )
    r = simulate(spec)
    C = r.correct
    gold = np.array(r.items.gold)
    pred = np.full(C.shape, PRED_ABSENT, dtype=np.int16)
    gen = generation_configs(r.grid)
    parsed_wrong = ((gold + 1) % 4)[None, :, None]
    right = np.broadcast_to(gold[None, :, None], C.shape)
    pred[:, :, gen] = np.where(C, right, parsed_wrong)[:, :, gen]
    m = {n: i for i, n in enumerate(r.models)}
    pred[m["mute"]][:, gen] = np.where(C[m["mute"]][:, gen], right[0][:, gen], PRED_UNPARSEABLE)
    odd = (np.arange(C.shape[1]) % 2 == 1)[:, None]
    x = m["mixed"]
    pred[x][:, gen] = np.where(C[x][:, gen], right[0][:, gen], np.where(odd, PRED_UNPARSEABLE, parsed_wrong[0][:, [0]]))
    return r, pred


def test_loss_is_compliance_plus_competence_plus_unrecorded():
    r, pred = planted()
    s = loss_split(r.correct, pred)
    assert np.allclose(s["loss"], s["compliance"] + s["competence"] + s["unrecorded"], atol=1e-12)
    assert (s["unparseable_correct"] == 0).all()


def test_planted_all_unparseable_losses_are_compliance():
    r, pred = planted()
    out = compliance(r.correct, pred, r.grid, models=r.models)
    mute, wrong, mixed = (out["per_model"][n] for n in ("mute", "wrong", "mixed"))
    assert mute["compliance"] == pytest.approx(mute["loss"], abs=1e-12) and mute["competence"] == 0
    assert mute["compliance_share"] == 1.0
    assert wrong["competence"] == pytest.approx(wrong["loss"], abs=1e-12) and wrong["compliance"] == 0
    assert wrong["compliance_share"] == 0.0
    assert 0.35 < mixed["compliance_share"] < 0.65
    for row in mute["per_config"]:
        assert row["config"].startswith("gen|") and row["compliance"] == pytest.approx(row["loss"])
    assert len(mute["per_config"]) == 24 and out["generation_configs"][0].startswith("gen|")


def _scoring_case():
    """Three models, 100 items, reference + one likelihood config. Under the reference,
    'alpha' leaves 50 answers unparseable (all wrong); on the parsed answers it is best,
    as it is under ll. So the order moves between scorings only through compliance."""
    from leaderboard_audit.records.grid import Config, Grid

    g = Grid(
        (
            Config("gen|letter_plain|p0", "gen", "letter_plain", "p0", (0, 1, 2, 3)),
            Config("ll|cloze_plain", "ll", "cloze_plain", None, None),
        ),
        "gen|letter_plain|p0",
    )
    C = np.zeros((3, 100, 2), dtype=bool)
    pred = np.zeros((3, 100, 2), dtype=np.int16)
    # alpha: 45 right of 50 parsed (0.9 parsed, 0.45 overall); ll 0.9
    C[0, :45, 0] = True
    pred[0, 50:, 0] = PRED_UNPARSEABLE
    C[0, :90, 1] = True
    # beta: 70 right (0.7); ll 0.7.  gamma: 60 right (0.6); ll 0.6
    C[1, :70, :] = True
    C[2, :60, :] = True
    pred[:, :, 1] = PRED_ABSENT
    return C, pred, g


def test_scoring_tau_movement_is_compliance_when_parsed_order_agrees():
    C, pred, g = _scoring_case()
    acc_p = parsed_accuracy(C, pred)
    assert acc_p[0, 0] == 0.9 and acc_p[0, 1] == 0.9  # absent pred under ll: kept
    out = compliance(C, pred, g, models=("alpha", "beta", "gamma"))["scoring_tau"]
    row = out["per_config"][0]
    assert row["tau_all"] == pytest.approx(-1 / 3) and row["tau_parsed"] == 1.0
    assert row["movement"] == pytest.approx(4 / 3) and row["compliance"] == pytest.approx(4 / 3)
    assert row["competence"] == 0.0 and row["compliance_fraction"] == pytest.approx(1.0)
    assert out["compliance_fraction"] == pytest.approx(1.0)


def test_scoring_tau_movement_is_competence_without_unparseable():
    C, pred, g = _scoring_case()
    pred[0, :, 0] = 0  # alpha's 55 losses are parsed now
    out = compliance(C, pred, g, models=("alpha", "beta", "gamma"))["scoring_tau"]
    assert out["compliance"] == 0.0 and out["competence"] == pytest.approx(out["movement"])
    assert out["compliance_fraction"] == 0.0


def test_answer_class_split_sums_to_loss():
    r, pred = planted()
    gen = generation_configs(r.grid)
    cls = np.full(r.correct.shape, -1, dtype=np.int8)
    cls[:, :, gen] = np.where(pred[:, :, gen] == PRED_UNPARSEABLE, 4, 0)  # "other" vs "letter"
    cls[:, :3, gen] = -1  # a few unclassified
    out = compliance(r.correct, pred, r.grid, models=r.models, answer_class=cls)
    assert out["classes"] == ["letter", "enumeration", "refusal", "empty", "other"]
    for e in out["per_model"].values():
        assert sum(e["by_class"].values()) == pytest.approx(e["loss"], abs=1e-12)
    mute = out["per_model"]["mute"]["by_class"]
    assert mute["letter"] == 0.0 and mute["other"] > 0
    assert "by_class" not in compliance(r.correct, pred, r.grid, models=r.models)["per_model"]["mute"]


def test_skipped_without_pred():
    g = paper_grid()
    C = np.zeros((2, 5, len(g)), dtype=bool)
    assert "pred" in compliance(C, None, g, models=("a", "b"))["skipped"]
    absent = np.full(C.shape, PRED_ABSENT, dtype=np.int16)
    assert "skipped" in compliance(C, absent, g, models=("a", "b"))


@pytest.mark.skipif(not (REAL / "grid.json").exists(), reason="fixtures/real missing")
def test_real_fixture_split():
    r = load_records(REAL)
    out = compliance(r.correct, r.pred, r.grid, models=r.models)
    for e in out["per_model"].values():
        assert e["loss"] == pytest.approx(e["compliance"] + e["competence"] + e["unrecorded"], abs=1e-12)
        assert 0.0 <= e["compliance_share"] <= 1.0
    # the raw sidecar shows many unparsed digit answers for these small models
    assert max(e["compliance"] for e in out["per_model"].values()) > 0.05
    assert out["scoring_tau"]["per_config"] and len(out["scoring_tau"]["per_config"]) == 2


def test_per_item_unparsed_counts_give_the_same_per_model_split():
    """Release-style records carry only how many generation configs left an item
    unparseable (appendix A.1): the per-model means equal those from per-config preds."""
    r, pred = planted()
    gen = generation_configs(r.grid)
    unparsed = (pred[:, :, gen] == PRED_UNPARSEABLE).sum(axis=2).astype(np.int16)
    from_pred = compliance(r.correct, pred, r.grid, models=r.models)
    from_counts = compliance(r.correct, None, r.grid, models=r.models, unparsed=unparsed)
    assert from_counts["source"] == "unparsed" and from_pred["source"] == "pred"
    for m in r.models:
        a, b = from_pred["per_model"][m], from_counts["per_model"][m]
        for key in ("loss", "compliance", "competence", "unrecorded", "compliance_share"):
            assert b[key] == pytest.approx(a[key], abs=1e-12), (m, key)
        assert "per_config" not in b and b["unparsed_exceeds_wrong"] == 0
    assert "pred" in from_counts["scoring_tau"]["skipped"]
    unparsed[0, :5] = -1  # UNPARSED_ABSENT: those losses are unrecorded
    part = compliance(r.correct, None, r.grid, models=r.models, unparsed=unparsed)["per_model"][r.models[0]]
    assert part["unrecorded"] > 0
    assert part["loss"] == pytest.approx(part["compliance"] + part["competence"] + part["unrecorded"], abs=1e-12)

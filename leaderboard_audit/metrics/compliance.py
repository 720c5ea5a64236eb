"""Wrong vs unparseable: compliance and competence on the generation configs (paper, section 6).

The paper (section 6, appendix A.3) scores an unparseable generation as wrong and
proposes splitting the accuracy loss into a *compliance* term (no answer could be
parsed) and a *competence* term (a parsed answer that is wrong), then attributing the
ranking movement between scorings to each. Definitions: docs/audits.md, "Beyond the
paper: compliance vs competence".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..records.grid import Grid
from ..records.model import PRED_ABSENT, PRED_UNPARSEABLE
from .axes import axis_groups, paper_axis_groups
from .kendall import kendall_tau_b
from .per_model import correct_counts

# The collector's answer classes (records grow an ``answer_class`` int8 array, -1 absent).
DEFAULT_ANSWER_CLASSES = ("letter", "enumeration", "refusal", "empty", "other")


def generation_configs(grid: Grid) -> list[int]:
    """Indices of the generation configurations (key ``gen|...`` or scoring ``gen``)."""
    return [k for k, c in enumerate(grid.configs) if c.key.startswith("gen|") or c.scoring == "gen"]


BLOCK_CELLS = 1 << 22  # (model, item, config) cells per block of models


def _step(C: np.ndarray) -> int:
    """Models per block of about ``BLOCK_CELLS`` cells: the masks below are models x items x
    configs, so on the whole tensor each would be another copy of it (780 MB at 1,000 x
    30,000 x 26)."""
    return max(1, BLOCK_CELLS // max(C.shape[1] * C.shape[2], 1))


def _model_blocks(C: np.ndarray) -> range:
    return range(0, C.shape[0], _step(C))


def _any_in_blocks(a: np.ndarray, gen: list[int], test: Any) -> bool:
    """``test(a[:, :, gen]).any()`` over blocks of models (no copy of the whole tensor)."""
    step = _step(a)
    return any(bool(test(a[lo : lo + step][:, :, gen]).any()) for lo in _model_blocks(a))


def loss_split(C: np.ndarray, pred: np.ndarray) -> dict[str, np.ndarray]:
    """Per model and config (models x configs), shares of all N items in the scope.

    ``loss = 1 - acc = compliance + competence + unrecorded`` exactly, where
    compliance = wrong with ``pred`` unparseable, competence = wrong with a parsed
    ``pred``, unrecorded = wrong with no prediction recorded. ``unparseable`` is the
    share of unparseable answers (right or wrong); ``unparseable_correct`` counts
    unparseable answers scored right (0 in consistent records). Counted in blocks of
    models (the same integers).
    """
    M, N, K = C.shape
    names = ("loss", "compliance", "competence", "unrecorded", "unparseable", "unparseable_correct")
    counts = {q: np.empty((M, K), dtype=np.int64) for q in names}
    step = _step(C)
    for lo in _model_blocks(C):
        c, p = C[lo : lo + step], pred[lo : lo + step]
        wrong = ~c
        unparse = p == PRED_UNPARSEABLE
        absent = p == PRED_ABSENT
        parsed = ~unparse & ~absent
        for q, x in (
            ("loss", wrong),
            ("compliance", wrong & unparse),
            ("competence", wrong & parsed),
            ("unrecorded", wrong & absent),
            ("unparseable", unparse),
            ("unparseable_correct", c & unparse),
        ):
            counts[q][lo : lo + step] = x.sum(axis=1, dtype=np.int64)
    out = {q: counts[q] / max(N, 1) for q in names[:-1]}
    out["unparseable_correct"] = counts["unparseable_correct"]
    return out


def parsed_accuracy(C: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """Accuracy with unparseable answers set aside: ``#{right, pred != unparseable} / #{pred != unparseable}``.

    Answers with no recorded prediction stay in (nothing says they were unparseable),
    so configs without ``pred`` (e.g. likelihood ones) keep their plain accuracy.
    NaN where a model has no answer left under a config.
    """
    M, _, K = C.shape
    n = np.empty((M, K), dtype=np.int64)
    right = np.empty((M, K), dtype=np.int64)
    step = _step(C)
    for lo in _model_blocks(C):
        keep = pred[lo : lo + step] != PRED_UNPARSEABLE
        n[lo : lo + step] = keep.sum(axis=1, dtype=np.int64)
        right[lo : lo + step] = (C[lo : lo + step] & keep).sum(axis=1, dtype=np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, right / np.where(n > 0, n, 1), np.nan)


def _tau_or_nan(x: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Kendall tau-b per column; NaN where either side holds a NaN (a model without answers)."""
    if Y.shape[1] == 0:
        return np.array([])
    tau = kendall_tau_b(np.nan_to_num(x), np.nan_to_num(Y))
    bad = np.isnan(x).any() | np.isnan(Y).any(axis=0)
    return np.where(bad, np.nan, tau)


def _mean_min(v: np.ndarray) -> tuple[float | None, float | None]:
    f = v[np.isfinite(v)]
    return (float(f.mean()), float(f.min())) if f.size else (None, None)


def scoring_movement(acc: np.ndarray, acc_parsed: np.ndarray, grid: Grid) -> dict[str, Any]:
    """How much of the order's movement between scorings is compliance.

    Over the scoring axis (the reference vs each config of another scoring, section 4.5):
    ``tau_all[k]`` = Kendall tau-b of the reference and config k accuracies (every answer);
    ``tau_parsed[k]`` the same on parsed accuracies (unparseable answers set aside, under
    both configs). ``movement = 1 - tau_all`` (0 = the order survives); the
    ``compliance`` part = ``tau_parsed - tau_all`` (the agreement restored by setting
    unparseable answers aside); the ``competence`` part = ``1 - tau_parsed``; so
    movement = compliance + competence. ``compliance_fraction = compliance / movement``
    (None when movement = 0; may leave [0, 1] when setting answers aside moves the
    order further). Means are over configs where both taus are defined.
    """
    ref = grid.reference_index
    groups = axis_groups(grid)  # a declared grid without a scoring axis: the derived one
    scoring = groups["scoring"] if "scoring" in groups else paper_axis_groups(grid)["scoring"]
    others = [k for k in scoring if k != ref]
    t_all = _tau_or_nan(acc[:, ref], acc[:, others])
    t_par = _tau_or_nan(acc_parsed[:, ref], acc_parsed[:, others])
    rows = []
    for j, k in enumerate(others):
        a, p = t_all[j], t_par[j]
        ok = bool(np.isfinite(a) and np.isfinite(p))
        mv = 1.0 - a if ok else None
        comp = p - a if ok else None
        rows.append(
            {
                "config": grid.keys[k],
                "tau_all": None if np.isnan(a) else float(a),
                "tau_parsed": None if np.isnan(p) else float(p),
                "movement": mv,
                "compliance": comp,
                "competence": 1.0 - p if ok else None,
                "compliance_fraction": (comp / mv if ok and round(mv, 12) != 0 else None),
            }
        )
    both = np.isfinite(t_all) & np.isfinite(t_par)
    a_mean, a_min = _mean_min(t_all[both]) if both.any() else (None, None)
    p_mean, p_min = _mean_min(t_par[both]) if both.any() else (None, None)
    out: dict[str, Any] = {
        "per_config": rows,
        "tau_all": {"mean": a_mean, "min": a_min},
        "tau_parsed": {"mean": p_mean, "min": p_min},
    }
    if a_mean is not None and p_mean is not None:
        mv = 1.0 - a_mean
        out.update(
            movement=mv,
            compliance=p_mean - a_mean,
            competence=1.0 - p_mean,
            compliance_fraction=(p_mean - a_mean) / mv if round(mv, 12) != 0 else None,
        )
    else:
        out.update(movement=None, compliance=None, competence=None, compliance_fraction=None)
    return out


def class_split(C: np.ndarray, answer_class: np.ndarray, gen: list[int], classes: tuple[str, ...]) -> np.ndarray:
    """Wrong answers per answer class, as shares of all items (models x gen configs x classes),
    plus a last column for wrong answers with no class recorded (-1)."""
    M, N, _ = C.shape
    out = np.empty((M, len(gen), len(classes) + 1), dtype=np.int64)
    step = max(1, BLOCK_CELLS // max(N * len(gen) * (len(classes) + 1), 1))
    for lo in range(0, M, step):
        wrong = ~C[lo : lo + step][:, :, gen]
        cls = answer_class[lo : lo + step][:, :, gen].astype(np.int64)
        cls = np.where((cls >= 0) & (cls < len(classes)), cls, len(classes))
        onehot = cls[..., None] == np.arange(len(classes) + 1)
        out[lo : lo + step] = (onehot & wrong[..., None]).sum(axis=1, dtype=np.int64)
    return out / max(N, 1)


def split_from_counts(C: np.ndarray, unparsed: np.ndarray, gen: list[int]) -> dict[str, np.ndarray]:
    """Per model, the loss split from per-item counts of unparseable generation configs
    (the paper's released ``unparsed`` field, appendix A.1), as means over the G generation
    configs of shares of the N items.

    An unparseable answer is scored wrong (appendix A.3), so for an item with a count u:
    u of its wrong generation answers are compliance, the rest competence. Items without
    a count (``UNPARSED_ABSENT``) put their wrong answers in ``unrecorded``; so
    ``loss = compliance + competence + unrecorded`` exactly. ``unparsed_exceeds_wrong``
    counts items whose count exceeds their wrong answers (inconsistent records; the
    excess is left out)."""
    N, G = C.shape[1], len(gen)
    wrong = np.empty(C.shape[:2], dtype=np.int64)  # models x items
    step = _step(C)
    for lo in _model_blocks(C):
        wrong[lo : lo + step] = (~C[lo : lo + step][:, :, gen]).sum(axis=2)
    known = unparsed >= 0
    u = np.where(known, np.minimum(unparsed, wrong), 0)
    den = max(N * G, 1)
    return {
        "loss": wrong.sum(axis=1) / den,
        "compliance": u.sum(axis=1) / den,
        "competence": np.where(known, wrong - u, 0).sum(axis=1) / den,
        "unrecorded": np.where(known, 0, wrong).sum(axis=1) / den,
        "unparsed_exceeds_wrong": (known & (unparsed > wrong)).sum(axis=1),
    }


def compliance_from_counts(
    C: np.ndarray, unparsed: np.ndarray, grid: Grid, *, models: tuple[str, ...]
) -> dict[str, Any]:
    """The per-model loss split when records carry only the per-item ``unparsed`` counts
    (no per-config ``pred``): :func:`split_from_counts`. Which configs an item was
    unparseable under is unknown, so there are no per-config rows and no scoring-axis tau."""
    gen = generation_configs(grid)
    if not gen:
        return {"skipped": "the grid has no generation configuration"}
    sp = split_from_counts(C, unparsed, gen)
    per_model: dict[str, Any] = {}
    for m, name in enumerate(models):
        loss = float(sp["loss"][m])
        per_model[name] = {
            "loss": loss,
            "compliance": float(sp["compliance"][m]),
            "competence": float(sp["competence"][m]),
            "unrecorded": float(sp["unrecorded"][m]),
            "compliance_share": float(sp["compliance"][m]) / loss if round(loss, 12) > 0 else None,
            "unparsed_exceeds_wrong": int(sp["unparsed_exceeds_wrong"][m]),
        }
    return {
        "source": "unparsed",
        "generation_configs": [grid.keys[k] for k in gen],
        "per_model": per_model,
        "scoring_tau": {
            "skipped": "needs per-config predictions (pred); the records carry only per-item "
            "counts of unparseable generation configs"
        },
    }


def compliance(
    C: np.ndarray,
    pred: np.ndarray | None,
    grid: Grid,
    *,
    models: tuple[str, ...],
    answer_class: np.ndarray | None = None,
    classes: tuple[str, ...] = DEFAULT_ANSWER_CLASSES,
    per_config: bool = True,
    unparsed: np.ndarray | None = None,
) -> dict[str, Any]:
    """Split each model's generation accuracy loss into compliance and competence.

    Per model and generation config: ``loss``, ``compliance`` (wrong and unparseable),
    ``competence`` (wrong and parsed), ``unrecorded`` (wrong, no prediction), shares of
    the scope's N items; per model their means over generation configs and
    ``compliance_share = sum compliance / sum loss`` (None without loss). The scoring
    axis tau with unparseable answers set aside: :func:`scoring_movement`. With an
    ``answer_class`` array the loss is also split by class. ``per_config=False`` leaves
    out the per-config rows (a lighter section). Without any generation ``pred`` but with
    per-item ``unparsed`` counts: :func:`compliance_from_counts`. ``{"skipped": reason}``
    when there is neither.
    """
    gen = generation_configs(grid)
    if not gen:
        return {"skipped": "the grid has no generation configuration"}
    if pred is None or not _any_in_blocks(pred, gen, lambda p: p != PRED_ABSENT):
        if unparsed is not None and (unparsed >= 0).any():
            return compliance_from_counts(C, unparsed, grid, models=models)
        if pred is None:
            return {"skipped": "the records carry no predictions (pred) and no unparsed counts"}
        return {"skipped": "no prediction is recorded under any generation configuration"}
    split = loss_split(C, pred)
    keys = grid.keys
    per_model: dict[str, Any] = {}
    cls_split = (
        class_split(C, answer_class, gen, classes)
        if answer_class is not None and _any_in_blocks(answer_class, gen, lambda a: a >= 0)
        else None
    )
    for m, name in enumerate(models):
        rows = [
            {
                "config": keys[k],
                **{q: float(split[q][m, k]) for q in ("loss", "compliance", "competence", "unrecorded", "unparseable")},
            }
            for k in gen
        ]
        loss_sum = float(split["loss"][m, gen].sum())
        entry: dict[str, Any] = {
            q: float(split[q][m, gen].mean()) for q in ("loss", "compliance", "competence", "unrecorded", "unparseable")
        }
        entry["compliance_share"] = (
            float(split["compliance"][m, gen].sum()) / loss_sum if round(loss_sum, 12) > 0 else None
        )
        entry["unparseable_correct"] = int(split["unparseable_correct"][m, gen].sum())
        if cls_split is not None:
            mean_cls = cls_split[m].mean(axis=0)
            entry["by_class"] = {c: float(mean_cls[j]) for j, c in enumerate((*classes, "unclassified"))}
        if per_config:
            entry["per_config"] = rows
        per_model[name] = entry
    acc = correct_counts(C) / C.shape[1]
    out: dict[str, Any] = {
        "source": "pred",
        "generation_configs": [keys[k] for k in gen],
        "per_model": per_model,
        "scoring_tau": scoring_movement(acc, parsed_accuracy(C, pred), grid),
    }
    if cls_split is not None:
        out["classes"] = list(classes)
    return out

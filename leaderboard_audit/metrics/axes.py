"""Axis-robust accuracy: the paper's Table 3 and Figure 4 (section 4.5)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..records.grid import Grid
from .kendall import kendall_tau_b
from .per_model import all_right_groups

SINGLE_AXES = ("ordering", "format", "scoring")  # the paper's, derived when grid.json declares none
AXES = SINGLE_AXES + ("joint",)
JOINT = "joint"


def axis_groups(grid: Grid) -> dict[str, list[int]]:
    """Config indices per axis, relative to the reference config, ``joint`` last (every config).

    grid.json's ``axis_groups`` when it declares them (docs/spec/AUDITS.md v3 "Declared
    axes"): the paper's axes among them first (ordering, format, scoring), then the others
    in the file's order (writers sort names); otherwise the paper's three, derived
    (``paper_axis_groups``). This order breaks ties (``most_destructive``)."""
    declared = grid.axis_groups
    if declared is None:
        return paper_axis_groups(grid)
    names = [a for a in SINGLE_AXES if a in declared] + [a for a in declared if a not in SINGLE_AXES]
    out = {a: [grid.index(k) for k in declared[a]] for a in names}
    out[JOINT] = list(range(len(grid.configs)))
    return out


def single_axes(groups: Mapping[str, Any]) -> tuple[str, ...]:
    """The axes varied alone (every group but ``joint``), in their order."""
    return tuple(a for a in groups if a != JOINT)


def paper_axis_groups(grid: Grid) -> dict[str, list[int]]:
    """The paper's three axes from the config fields, relative to the reference config.

    ordering: the reference's scoring and template; format: the reference's scoring
    and ordering; scoring: the reference plus every config whose scoring differs;
    joint: all configs.
    """
    r = grid.configs[grid.reference_index]
    cs = grid.configs
    return {
        "ordering": [k for k, c in enumerate(cs) if c.scoring == r.scoring and c.template == r.template],
        "format": [k for k, c in enumerate(cs) if c.scoring == r.scoring and c.ordering == r.ordering],
        "scoring": [k for k, c in enumerate(cs) if c.key == r.key or c.scoring != r.scoring],
        "joint": list(range(len(cs))),
    }


def axis_robust(C: np.ndarray, groups: dict[str, list[int]]) -> dict[str, np.ndarray]:
    """``axis_robust[m, a] = mean_i (C[m,i,k] = 1 for all k in group a)``.

    Every group in one pass over the tensor, without copying its configs out of it
    (``per_model.all_right_groups``; "joint" is the shared robust-correct mask)."""
    masks = all_right_groups(C, list(groups.values()))
    return {a: right.mean(axis=1) for a, right in zip(groups, masks)}


def most_destructive(robust: dict[str, np.ndarray]) -> list[str]:
    """Per model, the single axis with the lowest axis-robust accuracy (first in axis order on ties)."""
    axes = single_axes(robust)
    stack = np.stack([robust[a] for a in axes], axis=1)
    return [axes[int(j)] for j in np.argmin(stack, axis=1)]


def disagreement_by_axis(
    x_only: np.ndarray, y_only: np.ndarray, n_items: int, groups: dict[str, list[int]], ref: int
) -> dict[str, np.ndarray]:
    """AUDITS v4: per axis and model, the mean over the axis's configs other than the reference
    of the share of items answered differently from the reference (size-free, review T5).
    ``x_only`` / ``y_only``: models x configs, items right under config k and wrong under the
    reference, and the reverse (``harness_effects.reference_discordance``). Groups holding only
    the reference are left out."""
    share = (x_only + y_only) / max(n_items, 1)  # models x configs
    return {a: share[:, [k for k in g if k != ref]].mean(axis=1) for a, g in groups.items() if any(k != ref for k in g)}


def most_destructive_v4(dis: dict[str, np.ndarray], robust: dict[str, np.ndarray]) -> list[str]:
    """AUDITS v4: per model, the single axis with the largest ``disagreement_by_axis`` (first in
    axis order on ties); without a usable single axis, the v3 rule (``most_destructive``)."""
    usable = [a for a in single_axes(robust) if a in dis]
    if not usable:
        return most_destructive(robust)
    stack = np.stack([dis[a] for a in usable], axis=1)
    return [usable[int(j)] for j in np.argmax(stack, axis=1)]


def _axis_taus(acc: np.ndarray, ref: int, groups: dict[str, list[int]], reduce: str) -> dict[str, float | None]:
    """``reduce`` ("min" or "mean") of the Kendall tau-b between the reference and each group's
    other configs (None when the axis has no other config or every tau is undefined)."""
    out: dict[str, float | None] = {}
    for a, g in groups.items():
        others = [k for k in g if k != ref]
        tau = kendall_tau_b(acc[:, ref], acc[:, others]) if others else np.array([])
        tau = tau[np.isfinite(tau)]
        out[a] = float(getattr(tau, reduce)()) if tau.size else None
    return out


def axis_kendall_min(acc: np.ndarray, ref: int, groups: dict[str, list[int]]) -> dict[str, float | None]:
    """Min Kendall tau-b between the reference and the group's other configs
    (None when the axis has no other config or every tau is undefined)."""
    return _axis_taus(acc, ref, groups, "min")


def axis_kendall_mean(acc: np.ndarray, ref: int, groups: dict[str, list[int]]) -> dict[str, float | None]:
    """Mean Kendall tau-b between the reference and the group's other configs (AUDITS v4: the
    load-bearing axis; the min favours the group with more configs, review T5)."""
    return _axis_taus(acc, ref, groups, "mean")

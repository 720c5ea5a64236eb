"""Decided per-model quantities of an incomplete grid (issue 44, item 2; pure numpy).

A quantity is *decided* when its value, or the side of a threshold it falls on, is the
same whatever the missing cells hold. Here, per model:

* robust status of each (model, item): known once a failure is observed, or all K
  configurations are observed right (``robust_status``);
* accuracy under each configuration: bounds counting every unknown cell wrong (low) and
  right (high) (``accuracy_bounds``);
* the band (max minus min accuracy over configurations): the smallest and largest spread
  any completion can give (``band_bounds``);
* robust accuracy: the robust pairs known (low), plus the undecided ones (high).

Not wired into the checks yet: the audit refuses incomplete records (records/missing.py)
until verdicts use these bounds. ``missing`` is a records set's ``Records.missing`` (None:
complete, every bound is then the value itself).
"""

from __future__ import annotations

import numpy as np

ROBUST, NOT_ROBUST, UNDECIDED = 1, 0, -1


def _observed(correct: np.ndarray, missing: np.ndarray | None) -> np.ndarray:
    return np.ones(correct.shape, dtype=bool) if missing is None else missing == 0


def robust_status(correct: np.ndarray, missing: np.ndarray | None) -> np.ndarray:
    """(M, N) int8: ROBUST when all K cells are observed right, NOT_ROBUST when an observed
    cell is wrong, UNDECIDED otherwise."""
    obs = _observed(correct, missing)
    failed = (obs & ~correct).any(axis=2)
    all_right = (obs & correct).all(axis=2)
    out = np.full(correct.shape[:2], UNDECIDED, dtype=np.int8)
    out[all_right] = ROBUST
    out[failed] = NOT_ROBUST
    return out


def accuracy_bounds(correct: np.ndarray, missing: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(M, K) low and high accuracy per model and configuration: unknown cells counted
    wrong, then right."""
    obs = _observed(correct, missing)
    N = correct.shape[1]
    right = (correct & obs).sum(axis=1)
    unknown = (~obs).sum(axis=1)
    return right / N, (right + unknown) / N


def band_bounds(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(M,) smallest and largest spread (max minus min over configurations) of accuracies
    that lie in ``[lo, hi]``: the shortest range meeting every interval, and the longest."""
    smallest = np.maximum(0.0, lo.max(axis=1) - hi.min(axis=1))
    largest = hi.max(axis=1) - lo.min(axis=1)
    return smallest, largest


def robust_accuracy_bounds(status: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(M,) low and high robust accuracy from ``robust_status``."""
    N = status.shape[1]
    robust = (status == ROBUST).sum(axis=1)
    undecided = (status == UNDECIDED).sum(axis=1)
    return robust / N, (robust + undecided) / N


def side(lo: np.ndarray, hi: np.ndarray, threshold: float) -> np.ndarray:
    """1 where the quantity is certainly above ``threshold``, 0 where certainly at or below
    it, -1 where the missing cells decide (undecided)."""
    out = np.full(np.shape(lo), -1, dtype=np.int8)
    out[np.asarray(lo) > threshold] = 1
    out[np.asarray(hi) <= threshold] = 0
    return out


__all__ = [
    "NOT_ROBUST",
    "ROBUST",
    "UNDECIDED",
    "accuracy_bounds",
    "band_bounds",
    "robust_accuracy_bounds",
    "robust_status",
    "side",
]

"""Graded outcomes: a cell's outcome as a number in [0, 1] (docs/records.md, "Graded outcomes").

A judged leaderboard grades an answer rather than marking it right: a preference against
a baseline answer (win 1, tie 1/2, loss 0) or a judge's score scaled to [0, 1]. In memory
a records set's ``score`` is None when every observed outcome is 0 or 1 (a boolean set,
read exactly as before), else a float64 array (models x items x configs) holding every
cell's outcome; ``correct`` is then ``score == 1`` (won outright), and a missing cell
(records/missing.py) holds 0 in both.

Why float64 and not a quantised code: the outcomes met in practice do not share a grid
(ties are halves, MT-Bench's 1-10 scores ninths, AlpacaEval's weighted preferences any
real in [0, 1]), and a round trip through every form must give back the same numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

FIX_SCORE = (
    "an outcome is 0/1 (true/false) or a graded outcome: a finite number from 0 to 1 (a preference "
    "win 1, tie 0.5, loss 0, or a judge's score scaled to [0, 1]); see docs/records.md, 'Graded outcomes'"
)


def is_score(v: Any) -> bool:
    """Whether a JSONL value is an outcome: a bool, or an int or float from 0 to 1 (not NaN)."""
    t = type(v)
    if t is bool:
        return True
    if t is int:
        return v == 0 or v == 1
    return t is float and 0.0 <= v <= 1.0  # NaN compares false


def graded_values(v: np.ndarray) -> bool:
    """Whether some value of a float array of outcomes is strictly between 0 and 1."""
    return bool(((v > 0) & (v < 1)).any())


def normalised_score(score: np.ndarray | None) -> np.ndarray | None:
    """None when every outcome is 0 or 1 (a boolean set has no score), else float64."""
    if score is None or not graded_values(score):
        return None
    return np.asarray(score, dtype=np.float64)


def check_score(score: np.ndarray | None, correct: np.ndarray, missing: np.ndarray | None = None) -> str | None:
    """What is wrong with a ``score`` array beside its ``correct`` bits (None if nothing):
    its shape, bits that are not ``score == 1``, a missing cell whose score is not 0. Its
    values alone (range, finite, some outcome graded) are ``packed.check_values``'s, which
    every reader runs first."""
    if score is None:
        return None
    if score.shape != correct.shape:
        return f"'score' has shape {score.shape}, expected {correct.shape}"
    if not np.array_equal(score == 1, correct):
        return "'correct' is not 'score == 1' (the bit of a graded cell is 'won outright')"
    if missing is not None and (score[missing != 0] != 0).any():
        return "'score' is not 0 at a missing cell"
    return None


__all__ = ["FIX_SCORE", "check_score", "graded_values", "is_score", "normalised_score"]

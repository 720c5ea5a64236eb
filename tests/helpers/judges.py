"""Simulated judge outputs in their native formats, and null graded records (issue 47)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from leaderboard_audit.records import Items, Records
from leaderboard_audit.records.grid import parse_grid

LABELS_B = ["A>>B", "A>B", "A=B", "B>A", "B>>A"]  # worst .. best for the answer shown as B


def arena_hard_judgments(
    tmp: Path, strength: dict[str, float], bias: dict[str, float], n: int = 80, seed: int = 0
) -> Path:
    """model_judgment/<judge>/<model>.jsonl as Arena-Hard's gen_judgment.py writes it
    (lmarena/arena-hard-auto, v0.1): game 1 shows the baseline as A, game 2 the model as A.
    ``bias[model]`` > 0: the judge favours the answer shown first by that much on the latent
    scale when judging that model (a judge's position bias may depend on the answers)."""
    rng = np.random.default_rng(seed)
    root = tmp / "model_judgment" / "judge-x"
    root.mkdir(parents=True)
    for model, s in strength.items():
        lines = []
        for q in range(n):
            games = []
            for model_is_a in (False, True):
                b = bias[model]
                z = s + (b if model_is_a else -b) + rng.normal(0, 1)
                k = int(np.clip(np.round(z + 2), 0, 4))  # 0..4: the model's verdict, worst..best
                games.append(
                    {"user_prompt": "...", "judgment": "...", "score": LABELS_B[k if not model_is_a else 4 - k]}
                )
            lines.append(json.dumps({"question_id": f"q{q}", "model": model, "judge": "judge-x", "games": games}))
        (root / f"{model}.jsonl").write_text("\n".join(lines) + "\n")
    return tmp / "model_judgment"


def alpaca_annotations(path: Path, quality: dict[str, float], length: dict[str, int], gamma: float, n: int, seed: int):
    """AlpacaEval's annotations.json (tatsu-lab/alpaca_eval: one record per instruction with
    output_1/generator_1 the baseline's, output_2/generator_2 the model's, and the
    annotator's preference in [1, 2]). The judge favours longer answers by ``gamma``."""
    rng = np.random.default_rng(seed)
    rows = []
    for model, q in quality.items():
        for i in range(n):
            base_len = int(rng.integers(800, 1200))
            own = int(max(1, length[model] + rng.normal(0, 150)))
            d = (own - base_len) / 1000
            p = 1 / (1 + np.exp(-(q + gamma * np.tanh(d) + rng.normal(0, 0.5))))
            rows.append(
                {
                    "instruction": f"instruction {i}",
                    "output_1": "x" * base_len,
                    "generator_1": "baseline",
                    "output_2": "y" * own,
                    "generator_2": model,
                    "annotator": "judge-x",
                    "preference": 1 + float(p),
                }
            )
    path.write_text(json.dumps(rows))
    return path


NULL_KEYS = (
    "position=baseline-first|scale=5way",
    "position=baseline-first|scale=3way",
    "position=model-first|scale=5way",
    "position=model-first|scale=3way",
)


def null_graded_records(rng: np.random.Generator, M: int = 8, N: int = 60) -> Records:
    """Equal models and a judge with no position bias: per item and position one 5-way
    verdict (probabilities 0.15, 0.2, 0.3, 0.2, 0.15), read on both scales, as the
    Arena-Hard importer reads a judgment."""
    grid = parse_grid(
        {
            "reference": NULL_KEYS[0],
            "configs": [{"key": k, "scoring": "judge"} for k in NULL_KEYS],
            "axis_groups": {"position": [NULL_KEYS[0], NULL_KEYS[2]], "scale": [NULL_KEYS[0], NULL_KEYS[1]]},
        },
        "grid.json",
    )
    k = rng.choice(5, p=[0.15, 0.2, 0.3, 0.2, 0.15], size=(M, N, 2))
    five, three = k / 4, np.array([0, 0, 0.5, 1, 1])[k]
    S = np.stack([five[..., 0], three[..., 0], five[..., 1], three[..., 1]], axis=2)
    items = Items(
        np.array(["judged"] * N, dtype=object),
        np.array([f"q{i}" for i in range(N)], dtype=object),
        [None] * N,
        [None] * N,
        [None] * N,
    )
    return Records(S == 1, tuple(f"m{m}" for m in range(M)), items, grid, score=S)

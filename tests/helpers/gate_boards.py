"""Boards for the submission-gate tests: the done-when 26-config grid (simulated) and a
4,278-model one-configuration board (the Open LLM Leaderboard's shape)."""

from __future__ import annotations

import numpy as np

from leaderboard_audit.records import Items, Records
from leaderboard_audit.records.grid import Grid, paper_grid
from leaderboard_audit.records.simulate import SimModel, SimSpec, simulate

#: an old manufactured pair (old-a-tuned / old-a, reversing configs), wide bands everywhere
BASE = (
    SimModel("old-a", 1.5, template_shift={"digit_labels": -0.8}),
    SimModel("old-a-tuned", 1.5, twin_of="old-a", template_shift={"letter_plain": 0.6, "instruction": -0.8}),
    SimModel("mid", 0.0, ordering_shift={"p3": -0.5}),
    SimModel("low", -1.5),
)
NEWCOMERS = {
    "clean": SimModel("newbie", 0.75),  # clearly between old-a and mid, wins no configuration
    "twin": SimModel("newbie", 0.0, twin_of="mid", template_shift={"letter_plain": 0.6, "instruction": -0.8}),
    "champ": SimModel("newbie", 0.75, scoring_shift={"ll": 3.5}),  # wins the ll configs by many items
    # its own harness effect (-1.5 logits under the instruction template): a band that fails beyond
    # item sampling (AUDITS v4: Cochran's Q), and nothing else the gate looks at
    "wide": SimModel("newbie", 0.75, template_shift={"instruction": -1.5}),
}
#: items per board: AUDITS v4 fails champions only when the newcomer beats the reference winner
#: beyond item sampling (exact McNemar, Holm over 100 tests); on 300 items its ll wins (16-23
#: items on ~60 disagreements) are not, on 900 they are (Holm p 2e-5)
ITEMS = {"champ": 900}


def done_when_board(kind: str, items: int | None = None) -> Records:
    n = ITEMS.get(kind, 300) if items is None else items
    return simulate(SimSpec((*BASE, NEWCOMERS[kind]), {"bench": n}, seed=3))


def big_board(n_models: int = 4278, n_items: int = 102, seed: int = 0) -> Records:
    rng = np.random.default_rng(seed)
    ability = rng.normal(0, 1.2, n_models)
    difficulty = rng.normal(0, 1, n_items)
    p = 1 / (1 + np.exp(-(ability[:, None] - difficulty[None, :])))
    C = (rng.random((n_models, n_items)) < p)[:, :, None]
    names = sorted(f"org{m % 97}/model-{m:05d}" for m in range(n_models))
    g = paper_grid()
    grid = Grid((g.configs[g.reference_index],), g.reference)
    items = Items(
        np.array(["mmlu"] * n_items, dtype=object),
        np.array([f"mmlu/{i:04d}" for i in range(n_items)], dtype=object),
        [0] * n_items,
        [None] * n_items,
        [None] * n_items,
    )
    return Records(C, tuple(names), items, grid)

"""Simulated records with planted truths, for tests and demos.

Generative model (one latent draw per model and item, shared by every config):

    U[m, i]        ~ Uniform(0, 1)                     (the model's "luck" on the item)
    logit p[m,i,k] = a[i] * (theta[m] - b[i]) + s[i] * (delta[m, k] + eta[i, k])
    C[m, i, k]     = U[m, i] < p[m, i, k]

* ``theta[m]``: model ability; ``b[i]`` ~ N(0, 1): item difficulty;
  ``a[i]`` ~ LogNormal(0, 0.3): item discrimination.
* ``delta[m, k]``: the model's per-config shift in logits, built from per-model
  shifts by scoring (``gen``/``ll``), template and ordering.
* ``s[i]``: item-level config sensitivity; ``s = 0`` with probability
  ``robust_share`` (the item answers the same under every config: robust),
  otherwise ~ Uniform(0.5, 1.5); ``eta[i, k]`` ~ N(0, ``item_noise``):
  item x config noise (the prompt sensitivity Brittlebench measures).

Because U is shared across configs, an item is config-fragile for a model only
when the configs move p across U. Planted truths:

* **twins** (``twin_of``): the model reuses another model's U with probability
  ``twin_share`` — the two answer the robust items (almost) identically, so any
  reference gap between them is carried by fragile items: a manufactured order
  when their config shifts differ.
* **separated**: a large ability gap, so the jointly robust items order the pair.
* **second champion**: a model with a large likelihood-scoring shift wins the
  ``ll`` configurations outright.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from .grid import Grid, paper_grid
from .model import PRED_ABSENT, Items, Records


@dataclass(frozen=True)
class SimModel:
    name: str
    ability: float
    scoring_shift: dict[str, float] = field(default_factory=dict)  # "gen"/"ll" -> logits
    template_shift: dict[str, float] = field(default_factory=dict)  # template -> logits
    ordering_shift: dict[str, float] = field(default_factory=dict)  # ordering -> logits
    twin_of: str | None = None
    twin_share: float = 0.97


@dataclass(frozen=True)
class SimSpec:
    models: tuple[SimModel, ...]
    items_per_benchmark: dict[str, int]
    grid: Grid = field(default_factory=paper_grid)
    robust_share: float = 0.35
    item_noise: float = 0.6
    seed: int = 0


def _rng(seed: int, key: str) -> np.random.Generator:
    words = np.frombuffer(hashlib.sha256(key.encode()).digest()[:16], dtype=np.uint32)
    return np.random.default_rng([seed, *words.tolist()])


def simulate(spec: SimSpec) -> Records:
    """Draw a records set from the generative model in the module docstring."""
    grid = spec.grid
    K = len(grid)
    names = [m.name for m in spec.models]
    order = np.argsort(names, kind="stable")
    benches = sorted(spec.items_per_benchmark)
    N = sum(spec.items_per_benchmark[b] for b in benches)
    rng = _rng(spec.seed, "items")
    b = rng.normal(0.0, 1.0, N)
    a = rng.lognormal(0.0, 0.3, N)
    sens = np.where(rng.random(N) < spec.robust_share, 0.0, rng.uniform(0.5, 1.5, N))
    eta = rng.normal(0.0, spec.item_noise, (N, K))
    U: dict[str, np.ndarray] = {}
    for m in spec.models:  # twins need their original's draws first
        if m.twin_of is None:
            U[m.name] = _rng(spec.seed, f"U/{m.name}").random(N)
    for m in spec.models:
        if m.twin_of is not None:
            r = _rng(spec.seed, f"U/{m.name}")
            own = r.random(N)
            U[m.name] = np.where(r.random(N) < m.twin_share, U[m.twin_of], own)
    correct = np.empty((len(names), N, K), dtype=bool)
    for out, mi in enumerate(order):
        m = spec.models[mi]
        delta = np.array(
            [
                m.scoring_shift.get(c.scoring, 0.0)
                + m.template_shift.get(c.template or "", 0.0)
                + m.ordering_shift.get(c.ordering or "", 0.0)
                for c in grid.configs
            ]
        )
        logit = a[:, None] * (m.ability - b[:, None]) + sens[:, None] * (delta[None, :] + eta)
        p = 1.0 / (1.0 + np.exp(-logit))
        correct[out] = U[m.name][:, None] < p
    bench_col = np.array([bb for bb in benches for _ in range(spec.items_per_benchmark[bb])], dtype=object)
    ids = np.array([f"{bb}/sim-{j:05d}" for bb in benches for j in range(spec.items_per_benchmark[bb])], dtype=object)
    gold = [int(g) for g in _rng(spec.seed, "gold").integers(0, 4, N)]
    items = Items(bench_col, ids, gold, [None] * N, [None] * N)
    return Records(
        correct=correct,
        models=tuple(names[i] for i in order),
        items=items,
        grid=grid,
        source=f"simulate(seed={spec.seed})",
    )


def demo_spec(items_per_benchmark: int = 120, seed: int = 7) -> SimSpec:
    """Six models with every planted truth the audits look for."""
    models = (
        SimModel("atlas-70b", 1.6, template_shift={"digit_labels": -1.0}),
        SimModel(
            "atlas-70b-instruct", 1.6, twin_of="atlas-70b", template_shift={"letter_plain": 0.6, "instruction": -0.8}
        ),  # manufactured pair
        SimModel("borealis-8b", 0.4, scoring_shift={"ll": 3.0}),  # second champion (ll)
        SimModel("cirrus-3b", -0.3, ordering_shift={"p3": -0.6}),
        SimModel("cirrus-3b-dpo", -0.3, twin_of="cirrus-3b", template_shift={"letter_plain": 0.5}),
        SimModel("dune-1b", -1.4),  # truly separated
    )
    return SimSpec(models, {b: items_per_benchmark for b in ("arc", "hellaswag", "mmlu", "truthfulqa")}, seed=seed)


def paper_sized_spec(seed: int = 1234) -> SimSpec:
    """12 models x 3,679 items x 26 configs, the paper's shape (for speed benchmarks)."""
    rng = _rng(seed, "abilities")
    abil = np.sort(rng.normal(0.8, 0.8, 12))[::-1]
    models = tuple(
        SimModel(
            f"model-{j:02d}",
            float(t),
            scoring_shift={"ll": float(rng.normal(0, 1))},
            template_shift={"digit_labels": float(rng.normal(0, 1))},
        )
        for j, t in enumerate(abil)
    )
    return SimSpec(models, {"arc": 1000, "hellaswag": 1000, "mmlu": 1000, "truthfulqa": 679}, seed=seed)


__all__ = ["SimModel", "SimSpec", "demo_spec", "paper_sized_spec", "simulate", "PRED_ABSENT"]


def exchangeable_spec(seed: int, n_models: int = 6, items: int = 60, benchmarks: int = 4) -> SimSpec:
    """Benchmarks whose items are drawn iid (the benchmark label is arbitrary), so nothing
    pooled can rest on one of them: the null of the ``mix`` check (docs/audits.md, "mix
    against chance"). Models get random abilities, scoring and ordering shifts."""
    rng = np.random.default_rng(seed)
    models = tuple(
        SimModel(
            f"m{j}",
            float(rng.normal(0.0, 0.6)),
            scoring_shift={"ll": float(rng.normal(0, 0.8))},
            ordering_shift={o: float(rng.normal(0, 0.3)) for o in ("p0", "p1", "p2", "p3", "p4", "p5")},
        )
        for j in range(n_models)
    )
    return SimSpec(models, {f"b{j}": items for j in range(benchmarks)}, grid=paper_grid(), seed=seed)

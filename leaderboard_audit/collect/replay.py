"""The replay engine: a budgeted collection answered from a complete records set (docs/collect.md, "Replay").

``leaderboard-audit collect --replay DIR --budget FRACTION --output OUT [--seed N]`` takes
the models, benchmarks and grid from DIR, runs the budgeted plan (collect/budget.py) with
DIR's cells as the engine's answers, and writes OUT: an incomplete records set holding the
planned cells (with their pred, margin and answer class where DIR has them) and every
other cell ``not_collected``. grid.json's ``collection_design`` records the budget, the
seed, the random sample (its item ids and inclusion probability) and the order. OUT is
deterministic for a seed, and written atomically: into a temporary folder beside it,
renamed into place once complete.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ..records import Records, load_records, write_records
from ..records.missing import NOT_COLLECTED
from ..records.model import ANSWER_CLASS_ABSENT, PRED_ABSENT, UNPARSED_ABSENT
from .budget import DEFAULT_SAMPLE_SHARE, BudgetError, Plan, design, plan
from .errors import CollectError
from .verdict_plan import BandTargets, scope_groups

DESIGN_KEY = "collection_design"


def replay_plan(
    full: Records,
    fraction: float,
    seed: int,
    *,
    sample_share: float = DEFAULT_SAMPLE_SHARE,
    band_round: bool = False,
    verdict_rounds: bool = True,
) -> Plan:
    """The budgeted plan run against ``full``'s cells (with the verdict rounds of
    collect/verdict_plan.py on the audit's scopes unless ``verdict_rounds`` is False)."""
    if full.missing is not None:
        raise CollectError(full.source, "--replay needs a complete records set (this one has missing cells)")
    C = np.asarray(full.correct)

    def answer(m: np.ndarray, i: np.ndarray, k: np.ndarray) -> np.ndarray:
        return C[m, i, k]

    targets = BandTargets(scope_groups(full.items.benchmark)) if verdict_rounds else None
    return plan(
        answer,
        full.shape,
        full.grid.reference_index,
        fraction,
        seed,
        sample_share=sample_share,
        band_round=band_round,
        targets=targets,
    )


def replayed_records(full: Records, p: Plan, *, fraction: float, seed: int) -> Records:
    """``full`` seen through the plan: unobserved cells ``not_collected``, their extras absent."""
    obs = p.observed
    grid = replace(
        full.grid,
        extra={
            **full.grid.extra,
            DESIGN_KEY: design(
                p, fraction=fraction, seed=seed, keys=full.grid.keys, items=full.items, models=full.models
            ),
        },
    )

    def cut(a: np.ndarray | None, absent: Any) -> np.ndarray | None:
        return None if a is None else np.where(obs, a, absent)

    unparsed = None
    if full.unparsed is not None:  # a count over the item's configs: kept only where all were observed
        unparsed = np.where(obs.all(axis=2), full.unparsed, UNPARSED_ABSENT).astype(np.int16)
    missing = np.where(obs, 0, NOT_COLLECTED).astype(np.int8)
    return Records(
        correct=np.asarray(full.correct) & obs,
        models=full.models,
        items=full.items,
        grid=grid,
        pred=cut(full.pred, PRED_ABSENT),
        margin=cut(full.margin, np.nan),
        unparsed=unparsed,
        answer_class=cut(full.answer_class, ANSWER_CLASS_ABSENT),
        source=full.source,
        notes=full.notes,
        missing=missing if missing.any() else None,
    )


def write_atomic_dir(records: Records, out: Path) -> Path:
    """Write ``records`` to a new folder ``out``: into a temporary sibling, then renamed."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CollectError(out, "--output exists and is not empty", fix="remove it or give another --output")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        write_records(records, tmp)
        os.chmod(tmp, 0o777 & ~_umask())
        if out.exists():
            out.rmdir()  # empty (checked above)
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def replay(
    src: str | os.PathLike[str], out: str | os.PathLike[str], fraction: float, seed: int = 0
) -> tuple[Path, Plan]:
    """Replay a budgeted collection of ``src`` into ``out``; returns the folder and the plan."""
    full = load_records(src)
    try:
        p = replay_plan(full, fraction, seed)
    except BudgetError as exc:
        raise CollectError(src, str(exc), fix="raise --budget") from None
    return write_atomic_dir(replayed_records(full, p, fraction=fraction, seed=seed), Path(out)), p


def replay_main(src: str, out: str | None, fraction: float | None, seed: int, quiet: bool = False) -> int:
    """The ``collect --replay`` command (collect/cli.py)."""
    if out is None or fraction is None:
        raise CollectError(src, "--replay needs --budget FRACTION and --output OUT")
    root, p = replay(src, out, fraction, seed)
    M, N, K = p.observed.shape
    decided = int((p.status != -1).sum())
    if not quiet:
        for r in p.rounds:
            print(f"round {r['round']} ({r['kind']}): {r['cells']:,} cells")
    print(
        f"replayed {src} at budget {fraction:g} (seed {seed}): {p.cells:,} of {M * N * K:,} cells "
        f"({p.cells / (M * N * K):.1%}); random sample {len(p.sample)} item(s); robust status known for "
        f"{decided:,} of {M * N:,} (model, item) pairs -> {root}"
    )
    return 0


__all__ = ["DESIGN_KEY", "replay", "replay_main", "replay_plan", "replayed_records", "write_atomic_dir"]

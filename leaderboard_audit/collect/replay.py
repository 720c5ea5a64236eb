"""The replay engine: a budgeted collection answered from a complete records set (docs/collect.md, "Replay").

``leaderboard-audit collect --replay DIR --budget FRACTION --output OUT [--seed N]`` takes
the models, benchmarks and grid from DIR, runs the budgeted plan (collect/budget.py) with
DIR's cells as the engine's answers, and writes OUT: an incomplete records set holding the
planned cells (with their pred, margin and answer class where DIR has them) and every
other cell ``not_collected``. grid.json's ``collection_design`` records the budget, the
seed, the random sample (its item ids and inclusion probability) and the order. OUT is
deterministic for a seed, and written atomically: into a temporary folder beside it,
renamed into place once complete; an OUT inside DIR (or DIR inside OUT) is refused first.

A graded DIR (records/graded.py: ties 0.5, judge scores) replays into a graded OUT: each
observed cell keeps its outcome, a missing one holds 0. The plan reads a cell's won bit
(``correct``, ``score == 1``), which is what "robust" means on graded records (docs/audits.md,
"Graded outcomes": right under all K is won outright under all K; a tie is no win), so
its robust statuses are the audit's.
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
    C = np.asarray(full.correct)  # a graded cell's won bit: the robust status is the audit's (module doc)

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
    """``full`` seen through the plan: unobserved cells ``not_collected``, their extras absent.

    A graded ``full`` keeps each observed cell's outcome in ``score`` (0 at a missing cell, as
    records/graded.py requires): a tie stays 0.5, never a loss. OUT is graded when an observed
    cell is; one whose observed outcomes are all 0 or 1 is a boolean set (``Records``)."""
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
        score=cut(full.score, 0.0),
    )


def refuse_nested(src: str | os.PathLike[str], out: str | os.PathLike[str]) -> None:
    """Refuse an ``out`` that is ``src``, inside it or holds it (symlinks resolved), before
    anything is read or written: OUT's folders inside a records folder DIR become part of it
    (a benchmark folder with no model files: DIR no longer loads), and a DIR inside OUT is
    what OUT's rename would replace."""
    s, o = Path(src).resolve(), Path(out).resolve()
    if o == s:
        why = "is the same folder as"
    elif s in o.parents:
        why = "is inside"
    elif o in s.parents:
        why = "holds"
    else:
        return
    linked = (Path(src).absolute(), Path(out).absolute()) != (s, o)
    shown = f" (links resolved: --output {o}, --replay {s})" if linked else ""
    raise CollectError(
        out,
        f"--output {why} --replay {src}{shown}: writing it would change the records being replayed",
        fix="give an --output outside --replay DIR (a sibling folder, e.g.), and a DIR outside it",
    )


def write_atomic_dir(records: Records, out: Path) -> Path:
    """Write ``records`` to a new folder ``out``: into a temporary sibling, then renamed.

    A write that fails (disk full, no permission) is a ``CollectError`` naming ``out``, the
    folder the user asked for (the temporary folder the OSError names is removed)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CollectError(out, "--output exists and is not empty", fix="remove it or give another --output")
    try:
        return _write_renamed(records, out)
    except OSError as exc:
        raise CollectError(out, f"--output: cannot write ({exc.strerror or exc}); nothing partial is left") from None


def _write_renamed(records: Records, out: Path) -> Path:
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
    full, p = _planned(src, out, fraction, seed, "raise --budget")
    return write_atomic_dir(replayed_records(full, p, fraction=fraction, seed=seed), Path(out)), p


def _planned(
    src: str | os.PathLike[str], out: str | os.PathLike[str], fraction: float, seed: int, fix: str
) -> tuple[Records, Plan]:
    """The records of ``src`` and the budgeted plan at ``fraction``, once ``out`` is known not to
    be nested with ``src``; a budget below the reference round is a usage error saying ``fix``."""
    refuse_nested(src, out)
    full = load_records(src)
    try:
        return full, replay_plan(full, fraction, seed)
    except BudgetError as exc:
        raise CollectError(src, str(exc), fix=fix) from None


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


def replay_until_decided(
    src: str | os.PathLike[str], out: str | os.PathLike[str], cap: float, seed: int = 0
) -> tuple[Path, Plan, np.ndarray]:
    """``collect --replay DIR --until-decided --max-budget CAP``: the stopping rule of a
    budgeted collection with a SPEC (collect/budgeted.py), with DIR's cells as the answers.
    That rule is the plan's own: verdict rounds while an undecided band verdict is predicted
    decidable, then robust-status rounds until every status is known or the cap is spent, so
    the plan runs at the cap; grid.json's design records ``stop: until_decided`` as the SPEC's does.
    Returns the folder, the plan and each item's benchmark (the audit's scopes)."""
    full, p = _planned(src, out, cap, seed, "raise --max-budget")
    rec = replayed_records(full, p, fraction=cap, seed=seed)
    mode = {"stop": "until_decided", "max_budget": cap, "sample_share": DEFAULT_SAMPLE_SHARE}  # budgeted._mode
    d = {**rec.grid.extra[DESIGN_KEY], **mode}
    rec = replace(rec, grid=replace(rec.grid, extra={**rec.grid.extra, DESIGN_KEY: d}))
    return write_atomic_dir(rec, Path(out)), p, np.asarray(full.items.benchmark)


def until_decided_main(src: str, out: str | None, cap: float, seed: int, quiet: bool = False) -> int:
    """The ``collect --replay --until-decided`` command (collect/cli.py): the rounds, then one
    line with the cells used, why it stopped and what is decided (robust statuses, and the
    band verdicts by the audit's exact rule, the verdicts the plan's rounds aim at)."""
    if out is None:
        raise CollectError(src, "--replay needs --output OUT")
    from .budget import UNDECIDED

    root, p, benchmark = replay_until_decided(src, out, cap, seed)
    M, N, K = p.observed.shape
    known = int((p.status != UNDECIDED).sum())
    band, n_band = BandTargets(scope_groups(benchmark)).count_decided(p.observed, p.correct)
    if not quiet:
        for r in p.rounds:
            print(f"round {r['round']} ({r['kind']}): {r['cells']:,} cells")
    why = "every robust status is known" if known == M * N else "the cap is spent"
    print(
        f"replayed {src} until decided (cap {cap:g}, seed {seed}): {p.cells:,} of {M * N * K:,} cells used "
        f"({p.cells / (M * N * K):.1%}; the cap {p.budget_cells:,}); stopped: {why}; decided: {known:,} of "
        f"{M * N:,} robust statuses, {band} of {n_band} band verdicts (the audit of OUT decides the rest); random "
        f"sample {len(p.sample)} item(s) -> {root}"
    )
    return 0


__all__ = [
    "DESIGN_KEY",
    "refuse_nested",
    "replay",
    "replay_main",
    "replay_plan",
    "replay_until_decided",
    "replayed_records",
    "until_decided_main",
    "write_atomic_dir",
]

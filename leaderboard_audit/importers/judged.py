"""Judge outputs against a baseline as records of graded outcomes (issue 47; docs/importers.md,
"Judge outputs as records").

Arena-Hard ``model_judgment/<judge>/<model>.jsonl``, AlpacaEval ``annotations.json`` and
MT-Bench ``*_single.jsonl`` / ``*_pair.jsonl`` (pair-baseline mode) judge every model's
answer to the same questions, so their judgments are records: one item per question (per
question and turn for MT-Bench, whose two turns are two prompts), one configuration per
combination of the judge axes, and the cell the **graded outcome** (records/graded.py):

* Arena-Hard: the model's verdict against the baseline, ``3way`` (win 1, tie 1/2, loss 0:
  ``>>`` and ``>`` alike) and ``5way`` (``B>>A`` 1, ``B>A`` 3/4, ``A=B`` 1/2, ``A>B``
  1/4, ``A>>B`` 0 with the model as B; game 2 is mirrored). Axes ``judge``, ``position``
  (``baseline-first``: game 1, ``model-first``: game 2) and ``scale``.
* AlpacaEval: ``preference - 1`` (2: the model's answer preferred; a weighted annotator's
  fraction stays a fraction). Axes ``judge`` and ``length`` (``raw``; ``controlled``: the
  outcome with the length term removed, ``arena.judges.length_controlled``, clipped to
  [0, 1] and the clipped count said in a note).
* MT-Bench single: ``(score - 1) / 9`` (1..10 onto [0, 1]; ``-1``, no score, left out).
  Axis ``judge``.
* MT-Bench pair: the model's outcome against the one baseline every pair names (win 1, tie
  1/2, loss 0; ``error`` left out). Axes ``judge`` and ``position`` (``model-first``: the
  model shown as A, ``baseline-first``). Pairs between arbitrary models (pair-all mode)
  have no baseline: audit them as a score table (``--audit-format mt-bench``).

The bit ``correct`` is "won outright" (outcome 1); the checks read the outcomes as
docs/audits.md, "Graded outcomes" says. ``axis_groups`` declare the judge axes, so "the
position axis is load-bearing" is the ``axes`` verdict. The reference is the first judge's
``baseline-first`` / ``5way`` / ``raw`` configuration (for MT-Bench pairs ``model-first``
is not the reference: ``baseline-first`` is, as for Arena-Hard).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

FORMAT_INFO = {
    "name": "judged",
    "aliases": ("judge-wins",),
    "description": "LLM-judge outputs against a baseline (Arena-Hard model_judgment/, AlpacaEval "
    "annotations.json, MT-Bench single and pair judgments): graded outcomes in [0, 1] (win 1, tie 1/2, "
    "loss 0; scores scaled); configs are the judge axes",
    "source": "Arena-Hard model_judgment/ folder, AlpacaEval annotations.json or MT-Bench judgments "
    "(a file or a folder)",
    "patterns": ("*.jsonl", "annotations.json"),
    "options": {"intersect": "", "reference": "", "benchmark": ""},
    "loader": "load_judged",
}
#: configurations that are not a level of their own: an average of both positions
LEFT_OUT = {("position", "both")}
#: the reference level of each axis (the first judge is the reference judge)
REFERENCE_LEVELS = {"position": "baseline-first", "scale": "5way", "length": "raw"}
BENCHMARK = {"arena-hard": "arena-hard", "alpaca-eval-annotations": "alpaca-eval", "mt-bench": "mt-bench"}


def load_judged(
    src: str | os.PathLike[str],
    *,
    intersect: bool = False,
    reference: str | None = None,
    benchmark: str | None = None,
) -> Any:
    from ..arena.data import ArenaInputError
    from ..arena.formats import sniff
    from ..arena.judges import alpaca_outcomes, arena_hard_outcomes, mt_bench_outcomes
    from ..records.axis_groups import AXIS_GROUPS
    from ..records.errors import RecordsError
    from ..records.grid import Config
    from ._build import Unit, build_records

    p = Path(src)
    kind = sniff(p)
    readers = {
        "arena-hard": arena_hard_outcomes,
        "alpaca-eval-annotations": alpaca_outcomes,
        "mt-bench": mt_bench_outcomes,
    }
    if kind not in readers:
        raise RecordsError.one(
            str(p),
            None,
            "not Arena-Hard judgments, AlpacaEval annotations or MT-Bench judgments",
            fix="point at model_judgment/ (Arena-Hard), annotations.json (AlpacaEval) or *_single.jsonl / "
            "*_pair.jsonl (MT-Bench)",
        )
    try:
        out = readers[kind](p)
    except ArenaInputError as exc:
        raise RecordsError.one(str(p), None, str(exc)) from None
    if not out.values:
        raise RecordsError.one(str(p), None, "no judgments", fix="point at files holding judgments")
    notes = list(out.notes)
    baseline = _pair_baseline(out, str(p)) if out.pair_sides else None
    bench = benchmark or BENCHMARK[kind]
    cells: dict[tuple[str, str], dict[str, float]] = {}  # (model, shown key) -> item -> outcome
    axes_of: dict[str, dict[str, str]] = {}
    clipped = 0
    for (model, key), values in out.values.items():
        ax = out.config_axes[key]
        if model == baseline or any((a, v) in LEFT_OUT for a, v in ax.items()):
            continue
        ax = dict(ax)
        turn = ax.pop("turn", None)  # MT-Bench: the turn is part of the item (two prompts)
        if baseline is not None:
            ax["position"] = {"first": "model-first", "second": "baseline-first"}[ax["position"]]
        shown = "|".join(f"{a}={v}" for a, v in ax.items())
        axes_of[shown] = ax
        got = cells.setdefault((model, shown), {})
        for item, v in zip(out.items[(model, key)], values):
            iid = item if turn is None else f"{item}/turn-{turn}"
            if iid in got:
                raise RecordsError.one(
                    str(p),
                    None,
                    f"model {model!r}: item {iid!r} judged twice under {shown!r}",
                    fix="one judgment per item and configuration",
                )
            if not 0.0 <= v <= 1.0:  # only the length-controlled outcome can leave [0, 1]
                clipped += 1
                v = min(1.0, max(0.0, v))
            got[iid] = float(v)
    if clipped:
        notes.append(f"{clipped} length-controlled outcome(s) outside [0, 1] clipped to it")
    units = [
        Unit(
            str(p), bench, model, Config(shown, "judge", None, None, None, {"source": "judged", **axes_of[shown]}), got
        )
        for (model, shown), got in sorted(cells.items())
    ]
    keys = sorted(axes_of)
    ref = reference or _reference(keys, axes_of)
    groups = axis_groups(axes_of, ref) if ref in axes_of else {}
    notes.append(
        "the outcome is graded against the baseline's answer (win 1, tie 1/2, loss 0; scores scaled to [0, 1]); "
        "the bit is a win outright"
    )
    return build_records(
        units,
        source=str(p),
        reference=ref,
        intersect=intersect,
        notes=notes,
        grid_extra={AXIS_GROUPS: groups} if groups else None,
    )


def _reference(keys: list[str], axes_of: dict[str, dict[str, str]]) -> str:
    """The first judge's configuration at every other axis's reference level (else the first key)."""
    judges = sorted({ax.get("judge", "") for ax in axes_of.values()})
    want = {"judge": judges[0], **REFERENCE_LEVELS}
    for k in keys:
        if all(want.get(a, v) == v for a, v in axes_of[k].items()):
            return k
    return keys[0]


def _pair_baseline(out: Any, source: str) -> str:
    """The one model every MT-Bench pair names on the same side (pair-baseline mode: FastChat's
    gen_judgment.py names the baseline as model_2), else a clear error."""
    from ..records.errors import RecordsError

    sides = out.pair_sides
    for side, other in (("model_2", "model_1"), ("model_1", "model_2")):
        if len(sides[side]) == 1 and not sides[side] & sides[other]:
            return next(iter(sides[side]))
    raise RecordsError.one(
        source,
        None,
        "MT-Bench pairs are not all against one baseline (pair-all mode): there is no baseline answer to grade against",
        fix="audit the pairs as a score table (--audit-format mt-bench), or give pair-baseline judgments",
    )


def axis_groups(config_axes: dict[str, dict[str, str]], ref: str) -> dict[str, list[str]]:
    """axis -> the reference and the configurations that differ from it in that axis alone."""
    base = config_axes[ref]
    out: dict[str, list[str]] = {}
    for key, ax in sorted(config_axes.items()):
        diff = [a for a in ax if ax[a] != base.get(a)]
        if len(diff) == 1:
            out.setdefault(diff[0], [ref]).append(key)
    return out

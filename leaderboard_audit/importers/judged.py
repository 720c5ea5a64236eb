"""Judge outputs against a baseline as records (issue 47): the bit is "won against the
baseline's answer" (docs/importers.md, "Judge outputs as records").

Arena-Hard ``model_judgment/<judge>/<model>.jsonl`` and AlpacaEval ``annotations.json``
judge every model's answer to the same questions against one baseline answer, so their
judgments are records: one item per question, one configuration per combination of the
judge axes, ``correct`` = the graded outcome is above 1/2 (a win; a tie is not one). The
item-level checks then read the judge axes as harness axes: robust = won under every
configuration, adjacent pairs tested on the items one model won under every
configuration and the other under none, champions, the harness-averaged order, and
``axis_groups`` declaring the judge axes (so "the position axis is load-bearing" is the
``axes`` verdict). The graded scores themselves (ties as 1/2, 5-way verdicts) are audited
as a score table (``arena.judges``; ``pytest --audit`` on the same files).

Configurations: Arena-Hard ``judge`` x ``position`` (``baseline-first``: game 1,
``model-first``: game 2; the verdict scale does not change a win), AlpacaEval ``judge`` x
``length`` (``raw``, ``controlled``: won once the length term is removed). The reference
is the first judge's ``baseline-first`` / ``raw`` configuration.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

FORMAT_INFO = {
    "name": "judged",
    "aliases": ("judge-wins",),
    "description": "LLM-judge outputs against a baseline (Arena-Hard model_judgment/, AlpacaEval "
    "annotations.json): the bit is a win over the baseline's answer; configs are the judge axes",
    "source": "Arena-Hard model_judgment/ folder or AlpacaEval annotations.json (a file or a folder)",
    "patterns": ("*.jsonl", "annotations.json"),
    "options": {"intersect": "", "reference": "", "benchmark": ""},
    "loader": "load_judged",
}
#: configurations that are not a level of their own (an average) or that cannot change a win
LEFT_OUT = {("position", "both"), ("scale", "5way")}


def load_judged(
    src: str | os.PathLike[str],
    *,
    intersect: bool = False,
    reference: str | None = None,
    benchmark: str | None = None,
) -> Any:
    from ..arena.data import ArenaInputError
    from ..arena.formats import sniff
    from ..arena.judges import alpaca_outcomes, arena_hard_outcomes
    from ..records.axis_groups import AXIS_GROUPS
    from ..records.errors import RecordsError
    from ..records.grid import Config
    from ._build import Unit, build_records

    p = Path(src)
    kind = sniff(p)
    try:
        if kind == "arena-hard":
            out = arena_hard_outcomes(p)
        elif kind == "alpaca-eval-annotations":
            out = alpaca_outcomes(p)
        else:
            raise RecordsError.one(
                str(p),
                None,
                "not Arena-Hard judgments or AlpacaEval annotations",
                fix="point at model_judgment/ (Arena-Hard) or annotations.json (AlpacaEval)",
            )
    except ArenaInputError as exc:
        raise RecordsError.one(str(p), None, str(exc)) from None
    bench = benchmark or ("arena-hard" if kind == "arena-hard" else "alpaca-eval")
    keep = {k: ax for k, ax in out.config_axes.items() if not any((a, v) in LEFT_OUT for a, v in ax.items())}
    shown = {k: "|".join(f"{a}={v}" for a, v in ax.items() if a != "scale") for k, ax in keep.items()}
    units = []
    for (model, key), values in out.values.items():
        if key not in keep:
            continue
        bits: dict[str, int] = {}
        for item, v in zip(out.items[(model, key)], values):
            if item in bits:
                raise RecordsError.one(
                    str(p),
                    None,
                    f"model {model!r}: item {item!r} judged twice under {shown[key]!r}",
                    fix="one judgment per item",
                )
            bits[item] = int(v > 0.5)
        config = Config(shown[key], "judge", None, None, None, {"source": "judged", **keep[key]})
        units.append(Unit(str(p), bench, model, config, bits))
    keys = sorted(set(shown.values()))
    ref = reference or keys[0]
    groups = axis_groups({shown[k]: {a: v for a, v in ax.items() if a != "scale"} for k, ax in keep.items()}, ref)
    notes = list(out.notes) + ["the bit is a win over the baseline's answer (a tie is not a win)"]
    return build_records(
        units,
        source=str(p),
        reference=ref,
        intersect=intersect,
        notes=notes,
        grid_extra={AXIS_GROUPS: groups} if groups else None,
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

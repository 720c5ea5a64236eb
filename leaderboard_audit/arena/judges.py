"""LLM-judge outputs -> a score table over judge configurations (docs/importers.md,
"Judge outputs"; docs/audits.md, "Judge and arena leaderboards").

Each judgment is a **graded outcome** of a model against a baseline or an opponent in
[0, 1]: a win 1, a tie 1/2, a loss 0 (a 5-way verdict: 1, 3/4, 1/2, 1/4, 0), or a judge's
score scaled to [0, 1]. A configuration is a combination of judge axes, written
``axis=value|axis=value`` (judge model, answer position, verdict scale, length control,
turn); the table holds each model's mean outcome per configuration with its standard
error (``sd / sqrt(n)``) and n, and declares, per axis, the configuration pairs that
differ only in that axis (``ScoreTable.axes``), which the ``judge_axis`` check reads.

* AlpacaEval ``annotations.json`` (``alpaca_eval`` writes it per model and annotator): a
  JSON list of ``{"instruction", "output_1", "generator_1", "output_2", "generator_2",
  "annotator", "preference"}``; ``output_1`` is the baseline's, ``preference`` in [1, 2]
  (2: the model's answer preferred; weighted annotators give fractions): outcome
  ``preference - 1``. Axes: ``judge`` (``annotator``) and ``length`` (``raw`` and
  ``controlled``: the outcome minus ``beta * tanh(length difference / its SD)``, beta
  the pooled least-squares slope with a fixed effect per model, so each model is scored
  as if its answers were as long as the baseline's).
* Arena-Hard ``model_judgment/<judge>/<model>.jsonl``: lines ``{"question_id", "model",
  "judge", "games": [{"score": "A>B", ...}, {"score": ...}]}``; game 1 shows the
  baseline as A, game 2 the model as A. Labels ``A>>B``, ``A>B``, ``A=B``, ``B>A``,
  ``B>>A`` (``null``: the judge gave none; left out, a note counts them). Axes:
  ``judge`` (and ``prompt`` when lines name a ``judge_prompt``, as the collector's judge
  stage writes them), ``position`` (``baseline-first`` = game 1, ``model-first`` = game 2; the
  reference averages both: ``both``) and ``scale`` (``3way``, ``5way``).
* MT-Bench ``<judge>_single.jsonl``: ``{"question_id", "model", "judge": [model,
  prompt], "score": 1..10, "turn"}`` (``-1``: no score, left out): outcome
  ``(score - 1) / 9``. Axes: ``judge``, ``turn``.
* MT-Bench ``<judge>_pair.jsonl``: ``{"question_id", "model_1", "model_2", "g1_winner",
  "g2_winner", "judge": [model, prompt], "turn"}``; game 1 shows model_1 as A, game 2
  model_2 as A, and both winners are already named as ``model_1`` / ``model_2`` /
  ``tie`` (``error``: left out). Each judgment is an outcome for both models. Axes:
  ``judge``, ``position`` (``first`` = the model shown as A, ``second``), ``turn``.
"""

from __future__ import annotations

import json
import math
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from .data import ArenaInputError
from .table import ScoreTable

AH_3WAY = {"A>>B": 0.0, "A>B": 0.0, "A=B": 0.5, "B>A": 1.0, "B>>A": 1.0}  # the model as B
AH_5WAY = {"A>>B": 0.0, "A>B": 0.25, "A=B": 0.5, "B>A": 0.75, "B>>A": 1.0}
MAX_LINE = 64 << 20
DERIVED = {("position", "both")}  # an average of two configurations, not a level of its own


class Outcomes:
    """Graded outcomes per (model, configuration), with the configurations' axis values."""

    def __init__(self) -> None:
        self.values: dict[tuple[str, str], list[float]] = defaultdict(list)
        self.items: dict[tuple[str, str], list[str]] = defaultdict(list)  # the item of each value
        self.config_axes: dict[str, dict[str, str]] = {}
        self.notes: list[str] = []
        #: MT-Bench pairs: the models named as model_1 and as model_2 (empty: a fixed baseline)
        self.pair_sides: dict[str, set[str]] = defaultdict(set)

    def add(self, model: str, axes: dict[str, str], value: float, item: str = "") -> None:
        key = "|".join(f"{a}={v}" for a, v in axes.items())
        self.config_axes.setdefault(key, dict(axes))
        self.values[(model, key)].append(value)
        self.items[(model, key)].append(item)

    def table(self, source: str, reference: dict[str, str] | None = None) -> ScoreTable:
        if not self.values:
            raise ArenaInputError(f"{source}: no judgments to audit")
        models = sorted({m for m, _ in self.values})
        configs = sorted(self.config_axes)
        missing = [(m, c) for m in models for c in configs if (m, c) not in self.values]
        if missing:
            m, c = missing[0]
            raise ArenaInputError(
                f"{source}: model {m!r} has no judgments under {c!r} ({len(missing)} model x configuration cells "
                "are empty); give every model every configuration, or audit the files one configuration at a time"
            )
        S = np.empty((len(models), len(configs)))
        SE = np.full_like(S, np.nan)
        N = np.empty_like(S)
        for a, m in enumerate(models):
            for b, c in enumerate(configs):
                v = np.asarray(self.values[(m, c)])
                S[a, b], N[a, b] = v.mean(), len(v)
                if len(v) > 1:
                    SE[a, b] = v.std(ddof=1) / math.sqrt(len(v))
        ref = configs[0]
        if reference:
            ref = next((c for c in configs if all(self.config_axes[c].get(k) == v for k, v in reference.items())), ref)
        pairs = axis_pairs(self.config_axes, self.config_axes[ref])
        return ScoreTable(tuple(models), tuple(configs), S, SE, N, ref, source, tuple(self.notes), pairs)


def axis_pairs(config_axes: dict[str, dict[str, str]], ref: dict[str, str]) -> dict[str, list[tuple[str, str]]]:
    """axis -> the configuration pairs that differ in that axis only, every other axis at
    the reference's value, derived values (``DERIVED``: the average of both positions)
    left out: the pairs of one axis then share no judgment twice."""
    out: dict[str, list[tuple[str, str]]] = {}
    keys = sorted(config_axes)
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            ca, cb = config_axes[a], config_axes[b]
            diff = [k for k in ca if ca[k] != cb.get(k)]
            if len(diff) != 1 or (diff[0], ca[diff[0]]) in DERIVED or (diff[0], cb[diff[0]]) in DERIVED:
                continue
            if all(ca[k] == ref.get(k) for k in ca if k != diff[0]):
                out.setdefault(diff[0], []).append((a, b))
    return out


def _json_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    out = []
    try:
        with open(path, "rb") as f:
            for ln, raw in enumerate(f, start=1):
                if len(raw) > MAX_LINE:
                    raise ArenaInputError(f"{path}: line {ln}: longer than {MAX_LINE >> 20} MiB")
                if not raw.strip():
                    continue
                try:
                    obj = json.loads(raw)
                except ValueError as exc:
                    raise ArenaInputError(f"{path}: line {ln}: not JSON ({exc})") from None
                if not isinstance(obj, dict):
                    raise ArenaInputError(f"{path}: line {ln}: not a JSON object")
                out.append((ln, obj))
    except OSError as exc:
        raise ArenaInputError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    return out


def _need(obj: dict[str, Any], key: str, where: str, kind: type | tuple[type, ...] = str) -> Any:
    v = obj.get(key)
    if not isinstance(v, kind) or isinstance(v, bool) or (isinstance(v, str) and not v.strip()):
        raise ArenaInputError(f"{where}: '{key}' is {str(v)[:40]!r}; see docs/importers.md, 'Judge outputs'")
    return v


def read_alpaca_annotations(path: str | os.PathLike[str]) -> ScoreTable:
    """AlpacaEval ``annotations.json`` (one file, or a folder of them)."""
    return alpaca_outcomes(path).table(str(path), {"length": "raw"})


def alpaca_outcomes(path: str | os.PathLike[str]) -> Outcomes:
    p = Path(path)
    files = sorted(p.rglob("annotations.json")) if p.is_dir() else [p]
    rows: list[tuple[str, str, float, float]] = []  # model, judge, outcome, length difference
    items: list[str] = []
    failed = 0
    for f in files:
        try:
            data = json.loads(f.read_bytes())
        except (OSError, ValueError) as exc:
            raise ArenaInputError(f"{f}: not a readable JSON file ({exc})") from None
        if not isinstance(data, list):
            raise ArenaInputError(f"{f}: the top level is not a list of annotations")
        for k, a in enumerate(data):
            where = f"{f}: annotation {k}"
            if not isinstance(a, dict):
                raise ArenaInputError(f"{where}: not an object")
            model = _need(a, "generator_2", where)
            pref = a.get("preference")
            if pref is None or (isinstance(pref, float) and math.isnan(pref)):
                failed += 1
                continue
            if isinstance(pref, bool) or not isinstance(pref, (int, float)) or not 1 <= pref <= 2:
                raise ArenaInputError(f"{where}: 'preference' is {str(pref)[:40]!r}; expected a number in [1, 2]")
            judge = str(a.get("annotator") or "annotator")
            diff = float(len(str(a.get("output_2") or "")) - len(str(a.get("output_1") or "")))
            rows.append((model, judge, float(pref) - 1.0, diff))
            items.append(str(a.get("instruction", k)))
    if not rows:
        raise ArenaInputError(f"{p}: no annotations with a preference")
    out = Outcomes()
    if failed:
        out.notes.append(f"{failed} annotation(s) without a preference left out")
    controlled = length_controlled(rows)
    for (model, judge, y, _), yc, item in zip(rows, controlled, items):
        out.add(model, {"judge": judge, "length": "raw"}, y, item)
        out.add(model, {"judge": judge, "length": "controlled"}, yc, item)
    return out


def length_controlled(rows: list[tuple[str, str, float, float]]) -> list[float]:
    """Outcomes with the length term removed: ``y - beta * tanh(d / sd(d))``, beta the pooled
    least-squares slope with a fixed effect per (model, judge)."""
    y = np.array([r[2] for r in rows])
    d = np.array([r[3] for r in rows])
    sd = d.std()
    x = np.tanh(d / sd) if sd > 0 else np.zeros_like(d)
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for k, r in enumerate(rows):
        groups[(r[0], r[1])].append(k)
    xc, yc = x.copy(), y.copy()
    for idx in groups.values():  # within-group centring = the fixed effects
        xc[idx] -= x[idx].mean()
        yc[idx] -= y[idx].mean()
    denom = float(np.sum(xc * xc))
    beta = float(np.sum(xc * yc)) / denom if denom > 0 else 0.0
    return (y - beta * x).tolist()


def read_arena_hard(path: str | os.PathLike[str]) -> ScoreTable:
    """Arena-Hard ``model_judgment/<judge>/<model>.jsonl`` (a file or a folder of them)."""
    return arena_hard_outcomes(path).table(str(path), {"position": "both", "scale": "5way"})


def arena_hard_outcomes(path: str | os.PathLike[str]) -> Outcomes:
    p = Path(path)
    files = sorted(p.rglob("*.jsonl")) if p.is_dir() else [p]
    if not files:
        raise ArenaInputError(f"{p}: no *.jsonl judgment files (expected model_judgment/<judge>/<model>.jsonl)")
    out = Outcomes()
    missing = 0
    for f in files:
        for ln, row in _json_lines(f):
            where = f"{f}: line {ln}"
            model = _need(row, "model", where)
            judge = str(row.get("judge") or f.parent.name)
            games = _need(row, "games", where, list)
            if len(games) != 2:
                raise ArenaInputError(
                    f"{where}: 'games' has {len(games)} game(s); Arena-Hard logs two (both positions)"
                )
            labels = []
            for g, game in enumerate(games):
                label = game.get("score") if isinstance(game, dict) else None
                if label is not None and label not in AH_3WAY:
                    raise ArenaInputError(
                        f"{where}: game {g + 1} score {str(label)[:20]!r}; expected one of {list(AH_3WAY)}"
                    )
                labels.append(label)
            if None in labels:
                missing += 1
                continue
            g1, g2 = labels
            mirror = {"A>>B": "B>>A", "A>B": "B>A", "A=B": "A=B", "B>A": "A>B", "B>>A": "A>>B"}
            item = str(row.get("question_id", ln))
            prompt = row.get("judge_prompt")  # the collector's judge stage names its prompt: an axis
            who = {"judge": judge, **({"prompt": prompt} if isinstance(prompt, str) and prompt.strip() else {})}
            for scale, table in (("3way", AH_3WAY), ("5way", AH_5WAY)):
                first, second = table[g1], table[mirror[g2]]  # game 2 shows the model as A
                out.add(model, {**who, "position": "baseline-first", "scale": scale}, first, item)
                out.add(model, {**who, "position": "model-first", "scale": scale}, second, item)
                out.add(model, {**who, "position": "both", "scale": scale}, (first + second) / 2, item)
    if missing:
        out.notes.append(f"{missing} judgment(s) with a game the judge did not score left out")
    return out


def read_mt_bench(path: str | os.PathLike[str]) -> ScoreTable:
    """MT-Bench ``*_single.jsonl`` or ``*_pair.jsonl`` (a file or a folder of them)."""
    return mt_bench_outcomes(path).table(str(Path(path)), {"turn": "1"})


def mt_bench_outcomes(path: str | os.PathLike[str]) -> Outcomes:
    """MT-Bench judgments as outcomes; each one's item is its ``question_id``."""
    p = Path(path)
    files = sorted(p.rglob("*.jsonl")) if p.is_dir() else [p]
    out = Outcomes()
    skipped = 0
    pair = None
    for f in files:
        for ln, row in _json_lines(f):
            where = f"{f}: line {ln}"
            judge = row.get("judge")
            jname = str(judge[0]) if isinstance(judge, list) and judge else str(judge or "judge")
            turn = str(row.get("turn", 1))
            is_pair = "g1_winner" in row
            if pair is None:
                pair = is_pair
            elif pair != is_pair:
                raise ArenaInputError(f"{where}: single and pair judgments mixed; audit *_single and *_pair apart")
            if not is_pair:
                model = _need(row, "model", where)
                score = _need(row, "score", where, (int, float))
                if score == -1:
                    skipped += 1
                    continue
                if not 1 <= score <= 10:
                    raise ArenaInputError(f"{where}: 'score' is {score!r}; expected 1..10 (or -1: no score)")
                out.add(model, {"judge": jname, "turn": turn}, (float(score) - 1) / 9, str(row.get("question_id", ln)))
                continue
            m1, m2 = _need(row, "model_1", where), _need(row, "model_2", where)
            item = str(row.get("question_id", ln))
            out.pair_sides["model_1"].add(m1)
            out.pair_sides["model_2"].add(m2)
            for g, first, second in (("g1_winner", m1, m2), ("g2_winner", m2, m1)):
                w = row.get(g)
                if w not in ("model_1", "model_2", "tie", "error"):
                    raise ArenaInputError(f"{where}: '{g}' is {str(w)[:20]!r}; expected model_1, model_2, tie or error")
                if w == "error":
                    skipped += 1
                    continue
                s1 = 0.5 if w == "tie" else 1.0 if w == "model_1" else 0.0  # model_1's outcome
                s_first = s1 if first == m1 else 1 - s1
                out.add(first, {"judge": jname, "position": "first", "turn": turn}, s_first, item)
                out.add(second, {"judge": jname, "position": "second", "turn": turn}, 1 - s_first, item)
    if skipped:
        out.notes.append(f"{skipped} judgment(s) without a verdict (score -1 or 'error') left out")
    return out


__all__ = [
    "Outcomes",
    "alpaca_outcomes",
    "arena_hard_outcomes",
    "axis_pairs",
    "length_controlled",
    "mt_bench_outcomes",
    "read_alpaca_annotations",
    "read_arena_hard",
    "read_mt_bench",
]

"""Published tables: model x configuration -> score, with optional standard error and n
(docs/importers.md, "Published tables").

A CSV with one row per model: the model's name in the first column (or a column named
``model``/``name``), one column per configuration, and optionally ``<config>_se`` and
``<config>_n``. AlpacaEval's leaderboard CSVs (``alpaca_eval/leaderboards/...``,
Apache-2.0) are recognised by their header and read as the two numbers the board
shows, each with its own standard error: ``win_rate`` (``standard_error``, the
reference) and ``length_controlled_winrate`` (``lc_standard_error``); ``n_total`` is n.
``columns=`` chooses others (e.g. ``discrete_win_rate``, which has no standard error).

The normalised form (what ``leaderboard-audit import score-table`` writes) is JSON:
``{"format": "leaderboard-audit/score-table-v1", "models": [...], "configs": [...],
"reference": "...", "scores": [[...]], "se": [[...]] | null, "n": [[...]] | null}``.
"""

from __future__ import annotations

import csv
import io
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .data import ArenaInputError

TABLE_FORMAT = "leaderboard-audit/score-table-v1"
ALPACA_COLUMNS = {"win_rate": "standard_error", "length_controlled_winrate": "lc_standard_error"}
ALPACA_MARKERS = ("win_rate", "standard_error", "length_controlled_winrate", "n_total")
MODEL_COLUMNS = ("model", "name", "Model", "model_name")
NOT_SCORES = ("mode", "avg_length", "n_wins", "n_wins_base", "n_draws", "n_total")
MAX_BYTES = 256 << 20
FIX = (
    "a published table is a CSV with the model name in the first column (or 'model') and one numeric "
    "column per configuration (optional '<config>_se', '<config>_n'); choose columns with columns="
)


@dataclass(frozen=True)
class ScoreTable:
    models: tuple[str, ...]
    configs: tuple[str, ...]
    scores: np.ndarray  # M x K
    se: np.ndarray | None  # M x K, NaN where not published
    n: np.ndarray | None  # M x K
    reference: str
    source: str = ""
    notes: tuple[str, ...] = ()
    #: declared judge axes: axis -> pairs of configurations that differ only in that axis
    #: (position, verdict scale, length control...; ``arena.judges``)
    axes: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


def is_alpaca_header(header: list[str]) -> bool:
    return all(c in header for c in ALPACA_MARKERS)


def _number(cell: str, where: str, col: str) -> float:
    try:
        v = float(cell)
    except ValueError:
        raise ArenaInputError(f"{where}: column {col!r} holds {cell[:40]!r}, not a number; {FIX}") from None
    if math.isinf(v):
        raise ArenaInputError(f"{where}: column {col!r} holds {cell!r}; give a finite number or leave it empty")
    return v


def read_table(
    path: str | os.PathLike[str], columns: str | list[str] | None = None, reference: str | None = None
) -> ScoreTable:
    """Read a published score table (CSV) or its normalised JSON form."""
    from ..records.errors import RecordsError
    from ..records.safe_io import read_regular_bytes

    p = Path(path)
    if p.is_dir():
        return read_boards(p)
    try:
        raw = read_regular_bytes(p, MAX_BYTES, "the table")
    except RecordsError as exc:
        raise ArenaInputError(f"{p}: {exc.problems[0].message if exc.problems else exc}") from None
    except OSError as exc:
        raise ArenaInputError(f"{p}: cannot read it ({exc.strerror or exc})") from None
    if raw.lstrip()[:1] == b"{":
        return table_from_document(raw, str(p))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ArenaInputError(f"{p}: not UTF-8 text (byte {exc.start}); save the CSV as UTF-8") from None
    rows = list(csv.reader(io.StringIO(text)))
    if len(rows) < 2:
        raise ArenaInputError(f"{p}: line 1: a header and at least one row are needed; {FIX}")
    header = [h.strip() for h in rows[0]]
    name_col = next((header.index(c) for c in MODEL_COLUMNS if c in header), 0)
    alpaca = is_alpaca_header(header)
    if isinstance(columns, str):
        columns = [c.strip() for c in columns.split(",") if c.strip()]
    if columns:
        chosen = list(columns)
    elif alpaca:
        chosen = list(ALPACA_COLUMNS)
    else:
        chosen = [
            h
            for k, h in enumerate(header)
            if k != name_col and h and h not in NOT_SCORES and not h.endswith(("_se", "_n"))
        ]
    missing = [c for c in chosen if c not in header]
    if missing:
        raise ArenaInputError(f"{p}: line 1: no column(s) {missing}; the header has {header[:20]}")
    if not chosen:
        raise ArenaInputError(f"{p}: line 1: no score columns; {FIX}")
    # AlpacaEval's own names, wherever its columns appear (boards without length control too)
    se_of = {c: ALPACA_COLUMNS[c] if ALPACA_COLUMNS.get(c) in header else f"{c}_se" for c in chosen}
    n_of = {c: "n_total" if c in ALPACA_COLUMNS and "n_total" in header else f"{c}_n" for c in chosen}
    models: list[str] = []
    S, SE, N = [], [], []
    for ln, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        where = f"{p}: line {ln}"
        if len(row) != len(header):
            raise ArenaInputError(f"{where}: {len(row)} cells for {len(header)} columns; {FIX}")
        name = row[name_col].strip()
        if not name:
            raise ArenaInputError(f"{where}: no model name in column {header[name_col]!r}")
        if name in models:
            raise ArenaInputError(f"{where}: model {name!r} appears twice (first on line {models.index(name) + 2})")
        vals = []
        for c in chosen:
            cell = row[header.index(c)].strip()
            if not cell:
                raise ArenaInputError(f"{where}: model {name!r} has no {c!r}; fill it or leave the row out")
            v = _number(cell, where, c)
            if math.isnan(v):
                raise ArenaInputError(
                    f"{where}: model {name!r} has {c!r} = {cell!r}; give a number or leave the row out"
                )
            vals.append(v)
        models.append(name)
        S.append(vals)
        SE.append(
            [
                _number(row[header.index(se_of[c])], where, se_of[c])
                if se_of[c] in header and row[header.index(se_of[c])].strip()
                else math.nan
                for c in chosen
            ]
        )
        N.append(
            [
                _number(row[header.index(n_of[c])], where, n_of[c])
                if n_of[c] in header and row[header.index(n_of[c])].strip()
                else math.nan
                for c in chosen
            ]
        )
    if len(models) < 2:
        raise ArenaInputError(f"{p}: fewer than 2 models; a leaderboard needs at least two rows")
    ref = reference or chosen[0]
    if ref not in chosen:
        raise ArenaInputError(f"{p}: reference {ref!r} is not one of the score columns {chosen}")
    se = np.asarray(SE, dtype=float)
    n = np.asarray(N, dtype=float)
    notes = []
    if alpaca and not columns:
        notes.append(
            "AlpacaEval table: configurations win_rate (reference) and length_controlled_winrate, "
            "the two numbers the board shows (columns= for others, e.g. discrete_win_rate)"
        )
    missing_se = {c: int(np.isnan(se[:, k]).sum()) for k, c in enumerate(chosen) if np.isnan(se[:, k]).any()}
    if missing_se:
        notes.append(f"standard errors not published for some models: {missing_se}")
    return ScoreTable(
        tuple(models),
        tuple(chosen),
        np.asarray(S, dtype=float),
        None if np.isnan(se).all() else se,
        None if np.isnan(n).all() else n,
        ref,
        str(p),
        tuple(notes),
    )


def read_boards(d: Path, reference: str | None = None) -> ScoreTable:
    """A folder of AlpacaEval leaderboard CSVs, one per judge (annotator config), as one
    table: configuration ``judge=<board>`` (the file name less ``_leaderboard.csv``) with
    its raw ``win_rate`` and ``standard_error``, over the models every board ranks (a note
    counts the others). The reference: the weighted GPT-4 Turbo board when present (the
    board AlpacaEval 2 shows), else the first; axis ``judge`` pairs it with each other."""
    files = sorted(f for f in d.glob("*.csv") if f.is_file())
    boards = {}
    for f in files:
        t = read_table(f, columns=["win_rate"])
        boards[f.name.removesuffix(".csv").removesuffix("_leaderboard")] = t
    if len(boards) < 2:
        raise ArenaInputError(
            f"{d}: {len(boards)} leaderboard CSV(s); a folder of boards needs one per judge, at least 2"
        )
    names = list(boards)
    common = sorted(set.intersection(*(set(t.models) for t in boards.values())))
    if len(common) < 2:
        raise ArenaInputError(f"{d}: fewer than 2 models are on every board ({names})")
    configs = [f"judge={n}" for n in names]
    S = np.array([[boards[n].scores[boards[n].models.index(m), 0] for n in names] for m in common])

    def col(attr: str) -> np.ndarray | None:
        if all(getattr(boards[n], attr) is None for n in names):
            return None
        return np.array(
            [
                [
                    np.nan
                    if getattr(boards[n], attr) is None
                    else getattr(boards[n], attr)[boards[n].models.index(m), 0]
                    for n in names
                ]
                for m in common
            ]
        )

    left = sum(len(t.models) for t in boards.values()) - len(common) * len(boards)
    ref = reference or next((c for c in configs if c == "judge=weighted_alpaca_eval_gpt4_turbo"), configs[0])
    notes = (
        f"{len(boards)} boards, {len(common)} models on every board ({left} board rows of other models left out)",
        "each board's raw win_rate and standard_error (not every board publishes length control)",
    )
    return ScoreTable(
        tuple(common),
        tuple(configs),
        S,
        col("se"),
        col("n"),
        ref,
        str(d),
        notes,
        {"judge": [(ref, c) for c in configs if c != ref]},
    )


def table_document(t: ScoreTable) -> dict[str, Any]:
    def nested(a: np.ndarray | None) -> Any:
        return None if a is None else [[None if math.isnan(v) else float(v) for v in row] for row in a.tolist()]

    return {
        "format": TABLE_FORMAT,
        "models": list(t.models),
        "configs": list(t.configs),
        "reference": t.reference,
        "scores": t.scores.tolist(),
        "se": nested(t.se),
        "n": nested(t.n),
        "notes": list(t.notes),
        "axes": {a: [list(p) for p in ps] for a, ps in t.axes.items()},
    }


def _axes(obj: Any, configs: list[str]) -> dict[str, list[tuple[str, str]]]:
    if not isinstance(obj, dict):
        raise ValueError("'axes' must map an axis to pairs of configurations")
    out = {}
    for axis, pairs in obj.items():
        if not isinstance(pairs, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(c in configs for c in p) for p in pairs
        ):
            raise ValueError(f"axis {axis!r}: expected pairs of configurations from {configs}")
        out[str(axis)] = [(p[0], p[1]) for p in pairs]
    return out


def table_from_document(raw: bytes, where: str) -> ScoreTable:
    from ..records.safe_io import loads_strict

    try:
        obj = loads_strict(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ArenaInputError(f"{where}: not JSON ({exc})") from None
    if not isinstance(obj, dict) or obj.get("format") != TABLE_FORMAT:
        raise ArenaInputError(
            f"{where}: not a {TABLE_FORMAT} document (its 'format' is {str(obj.get('format') if isinstance(obj, dict) else None)[:40]!r})"
        )
    try:
        models, configs = [str(m) for m in obj["models"]], [str(c) for c in obj["configs"]]
        M, K = len(models), len(configs)

        def arr(key: str, optional: bool) -> np.ndarray | None:
            v = obj.get(key)
            if v is None and optional:
                return None
            a = np.array([[math.nan if x is None else float(x) for x in row] for row in v], dtype=float)
            if a.shape != (M, K):
                raise ValueError(f"'{key}' is {a.shape[0]} x {a.shape[1] if a.ndim == 2 else 0}, expected {M} x {K}")
            return a

        scores = arr("scores", False)
        assert scores is not None
        if not np.isfinite(scores).all():
            raise ValueError("'scores' must be finite numbers")
        ref = str(obj.get("reference", configs[0]))
        if ref not in configs:
            raise ValueError(f"reference {ref!r} is not one of {configs}")
        return ScoreTable(
            tuple(models),
            tuple(configs),
            scores,
            arr("se", True),
            arr("n", True),
            ref,
            where,
            tuple(str(x) for x in obj.get("notes", ())),
            _axes(obj.get("axes") or {}, configs),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ArenaInputError(f"{where}: malformed {TABLE_FORMAT} document ({exc})") from None


__all__ = ["ALPACA_COLUMNS", "TABLE_FORMAT", "ScoreTable", "is_alpaca_header", "read_table", "table_document"]

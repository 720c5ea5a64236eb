"""Arena inputs: per-pair counts (leaderbot's JSON) and per-battle files (FastChat's
``clean_battle_*.json``), read into one shape (docs/importers.md, "Arena battles").

* leaderbot (``leaderbot/data/convert.py``, BSD-3): ``{"models": [...], "X": [[i, j], ...],
  "Y": [[n_win, n_loss, n_ties, n_both_bad], ...]}``; row ``k`` counts the battles of
  ``models[X[k][0]]`` against ``models[X[k][1]]`` from the first model's side.
* FastChat (``fastchat/serve/monitor/clean_battle_data.py``): a JSON list of battles
  ``{"model_a", "model_b", "winner": "model_a" | "model_b" | "tie" | "tie (bothbad)",
  "tstamp", "anony", "dedup_tag": {"sampled": bool}, ...}``. As leaderbot's converter and
  the Arena's own leaderboard do, only anonymous battles are kept when ``anony`` is
  logged, and only de-duplication-sampled ones when ``dedup_tag`` is (a note counts both).

Every problem is one :class:`ArenaInputError` naming the file, the entry and the fix.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: outcome codes, from the first model's side
A_WINS, B_WINS, TIE, BOTH_BAD = 0, 1, 2, 3
WINNERS = {"model_a": A_WINS, "model_b": B_WINS, "tie": TIE, "tie (bothbad)": BOTH_BAD}
MAX_BYTES = 8 << 30  # a per-battle file of 2M battles is about 2 GB with every field
COUNTS_FIX = 'a leaderbot count file is {"models": [names], "X": [[i, j], ...], "Y": [[wins, losses, ties, both_bad]]}'
BATTLES_FIX = (
    'a FastChat battle file is a JSON list of {"model_a": ..., "model_b": ..., '
    '"winner": "model_a"|"model_b"|"tie"|"tie (bothbad)", "tstamp": seconds}'
)


#: the style features of the Arena's style control (FastChat ``elo_analysis.py``,
#: ``style_elements``): answer tokens, markdown headers, list items, bold spans, as
#: ``conv_metadata`` keys with ``{}`` the side (``a``/``b``)
STYLE_FEATURES = ("sum_assistant_{}_tokens", "header_count_{}", "list_count_{}", "bold_count_{}")


def _style_side(meta: dict[str, Any], side: str) -> list[float] | None:
    out = []
    for name in STYLE_FEATURES:
        v = meta.get(name.format(side))
        if isinstance(v, dict):  # header_count: {"h1": n, ...}; list_count, bold_count alike
            v = sum(x for x in v.values() if isinstance(x, (int, float)) and not isinstance(x, bool))
        if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
            return None
        out.append(float(v))
    return out


class ArenaInputError(ValueError):
    """An arena or table input that cannot be read: the message names file, entry and fix."""


@dataclass(frozen=True)
class PairCounts:
    """Battle outcomes per model pair: ``counts[p] = (i wins, j wins, ties, both-bad ties)``
    for the pair ``(i[p], j[p])``, ``i < j``, each pair once."""

    models: tuple[str, ...]
    i: np.ndarray
    j: np.ndarray
    counts: np.ndarray  # P x 4 int64
    source: str = ""
    notes: tuple[str, ...] = ()

    @property
    def n_battles(self) -> int:
        return int(self.counts.sum())

    def opponents(self) -> np.ndarray:
        """How many distinct opponents each model met (pairs with at least one battle)."""
        met = self.counts.sum(axis=1) > 0
        M = len(self.models)
        return np.bincount(self.i[met], minlength=M) + np.bincount(self.j[met], minlength=M)

    def battles_of(self) -> np.ndarray:
        """Battles each model played."""
        n = self.counts.sum(axis=1).astype(float)
        M = len(self.models)
        return (np.bincount(self.i, n, M) + np.bincount(self.j, n, M)).astype(np.int64)


@dataclass(frozen=True)
class Battles:
    """One row per battle: ``a``, ``b`` model indices, ``outcome`` (``A_WINS``...), and the
    time stamp when the file logs one (the order online Elo reads)."""

    models: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray
    tstamp: np.ndarray | None = None
    source: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: per battle, the ``STYLE_FEATURES`` of each side (n x 2 x 4: a, b) from FastChat's
    #: ``conv_metadata`` (dict-valued counts summed); ``None`` when a battle lacks them
    style: np.ndarray | None = None

    def time_order(self) -> np.ndarray:
        """Battle indices in time order (file order where there are no time stamps; stable)."""
        if self.tstamp is None:
            return np.arange(len(self.a))
        return np.argsort(self.tstamp, kind="stable")

    def pair_counts(self) -> PairCounts:
        M = len(self.models)
        lo, hi = np.minimum(self.a, self.b), np.maximum(self.a, self.b)
        flip = self.a > self.b
        out = self.outcome.copy()
        out[flip & (self.outcome == A_WINS)] = B_WINS
        out[flip & (self.outcome == B_WINS)] = A_WINS
        key = lo.astype(np.int64) * M + hi
        used, inv = np.unique(key, return_inverse=True)  # the pairs met (M^2 cells would not fit large M)
        cells = np.bincount(inv * 4 + out, minlength=len(used) * 4).reshape(len(used), 4)
        return PairCounts(
            self.models, (used // M).astype(np.intp), (used % M).astype(np.intp), cells, self.source, self.notes
        )


def _read_json(path: Path, fix: str) -> Any:
    from ..records.errors import RecordsError
    from ..records.safe_io import loads_strict, read_regular_bytes

    try:
        raw = read_regular_bytes(path, MAX_BYTES, "the arena file")
    except RecordsError as exc:
        raise ArenaInputError(f"{path}: {exc.problems[0].message if exc.problems else exc}") from None
    except OSError as exc:
        raise ArenaInputError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    try:
        return loads_strict(raw)
    except json.JSONDecodeError as exc:
        raise ArenaInputError(f"{path}: line {exc.lineno} column {exc.colno}: not JSON ({exc.msg}); {fix}") from None
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ArenaInputError(f"{path}: not JSON ({exc}); {fix}") from None


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def counts_from_obj(obj: Any, where: str) -> PairCounts:
    """A leaderbot count document (already decoded) as :class:`PairCounts`."""
    if not isinstance(obj, dict) or not {"models", "X", "Y"} <= set(obj):
        raise ArenaInputError(f"{where}: the top level needs keys 'models', 'X' and 'Y'; {COUNTS_FIX}")
    models, X, Y = obj["models"], obj["X"], obj["Y"]
    if not isinstance(models, list) or not models or not all(isinstance(m, str) and m.strip() for m in models):
        raise ArenaInputError(f"{where}: 'models' must be a non-empty list of names; {COUNTS_FIX}")
    if len(set(models)) != len(models):
        dup = next(m for m in models if models.count(m) > 1)
        raise ArenaInputError(f"{where}: 'models' names {dup!r} twice; each model once")
    if not isinstance(X, list) or not isinstance(Y, list) or len(X) != len(Y):
        raise ArenaInputError(f"{where}: 'X' and 'Y' must be lists of the same length; {COUNTS_FIX}")
    M = len(models)
    cells: dict[tuple[int, int], np.ndarray] = {}
    merged = 0
    for k, (x, y) in enumerate(zip(X, Y)):
        if not (isinstance(x, list) and len(x) == 2 and all(_count(v) and v < M for v in x) and x[0] != x[1]):
            raise ArenaInputError(
                f"{where}: X[{k}] = {str(x)[:60]} is not a pair of two different model indices in 0..{M - 1}"
            )
        if not (isinstance(y, list) and len(y) in (3, 4) and all(_count(v) for v in y)):
            raise ArenaInputError(
                f"{where}: Y[{k}] = {str(y)[:60]} is not [wins, losses, ties] or [wins, losses, ties, both_bad] "
                "(whole numbers >= 0)"
            )
        row = np.array(list(y) + [0] * (4 - len(y)), dtype=np.int64)
        if x[0] > x[1]:
            row = row[[1, 0, 2, 3]]
        key = (min(x), max(x))
        if key in cells:
            merged += 1
            cells[key] = cells[key] + row
        else:
            cells[key] = row
    if not cells:
        raise ArenaInputError(f"{where}: no pairs (X and Y are empty)")
    notes = [f"{merged} pair row(s) repeat an earlier pair and were added to it"] if merged else []
    played = sorted({m for k, row in cells.items() if row.sum() > 0 for m in k})
    if len(played) < 2:
        raise ArenaInputError(f"{where}: fewer than two models played a battle")
    if len(played) < M:  # a model without battles has no score under any rule: left out
        idle = [models[m] for m in range(M) if m not in set(played)]
        notes.append(f"{len(idle)} model(s) without battles left out: {', '.join(idle[:5])}")
    new = {m: k for k, m in enumerate(played)}
    keys = sorted((new[a], new[b]) for (a, b), row in cells.items() if row.sum() > 0)
    old = {v: k for k, v in new.items()}
    return PairCounts(
        tuple(models[m] for m in played),
        np.array([k[0] for k in keys], dtype=np.intp),
        np.array([k[1] for k in keys], dtype=np.intp),
        np.stack([cells[(old[a], old[b])] for a, b in keys]),
        where,
        tuple(notes),
    )


def read_counts(path: str | os.PathLike[str]) -> PairCounts:
    """Read a leaderbot per-pair count file (e.g. ``leaderbot/data/chatbotarena_20240814.json``)."""
    p = Path(path)
    return counts_from_obj(_read_json(p, COUNTS_FIX), str(p))


def battles_from_list(obj: Any, where: str) -> Battles:
    """A FastChat battle list (already decoded) as :class:`Battles`."""
    if not isinstance(obj, list):
        raise ArenaInputError(f"{where}: the top level is not a list of battles; {BATTLES_FIX}")
    index: dict[str, int] = {}
    a: list[int] = []
    b: list[int] = []
    out: list[int] = []
    ts: list[float] = []
    n_ts = not_anony = not_sampled = 0
    style: list[list[list[float]]] | None = []
    for k, row in enumerate(obj):
        if not isinstance(row, dict):
            raise ArenaInputError(f"{where}: battle {k} is not an object; {BATTLES_FIX}")
        ma, mb, w = row.get("model_a"), row.get("model_b"), row.get("winner")
        if not (isinstance(ma, str) and ma.strip() and isinstance(mb, str) and mb.strip()) or ma == mb:
            raise ArenaInputError(
                f"{where}: battle {k}: 'model_a' and 'model_b' must be two different model names "
                f"(found {str(ma)[:40]!r}, {str(mb)[:40]!r})"
            )
        if w not in WINNERS:
            raise ArenaInputError(f"{where}: battle {k}: 'winner' is {str(w)[:40]!r}; expected one of {list(WINNERS)}")
        if row.get("anony", True) is False:
            not_anony += 1
            continue
        tag = row.get("dedup_tag")
        if isinstance(tag, dict) and tag.get("sampled", True) is False:
            not_sampled += 1
            continue
        t = row.get("tstamp")
        if t is not None:
            if isinstance(t, bool) or not isinstance(t, (int, float)) or t != t:
                raise ArenaInputError(f"{where}: battle {k}: 'tstamp' is {str(t)[:40]!r}; expected seconds (a number)")
            n_ts += 1
        a.append(index.setdefault(ma, len(index)))
        b.append(index.setdefault(mb, len(index)))
        out.append(WINNERS[w])
        ts.append(float(t) if t is not None else np.nan)
        meta = row.get("conv_metadata")
        if style is not None:
            sa = _style_side(meta, "a") if isinstance(meta, dict) else None
            sb = _style_side(meta, "b") if isinstance(meta, dict) else None
            if sa is None or sb is None:
                style = None
            else:
                style.append([sa, sb])
    if not out:
        raise ArenaInputError(
            f"{where}: no battles left to audit ({not_anony} non-anonymous, {not_sampled} de-duplicated)"
        )
    if 0 < n_ts < len(out):
        raise ArenaInputError(
            f"{where}: {len(out) - n_ts} battle(s) have no 'tstamp' and {n_ts} have one; give every battle one, or none"
        )
    notes = []
    if not_anony:
        notes.append(f"{not_anony} non-anonymous battle(s) left out (the Arena's leaderboard counts anonymous ones)")
    if not_sampled:
        notes.append(f"{not_sampled} battle(s) left out by dedup_tag.sampled = false (as leaderbot's converter does)")
    # models in name order, as leaderbot's converter writes them
    names = sorted(index)
    remap = np.empty(len(names), dtype=np.int32)
    for new, name in enumerate(names):
        remap[index[name]] = new
    return Battles(
        tuple(names),
        remap[np.asarray(a, dtype=np.int32)],
        remap[np.asarray(b, dtype=np.int32)],
        np.asarray(out, dtype=np.int8),
        np.asarray(ts) if n_ts else None,
        where,
        tuple(notes),
        np.asarray(style, dtype=float) if style else None,
    )


def read_battles(path: str | os.PathLike[str]) -> Battles:
    """Read a FastChat ``clean_battle_*.json`` file."""
    p = Path(path)
    return battles_from_list(_read_json(p, BATTLES_FIX), str(p))


def counts_document(pc: PairCounts) -> dict[str, Any]:
    """``pc`` as a leaderbot count document (what ``import arena-counts`` writes)."""
    return {"models": list(pc.models), "X": [[int(a), int(b)] for a, b in zip(pc.i, pc.j)], "Y": pc.counts.tolist()}


def battles_document(bt: Battles) -> list[dict[str, Any]]:
    """``bt`` as a FastChat battle list with the fields the audit reads."""
    names = {v: k for k, v in WINNERS.items()}
    rows = []
    for k in range(len(bt.a)):
        row: dict[str, Any] = {
            "model_a": bt.models[int(bt.a[k])],
            "model_b": bt.models[int(bt.b[k])],
            "winner": names[int(bt.outcome[k])],
        }
        if bt.tstamp is not None:
            row["tstamp"] = float(bt.tstamp[k])
        if bt.style is not None:
            row["conv_metadata"] = {
                name.format(side): float(bt.style[k, s, f])
                for f, name in enumerate(STYLE_FEATURES)
                for s, side in enumerate("ab")
            }
        rows.append(row)
    return rows


__all__ = [
    "STYLE_FEATURES",
    "A_WINS",
    "BOTH_BAD",
    "B_WINS",
    "TIE",
    "ArenaInputError",
    "Battles",
    "PairCounts",
    "battles_document",
    "battles_from_list",
    "counts_document",
    "counts_from_obj",
    "read_battles",
    "read_counts",
]

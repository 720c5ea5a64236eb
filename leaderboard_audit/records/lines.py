"""One JSONL records file, line by line (docs/records.md, "One line").

:func:`read_model_file` parses a file into a :class:`ModelFile`; every problem goes to
the caller's :class:`ProblemLog` with its line number. Which benchmark and model the
file holds is decided by the layout (``layout.py``) from the path and from the
``benchmark``/``model`` fields collected here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Iterator
from typing import IO, Any

import numpy as np

from .errors import ProblemLog, RecordsError
from .graded import FIX_SCORE, is_score, normalised_score
from .missing import FIX_MISSING, MISSING_REASONS, reason_code
from .model import ANSWER_CLASSES, UNPARSED_ABSENT
from .names import model_from_filename
from .safe_io import JSON_ERRORS, DuplicateKeyError, loads_strict, open_regular

MAX_LINE_BYTES = 4 * 1024 * 1024
#: a records file (any JSONL the line readers read): checked with fstat before a byte is read,
#: so a 10 GB sparse file is refused at once (C14); 4 GiB is ~10^7 lines of 400 bytes
MAX_FILE_BYTES = 4 * 1024**3
CLOZE_MARGIN_KEY = "ll|cloze_plain"  # the config a per-item (scalar) margin belongs to (paper, A.1)
UNPARSED_FIELDS = ("unparsed", "n_unparsed", "unparsed_count", "num_unparsed")
SCALAR_MARGIN_FIELDS = ("margin", "cloze_margin")
_MAX_PRED = 32000
_CLASS_CODE = {c: i for i, c in enumerate(ANSWER_CLASSES)}
_NO_MAPS = frozenset(("pred", "answer_class") + SCALAR_MARGIN_FIELDS)
_UNPARSED_SET = frozenset(UNPARSED_FIELDS)


@dataclass
class ModelFile:
    """What one records file holds, in file order."""

    path: str
    model: str
    ids: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    correct: np.ndarray | None = None  # (n, K) bool
    missing: np.ndarray | None = None  # (n, K) int8 reason codes (records/missing.py); None: all observed
    score: np.ndarray | None = None  # (n, K) float64 graded outcomes (records/graded.py); None: all 0/1
    gold: list[Any] = field(default_factory=list)
    question: list[str | None] = field(default_factory=list)
    options: list[list[str] | None] = field(default_factory=list)
    pred: dict[int, dict[str, Any]] = field(default_factory=dict)  # row -> {key: int|None}
    margin: dict[int, dict[str, Any]] = field(default_factory=dict)
    unit: str = "line"  # what ``lines`` count: "line" (JSONL, CSV) or "row" (Parquet)
    unparsed: list[int] = field(default_factory=list)  # per row; UNPARSED_ABSENT
    answer_class: dict[int, dict[str, int]] = field(default_factory=dict)  # row -> {key: code}
    benchmark_field: str | None = None  # the lines' `benchmark`, and the line it is first on
    benchmark_line: int | None = None
    model_field: str | None = None
    model_line: int | None = None
    used_bits: bool = False  # read `bits` as `correct`
    used_scalar_margin: bool = False  # a per-item margin kept as margin[CLOZE_MARGIN_KEY]


def bounded_lines(fh: IO[bytes], max_bytes: int) -> Iterator[tuple[int, bytes | None]]:
    """(line number, raw bytes) of every line of ``fh``, holding at most ``max_bytes + 1`` bytes.
    A longer line is yielded as None and ends the file: it is not read to its end (a sparse
    file's one line can be terabytes: C14), and one problem names the file."""
    n = 0
    while True:
        raw = fh.readline(max_bytes + 1)
        if not raw:
            return
        n += 1
        if len(raw) > max_bytes and not raw.endswith(b"\n"):
            yield n, None
            return
        yield n, raw


def size_problem(fh: IO[bytes], max_bytes: int = MAX_FILE_BYTES) -> str | None:
    """Why the open file ``fh`` is too large to read (from ``fstat``, nothing read), or None."""
    import os

    size = os.fstat(fh.fileno()).st_size
    if size > max_bytes:
        return f"{size:,} bytes: larger than the {max_bytes:,} a records file may be (nothing read)"
    return None


def iter_lines(path: Path, max_bytes: int, log: ProblemLog):
    """Yield (line number, raw bytes) of non-blank lines; over-long lines are errors.

    Memory stays bounded by ``max_bytes`` per line: an over-long line is skipped in
    chunks, never held whole. An unreadable file is a problem in ``log``, not an OSError.
    """
    n = 0
    try:
        fh = open_regular(path, "the records file")
    except RecordsError as exc:
        for p in exc.problems:
            log.add(p.file, p.line, p.message, fix=exc.fix)
        return
    try:
        with fh:
            why = size_problem(fh)
            if why is not None:
                log.add(str(path), None, why, fix="split the records (one file per benchmark and model), or pack them")
                return
            for n, raw in bounded_lines(fh, max_bytes):
                if raw is None:
                    log.add(
                        str(path),
                        n,
                        f"line longer than {max_bytes} bytes (the file is not read further)",
                        fix="records lines hold one item each; check the file is records-v1",
                    )
                elif raw.strip():
                    yield n, raw
    except OSError as exc:
        log.add(str(path), n or None, f"cannot read the file ({exc.strerror or exc})")


def read_model_file(
    path: Path, keys: list[str] | None, log: ProblemLog, max_line_bytes: int = MAX_LINE_BYTES
) -> tuple[ModelFile, list[str]]:
    """Parse one records file; problems go to ``log``. Returns the file and the config keys."""
    parser = _FileParser(path, keys, log)
    for n, raw in iter_lines(path, max_line_bytes, log):
        if not parser.add_line(n, raw):
            break
    return parser.finish()


class _FileParser:
    """The state of one file being read: keys, seen ids, the rows kept so far."""

    def __init__(self, path: Path, keys: list[str] | None, log: ProblemLog):
        self.spath = str(path)
        self.mf = ModelFile(self.spath, model_from_filename(path.stem))
        self.keys = list(keys) if keys is not None else None
        self.keyset = set(keys) if keys is not None else None
        self.log = log
        self.rows: list[list[Any]] = []
        self.kept: list[tuple[Any, ...]] = []  # (item_id, line, gold, question, options, unparsed)
        self.seen: dict[str, int] = {}
        self.problems_before = log.total

    def bad(self, n: int | None, message: str, fix: str | None = None) -> None:
        self.log.add(self.spath, n, message, fix=fix)

    # -- one line, step by step (each step reports its own problem and returns None) --------

    def add_line(self, n: int, raw: bytes) -> bool:
        """Parse one line; False only when the file cannot be read further (no keys)."""
        obj = self._decode(n, raw)
        iid = self._item_id(n, obj) if obj is not None else None
        corr = self._correct(n, obj, iid) if iid is not None else None
        if corr is None:
            return True
        if self.keys is None and not self._adopt_keys(n, corr):
            return False
        if not self._has_legend_keys(n, iid, corr) or not self._new_id(n, iid):
            return True
        if not self._same_identity(n, obj):
            return True
        facts = self._item_facts(n, iid, obj)
        maps = self._config_maps(n, iid, obj) if facts is not None else None
        unparsed = self._unparsed(n, iid, obj) if maps is not None else None
        if unparsed is not None:
            self._keep(n, iid, corr, facts, maps, unparsed)
        return True

    def _decode(self, n: int, raw: bytes) -> dict[str, Any] | None:
        try:
            obj = loads_strict(raw)
        except DuplicateKeyError as exc:
            self.bad(n, f"{exc}", fix="each key may appear once per object")
            return None
        except JSON_ERRORS as exc:
            self.bad(
                n, f"unreadable JSON ({type(exc).__name__}: {str(exc)[:200]})", fix="each line must be one JSON object"
            )
            return None
        if not isinstance(obj, dict):
            self.bad(n, f"expected a JSON object, got {type(obj).__name__}")
            return None
        return obj

    def _item_id(self, n: int, obj: dict[str, Any]) -> str | None:
        iid = obj.get("item_id")
        if type(iid) is int:
            iid = str(iid)
        if not isinstance(iid, str) or not iid:
            self.bad(n, "missing or empty 'item_id' (a string)")
            return None
        return iid

    def _correct(self, n: int, obj: dict[str, Any], iid: str) -> dict[str, Any] | None:
        """``correct``, or the release's ``bits`` (both present: they must agree)."""
        corr, bits = obj.get("correct"), obj.get("bits")
        if corr is not None and bits is not None:
            if not isinstance(corr, dict) or not isinstance(bits, dict) or not _same_bits(corr, bits):
                self.bad(
                    n,
                    f"item {iid!r}: 'bits' and 'correct' are both present and differ" + _first_difference(corr, bits),
                    fix="keep one of 'correct' and 'bits'",
                )
                return None
        elif bits is not None:
            corr = bits
            self.mf.used_bits = True
        if not isinstance(corr, dict):
            name = "bits" if self.mf.used_bits and corr is bits else "correct"
            self.bad(n, f"item {iid!r}: {name!r} must be an object config key -> 0/1")
            return None
        return corr

    def _adopt_keys(self, n: int, corr: dict[str, Any]) -> bool:
        self.keys = list(corr)
        self.keyset = set(self.keys)
        if not self.keys:
            self.bad(n, "'correct' has no config keys")
            return False
        return True

    def _has_legend_keys(self, n: int, iid: str, corr: dict[str, Any]) -> bool:
        assert self.keyset is not None
        if corr.keys() == self.keyset:
            return True
        missing = sorted(self.keyset - corr.keys())
        extra = sorted(corr.keys() - self.keyset)
        parts = []
        if missing:
            parts.append(f"missing config key(s) {short(missing)}")
        if extra:
            parts.append(f"config key(s) not in the legend {short(extra)}")
        self.bad(n, f"item {iid!r}: " + "; ".join(parts), fix="every line must carry exactly the legend's config keys")
        return False

    def _new_id(self, n: int, iid: str) -> bool:
        if iid in self.seen:
            self.bad(n, f"duplicate item_id {iid!r} (first on line {self.seen[iid]})")
            return False
        return True

    def _same_identity(self, n: int, obj: dict[str, Any]) -> bool:
        """``model`` and ``benchmark`` fields: strings, the same on every line that has them."""
        m, b = obj.get("model"), obj.get("benchmark")
        if (m is None or m == self.mf.model_field) and (b is None or b == self.mf.benchmark_field):
            return True  # the common case: absent, or the same as on the first line
        for name in ("model", "benchmark"):
            v = obj.get(name)
            if v is None:
                continue
            if not isinstance(v, str) or not v:
                self.bad(n, f"{name!r} must be a non-empty string")
                return False
            first = getattr(self.mf, f"{name}_field")
            if first is None:
                setattr(self.mf, f"{name}_field", v)
                setattr(self.mf, f"{name}_line", n)
            elif v != first:
                self.bad(n, f"{name} {v!r} differs from {first!r} on an earlier line")
                return False
        return True

    def _item_facts(self, n: int, iid: str, obj: dict[str, Any]) -> tuple[Any, Any, Any] | None:
        gold = obj.get("gold")
        if gold is not None and not (type(gold) is int or isinstance(gold, str)):
            self.bad(n, f"item {iid!r}: 'gold' must be an option index or a letter")
            return None
        q, opts = obj.get("question"), obj.get("options")
        if q is not None and not isinstance(q, str):
            self.bad(n, f"item {iid!r}: 'question' must be a string")
            return None
        if opts is not None and not (isinstance(opts, list) and all(isinstance(o, str) for o in opts)):
            self.bad(n, f"item {iid!r}: 'options' must be a list of strings")
            return None
        return gold, q, opts

    def _config_maps(self, n: int, iid: str, obj: dict[str, Any]) -> dict[str, dict[str, Any]] | None:
        """``pred``, ``margin`` (an object, or a per-item number) and ``answer_class``."""
        maps: dict[str, dict[str, Any]] = {}
        if _NO_MAPS.isdisjoint(obj):
            return maps
        margin = self._scalar_margin(n, iid, obj)
        if margin is False:
            return None
        for name, ok, kind in (
            ("pred", _pred_ok, "option indices or null"),
            ("margin", _finite_or_null, "finite numbers or null"),
            ("answer_class", _class_ok, f"one of {list(ANSWER_CLASSES)} or null"),
        ):
            d = margin if (name == "margin" and margin is not None) else obj.get(name)
            if d is None:
                continue
            assert self.keyset is not None
            if not isinstance(d, dict) or not d.keys() <= self.keyset:
                self.bad(n, f"item {iid!r}: {name!r} must be an object keyed by legend config keys")
                return None
            if not all(ok(v) for v in d.values()):
                self.bad(n, f"item {iid!r}: {name!r} values must be {kind}")
                return None
            maps[name] = d
        return maps

    def _scalar_margin(self, n: int, iid: str, obj: dict[str, Any]) -> dict[str, Any] | None | bool:
        """The release's per-item margin as ``{CLOZE_MARGIN_KEY: value}``; None if absent, False if bad."""
        found = [(f, obj[f]) for f in SCALAR_MARGIN_FIELDS if f in obj and not isinstance(obj[f], dict)]
        found = [(f, v) for f, v in found if not (f == "margin" and v is None)]
        if not found:
            return None
        if len(found) > 1 or "margin" in obj and isinstance(obj["margin"], dict):
            self.bad(n, f"item {iid!r}: give the margin once (fields {[f for f in SCALAR_MARGIN_FIELDS if f in obj]})")
            return False
        name, v = found[0]
        assert self.keyset is not None
        if CLOZE_MARGIN_KEY not in self.keyset:
            self.bad(
                n,
                f"item {iid!r}: a per-item {name!r} belongs to config {CLOZE_MARGIN_KEY!r}, which the legend lacks",
                fix="write 'margin' as an object config key -> number",
            )
            return False
        if v is not None and not _finite(v):
            self.bad(n, f"item {iid!r}: {name!r} must be a finite number or null")
            return False
        self.mf.used_scalar_margin = True
        return {CLOZE_MARGIN_KEY: v}

    def _unparsed(self, n: int, iid: str, obj: dict[str, Any]) -> int | None:
        """The count of generation configs with no parseable answer (UNPARSED_ABSENT if absent)."""
        if _UNPARSED_SET.isdisjoint(obj):
            return UNPARSED_ABSENT
        found = [(f, obj[f]) for f in UNPARSED_FIELDS if obj.get(f) is not None]
        if not found:
            return UNPARSED_ABSENT
        assert self.keys is not None
        for name, v in found:
            if type(v) is not int or not 0 <= v <= len(self.keys):
                self.bad(n, f"item {iid!r}: {name!r} must be a count from 0 to {len(self.keys)}, got {show(v)}")
                return None
        if len({v for _, v in found}) > 1:
            self.bad(n, f"item {iid!r}: {', '.join(f for f, _ in found)} disagree")
            return None
        return found[0][1]

    def _keep(
        self,
        n: int,
        iid: str,
        corr: dict[str, Any],
        facts: tuple[Any, Any, Any],
        maps: dict[str, dict[str, Any]],
        unparsed: int,
    ) -> None:
        """One good line: its bits in ``rows``, its per-item facts in ``kept`` (columns at the end)."""
        assert self.keys is not None
        row = len(self.rows)
        self.seen[iid] = n
        self.rows.append([corr[k] for k in self.keys])
        self.kept.append((iid, n, *facts, unparsed))
        if maps:
            self._keep_maps(row, maps)

    def _keep_maps(self, row: int, maps: dict[str, dict[str, Any]]) -> None:
        if "pred" in maps:
            self.mf.pred[row] = maps["pred"]
        if "margin" in maps:
            self.mf.margin[row] = maps["margin"]
        classes = {k: _CLASS_CODE[v] for k, v in maps.get("answer_class", {}).items() if v is not None}
        if classes:
            self.mf.answer_class[row] = classes

    # -- the whole file ---------------------------------------------------------------------

    def finish(self) -> tuple[ModelFile, list[str]]:
        mf, keys = self.mf, list(self.keys or [])
        if self.kept:
            columns = [list(c) for c in zip(*self.kept)]
            mf.ids, mf.lines, mf.gold, mf.question, mf.options, mf.unparsed = columns
        if not self.rows:
            if self.log.total == self.problems_before:
                self.bad(None, "empty file: no records", fix="delete the file or collect its items")
            return mf, keys
        mf.correct = self._bit_matrix(keys)
        return mf, keys

    def _bit_matrix(self, keys: list[str]) -> np.ndarray:
        """The bits; a missing cell (``null`` or a reason, records/missing.py) is False in the
        bits and its reason code in ``self.mf.missing``; a graded outcome (a number strictly
        between 0 and 1, records/graded.py) is False in the bits, and every cell's outcome is
        in ``self.mf.score`` once one is graded."""
        rows = self.rows
        # fast path for bits only: one long string among them made numpy build a fixed-width
        # string array of rows x keys cells as wide as that string (a 1 MB value: gigabytes)
        arr = np.empty(0, dtype=object)
        if {type(v) for vals in rows for v in vals} <= {bool, int}:
            try:  # nested lists make a ragged array, which numpy refuses
                arr = np.array(rows)
            except (ValueError, TypeError, OverflowError):
                pass
        if arr.dtype.kind == "b" or (arr.dtype.kind == "i" and arr.ndim == 2 and not ((arr < 0) | (arr > 1)).any()):
            return arr.astype(bool)
        ok = True
        score = np.zeros((len(rows), len(keys)), dtype=np.float64)
        missing = np.zeros((len(rows), len(keys)), dtype=np.int8)
        for r, vals in enumerate(rows):
            bad = []
            for j, (k, v) in enumerate(zip(keys, vals)):
                if is_score(v):
                    score[r, j] = float(v)
                    continue
                code = reason_code(v)
                if code is None:
                    bad.append((k, v))
                else:
                    missing[r, j] = code
            if bad:
                ok = False
                k, v = bad[0]
                self.bad(
                    self.mf.lines[r],
                    f"item {self.mf.ids[r]!r}: correct[{k!r}] = {show(v)} "
                    f"is not 0/1 or a missing cell (null, {', '.join(repr(x) for x in MISSING_REASONS)}), "
                    "nor a graded outcome in [0, 1]" + (f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""),
                    fix=FIX_SCORE + "; " + FIX_MISSING,
                )
        if not ok:
            return np.zeros((len(rows), len(keys)), dtype=bool)
        if missing.any():
            self.mf.missing = missing
        self.mf.score = normalised_score(score)
        return score == 1


def _same_bits(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.keys() == b.keys() and all(
        is_score(a[k])
        and is_score(b[k])
        and float(a[k]) == float(b[k])
        or a[k] is b[k]
        or (type(a[k]) is str and a[k] == b[k])
        for k in a
    )


def _first_difference(a: Any, b: Any) -> str:
    if not isinstance(a, dict) or not isinstance(b, dict):
        return ""
    for k in sorted(a.keys() | b.keys()):
        if k not in a or k not in b or not _same_bits({k: a[k]}, {k: b[k]}):
            return f" (first at {k!r}: correct {show(a.get(k))}, bits {show(b.get(k))})"
    return ""


def _finite(v: Any) -> bool:
    if type(v) is float:
        return math.isfinite(v)
    if type(v) is int:
        try:
            return math.isfinite(float(v))
        except OverflowError:
            return False
    return False


def _finite_or_null(v: Any) -> bool:
    return v is None or _finite(v)


def _pred_ok(v: Any) -> bool:
    return v is None or (type(v) is int and 0 <= v < _MAX_PRED)


def _class_ok(v: Any) -> bool:
    return v is None or (isinstance(v, str) and v in _CLASS_CODE)


def show(v: Any, limit: int = 60) -> str:
    import json

    try:
        text = json.dumps(v, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):
        text = repr(v)
    return text if len(text) <= limit else text[:limit] + "..."


def short(xs: list[str], n: int = 5) -> str:
    shown = ", ".join(repr(x) for x in xs[:n])
    return shown + (f" (+{len(xs) - n} more)" if len(xs) > n else "")

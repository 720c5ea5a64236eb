"""Read and validate a records-v1 directory (RECORDS.md)."""
from __future__ import annotations

import json
import math
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .errors import ProblemLog, RecordsError
from .grid import Grid, infer_grid, parse_grid
from .model import PRED_ABSENT, PRED_UNPARSEABLE, Items, Records

MAX_LINE_BYTES = 4 * 1024 * 1024
MAX_GRID_BYTES = 16 * 1024 * 1024
# What a malformed line can make json.loads raise besides JSONDecodeError: undecodable
# bytes, deep nesting (RecursionError), integers past Python's digit limit (ValueError).
JSON_ERRORS = (ValueError, UnicodeDecodeError, RecursionError)
FIX_MATCHED = ("every model needs the same item ids in every benchmark; re-collect the "
               "missing items, or pass intersect=True (pytest: --audit-intersect) to audit "
               "only the common items")


class InferredLegendWarning(UserWarning):
    """grid.json was missing and the legend was inferred from the key convention."""


def model_from_filename(stem: str) -> str:
    return stem.replace("__", "/")


def filename_for_model(model: str) -> str:
    if not model or model in (".", "..") or "\\" in model or "\x00" in model or model.startswith("."):
        raise RecordsError.one("<records>", None, f"model name {model!r} cannot be a file name",
                               fix="rename the model")
    return model.replace("/", "__") + ".jsonl"


def confined(path: Path, root_real: Path, what: str) -> Path:
    """Resolve ``path`` and refuse it if it leaves the records directory."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError) as exc:  # symlink loop (RuntimeError before Python 3.13)
        raise RecordsError.one(str(path), None, f"{what} cannot be resolved ({exc})",
                               fix="remove the broken or looping link") from None
    if real != root_real and root_real not in real.parents:
        raise RecordsError.one(str(path), None, f"{what} resolves to {real}, outside the "
                               f"records directory {root_real}",
                               fix="copy the file into the records directory instead of linking it")
    return real


@dataclass
class ModelFile:
    """What one <benchmark>/<model>.jsonl holds, in file order."""

    path: str
    model: str
    ids: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    correct: np.ndarray | None = None      # (n, K) bool
    gold: list[Any] = field(default_factory=list)
    question: list[str | None] = field(default_factory=list)
    options: list[list[str] | None] = field(default_factory=list)
    pred: dict[int, dict[str, Any]] = field(default_factory=dict)     # row -> {key: int|None}
    margin: dict[int, dict[str, Any]] = field(default_factory=dict)
    unit: str = "line"   # what ``lines`` count: "line" (JSONL, CSV) or "row" (Parquet)


def _iter_lines(path: Path, max_bytes: int, log: ProblemLog):
    """Yield (line number, raw bytes) of non-blank lines; over-long lines are errors.

    Memory stays bounded by ``max_bytes`` per line: an over-long line is skipped in
    chunks, never held whole. An unreadable file is a problem in ``log``, not an OSError.
    """
    n = 0
    try:
        with open(path, "rb") as fh:
            while True:
                raw = fh.readline(max_bytes + 1)
                if not raw:
                    return
                n += 1
                if len(raw) > max_bytes and not raw.endswith(b"\n"):
                    log.add(str(path), n, f"line longer than {max_bytes} bytes",
                            fix="records lines hold one item each; check the file is records-v1")
                    while raw and not raw.endswith(b"\n"):  # skip the rest of the line
                        raw = fh.readline(max_bytes + 1)
                    continue
                if raw.strip():
                    yield n, raw
    except OSError as exc:
        log.add(str(path), n or None, f"cannot read the file ({exc.strerror or exc})")


def _is_bit(v: Any) -> bool:
    return type(v) is bool or (type(v) is int and v in (0, 1))


def read_model_file(path: Path, benchmark: str, keys: list[str] | None, log: ProblemLog,
                    max_line_bytes: int = MAX_LINE_BYTES) -> tuple[ModelFile, list[str]]:
    """Parse one model file; problems go to ``log``. Returns the file and the config keys."""
    spath = str(path)
    mf = ModelFile(spath, model_from_filename(path.stem))
    keyset = set(keys) if keys is not None else None
    rows: list[list[Any]] = []
    seen: dict[str, int] = {}
    model_field: str | None = None
    problems_before = log.total
    for n, raw in _iter_lines(path, max_line_bytes, log):
        try:
            obj = json.loads(raw)
        except JSON_ERRORS as exc:
            log.add(spath, n, f"unreadable JSON ({type(exc).__name__}: {str(exc)[:200]})",
                    fix="each line must be one JSON object")
            continue
        if not isinstance(obj, dict):
            log.add(spath, n, f"expected a JSON object, got {type(obj).__name__}")
            continue
        iid = obj.get("item_id")
        if type(iid) is int:
            iid = str(iid)
        if not isinstance(iid, str) or not iid:
            log.add(spath, n, "missing or empty 'item_id' (a string)")
            continue
        corr = obj.get("correct")
        if not isinstance(corr, dict):
            log.add(spath, n, f"item {iid!r}: 'correct' must be an object config key -> 0/1")
            continue
        if keyset is None:
            keys = list(corr)
            keyset = set(keys)
            if not keys:
                log.add(spath, n, "'correct' has no config keys")
                return mf, []
        if corr.keys() != keyset:
            missing = sorted(keyset - corr.keys())
            extra = sorted(corr.keys() - keyset)
            parts = []
            if missing:
                parts.append(f"missing config key(s) {_short(missing)}")
            if extra:
                parts.append(f"config key(s) not in the legend {_short(extra)}")
            log.add(spath, n, f"item {iid!r}: " + "; ".join(parts),
                    fix="every line must carry exactly the legend's config keys")
            continue
        if iid in seen:
            log.add(spath, n, f"duplicate item_id {iid!r} (first on line {seen[iid]})")
            continue
        m = obj.get("model")
        if m is not None:
            if not isinstance(m, str):
                log.add(spath, n, "'model' must be a string")
                continue
            if model_field is None:
                model_field = m
                try:
                    expected = filename_for_model(m)
                except RecordsError:
                    log.add(spath, n, f"model {m!r} cannot be a file name", fix="rename the model")
                    continue
                if expected != path.name:
                    log.add(spath, n, f"model {m!r} does not match the file name {path.name!r}",
                            fix=f"name the file {expected!r}")
            elif m != model_field:
                log.add(spath, n, f"model {m!r} differs from {model_field!r} on an earlier line")
                continue
        b = obj.get("benchmark")
        if b is not None and b != benchmark:
            log.add(spath, n, f"benchmark {b!r} does not match the directory {benchmark!r}")
            continue
        gold = obj.get("gold")
        if gold is not None and not (type(gold) is int or isinstance(gold, str)):
            log.add(spath, n, f"item {iid!r}: 'gold' must be an option index or a letter")
            continue
        q, opts = obj.get("question"), obj.get("options")
        if q is not None and not isinstance(q, str):
            log.add(spath, n, f"item {iid!r}: 'question' must be a string")
            continue
        if opts is not None and not (isinstance(opts, list) and all(isinstance(o, str) for o in opts)):
            log.add(spath, n, f"item {iid!r}: 'options' must be a list of strings")
            continue
        row = len(rows)
        for name in ("pred", "margin"):
            d = obj.get(name)
            if d is None:
                continue
            if not isinstance(d, dict) or not d.keys() <= keyset:
                log.add(spath, n, f"item {iid!r}: {name!r} must be an object keyed by legend config keys")
                break
            ok = all(v is None or (type(v) is int and 0 <= v < 32000) for v in d.values()) if name == "pred" else \
                all(v is None or _finite(v) for v in d.values())
            if not ok:
                kind = "option indices or null" if name == "pred" else "finite numbers or null"
                log.add(spath, n, f"item {iid!r}: {name!r} values must be {kind}")
                break
            (mf.pred if name == "pred" else mf.margin)[row] = d
        else:
            seen[iid] = n
            mf.ids.append(iid)
            mf.lines.append(n)
            rows.append([corr[k] for k in keys])
            mf.gold.append(gold)
            mf.question.append(q)
            mf.options.append(opts)
            continue
        mf.pred.pop(row, None)
        mf.margin.pop(row, None)
    if model_field is not None:
        mf.model = model_field
    if not rows:
        if log.total == problems_before:
            log.add(spath, None, "empty file: no records", fix="delete the file or collect its items")
        return mf, list(keys or [])
    try:  # fast path; nested values make a ragged array, which numpy refuses
        arr = np.array(rows)
    except (ValueError, TypeError):
        arr = np.empty(0, dtype=object)
    if arr.dtype.kind == "b" or (arr.dtype.kind == "i" and arr.ndim == 2
                                 and not ((arr < 0) | (arr > 1)).any()):
        mf.correct = arr.astype(bool)
        return mf, list(keys)
    ok = True
    for r, vals in enumerate(rows):
        bad = [(k, v) for k, v in zip(keys, vals) if not _is_bit(v)]
        if bad:
            ok = False
            k, v = bad[0]
            log.add(spath, mf.lines[r], f"item {mf.ids[r]!r}: correct[{k!r}] = {_show(v)} "
                    f"is not 0/1" + (f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""),
                    fix="correctness bits are 0/1 or true/false")
    mf.correct = np.array([[bool(v) for v in vals] for vals in rows], dtype=bool).reshape(
        len(rows), len(keys)) if ok else np.zeros((len(rows), len(keys)), dtype=bool)
    return mf, list(keys)


def _finite(v: Any) -> bool:
    if type(v) is float:
        return math.isfinite(v)
    if type(v) is int:
        try:
            return math.isfinite(float(v))
        except OverflowError:
            return False
    return False


def _show(v: Any, limit: int = 60) -> str:
    text = json.dumps(v, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "..."


def _short(xs: list[str], n: int = 5) -> str:
    shown = ", ".join(repr(x) for x in xs[:n])
    return shown + (f" (+{len(xs) - n} more)" if len(xs) > n else "")


def read_grid_file(path: Path) -> Grid:
    try:
        size = path.stat().st_size
        if size > MAX_GRID_BYTES:
            raise RecordsError.one(str(path), None, f"grid.json is {size} bytes (limit {MAX_GRID_BYTES})")
        text = path.read_bytes()
    except OSError as exc:  # a directory, a broken link, no permission
        raise RecordsError.one(str(path), None, f"cannot read grid.json ({exc.strerror or exc})") from None
    try:
        obj = json.loads(text)
    except JSON_ERRORS as exc:
        line = getattr(exc, "lineno", None)
        raise RecordsError.one(str(path), line, f"unreadable JSON ({type(exc).__name__}: "
                               f"{str(exc)[:200]})", fix="grid.json must be one JSON object") from None
    return parse_grid(obj, str(path))


def read_records_dir(path: str | os.PathLike[str], *, intersect: bool = False,
                     max_line_bytes: int = MAX_LINE_BYTES) -> Records:
    """Load a records-v1 directory, validating every matching rule.

    With ``intersect=True`` items missing for some model are dropped instead of
    being an error; ``Records.dropped`` says how many per benchmark.
    """
    root = Path(path)
    if not root.is_dir():
        raise RecordsError.one(str(root), None, "not a records directory",
                               fix="pass a directory holding grid.json and <benchmark>/<model>.jsonl")
    root_real = root.resolve()
    grid: Grid | None = None
    gpath = root / "grid.json"
    if gpath.exists() or gpath.is_symlink():
        confined(gpath, root_real, "grid.json")
        grid = read_grid_file(gpath)
    bench_dirs = []
    for d in sorted(root.iterdir(), key=lambda p: p.name):
        if d.name.startswith((".", "_")) or not d.is_dir():
            continue
        confined(d, root_real, "benchmark directory")
        bench_dirs.append(d)
    if not bench_dirs:
        raise RecordsError.one(str(root), None, "no benchmark directories",
                               fix="lay records out as <benchmark>/<model>.jsonl")
    log = ProblemLog()
    keys = list(grid.keys) if grid else None
    files: dict[str, dict[str, ModelFile]] = {}
    for d in bench_dirs:
        per_model: dict[str, ModelFile] = {}
        for f in sorted(d.iterdir(), key=lambda p: p.name):
            if f.suffix != ".jsonl" or f.name.startswith("."):
                continue
            confined(f, root_real, "records file")
            if not f.is_file():
                log.add(str(f), None, "not a regular file")
                continue
            mf, got = read_model_file(f, d.name, keys, log, max_line_bytes)
            if keys is None and got:
                keys = got
            if mf.model in per_model:
                log.add(str(f), None, f"model {mf.model!r} already read from {per_model[mf.model].path}")
                continue
            per_model[mf.model] = mf
        if not per_model:
            log.add(str(d), None, "benchmark directory holds no <model>.jsonl files")
        files[d.name] = per_model
    log.raise_if_any()
    notes: list[str] = []
    if grid is None:
        grid = infer_grid(keys or [], str(gpath))
        note = (f"{root}: no grid.json; legend inferred from the config keys "
                f"(reference {grid.reference!r})")
        notes.append(note)
        warnings.warn(note, InferredLegendWarning, stacklevel=2)
    return assemble(files, grid, str(root), intersect=intersect, notes=notes)


def assemble(files: dict[str, dict[str, ModelFile]], grid: Grid, source: str, *,
             intersect: bool = False, notes: list[str] | None = None) -> Records:
    """Align per-file rows into one tensor; enforce the matching rules."""
    notes = list(notes or [])
    models = sorted({m for per in files.values() for m in per})
    log = ProblemLog()
    for b, per in sorted(files.items()):
        for m in models:
            if m not in per:
                log.add(f"{source}/{b}", None, f"model {m!r} has no file for benchmark {b!r}",
                        fix=f"add {b}/{filename_for_model(m)}")
    log.raise_if_any()
    K = len(grid)
    blocks, bench_col, id_col, gold, question, options = [], [], [], [], [], []
    preds: list[np.ndarray] = []
    margins: list[np.ndarray] = []
    has_pred = any(mf.pred for per in files.values() for mf in per.values())
    has_margin = any(mf.margin for per in files.values() for mf in per.values())
    dropped: dict[str, int] = {}
    kpos = {k: j for j, k in enumerate(grid.keys)}
    for b in sorted(files):
        per = files[b]
        first = per[models[0]]
        order = first.ids
        if intersect:
            common = set(order)
            for m in models[1:]:
                common &= set(per[m].ids)
            union = set().union(*(set(per[m].ids) for m in models))
            order = [i for i in order if i in common]
            dropped[b] = len(union) - len(order)
            if not order:
                log.add(f"{source}/{b}", None, f"no item of benchmark {b!r} is common to all models")
                continue
        else:
            ref = set(order)
            for m in models[1:]:
                mf = per[m]
                other = set(mf.ids)
                for iid in [i for i in order if i not in other]:
                    log.add(mf.path, None, f"model {m!r} lacks item {iid!r} of benchmark {b!r} "
                            f"(present for model {models[0]!r})", fix=FIX_MATCHED)
                for r, iid in enumerate(mf.ids):
                    if iid not in ref:
                        log.add(mf.path, mf.lines[r], f"item {iid!r} of benchmark {b!r} is present "
                                f"for model {m!r} but absent for model {models[0]!r}", fix=FIX_MATCHED,
                                unit=mf.unit)
            if log:
                continue
        n = len(order)
        block = np.empty((len(models), n, K), dtype=bool)
        pblock = np.full((len(models), n, K), PRED_ABSENT, dtype=np.int16) if has_pred else None
        mblock = np.full((len(models), n, K), np.nan) if has_margin else None
        text_q: list[str | None] = [None] * n
        text_o: list[list[str] | None] = [None] * n
        gold_b: list[Any] = [None] * n
        for mi, m in enumerate(models):
            mf = per[m]
            pos = {iid: r for r, iid in enumerate(mf.ids)}
            rows = np.fromiter((pos[i] for i in order), dtype=np.intp, count=n)
            block[mi] = mf.correct[rows]
            inv = {r: j for j, r in enumerate(rows.tolist())} if (mf.pred or mf.margin) else {}
            for r, d in mf.pred.items():
                j = inv.get(r)
                if j is not None:
                    for k, v in d.items():
                        pblock[mi, j, kpos[k]] = PRED_UNPARSEABLE if v is None else v
            for r, d in mf.margin.items():
                j = inv.get(r)
                if j is not None:
                    for k, v in d.items():
                        if v is not None:
                            mblock[mi, j, kpos[k]] = v
            for j, r in enumerate(rows.tolist()):
                if text_q[j] is None and mf.question[r] is not None:
                    text_q[j] = mf.question[r]
                if text_o[j] is None and mf.options[r] is not None:
                    text_o[j] = mf.options[r]
                if gold_b[j] is None and mf.gold[r] is not None:
                    gold_b[j] = mf.gold[r]
        blocks.append(block)
        if pblock is not None:
            preds.append(pblock)
        if mblock is not None:
            margins.append(mblock)
        bench_col += [b] * n
        id_col += order
        gold += gold_b
        question += text_q
        options += text_o
    log.raise_if_any()
    if intersect and any(dropped.values()):
        notes.append("intersection of items audited; dropped per benchmark: "
                     + ", ".join(f"{b}={n}" for b, n in sorted(dropped.items())))
    items = Items(np.array(bench_col, dtype=object), np.array(id_col, dtype=object),
                  gold, question, options)
    return Records(
        correct=np.concatenate(blocks, axis=1),
        models=tuple(models), items=items, grid=grid,
        pred=np.concatenate(preds, axis=1) if has_pred else None,
        margin=np.concatenate(margins, axis=1) if has_margin else None,
        source=source, notes=tuple(notes), dropped=dropped if intersect else {})

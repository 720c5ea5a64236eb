"""lighteval ``--save-details`` output -> records (issue 21).

Input: a directory of runs. A *run* is a lighteval ``--output-dir`` (one per model x
configuration); lighteval writes its per-sample details as

    <output-dir>/details/<model_name>/<timestamp>/details_<task>_<timestamp>.parquet
    <output-dir>/results/<model_name>/results_<timestamp>.json

One details file is one model x task x configuration; each row is one document with
the struct columns ``doc`` (lighteval's ``Doc``: ``query``, ``choices``, ``gold_index``,
``id``, ``specific``, ...), ``model_response`` (``logprobs``, ``text``, ...) and
``metric`` (the per-sample metric values, e.g. ``acc``). The correct bit is the chosen
per-sample metric, which must be 0/1; it is never recomputed.

Parquet is read with pyarrow, imported inside the functions (this module stays
import-light). See docs/importers.md for the defaults and every rule.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..records.errors import ProblemLog, RecordsError
from ..records.model import Records
from ._build import ItemMeta, Unit, build_records, none_mapped
from ._files import file_problem, obj, read_json_file
from ._values import answer_index, sanitize_key, show, to_bit, to_number
from .lmeval import load_mapping, make_config, resolve
from .fixes import FIX_MODEL

FORMAT_INFO = {
    "name": "lighteval",
    "aliases": ("light-eval",),
    "description": "lighteval --save-details runs: details/<model>/<timestamp>/details_<task>_<timestamp>.parquet",
    "source": "the folder of runs (one --output-dir per model x configuration)",
    "patterns": ("details_*.parquet", "results_*.json"),
    "options": {
        "metric": "acc (default: the first of acc, em, exact_match present)",
        "mapping": "",
        "match_by": "auto (default), doc_id, query or specific:KEY",
        "intersect": "",
        "reference": "",
        "model": "",
        "benchmark": "",
    },
    "loader": "load_lighteval",
}

MAX_PARQUET_BYTES = 512 * 1024 * 1024
MAX_JSON_BYTES = 64 * 1024 * 1024
PROMPT_CHARS = 2000
DETAILS_RE = re.compile(r"^details_(?P<task>.+)_(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)\.parquet$")
# the per-sample 0/1 metrics lighteval's built-in tasks log, in the order a default is chosen
DEFAULT_METRICS = ("acc", "em", "exact_match", "extractive_match", "quasi_exact_match", "qem", "pqem")
# lighteval's Metrics enum names -> the metric column they write
METRIC_ALIASES = {"loglikelihood_acc": "acc", "exact_match": "em"}
MATCH_MODES = ("auto", "doc_id", "query")  # or "specific:<key>"
COLUMNS = ("doc", "metric", "model_response")
# The fields the import reads (a column path, or a struct whose leaves are all read)
FIELDS = (
    "doc.id",
    "doc.query",
    "doc.choices",
    "doc.gold_index",
    "doc.specific",
    "doc.sampling_methods",
    "metric",
    "model_response.logprobs",
    "model_response.text",
    "model_response.text_post_processed",
)
# Bounds on a details file, from its footer before any row is read (Dictionary encoding and
# run-length indices let a small file hold a huge table: C02 of the 2026-12-04 review).
MAX_DETAILS_ROWS = 1_000_000
MAX_DETAILS_VALUES = 10_000_000  # leaf values over the fields read (~20 per honest row)
MAX_DETAILS_TEXT_BYTES = 512 * 1024 * 1024  # their text decoded, counted on the dictionaries


@dataclass
class Details:
    path: Path
    run: str  # the run (output dir) relative to SRC; "" for SRC itself
    rel: str  # the details file's folder relative to SRC
    task: str  # as lighteval names it, e.g. "arc_ci|0" or "lighteval|arc:challenge|25"
    ts: str
    model: str | None
    results: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:  # what lmeval.resolve matches runs[...] against
        return self.run


@dataclass
class Row:
    doc_id: str
    query: str | None
    specific: dict[str, Any]
    bit: int
    pred: int | None
    has_pred: bool
    margin: float | None
    gold: Any
    options: list[str] | None
    consistent: bool  # the bit agrees with argmax(logprobs) in gold (likelihood tasks)


# ------------------------------------------------------------------ discovery


def benchmark_of(task: str) -> str:
    """The task name without lighteval's decorations: ``suite|name|fewshot[|truncate]`` -> ``name``.

    Trailing integer fields (few-shot count, truncate flag) are dropped, then a leading
    suite when two fields remain: ``lighteval|arc:challenge|25|0`` -> ``arc:challenge``,
    ``arc_ci|0`` -> ``arc_ci``, ``community|arc_ci|0`` -> ``arc_ci``.
    """
    parts = task.split("|")
    while len(parts) > 1 and parts[-1].strip().isdigit():
        parts.pop()
    if len(parts) >= 2:
        parts = parts[1:]
    return "|".join(parts) or task


def fewshot_of(task: str) -> int | None:
    parts = [p for p in task.split("|")[1:] if p.strip().isdigit()]
    return int(parts[0]) if parts else None


def _model_name(results: dict[str, Any], model_parts: list[str]) -> str | None:
    """``config_general.model_name`` (a local path: its base name), else the folder path under details/."""
    general = obj(results.get("config_general"))
    cands = [general.get("model_name"), obj(general.get("model_config")).get("model_name")]
    for c in cands:
        if isinstance(c, str) and c.strip():
            c = c.strip().rstrip("/")
            if c.startswith(("/", ".", "~")):
                c = os.path.basename(c)
            if c:
                return c
    if model_parts:
        return "/".join(model_parts) if len(model_parts) <= 2 else model_parts[-1]
    return None


def _links_out(f: Path, src_real: Path, log: ProblemLog) -> bool:
    """True (and a problem in ``log``) for a link leading out of the folder being imported:
    the report's hash covers only that folder (records/fingerprint.py)."""
    if not os.path.islink(f):
        return False
    try:
        real = f.resolve(strict=True)
    except (OSError, RuntimeError):
        return False  # a broken link: reading it names it
    if src_real in real.parents:
        return False
    log.add(
        str(f),
        None,
        f"is a link to {real}, outside the folder being imported {src_real}",
        fix="copy the file into the run folder instead of linking it",
    )
    return True


def discover(src: Path, log: ProblemLog, notes: list[str]) -> list[Details]:
    if not src.is_dir():
        raise RecordsError.one(
            str(src),
            None,
            "not a directory of lighteval runs",
            fix="pass the folder that holds the runs (lighteval --output-dir ... --save-details)",
        )
    found: dict[tuple[str, str, str], list[Details]] = {}
    src_real = src.resolve()
    for dirpath, dirnames, filenames in os.walk(src):
        d = Path(dirpath)
        rel_parts = d.relative_to(src).parts
        # hidden folders are skipped, as the source fingerprint skips them (records/fingerprint.py)
        dirnames[:] = sorted(x for x in dirnames if not x.startswith("."))
        # a folder named like a details file is reported (read_rows: "is a directory"), not skipped
        for f in sorted(filenames + [x for x in dirnames if DETAILS_RE.match(x)]):
            if not (f.startswith("details_") and f.endswith(".parquet")):
                continue
            if _links_out(d / f, src_real, log):
                continue
            m = DETAILS_RE.match(f)
            task, ts = (m.group("task"), m.group("ts")) if m else (f[len("details_") : -len(".parquet")], "")
            if "details" in rel_parts:
                i = len(rel_parts) - 1 - rel_parts[::-1].index("details")
                run_parts, model_parts = rel_parts[:i], list(rel_parts[i + 1 : -1])
                out_dir = src.joinpath(*run_parts)
            else:  # files copied out of lighteval's layout: the folder is the run
                run_parts, model_parts, out_dir = rel_parts, [], d
            results: dict[str, Any] = {}
            rf = out_dir.joinpath("results", *model_parts, f"results_{ts}.json")
            if ts and not rf.exists():
                rf = d / f"results_{ts}.json"
            if ts and rf.exists() and not _links_out(rf, src_real, log):
                got = read_json_file(rf, log, MAX_JSON_BYTES)
                results = got if isinstance(got, dict) else {}
            det = Details(
                d / f,
                "/".join(run_parts),
                "/".join(rel_parts),
                task,
                ts,
                _model_name(results, model_parts),
                results,
            )
            found.setdefault((det.run, "/".join(model_parts), task), []).append(det)
    out: list[Details] = []
    for (_, _, task), dets in sorted(found.items()):
        dets.sort(key=lambda x: x.ts)
        out.append(dets[-1])
        if len(dets) > 1:
            notes.append(
                f"{dets[-1].path.parent.parent}: {len(dets)} details files for task {task!r}; using the "
                f"latest, {dets[-1].path.parent.name}/{dets[-1].path.name} (ignored: "
                + ", ".join(x.path.parent.name for x in dets[:-1])
                + ")"
            )
    return out


# ------------------------------------------------------------------ details files


def read_rows(path: Path, log: ProblemLog) -> list[dict[str, Any]] | None:
    """The rows of a details file (doc, metric, model_response), or None with the problem logged."""
    spath = str(path)
    why = file_problem(path)
    if why is not None:
        log.add(spath, None, why)
        return None
    try:
        if path.stat().st_size > MAX_PARQUET_BYTES:
            log.add(spath, None, f"larger than {MAX_PARQUET_BYTES} bytes")
            return None
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(path)
        names = set(pf.schema_arrow.names)
        missing = [c for c in ("doc", "metric") if c not in names]
        if missing:
            old = "metrics" in names or "example" in names
            log.add(
                spath,
                None,
                f"not a lighteval details file: no {' / '.join(repr(c) for c in missing)} column "
                f"(columns: {show(sorted(names), 200)})",
                fix="lighteval < 0.11 details ('example'/'metrics' columns) are not supported; re-run with "
                "lighteval >= 0.11"
                if old
                else "pass the details_*.parquet files lighteval --save-details writes",
            )
            return None
        return _bounded_rows(path, pf, log)
    except Exception as exc:  # pyarrow raises many types (ArrowInvalid, OSError, ...) for a damaged file
        log.add(
            spath,
            None,
            f"unreadable parquet ({type(exc).__name__}: {show(str(exc), 200)})",
            fix="re-export the details file (lighteval --save-details)",
        )
        return None


def _wanted(leaf: str) -> bool:
    return any(leaf == f or leaf.startswith(f + ".") for f in FIELDS)


def _bounded_rows(path: Path, pf: Any, log: ProblemLog) -> list[dict[str, Any]] | None:
    """The rows (only FIELDS), or None with the bound that was passed: the row and value counts
    from the footer first, then the text's decoded size from its dictionaries, then the rows
    (records/parquet_bounds.py)."""
    from ..records.parquet_bounds import read_bounded

    leaves = {pf.schema.column(i).path for i in range(len(pf.schema))}  # the schema: never chunk metadata
    cols = [f for f in FIELDS if any(p == f or p.startswith(f + ".") for p in leaves)]
    table, why = read_bounded(
        path,
        cols,
        max_rows=MAX_DETAILS_ROWS,
        max_values=MAX_DETAILS_VALUES,
        max_text_bytes=MAX_DETAILS_TEXT_BYTES,
        wanted=_wanted,
    )
    if why is not None:
        log.add(
            str(path),
            None,
            why,
            fix="keep one details file per run and task as lighteval writes it (a details file this large is not one)",
        )
        return None
    return table.to_pylist()


def choose_metric(rows: list[dict[str, Any]], metric: str | None, where: str, log: ProblemLog) -> str | None:
    have: list[str] = []
    for r in rows:
        for k in obj(r.get("metric")):
            if k not in have:
                have.append(k)
    if metric is not None:
        if metric in have:
            return metric
        alias = METRIC_ALIASES.get(metric)
        if alias in have:
            return alias
        log.add(
            where, None, f"no per-sample metric {metric!r} (metrics: {show(have, 200)})", fix="choose one with --metric"
        )
        return None
    for m in DEFAULT_METRICS:
        if m in have:
            return m
    log.add(
        where,
        None,
        f"none of the default 0/1 metrics {list(DEFAULT_METRICS)} (metrics: {show(have, 200)})",
        fix="choose the per-sample 0/1 metric with --metric",
    )
    return None


def _gold(doc: dict[str, Any]) -> Any:
    g = doc.get("gold_index")
    if isinstance(g, list) and len(g) == 1:
        g = g[0]
    return g if isinstance(g, int) and not isinstance(g, bool) else None


def _golds(doc: dict[str, Any]) -> list[int]:
    g = doc.get("gold_index")
    g = g if isinstance(g, list) else [g]
    return [x for x in g if isinstance(x, int) and not isinstance(x, bool)]


def _margin(scores: list[float]) -> float | None:
    if len(scores) < 2 or not all(math.isfinite(s) for s in scores):
        return None
    top = max(scores)
    ex = sorted((math.exp(s - top) for s in scores), reverse=True)
    return round((ex[0] - ex[1]) / sum(ex), 6)


def parse_row(r: dict[str, Any], i: int, metric: str, where: str, log: ProblemLog) -> Row | None:
    doc = obj(r.get("doc"))
    resp = obj(r.get("model_response"))
    doc_id = doc.get("id")
    if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)):
        log.add(where, None, f"row {i}: doc.id is {show(doc_id)}, not a string or integer")
        return None
    doc_id = str(doc_id)
    raw = obj(r.get("metric")).get(metric)
    bit = to_bit(raw)
    if bit is None:
        log.add(
            where,
            None,
            f"row {i} (doc {doc_id!r}): metric {metric!r} is {show(raw)}, not 0/1",
            fix="choose a per-sample 0/1 metric with --metric",
        )
        return None
    choices = doc.get("choices")
    options = (
        [c.strip() for c in choices] if isinstance(choices, list) and all(isinstance(c, str) for c in choices) else None
    )
    methods = doc.get("sampling_methods") if isinstance(doc.get("sampling_methods"), list) else []
    logprobs = resp.get("logprobs") if isinstance(resp.get("logprobs"), list) else []
    n = len(options or [])
    scores = [to_number(x) for x in logprobs[:n]]
    pred: int | None = None
    has_pred = False
    margin = None
    consistent = True
    if n and len(scores) == n and all(s is not None for s in scores) and ("LOGPROBS" in methods or not methods):
        s = [float(x) for x in scores]  # type: ignore[arg-type]
        pred = max(range(n), key=lambda j: (s[j], -j))  # first maximum, as np.argmax
        has_pred = True
        margin = _margin(s)
        consistent = (pred in _golds(doc)) == bool(bit)
    elif "GENERATIVE" in methods:
        texts = resp.get("text_post_processed") or resp.get("text")
        text = texts[0] if isinstance(texts, list) and texts else None
        pred = answer_index(text, options)
        has_pred = True
    query = doc.get("query") if isinstance(doc.get("query"), str) else None
    return Row(doc_id, query, obj(doc.get("specific")), bit, pred, has_pred, margin, _gold(doc), options, consistent)


# ------------------------------------------------------------------ matching


def _specific_key(row: Row, name: str) -> str | None:
    v = row.specific.get(name)
    return str(v) if isinstance(v, (str, int)) and not isinstance(v, bool) else None


def _mode(group: list[tuple[Unit, list[Row]]], match_by: str) -> str:
    """auto: ``doc.specific['id']`` when every document of every file has one, else ``doc.id``."""
    if match_by != "auto":
        return match_by
    if all(_specific_key(r, "id") is not None for _, rows in group for r in rows):
        return "specific:id"
    return "doc_id"


def _key(row: Row, mode: str) -> str | None:
    if mode == "doc_id":
        return row.doc_id
    if mode == "query":
        return row.query
    return _specific_key(row, mode[len("specific:") :])


def fill(u: Unit, rows: list[Row], mode: str, log: ProblemLog) -> None:
    keys = [_key(r, mode) for r in rows]
    if any(k is None for k in keys):
        log.add(u.source, None, f"documents without {mode}", fix="match by another key (--match-by doc_id)")
        return
    dup = sorted({k for k in keys if keys.count(k) > 1})  # type: ignore[misc]
    if dup:
        log.add(
            u.source,
            None,
            f"{len(dup)} document(s) appear more than once by {mode}, e.g. {show(dup[:3])}",
            fix="keep one details file per run and task, or match by another key (--match-by)",
        )
        return
    for k, r in zip(keys, rows):
        assert k is not None
        u.bits[k] = r.bit
        if r.has_pred:
            u.pred[k] = r.pred
        if r.margin is not None:
            u.margin[k] = r.margin
        item_id = _specific_key(r, "id") or r.doc_id
        u.meta[k] = ItemMeta(item_id, r.gold, r.query, r.options)


# ------------------------------------------------------------------ entry point


def _facts(det: Details, rows: list[dict[str, Any]], metric: str) -> dict[str, Any]:
    """The legend's description of one details file: task config, model config, first prompt."""
    task_cfg = obj(obj(det.results.get("config_tasks")).get(det.task))
    general = obj(det.results.get("config_general"))
    model_cfg = obj(general.get("model_config"))
    first = obj(rows[0].get("doc")) if rows else {}
    facts: dict[str, Any] = {
        "source": "lighteval",
        "task": det.task,
        "run": det.run or ".",
        "details_file": det.path.name,
        "metric": metric,
        "num_fewshot": fewshot_of(det.task),
    }
    for k in ("hf_repo", "hf_subset", "evaluation_splits", "prompt_function", "generation_size", "version"):
        if k in task_cfg:
            facts[k] = task_cfg[k]
    if isinstance(task_cfg.get("metrics"), list):
        facts["metrics"] = [obj(m).get("sample_level_fn") or obj(m).get("metric_name") for m in task_cfg["metrics"]]
    for k in ("dtype", "system_prompt", "override_chat_template"):
        if k in model_cfg:
            facts[k] = model_cfg[k]
    gen = {k: v for k, v in obj(model_cfg.get("generation_parameters")).items() if v is not None}
    if gen:
        facts["generation_parameters"] = gen
    if isinstance(first.get("query"), str):
        facts["prompt_example"] = first["query"][:PROMPT_CHARS]
    if isinstance(first.get("sampling_methods"), list):
        facts["sampling_methods"] = first["sampling_methods"]
    if "lighteval_sha" in general:
        facts["lighteval_sha"] = general["lighteval_sha"]
    return facts


def load_lighteval(
    src: str | os.PathLike[str],
    *,
    metric: str | None = None,
    mapping: Any = None,
    match_by: str = "auto",
    intersect: bool = False,
    reference: str | None = None,
    model: str | None = None,
    benchmark: str | None = None,
) -> Records:
    """Import a directory of lighteval runs (``--save-details``) as Records (see the module docstring)."""
    if match_by not in MATCH_MODES and not match_by.startswith("specific:"):
        raise ValueError(f"match_by must be one of {MATCH_MODES} or specific:<key>, got {match_by!r}")
    root = Path(src)
    log = ProblemLog()
    notes: list[str] = []
    mp = load_mapping(mapping)
    found = discover(root, log, notes)
    log.raise_if_any()
    if not found:
        raise RecordsError.one(
            str(root),
            None,
            "no details_*.parquet under this directory",
            fix="run lighteval with --save-details --output-dir DIR and pass DIR (hidden folders are skipped: "
            "lighteval names the details folder after model_name, so give a model path without '.' folders)",
        )
    staged: list[tuple[Unit, list[Row]]] = []
    skipped: list[str] = []
    inconsistent = 0
    for det in found:
        settings = resolve(mp, det, det.task)  # type: ignore[arg-type]
        if settings is None:
            skipped.append(f"{det.run or '.'}/{det.task}")
            continue
        where = str(det.path)
        rows = read_rows(det.path, log)
        if rows is None:
            continue
        if not rows:
            log.add(where, None, "no rows", fix="re-run the task")
            continue
        m = choose_metric(rows, metric or settings.get("metric"), where, log)
        if m is None:
            continue
        parsed = [parse_row(r, i, m, where, log) for i, r in enumerate(rows)]
        if any(p is None for p in parsed):
            continue
        got = [p for p in parsed if p is not None]
        inconsistent += sum(not p.consistent for p in got)
        mdl = model or settings.get("model") or det.model
        if not mdl:
            log.add(
                where,
                None,
                "cannot tell the model (no results_*.json config_general.model_name, no details/<model>/ folder)",
                fix=FIX_MODEL,
            )
            continue
        bench = benchmark or settings.get("benchmark") or benchmark_of(det.task)
        scoring = "ll" if any(p.margin is not None for p in got) else "gen"
        default_name = sanitize_key(det.run) if det.run else sanitize_key(det.task)
        cfg = make_config(settings.get("config"), default_name, scoring, _facts(det, rows, m), where)
        staged.append((Unit(where, str(bench), str(mdl), cfg), got))
    log.raise_if_any()
    if skipped:
        notes.append(f"not in the mapping, not imported: {', '.join(skipped)}")
    if not staged:
        raise none_mapped(root, skipped)
    if inconsistent:
        notes.append(
            f"{inconsistent} document(s) where the metric disagrees with argmax(logprobs) in gold "
            "(a normalised metric or ties); the bits are the metric's, the predictions the plain argmax"
        )
    by_bench: dict[str, list[tuple[Unit, list[Row]]]] = {}
    for u, rows in staged:
        by_bench.setdefault(u.benchmark, []).append((u, rows))
    for b, group in sorted(by_bench.items()):
        mode = _mode(group, match_by)
        if match_by == "auto":
            notes.append(f"benchmark {b!r}: documents matched by {mode}")
        for u, rows in group:
            fill(u, rows, mode, log)
    log.raise_if_any()
    return build_records(
        [u for u, _ in staged],
        source=str(root),
        reference=reference or mp.get("reference"),
        intersect=intersect,
        notes=notes,
        grid_extra={"imported_from": "lighteval", "source": str(root)},
        match_what="document",
    )

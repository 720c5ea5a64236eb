"""lm-evaluation-harness ``--log_samples`` output -> records (issue 6).

Input: a directory of runs. A *run* is a directory that holds the harness's
``samples_<task>_<timestamp>.jsonl`` files (and usually its ``results_*.json``);
one run per model x configuration. ``lm_eval --output_path OUT`` nests a
``<model_name_sanitized>/`` folder under OUT: such a folder is recognised and the
run is then named by OUT (so ``runs/<config>/<model>/samples_*.jsonl`` works as is).

Per (run, task) this reads one bit per document -- the sample's own metric field
(``acc`` by default; ``acc_norm`` or ``exact_match`` when chosen) -- the gold from
``target`` and the prediction from ``filtered_resps`` (argmax of the option
log-likelihoods for multiple-choice tasks, the length-normalised argmax for
``acc_norm``; the parsed answer letter or option text for generation tasks).
Every value may be a string: values are decoded with json / ast.literal_eval only.

See docs/importers.md for the mapping file, the defaults and every rule.
"""

from __future__ import annotations

import fnmatch
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..records.errors import ProblemLog, RecordsError
from ..records.grid import PAPER_ORDERINGS, Config, config_from_key
from ..records.lines import bounded_lines, size_problem
from ..records.model import Records
from ._build import ItemMeta, Unit, build_records, none_mapped
from .fixes import FIX_METRIC_MISSING, FIX_MODEL
from ._files import JSON_ERRORS, file_problem, json_values_problem, read_json_file
from ._values import answer_index, deep_literal, letter_index, literal, sanitize_key, show, to_bit, to_number

FORMAT_INFO = {
    "name": "lm-eval",
    "aliases": ("lmeval", "lm-evaluation-harness"),
    "description": "lm-evaluation-harness runs written with --log_samples",
    "source": "the folder of runs",
    "patterns": ("samples_*.jsonl", "results_*.json", "*.yaml", "*.yml"),
    "options": {
        "metric": "acc (default), acc_norm or exact_match",
        "mapping": "",
        "match_by": "how documents are matched across runs: auto (default), doc_hash, doc_id or "
        "field:NAME (a field of the logged doc)",
        "filter": "the filter to import when a task logs several",
        "intersect": "",
        "reference": "",
        "model": "",
        "benchmark": "",
    },
    "loader": "load_lmeval",
}
MAX_LINE_BYTES = 64 * 1024 * 1024
MAX_LINE_VALUES = 4_000_000  # JSON values in one samples line (~400 MB of objects at worst)
MAX_JSON_BYTES = 64 * 1024 * 1024
MAX_YAML_BYTES = 64 * 1024
PROMPT_CHARS = 2000
SAMPLES_RE = re.compile(r"^samples_(?P<task>.+?)_(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)\.jsonl$")
MC_TYPES = ("multiple_choice", "loglikelihood")
ID_FIELDS = ("id", "question_id", "qid", "doc_id", "original_hash", "question", "query", "ctx", "goal")
QUESTION_FIELDS = ("question", "query", "ctx", "goal", "sentence", "problem")
MATCH_MODES = ("auto", "doc_hash", "doc_id")  # or "field:<doc field>"
NOT_METRIC_FIELDS = (
    "doc_id",
    "doc",
    "target",
    "arguments",
    "resps",
    "filtered_resps",
    "filter",
    "metrics",
    "doc_hash",
    "prompt_hash",
    "target_hash",
)


@dataclass
class Run:
    path: Path
    name: str  # the configuration-level name (mapping key)
    rel: str  # the samples folder relative to SRC
    results: dict[str, Any]
    model: str | None
    samples: dict[str, Path] = field(default_factory=dict)  # task -> latest samples file
    yaml_texts: dict[str, str] = field(default_factory=dict)  # file name -> text


@dataclass
class Doc:
    doc_id: str
    doc_hash: str | None
    ids: dict[str, str]  # identifying doc fields (ID_FIELDS) -> value
    bit: int
    pred_own: int | None  # in the run's own option order
    margin: float | None
    gold_own: Any
    options: list[str] | None
    question: str | None
    item_id: str | None
    has_pred: bool


# ------------------------------------------------------------------ discovery


def _read_json(path: Path, log: ProblemLog) -> Any:
    return read_json_file(path, log, MAX_JSON_BYTES)


def _model_from_results(res: dict[str, Any]) -> str | None:
    cands: list[Any] = [res.get("model_name")]
    cfg = res.get("config") if isinstance(res.get("config"), dict) else {}
    args = cfg.get("model_args")
    if isinstance(args, str):
        args = dict(kv.split("=", 1) for kv in args.split(",") if "=" in kv)
    if isinstance(args, dict):
        cands += [args.get("pretrained"), args.get("model"), args.get("path")]
    for c in cands:
        if not isinstance(c, str) or not c.strip() or (c.startswith("<") and c.endswith(">")):
            continue
        c = c.strip().rstrip("/")
        if c.startswith(("/", ".", "~")) or os.sep + os.sep in c:
            c = os.path.basename(c)  # a local folder: its name
        if c:
            return c
    return None


def _confined(f: Path, src_real: Path, log: ProblemLog) -> bool:
    """False (and a problem in ``log``) for a samples/results file that is a link leading out
    of the folder being imported: the report's hash covers only the folder (fingerprint.py)."""
    name = f.name
    if not (name.startswith(("samples_", "results_")) and os.path.islink(f)):
        return True
    try:
        real = f.resolve(strict=True)
    except (OSError, RuntimeError):
        return True  # a broken link: read_samples names it
    if src_real in real.parents:
        return True
    log.add(
        str(f),
        None,
        f"is a link to {real}, outside the folder being imported {src_real}",
        fix="copy the file into the run folder instead of linking it",
    )
    return False


def discover_runs(src: Path, log: ProblemLog, notes: list[str]) -> list[Run]:
    if not src.is_dir():
        raise RecordsError.one(
            str(src),
            None,
            "not a directory of lm-eval runs",
            fix="pass the folder that holds the runs (samples_*.jsonl)",
        )
    runs: list[Run] = []
    src_real = src.resolve()
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        filenames = [f for f in filenames if _confined(Path(dirpath) / f, src_real, log)]
        samples = sorted(f for f in filenames if f.startswith("samples_") and f.endswith(".jsonl"))
        if not samples:
            continue
        d = Path(dirpath)
        rel = d.relative_to(src).as_posix()
        rel = "" if rel == "." else rel
        results_files = sorted(f for f in filenames if f.startswith("results_") and f.endswith(".json"))
        res: dict[str, Any] = {}
        for rf in results_files:  # merge, later files win (one results file per invocation)
            got = _read_json(d / rf, log)
            if isinstance(got, dict):
                for k, v in got.items():
                    if isinstance(v, dict) and isinstance(res.get(k), dict):
                        res[k] = {**res[k], **v}
                    else:
                        res[k] = v
        model = _model_from_results(res)
        sanitized = res.get("model_name_sanitized")
        base = d.name if rel else src.name
        name = rel
        nested = rel and (base == sanitized or (not sanitized and "__" in base))
        if nested:  # <output_path>/<model_name_sanitized>/: the run is the parent
            name = Path(rel).parent.as_posix()
            name = "" if name == "." else name
        if model is None and "__" in base:
            model = base.replace("__", "/").lstrip("/")
        run = Run(d, name, rel, res, model)
        by_task: dict[str, list[tuple[str, str]]] = {}
        for f in samples:
            m = SAMPLES_RE.match(f)
            task, ts = (m.group("task"), m.group("ts")) if m else (f[len("samples_") : -len(".jsonl")], "")
            by_task.setdefault(task, []).append((ts, f))
        for task, fs in sorted(by_task.items()):
            fs.sort()
            run.samples[task] = d / fs[-1][1]
            if len(fs) > 1:
                notes.append(
                    f"{d}: {len(fs)} sample files for task {task!r}; using the latest, "
                    f"{fs[-1][1]} (ignored: {', '.join(f for _, f in fs[:-1])})"
                )
        for f in filenames:
            if f.endswith((".yaml", ".yml")) and (d / f).is_file():
                try:
                    if (d / f).stat().st_size <= MAX_YAML_BYTES:
                        run.yaml_texts[f] = (d / f).read_text(encoding="utf-8", errors="replace")
                except OSError:
                    pass
        runs.append(run)
    return runs


# ------------------------------------------------------------------ mapping


def load_mapping(mapping: Any) -> dict[str, Any]:
    if mapping is None:
        return {}
    if isinstance(mapping, (str, os.PathLike)):
        p = Path(mapping)
        why = file_problem(p)
        try:
            if why is not None:
                raise OSError(why)
            obj = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, *JSON_ERRORS) as exc:
            raise RecordsError.one(
                str(p),
                None,
                f"unreadable mapping file ({exc})",
                fix="the mapping is one JSON object (docs/importers.md)",
            ) from None
        src = str(p)
    else:
        obj, src = mapping, "<mapping>"
    if not isinstance(obj, dict):
        raise RecordsError.one(src, None, "the mapping must be a JSON object")
    for sect in ("runs", "tasks"):
        if sect in obj and not (isinstance(obj[sect], dict) and all(isinstance(v, dict) for v in obj[sect].values())):
            raise RecordsError.one(src, None, f"mapping {sect!r} must map names to objects")
    unknown = set(obj) - {"runs", "tasks", "model", "benchmark", "metric", "reference", "filter", "config", "comment"}
    if unknown:
        raise RecordsError.one(src, None, f"unknown mapping field(s) {sorted(unknown)}")
    return obj


def _lookup(section: dict[str, Any], names: list[str]) -> dict[str, Any] | None:
    for n in names:  # exact names first, then globs
        if n in section:
            return section[n]
    for pat, v in section.items():
        if any(fnmatch.fnmatchcase(n, pat) for n in names):
            return v
    return None


def resolve(mapping: dict[str, Any], run: Run, task: str) -> dict[str, Any] | None:
    """Merged settings for (run, task): top level < tasks[task] < runs[run]; None = unmapped."""
    out = {k: v for k, v in mapping.items() if k not in ("runs", "tasks", "comment")}
    sections = [s for s in ("tasks", "runs") if s in mapping]
    hit = False
    t = _lookup(mapping.get("tasks", {}), [task]) if "tasks" in mapping else None
    if t is not None:
        out.update(t)
        hit = True
    names = [n for n in (run.name, run.rel, f"{run.name}/{task}" if run.name else task) if n]
    r = _lookup(mapping.get("runs", {}), names) if "runs" in mapping else None
    if r is not None:
        out.update(r)
        hit = True
    if sections and not hit:
        return None
    return out


def make_config(spec: Any, default_name: str, scoring: str, extra: dict[str, Any], where: str) -> Config:
    if spec is None:
        spec = default_name
    if isinstance(spec, str):
        guess = config_from_key(spec)
        if guess is not None:
            return Config(guess.key, guess.scoring, guess.template, guess.ordering, guess.permutation, extra)
        return Config(spec, scoring, spec, None, None, extra)
    if not isinstance(spec, dict):
        raise RecordsError.one(where, None, f"mapping 'config' must be a key or an object, got {spec!r}")
    spec = dict(spec)
    sc = spec.pop("scoring", scoring)
    tmpl = spec.pop("template", None)
    order = spec.pop("ordering", None)
    perm = spec.pop("permutation", None)
    key = spec.pop("key", None)
    if key is None:
        if not tmpl:
            raise RecordsError.one(where, None, "mapping 'config' object needs 'key' or 'template'")
        if sc == "gen":
            if not order:
                raise RecordsError.one(
                    where,
                    None,
                    "a 'gen' config needs an 'ordering' for the "
                    "key convention gen|<template>|<ordering>; or give 'key'",
                )
            key = f"gen|{tmpl}|{order}"
        else:
            key = f"{sc}|{tmpl}"
    if perm is None and order in PAPER_ORDERINGS:
        perm = PAPER_ORDERINGS[order]
    if perm is not None:
        if not (isinstance(perm, (list, tuple)) and sorted(perm) == list(range(len(perm)))):
            raise RecordsError.one(where, None, f"'permutation' must be a permutation of 0..n-1, got {perm!r}")
        perm = tuple(perm)
    return Config(str(key), str(sc), tmpl, order, perm, {**extra, **spec})


# ------------------------------------------------------------------ samples


def _choices(arguments: Any) -> list[str] | None:
    args = deep_literal(arguments)
    items: list[Any]
    if isinstance(args, dict):

        def num(k: str) -> int:
            m = re.search(r"(\d+)$", k)
            return int(m.group(1)) if m else 0

        items = [args[k] for k in sorted(args, key=num)]
    elif isinstance(args, list):
        items = args
    else:
        return None
    out = []
    for a in items:
        if isinstance(a, dict) and isinstance(a.get("arg_1"), str):
            out.append(a["arg_1"])
        elif isinstance(a, (list, tuple)) and len(a) >= 2 and isinstance(a[1], str):
            out.append(a[1])
        else:
            return None
    return out


def _first_prompt(arguments: Any) -> str | None:
    args = deep_literal(arguments)
    first = None
    if isinstance(args, dict) and args:
        first = args.get("gen_args_0", next(iter(args.values())))
    elif isinstance(args, list) and args:
        first = args[0]
    if isinstance(first, dict):
        first = first.get("arg_0")
    elif isinstance(first, (list, tuple)) and first:
        first = first[0]
    return first[:PROMPT_CHARS] if isinstance(first, str) else None


def _doc_options(doc: Any) -> list[str] | None:
    if not isinstance(doc, dict):
        return None
    for k in ("choices", "options", "endings"):
        v = doc.get(k)
        if isinstance(v, dict):
            v = v.get("text")
        if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
            return list(v)
    return None


def _loglikelihoods(resps: Any) -> list[float] | None:
    r = deep_literal(resps)
    if not isinstance(r, list) or not r:
        return None
    out = []
    for x in r:
        while isinstance(x, list) and x and isinstance(x[0], list):  # resps nest one level deeper
            x = x[0]
        if isinstance(x, list) and x:
            x = x[0]
        f = to_number(x)
        if f is None and not (isinstance(x, str) and x.strip() in ("-inf", "-Infinity")):
            return None
        out.append(-math.inf if f is None else f)
    return out


def _argmax(xs: list[float]) -> int:
    best = 0
    for i, x in enumerate(xs):
        if x > xs[best]:
            best = i
    return best


def _margin(scores: list[float]) -> float | None:
    """Difference between the two largest softmax probabilities of the option scores."""
    if len(scores) < 2 or not all(math.isfinite(s) for s in scores):
        return None
    top = max(scores)
    ex = sorted((math.exp(s - top) for s in scores), reverse=True)
    tot = sum(ex)
    return round((ex[0] - ex[1]) / tot, 6)


def _sample_lines(path: Path, log: ProblemLog):
    """(line number, decoded object) of each non-blank line; problems go to ``log``."""
    spath = str(path)
    why = file_problem(path)
    if why is not None:
        log.add(spath, None, why)
        return
    try:
        with open(path, "rb") as fh:
            why = size_problem(fh)
            if why is not None:
                log.add(spath, None, why)
                return
            for n, raw in bounded_lines(fh, MAX_LINE_BYTES):
                if raw is None:
                    log.add(spath, n, f"line longer than {MAX_LINE_BYTES} bytes (the file is not read further)")
                    continue
                if not raw.strip():
                    continue
                why = json_values_problem(raw, MAX_LINE_VALUES)
                if why is not None:
                    log.add(spath, n, why)
                    continue
                try:
                    yield n, json.loads(raw)
                except JSON_ERRORS as exc:
                    what = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:200]
                    log.add(spath, n, f"unreadable JSON ({what})", fix="a samples file holds one JSON object per line")
    except OSError as exc:
        log.add(spath, None, f"cannot be read ({exc.strerror or exc})")


def _sample_rows(
    path: Path, filt: str | None, log: ProblemLog
) -> tuple[dict[str, tuple[int, dict[str, Any]]], set[str], int]:
    """Samples by (doc_id, filter), the last line of each winning; the filters seen; duplicates."""
    rows: dict[str, tuple[int, dict[str, Any]]] = {}
    filters: set[str] = set()
    dups = 0
    for n, s in _sample_lines(path, log):
        if not isinstance(s, dict) or "doc_id" not in s:
            log.add(str(path), n, "not an lm-eval sample (no 'doc_id')")
            continue
        if not isinstance(s["doc_id"], int | str) or isinstance(s["doc_id"], bool):
            log.add(str(path), n, f"'doc_id' must be an integer or a string, got {show(s['doc_id'], 40)}")
            continue
        f = s.get("filter")
        f = f if isinstance(f, str) else "none"
        filters.add(f)
        if filt is not None and f != filt:
            continue
        key = f"{s['doc_id']}\x00{f}"
        if key in rows:
            dups += 1
        rows[key] = (n, s)
    return rows, filters, dups


def _choose_metric(first: dict[str, Any], metric: str | None, spath: str, log: ProblemLog) -> str | None:
    if metric is not None:
        return metric
    have = [m for m in ("acc", "exact_match") if m in first]
    if not have:
        log.add(
            spath,
            None,
            "no 'acc' or 'exact_match' field; choose the metric",
            fix="pass metric=NAME (--metric) naming a 0/1 per-sample field",
        )
        return None
    return have[0]


def _sample_bit(s: dict[str, Any], n: int, metric: str, spath: str, log: ProblemLog) -> int | None:
    if metric not in s:
        avail = s.get("metrics") if isinstance(s.get("metrics"), list) else [k for k in s if k not in NOT_METRIC_FIELDS]
        log.add(
            spath,
            n,
            f"doc {s['doc_id']}: no {metric!r} field (has {show(avail, 200)})",
            fix=FIX_METRIC_MISSING,
        )
        return None
    bit = to_bit(s[metric])
    if bit is None:
        log.add(
            spath,
            n,
            f"doc {s['doc_id']}: {metric} = {show(s[metric])} is not 0/1",
            fix="import a per-sample 0/1 metric (acc, acc_norm, exact_match)",
        )
    return bit


def _mc_prediction(
    metric: str, options: list[str] | None, choices: list[str] | None, lls: list[float] | None, target: Any
) -> tuple[Any, int | None, float | None, bool, list | None]:
    """Multiple choice: gold from the target; pred and margin from the option log-likelihoods."""
    if options is None and choices:
        options = [c.strip() for c in choices]
    n_opt = len(lls) if lls else None
    gold = (
        int(target)
        if type(target) is int or (isinstance(target, float) and target.is_integer())
        else letter_index(target, n_opt)
    )
    if lls is None:
        return gold, None, None, False, options
    scores = lls
    if metric == "acc_norm" and choices and len(choices) == len(lls):
        scores = [x / max(len(c), 1) for x, c in zip(lls, choices)]
    return gold, _argmax(scores), _margin(scores), True, options


def _gen_prediction(s: dict[str, Any], options: list[str] | None, target: Any) -> tuple[Any, int | None, bool]:
    """Generation: gold from the target letter or text; pred = the parsed answer."""
    n_opt = len(options) if options else None
    gold = letter_index(target, n_opt) if isinstance(target, str) else None
    if gold is None and options and isinstance(target, str):
        gold = answer_index(target, options)
    if gold is None and not options:
        return gold, None, False
    return gold, answer_index(deep_literal(s.get("filtered_resps")), options), True


def _doc(
    s: dict[str, Any], n: int, metric: str, mc_hint: bool | None, spath: str, log: ProblemLog
) -> tuple[Doc | None, bool]:
    """One sample -> a Doc (None on a problem), and whether the bit disagrees with the argmax."""
    bit = _sample_bit(s, n, metric, spath, log)
    if bit is None:
        return None, False
    doc = literal(s.get("doc"))
    doc = doc if isinstance(doc, dict) else {}
    options = _doc_options(doc)
    choices = _choices(s.get("arguments"))
    lls = _loglikelihoods(s.get("filtered_resps"))
    is_mc = (
        mc_hint if mc_hint is not None else (lls is not None and choices is not None and len(lls) == len(choices) > 1)
    )
    target = literal(s.get("target"))
    disagree = False
    if is_mc:
        gold, pred, margin, has_pred, options = _mc_prediction(metric, options, choices, lls, target)
        if has_pred and metric in ("acc", "acc_norm") and gold is not None and int(pred == gold) != bit:
            disagree = True
    else:
        gold, pred, has_pred = _gen_prediction(s, options, target)
        margin = None
    ident = {
        k: str(doc[k]) for k in ID_FIELDS if isinstance(doc.get(k), str | int) and not isinstance(doc.get(k), bool)
    }
    iid = doc.get("id")
    item_id = str(iid) if isinstance(iid, str | int) and not isinstance(iid, bool) else str(s["doc_id"])
    q = next((doc[k] for k in QUESTION_FIELDS if isinstance(doc.get(k), str)), None)
    dh = s.get("doc_hash")
    return Doc(
        str(s["doc_id"]),
        dh if isinstance(dh, str) and dh else None,
        ident,
        bit,
        pred,
        margin,
        gold,
        options,
        q,
        item_id,
        has_pred,
    ), disagree


def read_samples(
    path: Path, task: str, metric: str | None, filt: str | None, mc_hint: bool | None, log: ProblemLog, notes: list[str]
) -> tuple[list[Doc], str, dict[str, Any]]:
    """One samples file -> docs (last line wins per doc_id), the metric used, facts."""
    spath = str(path)
    rows, filters, dups = _sample_rows(path, filt, log)
    if len(filters) > 1 and filt is None:
        log.add(
            spath,
            None,
            f"task {task!r} logs several filters {sorted(filters)}: choose one",
            fix="set 'filter' in the mapping (or filter=...)",
        )
        return [], metric or "", {}
    if filt is not None and filt not in filters:
        log.add(spath, None, f"filter {filt!r} not in this file (has {sorted(filters)})")
        return [], metric or "", {}
    if dups:
        notes.append(
            f"{spath}: {dups} document(s) logged more than once (the harness appends "
            f"to sample files); kept the last line of each"
        )
    if not rows:
        log.add(spath, None, "no samples")
        return [], metric or "", {}
    first = next(iter(rows.values()))[1]
    metric = _choose_metric(first, metric, spath, log)
    if metric is None:
        return [], "", {}
    facts = {"prompt_example": _first_prompt(first.get("arguments")), "filter": next(iter(filters))}
    docs: list[Doc] = []
    disagree = 0
    for n, s in rows.values():
        d, differs = _doc(s, n, metric, mc_hint, spath, log)
        if d is not None:
            docs.append(d)
            disagree += differs
    if disagree:
        notes.append(
            f"{spath}: {metric} disagrees with the argmax of the logged log-likelihoods "
            f"on {disagree} document(s) (ties or a different normalisation); the bits "
            f"are the harness's own {metric}"
        )
    return docs, metric, facts


# ------------------------------------------------------------------ loader


def _task_facts(run: Run, task: str) -> dict[str, Any]:
    res = run.results
    cfg = (res.get("configs") or {}).get(task) if isinstance(res.get("configs"), dict) else None
    out: dict[str, Any] = {}
    if isinstance(cfg, dict):
        for k in (
            "output_type",
            "doc_to_text",
            "doc_to_choice",
            "doc_to_target",
            "description",
            "target_delimiter",
            "fewshot_delimiter",
            "num_fewshot",
            "generation_kwargs",
            "filter_list",
            "dataset_path",
            "dataset_name",
            "test_split",
        ):
            if cfg.get(k) not in (None, "", [], {}):
                out[k] = cfg[k]
    for k in ("chat_template_sha", "system_instruction", "fewshot_as_multiturn", "lm_eval_version"):
        if res.get(k) not in (None, ""):
            out[k] = res[k]
    out["apply_chat_template"] = bool(res.get("chat_template"))
    for fname, text in sorted(run.yaml_texts.items()):
        if re.search(rf"^task:\s*['\"]?{re.escape(task)}['\"]?\s*$", text, re.MULTILINE):
            out["task_yaml_file"] = fname
            out["task_yaml"] = text
            break
    return out


@dataclass
class TaskRead:
    """One (run, task) samples file as read: its mapping settings, documents, metric, facts."""

    run: Run
    task: str
    settings: dict[str, Any]
    docs: list[Doc]
    metric: str
    facts: dict[str, Any]


def read_tasks(
    runs: list[Run], mp: dict[str, Any], metric: str | None, filt: str | None, log: ProblemLog, notes: list[str]
) -> tuple[list[TaskRead], list[str]]:
    """Every mapped (run, task) samples file, read; the unmapped ones ("run:task") are also named in a note."""
    skipped: list[str] = []
    out: list[TaskRead] = []
    for run in runs:
        for task, path in run.samples.items():
            st = resolve(mp, run, task)
            if st is None:
                skipped.append(f"{run.rel or '.'}:{task}")
                continue
            facts = _task_facts(run, task)
            ot = facts.get("output_type")
            mc_hint = None if ot is None else ot in MC_TYPES
            docs, used, sfacts = read_samples(
                path, task, metric or st.get("metric"), filt or st.get("filter"), mc_hint, log, notes
            )
            facts.update({k: v for k, v in sfacts.items() if v is not None})
            out.append(TaskRead(run, task, st, docs, used, facts))
    if skipped:
        notes.append(f"not in the mapping, so not imported: {', '.join(skipped)}")
    return out, skipped


def stage_unit(t: TaskRead, model: str | None, benchmark: str | None, log: ProblemLog) -> Unit | None:
    """The (benchmark, model, config) unit a task becomes, still without its bits."""
    where = str(t.run.samples[t.task])
    mdl = model or t.settings.get("model") or t.run.model
    if not mdl:
        log.add(
            where,
            None,
            "cannot tell the model (no results_*.json model name, run folder not named <org>__<model>)",
            fix=FIX_MODEL,
        )
        return None
    bench = benchmark or t.settings.get("benchmark") or t.task
    mc = (
        t.facts.get("output_type") in MC_TYPES
        if "output_type" in t.facts
        else any(d.has_pred and d.margin is not None for d in t.docs)
    )
    default_name = sanitize_key(t.run.name) if t.run.name else sanitize_key(t.task)
    extra = {"source": "lm-eval", "task": t.task, "run": t.run.name or t.run.rel or ".", "metric": t.metric, **t.facts}
    cfg = make_config(t.settings.get("config"), default_name, "ll" if mc else "gen", extra, where)
    return Unit(where, str(bench), str(mdl), cfg)


def _canonical_options(group: list[tuple[Unit, list[Doc]]], mode: str, refkey: str) -> dict[str, list[str]]:
    """Per match key, the options in the order of the reference run (else the first run that shows them)."""
    canon: dict[str, list[str]] = {}
    for _, docs in sorted(group, key=lambda g: g[0].config.key != refkey):
        for d in docs:
            k = _key(d, mode)
            if d.options and k not in canon:
                canon[k] = d.options
    return canon


def fill_unit(u: Unit, docs: list[Doc], mode: str, canon: dict[str, list[str]], log: ProblemLog) -> int:
    """Bits, predictions, margins and item facts by match key; gold/pred in the canonical option order.

    Returns how many documents showed their options in another order (and were remapped).
    """
    ks = [_key(d, mode) for d in docs]
    if len(set(ks)) != len(ks):
        log.add(
            u.source,
            None,
            f"documents are not unique by {mode} in this run",
            fix="match by another key (--match-by doc_hash|doc_id|field:NAME)",
        )
        return 0
    remapped = 0
    for k, d in zip(ks, docs):
        u.bits[k] = d.bit
        pred, gold = d.pred_own, d.gold_own
        c = canon.get(k)
        if d.options and c and d.options != c and sorted(d.options) == sorted(c) and len(set(c)) == len(c):
            to_c = [c.index(o) for o in d.options]
            pred = None if pred is None else to_c[pred] if pred < len(to_c) else None
            gold = to_c[gold] if isinstance(gold, int) and gold < len(to_c) else gold
            remapped += 1
        if d.has_pred:
            u.pred[k] = pred
        if d.margin is not None:
            u.margin[k] = d.margin
        u.meta[k] = ItemMeta(d.item_id, gold, d.question, c or d.options)
    return remapped


def match_benchmark(
    b: str, group: list[tuple[Unit, list[Doc]]], match_by: str, refkey: str, log: ProblemLog, notes: list[str]
) -> None:
    """Choose the match key for one benchmark's runs and fill their units by it."""
    mode = _auto_mode(b, group, notes) if match_by == "auto" else match_by
    if mode == "doc_hash" or mode.startswith("field:"):
        what = "doc_hash" if mode == "doc_hash" else f"doc[{mode[6:]!r}]"
        missing = [u.source for u, docs in group if any(not _key(d, mode) for d in docs)]
        if missing:
            log.add(
                missing[0],
                None,
                f"samples without {what}: cannot match by it",
                fix="match_by='doc_id' (--match-by doc_id)",
            )
            return
    canon = _canonical_options(group, mode, refkey)
    remapped = sum(fill_unit(u, docs, mode, canon, log) for u, docs in group)
    if remapped:
        notes.append(
            f"benchmark {b!r}: {remapped} document(s) show their options in another "
            f"order than the reference run; gold and predictions are given in the "
            f"reference order (matched by option text)"
        )


def load_lmeval(
    src: str | os.PathLike[str],
    *,
    metric: str | None = None,
    mapping: Any = None,
    match_by: str = "auto",
    intersect: bool = False,
    reference: str | None = None,
    model: str | None = None,
    benchmark: str | None = None,
    filter: str | None = None,
) -> Records:
    """Import a directory of lm-eval runs as Records (see the module docstring)."""
    if match_by not in MATCH_MODES and not match_by.startswith("field:"):
        raise ValueError(f"match_by must be one of {MATCH_MODES}, got {match_by!r}")
    root = Path(src)
    log = ProblemLog()
    notes: list[str] = []
    mp = load_mapping(mapping)
    runs = discover_runs(root, log, notes)
    log.raise_if_any()
    if not runs:
        raise RecordsError.one(
            str(root),
            None,
            "no samples_*.jsonl under this directory",
            fix="run lm_eval with --log_samples --output_path DIR and pass DIR",
        )
    tasks, skipped = read_tasks(runs, mp, metric, filter, log, notes)
    log.raise_if_any()
    if not tasks:
        raise none_mapped(root, skipped)
    staged = [(u, t.docs) for t in tasks if (u := stage_unit(t, model, benchmark, log)) is not None]
    log.raise_if_any()
    # the reference picks the option order that gold/pred are expressed in
    keys = list(dict.fromkeys(u.config.key for u, _ in staged))
    ref = reference or mp.get("reference")
    refkey = ref if ref in keys else next((k for k in keys if k == "gen|letter_plain|p0"), keys[0])
    by_bench: dict[str, list[tuple[Unit, list[Doc]]]] = {}
    for u, docs in staged:
        by_bench.setdefault(u.benchmark, []).append((u, docs))
    for b, group in sorted(by_bench.items()):
        match_benchmark(b, group, match_by, refkey, log, notes)
    log.raise_if_any()
    return build_records(
        [u for u, _ in staged],
        source=str(root),
        reference=ref,
        intersect=intersect,
        notes=notes,
        grid_extra={"imported_from": "lm-eval", "source": str(root)},
        match_what="document",
    )


def _identity_field(group: list[tuple[Unit, list[Doc]]]) -> str | None:
    """The first of ID_FIELDS that every document of every run carries, unique per run."""
    for name in ID_FIELDS:
        ok = True
        for _, docs in group:
            vals = [d.ids.get(name) for d in docs]
            if any(v is None for v in vals) or len(set(vals)) != len(vals):
                ok = False
                break
        if ok:
            return name
    return None


def _auto_mode(bench: str, group: list[tuple[Unit, list[Doc]]], notes: list[str]) -> str:
    """doc_hash when every run logs hashes and they agree; doc_id when no run logs hashes and
    the doc_id sets agree; else the documents' own id field (doc['id'], ...) when every
    document has one; else doc_id (no hashes) or doc_hash."""
    all_hashed = all(d.doc_hash for _, docs in group for d in docs)
    if all_hashed:
        sets = [frozenset(d.doc_hash for d in docs) for _, docs in group]
        if all(s == sets[0] for s in sets):
            return "doc_hash"
    any_hashed = any(d.doc_hash for _, docs in group for d in docs)
    id_sets = [frozenset(d.doc_id for d in docs) for _, docs in group]
    if not any_hashed and all(x == id_sets[0] for x in id_sets):
        return "doc_id"
    name = _identity_field(group)
    if name is not None:
        if all_hashed:
            notes.append(
                f"benchmark {bench!r}: the runs' doc_hash values differ (documents "
                f"differ in content, e.g. permuted options, or are different documents); "
                f"matched by doc[{name!r}]"
            )
        return f"field:{name}"
    return "doc_hash" if all_hashed else "doc_id"


def _key(d: Doc, mode: str) -> str:
    if mode == "doc_hash":
        return d.doc_hash or ""
    if mode == "doc_id":
        return d.doc_id
    return d.ids.get(mode[len("field:") :], "")

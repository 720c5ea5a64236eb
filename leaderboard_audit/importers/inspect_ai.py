"""Inspect AI eval logs (``.eval`` zip or ``.json``) -> records (issue 21).

One log file = one model x configuration: its samples become items (by sample id), the
sample's score for the chosen scorer (``choice`` by default) becomes the correctness bit
(``"C"`` -> 1, ``"I"`` -> 0; 0/1 numbers and booleans too), the log's ``eval.model`` the
model, ``eval.task`` the benchmark. The configuration is named by the mapping file, else
by the task arguments that differ between the logs of a task (one log per prompt
variant, ``-T template=...``), else ``default``.

The logs are read with the standard library (``json``, ``zipfile``): the package does
not need inspect-ai. Inspect writes ``.eval`` members with Zstandard compression; on
Python < 3.14 those are decompressed with the ``zstandard`` module (a dependency of
inspect-ai; the ``inspect`` extra), else the error says to install it or to convert the
logs with ``inspect log convert --to json``. Sizes are bounded (zip members, files).

See docs/importers.md ("Inspect AI") for the layout, the defaults and every error.
"""

from __future__ import annotations

import io
import json
import os
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..records.model import Records

FORMAT_INFO = {
    "name": "inspect",
    "aliases": ("inspect-ai", "inspect_ai"),
    "description": "Inspect AI eval logs (.eval or .json): one log per model x configuration; "
    "the bit is the sample's score for the chosen scorer (choice: C/I)",
    "source": "a folder of Inspect logs, or one .eval/.json log",
    "patterns": ("*.eval", "*.json"),
    "options": {
        "metric": "the scorer (default: choice, or the only one)",
        "mapping": "",
        "intersect": "",
        "reference": "",
        "model": "",
        "benchmark": "",
        "epoch": "the epoch to import when a log ran several (1-based)",
    },
    "loader": "load_inspect",
}

MAX_JSON_BYTES = 512 * 1024 * 1024  # a .json log
MAX_MEMBER_BYTES = 64 * 1024 * 1024  # one member of a .eval zip, uncompressed
MAX_LOG_BYTES = 512 * 1024 * 1024  # the members of one .eval that are read, uncompressed, together
MAX_MEMBER_RATIO = 100  # uncompressed / compressed, for a member over RATIO_FROM bytes
RATIO_FROM = 1024 * 1024  # (Inspect's own members compress ~5x; a bomb compresses ~1000x)
MAX_MEMBER_VALUES = 4_000_000  # JSON values in one member (~400 MB of objects at worst)
MAX_MEMBERS = 200_000
SAMPLE_FIELDS = ("id", "epoch", "scores", "error", "choices", "target", "input")  # all the import uses
ZIP_ZSTD = 93
SKIP_JSON = ("audit_mapping.json", "logs.json", "eval-set.json", "listing.json")
LOCAL_PROVIDERS = ("hf", "vllm", "sglang")  # "hf/<hub id>": the hub id is the model
BIT_VALUES = {"C": 1, "I": 0}


@dataclass
class LogRead:
    """One log file, decoded: its header (eval, plan, results, status...) and samples."""

    path: Path
    rel: str  # relative to SRC ("" for SRC itself)
    header: dict[str, Any]
    samples: list[dict[str, Any]] = field(default_factory=list)

    @property
    def eval(self) -> dict[str, Any]:
        e = self.header.get("eval")
        return e if isinstance(e, dict) else {}


# ------------------------------------------------------------------ reading


def find_logs(root: Path) -> list[Path]:
    """``root`` itself when it is a log file, else every ``*.eval``/``*.json`` under it."""
    if root.is_file():
        return [root]
    from ..records.errors import RecordsError

    if not root.is_dir():
        raise RecordsError.one(str(root), None, "no such log file or folder", fix="pass an Inspect log dir or log file")
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for f in sorted(filenames):
            if f.startswith(".") or f in SKIP_JSON or not f.endswith((".eval", ".json")):
                continue
            out.append(Path(dirpath) / f)
    return out


def _decode(data: bytes, where: str, log: Any) -> Any:
    from ._files import JSON_ERRORS

    try:
        return json.loads(data)
    except JSON_ERRORS as exc:
        what = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:200]
        log.add(where, None, f"unreadable JSON ({what})")
        return None


def _zstd_member(path: Path, info: Any) -> bytes:
    """The uncompressed bytes of a Zstandard member (method 93), read from the raw zip entry."""
    try:
        import zstandard
    except ImportError:
        raise LookupError(
            "is compressed with Zstandard, which this Python cannot read without the 'zstandard' module"
        ) from None
    with open(path, "rb") as fh:
        fh.seek(info.header_offset)
        hdr = fh.read(30)
        if len(hdr) != 30 or hdr[:4] != b"PK\x03\x04":
            raise ValueError("bad local header")
        n, m = struct.unpack("<HH", hdr[26:30])
        fh.seek(n + m, os.SEEK_CUR)
        raw = fh.read(info.compress_size)
    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw), read_across_frames=True)
    return reader.read(info.file_size + 1)


def _member(zf: Any, path: Path, info: Any, log: Any) -> Any:
    """A zip member's decoded JSON (bounded, CRC-checked), or None with the problem in ``log``."""
    import zipfile

    where = f"{path}!{info.filename}"
    if info.file_size > MAX_MEMBER_BYTES:
        log.add(where, None, f"larger than {MAX_MEMBER_BYTES} bytes uncompressed")
        return None
    if info.file_size > RATIO_FROM and info.file_size > MAX_MEMBER_RATIO * max(info.compress_size, 1):
        log.add(
            where,
            None,
            f"compressed {info.file_size // max(info.compress_size, 1):,}:1 ({info.compress_size:,} bytes -> "
            f"{info.file_size:,}; the limit is {MAX_MEMBER_RATIO}:1): a decompression bomb, not read",
            fix="import the logs Inspect wrote; re-export this one with inspect log convert",
        )
        return None
    try:
        try:
            with zf.open(info) as fh:
                data = fh.read(info.file_size + 1)
        except NotImplementedError:
            if info.compress_type != ZIP_ZSTD:
                raise
            data = _zstd_member(path, info)
    except LookupError as exc:
        log.add(
            where,
            None,
            str(exc),
            fix='pip install zstandard (or ".[inspect]"), or convert the logs: inspect log convert --to json',
        )
        return None
    except zipfile.BadZipFile as exc:  # a CRC that does not match, a bad local header
        log.add(where, None, f"damaged member ({str(exc)[:200]})")
        return None
    except (OSError, ValueError, EOFError, zlib.error, NotImplementedError) as exc:
        log.add(where, None, f"cannot be read from the zip ({str(exc)[:200]})")
        return None
    except Exception as exc:  # noqa: BLE001 - zstandard.ZstdError and the like: a damaged member
        log.add(where, None, f"cannot be decompressed ({type(exc).__name__}: {str(exc)[:200]})")
        return None
    if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
        log.add(where, None, "damaged member (size or CRC differs from the zip directory)")
        return None
    from ._files import json_values_problem

    why = json_values_problem(data, MAX_MEMBER_VALUES)
    if why is not None:
        log.add(where, None, why)
        return None
    return _decode(data, where, log)


def slim_sample(s: Any) -> Any:
    """Only what the import reads of a sample (its metadata, messages and events dropped):
    a log's samples stay in memory until every log is read."""
    if not isinstance(s, dict):
        return s
    out = {k: s[k] for k in SAMPLE_FIELDS if k in s}
    if isinstance(out.get("input"), list):  # a chat: the question is the last user message
        q = question_of(out["input"])
        out["input"] = q if q is not None else []
    scores = out.get("scores")
    if isinstance(scores, dict):
        out["scores"] = {
            k: {f: v[f] for f in ("value", "answer") if f in v} if isinstance(v, dict) else v for k, v in scores.items()
        }
    err = out.get("error")
    if isinstance(err, dict):
        out["error"] = {"message": err.get("message")}
    return out


def _directory_problem(infos: list[Any]) -> str | None:
    """Why the zip's central directory is not one a writer made (before anything is read), or None:
    two entries with one name or one local header (the same bytes listed again: a zip bomb's
    trick), or more uncompressed bytes to read than MAX_LOG_BYTES."""
    names: set[str] = set()
    offsets: set[int] = set()
    total = 0
    for i in infos:
        if i.filename in names:
            return f"lists the member {i.filename[:120]!r} twice"
        if i.header_offset in offsets:
            return f"lists two members at one offset ({i.filename[:120]!r}): overlapping entries"
        names.add(i.filename)
        offsets.add(i.header_offset)
        if i.filename == "header.json" or (i.filename.startswith("samples/") and i.filename.endswith(".json")):
            total += i.file_size
    if total > MAX_LOG_BYTES:
        return f"its header and samples are {total:,} bytes uncompressed (limit {MAX_LOG_BYTES:,})"
    return None


def read_eval_zip(path: Path, rel: str, log: Any) -> LogRead | None:
    """A ``.eval`` log: ``header.json`` plus ``samples/<id>_epoch_<n>.json``."""
    import zipfile

    try:
        zf = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile, ValueError) as exc:
        log.add(str(path), None, f"not a readable .eval (zip) log ({str(exc)[:200]})")
        return None
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_MEMBERS:
            log.add(str(path), None, f"more than {MAX_MEMBERS} zip members")
            return None
        why = _directory_problem(infos)
        if why is not None:
            log.add(
                str(path),
                None,
                why,
                fix="import the logs Inspect wrote (one entry per member); split a huge run into several logs",
            )
            return None
        by_name = {i.filename: i for i in infos}
        if "header.json" not in by_name:
            log.add(
                str(path),
                None,
                "no header.json: the eval did not finish (still running, or the process died)",
                fix="import finished logs only: let it finish, or re-run it (inspect eval-retry LOG)",
            )
            return None
        header = _member(zf, path, by_name["header.json"], log)
        if not isinstance(header, dict):
            if header is not None:
                log.add(f"{path}!header.json", None, "not a JSON object")
            return None
        run = LogRead(path, rel, header)
        for info in infos:
            if info.filename.startswith("samples/") and info.filename.endswith(".json"):
                s = _member(zf, path, info, log)
                if s is not None:
                    run.samples.append(slim_sample(s))
    return run


def read_json_log(path: Path, rel: str, log: Any, notes: list[str]) -> LogRead | None:
    """A ``.json`` log (``inspect eval --log-format json`` or ``inspect log convert --to json``)."""
    from ._files import read_json_file

    obj = read_json_file(path, log, MAX_JSON_BYTES)
    if obj is None:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("eval"), dict):
        notes.append(f"{path}: not an Inspect log (no 'eval' object), skipped")
        return None
    samples = obj.get("samples")
    run = LogRead(path, rel, {k: v for k, v in obj.items() if k != "samples"})
    if isinstance(samples, list):
        run.samples = [slim_sample(x) for x in samples]
    elif samples is not None:
        log.add(str(path), None, "'samples' is not a list")
        return None
    return run


def read_logs(root: Path, log: Any, notes: list[str]) -> list[LogRead]:
    from ._files import file_problem

    logs = []
    for p in find_logs(root):
        why = file_problem(p)
        if why is not None:
            log.add(str(p), None, why)
            continue
        rel = "" if p == root else p.relative_to(root).as_posix()
        got = read_eval_zip(p, rel, log) if p.suffix == ".eval" else read_json_log(p, rel, log, notes)
        if got is not None:
            logs.append(got)
    return logs


# ------------------------------------------------------------------ checks and values


def check_log(run: LogRead, epoch: int | None, intersect: bool, log: Any, notes: list[str]) -> list[dict[str, Any]]:
    """The samples to import (one epoch), after the log-level checks; [] with problems in ``log``."""
    where = str(run.path)
    status = run.header.get("status")
    if status != "success":
        err = run.header.get("error")
        msg = err.get("message") if isinstance(err, dict) else None
        log.add(
            where,
            None,
            f"log status is {_show(status)}, not 'success'" + (f" (error: {_show(msg, 200)})" if msg else ""),
            fix="import complete logs only: fix the error and re-run (inspect eval-retry LOG)",
        )
        return []
    samples = [s for s in run.samples if isinstance(s, dict)]
    if not samples:
        log.add(
            where,
            None,
            "holds no samples (written with --no-log-samples?)",
            fix="re-run with sample logging on (the default)",
        )
        return []
    bad = [s for s in samples if type(s.get("epoch", 1)) is not int]
    if bad:
        log.add(where, None, f"sample {_show(bad[0].get('id'))}: epoch {_show(bad[0].get('epoch'))} is not an integer")
        return []
    epochs = sorted({s.get("epoch", 1) for s in samples})
    cfg = run.eval.get("config") if isinstance(run.eval.get("config"), dict) else {}
    n_epochs = cfg.get("epochs", 1)
    if epoch is None and (len(epochs) > 1 or (type(n_epochs) is int and n_epochs > 1)):
        log.add(
            where,
            None,
            f"run with {n_epochs} epochs (samples of epochs {epochs[:5]}): several bits per item",
            fix="import one epoch with epoch=K (--epoch K)",
        )
        return []
    if epoch is not None:
        samples = [s for s in samples if s.get("epoch", 1) == epoch]
        if not samples:
            log.add(where, None, f"no sample of epoch {epoch} (epochs: {epochs[:5]})")
            return []
        if len(epochs) > 1:
            notes.append(f"{where}: epoch {epoch} of {len(epochs)} imported")
    seen: set[str] = set()
    out = []
    for s in samples:
        sid = s.get("id")
        if type(sid) not in (str, int) or sid == "":
            log.add(where, None, f"a sample without an id (a string or an integer): {_show(sid)}")
            continue
        key = str(sid)
        if key in seen:
            log.add(
                where,
                None,
                f"sample {key!r} (epoch {s.get('epoch', 1)}) appears twice",
                fix="keep one copy of each sample in a log",
            )
            continue
        seen.add(key)
        out.append(s)
    listed = (run.eval.get("dataset") or {}).get("sample_ids") if isinstance(run.eval.get("dataset"), dict) else None
    if isinstance(listed, list):  # the dataset's order, not the order samples finished in
        pos = {str(x): i for i, x in enumerate(listed)}
        out.sort(key=lambda s: pos.get(str(s["id"]), len(pos)))
    if isinstance(listed, list) and not intersect:
        lacks = [str(x) for x in listed if str(x) not in seen]
        if lacks:
            log.add(
                where,
                None,
                f"lacks {len(lacks)} sample(s) that its own dataset lists, e.g. {lacks[:3]}",
                fix="re-run the missing samples (inspect eval-retry LOG), or pass intersect=True (--intersect)",
            )
            return []
    return out


def _show(v: Any, limit: int = 80) -> str:
    from ._values import show

    return show(v, limit)


def score_bit(value: Any) -> int | None:
    """Score value "C" -> 1, "I" -> 0; 0/1 numbers and booleans as they are; anything else None."""
    if isinstance(value, str):
        return BIT_VALUES.get(value)
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)) and value in (0, 1):
        return int(value)
    return None


def choose_scorer(runs: list[tuple[LogRead, list[dict[str, Any]]]], metric: str | None, notes: list[str]) -> str:
    from ..records.errors import RecordsError

    if metric:
        return metric
    names: dict[str, None] = {}
    for _, samples in runs:
        for s in samples:
            if isinstance(s.get("scores"), dict):
                names.update(dict.fromkeys(s["scores"]))
    if len(names) == 1:
        return next(iter(names))
    if "choice" in names:
        notes.append(f"scorer 'choice' used (the logs also score {sorted(n for n in names if n != 'choice')})")
        return "choice"
    raise RecordsError.one(
        str(runs[0][0].path) if runs else "<logs>",
        None,
        f"the logs score with {sorted(names) or 'no scorer'}: which one is the correctness bit?",
        fix="choose a scorer with 0/1 (C/I) values: metric=NAME (--metric NAME)",
    )


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        parts = [c.get("text") for c in content if isinstance(c, dict) and isinstance(c.get("text"), str)]
        return "\n".join(parts) if parts else None
    return None


def question_of(inp: Any) -> str | None:
    """A sample's input: the string, or the last user message of a chat input."""
    if isinstance(inp, str):
        return inp
    if isinstance(inp, list):
        for m in reversed(inp):
            if isinstance(m, dict) and m.get("role") == "user":
                return _text(m.get("content"))
    return None


def _letter(v: Any, n: int) -> int | None:
    from ._values import letter_index

    if isinstance(v, list) and len(v) == 1:
        v = v[0]
    return letter_index(v, n) if isinstance(v, str) and len(v.strip()) <= 4 else None


# ------------------------------------------------------------------ units


def _model_name(run: LogRead, notes: list[str]) -> str | None:
    m = run.eval.get("model")
    if not isinstance(m, str) or not m.strip():
        return None
    provider, _, rest = m.partition("/")
    if provider in LOCAL_PROVIDERS and rest and not rest.startswith(("/", ".", "~")):
        note = f"model {m!r} recorded as {rest!r} (the provider prefix {provider}/ dropped)"
        if note not in notes:
            notes.append(note)
        return rest
    return m


def resolve(mp: dict[str, Any], run: LogRead) -> dict[str, Any] | None:
    """Settings for one log: top level < tasks[task] < runs[log]; None = not in the mapping."""
    from .lmeval import _lookup

    out = {k: v for k, v in mp.items() if k not in ("runs", "tasks", "comment")}
    hit = False
    task = run.eval.get("task")
    if "tasks" in mp and isinstance(task, str):
        t = _lookup(mp["tasks"], [task])
        if t is not None:
            out.update(t)
            hit = True
    if "runs" in mp:
        rel = run.rel or run.path.name
        parent = Path(rel).parent.as_posix()
        names = [n for n in (rel, run.path.name, run.path.stem, parent if parent != "." else "") if n]
        r = _lookup(mp["runs"], names)
        if r is not None:
            out.update(r)
            hit = True
    if ("runs" in mp or "tasks" in mp) and not hit:
        return None
    return out


def _arg_text(v: Any) -> str:
    if isinstance(v, str):
        return v
    try:
        return json.dumps(v, sort_keys=True, default=str)
    except (RecursionError, ValueError, TypeError):
        return _show(v)


def _plan_aspects(run: LogRead) -> dict[str, Any]:
    """The solver plan as flat aspects: ``<solver>.<param>`` and ``config.<generate option>``."""
    plan = run.header.get("plan") if isinstance(run.header.get("plan"), dict) else {}
    out: dict[str, Any] = {}
    steps = plan.get("steps") if isinstance(plan.get("steps"), list) else []
    for j, st in enumerate(x for x in steps if isinstance(x, dict)):
        name = st.get("solver") if isinstance(st.get("solver"), str) else f"step{j}"
        out[f"{name}"] = True
        params = st.get("params") if isinstance(st.get("params"), dict) else {}
        for k, v in params.items():
            out[f"{name}.{k}"] = v
    gen = plan.get("config") if isinstance(plan.get("config"), dict) else {}
    out.update({f"config.{k}": v for k, v in gen.items() if k != "max_connections"})
    return out


def _differing(dicts: list[dict[str, Any]]) -> list[str]:
    names = sorted({k for d in dicts for k in d})
    return [k for k in names if len({_arg_text(d.get(k)) for d in dicts}) > 1]


def _short_value(v: Any) -> str:
    import hashlib

    t = _arg_text(v)
    return t if len(t) <= 32 else "h" + hashlib.sha1(t.encode("utf-8", "replace")).hexdigest()[:8]


def default_keys(group: list[LogRead]) -> dict[int, str]:
    """Per log (by position): ``k=v,...`` of the task args that differ among the task's logs;
    else of the solver plan's parameters that differ (long values as a short hash); else "default"."""
    from ._values import sanitize_key

    for dicts in (
        [a if isinstance(a := r.eval.get("task_args"), dict) else {} for r in group],
        [_plan_aspects(r) for r in group],
    ):
        differ = _differing(dicts)
        if differ:
            return {
                i: sanitize_key(",".join(f"{k}={_short_value(d.get(k))}" for k in differ)) for i, d in enumerate(dicts)
            }
    return dict.fromkeys(range(len(group)), "default")


def _legend(run: LogRead, scorer: str) -> dict[str, Any]:
    ev = run.eval
    plan = run.header.get("plan") if isinstance(run.header.get("plan"), dict) else {}
    steps = plan.get("steps") if isinstance(plan.get("steps"), list) else []
    ds = ev.get("dataset") if isinstance(ev.get("dataset"), dict) else {}
    pk = ev.get("packages") if isinstance(ev.get("packages"), dict) else {}
    extra = {
        "source": "inspect",
        "log": run.rel or run.path.name,
        "task": ev.get("task"),
        "task_args": ev.get("task_args"),
        "metric": scorer,
        "solver": [{"solver": s.get("solver"), "params": s.get("params")} for s in steps if isinstance(s, dict)],
        "generate_config": plan.get("config"),
        "model_args": ev.get("model_args"),
        "dataset": ds.get("name"),
        "inspect_ai_version": pk.get("inspect_ai"),
        "eval_id": ev.get("eval_id"),
        "created": ev.get("created"),
    }
    return {k: v for k, v in extra.items() if v not in (None, "", [], {})}


@dataclass
class Staged:
    run: LogRead
    samples: list[dict[str, Any]]
    settings: dict[str, Any]


def fill_unit(u: Any, st: Staged, scorer: str, log: Any) -> None:
    """Bits, predictions and item facts of one log, in the log's own option order."""
    from ._build import ItemMeta

    where = str(st.run.path)
    for s in st.samples:
        key = str(s["id"])
        scores = s.get("scores") if isinstance(s.get("scores"), dict) else {}
        sc = scores.get(scorer)
        if not isinstance(sc, dict):
            err = s.get("error")
            why = f" (sample error: {_show(err.get('message') if isinstance(err, dict) else err)})" if err else ""
            log.add(
                where,
                None,
                f"sample {key!r} has no score for scorer {scorer!r}{why}; its scores: {sorted(scores)}",
                fix="choose the scorer with metric=NAME (--metric NAME), or re-run the failed samples",
            )
            continue
        bit = score_bit(sc.get("value"))
        if bit is None:
            log.add(
                where,
                None,
                f"sample {key!r}: score {scorer} = {_show(sc.get('value'))} is not a correctness bit "
                f"(C/I, 0/1, true/false)",
                fix="partial credit ('P') or no answer ('N') are not bits: choose a 0/1 scorer with metric=NAME",
            )
            continue
        u.bits[key] = bit
        choices = s.get("choices")
        options = list(choices) if isinstance(choices, list) and all(isinstance(c, str) for c in choices) else None
        n = len(options) if options else 0
        gold = _letter(s.get("target"), n) if options else None
        if options and "answer" in sc:
            u.pred[key] = _letter(sc.get("answer"), n)
        u.meta[key] = ItemMeta(key, gold, question_of(s.get("input")), options)


def remap_options(units: list[Any], refkey: str, notes: list[str]) -> None:
    """Gold and predictions in the reference log's option order (shuffled choices), matched by text."""
    canon: dict[tuple[str, str], list[str]] = {}
    for u in sorted(units, key=lambda u: u.config.key != refkey):
        for k, mt in u.meta.items():
            if mt.options and (u.benchmark, k) not in canon:
                canon[(u.benchmark, k)] = mt.options
    moved = 0
    for u in units:
        for k, mt in u.meta.items():
            c = canon.get((u.benchmark, k))
            if not (mt.options and c and mt.options != c and sorted(mt.options) == sorted(c) and len(set(c)) == len(c)):
                continue
            to_c = [c.index(o) for o in mt.options]
            if isinstance(mt.gold, int):
                mt.gold = to_c[mt.gold]
            p = u.pred.get(k)
            if isinstance(p, int):
                u.pred[k] = to_c[p]
            mt.options = c
            moved += 1
    if moved:
        notes.append(
            f"{moved} sample(s) show their choices in another order than the reference log "
            "(shuffled choices); gold and predictions are given in the reference order (matched by text)"
        )


def load_inspect(
    src: str | os.PathLike[str],
    *,
    metric: str | None = None,
    mapping: Any = None,
    intersect: bool = False,
    reference: str | None = None,
    model: str | None = None,
    benchmark: str | None = None,
    epoch: int | str | None = None,
) -> Records:
    """Import Inspect AI logs (a log dir, or one ``.eval``/``.json`` log) as Records.

    ``epoch``: an int, or its text as the CLI's ``--epoch`` gives it."""
    from ..records.errors import ProblemLog, RecordsError
    from ._build import Unit, build_records, none_mapped
    from .lmeval import load_mapping, make_config

    root = Path(src)
    if isinstance(epoch, str):
        if not epoch.strip().isdigit() or int(epoch) < 1:
            raise RecordsError.one(str(root), None, f"--epoch {epoch!r} is not an epoch", fix="pass --epoch 1, 2, ...")
        epoch = int(epoch)
    log = ProblemLog()
    notes: list[str] = []
    mp = load_mapping(mapping)
    logs = read_logs(root, log, notes)
    log.raise_if_any()
    if not logs:
        raise RecordsError.one(
            str(root), None, "no Inspect log (*.eval, *.json) here", fix="pass the log dir of inspect eval (--log-dir)"
        )
    staged: list[Staged] = []
    skipped = []
    for run in logs:
        st = resolve(mp, run)
        if st is None:
            skipped.append(run.rel or run.path.name)
            continue
        staged.append(Staged(run, check_log(run, epoch, intersect, log, notes), st))
    log.raise_if_any()
    if skipped:
        notes.append(f"not in the mapping, so not imported: {', '.join(skipped)}")
    if not staged:
        raise none_mapped(root, skipped, "logs")
    scorer = choose_scorer([(s.run, s.samples) for s in staged], metric or mp.get("metric"), notes)
    by_task: dict[str, list[int]] = {}
    for i, s in enumerate(staged):
        by_task.setdefault(str(s.run.eval.get("task")), []).append(i)
    defaults: dict[int, str] = {}
    for idx in by_task.values():
        keys = default_keys([staged[i].run for i in idx])
        defaults.update({idx[j]: k for j, k in keys.items()})
    units = []
    for i, s in enumerate(staged):
        where = str(s.run.path)
        mdl = model or s.settings.get("model") or _model_name(s.run, notes)
        if not mdl:
            from .fixes import FIX_MODEL

            log.add(where, None, "cannot tell the model (no eval.model)", fix=FIX_MODEL)
            continue
        bench = benchmark or s.settings.get("benchmark") or s.run.eval.get("task")
        if not isinstance(bench, str) or not bench:
            log.add(where, None, "cannot tell the task (no eval.task)", fix="--benchmark or 'benchmark' in the mapping")
            continue
        cfg = make_config(s.settings.get("config"), defaults[i], "gen", _legend(s.run, scorer), where)
        u = Unit(where, bench, str(mdl), cfg)
        fill_unit(u, s, scorer, log)
        units.append(u)
    log.raise_if_any()
    if any(k != "default" for k in defaults.values()) and not any("config" in s.settings for s in staged):
        notes.append("config keys from the task arguments (else solver parameters) that differ between a task's logs")
    keys = list(dict.fromkeys(u.config.key for u in units))
    ref = reference or mp.get("reference")
    remap_options(units, ref if ref in keys else keys[0], notes)
    return build_records(
        units,
        source=str(root),
        reference=ref,
        intersect=intersect,
        notes=notes,
        grid_extra={"imported_from": "inspect", "source": str(root)},
        match_what="sample",
    )


__all__ = ["FORMAT_INFO", "load_inspect"]

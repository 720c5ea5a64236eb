"""Fuzz every records reader and importer (issues 25 and 46): mutated inputs, each loaded in a
forked child under an address-space limit and a time limit.

    python benchmarks/fuzz_reliability.py [--scale 1.0] [--workers 2] [--only READER,...]

Each outcome is one of:

* ``records_error``: a RecordsError (the named error: file, line, fix);
* ``equal``: the load equals the honest input's;
* ``different``: the load differs. For a reader whose format carries an integrity check
  (packed files, load-cache entries, Parquet with page checksums, Zstandard/deflate zip
  members with their CRC) that is a **silently different** load, the failure this counts. For
  text formats (JSON, JSONL, CSV) a mutation can be a valid input that says something else
  (a digit changed), so it is counted, not failed;
* ``crash``: any other exception, or a child killed by a signal;
* ``hang``: the child ran past ``--timeout`` seconds;
* ``oom``: a MemoryError (or Arrow's) under the child's address-space limit (``--max-gb``).

Byte mutations (a bit flip, a random byte, 8 zero bytes, a truncation) go to every reader;
structural mutations (one JSON value replaced by a hostile one: nesting 100,000 deep, a
5,000-digit integer, NaN, a 1 MB string, a wrong type, a bidi control...) go to the JSON-based
ones. The default counts add up to 10,250 mutations; ``--scale 0.15`` is a ~1,500 quick pass.
Exit status 1 if anything loaded silently different, crashed, hung or ran out of memory.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import resource
import select
import shutil
import signal
import sys
import tempfile
import time
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
FIXTURES = [REPO / "fixtures" / "tiny", REPO / "fixtures" / "release" / "records-v1"]

# reader -> (default count, integrity-checked format?)
COUNTS: dict[str, tuple[int, bool]] = {
    "packed": (1500, True),
    "cache": (800, True),
    "parquet-table": (600, True),
    "csv-table": (500, False),
    "records-jsonl-bytes": (800, False),
    "records-jsonl-struct": (800, False),
    "grid-json-bytes": (400, False),
    "grid-json-struct": (600, False),
    "inspect-eval-bytes": (800, True),
    "inspect-json-struct": (700, False),
    "lighteval-parquet-bytes": (800, False),
    "helm-json-bytes": (400, False),
    "helm-json-struct": (600, False),
    "lmeval-jsonl-struct": (500, False),
    "lmeval-jsonl-bytes": (450, False),
}


# ------------------------------------------------------------------ mutations


def mutate(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    kind = rng.randrange(4)
    if kind == 0:  # one bit
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8)
    elif kind == 1:  # a random byte
        b[rng.randrange(len(b))] = rng.randrange(256)
    elif kind == 2:  # 8 zero bytes
        i = rng.randrange(max(1, len(b) - 8))
        b[i : i + 8] = bytes(8)
    else:  # truncation
        del b[rng.randrange(len(b)) :]
    return bytes(b)


def flip_bit(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    i = rng.randrange(len(b))
    b[i] ^= 1 << rng.randrange(8)
    return bytes(b)


DEEP = "\x00DEEP\x00"
HOSTILE: list[Any] = [
    None,
    True,
    0,
    -1,
    2**64,
    1e308,
    "",
    "x" * 1_000_000,
    "\u202eevil\u202c",
    "a\r=1+cmd",
    [],
    {},
    [[[]]],
    {"a": {"b": {}}},
    DEEP,
    "NAN",
    "BIGINT",
]


def _nodes(obj: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _nodes(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:50]):
            out += _nodes(v, (*path, i))
    return out


def _set(obj: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    cur = obj
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value
    return obj


def struct_mutate(text: str, rng: random.Random) -> str:
    """One JSON value (any depth) replaced by a hostile one, or one key dropped."""
    obj = json.loads(text)
    nodes = _nodes(obj)
    path = nodes[rng.randrange(len(nodes))]
    if path and rng.random() < 0.25:  # drop it
        cur = obj
        for p in path[:-1]:
            cur = cur[p]
        del cur[path[-1]]
        return json.dumps(obj)
    out = json.dumps(_set(obj, path, rng.choice(HOSTILE)))
    out = out.replace(json.dumps(DEEP), "[" * 100_000 + "]" * 100_000)
    out = out.replace('"NAN"', "NaN").replace('"BIGINT"', "9" * 5000)
    return out


def struct_mutate_jsonl(data: bytes, rng: random.Random) -> bytes:
    lines = data.decode("utf-8").splitlines()
    idx = [i for i, x in enumerate(lines) if x.strip()]
    i = rng.choice(idx)
    lines[i] = struct_mutate(lines[i], rng)
    return ("\n".join(lines) + "\n").encode()


# ------------------------------------------------------------------ inputs


def _loader(kind: str) -> Callable[[Path], Any]:
    from leaderboard_audit.importers import load
    from leaderboard_audit.records import load_records

    return {
        "records": load_records,
        "inspect": lambda p: load(p, "inspect"),
        "lighteval": lambda p: load(p, "lighteval", reference="question"),
        "helm": lambda p: load(p, "helm"),
        "lmeval": lambda p: load(p, "lm-eval", benchmark="arc", model="smol", intersect=True),
    }[kind]


def prepare(work: Path) -> dict[str, list[tuple[str, Path, str, list[Path]]]]:
    """Per reader: (loader kind, the source to load, how to mutate, the files a mutation may hit)."""
    from leaderboard_audit.records import load_records
    from leaderboard_audit.records.packed import write_packed
    from leaderboard_audit.records.table import write_table

    out: dict[str, list[tuple[str, Path, str, list[Path]]]] = collections.defaultdict(list)
    for i, fx in enumerate(FIXTURES):
        warnings.simplefilter("ignore")
        rec = load_records(fx)
        d = work / f"fx{i}"
        shutil.copytree(fx, d / "dir")
        pk = write_packed(rec, d / "p.arrow")
        (d / "pq").mkdir()
        write_table(rec, d / "pq" / "t.parquet")
        (d / "csv").mkdir()
        write_table(rec, d / "csv" / "t.csv")
        for sub in ("pq", "csv"):
            for legend in ("grid.json", "legend.json"):
                if (fx / legend).is_file():
                    shutil.copy(fx / legend, d / sub / legend)
        jsonl = sorted((d / "dir").rglob("*.jsonl"))
        grid = [p for p in (d / "dir" / "grid.json", d / "dir" / "legend.json") if p.is_file()]
        out["packed"].append(("records", pk, "bytes", [pk]))
        out["cache"].append(("records", d / "dir", "cache", []))
        out["parquet-table"].append(("records", d / "pq" / "t.parquet", "flip", [d / "pq" / "t.parquet"]))
        out["csv-table"].append(("records", d / "csv" / "t.csv", "bytes", [d / "csv" / "t.csv"]))
        out["records-jsonl-bytes"].append(("records", d / "dir", "bytes", jsonl))
        out["records-jsonl-struct"].append(("records", d / "dir", "jsonl", jsonl))
        out["grid-json-bytes"].append(("records", d / "dir", "bytes", grid))
        out["grid-json-struct"].append(("records", d / "dir", "json", grid))
    ins = work / "inspect"
    shutil.copytree(DATA / "inspect" / "eval", ins / "eval")
    shutil.copytree(DATA / "inspect" / "json", ins / "json")
    deflated = ins / "deflated"
    deflated.mkdir()
    for f in sorted((ins / "json").glob("*.json")):  # the same logs as deflate-compressed .eval zips
        lg = json.loads(f.read_text())
        with zipfile.ZipFile(deflated / (f.stem + ".eval"), "w", zipfile.ZIP_DEFLATED) as z:
            for s in lg["samples"]:
                z.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
            z.writestr("header.json", json.dumps({k: v for k, v in lg.items() if k != "samples"}))
    for sub in ("eval", "deflated"):
        out["inspect-eval-bytes"].append(("inspect", ins / sub, "bytes", sorted((ins / sub).glob("*.eval"))))
    out["inspect-json-struct"].append(("inspect", ins / "json", "json", sorted((ins / "json").glob("*.json"))))
    lt = work / "lighteval"
    shutil.copytree(DATA / "lighteval" / "runs", lt)
    out["lighteval-parquet-bytes"].append(("lighteval", lt, "bytes", sorted(lt.rglob("*.parquet"))))
    hm = work / "helm"
    shutil.copytree(DATA / "helm" / "benchmark_output" / "runs" / "v1", hm)
    helm_json = sorted(hm.rglob("*.json"))
    out["helm-json-bytes"].append(("helm", hm, "bytes", helm_json))
    out["helm-json-struct"].append(("helm", hm, "json", helm_json))
    lm = work / "lmeval"
    shutil.copytree(DATA / "lm-eval-samples" / "SmolLM2-135M-Instruct", lm)
    samples = sorted(lm.rglob("samples_*.jsonl"))
    out["lmeval-jsonl-struct"].append(("lmeval", lm, "jsonl", samples))
    out["lmeval-jsonl-bytes"].append(("lmeval", lm, "bytes", samples))
    return out


# ------------------------------------------------------------------ one mutation, in a child


_BASE: dict[str, Any] = {}


def _base(kind: str, src: Path) -> Any:
    key = f"{kind}:{src}"
    if key not in _BASE:
        _BASE[key] = _loader(kind)(src)
    return _BASE[key]


def _run_cache(src: Path, seed: int, scratch: Path) -> str:
    from leaderboard_audit.records.cache import entry_key, entry_name, load_cached_entry
    from leaderboard_audit.records.fingerprint import sha256_of

    cache = scratch / "cache"
    load_cached_entry(src, cache_dir=cache)  # build the honest entry
    entry = cache / entry_name(entry_key(sha256_of(src), src, {}))
    bad = mutate(entry.read_bytes(), random.Random(seed))
    entry.write_bytes(bad)
    rec, _ = load_cached_entry(src, cache_dir=cache)
    return (
        "equal" if rec.equals(_base("records", src)) and rec.dropped == _base("records", src).dropped else "different"
    )


def one(reader: str, job: tuple[str, Path, str, list[Path]], seed: int, scratch: Path) -> str:
    """Mutate a copy of the job's source, load it: the outcome."""
    from leaderboard_audit.records import RecordsError

    kind, src, how, files = job
    rng = random.Random(seed)
    try:
        if how == "cache":
            return _run_cache(src, seed, scratch)
        base = _base(kind, src)
        target = rng.choice(files)
        copy = scratch / "src"
        if src.is_dir():
            shutil.copytree(src, copy)
            new_target = copy / target.relative_to(src)
            load_from = copy
            if kind != "records":  # an import names its source folder in the legend: the copy's
                base = _loader(kind)(copy)
        else:  # a file source: mutate a copy beside the honest one (its legend is there)
            new_target = src.parent / f"m{os.getpid()}{src.suffix}"
            load_from = new_target
        data = target.read_bytes()
        if how == "bytes":
            data = mutate(data, rng)
        elif how == "flip":
            data = flip_bit(data, rng)
        elif how == "json":
            data = struct_mutate(data.decode("utf-8"), rng).encode()
        elif how == "jsonl":
            data = struct_mutate_jsonl(data, rng)
        new_target.write_bytes(data)
        try:
            rec = _loader(kind)(load_from)
        finally:
            if not src.is_dir():
                new_target.unlink(missing_ok=True)
    except RecordsError:
        return "records_error"
    except MemoryError:
        return "oom"
    except Exception as exc:  # noqa: BLE001 - the fuzz counts these
        return "oom" if "Memory" in type(exc).__name__ else f"crash:{type(exc).__name__}"
    same = rec.equals(base) and getattr(rec, "dropped", None) == getattr(base, "dropped", None)
    return "equal" if same else "different"


def _vm_bytes() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def run_all(
    jobs: list[tuple[str, Any, int]], workers: int, timeout: int, max_gb: float
) -> dict[str, collections.Counter]:
    """Each job in a forked child (RLIMIT_AS: the parent's size + ``max_gb``; SIGALRM after
    ``timeout`` s), ``workers`` at a time; outcomes per reader."""
    limit = _vm_bytes() + int(max_gb * 2**30)
    results: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    running: dict[int, tuple[str, int, float]] = {}  # pid -> (reader, read fd, start)
    todo = list(jobs)
    while todo or running:
        while todo and len(running) < workers:
            reader, job, seed = todo.pop()
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child
                os.close(r)
                code = "crash:child"
                try:
                    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
                    signal.alarm(timeout)
                    warnings.simplefilter("ignore")
                    with tempfile.TemporaryDirectory(prefix="fuzz-one-") as d:
                        code = one(reader, job, seed, Path(d))
                finally:
                    os.write(w, code.encode()[:200])
                    os._exit(0)
            os.close(w)
            running[pid] = (reader, r, time.monotonic())
        pid, status = os.wait()
        if pid not in running:
            continue
        reader, r, _ = running.pop(pid)
        ready, _, _ = select.select([r], [], [], 0)
        out = os.read(r, 200).decode() if ready else ""
        os.close(r)
        if os.WIFSIGNALED(status):
            out = "hang" if os.WTERMSIG(status) == signal.SIGALRM else f"crash:signal {os.WTERMSIG(status)}"
        results[reader][out or "crash:no outcome"] += 1
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=30)
    ap.add_argument("--max-gb", type=float, default=2.0)
    ap.add_argument("--only", default="", help="comma-separated readers (default: all)")
    ap.add_argument("--seed", type=int, default=46)
    args = ap.parse_args(argv)
    os.environ["LEADERBOARD_AUDIT_CACHE"] = "off"
    warnings.simplefilter("ignore")
    work = Path(tempfile.mkdtemp(prefix="fuzz-rel-"))
    try:
        inputs = prepare(work)
        only = {x for x in args.only.split(",") if x}
        rng = random.Random(args.seed)
        jobs = []
        for reader, (n, _) in COUNTS.items():
            if only and reader not in only:
                continue
            per = inputs[reader]
            for i in range(round(n * args.scale)):
                job = per[i % len(per)]
                if job[2] != "cache":
                    _base(job[0], job[1])  # loaded once here, inherited by every child
                jobs.append((reader, job, rng.randrange(2**32)))
        rng.shuffle(jobs)
        t0 = time.monotonic()
        results = run_all(jobs, args.workers, args.timeout, args.max_gb)
        took = time.monotonic() - t0
    finally:
        shutil.rmtree(work, ignore_errors=True)
    bad = 0
    print(f"{'reader':<26} {'mutations':>9}  outcomes")
    for reader, (_, integrity) in COUNTS.items():
        c = results.get(reader)
        if not c:
            continue
        fails = sum(n for k, n in c.items() if k.startswith(("crash", "hang", "oom")))
        if integrity:
            fails += c.get("different", 0)
        bad += fails
        print(f"{reader:<26} {sum(c.values()):>9,}  {dict(sorted(c.items()))}" + ("  <-- FAIL" if fails else ""))
    total = sum(sum(c.values()) for c in results.values())
    print(f"{total:,} mutations in {took:.0f} s; silently different, crashed, hung or out of memory: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

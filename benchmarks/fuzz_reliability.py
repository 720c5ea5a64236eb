"""Issue 25's fuzz counts, rerun: 4,500 mutated packed files, 3,000 mutated cache entries, 600
single-bit flips of a Parquet table. Each outcome is a RecordsError, an equal load, a silently
different load (the failure this counts) or a crash (any other exception, or a dead child).

    python benchmarks/fuzz_reliability.py [--scale 1.0]

Every load runs in a forked worker process (2 workers); the packed and Parquet inputs are
the tiny and release-v1 fixtures; the cache entries are built from both by the load cache.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import shutil
import sys
import tempfile
import warnings
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURES = [REPO / "fixtures" / "tiny", REPO / "fixtures" / "release" / "records-v1"]


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


_BASE: dict[str, object] = {}


def _base(path: str):
    from leaderboard_audit.records import load_records

    if path not in _BASE:
        _BASE[path] = load_records(path)
    return _BASE[path]


def load_one(job: tuple[str, str, bytes, str]) -> str:
    """One mutated file loaded (directly, or through the load cache): its outcome."""
    kind, src, data, suffix = job
    warnings.simplefilter("ignore")
    from leaderboard_audit.records import RecordsError, load_records

    served = False
    with tempfile.TemporaryDirectory() as d:
        try:
            if kind == "cache":
                from leaderboard_audit.records.cache import entry_key, entry_name, load_cached_entry
                from leaderboard_audit.records.fingerprint import sha256_of

                cache = Path(d) / "cache"
                load_cached_entry(src, cache_dir=cache)  # build the honest entry
                key = entry_key(sha256_of(Path(src)), Path(src), {})
                entry = cache / entry_name(key)
                assert entry.is_file(), "no cache entry was written"
                bad = mutate(entry.read_bytes(), random.Random(suffix))
                entry.write_bytes(bad)
                rec, _ = load_cached_entry(src, cache_dir=cache)
                base = _base(src)
                served = entry.is_file() and entry.read_bytes() == bad  # kept: the load used it
            else:
                f = Path(src).parent / f"m{os.getpid()}{suffix}"  # beside the honest file: its grid.json too
                f.write_bytes(data)
                try:
                    rec = load_records(f)
                finally:
                    f.unlink()
                base = _base(src)
        except RecordsError:
            return "records_error"
        except Exception as exc:  # noqa: BLE001 - the fuzz counts these
            return f"crash:{type(exc).__name__}"
    if not rec.equals(base) or rec.dropped != base.dropped:
        return "silently_different"
    if kind == "cache":
        return "served_equal" if served else "ignored_rebuilt"
    return "equal"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    from leaderboard_audit.records import load_records
    from leaderboard_audit.records.packed import write_packed
    from leaderboard_audit.records.table import write_table

    work = Path(tempfile.mkdtemp(prefix="fuzz-rel-"))
    rng = random.Random(25)
    jobs: dict[str, list] = {"packed": [], "cache": [], "parquet": []}
    n_packed, n_cache, n_parquet = (round(n * args.scale) for n in (4500, 3000, 600))
    for i, fx in enumerate(FIXTURES):
        warnings.simplefilter("ignore")
        rec = load_records(fx)
        pk = write_packed(rec, work / f"f{i}.arrow")
        pq = work / f"f{i}.parquet"
        write_table(rec, pq)
        _BASE[str(pk)] = load_records(pk)
        _BASE[str(pq)] = load_records(pq)
        pdata, qdata = pk.read_bytes(), pq.read_bytes()
        jobs["packed"] += [("packed", str(pk), mutate(pdata, rng), ".arrow") for _ in range(n_packed // 2)]
        jobs["parquet"] += [("parquet", str(pq), flip_bit(qdata, rng), ".parquet") for _ in range(n_parquet // 2)]
        src = work / f"src{i}"
        shutil.copytree(fx, src)
        jobs["cache"] += [("cache", str(src), b"", str(rng.randrange(2**32))) for _ in range(n_cache // 2)]
    os.environ["LEADERBOARD_AUDIT_CACHE"] = "off"
    results: dict[str, collections.Counter] = {}
    for kind, js in jobs.items():
        c: collections.Counter = collections.Counter()
        with ProcessPoolExecutor(args.workers, mp_context=get_context("fork")) as ex:
            try:
                for out in ex.map(load_one, js, chunksize=16):
                    c[out] += 1
            except BrokenProcessPool:
                c["crash:dead child"] += 1
        results[kind] = c
        print(f"{kind}: {sum(c.values()):,} mutations: {dict(sorted(c.items()))}", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    bad = sum(n for c in results.values() for k, n in c.items() if k == "silently_different" or k.startswith("crash"))
    print("silently different or crashed:", bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

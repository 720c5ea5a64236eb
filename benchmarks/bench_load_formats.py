"""Why the packed form is an Arrow fixed-size list of booleans (issue 12). Not a test.

Times reading a random (models x items x configs) bool tensor back into a C-ordered numpy
array from three bit-packed layouts, all read with pyarrow:

* Parquet, one boolean column per configuration (the "wide table"), snappy;
* Arrow IPC, one boolean column per configuration (needs a rows x configs transpose);
* Arrow IPC, one ``fixed_size_list<bool>[K]`` column (the packed form: its child buffer
  is the tensor in C order).

    python benchmarks/bench_load_formats.py [--models 1000 --items 30000] [--repeat 2]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np


def _bits_of(arr) -> np.ndarray:
    raw = np.frombuffer(arr.buffers()[1], dtype=np.uint8)
    return np.unpackbits(raw, count=arr.offset + len(arr), bitorder="little")[arr.offset :].view(bool)


def per_config_to_numpy(table, shape) -> np.ndarray:
    M, N, K = shape
    out = np.empty((M * N, K), dtype=bool)
    for k, name in enumerate(table.column_names):
        pos = 0
        for chunk in table.column(name).chunks:
            out[pos : pos + len(chunk), k] = _bits_of(chunk)
            pos += len(chunk)
    return out.reshape(M, N, K)


def main(argv: list[str] | None = None) -> None:
    import pyarrow as pa
    import pyarrow.ipc
    import pyarrow.parquet as pq

    from leaderboard_audit.records.packed import _unpack_bits

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=1000)
    ap.add_argument("--items", type=int, default=30000)
    ap.add_argument("--configs", type=int, default=26)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args(argv)
    M, N, K = args.models, args.items, args.configs
    C = np.random.default_rng(0).random((M, N, K), dtype=np.float32) < 0.5
    flat = C.reshape(M * N, K)

    def col(k):
        bits = np.packbits(np.ascontiguousarray(flat[:, k]), bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), M * N, [None, pa.py_buffer(bits)])

    wide = pa.table({f"c{k}": col(k) for k in range(K)})
    child = pa.Array.from_buffers(
        pa.bool_(), M * N * K, [None, pa.py_buffer(np.packbits(C.reshape(-1), bitorder="little"))]
    )
    listed = pa.table({"correct": pa.FixedSizeListArray.from_arrays(child, K)})

    def read_ipc(path):
        with pa.memory_map(str(path)) as src:
            return pa.ipc.open_file(src).read_all()

    def best(fn):
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            got = fn()
            times.append(time.perf_counter() - t0)
            assert np.array_equal(got, C)
            del got
        return min(times)

    print(
        f"{M} x {N} x {K} = {M * N * K:,} bits ({M * N * K / 8 / 2**20:.0f} MiB packed, "
        f"{C.nbytes / 2**20:.0f} MiB as numpy bool)"
    )
    with tempfile.TemporaryDirectory(prefix="bench-formats-") as tmp:
        t = Path(tmp)
        pq.write_table(wide, t / "wide.parquet", compression="snappy", row_group_size=1 << 22)
        with pa.OSFile(str(t / "wide.arrow"), "wb") as sink, pa.ipc.new_file(sink, wide.schema) as w:
            w.write_table(wide)
        with pa.OSFile(str(t / "list.arrow"), "wb") as sink, pa.ipc.new_file(sink, listed.schema) as w:
            w.write_table(listed)
        rows = [
            (
                "Parquet, one bool column per config",
                t / "wide.parquet",
                lambda: per_config_to_numpy(pq.read_table(t / "wide.parquet"), (M, N, K)),
            ),
            (
                "Arrow IPC, one bool column per config",
                t / "wide.arrow",
                lambda: per_config_to_numpy(read_ipc(t / "wide.arrow"), (M, N, K)),
            ),
            (
                "Arrow IPC, fixed_size_list<bool>[K] (packed form)",
                t / "list.arrow",
                lambda: _unpack_bits(read_ipc(t / "list.arrow").column("correct"), K, "x", M * N)[0].reshape(M, N, K),
            ),
        ]
        for name, path, fn in rows:
            print(
                f"  {name:<52} {path.stat().st_size / 1e6:7.1f} MB  read -> numpy {best(fn):6.2f} s "
                f"(best of {args.repeat})"
            )


if __name__ == "__main__":
    main()

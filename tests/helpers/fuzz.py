"""Hypothesis strategies that corrupt records files, and the check every corrupted load must pass."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from hypothesis import assume, event
from hypothesis import strategies as st

from leaderboard_audit.records import RecordsError, load_records


def check_loads_or_records_error(path: Path, intersect: bool) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            rec = load_records(path, intersect=intersect)
        except RecordsError as exc:
            assert exc.total >= 1 and str(exc).startswith("invalid records")
            event("RecordsError")
            return
    event("loaded")
    # It loaded: the result must be internally consistent.
    M, N, K = rec.correct.shape
    assert rec.correct.dtype == bool
    assert M == len(rec.models) and N == len(rec.items) and K == len(rec.grid)
    for arr in (rec.pred, rec.margin):
        assert arr is None or arr.shape == rec.correct.shape
    assert len(rec.items.gold) == len(rec.items.question) == len(rec.items.options) == N
    assert list(rec.benchmarks) == sorted(set(rec.items.benchmark.tolist()))


# -- one corruption of one file ------------------------------------------------------------

JSON_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=5),
    st.lists(st.integers(0, 2), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


HOSTILE = st.one_of(
    st.sampled_from(
        [
            0,
            1,
            True,
            False,
            2,
            -1,
            0.5,
            1.0,
            "1",
            "",
            None,
            [1],
            [0, 1],
            {"a": 1},
            10**30,
            10**400,
            -(10**400),
            32000,
            "m-a",
            "arc/item-0",
            "gen|letter_plain|p0",
            "..",
        ]
    ),
    JSON_VALUES,
)


@st.composite
def corruption(draw, data: bytes):
    kind = draw(
        st.sampled_from(
            [
                "flip",
                "truncate",
                "delete_line",
                "duplicate_line",
                "swap_lines",
                "change_value",
                "delete_key",
                "insert_bytes",
                "replace_bits",
                "field_value",
            ]
        )
    )
    lines = data.split(b"\n")
    if not data:  # an earlier corruption left the file empty: only growing it is possible
        return draw(st.binary(min_size=1, max_size=20))
    if kind == "flip":
        out = bytearray(data)
        for _ in range(draw(st.integers(1, 4))):
            i = draw(st.integers(0, len(out) - 1))
            out[i] = draw(st.integers(0, 255))
        return bytes(out)
    if kind == "truncate":
        return data[: draw(st.integers(0, len(data)))]
    if kind == "insert_bytes":
        i = draw(st.integers(0, len(data)))
        return data[:i] + draw(st.binary(min_size=1, max_size=20)) + data[i:]
    if kind in ("delete_line", "duplicate_line", "swap_lines"):
        i = draw(st.integers(0, len(lines) - 1))
        if kind == "delete_line":
            del lines[i]
        elif kind == "duplicate_line":
            lines.insert(i, lines[i])
        else:
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        return b"\n".join(lines)
    # structured edits of one JSON line (or of grid.json as a whole)
    i = draw(st.integers(0, len(lines) - 1))
    try:
        obj = json.loads(lines[i])
    except ValueError:
        return data
    paths = list(_paths(obj))
    assume(paths)
    if kind == "field_value":  # hit the fields the reader interprets, with hostile values
        named = [
            p
            for p in paths
            if p[0] in ("correct", "pred", "margin", "item_id", "gold", "model", "benchmark", "reference", "configs")
        ]
        assume(named)
        path = draw(st.sampled_from(named))
        parent = obj
        for step in path[:-1]:
            parent = parent[step]
        parent[path[-1]] = draw(HOSTILE)
        lines[i] = json.dumps(obj, allow_nan=True).encode()
        return b"\n".join(lines)
    path = draw(st.sampled_from(paths))
    parent = obj
    for step in path[:-1]:
        parent = parent[step]
    if kind == "delete_key" and isinstance(parent, dict):
        del parent[path[-1]]
    elif kind == "replace_bits" and isinstance(parent, dict):
        parent[path[-1]] = draw(st.sampled_from([0, 1, True, False, 2, -1, 0.5, "1", None]))
    else:
        parent[path[-1]] = draw(JSON_VALUES)
    lines[i] = json.dumps(obj, allow_nan=True).encode()
    return b"\n".join(lines)


def _paths(obj, prefix=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield prefix + (k,)
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield prefix + (i,)
            yield from _paths(v, prefix + (i,))

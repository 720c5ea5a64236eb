"""records-v1 round trips: write -> read -> equal, deterministic bytes, committed fixtures."""

from __future__ import annotations

import os
import string
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leaderboard_audit.records import (
    ANSWER_CLASS_ABSENT,
    ANSWER_CLASSES,
    PRED_ABSENT,
    PRED_UNPARSEABLE,
    UNPARSED_ABSENT,
    Items,
    Records,
    RecordsError,
    load_records,
    write_records,
)
from leaderboard_audit.records.grid import paper_grid
from leaderboard_audit.records.simulate import demo_spec, simulate
from helpers.records import SMALL_GRID, make_records
from helpers.paths import REPO

TINY = REPO / "fixtures" / "tiny"
DEMO = REPO / "fixtures" / "demo"


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_round_trip_exact(tmp_path):
    rec = make_records()
    write_records(rec, tmp_path / "r")
    back = load_records(tmp_path / "r")
    assert back.equals(rec)
    assert back.models == ("m-a", "m-c", "org/m-b")
    assert (tmp_path / "r" / "arc" / "org__m-b.jsonl").is_file()
    assert back.grid.to_json() == SMALL_GRID.to_json()  # extra fields preserved
    assert back.grid.configs[0].extra == {"template_text": "Q: {q}"}
    assert back.dropped == {} and back.notes == ()


def test_write_twice_byte_identical(tmp_path):
    rec = make_records()
    write_records(rec, tmp_path / "a")
    write_records(load_records(tmp_path / "a"), tmp_path / "b")
    write_records(rec, tmp_path / "a")  # overwrite in place
    a, b = tree_bytes(tmp_path / "a"), tree_bytes(tmp_path / "b")
    assert a == b
    assert not [n for n in a if ".tmp" in n]  # no temporary files left behind
    assert all(v.endswith(b"\n") for v in a.values())


def test_round_trip_without_optional_arrays(tmp_path):
    rec = make_records(pred=False, margin=False, text=False)
    write_records(rec, tmp_path)
    back = load_records(tmp_path)
    assert back.pred is None and back.margin is None
    assert back.equals(rec)


def test_round_trip_paper_grid_simulated(tmp_path):
    rec = simulate(demo_spec(items_per_benchmark=7))
    write_records(rec, tmp_path)
    back = load_records(str(tmp_path))  # str paths work too
    assert back.equals(rec)
    assert back.grid.to_json() == paper_grid().to_json()
    assert back.shape == (6, 28, 26)


def test_written_files_are_not_private(tmp_path):
    write_records(make_records(), tmp_path)
    mask = os.umask(0o022)
    os.umask(mask)
    for p in tmp_path.rglob("*.json*"):
        assert p.stat().st_mode & 0o777 == 0o666 & ~mask, p


def test_pred_codes_survive(tmp_path):
    rec = make_records()
    write_records(rec, tmp_path)
    back = load_records(tmp_path)
    assert (back.pred == PRED_UNPARSEABLE).any() and (back.pred == PRED_ABSENT).any()
    np.testing.assert_array_equal(back.pred, rec.pred)


def test_scope_select_views(tmp_path):
    rec = make_records()
    write_records(rec, tmp_path)
    back = load_records(tmp_path)
    arc = back.scope("arc")
    assert arc.shape == (3, 5, 4) and set(arc.items.benchmark) == {"arc"}
    assert np.shares_memory(arc.correct, back.correct)
    with pytest.raises(KeyError, match=r"no benchmark 'nope'; have \['arc', 'mmlu'\]"):
        back.scope("nope")
    sub = back.select_items([0, 6])
    assert sub.items.item_id.tolist() == ["arc/item-0", "mmlu/item-1"]
    two = back.select_models(["org/m-b", "m-a"])
    assert two.models == ("org/m-b", "m-a")
    np.testing.assert_array_equal(two.correct[0], back.correct[2])
    with pytest.raises(KeyError, match=r"unknown model\(s\) \['ghost'\]"):
        back.select_models(["ghost"])


def test_writer_refuses_unwritable_names(tmp_path):
    rec = make_records()
    bad = replace(rec, items=replace(rec.items, benchmark=np.array(["../up"] * 5 + ["mmlu"] * 4, dtype=object)))
    with pytest.raises(RecordsError, match="cannot be a directory name"):
        write_records(bad, tmp_path / "x")
    assert not (tmp_path / "up").exists()
    hidden = replace(rec, items=replace(rec.items, benchmark=np.array(["_arc"] * 5 + ["mmlu"] * 4, dtype=object)))
    # the reader would skip "_arc"
    with pytest.raises(RecordsError, match="benchmark name '_arc' cannot be a directory name"):
        write_records(hidden, tmp_path / "y")
    clash = replace(rec, models=("a/b", "a__b", "c"))
    with pytest.raises(RecordsError, match="share the file name"):
        write_records(clash, tmp_path / "z")
    with pytest.raises(RecordsError, match="cannot be a file name"):
        write_records(replace(rec, models=(".hidden", "b", "c")), tmp_path / "w")


# -- the committed fixtures ---------------------------------------------------------------


def test_tiny_fixture_numbers():
    rec = load_records(TINY)
    assert rec.shape == (3, 8, 4)
    assert rec.models == ("alpha", "beta", "gamma")
    assert rec.benchmarks == ("tiny",)
    assert rec.configs == ("gen|letter_plain|p0", "gen|letter_plain|p1", "gen|digit_labels|p0", "ll|cloze_plain")
    assert rec.grid.reference == "gen|letter_plain|p0" and not rec.grid.inferred
    assert rec.grid.configs[1].permutation == (1, 3, 2, 0)
    acc = rec.correct.sum(axis=1)
    assert acc.tolist() == [[6, 4, 5, 4], [5, 4, 4, 6], [5, 3, 4, 2]]
    assert acc[:, 3].argmax() == 1 and (acc[:, 3] < 6).sum() == 2  # beta wins ll outright
    robust_c = rec.correct.all(axis=2)
    robust_w = ~rec.correct.any(axis=2)
    assert robust_c.any(axis=1).all() and robust_w.any(axis=1).all()
    J = (robust_c | robust_w)[0] & (robust_c | robust_w)[1]
    ref = rec.correct[:, :, 0]
    assert int((J & ref[0] & ~ref[1]).sum()) == 1  # higher_only
    assert int((J & ~ref[0] & ref[1]).sum()) == 1  # lower_only
    assert (rec.pred == PRED_UNPARSEABLE).sum() == 1
    assert rec.items.gold == [1, 2, 0, 1, 2, 1, 3, 1]


def test_tiny_fixture_is_byte_stable(tmp_path):
    write_records(load_records(TINY), tmp_path)
    got = tree_bytes(tmp_path)
    want = {k: v for k, v in tree_bytes(TINY).items() if k.endswith((".json", ".jsonl"))}
    assert got == want


def test_tiny_fixture_matches_its_readme_table():
    text = (TINY / "README.md").read_text(encoding="utf-8")
    rec = load_records(TINY)
    for i, iid in enumerate(rec.items.item_id):
        cells = ["".join(str(int(b)) for b in rec.correct[m, i]) for m in range(3)]
        row = f"| {iid.split('/')[1]} | {rec.items.gold[i]} | " + " | ".join(cells) + " |"
        assert row in text, row


def test_demo_fixture_is_the_simulation():
    rec = load_records(DEMO)
    assert rec.equals(simulate(demo_spec()))
    size = sum(p.stat().st_size for p in DEMO.rglob("*") if p.is_file())
    assert size < 3_000_000


# -- property: any records the writer accepts come back equal --------------------------

_name = st.text(alphabet=string.ascii_letters + string.digits + "-_.é/", min_size=1, max_size=12).filter(
    lambda s: (
        not s.startswith(".") and "//" not in s and not s.endswith("/") and "__" not in s and not s.startswith("/")
    )
)
_bench = st.text(alphabet=string.ascii_lowercase + string.digits + "-", min_size=1, max_size=8).filter(
    lambda s: s != "pooled"
)  # reserved (docs/records.md, "Layout")
_text = st.one_of(st.none(), st.text(max_size=20))


@st.composite
def records_strategy(draw):
    models = draw(st.lists(_name, min_size=1, max_size=3, unique_by=lambda m: m.replace("/", "__")))
    benches = draw(st.lists(_bench, min_size=1, max_size=3, unique=True))
    sizes = [draw(st.integers(1, 4)) for _ in benches]
    pairs = sorted(zip(benches, sizes))
    bench = [b for b, n in pairs for _ in range(n)]
    ids = [draw(st.text(min_size=1, max_size=10)) + f"#{j}" for j in range(len(bench))]
    N, K, M = len(ids), len(SMALL_GRID), len(models)
    gold = [draw(st.one_of(st.none(), st.integers(-3, 10), st.sampled_from("ABCD"))) for _ in ids]
    q = [draw(_text) for _ in ids]
    opts = [draw(st.one_of(st.none(), st.lists(st.text(max_size=5), max_size=4))) for _ in ids]
    bits = np.array(draw(st.lists(st.booleans(), min_size=M * N * K, max_size=M * N * K)))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    P = rng.integers(PRED_ABSENT, 4, (M, N, K)).astype(np.int16)
    P[0, 0, 0] = 1  # at least one recorded prediction
    A = np.where(rng.random((M, N, K)) < 0.5, np.nan, rng.normal(size=(M, N, K)) * 1e3)
    A[0, 0, 0] = 0.25
    C = U = None
    if draw(st.booleans()):  # answer_class and unparsed, sometimes
        C = rng.integers(ANSWER_CLASS_ABSENT, len(ANSWER_CLASSES), (M, N, K)).astype(np.int8)
        C[0, 0, 0] = 0
        U = rng.integers(UNPARSED_ABSENT, K + 1, (M, N)).astype(np.int16)
        U[0, 0] = K
    return Records(
        correct=bits.reshape(M, N, K),
        models=tuple(sorted(models)),
        items=Items(np.array(bench, dtype=object), np.array(ids, dtype=object), gold, q, opts),
        grid=SMALL_GRID,
        pred=P,
        margin=A,
        answer_class=C,
        unparsed=U,
    )


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rec=records_strategy())
def test_round_trip_property(rec, tmp_path_factory):
    root = tmp_path_factory.mktemp("prop")
    write_records(rec, root)
    back = load_records(root)
    assert back.equals(rec)
    again = tmp_path_factory.mktemp("prop2")
    write_records(back, again)
    assert tree_bytes(root) == tree_bytes(again)

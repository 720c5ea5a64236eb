"""The budgeted plan and the replay engine (issue 44, item 4)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from leaderboard_audit.collect.budget import (
    NOT_ROBUST,
    ROBUST,
    UNDECIDED,
    BudgetError,
    budget_cells,
    plan,
    sample_size,
)
from leaderboard_audit.collect.cli import main as collect_main
from leaderboard_audit.collect.replay import DESIGN_KEY, replay_plan, replayed_records
from leaderboard_audit.records import Items, Records, load_records
from leaderboard_audit.records.grid import paper_grid
from leaderboard_audit.records.missing import NOT_COLLECTED


def grid_records(M: int = 4, N: int = 120, seed: int = 3) -> Records:
    """Paper-like: a few configs flip often, most items fragile, some robust."""
    grid = paper_grid()
    K = len(grid)
    rng = np.random.default_rng(seed)
    skill = np.linspace(0.4, 0.8, M)[:, None, None]
    flip = np.where(np.arange(K) % 7 == 3, 0.5, 0.08)[None, None, :]
    easy = rng.random((1, N, 1)) < 0.3
    C = (rng.random((M, N, K)) < skill) & ((rng.random((M, N, K)) > flip) | easy)
    C[:, :, grid.reference_index] = rng.random((M, N)) < skill[:, :, 0] + 0.1
    bench = np.array(["arc"] * (N // 2) + ["mmlu"] * (N - N // 2), dtype=object)
    ids = np.array([f"{b}/q{i}" for i, b in enumerate(bench)], dtype=object)
    items = Items(bench, ids, [0] * N, [None] * N, [None] * N)
    return Records(C, tuple(f"m{j}" for j in range(M)), items, grid)


def oracle(C: np.ndarray):
    def answer(m, i, k):
        return C[m, i, k]

    return answer


@pytest.mark.parametrize("fraction", [0.05, 0.1, 0.2, 0.3, 1.0])
def test_plan_invariants(fraction):
    rec = grid_records()
    C, ref = rec.correct, rec.grid.reference_index
    M, N, K = C.shape
    asked: list[tuple[int, int, int]] = []

    def answer(m, i, k):
        asked.extend(zip(m.tolist(), i.tolist(), k.tolist()))
        return C[m, i, k]

    p = plan(answer, C.shape, ref, fraction, seed=5)
    assert len(asked) == len(set(asked)) == p.cells <= budget_cells(fraction, C.shape)  # no cell twice
    assert p.observed[:, :, ref].all()  # the reference on every item
    assert np.array_equal(p.correct, C & p.observed)
    assert p.observed[:, p.sample].all()  # the random sample: every model, every config
    truth = C.all(axis=2)
    assert (truth[p.status == ROBUST]).all() and not (truth[p.status == NOT_ROBUST]).any()
    assert np.array_equal(p.status == ROBUST, p.observed.all(axis=2) & truth)  # robust only when all K seen right
    seen_fail = (p.observed & ~C).any(axis=2)
    assert np.array_equal(p.status == NOT_ROBUST, seen_fail)  # settled by an observed failure, and only then
    if fraction == 1.0:
        assert (p.status != UNDECIDED).all()
        assert p.cells < M * N * K  # robust status stops early
    left = budget_cells(fraction, C.shape) - M * N
    assert len(p.sample) == sample_size(left, M, N, K, 0.25)
    assert (len(p.sample) >= 2) == (left >= 2 * M * (K - 1))  # a sample whenever two items fit


def test_budget_below_the_reference_round_is_refused():
    with pytest.raises(BudgetError, match="less than the reference configuration on every"):
        budget_cells(0.03, (2, 10, 26))
    with pytest.raises(BudgetError, match=r"in \(0, 1\]"):
        budget_cells(1.5, (2, 10, 26))


def test_random_sample_is_uniform_over_items():
    # each item is in the sample with probability n/N; a sample taken from the start, the
    # end or the adaptive cells would miss this (mutation: skip or fix the sample)
    rec = grid_records(M=2, N=40)
    C, ref = rec.correct, rec.grid.reference_index
    counts = np.zeros(40)
    runs = 300
    for seed in range(runs):
        p = plan(oracle(C), C.shape, ref, 0.2, seed=seed)
        counts[p.sample] += 1
        n = len(p.sample)
    prob = n / 40
    sd = np.sqrt(runs * prob * (1 - prob))
    assert n >= 2 and np.all(np.abs(counts - runs * prob) < 5 * sd), counts


def test_order_follows_the_sample():
    rec = grid_records(M=3, N=200)
    C = rec.correct.copy()
    ref = rec.grid.reference_index
    C[1] = C[1, :, ref][:, None]  # model 1 answers alike under every config...
    C[1, :, 11] = False  # ...but config 11, which flips every item it gets right under the reference
    p = plan(oracle(C), C.shape, ref, 0.3, seed=2)
    assert p.order[1, 0] == 11
    assert ref not in p.order.tolist()[0]


@pytest.mark.slow
def test_replayed_records_read_back_and_are_deterministic(tmp_path):
    from leaderboard_audit.records import write_records

    src = tmp_path / "full"
    write_records(grid_records(), src)
    runs = {}
    for name, seed in (("a", 7), ("b", 7), ("c", 8)):
        out = tmp_path / name
        assert collect_main(["--replay", str(src), "--budget", "0.2", "--output", str(out), "--seed", str(seed)]) == 0
        runs[name] = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    assert runs["a"] == runs["b"] and runs["a"] != runs["c"]
    got = load_records(tmp_path / "a")
    full = load_records(src)
    p = replay_plan(full, 0.2, 7)
    assert got.equals(replayed_records(full, p, fraction=0.2, seed=7))
    assert set(np.unique(got.missing).tolist()) == {0, NOT_COLLECTED}
    assert np.array_equal(got.missing == 0, p.observed)
    d = got.grid.extra[DESIGN_KEY]
    assert d["cells"] == p.cells and d["random_sample"]["items"] == len(p.sample)
    assert d["random_sample"]["inclusion_probability"] == len(p.sample) / full.shape[1]
    sampled = {i for ids in d["random_sample"]["item_ids"].values() for i in ids}
    assert sampled == set(full.items.item_id[p.sample].tolist())
    assert json.loads((tmp_path / "a" / "grid.json").read_text())[DESIGN_KEY] == d
    assert not list(tmp_path.glob(".*tmp"))  # the temporary folder is gone


def test_replay_cli_errors(tmp_path, capsys):
    from leaderboard_audit.records import write_records

    src = tmp_path / "full"
    write_records(grid_records(M=2, N=10), src)
    assert collect_main(["--replay", str(src), "--budget", "0.01", "--output", str(tmp_path / "o")]) == 4
    assert "give at least 0.03846" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "x").write_text("keep")
    assert collect_main(["--replay", str(src), "--budget", "0.2", "--output", str(tmp_path / "o")]) == 4
    assert "--output exists and is not empty" in capsys.readouterr().err
    assert collect_main(["--replay", str(src), "--output", str(tmp_path / "p")]) == 4
    assert "--replay needs --budget" in capsys.readouterr().err
    with pytest.raises(SystemExit) as ei:
        collect_main(["spec.toml", "--replay", str(src), "--budget", "0.2", "--output", str(tmp_path / "q")])
    assert ei.value.code == 2
    assert collect_main(["--replay", str(tmp_path / "o"), "--budget", "0.2", "--output", str(tmp_path / "q")]) == 4

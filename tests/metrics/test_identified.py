"""The identified order (AUDITS.md v2): counts, exact sign tests, Holm, tiers, winner.

Hand-built robust patterns with p-values worked out by hand, and random tensors
against the loop implementation in tests/helpers/reference_impl.py (scipy's binomtest, Holm's
step-down as published, Kahn layering by sets)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays
import helpers.reference_impl as ref_impl

from leaderboard_audit.metrics.identified import holm_adjust, identified_order, identified_report, sign_test_p


def build(spec: list[tuple[int, str]]) -> np.ndarray:
    """``spec``: (items, codes) blocks, codes one letter per model."""
    M = len(spec[0][1])
    blocks = []
    for n, codes in spec:
        block = np.zeros((M, n, 2), dtype=bool)
        for m, c in enumerate(codes):
            block[m, :, :] = c == "R"
            if c == "F":
                block[m, :, 0] = True
        blocks.append(block)
    return np.concatenate(blocks, axis=1)


NAMES = ("a", "b", "c")


def test_counts_p_values_and_holm_by_hand():
    # a right, b and c wrong on 8 items; a and c right, b wrong on 6 more; 5 items fragile for all
    C = build([(8, "RWW"), (6, "RWR"), (5, "FFF")])
    io = identified_order(C, models=NAMES)
    assert (io.only[0, 1], io.only[1, 0]) == (14, 0)
    assert (io.only[0, 2], io.only[2, 0]) == (8, 0)
    assert (io.only[2, 1], io.only[1, 2]) == (6, 0)
    # raw p: 2 * 2^-n for an n v 0 split; Holm: x3, x2, x1 in sorted order, running max
    assert io.p_holm[0, 1] == pytest.approx(3 * 2.0**-13, rel=1e-12)
    assert io.p_holm[0, 2] == io.p_holm[2, 0] == pytest.approx(2 * 2.0**-7, rel=1e-12)
    assert io.p_holm[1, 2] == pytest.approx(2.0**-5, rel=1e-12)
    assert io.edges.tolist() == [[0, 1], [0, 2], [2, 1]]
    assert io.tiers == [[0], [2], [1]]
    assert io.robust_winner == 0 and io.reason is None
    rep = identified_report(io, NAMES)
    assert rep["edges"] == [["a", "b"], ["a", "c"], ["c", "b"]] and rep["tiers"] == [["a"], ["c"], ["b"]]
    assert rep["method"] == "holm-sign-test" and rep["alpha"] == 0.05 and rep["robust_winner"] == "a"
    assert (rep["edges_total"], rep["edges_truncated"]) == (3, False)
    cut = identified_report(io, NAMES, edges_listed=2)  # a leaderboard-scale report lists the first ones
    assert cut["edges"] == [["a", "b"], ["a", "c"]] and (cut["edges_total"], cut["edges_truncated"]) == (3, True)


def test_holm_withholds_an_edge_that_a_single_test_would_draw():
    # a beats b on 6 items with no disagreement: p = 2 / 2^6 = 0.03125 <= 0.05 on its own...
    C = build([(6, "RWF"), (4, "FFF")])
    assert identified_order(C[:2], models=NAMES[:2]).edges.tolist() == [[0, 1]]
    # ...but among 3 pairs Holm's first step needs p <= 0.05 / 3
    io = identified_order(C, models=NAMES)
    assert io.p_holm[0, 1] == pytest.approx(3 / 32, abs=1e-15)
    assert io.edges.shape == (0, 2) and io.tiers == [[0, 1, 2]]
    assert io.robust_winner is None and "a, b, c" in io.reason


def test_robust_winner_and_alpha():
    C = build([(9, "RWW"), (9, "RRW"), (3, "WRR")])
    io = identified_order(C, models=NAMES)
    # a-b: 9 v 3 -> p = 2 * P(X <= 3; 12) = 2 * 299/4096 = 0.146 -> no edge at 0.05
    assert io.only[0, 1] == 9 and io.only[1, 0] == 3
    assert io.robust_winner is None
    assert io.tiers == [[0, 1], [2]]
    loose = identified_order(C, models=NAMES, alpha=0.5)
    assert loose.robust_winner == 0 and loose.reason is None and loose.tiers == [[0], [1], [2]]


def test_sole_head_that_is_not_above_everyone_has_a_reason():
    # a > b and b > c are identified, a vs c is not: a heads tier 1 alone but is no winner
    C = build([(10, "RWF"), (10, "FRW"), (2, "WFR")])
    io = identified_order(C, models=NAMES)
    assert io.edges.tolist() == [[0, 1], [1, 2]]
    assert io.tiers == [[0], [1], [2]]
    assert io.robust_winner is None and io.reason.startswith("a heads the top tier") and "c" in io.reason


def test_a_cycle_is_reported_not_looped_on():
    C = build([(20, "RWF"), (20, "FRW"), (20, "WFR")])
    io = identified_order(C, models=NAMES)
    assert io.edges.tolist() == [[0, 1], [1, 2], [2, 0]]
    assert io.cycle and io.tiers == [[0, 1, 2]] and "cycle" in io.reason


def test_one_model_and_display_order():
    io = identified_order(build([(3, "R"), (2, "W")]), models=("solo",))
    assert io.robust_winner == 0 and io.tiers == [[0]] and io.edges.shape == (0, 2)
    C = build([(2, "RRR"), (1, "WWW")])  # nothing separates anyone
    io = identified_order(C, models=NAMES, display=np.array([2, 0, 1]))
    assert io.tiers == [[2, 0, 1]] and io.robust_winner is None


def test_exact_binomial_tail_against_integer_sums():
    from fractions import Fraction

    from leaderboard_audit.metrics.identified import binom_half_cdf

    def tail(k: int, n: int) -> float:  # sum_{j <= k} C(n, j) / 2^n in integers
        term, total = 1, 1
        for j in range(k):
            term = term * (n - j) // (j + 1)
            total += term
        return float(Fraction(total, 2**n))

    cases = [(0, 0), (0, 1), (3, 10), (12, 30), (350, 777), (2400, 5000), (4900, 10_000), (4999, 9999), (10, 10_000)]
    got = binom_half_cdf(np.array([k for k, _ in cases]), np.array([n for _, n in cases]))
    for (k, n), g in zip(cases, got):
        want = tail(k, n)
        if want < 1e-40:
            assert g == 0.0  # far below any Holm threshold: written as 0
        else:
            assert g == pytest.approx(want, rel=1e-12), (k, n)


@pytest.mark.parametrize("cells", [1 << 20, 3000])
def test_binomial_window_sums_give_the_per_n_loop_s_bits(monkeypatch, cells):
    """The exact sums come from one padded block of windows (rows split at ``_WINDOW_CELLS``);
    each row must hold the bits a one-dimensional cumsum of its own window gives."""
    from leaderboard_audit.metrics import identified as ident

    monkeypatch.setattr(ident, "_WINDOW_CELLS", cells)
    rng = np.random.default_rng(5)
    n = rng.integers(1, 9000, 4000)
    n[:50] = 5000  # repeated n: several k read from one row
    k = (n // 2 - np.abs(rng.normal(0, 0.8, n.size)) * np.sqrt(n)).clip(0).astype(np.int64)
    got = ident.binom_half_cdf(k, n)
    lg, log2 = ident._log_factorials(int(n.max())), np.log(np.longdouble(2))
    for kk, nn, g in zip(k.tolist(), n.tolist(), got.tolist()):
        if np.exp(-2.0 * (nn / 2.0 - kk) ** 2 / nn) < ident.NEGLIGIBLE_P / 2:
            assert g == 0.0
            continue
        lo = min(
            kk, max(0, int(np.floor(nn / 2.0 - np.sqrt((ident._LN_WINDOW - np.log(ident.NEGLIGIBLE_P)) * nn / 2.0))))
        )
        j = np.arange(lo, kk + 1)
        want = np.cumsum(np.exp((lg[nn] - lg[j] - lg[nn - j] - nn * log2).astype(np.float64)))[-1]
        assert g == min(want, 1.0), (kk, nn)


def test_holm_adjust_matches_the_step_down_definition():
    p = np.array([0.01, 0.04, 0.03, 0.005, 0.5])
    # sorted 0.005, 0.01, 0.03, 0.04, 0.5 -> x5, x4, x3, x2, x1 -> 0.025, 0.04, 0.09, 0.08 -> 0.09, 0.5
    assert holm_adjust(p) == pytest.approx([0.04, 0.09, 0.09, 0.025, 0.5], abs=1e-15)


@pytest.mark.parametrize("seed", range(6))
def test_matches_loops_on_random_tensors(seed):
    rng = np.random.default_rng(seed)
    M, N, K = 6, 120, 3
    ability = rng.normal(0, 1.2, M)
    C = rng.random((M, N, K)) < 1 / (1 + np.exp(-(ability[:, None, None] + rng.normal(0, 0.7, (1, N, K)))))
    C[:, : N // 3] = C[:, : N // 3, :1]  # a third of the items robust
    names = tuple(f"m{j}" for j in range(M))
    io = identified_order(C, models=names)
    want = ref_impl.identified(C.astype(int).tolist())
    for (a, b), (ao, bo) in want["only"].items():
        assert (io.only[a, b], io.only[b, a]) == (ao, bo)
        assert sign_test_p(np.array([ao]), np.array([bo]))[0] == pytest.approx(want["p"][(a, b)], rel=1e-12)
    assert [tuple(e) for e in io.edges.tolist()] == want["edges"]
    assert io.tiers == want["tiers"]
    assert io.robust_winner == want["winner"]
    assert len(want["edges"]) > 0  # the case is not vacuous


@settings(max_examples=60, deadline=None)
@given(
    st.tuples(st.integers(1, 7), st.integers(1, 40), st.integers(1, 4)).flatmap(lambda s: arrays(np.bool_, s)),
    st.sampled_from([0.05, 0.3, 0.9]),
)
def test_tiers_and_edges_are_consistent(C, alpha):
    M = C.shape[0]
    names = tuple(f"m{j}" for j in range(M))
    io = identified_order(C, models=names, alpha=alpha)
    assert sorted(m for t in io.tiers for m in t) == list(range(M))  # a partition
    tier = {m: j for j, t in enumerate(io.tiers) for m in t}
    for a, b in io.edges.tolist():
        assert io.only[a, b] > io.only[b, a] and io.p_holm[a, b] <= alpha
        if not io.cycle:
            assert tier[a] < tier[b]
    if not io.cycle:
        for j, t in enumerate(io.tiers[1:], start=1):  # each model has a reason to be there
            assert all(any(io.above[u, m] for u in io.tiers[j - 1]) for m in t)
    if io.robust_winner is not None:
        assert io.tiers[0] == [io.robust_winner] and io.above[io.robust_winner].sum() == M - 1
    else:
        assert io.reason


@pytest.mark.slow
def test_adjacent_counts_agree_with_the_pairs_section():
    from leaderboard_audit.engine import audit_scope
    from leaderboard_audit.records.simulate import demo_spec, simulate

    s = audit_scope(simulate(demo_spec()), "pooled", n_boot=500)
    for p, q in zip(s["pairs"], s["identified"]["adjacent"]):
        assert (p["higher"], p["lower"]) == (q["higher"], q["lower"])
        assert (p["higher_only"], p["lower_only"]) == (q["higher_only"], q["lower_only"])


def _random_masks(M: int, N: int, K: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    from leaderboard_audit.metrics.per_model import robust_masks

    rng = np.random.default_rng(seed)
    ability = rng.normal(0, 1.5, M)
    logit = ability[:, None, None] + rng.normal(0, 1, (1, N, 1)) + rng.normal(0, 0.3, (1, N, K))
    rc, rw, _ = robust_masks(rng.random((M, N, K)) < 1 / (1 + np.exp(-logit)))
    return rc, rw


# (1030, 60): 529,935 pairs, past the count at which the sign test reads its cumulative table
@pytest.mark.parametrize(
    "M, N, K, seed", [(1, 5, 2, 0), (2, 3, 1, 1), (9, 40, 3, 2), (60, 300, 4, 3), (1030, 60, 1, 4)]
)
def test_testing_by_cell_gives_the_bits_of_testing_by_pair(M, N, K, seed):
    from leaderboard_audit.metrics.identified import robust_only_counts, tested_by_cell, tested_by_pair

    only = robust_only_counts(*_random_masks(M, N, K, seed))
    for alpha in (0.05, 0.5):
        p_cell, above_cell = tested_by_cell(only, N, alpha)
        p_pair, above_pair = tested_by_pair(only, alpha)
        a, b = np.divmod(np.arange(M * M), M)
        assert np.array_equal(p_cell[a, b], np.asarray(p_pair).ravel())  # bit for bit, not approx
        assert np.array_equal(np.asarray(p_cell), np.asarray(p_pair)) and np.asarray(p_cell).dtype == np.float64
        assert np.array_equal(above_cell, above_pair)
    if M > 2:
        assert above_pair.any() and not above_pair.all()  # not vacuous


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from([0.0, 1e-9, 0.001, 0.004, 0.01, 0.02, 0.3, 1.0]), min_size=1, max_size=60))
def test_holm_on_distinct_values_matches_holm_on_the_family(ps):
    from leaderboard_audit.metrics.identified import holm_adjust_distinct

    p = np.array(ps)
    values, which, counts = np.unique(p, return_inverse=True, return_counts=True)
    assert np.array_equal(holm_adjust_distinct(values, counts)[which], holm_adjust(p))


@pytest.mark.parametrize("listed", [1, 7, 40, 10_000])
def test_listed_edges_are_the_first_by_name(listed):
    from leaderboard_audit.metrics.identified import identified_from_masks

    rc, rw = _random_masks(40, 200, 2, 5)
    names = [f"m{(j * 17) % 40:02d}" for j in range(40)]  # name order is not index order
    io = identified_from_masks(rc, rw, models=names, alpha=0.3)
    want = sorted([names[a], names[b]] for a, b in io.edges.tolist())
    rep = identified_report(io, names, edges_listed=listed)
    assert len(want) > 7 and rep["edges"] == want[:listed] and rep["edges_total"] == len(want)

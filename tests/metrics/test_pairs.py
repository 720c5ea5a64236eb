"""Adjacent pairs (AUDITS.md v2): the bootstrap is item resampling, ``cause`` and
``items_needed`` by hand, and one deterministic draw for all pairs of a scope."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard_audit.metrics.bootstrap import paired_sign_bootstrap_ci, sign_difference_pmf
from leaderboard_audit.metrics.identified import sign_test_p
from leaderboard_audit.metrics.pairs import adjacent_pairs, pair_cause, pair_cis
from leaderboard_audit.metrics.power import items_needed


def blocks(spec: list[tuple[int, str]], K: int = 2) -> np.ndarray:
    """(items, codes) blocks, one code per model: 'R' robust-correct, 'W' robust-wrong,
    'F' fragile (right under the reference config 0 only), 'f' fragile (wrong under 0)."""
    M = len(spec[0][1])
    out = []
    for n, codes in spec:
        b = np.zeros((M, n, K), dtype=bool)
        for m, c in enumerate(codes):
            b[m] = c == "R"
            if c == "F":
                b[m, :, 0] = True
            if c == "f":
                b[m, :, 1:] = True
        out.append(b)
    return np.concatenate(out, axis=1)


def item_resampling(vals: np.ndarray, draws: int, seed: int) -> np.ndarray:
    idx = np.random.default_rng(seed).integers(0, vals.size, size=(draws, vals.size))
    return vals[idx].mean(axis=1)


def trinomial_pmf(h: int, l: int, n: int) -> np.ndarray:
    """P(plus - minus = d), d = -n..n, for n items resampled from h (+1), l (-1), n - h - l (0):
    the multinomial summed by hand."""
    from math import comb

    pp, pm = h / n, l / n
    out = np.zeros(2 * n + 1)
    for a in range(n + 1):
        for b in range(n - a + 1):
            out[a - b + n] += comb(n, a) * comb(n - a, b) * pp**a * pm**b * (1 - pp - pm) ** (n - a - b)
    return out


@pytest.mark.parametrize("h,l,n", [(3, 2, 10), (7, 1, 30), (18, 18, 40), (5, 0, 5), (0, 0, 6), (1, 1, 2)])
def test_resampling_distribution_is_the_multinomial(h, l, n):
    # independent binomials for the two counts would give Var (p+ q+ + p- q-) / n instead
    pmf = sign_difference_pmf([h], [l], [n], 2 * n + 1)[0]
    assert pmf == pytest.approx(trinomial_pmf(h, l, n), abs=1e-12)
    d = np.arange(-n, n + 1) / n
    pp, pm = h / n, l / n
    assert (pmf * d).sum() == pytest.approx(pp - pm, abs=1e-12)
    assert (pmf * d * d).sum() - (pp - pm) ** 2 == pytest.approx((pp + pm - (pp - pm) ** 2) / n, abs=1e-12)


def test_resampling_distribution_matches_item_resampling():
    # 180 items +1, 180 items -1, 40 items 0: the histogram of 40,000 item resamples
    pmf = sign_difference_pmf([180], [180], [400], 801)[0]
    slow = item_resampling(np.repeat([1.0, -1.0, 0.0], [180, 180, 40]), 40_000, 2)
    values = np.arange(-400, 401) / 400
    assert (pmf * values**2).sum() == pytest.approx(slow.var(), rel=0.04)  # 0.9 / 400 / 400 * 400
    cdf = np.cumsum(pmf)
    for q in (0.025, 0.25, 0.5, 0.75, 0.975):
        assert values[np.searchsorted(cdf, q)] == pytest.approx(np.quantile(slow, q), abs=0.006)


def test_ci_is_the_percentile_of_the_counted_sample():
    # the CI read from the counts equals np.percentile of the sample those counts describe
    hp, hm, n = np.array([30, 5, 0, 12]), np.array([20, 0, 0, 12]), np.array([80, 40, 7, 24])
    ci = paired_sign_bootstrap_ci(hp, hm, n, 10_000, np.random.default_rng(3))
    order = np.argsort(n, kind="stable")
    pmf = sign_difference_pmf(hp[order], hm[order], n[order], 2 * n.max() + 1)
    counts = np.random.default_rng(3).multinomial(10_000, pmf)
    for row, j in enumerate(order):
        sample = np.repeat((np.arange(pmf.shape[1]) - n[j]) / n[j], counts[row])
        assert sample.size == 10_000
        want = np.percentile(sample, [2.5, 97.5])
        if want[0] == want[1]:  # every resample alike (0 v 0 of 7): the score interval, never zero width
            assert ci[j][0] < want[0] < ci[j][1]
            continue
        assert np.array_equal(ci[j], want)


def test_pair_ci_is_the_item_resampling_ci():
    C = blocks([(180, "RW"), (180, "WR"), (40, "RR")], K=1)
    p = adjacent_pairs(C, 0, np.array([0, 1]), seed=7, scope="s", models=("a", "b"))[0]
    assert (p.robust_items, p.higher_only, p.lower_only) == (400, 180, 180)
    slow = item_resampling(np.repeat([1.0, -1.0, 0.0], [180, 180, 40]), 20_000, 5)
    assert list(p.ci) == pytest.approx(list(np.percentile(slow, [2.5, 97.5])), abs=0.006)
    assert p.ci[1] - p.ci[0] > 0.17  # 2 * 1.96 * sqrt(0.9 / 400) = 0.186


def test_one_draw_for_all_pairs_is_deterministic_and_skips_empty_j():
    ho, lo, nj = np.array([5, 0, 30]), np.array([1, 0, 2]), np.array([40, 0, 60])
    a = pair_cis(ho, lo, nj, seed=3, scope="mmlu", n_boot=2000)
    assert np.array_equal(a, pair_cis(ho, lo, nj, seed=3, scope="mmlu", n_boot=2000), equal_nan=True)
    assert not np.array_equal(a, pair_cis(ho, lo, nj, seed=3, scope="arc", n_boot=2000), equal_nan=True)
    assert np.isnan(a[1]).all() and np.isfinite(a[[0, 2]]).all()
    assert a[2, 0] > 0  # 30 v 2 of 60: identified


def test_items_needed_by_hand():
    # v3: the smallest |J'| whose rounded split reaches p <= 0.05 under the exact sign test.
    # 10 v 4 of 40: J' = 70 gives 17.5 -> 18 v 7 (halves up), 2 * P(Bin(25, 1/2) <= 7) = 0.0433;
    # J' = 69 gives 17 v 7, 2 * P(Bin(24, 1/2) <= 7) = 0.0639 (and no smaller J' reaches it)
    assert items_needed(10, 4, 40) == 70
    assert items_needed(4, 10, 40) == 70  # symmetric in the sign of the difference
    assert items_needed(1, 0, 1) == 6  # AUDITS v3: 6 v 0, p = 1/32
    assert items_needed(5, 0, 5) == 6  # v2 said 0 for an all one-sided J
    assert items_needed(1, 0, 626) == 3443  # round(J' / 626) >= 6 from J' = 5.5 * 626 = 3443
    assert items_needed(3, 3, 50) is None and items_needed(0, 0, 0) is None
    assert items_needed(5001, 4999, 10000) == "> 10,000,000"


def test_items_needed_equals_brute_force():
    rng = np.random.default_rng(7)

    def p_at(h, lo, J, Jp):
        """The sign test's p at each scaled item count in ``Jp`` (one vectorised call)."""
        # pairs=1: the method a one-value call takes, so each p has the bits of one call
        return sign_test_p((2 * h * Jp + J) // (2 * J), (2 * lo * Jp + J) // (2 * J), pairs=1)

    def brute(h, lo, J):
        for start in range(1, 100_000, 256):  # every J' from 1 on, in order
            Jp = np.arange(start, min(start + 256, 100_000), dtype=np.int64)
            hit = np.flatnonzero(p_at(h, lo, J, Jp) <= 0.05)
            if hit.size:
                return int(Jp[hit[0]])

    for _ in range(150):
        J = int(rng.integers(1, 80))
        h = int(rng.integers(0, J + 1))
        lo = int(rng.integers(0, J - h + 1))
        if h != lo:
            assert items_needed(h, lo, J) == brute(h, lo, J), (h, lo, J)
    # above the scan-from-one estimate (4,096): the search starts at half the estimate
    for h, lo, J in [(26, 24, 100), (3, 1, 83 * 40), (51, 49, 200)]:
        got = items_needed(h, lo, J)
        assert isinstance(got, int) and got > 4096
        assert p_at(h, lo, J, np.array([got]))[0] <= 0.05
        assert (p_at(h, lo, J, np.arange(got // 2, got)) > 0.05).all()  # nothing smaller from half of it on


@pytest.mark.slow
def test_items_needed_windows_find_what_one_whole_scan_finds():
    """``items_needed`` passes over windows of sizes that provably hold no candidate; the
    scan it replaced built every size from half the estimate on, in batches as wide as the
    estimate. Both give the same answer, near-tied pairs of a 1,000-model grid included
    (answers in the millions, and over the cap)."""
    from leaderboard_audit.metrics.power import ITEMS_NEEDED_CAP, ITEMS_NEEDED_OVER, critical_values
    from statistics import NormalDist

    def whole_scan(h, lo, J, alpha=0.05):
        z = NormalDist().inv_cdf(1.0 - alpha / 2.0)
        estimate = z * z * (h / J + lo / J) / (h / J - lo / J) ** 2
        if estimate > 4 * ITEMS_NEEDED_CAP:
            return ITEMS_NEEDED_OVER
        start = 1 if estimate < 4096 else max(1, int(estimate // 2))
        batch = max(4096, int(estimate))
        while start <= ITEMS_NEEDED_CAP:
            stop = min(start + batch, ITEMS_NEEDED_CAP + 1)
            Jp = np.arange(start, stop, dtype=np.int64)
            hp, lp = (2 * h * Jp + J) // (2 * J), (2 * lo * Jp + J) // (2 * J)
            n = hp + lp
            crit = critical_values(alpha, int(n.max()))
            cand = np.flatnonzero(np.minimum(hp, lp) <= crit[n])
            for c in np.array_split(cand, max(1, cand.size // 64)):  # in order, 64 p-values a call
                hit = c[sign_test_p(hp[c], lp[c], pairs=1) <= alpha + 1e-12]
                if hit.size:
                    return int(Jp[hit[0]])
            start, batch = stop, batch * 2
        return ITEMS_NEEDED_OVER

    rng = np.random.default_rng(11)
    cases = [(953, 951, 5374), (930, 928, 5610), (975, 979, 5453), (221, 220, 1249), (3, 1, 83 * 40)]
    for _ in range(12):
        J = int(rng.integers(20, 6000))
        lo = int(rng.integers(0, J // 2))
        cases.append((lo + int(rng.integers(1, 6)), lo, J))
    for _ in range(40):
        J = int(rng.integers(1, 3000))
        h = int(rng.integers(0, J + 1))
        cases.append((h, int(rng.integers(0, J - h + 1)), J))
    for h, lo, J in cases:
        if h != lo:
            assert items_needed(h, lo, J) == whole_scan(h, lo, J), (h, lo, J)


def test_cause_follows_the_fragile_share():
    assert pair_cause(False, 0.9) is None
    assert pair_cause(True, 0.9) == "harness"
    assert pair_cause(True, 0.5) == "sampling"  # not > 0.5
    assert pair_cause(True, 0.5 + 1e-15) == "sampling"  # float noise is not a harness
    assert pair_cause(True, None) == "sampling"


def test_cause_and_items_needed_on_pairs():
    # a > b by 2 items: one robust item (a only, of 50 jointly robust) and one item a gets
    # right only under the reference: fragile share exactly 1/2 -> manufactured by sampling
    C = blocks([(1, "RW"), (49, "WW"), (1, "Ff"), (1, "FR")])  # b is fragile on item 50, wrong under ref
    p = adjacent_pairs(C, 0, np.array([0, 1]), seed=1, scope="s", models=("a", "b"))[0]
    assert (p.gap_items, p.higher_only, p.lower_only, p.robust_items) == (2, 1, 0, 50)
    assert p.fragile_share == 0.5 and p.manufactured and p.cause == "sampling"
    assert p.items_needed == 275  # v3: round(J' / 50) >= 6 from J' = 5.5 * 50
    # gap of 3 items, 2 of them fragile: harness
    C = blocks([(1, "RW"), (49, "WW"), (2, "Ff")])
    p = adjacent_pairs(C, 0, np.array([0, 1]), seed=1, scope="s", models=("a", "b"))[0]
    assert p.gap_items == 3 and p.fragile_share == pytest.approx(2 / 3) and p.cause == "harness"
    # one configuration: every item is robust, so an unidentified gap is sampling
    C = blocks([(3, "RW"), (1, "WR"), (20, "WW")], K=1)
    p = adjacent_pairs(C, 0, np.array([0, 1]), seed=1, scope="s", models=("a", "b"))[0]
    assert p.fragile_share == 0 and p.manufactured and p.cause == "sampling"
    assert p.items_needed == 100  # v3: 12.5 -> 13 v 4.17 -> 4, 2 * P(Bin(17, 1/2) <= 4) = 0.049


def test_window_around_the_mean_is_the_whole_distribution_where_it_has_mass():
    """Big pairs use a window of values around the mean (Bernstein: mass outside < 1e-40):
    the windowed pmf equals the full-support pmf there, and the full pmf has no mass outside."""
    from leaderboard_audit.metrics.bootstrap import sign_difference_window, window_half_width

    n, hp, hm = np.array([20_000, 9_000]), np.array([1_500, 4_000]), np.array([1_300, 10])
    half = window_half_width(hp, hm, n)
    assert (2 * half + 1 < n).all()  # the window is much narrower than the support
    L = 1 << int(np.ceil(np.log2(2 * half.max() + 1)))
    lo = (hp - hm) - L // 2
    win = sign_difference_window(hp, hm, n, lo, L)
    for row in range(2):
        full = sign_difference_pmf([hp[row]], [hm[row]], [n[row]], 2 * n[row] + 1)[0]
        inside = slice(lo[row] + n[row], lo[row] + n[row] + L)
        assert win[row] == pytest.approx(full[inside], abs=1e-12)  # FFT rounding at n = 20,000
        # outside: only the full transform's rounding floor (~1e-16 a cell over 40,000 cells)
        assert full.sum() - full[inside].sum() < 1e-10
    ci = paired_sign_bootstrap_ci(hp, hm, n, 10_000, np.random.default_rng(1))
    for row in range(2):  # the normal approximation's 95% interval, to the resolution of 10,000 draws
        mean = (hp[row] - hm[row]) / n[row]
        sd = np.sqrt((hp[row] + hm[row]) / n[row] - mean**2) / np.sqrt(n[row])
        assert ci[row] == pytest.approx([mean - 1.96 * sd, mean + 1.96 * sd], abs=0.1 * sd)


def test_items_needed_many_equals_one_by_one():
    """The batched scan (adjacent_pairs' path) gives each pair exactly ``items_needed``: first
    window hits, pairs needing a larger window, ties, empty J and pairs above the cap."""
    from leaderboard_audit.metrics.power import items_needed_many

    rng = np.random.default_rng(11)
    J = rng.integers(0, 3000, 700)
    h = (rng.random(700) * J * rng.random(700) * 0.4).astype(np.int64)
    lo = (rng.random(700) * J * rng.random(700) * 0.4).astype(np.int64)
    h[:20] = lo[:20]  # ties: None
    J[20:30], h[20:30], lo[20:30] = 0, 0, 0  # no jointly robust items: None
    J[30:40], h[30:40], lo[30:40] = 626, 1, 0  # 3443: the first window's last sizes
    J[40:45], h[40:45], lo[40:45] = 100, 26, 24  # above the scan-from-one estimate
    J[45:48], h[45:48], lo[45:48] = 10000, 5001, 4999  # above the cap
    one = [items_needed(int(a), int(b), int(c)) for a, b, c in zip(h, lo, J)]
    assert items_needed_many(h, lo, J) == one
    assert {type(x) for x in one} == {int, str, type(None)}
    for alpha in (0.01, 0.1):
        assert items_needed_many(h[:200], lo[:200], J[:200], alpha) == [
            items_needed(int(a), int(b), int(c), alpha) for a, b, c in zip(h[:200], lo[:200], J[:200])
        ]


@pytest.mark.parametrize("n_items", [0, 1, 7, 63, 64, 65, 130])
def test_robust_pair_counts_in_bits_equal_the_boolean_sums(n_items):
    """The word-wise popcounts (padding bits included) against the plain boolean sums, over
    all items and within a subset (a random drop's kept items)."""
    from leaderboard_audit.metrics.pairs import robust_pair_counts
    from leaderboard_audit.metrics.per_model import robust_masks

    rng = np.random.default_rng(n_items)
    C = rng.random((6, n_items, 3)) < 0.6
    C[:, : n_items // 3] = rng.random((6, 1, 1)) < 0.5  # some items robust for every model
    rc, rw, _ = robust_masks(C)
    ra = rc | rw
    hs, ls = np.array([0, 1, 2, 5, 4]), np.array([1, 2, 3, 0, 4])
    within = rng.random(n_items) < 0.7
    for w in (None, within):
        sel = np.ones(n_items, dtype=bool) if w is None else w
        J = ra[hs] & ra[ls] & sel
        want = (J.sum(1), (J & rc[hs] & ~rc[ls]).sum(1), (J & rc[ls] & ~rc[hs]).sum(1))
        got = robust_pair_counts(C, hs, ls, within=w)
        for a, b in zip(got, want):
            assert a.tolist() == b.tolist()

"""Adjacent-pair gap decomposition: the paper's Table 2 and Figure 2 (section 4.2),
with the v2 ``cause`` and the v3 pair test: the exact sign test on the jointly robust
items decides ``identified`` and ``items_needed`` (docs/spec/AUDITS.md v3, docs/audits.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .bootstrap import paired_sign_bootstrap_ci
from .exact import gt, le
from .identified import sign_test_p
from .per_model import as_words, correct_counts, derived, robust_masks
from .power import items_needed_many
from .rng import rng_for


@dataclass(frozen=True)
class PairStats:
    higher: int
    lower: int
    gap: float
    gap_items: int | float
    fragile_share: float | None
    robust_items: int
    higher_only: int
    lower_only: int
    robust_diff: float | None
    ci: tuple[float, float] | None
    robust_tie: bool
    manufactured: bool
    reversing: int
    cause: str | None = None
    items_needed: int | str | None = None
    #: exact two-sided sign test on (higher_only, lower_only), unadjusted (v3)
    p_value: float = 1.0
    #: "higher" / "lower": the model the robust items identify as better (p <= alpha); None
    identified: str | None = None


def pair_cause(manufactured: bool, fragile_share: float | None, threshold: float = 0.5) -> str | None:
    """``"harness"`` when a manufactured pair's gap rests on config-fragile items
    (fragile_share > threshold), ``"sampling"`` when it sits on robust items too few to
    tell the two apart; None for a pair that is not manufactured."""
    if not manufactured:
        return None
    return "harness" if fragile_share is not None and gt(fragile_share, threshold) else "sampling"


def pair_cis(
    higher_only: np.ndarray, lower_only: np.ndarray, robust_items: np.ndarray, *, seed: int, scope: str, n_boot: int
) -> np.ndarray:
    """95% percentile bootstrap CIs of ``(higher_only - lower_only)/|J|`` for every pair of a scope.

    Every pair of the scope from one generator keyed by (seed, "pairs", scope), vectorized
    over pairs (``bootstrap.paired_sign_bootstrap_ci``: the resampled means' histogram as
    one multinomial draw over the exact distribution). Pairs with an empty J get NaN.
    Keyed per scope, not per pair (docs/audits.md, "Determinism"): one draw for every
    pair is what makes it vectorized, and a scope's pairs are fixed by its records, so a
    CI still depends only on the records, the seed and the scope (never on test order or
    xdist). Since v3 the CI only describes ``robust_diff``; no verdict reads it.
    """
    P = len(robust_items)
    out = np.full((P, 2), np.nan)
    live = np.flatnonzero(np.asarray(robust_items) > 0)
    if live.size:
        rng = rng_for(seed, "pairs", scope)
        out[live] = paired_sign_bootstrap_ci(
            np.asarray(higher_only)[live], np.asarray(lower_only)[live], np.asarray(robust_items)[live], n_boot, rng
        )
    return out


def adjacent_pairs(
    C: np.ndarray,
    ref: int,
    order: np.ndarray,
    *,
    seed: int,
    scope: str,
    models: tuple[str, ...],
    n_boot: int = 10_000,
    fragile_threshold: float = 0.5,
    alpha: float = 0.05,
    report: bool = True,
) -> list[PairStats]:
    """Decompose each adjacent reference gap into robust and fragile parts.

    * ``J`` = items robust (correct or wrong) for both models; ``higher_only`` /
      ``lower_only`` = items of J only the higher / lower model gets right.
    * ``fragile_share = (gap - (higher_only - lower_only)/N) / gap`` (None when gap = 0).
    * ``robust_diff = (higher_only - lower_only)/|J|`` with a 95% percentile bootstrap
      CI over J's items (multinomial over the three counts, all pairs of the scope in
      one draw seeded by (seed, scope): see ``pair_cis``).
    * v3: ``p_value`` = exact two-sided sign test on (higher_only, lower_only), one test
      per printed pair (unadjusted); ``identified`` = ``p <= alpha`` in the direction of
      the larger count; ``robust_tie = not identified``; ``manufactured = robust_tie and
      gap != 0``.
    * ``reversing = #{k: acc[l,k] > acc[h,k]}``.
    * ``cause`` (``pair_cause``, v2) and ``items_needed`` (``power.items_needed``, v3).

    ``report=False`` (a reduced set of the leave-one-out check, whose verdicts only are
    compared) leaves out what no verdict reads: the CIs and ``items_needed`` (None).

    ``models`` names the models (kept for the callers' signature; the generator key is
    the scope, so a pair's CI is a function of the records, the seed and the scope's order).
    """
    return pairs_from_counts(
        lambda hs, ls: robust_pair_counts(C, hs, ls),
        correct_counts(C),
        C.shape[1],
        ref,
        order,
        seed=seed,
        scope=scope,
        n_boot=n_boot,
        fragile_threshold=fragile_threshold,
        alpha=alpha,
        report=report,
    )


PairCounter = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


def robust_words(C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(robust-correct, robust either way) masks of ``C`` as words (``as_words``), once per
    read-only array (``per_model.derived``)."""

    def compute() -> tuple[np.ndarray, np.ndarray]:
        rc, rw, _ = robust_masks(C)
        return as_words(rc), as_words(rc | rw)

    return derived(C, "robust_words", compute)


def robust_pair_counts(
    C: np.ndarray, hs: np.ndarray, ls: np.ndarray, within: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(|J|, higher_only, lower_only) of the pairs (hs[j], ls[j]) over ``C``'s items, or over
    the items the boolean ``within`` marks (a random drop's kept items: ``checks.drop_scope``).

    ``J`` = items robust (right under every config or under none) for both models;
    ``higher_only`` = items of J the higher model gets right under every config and the
    lower under none, ``lower_only`` the reverse. Sums over items, so the items' order is
    irrelevant."""
    rc, ra = robust_words(C)
    J = ra[hs] & ra[ls]
    if within is not None:
        J &= as_words(within[None, :])[0]
    return (
        np.bitwise_count(J).sum(axis=1, dtype=np.int64),
        np.bitwise_count(J & rc[hs] & ~rc[ls]).sum(axis=1, dtype=np.int64),
        np.bitwise_count(J & rc[ls] & ~rc[hs]).sum(axis=1, dtype=np.int64),
    )


def pairs_from_counts(
    pair_counts: PairCounter,
    counts: np.ndarray,
    N: int,
    ref: int,
    order: np.ndarray,
    *,
    seed: int,
    scope: str,
    n_boot: int = 10_000,
    fragile_threshold: float = 0.5,
    alpha: float = 0.05,
    report: bool = True,
) -> list[PairStats]:
    """``adjacent_pairs`` from what it reads of the tensor: ``pair_counts(hs, ls)`` (what
    ``robust_pair_counts`` gives), the correct counts (models x configs) and the number of
    items. A random drop of ``mix`` (``checks.drop_scope``) has them from its parent's
    without copying the tensor."""
    hs, ls = np.asarray(order[:-1], dtype=np.intp), np.asarray(order[1:], dtype=np.intp)
    nJ, ho, lo = pair_counts(hs, ls)
    acc = counts / N
    cis = pair_cis(ho, lo, nJ, seed=seed, scope=scope, n_boot=n_boot) if report else None
    pvals = sign_test_p(ho, lo)
    needed = items_needed_many(ho, lo, nJ, alpha) if report else [None] * len(hs)
    out = []
    for j, (h, l) in enumerate(zip(hs.tolist(), ls.tolist())):
        n_j, h_o, l_o = int(nJ[j]), int(ho[j]), int(lo[j])
        gap = float(acc[h, ref] - acc[l, ref])
        # a sum of outcomes on graded records (docs/audits.md, "Graded outcomes"): the robust
        # part is still the won items', the fragile share what they do not account for
        d = counts[h, ref] - counts[l, ref]
        gap_items = int(d) if counts.dtype.kind != "f" else (int(d) if float(d).is_integer() else float(d))
        fragile_share = None if gap_items == 0 else (gap_items - (h_o - l_o)) / gap_items
        p = float(pvals[j])
        if n_j == 0:
            diff, ci = None, None
        else:
            diff = (h_o - l_o) / n_j
            ci = (float(cis[j, 0]), float(cis[j, 1])) if cis is not None else None
        side = None
        if le(p, alpha) and h_o != l_o:
            side = "higher" if h_o > l_o else "lower"
        tie = side is None
        manufactured = bool(tie and gap_items != 0)
        out.append(
            PairStats(
                higher=h,
                lower=l,
                gap=gap,
                gap_items=gap_items,
                fragile_share=fragile_share,
                robust_items=n_j,
                higher_only=h_o,
                lower_only=l_o,
                robust_diff=diff,
                ci=ci,
                robust_tie=tie,
                manufactured=manufactured,
                reversing=int((acc[l] > acc[h]).sum()),
                cause=pair_cause(manufactured, fragile_share, fragile_threshold),
                items_needed=needed[j],
                p_value=p,
                identified=side,
            )
        )
    return out

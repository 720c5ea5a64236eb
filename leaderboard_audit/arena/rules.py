"""The aggregation rules an arena leaderboard could print (docs/audits.md, "Judge and
arena leaderboards"): each turns the same battles into one score per model.

* ``bt_ties_dropped``, ``bt_ties_halved``, ``bt_bothbad_halved``: Bradley-Terry, the
  maximum-likelihood strengths of ``P(i beats j) = 1 / (1 + exp(theta_j - theta_i))``,
  fitted with scipy's L-BFGS-B (analytic gradient, ridge ``RIDGE``), shown on the Elo
  scale ``1000 + 400 / ln 10 * theta`` (mean 1000). Ties are dropped; ties count half
  a win to each side (both-bad ties dropped); or both kinds of tie count half (the
  Arena's own rule: its ``compute_mle_elo`` gives every tie 0.5).
* ``elo_time``: online Elo, K = 4, base 10, scale 400, start 1000, one update per battle
  in time order (ties 0.5). Needs per-battle input with time stamps.
* ``elo_shuffled``: the same over ``n_shuffles`` random battle orders, averaged.
* ``bt_style_control``: Bradley-Terry over the battles with the style covariates of
  FastChat's ``conv_metadata`` (answer tokens, headers, lists, bold; ``style_features``).
* ``mean_pairwise``: the mean, over the opponents a model met, of its score share
  against each (wins + ties / 2) / battles; every opponent weighs the same.
* ``win_share``: (wins + ties / 2) / battles over all of a model's battles.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .data import A_WINS, B_WINS, BOTH_BAD, TIE, Battles, PairCounts

RIDGE = 1e-4  # L2 on theta: keeps a model that never lost finite; negligible beside 1e3+ battles
ELO_K = 4.0
ELO_SCALE = 400.0 / math.log(10.0)
N_SHUFFLES = 10
PRINTED_RULE = "bt_bothbad_halved"  # the rule the Arena prints: the reference configuration


@dataclass(frozen=True)
class Rule:
    name: str
    description: str
    needs: str = "counts"  # "counts", "time" (per-battle time order) or "style" (per-battle style features)


RULES: tuple[Rule, ...] = (
    Rule("bt_ties_dropped", "Bradley-Terry, ties dropped"),
    Rule("bt_ties_halved", "Bradley-Terry, ties half a win each (both-bad ties dropped)"),
    Rule("bt_bothbad_halved", "Bradley-Terry, every tie half a win each (the Arena's rule)"),
    Rule("elo_time", "online Elo, K=4, in time order", needs="time"),
    Rule("elo_shuffled", f"online Elo, K=4, mean over {N_SHUFFLES} shuffled orders"),
    Rule("bt_style_control", "Bradley-Terry with style covariates (the Arena's style control)", needs="style"),
    Rule("mean_pairwise", "mean pairwise win rate (each opponent met weighs the same)"),
    Rule("win_share", "raw win share over all battles"),
)


def outcome_weights(counts: np.ndarray, ties: str) -> tuple[np.ndarray, np.ndarray]:
    """(first model's, second model's) weighted wins per pair; ``ties``: "dropped",
    "halved" (ordinary ties halved, both-bad dropped) or "all_halved"."""
    c = counts.astype(float)
    w, lo = c[:, 0].copy(), c[:, 1].copy()
    if ties == "halved":
        w += c[:, 2] / 2
        lo += c[:, 2] / 2
    elif ties == "all_halved":
        w += (c[:, 2] + c[:, 3]) / 2
        lo += (c[:, 2] + c[:, 3]) / 2
    elif ties != "dropped":
        raise ValueError(f"ties={ties!r}: expected 'dropped', 'halved' or 'all_halved'")
    return w, lo


def bradley_terry(
    i: np.ndarray,
    j: np.ndarray,
    wi: np.ndarray,
    wj: np.ndarray,
    M: int,
    init: np.ndarray | None = None,
    xtol: float = 1e-7,
) -> np.ndarray:
    """Bradley-Terry strengths theta (natural-log scale, mean 0) by L-BFGS-B.

    Maximises ``sum_p wi log s(d) + wj log s(-d)``, ``d = theta_i - theta_j``, minus
    ``RIDGE / 2 |theta|^2``; ``init`` warm-starts the optimiser (the bootstrap passes
    the full-data fit, with ``xtol`` 1e-5: within 0.1 Elo point of a 1e-7 fit on the
    shipped counts, 35% less time)."""
    from scipy.optimize import minimize
    from scipy.special import expit, log_expit

    def f(t: np.ndarray) -> tuple[float, np.ndarray]:
        d = t[i] - t[j]
        ll = np.sum(wi * log_expit(d)) + np.sum(wj * log_expit(-d))  # no BLAS: its threads spin on busy cores
        p = expit(d)
        g = wi * (1 - p) - wj * p
        grad = np.bincount(i, g, M) - np.bincount(j, g, M)
        return -ll + 0.5 * RIDGE * float(np.sum(t * t)), -grad + RIDGE * t

    n = wi + wj

    def hessp(t: np.ndarray, v: np.ndarray) -> np.ndarray:
        p = expit(t[i] - t[j])
        h = n * p * (1 - p) * (v[i] - v[j])
        return np.bincount(i, h, M) - np.bincount(j, h, M) + RIDGE * v

    x0 = np.zeros(M) if init is None else np.asarray(init, dtype=float)
    res = minimize(f, x0, jac=True, hessp=hessp, method="Newton-CG", options={"maxiter": 200, "xtol": xtol})
    theta = res.x
    return theta - theta.mean()


def _spd_inverse(H: np.ndarray) -> np.ndarray:
    """The inverse of a symmetric positive definite matrix by Gauss-Jordan elimination
    (no pivoting needed), in numpy's elementwise loops: LAPACK's would start OpenBLAS
    threads that go on spinning after the call."""
    A = np.concatenate([H.astype(float), np.eye(len(H))], axis=1)
    for k in range(len(H)):
        A[k] /= A[k, k]
        col = A[:, k].copy()
        col[k] = 0.0
        A -= col[:, None] * A[k][None, :]
    return A[:, len(H) :]


def bradley_terry_batch(
    i: np.ndarray,
    j: np.ndarray,
    wi: np.ndarray,
    wj: np.ndarray,
    M: int,
    init: np.ndarray,
    tol: float = 1e-9,
    max_iter: int = 100,
) -> np.ndarray:
    """``bradley_terry`` for B weight vectors near one another (``wi``, ``wj``: B x pairs; the
    bootstrap's resamples) -> B x M strengths, mean 0.

    Newton's method with one Hessian for every row and step (the chord method): the
    Hessian ``RIDGE I + sum_p n_p s(d_p)(1 - s(d_p)) (e_i - e_j)(e_i - e_j)^T`` at ``init``
    with the rows' mean ``n``, inverted once; each step is ``t -= grad(t) H^-1``, until
    every coordinate moves less than ``tol``. The objective is strictly convex and each
    row's Hessian is near that one, so the steps contract (linearly); a row still moving
    after ``max_iter`` steps is fitted by ``bradley_terry``. No BLAS or LAPACK call
    (``einsum``'s own loops, ``_spd_inverse``): OpenBLAS threads spin on busy cores, and two
    such fits side by side on 2 cores took 61 s with a Hessian solved by LAPACK per row and
    step, 5 s single-threaded. The inverse only steers the steps: the fit is where the
    gradient is 0, whatever its rounding.
    1,000 resamples of the shipped Arena counts: 22 s one Newton-CG fit at a time."""
    from scipy.special import expit

    wi, wj = np.atleast_2d(wi), np.atleast_2d(wj)
    x0 = np.asarray(init, dtype=float)
    p0 = expit(x0[i] - x0[j])
    h = (wi + wj).mean(axis=0) * p0 * (1 - p0)
    H = RIDGE * np.eye(M)
    np.add.at(H, (i, i), h)
    np.add.at(H, (j, j), h)
    np.add.at(H, (i, j), -h)
    np.add.at(H, (j, i), -h)
    H_inv = _spd_inverse(H)
    B = wi.shape[0]
    t = np.repeat(x0[None, :], B, axis=0)
    live = np.arange(B)
    rows = np.arange(B)[:, None] * M  # each row's own bins, for one bincount over all rows
    gi, gj = (rows + i).ravel(), (rows + j).ravel()
    for _ in range(max_iter):
        ta, a, b = t[live], wi[live], wj[live]
        p = expit(ta[:, i] - ta[:, j])
        g = (a * (1 - p) - b * p).ravel()
        n = len(live)
        grad = RIDGE * ta - (np.bincount(gi[: n * len(i)], g, n * M) - np.bincount(gj[: n * len(i)], g, n * M)).reshape(
            n, M
        )
        step = np.einsum("bj,jk->bk", grad, H_inv)
        t[live] = ta - step
        live = live[np.abs(step).max(axis=1) >= tol]
        if live.size == 0:
            break
    for k in live:
        t[k] = bradley_terry(i, j, wi[k], wj[k], M, x0)
    return t - t.mean(axis=1, keepdims=True)


def bt_scores(pc: PairCounts, ties: str, init: np.ndarray | None = None) -> np.ndarray:
    """Bradley-Terry on the Elo scale (1000 + 400 / ln 10 * theta)."""
    wi, wj = outcome_weights(pc.counts, ties)
    return 1000.0 + ELO_SCALE * bradley_terry(pc.i, pc.j, wi, wj, len(pc.models), init)


def online_elo(a: np.ndarray, b: np.ndarray, score_a: np.ndarray, M: int, k: float = ELO_K) -> np.ndarray:
    """Online Elo over the battles in the given order (a pure-Python loop: 0.3 s per
    1.67M battles; the update is sequential by definition)."""
    r = [1000.0] * M
    for x, y, s in zip(a.tolist(), b.tolist(), score_a.tolist()):
        rx, ry = r[x], r[y]
        d = k * (s - 1.0 / (1.0 + 10.0 ** ((ry - rx) / 400.0)))
        r[x] = rx + d
        r[y] = ry - d
    return np.asarray(r)


def style_features(bt: Battles) -> np.ndarray:
    """Per battle and feature, ``(x_a - x_b) / (x_a + x_b)`` (0 when both are 0),
    standardised over the battles; a constant feature is left out (FastChat's
    ``construct_style_matrices`` with every ratio applied)."""
    assert bt.style is not None
    a, b = bt.style[:, 0, :], bt.style[:, 1, :]
    tot = a + b
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(tot > 0, (a - b) / np.where(tot > 0, tot, 1), 0.0)
    sd = r.std(axis=0)
    keep = sd > 0
    return (r[:, keep] - r[:, keep].mean(axis=0)) / sd[keep]


def bt_style_control(bt: Battles) -> tuple[np.ndarray, np.ndarray]:
    """Bradley-Terry with style covariates: ``P(a beats b) = s(theta_a - theta_b + f . gamma)``
    over the battles (a tie, either kind, half a win each, as the Arena does), fitted by
    scipy's Newton-CG with ridge ``RIDGE`` on theta. Returns (Elo-scale scores, gamma)."""
    from scipy.optimize import minimize
    from scipy.special import expit, log_expit

    F = style_features(bt)
    M, P = len(bt.models), F.shape[1]
    a, b, y = bt.a.astype(np.intp), bt.b.astype(np.intp), _score_a(bt.outcome)

    def z_of(w: np.ndarray) -> np.ndarray:
        return w[a] - w[b] + F @ w[M:] if P else w[a] - w[b]

    def f(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = z_of(w)
        loss = -float(np.sum(y * log_expit(z) + (1 - y) * log_expit(-z)))
        g = expit(z) - y
        grad = np.concatenate([np.bincount(a, g, M) - np.bincount(b, g, M), F.T @ g])
        grad[:M] += RIDGE * w[:M]
        return loss + 0.5 * RIDGE * float(np.sum(w[:M] ** 2)), grad

    def hessp(w: np.ndarray, v: np.ndarray) -> np.ndarray:
        p = expit(z_of(w))
        h = p * (1 - p) * z_of(v)
        out = np.concatenate([np.bincount(a, h, M) - np.bincount(b, h, M), F.T @ h])
        out[:M] += RIDGE * v[:M]
        return out

    res = minimize(f, np.zeros(M + P), jac=True, hessp=hessp, method="Newton-CG", options={"xtol": 1e-7})
    theta = res.x[:M]
    return 1000.0 + ELO_SCALE * (theta - theta.mean()), res.x[M:]


def _score_a(outcome: np.ndarray) -> np.ndarray:
    s = np.full(len(outcome), 0.5)
    s[outcome == A_WINS] = 1.0
    s[outcome == B_WINS] = 0.0
    return s


def expand(pc: PairCounts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The battles behind pair counts, in pair order: (a, b, score of a)."""
    reps = pc.counts.reshape(-1)
    a = np.repeat(np.repeat(pc.i, 4), reps)
    b = np.repeat(np.repeat(pc.j, 4), reps)
    codes = np.repeat(np.tile(np.array([A_WINS, B_WINS, TIE, BOTH_BAD]), len(pc.i)), reps)
    return a, b, _score_a(codes)


def elo_shuffled(pc: PairCounts, seed: int, n_shuffles: int = N_SHUFFLES) -> np.ndarray:
    """Mean online-Elo rating over ``n_shuffles`` random orders of the battles."""
    a, b, s = expand(pc)
    rng = np.random.default_rng(seed)
    total = np.zeros(len(pc.models))
    for _ in range(n_shuffles):
        perm = rng.permutation(len(a))
        total += online_elo(a[perm], b[perm], s[perm], len(pc.models))
    return total / n_shuffles


def elo_time(bt: Battles) -> np.ndarray:
    order = bt.time_order()
    return online_elo(bt.a[order], bt.b[order], _score_a(bt.outcome[order]), len(bt.models))


def pair_share(pc: PairCounts) -> tuple[np.ndarray, np.ndarray]:
    """Per pair: the first model's score share (wins + ties / 2) / battles, and battles."""
    n = pc.counts.sum(axis=1).astype(float)
    w, _ = outcome_weights(pc.counts, "all_halved")
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, w / np.where(n > 0, n, 1), np.nan), n


def mean_pairwise(pc: PairCounts) -> np.ndarray:
    s, n = pair_share(pc)
    M, met = len(pc.models), n > 0
    i, j, s = pc.i[met], pc.j[met], s[met]
    total = np.bincount(i, s, M) + np.bincount(j, 1 - s, M)
    k = np.bincount(i, None, M) + np.bincount(j, None, M)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(k > 0, total / np.where(k > 0, k, 1), np.nan)


def win_share(pc: PairCounts) -> np.ndarray:
    w, lo = outcome_weights(pc.counts, "all_halved")
    M = len(pc.models)
    got = np.bincount(pc.i, w, M) + np.bincount(pc.j, lo, M)
    n = pc.battles_of().astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, got / np.where(n > 0, n, 1), np.nan)


BT_TIES = {"bt_ties_dropped": "dropped", "bt_ties_halved": "halved", "bt_bothbad_halved": "all_halved"}


def rule_scores(
    pc: PairCounts, battles: Battles | None, seed: int, n_shuffles: int = N_SHUFFLES
) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Every rule's scores ({rule: M scores}) and, for a rule the input cannot give, why
    it was skipped ({rule: reason})."""
    out: dict[str, np.ndarray] = {}
    skipped: dict[str, str] = {}
    compute: dict[str, Callable[[], np.ndarray]] = {
        **{name: (lambda t=t: bt_scores(pc, t)) for name, t in BT_TIES.items()},
        "elo_shuffled": lambda: elo_shuffled(pc, seed, n_shuffles),
        "mean_pairwise": lambda: mean_pairwise(pc),
        "win_share": lambda: win_share(pc),
    }
    for rule in RULES:
        if rule.needs == "style":
            if battles is None or battles.style is None:
                skipped[rule.name] = "the battles carry no style features (FastChat's conv_metadata)"
            else:
                out[rule.name] = bt_style_control(battles)[0]
            continue
        if rule.needs == "time":
            if battles is None:
                skipped[rule.name] = "per-pair counts carry no battle order (give the per-battle file)"
            elif battles.tstamp is None:
                skipped[rule.name] = "the battles carry no time stamps ('tstamp')"
            else:
                out[rule.name] = elo_time(battles)
            continue
        out[rule.name] = compute[rule.name]()
    return out, skipped


__all__ = [
    "BT_TIES",
    "ELO_K",
    "N_SHUFFLES",
    "PRINTED_RULE",
    "RIDGE",
    "RULES",
    "Rule",
    "bradley_terry",
    "bt_scores",
    "bt_style_control",
    "elo_shuffled",
    "elo_time",
    "expand",
    "mean_pairwise",
    "online_elo",
    "outcome_weights",
    "pair_share",
    "rule_scores",
    "style_features",
    "win_share",
]

"""A deliberately simple second implementation of AUDITS.md: plain Python loops over
lists, item resampling for the bootstrap. Slow, obvious, independent of the package."""

from __future__ import annotations

import math
import random


def acc(C, m, k):
    return sum(C[m][i][k] for i in range(len(C[m]))) / len(C[m])


def fragile(C, m, i):
    row = C[m][i]
    return 0 < sum(row) < len(row)


def robust_correct(C, m, i):
    return all(C[m][i])


def robust_wrong(C, m, i):
    return not any(C[m][i])


def per_model(C, ref):
    out = []
    for m in range(len(C)):
        K = len(C[m][0])
        accs = [acc(C, m, k) for k in range(K)]
        N = len(C[m])
        ref_right = [i for i in range(N) if C[m][i][ref]]
        lucky = sum(1 for i in ref_right if fragile(C, m, i))
        out.append(
            {
                "reference": accs[ref],
                "min": min(accs),
                "max": max(accs),
                "spread": max(accs) - min(accs),
                "robust": sum(robust_correct(C, m, i) for i in range(N)) / N,
                "optimistic": sum(any(C[m][i]) for i in range(N)) / N,
                "config_lucky": lucky / len(ref_right) if ref_right else None,
            }
        )
    return out


def order(C, ref, names):
    return sorted(range(len(C)), key=lambda m: (-acc(C, m, ref), names[m]))


def pair(C, ref, h, l, n_boot=4000, seed=0):
    N = len(C[h])
    K = len(C[h][0])
    J = [i for i in range(N) if not fragile(C, h, i) and not fragile(C, l, i)]
    ho = sum(1 for i in J if robust_correct(C, h, i) and not robust_correct(C, l, i))
    lo = sum(1 for i in J if robust_correct(C, l, i) and not robust_correct(C, h, i))
    gap = acc(C, h, ref) - acc(C, l, ref)
    gap_items = round(gap * N)
    fs = None if gap_items == 0 else (gap - (ho - lo) / N) / gap
    if J:
        vals = [
            (1 if i_h else 0) - (1 if i_l else 0)
            for i_h, i_l in ((robust_correct(C, h, i), robust_correct(C, l, i)) for i in J)
        ]
        rng = random.Random(seed)
        boots = sorted(sum(rng.choice(vals) for _ in J) / len(J) for _ in range(n_boot))
        ci = (boots[int(0.025 * n_boot)], boots[int(0.975 * n_boot) - 1])
        diff = (ho - lo) / len(J)
        tie = ci[0] <= 0 <= ci[1]
    else:
        ci, diff, tie = None, None, True
    rev = sum(1 for k in range(K) if acc(C, l, k) > acc(C, h, k))
    return {
        "gap": gap,
        "gap_items": gap_items,
        "fragile_share": fs,
        "robust_items": len(J),
        "higher_only": ho,
        "lower_only": lo,
        "robust_diff": diff,
        "ci": ci,
        "robust_tie": tie,
        "manufactured": tie and gap_items != 0,
        "reversing": rev,
    }


def kendall_b(x, y):
    n = len(x)
    conc = disc = tx = ty = 0
    for a in range(n):
        for b in range(a + 1, n):
            dx = (x[a] > x[b]) - (x[a] < x[b])
            dy = (y[a] > y[b]) - (y[a] < y[b])
            if dx and dy:
                conc += dx == dy
                disc += dx != dy
            elif dx:
                tx += 1
            elif dy:
                ty += 1
    den = math.sqrt((conc + disc + tx) * (conc + disc + ty))
    return None if den == 0 else (conc - disc) / den


def champions(C, ref, names):
    M, K = len(C), len(C[0][0])
    per = []
    winners_all = set()
    outright = set()
    top3 = set()
    ranks = [[0] * K for _ in range(M)]
    for k in range(K):
        accs = [acc(C, m, k) for m in range(M)]
        best = max(accs)
        win = [m for m in range(M) if accs[m] == best]
        rest = [accs[m] for m in range(M) if m not in win]
        margin = best - max(rest) if rest else None
        per.append((sorted(names[m] for m in win), margin))
        winners_all |= set(win)
        if len(win) == 1:
            outright.add(win[0])
        for m in range(M):
            ranks[m][k] = 1 + sum(1 for a in accs if a > accs[m])
            if ranks[m][k] <= 3:
                top3.add(m)
    taus = [
        kendall_b([acc(C, m, ref) for m in range(M)], [acc(C, m, k) for m in range(M)]) for k in range(K) if k != ref
    ]
    taus = [t for t in taus if t is not None]
    return {
        "set": sorted(names[m] for m in winners_all),
        "outright": sorted(names[m] for m in outright),
        "top3": sorted(names[m] for m in top3),
        "per_config": per,
        "rank_range": {names[m]: [min(ranks[m]), max(ranks[m])] for m in range(M)},
        "tau_mean": sum(taus) / len(taus) if taus else None,
        "tau_min": min(taus) if taus else None,
    }


def pearson(x, y):
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return None if sxx == 0 or syy == 0 else sxy / math.sqrt(sxx * syy)


def disc_and_fragility(C, ref):
    M, N = len(C), len(C[0])
    refacc = [acc(C, m, ref) for m in range(M)]
    disc = []
    for i in range(N):
        r = pearson([C[m][i][ref] for m in range(M)], refacc)
        disc.append(None if r is None else round(r, 12))
    frag = [sum(fragile(C, m, i) for m in range(M)) / M for i in range(N)]
    return disc, frag


def axes(C, groups):
    M, N = len(C), len(C[0])
    return {a: [sum(all(C[m][i][k] for k in g) for i in range(N)) / N for m in range(M)] for a, g in groups.items()}


def brittleness(C):
    out = []
    for m in range(len(C)):
        rows = C[m]
        K = len(rows[0])
        means = [sum(r) / K for r in rows]
        mu = sum(means) / len(means)
        v_item = sum((x - mu) ** 2 for x in means) / len(means)
        v_prompt = sum(sum((v - mr) ** 2 for v in r) / K for r, mr in zip(rows, means)) / len(rows)
        v = v_item + v_prompt
        out.append({"v_item": v_item, "v_prompt": v_prompt, "brittleness": v_prompt / v if v else 0.0})
    return out


def identified(C, alpha=0.05):
    """The identified order by loops: sign test via scipy's binomtest, Holm's step-down
    as written in Holm (1979), Kahn layering by sets."""
    from scipy.stats import binomtest

    M, N = len(C), len(C[0])
    rc = [[robust_correct(C, m, i) for i in range(N)] for m in range(M)]
    rw = [[robust_wrong(C, m, i) for i in range(N)] for m in range(M)]
    tests = []
    for a in range(M):
        for b in range(a + 1, M):
            a_only = sum(1 for i in range(N) if rc[a][i] and rw[b][i])
            b_only = sum(1 for i in range(N) if rc[b][i] and rw[a][i])
            n = a_only + b_only
            p = binomtest(a_only, n, 0.5).pvalue if n else 1.0
            tests.append((p, a, b, a_only, b_only))
    order = sorted(range(len(tests)), key=lambda j: tests[j][0])
    m = len(tests)
    edges = set()
    for step, j in enumerate(order):
        p, a, b, a_only, b_only = tests[j]
        if p > alpha / (m - step):
            break
        edges.add((a, b) if a_only > b_only else (b, a))
    tiers, left = [], set(range(M))
    while left:
        layer = {v for v in left if not any((u, v) in edges for u in left)}
        layer = layer or set(left)
        tiers.append(sorted(layer))
        left -= layer
    winner = [a for a in range(M) if all((a, b) in edges for b in range(M) if b != a)]
    return {
        "edges": sorted(edges),
        "tiers": tiers,
        "winner": winner[0] if winner else None,
        "p": {(a, b): p for p, a, b, _, _ in tests},
        "only": {(a, b): (ao, bo) for _, a, b, ao, bo in tests},
    }


def exact_disc_order_keys(C, ref):
    """Point-biserial discrimination of every item as an exact sortable key
    ``(sign, sign * r^2)`` in Fractions (None when undefined): equal keys are equal
    correlations, with no float noise."""
    from fractions import Fraction

    M, N = len(C), len(C[0])
    x = [Fraction(sum(C[m][i][ref] for i in range(N)), N) for m in range(M)]
    mx = sum(x, Fraction(0)) / M
    keys = []
    for i in range(N):
        y = [C[m][i][ref] for m in range(M)]
        my = Fraction(sum(y), M)
        sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
        sxx = sum((a - mx) ** 2 for a in x)
        syy = sum((b - my) ** 2 for b in y)
        if sxx == 0 or syy == 0:
            keys.append(None)
            continue
        sign = (sxy > 0) - (sxy < 0)
        keys.append((sign, sign * sxy * sxy / (sxx * syy)))
    return keys

"""What a budgeted collection costs and settles (issue 44, item 5; docs/collect.md, "Budgeted collection").

Replays the budgeted plan (collect/budget.py) on fixtures/real, fixtures/demo and two
simulated paper-sized grids (12 x 3,679 x 26: ``paper_sized_spec`` as it is, and with
paper-like robust shares) at budgets 0.05 / 0.1 / 0.2 / 0.3, several
seeds each, and reports per budget:

* the cells used (share of the full grid's cells);
* the share of (model, item) pairs whose robust status the observed cells decide
  (a failure seen, or all K configurations seen right), and that every decided status
  agrees with the full grid (it must: they are exact);
* the share of models whose pooled band (max minus min accuracy over configurations) is
  decided above or below 0.02 and 0.05 by bounds counting unknown cells both ways
  (metrics/incomplete.py), contradictions counted with the statuses' (must be 0);

and per grid the share of cells needed to know every (model, item)'s robust status exactly:
the plan at budget 1 (it stops once every status is known), against two references: the
same rounds with the configurations in a random order per pair (no flip estimate), and an
oracle that knows which configuration fails first (the floor for any order).

With ``--verdicts``, the verdict level instead (docs/collect.md, "What the verdicts decide
at a budget"): on fixtures/real, fixtures/demo, the release-format fixture and the two
simulated grids, at budgets 0.05 / 0.1 / 0.2 / 0.3 and 1 (the plan stops once every robust
status is known), the replay's audit against the full grid's: the share of verdicts
identical (an undecided verdict counts as different; skipped ones, the same on both, are
left out), the decided verdicts that contradict the full grid, and the coverage of the 95%
intervals of the estimates (each model's pooled robust accuracy) over ``--cover-seeds``
replays. The plans have the verdict rounds (collect/verdict_plan.py) unless
``--no-verdict-rounds``.

With ``--board``, the published board of each replay (``board_run``): printed or left out
(the design sample must hold half the items), and the share of printed scores inside the
full grid's own 95% CI, at the default plan and at plans that spend nearly everything on the
uniform sample.

Not a test and not timed: ``python benchmarks/bench_budget.py [--seeds N] [--verdicts
[--audit-seeds N] [--cover-seeds N]] [--board]`` prints Markdown tables.
"""

from __future__ import annotations

import argparse
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BUDGETS = (0.05, 0.1, 0.2, 0.3)
EXACT_AT = (0.1, 0.2)


def grids() -> list[tuple[str, object]]:
    from leaderboard_audit.records import load_records
    from leaderboard_audit.records.simulate import paper_sized_spec, simulate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [
            ("fixtures/real", load_records(ROOT / "fixtures" / "real")),
            ("fixtures/demo", load_records(ROOT / "fixtures" / "demo")),
            ("simulated paper-sized", simulate(paper_sized_spec())),
            # paper-like shares: robust accuracy at most 0.175 (paper: at most 0.215), 80% of
            # credited answers fragile (paper: 85%)
            ("simulated paper-like", simulate(replace(paper_sized_spec(), robust_share=0.06, item_noise=2.2))),
        ]


def oracle_cost(C: np.ndarray, ref: int) -> int:
    """Cells an order that knows the first failing config needs: the reference everywhere,
    one more cell per (model, item) the reference gets right that is not robust, K - 1 per robust one."""
    M, N, K = C.shape
    base = C[:, :, ref]
    robust = C.all(axis=2)
    return M * N + int((base & ~robust).sum()) + (K - 1) * int(robust.sum())


def random_order_cost(C: np.ndarray, ref: int, seed: int, sample: np.ndarray) -> int:
    """Cells to know every robust status with the same random sample of items (every config)
    and, elsewhere, the configs in a random order per (model, item)."""
    M, N, K = C.shape
    rng = np.random.default_rng(seed)
    others = np.array([k for k in range(K) if k != ref])
    perm = np.argsort(rng.random((M, N, K - 1)), axis=2)
    seq = np.take_along_axis(C[:, :, others], perm, axis=2)  # answers in the drawn order
    first_fail = np.where((~seq).any(axis=2), (~seq).argmax(axis=2) + 1, K - 1)
    first_fail[:, sample] = K - 1  # the sample's items: every config
    return M * N + int(first_fail[C[:, :, ref] | np.isin(np.arange(N), sample)[None, :]].sum())


def band_sides(p, true_band: np.ndarray) -> tuple[tuple[float, float], int]:
    """Share of models whose pooled band is decided above or below 0.02 and 0.05 (the band
    check's default thresholds) by the bounds, and how many decided sides contradict the
    full grid (must be 0)."""
    from leaderboard_audit.metrics.incomplete import accuracy_bounds, band_bounds, side

    lo, hi = band_bounds(*accuracy_bounds(p.correct, np.where(p.observed, 0, 1)))
    shares, wrong = [], 0
    for t in (0.02, 0.05):
        s = side(lo, hi, t)
        shares.append(float((s != -1).mean()))
        wrong += int(((s == 1) & (true_band <= t)).sum() + ((s == 0) & (true_band > t)).sum())
    return (shares[0], shares[1]), wrong


def run(seeds: int) -> str:
    from leaderboard_audit.collect.budget import ROBUST, UNDECIDED, BudgetError, plan

    out = [
        "| grid | M x N x K | budget | cells used (share) | random sample (items) | robust status decided | decided but wrong "
        "| band side decided (0.02 / 0.05) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    exact = [
        "| grid | robust share | random sample (items) | robust-status-first order | random config order | "
        "oracle order (floor, no sample) | full grid |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, rec in grids():
        C = np.asarray(rec.correct)
        ref = rec.grid.reference_index
        M, N, K = C.shape
        total = M * N * K
        truth = C.all(axis=2)
        acc = C.mean(axis=1)
        true_band = acc.max(axis=1) - acc.min(axis=1)

        def answer(m, i, k, C=C):
            return C[m, i, k]

        for b in BUDGETS:
            used, decided, wrong, sample, bands = [], [], 0, [], []
            try:
                for s in range(seeds):
                    p = plan(answer, C.shape, ref, b, seed=s)
                    used.append(p.cells / total)
                    decided.append(float((p.status != UNDECIDED).mean()))
                    wrong += int(((p.status == ROBUST) != truth)[p.status != UNDECIDED].sum())
                    sample.append(len(p.sample))
                    b_dec, b_wrong = band_sides(p, true_band)
                    bands.append(b_dec)
                    wrong += b_wrong
            except BudgetError:
                out.append(
                    f"| {name} | {M} x {N} x {K} | {b:g} | below the reference round (1/K = {1 / K:.3f}) | | | | |"
                )
                continue
            out.append(
                f"| {name} | {M} x {N} x {K} | {b:g} | {np.mean(used):.1%} | {np.mean(sample):.0f} | "
                f"{np.mean(decided):.1%} (min {np.min(decided):.1%}) | {wrong} | "
                f"{np.mean([x[0] for x in bands]):.0%} / {np.mean([x[1] for x in bands]):.0%} |"
            )
        for b in EXACT_AT:  # the sample a budget-b design draws, then as many cells as every status needs
            n_s = plan(answer, C.shape, ref, b, seed=0).sample.size
            full = [plan(answer, C.shape, ref, 1.0, seed=s, sample_items=n_s) for s in range(seeds)]
            assert all((p.status != UNDECIDED).all() for p in full)
            cost = np.mean([p.cells for p in full]) / total
            rnd = np.mean([random_order_cost(C, ref, s, p.sample) for s, p in enumerate(full)]) / total
            exact.append(
                f"| {name} | {truth.mean():.3f} | {n_s} (as at budget {b:g}) | {cost:.1%} | {rnd:.1%} | "
                f"{oracle_cost(C, ref) / total:.1%} | 100% |"
            )
    return "\n".join(out) + "\n\n" + "\n".join(exact)


VERDICT_BUDGETS = (0.05, 0.1, 0.2, 0.3, 1.0)
N_BOOT = 200  # the pair bootstrap's resamples, the same for the full grid and the replays


def verdict_grids() -> list[tuple[str, object]]:
    from leaderboard_audit.records import load_records

    out = grids()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out.insert(2, ("fixtures/release", load_records(ROOT / "fixtures" / "release" / "records")))
    return out


def statuses(report: dict) -> dict[str, dict]:
    return {v["id"]: v for s in report["scopes"].values() for v in s["verdicts"] if v["status"] != "skip"}


def verdict_run(audit_seeds: int, cover_seeds: int, band_round: bool = False, verdict_rounds: bool = True) -> str:
    from leaderboard_audit.checks.incomplete import robust_estimates
    from leaderboard_audit.collect.budget import BudgetError
    from leaderboard_audit.collect.replay import replay_plan, replayed_records
    from leaderboard_audit.engine import audit, make_scope

    out = [
        "| grid | budget | cells used | verdicts identical | decided | decided but contradicting | "
        "band identical | ranking / champions identical | 95% coverage (replays) | mean interval width |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, full in verdict_grids():
        truth = statuses(audit(full, n_boot=N_BOOT))
        robust = np.asarray(full.correct).all(axis=2).mean(axis=1)
        total = int(np.prod(full.shape))
        for b in VERDICT_BUDGETS:
            used, same, dec, bad, n = [], 0, 0, 0, 0
            band = [0, 0]
            core = [0, 0]
            try:
                for s in range(audit_seeds):
                    p = replay_plan(full, b, s, band_round=band_round, verdict_rounds=verdict_rounds)
                    used.append(p.cells / total)
                    got = statuses(audit(replayed_records(full, p, fraction=b, seed=s), n_boot=N_BOOT))
                    for vid, v in got.items():
                        ok = v.get("decided", True) and v["status"] == truth[vid]["status"]
                        n += 1
                        same += ok
                        dec += bool(v.get("decided", True))
                        bad += bool(v.get("decided", True)) and v["status"] != truth[vid]["status"]
                        if v["check"] == "band":
                            band[0] += ok
                            band[1] += 1
                        elif v["check"] in ("ranking", "champions"):
                            core[0] += ok
                            core[1] += 1
                hits, widths = [], []
                for s in range(cover_seeds):
                    p = replay_plan(full, b, 1000 + s, band_round=band_round, verdict_rounds=verdict_rounds)
                    est = robust_estimates(make_scope(replayed_records(full, p, fraction=b, seed=s), "pooled"))
                    if est is None:
                        continue
                    for m, model in enumerate(full.models):
                        _, lo, hi = est["robust_accuracy"][model]
                        hits.append(lo - 1e-12 <= robust[m] <= hi + 1e-12)
                        widths.append(hi - lo)
            except BudgetError:
                out.append(f"| {name} | {b:g} | below the reference round | | | | | | | |")
                continue
            cover = f"{np.mean(hits):.1%} ({cover_seeds})" if hits else "no sample"
            width = f"{np.mean(widths):.3f}" if widths else ""
            out.append(
                f"| {name} | {b:g} | {np.mean(used):.1%} | {same / n:.1%} | {dec / n:.1%} | {bad} of {dec} | "
                f"{band[0] / max(band[1], 1):.0%} | {core[0] / max(core[1], 1):.0%} | {cover} | {width} |"
            )
    return "\n".join(out)


BOARD_PLANS = ((0.3, None), (0.8, None), (0.8, 0.99), (1.0, 0.99))


def board_run(seeds: int) -> str:
    """The published board of a replay (checks/incomplete_sections.py): whether it is printed,
    and, when it is, the share of models whose printed score lies inside the full grid's own 95%
    CI, and whether it reads a missing cell as wrong (its scores must lie in their exact ranges)."""
    from leaderboard_audit.collect.budget import BudgetError
    from leaderboard_audit.collect.replay import replay_plan, replayed_records
    from leaderboard_audit.engine import audit

    out = [
        "| grid | budget | sample share of the plan | sampled items (mean) | boards printed | "
        "printed scores inside the full grid's 95% CI | scores outside their exact range |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, full in verdict_grids():
        truth = {r["model"]: r for r in audit(full, n_boot=N_BOOT)["scopes"]["pooled"]["averaged"]["board"]["rows"]}
        for b, share in BOARD_PLANS:
            printed, inside, total, outside, sampled = 0, 0, 0, 0, []
            try:
                for s in range(seeds):
                    kw = {} if share is None else {"sample_share": share}
                    p = replay_plan(full, b, s, **kw)
                    sc = audit(replayed_records(full, p, fraction=b, seed=s), n_boot=N_BOOT)["scopes"]["pooled"]
                    bounds = {r["model"]: r["bounds"]["averaged"] for r in sc["leaderboard"]}
                    est = (sc.get("averaged") or {}).get("estimated_from")
                    if est is None:
                        continue
                    printed += 1
                    sampled.append(est["items"])
                    for r in sc["averaged"]["board"]["rows"]:
                        lo, hi = truth[r["model"]]["ci"]
                        total += 1
                        inside += lo - 1e-12 <= r["averaged"] <= hi + 1e-12
                        a, z = bounds[r["model"]]
                        outside += not (a - 1e-12 <= r["averaged"] <= z + 1e-12)
            except BudgetError:
                out.append(f"| {name} | {b:g} | {share or 'default'} | below the reference round | | | |")
                continue
            rate = f"{inside / total:.1%} ({inside} of {total})" if total else "-"
            mean_n = f"{np.mean(sampled):.0f} of {full.shape[1]:,}" if sampled else "-"
            out.append(
                f"| {name} | {b:g} | {share or 'default'} | {mean_n} | {printed} of {seeds} | {rate} | {outside} |"
            )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5, help="replays per grid and budget (default 5)")
    ap.add_argument("--verdicts", action="store_true", help="the verdict level (module doc)")
    ap.add_argument("--audit-seeds", type=int, default=5, help="audited replays per grid and budget (default 5)")
    ap.add_argument("--cover-seeds", type=int, default=100, help="replays for the coverage (default 100)")
    ap.add_argument("--band-round", action="store_true", help="plans with the band round (collect/budget.py)")
    ap.add_argument(
        "--no-verdict-rounds",
        action="store_true",
        help="plans without the verdict rounds (collect/verdict_plan.py): the robust-status-first plan",
    )
    ap.add_argument("--board", action="store_true", help="the published board of replays (board_run)")
    a = ap.parse_args()
    t = time.perf_counter()
    if a.board:
        print(board_run(a.seeds))
        print(f"\n({a.seeds} replays per row; {time.perf_counter() - t:.1f} s)")
        return
    if a.verdicts:
        print(verdict_run(a.audit_seeds, a.cover_seeds, a.band_round, not a.no_verdict_rounds))
        print(
            f"\n({a.audit_seeds} audited replays and {a.cover_seeds} coverage replays per row; "
            f"{time.perf_counter() - t:.1f} s)"
        )
        return
    print(run(a.seeds))
    print(f"\n({a.seeds} seeds per row; {time.perf_counter() - t:.1f} s)")


if __name__ == "__main__":
    main()

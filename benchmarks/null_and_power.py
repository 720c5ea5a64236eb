"""False alarms under nulls and power under planted truths, per check (AUDITS v4; issue 43).

Generator (the statistical review's, written independently of ``leaderboard_audit.records.simulate``):

    logit[m,i,k] = a_i (theta_m - b_i) + z_mi + s_i (c_k + d_mk + u_ik) + e_mik;  C = logit > 0
    z ~ N(0, 1.5) model x item knowledge; e ~ N(0, 0.7) cell noise; c ~ N(0, .3) config;
    d ~ N(0, sd) model x config; u ~ N(0, .5) item x config; s_i = 0 w.p. 0.3 else U(.5, 1.5)

Nulls: **A0** theta = 0 for every model, sd = 0 (the harness moves every model alike: no
ordering claim is true); **B** configurations are exchangeable replicates: a latent answer per
(model, item) from theta_m spaced 0.3 logits apart, flipped per configuration with an
item-level probability U(0, 0.3). Planted truths (on A0 with abilities spaced 0.5 logits):
``axis`` model 0 -1.5 logits on the ordering configs; ``format`` model 0 -1.5 on the format
configs; ``champion`` model 1 +2.5 logits on likelihood scoring.

    python benchmarks/null_and_power.py null A0 S 100     # share of boards with a FAIL, per check
    python benchmarks/null_and_power.py power champion M 40
    python benchmarks/null_and_power.py board 100 200     # the board's multiplicity rules on null boards
    python benchmarks/null_and_power.py pairs 1000 100 20 # any pair FAIL on null boards of 1,000 models
    python benchmarks/null_and_power.py gate 0.0 0.0 40   # a newcomer as good as the best: blocked share
    python benchmarks/null_and_power.py gate 0.0 0 100 B  # the same with exchangeable configurations
    python benchmarks/null_and_power.py mix B P 60        # mix on exchangeable benchmarks
    AUDIT_CODE=/path/to/old/checkout python benchmarks/null_and_power.py ...   # the same on other code (v3)

Sizes: S = 6 x 100, M = 6 x 400, P = 12 x 3,679 (26 configurations, the paper's grid).
Prints one JSON line per run: per check the share of boards with some FAIL (and WARN), and
for ``power`` the planted truth's detection rate.
"""

from __future__ import annotations

import json
import sys
import time

import os

if os.environ.get("AUDIT_CODE"):  # another checkout's package (v3 for the comparison), ahead of the editable install
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__.lower()]
    sys.path.insert(0, os.environ["AUDIT_CODE"])

import numpy as np  # noqa: E402

from leaderboard_audit.engine import audit_scopes  # noqa: E402
from leaderboard_audit.records.grid import paper_grid  # noqa: E402
from leaderboard_audit.records.model import Items, Records  # noqa: E402

SIZES = {"S": (6, 100), "M": (6, 400), "P": (12, 3679)}
KIND_KEY = {"A0": 0, "B": 1}  # a stable seed part (str hashes change from one process to the next)


def records_of(C: np.ndarray, grid) -> Records:
    M, N, _ = C.shape
    names = tuple(f"m{j:02d}" for j in range(M))
    items = Items(
        np.array(["b"] * N, dtype=object),
        np.array([f"b/{i:05d}" for i in range(N)], dtype=object),
        [0] * N,
        [None] * N,
        [None] * N,
    )
    return Records(correct=C, models=names, items=items, grid=grid, source="null_and_power")


def planted_shifts(M: int, grid, planted: str | None) -> np.ndarray:
    """The model x config logit shifts of a planted truth (zeros for none)."""
    K = len(grid)
    d = np.zeros((M, K))
    ref = grid.reference_index
    configs = grid.configs
    rc = configs[ref]
    if planted == "axis":  # model 0 loses on the ordering configs (reference scoring and template)
        for k, cf in enumerate(configs):
            if k != ref and cf.scoring == rc.scoring and cf.template == rc.template:
                d[0, k] = -1.5
    elif planted == "format":
        for k, cf in enumerate(configs):
            if k != ref and cf.scoring == rc.scoring and cf.ordering == rc.ordering:
                d[0, k] = -1.5
    elif planted == "champion":
        for k, cf in enumerate(configs):
            if cf.scoring != rc.scoring:
                d[1, k] = 2.5
    return d


def draw(kind: str, M: int, N: int, rng: np.random.Generator, grid, planted: str | None = None) -> np.ndarray:
    """A board of the null ``kind`` (A0 or B), or A0 with a planted truth and abilities spaced 0.5 logits."""
    if kind == "B":
        return draw_theta_b(0.3 * (np.arange(M)[::-1] - (M - 1) / 2), N, rng, grid)
    theta = np.zeros(M) if planted is None else 0.5 * (np.arange(M)[::-1] - (M - 1) / 2)
    return draw_theta(theta, N, rng, grid, d=planted_shifts(M, grid, planted))


def statuses(rep: dict) -> dict[str, dict[str, list[str]]]:
    out: dict[str, dict[str, list[str]]] = {}
    for v in rep["verdicts"]:
        out.setdefault(v["check"], {}).setdefault(v["status"], []).append(v["id"])
    return out


def run_null(kind: str, size: str, boards: int, seed: int = 0) -> dict:
    M, N = SIZES[size]
    grid = paper_grid()
    fails: dict[str, int] = {}
    warns: dict[str, int] = {}
    runs = runs_but_brittleness = 0  # boards whose run is red: some FAIL (the exit status today)
    t0 = time.time()
    for j in range(boards):
        rng = np.random.default_rng([seed, j, KIND_KEY[kind]])
        rec = records_of(draw(kind, M, N, rng, grid), grid)
        rep = audit_scopes(rec, ["pooled"], n_boot=200)["pooled"]
        failing = set()
        for check, st in statuses(rep).items():
            if "fail" in st:
                fails[check] = fails.get(check, 0) + 1
                failing.add(check)
            elif "warn" in st:
                warns[check] = warns.get(check, 0) + 1
        runs += bool(failing)
        runs_but_brittleness += bool(failing - {"brittleness"})
    return {
        "mode": "null",
        "null": kind,
        "size": size,
        "boards": boards,
        "run_fail_share": round(runs / boards, 3),
        "run_fail_share_but_brittleness": round(runs_but_brittleness / boards, 3),
        "fail_share": {c: round(v / boards, 3) for c, v in sorted(fails.items())},
        "warn_share": {c: round(v / boards, 3) for c, v in sorted(warns.items())},
        "seconds": round(time.time() - t0, 1),
    }


def run_power(planted: str, size: str, boards: int, seed: int = 1) -> dict:
    M, N = SIZES[size]
    grid = paper_grid()
    hits = {"band_m00_fail": 0, "axes_fail": 0, "axes_names_planted": 0, "champions_fail": 0, "m00_pair_fail": 0}
    t0 = time.time()
    for j in range(boards):
        rng = np.random.default_rng([seed, j, 7])
        rec = records_of(draw("A0", M, N, rng, grid, planted), grid)
        rep = audit_scopes(rec, ["pooled"], n_boot=200)["pooled"]
        v = {x["id"]: x for x in rep["verdicts"]}
        hits["band_m00_fail"] += v.get("band[pooled-m00]", {}).get("status") == "fail"
        ax = v.get("axes[pooled]", {})
        hits["axes_fail"] += ax.get("status") == "fail"
        want = {"axis": "ordering", "format": "format"}.get(planted)
        hits["axes_names_planted"] += (ax.get("evidence") or {}).get("load_bearing") == want
        hits["champions_fail"] += v.get("champions[pooled]", {}).get("status") == "fail"
        hits["m00_pair_fail"] += any(
            x["status"] == "fail" and "m00" in x["id"] for x in rep["verdicts"] if x["check"] == "manufactured"
        )
    return {
        "mode": "power",
        "planted": planted,
        "size": size,
        "boards": boards,
        "rate": {k: round(h / boards, 3) for k, h in hits.items()},
        "seconds": round(time.time() - t0, 1),
    }


def run_board(models: int, boards: int, items: int = 100, seed: int = 2) -> dict:
    """Null boards of equal models (one configuration: every pair is a plain paired test):
    the share of boards where a rule prints any 'identified above' claim."""
    from leaderboard_audit.metrics.board import bh_adjust
    from leaderboard_audit.metrics.identified import holm_adjust, sign_test_p

    any_claim = {"holm_all_pairs": 0, "bh_all_pairs": 0, "holm_adjacent": 0, "unadjusted_adjacent": 0}
    t0 = time.time()
    for j in range(boards):
        rng = np.random.default_rng([seed, j, models])
        z = rng.normal(0, 1.5, (models, items))
        bdiff = rng.normal(0, 1, items)
        C = (z - bdiff) > 0
        acc = C.sum(axis=1)
        order = np.lexsort((np.arange(models), -acc))
        iu, ju = np.triu_indices(models, k=1)
        a_only = (C[iu] & ~C[ju]).sum(axis=1)
        b_only = (C[ju] & ~C[iu]).sum(axis=1)
        p = sign_test_p(a_only, b_only)
        any_claim["holm_all_pairs"] += bool((holm_adjust(p) <= 0.05).any())
        any_claim["bh_all_pairs"] += bool((bh_adjust(p) <= 0.05).any())
        h, lo = order[:-1], order[1:]
        pa = sign_test_p((C[h] & ~C[lo]).sum(axis=1), (C[lo] & ~C[h]).sum(axis=1))
        any_claim["holm_adjacent"] += bool((holm_adjust(pa) <= 0.05).any())
        any_claim["unadjusted_adjacent"] += bool((pa <= 0.05).any())
    return {
        "mode": "board",
        "models": models,
        "items": items,
        "boards": boards,
        "any_false_claim": {k: round(v / boards, 3) for k, v in any_claim.items()},
        "seconds": round(time.time() - t0, 1),
    }


def draw_theta(
    theta: np.ndarray, N: int, rng: np.random.Generator, grid, sd: float = 0.0, d: np.ndarray | None = None
) -> np.ndarray:
    """The A generator with given abilities and a model x config harness effect of sd ``sd``
    (or the fixed shifts ``d``)."""
    M, K = theta.size, len(grid)
    a = rng.lognormal(0, 0.3, N)
    b = rng.normal(0, 1, N)
    z = rng.normal(0, 1.5, (M, N))
    s = np.where(rng.random(N) < 0.3, 0.0, rng.uniform(0.5, 1.5, N))
    c = rng.normal(0, 0.3, K)
    u = rng.normal(0, 0.5, (N, K))
    if d is None:
        d = rng.normal(0, sd, (M, K)) if sd > 0 else np.zeros((M, K))
    logit = (a * (theta[:, None] - b) + z)[:, :, None] + s[None, :, None] * (
        c[None, None, :] + d[:, None, :] + u[None, :, :]
    )
    return (logit + rng.normal(0, 0.7, (M, N, K))) > 0


def draw_theta_b(theta: np.ndarray, N: int, rng: np.random.Generator, grid) -> np.ndarray:
    """Null B with given abilities: configurations are exchangeable replicates."""
    a = rng.lognormal(0, 0.3, N)
    b = rng.normal(0, 1, N)
    z = rng.normal(0, 1.5, (theta.size, N))
    latent = (a * (theta[:, None] - b) + z) > 0
    f = rng.uniform(0, 0.3, N)
    return latent[:, :, None] ^ (rng.random((theta.size, N, len(grid))) < f[None, :, None])


def run_gate(delta: float, sd: float, boards: int, items: int = 400, seed: int = 4, kind: str = "A") -> dict:
    """The CI gate (``--audit-submission``): 5 models spaced 0.5 logits apart plus a newcomer
    ``delta`` logits from the best; the share of boards where the gate exits 1."""
    from leaderboard_audit.engine.gate import submission_audit

    grid = paper_grid()
    blocked = 0
    why: dict[str, int] = {}
    t0 = time.time()
    for j in range(boards):
        rng = np.random.default_rng([seed, j, 100 + int(round(delta * 10)), int(round(sd * 10))])
        theta = np.array([1.0, 0.5, 0.0, -0.5, -1.0, 1.0 + delta])
        C = draw_theta_b(theta, items, rng, grid) if kind == "B" else draw_theta(theta, items, rng, grid, sd)
        rec = records_of(C, grid)
        got = submission_audit(rec, ["m05"], n_boot=200, scopes=["pooled"])["overall"]
        blocked += got["exit_code"] == 1
        for vid in got["blocking"]:
            key = vid.split("[")[0]
            why[key] = why.get(key, 0) + 1
    return {
        "mode": "gate",
        "generator": kind,
        "newcomer_minus_best_logits": delta,
        "model_config_sd": sd,
        "boards": boards,
        "blocked_share": round(blocked / boards, 3),
        "blocking_verdicts": why,
        "seconds": round(time.time() - t0, 1),
    }


def run_mix(kind: str, size: str, boards: int, seed: int = 5) -> dict:
    """mix on exchangeable benchmarks: the items of one draw dealt into 4 benchmarks at
    random, so no conclusion can rest on one benchmark; the share of boards with a mix FAIL / WARN."""
    M, N = SIZES[size]
    grid = paper_grid()
    fails = warns = 0
    t0 = time.time()
    for j in range(boards):
        rng = np.random.default_rng([seed, j, KIND_KEY[kind]])
        C = draw(kind, M, N, rng, grid)
        rec = records_of(C, grid)
        labels = np.array([f"b{i % 4}" for i in range(N)], dtype=object)
        order = np.argsort(labels, kind="stable")
        items = Items(
            labels[order],
            np.array([f"{labels[i]}/{i:05d}" for i in order], dtype=object),
            [0] * N,
            [None] * N,
            [None] * N,
        )
        rec = Records(
            correct=np.ascontiguousarray(C[:, order]),
            models=rec.models,
            items=items,
            grid=grid,
            source="null_and_power",
        )
        rep = audit_scopes(rec, ["pooled"], n_boot=200)["pooled"]
        st = statuses(rep).get("mix", {})
        fails += "fail" in st
        warns += "fail" not in st and "warn" in st
    return {
        "mode": "mix",
        "null": kind,
        "size": size,
        "boards": boards,
        "fail_share": round(fails / boards, 3),
        "warn_share": round(warns / boards, 3),
        "seconds": round(time.time() - t0, 1),
    }


def run_pairs(models: int, items: int, boards: int, kind: str = "A0", seed: int = 3) -> dict:
    """Board-wide error control of the pair verdicts (issue 42): null boards of ``models`` x
    ``items`` x 26 configurations; the share of boards with any manufactured or ranking FAIL,
    and the mean number of adjacent pairs 'identified' by the unadjusted per-pair test."""
    from leaderboard_audit.engine import audit_scope_computed

    grid = paper_grid()
    fails = {"manufactured": 0, "ranking": 0}
    identified = 0
    t0 = time.time()
    for j in range(boards):
        rng = np.random.default_rng([seed, j, models, items])
        rec = records_of(draw(kind, models, items, rng, grid), grid)
        rep, _ = audit_scope_computed(rec, "pooled", n_boot=100, only={"band", "manufactured", "averaged", "ranking"})
        st = statuses(rep)
        for c in fails:
            fails[c] += "fail" in st.get(c, {})
        identified += sum(p["identified"] is not None for p in rep["pairs"])
    return {
        "mode": "pairs",
        "null": kind,
        "models": models,
        "items": items,
        "boards": boards,
        "any_fail_share": {c: round(v / boards, 3) for c, v in fails.items()},
        "unadjusted_identified_per_board": round(identified / boards, 2),
        "seconds": round(time.time() - t0, 1),
    }


def main(argv: list[str]) -> None:
    mode = argv[0]
    if mode == "null":
        print(json.dumps(run_null(argv[1], argv[2], int(argv[3]))))
    elif mode == "power":
        print(json.dumps(run_power(argv[1], argv[2], int(argv[3]))))
    elif mode == "gate":
        print(json.dumps(run_gate(float(argv[1]), float(argv[2]), int(argv[3]), kind=(argv[4:5] or ["A"])[0])))
    elif mode == "mix":
        print(json.dumps(run_mix(argv[1], argv[2], int(argv[3]))))
    elif mode == "pairs":
        print(json.dumps(run_pairs(int(argv[1]), int(argv[2]), int(argv[3]), *(argv[4:5] or []))))
    elif mode == "board":
        print(json.dumps(run_board(int(argv[1]), int(argv[2]))))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])

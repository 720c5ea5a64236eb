"""The identified order (AUDITS.md v2) over 1,000 models x 10,000 items x 8 configs.

Simulated records (an IRT-style draw: ability ~ N(0, 1), difficulty ~ N(0, 1), a
latent draw per model and item shared by every config, config shifts on 60% of the
items), then wall-clock time, best of 3, of

* ``identified_from_masks``: the 499,500 pair counts (one float32 matrix product),
  exact sign tests, Holm over all pairs, edges, tiers and robust winner;
* ``identified_order``: the same plus the robust masks from the 80M-bit tensor.

Target (issue 10): under 2 s. Not a test: speed targets live here.
"""

from __future__ import annotations

import time

import numpy as np

M, N, K = 1_000, 10_000, 8


def simulated(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1, M)
    b = rng.normal(0, 1, N)
    sens = np.where(rng.random(N) < 0.4, 0.0, rng.uniform(0.5, 1.5, N)).astype(np.float32)
    u = rng.random((M, N), dtype=np.float32)
    C = np.empty((M, N, K), dtype=bool)
    for k in range(K):
        shift = rng.normal(0, 0.5, M).astype(np.float32)
        logit = (theta[:, None] - b[None, :]).astype(np.float32) + sens[None, :] * shift[:, None]
        C[:, :, k] = u < 1 / (1 + np.exp(-logit))
    return C


def best_of(fn, reps: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    from leaderboard_audit.metrics.identified import identified_from_masks, identified_order
    from leaderboard_audit.metrics.per_model import robust_masks

    C = simulated()
    names = [f"m{j:04d}" for j in range(M)]
    display = np.argsort(-C[:, :, 0].sum(axis=1), kind="stable")
    rc, rw, _ = robust_masks(C)
    t_masks, io = best_of(lambda: identified_from_masks(rc, rw, models=names, display=display))
    t_full, _ = best_of(lambda: identified_order(C, models=names, display=display))
    print(
        f"identified order, {M} models x {N} items x {K} configs ({M * (M - 1) // 2} pairs): "
        f"{t_masks:.2f} s from robust masks, {t_full:.2f} s from the tensor (best of 3)"
    )
    print(
        f"  {len(io.edges)} edges, {len(io.tiers)} tiers (largest {max(map(len, io.tiers))}), "
        f"robust winner {io.robust_winner if io.robust_winner is None else names[io.robust_winner]}"
    )


if __name__ == "__main__":
    main()

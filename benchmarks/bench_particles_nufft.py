"""NUFFT path vs direct O(n²) sum for SA velocities of n particles on S¹.

Baseline: the direct blocked-BLAS sum (``path="direct"``), measured in the same
run up to ``--direct-max`` particles; above that its cost is extrapolated as
c·n² from the largest measured n (stated in the output). The NUFFT path
(finufft type 1 + type 2, plans reused, 1 thread) is timed for n = 10³ … 10⁶
at relative accuracies 1e-6 and 1e-10, β = 4 (SA), uniform iid angles.

Run with ``OMP_NUM_THREADS=1 python benchmarks/bench_particles_nufft.py``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from meanfield.models._self_attention_sums import DirectSelfAttention, NufftSelfAttention

SIZES = (64, 128, 250, 500, 1000, 2000, 4000, 8000, 16000, 100_000, 1_000_000)


def _time(func, min_time: float = 0.3) -> float:
    """Best of 3 mean times per call, each over ≥ min_time seconds."""
    func()
    best = np.inf
    for _ in range(3):
        count, start = 0, time.perf_counter()
        while True:
            func()
            count += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_time:
                break
        best = min(best, elapsed / count)
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--direct-max", type=int, default=8000)
    parser.add_argument("--beta", type=float, default=4.0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    beta = args.beta
    print(f"SA velocity on S^1, beta = {beta}; times in ms per evaluation (1 thread)")
    print(f"{'n':>9} {'direct':>12} {'nufft 1e-6':>11} {'nufft 1e-10':>12} {'speed-up 1e-6':>14} "
          f"{'speed-up 1e-10':>15} {'max rel err 1e-10':>18}")
    c_direct = None
    for n in SIZES:
        theta = rng.uniform(0, 2 * np.pi, (1, n))
        w = np.full((1, n), 1.0 / n)
        fast6 = NufftSelfAttention(beta, True, w, 1e-6)
        fast10 = NufftSelfAttention(beta, True, w, 1e-10)
        t6 = _time(lambda: fast6(0.0, theta))
        t10 = _time(lambda: fast10(0.0, theta))
        err = "-"
        if n <= args.direct_max:
            direct = DirectSelfAttention(beta, True, w, True)
            td = _time(lambda: direct(0.0, theta), min_time=0.2)
            c_direct = td / n**2
            ref = direct(0.0, theta)
            err = f"{np.abs(fast10(0.0, theta) - ref).max() / np.abs(ref).max():.1e}"
            label = f"{td * 1e3:12.3f}"
        else:
            td = c_direct * n**2
            label = f"{td * 1e3:11.0f}*"
        print(f"{n:9d} {label} {t6 * 1e3:11.3f} {t10 * 1e3:12.3f} {td / t6:14.1f} {td / t10:15.1f} {err:>18}")
    print(f"* extrapolated as c n^2 with c = {c_direct * 1e9:.2f} ns per pair from n = {args.direct_max}")


if __name__ == "__main__":
    main()

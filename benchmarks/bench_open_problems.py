"""The estimators of the BBGKY study and the Newton enumerator of critical points, against plain baselines.

(a) ``mf.bbgky_averages`` (power sums, O(n²K) per system) against the direct triple sum over distinct ordered
    triples (broadcast (systems, n, n, n) arrays, O(n³K)), for M = 2048 systems, K = 16 and n = 8, 16, 32:
    best-of-``repeat`` times, the ratio direct/ours, and the largest difference of the triple average.
(b) ``mf.torus_critical_points`` (damped Newton vectorised over all starts) against scipy.optimize.root
    (MINPACK's hybrid method, one start at a time) on the same 256 random starts, n = 6 and 8 at β = 2:
    times, the ratio, and the orbits each finds (scipy's roots deduplicated by the same canonical form; ours
    also seeds the known families, as the enumerator always does, and counts them).

Run:  OMP_NUM_THREADS=1 python benchmarks/bench_open_problems.py [--repeat 3]
"""

from __future__ import annotations

import argparse

import numpy as np
import scipy.optimize

import meanfield as mf
from bench_wasserstein import best_time
from meanfield.studies.open_problems._bbgky import hprime
from meanfield.studies.open_problems._torus_orbits import gaps_of, orbit_labels

BETA = 2.0
K = 16


def direct_triple(theta: np.ndarray) -> np.ndarray:
    """(1/(n(n-1)(n-2))) Σ_{i,j,l distinct} -h'(θ_l - θ_i) e^{-ik(θ_j - θ_i)}, summed over every triple."""
    n = theta.shape[-1]
    i, j, m = np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij")
    distinct = (i != j) & (j != m) & (i != m)
    weight = -hprime(theta[:, None, None, :] - theta[:, :, None, None], BETA)    # -h'(θ_l - θ_i), axes (i, j, l)
    phase = theta[:, None, :, None] - theta[:, :, None, None]                      # θ_j - θ_i
    out = np.empty((theta.shape[0], K + 1), dtype=complex)
    for k in range(K + 1):
        out[:, k] = np.sum(np.where(distinct, weight * np.exp(-1j * k * phase), 0.0), axis=(1, 2, 3))
    return out / (n * (n - 1) * (n - 2))


def bench_bbgky(repeat: int) -> None:
    rng = np.random.default_rng(0)
    print(f"(a) pair/triple averages, M = 2048 systems, K = {K}")
    print(f"{'n':>4} {'ours [s]':>9} {'direct [s]':>11} {'ratio':>7} {'max |diff|':>11}")
    for n in (8, 16, 32):
        theta = 2 * np.pi * rng.random((2048, n))
        ours_time, ours = best_time(lambda: mf.bbgky_averages(theta, BETA, K), repeat)
        direct_time, direct = best_time(lambda: direct_triple(theta), repeat)
        print(f"{n:4d} {ours_time:9.4f} {direct_time:11.4f} {direct_time / ours_time:7.1f} "
              f"{np.abs(ours.triple - direct).max():11.2e}")


def scipy_roots(starts: np.ndarray) -> np.ndarray:
    out = []
    for theta0 in starts:
        found = scipy.optimize.root(lambda th: mf.torus_gradient(th, BETA), theta0,
                                    jac=lambda th: mf.torus_hessian(th, BETA), method="hybr", tol=1e-13)
        if found.success and np.abs(mf.torus_gradient(found.x, BETA)).max() <= 1e-12 * np.exp(BETA):
            out.append(found.x)
    return np.array(out)


def bench_critical_points(repeat: int) -> None:
    print("\n(b) critical points from 256 random starts, beta = 2")
    print(f"{'n':>4} {'ours [s]':>9} {'scipy root [s]':>15} {'ratio':>7} {'orbits (ours)':>14} {'orbits (scipy)':>15}")
    for n in (6, 8):
        ours_time, ours = best_time(lambda: mf.torus_critical_points(n, BETA, starts=256, seed=1), repeat)
        starts = 2 * np.pi * np.random.default_rng(1).random((256, n))
        scipy_time, roots = best_time(lambda: scipy_roots(starts), repeat)
        orbits = np.unique(orbit_labels(gaps_of(roots), True, 1e-6)).size if roots.size else 0
        print(f"{n:4d} {ours_time:9.3f} {scipy_time:15.3f} {scipy_time / ours_time:7.1f} {ours.sizes['point']:14d} "
              f"{orbits:15d}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    bench_bbgky(args.repeat)
    bench_critical_points(args.repeat)


if __name__ == "__main__":
    main()

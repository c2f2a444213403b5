"""Time to the icosahedron from random starts: ``mf.optimal_configurations`` (L-BFGS on H_β) against a
plain gradient descent with a fixed step, in the same process.

The baseline is projected gradient descent on (S²)^12, x_i ← (x_i - η n² ∂_i H) / |·| with the fixed step η
(the forward-Euler-and-renormalise step of the repulsive flow ẋ = -n ∇H at dt = η/n), stopped when
|H_β - H_β[icosahedron]| ≤ 1e-10 or after ``--max-iterations``. Both start from the same ``--starts``
random configurations (seed 0 + k). Printed: wall time of all starts, starts reaching the icosahedron,
iterations per start, and the ratio of the wall times.

Run with ``OMP_NUM_THREADS=1 python benchmarks/bench_configurations.py``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import meanfield as mf

N, D = 12, 3


def gradient_descent(x: np.ndarray, beta: float, step: float, target: float, max_iterations: int) -> tuple[bool, int]:
    """Fixed-step projected gradient descent on H_β = (1/(2β n²)) Σ e^{β<x_i, x_j>}; (reached, iterations)."""
    n = x.shape[0]
    for k in range(max_iterations):
        kernel = np.exp(beta * (x @ x.T))
        if abs(kernel.sum() / (2 * beta * n * n) - target) <= 1e-10:
            return True, k
        force = kernel @ x  # n² ∂_i H before projection
        tangent = force - np.sum(force * x, axis=1, keepdims=True) * x
        x = x - step * tangent
        x /= np.linalg.norm(x, axis=1, keepdims=True)
    return False, max_iterations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=100)
    parser.add_argument("--beta", type=float, default=1.0)
    parser.add_argument("--step", type=float, default=0.2,
                        help="fixed step η of the baseline (0.2: the fastest of 0.05, 0.2, 0.25, 0.3 that converges)")
    parser.add_argument("--max-iterations", type=int, default=200_000)
    args = parser.parse_args()
    target = mf.sharp_configuration("icosahedron").energy(args.beta)
    clock = time.perf_counter()
    ours = mf.optimal_configurations(N, D, args.beta, starts=args.starts, seed=0)
    ours_time = time.perf_counter() - clock
    reached, iterations = 0, []
    clock = time.perf_counter()
    for k in range(args.starts):
        x = np.random.default_rng(k).standard_normal((N, D))
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        done, its = gradient_descent(x, args.beta, args.step, target, args.max_iterations)
        reached += done
        iterations.append(its)
    base_time = time.perf_counter() - clock
    print(f"icosahedron from {args.starts} random starts, beta = {args.beta:g}, |H - exact| <= 1e-10")
    print(f"  optimal_configurations (L-BFGS): {ours_time:8.3f} s, reached {int(ours['fraction'].values[0] * args.starts)}"
          f"/{args.starts}, iterations per start median {np.median(ours['iterations'].values):.0f}")
    print(f"  fixed-step gradient descent (eta = {args.step:g}): {base_time:8.3f} s, reached {reached}/{args.starts}, "
          f"iterations per start median {np.median(iterations):.0f}")
    print(f"  ratio (gradient descent / L-BFGS): {base_time / ours_time:.1f}")


if __name__ == "__main__":
    main()

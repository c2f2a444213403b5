"""W₁ / W₂ on S¹ against POT's ``ot.wasserstein_circle``, and the cost of compare() per output time.

For n = 10³ … 10⁶ atoms per measure (two von Mises samples), times
``mf.wasserstein(x, y, p)`` and ``ot.wasserstein_circle`` on the same inputs
(POT on [0, 1): u = θ/2π; it returns W_p^p in units of the period, converted
back to radians for the agreement column), and a bare ``np.sort`` of the
atoms as the floor. Prints best-of-``repeat`` wall times, the ratio POT/ours
and the difference of the two results. Then times ``mf.compare`` of a PDE
result against an ensemble of particle systems, per output time, with its
ratios to two baselines measured in the same run at one output time: ``np.sort``
of the particles (the floor) and POT's ``ot.wasserstein_circle`` of the density's
node atoms against every system.

Run:  OMP_NUM_THREADS=1 python benchmarks/bench_wasserstein.py [--max-exponent 6] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import ot

import meanfield as mf

TWO_PI = 2 * np.pi


def best_time(func, repeat: int) -> tuple[float, object]:
    best, out = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        out = func()
        best = min(best, time.perf_counter() - start)
    return best, out


def bench_circle(max_exponent: int, repeat: int) -> None:
    rng = np.random.default_rng(0)
    mf.wasserstein(rng.uniform(size=10), rng.uniform(size=10), 2)  # compile the W_p kernel once
    print(f"{'n':>8} {'p':>2} {'sort [ms]':>10} {'ours [ms]':>10} {'POT [ms]':>10} {'POT/ours':>9} {'|ours - POT|':>13}")
    for e in range(3, max_exponent + 1):
        n = 10**e
        x = rng.vonmises(0.0, 1.0, n)
        y = rng.vonmises(0.5, 3.0, n)
        t_sort, _ = best_time(lambda: np.sort(x), repeat)
        for p in (1, 2):
            t_ours, ours = best_time(lambda: mf.wasserstein(x, y, p), repeat)
            reps = repeat if n <= 10**5 else 1
            t_pot, pot = best_time(lambda: ot.wasserstein_circle(x / TWO_PI, y / TWO_PI, p=p), reps)
            pot_rad = TWO_PI * float(np.ravel(pot)[0]) ** (1 / p)
            print(f"{n:8d} {p:2d} {1e3 * t_sort:10.3f} {1e3 * t_ours:10.2f} {1e3 * t_pot:10.1f} "
                  f"{t_pot / t_ours:9.1f} {abs(ours - pot_rad):13.2e}")


def bench_compare(repeat: int) -> None:
    """``mf.compare`` per output time against two baselines on the same particles.

    sort: ``np.sort`` of every system's angles at one output time, the floor of any
    exact W_p on S¹; POT: ``ot.wasserstein_circle`` of the node-atom density against
    every system at one output time (W_p only, atoms instead of cells).
    """
    circle = mf.Circle(512)
    rho = mf.von_mises(circle, 0.0, 1.0)
    model = mf.SelfAttention(2.0)
    times = np.linspace(0.0, 1.0, 11)
    pde = mf.solve(model, rho, times)
    masses = np.asarray(pde["density"].values[-1] * circle.weights)
    masses /= masses.sum()
    print(f"{'systems x n':>13} {'p':>2} {'sort [ms]':>10} {'POT [ms]':>9} {'compare [ms]':>13} "
          f"{'compare/sort':>13} {'compare/POT':>12}")
    for n, systems in ((1000, 8), (10000, 8)):
        x0 = np.stack([mf.sample(rho, n, seed=s).points for s in range(systems)])
        particles = mf.simulate(model, x0, times, domain="circle")
        last = particles["positions"].values[:, -1]  # (systems, n) at the last output time
        u = np.repeat(circle.theta[:, None] / TWO_PI, systems, axis=1)
        wu = np.repeat(masses[:, None], systems, axis=1)
        t_sort, _ = best_time(lambda: np.sort(last, axis=-1), repeat)
        for p in (1, 2):
            t_pot, _ = best_time(lambda: ot.wasserstein_circle(u, last.T / TWO_PI, wu, p=p), repeat)
            t, _ = best_time(lambda: mf.compare(pde, particles, p), repeat)
            per_time = t / times.size
            print(f"{systems:5d} x {n:5d} {p:2d} {1e3 * t_sort:10.3f} {1e3 * t_pot:9.2f} {1e3 * per_time:13.2f} "
                  f"{per_time / t_sort:13.1f} {per_time / t_pot:12.2f}")
    print("compare per output time (grid 512, cells, W_p + moments); baselines at one output time, same run")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-exponent", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    bench_circle(args.max_exponent, args.repeat)
    bench_compare(args.repeat)


if __name__ == "__main__":
    main()

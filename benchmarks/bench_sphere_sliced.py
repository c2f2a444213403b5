"""The spherical sliced distance on S² against POT's ``ot.sliced_wasserstein_sphere``.

For n = 10³ … 10⁵ atoms per measure (10⁶ with ``--max-exponent 6``; two samples of a Gaussian
pushed to S², one shifted north; equal weights), times ``mf.wasserstein(x, y, p, method="sliced")``
with the default 400 projections, and POT on the first ``K_POT`` of the same frames (POT takes
minutes per 100 projections at 10⁵ atoms; the frames of a seed are a prefix of each other, so
``n_projections=K_POT`` with the same seed gives POT's frames, which is checked). Both costs are
linear in the number of projections: the table compares times per projection, and the floor, a
bare ``np.sort`` of both measures' projected positions (two sorts of n per projection). Prints
best-of-``repeat`` wall times, the ratios POT/ours and ours/sort, and |ours - POT| on the same
frames (radians; POT's circle solver stops within its bisection tolerance, ours is exact).

Run:  OMP_NUM_THREADS=1 python benchmarks/bench_sphere_sliced.py [--max-exponent 5] [--repeat 3]
"""

from __future__ import annotations

import argparse

import numpy as np
import ot

import meanfield as mf
from bench_wasserstein import best_time
from meanfield.transport._sphere import _project, great_circle_frames

TWO_PI = 2 * np.pi
N_PROJECTIONS = 400  # mf.wasserstein's default
K_POT = {3: 400, 4: 100, 5: 10, 6: 2}  # projections given to POT, by log10(n)


def sphere_sample(rng: np.random.Generator, n: int, shift: float) -> np.ndarray:
    x = rng.normal(size=(n, 3)) + [0.0, 0.0, shift]
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-exponent", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    small = sphere_sample(rng, 10, 0.0)
    mf.wasserstein(small, small, 1, method="sliced")  # compile the kernels once
    print(f"sliced distance on S^2, {N_PROJECTIONS} projections (POT: the first K_pot), per projection [ms]")
    print(f"{'n':>8} {'p':>2} {'K_pot':>5} {'sort':>8} {'ours':>8} {'POT':>9} {'POT/ours':>9} {'ours/sort':>9} "
          f"{'ours [s]':>8} {'|ours - POT|':>13}")
    for e in range(3, args.max_exponent + 1):
        n = 10**e
        x, y = sphere_sample(rng, n, 0.0), sphere_sample(rng, n, 1.0)
        k_pot = K_POT[e]
        frames = great_circle_frames(3, N_PROJECTIONS, 0)[:k_pot]
        ux, uy = _project(x, frames[:1]), _project(y, frames[:1])
        t_sort, _ = best_time(lambda: (np.sort(ux, axis=-1), np.sort(uy, axis=-1)), repeat=5)
        for p in (1, 2):
            t_ours, _ = best_time(lambda: mf.wasserstein(x, y, p, method="sliced", n_projections=N_PROJECTIONS,
                                                         seed=0), args.repeat)
            ours_k = mf.wasserstein(x, y, p, method="sliced", n_projections=k_pot, seed=0)
            reps = args.repeat if e <= 4 else 1
            t_pot, (pot, log) = best_time(lambda: ot.sliced_wasserstein_sphere(x, y, n_projections=k_pot, p=p,
                                                                                seed=0, log=True), reps)
            if not np.array_equal(log["projections"], frames):
                raise RuntimeError("POT drew other frames than great_circle_frames for the same seed")
            per_ours, per_pot = t_ours / N_PROJECTIONS, t_pot / k_pot
            print(f"{n:8d} {p:2d} {k_pot:5d} {1e3 * t_sort:8.3f} {1e3 * per_ours:8.3f} {1e3 * per_pot:9.2f} "
                  f"{per_pot / per_ours:9.1f} {per_ours / t_sort:9.1f} {t_ours:8.2f} "
                  f"{abs(ours_k - TWO_PI * float(pot)):13.2e}")


if __name__ == "__main__":
    main()

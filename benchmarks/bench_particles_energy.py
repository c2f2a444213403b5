"""Energy of n particles on S¹: Fourier sum (NUFFT type 1) vs the direct O(n²) pair sum, and vs one velocity.

Baseline: the compiled direct pair sum (``kernel_sums``), measured up to ``--direct-max``
particles and extrapolated as c·n² above (stated in the output). The Fourier energy
(:func:`meanfield.particles._energy.fourier_kernel_sums`, the truncation of the NUFFT
velocity) is timed for n = 10³ … 10⁶ at accuracy 1e-10, β = 4, uniform iid angles, and
compared with one NUFFT velocity evaluation (type 1 + type 2) of the same n: the energy
of an output must cost no more than a velocity.

Run with ``OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/bench_particles_energy.py``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from meanfield.models._compiled_kernels import kernel_sums
from meanfield.models._self_attention_sums import fourier_kernel_sums
from meanfield.models._self_attention_sums import NufftSelfAttention

SIZES = (1000, 4000, 16000, 100_000, 1_000_000)
BETA, ACCURACY = 4.0, 1e-10


def _best(func, repeats: int = 3) -> float:
    func()
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--direct-max", type=int, default=16000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'n':>9} {'fourier [s]':>12} {'velocity [s]':>13} {'direct [s]':>12} {'direct/fourier':>15}")
    coefficient = None
    for n in SIZES:
        theta = rng.uniform(0, 2 * np.pi, (1, n))
        w = np.full((1, n), 1.0 / n)
        fourier = _best(lambda: fourier_kernel_sums(theta, w, BETA, ACCURACY))
        velocity = NufftSelfAttention(BETA, True, w, ACCURACY)
        nufft = _best(lambda: velocity(0.0, theta))
        if n <= args.direct_max:
            stack = np.ascontiguousarray(theta[..., None])
            direct = _best(lambda: kernel_sums(stack, w, True, BETA))
            coefficient = direct / n**2
            label = f"{direct:12.4g}"
        else:
            direct = coefficient * n**2
            label = f"{direct:11.4g}*"
        print(f"{n:9d} {fourier:12.4g} {nufft:13.4g} {label} {direct / fourier:15.3g}")
    print("* extrapolated as c n^2 from the largest measured n")


if __name__ == "__main__":
    main()

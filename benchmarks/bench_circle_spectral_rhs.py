"""Cost of the S¹ pseudo-spectral right-hand side, as a ratio to one bare real FFT.

Baseline: one planned pyfftw real FFT of the same size N (``FFTW.execute()`` on
buffers allocated once), measured in the same run. Timed, for SA (numerator
and denominator convolutions, β = 4) with 3/2-rule dealiasing:

* ``stage``: :meth:`CircleSpectral.nonlinear` on Fourier coefficients, the
  cost of one Runge–Kutta stage (two batched FFTs on the padded grid);
* ``no-dealias``: the same with ``dealias=False`` (products on the N nodes);
* ``rhs``: :meth:`CircleSpectral.rhs` from node values to node values
  (adds an analysis and a synthesis on the N nodes);
* ``numpy``: the same right-hand side written literally with numpy.fft
  (no padding, two rfft + irfft pairs), the per-call-overhead reference.

Run with ``OMP_NUM_THREADS=1 python benchmarks/bench_circle_spectral_rhs.py``.
"""

from __future__ import annotations

import argparse
import time
import timeit

import numpy as np
import pyfftw

import meanfield as mf
from solvers import CircleGrid, CircleSpectral

SIZES = (256, 512, 1024, 2048, 4096)


def _best(func, min_time: float) -> float:
    """Best CPU time per call in seconds over 15 repeats of about ``min_time`` each.

    CPU time of this process (``time.process_time``), not wall time, so that
    other jobs on a shared machine do not count (one thread throughout).
    """
    timer = timeit.Timer(func, timer=time.process_time)
    number, _ = timer.autorange()
    number = max(1, int(number * min_time / 0.2))
    return min(timer.repeat(repeat=15, number=number)) / number


def _numpy_rhs(num: np.ndarray, den: np.ndarray, n: int):
    def rhs(y: np.ndarray) -> np.ndarray:
        c = np.fft.rfft(y) / n
        ratio = np.fft.irfft(num * c, n, norm="forward") / np.fft.irfft(den * c, n, norm="forward")
        flux = np.fft.rfft(y * ratio)
        return np.fft.irfft(-1j * np.arange(c.size) * flux, n)

    return rhs


def measure(n: int, min_time: float = 0.02) -> dict[str, float]:
    """Times (seconds per call) of the baseline FFT and of the right-hand sides at N = n."""
    grid = CircleGrid(n)
    velocity = mf.SelfAttention(4.0).velocity_spec(2)
    scheme = CircleSpectral(grid, velocity, threads=1)
    y = (1 + 0.1 * np.cos(grid.theta) + 0.05 * np.sin(3 * grid.theta))[None] / (2 * np.pi)
    rho_hat = scheme.spectrum(y)
    plain = CircleSpectral(grid, velocity, threads=1, dealias=False)

    a = pyfftw.empty_aligned((1, n), dtype="float64")
    b = pyfftw.empty_aligned((1, n // 2 + 1), dtype="complex128")
    fft = pyfftw.FFTW(a, b, axes=(-1,), flags=("FFTW_MEASURE",), threads=1)
    a[...] = y

    k = grid.wavenumbers
    numpy_rhs = _numpy_rhs(velocity.numerator(k), velocity.denominator(k), n)
    np.testing.assert_allclose(numpy_rhs(y[0]), scheme.rhs(y)[0], rtol=0, atol=1e-10)
    return {
        "fft": _best(fft.execute, min_time),
        "stage": _best(lambda: scheme.nonlinear(rho_hat), min_time),
        "plain": _best(lambda: plain.nonlinear(rho_hat), min_time),
        "rhs": _best(lambda: scheme.rhs(y), min_time),
        "numpy": _best(lambda: numpy_rhs(y[0]), min_time),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    parser.add_argument("--min-time", type=float, default=0.02, help="seconds per timing repeat")
    args = parser.parse_args(argv)
    print("S¹ pseudo-spectral RHS (SA, β = 4, 3/2 dealiasing), 1 thread, CPU time;")
    print("ratios to one bare planned pyfftw rfft of size N measured in the same run")
    print(
        f"{'N':>6} {'rfft µs':>9} {'stage µs':>9} {'ratio':>6} {'no-dealias':>10} {'ratio':>6} "
        f"{'rhs µs':>8} {'ratio':>6} {'numpy µs':>9} {'ratio':>6}"
    )
    for n in args.sizes:
        t = measure(n, args.min_time)
        base = t["fft"]
        print(
            f"{n:>6} {1e6 * base:9.2f} {1e6 * t['stage']:9.2f} {t['stage'] / base:6.1f} "
            f"{1e6 * t['plain']:10.2f} {t['plain'] / base:6.1f} "
            f"{1e6 * t['rhs']:8.2f} {t['rhs'] / base:6.1f} {1e6 * t['numpy']:9.2f} {t['numpy'] / base:6.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

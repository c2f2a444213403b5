"""Finite volume on S¹ with FFT convolutions against direct O(N²) quadrature, at equal accuracy.

Baseline: the same finite-volume scheme (:class:`solvers.CircleFiniteVolume`,
SSP-RK3, minmod, cfl = 0.5) whose velocity is computed the way a naive code
does it, by direct quadrature of the convolutions at the N cell centres,

    X_i = Σ_j h e^{β cos(θ_i - θ_j)} (-sin(θ_i - θ_j)) ρ_j / Σ_j h e^{β cos(θ_i - θ_j)} ρ_j,

one dense (2N × N) matrix–vector product per stage (passed as a
:class:`solvers.CallableVelocity`, averaged to the faces). Compared, in the
same run:

* ``fv-fft``: the finite-volume scheme with the spectral face velocity
  (one rfft and one batched irfft per stage);
* ``fv-direct``: the baseline above;
* ``spectral``: :class:`solvers.CircleSpectral` (adaptive embedded RK,
  dealiased).

Problem: SA, β = 4, ρ₀ = (1 + 0.1 cos θ + 0.1 sin 2θ + 0.05 cos 3θ)/2π,
t ∈ [0, 5] (two clusters form). Error: max over k = 1, …, 8 of the error of
the Fourier moments m_k = ∫ e^{-ikθ} dμ(t = 5) (a weak norm defined alike for
cell averages and node values) against a reference (spectral scheme with
rtol = 1e-11 at N = 512 when available, else finite volume at N = 8192).
"Equal accuracy": each method's cheapest grid whose error is below the
target; the table prints wall times (best of 3 for N ≤ 512, after a warm-up
run of each method) and their ratio to the baseline's.

Run with ``OMP_NUM_THREADS=1 python benchmarks/bench_circle_direct_quadrature.py``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import meanfield as mf
from solvers import CallableVelocity, CircleFiniteVolume, CircleGrid, CircleSpectral, evolve

BETA = 4.0
FINAL_TIME = 5.0
N_MOMENTS = 8


def initial_values(n: int, cell_averages: bool) -> np.ndarray:
    """ρ₀ at the nodes, or its exact cell averages (mode k scaled by sinc(kh/2))."""
    theta = CircleGrid(n).theta

    def factor(k: int) -> float:
        return float(np.sinc(k / n)) if cell_averages else 1.0

    values = 1 + 0.1 * np.cos(theta) * factor(1) + 0.1 * np.sin(2 * theta) * factor(2)
    values = values + 0.05 * np.cos(3 * theta) * factor(3)
    return (values / (2 * np.pi))[None]


def moments(values: np.ndarray, cell_averages: bool) -> np.ndarray:
    """m_k = ∫ e^{-ikθ} dμ, k = 1..8: of the piecewise-constant density (cell averages) or of
    the trigonometric interpolant (node values)."""
    n = values.shape[-1]
    k = np.arange(1, N_MOMENTS + 1)
    coeffs = np.fft.rfft(values[0])[k] * (2 * np.pi / n)
    return coeffs * np.sinc(k / n) if cell_averages else coeffs


def direct_velocity(n: int) -> CallableVelocity:
    """SA velocity by dense O(N²) quadrature at the cell centres."""
    grid = CircleGrid(n)
    gap = grid.theta[:, None] - grid.theta[None, :]
    kernel = np.exp(BETA * np.cos(gap)) * grid.spacing
    stacked = np.concatenate([-np.sin(gap) * kernel, kernel])

    def func(y: np.ndarray) -> np.ndarray:
        both = stacked @ y[0]
        return (both[:n] / both[n:])[None]

    return CallableVelocity(func)


def run(method: str, n: int, repeat: int = 1, **options) -> tuple[float, np.ndarray | None, int, str]:
    """Best wall time of ``repeat`` runs, Fourier moments at t = 5 (None if the scheme stopped),
    steps, and the run's message (construction and FFT planning are not timed)."""
    model = mf.SelfAttention(BETA, normalized=True)
    grid = CircleGrid(n)
    if method == "fv-fft":
        scheme = CircleFiniteVolume(grid, model.velocity_spec(2))
    elif method == "fv-direct":
        scheme = CircleFiniteVolume(grid, direct_velocity(n))
    else:
        scheme = CircleSpectral(grid, model.velocity_spec(2), **options)
    cells = method.startswith("fv")
    y0 = initial_values(n, cell_averages=cells)
    elapsed = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        result = evolve(scheme, y0, [0.0, FINAL_TIME])
        elapsed = min(elapsed, time.perf_counter() - start)
    if not result.success:
        return elapsed, None, result.n_steps, result.message
    return elapsed, moments(result.y[-1], cell_averages=cells), result.n_steps, ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=float, default=2e-4, help="error target for 'equal accuracy'")
    args = parser.parse_args(argv)
    if os.environ.get("OMP_NUM_THREADS") != "1":
        print("note: set OMP_NUM_THREADS=1 for comparable timings")
    reference = run("spectral", 512, rtol=1e-11, atol=1e-14)[1]
    reference_name = "spectral N=512 rtol=1e-11"
    if reference is None:
        print("the reference run failed")
        return 1
    print(f"SA beta={BETA}, t in [0, {FINAL_TIME}], error = max_k<=8 |m_k - m_k(ref)|, reference: {reference_name}")
    plans: list[tuple[str, list[int], dict]] = [
        ("fv-direct", [64, 128, 256, 512, 1024], {}),
        ("fv-fft", [64, 128, 256, 512, 1024], {}),
        ("spectral", [32, 64, 128, 256], {"rtol": 1e-6, "atol": 1e-10}),
    ]
    for method, _, options in plans:  # warm-up: compiled kernels, FFT plans
        run(method, 64, **options)
    print(f"{'method':>10} {'N':>5} {'steps':>6} {'time [s]':>9} {'error':>9}")
    chosen: dict[str, tuple[int, float, float]] = {}
    for method, sizes, options in plans:
        for n in sizes:
            elapsed, values, steps, message = run(method, n, repeat=3 if n <= 512 else 1, **options)
            if values is None:
                print(f"{method:>10} {n:>5} {steps:>6} {elapsed:>9.4f}  stopped: {message[:60]}")
                continue
            error = float(np.max(np.abs(values - reference)))
            print(f"{method:>10} {n:>5} {steps:>6} {elapsed:>9.4f} {error:>9.2e}")
            if error < args.target:
                chosen[method] = (n, elapsed, error)
                break
    print(f"\nequal accuracy (error < {args.target:g}); ratio = baseline time / method time")
    if "fv-direct" not in chosen:
        print("baseline fv-direct did not reach the target on the grids tried")
        return 1
    base = chosen["fv-direct"][1]
    for method, (n, elapsed, error) in chosen.items():
        print(
            f"{method:>10}: N={n:>5}  time {elapsed:8.4f} s  error {error:.2e}  "
            f"speed-up vs fv-direct {base / elapsed:7.1f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

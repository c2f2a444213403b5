"""Cost of the S² schemes.

1. One right-hand side of the spherical-harmonic scheme as a ratio to one
   scalar transform pair (synthesis + analysis on the Gauss–Legendre grid of
   the same lmax), both with ducc0 on one thread, for SA at β = 4:

   * ``stage``: :meth:`SphereSpectral.nonlinear`, coefficients to
     coefficients — the cost of one Runge–Kutta stage (spin-1 gradient
     synthesis, two scalar syntheses and one adjoint spin-1 transform on the
     padded grid of band limit ⌈3 lmax/2⌉);
   * ``rhs``: :meth:`SphereSpectral.rhs`, node values to node values (adds an
     analysis and a synthesis).

2. Finite volume vs spectral at equal accuracy on a smooth problem: SA,
   β = 2, σ = 0.1, ρ₀ a von Mises–Fisher density (κ = 2), t = 0.5. Error:
   L¹ distance to a spectral reference at lmax = 40 (cell averages for the
   finite-volume scheme, Gauss–Legendre quadrature for the spectral one).

Run with ``OMP_NUM_THREADS=1 python benchmarks/bench_sphere.py`` (``--quick``
skips lmax = 255 and the finest finite-volume grid).
"""

from __future__ import annotations

import argparse
import time
import timeit

import numpy as np

import meanfield as mf
from solvers import SphereFiniteVolume, SphereGrid, SphereSpectral, evolve


def _best(func, min_time: float) -> float:
    """Best time per call in seconds over 5 repeats of about ``min_time`` each."""
    timer = timeit.Timer(func)
    number, _ = timer.autorange()
    number = max(1, int(number * min_time / 0.2))
    return min(timer.repeat(repeat=5, number=number)) / number


def measure_rhs(lmax: int, min_time: float = 0.05) -> dict[str, float]:
    grid = SphereGrid(lmax)
    scheme = SphereSpectral(grid, mf.SelfAttention(4.0).velocity_spec(3))
    s = mf.Sphere(lmax)
    y = mf.von_mises(s, [0.0, 0.6, 0.8], 3.0).values[None]
    alm = grid.analysis(y[0])
    pair = _best(lambda: grid.analysis(grid.synthesis(alm)), min_time)
    stage = _best(lambda: scheme.nonlinear(alm), min_time)
    rhs = _best(lambda: scheme.rhs(y), min_time)
    return {"pair": pair, "stage": stage, "rhs": rhs}


def accuracy_race(quick: bool) -> list[tuple[str, int, float, float, int]]:
    model = mf.SelfAttention(2.0, noise=0.1)
    t = [0.0, 0.5]
    ref_dom = mf.Sphere(40)
    ref_grid = ref_dom.grid
    rho_ref0 = mf.von_mises(ref_dom, [0.6, 0.0, 0.8], 2.0).values[None]
    ref_scheme = SphereSpectral(ref_grid, model.velocity_spec(3), diffusion=0.1, rtol=1e-12, atol=1e-15)
    ref = evolve(ref_scheme, rho_ref0, t).y[-1]
    ref_alm = ref_grid.analysis(ref[0])
    rows = []
    for lmax in (6, 8, 10, 12, 16, 20):
        dom = mf.Sphere(lmax)
        scheme = SphereSpectral(dom.grid, model.velocity_spec(3), diffusion=0.1, rtol=1e-8, atol=1e-11, tail_tol=1.0)
        rho0 = mf.von_mises(dom, [0.6, 0.0, 0.8], 2.0).values[None]
        start = time.perf_counter()
        run = evolve(scheme, rho0, t)
        elapsed = time.perf_counter() - start
        alm = np.zeros_like(ref_alm)
        alm[ref_grid.degrees <= lmax] = dom.grid.analysis(run.y[-1][0])
        err = np.sum(ref_grid.weights * np.abs(ref_grid.synthesis(alm) - ref[0]))
        rows.append(("spectral", lmax, err, elapsed, run.n_steps))
    for n_lat in (8, 16, 32) if quick else (8, 16, 32, 64):
        scheme = SphereFiniteVolume(ref_grid, model.velocity_spec(3), diffusion=0.1, n_lat=n_lat, lmax_velocity=20)
        y0 = scheme.from_grid(rho_ref0)
        start = time.perf_counter()
        run = evolve(scheme, y0, t)
        elapsed = time.perf_counter() - start
        err = np.sum(scheme.mesh.area * np.abs(run.y[-1] - scheme.from_grid(ref)))
        rows.append(("finite_volume", n_lat, err, elapsed, run.n_steps))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    print("spectral RHS on S², SA β = 4, ducc0 1 thread; baseline = one scalar synthesis + analysis")
    print(f"{'lmax':>5} {'pair [ms]':>10} {'stage [ms]':>11} {'rhs [ms]':>9} {'stage/pair':>11} {'rhs/pair':>9}")
    for lmax in (63, 127) if args.quick else (63, 127, 255):
        r = measure_rhs(lmax)
        print(
            f"{lmax:5d} {1e3 * r['pair']:10.3f} {1e3 * r['stage']:11.3f} {1e3 * r['rhs']:9.3f} "
            f"{r['stage'] / r['pair']:11.2f} {r['rhs'] / r['pair']:9.2f}"
        )
    print("\nequal accuracy: SA β = 2, σ = 0.1, vMF κ = 2, t = 0.5; L1 error vs spectral lmax = 40")
    print(f"{'method':>14} {'resolution':>10} {'L1 error':>10} {'time [s]':>9} {'steps':>6}")
    rows = accuracy_race(args.quick)
    for method, res, err, elapsed, steps in rows:
        print(f"{method:>14} {res:10d} {err:10.2e} {elapsed:9.3f} {steps:6d}")
    for target in (1e-2, 1e-3):
        best = {}
        for method, _res, err, elapsed, _steps in rows:
            if err <= target:
                best[method] = min(best.get(method, np.inf), elapsed)
        if len(best) == 2:
            ratio = best["finite_volume"] / best["spectral"]
            print(f"L1 error <= {target:.0e}: finite volume / spectral time = {ratio:.1f}")
        else:
            print(f"L1 error <= {target:.0e}: reached only by {sorted(best)}")


if __name__ == "__main__":
    main()

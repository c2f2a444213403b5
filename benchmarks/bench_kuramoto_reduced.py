"""A Kuramoto bifurcation diagram r∞(K) three ways: the Ott–Antonsen engine, particles, the PDE.

Workload: the README's diagram, Lorentzian γ = 0.5, σ = 0, K = 0, 0.25, …, 3 (13 couplings), t ∈ [0, 60],
r∞ = mean of r over [40, 60], theory √(1 - 2γ/K) above K_c = 1.

* ``ott-antonsen``: :func:`meanfield.kuramoto_bifurcation` with ``engine="ott-antonsen"`` — the 13 couplings as
  one batch of one complex amplitude each (rtol 1e-10);
* ``particles``: n = 5000 oscillators × 4 seeds per coupling (52 tasks of the exact-drift integrator), on a
  dask LocalCluster of 2 workers (the command's default) and serially, at the study's default rtol 1e-3 and at
  the earlier default 1e-4 (the baseline of the particle timings);
* ``pde``: one coupling (K = 2) by the PDE at the law's pole (spectral, N = 256), and by the study's PDE engine
  (finite volume on 32 quantile nodes in ω, grid 128) — what a diagram point costs there.

Printed: wall time, max |r∞ - theory| over K ≥ 1.5 (where r(60) has converged; closer to K_c the growth
rate ∝ K - K_c leaves r short of its limit), and ratios against the Ott–Antonsen batch.

Run with ``python benchmarks/bench_kuramoto_reduced.py [--skip-slow]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.stats

import meanfield as mf
from meanfield.studies import kuramoto_run

GAMMA, T_FINAL, WINDOW = 0.5, 60.0, 20.0
COUPLINGS = np.linspace(0, 3, 13)


def theory_error(ds) -> float:
    converged = ds["coupling"].values >= 1.5
    return float(np.max(np.abs(ds["r_mean"].values - ds["r_theory"].values)[converged]))


def timed(label: str, call, baseline: float | None) -> float:
    start = time.perf_counter()
    ds = call()
    wall = time.perf_counter() - start
    ratio = f"{wall / baseline:9.0f}x" if baseline else f"{'1':>9}x"
    print(f"{label:<44} {wall:9.3f} s {ratio} {theory_error(ds):12.2e}")
    return wall


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-slow", action="store_true", help="skip the serial and rtol 1e-4 particle runs")
    args = parser.parse_args(argv)
    common = {"frequencies": "lorentzian", "width": GAMMA, "t_final": T_FINAL, "average_window": WINDOW}
    mf.kuramoto_bifurcation([1.0], engine="ott-antonsen", **common)  # compile outside the timings
    kuramoto_run(2.0, 0, law="lorentzian", width=GAMMA, n=200, t_final=2.0, average_window=1.0)
    print(f"Kuramoto, Lorentzian gamma = {GAMMA}, 13 couplings in [0, 3], t_final = {T_FINAL:g}")
    print(f"{'engine':<44} {'wall':>11} {'ratio':>10} {'max|r-th|':>12}")
    base = timed("ott-antonsen (one batch)", lambda: mf.kuramoto_bifurcation(COUPLINGS, engine="ott-antonsen",
                                                                             **common), None)
    particles = {"engine": "particles", "n": 5000, "seeds": 4, **common}
    timed("particles 5000 x 4, rtol 1e-3, dask 2 workers",
          lambda: mf.kuramoto_bifurcation(COUPLINGS, n_workers=2, **particles), base)
    if not args.skip_slow:
        timed("particles 5000 x 4, rtol 1e-3, serial",
              lambda: mf.kuramoto_bifurcation(COUPLINGS, scheduler="serial", **particles), base)
        timed("particles 5000 x 4, rtol 1e-4, dask 2 workers",
              lambda: mf.kuramoto_bifurcation(COUPLINGS, n_workers=2, rtol=1e-4, **particles), base)
    model = mf.Kuramoto(2.0, scipy.stats.cauchy(0, GAMMA))
    start = time.perf_counter()
    pole = mf.solve(model, mf.density(mf.Circle(256), lambda t: 1 + 0.1 * np.cos(t)), np.linspace(0, T_FINAL, 121))
    wall = time.perf_counter() - start
    error = abs(float(pole.order_parameter[-40:].mean()) - float(mf.kuramoto_theory(2.0, model.frequencies)))
    print(f"{'pde at the pole, K = 2 (one point)':<44} {wall:9.3f} s {wall / base:9.0f}x {error:12.2e}")
    if not args.skip_slow:
        start = time.perf_counter()
        nodes = kuramoto_run(2.0, law="lorentzian", width=GAMMA, engine="pde", t_final=T_FINAL,
                             average_window=WINDOW)
        wall = time.perf_counter() - start
        error = abs(float(nodes.r_inf) - float(mf.kuramoto_theory(2.0, model.frequencies)))
        print(f"{'pde finite volume on nodes, K = 2 (one point)':<44} {wall:9.3f} s {wall / base:9.0f}x "
              f"{error:12.2e}")


if __name__ == "__main__":
    main()

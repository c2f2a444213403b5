"""Kuramoto particles with Lorentzian frequencies: exact-drift ``moebius`` integrator vs ``dopri5``.

Workload: n oscillators, γ = 0.6, K = 4, midpoint-quantile frequencies
(max|ω_i| ≈ 2nγ/π: 15 000 at n = 40 000), iid uniform initial phases (seed 0),
outputs every 0.5 on t ∈ [0, 30]; r∞ = mean of r(t) over t ∈ [20, 30] against
√(1 - 2γ/K).

Baseline: ``method="dopri5"`` (adaptive RK in chart coordinates, RMS error norm
over particles) at the tolerances ``--dopri-rtol`` (atol = rtol·1e-3), in the
same run, over the whole interval at every n. Accuracy of the path: at
n = ``--check-n`` every run is compared with a reference that resolves every
oscillator (``moebius`` with fixed dt = 1/(4 max|ω_i|), the plain order-4
scheme, checked against ``dopri5`` at 1e-11 in the tests): max over output
times of |Z - Z_ref|. The ratio is taken against the dopri5 run whose |dZ| at
n = check-n is closest to (not better than needed for) the moebius run's.

Run with ``OMP_NUM_THREADS=1 python benchmarks/bench_kuramoto_particles.py``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.stats

import meanfield as mf

GAMMA, COUPLING, T_FINAL = 0.6, 4.0, 30.0


def run(n: int, method: str, rtol: float | None, dt: float | None = None):
    """(wall time, |r∞ - theory|, steps, Z(t)) of one run."""
    model = mf.Kuramoto(coupling=COUPLING, frequencies=scipy.stats.cauchy(0, GAMMA))
    theta0 = np.random.default_rng(0).uniform(0, 2 * np.pi, n)
    times = np.linspace(0, T_FINAL, 61)
    options = {"dt": dt} if dt is not None else {"rtol": rtol, "atol": rtol * 1e-3}
    start = time.perf_counter()
    ds = mf.simulate(model, theta0, times, method=method, **options)
    wall = time.perf_counter() - start
    late = ds["order_parameter"].values[times >= 20]
    z = np.mean(np.exp(1j * ds["positions"].values), axis=-1)
    return wall, abs(float(late.mean()) - np.sqrt(1 - 2 * GAMMA / COUPLING)), int(ds.attrs["n_steps"]), z


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 40_000])
    parser.add_argument("--check-n", type=int, default=1000, help="n at which the path of Z is checked")
    parser.add_argument("--rtol", type=float, default=1e-3, help="tolerance of moebius (on Z; r_inf needs no more)")
    parser.add_argument("--dopri-rtol", type=float, nargs="+", default=[1e-3, 1e-5],
                        help="tolerances of the dopri5 baseline")
    args = parser.parse_args(argv)
    run(200, "moebius", args.rtol)  # compile the kernels outside the timings
    print(f"Kuramoto, Lorentzian gamma = {GAMMA}, K = {COUPLING}, t in [0, {T_FINAL:g}], rtol = {args.rtol:g}; "
          f"r_inf error against sqrt(1 - 2 gamma/K) = {np.sqrt(1 - 2 * GAMMA / COUPLING):.4f}")
    print(f"{'n':>7} {'max|w|':>9} {'method':>8} {'rtol':>7} {'s':>8} {'steps':>6} {'r err':>7} {'|dZ|':>8}")
    for n in args.sizes:
        w_max = GAMMA * np.tan(np.pi * (0.5 - 0.5 / n))
        z_ref = run(n, "moebius", None, dt=1 / (4 * w_max))[3] if n == args.check_n else None
        rows = [("moebius", args.rtol)] + [("dopri5", r) for r in args.dopri_rtol]
        for method, rtol in rows:
            t, e, steps, z = run(n, method, rtol)
            dz = f"{np.abs(z - z_ref).max():8.1e}" if z_ref is not None else "-"
            print(f"{n:7d} {w_max:9.4g} {method:>8} {rtol:7.0e} {t:8.2f} {steps:6d} {e:7.4f} {dz:>8}", flush=True)


if __name__ == "__main__":
    main()

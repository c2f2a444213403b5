"""Kuramoto particles with Lorentzian frequencies: exact-drift ``moebius`` integrator vs ``dopri5``.

Workload: n oscillators, γ = 0.6, K = 4, midpoint-quantile frequencies
(max|ω_i| ≈ 2nγ/π), iid uniform initial phases (seed 0), outputs every 0.5 on
t ∈ [0, 30]; r∞ = mean of r(t) over t ∈ [20, 30] against √(1 - 2γ/K).

Baseline: ``method="dopri5"`` (adaptive RK in chart coordinates, per-particle
error norm) at the same tolerance, in the same run: over the whole of [0, 30]
for the smaller n; at the target n only over t ∈ [0, ``--probe``] and scaled by
30/probe — its step is set by the fastest oscillators (h ∝ 1/max|ω_i|) for the
whole run, so its cost is linear in the length of the interval (stated in the
output; the full run does not finish in 15 minutes). The ``moebius``
integrator is timed over [0, 30] at every n, including the target n = 40 000.

Run with ``OMP_NUM_THREADS=1 python benchmarks/bench_kuramoto_particles.py``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.stats

import meanfield as mf

GAMMA, COUPLING, T_FINAL = 0.6, 4.0, 30.0


def run(n: int, method: str, rtol: float, t_final: float = T_FINAL) -> tuple[float, float, int]:
    """Wall time, |r∞ - √(1 - 2γ/K)| and steps of one run."""
    model = mf.Kuramoto(coupling=COUPLING, frequencies=scipy.stats.cauchy(0, GAMMA))
    theta0 = np.random.default_rng(0).uniform(0, 2 * np.pi, n)
    times = np.linspace(0, t_final, 61)
    start = time.perf_counter()
    ds = mf.simulate(model, theta0, times, method=method, rtol=rtol, atol=rtol * 1e-3)
    wall = time.perf_counter() - start
    late = ds["order_parameter"].values[times >= 20]
    error = abs(float(late.mean()) - np.sqrt(1 - 2 * GAMMA / COUPLING)) if late.size else np.nan
    return wall, error, int(ds.attrs["n_steps"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40_000, help="target number of oscillators")
    parser.add_argument("--dopri-sizes", type=int, nargs="+", default=[250, 500, 1000],
                        help="sizes at which the dopri5 baseline is measured")
    parser.add_argument("--rtol", type=float, default=1e-4,
                        help="tolerance of both methods (moebius: on Z; r_inf needs no more than this)")
    parser.add_argument("--probe", type=float, default=2.0, help="dopri5 at the target n runs on [0, probe]")
    args = parser.parse_args(argv)
    run(200, "moebius", args.rtol)  # compile the kernels outside the timings
    print(f"Kuramoto, Lorentzian gamma = {GAMMA}, K = {COUPLING}, t in [0, {T_FINAL:g}], rtol = {args.rtol:g}; "
          f"r_inf error against sqrt(1 - 2 gamma/K) = {np.sqrt(1 - 2 * GAMMA / COUPLING):.4f}")
    print(f"{'n':>7} {'max|w|':>9} {'dopri5 s':>10} {'steps':>8} {'err':>8} {'moebius s':>10} {'steps':>6} "
          f"{'err':>8} {'ratio':>8}")
    for n in args.dopri_sizes:
        w_max = GAMMA * np.tan(np.pi * (0.5 - 0.5 / n))
        t_d, e_d, s_d = run(n, "dopri5", args.rtol)
        t_m, e_m, s_m = run(n, "moebius", args.rtol)
        print(f"{n:7d} {w_max:9.4g} {t_d:10.3f} {s_d:8d} {e_d:8.4f} {t_m:10.3f} {s_m:6d} {e_m:8.4f} "
              f"{t_d / t_m:8.1f}")
    n = args.n
    t_m, e_m, s_m = run(n, "moebius", args.rtol)
    t_probe, _, s_probe = run(n, "dopri5", args.rtol, t_final=args.probe)
    scale = T_FINAL / args.probe
    t_d = t_probe * scale
    w_max = GAMMA * np.tan(np.pi * (0.5 - 0.5 / n))
    print(f"{n:7d} {w_max:9.4g} {t_d:10.4g}* {s_probe * scale:8.3g}* {'-':>7} {t_m:10.3f} {s_m:6d} {e_m:8.4f} "
          f"{t_d / t_m:8.0f}*")
    print(f"* dopri5 at n = {n}: measured on [0, {args.probe:g}] ({t_probe:.2f} s, {s_probe} steps) and scaled by "
          f"{scale:g} (its step is set by max|w| for the whole run)")
    print(f"moebius, n = {n}: {t_m:.2f} s (target < 30 s), |r_inf - theory| = {e_m:.4f} (target <= 0.02)")


if __name__ == "__main__":
    main()

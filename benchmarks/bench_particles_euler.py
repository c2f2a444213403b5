"""Time to reach a given accuracy at t = 10: adaptive exponential-chart DOPRI5 vs forward Euler + renormalise.

Baseline (the loop of the authors' scripts, reimplemented here with the same
blocked-BLAS velocity): x ← x + dt·X(x); x ← x/|x|. Model: SA, β = 1, n iid
uniform points on S^{d-1} (d = 2 as unit vectors in R²). Accuracy: max_i |x_i(10) - x_i^ref(10)|
against DOPRI5 at rtol = 1e-12. Target ``--target`` (default 1e-6).

* DOPRI5: the largest rtol in 1e-4, 1e-5, … that meets the target, timed.
* Euler: error measured at dt = 0.04 and 0.02 (observed order p ≈ 1), the
  step dt* meeting the target predicted as 0.02·(target/err)^{1/p}; if
  10/dt* steps cost ≤ ``--budget`` seconds they are run and timed ("run"),
  otherwise the time is extrapolated from the measured cost per step ("extrap").

Run with ``OMP_NUM_THREADS=1 python benchmarks/bench_particles_euler.py`` (n = 32, 256) and
``... --sizes 1024`` (a separate run of a few minutes).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import meanfield as mf
from meanfield.models._self_attention_sums import DirectSelfAttention

T_END = 10.0


def euler_renormalise(x0: np.ndarray, velocity, dt: float, t_end: float = T_END) -> np.ndarray:
    """x ← x + dt·X(x); x ← x/|x| for round(t_end/dt) steps."""
    x = x0[None].copy()
    for _ in range(int(round(t_end / dt))):
        x += dt * velocity(0.0, x)
        x /= np.linalg.norm(x, axis=-1, keepdims=True)
    return x[0]


def run(n: int, d: int, target: float, budget: float) -> dict:
    x0 = mf.particles.uniform_sphere(n, d, seed=n + d)
    model = mf.SelfAttention(1.0)
    ref = mf.simulate(model, x0, [0, T_END], rtol=1e-12, atol=1e-14)["positions"].values[-1]
    out = {"n": n, "d": d}
    for rtol in 10.0 ** -np.arange(4, 13):
        start = time.perf_counter()
        ds = mf.simulate(model, x0, [0, T_END], rtol=rtol, atol=rtol * 1e-2)
        elapsed = time.perf_counter() - start
        err = np.abs(ds["positions"].values[-1] - ref).max()
        if err <= target:
            out.update(ours=elapsed, ours_err=err, rtol=rtol, nfev=ds.attrs["nfev"])
            break
    velocity = DirectSelfAttention(1.0, True, np.full((1, n), 1.0 / n), False)
    errs, costs = [], []
    for dt in (0.04, 0.02):
        start = time.perf_counter()
        x = euler_renormalise(x0, velocity, dt)
        costs.append((time.perf_counter() - start) / (T_END / dt))
        errs.append(np.abs(x - ref).max())
    order = np.log2(errs[0] / errs[1])
    dt_star = 0.02 * (target / errs[1]) ** (1 / order)
    steps = int(np.ceil(T_END / dt_star))
    predicted = steps * min(costs)
    if predicted <= budget:
        dt_run = T_END / steps
        start = time.perf_counter()
        x = euler_renormalise(x0, velocity, dt_run)
        out.update(euler=time.perf_counter() - start, euler_err=np.abs(x - ref).max(), how="run")
    else:
        out.update(euler=predicted, euler_err=np.nan, how="extrap")
    out.update(euler_steps=steps, euler_order=order, euler_err02=errs[1])
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=float, default=1e-6)
    parser.add_argument("--budget", type=float, default=10.0, help="seconds allowed for one Euler run")
    parser.add_argument("--sizes", type=int, nargs="*", default=[32, 256])
    parser.add_argument("--dims", type=int, nargs="*", default=[2, 3, 64])
    args = parser.parse_args(argv)
    print(f"SA beta = 1, t = {T_END}, target max error {args.target:g}; times in s (1 thread)")
    print(f"{'n':>5} {'d':>3} {'dopri5':>9} {'rtol':>7} {'err':>8} {'nfev':>6} {'euler':>10} {'how':>7} "
          f"{'steps':>9} {'order':>6} {'ratio':>8}")
    for n in args.sizes:
        for d in args.dims:
            r = run(n, d, args.target, args.budget)
            print(f"{n:5d} {d:3d} {r['ours']:9.3f} {r['rtol']:7.0e} {r['ours_err']:8.1e} {r['nfev']:6d} "
                  f"{r['euler']:10.2f} {r['how']:>7} {r['euler_steps']:9d} {r['euler_order']:6.2f} "
                  f"{r['euler'] / r['ours']:8.1f}  (Euler err at dt=0.02: {r['euler_err02']:.1e})")


if __name__ == "__main__":
    main()

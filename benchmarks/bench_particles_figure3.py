"""Paper 2, Figure 3 workload on the circle: d = 2, n = 32, 2048 systems per β, 90 β in [0.1, 9], t ∈ [0, 30].

Each β is one batched ``simulate`` call of 2048 independent SA systems (angles,
iid uniform initial tokens, DOPRI5 with rtol = 1e-6, 61 output times). The
quantity of the figure, P(<x_1(t), x_2(t)> ≥ 1 - δ) with δ = 1e-3, is computed
for each β. By default ``--betas 3`` values spread over [0.1, 9] are timed and
the total for 90 is extrapolated by the mean time per β (stated in the output);
``--betas 90`` runs the whole workload.

Baseline: forward Euler on angles with dt = 0.1 (the step size of a
figure-quality Euler loop), timed on the same 2048 systems for the same β.
Times are of the integration only: ``wall_time`` of ``simulate`` (the
integrator call, without building the dataset and its energies) and the Euler
loop; the column "ratio" is dopri5 / Euler.

Run with ``OMP_NUM_THREADS=1 python benchmarks/bench_particles_figure3.py``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import meanfield as mf
from meanfield.particles._velocity import DirectSelfAttention

N_PARTICLES, N_SYSTEMS, T_END, DELTA = 32, 2048, 30.0, 1e-3
ALL_BETAS = np.linspace(0.1, 9.0, 90)


def euler_angles(theta0: np.ndarray, beta: float, dt: float) -> np.ndarray:
    velocity = DirectSelfAttention(beta, True, np.full(theta0.shape, 1.0 / theta0.shape[1]), "circle")
    theta = theta0.copy()
    for _ in range(int(round(T_END / dt))):
        theta += dt * velocity(0.0, theta)
    return theta


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--betas", type=int, default=3, help="number of β values timed (of 90)")
    parser.add_argument("--rtol", type=float, default=1e-6)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    times = np.linspace(0, T_END, 61)
    pick = np.linspace(0, ALL_BETAS.size - 1, args.betas).round().astype(int)
    print(f"Figure 3 workload: n = {N_PARTICLES}, {N_SYSTEMS} systems per beta, t in [0, {T_END}], "
          f"rtol = {args.rtol:g}; 1 thread")
    print(f"{'beta':>6} {'dopri5 s':>9} {'steps':>6} {'nfev':>6} {'euler0.1 s':>11} {'ratio':>6} {'P(t=5)':>7} "
          f"{'P(t=30)':>8}")
    total, total_euler = 0.0, 0.0
    for beta in ALL_BETAS[pick]:
        theta0 = rng.uniform(0, 2 * np.pi, (N_SYSTEMS, N_PARTICLES))
        ds = mf.simulate(mf.SelfAttention(float(beta)), theta0, times, rtol=args.rtol, atol=args.rtol * 1e-2,
                         domain="circle", seed=0)
        elapsed = float(ds.attrs["wall_time"])
        total += elapsed
        start = time.perf_counter()
        euler_angles(theta0, float(beta), 0.1)
        elapsed_euler = time.perf_counter() - start
        total_euler += elapsed_euler
        pos = ds["positions"].values
        close = np.cos(pos[:, :, 0] - pos[:, :, 1]) >= 1 - DELTA
        prob = close.mean(axis=0)
        print(f"{beta:6.2f} {elapsed:9.2f} {ds.attrs['n_steps']:6d} {ds.attrs['nfev']:6d} "
              f"{elapsed_euler:11.2f} {elapsed / elapsed_euler:6.2f} {prob[10]:7.3f} {prob[-1]:8.3f}")
    scale = ALL_BETAS.size / args.betas
    kind = "measured" if args.betas == ALL_BETAS.size else f"extrapolated from {args.betas} betas (x{scale:.1f})"
    print(f"total for 90 betas ({kind}): dopri5 {total * scale:.0f} s, euler dt=0.1 {total_euler * scale:.0f} s, "
          f"ratio dopri5/euler {total / total_euler:.2f}")


if __name__ == "__main__":
    main()

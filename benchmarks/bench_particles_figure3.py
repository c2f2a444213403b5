"""Paper 2, Figure 3 workload on the circle: d = 2, n = 32, 2048 systems per β, 90 β in [0.1, 9], t ∈ [0, 30].

The full workload is run: for each β one batched ``simulate`` of all systems
(SA, iid uniform angles, Dormand–Prince 5(4) per system on the compiled
"ensemble" path at ``--rtol``, 61 output times) followed by the statistic of the
figure, P(<x_1(t), x_2(t)> ≥ 1 - δ), δ = 1e-3, estimated by the mean over
systems of the fraction of ordered pairs above the threshold
(:func:`meanfield.particles.pair_fraction`). "total" is the wall time of both,
dataset building (energies, order parameters) included, on numba's threads.

Accuracy: the first ``--reference-systems`` systems of every β (the same
initial conditions) are run again at rtol = 1e-8 (atol 1e-10); the deviation is
the largest |P_run - P_ref| over (β, t) of the statistic averaged over those
systems, to compare with the Monte-Carlo error √(P(1-P)/systems) of the full run.

Baseline: the authors' forward-Euler-and-renormalise loop in R²,
x_i ← (x_i + dt v_i)/|x_i + dt v_i| with v_i = P⊥_{x_i} Σ_j softmax_j(β<x_i,x_j>) x_j
and dt = 0.1, written as batched numpy (matmul over all systems of a block).
Its cost does not depend on β, so it is timed on ``--euler-systems`` systems at
``--euler-betas`` values of β and scaled to the full workload (stated in the
output); its statistic's deviation from the reference is printed too. The
per-system time single-threaded is measured on ``--euler-systems`` systems at
the same β values (numba set to one thread), which also gives a ratio to Euler
on the same systems with one thread each (less exposed to a shared machine).

Run with ``OMP_NUM_THREADS=1 python benchmarks/bench_particles_figure3.py``
(``--betas 10`` for a quick look; the default is the whole workload).
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np

import meanfield as mf
from meanfield.particles import pair_fraction

N_PARTICLES, N_SYSTEMS, T_END, DELTA, N_TIMES = 32, 2048, 30.0, 1e-3, 61
ALL_BETAS = np.linspace(0.1, 9.0, 90)


def initial_angles(index: int, systems: int) -> np.ndarray:
    """iid uniform angles of ``systems`` systems for the β of the given index (system s: seed (index, s))."""
    return np.stack([np.random.default_rng(np.random.SeedSequence([index, s])).uniform(0, 2 * np.pi, N_PARTICLES)
                     for s in range(systems)])


def euler_renormalise(theta0: np.ndarray, beta: float, dt: float, times: np.ndarray) -> np.ndarray:
    """Forward Euler with renormalisation in R²; positions (systems, time, n, 2) at ``times`` (multiples of dt)."""
    x = np.stack([np.cos(theta0), np.sin(theta0)], axis=-1)
    out = [x.copy()]
    record = set(np.round(times[1:] / dt).astype(int))
    for step in range(1, int(round(times[-1] / dt)) + 1):
        gram = x @ np.swapaxes(x, 1, 2)
        weights = np.exp(beta * (gram - 1.0))
        weights /= weights.sum(axis=-1, keepdims=True)
        v = weights @ x
        v -= np.sum(v * x, axis=-1, keepdims=True) * x
        x = x + dt * v
        x /= np.linalg.norm(x, axis=-1, keepdims=True)
        if step in record:
            out.append(x.copy())
    return np.stack(out, axis=1)


def run(theta0: np.ndarray, beta: float, times: np.ndarray, rtol: float, atol: float) -> tuple[np.ndarray, float]:
    """Pair fractions (systems, time) of one β and the integration wall time."""
    ds = mf.simulate(mf.SelfAttention(float(beta)), theta0, times, rtol=rtol, atol=atol, domain="circle", seed=0)
    if not ds.attrs["success"]:
        raise RuntimeError(f"beta = {beta}: {ds.attrs['message']}")
    return pair_fraction(ds, DELTA).values, float(ds.attrs["wall_time"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--betas", type=int, default=ALL_BETAS.size, help="number of the 90 β values run")
    parser.add_argument("--systems", type=int, default=N_SYSTEMS)
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--reference-systems", type=int, default=256)
    parser.add_argument("--euler-systems", type=int, default=256)
    parser.add_argument("--euler-betas", type=int, default=3)
    args = parser.parse_args(argv)
    times = np.linspace(0, T_END, N_TIMES)
    pick = np.linspace(0, ALL_BETAS.size - 1, args.betas).round().astype(int)
    n_ref = min(args.reference_systems, args.systems)
    atol = args.rtol * 1e-2
    print(f"Figure 3 workload: n = {N_PARTICLES}, {args.systems} systems x {pick.size} betas, t in [0, {T_END}], "
          f"{N_TIMES} outputs, rtol = {args.rtol:g}, atol = {atol:g}; numba threads {numba.get_num_threads()}")
    mf.simulate(mf.SelfAttention(1.0), initial_angles(0, 2), times[:2], domain="circle")  # compile / load cache

    total = integration = 0.0
    probability = np.empty((pick.size, N_TIMES))
    subset = np.empty((pick.size, N_TIMES))
    starts = {}
    for row, index in enumerate(pick):
        theta0 = initial_angles(int(index), args.systems)
        starts[index] = theta0
        start = time.perf_counter()
        fractions, wall = run(theta0, ALL_BETAS[index], times, args.rtol, atol)
        probability[row] = fractions.mean(axis=0)
        total += time.perf_counter() - start
        integration += wall
        subset[row] = fractions[:n_ref].mean(axis=0)
    mc_error = np.sqrt(probability * (1 - probability) / args.systems).max()
    print(f"new path: total {total:.1f} s for {pick.size} betas (integration {integration:.1f} s), "
          f"{total / (pick.size * args.systems) * 1e3:.3f} ms per system on {numba.get_num_threads()} threads")

    reference = np.empty_like(subset)
    for row, index in enumerate(pick):
        reference[row] = run(starts[index][:n_ref], ALL_BETAS[index], times, 1e-8, 1e-10)[0].mean(axis=0)
    deviation = np.abs(subset - reference)
    worst = np.unravel_index(np.argmax(deviation), deviation.shape)
    print(f"statistic vs rtol=1e-8 reference on the first {n_ref} systems of every beta: max |dP| = "
          f"{deviation.max():.4f} at beta = {ALL_BETAS[pick[worst[0]]]:.2f}, t = {times[worst[1]]:g} "
          f"(Monte-Carlo error of the full run <= {mc_error:.4f})")

    euler_pick = pick[np.linspace(0, pick.size - 1, min(args.euler_betas, pick.size)).round().astype(int)]
    n_euler = min(args.euler_systems, args.systems)
    euler_time = single_time = single_total = 0.0
    euler_dev = 0.0
    threads = numba.get_num_threads()
    for index in euler_pick:
        theta0 = starts[index][:n_euler]
        start = time.perf_counter()
        positions = euler_renormalise(theta0, float(ALL_BETAS[index]), 0.1, times)
        euler_time += time.perf_counter() - start
        fractions = pair_fraction(positions, DELTA, domain="sphere", sphere_tolerance=1e-8)
        row = int(np.nonzero(pick == index)[0][0])
        euler_dev = max(euler_dev, np.abs(fractions[:n_ref].mean(axis=0) - reference[row]).max())
        numba.set_num_threads(1)
        try:
            start = time.perf_counter()
            single_time += run(theta0, ALL_BETAS[index], times, args.rtol, atol)[1]
            single_total += time.perf_counter() - start
        finally:
            numba.set_num_threads(threads)
    scale = (pick.size * args.systems) / (euler_pick.size * n_euler)
    euler_full = euler_time * scale
    print(f"Euler dt = 0.1 + renormalise (numpy, batched): {euler_time:.2f} s on {n_euler} systems x "
          f"{euler_pick.size} betas, scaled x{scale:.0f} to {euler_full:.0f} s; its statistic deviates by "
          f"{euler_dev:.4f} from the reference")
    print(f"single-threaded: integration {single_time / (euler_pick.size * n_euler) * 1e3:.3f} ms per system, "
          f"with dataset and statistic {single_total / (euler_pick.size * n_euler) * 1e3:.3f} ms "
          f"(full workload {single_total * scale:.0f} s on one core); on the same subset, one thread each, "
          f"Euler / new = {euler_time / single_total:.2f}")
    print(f"RESULT total {total:.1f} s, ratio Euler/new {euler_full / total:.2f}, max deviation {deviation.max():.4f}")


if __name__ == "__main__":
    main()

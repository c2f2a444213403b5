"""How far Figure 3's panels are from the cost of their velocity evaluations: the floor of the work, per d.

For each panel (n = 32, δ = 1e-3, t ∈ [0, 30], 61 output times, SA, Q = K = V = I) this script

1. runs :func:`meanfield.phase_diagram` in this process (``scheduler="serial"``) on all ``--systems``
   systems at every ``--every``-th of the 90 β in [0.1, 9], and records its CPU time and the velocity
   evaluations per system (``nfev_mean``);
2. times one velocity evaluation of the panel's representation (angles, points or Gram) on a batch of
   32 systems drawn the same way, best of ``--repeats``, per system; for the Gram representation also
   the n × n × n matrix product at its core (one ``numpy.dot`` of two 32 × 32 matrices, per system), the
   arithmetic no integrator of this ODE can avoid;
3. prints per panel: CPU seconds, evaluations, the velocity floor = evaluations × cost per evaluation
   (the CPU a loop with no cost besides the velocity would take), CPU / floor, and the full panel
   (90 β) projected from the sample onto ``--workers`` cores with no parallel loss.

The projection is the lower bound of the wall time of ``benchmarks/bench_figure3_cold.py`` on that
many cores with today's integrator; the velocity floor is the bound of any Dormand–Prince 5(4)
integration of these systems at the same tolerances and the same number of evaluations.

Run with ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/bench_figure3_floor.py``
(about 1 minute; ``--every 30`` for a quicker look).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import meanfield as mf
from meanfield.particles._token_ensembles import representation_for
from meanfield.studies.clustering._phase_diagram import phase_diagram_tokens

N_TOKENS, T_END, N_TIMES, DELTA, BATCH = 32, 30.0, 61, 1e-3, 32


def best_seconds(call, repeats: int) -> float:
    """Best wall time of ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def velocity_cost(d: int, repeats: int) -> tuple[str, float, float]:
    """(representation, seconds per system-evaluation of the velocity, seconds per system of the Gram product
    (NaN for other representations)) on a batch of uniform tokens at β = 4."""
    rep = representation_for(d, N_TOKENS)
    states = rep.initial(phase_diagram_tokens(0, np.arange(BATCH), d, N_TOKENS))
    out = np.empty_like(states)
    rep.velocity(states, 4.0, True, out)
    per_system = best_seconds(lambda: rep.velocity(states, 4.0, True, out), repeats) / BATCH
    product = np.nan
    if rep.name == "gram":
        rng = np.random.default_rng(0)
        a, b, c = rng.random((N_TOKENS, N_TOKENS)), rng.random((N_TOKENS, N_TOKENS)), np.empty((N_TOKENS, N_TOKENS))

        def products() -> None:
            for _ in range(BATCH):
                np.dot(a, b, c)

        product = best_seconds(products, repeats) / BATCH
    return rep.name, per_system, product


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", default="2,8,32,128", help="dimensions d, comma separated")
    parser.add_argument("--systems", type=int, default=2048, help="systems per beta")
    parser.add_argument("--every", type=int, default=10, help="sample every k-th of the 90 beta values")
    parser.add_argument("--workers", type=int, default=2, help="cores of the projection")
    parser.add_argument("--repeats", type=int, default=200, help="repeats of the velocity timing")
    args = parser.parse_args(argv)
    times = np.linspace(0.0, T_END, N_TIMES)
    betas = np.linspace(0.1, 9.0, 90)
    sample = betas[args.every // 2::args.every]
    print(f"n = {N_TOKENS}, {args.systems} systems x {sample.size} of 90 betas, t <= {T_END:g}, {N_TIMES} outputs, "
          f"delta = {DELTA:g}; projection onto {args.workers} cores")
    print(f"{'d':>4} {'repr':>7} {'cpu s':>7} {'nfev':>6} {'us/eval':>8} {'floor s':>8} {'cpu/floor':>9} "
          f"{'dot us':>7} {'dot floor s':>11} {'panel s':>8}")
    total = 0.0
    for d in (int(value) for value in args.dims.split(",")):
        mf.phase_diagram(d, N_TOKENS, sample[:1], times[:3], 2, scheduler="serial", progress=False)
        start = time.process_time()
        ds = mf.phase_diagram(d, N_TOKENS, sample, times, args.systems, DELTA, scheduler="serial", progress=False)
        cpu = time.process_time() - start
        name, per_eval, product = velocity_cost(d, args.repeats)
        evaluations = float(ds.nfev_mean.mean()) * args.systems * sample.size
        floor = evaluations * per_eval
        dot_floor = evaluations * product
        panel = cpu * betas.size / sample.size / args.workers
        total += panel
        print(f"{d:4d} {name:>7} {cpu:7.1f} {float(ds.nfev_mean.mean()):6.1f} {1e6 * per_eval:8.2f} {floor:8.1f} "
              f"{cpu / floor:9.2f} {1e6 * product:7.2f} {dot_floor:11.1f} {panel:8.1f}", flush=True)
    print(f"all panels projected onto {args.workers} cores with no parallel loss: {total:.1f} s")


if __name__ == "__main__":
    main()

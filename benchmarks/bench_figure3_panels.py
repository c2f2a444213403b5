"""Paper 2, Figure 3 at every dimension: the four panels d = 2, 8, 32, 128 (n = 32, 2048 systems per β, 90 β in
[0.1, 9], t ∈ [0, 30], 61 output times, δ = 1e-3), against the authors' forward-Euler-and-renormalise loop.

Per d:

* "panel": wall time of :func:`meanfield.phase_diagram` for the full panel on one dask LocalCluster of
  ``--workers`` single-threaded workers (started once, before the timings), at the default tolerances,
  with the representation it chooses (angles, points or Gram) and its velocity evaluations per system;
* "Euler": the authors' loop in R^d, x_i ← (x_i + dt v_i)/|x_i + dt v_i|, v_i = P⊥_{x_i} Σ_j
  softmax_j(β<x_i,x_j>) x_j, dt = 0.1 (300 steps), as batched numpy on BLAS (matmul over the systems of a
  block), timed in this process on ``--euler-systems`` systems at ``--euler-betas`` β (its cost does not
  depend on β) and scaled to the panel (× systems × 90 / euler systems, ÷ workers: the loop parallelises
  over systems as well as ours);
* "ratio": scaled Euler / panel;
* "dev": max over (β, t) of |P - P_ref| on the first ``--reference-systems`` systems (the same tokens as the
  panel's first systems), P_ref at rtol = 1e-8, atol = 1e-10, for our default tolerances (every β) and for
  Euler (every ``--euler-deviation-every``-th β).

Run with ``OMP_NUM_THREADS=1 python benchmarks/bench_figure3_panels.py`` (about 15 minutes on 2 cores;
``--betas 10 --systems 256`` for a quick look).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import meanfield as mf
from meanfield.studies.clustering._phase_diagram import phase_diagram_tokens

N_TOKENS, T_END, N_TIMES, DELTA, DT = 32, 30.0, 61, 1e-3, 0.1


def euler_pair_fractions(tokens: np.ndarray, beta: float, times: np.ndarray) -> np.ndarray:
    """Pair fractions (systems, times) of the forward-Euler-and-renormalise loop at dt = 0.1 (times multiples of dt)."""
    x = tokens.copy()
    n = x.shape[1]
    record = {int(round(t / DT)): k for k, t in enumerate(times)}
    out = np.empty((x.shape[0], times.size))

    def fraction(k: int) -> None:
        gram = x @ np.swapaxes(x, 1, 2)
        out[:, k] = (np.count_nonzero(gram >= 1 - DELTA, axis=(1, 2)) - n) / (n * (n - 1))

    fraction(0)
    for step in range(1, int(round(times[-1] / DT)) + 1):
        gram = x @ np.swapaxes(x, 1, 2)
        weights = np.exp(beta * (gram - 1.0))
        weights /= weights.sum(axis=-1, keepdims=True)
        v = weights @ x
        v -= np.sum(v * x, axis=-1, keepdims=True) * x
        x = x + DT * v
        x /= np.linalg.norm(x, axis=-1, keepdims=True)
        if step in record:
            fraction(record[step])
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", default="2,8,32,128", help="dimensions d, comma separated")
    parser.add_argument("--betas", type=int, default=90, help="number of β values in [0.1, 9]")
    parser.add_argument("--systems", type=int, default=2048)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--euler-systems", type=int, default=128)
    parser.add_argument("--euler-betas", type=int, default=2)
    parser.add_argument("--reference-systems", type=int, default=256)
    parser.add_argument("--euler-deviation-every", type=int, default=5,
                        help="Euler's deviation from the reference on every k-th beta")
    args = parser.parse_args(argv)
    from distributed import Client, LocalCluster

    from meanfield.studies.sweeps._sweep import worker_malloc

    dims = [int(v) for v in args.dims.split(",")]
    betas = np.linspace(0.1, 9.0, args.betas)
    times = np.linspace(0.0, T_END, N_TIMES)
    with worker_malloc():  # the workers' malloc settings of mf.sweep's own cluster
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    common = dict(scheduler=client, progress=False)
    mf.phase_diagram(dims, N_TOKENS, betas[:1], times, 8, **common)  # compile on every worker
    print(f"n = {N_TOKENS}, {args.systems} systems x {betas.size} betas, t <= {T_END:g}, {N_TIMES} outputs, "
          f"delta = {DELTA:g}; {args.workers} workers")
    print(f"{'d':>4} {'representation':>14} {'evals':>6} {'panel s':>8} {'Euler s':>8} {'ratio':>6} "
          f"{'dev':>7} {'dev Euler':>9}")
    total = 0.0
    for d in dims:
        start = time.perf_counter()
        panel = mf.phase_diagram(d, N_TOKENS, betas, times, args.systems, **common)
        wall = time.perf_counter() - start
        total += wall
        tokens = phase_diagram_tokens(0, np.arange(args.euler_systems), d, N_TOKENS)
        euler_betas = betas[np.linspace(0, betas.size - 1, args.euler_betas).round().astype(int)]
        start = time.perf_counter()
        for beta in euler_betas:
            euler_pair_fractions(tokens, beta, times)
        per_system = (time.perf_counter() - start) / (args.euler_systems * euler_betas.size)
        euler = per_system * args.systems * betas.size / args.workers
        reference = mf.phase_diagram(d, N_TOKENS, betas, times, args.reference_systems, rtol=1e-8, atol=1e-10,
                                     **common)["probability"].values
        ours = mf.phase_diagram(d, N_TOKENS, betas, times, args.reference_systems, **common)["probability"].values
        ref_tokens = phase_diagram_tokens(0, np.arange(args.reference_systems), d, N_TOKENS)
        sub = slice(None, None, args.euler_deviation_every)
        euler_p = np.stack([euler_pair_fractions(ref_tokens, beta, times).mean(axis=0) for beta in betas[sub]])
        print(f"{d:4d} {panel.attrs['representation']:>14} {float(panel['nfev_mean'].mean()):6.0f} {wall:8.1f} "
              f"{euler:8.0f} {euler / wall:6.1f} {np.abs(ours - reference).max():7.4f} "
              f"{np.abs(euler_p - reference[sub]).max():9.4f}", flush=True)
    print(f"all panels: {total:.1f} s")
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()

"""Paper 2, Figure 3's four panels (d = 2, 8, 32, 128) from an empty and from a filled numba cache.

Each run is a fresh process (``--run``) that starts a dask LocalCluster of ``--workers`` single-threaded
workers and times :func:`meanfield.phase_diagram` for each d in turn (n = 32, ``--systems`` systems per β,
``--betas`` values of β in [0.1, 9], t ∈ [0, 30], 61 output times, δ = 1e-3, SA, Q = K = V = I), the
cluster's start excluded. "cold" runs with ``NUMBA_CACHE_DIR`` set to a new empty directory, so every
compiled kernel is compiled (what a first run after installing does, without touching the cache other
processes use); "warm" repeats the run on the cache the cold run filled.

Printed per run: the wall time of each panel, the ratio t(d)/t(d = 2) against the identity-weights
d = 2 panel of the same run (the baseline), the total, and cold/warm. ``--before PATH`` also runs
everything with another checkout's sources first (``PYTHONPATH=PATH``) and prints before → after.

Run with ``python benchmarks/bench_figure3_cold.py`` (the full panels: 90 β, 2048 systems, about
10 minutes on 2 cores per checkout) or ``--betas 18 --systems 512`` (a twentieth of the work).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

N_TOKENS, T_END, N_TIMES, DELTA = 32, 30.0, 61, 1e-3
THREADS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}


def run_panels(dims: list[int], betas: int, systems: int, workers: int) -> dict[str, float]:
    """Wall time of each panel (key: d) on a new LocalCluster, in this process."""
    import numpy as np
    from distributed import Client, LocalCluster

    import meanfield as mf
    from meanfield.studies.sweeps._sweep import worker_malloc

    with worker_malloc():  # the workers' malloc settings of mf.sweep's own cluster
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    client.wait_for_workers(workers)
    times = np.linspace(0.0, T_END, N_TIMES)
    walls = {}
    for d in dims:
        start = time.perf_counter()
        mf.phase_diagram(d, N_TOKENS, np.linspace(0.1, 9.0, betas), times, systems, DELTA, scheduler=client,
                         progress=False)
        walls[str(d)] = time.perf_counter() - start
    client.close()
    cluster.close()
    return walls


def child(source: str | None, cache: str, args: argparse.Namespace) -> dict[str, float]:
    """Run the panels in a fresh process with sources ``source`` (None: the installed package) and numba cache."""
    env = {**os.environ, **THREADS, "NUMBA_CACHE_DIR": cache}
    if source is not None:
        env["PYTHONPATH"] = source
    command = [sys.executable, __file__, "--run", "--dims", args.dims, "--betas", str(args.betas), "--systems",
               str(args.systems), "--workers", str(args.workers)]
    done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(label: str, source: str | None, args: argparse.Namespace) -> dict[str, dict[str, float]]:
    """Cold then warm run of one checkout; prints both."""
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
        runs = {"cold": child(source, cache, args), "warm": child(source, cache, args)}
    dims = args.dims.split(",")
    for kind, walls in runs.items():
        total = sum(walls.values())
        cells = "  ".join(f"d={d}: {walls[d]:6.1f} s ({walls[d] / walls[dims[0]]:4.2f})" for d in dims)
        print(f"{label:6s} {kind}: {cells}  all: {total:6.1f} s", flush=True)
    print(f"{label:6s} cold / warm = {sum(runs['cold'].values()) / sum(runs['warm'].values()):.2f}")
    return runs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", default="2,8,32,128", help="dimensions d, comma separated; the first is the baseline")
    parser.add_argument("--betas", type=int, default=90, help="number of β values in [0.1, 9]")
    parser.add_argument("--systems", type=int, default=2048)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--before", default=None, help="src directory of another checkout to measure first")
    parser.add_argument("--run", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    dims = [int(v) for v in args.dims.split(",")]
    if args.run:
        print(json.dumps(run_panels(dims, args.betas, args.systems, args.workers)))
        return
    print(f"n = {N_TOKENS}, {args.systems} systems x {args.betas} betas, t <= {T_END:g}, {N_TIMES} outputs, "
          f"delta = {DELTA:g}; {args.workers} workers; (ratio) = t(d) / t(d = {dims[0]}) of the same run")
    results = {}
    if args.before is not None:
        results["before"] = measure("before", args.before, args)
    results["after"] = measure("after", None, args)
    if "before" in results:
        print(f"{'':14s}" + "".join(f"{'d=' + str(d):>18s}" for d in dims) + f"{'all':>18s}")
        for kind in ("cold", "warm"):
            before, after = results["before"][kind], results["after"][kind]
            cells = [f"{before[str(d)]:7.1f} -> {after[str(d)]:6.1f}" for d in dims]
            cells.append(f"{sum(before.values()):7.1f} -> {sum(after.values()):6.1f}")
            print(f"{kind + ' s':14s}" + "".join(f"{c:>18s}" for c in cells))
        for label in ("before", "after"):
            warm = results[label]["warm"]
            print(f"{'t(d)/t(d=' + str(dims[0]) + ') ' + label:14s}"
                  + "".join(f"{warm[str(d)] / warm[str(dims[0])]:>18.2f}" for d in dims))


if __name__ == "__main__":
    main()

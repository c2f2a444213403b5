"""Per-task overhead of meanfield.sweep: serial engine, serial with a store, LocalCluster, against a plain loop.

Every task spins the CPU for a fixed time (1 ms, 10 ms, 100 ms) and returns a
one-value Dataset. The baseline is a plain Python loop calling the same
function on the same points in this process. For each engine the table gives
its wall time over the baseline's (for a cluster of w workers the ideal is
1/w) and the overhead per task, (engine wall - baseline wall / workers) / tasks.
The LocalCluster is started once, outside the timings (its start-up is printed
on its own), and passed to sweep as a Client.

Run:  OMP_NUM_THREADS=1 python benchmarks/bench_sweep.py [--workers 2] [--total 2.0]
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import xarray as xr

import meanfield as mf


def spin(x: float, seconds: float) -> xr.Dataset:
    """Busy-wait ``seconds`` of wall time (a CPU-bound task), return x."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass
    return xr.Dataset({"value": float(x)})


def plain_loop(points: list[float], seconds: float) -> float:
    start = time.perf_counter()
    for x in points:
        spin(x, seconds)
    return time.perf_counter() - start


def timed_sweep(points: list[float], seconds: float, **options) -> float:
    start = time.perf_counter()
    ds = mf.sweep(spin, {"x": points}, fixed={"seconds": seconds}, progress=False, **options)
    wall = time.perf_counter() - start
    assert ds.attrs["tasks_run"] == len(points)
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="workers of the LocalCluster")
    parser.add_argument("--total", type=float, default=2.0, help="seconds of task work per row")
    args = parser.parse_args()
    from distributed import Client, LocalCluster

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Port 8787 is already in use")
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    client.run(lambda: __import__("meanfield"))  # workers import the package once, as a real sweep's first task would
    print(f"LocalCluster start-up with {args.workers} workers (meanfield imported): {time.perf_counter() - start:.2f} s")
    print(f"{'task':>7} {'tasks':>6} {'loop s':>7} | {'serial':>7} {'+store':>7} {'cluster':>8} | "
          f"{'overhead per task (ms): serial':>31} {'+store':>7} {'cluster':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for seconds in (1e-3, 1e-2, 1e-1):
            tasks = max(4 * args.workers, int(round(args.total / seconds)))
            points = [float(i) for i in range(tasks)]
            base = plain_loop(points, seconds)
            serial = timed_sweep(points, seconds, scheduler="serial")
            stored = timed_sweep(points, seconds, scheduler="serial", store=Path(tmp) / f"store-{seconds:g}")
            distributed = timed_sweep(points, seconds, scheduler=client)
            over = [(serial - base) / tasks, (stored - base) / tasks, (distributed - base / args.workers) / tasks]
            print(f"{seconds * 1e3:5.0f}ms {tasks:6d} {base:7.2f} | {serial / base:7.2f} {stored / base:7.2f} "
                  f"{distributed / base:8.2f} | {over[0] * 1e3:31.2f} {over[1] * 1e3:7.2f} {over[2] * 1e3:8.2f}")
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()

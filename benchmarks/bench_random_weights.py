"""Random weights drawn per system against identity weights in the phase diagram, in one process.

Runs :func:`meanfield.phase_diagram` (SA, n = 32, δ = 1e-3, t ∈ [0, 30] with 61 output times, β evenly in
[0.1, 9]) twice for each d: with Q = K = V = I (the cheapest representation at that d, clustered systems
finished early) and with Ginibre (Q, K, V) drawn per system (each system its own weights, every system
integrated to t = 30), and prints the wall times and their ratio random / identity. The issue's goal is a
ratio ≤ 2 at 2048 systems × 90 β; the default size here is reduced (``--systems``, ``--betas``).

    OMP_NUM_THREADS=1 python benchmarks/bench_random_weights.py --systems 256 --betas 9
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import meanfield as mf


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=256)
    parser.add_argument("--betas", type=int, default=9)
    parser.add_argument("--dimensions", default="2,8,32,128")
    parser.add_argument("--matrices", default="ginibre")
    args = parser.parse_args()
    betas = np.linspace(0.1, 9.0, args.betas)
    t = np.linspace(0.0, 30.0, 61)
    print(f"SA, n = 32, {args.systems} systems x {args.betas} beta in [0.1, 9], t in [0, 30]; "
          f"random = {args.matrices!r} drawn per system")
    print(f"{'d':>5} {'identity s':>11} {'random s':>10} {'ratio':>7} {'nfev id':>8} {'nfev rand':>10}")
    for d in (int(v) for v in args.dimensions.split(",")):
        runs = {}
        for label, kwargs in (("identity", {}), ("random", {"matrices": args.matrices, "draw": "per_system"})):
            mf.phase_diagram(d, 32, betas[:1], t[:3], 2, scheduler="serial", progress=False, **kwargs)  # compile
            start = time.perf_counter()
            ds = mf.phase_diagram(d, 32, betas, t, args.systems, scheduler="serial", progress=False, **kwargs)
            runs[label] = (time.perf_counter() - start, float(ds.nfev_mean.mean()))
        (ti, ni), (tr, nr) = runs["identity"], runs["random"]
        print(f"{d:5d} {ti:11.2f} {tr:10.2f} {tr / ti:7.2f} {ni:8.0f} {nr:10.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Random weights drawn per system against identity weights in the phase diagram, in one process.

Runs :func:`meanfield.phase_diagram` (SA, n = 32, δ = 1e-3, t ∈ [0, 30] with 61 output times, β evenly in
[0.1, 9]) twice for each d: with Q = K = V = I (the cheapest representation at that d, clustered systems
finished early) and with Ginibre (Q, K, V) drawn per system (each system its own weights, every system
integrated to t = 30), and prints the wall times and their ratio random / identity. The issue's goal is a
ratio ≤ 2 at 2048 systems × 90 β; the default size here is reduced (``--systems``, ``--betas``).

The ratio is the product of the ratio of velocity evaluations per system (``nfev``: identity systems end once
clustered, random ones run to t = 30) and the ratio of the cost of one evaluation (``per eval``). The last
column is the arithmetic floor of the second, the multiply-adds of one evaluation: random weights
4nd(d + n) (the rows x_iᵀβA and (V x_i)ᵀ, 4nd², then the scores and P·VX, 2n²d each), identity 4n²d (points:
G = XXᵀ and KX) or 2n³ (Gram: K·H); for angles (d = 2) the identity kernel has no product, so no floor is
printed. Measured (64 systems × 3 β, one thread): ratios 5.4, 3.0, 6.8, 47.6 at d = 2, 8, 32, 128, of which
per evaluation 2.8, 1.9, 5.0, 19.4 against arithmetic floors -, 1.25, 4.0, 40: for d ≥ 32 the evaluations of
random weights alone cost more than twice the identity's, whatever the number of steps.

    OMP_NUM_THREADS=1 python benchmarks/bench_random_weights.py --systems 256 --betas 9
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import meanfield as mf


def arithmetic_floor(d: int, n: int) -> float | None:
    """Multiply-adds of one velocity evaluation with random weights over those with Q = K = V = I in the
    representation the identity run uses (module docstring); None for angles."""
    if d == 2:
        return None
    identity = 2 * n**3 if 2 * d >= n else 4 * n * n * d
    return 4 * n * d * (d + n) / identity


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
    print(f"{'d':>5} {'identity s':>11} {'random s':>10} {'ratio':>7} {'nfev id':>8} {'nfev rand':>10} "
          f"{'per eval':>9} {'floor':>6}")
    for d in (int(v) for v in args.dimensions.split(",")):
        runs = {}
        for label, kwargs in (("identity", {}), ("random", {"matrices": args.matrices, "draw": "per_system"})):
            mf.phase_diagram(d, 32, betas[:1], t[:3], 2, scheduler="serial", progress=False, **kwargs)  # compile
            start = time.perf_counter()
            ds = mf.phase_diagram(d, 32, betas, t, args.systems, scheduler="serial", progress=False, **kwargs)
            runs[label] = (time.perf_counter() - start, float(ds.nfev_mean.mean()))
        (ti, ni), (tr, nr) = runs["identity"], runs["random"]
        floor = arithmetic_floor(d, 32)
        print(f"{d:5d} {ti:11.2f} {tr:10.2f} {tr / ti:7.2f} {ni:8.0f} {nr:10.0f} {(tr / nr) / (ti / ni):9.2f} "
              + (f"{floor:6.2f}" if floor else f"{'-':>6}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

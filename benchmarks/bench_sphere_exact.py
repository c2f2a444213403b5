"""Exact W_p on S²: ``mf.wasserstein(method="exact")`` against calling ``ot.emd2`` directly.

Two samples of n points of S² (uniform, and uniform shifted towards the north pole), equal weights. The peer
is what a user writes with POT: the cost M = arccos(clip(x yᵀ, -1, 1))^p (numpy, vectorised) and
``ot.emd2(a, b, M)``. meanfield builds its cost by :func:`meanfield.transport._sphere.geodesic_cost` (one BLAS
product, arccos, Kahan's atan2 form where |⟨x, y⟩| > 0.99, one compiled pass for the power) and calls the same
``ot.emd2``. Printed per n and p: the cost-matrix time of each (median of ``--repeat``), the end-to-end times
(alternating runs, medians), the ratio meanfield / peer (≤ 1.05 is the goal) and |W_mf - W_peer| (the peer's
arccos loses digits near θ = 0 and π; the plans agree). The old pair-by-pair atan2 cost took 500 ms at n = 3000
(53 ns per pair), the whole call 0.65–0.86× the peer's speed.

Run:  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/bench_sphere_exact.py
      [--sizes 1000 3000 10000] [--repeat 3]     (about 4 min on one core, 3 of them at n = 10⁴)
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import ot

import meanfield as mf
from meanfield.transport._sphere import geodesic_cost


def samples(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 3))
    y = rng.normal(size=(n, 3)) + [0.0, 0.0, 1.0]
    return x / np.linalg.norm(x, axis=1, keepdims=True), y / np.linalg.norm(y, axis=1, keepdims=True)


def peer_cost(x: np.ndarray, y: np.ndarray, p: float) -> np.ndarray:
    return np.arccos(np.clip(x @ y.T, -1.0, 1.0)) ** p


def peer(x: np.ndarray, y: np.ndarray, p: float) -> float:
    a = np.full(len(x), 1 / len(x))
    b = np.full(len(y), 1 / len(y))
    return float(ot.emd2(a, b, peer_cost(x, y, p), numItermax=10_000_000)) ** (1 / p)


def ours(x: np.ndarray, y: np.ndarray, p: float) -> float:
    return float(mf.wasserstein(x, y, p, method="exact", max_exact_atoms=len(x)))


def median_time(func, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = func()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 3000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    x, y = samples(50)
    ours(x, y, 1.0), geodesic_cost(x, y, 2.0)  # compile
    print(f"{'n':>6} {'p':>3} {'cost mf [ms]':>13} {'cost peer [ms]':>15} {'mf [s]':>8} {'peer [s]':>9} "
          f"{'mf/peer':>8} {'|W_mf - W_peer|':>16}")
    for n in args.sizes:
        x, y = samples(n)
        repeat = args.repeat if n <= 3000 else 1
        for p in (1.0, 2.0):
            t_cost, _ = median_time(lambda: geodesic_cost(x, y, p), args.repeat)
            t_peer_cost, _ = median_time(lambda: peer_cost(x, y, p), args.repeat)
            walls: dict[str, list[float]] = {"mf": [], "peer": []}
            values: dict[str, float] = {}
            for _ in range(repeat):  # alternating, so that both see the same machine
                for name, func in (("mf", ours), ("peer", peer)):
                    start = time.perf_counter()
                    values[name] = func(x, y, p)
                    walls[name].append(time.perf_counter() - start)
            t_mf, t_peer = float(np.median(walls["mf"])), float(np.median(walls["peer"]))
            print(f"{n:6d} {p:3g} {1e3 * t_cost:13.1f} {1e3 * t_peer_cost:15.1f} {t_mf:8.2f} {t_peer:9.2f} "
                  f"{t_mf / t_peer:8.3f} {abs(values['mf'] - values['peer']):16.2e}", flush=True)


if __name__ == "__main__":
    main()

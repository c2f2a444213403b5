"""The hard-max engine against (9.4) at large β from the same tokens.

The baseline is ``mf.simulate`` of (9.4) (``Attention(beta, Q, K, V, projection=False, rescaled=True,
scores_at_z=True)``, dopri5) at β = 256 and 4096. Against it, the Filippov engine
(``HardmaxAttention``, event-driven DOP853) on [0, 3], both at rtol = 1e-10, atol = 1e-12, for:

* Example 9.3 (n = 3);
* generic tokens, n = 8 and 32 in R² with Q, K, V = I + 0.3 G.

Prints the best-of-``repeat`` wall times, the ratio (9.4)/engine, the right-hand-side evaluations
of each, and max_i |z^β(3) - z^∞(3)|, the distance the large-β run still has to the limit.

Run:  OMP_NUM_THREADS=1 python benchmarks/bench_hardmax.py [--repeat 3]
"""

from __future__ import annotations

import argparse

import numpy as np

import meanfield as mf
from bench_wasserstein import best_time

TIMES = np.linspace(0.0, 3.0, 31)
TOLERANCES = {"rtol": 1e-10, "atol": 1e-12}


def cases() -> list[tuple[str, np.ndarray, tuple]]:
    out = [("Example 9.3", np.array([[1.0, 1.0], [-1.0, 1.0], [0.0, 0.0]]), (None, None, None))]
    rng = np.random.default_rng(7)
    for n in (8, 32):
        weights = tuple(np.eye(2) + 0.3 * rng.standard_normal((2, 2)) for _ in range(3))
        out.append((f"generic n = {n}", rng.standard_normal((n, 2)), weights))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'case':16s} {'run':18s} {'time [s]':>9s} {'ratio':>7s} {'nfev':>7s} {'|z - z_inf|(3)':>15s}")
    for name, z0, (Q, K, V) in cases():
        engine = mf.HardmaxAttention(Q, K, V)
        limit_time, limit = best_time(lambda: mf.simulate(engine, z0, TIMES, **TOLERANCES), args.repeat)
        print(f"{name:16s} {'hard-max engine':18s} {limit_time:9.3f} {1.0:7.2f} {limit.attrs['nfev']:7d}")
        for beta in (256.0, 4096.0):
            model = mf.Attention(beta, Q, K, V, projection=False, rescaled=True, scores_at_z=True)
            elapsed, run = best_time(lambda: mf.simulate(model, z0, TIMES, **TOLERANCES), args.repeat)
            distance = np.linalg.norm(run["positions"].values[-1] - limit["positions"].values[-1], axis=-1).max()
            print(f"{'':16s} {f'(9.4), beta = {beta:.0f}':18s} {elapsed:9.3f} {elapsed / limit_time:7.2f} "
                  f"{run.attrs['nfev']:7d} {distance:15.2e}")


if __name__ == "__main__":
    main()

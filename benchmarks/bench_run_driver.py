"""Cost of the run driver, and of the Lorentzian Kuramoto example by its pole against frequency nodes.

Driver. ``mf.solve`` and ``mf.simulate`` validate, build the integrator, run it under the
driver of every run (:func:`meanfield.runs.drive`: observers for progress, resolution,
energy and order parameter, the dataset and its attrs) and return a Dataset. The baseline is
the same integration without any of that, in the same process: :func:`solvers.evolve` on
the scheme (PDE) or on the chart Dormand–Prince stepper (particles), with the same options.
The ratio front door / bare loop is the driver's overhead (energy and order parameter at
every output included); "ms/output" is the difference per output time, a fixed cost that
a longer run between outputs amortises.

Lorentzian example. ``mf.solve(Kuramoto(3, cauchy(0, 0.5)), von_mises(Circle(256), 0, 1),
linspace(0, 40, 5))``: the default (one density at the law's pole, spectral) against the same
law on 32 midpoint-quantile nodes by finite volume (what ``method="finite_volume"`` gives),
with |r(40) - √(1 - 2γ/K)|.

Times are the best CPU time (``time.process_time``) of ``--repeat`` runs.
Run with ``OMP_NUM_THREADS=1 python benchmarks/bench_run_driver.py``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable

import numpy as np
import scipy.stats

import meanfield as mf
from meanfield.particles._chart_steppers import ChartDormandPrince
from solvers import CircleFiniteVolume, CircleSpectral, evolve


def _best(func: Callable[[], object], repeat: int) -> tuple[float, object]:
    """Best CPU time of ``repeat`` calls after one untimed call (FFT plans, compiled kernels), and the result."""
    func()
    best, out = np.inf, None
    for _ in range(repeat):
        start = time.process_time()
        out = func()
        best = min(best, time.process_time() - start)
    return best, out


OUTPUTS = 51


def pde_case(method: str, n: int, repeat: int) -> tuple[float, float, int]:
    """(front door s, bare evolve s, steps) of SA β = 4 on S¹, N = n, t ∈ [0, 5], 51 outputs."""
    noise = 0.05 if method == "spectral" else 0.0
    model = mf.SelfAttention(4.0, noise=noise)
    rho0 = mf.perturbed_uniform(mf.Circle(n), amplitude=0.1, modes=4, seed=1)
    t = np.linspace(0.0, 5.0, OUTPUTS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the finite-volume resolution note, not the subject here
        front, ds = _best(lambda: mf.solve(model, rho0, t, method=method), repeat)
    cls = CircleSpectral if method == "spectral" else CircleFiniteVolume
    domain = rho0.domain

    def bare():
        scheme = cls(domain.grid, model.grid_velocity(domain), diffusion=noise)
        return evolve(scheme, scheme.from_grid(rho0.normalized().values[None]), t, raise_on_error=True)

    loop, run = _best(bare, repeat)
    assert int(ds.attrs["n_steps"]) == int(run.n_steps), (ds.attrs["n_steps"], run.n_steps)
    return front, loop, int(run.n_steps)


def particle_case(n: int, repeat: int) -> tuple[float, float, int]:
    """(front door s, bare evolve s, steps) of SA β = 4 particles on S¹ (direct sums), t ∈ [0, 5], 51 outputs."""
    model = mf.SelfAttention(4.0)
    x0 = np.random.default_rng(3).uniform(0, 2 * np.pi, n)
    t = np.linspace(0.0, 5.0, OUTPUTS)
    front, ds = _best(lambda: mf.simulate(model, x0, t, path="direct", rtol=1e-8, atol=1e-10), repeat)
    geometry = mf.domains.CircleGeometry()

    def bare():
        weights = np.full((1, n), 1.0 / n)
        velocity = model.particle_velocity(geometry, weights, None, path="direct")
        return evolve(ChartDormandPrince(geometry, velocity, 1e-8, 1e-10), x0[None], t)

    loop, run = _best(bare, repeat)
    assert int(ds.attrs["n_steps"]) == int(run.n_steps), (ds.attrs["n_steps"], run.n_steps)
    return front, loop, int(run.n_steps)


def lorentzian_case(repeat: int) -> list[tuple[str, float, float, str]]:
    model = mf.Kuramoto(3, frequencies=scipy.stats.cauchy(0, 0.5))
    rho0 = mf.von_mises(mf.Circle(256), 0, 1)
    t = np.linspace(0, 40, 5)
    r_inf = np.sqrt(1 - 2 * 0.5 / 3)
    rows = []
    for label, options in (("pole, spectral (default)", {}), ("32 nodes, finite volume", {"method": "finite_volume"})):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # finite volume warns of its unresolved Diracs
            seconds, ds = _best(lambda: mf.solve(model, rho0, t, **options), repeat)
        rows.append((label, seconds, abs(float(ds["order_parameter"][-1]) - r_inf), str(ds.attrs["success"])))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per case (best CPU time)")
    args = parser.parse_args()
    print("run driver: front door against the bare evolve loop (best CPU time)")
    print(f"{'case':<36} {'front s':>9} {'bare s':>9} {'ratio':>7} {'steps':>7} {'ms/output':>10}")

    def row(label: str, front: float, loop: float, steps: int) -> None:
        overhead = 1e3 * (front - loop) / OUTPUTS
        print(f"{label:<36} {front:9.3f} {loop:9.3f} {front / loop:7.3f} {steps:7d} {overhead:10.2f}")

    for method in ("spectral", "finite_volume"):
        for n in (256, 2048):
            row(f"solve {method}, N = {n}", *pde_case(method, n, args.repeat))
    for n in (64, 1024):
        row(f"simulate dopri5, n = {n}", *particle_case(n, args.repeat))
    print()
    print("Lorentzian Kuramoto example (K = 3, γ = 0.5, N = 256, t = 40)")
    rows = lorentzian_case(args.repeat)
    print(f"{'engine':<28} {'CPU s':>8} {'|r(40) - r_inf|':>16} {'success':>8}")
    for label, seconds, error, success in rows:
        print(f"{label:<28} {seconds:8.2f} {error:16.2e} {success:>8}")
    print(f"ratio finite volume / pole: {rows[1][1] / rows[0][1]:.1f}")


if __name__ == "__main__":
    main()

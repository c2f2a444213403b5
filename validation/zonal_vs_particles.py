"""Zonal PDE on S^{d-1} against particles drawn from a von Mises–Fisher law (d = 3 and d = 16).

SA dynamics (paper 2, (SA)) from the vMF law with mean direction e_d. The PDE is
solved by the zonal spectral scheme on the polar angle, on grids that resolve it
(the spectral tail stays below the scheme's tail_tol = 1e-6; in d = 16 the cluster
at t = 3 needs 480 degrees, 320 stop under-resolved at t = 1, and the polar
marginals differ from those of 960 degrees by W₁ = 2.0e-5 at t = 1 and 8.7e-5 at
t = 3, a hundredth of the particles' distances below); particle systems of n iid vMF samples are integrated by
``mf.simulate``. At t = 0, 1, 3 the script measures

    W₁(t) = ∫_0^π |F_PDE(ϑ, t) - F_n(ϑ, t)| dϑ

between the polar-angle marginals (F_n the empirical CDF of ϑ_i = arccos <x_i, e_d>),
averaged over independent systems, for n and 4n particles. Agreement "to the
sampling error" means W₁ ∝ n^{-1/2}: the ratio W₁(n)/W₁(4n) should be ≈ 2; the
script exits with status 1 when it falls below MIN_RATIO at t = 1 or 3. (In
d = 16 the distance at t = 3 is dominated by the tilt of each system's cluster
axis, a sampling effect ≈ n^{-1/2}/A_d(κ) that obeys the same law.)

Writes a table (NetCDF and text) and a figure (polar marginals of the PDE with
particle histograms; W₁ against time for both n).

Run:  python validation/zonal_vs_particles.py [--output-dir DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

import meanfield as mf
from meanfield.measures import polar_angles, polar_wasserstein

MIN_RATIO = 1.4
"""W₁(n)/W₁(4n) must exceed this (n^{-1/2} law: 2; the scatter of a mean over 4–32 systems allows ~1.5)."""

NEGATIVE_MASS = 1e-6
"""Largest mass of the PDE density's undershoot below zero that the comparison clips (W₁ moves by ≤ π times
it, against distances ≥ 1e-3 of the particles)."""

TIMES = [0.0, 1.0, 3.0]
CASES = [
    # d, β, κ, spectral degrees, (particles, systems) small and 4× larger
    (3, 2.0, 2.0, 200, ((200, 16), (800, 4))),
    (16, 1.0, 4.0, 480, ((100, 32), (400, 8))),
]


def pde_density(zonal: mf.ZonalSphere, values: np.ndarray) -> mf.Density:
    """The PDE's node values as a probability Density, the spectral undershoot below zero set to 0.

    Clipping moves W₁ by at most π times the clipped mass ∫ ρ⁻ dσ; above NEGATIVE_MASS the run fails.
    """
    negative = float(-np.sum(np.minimum(values, 0.0) * zonal.weights))
    if negative > NEGATIVE_MASS:
        raise RuntimeError(f"PDE density has negative mass {negative:.3g} > {NEGATIVE_MASS:g}")
    return mf.Density(zonal, np.maximum(values, 0.0)).normalized()


def run_case(d: int, beta: float, kappa: float, n_degrees: int, sizes) -> dict:
    model = mf.SelfAttention(beta)
    zonal = mf.ZonalSphere(d, n_degrees)
    rho0 = mf.Density(zonal, *zonal.von_mises_values(None, kappa))
    pde = mf.solve(model, rho0, TIMES)
    if not pde.attrs["success"]:
        raise RuntimeError(f"PDE run failed: {pde.attrs['message']}")
    distances = {}
    last_positions = None
    for index, (n_particles, n_systems) in enumerate(sizes):
        x0 = np.stack([mf.sample(rho0, n_particles, seed=1000 * (index + 1) + s).points for s in range(n_systems)])
        particles = mf.simulate(model, x0, TIMES, rtol=1e-6)
        positions = particles.positions.values
        distances[n_particles] = np.array(
            [
                np.mean([polar_wasserstein(pde_density(zonal, pde.density.values[k]), positions[s, k])
                         for s in range(n_systems)])
                for k in range(len(TIMES))
            ]
        )
        last_positions = positions
    return {"zonal": zonal, "pde": pde, "distances": distances, "positions": last_positions}


def figure(results: dict) -> Figure:
    fig = Figure(figsize=(11, 3.4 * len(results)))
    axes = fig.subplots(len(results), 2, squeeze=False)
    for row, (d, res) in enumerate(results.items()):
        zonal, pde = res["zonal"], res["pde"]
        ax = axes[row, 0]
        for k, t in enumerate(TIMES):
            line = ax.plot(zonal.polar, zonal.polar_marginal(pde.density.values[k]), label=f"PDE t={t:g}")[0]
            angles = np.concatenate([polar_angles(x)[0] for x in res["positions"][:, k]])
            ax.hist(angles, bins=60, range=(0, np.pi), density=True, histtype="step", color=line.get_color())
        ax.set(xlabel="polar angle ϑ", ylabel="marginal density", title=f"d = {d}: PDE (lines), particles (steps)")
        ax.legend(fontsize=8)
        ax = axes[row, 1]
        for n, w in res["distances"].items():
            ax.plot(TIMES, w, "o-", label=f"n = {n}")
        ax.set(xlabel="t", ylabel="mean W₁ of polar marginals", yscale="log", title=f"d = {d}")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", type=Path, default=Path("validation_output"))
    args = parser.parse_args(argv)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    results = {}
    rows = []
    ok = True
    for d, beta, kappa, n_degrees, sizes in CASES:
        res = run_case(d, beta, kappa, n_degrees, sizes)
        results[d] = res
        (n_small, _), (n_large, _) = sizes
        small, large = res["distances"][n_small], res["distances"][n_large]
        for k, t in enumerate(TIMES):
            ratio = small[k] / large[k]
            passed = bool(k == 0 or ratio > MIN_RATIO)
            ok &= passed
            rows.append((d, t, n_small, small[k], n_large, large[k], ratio, passed))
    header = f"{'d':>3} {'t':>4} {'n':>5} {'W1(n)':>10} {'4n':>5} {'W1(4n)':>10} {'ratio':>6}  ok"
    lines = [f"{r[0]:>3} {r[1]:>4g} {r[2]:>5} {r[3]:>10.4g} {r[4]:>5} {r[5]:>10.4g} {r[6]:>6.2f}  {r[7]}" for r in rows]
    text = "\n".join([header, *lines])
    print(text)
    table = xr.Dataset(
        {
            "w1_small": ("case", [r[3] for r in rows]),
            "w1_large": ("case", [r[5] for r in rows]),
            "ratio": ("case", [r[6] for r in rows]),
            "passed": ("case", [int(r[7]) for r in rows]),
        },
        coords={
            "dimension": ("case", [r[0] for r in rows]),
            "time": ("case", [r[1] for r in rows]),
            "n_small": ("case", [r[2] for r in rows]),
            "n_large": ("case", [r[4] for r in rows]),
        },
        attrs={"min_ratio": MIN_RATIO, "meanfield_version": mf.__version__},
    )
    (args.output_dir / "zonal_vs_particles.txt").write_text(text + "\n")
    table.to_netcdf(args.output_dir / "zonal_vs_particles.nc")
    figure(results).savefig(args.output_dir / "zonal_vs_particles.png", dpi=110)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

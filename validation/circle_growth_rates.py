"""Linear growth rates about the uniform state on S¹, both schemes, against the exact rates.

For a mode-k perturbation ρ_0 = (1 + ε cos kθ)/2π, the linearised equation gives
|ρ̂_k(t)| = |ρ̂_k(0)| e^{λ_k t} with

    USA: λ_k = k² I_k(β)/β - σk²,     SA: λ_k = k² I_k(β)/(β I_0(β)) - σk²,

and λ_1 = 1/2 - σ at β = 0. The script measures λ_k from solve() with each
scheme, writes a table (NetCDF and text) and a figure (measured against
predicted rates, and energy curves of a nonlinear run), and exits with status 1
when a measured rate misses its prediction by more than the tolerance of its
scheme.

Run:  python validation/circle_growth_rates.py [--output-dir DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import xarray as xr
from scipy.special import iv
from matplotlib.figure import Figure

import meanfield as mf
from meanfield import perturbed_uniform

EPSILON = 1e-6
"""Perturbation size: nonlinear corrections to λ are O(ε e^{λt}) ≤ 1e-4 relative."""

SPECTRAL_TOLERANCE = 1e-4
"""Absolute tolerance on λ for the spectral scheme with its default tolerances: exponential
accuracy in N leaves the O(ε e^{λt}) nonlinearity and the integrator's rtol (relative to
the perturbation, measured 2.4e-6 at worst)."""

FV_MIN_ORDER = 1.5
"""The finite-volume error in λ must fall at least like h^1.5 from N = 128 to 256
(the scheme is second order; the limiter clips smooth extrema, which costs a
little), unless it is already below FV_FLOOR."""

FV_FLOOR = 2e-5
"""Below this absolute error the finite-volume measurement is at the level of
the ε-nonlinearity and no order can be read off."""

CASES = [
    ("USA", 1.0, 0.0),
    ("USA", 4.0, 0.0),
    ("SA", 4.0, 0.0),
    ("SA", 9.0, 0.0),
    ("SA", 0.0, 0.0),
    ("USA", 4.0, 0.05),
    ("SA", 4.0, 0.1),
]
MODES = [1, 2, 3, 4]
N = 256


def predicted_rate(name: str, beta: float, sigma: float, k: int) -> float:
    """λ_k written out with scipy's Bessel functions, independently of
    the library: USA k² I_k(β)/β - σk², SA k² I_k(β)/(β I_0(β)) - σk², and at β = 0
    the limit I_k(β)/β → δ_{k1}/2 (both)."""
    if beta == 0:
        ratio = 0.5 if k == 1 else 0.0
    elif name == "USA":
        ratio = iv(k, beta) / beta
    else:
        ratio = iv(k, beta) / (beta * iv(0, beta))
    return k**2 * (ratio - sigma)


def measure_rate(model: mf.SelfAttention, k: int, method: str, n: int = N) -> float:
    """λ_k measured from solve() on n nodes over a time in which ε e^{λt} stays ≤ 1e-4."""
    circle = mf.Circle(n)
    rho0 = mf.density(circle, lambda th: 1 + EPSILON * np.cos(k * th))
    rate = float(model.growth_rate(k))  # only to choose the run length
    t_final = min(2.0, np.log(100.0) / max(abs(rate), 1e-3))
    # The finite-volume step is stability-controlled (CFL and cfl/Λ); near the
    # uniform state its SSP-RK3 time error (λΔt)⁴/24 per step would hide the
    # O(h²) spatial error, so the step is capped at 0.02/|λ| (time error < 1e-7).
    # The spectral scheme runs with its default tolerances: its error control is relative to the
    # fluctuation about the mean, so the ε-perturbation is integrated to rtol of itself.
    options = {} if method == "spectral" else {"max_step": 0.02 / max(abs(rate), 0.1)}
    ds = mf.solve(model, rho0, [0.0, t_final], method=method, raise_on_error=True, **options)
    coeffs = np.abs(np.fft.rfft(ds.density.values, axis=-1)[:, k])
    return float(np.log(coeffs[-1] / coeffs[0]) / t_final)


def growth_table() -> xr.Dataset:
    """Measured and predicted λ_k for every case, mode and scheme."""
    methods = ["spectral", "finite_volume"]
    measured = np.empty((len(CASES), len(MODES), len(methods)))
    coarse = np.empty((len(CASES), len(MODES)))
    predicted = np.empty((len(CASES), len(MODES)))
    for i, (name, beta, sigma) in enumerate(CASES):
        model = mf.SelfAttention(beta, normalized=(name == "SA"), noise=sigma)
        for j, k in enumerate(MODES):
            predicted[i, j] = predicted_rate(name, beta, sigma, k)
            for m, method in enumerate(methods):
                measured[i, j, m] = measure_rate(model, k, method)
            coarse[i, j] = measure_rate(model, k, "finite_volume", N // 2)
    labels = [f"{name} β={beta:g} σ={sigma:g}" for name, beta, sigma in CASES]
    return xr.Dataset(
        {
            "measured": (("case", "mode", "scheme"), measured),
            "finite_volume_half_grid": (("case", "mode"), coarse),
            "predicted": (("case", "mode"), predicted),
        },
        coords={"case": labels, "mode": MODES, "scheme": methods},
        attrs={"epsilon": EPSILON, "n": N, "meanfield_version": mf.__version__},
    )


def energy_runs() -> dict[str, xr.Dataset]:
    """Nonlinear SA β = 4 runs from the same perturbed start, both schemes, up to t = 7,
    before the clusters outgrow the resolution of N = 512 (the spectral scheme
    stops with an under-resolution error when they do)."""
    rho0 = perturbed_uniform(mf.Circle(512), amplitude=0.05, seed=3)
    t = np.linspace(0, 7, 71)
    model = mf.SelfAttention(4.0)
    return {method: mf.solve(model, rho0, t, method=method) for method in ("spectral", "finite_volume")}


def figure(table: xr.Dataset, runs: dict[str, xr.Dataset]) -> Figure:
    fig = Figure(figsize=(11, 4.5), layout="constrained")
    ax_rates, ax_energy = fig.subplots(1, 2)
    floor = 1e-13
    index = np.arange(table.sizes["case"] * table.sizes["mode"])
    series = {
        "spectral, N = 256": table.measured.sel(scheme="spectral"),
        "finite volume, N = 128": table.finite_volume_half_grid,
        "finite volume, N = 256": table.measured.sel(scheme="finite_volume"),
    }
    for (label, measured), marker in zip(series.items(), ["o", "v", "x"]):
        error = np.abs(measured - table.predicted).values.ravel()
        ax_rates.semilogy(index, np.maximum(error, floor), marker, label=label, mfc="none")
    ax_rates.set_xticks(index[:: len(MODES)], table.case.values, rotation=35, ha="right", fontsize=7)
    ax_rates.set_ylabel(f"|λ_k measured - λ_k predicted|  (k = {MODES[0]}…{MODES[-1]})")
    ax_rates.set_title("growth-rate errors about the uniform state (values < 1e-13 drawn at 1e-13)", fontsize=9)
    ax_rates.legend(fontsize=8)
    for method, ds in runs.items():
        ax_energy.plot(ds.time, ds.energy, label=f"{method} ({'ok' if ds.attrs['success'] else 'stopped'})")
    ax_energy.set_xlabel("t")
    ax_energy.set_ylabel("E_β")
    ax_energy.set_title("SA β = 4 from a perturbed uniform start")
    ax_energy.legend()
    return fig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", type=Path, default=Path("validation_output"))
    args = parser.parse_args(argv)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    table = growth_table()
    runs = energy_runs()
    error = np.abs(table.measured - table.predicted)
    fv_error = error.sel(scheme="finite_volume")
    with np.errstate(divide="ignore"):
        fv_order = np.log2(np.abs(table.finite_volume_half_grid - table.predicted) / np.maximum(fv_error, 1e-300))
    spectral_ok = error.sel(scheme="spectral") <= SPECTRAL_TOLERANCE
    fv_ok = (fv_error <= FV_FLOOR) | (fv_order >= FV_MIN_ORDER)
    ok = bool(spectral_ok.all() and fv_ok.all())
    lines = [
        f"{'case':<22}{'k':>3}{'predicted':>14}{'spectral':>14}{'finite_volume':>15}"
        f"{'err spectral':>14}{'err FV':>10}{'FV order':>10}"
    ]
    for case in table.case.values:
        for k in MODES:
            row = table.sel(case=case, mode=k)
            err = error.sel(case=case, mode=k).values
            lines.append(
                f"{case:<22}{k:>3}{float(row.predicted):>14.8f}"
                f"{float(row.measured.sel(scheme='spectral')):>14.8f}"
                f"{float(row.measured.sel(scheme='finite_volume')):>15.8f}"
                f"{err[0]:>14.1e}{err[1]:>10.1e}{float(fv_order.sel(case=case, mode=k)):>10.2f}"
            )
    text = "\n".join(lines)
    print(text)
    (args.output_dir / "circle_growth_rates.txt").write_text(text + "\n")
    table.to_netcdf(args.output_dir / "circle_growth_rates.nc")
    figure(table, runs).savefig(args.output_dir / "circle_growth_rates.png", dpi=110)
    for method, ds in runs.items():
        increments = np.diff(ds.energy.values)
        if not ds.attrs["success"] or np.any(increments < -1e-10):
            print(f"energy check failed for {method}: {ds.attrs['message']}")
            ok = False
    print("all growth rates within tolerance" if ok else "MISMATCH: see the table above")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

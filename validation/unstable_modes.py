"""Most-unstable mode of the uniform state (Bruno–Pasqualotto–Agazzi, arXiv 2410.23228) on S¹ and S².

About the uniform density a degree-l perturbation grows like e^{λ_l t},
λ_l ∝ l(l+d-2) I_{l+d/2-1}(β) for σ = 0 (SA and USA differ by an l-independent
factor), so from small noise the degree k* = argmax_l λ_l dominates and on S¹
the density forms k* peaks (β = 5: a 3-periodic state). For large β,
I_k(β) ≈ e^β e^{-k²/2β}/√(2πβ) gives k* ≈ √(2β).

Prediction: argmax_l l(l+d-2) I_{l+d/2-1}(β) written out here with
scipy.special.ive (independently of the library), and checked to agree with
``mf.most_unstable_mode`` (which uses ``SelfAttention.growth_rate``).

Measurement: ``mf.unstable_mode_run`` (spectral solver) from the uniform density
plus equal-amplitude random-phase noise (ε = 1e-10, degrees 1 … 2k*+4) until the
largest non-constant degree reaches 5 % of the mean (density ±10 %); there
the dominant degree is read from the spectrum and, on S¹, the peaks of the
density (local maxima above the mean) are counted. Checks:

* S¹, SA and USA, several seeds per β: the dominant mode equals k* for every
  seed (the noise starts all degrees at the same size, so in the linear phase
  the largest one is the fastest-growing one, ahead by the separation factor
  e^{(λ_{k*} - λ_{l₂}) T} ≥ 1.4 at every β here);
* S¹: the most frequent peak count over the seeds equals k*, and every seed
  has k* peaks where the separation is at least PEAK_SEPARATION (below it the
  runner-up mode is large enough to add or merge a peak in some seeds);
* the growth of a_{k*} over the linear phase equals λ_{k*} within RATE_TOLERANCE;
* S², SA: the dominant degree (largest ‖ρ_l‖, the L² norm of the degree-l part)
  equals l* for every seed;
* |k*(β) - √(2β)| ≤ SQRT_TOLERANCE on β ∈ [0.5, 40].

Writes unstable_modes.txt (the tables), unstable_modes.nc and unstable_modes.png
(k*(β) with √(2β) and the measured modes; example densities on S¹ and S²);
exits with status 1 on a mismatch. Run time ≈ 25 s on one core (--quick ≈ 5 s).

Run:  python validation/unstable_modes.py [--output-dir DIR] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import xarray as xr
from matplotlib.figure import Figure
from scipy.special import ive

import meanfield as mf

CIRCLE_BETAS = (0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 7.0, 9.0, 12.0, 14.0, 20.0, 25.0, 30.0, 40.0)
SPHERE_BETAS = (1.0, 2.0, 3.0, 5.0, 6.0, 10.0, 15.0, 20.0)
CIRCLE_SEEDS = 8
SPHERE_SEEDS = 2
CIRCLE_NODES = 256
"""Resolves degree 85 (dealiased); the noise reaches degree 2k*+4 ≤ 22 at β = 40."""

PEAK_SEPARATION = 3.0
"""Every seed must show k* peaks where e^{(λ_{k*} - λ_{l₂})T} ≥ 3: then the runner-up's curvature
(k*+1)² a_{l₂} is below k*² a_{k*} for k* ≥ 2. Not a proof: below 3, 3 of 204 runs (β = 1, 6, 40,
separations 1.5–2.4) showed k* ± 1 peaks."""

RATE_TOLERANCE = 1e-3
"""|measured/predicted λ_{k*} - 1| over the whole linear phase (≈ 20 e-folds): the nonlinearity acts
only in the last few, where the density varies by ≤ ±10 %; measured ≤ 2e-4 for k* ≥ 2 and
7e-4 at β = 1 (k* = 1, whose own harmonic feeds back most)."""

SQRT_TOLERANCE = 0.53
"""max |k*(β) - √(2β)| over β ∈ [0.5, 40] (measured 0.52, at β ≈ 1.09)."""


def predicted_degree(beta: float, d: int) -> tuple[int, int, float]:
    """(k*, runner-up, λ_{runner-up}/λ_{k*}) from l(l+d-2) I_{l+d/2-1}(β), exponentially scaled by ive."""
    ell = np.arange(1, 200)
    weight = ell * (ell + d - 2) * ive(ell + d / 2 - 1, beta)
    order = np.argsort(weight)[::-1]
    return int(ell[order[0]]), int(ell[order[1]]), float(weight[order[1]] / weight[order[0]])


def sphere_lmax(l_star: int) -> int:
    """Band limit for noise in the degrees 1 … 2l*+4: the solver's tail test looks above 2 lmax/3."""
    return max(16, 2 * (2 * l_star + 4) + 8)


def circle_table(betas: tuple[float, ...], seeds: int) -> xr.Dataset:
    models = ("SA", "USA")
    shape = (len(betas), len(models), seeds)
    measured, peaks = np.zeros(shape, int), np.zeros(shape, int)
    rate_error, separation, measured_separation = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    library = np.zeros((len(betas), len(models)), int)
    predicted = np.array([predicted_degree(b, 2)[0] for b in betas])
    runner_up = np.array([predicted_degree(b, 2)[1] for b in betas])
    examples = {}
    circle = mf.Circle(CIRCLE_NODES)
    for i, beta in enumerate(betas):
        for j, name in enumerate(models):
            model = mf.SelfAttention(beta, normalized=(name == "SA"))
            library[i, j] = mf.most_unstable_mode(model).degree
            for s in range(seeds):
                run = mf.unstable_mode_run(model, circle, seed=s)
                k = run.attrs["predicted_degree"]
                measured[i, j, s] = run.attrs["measured_degree"]
                peaks[i, j, s] = run.attrs["peaks"]
                rate_error[i, j, s] = float(run.measured_rate[k] / run.predicted_rate[k]) - 1
                separation[i, j, s] = run.attrs["predicted_separation"]
                measured_separation[i, j, s] = run.attrs["measured_separation"]
                if name == "SA" and s == 0:
                    examples[beta] = run.density.values
    dims = ("beta", "model", "seed")
    return xr.Dataset(
        {
            "predicted": ("beta", predicted, {"long_name": "k* = argmax_k k² I_k(β) (scipy.special.ive)"}),
            "runner_up": ("beta", runner_up),
            "library": (("beta", "model"), library, {"long_name": "mf.most_unstable_mode(...).degree"}),
            "measured": (dims, measured, {"long_name": "argmax_k |ρ̂_k| at the end of the linear phase"}),
            "peaks": (dims, peaks, {"long_name": "local maxima of ρ above its mean"}),
            "rate_error": (dims, rate_error, {"long_name": "measured/predicted λ_{k*} - 1"}),
            "separation": (dims, separation, {"long_name": "e^{(λ_{k*} - λ_{l2}) T}"}),
            "measured_separation": (dims, measured_separation, {"long_name": "a_{k*}/max_{k≠k*} a_k at T"}),
            "example_density": (("example_beta", "theta"), np.array(list(examples.values())),
                                {"long_name": "SA density at the end of the linear phase, seed 0"}),
        },
        coords={"beta": list(betas), "model": list(models), "seed": np.arange(seeds),
                "example_beta": list(examples), "theta": circle.theta},
    )


def sphere_table(betas: tuple[float, ...], seeds: int) -> tuple[xr.Dataset, dict]:
    predicted = np.array([predicted_degree(b, 3)[0] for b in betas])
    runner_up = np.array([predicted_degree(b, 3)[1] for b in betas])
    measured = np.zeros((len(betas), seeds), int)
    separation, library = np.zeros((len(betas), seeds)), np.zeros(len(betas), int)
    lmax = np.array([sphere_lmax(int(p)) for p in predicted])
    example = {}
    for i, beta in enumerate(betas):
        model = mf.SelfAttention(beta)
        library[i] = mf.most_unstable_mode(model, d=3).degree
        for s in range(seeds):
            run = mf.unstable_mode_run(model, mf.Sphere(int(lmax[i])), seed=s)
            measured[i, s] = run.attrs["measured_degree"]
            separation[i, s] = run.attrs["predicted_separation"]
            if s == 0 and beta == 10.0:
                example = {"beta": beta, "density": run.density}
    ds = xr.Dataset(
        {
            "predicted": ("beta", predicted, {"long_name": "l* = argmax_l l(l+1) I_{l+1/2}(β)"}),
            "runner_up": ("beta", runner_up),
            "library": ("beta", library),
            "measured": (("beta", "seed"), measured, {"long_name": "argmax_l ‖ρ_l‖ at the end of the linear phase"}),
            "separation": (("beta", "seed"), separation),
            "lmax": ("beta", lmax),
        },
        coords={"beta": list(betas), "seed": np.arange(seeds)},
    )
    return ds, example


def modal(values: np.ndarray) -> int:
    return int(np.bincount(values).argmax())


def figure(circle: xr.Dataset, sphere: xr.Dataset, example: dict) -> Figure:
    fig = Figure(figsize=(15, 4.6), layout="constrained")
    ax_k, ax_rho, ax_sphere = fig.subplots(1, 3)
    fine = np.linspace(0.5, 40.0, 1000)
    ax_k.step(fine, [predicted_degree(b, 2)[0] for b in fine], where="post", color="k", label="k* = argmax k² I_k(β)")
    ax_k.plot(fine, np.sqrt(2 * fine), "k--", lw=1, label="√(2β)")
    ax_k.step(fine, [predicted_degree(b, 3)[0] for b in fine], where="post", color="tab:green", lw=1,
              label="l* on S²")
    for name, marker in (("SA", "o"), ("USA", "x")):
        ax_k.plot(circle.beta, [modal(v) for v in circle.measured.sel(model=name).values], marker, ms=7,
                  mfc="none", ls="none", label=f"S¹ {name}: measured dominant mode")
    ax_k.plot(circle.beta, [modal(v) for v in circle.peaks.sel(model="SA").values], "+", ms=10, ls="none",
              color="tab:red", label="S¹ SA: density peaks")
    ax_k.plot(sphere.beta, [modal(v) for v in sphere.measured.values], "s", color="tab:green", mfc="none",
              ls="none", label="S² SA: measured dominant degree")
    ax_k.set_xlabel("β")
    ax_k.set_ylabel("most unstable degree")
    ax_k.set_title("most-unstable mode from uniform + equal-amplitude noise")
    ax_k.legend(fontsize=7)
    for beta in (1.0, 5.0, 9.0, 20.0):
        if beta in circle.example_beta.values:
            rho = circle.example_density.sel(example_beta=beta).values
            ax_rho.plot(circle.theta, 2 * np.pi * rho - 1, label=f"β = {beta:g} (k* = {predicted_degree(beta, 2)[0]})")
    ax_rho.set_xlabel("θ")
    ax_rho.set_ylabel("2π ρ - 1")
    ax_rho.set_title("S¹, SA: densities at the end of the linear phase")
    ax_rho.legend(fontsize=8)
    if example:
        rho = example["density"]
        mesh = ax_sphere.pcolormesh(np.degrees(rho.lon), np.degrees(rho.lat), 4 * np.pi * rho.values - 1,
                                    shading="nearest", cmap="RdBu_r")
        fig.colorbar(mesh, ax=ax_sphere, label="4π ρ - 1")
        ax_sphere.set_xlabel("longitude (°)")
        ax_sphere.set_ylabel("latitude (°)")
        ax_sphere.set_title(f"S², SA, β = {example['beta']:g}: l* = {predicted_degree(example['beta'], 3)[0]}")
    return fig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", type=Path, default=Path("validation_output"))
    parser.add_argument("--quick", action="store_true", help="fewer β and seeds")
    args = parser.parse_args(argv)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    circle_betas = (1.0, 2.0, 5.0, 9.0, 20.0) if args.quick else CIRCLE_BETAS
    sphere_betas = (1.0, 5.0, 10.0) if args.quick else SPHERE_BETAS
    circle = circle_table(circle_betas, 3 if args.quick else CIRCLE_SEEDS)
    sphere, example = sphere_table(sphere_betas, 1 if args.quick else SPHERE_SEEDS)

    ok = True
    lines = ["S¹ (N = 256, spectral): k* = argmax_k k² I_k(β); dominant mode and peaks at the end of the linear phase",
             f"{'β':>6}{'model':>6}{'k*':>4}{'lib':>5}{'l₂':>4}{'separation':>12}{'dominant':>10}{'ok seeds':>10}"
             f"{'peaks':>7}{'ok seeds':>10}{'max|rate err|':>15}  verdict"]
    for beta in circle.beta.values:
        row = circle.sel(beta=beta)
        k = int(row.predicted)
        for name in circle.model.values:
            r = row.sel(model=name)
            measured, peaks = r.measured.values, r.peaks.values
            sep = float(r.separation.min())
            rate = float(np.abs(r.rate_error).max())
            good = (int(r.library) == k and np.all(measured == k) and modal(peaks) == k
                    and (sep < PEAK_SEPARATION or np.all(peaks == k)) and rate <= RATE_TOLERANCE)
            ok &= bool(good)
            lines.append(f"{beta:>6g}{name:>6}{k:>4}{int(r.library):>5}{int(row.runner_up):>4}{sep:>12.3g}"
                         f"{modal(measured):>10}{np.sum(measured == k):>6}/{measured.size:<3}"
                         f"{modal(peaks):>7}{np.sum(peaks == k):>6}/{peaks.size:<3}{rate:>15.1e}  "
                         f"{'ok' if good else 'MISMATCH'}")
    lines += ["", "S² (SA, spectral, Gauss–Legendre lmax): l* = argmax_l l(l+1) I_{l+1/2}(β); dominant degree by ‖ρ_l‖",
              f"{'β':>6}{'lmax':>6}{'l*':>4}{'lib':>5}{'l₂':>4}{'separation':>12}{'dominant':>10}{'ok seeds':>10}  verdict"]
    for beta in sphere.beta.values:
        r = sphere.sel(beta=beta)
        l_star = int(r.predicted)
        measured = r.measured.values
        good = int(r.library) == l_star and np.all(measured == l_star)
        ok &= bool(good)
        lines.append(f"{beta:>6g}{int(r.lmax):>6}{l_star:>4}{int(r.library):>5}{int(r.runner_up):>4}"
                     f"{float(r.separation.min()):>12.3g}{modal(measured):>10}{np.sum(measured == l_star):>6}/"
                     f"{measured.size:<3}  {'ok' if good else 'MISMATCH'}")
    fine = np.linspace(0.5, 40.0, 400)
    sqrt_dev = max(abs(predicted_degree(b, 2)[0] - np.sqrt(2 * b)) for b in fine)
    sqrt_ok = sqrt_dev <= SQRT_TOLERANCE
    ok &= bool(sqrt_ok)
    lines += ["", f"max |k*(β) - √(2β)| over β ∈ [0.5, 40]: {sqrt_dev:.3f} (tolerance {SQRT_TOLERANCE})"
                  f"  {'ok' if sqrt_ok else 'MISMATCH'}",
              f"tolerances: dominant mode exact for every seed; peaks: modal count = k*, every seed where "
              f"separation ≥ {PEAK_SEPARATION:g}; |rate err| ≤ {RATE_TOLERANCE:g}",
              f"run time {time.perf_counter() - start:.1f} s"]
    text = "\n".join(lines)
    print(text)
    (args.output_dir / "unstable_modes.txt").write_text(text + "\n")
    attrs = {"method": "mf.unstable_mode_run, spectral, noise 1e-10 equal-amplitude, stop at max a_l = 0.05",
             "meanfield_version": mf.__version__, "peak_separation": PEAK_SEPARATION,
             "rate_tolerance": RATE_TOLERANCE}
    out = xr.merge([circle.rename({k: f"circle_{k}" for k in circle.data_vars} | {"beta": "circle_beta"}),
                    sphere.rename({k: f"sphere_{k}" for k in sphere.data_vars} | {"beta": "sphere_beta",
                                                                                  "seed": "sphere_seed"})])
    out.attrs.update(attrs)
    out.to_netcdf(args.output_dir / "unstable_modes.nc")
    figure(circle, sphere, example).savefig(args.output_dir / "unstable_modes.png", dpi=110)
    print("all most-unstable modes as predicted" if ok else "MISMATCH: see the table above")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

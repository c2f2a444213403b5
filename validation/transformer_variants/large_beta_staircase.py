"""The large-β energy staircase (arXiv:2410.06833): n = 5 SA tokens, β = 500 … 4000, energy in arc-length time.

For each β, mf.arc_length_staircase runs the five tokens θ_i = c_i log β/√β, c = (0, 1, 3, 7, 10), to their
final merge with the arc length s = ∫|ẋ| dt as the clock, and reports e^{-β}E_β and log E_β (E_β ≈ e^{4000}
itself overflows a double). Checks, each exiting 1 on a mismatch:

* every sample of e^{-β}E_β and log E_β finite, the run ends in one cluster after n - 1 = 4 merges;
* each merge jump of e^{-β}E_β against e^{-β}(m_a m_b/β)(e^β - e^{β cos Δ}) within JUMP_TOLERANCE relative
  (what the formula neglects, the other pair terms, is below e^{-35} here: measured ≤ 1e-12, round-off);
* the final plateau, one cluster: e^{-β}E_β = 1/(2β) and log E_β = β - log 2β within β·ROUND_OFF_PER_BETA;
* e^{-β}E_β non-decreasing along the run (SA is a gradient ascent of E_β) up to β·ROUND_OFF_PER_BETA of 1/(2β).

Writes large_beta_staircase.txt (the merge table), large_beta_staircase.png (n·β·e^{-β}E_β against s for every
β). About 10 s.

Run:  python validation/transformer_variants/large_beta_staircase.py [--output-dir DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

import meanfield as mf

BETAS = (500.0, 1000.0, 2000.0, 4000.0)
#: relative tolerance of the merge jumps (the issue's requirement)
JUMP_TOLERANCE = 1e-8
#: relative round-off of e^{-β}E_β per unit β: the inner products <x_i, x_j> = cos θ_i cos θ_j + sin θ_i sin θ_j of
#: the energy sums carry ~2 eps, the exponent β(<x_i, x_j> - 1) then β·2 eps (measured 3.5e-13 at β = 4000)
ROUND_OFF_PER_BETA = 4 * np.finfo(float).eps


def check_staircase(betas: tuple[float, ...] = BETAS) -> tuple[list[tuple[str, str, float, float, float, bool]],
                                                                dict[float, xr.Dataset]]:
    """The checks of the module docstring for every β: rows (β, quantity, predicted, measured, tolerance, ok) and
    the runs."""
    rows, runs = [], {}
    for beta in betas:
        ds = mf.arc_length_staircase(beta)
        runs[beta] = ds
        name = f"beta = {beta:g}"
        finite = bool(np.all(np.isfinite(ds.normalized_energy)) and np.all(np.isfinite(ds.log_energy)))
        rows.append((name, "finite e^-beta E and log E (1 = all)", 1.0, float(finite), 0.0, finite))
        rows.append((name, "merges, ending in one cluster", 4.0, float(ds.sizes["merge"]), 0.0,
                     ds.sizes["merge"] == 4 and ds.attrs["success"] == 1))
        for k in range(ds.sizes["merge"]):
            m = ds.isel(merge=k)
            error = float(m.relative_error)
            rows.append((name, f"merge {k}: jump, m_a m_b = {float(m.mass_a * m.mass_b):.2f}, "
                               f"Delta = {float(m.separation):.4f}",
                         float(m.predicted_jump), float(m.measured_jump), JUMP_TOLERANCE, error <= JUMP_TOLERANCE))
        tolerance = beta * ROUND_OFF_PER_BETA
        final = float(ds.normalized_energy[-1])
        exact = 1.0 / (2.0 * beta)
        rows.append((name, "final e^-beta E = 1/(2 beta)", exact, final, tolerance,
                     abs(final / exact - 1) <= tolerance))
        log_exact = beta - np.log(2 * beta)
        log_final = float(ds.log_energy[-1])
        rows.append((name, "final log E = beta - log(2 beta)", log_exact, log_final, tolerance,
                     abs(log_final / log_exact - 1) <= tolerance))
        drop = float(np.max(-np.diff(ds.normalized_energy.values), initial=0.0)) / exact
        rows.append((name, "largest decrease of e^-beta E / (1/(2 beta))", 0.0, drop, tolerance, drop <= tolerance))
    return rows, runs


def figure(runs: dict[float, xr.Dataset], path: Path) -> None:
    """n β e^{-β}E_β (= 1 for one cluster) against the arc length, one staircase per β."""
    fig = Figure(figsize=(6.4, 4.0))
    ax = fig.add_subplot()
    for beta, ds in runs.items():
        scaled = ds.attrs["n_particles"] * 2 * beta * ds.normalized_energy.values
        ax.plot(ds.arc_length.values, scaled, label=f"beta = {beta:g}")
    ax.set_xlabel("arc length s = int |x'| dt")
    ax.set_ylabel("2 n beta e^(-beta) E_beta")
    ax.set_title("n = 5 SA tokens: the energy staircase in arc-length time")
    ax.legend()
    fig.savefig(path, dpi=90)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", type=Path, default=Path("validation_output"))
    args = parser.parse_args(argv)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    rows, runs = check_staircase()
    lines = [f"{'run':14s} {'quantity':58s} {'predicted':>22s} {'measured':>22s} {'tol':>8s}  ok"]
    for name, quantity, predicted, measured, tol, ok in rows:
        lines.append(f"{name:14s} {quantity:58s} {predicted:22.15g} {measured:22.15g} {tol:8.0e}  "
                     f"{'yes' if ok else 'MISMATCH'}")
    text = "\n".join(lines)
    print(text)
    (args.output_dir / "large_beta_staircase.txt").write_text(text + "\n")
    figure(runs, args.output_dir / "large_beta_staircase.png")
    failures = sum(not row[-1] for row in rows)
    print(f"{failures} mismatch(es)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

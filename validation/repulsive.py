"""Repulsive tokens (V = -I): paper 2 §9.1, Proposition 3.4, Theorem 9.2; paper 1 Theorem 8.5.

(a) The PDE of ``RepulsiveSelfAttention`` from a von Mises start (κ = 2, β = 2) on S¹ (spectral and
    finite volume), zonal S⁴ (spectral) and S² (finite volume): E_β decreases at every output and
    stays above E_β[uniform] (Proposition 3.4: the uniform measure is the unique minimiser); the
    excess (E - E_u)/(E(0) - E_u) at t = 6 is reported.
(b) Optimal configurations (Theorem 9.2): ``mf.optimal_configurations`` (L-BFGS on H_β from random
    starts) for n = 5 on S¹, n = 4, 6, 12 on S² and the 600-cell's n = 120 on S³, β = 1 and 4: the
    fraction of starts reaching the sharp configuration, |H_β - exact|, design strength, iterations.
    Checked: every start for n = 5, 4, 6, 12 reaches the pentagon, tetrahedron, octahedron,
    icosahedron with |H - exact| ≤ 1e-10 and strength 4, 2, 3, 5. The 600-cell is reported, not
    checked (a flat landscape at β = 1, other local minima at β = 4: see docs/repulsive.md).
(c) The repulsive gradient flow itself (``method="flow"``) on S², n = 4, 6: time to reach the
    configuration's energy to 1e-10.
(d) Paper 1 Theorem 8.5 on R^d (V = -I, n = 8, d = 3): 2βt tr S(t) → min(n - 1, d) with S the
    covariance of the tokens, the mean → 0, P - 11ᵀ/n ∝ 1/t.

Writes repulsive.txt, repulsive_configurations.nc and repulsive.png; exits with status 1 on a mismatch.
Run time: about 1 minute on one core.

Run:  python validation/repulsive.py [--output-dir DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

import meanfield as mf

PDE_CASES = [(mf.Circle(256), "spectral", False), (mf.Circle(256), "finite_volume", True),
             (mf.ZonalSphere(5, 48), "spectral", True), (mf.Sphere(16), "finite_volume", True)]
PDE_TIMES = np.linspace(0.0, 6.0, 25)
CONFIGURATIONS = [(5, 2), (4, 3), (6, 3), (12, 3), (120, 4)]
CHECKED = {(5, 2): (4, "polygon"), (4, 3): (2, "simplex"), (6, 3): (3, "cross_polytope"),
           (12, 3): (5, "icosahedron")}
BETAS = (1.0, 4.0)
STARTS = {120: 4}
"""Random starts per (n, d): 20, and 4 for the 600-cell (a few seconds each)."""
ENERGY_TOLERANCE = 1e-10


def pde_table() -> tuple[list[str], bool, list]:
    lines, ok, curves = ["(a) PDE: energy decreasing towards E[uniform] (beta = 2, von Mises kappa = 2)"], True, []
    for domain, method, normalized in PDE_CASES:
        model = mf.RepulsiveSelfAttention(2.0, normalized=normalized)
        rho0 = mf.von_mises(domain, 0.0 if isinstance(domain, mf.Circle) else None, 2.0)
        out = mf.solve(model, rho0, PDE_TIMES, method=method)
        energy = out["energy"].values
        uniform = float(mf.energy(model, mf.uniform(domain)))
        good = bool(out.attrs["success"] and np.all(np.diff(energy) < 0) and np.all(energy > uniform))
        ok &= good
        lines.append(f"  {model.name:14s} {type(domain).__name__:12s} {method:14s} decreasing={int(good)} "
                     f"excess(6)/excess(0) = {(energy[-1] - uniform) / (energy[0] - uniform):.3e}")
        curves.append((f"{model.name}, {type(domain).__name__}, {method}", energy - uniform))
    return lines, ok, curves


def configuration_table() -> tuple[list[str], bool, xr.Dataset]:
    lines = ["", "(b) optimal configurations by L-BFGS from random starts",
             f"  {'n':>4} {'d':>2} {'beta':>4} {'starts':>6} {'reached':<15} {'fraction':>8} {'max |H-exact|':>13} "
             f"{'strengths':<10} {'inner prods':>11} {'iterations':>10} {'s/start':>8}"]
    ok, pieces = True, []
    for n, d in CONFIGURATIONS:
        for beta in BETAS:
            starts = STARTS.get(n, 20)
            out = mf.optimal_configurations(n, d, beta, starts=starts, seed=11, energy_tolerance=ENERGY_TOLERANCE)
            name = str(out["configuration_name"].values[0])
            fraction = float(out["fraction"].values[0])
            strengths = sorted(set(out["strength"].values.tolist()))
            gap = float(out["energy_gap"].values.max())
            distinct = sorted(set(out["n_inner_products"].values.tolist()))
            shown = ",".join(map(str, distinct)) if len(distinct) <= 2 else f"{distinct[0]}-{distinct[-1]}"
            if (n, d) in CHECKED:
                strength, expected = CHECKED[(n, d)]
                ok &= name == expected and fraction == 1.0 and gap <= ENERGY_TOLERANCE and strengths == [strength]
            lines.append(f"  {n:4d} {d:2d} {beta:4g} {starts:6d} {name:<15} {fraction:8.2f} {gap:13.2e} "
                         f"{','.join(map(str, strengths)):<10} {shown:>11} {int(out['iterations'].values.max()):10d} "
                         f"{float(out['seconds'].values.mean()):8.2f}")
            pieces.append(out.expand_dims(case=[f"n{n}_d{d}_beta{beta:g}"]).drop_vars("configuration_name")
                          [["energy", "energy_gap", "strength", "n_inner_products", "iterations", "seconds"]])
    return lines, ok, xr.concat(pieces, "case", join="outer", coords="minimal", compat="override")


def flow_table() -> tuple[list[str], bool, list]:
    lines, ok, curves = ["", "(c) the repulsive gradient flow (USA, beta = 1) on S^2"], True, []
    for n, expected in ((4, "simplex"), (6, "cross_polytope")):
        out = mf.optimal_configurations(n, 3, 1.0, starts=5, seed=5, method="flow", t_final=300.0)
        good = bool(out["configuration_name"].values[0] == expected and out["fraction"].values[0] == 1.0)
        ok &= good
        lines.append(f"  n = {n}: {expected} from {float(out['fraction'].values[0]):.0%} of 5 starts, time to "
                     f"|H - H_final| <= 1e-10: {', '.join(f'{t:g}' for t in out['time_to_reach'].values)}")
    for n in (4, 6, 12):
        x0 = np.random.default_rng(n).standard_normal((n, 3))
        x0 /= np.linalg.norm(x0, axis=1, keepdims=True)
        run = mf.simulate(mf.RepulsiveSelfAttention(1.0, normalized=False), x0, np.linspace(0.0, 120.0, 241),
                          rtol=1e-11, atol=1e-13)
        curves.append((n, run))
    return lines, ok, curves


def theorem85() -> tuple[list[str], bool]:
    n, d, beta = 8, 3, 1.0
    model = mf.Attention(beta, V=-np.eye(d), projection=False)
    times = np.array([0.0, 10.0, 100.0, 1e3, 1e4])
    out = mf.simulate(model, np.random.default_rng(1).standard_normal((n, d)), times, rtol=1e-10, atol=1e-300)
    x = out["positions"].values
    y = x - x.mean(axis=1, keepdims=True)
    spread = 2 * beta * times * np.einsum("tnd,tnd->t", y, y) / n
    deviation = [np.abs(mf.attention_matrix(model, xt) - 1 / n).max() for xt in x]
    r = min(n - 1, d)
    ok = bool(out.attrs["success"] and abs(spread[-1] - r) < 2e-3 * r and np.all(np.diff(out["energy"].values) < 0))
    lines = ["", f"(d) paper 1 Theorem 8.5, R^{d}, n = {n}, V = -I: 2 beta t tr S(t) -> {r}"]
    for t, s, m, p in zip(times, spread, np.linalg.norm(x.mean(axis=1), axis=-1), deviation):
        lines.append(f"  t = {t:8g}: 2 beta t tr S = {s:.5f}, |mean| = {m:.2e}, max|P - 1/n| = {p:.2e}")
    return lines, ok


def figure(pde_curves: list, flow_curves: list, path: Path) -> None:
    fig = Figure(figsize=(16, 8))
    for k, (n, run) in enumerate(flow_curves):
        ax = fig.add_subplot(2, 4, k + 1, projection="3d")
        x = run["positions"].values
        for i in range(n):
            ax.plot(*x[:, i].T, color="0.7", lw=0.5)
        ax.scatter(*x[-1].T, color="C3", s=40)
        gram = x[-1] @ x[-1].T
        for i, j in zip(*np.nonzero(np.triu(gram > gram[np.triu_indices(n, 1)].max() - 1e-2, 1))):
            ax.plot(*np.stack([x[-1, i], x[-1, j]]).T, color="C0", lw=1.0)
        ax.set_title(f"n = {n}: repulsive flow, t = 120 (edges: nearest pairs)", fontsize=9)
        ax.set_box_aspect((1, 1, 1))
    ax = fig.add_subplot(2, 4, 4)
    for n, run in flow_curves:
        target = mf.studies.candidate_configurations(n, 3)[0]
        ax.semilogy(run.time, np.maximum(run["energy"].values - target.energy(1.0), 1e-16), label=f"n = {n}")
    ax.set(xlabel="t", ylabel="H_β - H_β[sharp]", title="flow: H_β above the sharp value")
    ax.legend(fontsize=8)
    ax = fig.add_subplot(2, 1, 2)
    for label, excess in pde_curves:
        ax.semilogy(PDE_TIMES, excess, label=label)
    ax.set(xlabel="t", ylabel="E_β - E_β[uniform]", title="PDE: energy decreasing to the uniform measure's")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", type=Path, default=Path("validation_output"))
    args = parser.parse_args(argv)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    lines, ok, pde_curves = pde_table()
    print("\n".join(lines), flush=True)
    more, good, table = configuration_table()
    print("\n".join(more), flush=True)
    lines += more
    ok &= good
    more, good, flow_curves = flow_table()
    print("\n".join(more), flush=True)
    lines += more
    ok &= good
    more, good = theorem85()
    print("\n".join(more), flush=True)
    lines += more
    ok &= good
    lines += ["", f"{'PASS' if ok else 'FAIL'} ({time.perf_counter() - start:.0f} s)"]
    print(lines[-1])
    (args.output_dir / "repulsive.txt").write_text("\n".join(lines) + "\n")
    table.attrs.update(description="optimal configurations from random starts (paper 2, Theorem 9.2)",
                       meanfield_version=mf.__version__)
    table.to_netcdf(args.output_dir / "repulsive_configurations.nc")
    figure(pde_curves, flow_curves, args.output_dir / "repulsive.png")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

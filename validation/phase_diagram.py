"""Paper 2's phase diagram (Figure 3) for n = 32 tokens and d = 2, 8, 32, 128, checked against theory.

(a) Wendel (Theorem 6.7): n iid uniform points on S^{d-1} lie in an open
    hemisphere with probability p(n, d) = 2^{1-n} Σ_{k<d} C(n-1, k) (1 for d ≥ n).
    The initial tokens of the diagram's systems are tested one by one (d = 2:
    largest circular gap > π; otherwise the linear program max s subject to
    <w, x_i> ≥ s, |w_k| ≤ 1, feasible with s > 0 iff a hemisphere holds them),
    and the fraction must be within 4 binomial standard errors of p(n, d).
    d = 16 is added: p(32, 16) = 1/2 exactly, the most informative case.
(b) d ≥ n: every system clusters (all pairs ≥ 1 - δ by t = 30 for β whose curve
    t*(β) ≤ 8, at d = 32 and 128), and the first time P reaches 1/2 approaches
    Γ_{∞,δ} as d grows: for β = 1, 2, 3, 4, |crossing - t*| decreases strictly
    over d = 32, 128, 512 (runs with output times 0.02 apart around t*) and is
    at most 0.05 at d = 512.
(c) d = 2, β ≥ 6: the metastable zone: 0 < P < 1 at every t ∈ (0, 30], with
    more than one cluster on average at t = 30.

Writes one NetCDF per d (the diagrams), phase_diagram_checks.nc and .txt (the
table) and phase_diagram_validation.png (the four diagrams with Γ_{∞,δ});
exits with status 1 on a mismatch.

Run:  python validation/phase_diagram.py [--output-dir DIR] [--scheduler local]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import xarray as xr
from matplotlib.figure import Figure
from scipy.optimize import linprog
from scipy.special import comb

import meanfield as mf
from meanfield.studies import phase_diagram_tokens
from meanfield.studies.clustering._phase_diagram import crossing_time

N = 32
DELTA = 1e-3
T_FINAL = 30.0
TIMES = np.linspace(0.0, T_FINAL, 151)
BETAS = np.linspace(0.1, 9.0, 12)
SYSTEMS = {2: 256, 8: 128, 32: 64, 128: 64}
"""Systems per β: enough for a standard error ≤ 0.02 of P (pair fractions of 496 pairs
average out faster than the binomial bound √(P(1-P)/S))."""

WENDEL_DIMENSIONS = (2, 8, 16, 32, 128)
WENDEL_SYSTEMS = 4096
WENDEL_SIGMAS = 4.0
"""(a) tolerance in binomial standard errors √(p(1-p)/S); for p ∈ {0, 1} the count must be exact."""

LP_MARGIN = 1e-9
"""A hemisphere holds the points when the optimal margin s exceeds this (round-off of the LP)."""

CLUSTER_CURVE_MAX = 8.0
"""(b) β whose curve time t*(β) is at most this must have every system clustered by t = 30."""

CROSSING_BETAS = (1.0, 2.0, 3.0, 4.0)
CROSSING_DIMENSIONS = (32, 128, 512)
CROSSING_SYSTEMS = 64
CROSSING_WINDOW = np.linspace(-0.75, 0.75, 76)
"""(b) output times t*(β) + window (0.02 apart), after t = 0."""

CROSSING_TOLERANCE = 0.05
"""(b) |crossing time of P = 1/2 - t*(β)| at d = 512 (measured ≤ 0.012 for β ≤ 4; 0.03-0.10 at d = 32)."""

METASTABLE_BETA = 6.0


def wendel(n: int, d: int) -> float:
    """2^{1-n} Σ_{k<d} C(n-1, k), exactly in integers then divided."""
    return sum(comb(n - 1, k, exact=True) for k in range(min(d, n))) / 2 ** (n - 1)


def in_open_hemisphere(x: np.ndarray) -> bool:
    """Whether the points x (n, d) lie in an open hemisphere: max s, <w, x_i> ≥ s, |w_k| ≤ 1, s ≤ 1, gives s > 0."""
    n, d = x.shape
    cost = np.zeros(d + 1)
    cost[-1] = -1.0
    constraints = np.hstack([-x, np.ones((n, 1))])
    result = linprog(cost, A_ub=constraints, b_ub=np.zeros(n), bounds=[(-1, 1)] * d + [(None, 1)], method="highs")
    return result.status == 0 and -result.fun > LP_MARGIN


def in_half_circle(x: np.ndarray) -> np.ndarray:
    """d = 2: the largest circular gap between sorted angles exceeds π, for each system of (S, n, 2)."""
    theta = np.sort(np.arctan2(x[..., 1], x[..., 0]), axis=-1)
    gaps = np.diff(np.concatenate([theta, theta[:, :1] + 2 * np.pi], axis=-1), axis=-1)
    return gaps.max(axis=-1) > np.pi


def wendel_table(seed: int) -> xr.Dataset:
    """(a) The fraction of the diagram's systems whose initial tokens lie in an open hemisphere, per d."""
    measured, expected, stderr = [], [], []
    agree = True
    for d in WENDEL_DIMENSIONS:
        x = phase_diagram_tokens(seed, range(WENDEL_SYSTEMS), d, N)
        inside = in_half_circle(x) if d == 2 else np.array([in_open_hemisphere(xi) for xi in x])
        if d == 2:
            # the linear program agrees with the gap test on the first systems
            agree = np.array_equal([in_open_hemisphere(xi) for xi in x[:200]], inside[:200])
        p = wendel(N, d)
        measured.append(inside.mean())
        expected.append(p)
        stderr.append(np.sqrt(p * (1 - p) / WENDEL_SYSTEMS))
    return xr.Dataset(
        {"hemisphere_fraction": ("d", measured), "wendel": ("d", expected), "binomial_stderr": ("d", stderr)},
        coords={"d": list(WENDEL_DIMENSIONS)},
        attrs={"n": N, "systems": WENDEL_SYSTEMS, "lp_agrees_with_gap_test_on_circle": int(agree)},
    )


def crossing_gaps(seed: int, scheduler: str) -> xr.Dataset:
    """(b) crossing time of P = 1/2 minus t*(β), over (beta, d), from runs sampled 0.02 apart around t*."""
    t_star = mf.equiangular_curve(CROSSING_BETAS, N, DELTA)
    gaps = np.empty((len(CROSSING_BETAS), len(CROSSING_DIMENSIONS)))
    for i, (beta, center) in enumerate(zip(CROSSING_BETAS, t_star)):
        times = np.concatenate([[0.0], center + CROSSING_WINDOW])
        for j, d in enumerate(CROSSING_DIMENSIONS):
            ds = mf.phase_diagram(d, N, [beta], times, CROSSING_SYSTEMS, DELTA, seed=seed, scheduler=scheduler,
                                  progress=False)
            gaps[i, j] = float(crossing_time(ds)[0]) - center
    return xr.Dataset({"crossing_gap": (("beta", "d_crossing"), gaps), "critical_time": ("beta", t_star)},
                      coords={"beta": list(CROSSING_BETAS), "d_crossing": list(CROSSING_DIMENSIONS)})


def figure(diagrams: dict[int, xr.Dataset]) -> Figure:
    fig = Figure(figsize=(12, 9), layout="constrained")
    axes = fig.subplots(2, 2)
    for ax, (d, ds) in zip(axes.ravel(), diagrams.items()):
        mf.plot.phase_diagram(ds, ax=ax)
    return fig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", type=Path, default=Path("validation_output"))
    parser.add_argument("--scheduler", default="serial", help="sweep scheduler: serial, local or tcp://host:port")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    lines: list[str] = []
    ok = True

    table = wendel_table(args.seed)
    lines.append(f"(a) Wendel, n = {N}, {WENDEL_SYSTEMS} systems: fraction in an open hemisphere")
    lines.append(f"{'d':>5} {'measured':>10} {'Wendel':>10} {'stderr':>9} {'ok':>4}")
    for d in table.d.values:
        row = table.sel(d=d)
        p, se, got = float(row.wendel), float(row.binomial_stderr), float(row.hemisphere_fraction)
        good = got == p if se == 0 else abs(got - p) <= WENDEL_SIGMAS * se
        ok &= good
        lines.append(f"{d:5d} {got:10.5f} {p:10.5f} {se:9.5f} {'yes' if good else 'NO':>4}")
    agree = bool(table.attrs["lp_agrees_with_gap_test_on_circle"])
    ok &= agree
    lines.append(f"d = 2: linear program and largest-gap test agree on 200 systems: {'yes' if agree else 'NO'}")

    diagrams = {}
    for d, systems in SYSTEMS.items():
        ds = mf.phase_diagram(d, N, BETAS, TIMES, systems, DELTA, seed=args.seed, scheduler=args.scheduler,
                              progress=False)
        ds.to_netcdf(args.output_dir / f"phase_diagram_d{d}_n{N}.nc")
        diagrams[d] = ds

    t_star = diagrams[128]["critical_time"].values
    lines.append("")
    lines.append(f"(b) d >= n: every system in one cluster at t = {T_FINAL:g} "
                 f"for beta with t* <= {CLUSTER_CURVE_MAX:g}")
    lines.append(f"{'beta':>6} {'t*':>8} {'clustered d=32':>15} {'clustered d=128':>16} {'ok':>4}")
    for k in np.flatnonzero(t_star <= CLUSTER_CURVE_MAX):
        clustered = [float(diagrams[d]["fraction_clustered"].isel(beta=k, time=-1)) for d in (32, 128)]
        good = clustered == [1.0, 1.0]
        ok &= good
        lines.append(f"{BETAS[k]:6.3g} {t_star[k]:8.4g} {clustered[0]:15.3f} {clustered[1]:16.3f} "
                     f"{'yes' if good else 'NO':>4}")
    gaps = crossing_gaps(args.seed, args.scheduler)
    lines.append(f"    crossing time of P = 1/2 minus t*(beta) (Gamma_inf,delta), {CROSSING_SYSTEMS} systems")
    lines.append(f"{'beta':>6} {'t*':>8} " + " ".join(f"{f'd={d}':>9}" for d in CROSSING_DIMENSIONS) + f" {'ok':>4}")
    for beta in CROSSING_BETAS:
        row = gaps.sel(beta=beta)
        absolute = np.abs(row["crossing_gap"].values)
        good = bool(np.all(np.diff(absolute) < 0) and absolute[-1] <= CROSSING_TOLERANCE)
        ok &= good
        lines.append(f"{beta:6.3g} {float(row.critical_time):8.4g} "
                     + " ".join(f"{g:9.4f}" for g in row["crossing_gap"].values) + f" {'yes' if good else 'NO':>4}")
    lines.append("")
    lines.append(f"(c) d = 2, beta >= {METASTABLE_BETA:g}: 0 < P < 1 for t in (0, {T_FINAL:g}]")
    lines.append(f"{'beta':>6} {'min P':>8} {'max P':>8} {'clusters(t=30)':>15} {'ok':>4}")
    d2 = diagrams[2]
    for beta in BETAS[BETAS >= METASTABLE_BETA]:
        p = d2["probability"].sel(beta=beta).values[1:]
        clusters = float(d2["clusters_mean"].sel(beta=beta).isel(time=-1))
        good = p.min() > 0 and p.max() < 1 and clusters > 1
        ok &= bool(good)
        lines.append(f"{beta:6.3g} {p.min():8.4f} {p.max():8.4f} {clusters:15.3f} {'yes' if good else 'NO':>4}")

    checks = xr.merge([table, gaps], combine_attrs="drop")
    checks.attrs.update(passed=int(ok), delta=DELTA, n=N)
    checks.to_netcdf(args.output_dir / "phase_diagram_checks.nc")
    figure(diagrams).savefig(args.output_dir / "phase_diagram_validation.png", dpi=110)
    lines.append("")
    lines.append(f"wall time {time.perf_counter() - start:.0f} s")
    lines.append("all phase-diagram checks passed" if ok else "MISMATCH: see the table above")
    text = "\n".join(lines)
    (args.output_dir / "phase_diagram_checks.txt").write_text(text + "\n")
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

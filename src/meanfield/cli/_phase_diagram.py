"""``meanfield phase-diagram``: paper 2's Figure 3 (or 5) as NetCDF + PNG, and a Figure-4 panel.

Runs :func:`meanfield.phase_diagram` over the given dimensions, β values and output
times as one sweep (dask LocalCluster by default), writes the Dataset as NetCDF, the
colour maps (one panel per d) with the curve Γ_{∞,δ} as PNG beside it, and for d = 2 (identity
weights) the trajectories of one system on the circle at chosen (β, t)
(``<output stem>_trajectories.png``). Prints a short table: for a few β, the
curve t*(β), the first time P reaches 1/2, and P and the mean number of
clusters at the final time.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import meanfield as mf

from ..io._conventions import described_run
from ..io._files import check_output_path, write_netcdf
from ..particles._token_ensembles import REPRESENTATIONS
from ..studies.clustering._phase_diagram import ATOL, RTOL, crossing_time
from ..studies.clustering._random_weights import DRAWS, ENSEMBLES
from ._options import add_output_arguments, check_at_least, refuse_existing, result_paths
from ._sweep_options import VALUES_HELP, parse_values, sweep_options

__all__ = ["add_phase_diagram_arguments", "phase_diagram_command", "default_output"]


def default_output(d: int | list[int], n: int, systems: int, betas: np.ndarray, t_final: float, unnormalized: bool,
                   ginibre: bool, mask: str | None = None, weights: str | None = None) -> Path:
    """``phase_diagram_d<d>[-<d'>…]_n<n>_s<systems>_beta<first>-<last>x<count>_t<t_final>[_usa][_ginibre][_<mask>]
    [_<ensemble>-<draw>].nc`` (``_ginibre`` for Ginibre weights drawn once, ``weights`` for the others)."""
    dims = "-".join(str(value) for value in np.atleast_1d(d))
    grid = f"beta{betas[0]:g}-{betas[-1]:g}x{betas.size}"
    return Path(f"phase_diagram_d{dims}_n{n}_s{systems}_{grid}_t{t_final:g}{'_usa' if unnormalized else ''}"
                f"{'_ginibre' if ginibre else ''}{'_' + mask if mask else ''}{'_' + weights if weights else ''}.nc")


def parse_dimensions(text: str) -> list[int]:
    """``--dimension``: one integer d ≥ 2, or several separated by commas (``2,8,32,128``), distinct."""
    try:
        values = [int(part) for part in text.split(",")]
    except ValueError:
        raise ValueError(f"--dimension must be an integer or integers separated by commas, got {text!r}") from None
    if any(value < 2 for value in values):
        raise ValueError(f"--dimension values must be >= 2, got {text!r}")
    if len(set(values)) != len(values):
        raise ValueError(f"--dimension values must be distinct, got {text!r}")
    return values


def add_phase_diagram_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``meanfield phase-diagram`` to ``parser``."""
    parser.add_argument("--dimension", default="2",
                        help="d: tokens on S^{d-1}; several separated by commas (2,8,32,128: the four panels of "
                             "Figure 3 in one run and one figure)")
    parser.add_argument("--particles", type=int, default=32, help="tokens n per system")
    parser.add_argument("--systems", type=int, default=2048, help="independent systems per beta")
    parser.add_argument("--betas", default="0.1:9:90", help=f"beta values: {VALUES_HELP}, e.g. 0.1:9:90 or 1,4,9")
    parser.add_argument("--t-final", type=float, default=30.0, help="final time")
    parser.add_argument("--n-times", type=int, default=61, help="number of output times in [0, t-final]")
    parser.add_argument("--delta", type=float, default=1e-3, help="threshold: pairs with <x_i, x_j> >= 1 - delta")
    parser.add_argument("--unnormalized", action="store_true", help="USA instead of SA")
    parser.add_argument("--ginibre", action="store_true",
                        help="random (Q, K, V), entries iid N(0, 1/d), drawn from --seed (Figure 5): --matrices ginibre")
    parser.add_argument("--matrices", choices=tuple(ENSEMBLES), default=None,
                        help="random weights: " + "; ".join(f"{k}: {v}" for k, v in ENSEMBLES.items()))
    parser.add_argument("--draw", choices=DRAWS, default="once",
                        help="draw the random weights once, per system (the same at every beta), or per system and beta")
    parser.add_argument("--mask", choices=("causal",), default=None,
                        help="attention mask: causal = token i attends to the tokens j <= i (a decoder)")
    parser.add_argument("--seed", type=int, default=0, help="base seed of the tokens (and matrices)")
    parser.add_argument("--rtol", type=float, default=RTOL, help="relative tolerance of each system's integrator")
    parser.add_argument("--atol", type=float, default=ATOL, help="absolute tolerance of each system's integrator")
    parser.add_argument("--representation", default="auto", choices=("auto",) + REPRESENTATIONS,
                        help="state of a system (Q = K = V = I): auto = angles for d = 2, points for d < n/2, "
                             "the Gram matrix from d >= n/2")
    parser.add_argument("--batch", type=int, default=None,
                        help="systems per task (default 512, each task running 6 beta; with --ginibre sized by memory)")
    parser.add_argument("--trajectory-betas", type=float, nargs="+", default=[4.0, 9.0],
                        help="beta values of the Figure-4 panel (d = 2)")
    parser.add_argument("--trajectory-times", type=float, nargs="+", default=[2.5, 18.0, 30.0],
                        help="times of the Figure-4 panel (d = 2)")
    add_output_arguments(parser,
                         "NetCDF output (default phase_diagram_d<d>_n<n>_s<systems>_beta<first>-<last>x<count>_t<t>[_usa][_ginibre]"
                         "[_causal].nc); "
                         "PNGs beside it",
                         "hide the progress bar over tasks")


def phase_diagram_command(args: argparse.Namespace) -> int:
    """Run the diagram described by ``args``; write NetCDF and PNGs; print a summary."""
    betas = parse_values(args.betas, "--betas")
    dims = parse_dimensions(args.dimension)
    check_at_least(args, particles=2, n_times=2)
    if not (np.isfinite(args.t_final) and args.t_final > 0):
        raise ValueError(f"--t-final must be finite and > 0, got {args.t_final}")
    if args.ginibre and args.matrices not in (None, "ginibre"):
        raise ValueError(f"--ginibre is --matrices ginibre; got --matrices {args.matrices}")
    matrices = "ginibre" if args.ginibre else args.matrices
    if matrices is not None and args.draw == "once" and len(dims) > 1:
        raise ValueError(f"--{'ginibre' if args.ginibre else 'matrices'} draws (Q, K, V) for one dimension; got "
                         f"--dimension {args.dimension}")
    if matrices is None and args.draw != "once":
        raise ValueError(f"--draw {args.draw} draws random weights; it needs --matrices")
    output, png = result_paths(args, default_output(dims, args.particles, args.systems, betas, args.t_final,
                                                    args.unnormalized, matrices == "ginibre" and args.draw == "once",
                                                    args.mask, None if matrices is None or (
                                                        matrices == "ginibre" and args.draw == "once")
                                                    else f"{matrices}-{args.draw}"))
    trajectories_png = output.with_name(output.stem + "_trajectories.png")
    draw_trajectories = 2 in dims and matrices is None and args.mask is None
    if draw_trajectories:
        check_output_path(trajectories_png, "--output")
        refuse_existing(args, trajectories_png)
    times = np.linspace(0.0, args.t_final, args.n_times)
    ds = mf.phase_diagram(
        dims[0] if len(dims) == 1 else dims, args.particles, betas, times, args.systems, args.delta,
        normalized=not args.unnormalized, matrices=matrices, draw=args.draw, seed=args.seed,
        rtol=args.rtol, atol=args.atol, representation=args.representation, mask=args.mask, batch=args.batch,
        progress=not args.no_progress, **sweep_options(args),
    )
    ds.attrs = described_run(ds.attrs, args.command_line)
    write_netcdf(ds, output)
    mf.plot.phase_diagram(ds).savefig(png, dpi=150)
    written = [output, png]
    if draw_trajectories:
        figure = mf.plot.phase_diagram_trajectories(mf.phase_diagram_trajectories(
            args.trajectory_betas, args.trajectory_times, args.particles, seed=args.seed,
            normalized=not args.unnormalized))
        figure.savefig(trajectories_png, dpi=120)
        written.append(trajectories_png)
    print(f"{ds.attrs['model']}: d = {args.dimension}, n = {args.particles}, {args.systems} systems x {betas.size} "
          f"betas, t in [0, {args.t_final:g}], delta = {args.delta:g}: {ds.attrs['wall_time']:.1f} s "
          f"({ds.attrs['sweep_tasks_run']} tasks run, {ds.attrs['sweep_tasks_skipped']} skipped)")
    panels = [(dims[0], ds)] if len(dims) == 1 else [(value, ds.sel(d=value)) for value in dims]
    for d, panel in panels:
        representation = panel.attrs.get("representation") if "representation" not in panel else \
            str(panel["representation"].values)
        crossing = crossing_time(panel, 0.5)
        print(f"d = {d} ({representation}; {float(panel['nfev_mean'].mean()):.0f} velocity evaluations per system)")
        print(f"{'beta':>8} {'t* (Gamma)':>12} {'t(P=1/2)':>10} {'P(t_final)':>11} {'+-':>7} {'clusters':>9}"
              + (f" {'rank':>6}" if "rank_mean" in panel else ""))
        for k in np.unique(np.linspace(0, betas.size - 1, min(betas.size, 6)).round().astype(int)):
            row = panel.isel(beta=k, time=-1)
            print(f"{float(panel.beta[k]):8.3g} {float(panel.critical_time[k]):12.4g} {float(crossing[k]):10.4g} "
                  f"{float(row.probability):11.4f} {float(row.probability_stderr):7.4f} "
                  f"{float(row.clusters_mean):9.3f}" + (f" {float(row.rank_mean):6.2f}" if "rank_mean" in panel else ""))
    for path in written:
        print(f"wrote {path}")
    return 0

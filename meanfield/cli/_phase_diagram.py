"""``meanfield phase-diagram``: paper 2's Figure 3 (or 5) as NetCDF + PNG, and a Figure-4 panel.

Runs :func:`meanfield.phase_diagram` over the given β values and output times
as a sweep (dask LocalCluster by default), writes the Dataset as NetCDF, the
colour map with the curve Γ_{∞,δ} as PNG beside it, and for d = 2 (identity
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
from ..io._files import check_output_path, check_result_paths, write_atomically
from ..studies._phase_diagram import crossing_time
from ._options import add_output_arguments, check_at_least
from ._sweep_options import VALUES_HELP, parse_values, sweep_options

__all__ = ["add_phase_diagram_arguments", "phase_diagram_command", "default_output"]


def default_output(d: int, n: int, unnormalized: bool, ginibre: bool) -> Path:
    """``phase_diagram_d<d>_n<n>[_usa][_ginibre].nc``."""
    return Path(f"phase_diagram_d{d}_n{n}{'_usa' if unnormalized else ''}{'_ginibre' if ginibre else ''}.nc")


def add_phase_diagram_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``meanfield phase-diagram`` to ``parser``."""
    parser.add_argument("--dimension", type=int, default=2, help="d: tokens on S^{d-1}")
    parser.add_argument("--particles", type=int, default=32, help="tokens n per system")
    parser.add_argument("--systems", type=int, default=2048, help="independent systems per beta")
    parser.add_argument("--betas", default="0.1:9:90", help=f"beta values: {VALUES_HELP}, e.g. 0.1:9:90 or 1,4,9")
    parser.add_argument("--t-final", type=float, default=30.0, help="final time")
    parser.add_argument("--n-times", type=int, default=61, help="number of output times in [0, t-final]")
    parser.add_argument("--delta", type=float, default=1e-3, help="threshold: pairs with <x_i, x_j> >= 1 - delta")
    parser.add_argument("--unnormalized", action="store_true", help="USA instead of SA")
    parser.add_argument("--ginibre", action="store_true",
                        help="SA with random (Q, K, V), entries iid N(0, 1/d), drawn from --seed (Figure 5)")
    parser.add_argument("--seed", type=int, default=0, help="base seed of the tokens (and matrices)")
    parser.add_argument("--rtol", type=float, default=1e-5, help="relative tolerance of the particle integrator")
    parser.add_argument("--atol", type=float, default=1e-7, help="absolute tolerance of the particle integrator")
    parser.add_argument("--batch", type=int, default=None, help="systems per task (default: sized by memory)")
    parser.add_argument("--trajectory-betas", type=float, nargs="+", default=[4.0, 9.0],
                        help="beta values of the Figure-4 panel (d = 2)")
    parser.add_argument("--trajectory-times", type=float, nargs="+", default=[2.5, 18.0, 30.0],
                        help="times of the Figure-4 panel (d = 2)")
    add_output_arguments(parser,
                         "NetCDF output (default phase_diagram_d<d>_n<n>[_usa][_ginibre].nc); PNGs beside it",
                         "hide the progress bar over tasks")


def phase_diagram_command(args: argparse.Namespace) -> int:
    """Run the diagram described by ``args``; write NetCDF and PNGs; print a summary."""


    betas = parse_values(args.betas, "--betas")
    check_at_least(args, dimension=2, particles=2, n_times=2)
    if not (np.isfinite(args.t_final) and args.t_final > 0):
        raise ValueError(f"--t-final must be finite and > 0, got {args.t_final}")
    output = args.output
    if output is None:
        output = default_output(args.dimension, args.particles, args.unnormalized, args.ginibre)
    if output.suffix != ".nc":
        raise ValueError(f"--output must end in .nc, got {str(output)!r}")
    output, png = check_result_paths(output)
    trajectories_png = output.with_name(output.stem + "_trajectories.png")
    draw_trajectories = args.dimension == 2 and not args.ginibre
    if draw_trajectories:
        check_output_path(trajectories_png, "--output")
    times = np.linspace(0.0, args.t_final, args.n_times)
    ds = mf.phase_diagram(
        args.dimension, args.particles, betas, times, args.systems, args.delta,
        normalized=not args.unnormalized, matrices="ginibre" if args.ginibre else None, seed=args.seed,
        rtol=args.rtol, atol=args.atol, batch=args.batch, progress=not args.no_progress, **sweep_options(args),
    )
    ds.attrs = described_run(ds.attrs, args.command_line)
    write_atomically(output, ds.to_netcdf)
    mf.plot.phase_diagram(ds).savefig(png, dpi=150)
    written = [output, png]
    if draw_trajectories:
        figure = mf.plot.phase_diagram_trajectories(mf.phase_diagram_trajectories(
            args.trajectory_betas, args.trajectory_times, args.particles, seed=args.seed,
            normalized=not args.unnormalized))
        figure.savefig(trajectories_png, dpi=120)
        written.append(trajectories_png)
    crossing = crossing_time(ds, 0.5)
    print(f"{ds.attrs['model']}: d = {args.dimension}, n = {args.particles}, {args.systems} systems x {betas.size} betas, "
          f"t in [0, {args.t_final:g}], delta = {args.delta:g}: {ds.attrs['wall_time']:.1f} s "
          f"({ds.attrs['sweep_tasks_run']} tasks run, {ds.attrs['sweep_tasks_skipped']} skipped)")
    print(f"{'beta':>8} {'t* (Gamma)':>12} {'t(P=1/2)':>10} {'P(t_final)':>11} {'+-':>7} {'clusters':>9}")
    for k in np.unique(np.linspace(0, betas.size - 1, min(betas.size, 6)).round().astype(int)):
        row = ds.isel(beta=k, time=-1)
        print(f"{float(ds.beta[k]):8.3g} {float(ds.critical_time[k]):12.4g} {float(crossing[k]):10.4g} "
              f"{float(row.probability):11.4f} {float(row.probability_stderr):7.4f} {float(row.clusters_mean):9.3f}")
    for path in written:
        print(f"wrote {path}")
    return 0

"""``meanfield kuramoto``: one Kuramoto run (r(t)) or a bifurcation diagram r∞(K), as NetCDF + PNG.

Without ``--couplings`` it runs one coupling (``--coupling``) by particles or
the PDE (``--engine particles|pde``, the ``method`` of
:func:`meanfield.studies.kuramoto_run`; the PDE's scheme follows from the
noise: finite volume without, spectral with) and writes r(t) with r∞ and the
theory value. With ``--couplings a:b:k`` it sweeps K (and ``--systems``
systems for particles) through :func:`meanfield.kuramoto_bifurcation` (dask
LocalCluster by default) and writes r∞(K) against the self-consistency
theory. Prints a short table.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import meanfield as mf

from ..io._conventions import described_run
from ..io._files import check_result_paths, write_atomically
from ..studies import frequency_law, kuramoto_run
from ._options import add_output_arguments, check_at_least
from ._sweep_options import VALUES_HELP, parse_values, sweep_options

__all__ = ["add_kuramoto_arguments", "kuramoto_command", "default_output"]


def default_output(args: argparse.Namespace) -> Path:
    """``kuramoto_<law><width>_<engine>[_noise<σ>]_K<K>.nc`` or ``…_bifurcation.nc``."""
    noise = f"_noise{args.noise:g}" if args.noise > 0 else ""
    what = "bifurcation" if args.couplings is not None else f"K{args.coupling:g}"
    size = f"_n{args.particles}" if args.engine == "particles" else f"_grid{args.grid}"
    return Path(f"kuramoto_{args.law}{args.width:g}_{args.engine}{size}{noise}_{what}.nc")


def add_kuramoto_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``meanfield kuramoto`` to ``parser``."""
    parser.add_argument("--coupling", type=float, default=4.0, help="coupling K of a single run")
    parser.add_argument("--couplings", default=None, help=f"sweep K for a bifurcation diagram: {VALUES_HELP}, e.g. 0:4:17 or 1,2,4")
    parser.add_argument("--law", choices=["lorentzian", "gaussian"], default="lorentzian",
                        help="law of the natural frequencies")
    parser.add_argument("--width", type=float, default=0.6,
                        help="Lorentzian half-width gamma or Gaussian standard deviation")
    parser.add_argument("--noise", type=float, default=0.0, help="sigma in dtheta = ... + sqrt(2 sigma) dW")
    parser.add_argument("--engine", choices=["particles", "pde"], default="particles",
                        help="particles (exact-drift integrator; Euler-Maruyama with noise) or the PDE "
                        "(finite volume without noise, spectral with noise)")
    parser.add_argument("--particles", type=int, default=2000, help="oscillators n (--engine particles)")
    parser.add_argument("--t-final", type=float, default=60.0, help="final time")
    parser.add_argument("--average-window", type=float, default=20.0, help="r_inf averages r over the last window")
    parser.add_argument("--seed", type=int, default=0, help="seed of the initial phases (single particle run)")
    parser.add_argument("--systems", type=int, default=4,
                        help="independent systems (seeds 0, 1, ...) per coupling (particle bifurcation diagram)")
    parser.add_argument("--grid", type=int, default=128, help="PDE nodes in theta")
    parser.add_argument("--frequency-nodes", type=int, default=None,
                        help="PDE quadrature nodes in omega (default: enough to avoid rephasing up to t-final)")
    parser.add_argument("--dt", type=float, default=0.01, help="Euler-Maruyama step (particles with noise)")
    parser.add_argument("--rtol", type=float, default=1e-4, help="tolerance of the adaptive integrators")
    add_output_arguments(parser,
                         "NetCDF output (default: named after the run, e.g. "
                         "kuramoto_lorentzian0.6_particles_n2000_K4.nc); PNG beside it",
                         "hide the progress bar over tasks")


def kuramoto_command(args: argparse.Namespace) -> int:
    """Run what ``args`` describe; write NetCDF and PNG; print a summary."""


    couplings = parse_values(args.couplings, "--couplings") if args.couplings is not None else None
    law = frequency_law(args.law, args.width)
    check_at_least(args, particles=2, systems=1, grid=8)
    if not args.dt > 0:
        raise ValueError(f"--dt must be > 0, got {args.dt}")
    output = args.output if args.output is not None else default_output(args)
    if output.suffix != ".nc":
        raise ValueError(f"--output must end in .nc, got {str(output)!r}")
    output, png = check_result_paths(output)
    common = {"noise": args.noise, "engine": args.engine, "n": args.particles, "t_final": args.t_final,
              "average_window": args.average_window, "frequency_nodes": args.frequency_nodes, "grid": args.grid,
              "dt": args.dt, "rtol": args.rtol}
    if couplings is None:
        ds = kuramoto_run(args.coupling, args.seed if args.engine == "particles" else None, law=args.law,
                          width=args.width, **common)
        ds.attrs["coupling"] = float(args.coupling)
        theory = float(mf.kuramoto_theory(args.coupling, law, args.noise))
        ds.attrs = described_run(ds.attrs, args.command_line)
        write_atomically(output, ds.to_netcdf)
        mf.plot.order_parameter_curve(ds, theory=theory).savefig(png, dpi=120, bbox_inches="tight")
        print(f"Kuramoto K = {args.coupling:g}, {args.law} ({args.width:g}), noise {args.noise:g}, {args.engine}: "
              f"r_inf = {float(ds['r_inf']):.4f} +- {float(ds['r_spread']):.4f} (window spread), "
              f"theory {theory:.4f}, K_c = {mf.kuramoto_critical_coupling(law, args.noise):.4g}")
    else:
        ds = mf.kuramoto_bifurcation(couplings, args.law, width=args.width, seeds=args.systems,
                                     progress=not args.no_progress, **common, **sweep_options(args))
        ds.attrs = described_run(ds.attrs, args.command_line)
        write_atomically(output, ds.to_netcdf)
        mf.plot.bifurcation(ds).savefig(png, dpi=120, bbox_inches="tight")
        print(f"Kuramoto bifurcation, {args.law} ({args.width:g}), noise {args.noise:g}, {args.engine}: "
              f"K_c = {ds.attrs['critical_coupling']:.4g}, {ds.attrs['wall_time']:.1f} s "
              f"({ds.attrs['tasks_run']} tasks run, {ds.attrs['tasks_skipped']} skipped)")
        print(f"{'K':>8} {'r_inf':>8} {'+-':>7} {'theory':>8}")
        for k in range(couplings.size):
            print(f"{couplings[k]:8.4g} {float(ds.r_mean[k]):8.4f} {float(ds.r_error[k]):7.4f} "
                  f"{float(ds.r_theory[k]):8.4f}")
    print(f"wrote {output}")
    print(f"wrote {png}")
    return 0

"""``meanfield configurations``: random n-point starts on S^{d-1} driven down the repulsive energy
(:func:`meanfield.optimal_configurations`), NetCDF + PNG and a table of what they reached."""

from __future__ import annotations

import argparse
from pathlib import Path

import meanfield as mf

from ..io._conventions import described_run
from ..io._files import write_netcdf
from ._options import add_output_arguments, check_at_least, result_paths

__all__ = ["add_configurations_arguments", "configurations_command", "default_output"]


def default_output(args: argparse.Namespace) -> Path:
    """``configurations_n<n>_d<d>_beta<β>_<method>_starts<k>_seed<s>.nc``."""
    return Path(f"configurations_n{args.particles}_d{args.dimension}_beta{args.beta:g}_{args.method}"
                f"_starts{args.starts}_seed{args.seed}.nc")


def add_configurations_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``meanfield configurations`` to ``parser``."""
    parser.add_argument("--particles", type=int, default=12, help="points n")
    parser.add_argument("--dimension", type=int, default=3, help="ambient dimension d (points on S^{d-1})")
    parser.add_argument("--beta", type=float, default=1.0, help="inverse temperature β > 0 of H_β")
    parser.add_argument("--starts", type=int, default=20, help="random starts")
    parser.add_argument("--seed", type=int, default=0, help="start k draws its points with seed + k")
    parser.add_argument("--method", choices=["minimize", "flow"], default="minimize",
                        help="L-BFGS on H_β, or the repulsive gradient flow to --t-final")
    parser.add_argument("--t-final", type=float, default=200.0, help="length of the flow (--method flow)")
    add_output_arguments(parser, "NetCDF output (default: named after the run, "
                                 "configurations_n<n>_d<d>_beta<β>_<method>_starts<k>_seed<s>.nc); PNG beside it",
                         "accepted for symmetry with the other commands (the starts draw no progress bar)", sweep=False)


def configurations_command(args: argparse.Namespace) -> int:
    """Run the starts; write NetCDF and PNG; print the fractions."""
    check_at_least(args, particles=2, dimension=2, starts=1)
    output, png = result_paths(args, default_output(args))
    ds = mf.optimal_configurations(args.particles, args.dimension, args.beta, starts=args.starts, seed=args.seed,
                                   method=args.method, t_final=args.t_final)
    ds.attrs = described_run(ds.attrs, args.command_line)
    write_netcdf(ds, output)
    mf.plot.optimal_configurations(ds).savefig(png, dpi=110, bbox_inches="tight")
    print(f"{args.starts} starts of {args.particles} points on S^{args.dimension - 1}, beta = {args.beta:g}, "
          f"{args.method}:")
    for name, fraction, energy in zip(ds["configuration_name"].values, ds["fraction"].values,
                                      ds["exact_energy"].values):
        exact = f"exact H = {energy:.15g}" if name != "other" else ""
        print(f"  {str(name):<15} {fraction:6.0%}   {exact}")
    strengths = sorted({int(s) for s in ds["strength"].values})
    print(f"  max |H - exact| = {float(ds['energy_gap'].max()):.2e}, design strengths reached {strengths}")
    print(f"wrote {output}")
    print(f"wrote {png}")
    return 0

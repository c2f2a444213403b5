"""``meanfield compare``: PDE against particles for several n and seeds; NetCDF + PNG.

Solves the mean-field equation on S¹ from a von Mises start, runs the particle
engine from iid (or quantile) samples of the same start for every n and seed,
measures W_p(μ_n(t), μ(t)) at the output times, fits the exponent in n, and
writes the study as NetCDF and the log-log plot as PNG. The system (n, seed),
seed = 0 … --systems - 1, draws its start and noise from SeedSequence((seed, n))
(attrs ``seeds``, ``seed_rule``), so any one of them can be rerun alone.
The systems run as tasks of a sweep (``--scheduler``, ``--workers``,
``--store``, ``--resume``); the result does not depend on where they ran.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import meanfield as mf

from ..studies import meanfield_study
from .._validate import as_times
from ..io._conventions import described_run
from ..io._files import write_netcdf
from ..plot import meanfield_limit
from ._options import (add_model_arguments, add_output_arguments, check_at_least, describe_model, model_from_args,
                       model_label, result_paths)
from ._sweep_options import sweep_options

__all__ = ["add_compare_arguments", "compare_command", "default_output"]


def add_compare_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``meanfield compare`` to ``parser``."""
    add_model_arguments(parser, beta=2.0, noise_help="diffusion σ ≥ 0 (particles: Euler–Maruyama with --dt)")
    parser.add_argument("--kappa", type=float, default=1.0, help="concentration of the von Mises initial density")
    parser.add_argument("--grid", type=int, default=512, help="grid nodes of the PDE on the circle")
    parser.add_argument("--method", default="spectral", help="PDE scheme (spectral or finite_volume)")
    parser.add_argument("--particles", type=int, nargs="+", default=[64, 256, 1024, 4096],
                        help="particle numbers n")
    parser.add_argument("--systems", type=int, default=8, help="independent systems (seeds 0, 1, ...) per n")
    parser.add_argument("--times", type=float, nargs="+", default=[0.0, 0.5, 1.0], help="output times (first = initial; s = e^β t with --rescaled-time)")
    parser.add_argument("--p", type=float, default=1.0, help="order of W_p, p ≥ 1")
    parser.add_argument("--sampler", choices=["iid", "quantile"], default="iid", help="initial particles")
    parser.add_argument("--dt", type=float, default=5e-3, help="time step of the particle SDE when --noise > 0")
    add_output_arguments(parser,
                         "NetCDF output; PNG beside it (default: named after the run, "
                         "meanfield_compare_<SA|USA>[-repulsive]_beta<β>|Interaction-<hash>[_noise<σ>]_kappa<κ>_<sampler>_W<p>"
                         "_n<n…>_s<systems>.nc)",
                         "hide the progress bar over systems")


def default_output(args: argparse.Namespace) -> Path:
    """``meanfield_compare_<model>[_noise<σ>]_kappa<κ>_<sampler>_W<p>_n<n1>-<n2>…_s<systems>.nc``, the model as
    :func:`model_label` writes it:
    every option that changes the study but the grid, the scheme and the times."""
    model = model_label(model_from_args(args))
    noise = f"_noise{args.noise:g}" if args.noise > 0 else ""
    sizes = "-".join(str(n) for n in args.particles)
    return Path(f"meanfield_compare_{model}{noise}_kappa{args.kappa:g}_{args.sampler}_W{args.p:g}"
                f"_n{sizes}_s{args.systems}.nc")


def compare_command(args: argparse.Namespace) -> int:
    """Run the study described by ``args``; print the fitted exponents and the files written."""


    check_at_least(args, systems=1, grid=4, particles=1)
    if not args.dt > 0:
        raise ValueError(f"--dt must be > 0, got {args.dt}")
    as_times(args.times, "--times")
    output, png = result_paths(args, default_output(args))
    model = model_from_args(args)
    rho0 = mf.von_mises(mf.Circle(args.grid), 0.0, args.kappa)
    simulate_options = {"dt": args.dt} if args.noise > 0 else {}
    study = meanfield_study(
        model,
        rho0,
        np.asarray(args.times, dtype=float),
        args.particles,
        seeds=range(args.systems),
        p=args.p,
        sampler=args.sampler,
        method=args.method,
        simulate_options=simulate_options,
        progress=not args.no_progress,
        **sweep_options(args),
    )
    study.attrs["initial_condition"] = f"von_mises(loc=0, kappa={args.kappa}) on Circle({args.grid})"
    study.attrs = described_run(study.attrs, args.command_line)
    write_netcdf(study, output)
    meanfield_limit(study).savefig(png, dpi=120)
    print(f"{describe_model(model)}, {args.sampler} start, n = {list(args.particles)}, "
          f"{args.systems} systems")
    print(f"{'t':>8} {'exponent':>10} {'stderr':>8} {'mean W_p at max n':>18}")
    for k, tk in enumerate(study.time.values):
        print(f"{tk:8.3g} {float(study.exponent[k]):10.4f} {float(study.exponent_stderr[k]):8.4f} "
              f"{float(study.wasserstein[-1, :, k].mean()):18.4g}")
    print(f"{study.attrs['tasks_run']} systems run, {study.attrs['tasks_skipped']} taken from the store; "
          f"store: {study.attrs['store'] or 'none'}, scheduler: {study.attrs['scheduler']}")
    print(f"wrote {output}")
    print(f"wrote {png}")
    return 0

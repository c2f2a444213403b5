"""``meanfield solve``: one run of the mean-field equation, written as NetCDF (also its checkpoint) + PNG.

It runs a default scenario (SA, β = 4, noise σ = 0.01, a perturbed uniform start
on S¹, t ∈ [0, 20], ``method="auto"`` as in :func:`meanfield.solve`) unless told
otherwise, shows a progress bar, writes a NetCDF file named after the run
(:func:`default_solve_output`, e.g. ``meanfield_solve_SA_beta4_noise0.01_circle_spectral.nc``)
and a PNG (density over (t, θ), or orthographic maps on S², and the energy curve),
and prints where they are. The default has noise because without it the clusters
concentrate into Diracs exponentially fast, which no fixed grid resolves to t = 20
(N = 512, 1024, 2048 cells lose resolution at t = 12.5, 13.3, 14); with σ = 0.01
each cluster keeps a width ~ √σ and N = 512 resolves it to round-off.

Options that belong to another domain (``--grid`` with ``--domain sphere``,
``--lmax`` off the sphere, ``--dimension`` and ``--kappa`` off the zonal sphere,
``--amplitude`` and ``--seed`` on it) are refused, not ignored.

The NetCDF file is also the run's checkpoint: besides the result it keeps the
scheme's own state at the last output (the ``scheme_*`` variables of
:mod:`meanfield.io._checkpoint`, with the time reached and the next step size), so that
``--resume`` continues an interrupted run, or extends a finished one to a
later ``--t-final``, exactly where it stopped: an interrupted run resumed
gives the uninterrupted result bit for bit. A resumed file keeps the
``history`` lines of the file it continues (:func:`meanfield.solve` keeps
them and appends its call) and appends the resumed command line.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

import numpy as np

import meanfield as mf

from ..io._checkpoint import (
    CheckpointError,
    load_checkpoint,
    snapshot_of,
    snapshot_variables,
)
from ..io._conventions import described_run
from ..io._files import write_netcdf
from ..measures._perturbed_uniform import perturbed_uniform
from ..plot import density_map, sphere_maps
from ..pde import METHOD_AUTO, choose_method
from ._options import (add_model_arguments, add_output_arguments, check_at_least, describe_model, model_from_args,
                       model_label, result_paths)

__all__ = ["add_solve_arguments", "default_solve_output", "solve_command"]

logger = logging.getLogger(__name__)


def add_solve_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``meanfield solve`` to ``parser``."""
    add_model_arguments(parser, beta=4.0, noise=DEFAULT_NOISE,
                        noise_help="diffusion σ ≥ 0 (σ = 0: clusters become Diracs that no grid resolves for long)")
    parser.add_argument(
        "--domain", choices=["circle", "sphere", "zonal"], default="circle",
        help="S¹, S², or axisymmetric measures on S^{d-1} (zonal; start: von Mises–Fisher about e_d)",
    )
    for name, (kind, default, domains, help_text) in DOMAIN_OPTIONS.items():
        parser.add_argument(f"--{name}", type=kind, default=None,
                            help=f"{help_text} (--domain {' or '.join(domains)}; default {default})")
    parser.add_argument(
        "--method", choices=[METHOD_AUTO, "spectral", "finite_volume"], default=METHOD_AUTO,
        help="scheme, as method= of meanfield.solve: auto (finite volume where the density concentrates into "
             "Diracs, i.e. without noise; spectral with noise), finite_volume (robust through cluster collapse) or "
             "spectral (exponential accuracy while resolved)",
    )
    parser.add_argument("--t-final", type=float, default=20.0, help="final time (s = e^β t with --rescaled-time)")
    parser.add_argument("--n-times", type=int, default=201, help="number of output times in [0, t-final]")
    parser.add_argument("--checkpoint-interval", type=float, default=30.0, help="seconds between checkpoint writes")
    parser.add_argument("--resume", action="store_true", help="continue from the output file if it holds a partial run")
    add_output_arguments(parser,
                         "NetCDF output and checkpoint (with the scheme_* state variables); PNG beside it "
                         "(default: named after the run, meanfield_solve_<SA|USA>[-repulsive]_beta<β>|Interaction-<hash>"
                         "[_noise<σ>]_<domain>"
                         "[_d<d>]_<method>.nc)",
                         "hide the progress bar", sweep=False)


DEFAULT_NOISE = 0.01
"""σ of the default run: its clusters keep a width ~ √σ that N = 512 resolves to t = 20 and beyond."""

DOMAIN_OPTIONS: dict[str, tuple[type, float, tuple[str, ...], str]] = {
    "grid": (int, 512, ("circle", "zonal"), "grid nodes on the circle or in the polar angle"),
    "lmax": (int, 63, ("sphere",), "band limit of the S² grid"),
    "dimension": (int, 10, ("zonal",), "d of S^{d-1}"),
    "kappa": (float, 1.0, ("zonal",), "von Mises–Fisher concentration of the start"),
    "amplitude": (float, 0.01, ("circle", "sphere"), "relative size of the initial perturbation"),
    "seed": (int, 0, ("circle", "sphere"), "seed of the initial perturbation"),
}
"""The options of one domain: type, default, the domains they apply to, help."""


def check_domain_options(args: argparse.Namespace) -> None:
    """Refuse an option of :data:`DOMAIN_OPTIONS` given for a domain it does not apply to; fill in the defaults
    (once: ``args.domain_options_checked`` records that it was done).

    Raises
    ------
    ValueError
        ``--grid does not apply to --domain sphere (it applies to --domain circle or zonal)``.
    """
    if getattr(args, "domain_options_checked", False):
        return
    for name, (_, default, domains, _) in DOMAIN_OPTIONS.items():
        if getattr(args, name) is None:
            setattr(args, name, default)
        elif args.domain not in domains:
            raise ValueError(f"--{name} does not apply to --domain {args.domain} (it applies to --domain "
                             f"{' or '.join(domains)})")
    args.domain_options_checked = True


def domain_and_start(args: argparse.Namespace) -> tuple[Any, Any, str]:
    """The domain of ``args``, the initial density on it and how that density was made (for the file's attrs)."""
    if args.domain == "zonal":
        nodes = "cells" if args.method == "finite_volume" else "gauss"
        domain = mf.ZonalSphere(args.dimension, args.grid, nodes=nodes)
        return domain, mf.von_mises(domain, kappa=args.kappa), f"von_mises_fisher(kappa={args.kappa})"
    domain = mf.Circle(args.grid) if args.domain == "circle" else mf.Sphere(args.lmax)
    return (domain, perturbed_uniform(domain, amplitude=args.amplitude, seed=args.seed),
            f"perturbed_uniform(amplitude={args.amplitude}, seed={args.seed})")


def scheme_name(args: argparse.Namespace) -> str:
    """The scheme ``--method`` runs on the domain of ``args``: the name itself, or the one "auto" chooses there
    (:func:`meanfield.pde.choose_method`)."""
    if args.method != METHOD_AUTO:
        return args.method
    model = model_from_args(args)
    domain = {"circle": lambda: mf.Circle(args.grid), "sphere": lambda: mf.Sphere(args.lmax),
              "zonal": lambda: mf.ZonalSphere(args.dimension, args.grid)}[args.domain]()
    chosen, _ = choose_method(model, domain, METHOD_AUTO, model.grid_velocity(domain))
    return next(name for name, cls in domain.schemes.items() if cls is chosen)


def default_solve_output(args: argparse.Namespace) -> Path:
    """``meanfield_solve_<model>[_noise<σ>]_<domain>[_d<d>]_<scheme>.nc``, the model as :func:`model_label` writes it
    (``SA_beta4``, ``Interaction-<hash>``): what was run (the scheme
    that "auto" chooses, :func:`scheme_name`), without the times (so that ``--resume`` with a later ``--t-final``
    extends the same file)."""
    check_domain_options(args)
    model = model_label(model_from_args(args))
    noise = f"_noise{args.noise:g}" if args.noise > 0 else ""
    domain = f"zonal_d{args.dimension}" if args.domain == "zonal" else args.domain
    return Path(f"meanfield_solve_{model}{noise}_{domain}_{scheme_name(args)}.nc")


def solve_command(args: argparse.Namespace) -> int:
    """Run what ``args`` describe; write NetCDF and PNG; print a summary. 1 when the run stopped early."""


    if not (np.isfinite(args.t_final) and args.t_final > 0):
        raise ValueError(f"--t-final must be a finite time > 0, got {args.t_final}")
    check_domain_options(args)
    if args.domain == "zonal" and args.dimension < 3:
        raise ValueError(f"--dimension must be >= 3 for --domain zonal (S^{{d-1}} with d >= 3), got {args.dimension}")
    if args.domain == "sphere":
        check_at_least(args, lmax=2)
    else:
        minimum = {"circle": 16}.get(args.domain, 4 if args.method == "finite_volume" else 2)
        check_at_least(args, grid=minimum)
    model = model_from_args(args)
    domain, rho0, start = domain_and_start(args)
    check_at_least(args, n_times=2)
    times = np.linspace(0.0, args.t_final, args.n_times)
    output, png = result_paths(args, default_solve_output(args))
    ds = mf.solve(
        model,
        rho0,
        times,
        method=args.method,
        progress=not args.no_progress,
        checkpoint=output,
        checkpoint_interval=args.checkpoint_interval,
        resume=args.resume,
    )
    ds = _with_scheme_state(ds, output)
    ds.attrs["initial_condition"] = start
    ds.attrs = described_run(ds.attrs, args.command_line)
    write_netcdf(ds, output)  # the result and the scheme state, checksummed: the checkpoint of a later --resume
    figure = sphere_maps(ds) if args.domain == "sphere" else density_map(ds)
    figure.savefig(png, dpi=120)
    status = "completed" if ds.attrs["success"] else f"stopped early: {ds.attrs['message']}"
    print(f"{describe_model(model)} on {domain!r} with {ds.attrs['method']}: {status}")
    print(f"  t = {float(ds.time[-1]):g}, energy = {float(ds.energy[-1]):.10g}, mass - 1 = {float(ds.mass[-1]) - 1:.2e}, "
          f"steps = {ds.attrs['n_steps']}")
    print(f"wrote {output}")
    print(f"wrote {png}")
    return 0 if ds.attrs["success"] else 1


def _with_scheme_state(ds: Any, output: Path) -> Any:
    """``ds`` with the scheme state that ``solve`` saved with it in its last write at ``output``
    (``scheme_*`` variables); ``ds`` alone, with a warning, when that save failed."""
    try:
        saved = load_checkpoint(output)
    except CheckpointError:
        saved = None
    state = {} if saved is None else snapshot_of(saved)
    if (saved is None or not np.array_equal(saved.time.values, ds.time.values)
            or saved.attrs.get("n_steps") != ds.attrs["n_steps"] or "t" not in state):
        logger.warning("%s is written without the scheme state (the last checkpoint write failed): --resume "
                       "would restart from its node values, not exactly", output)
        return ds
    return ds.assign(snapshot_variables(state))

"""Command line: ``meanfield solve`` (the main job) and ``meanfield compare``.

``meanfield solve`` runs a default scenario (SA, β = 4, a perturbed uniform
start on S¹, t ∈ [0, 20]) unless told otherwise, shows a progress bar, writes
a NetCDF file named after the run (:func:`default_solve_output`, e.g.
``meanfield_solve_SA_beta4_circle_finite_volume.nc``) and a PNG (density over
(t, θ), or orthographic maps on S², and the energy curve), and prints where
they are. Every command records its command line in the file's ``history``.

The NetCDF file is also the run's checkpoint: besides the result it keeps the
scheme's own state at the last output (the ``scheme_*`` variables and the
``checkpoint_dt_next`` attribute of :mod:`meanfield.io._checkpoint`), so that
``--resume`` continues an interrupted run, or extends a finished one to a
later ``--t-final``, exactly where it stopped: an interrupted run resumed
gives the uninterrupted result bit for bit.
"""

from __future__ import annotations

import argparse
import logging
import shlex
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ._aliases import DeprecatedOptionWarning, add_deprecated_alias
from ._compare import add_compare_arguments, compare_command
from ..io._conventions import described_run
from ..io._checkpoint import CheckpointError, load_checkpoint, snapshot_of, snapshot_variables
from ..io._files import check_result_paths, write_netcdf
from ..studies import SweepError
from ._phase_diagram import add_phase_diagram_arguments, phase_diagram_command
from ._kuramoto import add_kuramoto_arguments, kuramoto_command
from ._plot import add_plot_parser, plot_command

__all__ = ["main", "build_parser", "default_solve_output"]

logger = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``meanfield`` command."""
    parser = argparse.ArgumentParser(prog="meanfield", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    solve = sub.add_parser(
        "solve",
        help="solve the mean-field equation and write NetCDF + PNG",
        description="Solve ∂_t ρ + div(ρ X[ρ]) = σΔρ for self-attention (SA/USA) from a perturbed uniform start.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    solve.add_argument("--beta", type=float, default=4.0, help="inverse temperature β ≥ 0")
    solve.add_argument("--noise", type=float, default=0.0, help="diffusion σ ≥ 0")
    solve.add_argument("--unnormalized", action="store_true", help="USA instead of SA (no softmax normalisation)")
    solve.add_argument(
        "--domain", choices=["circle", "sphere", "zonal"], default="circle",
        help="S¹, S², or axisymmetric measures on S^{d-1} (zonal; start: von Mises–Fisher about e_d)",
    )
    solve.add_argument("--grid", type=int, default=512, help="grid nodes on the circle or in the polar angle (zonal)")
    solve.add_argument("--dimension", type=int, default=10, help="d of S^{d-1} for --domain zonal")
    solve.add_argument("--kappa", type=float, default=1.0, help="von Mises–Fisher concentration of the zonal start")
    solve.add_argument("--lmax", type=int, default=63, help="band limit of the S² grid (--domain sphere)")
    solve.add_argument(
        "--method",
        default="finite_volume",
        help="scheme: finite_volume (robust through cluster collapse) or spectral (exponential accuracy while resolved)",
    )
    solve.add_argument("--t-final", type=float, default=20.0, help="final time")
    solve.add_argument("--n-times", type=int, default=201, help="number of output times in [0, t-final]")
    solve.add_argument("--amplitude", type=float, default=0.01, help="relative size of the initial perturbation")
    solve.add_argument("--seed", type=int, default=0, help="seed of the initial perturbation")
    solve.add_argument("--output", type=Path, default=None,
                       help="NetCDF output and checkpoint (with the scheme_* state variables); PNG beside it "
                       "(default: named after the run, meanfield_solve_<SA|USA>_beta<β>[_noise<σ>]_<domain>"
                       "[_d<d>]_<method>.nc)")
    solve.add_argument("--checkpoint-interval", type=float, default=30.0, help="seconds between checkpoint writes")
    solve.add_argument("--resume", action="store_true", help="continue from the output file if it holds a partial run")
    solve.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_deprecated_alias(solve, "--n", "--grid", "solve")
    solve.set_defaults(command_line=None)  # main() sets it, for the file's history
    compare = sub.add_parser(
        "compare",
        help="PDE against particles: W_p(μ_n(t), μ(t)) against n, with the fitted exponent",
        description="Solve the PDE and simulate particles from the same initial measure for several n and seeds; "
        "write W_p against n with its fitted exponent (NetCDF + PNG).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add_compare_arguments(compare)
    phase = sub.add_parser(
        "phase-diagram",
        help="paper 2's phase diagram: P(<x_1(t), x_2(t)> >= 1 - delta) over (beta, t), NetCDF + PNG",
        description="Simulate iid uniform tokens on S^{d-1} for every beta; write P(<x_1(t), x_2(t)> >= 1 - delta) "
        "over (beta, t) with the curve of Theorem 6.8 (NetCDF + PNG) and, for d = 2, trajectories on the circle.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add_phase_diagram_arguments(phase)
    kuramoto = sub.add_parser(
        "kuramoto",
        help="Kuramoto oscillators: one run r(t), or the bifurcation diagram r_inf(K) with --couplings (NetCDF + PNG)",
        description="Kuramoto model with Lorentzian or Gaussian natural frequencies (and noise), by particles or "
        "the PDE: r(t) of one coupling, or r_inf(K) over --couplings against the self-consistency theory.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add_kuramoto_arguments(kuramoto)
    add_plot_parser(sub)
    return parser


def default_solve_output(args: argparse.Namespace) -> Path:
    """``meanfield_solve_<SA|USA>_beta<β>[_noise<σ>]_<domain>[_d<d>]_<method>.nc``: what was run, without the
    times (so that ``--resume`` with a later ``--t-final`` extends the same file)."""
    model = "USA" if args.unnormalized else "SA"
    noise = f"_noise{args.noise:g}" if args.noise > 0 else ""
    domain = f"zonal_d{args.dimension}" if args.domain == "zonal" else args.domain
    return Path(f"meanfield_solve_{model}_beta{args.beta:g}{noise}_{domain}_{args.method}.nc")


def _solve_command(args: argparse.Namespace) -> int:
    import meanfield as mf

    from ..measures._perturbed_uniform import perturbed_uniform
    from ..plot import density_map, sphere_maps

    if not (np.isfinite(args.t_final) and args.t_final > 0):
        raise ValueError(f"--t-final must be a finite time > 0, got {args.t_final}")
    if args.domain == "zonal" and args.dimension < 3:
        raise ValueError(f"--dimension must be >= 3 for --domain zonal (S^{{d-1}} with d >= 3), got {args.dimension}")
    model = mf.SelfAttention(args.beta, normalized=not args.unnormalized, noise=args.noise)
    if args.domain == "zonal":
        nodes = "cells" if args.method == "finite_volume" else "gauss"
        domain = mf.ZonalSphere(args.dimension, args.grid, nodes=nodes)
        rho0 = mf.von_mises(domain, kappa=args.kappa)
        start = f"von_mises_fisher(kappa={args.kappa})"
    else:
        domain = mf.Circle(args.grid) if args.domain == "circle" else mf.Sphere(args.lmax)
        rho0 = perturbed_uniform(domain, amplitude=args.amplitude, seed=args.seed)
        start = f"perturbed_uniform(amplitude={args.amplitude}, seed={args.seed})"
    if args.n_times < 2:
        raise ValueError(f"--n-times must be at least 2, got {args.n_times}")
    times = np.linspace(0.0, args.t_final, args.n_times)
    output, png = check_result_paths(args.output if args.output is not None else default_solve_output(args))
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
    print(f"{model.name} β={model.beta} σ={model.noise} on {domain!r} with {args.method}: {status}")
    print(f"  t = {float(ds.time[-1]):g}, E_β = {float(ds.energy[-1]):.10g}, mass - 1 = {float(ds.mass[-1]) - 1:.2e}, "
          f"steps = {ds.attrs['n_steps']}")
    print(f"wrote {output}")
    print(f"wrote {png}")
    return 0 if ds.attrs["success"] else 1


def _with_scheme_state(ds: Any, output: Path) -> Any:
    """``ds`` with the scheme state that ``solve`` saved with it in its last checkpoint at ``output``
    (``scheme_*`` variables, ``checkpoint_dt_next``); ``ds`` alone, with a warning, when that save failed."""
    try:
        saved = load_checkpoint(output)
    except CheckpointError:
        saved = None
    if saved is None or not np.array_equal(saved.time.values, ds.time.values) \
            or saved.attrs.get("n_steps") != ds.attrs["n_steps"] or "checkpoint_dt_next" not in saved.attrs:
        logger.warning("%s is written without the scheme state (the last checkpoint write failed): --resume "
                       "would restart from its node values, not exactly", output)
        return ds
    state = snapshot_variables(snapshot_of(saved))
    return ds.assign(state).assign_attrs(checkpoint_dt_next=float(saved.attrs["checkpoint_dt_next"]))


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``meanfield`` console command."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    logging.getLogger("distributed").setLevel(logging.WARNING)  # a local cluster's start and stop are not news
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DeprecatedOptionWarning)
        args = parser.parse_args(argv)
    for warning in caught:  # told as a command's warning, not as a line of argparse
        logger.warning("%s", warning.message)
    args.command_line = " ".join(["meanfield", *map(shlex.quote, argv)])
    try:
        if args.command == "solve":
            return _solve_command(args)
        if args.command == "compare":
            return compare_command(args)
        if args.command == "phase-diagram":
            return phase_diagram_command(args)
        if args.command == "kuramoto":
            return kuramoto_command(args)
        if args.command == "plot":
            return plot_command(args)
    except (ValueError, TypeError, ConnectionError, SweepError) as err:
        parser.exit(2, f"meanfield {args.command}: error: {err}\n")
    parser.error(f"unknown command {args.command!r}")
    return 2


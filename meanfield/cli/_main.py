"""Command line: ``meanfield solve`` (the main job) and ``meanfield compare``.

Also ``meanfield phase-diagram``, ``meanfield kuramoto`` and ``meanfield plot``; each subcommand's options
and its work are in its own module (:mod:`meanfield.cli._solve`, ``_compare``, ``_phase_diagram``,
``_kuramoto``, ``_plot``), listed once in :data:`COMMANDS`. Every command records its command line in the
file's ``history``.
"""

from __future__ import annotations

import argparse
import logging
import shlex
import sys
from collections.abc import Callable
from typing import NamedTuple

from ..studies import SweepError
from ._compare import add_compare_arguments, compare_command
from ._configurations import add_configurations_arguments, configurations_command
from ._kuramoto import add_kuramoto_arguments, kuramoto_command
from ._phase_diagram import add_phase_diagram_arguments, phase_diagram_command
from ._plot import add_plot_parser, plot_command
from ._solve import add_solve_arguments, default_solve_output, solve_command

__all__ = ["main", "build_parser", "default_solve_output"]

logger = logging.getLogger(__name__)


class Command(NamedTuple):
    """A subcommand that computes: its one-line help, its description, the function adding its options and
    the one running it."""

    help: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


COMMANDS: dict[str, Command] = {
    "solve": Command(
        "solve the mean-field equation and write NetCDF + PNG",
        "Solve ∂_t ρ + div(ρ X[ρ]) = σΔρ for self-attention (SA/USA) from a perturbed uniform start.",
        add_solve_arguments, solve_command,
    ),
    "compare": Command(
        "PDE against particles: W_p(μ_n(t), μ(t)) against n, with the fitted exponent",
        "Solve the PDE and simulate particles from the same initial measure for several n and seeds; "
        "write W_p against n with its fitted exponent (NetCDF + PNG).",
        add_compare_arguments, compare_command,
    ),
    "phase-diagram": Command(
        "paper 2's phase diagram: P(<x_1(t), x_2(t)> >= 1 - delta) over (beta, t), NetCDF + PNG",
        "Simulate iid uniform tokens on S^{d-1} for every beta; write P(<x_1(t), x_2(t)> >= 1 - delta) "
        "over (beta, t) with the curve of Theorem 6.8 (NetCDF + PNG) and, for d = 2, trajectories on the circle.",
        add_phase_diagram_arguments, phase_diagram_command,
    ),
    "kuramoto": Command(
        "Kuramoto oscillators: one run r(t), or the bifurcation diagram r_inf(K) with --couplings (NetCDF + PNG)",
        "Kuramoto(-Sakaguchi) model with Lorentzian, Gaussian or bimodal Lorentzian natural frequencies, a "
        "phase lag and noise, by particles, the PDE or the Ott-Antonsen amplitudes: r(t) of one coupling, or "
        "r_inf(K) over --couplings against the self-consistency theory or the branches of the reduced equations.",
        add_kuramoto_arguments, kuramoto_command,
    ),
    "configurations": Command(
        "repulsive energy minimisers from random starts: what n points on S^{d-1} reach (NetCDF + PNG)",
        "Drive random n-point configurations on S^{d-1} down H_beta = (1/(2 beta n^2)) sum exp(beta <x_i, x_j>) "
        "by L-BFGS or the repulsive gradient flow and identify the sharp configurations reached (paper 2, "
        "Theorem 9.2).",
        add_configurations_arguments, configurations_command,
    ),
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``meanfield`` command."""
    parser = argparse.ArgumentParser(prog="meanfield", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, command in COMMANDS.items():
        command.add_arguments(sub.add_parser(name, help=command.help, description=command.description,
                                             formatter_class=argparse.ArgumentDefaultsHelpFormatter))
    add_plot_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``meanfield`` console command."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    logging.getLogger("distributed").setLevel(logging.WARNING)  # a local cluster's start and stop are not news
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    args.command_line = " ".join(["meanfield", *map(shlex.quote, argv)])
    run = plot_command if args.command == "plot" else COMMANDS[args.command].run
    try:
        return run(args)
    except (ValueError, TypeError, ConnectionError, SweepError) as err:
        parser.exit(2, f"meanfield {args.command}: error: {err}\n")


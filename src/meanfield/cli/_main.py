"""Command line: ``meanfield solve`` (the main job), ``compare``, ``phase-diagram``, ``kuramoto``,
``configurations`` and ``plot``.

Each subcommand's options and its work are in its own module (:mod:`meanfield.cli._solve`, ``_compare``,
``_phase_diagram``, ``_kuramoto``, ``_configurations``, ``_plot``), listed once in :data:`COMMANDS`. Every
command records its command line in the file's ``history``. The parsers take no abbreviations of options; an
unknown option is answered by the subcommand's usage and the nearest options it has; a value starting with
``-`` (``--betas -1,2``) is read as a value. Warnings print once, as ``WARNING: …`` lines.
"""

from __future__ import annotations

import argparse
import difflib
import logging
import re
import shlex
import sys
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

from tqdm import tqdm

from .._version import __version__
from ..io import WriteError
from ..runs import RunInterrupted
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


DESCRIPTION = ("meanfield: mean-field continuity equations of self-attention dynamics and Kuramoto-type models on "
               "the circle and on spheres, particle engines, interaction energy and Wasserstein distances. Every "
               "command writes a NetCDF result and a PNG figure; 'meanfield COMMAND --help' lists its options.")

EPILOG = "Start with 'meanfield solve' (SA, beta = 4, noise 0.01 on the circle; a few seconds)."


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Option help with its default, unless the help already states one or there is none to state."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "default" in text or action.default in (None, False, argparse.SUPPRESS):
            return text
        return super()._get_help_string(action)


class Parser(argparse.ArgumentParser):
    """An argument parser without abbreviated options, whose unknown options name the nearest known ones."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        unknown = [word for word in extras if word.startswith("-")]
        if unknown and self._subparsers is None:  # a subcommand: answer here, with its own usage
            known = [option for action in self._actions for option in action.option_strings]
            hints = []
            for word in unknown:
                near = difflib.get_close_matches(word.split("=")[0], known, n=2, cutoff=0.6)
                hints.append(f"{word}" + (f" (did you mean {' or '.join(near)}?)" if near else ""))
            self.error(f"unrecognized option{'s' if len(unknown) > 1 else ''}: {', '.join(hints)}")
        return parsed, extras


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``meanfield`` command."""
    parser = Parser(prog="meanfield", description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument("--version", action="version", version=f"meanfield {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    for name, command in COMMANDS.items():
        command.add_arguments(sub.add_parser(name, help=command.help, description=command.description))
    add_plot_parser(sub)
    return parser


_NEGATIVE_VALUE = re.compile(r"^-(\d|\.\d)")
#: options whose value is a formula, which may start with "-" ('--kernel -exp(2*t)')
FORMULA_OPTIONS = ("--kernel", "--potential")


def values_as_values(argv: list[str]) -> list[str]:
    """``argv`` with every word that follows an option and starts with ``-<digit>`` (or any word after an option
    of :data:`FORMULA_OPTIONS`) joined to it as ``--option=value``, so that ``--betas -1,2`` reads -1,2 as the
    value argparse would otherwise take for an option."""
    joined: list[str] = []
    for word in argv:
        formula = bool(joined) and joined[-1] in FORMULA_OPTIONS
        if formula or (joined and joined[-1].startswith("--") and "=" not in joined[-1] and _NEGATIVE_VALUE.match(word)):
            joined[-1] = f"{joined[-1]}={word}"
        else:
            joined.append(word)
    return joined


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    """Print a warning as one ``WARNING: message`` line, above a progress bar if one is shown."""
    tqdm.write(f"WARNING: {message}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``meanfield`` console command."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    warnings.showwarning = _show_warning
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(values_as_values(argv))
    args.command_line = " ".join(["meanfield", *map(shlex.quote, argv)])
    run = plot_command if args.command == "plot" else COMMANDS[args.command].run
    try:
        return run(args)
    except (ValueError, TypeError, ConnectionError, SweepError) as err:
        parser.exit(2, f"meanfield {args.command}: error: {err}\n")
    except WriteError as err:
        parser.exit(1, f"meanfield {args.command}: error: {err}\n")
    except RunInterrupted as stop:
        kept = (f"at t = {stop.t_reached:g}; the outputs so far are in {str(stop.checkpoint)!r}: "
                "continue with --resume" if stop.checkpoint is not None else "before any output was written")
        parser.exit(130, f"meanfield {args.command}: interrupted {kept}\n")
    except KeyboardInterrupt:
        parser.exit(130, f"meanfield {args.command}: interrupted\n")


"""Command-line options that several subcommands share, added by one function each.

* :func:`add_model_arguments`, :func:`model_from_args`, :func:`model_label`: the model of ``meanfield solve``
  and ``meanfield compare``: self-attention (``--beta``, ``--noise``, ``--unnormalized``, ``--repulsive``,
  ``--rescaled-time``: USA in s = e^β t, for any β), or
  a kernel and potential of one's own (``--kernel``, ``--potential``, ``--normalized``: :class:`meanfield.Interaction`;
  formulas are parsed, never evaluated as code).
* :func:`add_output_arguments`: what every computing command ends with: ``--output``, ``--overwrite``,
  ``--no-progress``, the sweep options of :mod:`meanfield.cli._sweep_options` (for the commands that run a
  sweep), the ``command_line`` default that :func:`meanfield.cli.main` fills in for the file's ``history``.
* :func:`result_paths`: the one naming rule of every command's result: ``--output`` or the default name
  (unique per run description), ending in ``.nc``, never an existing file unless ``--overwrite`` (or
  ``--resume``, which continues it) is given; the PNG beside it obeys the same rule.
* :func:`check_at_least`: the lower bounds of integer options, refused naming the option.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path
from typing import Any

from ..io._files import check_output_path
from ..models import Interaction, RepulsiveSelfAttention, SelfAttention

from ._sweep_options import add_sweep_arguments

__all__ = ["add_model_arguments", "add_output_arguments", "check_at_least", "describe_model", "model_from_args",
           "model_label", "refuse_existing", "result_paths"]


def add_model_arguments(parser: argparse.ArgumentParser, beta: float, noise_help: str, noise: float = 0.0) -> None:
    """Add the self-attention options ``--beta`` (default ``beta``), ``--unnormalized``, ``--repulsive``,
    ``--rescaled-time``, the options of a kernel of one's own ``--kernel``, ``--potential``, ``--normalized``, and
    ``--noise`` (default ``noise``, help ``noise_help``) to ``parser``."""
    parser.add_argument("--beta", type=float, default=None, help=f"inverse temperature β ≥ 0 (default {beta:g})")
    parser.add_argument("--noise", type=float, default=noise, help=noise_help)
    parser.add_argument("--unnormalized", action="store_true", help="USA instead of SA (no softmax normalisation)")
    parser.add_argument("--repulsive", action="store_true", help="V = -I: tokens repel (RepulsiveSelfAttention)")
    parser.add_argument("--rescaled-time", action="store_true",
                        help="with --unnormalized: run USA in the rescaled time s = e^β t, whose velocity "
                             "P⊥_x ∫ e^{β(<x,y>-1)} y dμ(y) is finite for every β (USA in t stops at β = 709.78); "
                             "the times given are s, the result carries log_time = log s - β = log t")
    parser.add_argument(
        "--kernel", default=None, metavar="W",
        help="an interaction kernel W(t), t = <x, y>, instead of self-attention: a formula in t of numbers, + - * / "
             "**, pi, e and exp log sqrt abs sin cos tan sinh cosh tanh asin acos atan (e.g. '-exp(2*t)/2'), or a "
             "family: exponential:beta=B, gaussian:epsilon=E, riesz:s=S, power:s=S, morse:attraction=C,"
             "attraction_length=L,repulsion=C,repulsion_length=L (meanfield.Interaction)")
    parser.add_argument("--potential", default=None, metavar="U",
                        help="with --kernel: an external potential U(x) = f(t), t = <x, e_d> (the last coordinate), "
                             "as a formula in t (e.g. '-2*t')")
    parser.add_argument("--normalized", action="store_true",
                        help="with --kernel: divide the interaction by ∫|W'(<x, y>)| dρ(y) (softmax-like)")
    parser.set_defaults(default_beta=beta)


def model_from_args(args: argparse.Namespace) -> Any:
    """The model of the model options: :class:`meanfield.Interaction` with ``--kernel``, else (Repulsive)SelfAttention.

    Raises
    ------
    ValueError
        Options of the other model given beside them (``--beta`` with ``--kernel``, ``--potential`` without it).
    """
    if args.kernel is not None:
        given = [name for name, value in (("--beta", args.beta), ("--unnormalized", args.unnormalized),
                                          ("--repulsive", args.repulsive), ("--rescaled-time", args.rescaled_time))
                 if value not in (None, False)]
        if given:
            verb = "describes" if len(given) == 1 else "describe"
            raise ValueError(f"{' and '.join(given)} {verb} self-attention and do not apply with --kernel (write "
                             f"self-attention as the kernel, e.g. --kernel 'exponential:beta=4')")
        return Interaction(kernel=args.kernel, potential=args.potential, noise=args.noise, normalized=args.normalized)
    for name, value in (("--potential", args.potential), ("--normalized", args.normalized)):
        if value not in (None, False):
            raise ValueError(f"{name} applies with --kernel only")
    model = RepulsiveSelfAttention if args.repulsive else SelfAttention
    beta = args.default_beta if args.beta is None else args.beta
    time = "rescaled" if args.rescaled_time else "t"
    return model(beta, normalized=not args.unnormalized, noise=args.noise, time=time)


def model_label(model: Any) -> str:
    """The model in a file name: ``<SA|USA>[-repulsive]_beta<β>[_rescaled_time]``, or ``Interaction-<8 hex digits>``
    of the SHA-256 of the kernel, potential and normalisation."""
    if isinstance(model, Interaction):
        text = f"{model.attrs['kernel']}|{model.attrs['potential']}|{model.attrs['normalized']}"
        return f"Interaction-{hashlib.sha256(text.encode()).hexdigest()[:8]}"
    return f"{model.name}_beta{model.beta:g}" + ("" if model.time == "t" else f"_{model.time}_time")


def describe_model(model: Any) -> str:
    """The model in a line of a command's summary."""
    if isinstance(model, Interaction):
        potential = "" if model.potential is None else f", U = {model.attrs['potential']}"
        normalized = ", normalised" if model.normalized else ""
        return f"Interaction W = {model.attrs['kernel']}{potential}{normalized}, σ={model.noise}"
    clock = "" if model.time == "t" else " in s = e^β t"
    return f"{model.name} β={model.beta} σ={model.noise}{clock}"


def add_output_arguments(parser: argparse.ArgumentParser, output_help: str, progress_help: str,
                         sweep: bool = True) -> None:
    """Add ``--output`` and ``--no-progress`` (with these helps) and the sweep options when ``sweep``
    to the ``parser`` of a command."""
    parser.add_argument("--output", type=Path, default=None, help=output_help)
    parser.add_argument("--overwrite", action="store_true",
                        help="replace result files that exist (without it an existing file is never replaced)")
    parser.add_argument("--no-progress", action="store_true", help=progress_help)
    if sweep:
        add_sweep_arguments(parser)
    parser.set_defaults(command_line=None)  # main() sets it, for the file's history


def check_at_least(args: argparse.Namespace, **minimums: int) -> None:
    """Refuse the first option ``--<name>`` (``_`` written ``-``) of ``minimums`` whose value in ``args`` (or,
    for an option taking several values, one of its values) is below its minimum.

    Raises
    ------
    ValueError
        ``--<name> must be at least <minimum>, got <value>``.
    """
    for name, minimum in minimums.items():
        value = getattr(args, name)
        for entry in value if isinstance(value, list) else [value]:
            if entry < minimum:
                raise ValueError(f"--{name.replace('_', '-')} must be at least {minimum}, got {entry}")


def refuse_existing(args: argparse.Namespace, *paths: Path) -> None:
    """Refuse the first of ``paths`` that exists, unless ``--overwrite`` (or ``--resume``) was given.

    Raises
    ------
    ValueError
        ``<path> exists; pass --overwrite to replace it`` (and, for a resumable command, ``or --resume to continue
        it``).
    """
    if args.overwrite or getattr(args, "resume", False):
        return
    for path in paths:
        if path.exists():
            resume = " or --resume to continue it" if hasattr(args, "resume") else ""
            raise ValueError(f"{str(path)!r} exists; pass --overwrite to replace it{resume} (or --output another name)")


def result_paths(args: argparse.Namespace, default: Path) -> tuple[Path, Path]:
    """The NetCDF result of a command and the PNG beside it: ``--output`` or ``default``.

    The name must end in ``.nc`` (a figure suffix would put the figure over the result); both files are checked
    writable before any work (:func:`meanfield.io._files.check_output_path`) and refused when they exist, unless
    ``--overwrite`` or ``--resume`` (:func:`refuse_existing`).

    Raises
    ------
    ValueError
        Another suffix, a path that cannot be written, or an existing file.
    """
    output = args.output if args.output is not None else default
    if output.suffix != ".nc":
        raise ValueError(f"--output {str(output)!r} must end in .nc (the PNG is written beside it)")
    nc = check_output_path(output, "--output")
    png = check_output_path(nc.with_suffix(".png"), "--output")
    refuse_existing(args, nc, png)
    return nc, png

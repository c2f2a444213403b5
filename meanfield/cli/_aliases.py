"""Old spellings of command-line options, kept for one release with a deprecation message.

Every option has one name per meaning across the subcommands: ``--grid``
(grid nodes of the PDE), ``--particles`` (particles per system),
``--systems`` (independent systems), ``--dimension`` (d of S^{d-1}),
``--method`` (the PDE scheme), ``--engine`` (particles or the PDE, in
``meanfield kuramoto``). :func:`add_deprecated_alias` lets the former spelling
(``--n``, ``--seeds``, ``--d``; ``--method`` of ``meanfield kuramoto``) still
set the new option's value, with a :class:`DeprecatedOptionWarning` naming the
new spelling; it is hidden from ``--help``.
"""

from __future__ import annotations

import argparse
import warnings
from typing import Any

__all__ = ["DeprecatedOptionWarning", "add_deprecated_alias"]


class DeprecatedOptionWarning(DeprecationWarning):
    """A command-line option was given by a spelling that the next release removes."""


class _DeprecatedAlias(argparse.Action):
    """Store the value under the new option's ``dest`` after warning that ``option_string`` is deprecated."""

    def __init__(self, option_strings: list[str], dest: str, new: str = "", command: str = "",
                 **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.new = new
        self.command = command

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        warnings.warn(f"meanfield {self.command}: {option_string} is deprecated and will be removed in the next "
                      f"release; use {self.new}", DeprecatedOptionWarning, stacklevel=2)
        setattr(namespace, self.dest, values)


def add_deprecated_alias(parser: argparse.ArgumentParser, old: str, new: str, command: str) -> None:
    """Let ``old`` set what the already added option ``new`` sets (same type, nargs and choices), with a
    warning."""
    target = next(action for action in parser._actions if new in action.option_strings)
    parser.add_argument(old, dest=target.dest, action=_DeprecatedAlias, new=new, command=command,
                        type=target.type, nargs=target.nargs, choices=target.choices, default=argparse.SUPPRESS,
                        help=argparse.SUPPRESS)


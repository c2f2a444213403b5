"""Command-line options shared by every command that runs a sweep.

``add_sweep_arguments(parser)`` adds ``--scheduler``, ``--workers``,
``--store`` and ``--resume``; ``sweep_options(args)`` turns them into the
keyword arguments ``scheduler``, ``n_workers``, ``store``, ``resume`` of
:func:`meanfield.sweep`; ``parse_values(text, option)`` reads a swept
parameter's values (``start:stop:count`` or a comma-separated list).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["VALUES_HELP", "add_sweep_arguments", "parse_values", "sweep_options"]

VALUES_HELP = "'start:stop:count' (evenly spaced, numpy.linspace) or a comma-separated list"


def parse_values(text: str, option: str) -> np.ndarray:
    """Values of a swept parameter from ``start:stop:count`` (numpy.linspace) or ``v1,v2,...``, finite and
    strictly increasing (a diagram's axis).

    Raises
    ------
    ValueError
        Naming ``option`` and what was given, for any other text, a count below 1, a non-finite value, or values
        that do not increase (``9:0.1:90`` is refused with the suggestion ``0.1:9:90``).
    """
    message = f"{option} must be {VALUES_HELP}, got {text!r}"
    parts = text.split(":")
    try:
        if len(parts) == 3:
            count = int(parts[2])
            values = np.linspace(float(parts[0]), float(parts[1]), count) if count >= 1 else None
        elif len(parts) == 1:
            values = np.array([float(part) for part in text.split(",")])
        else:
            values = None
    except ValueError:
        values = None
    if values is None:
        raise ValueError(message if len(parts) != 3 or not parts[2].strip().lstrip("-").isdigit()
                         else f"{option} count must be >= 1, got {text!r}")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{option} values must be finite, got {text!r}")
    if np.any(np.diff(values) <= 0):
        hint = f" (did you mean {parts[1]}:{parts[0]}:{parts[2]}?)" if len(parts) == 3 else ""
        raise ValueError(f"{option} values must increase strictly, got {text!r}{hint}")
    return values


def add_sweep_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the sweep options (scheduler, workers, store, resume) to ``parser`` as a group."""
    group = parser.add_argument_group("sweep", "where the tasks run and where finished tasks are kept")
    group.add_argument(
        "--scheduler", default="local",
        help="'local' (a dask LocalCluster on this machine), 'serial' (a plain loop, no dask), "
        "or the address of a running dask scheduler, e.g. tcp://host:8786",
    )
    group.add_argument("--workers", type=int, default=None, help="workers of the local cluster (None: one per core)")
    group.add_argument(
        "--store", type=Path, default=None,
        help="directory keeping one NetCDF piece per finished task, so an interrupted run can --resume",
    )
    group.add_argument("--resume", action="store_true",
                       help="continue the sweep in --store, running only the tasks not yet finished")


def sweep_options(args: argparse.Namespace) -> dict[str, Any]:
    """Keyword arguments of :func:`meanfield.sweep` from options added by :func:`add_sweep_arguments`."""
    return {"scheduler": args.scheduler, "n_workers": args.workers, "store": args.store, "resume": args.resume}

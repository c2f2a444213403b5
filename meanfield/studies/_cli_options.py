"""Command-line options shared by every command that runs a sweep.

``add_sweep_arguments(parser)`` adds ``--scheduler``, ``--workers``,
``--store`` and ``--resume``; ``sweep_options(args)`` turns them into the
keyword arguments ``scheduler``, ``n_workers``, ``store``, ``resume`` of
:func:`meanfield.sweep`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["add_sweep_arguments", "sweep_options"]


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

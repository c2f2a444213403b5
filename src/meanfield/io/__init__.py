"""Result files: what a file says about itself and how it is written, read and resumed.

:mod:`._files` checks output paths before any work, writes atomically, checksums NetCDF files and locks
a path against a second writer; :mod:`._conventions` writes the CF attributes (coordinate units,
parameter meanings, ``history``); :mod:`._checkpoint` checkpoints ``solve`` and ``simulate`` and checks
that a resumed run is the saved one. Each module lists what it offers in its docstring and its ``__all__``,
which this package re-exports.
"""

from __future__ import annotations

from . import _checkpoint, _conventions, _files
from ._files import *  # noqa: F403 (re-exports _files.__all__)
from ._conventions import *  # noqa: F403 (re-exports _conventions.__all__)
from ._checkpoint import *  # noqa: F403 (re-exports _checkpoint.__all__)

__all__ = [*_files.__all__, *_conventions.__all__, *_checkpoint.__all__]

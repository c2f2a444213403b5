"""The on-disk store of a sweep: a manifest, one NetCDF piece per finished task, a lock.

Layout of a store directory::

    manifest.json          what the sweep is: function, grid, seeds, batch, fixed, version, creation time
    pieces/<task>.nc       the result of one task, written atomically by the worker that ran it
    lock                   pid and host of the sweep using the store (an fcntl lock while it runs, see PathLock)

A piece carries attrs ``sweep_task`` (its index tuple), ``sweep_point`` (its
parameter values, JSON: :func:`point_json`), ``sweep_id`` (the SHA-256 of the
manifest's compared fields: the sweep it belongs to), ``sha256`` (of its
contents, :func:`meanfield.io._files.dataset_checksum`), ``wall_time``,
``host`` and ``pid``. On resume a piece is taken only when its checksum holds
and its task, point and sweep are this sweep's; any other piece (damaged, or
copied from another store) is run again, with a warning naming what differs.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from ...io._files import FileCheckError, PathLock, check_output_path, read_netcdf, write_atomically
from ..._version import __version__

__all__ = ["Store", "COMPARED_FIELDS", "point_json"]

logger = logging.getLogger(__name__)

FORMAT = "meanfield-sweep-store/1"
COMPARED_FIELDS = ("function", "grid", "seeds", "batch", "fixed")


def point_json(point: dict[str, Any]) -> str:
    """A task's parameter values as JSON (scalars, and lists for the blocks of batched dimensions)."""
    return json.dumps({d: np.asarray(v).tolist() for d, v in point.items()})


def task_name(task: tuple[int, ...]) -> str:
    """File stem of the piece of ``task``: its indices joined by underscores."""
    return "_".join(map(str, task)) if task else "all"


class Store:
    """A sweep's directory (see the module docstring).

    Parameters
    ----------
    path : str or Path
        The directory; it or its parent must exist and be writable.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = check_output_path(path, "store", directory=True)
        self.manifest_path = self.path / "manifest.json"
        self.pieces = self.path / "pieces"
        self._lock = PathLock(self.path / "lock", f"store {str(self.path)!r}")

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"

    def piece_path(self, task: tuple[int, ...]) -> Path:
        """Where the piece of ``task`` is written."""
        return self.pieces / f"{task_name(task)}.nc"

    def check(self, manifest: dict[str, Any], resume: bool) -> None:
        """Refuse, without writing anything, a store this sweep cannot use (see :meth:`open`)."""
        if not self.path.exists():
            return
        if (self.path / "lock").exists():  # a store in use is refused first, whatever it holds
            self._lock.acquire()
            self._lock.release()
        self._check_contents(manifest, resume)

    @contextlib.contextmanager
    def open(self, manifest: dict[str, Any], resume: bool) -> Iterator[Store]:
        """Lock the store and check or write its manifest for the duration of a sweep.

        Raises
        ------
        ValueError
            Another live process holds the store (naming its pid); the store
            holds a sweep and ``resume`` is false; the store was made by a
            different sweep (naming the first field that differs); the
            directory holds files that are not a sweep store.
        """
        self.path.mkdir(exist_ok=True)
        self._lock.acquire()
        try:
            self._check_contents(manifest, resume)
            if not self.manifest_path.exists():
                record = {"format": FORMAT, **manifest, "meanfield_version": __version__,
                          "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
                text = json.dumps(record, indent=1, sort_keys=True) + "\n"
                write_atomically(self.manifest_path, lambda tmp: tmp.write_text(text))
            self.pieces.mkdir(exist_ok=True)
            for stale in self.pieces.glob(".*.partial"):  # left by a killed writer; the lock says nobody writes now
                stale.unlink(missing_ok=True)
            yield self
        finally:
            self._lock.release()

    def _check_contents(self, manifest: dict[str, Any], resume: bool) -> None:
        others = sorted(p.name for p in self.path.iterdir() if p.name not in ("lock", "manifest.json", "pieces"))
        if others:
            raise ValueError(f"store {str(self.path)!r} holds files that are not part of a sweep store "
                             f"({', '.join(others[:5])}); use an empty or new directory")
        if self.manifest_path.exists():
            if not resume:
                raise ValueError(f"store {str(self.path)!r} already holds a sweep; pass resume=True (--resume) "
                                 "to continue it, or use a new store")
            self._check_manifest(manifest)
        elif self.pieces.exists() and any(self.pieces.iterdir()):
            raise ValueError(f"store {str(self.path)!r} has pieces but no manifest.json; use a new store")

    def _check_manifest(self, manifest: dict[str, Any]) -> None:
        try:
            stored = json.loads(self.manifest_path.read_text())
        except (OSError, ValueError) as err:
            raise ValueError(f"store {str(self.path)!r}: cannot read manifest.json ({err}); use a new store") from err
        if stored.get("format") != FORMAT:
            raise ValueError(f"store {str(self.path)!r} has manifest format {stored.get('format')!r}, "
                             f"expected {FORMAT!r}; use a new store")
        this = json.loads(json.dumps(manifest))  # compare as JSON, as stored
        for field in COMPARED_FIELDS:
            old, new = stored.get(field), this.get(field)
            if old == new:
                continue
            if isinstance(old, dict) and isinstance(new, dict):
                for key in sorted(set(old) | set(new), key=str):
                    if old.get(key, "<absent>") != new.get(key, "<absent>"):
                        raise ValueError(
                            f"store {str(self.path)!r} was made with {field}[{key!r}] = {old.get(key, '<absent>')}, "
                            f"this sweep has {new.get(key, '<absent>')}; use a new store or resume=False")
            raise ValueError(f"store {str(self.path)!r} was made with {field} = {old}, this sweep has {new}; "
                             "use a new store or resume=False")
        if stored.get("meanfield_version") != __version__:
            logger.warning("store %s was made by meanfield %s, resuming with %s", self.path,
                           stored.get("meanfield_version"), __version__)

    def finished(self, task: tuple[int, ...], point: str, identity: str) -> xr.Dataset | None:
        """The verified piece of ``task`` made by this sweep (``identity``) at ``point`` (:func:`point_json`), or
        None if it is absent or fails verification (logged: it will be run again)."""
        path = self.piece_path(task)
        if not path.exists():
            return None
        try:
            ds = read_netcdf(path)
        except FileCheckError as err:
            logger.warning("piece of task %s will be run again: %s", task, err)
            return None
        recorded = tuple(int(i) for i in np.atleast_1d(ds.attrs.get("sweep_task", [])))
        if recorded != tuple(task):
            logger.warning("piece %s records task %s, not %s; it will be run again", path, recorded, task)
            return None
        if ds.attrs.get("sweep_id") != identity:
            logger.warning("piece %s was made by another sweep (sweep_id %s, this sweep's is %s); it will be run "
                           "again", path, ds.attrs.get("sweep_id", "<absent>"), identity)
            return None
        if ds.attrs.get("sweep_point") != point:
            logger.warning("piece %s records the point %s, this sweep's task %s is %s; it will be run again", path,
                           ds.attrs.get("sweep_point", "<absent>"), task, point)
            return None
        return ds

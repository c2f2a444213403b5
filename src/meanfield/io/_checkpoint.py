"""Checkpoints of ``solve`` and ``simulate``: one path, checked, locked, checksummed and verified.

* :func:`open_checkpoint`: check the path before any work (a device, a
  directory, a missing or read-only directory is refused, naming it) and lock
  it against a second writer (:class:`CheckpointInUseError` names the process
  holding it).
* :class:`Checkpoint`: an observer writing the outputs reached so far at most
  every ``interval`` seconds, atomically, with the SHA-256 of its data
  (:func:`meanfield.io._files.write_netcdf`); a failed write is logged and
  retried at the next output, never fatal to the computation.
* :func:`load_checkpoint`: read and verify a checkpoint; a file that is empty,
  truncated, foreign or fails its checksum raises one :class:`CheckpointError`
  naming it and suggesting ``resume=False``.
* :func:`check_same_run`: a resumed run must have every parameter of the saved
  one (model, scheme options, initial-state fingerprint), refused by name.
* :func:`snapshot_variables` / :func:`snapshot_of`: a scheme's own state
  (:meth:`solvers.Scheme.snapshot`) as dataset variables and back.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import logging
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import xarray as xr

from ._conventions import is_descriptive
from ._files import FileCheckError, PathInUseError, PathLock, check_output_path, read_netcdf, write_netcdf

logger = logging.getLogger(__name__)

__all__ = [
    "Checkpoint",
    "CheckpointError",
    "CheckpointInUseError",
    "check_same_run",
    "fingerprint",
    "load_checkpoint",
    "locks_checkpoint",
    "open_checkpoint",
    "snapshot_of",
    "snapshot_variables",
]

#: prefix of the dataset variables holding a scheme's own state
SNAPSHOT_PREFIX = "scheme_"


class CheckpointError(FileCheckError):
    """A checkpoint cannot be resumed from: unreadable, altered, or made by a different run.

    A :class:`ValueError` (through :class:`~meanfield.io.FileCheckError`),
    raised by :func:`load_checkpoint` and by ``solve`` / ``simulate`` with
    ``resume=True``; the message names the file and what is wrong with it
    (empty, truncated, foreign, failing its SHA-256 checksum, or the differing
    parameter of another run) and suggests ``resume=False``.

    Examples
    --------
    An empty file where a checkpoint should be:

    >>> import numpy as np
    >>> import meanfield as mf
    >>> open("run.nc", "wb").close()
    >>> rho0 = mf.uniform(mf.Circle(16))
    >>> try:
    ...     mf.solve(mf.SelfAttention(beta=1.0), rho0, [0.0, 0.1], checkpoint="run.nc", resume=True)
    ... except mf.CheckpointError as err:
    ...     print(err)
    ...     print(isinstance(err, ValueError))
    cannot resume from checkpoint: 'run.nc' is empty; remove it or pass resume=False
    True
    """


class CheckpointInUseError(PathInUseError):
    """Another process holds the lock of a checkpoint path.

    A :class:`ValueError` (through :class:`~meanfield.io.PathInUseError`),
    raised by :func:`open_checkpoint` (so by ``solve`` / ``simulate`` with
    ``checkpoint=``) before any work; the message names the process holding
    the lock. The lock is an ``fcntl.flock`` on ``.<name>.lock`` beside the
    checkpoint, released by the kernel when its holder ends.

    Examples
    --------
    A second writer of the same path is refused (even in the same process):

    >>> import meanfield as mf
    >>> lock = mf.io.open_checkpoint("run.nc")
    >>> try:
    ...     mf.io.open_checkpoint("run.nc")
    ... except mf.CheckpointInUseError as err:
    ...     print(err)
    checkpoint 'run.nc' is in use by process ... (lock '.run.nc.lock'); wait for it to finish or use another path
    >>> lock.release()
    """


def open_checkpoint(path: str | os.PathLike, name: str = "checkpoint") -> PathLock:
    """Check that a checkpoint can be written at ``path`` and lock it (before any computation).

    Raises
    ------
    ValueError
        ``path`` is a device, a directory, or lies in a missing or read-only
        directory (the message names it).
    CheckpointInUseError
        Another process is writing the same checkpoint.
    """
    checked = check_output_path(path, name)
    lock = PathLock(checked.with_name(f".{checked.name}.lock"), f"checkpoint {str(checked)!r}", CheckpointInUseError)
    lock.acquire()
    return lock


F = TypeVar("F", bound=Callable[..., Any])


def locks_checkpoint(func: F) -> F:
    """Decorate a run taking ``checkpoint=``: check and lock that path (:func:`open_checkpoint`)
    before the run starts, release it when the run returns or raises."""
    signature = inspect.signature(func)

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        path = signature.bind_partial(*args, **kwargs).arguments.get("checkpoint")
        lock = open_checkpoint(path) if path is not None else None
        try:
            return func(*args, **kwargs)
        finally:
            if lock is not None:
                lock.release()

    return run  # type: ignore[return-value]


def fingerprint(*arrays: np.ndarray, text: str = "") -> str:
    """SHA-256 of ``text`` and of the shape and float64 bytes of each array, in order."""
    digest = hashlib.sha256(text.encode())
    for array in arrays:
        values = np.ascontiguousarray(array, dtype=np.dtype("<f8"))
        digest.update(f"{values.shape}|".encode())
        digest.update(values.tobytes())
    return digest.hexdigest()


def load_checkpoint(path: str | os.PathLike) -> xr.Dataset | None:
    """The verified checkpoint at ``path`` (None when there is none).

    Raises
    ------
    CheckpointError
        The file is not a regular file, is empty, truncated, foreign, carries
        no checksum or fails it.
    """
    p = Path(path)
    if not p.exists():
        return None
    try:
        return read_netcdf(p)
    except FileCheckError as err:
        # a reader's own exception (h5py, xarray) says nothing a user can act on: name the file only
        reason = f"{str(p)!r} is not a readable NetCDF file (truncated, damaged or foreign)" if err.__cause__ else err
        raise CheckpointError(f"cannot resume from checkpoint: {reason}; remove it or pass resume=False") from None


def check_same_run(saved: dict[str, Any], attrs: dict[str, Any], path: str | os.PathLike,
                   ignore: Iterable[str] = ()) -> None:
    """Refuse, by name, the first parameter in which ``attrs`` (this run) and ``saved`` (the checkpoint's) differ.

    Every key of either mapping is compared as text, in the order of ``attrs`` (the model's parameters
    first) and then the checkpoint's own keys, except those in ``ignore`` (run facts and settings a
    resumed run may change) and descriptive ones (parameter descriptions, ``history``:
    :func:`meanfield.io._conventions.is_descriptive`). A fingerprint of the initial state (a key ending
    in ``_sha1`` or ``_sha256``, e.g. ``x0_sha1``) is named as what it is the fingerprint of.
    """
    skip = set(ignore)
    names = [*attrs, *(key for key in saved if key not in attrs)]
    for name in (key for key in names if key not in skip and not is_descriptive(key)):
        ours, theirs = attrs.get(name, "<absent>"), saved.get(name, "<absent>")
        if _as_text(ours) != _as_text(theirs):
            what, _, digest = name.rpartition("_")
            if digest in ("sha1", "sha256"):
                raise CheckpointError(
                    f"checkpoint {str(path)!r} was made from a different {what} ({digest.upper()[:3]}-"
                    f"{digest[3:]} of its values {theirs}, this run has {ours}); remove it or pass resume=False")
            raise CheckpointError(
                f"checkpoint {str(path)!r} was made with {name}={theirs}, but this run has {name}={ours}; "
                "remove it or pass resume=False"
            )


def _as_text(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return repr(value.tolist())
    if isinstance(value, (np.integer, np.floating)):
        return str(value.item())
    return str(value)


def snapshot_variables(snapshot: dict[str, np.ndarray]) -> dict[str, tuple[tuple[str, ...], np.ndarray, dict]]:
    """Dataset variables ``scheme_<key>`` of a scheme snapshot; complex arrays as (2, ...) real, imaginary.

    Each is described as what it is: the scheme's internal state at the last output, kept so that a resumed run
    continues bit for bit, not a result to analyse (``long_name``, ``comment``)."""
    out = {}
    for key, value in snapshot.items():
        array = np.asarray(value)
        described = {"long_name": f"scheme state {key!r} at the last output, for resume",
                     "comment": "internal state of the time stepper, kept so that resume=True (--resume) continues "
                                "bit for bit; not a result"}
        attrs = {**described, "complex": 0}
        if np.iscomplexobj(array):
            array, attrs = np.stack([array.real, array.imag]), {**described, "complex": 1}
        name = f"{SNAPSHOT_PREFIX}{key}"
        out[name] = (tuple(f"{name}_{i}" for i in range(array.ndim)), array, attrs)
    return out


def snapshot_of(ds: xr.Dataset) -> dict[str, np.ndarray]:
    """The scheme snapshot stored by :func:`snapshot_variables` in ``ds`` (empty when none)."""
    snapshot = {}
    for name in ds.data_vars:
        if str(name).startswith(SNAPSHOT_PREFIX):
            values = np.asarray(ds[name].values)
            if int(ds[name].attrs.get("complex", 0)):
                values = values[0] + 1j * values[1]
            snapshot[str(name)[len(SNAPSHOT_PREFIX):]] = values
    return snapshot


class Checkpoint:
    """Observer writing the outputs reached so far to ``path``, as they are computed.

    Parameters
    ----------
    path : str or Path
        NetCDF file, rewritten atomically with the SHA-256 of its data.
    build : callable
        ``build(n_reached) -> xarray.Dataset`` of the first ``n_reached`` outputs.
    interval : float
        Minimum wall-clock seconds between writes.

    A write that fails (disk full, file system gone) is logged as a warning
    and tried again at the next output; the computation goes on. Failures
    after the first in a row are counted (``failures``) and not logged, so a
    full disk does not flood the log; a write that succeeds again says how many
    failed before it. The file keeps the last outputs written (``n_written``);
    ``last_error`` is the latest failure, for the run's own report.
    """

    def __init__(self, path: str | os.PathLike, build: Callable[[int], xr.Dataset], interval: float = 30.0) -> None:
        self.path = Path(path)
        self._build = build
        self._interval = float(interval)
        self._last_write = time.monotonic()
        self.n_written = 0
        self.failures = 0
        self.last_error = ""
        self._failing = 0

    def __call__(self, index: int, t: float, y: Any) -> None:
        if time.monotonic() - self._last_write >= self._interval:
            self.write(index + 1)

    def write(self, n_reached: int) -> bool:
        """Write the first ``n_reached`` outputs now; False (logged) when the write failed."""
        try:
            ds = self._build(n_reached)
        except MemoryError as err:
            return self._failed(err)
        if self.save(ds):
            self.n_written = n_reached
            return True
        return False

    def save(self, ds: xr.Dataset) -> bool:
        """Write ``ds`` to the file atomically; False (logged) when the write failed."""
        try:
            write_netcdf(ds, self.path)
        except (OSError, ValueError, RuntimeError) as err:
            return self._failed(err)
        self._last_write = time.monotonic()
        if self._failing:
            logger.warning("checkpoint %s written again after %d failed writes", self.path, self._failing)
            self._failing = 0
        return True

    def _failed(self, err: BaseException) -> bool:
        self.failures += 1
        self._failing += 1
        self.last_error = str(err)
        if self._failing == 1:
            logger.warning("could not write checkpoint %s (%s); will try again at the next output", self.path, err)
        return False

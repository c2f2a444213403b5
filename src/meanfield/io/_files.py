"""Result files: output paths checked before any work, atomic writes, checksummed NetCDF.

* :func:`check_output_path`: refuse a path that cannot be written (a device, a
  directory where a file is wanted or the reverse, a missing or read-only
  parent) before anything is computed, naming the path.
* :func:`write_atomically`: write beside the target, then ``os.replace``, so a
  reader (or a killed writer) never sees half a file; a write the file system
  refuses (ENOSPC, EIO, …) raises :class:`WriteError` naming the path, removes
  the partial file and leaves the previous file as it was.
* :func:`write_netcdf` / :func:`read_netcdf`: a NetCDF file whose attribute
  ``sha256`` is the digest of everything in it (:func:`dataset_checksum`: data
  variables, coordinates, their attributes and the dataset's); the reader
  checks it and names the file when it is empty, truncated, foreign or
  altered. The file is made in memory and written with plain ``write`` calls,
  so a full disk is an ordinary error, never a crash inside the HDF5 library
  (which, after a failed flush to disk, can end the process). A Ctrl-C
  (SIGINT) that arrives while the file is made or written is held until the
  file is complete (:func:`interrupts_held`), then raised: an interrupted run
  leaves whole files, and no half-built NetCDF object behind.
* :class:`PathLock`: one writer per checkpoint or sweep store; a second one is
  refused at start with :class:`PathInUseError` naming the process that holds it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import signal
import socket
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

__all__ = [
    "FileCheckError",
    "PathInUseError",
    "PathLock",
    "check_output_path",
    "WriteError",
    "dataset_checksum",
    "interrupts_held",
    "read_netcdf",
    "write_atomically",
    "write_bytes_atomically",
    "write_netcdf",
]

CHECKSUM_ATTR = "sha256"


class FileCheckError(ValueError):
    """A result file is missing, unreadable, foreign, or fails its checksum."""


class WriteError(OSError):
    """A file could not be written (disk full, I/O error, …); the previous file, if any, is untouched.

    ``errno`` and ``filename`` are those of the failed write; ``str()`` is the message alone.
    Raised by :func:`write_atomically` (so by every result and checkpoint
    write) for an ``OSError`` of the file system; picklable, so that it
    reaches the caller from a dask worker.

    Parameters
    ----------
    errno : int or None
        The ``errno`` of the failed write (e.g. ``errno.ENOSPC``).
    message : str
        What failed, naming the path; this is ``str(error)``.
    filename : str
        The path that could not be written.

    Examples
    --------
    A write that fails with a full disk keeps the previous file:

    >>> import errno
    >>> import meanfield as mf
    >>> _ = mf.io.write_bytes_atomically("results.txt", b"previous")
    >>> def full_disk(tmp):
    ...     raise OSError(errno.ENOSPC, "No space left on device")
    >>> try:
    ...     mf.io.write_atomically("results.txt", full_disk)
    ... except mf.WriteError as err:
    ...     print(err)
    ...     print(err.errno == errno.ENOSPC, err.filename)
    could not write 'results.txt': No space left on device; the previous file is kept
    True results.txt
    >>> open("results.txt").read()
    'previous'
    """

    def __init__(self, errno: int | None, message: str, filename: str) -> None:
        super().__init__(errno, message, filename)
        self.message = message

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:  # picklable, for results sent back by dask workers
        return type(self), (self.errno, self.message, self.filename)


class PathInUseError(ValueError):
    """Another process holds the lock of a checkpoint or store."""


class PathLock:
    """Exclusive lock of a file or directory by ``fcntl.flock`` on ``lock_path``, which holds the holder's pid.

    The kernel releases the lock when its process ends, even by SIGKILL, so a
    killed run never blocks the next one; :meth:`release` removes the lock file.

    Parameters
    ----------
    lock_path : Path
        The lock file (created if absent).
    what : str
        How error messages name the locked thing, e.g. ``"checkpoint 'run.nc'"``.
    error : type
        The exception raised when another process holds the lock.
    """

    def __init__(self, lock_path: Path, what: str, error: type[PathInUseError] = PathInUseError) -> None:
        self.lock_path = Path(lock_path)
        self.what = what
        self._error = error
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, or raise ``error`` naming the process that holds it."""
        while True:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.read(fd, 256).decode(errors="replace").strip() or "an unknown process"
                os.close(fd)
                raise self._error(f"{self.what} is in use by {holder} (lock {str(self.lock_path)!r}); "
                                  "wait for it to finish or use another path") from None
            try:
                same = os.fstat(fd).st_ino == os.stat(self.lock_path).st_ino
            except FileNotFoundError:
                same = False
            if same:  # not a lock file its previous holder removed after we opened it
                break
            os.close(fd)
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"process {os.getpid()} on {socket.gethostname()}\n".encode())
        except OSError as err:  # a full disk or a failing device: nothing is left behind
            os.close(fd)
            self.lock_path.unlink(missing_ok=True)
            raise WriteError(err.errno, f"cannot start: the lock of {self.what} cannot be written "
                             f"({err.strerror})", str(self.lock_path)) from None
        self._fd = fd

    def release(self) -> None:
        """Remove the lock file and drop the lock (no-op when not held)."""
        if self._fd is None:
            return
        self.lock_path.unlink(missing_ok=True)
        os.close(self._fd)
        self._fd = None


def check_output_path(path: str | os.PathLike, name: str = "output", *, directory: bool = False) -> Path:
    """Return ``path`` as a Path if a file (or, with ``directory``, a directory) can be written there.

    Raises
    ------
    ValueError
        The path exists as the wrong kind (a directory or device for a file, a
        file for a directory), its parent does not exist or is not a
        directory, or the place to write in is not writable.
    """
    p = Path(path).expanduser()
    if p.exists():
        if directory and not p.is_dir():
            raise ValueError(f"{name} {str(p)!r} exists and is not a directory")
        if not directory and not p.is_file():
            raise ValueError(f"{name} {str(p)!r} exists and is not a regular file")
        target = p if directory else p.parent
        if not os.access(target, os.W_OK | os.X_OK):
            raise ValueError(f"{name} {str(p)!r} is not writable")
        _probe(target, name, p)
        return p
    parent = p.absolute().parent
    if not parent.exists():
        raise ValueError(f"{name} {str(p)!r} is in a directory that does not exist: {str(parent)!r}")
    if not parent.is_dir():
        raise ValueError(f"{name} {str(p)!r} is below {str(parent)!r}, which is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{name} {str(p)!r} cannot be created: directory {str(parent)!r} is not writable")
    _probe(parent, name, p)
    return p


def _probe(directory: Path, name: str, p: Path) -> None:
    """Create and remove a file in ``directory``: the one test of writability that holds for root and any file system."""
    try:
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".meanfield-probe-")
    except OSError as err:
        raise ValueError(f"{name} {str(p)!r} cannot be written: no file can be created in {str(directory)!r} "
                         f"({err.strerror})") from None
    os.close(fd)
    os.unlink(probe)


def write_atomically(path: str | os.PathLike, write: Callable[[Path], object]) -> Path:
    """Call ``write(tmp)`` on a file beside ``path``, then rename it to ``path`` (``os.replace``).

    The temporary name is unique to the process, so concurrent writers never
    share it; on failure it is removed and the error propagates, an
    ``OSError`` of the file system (disk full, I/O error) as
    :class:`WriteError` naming ``path``. A ``path`` that exists and is not a
    regular file (a device, a directory) is never replaced: ``ValueError``
    naming it, before anything is written.
    """
    p = Path(path)
    _refuse_non_regular(p)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.partial")
    try:
        write(tmp)
        _refuse_non_regular(p)  # it may have become one while writing
        os.replace(tmp, p)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        if isinstance(err, WriteError):
            raise
        previous = "the previous file is kept" if p.is_file() else "nothing was written"
        raise WriteError(err.errno, f"could not write {str(p)!r}: {err.strerror or err}; {previous}",
                         str(p)) from err
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return p


def write_bytes_atomically(path: str | os.PathLike, payload: bytes) -> Path:
    """Write ``payload`` to ``path`` by :func:`write_atomically`, flushed to the device (``fsync``) before the
    rename, so that a file system that reports a full disk only on flush reports it here."""
    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())

    return write_atomically(path, write)


def _refuse_non_regular(p: Path) -> None:
    if p.exists() and not p.is_file():
        raise ValueError(f"{str(p)!r} exists and is not a regular file; it is not replaced")


def dataset_checksum(ds: xr.Dataset) -> str:
    """sha256 of everything :func:`write_netcdf` writes: each variable (data and coordinates) by name, dimensions,
    values and attributes, then the dataset's attributes except ``sha256`` itself, all in name order.

    Numeric values are hashed as little-endian bytes of a canonical dtype
    (int64, float64, complex128; booleans as integers), flattened, and any
    other value (strings) as its text, so the digest is the same before and
    after a NetCDF round trip (which turns a one-element list attribute into a
    scalar and a Python bool into an integer).
    """
    h = hashlib.sha256()
    for name in sorted(map(str, ds.variables)):
        var = ds.variables[name]
        h.update(f"variable|{name}|{var.dims}|".encode())
        _update_with(h, var.values)
        _update_with_attrs(h, var.attrs)
    h.update(b"dataset attrs|")
    _update_with_attrs(h, {k: v for k, v in ds.attrs.items() if k != CHECKSUM_ATTR})
    return h.hexdigest()


def _update_with_attrs(h: Any, attrs: Mapping[Any, Any]) -> None:
    for key in sorted(map(str, attrs)):
        h.update(f"attr|{key}|".encode())
        _update_with(h, attrs[key])


def _update_with(h: Any, value: Any) -> None:
    values = np.asarray(value)
    kind = values.dtype.kind
    canonical = {"b": "<i8", "i": "<i8", "u": "<i8", "f": "<f8", "c": "<c16"}.get(kind)
    if canonical is not None:
        flat = np.ascontiguousarray(values.ravel(), dtype=canonical)
        h.update(f"{canonical}|{flat.size}|".encode())
        h.update(flat.tobytes())
    else:
        text = "\x1f".join(map(str, values.ravel()))
        h.update(f"text|{values.size}|{text}|".encode())


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold SIGINT for the duration of the block and deliver it at its end.

    In the main thread, with Python's own SIGINT handler installed (or any callable one), a SIGINT that arrives
    inside the block is recorded instead of raising ``KeyboardInterrupt`` there; when the block ends the previous
    handler is restored and called, so the interrupt is raised after the block, at a point where its work is
    whole. Elsewhere (another thread, SIGINT ignored or left to the system) the block runs as it is.

    Yields
    ------
    None
        Nothing: the block runs with SIGINT held.

    Examples
    --------
    >>> import os, signal
    >>> from meanfield.io import interrupts_held
    >>> done = []
    >>> try:
    ...     with interrupts_held():
    ...         os.kill(os.getpid(), signal.SIGINT)
    ...         done.append("the block ran to its end")
    ... except KeyboardInterrupt:
    ...     print(done[0], "and the interrupt came after it")
    the block ran to its end and the interrupt came after it
    """
    previous = signal.getsignal(signal.SIGINT) if threading.current_thread() is threading.main_thread() else None
    if not callable(previous):
        yield
        return
    received: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            previous(signal.SIGINT, None)


def write_netcdf(ds: xr.Dataset, path: str | os.PathLike) -> str:
    """Write ``ds`` to ``path`` atomically with attribute ``sha256`` = :func:`dataset_checksum`; return it.

    The NetCDF file is made in memory and then written to disk by
    :func:`write_bytes_atomically`: a full disk or an I/O error raises
    :class:`WriteError` and keeps the previous file. A SIGINT during either is
    raised once the file is written (:func:`interrupts_held`).
    """
    digest = dataset_checksum(ds)
    out = ds.copy()
    out.attrs[CHECKSUM_ATTR] = digest
    with interrupts_held():
        write_bytes_atomically(path, _netcdf_bytes(out))
    return digest


def _netcdf_bytes(ds: xr.Dataset) -> bytes:
    """The NetCDF file of ``ds``, made in memory.

    Under a dask.distributed scheduler (a sweep's worker) xarray guards the write with a distributed lock
    named after the target, which for an in-memory file no scheduler knows; writing in-memory arrays needs
    no scheduler, so the write runs under dask's synchronous one.
    """
    import dask

    with dask.config.set(scheduler="synchronous"):
        return bytes(ds.to_netcdf())


def read_netcdf(path: str | os.PathLike) -> xr.Dataset:
    """Load a file written by :func:`write_netcdf` into memory and check its checksum.

    Raises
    ------
    FileCheckError
        The file does not exist, is empty, is not a readable NetCDF file
        (truncated or foreign), carries no checksum, or its data do not match it.
    """
    p = Path(path)
    if not p.is_file():
        raise FileCheckError(f"{str(p)!r} does not exist or is not a regular file")
    if p.stat().st_size == 0:
        raise FileCheckError(f"{str(p)!r} is empty")
    try:
        with xr.open_dataset(p) as opened:
            ds = opened.load()
    except Exception as err:  # h5py/h5netcdf/scipy raise OSError, ValueError, KeyError … on damaged files
        raise FileCheckError(f"{str(p)!r} is not a readable NetCDF file (truncated or foreign): {err}") from err
    recorded = ds.attrs.get(CHECKSUM_ATTR)
    if recorded is None:
        raise FileCheckError(f"{str(p)!r} carries no {CHECKSUM_ATTR!r} attribute, so it cannot be verified")
    actual = dataset_checksum(ds)
    if actual != recorded:
        raise FileCheckError(f"{str(p)!r} fails its checksum (its data, coordinates or attributes were changed "
                             f"after it was written): recorded {CHECKSUM_ATTR} {recorded}, contents give {actual}")
    return ds

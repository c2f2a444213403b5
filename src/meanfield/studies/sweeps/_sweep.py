"""Map a function over a grid of parameters and seeds, on dask.distributed or in a plain loop.

:func:`sweep` is the engine under every study: it validates the grid, cuts it
into tasks, runs them on a scheduler, writes each finished task to a store (so
an interrupted sweep resumes) and assembles one ``xarray.Dataset`` with the
swept parameters as dimensions.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import inspect
import itertools
import json
import logging
import math
import os
import re
import socket
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from ...io._files import dataset_checksum, write_netcdf
from ..._version import __version__
from ._store import Store, point_json

__all__ = ["sweep", "SweepError"]

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT = 5.0
"""Seconds to wait for a scheduler given by address before giving up."""

WORKER_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
"""Environment of LocalCluster workers: one thread each, so n workers use n cores."""

WORKER_MALLOC = {"MALLOC_MMAP_THRESHOLD_": 2**25, "MALLOC_TRIM_THRESHOLD_": 2**25}
"""glibc malloc settings of LocalCluster workers, set before each worker process starts (dask's
``distributed.nanny.pre-spawn-environ``). dask's own ``MALLOC_TRIM_THRESHOLD_`` of 64 KiB hands freed memory
at the top of the heap back to the system at once, and setting any malloc threshold turns off glibc's dynamic
mmap threshold, so every array of 128 KiB or more becomes a fresh mapping: both are faulted in again page by
page. The integrators allocate such temporaries at every step, so a phase-diagram task ran 10–40 % slower in
a worker than in the calling process (163 000 page faults and 0.4 s of system time per 2 s task at d = 8,
against 1 200 in process). 32 MiB for both, the ceiling glibc's own dynamic mmap threshold rises to, keeps
them on the heap (about 20 faults); freed blocks above 32 MiB are still returned to the system."""

DASK_LOG_LEVEL = logging.WARNING
"""Least level of the dask.distributed records a local cluster shows (its INFO lines are not news)."""

PIECE_ATTRS = ("sweep_task", "sweep_point", "sha256", "wall_time", "host", "pid")


class SweepError(RuntimeError):
    """Some tasks of a sweep failed; the others finished (and are in the store, if any).

    :func:`sweep` raises it after every other task has finished: a failed task is one whose call of ``func``
    raised, or whose worker died repeatedly. The finished pieces stay in the sweep's store, and
    ``resume=True`` runs only the missing tasks.

    Parameters
    ----------
    message : str
        The error's text (``str(error)``): how many of the sweep's tasks failed, whether the finished ones were
        kept in a store, and one line per failed task with its parameter values and error.
    missing : dict
        Task index tuple -> (parameter values, error message), for every failed task; stored as the attribute
        ``missing``. A task's index holds its position along each swept dimension (a block's index for a batched
        one), its parameter values are the keyword arguments it called ``func`` with, and its error message is
        ``"<ExceptionType>: <text>"``.

    Attributes
    ----------
    missing : dict
        Task index tuple -> (parameter values, error message), for every failed task.

    Examples
    --------
    >>> import numpy as np
    >>> import xarray as xr
    >>> from meanfield.studies import SweepError, sweep
    >>> def root(x):
    ...     if x < 0:
    ...         raise ValueError("x < 0")
    ...     return xr.Dataset({"y": np.sqrt(x)})
    >>> try:
    ...     sweep(root, {"x": [4.0, -1.0, 9.0]}, scheduler="serial", progress=False)
    ... except SweepError as error:
    ...     print(error.missing)
    ...     print(str(error).splitlines()[-1])
    {(1,): ({'x': -1.0}, 'ValueError: x < 0')}
      task (1,): x=-1.0: ValueError: x < 0
    """

    def __init__(self, message: str, missing: dict[tuple[int, ...], tuple[dict[str, Any], str]]) -> None:
        super().__init__(message)
        self.missing = missing


def sweep(
    func: Callable[..., xr.Dataset],
    grid: Mapping[str, Sequence[Any] | np.ndarray],
    *,
    seeds: int | Sequence[int] | None = None,
    batch: Mapping[str, int] | None = None,
    fixed: Mapping[str, Any] | None = None,
    store: str | os.PathLike | None = None,
    resume: bool = False,
    scheduler: Any = None,
    n_workers: int | None = None,
    progress: bool = True,
) -> xr.Dataset:
    """Run ``func`` at every point of a grid of parameters (and seeds); one Dataset with them as dimensions.

    The grid's dimensions are the grid names in order, then ``"seed"`` if
    ``seeds`` is given. Dimensions named in ``batch`` are cut into blocks;
    a task is one point of the other dimensions times one block of each
    batched one, and its index is the tuple (point index or block index per
    dimension). A task calls ``func(**point, **fixed)``, where ``point`` maps
    each swept name to a scalar, or to the block (a 1-D array) for batched
    dimensions.

    Parameters
    ----------
    func : callable
        A module-level function (workers import it by name) returning an
        ``xarray.Dataset``. Its dims must include every batched dimension, with
        the block's length, and no other swept name. All randomness must come
        from the ``seed`` value(s) it receives, one generator per system, e.g.
        ``np.random.default_rng(np.random.SeedSequence([seed, ...]))``, so a
        system's result does not depend on the block it ran in and is
        reproducible bit for bit from the recorded seeds.
    grid : dict
        Name -> 1-D sequence of numbers or strings (finite, non-empty). Each
        name must be a parameter of ``func``.
    seeds : int or sequence of int, optional
        ``k`` means ``range(k)``; otherwise distinct non-negative integers.
        Adds the last dimension ``"seed"`` and the parameter ``seed``.
    batch : dict, optional
        Dimension -> block length, e.g. ``{"seed": 256}``. Size blocks so a task
        takes at least ~0.1 s: dask costs about 1 ms per task, and many small
        systems run faster as one batched call.
    fixed : dict, optional
        Keyword arguments passed unchanged to every call (recorded in attrs).
    store : path, optional
        Directory holding ``manifest.json`` and one NetCDF piece per finished
        task (``pieces/<i>_<j>….nc``), written atomically by the worker that ran
        the task, with a checksum. Needed for ``resume``. Workers must see the
        same file system.
    resume : bool
        Skip tasks whose piece is in the store and verifies; run the rest. The
        store must have been made by the same sweep (function, grid, seeds,
        batch, fixed); otherwise it is refused naming the field that differs.
        Without ``resume`` a store that already holds a sweep is refused.
    scheduler : None, str or distributed.Client
        None or ``"local"``: a ``distributed.LocalCluster`` of ``n_workers``
        single-threaded worker processes, started and closed here;
        ``"serial"``: a plain loop in this process, no dask; ``"tcp://host:port"``:
        the scheduler at that address (workers must be able to import ``func``);
        a ``distributed.Client``: used as is, not closed.
    n_workers : int, optional
        Workers of the local cluster; default ``os.cpu_count()``.
    progress : bool
        Show a tqdm bar over tasks.

    Returns
    -------
    xarray.Dataset
        Every variable of ``func``'s result with dims (the grid names, ``"seed"``,
        then its own other dims); coordinates for the swept dimensions; the attrs
        that ``func``'s results share (see below) plus ``function``, ``grid``,
        ``batch``, ``fixed`` (JSON), ``seeds``, ``tasks_total``, ``tasks_run``,
        ``tasks_skipped``, ``store``, ``scheduler``, ``n_workers``,
        ``wall_time`` (s) and ``meanfield_version``.

        Swept parameters are dimensions, never attrs: an attr of ``func``'s
        results is kept only when every task returned it with an equal value
        (a fact of the whole sweep). An attr named like a swept dimension
        (a grid name, or ``seed`` when seeds are swept) is dropped, as is one
        that some task lacks or whose value differs between tasks; read those
        values from the coordinates, or return them as data variables.

    Raises
    ------
    ValueError, TypeError
        Bad grid, seeds, batch, fixed, store or scheduler (before any work).
    ConnectionError
        No scheduler answers at the given address within 5 s.
    SweepError
        Some tasks failed (an exception in ``func``, or their worker died
        repeatedly); raised after every other task finished, listing the
        failed tasks with their parameters and errors. Finished pieces stay in
        the store; ``resume=True`` runs only the missing ones.

    Examples
    --------
    >>> import numpy as np
    >>> import xarray as xr
    >>> from meanfield.studies import sweep
    >>> def mean_of_normals(scale, seed, n=1000):
    ...     rng = np.random.default_rng(np.random.SeedSequence([seed]))
    ...     return xr.Dataset({"mean": scale * rng.standard_normal(n).mean()})
    >>> ds = sweep(mean_of_normals, {"scale": [1.0, 2.0]}, seeds=4, scheduler="serial", progress=False)
    >>> ds["mean"].dims, ds.attrs["tasks_total"]
    (('scale', 'seed'), 8)
    >>> # each seed draws the same normals at every scale: the means scale with it
    >>> bool(np.allclose(ds["mean"].sel(scale=2.0), 2 * ds["mean"].sel(scale=1.0)))
    True
    """
    start = time.perf_counter()
    plan = _Plan.build(func, grid, seeds, batch, fixed)
    if not isinstance(resume, bool):
        raise TypeError(f"resume must be True or False, got {resume!r}")
    if resume and store is None:
        raise ValueError("resume=True needs a store: pass store=<directory>")
    kind = _scheduler_kind(scheduler, n_workers)
    box = Store(store) if store is not None else None
    manifest = plan.manifest()
    if box is not None:
        box.check(manifest, resume)
    with _connect(kind, scheduler, n_workers) as client:
        with box.open(manifest, resume) if box is not None else contextlib.nullcontext():
            results: dict[tuple[int, ...], xr.Dataset] = {}
            if box is not None and resume:
                for task in plan.tasks:
                    piece = box.finished(task, point_json(plan.point(task)), plan.identity)
                    if piece is not None:
                        results[task] = piece
            skipped = len(results)
            pending = [task for task in plan.tasks if task not in results]
            logger.info("sweep of %s: %d tasks, %d already in the store", plan.function, len(plan.tasks), skipped)
            runner = _run_serial if client is None else _run_dask
            failures = runner(client, plan, pending, box, results, progress, skipped)
        address = "serial" if client is None else str(client.scheduler.address)
        workers = 1 if client is None else len(client.scheduler_info()["workers"])
    if failures:
        raise _sweep_error(plan, failures, box)
    ds = plan.assemble(results)
    ds.attrs.update({
        "function": plan.function,
        "grid": json.dumps(plan.grid_json()),
        "batch": json.dumps(plan.batch),
        "fixed": json.dumps(plan.fixed_json, sort_keys=True),
        **({"seeds": np.asarray(plan.values["seed"], dtype=np.int64)} if plan.has_seeds else {}),
        "tasks_total": len(plan.tasks),
        "tasks_run": len(pending),
        "tasks_skipped": skipped,
        "store": str(box.path) if box is not None else "",
        "scheduler": address,
        "n_workers": workers,
        "wall_time": time.perf_counter() - start,
        "meanfield_version": __version__,
    })
    return ds


@dataclasses.dataclass
class _Plan:
    """A validated sweep: dimensions, their values, blocks and the task list."""

    func: Callable[..., xr.Dataset]
    function: str
    dims: list[str]
    values: dict[str, np.ndarray]
    batch: dict[str, int]
    fixed: dict[str, Any]
    fixed_json: dict[str, Any]
    has_seeds: bool
    tasks: list[tuple[int, ...]]

    @classmethod
    def build(cls, func: Any, grid: Any, seeds: Any, batch: Any, fixed: Any) -> _Plan:
        if not callable(func):
            raise TypeError(f"func must be a callable returning an xarray.Dataset, got {func!r}")
        function = _function_name(func)
        if not isinstance(grid, Mapping):
            raise TypeError(f"grid must be a dict of name -> 1-D sequence of values, got {type(grid).__name__}")
        values: dict[str, np.ndarray] = {}
        for name, seq in grid.items():
            if not isinstance(name, str) or not name.isidentifier():
                raise ValueError(f"grid names must be Python identifiers (parameters of func), got {name!r}")
            values[name] = _grid_values(name, seq)
        has_seeds = seeds is not None
        if has_seeds:
            if "seed" in values:
                raise ValueError("grid has a dimension named 'seed' and seeds are given: name the dimension "
                                 "otherwise or drop seeds")
            values["seed"] = _seed_values(seeds)
        if not values:
            raise ValueError("grid is empty and no seeds are given: nothing to sweep")
        dims = list(values)
        blocks = _batch(batch, values)
        fixed = _fixed(fixed, dims)
        _check_signature(func, function, dims, fixed, has_seeds)
        ranges = [range(math.ceil(values[d].size / blocks[d])) if d in blocks else range(values[d].size) for d in dims]
        tasks = [tuple(t) for t in itertools.product(*ranges)]
        return cls(func, function, dims, values, blocks, fixed, _describe(fixed), has_seeds, tasks)

    def grid_json(self) -> dict[str, list[Any]]:
        return {d: self.values[d].tolist() for d in self.dims if not (self.has_seeds and d == "seed")}

    def manifest(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "grid": self.grid_json(),
            "seeds": self.values["seed"].tolist() if self.has_seeds else None,
            "batch": self.batch,
            "fixed": self.fixed_json,
        }

    @functools.cached_property
    def identity(self) -> str:
        """SHA-256 of the manifest (function, grid, seeds, batch, fixed): the sweep every piece says it belongs to."""
        return hashlib.sha256(json.dumps(self.manifest(), sort_keys=True).encode()).hexdigest()

    def index(self, task: tuple[int, ...]) -> tuple[int | slice, ...]:
        """Position of a task's block in the full arrays."""
        return tuple(slice(i * self.batch[d], (i + 1) * self.batch[d]) if d in self.batch else i
                     for d, i in zip(self.dims, task))

    def point(self, task: tuple[int, ...]) -> dict[str, Any]:
        """Keyword arguments of a task: scalars, and the blocks of batched dimensions."""
        return {d: self.values[d][k] if isinstance(k, slice) else self.values[d][k].item()
                for d, k in zip(self.dims, self.index(task))}

    def assemble(self, results: dict[tuple[int, ...], xr.Dataset]) -> xr.Dataset:
        """One Dataset with dims (*swept dims, *func's other dims) from the pieces of every task."""
        first = results[self.tasks[0]]
        batched = [d for d in self.dims if d in self.batch]
        sizes = [self.values[d].size for d in self.dims]
        data = {}
        for name, var in first.data_vars.items():
            other = [d for d in var.dims if d not in batched]
            other_sizes = [first.sizes[d] for d in other]
            dtype = np.result_type(*(results[t][name].dtype for t in self.tasks if name in results[t]))
            full = np.empty((*sizes, *other_sizes), dtype=dtype)
            for task in self.tasks:
                full[self.index(task)] = self._block(results[task], name, task, batched, other, other_sizes)
            data[name] = ((*self.dims, *other), full, var.attrs)
        coords: dict[str, Any] = {}
        for name, coord in first.coords.items():
            if not set(coord.dims) & set(batched) and name not in self.dims:
                coords[name] = coord.variable
        for d in self.dims:
            long_name = "seed of the system" if self.has_seeds and d == "seed" else "swept parameter"
            coords[d] = (d, self.values[d], {"long_name": long_name})
        return xr.Dataset(data, coords=coords, attrs=self.common_attrs(results))

    def common_attrs(self, results: dict[tuple[int, ...], xr.Dataset]) -> dict[str, Any]:
        """The attrs of the pieces that are facts of the whole sweep.

        An attr is kept (with the first task's value) when every task's piece
        has it with an equal value. Dropped: the per-piece record
        (:data:`PIECE_ATTRS`); every attr named like a swept dimension
        (``seed`` among them when seeds are swept), since the dimension's
        coordinate holds its values; and every attr missing from a piece or
        whose value differs between pieces.
        """
        first = results[self.tasks[0]]
        attrs = {k: v for k, v in first.attrs.items() if k not in PIECE_ATTRS and k not in self.dims}
        for task in self.tasks[1:]:
            if not attrs:
                break
            other = results[task].attrs
            attrs = {k: v for k, v in attrs.items() if k in other and _same_attr(v, other[k])}
        return attrs

    def _block(self, piece: xr.Dataset, name: str, task: tuple[int, ...], batched: list[str],
               other: list[str], other_sizes: list[int]) -> np.ndarray:
        if name not in piece.data_vars:
            raise ValueError(f"task {task} ({self.point(task)}) returned no variable {name!r}, which the first "
                             "task returned; func must return the same variables for every task")
        da = piece[name]
        for d in batched:
            if d not in da.dims:
                da = da.expand_dims({d: piece.sizes[d]})
        da = da.transpose(*batched, *other)
        got = [da.sizes[d] for d in other] if set(other) <= set(da.dims) else None
        if got != other_sizes or set(da.dims) != set(batched) | set(other):
            raise ValueError(f"task {task} returned {name!r} with dims {dict(piece[name].sizes)}, the first task "
                             f"had {dict(zip(other, other_sizes))} besides the batched dims {batched}")
        return da.values


def _same_attr(a: Any, b: Any) -> bool:
    """Whether two attr values are equal, as written to NetCDF: a piece read from a store holds numpy scalars
    and arrays where the task returned Python numbers and lists; NaN equals NaN."""
    if isinstance(a, (str, bytes)) or isinstance(b, (str, bytes)):
        return isinstance(a, (str, bytes)) and isinstance(b, (str, bytes)) and a == b
    try:
        x, y = np.asarray(a), np.asarray(b)
    except (TypeError, ValueError):
        return False
    if x.shape != y.shape:
        return False
    try:
        return bool(np.array_equal(x, y, equal_nan=True))
    except TypeError:  # dtypes without NaN (strings, objects)
        try:
            return bool(np.array_equal(x, y))
        except (TypeError, ValueError):
            return False


def _function_name(func: Any) -> str:
    module = getattr(func, "__module__", None)
    qualname = getattr(func, "__qualname__", None)
    return f"{module}:{qualname}" if module and qualname else repr(func)


def _grid_values(name: str, seq: Any) -> np.ndarray:
    if isinstance(seq, (str, bytes)) or np.ndim(seq) != 1:
        raise ValueError(f"grid[{name!r}] must be a 1-D sequence of values, got {seq!r}")
    arr = np.asarray(seq)
    if arr.size == 0:
        raise ValueError(f"grid[{name!r}] is empty; give at least one value")
    if arr.dtype.kind not in "biufU":
        raise TypeError(f"grid[{name!r}] must hold numbers or strings, got dtype {arr.dtype} ({seq!r})")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError(f"grid[{name!r}] must hold finite values, got {float(arr[~np.isfinite(arr)][0])} in {seq!r}")
    values, counts = np.unique(arr, return_counts=True)
    if np.any(counts > 1):
        raise ValueError(f"grid[{name!r}] must hold distinct values (each becomes a coordinate), "
                         f"got {values[counts > 1][0].item()!r} {int(counts[counts > 1][0])} times in {seq!r}")
    return arr


def _seed_values(seeds: Any) -> np.ndarray:
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        if seeds < 1:
            raise ValueError(f"seeds must be a positive count or a sequence of non-negative integers, got {seeds}")
        return np.arange(int(seeds), dtype=np.int64)
    if isinstance(seeds, (str, bytes, bool, float)) or np.ndim(seeds) != 1:
        raise TypeError(f"seeds must be an int count or a 1-D sequence of non-negative integers, got {seeds!r}")
    bad = [s for s in seeds if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0]
    if bad:
        raise ValueError(f"seeds must be non-negative integers, got {bad[0]!r} in {list(seeds)!r}")
    arr = np.asarray(list(seeds), dtype=np.int64)
    if arr.size == 0:
        raise ValueError("seeds is empty; give a positive count or at least one seed")
    if np.unique(arr).size != arr.size:
        raise ValueError(f"seeds must be distinct, got {arr.tolist()!r}")
    return arr


def _batch(batch: Any, values: dict[str, np.ndarray]) -> dict[str, int]:
    if batch is None:
        return {}
    if not isinstance(batch, Mapping):
        raise TypeError(f"batch must be a dict of dimension -> block length, got {batch!r}")
    blocks = {}
    for dim, length in batch.items():
        if dim not in values:
            raise ValueError(f"batch names {dim!r}, which is not a swept dimension; swept: {list(values)}")
        if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 1:
            raise ValueError(f"batch[{dim!r}] must be a positive integer block length, got {length!r}")
        blocks[dim] = int(length)
    return blocks


def _fixed(fixed: Any, dims: list[str]) -> dict[str, Any]:
    if fixed is None:
        return {}
    if not isinstance(fixed, Mapping):
        raise TypeError(f"fixed must be a dict of keyword arguments, got {type(fixed).__name__}")
    clash = [k for k in fixed if k in dims]
    if clash:
        raise ValueError(f"fixed and the swept dimensions both name {clash[0]!r}; a parameter is either swept or fixed")
    return dict(fixed)


def _check_signature(func: Any, function: str, dims: list[str], fixed: dict[str, Any], has_seeds: bool) -> None:
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):  # builtins without a signature: let the call decide
        return
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    accepted = [n for n, p in params.items() if p.kind in kinds]
    given = [*dims, *fixed]
    if not any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values()):
        for name in given:
            if name not in accepted:
                source = "fixed" if name in fixed else "seeds" if name == "seed" and has_seeds else "grid"
                raise ValueError(f"{source} names {name!r}, which is not a parameter of {function}; "
                                 f"its parameters are {accepted}")
    for name, p in params.items():
        if p.default is inspect.Parameter.empty and p.kind != inspect.Parameter.VAR_KEYWORD and \
                p.kind != inspect.Parameter.VAR_POSITIONAL and name not in given:
            raise ValueError(f"{function} needs {name!r}, which is neither swept (grid, seeds) nor in fixed")


#: a memory address in a repr (``<function f at 0x7f…>``)
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _describe(value: Any) -> Any:
    """A JSON-able record of a fixed argument by what it is, the same in every process and session.

    Plain values as they are; arrays and datasets by digest; dataclasses (the models, domains, laws) field
    by field; other objects with parameters by their ``attrs`` (a model's), a frozen scipy.stats law by its
    name, ``args`` and ``kwds``, a function by its qualified name and a digest of its code, any other object
    by its attributes. A repr holding a memory address (``<… at 0x…>``) would differ in every process, so a
    store could never be resumed: such an object is refused by name.
    """
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_describe(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _describe(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        digest = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
        return {"ndarray": str(value.dtype), "shape": list(value.shape), "sha256": digest}
    if isinstance(value, xr.DataArray):
        value = value.to_dataset(name=value.name or "values")
    if isinstance(value, xr.Dataset):
        return {"Dataset": sorted(map(str, value.data_vars)), "sha256": dataset_checksum(value)}
    kind = f"{type(value).__module__}.{type(value).__qualname__}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"type": kind, **{f.name: _describe(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    if all(hasattr(value, name) for name in ("dist", "args", "kwds")):  # a frozen scipy.stats law
        return {"scipy.stats": str(value.dist.name), "args": _describe(list(value.args)),
                "kwds": _describe(dict(value.kwds))}
    if isinstance(getattr(value, "attrs", None), Mapping):
        return {"type": kind, "attrs": _describe(dict(value.attrs))}
    code = getattr(value, "__code__", None)
    if code is not None:
        digest = hashlib.sha256(code.co_code + repr(code.co_consts).encode()).hexdigest()
        return {"function": f"{getattr(value, '__module__', '?')}:{value.__qualname__}", "code_sha256": digest}
    text = repr(value)
    if _ADDRESS.search(text) is None:
        return {"type": kind, "repr": text}
    if getattr(value, "__dict__", None):
        return {"type": kind, **{str(k): _describe(v) for k, v in sorted(vars(value).items())}}
    raise ValueError(f"fixed holds a {kind} whose only description is its repr {text!r}, which carries a memory "
                     "address and differs in every process, so a store of this sweep could never be resumed; "
                     "pass its parameters in fixed instead (or an object with .attrs or a dataclass)")


def _scheduler_kind(scheduler: Any, n_workers: Any) -> str:
    if n_workers is not None:
        if isinstance(n_workers, bool) or not isinstance(n_workers, (int, np.integer)) or n_workers < 1:
            raise ValueError(f"n_workers must be a positive integer, got {n_workers!r}")
    if scheduler is None or scheduler == "local":
        return "local"
    if n_workers is not None:
        raise ValueError(f"n_workers sizes the local cluster only; it cannot be used with scheduler={scheduler!r}")
    if scheduler == "serial":
        return "serial"
    if isinstance(scheduler, str):
        if "://" not in scheduler:
            raise ValueError(f"scheduler must be None, 'local', 'serial', an address like 'tcp://host:8786' or a "
                             f"distributed.Client, got {scheduler!r}")
        return "address"
    from distributed import Client

    if isinstance(scheduler, Client):
        return "client"
    raise TypeError(f"scheduler must be None, 'local', 'serial', an address or a distributed.Client, "
                    f"got {type(scheduler).__name__}")


@contextlib.contextmanager
def worker_malloc() -> Iterator[None]:
    """A context in which LocalCluster workers start with :data:`WORKER_MALLOC`.

    dask's nanny takes a pre-spawn variable from this process's environment before its config, and starting
    a worker copies its pre-spawn variables into this process's environment; so both are set here, and both
    are restored when the context ends.
    """
    import dask

    saved = {name: os.environ.get(name) for name in WORKER_MALLOC}
    os.environ.update({name: str(value) for name, value in WORKER_MALLOC.items()})
    try:
        with dask.config.set({f"distributed.nanny.pre-spawn-environ.{name}": value
                              for name, value in WORKER_MALLOC.items()}):
            yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def _connect(kind: str, scheduler: Any, n_workers: int | None) -> Iterator[Any]:
    """The dask Client to run on (None for serial); closes what it started."""
    if kind == "serial":
        yield None
        return
    if kind == "client":
        yield scheduler
        return
    from distributed import Client, LocalCluster

    if kind == "address":
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as err:
            raise ConnectionError(f"no dask scheduler answered at {scheduler!r} within {CONNECT_TIMEOUT:g} s: "
                                  f"{err}") from None
        try:
            yield client
        finally:
            client.close()
        return
    with _quiet_dask_logs(DASK_LOG_LEVEL):
        with warnings.catch_warnings():  # without a dashboard, the scheduler's metrics server still asks for 8787
            warnings.filterwarnings("ignore", message="Port 8787 is already in use", category=UserWarning)
            try:
                with worker_malloc():
                    cluster = LocalCluster(n_workers=n_workers or os.cpu_count() or 1, threads_per_worker=1,
                                           processes=True, dashboard_address=None, env=WORKER_ENV,
                                           silence_logs=DASK_LOG_LEVEL)
            except RuntimeError as err:  # a worker process died while starting, most often re-running the script
                raise RuntimeError(
                    f"the local dask cluster could not start its worker processes ({err}); each worker re-imports "
                    "the script that called sweep, so a script must call it under `if __name__ == \"__main__\":` "
                    "(or pass scheduler='serial')") from err
        with cluster, Client(cluster) as client:
            yield client


@contextlib.contextmanager
def _quiet_dask_logs(level: int) -> Iterator[None]:
    """Hold the ``distributed`` loggers of this process at ``level`` or above while a local cluster lives.

    The scheduler and the nannies of a LocalCluster run in this process and log
    its start, every worker and client, and its close at INFO. ``silence_logs``
    of LocalCluster only lowers distributed's own stderr handler, which
    distributed does not install when the root logger already has a handler (a
    script or the CLI called ``logging.basicConfig``): the records then reach
    the root handler at the level the dask config (``distributed.logging``)
    gave ``distributed``, INFO by default, and its children may have levels of
    their own. So raise ``distributed`` and every ``distributed.*`` logger with
    a level below ``level`` to ``level``, and restore them afterwards. The
    workers are other processes: ``silence_logs`` sets their handler to
    ``level``. Warnings and errors still show.
    """
    names = ["distributed", *sorted(n for n in logging.Logger.manager.loggerDict if n.startswith("distributed."))]
    changed = []
    for name in names:
        log = logging.getLogger(name)
        if log.level < level and (log.level != logging.NOTSET or name == "distributed"):  # NOTSET: inherits
            changed.append((log, log.level))
            log.setLevel(level)
    try:
        yield
    finally:
        for log, old in changed:
            log.setLevel(old)


def _run_task(func: Callable[..., xr.Dataset], task: tuple[int, ...], point: dict[str, Any], fixed: dict[str, Any],
              batched: dict[str, int], path: str | None, identity: str) -> xr.Dataset:
    """Run one task (on a worker): call func, check and label its result (task, point, the sweep's
    ``identity``), write its piece."""
    start = time.perf_counter()
    out = func(**point, **fixed)
    wall = time.perf_counter() - start
    if not isinstance(out, xr.Dataset):
        raise TypeError(f"func must return an xarray.Dataset, got {type(out).__name__} for task {task}")
    for d, v in point.items():
        if d in batched:
            if out.sizes.get(d) != len(v):
                raise ValueError(f"func's result for task {task} must have dimension {d!r} of length {len(v)} "
                                 f"(the block), got dims {dict(out.sizes)}")
        elif d in out.dims:
            raise ValueError(f"func's result for task {task} has dimension {d!r}, a scalar swept parameter; "
                             "the sweep adds it")
    out = out.assign_coords({d: (d, point[d]) for d in batched})
    out.attrs.update({
        "sweep_task": np.asarray(task, dtype=np.int64),
        "sweep_point": point_json(point),
        "sweep_id": identity,
        "wall_time": wall,
        "host": socket.gethostname(),
        "pid": os.getpid(),
    })
    if path is not None:
        out.attrs["sha256"] = write_netcdf(out, path)  # atomically, with its checksum
    return out


def _progress(total: int, skipped: int, enabled: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=skipped, desc="sweep", unit="task", leave=False, disable=not enabled)


def _run_serial(client: None, plan: _Plan, pending: list[tuple[int, ...]], box: Store | None,
                results: dict[tuple[int, ...], xr.Dataset], progress: bool, skipped: int) -> dict[tuple[int, ...], str]:
    failures = {}
    with _progress(len(plan.tasks), skipped, progress) as bar:
        for task in pending:
            path = str(box.piece_path(task)) if box is not None else None
            try:
                results[task] = _run_task(plan.func, task, plan.point(task), plan.fixed, plan.batch, path,
                                          plan.identity)
            except Exception as err:  # reported with every other failure once the rest has run
                failures[task] = f"{type(err).__name__}: {err}"
                logger.warning("task %s failed: %s", task, failures[task])
            bar.update()
    return failures


def _run_dask(client: Any, plan: _Plan, pending: list[tuple[int, ...]], box: Store | None,
              results: dict[tuple[int, ...], xr.Dataset], progress: bool, skipped: int) -> dict[tuple[int, ...], str]:
    from distributed import as_completed

    failures = {}
    if not pending:
        return failures
    token = uuid.uuid4().hex[:8]
    # a task, not scattered data: the scheduler can recompute it if the worker holding it dies
    fixed = client.submit(dict, plan.fixed, key=f"sweep-fixed-{token}", pure=False)
    name = plan.function.rpartition(":")[2]
    futures = client.map(
        _run_task,
        [plan.func] * len(pending),
        pending,
        [plan.point(task) for task in pending],
        [fixed] * len(pending),
        [plan.batch] * len(pending),
        [str(box.piece_path(task)) if box is not None else None for task in pending],
        [plan.identity] * len(pending),
        key=[f"sweep-{name}-{token}-{'_'.join(map(str, task))}" for task in pending],
        pure=False,
    )
    task_of = {future.key: task for future, task in zip(futures, pending)}
    with _progress(len(plan.tasks), skipped, progress) as bar:
        for future, result in as_completed(futures, with_results=True, raise_errors=False):
            task = task_of[future.key]
            if future.status == "finished":
                results[task] = result
            else:
                err = future.exception() if future.status == "error" else None
                failures[task] = (f"{type(err).__name__}: {err}" if err is not None
                                  else f"the task was {future.status} by the scheduler")
                logger.warning("task %s failed: %s", task, failures[task])
            future.release()
            bar.update()
    fixed.release()
    return failures


def _sweep_error(plan: _Plan, failures: dict[tuple[int, ...], str], box: Store | None) -> SweepError:
    missing = {task: (plan.point(task), failures[task]) for task in plan.tasks if task in failures}
    lines = []
    for task, (point, message) in missing.items():
        shown = ", ".join(f"{k}={np.asarray(v).tolist()}" for k, v in point.items())
        lines.append(f"  task {task}: {shown}: {message}")
    kept = (f"the {len(plan.tasks) - len(missing)} finished tasks are in store {str(box.path)!r}; "
            "resume=True runs only the missing ones" if box is not None else "no store was given, nothing was kept")
    return SweepError(f"{len(missing)} of {len(plan.tasks)} tasks of {plan.function} failed ({kept}):\n"
                      + "\n".join(lines), missing)

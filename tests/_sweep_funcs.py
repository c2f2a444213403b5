"""Functions swept by the sweep tests; a module of its own so worker processes import them by name."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import xarray as xr


def noisy_moments(scale: float, shift, seed, n: int = 50) -> xr.Dataset:
    """Per system (one per seed): n normal draws times scale plus shift, their mean and the draws themselves.

    ``shift`` and ``seed`` may be blocks (1-D arrays): the result then has dims ("shift", "seed", ...).
    """
    shifts, seeds = np.atleast_1d(shift), np.atleast_1d(seed)
    draws = np.stack([np.random.default_rng(np.random.SeedSequence([int(s), 7])).standard_normal(n) for s in seeds])
    draws = scale * draws[None] + shifts[:, None, None]
    ds = xr.Dataset(
        {"mean": (("shift", "seed"), draws.mean(axis=2)), "draws": (("shift", "seed", "sample"), draws),
         "offset": (("shift",), shifts)},
        coords={"sample": np.arange(n)},
        attrs={"law": "normal"},
    )
    return ds.isel({d: 0 for d, v in (("shift", shift), ("seed", seed)) if np.ndim(v) == 0})


def slow_square(x: float, seed: int, delay: float) -> xr.Dataset:
    """x² + seed after sleeping ``delay`` seconds."""
    time.sleep(delay)
    return xr.Dataset({"value": x * x + seed})


def dies_once(x: float, marker: str) -> xr.Dataset:
    """Kill the worker process the first time x == 2 is run (a marker file remembers it)."""
    if x == 2 and not Path(marker).exists():
        Path(marker).write_text(str(os.getpid()))
        os._exit(1)
    return xr.Dataset({"value": 10.0 * x})


def fails_at_two(x: float) -> xr.Dataset:
    """Raise for x == 2, return 10 x otherwise."""
    if x == 2:
        raise ArithmeticError(f"no convergence at x={x}")
    return xr.Dataset({"value": 10.0 * x})


def ignores_its_block(x) -> xr.Dataset:
    """Wrongly returns one value for a block of x."""
    return xr.Dataset({"value": 1.0})


def keeps_the_swept_dim(x: float) -> xr.Dataset:
    """Wrongly returns the scalar swept parameter as a dimension."""
    return xr.Dataset({"value": (("x",), [x])})


def thread_environment(x: float) -> xr.Dataset:
    """The thread limits seen by the process running the task."""
    names = ["OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"]
    return xr.Dataset({"threads": (("variable",), [os.environ.get(k, "unset") for k in names])},
                      coords={"variable": names})


def malloc_environment(x: float) -> xr.Dataset:
    """The glibc malloc thresholds the process running the task was started with."""
    names = ["MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"]
    return xr.Dataset({"malloc": (("variable",), [os.environ.get(k, "unset") for k in names])},
                      coords={"variable": names})


def sized_result(n: int) -> xr.Dataset:
    """n float64 values (8 n bytes): a piece of a chosen size."""
    return xr.Dataset({"values": ("i", np.arange(float(n)))})

"""Observers called by :func:`solvers.evolve` at every output time.

* :class:`ProgressBar`: a tqdm bar over simulated time.
* :class:`Checkpoint`: writes the outputs reached so far to a NetCDF file at
  most every ``interval`` seconds of wall time (and always at the end), so an
  interrupted run keeps what it computed and can be resumed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import xarray as xr

from ._files import write_atomically

__all__ = ["ProgressBar", "Checkpoint"]


class ProgressBar:
    """Progress over simulated time, shown with tqdm.

    Parameters
    ----------
    t : ndarray
        Output times; the bar runs from ``t[0]`` to ``t[-1]``.
    description : str
        Label of the bar.
    """

    def __init__(self, t: np.ndarray, description: str = "solve") -> None:
        from tqdm.auto import tqdm

        self._t0 = float(t[0])
        self._bar = tqdm(total=float(t[-1] - t[0]), desc=description, unit="t.u.", leave=False,
                         bar_format="{l_bar}{bar}| t={n:.3g}/{total:.3g} [{elapsed}<{remaining}]")
        self._last = 0.0

    def __call__(self, index: int, t: float, y: np.ndarray) -> None:
        done = float(t) - self._t0
        self._bar.update(done - self._last)
        self._last = done

    def close(self) -> None:
        self._bar.close()


class Checkpoint:
    """Write the outputs reached so far to ``path`` as they are computed.

    Parameters
    ----------
    path : str or Path
        NetCDF file, rewritten atomically (written beside, then renamed).
    build : callable
        ``build(n_reached) -> xarray.Dataset`` of the first ``n_reached`` outputs.
    interval : float
        Minimum wall-clock seconds between writes.
    """

    def __init__(self, path: str | os.PathLike, build: Callable[[int], xr.Dataset], interval: float = 30.0) -> None:
        self.path = Path(path)
        self._build = build
        self._interval = float(interval)
        self._last_write = time.monotonic()
        self.n_written = 0

    def __call__(self, index: int, t: float, y: np.ndarray) -> None:
        if time.monotonic() - self._last_write >= self._interval:
            self.write(index + 1)

    def write(self, n_reached: int) -> None:
        """Write the first ``n_reached`` outputs now."""
        self.save(self._build(n_reached))
        self.n_written = n_reached

    def save(self, ds: xr.Dataset) -> None:
        """Write ``ds`` to the file atomically (beside it, then renamed)."""
        write_atomically(self.path, ds.to_netcdf)
        self._last_write = time.monotonic()

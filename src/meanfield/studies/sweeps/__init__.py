"""Sweeps: a function mapped over a grid of parameters and seeds, on dask.distributed or in a plain loop,
with an on-disk store that lets an interrupted sweep resume. The other rooms of :mod:`meanfield.studies`
build their diagrams on it."""

from __future__ import annotations

from ._sweep import SweepError, sweep

__all__ = ["SweepError", "sweep"]

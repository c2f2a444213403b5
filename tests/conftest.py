"""Shared test set-up: strict floating point, a seeded generator, no display."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _strict_floating_point():
    old = np.seterr(all="raise", under="ignore")
    yield
    np.seterr(**old)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261130)


@pytest.fixture
def no_figure_files(monkeypatch):
    """Figures are drawn but not rasterised: ``Figure.savefig`` creates an empty file. For tests of what a
    command computes and resumes, not of its figures (rasterising a command's PNG costs ~0.3 s)."""
    from pathlib import Path

    from matplotlib.figure import Figure

    monkeypatch.setattr(Figure, "savefig", lambda self, fname, *args, **kwargs: Path(fname).touch())


@pytest.fixture(scope="session")
def dask_client():
    """One LocalCluster of two single-threaded worker processes for the whole session."""
    import warnings

    from distributed import Client, LocalCluster

    with warnings.catch_warnings():  # no dashboard, but the metrics server still asks for port 8787
        warnings.filterwarnings("ignore", message="Port 8787 is already in use", category=UserWarning)
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with cluster, Client(cluster) as client:
        yield client


class CheckpointStop(Exception):
    """Raised right after a checkpoint write by :func:`stop_after_checkpoint_writes`: a run interrupted at a known output."""


@pytest.fixture
def stop_after_checkpoint_writes(monkeypatch):
    """``arm(k)`` makes the k-th checkpoint write raise :class:`CheckpointStop` once the file is written;
    ``arm.disarm()`` restores the writer. Returns the list of time sizes written so far."""
    import meanfield.io._checkpoint as module

    original = module.write_netcdf

    def arm(k: int) -> list[int]:
        written: list[int] = []

        def write_then_stop(ds, target):
            original(ds, target)
            written.append(ds.sizes["time"])
            if len(written) == k:
                raise CheckpointStop

        monkeypatch.setattr(module, "write_netcdf", write_then_stop)
        return written

    arm.disarm = lambda: monkeypatch.setattr(module, "write_netcdf", original)
    return arm

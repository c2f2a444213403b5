"""Faults a new user met on first contact with sweeps: attrs copied from the first task, dask INFO lines on
every CLI sweep, the store summary naming the scheduler."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import xarray as xr

import meanfield as mf
from meanfield.cli import main
from meanfield.studies.sweeps._sweep import _quiet_dask_logs

ROOT = Path(__file__).resolve().parents[1]


def energy_with_attrs(beta: float, seed: int) -> xr.Dataset:
    """A result whose attrs repeat the swept parameters, plus one shared fact and one per-task value."""
    return xr.Dataset({"energy": beta * (seed + 1.0)},
                      attrs={"beta": float(beta), "seed": int(seed), "model": "SA", "tolerance": 1e-6,
                             "n_steps": int(10 * beta + seed), "times": [0.0, 1.0]})


def test_swept_parameters_and_per_task_values_are_not_attrs_of_the_result():
    ds = mf.sweep(energy_with_attrs, {"beta": [1, 4]}, seeds=2, scheduler="serial", progress=False)
    assert ds["beta"].values.tolist() == [1, 4]
    assert "beta" not in ds.attrs and "seed" not in ds.attrs  # dimensions, never attrs
    assert "n_steps" not in ds.attrs  # differs between tasks: not a fact of the sweep
    assert ds.attrs["model"] == "SA" and ds.attrs["tolerance"] == 1e-6  # equal in every task: kept
    assert list(ds.attrs["times"]) == [0.0, 1.0]
    assert ds.attrs["tasks_total"] == 4 and ds.attrs["scheduler"] == "serial"


def test_pieces_resumed_from_a_store_are_compared_like_pieces_run_now(tmp_path):
    store = tmp_path / "store"
    kwargs = {"seeds": 2, "scheduler": "serial", "progress": False, "store": store}
    first = mf.sweep(energy_with_attrs, {"beta": [1, 4]}, **kwargs)
    (store / "pieces" / "1_1.nc").unlink()  # one task runs again, the others are read back from NetCDF
    resumed = mf.sweep(energy_with_attrs, {"beta": [1, 4]}, resume=True, **kwargs)
    assert resumed.attrs["tasks_skipped"] == 3 and resumed.attrs["tasks_run"] == 1
    shared = ("model", "tolerance", "times")
    for name in shared:
        np.testing.assert_array_equal(resumed.attrs[name], first.attrs[name])
    assert not {"beta", "seed", "n_steps"} & set(resumed.attrs)


def test_a_cli_sweep_on_a_local_cluster_prints_no_dask_info_lines(tmp_path):
    argv = [sys.executable, "-m", "meanfield.cli", "kuramoto", "--couplings", "0:3:2", "--particles", "50",
            "--systems", "1", "--t-final", "2", "--average-window", "1", "--workers", "1", "--no-progress",
            "--output", str(tmp_path / "k.nc")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           "MPLBACKEND": "Agg"}
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Kuramoto bifurcation" in done.stdout
    lines = (done.stdout + done.stderr).splitlines()
    assert [line for line in lines if "INFO" in line] == []


def test_quiet_dask_logs_hide_info_keep_warnings_and_restore_the_levels():
    import distributed  # noqa: F401  (its import sets the levels of its loggers from the dask config)

    class Keep(logging.Handler):
        def __init__(self):
            super().__init__(logging.DEBUG)
            self.messages = []

        def emit(self, record):
            self.messages.append(record.getMessage())

    parent, child = logging.getLogger("distributed"), logging.getLogger("distributed.scheduler.first_contact")
    nanny = logging.getLogger("distributed.nanny")
    keep, before = Keep(), parent.level
    parent.addHandler(keep)
    parent.setLevel(logging.INFO)  # distributed's default
    child.setLevel(logging.DEBUG)  # a child with a level of its own, as the dask config can set
    try:
        with _quiet_dask_logs(logging.WARNING):
            child.info("cluster started")
            nanny.info("nanny started")
            child.warning("worker restarted")
            nanny.error("worker died")
        assert keep.messages == ["worker restarted", "worker died"]
        assert parent.level == logging.INFO and child.level == logging.DEBUG  # restored
    finally:
        parent.removeHandler(keep)
        parent.setLevel(before)
        child.setLevel(logging.NOTSET)


def test_the_compare_summary_names_the_store_and_the_scheduler_each_under_its_label(tmp_path, capsys,
                                                                                    no_figure_files):
    store = tmp_path / "store"
    args = ["compare", "--particles", "16", "32", "--systems", "1", "--grid", "64", "--times", "0", "0.1",
            "--scheduler", "serial", "--no-progress"]
    assert main([*args, "--store", str(store), "--output", str(tmp_path / "a.nc")]) == 0
    out = capsys.readouterr().out
    assert f"2 systems run, 0 taken from the store; store: {store}, scheduler: serial" in out
    assert "taken from the store (serial)" not in out
    assert main([*args, "--output", str(tmp_path / "b.nc")]) == 0
    assert "store: none, scheduler: serial" in capsys.readouterr().out

"""An interrupted run says so (success 0, "interrupted at t = …") and resumes; a finished one resumed is returned
with the counts it had."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import xarray as xr

import meanfield as mf
from meanfield.io import load_checkpoint
from meanfield.runs import RunInterrupted


def test_an_interrupt_relabels_the_last_checkpoint_and_raises_run_interrupted(tmp_path, monkeypatch):
    import meanfield.io._checkpoint as module

    rho0 = mf.density(mf.Circle(64), lambda th: 1 + 0.2 * np.cos(th))
    t = np.linspace(0, 2, 21)
    path = tmp_path / "run.nc"
    original, writes = module.write_netcdf, []

    def write_then_interrupt(ds, target):
        digest = original(ds, target)
        writes.append(ds.sizes["time"])
        if len(writes) == 3:
            raise KeyboardInterrupt
        return digest

    monkeypatch.setattr(module, "write_netcdf", write_then_interrupt)
    with pytest.raises(RunInterrupted, match=r"interrupted: the outputs up to t = 0.2 are in '.*run.nc'; "
                                             r"resume=True continues from there") as caught:
        mf.solve(mf.SelfAttention(2.0), rho0, t, checkpoint=path, checkpoint_interval=0)
    assert isinstance(caught.value, KeyboardInterrupt)
    assert caught.value.checkpoint == path and caught.value.t_reached == pytest.approx(0.2)
    monkeypatch.setattr(module, "write_netcdf", original)
    saved = load_checkpoint(path)
    assert saved.attrs["success"] == 0
    assert saved.attrs["message"] == "interrupted at t = 0.2; resume=True continues it"
    resumed = mf.solve(mf.SelfAttention(2.0), rho0, t, checkpoint=path, resume=True)
    straight = mf.solve(mf.SelfAttention(2.0), rho0, t)
    assert resumed.attrs["success"] == 1 and resumed.attrs["resumed_at"] == pytest.approx(0.2)
    np.testing.assert_array_equal(resumed.density.values, straight.density.values)
    assert resumed.attrs["n_steps"] == straight.attrs["n_steps"] and resumed.attrs["nfev"] == straight.attrs["nfev"]


def test_sigint_in_the_command_line_says_where_the_run_got_to_and_how_to_continue(tmp_path):
    out = tmp_path / "a.nc"
    command = [sys.executable, "-m", "meanfield.cli", "solve", "--t-final", "20", "--grid", "2048", "--method",
               "finite_volume", "--checkpoint-interval", "0.2", "--no-progress", "--output", str(out)]
    # SIGINT back to its default in the child: a test run started in the background of a shell ignores it,
    # and an ignored SIGINT is inherited (Python then installs no KeyboardInterrupt handler)
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not out.exists() and time.monotonic() < deadline:  # the first checkpoint is written
        time.sleep(0.1)
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    message = stderr.strip().splitlines()[-1]
    assert message.startswith("meanfield solve: interrupted at t = ")
    assert message.endswith(f"the outputs so far are in '{out}': continue with --resume")
    with xr.open_dataset(out) as saved:
        reached = float(saved.time[-1])
        assert saved.attrs["success"] == 0 and saved.attrs["message"] == \
            f"interrupted at t = {reached:g}; resume=True continues it"
    assert f"at t = {reached:g};" in message


@pytest.mark.parametrize("simulate", [
    lambda x0, t, path, **kw: mf.simulate(mf.SelfAttention(4.0), x0, t, checkpoint=path, path="direct", **kw),
    lambda x0, t, path, **kw: mf.simulate(mf.SelfAttention(4.0), x0, t, checkpoint=path, path="nufft", **kw),
    lambda x0, t, path, **kw: mf.simulate(mf.SelfAttention(4.0, noise=0.1), x0, t, checkpoint=path, dt=0.01,
                                          seed=1, **kw),
], ids=["dopri5-direct", "dopri5-nufft", "euler-maruyama"])
def test_resuming_a_finished_run_returns_it_with_its_counts(tmp_path, simulate):
    x0 = np.random.default_rng(1).uniform(0, 2 * np.pi, 50)
    t = np.linspace(0, 1, 11)
    path = tmp_path / "run.nc"
    first = simulate(x0, t, path)
    for _ in range(2):
        again = simulate(x0, t, path, resume=True)
        for name in ("nfev", "n_steps", "n_rejected", "success", "message"):
            assert again.attrs[name] == first.attrs[name], name
        assert type(again.attrs["nfev"]) is int
        np.testing.assert_array_equal(again.positions.values, first.positions.values)
        assert not [name for name in again.data_vars if name.startswith("scheme_")] and "sha256" not in again.attrs


def test_resuming_a_finished_solve_returns_it_unchanged(tmp_path):
    rho0 = mf.density(mf.Circle(64), lambda th: 1 + 0.2 * np.cos(th))
    t = np.linspace(0, 1, 11)
    first = mf.solve(mf.SelfAttention(2.0), rho0, t, checkpoint=tmp_path / "run.nc")
    again = mf.solve(mf.SelfAttention(2.0), rho0, t, checkpoint=tmp_path / "run.nc", resume=True)
    xr.testing.assert_identical(again, first)



def test_a_sigint_while_a_file_is_made_is_raised_once_the_file_is_whole(tmp_path, monkeypatch):
    import meanfield.io._files as files

    build = files._netcdf_bytes

    def interrupted_build(ds):
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the NetCDF file is being made in memory
        return build(ds)

    monkeypatch.setattr(files, "_netcdf_bytes", interrupted_build)
    ds = xr.Dataset({"x": ("t", np.arange(5.0))})
    # Python's own handler, as in an interactive or command-line run (a run in a shell's background ignores SIGINT)
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            mf.io.write_netcdf(ds, tmp_path / "a.nc")
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, inherited)
    # the interrupt came after the write: the file is there, whole, and passes its checksum
    np.testing.assert_array_equal(mf.io.read_netcdf(tmp_path / "a.nc").x.values, np.arange(5.0))

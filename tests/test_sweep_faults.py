"""sweep() under faults: a killed sweep resumes, a dead worker or a failing task, a silent scheduler; damaged files."""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import meanfield as mf
from _sweep_funcs import dies_once, fails_at_two, slow_square
from meanfield.io._files import FileCheckError, read_netcdf, write_netcdf

TESTS = Path(__file__).parent
# run serially or on a LocalCluster of its own (2 workers, which import the swept function through PYTHONPATH)
KILLED_SWEEP = """
import meanfield as mf
from _sweep_funcs import slow_square
mf.sweep(slow_square, {{"x": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]}}, seeds=2, fixed={{"delay": {delay}}},
         store={store!r}, scheduler={scheduler!r}, n_workers={workers}, progress=False)
"""


def fingerprints(pieces: Path) -> dict[str, tuple[int, str]]:
    return {p.name: (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest()) for p in pieces.glob("*.nc")}


@pytest.mark.parametrize(("scheduler", "delay"), [
    ("serial", 0.1),  # the sweep process alone: the same checks in about a third of the time
    pytest.param("local", 0.4, marks=pytest.mark.slow),  # with the worker processes of its cluster
])
def test_a_sweep_killed_with_sigkill_resumes_running_only_the_missing_tasks(tmp_path, request, scheduler, delay):
    store = tmp_path / "store"
    code = KILLED_SWEEP.format(store=str(store), delay=delay, scheduler=scheduler,
                               workers=2 if scheduler == "local" else None)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(list(store.glob("pieces/*.nc"))) < 3:
            time.sleep(0.05)
        # while it runs, the store is refused to anyone else, naming the process
        with pytest.raises(ValueError, match=f"is in use by process {proc.pid} on "):
            mf.sweep(slow_square, {"x": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]}, seeds=2, fixed={"delay": delay}, store=store,
                     resume=True, scheduler="serial", progress=False)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        proc.kill()
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    before = fingerprints(store / "pieces")
    assert 3 <= len(before) < 12, before
    resume_on = request.getfixturevalue("dask_client") if scheduler == "local" else "serial"
    ds = mf.sweep(slow_square, {"x": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]}, seeds=2, fixed={"delay": delay}, store=store,
                  resume=True, scheduler=resume_on, progress=False)
    assert ds.attrs["tasks_skipped"] == len(before) and ds.attrs["tasks_run"] == 12 - len(before)
    after = fingerprints(store / "pieces")
    assert {name: after[name] for name in before} == before  # finished pieces are neither rewritten nor touched
    assert len(after) == 12 and not list((store / "pieces").glob(".*.partial"))
    # the uninterrupted result (the delay changes nothing but the time): value = x² + seed for every (x, seed)
    np.testing.assert_array_equal(ds.value, np.arange(6.0)[:, None] ** 2 + np.arange(2))
    uninterrupted = mf.sweep(slow_square, {"x": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]}, seeds=2, fixed={"delay": 0.0},
                             scheduler="serial", progress=False)
    xr.testing.assert_identical(ds.drop_attrs(), uninterrupted.drop_attrs())


def test_a_worker_killed_mid_task_is_replaced_and_the_sweep_completes(tmp_path, dask_client):
    marker = tmp_path / "died"
    ds = mf.sweep(dies_once, {"x": [1.0, 2.0, 3.0, 4.0]}, fixed={"marker": str(marker)}, store=tmp_path / "store",
                  scheduler=dask_client, progress=False)
    assert marker.exists()  # the worker running x = 2 did exit mid-task
    np.testing.assert_array_equal(ds.value, [10.0, 20.0, 30.0, 40.0])
    assert ds.attrs["tasks_run"] == 4


def test_a_failing_task_is_reported_after_the_others_finish(tmp_path, dask_client):
    store = tmp_path / "store"
    with pytest.raises(mf.SweepError) as info:
        mf.sweep(fails_at_two, {"x": [1.0, 2.0, 3.0]}, store=store, scheduler=dask_client, progress=False)
    message = str(info.value)
    assert message.startswith("1 of 3 tasks of _sweep_funcs:fails_at_two failed (the 2 finished tasks are in store")
    assert "task (1,): x=2.0: ArithmeticError: no convergence at x=2.0" in message
    assert set(info.value.missing) == {(1,)}
    assert sorted(p.name for p in (store / "pieces").glob("*.nc")) == ["0.nc", "2.nc"]
    with pytest.raises(mf.SweepError, match=r"task \(1,\): x=2.0: ArithmeticError") as again:
        mf.sweep(fails_at_two, {"x": [1.0, 2.0, 3.0]}, store=store, resume=True, scheduler="serial", progress=False)
    assert set(again.value.missing) == {(1,)}


def test_a_scheduler_address_that_does_not_answer_is_named_within_seconds(monkeypatch):
    from meanfield.studies.sweeps import _sweep

    assert _sweep.CONNECT_TIMEOUT == 5.0  # as documented; the test waits for a tenth of it
    monkeypatch.setattr(_sweep, "CONNECT_TIMEOUT", 0.5)
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    start = time.monotonic()
    with pytest.raises(ConnectionError, match=f"no dask scheduler answered at '{address}' within 0.5 s"):
        mf.sweep(slow_square, {"x": [1.0]}, seeds=1, fixed={"delay": 0.0}, scheduler=address, progress=False)
    assert time.monotonic() - start < 5.5  # connect timeout 0.5 s plus start-up; a hang would be minutes


def test_checksummed_files_name_the_file_when_empty_truncated_foreign_or_altered(tmp_path):
    ds = xr.Dataset({"a": ("x", np.arange(4.0)), "label": ((), "text")})
    path = tmp_path / "piece.nc"
    digest = write_netcdf(ds, path)
    back = read_netcdf(path)
    assert back.attrs["sha256"] == digest
    xr.testing.assert_equal(back, ds)
    assert list(tmp_path.iterdir()) == [path]  # nothing left beside it
    (tmp_path / "empty.nc").write_bytes(b"")
    with pytest.raises(FileCheckError, match="empty.nc' is empty"):
        read_netcdf(tmp_path / "empty.nc")
    (tmp_path / "cut.nc").write_bytes(path.read_bytes()[:200])
    with pytest.raises(FileCheckError, match="cut.nc' is not a readable NetCDF file"):
        read_netcdf(tmp_path / "cut.nc")
    (tmp_path / "notes.nc").write_text("not netcdf\n")
    with pytest.raises(FileCheckError, match="notes.nc' is not a readable NetCDF file"):
        read_netcdf(tmp_path / "notes.nc")
    ds.to_netcdf(tmp_path / "plain.nc")
    with pytest.raises(FileCheckError, match="plain.nc' carries no 'sha256' attribute"):
        read_netcdf(tmp_path / "plain.nc")
    altered = ds.assign(a=ds.a + 1)
    altered.attrs["sha256"] = digest
    altered.to_netcdf(tmp_path / "altered.nc")
    with pytest.raises(FileCheckError, match=f"altered.nc' fails its checksum .*: recorded sha256 {digest}"):
        read_netcdf(tmp_path / "altered.nc")
    with pytest.raises(FileCheckError, match="missing.nc' does not exist"):
        read_netcdf(tmp_path / "missing.nc")


def test_a_script_without_a_main_guard_is_told_why_the_local_cluster_cannot_start(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text("import meanfield as mf\n"
                      "from _sweep_funcs import slow_square\n"
                      "mf.sweep(slow_square, {'x': [1.0]}, seeds=1, fixed={'delay': 0.0}, n_workers=1, progress=False)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode != 0
    assert "a script must call it under `if __name__ == \"__main__\":`" in out.stderr

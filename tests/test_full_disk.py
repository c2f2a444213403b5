"""A full disk is an ordinary error: reported, the last good file kept, nothing left behind.

Each test writes on a small tmpfs the test mounts (root only; skipped with the reason where mounting is not
allowed). The runs that write there go in a subprocess: before results were made in memory, the HDF5 library
ended the process with SIGSEGV inside the NetCDF write after ENOSPC, which would take the test runner with it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import meanfield as mf
from meanfield.io import WriteError, load_checkpoint, read_netcdf, write_netcdf


def _mount_tmpfs(where: Path, size: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB file system at ``tmp_path / 'small'``, unmounted afterwards."""
    where = tmp_path / "small"
    _mount_tmpfs(where, "1m")
    yield where
    subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(disk: Path) -> None:
    """Take every free block of ``disk``."""
    with open(disk / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass


def _run(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def test_a_checkpoint_that_no_longer_fits_is_reported_and_the_last_good_file_kept(small_disk, tmp_path):
    # 2048 cells x 81 outputs: the first checkpoints fit in 1 MiB, the later ones do not
    done = _run(f"""
        import numpy as np, meanfield as mf
        ds = mf.solve(mf.SelfAttention(4.0), mf.density(mf.Circle(2048), lambda t: 1 + 0.1 * np.cos(3 * t)),
                      np.linspace(0, 0.5, 81), checkpoint={str(small_disk / 'run.nc')!r}, checkpoint_interval=0)
        print(ds.attrs["success"], ds.sizes["time"])
        """, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["1", "81"]  # the computation went on and returned every output
    assert "could not write checkpoint" in done.stderr and "No space left on device" in done.stderr
    assert done.stderr.count("could not write checkpoint") == 1  # logged once, not at every output
    assert "the result is returned but was not written to checkpoint" in done.stderr
    assert sorted(p.name for p in small_disk.iterdir()) == ["run.nc"]  # no partial file, no lock
    kept = load_checkpoint(small_disk / "run.nc")  # the last good write, intact and verified
    assert kept.attrs["success"] == 0 and kept.attrs["message"].startswith("checkpoint: the run was still going")
    assert 1 < kept.sizes["time"] < 81


def test_a_disk_full_at_start_is_refused_naming_the_path_and_leaves_nothing(small_disk):
    _fill(small_disk)
    with pytest.raises(WriteError, match=r"cannot start: the lock of checkpoint '.*run.nc' cannot be written "
                                         r"\(No space left on device\)"):
        mf.simulate(mf.SelfAttention(4.0), np.linspace(0, 3, 8), [0.0, 1.0], checkpoint=small_disk / "run.nc")
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler"]


def test_write_netcdf_on_a_full_disk_raises_and_keeps_the_previous_file(small_disk):
    path = small_disk / "result.nc"
    first = xr.Dataset({"a": ("x", np.arange(4.0))})
    write_netcdf(first, path)
    _fill(small_disk)
    with pytest.raises(WriteError, match=r"could not write '.*result.nc': No space left on device; "
                                         r"the previous file is kept") as caught:
        write_netcdf(xr.Dataset({"a": ("x", np.arange(100_000.0))}), path)
    assert caught.value.errno == 28
    xr.testing.assert_equal(read_netcdf(path).drop_attrs(), first)
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "result.nc"]


def test_the_command_line_on_a_full_disk_says_so_in_one_line(small_disk, tmp_path):
    _fill(small_disk)
    done = subprocess.run([sys.executable, "-m", "meanfield.cli", "solve", "--no-progress", "--output",
                           str(small_disk / "x.nc")], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"meanfield solve: error: cannot start: the lock of checkpoint '{small_disk / 'x.nc'}' cannot be written "
        "(No space left on device)"]
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler"]


@pytest.mark.parametrize("scheduler", ["serial", "local"])
def test_a_sweep_whose_pieces_do_not_fit_reports_the_tasks_and_keeps_the_pieces_written(small_disk, tmp_path,
                                                                                         scheduler):
    workers = "n_workers=1," if scheduler == "local" else ""
    done = _run(f"""
        import meanfield as mf
        from _sweep_funcs import sized_result
        if __name__ == "__main__":
            try:
                mf.sweep(sized_result, {{"n": [1000, 1001, 300000, 300001, 300002]}}, scheduler={scheduler!r}, {workers}
                         store={str(small_disk / 'store')!r}, progress=False)
            except mf.SweepError as err:
                print(err)
        """, Path(__file__).parent)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "3 of 5 tasks" in done.stdout and "No space left on device" in done.stdout
    pieces = sorted(p.name for p in (small_disk / "store" / "pieces").iterdir())
    assert pieces == ["0.nc", "1.nc"]  # the tasks that fitted; no partial file
    assert [read_netcdf(small_disk / "store" / "pieces" / name).sizes["i"] for name in pieces] == [1000, 1001]

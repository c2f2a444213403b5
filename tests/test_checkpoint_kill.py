"""Checkpoints across processes: a run killed by SIGKILL resumes exactly; a second process is refused."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import meanfield as mf
from meanfield.io._checkpoint import CheckpointInUseError, load_checkpoint

SETUP = """
import numpy as np, meanfield as mf
rho0 = mf.density(mf.Circle(64), lambda th: 1 + 0.3 * np.cos(2 * th) + 0.1 * np.sin(th))
model = mf.SelfAttention(beta=2.0)
t = np.linspace(0.0, 2.0, 21)
"""


def _namespace() -> dict:
    scope: dict = {}
    exec(SETUP, scope)
    return scope


def _python(code: str, **kwargs) -> subprocess.Popen:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], env=env, **kwargs)


@pytest.mark.slow  # two processes and three runs: about 5 s
def test_run_killed_by_sigkill_resumes_to_the_uninterrupted_result_bit_for_bit(tmp_path):
    path = tmp_path / "run.nc"
    # the child kills itself with SIGKILL right after its 8th checkpoint write, mid-run
    child = _python(SETUP + f"""
import os, signal
import meanfield.io._checkpoint as module
original, count = module.write_netcdf, [0]
def write_then_die(ds, target):
    original(ds, target)
    count[0] += 1
    if count[0] == 8:
        os.kill(os.getpid(), signal.SIGKILL)
module.write_netcdf = write_then_die
mf.solve(model, rho0, t, checkpoint={str(path)!r}, checkpoint_interval=0.0)
""")
    assert child.wait(timeout=120) == -signal.SIGKILL
    assert load_checkpoint(path).sizes["time"] == 8
    scope = _namespace()
    full = mf.solve(scope["model"], scope["rho0"], scope["t"])
    resumed = mf.solve(scope["model"], scope["rho0"], scope["t"], checkpoint=path, resume=True)
    np.testing.assert_array_equal(resumed.density.values, full.density.values)
    np.testing.assert_array_equal(resumed.energy.values, full.energy.values)
    np.testing.assert_array_equal(resumed.steps.values, full.steps.values)
    assert resumed.attrs["n_steps"] == full.attrs["n_steps"] and resumed.attrs["nfev"] == full.attrs["nfev"]


def test_second_process_is_refused_at_start_naming_the_first(tmp_path):
    path = tmp_path / "run.nc"
    # another process holds the checkpoint's lock (opened as a run would) until told to stop
    holder = _python(f"""
import sys
from meanfield.io._checkpoint import open_checkpoint
lock = open_checkpoint({str(path)!r})
print("locked", flush=True)
sys.stdin.readline()
""", stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        scope = _namespace()
        with pytest.raises(CheckpointInUseError, match=f"'{path}' is in use by process {holder.pid} "):
            mf.solve(scope["model"], scope["rho0"], scope["t"], checkpoint=path)
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    scope = _namespace()
    assert mf.solve(scope["model"], scope["rho0"], scope["t"][:3], checkpoint=path).attrs["success"] == 1

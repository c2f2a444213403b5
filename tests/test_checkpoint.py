"""Checkpoints of ``solve``, ``simulate`` and ``meanfield solve``: paths refused before any work, every
parameter and the initial state compared on resume, checksummed files, exact resume, one writer."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
import xarray as xr

import meanfield as mf
import meanfield.runs._driver
from conftest import CheckpointStop
from meanfield.io._checkpoint import CheckpointError, CheckpointInUseError, load_checkpoint, open_checkpoint
from meanfield.cli import main

T = np.linspace(0.0, 1.0, 6)


@pytest.fixture
def rho0():
    return mf.density(mf.Circle(64), lambda th: 1 + 0.3 * np.cos(2 * th) + 0.1 * np.sin(th))


@pytest.fixture
def no_evolve(monkeypatch):
    """Make any computation fail loudly, so a refusal is known to come before it."""

    def run(*args, **kwargs):
        raise AssertionError("the run started")

    monkeypatch.setattr(meanfield.runs._driver.EvolveIntegrator, "run", run)


def _circle_particles(n: int = 16) -> np.ndarray:
    return np.linspace(0.0, 2 * np.pi, n, endpoint=False) + 0.1 * np.sin(np.arange(n))


# ---------------------------------------------------------------------------- paths refused before any work
@pytest.mark.parametrize(
    "make, message",
    [
        (lambda tmp: "/dev/null", "exists and is not a regular file"),
        (lambda tmp: tmp, "exists and is not a regular file"),
        (lambda tmp: tmp / "missing" / "run.nc", "directory that does not exist"),
    ],
    ids=["device", "directory", "missing-directory"],
)
def test_solve_refuses_unwritable_checkpoint_paths_before_running(rho0, tmp_path, no_evolve, make, message):
    path = make(tmp_path)
    with pytest.raises(ValueError, match=f"checkpoint '{path}' .*{message}"):
        mf.solve(mf.SelfAttention(beta=2.0), rho0, T, checkpoint=path)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write in a read-only directory")
def test_solve_refuses_a_read_only_directory(rho0, tmp_path, no_evolve):
    locked = tmp_path / "ro"
    locked.mkdir()
    locked.chmod(0o555)
    with pytest.raises(ValueError, match="is not writable"):
        mf.solve(mf.SelfAttention(beta=2.0), rho0, T, checkpoint=locked / "run.nc")


def test_simulate_refuses_a_device_or_directory_before_running(tmp_path, no_evolve):
    for path in ("/dev/null", tmp_path):
        with pytest.raises(ValueError, match=f"checkpoint '{path}' exists and is not a regular file"):
            mf.simulate(mf.Kuramoto(coupling=1.0), _circle_particles(), T, method="rk4", dt=0.1, path="direct",
                        checkpoint=path)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


@pytest.mark.parametrize("where", ["/dev/null", "{tmp}", "{tmp}/missing/run.nc"])
def test_cli_refuses_unwritable_output_before_running(tmp_path, capsys, no_evolve, where):
    out = where.format(tmp=tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(["solve", "--grid", "32", "--t-final", "0.1", "--n-times", "3", "--output", out, "--no-progress"])
    assert exit_info.value.code == 2
    assert f"--output '{out}'" in capsys.readouterr().err
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not (tmp_path / "missing").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


# ---------------------------------------------------------------------------- same run, by name
@pytest.mark.parametrize(
    "change, name",
    [
        ({"options": {"rtol": 1e-9}}, "option_rtol"),
        ({"options": {"atol": 1e-11}}, "option_atol"),
        ({"rho0": lambda th: 1 + 0.3 * np.cos(3 * th)}, "rho0"),
        ({"max_step": 0.01}, "max_step"),
    ],
    ids=["rtol", "atol", "rho0", "max_step"],
)
def test_resume_refuses_a_different_parameter_or_initial_density_by_name(rho0, tmp_path, change, name):
    path = tmp_path / "run.nc"
    model = mf.SelfAttention(beta=2.0)
    mf.solve(model, rho0, T[:3], "spectral", checkpoint=path)
    start = mf.density(rho0.domain, change["rho0"]) if "rho0" in change else rho0
    kwargs = dict(change.get("options", {}))
    if "max_step" in change:
        kwargs["max_step"] = change["max_step"]
    made = f"from a different {name} " if name == "rho0" else f"with {name}="
    with pytest.raises(CheckpointError, match=f"checkpoint '{path}' was made {made}.*pass resume=False"):
        mf.solve(model, start, T, "spectral", checkpoint=path, resume=True, **kwargs)


@pytest.mark.parametrize(
    "other, name",
    [
        ({"interaction": np.array([0.0, -0.5j, 0.2j])}, "interaction"),
        ({"frequency_nodes": 6}, "frequency_nodes"),
    ],
)
def test_resume_refuses_a_different_kuramoto_interaction_or_frequency_grid(tmp_path, other, name):
    path = tmp_path / "run.nc"
    rho0 = mf.von_mises(mf.Circle(32), kappa=1.0)
    law = scipy.stats.norm(0.0, 0.5)
    mf.solve(mf.Kuramoto(coupling=2.0, frequencies=law), rho0, T[:3], frequency_nodes=4, checkpoint=path)
    model = mf.Kuramoto(coupling=2.0, frequencies=law, **{k: v for k, v in other.items() if k == "interaction"})
    nodes = other.get("frequency_nodes", 4)
    with pytest.raises(CheckpointError, match=f"was made with {name}="):
        mf.solve(model, rho0, T, frequency_nodes=nodes, checkpoint=path, resume=True)


# ---------------------------------------------------------------------------- damaged files
def _random_bytes(path):
    path.write_bytes(np.random.default_rng(0).bytes(4096))


def _truncated(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _empty(path):
    path.write_bytes(b"")


def _foreign(path):
    xr.Dataset({"x": ("i", np.arange(3.0))}).to_netcdf(path)


def _density_times_ten(path):
    with xr.open_dataset(path) as opened:
        ds = opened.load()
    ds["density"] = ds["density"] * 10  # the recorded sha256 attr is kept: an edit that does not update it
    ds["scheme_state"] = ds["scheme_state"] * 10
    ds.to_netcdf(path)


@pytest.mark.parametrize("damage", [_random_bytes, _truncated, _empty, _foreign, _density_times_ten])
def test_damaged_checkpoint_gives_one_clear_error(rho0, tmp_path, damage):
    path = tmp_path / "run.nc"
    mf.solve(mf.SelfAttention(beta=2.0), rho0, T[:3], checkpoint=path)
    damage(path)
    with pytest.raises(CheckpointError, match=f"'{path}' .*remove it or pass resume=False"):
        mf.solve(mf.SelfAttention(beta=2.0), rho0, T, checkpoint=path, resume=True)


def test_damaged_particle_checkpoint_gives_one_clear_error(tmp_path):
    path = tmp_path / "run.nc"
    model = mf.Kuramoto(coupling=1.0)
    mf.simulate(model, _circle_particles(), T[:3], method="rk4", dt=0.1, path="direct", checkpoint=path)
    _truncated(path)
    with pytest.raises(CheckpointError, match=f"'{path}' .*remove it or pass resume=False"):
        mf.simulate(model, _circle_particles(), T, method="rk4", dt=0.1, path="direct", checkpoint=path,
                    resume=True)


# ---------------------------------------------------------------------------- exact resume
SCHEMES = [
    ("circle", "spectral", lambda: mf.density(mf.Circle(64), lambda th: 1 + 0.3 * np.cos(2 * th))),
    ("circle", "finite_volume", lambda: mf.density(mf.Circle(64), lambda th: 1 + 0.3 * np.cos(2 * th))),
    ("sphere", "finite_volume",
     lambda: mf.density(mf.Sphere(11), lambda th, ph: 1 + 0.3 * np.cos(th) + 0.2 * np.sin(th) * np.cos(ph))),
    ("sphere", "spectral", lambda: mf.von_mises(mf.Sphere(15), kappa=1.0)),
    ("zonal", "spectral", lambda: mf.von_mises(mf.ZonalSphere(3, 32), kappa=1.0)),
    ("zonal", "finite_volume", lambda: mf.von_mises(mf.ZonalSphere(3, 32, nodes="cells"), kappa=1.0)),
]


@pytest.mark.parametrize("kind, method, make", SCHEMES, ids=[f"{k}-{m}" for k, m, _ in SCHEMES])
def test_interrupted_and_resumed_run_equals_uninterrupted_bit_for_bit(tmp_path, kind, method, make):
    rho0 = make()
    model = mf.SelfAttention(beta=2.0)
    full = mf.solve(model, rho0, T, method)
    path = tmp_path / "run.nc"
    mf.solve(model, rho0, T[:3], method, checkpoint=path)
    resumed = mf.solve(model, rho0, T, method, checkpoint=path, resume=True)
    for name in ("density", "mass", "energy", "order_parameter", "steps"):
        np.testing.assert_array_equal(resumed[name].values, full[name].values, err_msg=name)
    for name in ("n_steps", "n_rejected", "nfev", "dt_min", "dt_max", "success"):
        assert resumed.attrs[name] == full.attrs[name], name
    assert resumed.steps.values.sum() == full.attrs["n_steps"] > 0


def test_resume_from_periodic_checkpoints_equals_uninterrupted(rho0, tmp_path, stop_after_checkpoint_writes):
    """A run stopped after a periodic write (not at its last output) continues exactly."""
    model = mf.SelfAttention(beta=2.0)
    full = mf.solve(model, rho0, T)
    path = tmp_path / "run.nc"
    stop_after_checkpoint_writes(3)
    with pytest.raises(CheckpointStop):
        mf.solve(model, rho0, T, checkpoint=path, checkpoint_interval=0.0)
    stop_after_checkpoint_writes.disarm()
    assert load_checkpoint(path).sizes["time"] == 3
    resumed = mf.solve(model, rho0, T, checkpoint=path, resume=True)
    np.testing.assert_array_equal(resumed.density.values, full.density.values)
    np.testing.assert_array_equal(resumed.steps.values, full.steps.values)
    assert resumed.attrs["n_steps"] == full.attrs["n_steps"]


# ---------------------------------------------------------------------------- one writer; failed writes retried
def test_a_second_writer_is_refused_naming_the_first(rho0, tmp_path, no_evolve):
    path = tmp_path / "run.nc"
    lock = open_checkpoint(path)
    try:
        with pytest.raises(CheckpointInUseError, match=f"in use by process {os.getpid()} on"):
            mf.solve(mf.SelfAttention(beta=2.0), rho0, T, checkpoint=path)
        with pytest.raises(CheckpointInUseError, match=f"in use by process {os.getpid()} on"):
            mf.simulate(mf.Kuramoto(coupling=1.0), _circle_particles(), T, method="rk4", dt=0.1, checkpoint=path)
    finally:
        lock.release()
    assert not lock.lock_path.exists()


def test_lock_is_released_after_a_run_and_after_an_error(rho0, tmp_path):
    path = tmp_path / "run.nc"
    model = mf.SelfAttention(beta=2.0)
    mf.solve(model, rho0, T[:3], checkpoint=path)
    with pytest.raises(CheckpointError):
        mf.solve(mf.SelfAttention(beta=3.0), rho0, T, checkpoint=path, resume=True)
    assert mf.solve(model, rho0, T, checkpoint=path, resume=True).attrs["success"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["run.nc"]


def test_a_failed_periodic_write_is_logged_and_retried(rho0, tmp_path, monkeypatch, caplog):
    import meanfield.io._checkpoint as module

    original = module.write_netcdf
    failures = []

    def fail_twice(ds, target):
        if len(failures) < 2:
            failures.append(ds.sizes["time"])
            raise OSError("No space left on device")
        return original(ds, target)

    monkeypatch.setattr(module, "write_netcdf", fail_twice)
    path = tmp_path / "run.nc"
    with caplog.at_level(logging.WARNING, logger="meanfield.io._checkpoint"):
        ds = mf.solve(mf.SelfAttention(beta=2.0), rho0, T, checkpoint=path, checkpoint_interval=0.0)
    assert ds.attrs["success"] == 1 and ds.sizes["time"] == T.size
    assert failures == [1, 2]
    assert "No space left on device" in caplog.text and "will try again" in caplog.text
    np.testing.assert_array_equal(load_checkpoint(path).density.values, ds.density.values)


# ---------------------------------------------------------------------------- diagnostics computed once
def test_checkpoints_do_not_recompute_energies_of_earlier_outputs(rho0, tmp_path):
    evaluated = []

    class Counting(mf.SelfAttention):  # E_β with e^{-β}E_β and log E_β, from one integral per output
        def density_energy(self, domain, values):
            evaluated.append(values.shape[0])
            return super().density_energy(domain, values)

        def density_energy_forms(self, domain, values):
            evaluated.append(values.shape[0])
            return super().density_energy_forms(domain, values)

    t = np.linspace(0.0, 1.0, 11)
    mf.solve(Counting(beta=2.0), rho0, t, checkpoint=tmp_path / "run.nc", checkpoint_interval=0.0)
    assert sum(evaluated) == t.size  # one energy per output; rewriting all at every write gave 11·12/2 + 11


def test_particle_checkpoints_do_not_recompute_energies_of_earlier_outputs(tmp_path):
    evaluated = []

    class Counting(mf.Kuramoto):
        def particle_energy(self, states, weights, geometry, accuracy=None):
            evaluated.append(states.shape[0])
            return super().particle_energy(states, weights, geometry, accuracy)

    t = np.linspace(0.0, 1.0, 11)
    mf.simulate(Counting(coupling=1.0), _circle_particles(), t, method="rk4", dt=0.05, path="direct",
                checkpoint=tmp_path / "run.nc", checkpoint_interval=0.0)
    assert sum(evaluated) == t.size


# ---------------------------------------------------------------------------- the command line
def test_cli_output_is_checksummed_and_resumable(tmp_path, capsys, no_figure_files):
    out = tmp_path / "run.nc"
    args = ["solve", "--grid", "32", "--no-progress", "--output", str(out)]
    assert main([*args, "--t-final", "1", "--n-times", "5"]) == 0
    first = load_checkpoint(out)
    assert first.sizes["time"] == 5 and first.attrs["initial_condition"].startswith("perturbed_uniform")
    assert main([*args, "--t-final", "2", "--n-times", "9", "--resume"]) == 0
    extended = load_checkpoint(out)
    np.testing.assert_array_equal(extended.density.values[:5], first.density.values)
    assert extended.attrs["n_steps"] == extended.steps.values.sum() > first.attrs["n_steps"]


def test_cli_refuses_a_second_writer(tmp_path, capsys, no_evolve):
    out = tmp_path / "run.nc"
    lock = open_checkpoint(out)
    try:
        with pytest.raises(SystemExit) as exit_info:
            main(["solve", "--grid", "32", "--output", str(out), "--no-progress"])
    finally:
        lock.release()
    assert exit_info.value.code == 2
    assert f"is in use by process {os.getpid()} on" in capsys.readouterr().err


@pytest.mark.parametrize("path_", ["direct", "ensemble"])
def test_a_finished_particle_run_extended_continues_the_straight_run(tmp_path, path_):
    """A run's last write holds its continuation. For dopri5 that is the start of its last step, before the
    step was cut to land on the final time: extended to later times the run takes that step again uncut, as
    the straight run does, so every later output and the counts equal the straight run's; the saved outputs
    inside the cut step stay the first run's (within the tolerance of the straight run's). The compiled
    ensemble continues every system from its landed final state (its later outputs agree to the tolerance)."""
    path = tmp_path / "run.nc"
    model = mf.SelfAttention(beta=1.0)
    x0 = np.random.default_rng(1).uniform(0.0, 2 * np.pi, 40)
    t = np.linspace(0.0, 2.0, 11)
    first = mf.simulate(model, x0, t[:5], path=path_, checkpoint=path)
    resumed = mf.simulate(model, x0, t, path=path_, checkpoint=path, resume=True)
    straight = mf.simulate(model, x0, t, path=path_)
    np.testing.assert_array_equal(resumed.positions.values[:5], first.positions.values)
    # rtol = 1e-8 over t ≤ 2 with rates ≲ 1: measured 4e-9 (the cut step) and 4e-9 (the ensemble's later outputs)
    np.testing.assert_allclose(resumed.positions.values, straight.positions.values, rtol=0, atol=1e-7)
    if path_ == "direct":
        np.testing.assert_array_equal(resumed.positions.values[5:], straight.positions.values[5:])
        for name in ("n_steps", "n_rejected", "nfev"):
            assert resumed.attrs[name] == straight.attrs[name], name
    assert resumed.attrs["n_steps"] > first.attrs["n_steps"] > 0


def test_atomic_writes_never_replace_a_device_or_directory(tmp_path):
    from meanfield.io._files import write_atomically

    for target in (Path("/dev/null"), tmp_path):
        with pytest.raises(ValueError, match=f"'{target}' exists and is not a regular file; it is not replaced"):
            write_atomically(target, lambda tmp: tmp.write_text("x"))
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not list(tmp_path.iterdir())

"""The mean-field study (``meanfield compare``) through the sweep engine: same numbers on every scheduler."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import meanfield as mf
from meanfield.studies.limits._meanfield_limit import meanfield_study, system_seed_sequences
from meanfield.cli import main

NS = [16, 48]
SEEDS = [2, 0, 5]
TIMES = np.array([0.0, 0.1, 0.2])


@pytest.fixture(scope="module")
def problem():
    model = mf.SelfAttention(1.5, noise=0.1)
    rho0 = mf.von_mises(mf.Circle(64), 0.0, 1.0)
    return model, rho0, mf.solve(model, rho0, TIMES)


def one_system_by_hand(model, rho0, pde, n, seed):
    """The loop meanfield_study ran before it used the sweep engine, for one system."""
    sample_seq, noise_seq = system_seed_sequences(seed, n)
    x0 = mf.sample(rho0, n, seed=np.random.default_rng(sample_seq), method="iid").points
    particles = mf.simulate(model, x0, TIMES, seed=np.random.default_rng(noise_seq), domain="circle", dt=0.02)
    gaps = mf.compare(pde, particles, 1.0)
    return gaps["wasserstein"].values[0], gaps["energy_gap"].values[0]


def test_serial_and_cluster_studies_are_bit_identical_and_equal_the_per_system_loop(problem, dask_client):
    model, rho0, pde = problem
    options = {"simulate_options": {"dt": 0.02}, "pde": pde}
    serial = meanfield_study(model, rho0, TIMES, NS, seeds=SEEDS, **options)
    cluster = meanfield_study(model, rho0, TIMES, NS, seeds=SEEDS, scheduler=dask_client, **options)
    sweep_attrs = ["tasks_total", "tasks_run", "tasks_skipped", "store", "scheduler"]
    xr.testing.assert_identical(cluster.drop_attrs(), serial.drop_attrs())
    assert {k: v for k, v in cluster.attrs.items() if k not in sweep_attrs + ["seeds"]} == \
        {k: v for k, v in serial.attrs.items() if k not in sweep_attrs + ["seeds"]}
    assert serial.attrs["tasks_total"] == serial.attrs["tasks_run"] == len(NS) * len(SEEDS)
    assert serial.attrs["scheduler"] == "serial" and cluster.attrs["scheduler"] == dask_client.scheduler.address
    for i, n in enumerate(NS):
        for j, seed in enumerate(SEEDS):
            w, gap = one_system_by_hand(model, rho0, pde, n, seed)
            np.testing.assert_array_equal(serial.wasserstein.values[i, j], w)
            np.testing.assert_array_equal(serial.energy_gap.values[i, j], gap)
    assert serial.wasserstein.dims == ("n", "seed", "time") and list(serial.attrs["seeds"]) == SEEDS


def test_compare_command_resumes_from_its_store(tmp_path, capsys, no_figure_files):
    args = ["compare", "--particles", "16", "32", "--systems", "2", "--grid", "64", "--times", "0", "0.1", "--noise", "0.1",
            "--dt", "0.05", "--scheduler", "serial", "--no-progress", "--store", str(tmp_path / "store")]
    assert main([*args, "--output", str(tmp_path / "a.nc")]) == 0
    assert "4 systems run, 0 taken from the store; store: " in capsys.readouterr().out
    with pytest.raises(SystemExit, match="2"):
        main([*args, "--output", str(tmp_path / "b.nc")])
    assert "already holds a sweep; pass resume=True (--resume)" in capsys.readouterr().err
    assert main([*args, "--resume", "--output", str(tmp_path / "b.nc")]) == 0
    assert "0 systems run, 4 taken from the store; store: " in capsys.readouterr().out
    with xr.open_dataset(tmp_path / "a.nc") as a, xr.open_dataset(tmp_path / "b.nc") as b:
        xr.testing.assert_identical(a.wasserstein, b.wasserstein)
    with pytest.raises(SystemExit, match="2"):
        main([*args, "--beta", "3", "--resume", "--output", str(tmp_path / "c.nc")])
    assert "was made with fixed['model'] =" in capsys.readouterr().err


def test_compare_command_refuses_an_output_it_cannot_write_before_computing(tmp_path, capsys):
    args = ["compare", "--particles", "16", "32", "--systems", "1", "--scheduler", "serial", "--no-progress"]
    directory = tmp_path / "result.nc"
    directory.mkdir()
    with pytest.raises(SystemExit, match="2"):
        main([*args, "--output", str(directory)])
    assert f"--output '{directory}' exists and is not a regular file" in capsys.readouterr().err

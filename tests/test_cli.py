"""The main job: ``meanfield solve`` writes a NetCDF file and a PNG."""

from __future__ import annotations

import logging
import re

import numpy as np
import pytest
import xarray as xr

from conftest import CheckpointStop
from meanfield.cli import main


def test_solve_command_writes_netcdf_and_png(tmp_path, capsys):
    out = tmp_path / "run.nc"
    code = main(["solve", "--grid", "64", "--t-final", "1", "--n-times", "5", "--output", str(out), "--no-progress"])
    assert code == 0
    printed = capsys.readouterr().out
    assert f"wrote {out}" in printed and f"wrote {out.with_suffix('.png')}" in printed
    with xr.open_dataset(out) as ds:
        # the result over (time, theta), and the scheme's state at the last output for --resume
        result = ds.drop_vars([name for name in ds.data_vars if name.startswith("scheme_")])
        assert result.sizes == {"time": 5, "theta": 64}
        assert ds["scheme_state"].sizes == {"scheme_state_0": 1, "scheme_state_1": 64}
        assert ds["scheme_dt"].values > 0 and ds["scheme_t"].values == 1.0
        assert ds.attrs["model"] == "SA" and ds.attrs["beta"] == 4.0
        assert np.allclose(ds.mass, 1.0, atol=1e-12)
    assert out.with_suffix(".png").stat().st_size > 10_000


def test_solve_command_reports_bad_options(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["solve", "--beta", "-1", "--output", str(tmp_path / "x.nc"), "--no-progress"])
    assert stop.value.code == 2
    assert "beta must be finite and >= 0, got -1.0" in capsys.readouterr().err


def test_solve_command_on_the_sphere(tmp_path):
    out = tmp_path / "sphere.nc"
    args = ["solve", "--domain", "sphere", "--lmax", "15", "--t-final", "0.5", "--n-times", "3"]
    assert main([*args, "--output", str(out), "--no-progress"]) == 0
    with xr.open_dataset(out) as ds:
        assert ds.density.dims == ("time", "lat", "lon")
        # the finite-volume scheme conserves its cell masses to round-off
        assert np.ptp(ds.mass.values) < 1e-12
    assert out.with_suffix(".png").exists()


def test_compare_command_writes_netcdf_and_png(tmp_path, capsys):
    out = tmp_path / "cmp.nc"
    args = ["compare", "--particles", "32", "128", "--systems", "2", "--grid", "128", "--times", "0", "0.5", "--scheduler", "serial"]
    assert main([*args, "--output", str(out)]) == 0
    assert "exponent" in capsys.readouterr().out
    with xr.open_dataset(out) as ds:
        assert ds.attrs["meanfield_version"]
    assert out.with_suffix(".png").exists()


def test_solve_command_on_a_zonal_sphere(tmp_path):
    out = tmp_path / "zonal.nc"
    args = ["solve", "--domain", "zonal", "--dimension", "10", "--grid", "64", "--t-final", "1", "--n-times", "3"]
    assert main([*args, "--output", str(out), "--no-progress"]) == 0
    with xr.open_dataset(out) as ds:
        assert ds.density.dims == ("time", "polar") and ds.attrs["dimension"] == 10
        assert np.allclose(ds.mass, 1.0, atol=1e-12)
        # the first moment of an axisymmetric measure lies along e_d: |m| = ∫ cos ϑ dμ ≤ 1, growing under SA
        assert 0 < ds.order_parameter[0] < ds.order_parameter[-1] < 1


def test_interrupted_sphere_finite_volume_run_resumes_exactly(tmp_path, stop_after_checkpoint_writes, caplog,
                                                              no_figure_files):
    """``meanfield solve`` stopped after its third checkpoint write and run again with ``--resume`` gives
    the uninterrupted run's file bit for bit, its finite-volume mass exact (the cell averages are restored,
    not rebuilt from node values)."""
    args = ["solve", "--domain", "sphere", "--method", "finite_volume", "--lmax", "7", "--t-final", "0.4",
            "--n-times", "6", "--no-progress", "--checkpoint-interval", "0"]
    full_path, out = tmp_path / "full.nc", tmp_path / "run.nc"
    assert main([*args, "--output", str(full_path)]) == 0

    stop_after_checkpoint_writes(3)
    with pytest.raises(CheckpointStop):
        main([*args, "--output", str(out)])
    stop_after_checkpoint_writes.disarm()
    with xr.open_dataset(out) as partial:
        assert partial.sizes["time"] == 3 and "scheme_state" in partial
    with caplog.at_level(logging.WARNING, logger="meanfield"):
        assert main([*args, "--output", str(out), "--resume"]) == 0
    assert "scheme state" not in caplog.text
    with xr.open_dataset(full_path) as full, xr.open_dataset(out) as resumed:
        for name in full.data_vars:
            np.testing.assert_array_equal(resumed[name].values, full[name].values, err_msg=name)
        for name in ("n_steps", "n_rejected", "nfev", "dt_min", "dt_max", "success"):
            assert resumed.attrs[name] == full.attrs[name], name
        # finite volume conserves the cell masses: 1 to round-off (a rebuild from nodes gave 1.005 at lmax 15)
        assert np.max(np.abs(resumed.mass.values - 1.0)) < 1e-13


def test_a_resumed_file_keeps_its_history_and_appends_the_resumed_command_line(tmp_path, stop_after_checkpoint_writes,
                                                                               no_figure_files):
    """CF history, oldest first: an interrupted run resumed keeps the lines of its partial file (the library
    call that wrote it) before the resumed run's call and command line; extending the finished file to a
    later --t-final appends two more. The data equal the straight runs' bit for bit."""
    args = ["solve", "--grid", "64", "--no-progress", "--checkpoint-interval", "0"]
    first, later = ["--t-final", "0.4", "--n-times", "5"], ["--t-final", "0.8", "--n-times", "9"]
    out = tmp_path / "run.nc"
    assert main([*args, *first, "--output", str(tmp_path / "full.nc")]) == 0
    assert main([*args, *later, "--output", str(tmp_path / "full_later.nc")]) == 0
    stop_after_checkpoint_writes(3)
    with pytest.raises(CheckpointStop):
        main([*args, *first, "--output", str(out)])
    stop_after_checkpoint_writes.disarm()
    with xr.open_dataset(out) as partial:
        partial_lines = partial.attrs["history"].split("\n")
    assert len(partial_lines) == 1 and "meanfield.solve(model=SelfAttention(beta=4.0" in partial_lines[0]

    resumed_command = " ".join(["meanfield", *args, *first, "--output", str(out), "--resume"])
    extended_command = " ".join(["meanfield", *args, *later, "--output", str(out), "--resume"])
    for command, straight in ((resumed_command, "full.nc"), (extended_command, "full_later.nc")):
        assert main(command.split()[1:]) == 0
        with xr.open_dataset(tmp_path / straight) as full, xr.open_dataset(out) as resumed:
            for name in full.data_vars:
                np.testing.assert_array_equal(resumed[name].values, full[name].values, err_msg=name)
            lines = resumed.attrs["history"].split("\n")
    assert lines[0] == partial_lines[0] and len(lines) == 5
    assert [line.split(" ", 1)[1] for line in lines[2::2]] == [resumed_command, extended_command]
    assert all(line.split(" ", 1)[1].startswith("meanfield.solve(") for line in lines[1::2])
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00 .+", line) for line in lines)
    assert lines == sorted(lines, key=lambda line: line.split(" ", 1)[0])  # times never decrease


def test_a_finished_sphere_finite_volume_run_extends_from_its_scheme_state(tmp_path, caplog, no_figure_files):
    """``--resume`` with a later ``--t-final`` continues a finished run from the scheme state kept in its
    file: no restart from node values (which raised the mass of this run to 1 + 7.8e-5), mass exact."""
    out = tmp_path / "run.nc"
    args = ["solve", "--domain", "sphere", "--method", "finite_volume", "--lmax", "7", "--no-progress",
            "--output", str(out)]
    assert main([*args, "--t-final", "0.2", "--n-times", "3"]) == 0
    with xr.open_dataset(out) as first:
        first_density = first.density.values
    with caplog.at_level(logging.WARNING, logger="meanfield"):
        assert main([*args, "--t-final", "0.4", "--n-times", "5", "--resume"]) == 0
    assert "scheme state" not in caplog.text
    with xr.open_dataset(out) as extended:
        assert extended.sizes["time"] == 5
        np.testing.assert_array_equal(extended.density.values[:3], first_density)
        assert np.max(np.abs(extended.mass.values - 1.0)) < 1e-13  # cell masses conserved to round-off


@pytest.mark.parametrize("argv, message", [
    (["compare", "--times", "1", "0.5"], "--times must be strictly increasing"),
    (["compare", "--grid", "2"], "--grid must be at least 4"),
    (["compare", "--dt", "-1"], "--dt must be > 0"),
    (["kuramoto", "--grid", "2", "--engine", "pde"], "--grid must be at least 8"),
    (["kuramoto", "--dt", "0"], "--dt must be > 0"),
    (["compare", "--particles", "64", "0"], "--particles must be at least 1, got 0"),
    (["phase-diagram", "--dimension", "1"], "--dimension values must be >= 2, got '1'"),
    (["phase-diagram", "--dimension", "2,x"], "--dimension must be an integer or integers separated by commas"),
    (["phase-diagram", "--dimension", "8,8"], "--dimension values must be distinct"),
    (["phase-diagram", "--dimension", "2,8", "--ginibre"], "--ginibre draws (Q, K, V) for one dimension"),
    (["phase-diagram", "--draw", "per_system"], "--draw per_system draws random weights; it needs --matrices"),
    (["phase-diagram", "--ginibre", "--matrices", "goe"], "--ginibre is --matrices ginibre"),
    (["phase-diagram", "--particles", "1"], "--particles must be at least 2, got 1"),
])
def test_study_commands_name_the_option_they_refuse(argv, message, capsys, tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--no-progress", "--scheduler", "serial", "--output", str(tmp_path / "x.nc")])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--grid", "0"], "--grid must be at least 16, got 0"),
    (["--grid", "7"], "--grid must be at least 16, got 7"),
    (["--domain", "zonal", "--method", "spectral", "--grid", "1"], "--grid must be at least 2, got 1"),
    (["--domain", "zonal", "--method", "finite_volume", "--grid", "3"], "--grid must be at least 4, got 3"),
    (["--domain", "sphere", "--lmax", "1"], "--lmax must be at least 2, got 1"),
])
def test_solve_names_the_grid_option_it_refuses(argv, message, capsys, tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        main(["solve", *argv, "--no-progress", "--output", str(tmp_path / "x.nc")])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x.nc").exists()

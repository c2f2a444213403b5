"""The main job: ``meanfield solve`` writes a NetCDF file and a PNG."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from meanfield.cli import main


def test_solve_command_writes_netcdf_and_png(tmp_path, capsys):
    out = tmp_path / "run.nc"
    code = main(["solve", "--n", "64", "--t-final", "1", "--n-times", "5", "--output", str(out), "--no-progress"])
    assert code == 0
    printed = capsys.readouterr().out
    assert f"wrote {out}" in printed and f"wrote {out.with_suffix('.png')}" in printed
    with xr.open_dataset(out) as ds:
        assert ds.sizes == {"time": 5, "theta": 64}
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
    args = ["compare", "--n", "32", "128", "--seeds", "2", "--grid", "128", "--times", "0", "0.5", "--scheduler", "serial"]
    assert main([*args, "--output", str(out)]) == 0
    assert "exponent" in capsys.readouterr().out
    with xr.open_dataset(out) as ds:
        assert ds.attrs["meanfield_version"]
    assert out.with_suffix(".png").exists()


def test_solve_command_on_a_zonal_sphere(tmp_path):
    out = tmp_path / "zonal.nc"
    args = ["solve", "--domain", "zonal", "--dimension", "10", "--n", "64", "--t-final", "1", "--n-times", "3"]
    assert main([*args, "--output", str(out), "--no-progress"]) == 0
    with xr.open_dataset(out) as ds:
        assert ds.density.dims == ("time", "polar") and ds.attrs["dimension"] == 10
        assert np.allclose(ds.mass, 1.0, atol=1e-12)
        # the first moment of an axisymmetric measure lies along e_d: |m| = ∫ cos ϑ dμ ≤ 1, growing under SA
        assert 0 < ds.order_parameter[0] < ds.order_parameter[-1] < 1

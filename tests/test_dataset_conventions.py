"""Result files as CF tools read them: coordinate units and standard names, parameter meanings, history."""

from __future__ import annotations

import re

import numpy as np
import pytest
import xarray as xr

import meanfield as mf
from meanfield.io._checkpoint import CheckpointError, check_same_run
from meanfield.io._conventions import COORD_ATTRS, PARAMETER_MEANINGS, history_line, with_history

#: "<ISO 8601 UTC time to the second> <what>" (the CF/NetCDF history line)
HISTORY_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00 \S")


@pytest.fixture(scope="module")
def sphere_run(tmp_path_factory):
    """A short S² run written to NetCDF and read back."""
    path = tmp_path_factory.mktemp("cf") / "sphere.nc"
    model = mf.SelfAttention(2.0, normalized=False, noise=0.05)
    mf.solve(model, mf.von_mises(mf.Sphere(7), kappa=1.0), [0.0, 0.05], method="spectral").to_netcdf(path)
    with xr.open_dataset(path) as ds:
        yield ds.load()


def test_sphere_grid_is_in_radians_with_degree_latitude_and_longitude_for_cf_tools(sphere_run):
    ds = sphere_run
    for name in ("lat", "lon"):
        assert ds[name].attrs["units"] == "rad" and "standard_name" not in ds[name].attrs
    sphere = mf.Sphere(7)
    np.testing.assert_array_equal(ds.lat.values, sphere.lat)  # readers keep the exact radian nodes
    assert ds.latitude.dims == ("lat",) and ds.longitude.dims == ("lon",)
    assert ds.latitude.attrs == {"standard_name": "latitude", "units": "degrees_north", "long_name": "latitude"}
    assert ds.longitude.attrs["standard_name"] == "longitude" and ds.longitude.attrs["units"] == "degrees_east"
    np.testing.assert_allclose(ds.latitude.values, np.degrees(sphere.lat), rtol=1e-15)
    assert np.all(np.abs(ds.latitude.values) < 90) and np.all((ds.longitude.values >= 0) & (ds.longitude.values < 360))
    # the data variables name them as auxiliary coordinates (CF "coordinates" attribute, written by xarray)
    assert set(ds.density.encoding["coordinates"].split()) == {"latitude", "longitude"}


def test_cf_xarray_finds_latitude_longitude_and_time(sphere_run):
    cf_xarray = pytest.importorskip("cf_xarray")
    assert cf_xarray
    ds = sphere_run
    assert ds.cf["latitude"].name == "latitude" and ds.cf["longitude"].name == "longitude"
    assert ds.cf["T"].name == "time" and ds.cf["Y"].name == "lat" and ds.cf["X"].name == "lon"
    assert ds.cf.standard_names == {"latitude": ["latitude"], "longitude": ["longitude"]}


def test_every_parameter_carries_its_meaning_and_normalized_is_a_cf_flag(sphere_run):
    attrs = sphere_run.attrs
    assert attrs["Conventions"] == "CF-1.8"
    for name in ("model", "beta", "noise", "normalized", "domain", "dimension", "method"):
        assert attrs[f"{name}_description"] == PARAMETER_MEANINGS[name]
    assert "multiplies the Laplace-Beltrami operator" in attrs["noise_description"]
    assert list(attrs["normalized_flag_values"]) == [0, 1]
    meanings = attrs["normalized_flag_meanings"].split()
    assert meanings == ["unnormalized_USA", "normalized_SA"]
    assert attrs["normalized"] == 0 and meanings[list(attrs["normalized_flag_values"]).index(0)] == "unnormalized_USA"


def test_an_api_run_names_the_library_call_in_history(sphere_run):
    lines = sphere_run.attrs["history"].split("\n")
    assert len(lines) == 1 and HISTORY_LINE.match(lines[0])
    assert "meanfield.solve(model=SelfAttention(beta=2.0, normalized=False, noise=0.05), domain=Sphere(lmax=7), " \
           "method='spectral')" in lines[0]


def test_circle_and_zonal_angles_and_time_state_their_units():
    circle = mf.solve(mf.SelfAttention(1.0), mf.von_mises(mf.Circle(32), 0.0, 1.0), [0.0, 0.1])
    assert circle.theta.attrs == COORD_ATTRS["theta"] and circle.theta.attrs["units"] == "rad"
    assert circle.time.attrs == {"units": "1", "long_name": "time", "axis": "T"}
    assert "latitude" not in circle.coords
    zonal = mf.solve(mf.SelfAttention(1.0), mf.von_mises(mf.ZonalSphere(5, 32), kappa=1.0), [0.0, 0.1])
    assert zonal.polar.attrs["units"] == "rad" and "e_d" in zonal.polar.attrs["long_name"]


def test_a_particle_run_describes_its_parameters_and_names_its_call():
    x0 = np.linspace(0.0, 2 * np.pi, 8, endpoint=False)
    run = mf.simulate(mf.SelfAttention(1.0), x0, [0.0, 0.1])
    assert run.positions.attrs["units"] == "rad" and run.time.attrs["axis"] == "T"
    assert run.attrs["n_particles_description"] == PARAMETER_MEANINGS["n_particles"]
    assert run.attrs["normalized_flag_meanings"] == "unnormalized_USA normalized_SA"
    assert HISTORY_LINE.match(run.attrs["history"]) and "meanfield.simulate(model=SelfAttention(beta=1.0" in \
        run.attrs["history"]


def test_history_lines_are_appended_oldest_first():
    first = history_line("meanfield solve --beta 2")
    attrs = with_history(with_history({}, first), "2000-01-01T00:00:00+00:00 ncks -O in.nc out.nc")
    assert attrs["history"].split("\n") == [first, "2000-01-01T00:00:00+00:00 ncks -O in.nc out.nc"]
    assert HISTORY_LINE.match(first) and first.endswith(" meanfield solve --beta 2")


def test_a_resumed_run_compares_parameters_not_their_descriptions_or_history():
    saved = {"beta": 2.0, "noise_description": "old wording", "history": "2000-01-01T00:00:00+00:00 x",
             "normalized_flag_values": np.array([0, 1])}
    check_same_run(saved, {"beta": 2.0}, "run.nc")
    with pytest.raises(CheckpointError, match="was made with beta=2.0, but this run has beta=3.0"):
        check_same_run(saved, {"beta": 3.0}, "run.nc")


def test_a_rescaled_attention_run_says_its_positions_are_the_rescaled_tokens():
    # rescaled=True integrates paper 1's z = e^{-tV} x (one head): the flag must say so, not name heads
    V = np.diag([1.0, -0.5])
    run = mf.simulate(mf.Attention(1.0, V=V, projection=False, rescaled=True),
                      np.random.default_rng(0).standard_normal((6, 2)), [0.0, 0.1])
    meanings = run.attrs["rescaled_flag_meanings"].split()
    assert run.attrs["rescaled"] == 1 and meanings[list(run.attrs["rescaled_flag_values"]).index(1)] == "rescaled_tokens_z"
    assert "exp(-t V) x_i" in run.attrs["rescaled_description"] and "head" not in run.attrs["rescaled_description"]

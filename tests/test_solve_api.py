"""The public ``solve``: results as datasets, run facts, checkpoints, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
import xarray as xr

import meanfield as mf
from meanfield.measures._perturbed_uniform import perturbed_uniform


@pytest.fixture
def rho0():
    return perturbed_uniform(mf.Circle(64), amplitude=0.05, seed=1)


@pytest.mark.parametrize("method", ["spectral", "finite_volume"])
def test_dataset_layout_and_netcdf_round_trip(rho0, method, tmp_path):
    model = mf.SelfAttention(2.0, noise=0.01)
    ds = mf.solve(model, rho0, np.linspace(0, 0.5, 6), method=method)
    assert ds.density.dims == ("time", "theta")
    assert ds.attrs["success"] == 1 and ds.attrs["method"] == method
    assert ds.attrs["beta"] == 2.0 and ds.attrs["model"] == "SA"
    assert ds.theta.attrs["units"] == "rad"
    # mass is conserved by both schemes to round-off
    assert np.allclose(ds.mass, 1.0, rtol=0, atol=1e-12)
    path = tmp_path / "run.nc"
    ds.to_netcdf(path)
    with xr.open_dataset(path) as back:
        xr.testing.assert_identical(back.load(), ds)


def test_checkpoint_keeps_outputs_and_resume_continues(rho0, tmp_path):
    model = mf.SelfAttention(2.0)
    path = tmp_path / "run.nc"
    t = np.linspace(0, 1.0, 11)
    full = mf.solve(model, rho0, t, method="finite_volume")
    first = mf.solve(model, rho0, t[:6], method="finite_volume", checkpoint=path)
    assert path.exists() and first.sizes["time"] == 6
    resumed = mf.solve(model, rho0, t, method="finite_volume", checkpoint=path, resume=True)
    assert resumed.sizes["time"] == 11
    # the resumed run restarts from the stored state at t = 0.5; the step sequence
    # is set by the CFL and growth bounds of that state, so both runs agree to
    # round-off (measured: bit-identical)
    np.testing.assert_allclose(resumed.density.values, full.density.values, rtol=0, atol=1e-14)
    other = mf.SelfAttention(3.0)
    with pytest.raises(ValueError, match="checkpoint .* was made with beta=2.0"):
        mf.solve(other, rho0, t, method="finite_volume", checkpoint=path, resume=True)


def test_kuramoto_with_frequency_law_records_species(rho0):
    model = mf.Kuramoto(2.0, frequencies=scipy.stats.norm(0, 0.3))
    ds = mf.solve(model, rho0, np.linspace(0, 0.2, 3), method="finite_volume", frequency_nodes=8)
    assert ds.density_by_frequency.dims == ("time", "frequency", "theta")
    assert ds.frequency_weight.sum() == pytest.approx(1.0)
    assert np.allclose(ds.mass, 1.0, atol=1e-12)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"t": [0.0]}, ValueError, "at least two times"),
        ({"t": [0.0, 1.0, 0.5]}, ValueError, "strictly increasing"),
        ({"t": [0.0, np.inf]}, ValueError, "finite times"),
        ({"method": "euler"}, ValueError, r"method must be 'auto' or one of \['finite_volume', 'spectral'\] on "
                                          r"Circle\(n=64\), got 'euler'"),
        ({"model": "SA"}, TypeError, "model must be a meanfield model"),
        ({"rho0": np.ones(64)}, TypeError, "rho0 must be a Density"),
        ({"resume": True}, ValueError, "resume=True needs a checkpoint path"),
        ({"method": "finite_volume", "rtol": 1e-6}, ValueError,
         r"method 'finite_volume' \(CircleFiniteVolume\) does not take the option\(s\) \['rtol'\]; it accepts \[.*'cfl'"),
        ({"diffusion": 0.1}, ValueError, "diffusion is the model's noise"),
    ],
)
def test_bad_input_is_named(rho0, kwargs, error, match):
    args = {"model": mf.SelfAttention(1.0), "rho0": rho0, "t": [0.0, 1.0], "method": "spectral"}
    args.update(kwargs)
    with pytest.raises(error, match=match):
        mf.solve(args.pop("model"), args.pop("rho0"), args.pop("t"), **args)

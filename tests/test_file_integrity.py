"""One integrity rule for every file read back: the checksum covers data, coordinates and attributes, a sweep
piece carries its sweep and point, and a sweep's fixed objects are recorded by their parameters."""

from __future__ import annotations

import json
import logging
import shutil

import numpy as np
import pytest
import scipy.stats as st
import xarray as xr
from _sweep_funcs import slow_square

import meanfield as mf
from meanfield.io import FileCheckError, read_netcdf, write_netcdf


def _rewrite(path, change) -> None:
    """Open ``path``, apply ``change`` to the dataset (its recorded sha256 kept) and write it back in place."""
    with xr.open_dataset(path) as opened:
        ds = opened.load()
    change(ds)
    ds.to_netcdf(path)


@pytest.mark.parametrize("change", [
    lambda ds: ds.coords.__setitem__("x", ("x", [0, 1, 2, 67, 4, 5])),  # one coordinate value
    lambda ds: ds.attrs.__setitem__("rng_state", ds.attrs["rng_state"].replace("1", "2", 1)),  # one digit
    lambda ds: ds.attrs.__setitem__("dt_next", 0.25000001),
    lambda ds: ds["a"].attrs.__setitem__("complex", 1),  # a variable's attribute
    lambda ds: ds.attrs.__setitem__("extra", "added"),
], ids=["coordinate", "rng_state", "step_attr", "variable_attr", "added_attr"])
def test_a_changed_coordinate_or_attribute_fails_the_checksum(tmp_path, change):
    ds = xr.Dataset({"a": ("x", np.arange(6.0), {"complex": 0})}, coords={"x": np.arange(6)},
                    attrs={"rng_state": '{"state": 1234, "inc": 1}', "dt_next": 0.25, "one": [3]})
    path = tmp_path / "f.nc"
    write_netcdf(ds, path)
    read_netcdf(path)  # the round trip itself (a one-element list attribute read back as a scalar) holds
    _rewrite(path, change)
    with pytest.raises(FileCheckError, match="f.nc' fails its checksum"):
        read_netcdf(path)


def test_a_noisy_checkpoint_with_one_changed_digit_of_its_generator_state_is_refused(tmp_path):
    model = mf.SelfAttention(2.0, noise=0.1)
    x0 = np.linspace(0, 6, 20)
    t = np.linspace(0, 1, 11)
    path = tmp_path / "run.nc"
    mf.simulate(model, x0, t[:6], dt=0.01, seed=3, checkpoint=path)
    _rewrite(path, lambda ds: ds.attrs.__setitem__("rng_state", ds.attrs["rng_state"].replace("1", "7", 1)))
    with pytest.raises(mf.CheckpointError, match="run.nc' is not a readable NetCDF file|fails its checksum"):
        mf.simulate(model, x0, t, dt=0.01, seed=3, checkpoint=path, resume=True)


def test_a_scheme_state_changed_in_a_checkpoint_is_refused(tmp_path):
    rho0 = mf.density(mf.Circle(64), lambda th: 1 + 0.2 * np.cos(th))
    path = tmp_path / "run.nc"
    t = np.linspace(0, 1, 11)
    mf.solve(mf.SelfAttention(2.0), rho0, t[:6], checkpoint=path)
    _rewrite(path, lambda ds: ds.__setitem__("scheme_dt", ds["scheme_dt"] * (1 + 1e-9)))
    with pytest.raises(mf.CheckpointError, match="fails its checksum"):
        mf.solve(mf.SelfAttention(2.0), rho0, t, checkpoint=path, resume=True)


def test_a_piece_of_another_sweep_under_the_same_task_index_is_run_again(tmp_path, caplog):
    run = dict(seeds=2, scheduler="serial", progress=False)
    a, b = tmp_path / "A", tmp_path / "B"
    first = mf.sweep(slow_square, {"x": [1.0, 2.0]}, fixed={"delay": 0.0}, store=a, **run)
    mf.sweep(slow_square, {"x": [10.0, 20.0]}, fixed={"delay": 0.0}, store=b, **run)
    shutil.copy(b / "pieces" / "1_1.nc", a / "pieces" / "1_1.nc")
    with caplog.at_level(logging.WARNING, logger="meanfield.studies.sweeps._store"):
        again = mf.sweep(slow_square, {"x": [1.0, 2.0]}, fixed={"delay": 0.0}, store=a, resume=True, **run)
    assert again.attrs["tasks_skipped"] == 3 and again.attrs["tasks_run"] == 1
    xr.testing.assert_identical(again.drop_attrs(), first.drop_attrs())
    assert "1_1.nc was made by another sweep" in caplog.text


def test_a_piece_whose_point_differs_from_the_task_is_run_again(tmp_path, caplog):
    store = tmp_path / "A"
    run = dict(seeds=1, scheduler="serial", progress=False, fixed={"delay": 0.0})
    first = mf.sweep(slow_square, {"x": [1.0, 2.0]}, store=store, **run)
    piece = store / "pieces" / "1_0.nc"
    ds = read_netcdf(piece)
    ds.attrs["sweep_point"] = json.dumps({"x": 1.0, "seed": 0})
    write_netcdf(ds.drop_attrs().assign_attrs({k: v for k, v in ds.attrs.items() if k != "sha256"}), piece)
    with caplog.at_level(logging.WARNING, logger="meanfield.studies.sweeps._store"):
        again = mf.sweep(slow_square, {"x": [1.0, 2.0]}, store=store, resume=True, **run)
    assert again.attrs["tasks_run"] == 1
    xr.testing.assert_identical(again.drop_attrs(), first.drop_attrs())
    assert 'records the point {"x": 1.0, "seed": 0}' in caplog.text


def kuramoto_mean_frequency(coupling: float, model: mf.Kuramoto) -> xr.Dataset:
    """A task with a Kuramoto model in ``fixed``: its coupling and the mean of its law."""
    return xr.Dataset({"value": coupling + model.frequencies.mean()})


def test_a_sweep_with_a_scipy_law_in_fixed_resumes_with_an_equal_law_made_anew(tmp_path):
    store = tmp_path / "store"
    grid = {"coupling": [1.0, 2.0]}
    run = dict(scheduler="serial", progress=False, store=store)
    mf.sweep(kuramoto_mean_frequency, grid, fixed={"model": mf.Kuramoto(1.0, frequencies=st.norm(0.5, 1))}, **run)
    again = mf.sweep(kuramoto_mean_frequency, grid, fixed={"model": mf.Kuramoto(1.0, frequencies=st.norm(0.5, 1))},
                     resume=True, **run)  # another object, another address: the same parameters
    assert again.attrs["tasks_skipped"] == 2
    np.testing.assert_array_equal(again.value, [1.5, 2.5])
    manifest = json.loads((store / "manifest.json").read_text())
    assert " at 0x" not in json.dumps(manifest)
    with pytest.raises(ValueError, match=r"was made with fixed\['model'\]"):
        mf.sweep(kuramoto_mean_frequency, grid, fixed={"model": mf.Kuramoto(1.0, frequencies=st.norm(0.5, 2))},
                 resume=True, **run)


class _Opaque:
    __slots__ = ()


def test_a_fixed_object_known_only_by_its_address_is_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match=r"fixed holds a .*_Opaque whose only description is its repr .* memory "
                                         r"address"):
        mf.sweep(slow_square, {"x": [1.0]}, seeds=1, fixed={"delay": _Opaque()}, scheduler="serial",
                 progress=False)

"""The exact configurations of paper 2, Theorem 9.2: their inner-product distributions, design strengths
and energies, computed from the points and compared with the stated exact values."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import meanfield as mf
from meanfield.cli import main

CASES = [
    (("polygon",), {"n": 5}, 4),
    (("polygon",), {"n": 6}, 5),
    (("simplex",), {"d": 3}, 2),
    (("simplex",), {"d": 5}, 2),
    (("cross_polytope",), {"d": 3}, 3),
    (("cross_polytope",), {"d": 4}, 3),
    (("icosahedron",), {}, 5),
    (("600_cell",), {}, 11),
    (("e8",), {}, 7),
]


@pytest.mark.parametrize(("args", "kwargs", "strength"), CASES, ids=lambda v: str(v))
def test_points_have_the_stated_inner_products_strength_and_energy(args, kwargs, strength):
    config = mf.sharp_configuration(*args, **kwargs)
    x = config.points
    n, d = x.shape
    assert int(config.multiplicities.sum()) == n
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-15)
    gram = x @ x.T
    # every point sees the same distribution (distance-regular), to round-off
    for row in gram:
        nearest = np.abs(row[:, None] - config.inner_products[None]).argmin(axis=1)
        np.testing.assert_allclose(row, config.inner_products[nearest], atol=1e-14)
        assert np.array_equal(np.bincount(nearest, minlength=len(config.multiplicities)), config.multiplicities)
    assert config.strength == strength
    assert mf.design_strength(x) == strength
    for beta in (0.5, 2.0, 8.0):
        model = mf.SelfAttention(beta, normalized=False)
        positions = np.arctan2(x[:, 1], x[:, 0]) if d == 2 else x
        computed = float(mf.energy(model, positions, domain="circle" if d == 2 else "sphere"))
        assert computed == pytest.approx(config.energy(beta), rel=1e-13)


def test_a_perturbed_configuration_loses_its_strength():
    x = mf.sharp_configuration("icosahedron").points.copy()
    x[0] += 1e-3 * np.array([1.0, 0.0, 0.0])
    x[0] /= np.linalg.norm(x[0])
    assert mf.design_strength(x) == 0


def test_design_strength_beyond_its_default_reach():
    x = mf.sharp_configuration("polygon", n=40).points
    assert mf.design_strength(x) == 30  # the default max_strength
    assert mf.design_strength(x, max_strength=60) == 39


def test_bad_inputs_are_refused_by_name():
    with pytest.raises(ValueError, match="unknown configuration"):
        mf.sharp_configuration("dodecahedron")
    with pytest.raises(ValueError, match="n must be >= 2"):
        mf.sharp_configuration("polygon", n=1)
    with pytest.raises(ValueError, match="lives on S¹"):
        mf.sharp_configuration("polygon", n=5, d=3)
    with pytest.raises(ValueError, match="has n = 4 points"):
        mf.sharp_configuration("simplex", d=3, n=7)
    with pytest.raises(ValueError, match="240 points"):
        mf.sharp_configuration("e8", n=3)
    with pytest.raises(ValueError, match="unit vectors"):
        mf.design_strength(np.ones((3, 3)))
    with pytest.raises(ValueError, match="tolerance"):
        mf.design_strength(np.eye(3), tolerance=float("nan"))


@pytest.mark.parametrize(("n", "d", "name", "strength"), [(5, 2, "polygon", 4), (4, 3, "simplex", 2),
                                                          (6, 3, "cross_polytope", 3), (12, 3, "icosahedron", 5)])
def test_random_starts_reach_the_sharp_configuration(n, d, name, strength):
    out = mf.optimal_configurations(n, d, beta=1.0, starts=8, seed=3)
    assert list(out["configuration_name"].values) == [name, "other"]
    assert out["fraction"].values[0] == 1.0
    assert np.all(out["energy_gap"].values <= 1e-10)
    assert np.all(out["strength"].values == strength)


def test_the_flow_reaches_the_tetrahedron_and_says_when():
    out = mf.optimal_configurations(4, 3, beta=1.0, starts=3, method="flow", t_final=60.0)
    assert out["fraction"].values[0] == 1.0
    # the slowest mode about the tetrahedron decays like e^{-0.9 t} in energy: 1e-10 by t ≈ 20 (measured 19.5-21.6)
    assert np.all((out["time_to_reach"].values > 5) & (out["time_to_reach"].values < 40))


def test_an_unmatched_end_point_is_other():
    # 7 points on S² have no sharp configuration: every start ends as "other"
    out = mf.optimal_configurations(7, 3, starts=2)
    assert list(out["configuration_name"].values) == ["other"]
    assert out["fraction"].values.tolist() == [1.0]


def test_study_refuses_bad_settings():
    with pytest.raises(ValueError, match="method"):
        mf.optimal_configurations(4, 3, method="newton")
    with pytest.raises(ValueError, match="n >= 2"):
        mf.optimal_configurations(1, 3)
    with pytest.raises(ValueError, match="beta must be <= 700"):
        mf.optimal_configurations(4, 3, beta=800.0)
    with pytest.raises(ValueError, match="seed"):
        mf.optimal_configurations(4, 3, seed=-1)


def test_the_command_line_writes_what_the_starts_reached(tmp_path, monkeypatch, no_figure_files, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["configurations", "--particles", "6", "--starts", "3"]) == 0
    with xr.open_dataset(tmp_path / "configurations_n6_d3_beta1_minimize_starts3_seed0.nc") as ds:
        assert ds["fraction"].values[0] == 1.0 and str(ds["configuration_name"].values[0]) == "cross_polytope"
        assert "meanfield configurations" in ds.attrs["history"]
    assert "cross_polytope" in capsys.readouterr().out

"""The limit-set classifier of paper 1's rescaled tokens (by the spectrum of V) and the rank of P(T) against n."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import meanfield as mf

#: the authors' codimension-k example (paper 1 §4, "clustering-Tformers.py" of their code): symmetric,
#: eigenvalues 1.9634, 0.2529, -0.2221 (two positive, one negative), Q = K = I, β = 1
AUTHORS_V = np.array([[0.92761287, 0.94333073, 0.3827744],
                      [0.94333073, 0.59991396, 0.47825472],
                      [0.3827744, 0.47825472, 0.46668605]])
RUN = dict(rtol=1e-10, atol=1e-13)


def _run(V, x0, times, rescaled=True):
    return mf.simulate(mf.Attention(1.0, None, None, V, projection=False, rescaled=rescaled), x0, times, **RUN)


def test_constructed_codimension_two_flats_levels_labels_and_distances(rng):
    # non-normal V with eigenvalues 1, 0.4, -0.7: the flats are {psi_1.z = a_1, psi_2.z = a_2}, lines along phi_3
    S = np.array([[1.0, 0.3, -0.2], [0.4, 1.0, 0.5], [-0.1, 0.2, 1.0]])
    S /= np.linalg.norm(S, axis=0)  # unit eigenvectors, largest entry positive: the coordinates' convention
    V = S @ np.diag([1.0, 0.4, -0.7]) @ np.linalg.inv(S)
    levels = np.array([[-2.0, 1.0], [0.0, 0.0], [1.5, -0.5]])
    labels = np.resize([0, 1, 2], 24)
    offset = 1e-8 * rng.uniform(-1, 1, (24, 2))
    c = levels[labels] + offset
    z = c @ S[:, :2].T + 7.0 * rng.standard_normal((24, 1)) * S[:, 2]   # far along the flats
    out = mf.limit_set(z, V)
    assert out.attrs["case"] == "flats" and out.attrs["codimension"] == 2
    assert int(out["n_flats"]) == 3 and bool(out["claim_holds"]) and bool(out["resolved"])
    # coordinates are those along the leading eigenvectors: c_i recovered to round-off (|z| ~ 20, cond(S) ~ 2)
    np.testing.assert_allclose(out["levels"].values, levels, rtol=0, atol=1e-8)
    np.testing.assert_array_equal(out["label"].values, labels)
    # distance to {w : D^T w = a}: the least-norm correction, computed here by lstsq on D^T (w - z) = a - D^T z
    D = out["normal"].values
    for i in range(24):
        step = np.linalg.lstsq(D.T, out["levels"].values[labels[i]] - D.T @ z[i], rcond=None)[0]
        assert out["distance"].values[i] == pytest.approx(np.linalg.norm(step), rel=1e-6, abs=1e-15)
    assert out["direction"].values.shape == (3, 2)
    np.testing.assert_allclose(D.T @ V, np.diag([1.0, 0.4]) @ D.T, atol=1e-12)  # left eigenvectors


def test_minus_identity_collapses_to_a_point_at_the_rate_t_to_minus_half(rng):
    # paper 1 Theorem C.5 (V = -I, Q^T K = I): x_i -> 0. Near 0, P_ij ~ (1 + <x_i, x_j>)/n and the spread
    # y_i = x_i - mean solves dy/dt = -C y with C the covariance: dC/dt = -2 C^2, so |y| ~ t^(-1/2): doubling t
    # multiplies it by 2^(-1/2)
    x0 = np.random.default_rng(1).standard_normal((8, 2))
    times = [0.0, 10.0, 20.0, 40.0]
    spreads = {}
    for rescaled in (False, True):
        ds = _run(-np.eye(2), x0, times, rescaled=rescaled)
        spreads[rescaled] = [float(mf.limit_set(ds.sel(time=slice(None, t)))["spread"]) for t in times[1:]]
        out = mf.limit_set(ds)
        assert out.attrs["case"] == "point" and out.attrs["codimension"] == 2
    # x read from z = e^{-tV} x gives the same configuration (integrator rtol 1e-10, z grows like e^t)
    np.testing.assert_allclose(spreads[True], spreads[False], rtol=1e-6)
    ratios = np.array(spreads[False][1:]) / np.array(spreads[False][:-1])
    # measured 0.733, 0.723: the 2^(-1/2) = 0.707 law with O(1/(beta c_0 t)) corrections
    assert np.all(np.abs(ratios - 2**-0.5) < 0.04), ratios
    # the configuration has not collapsed at tolerance 1e-3 of its initial diameter by t = 40: said, not hidden
    assert not bool(out["claim_holds"]) and int(out["n_flats"]) == 8


def test_identity_gives_polytope_vertices_as_polytope_vertices_does():
    V = np.eye(3)
    ds = _run(V, np.random.default_rng(2).standard_normal((16, 3)), [0.0, 12.0])
    out = mf.limit_set(ds)
    assert out.attrs["case"] == "polytope" and out.attrs["codimension"] == 3
    reference = mf.polytope_vertices(ds["positions"].values[-1], V, scale=float(out["scale"]))
    assert int(out["n_flats"]) == int(reference["n_points"]) == 3
    np.testing.assert_array_equal(out["levels"].values, reference["points"].values)
    np.testing.assert_array_equal(out["label"].values, reference["label"].values)
    assert bool(out["vertex"].all()) and bool(out["claim_holds"])
    assert float(out["residual"]) < 1e-4  # e^{-12} ~ 6e-6 times O(1)


def test_simple_leading_eigenvalue_gives_the_hyperplanes_of_the_detector():
    # one positive eigenvalue (k = 1): limit_set must reproduce hyperplanes (same coordinate, scale and gap rule)
    S = np.array([[1.0, 0.6, 0.3], [0.2, 1.0, -0.4], [0.5, 0.1, 1.0]])
    V = S @ np.diag([1.0, -0.5, -0.3]) @ np.linalg.inv(S)
    ds = _run(V, np.random.default_rng(3).standard_normal((16, 3)), [0.0, 6.0, 12.0])
    out = mf.limit_set(ds)
    reference = mf.hyperplanes(ds).isel(time=-1)
    assert out.attrs["case"] == "flats" and out.attrs["codimension"] == 1
    count = int(reference["n_hyperplanes"])
    assert int(out["n_flats"]) == count
    np.testing.assert_allclose(out["levels"].values[:, 0], reference["levels"].values[:count], rtol=1e-12)
    np.testing.assert_array_equal(out["label"].values, reference["label"].values)
    assert float(out["scale"]) == pytest.approx(float(reference["scale"]), rel=1e-12)
    assert float(out["residual"]) == pytest.approx(float(reference["residual"]), rel=1e-9)
    assert bool(out["claim_holds"]) == bool(reference["theorem_holds"]) is True


def test_authors_codimension_two_example_two_lines_shrinking_at_the_second_eigenvalue():
    values = np.linalg.eigvalsh(AUTHORS_V)
    assert np.sum(values > 0) == 2 and np.sum(values < 0) == 1
    x0 = np.random.default_rng(0).uniform(-5, 5, (10, 3))  # the authors draw uniform tokens in [-5, 5]^d
    ds = _run(AUTHORS_V, x0, [0.0, 25.0, 30.0])
    early, late = mf.limit_set(ds.sel(time=slice(None, 25.0))), mf.limit_set(ds)
    assert late.attrs["case"] == "flats" and late.attrs["codimension"] == 2
    assert int(late["n_flats"]) == int(early["n_flats"]) == 2 and bool(late["claim_holds"])
    np.testing.assert_array_equal(late["label"].values, early["label"].values)
    # the lines are parallel to the eigenvector of the negative eigenvalue: D^T phi_3 = 0
    phi3 = np.linalg.eigh(AUTHORS_V)[1][:, 0]
    np.testing.assert_allclose(late["normal"].values.T @ phi3, 0.0, atol=1e-12)
    # hard-max regime: z_i - z_leader relaxes like e^{-lambda_m t} along each positive eigenvector, so the residual
    # decays at the smallest positive eigenvalue 0.25287 (measured 0.2528718 from t = 25 to 30)
    rate = np.log(float(early["residual"]) / float(late["residual"])) / 5.0
    assert rate == pytest.approx(values[1], rel=1e-3)
    assert np.max(late["distance"].values) < np.max(early["distance"].values)


def test_complex_leading_pair_is_reported_as_rotation_with_points_in_the_leading_plane():
    V = np.array([[1.0, -2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, -0.5]])  # 1 +- 2i, -0.5
    ds = _run(V, np.random.default_rng(3).standard_normal((12, 3)), [0.0, 8.0, 10.0])
    early, late = mf.limit_set(ds.sel(time=slice(None, 8.0))), mf.limit_set(ds)
    assert late.attrs["case"] == "rotation" and late.attrs["codimension"] == 2 and "claim_holds" not in late
    np.testing.assert_allclose(late["eigenvalue_imag"].values[:2], [2.0, -2.0], atol=1e-12)
    # V is conformal on the plane: the scores ignore the rotation, leaders are hull vertices, and c_i - c_leader
    # decays like e^{-Re(lambda) t} = e^{-t} (measured rate 1.00 from t = 8 to 10)
    rate = np.log(float(early["residual"]) / float(late["residual"])) / 2.0
    assert rate == pytest.approx(1.0, abs=0.05)
    assert bool(late["vertex"].all()) and late["radius"].shape == (12,)


def test_unclassified_spectra_say_so():
    z = np.random.default_rng(0).standard_normal((5, 2))
    for V, reason in ((np.zeros((2, 2)), "real part is 0"), ([[1.0, 1.0], [0.0, 1.0]], "Jordan block"),
                      (np.diag([1.0, 0.5, 0.5]), "repeated")):
        out = mf.limit_set(np.hstack([z, z[:, :1]])[:, : np.shape(V)[0]], V)
        assert out.attrs["case"] == "unclassified" and out.attrs["success"] == 0
        assert reason in out.attrs["message"], out.attrs["message"]


def test_levels_closer_than_ten_residuals_are_flagged_not_resolved():
    # scale 1 (diameter of the coordinates and 0), threshold 1e-3: groups {0, 9e-4}, {2.5e-3, 3.4e-3}, {1};
    # residual 4.5e-4, separation 2.5e-3 - 4.5e-4 = 2.05e-3: 4.6 residuals apart, below RESOLUTION = 10
    a = np.array([0.0, 0.0009, 0.0025, 0.0034, 1.0])
    out = mf.limit_set(np.stack([a, np.zeros(5)], axis=1), np.diag([1.0, -1.0]))
    assert int(out["n_flats"]) == 3
    assert float(out["residual"]) == pytest.approx(0.00045, rel=1e-9)
    assert float(out["separation"]) == pytest.approx(0.00295 - 0.00045, rel=1e-9)
    assert not bool(out["resolved"]) and out.attrs["success"] == 0 and "NOT resolved" in out.attrs["message"]


@pytest.mark.parametrize("kwargs, match", [
    (dict(V=[[1.0, 0.0, 0.0]]), "V must be a square"),
    (dict(V=[[np.nan, 0.0], [0.0, 1.0]]), "V must be finite"),
    (dict(V=np.eye(3)), "dimension d = 2 but V is 3"),
    (dict(V=np.eye(2), Q=np.eye(3)), "Q is 3 × 3 but the dimension is d = 2"),
    (dict(V=np.eye(2), tolerance=2.0), "tolerance must lie in"),
    (dict(V=np.eye(2), scale=-1.0), "scale"),
    (dict(V=-np.eye(2)), "time is required"),
    (dict(V=None), "V is required"),
])
def test_bad_input_names_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        mf.limit_set(np.ones((4, 2)), **kwargs)


def test_bad_runs_are_refused():
    x0 = np.random.default_rng(0).standard_normal((2, 4, 2))
    batch = _run(np.eye(2), x0, [0.0, 1.0])
    with pytest.raises(ValueError, match="select one"):
        mf.limit_set(batch)
    with pytest.raises(ValueError, match="time is read from the Dataset"):
        mf.limit_set(batch.isel(system=0), time=1.0)
    with pytest.raises(ValueError, match="one configuration"):
        mf.limit_set(np.ones((3, 4, 2)), np.eye(2))
    assert isinstance(mf.limit_set(batch.isel(system=0)), xr.Dataset)


def test_rank_of_the_attention_matrix_stays_at_the_number_of_leaders():
    # V symmetric positive definite with a simple top eigenvalue (d = 2): P(T) is Boolean, one distinct row per
    # leader, singular values sqrt(#followers); measured rank 1 or 2 for every n (the extreme leaders of Theorem 4.2)
    out = mf.limit_attention_rank(np.array([[0.8, 0.3], [0.3, 0.5]]), (8, 16, 32), seeds=2, t_final=10.0)
    assert bool(out["success"].all()) and bool(out["boolean"].all())
    np.testing.assert_array_equal(out["rank"].values, out["n_leaders"].values)
    assert int(out["rank"].max()) <= 2
    squares = out["singular_values"].values ** 2
    for a, n in enumerate(out["n"].values):
        leading = squares[a, :, :2]
        np.testing.assert_allclose(leading, np.round(leading), atol=1e-9)  # integers: follower counts
        np.testing.assert_allclose(np.nansum(squares[a], axis=1), n, rtol=1e-12)  # ||P||_F^2 = n for Boolean rows


@pytest.mark.parametrize("kwargs, match", [
    (dict(V=[[1.0, 2.0]]), "V must be a square"),
    (dict(V=np.eye(2), n_values=(1, 4)), "n_values must be >= 2"),
    (dict(V=np.eye(2), t_final=0.0), "t_final"),
    (dict(V=np.eye(2), tolerance=-1.0), "tolerance"),
])
def test_rank_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        mf.limit_attention_rank(**kwargs)

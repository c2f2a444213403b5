"""Energies at any β: e^{-β}E_β and log E_β (mf.energy's ``scale``, the datasets of simulate and solve), USA beyond
e^709 in its rescaled time, and the large-β staircase in arc-length time with its merge jumps."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ive

import meanfield as mf

EPS = np.finfo(float).eps


@pytest.mark.parametrize("beta", [1.0, 700.0, 800.0, 4000.0])
def test_one_cluster_has_the_exact_normalised_and_log_energy(beta):
    # n tokens at one point: E_β = e^β/(2β) exactly; the inner products are exactly 1 at angle 0 and at e_1, so
    # both forms are a division and a log of exact numbers: a few ulps
    model = mf.SelfAttention(beta)
    for points in (np.zeros(5), np.tile([1.0, 0.0, 0.0], (4, 1))):
        assert mf.energy(model, points, scale="normalized") == pytest.approx(1 / (2 * beta), rel=1e-14)
        assert mf.energy(model, points, scale="log") == pytest.approx(beta - np.log(2 * beta), rel=1e-14)


@pytest.mark.parametrize("beta", [1.0, 800.0, 4000.0])
def test_two_equal_clusters_have_the_exact_normalised_energy(beta):
    # masses 1/2 at angle Δ: e^{-β}E_β = (1/(4β))(1 + e^{β(cos Δ - 1)}); Δ with β(1 - cos Δ) = min(3, β) so both
    # terms count. cos θ_i cos θ_j + sin θ_i sin θ_j carries ~2 eps, the exponent β times that, the sums a few eps:
    # relative tolerance 4 (β + 4) eps; log E_β = β + log(...) to that times β in absolute terms
    delta = np.arccos(1 - min(3.0, beta) / beta)
    exact = (1 + np.exp(beta * (np.cos(delta) - 1))) / (4 * beta)
    model = mf.SelfAttention(beta)
    angles = np.array([0.0, 0.0, delta, delta])
    tolerance = 4 * (beta + 4) * EPS
    assert mf.energy(model, angles, scale="normalized") == pytest.approx(exact, rel=tolerance)
    assert mf.energy(model, angles, scale="log") == pytest.approx(beta + np.log(exact), abs=tolerance * beta)
    if beta > 710:
        assert mf.energy(model, angles) == np.inf  # E_β itself keeps its meaning: beyond the largest double


@pytest.mark.parametrize("beta", [2.0, 800.0])
def test_density_forms_against_the_uniform_measure(beta):
    # E_β[uniform on S¹] = I_0(β)/(2β): e^{-β}E_β = ive(0, β)/(2β); the FFT quadrature is spectrally exact
    rho = mf.uniform(mf.Circle(2048))
    model = mf.SelfAttention(beta)
    exact = ive(0, beta) / (2 * beta)
    assert mf.energy(model, rho, scale="normalized") == pytest.approx(exact, rel=1e-13)
    assert mf.energy(model, rho, scale="log") == pytest.approx(beta + np.log(exact), rel=1e-13)


def test_simulate_records_the_forms_beside_the_energy():
    ds = mf.simulate(mf.SelfAttention(2.0), np.linspace(0, 3, 7), [0, 1, 2])
    np.testing.assert_allclose(ds.normalized_energy, np.exp(-2.0) * ds.energy, rtol=4 * EPS)
    np.testing.assert_allclose(ds.log_energy, np.log(ds.energy), rtol=0, atol=16 * EPS)  # log E ≈ 0: absolute
    assert ds.normalized_energy.attrs["units"] == "1" and "e^(-beta) E_beta" in ds.normalized_energy.attrs["long_name"]
    assert "log E_beta" in ds.log_energy.attrs["long_name"]
    # β = 4000: E_β overflows (and the run keeps its policy: an energy beyond the doubles is not a valid result),
    # the forms are finite and consistent; one cluster at the end: 1/(2β)
    big = mf.simulate(mf.SelfAttention(4000.0), np.array([0.0, 1e-3, 2e-3]), [0, 50])
    assert np.all(np.isinf(big.energy)) and big.attrs["success"] == 0
    assert np.all(np.isfinite(big.normalized_energy)) and np.all(np.isfinite(big.log_energy))
    np.testing.assert_allclose(big.log_energy, 4000.0 + np.log(big.normalized_energy), rtol=4 * EPS)
    assert float(big.normalized_energy[-1]) == pytest.approx(1 / 8000.0, rel=4 * 4000 * EPS)
    # a model without the forms records E only
    assert "normalized_energy" not in mf.simulate(mf.Kuramoto(1.0), np.linspace(0, 3, 7), [0, 1]).data_vars


def test_solve_records_the_forms_beside_the_energy():
    rho = mf.von_mises(mf.Circle(128), 0.0, 2.0)
    ds = mf.solve(mf.SelfAttention(2.0), rho, [0, 0.5, 1])
    np.testing.assert_allclose(ds.normalized_energy, np.exp(-2.0) * ds.energy, rtol=4 * EPS)
    np.testing.assert_allclose(ds.log_energy, np.log(ds.energy), rtol=0, atol=16 * EPS)  # log E ≈ 0: absolute


def test_bad_scale_and_beta_are_refused_by_name():
    x = np.linspace(0, 1, 4)
    with pytest.raises(ValueError, match=r"^scale must be one of \['energy', 'normalized', 'log'\]"):
        mf.energy(mf.SelfAttention(1.0), x, scale="logarithmic")
    with pytest.raises(ValueError, match=r"scale='log': Kuramoto reports its energy as E only"):
        mf.energy(mf.Kuramoto(1.0), x, scale="log")
    for beta in (np.inf, np.nan, -1.0):
        with pytest.raises(ValueError, match="beta"):
            mf.SelfAttention(beta)
        with pytest.raises(ValueError, match="beta"):
            mf.arc_length_staircase(beta)
    with pytest.raises(ValueError, match="beta"):
        mf.arc_length_staircase(0.0)
    with pytest.raises(ValueError, match="merge_tolerance"):
        mf.arc_length_staircase(500.0, merge_tolerance=0.5)
    with pytest.raises(ValueError, match="angles"):
        mf.arc_length_staircase(500.0, angles=[0.0])


def test_usa_beyond_e709_names_its_rescaled_time_which_is_usa():
    # in s = e^β t the USA velocity is P⊥ ∫ e^{β(<x,y>-1)} y dμ: the kernel -e^{β(t-1)}/β = -gaussian(2/β)/β.
    # β = 5: the two runs agree to the integrators' tolerance (1e-12 per unit time, over a unit of s)
    beta, theta = 5.0, np.linspace(0, 2.5, 7)
    s = np.array([0.0, 0.5, 1.0])
    rescaled = mf.Interaction(-mf.Kernel.gaussian(2 / beta) / beta)
    a = mf.simulate(rescaled, theta, s, rtol=1e-12, atol=1e-12)
    b = mf.simulate(mf.SelfAttention(beta, normalized=False), theta, s * np.exp(-beta), rtol=1e-12, atol=1e-12)
    assert float(np.max(np.abs(a.positions.values - b.positions.values))) < 1e-10
    with pytest.raises(ValueError, match=r"beta = 800 is too large .*time='rescaled'.*rescaled time s = e\^beta t"):
        mf.simulate(mf.SelfAttention(800.0, normalized=False), theta, [0, 1])
    ds = mf.simulate(mf.Interaction(-mf.Kernel.gaussian(2 / 800.0) / 800.0), theta, [0, 1])
    assert ds.attrs["success"] == 1
    # its energy is -e^{-β}E_β of the positions; E_β of USA itself in logarithms
    usa = mf.SelfAttention(800.0, normalized=False)
    assert -float(ds.energy[-1]) == pytest.approx(mf.energy(usa, ds.positions.values[-1], scale="normalized"),
                                                  rel=4 * 800 * EPS)
    assert np.isfinite(mf.energy(usa, theta, scale="log"))


@pytest.mark.parametrize("beta", [500.0, 1000.0])
def test_large_beta_staircase_merge_jumps(beta):
    # five tokens, four merges; the jump of e^{-β}E_β equals (m_a m_b/β)(1 - e^{-β(1-cos Δ)}) up to the other pair
    # terms (< e^{-35}) and round-off (measured ≤ 3e-13): 1e-8 is the requirement
    ds = mf.arc_length_staircase(beta)
    assert ds.attrs["success"] == 1 and ds.sizes["merge"] == 4
    assert float(ds.relative_error.max()) <= 1e-8
    assert np.all(np.isfinite(ds.normalized_energy)) and np.all(np.isfinite(ds.log_energy))
    np.testing.assert_allclose(ds.mass_a + ds.mass_b, [0.4, 0.6, 0.4, 1.0], rtol=1e-15)
    assert float(ds.normalized_energy[-1]) == pytest.approx(1 / (2 * beta), rel=4 * beta * EPS)
    assert float(ds.normalized_energy[0]) == pytest.approx(
        mf.energy(mf.SelfAttention(beta), mf.staircase_angles(beta), scale="normalized"), rel=1e-15)
    assert np.all(np.diff(ds.arc_length) >= 0)

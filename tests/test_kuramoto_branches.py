"""Bifurcation diagrams on the Ott–Antonsen manifold against the exact results of Sakaguchi and of Martens et al.
(PRE 79, 026204 (2009)) for the symmetric bimodal Lorentzian, in this package's normalisation."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
import xarray as xr
from scipy.optimize import brentq

import meanfield as mf
from meanfield.studies.kuramoto._branches import bimodal_boundaries, kuramoto_branches

#: a short survey: every test below relies on the continuation, not on long transients
SURVEY = {"t_transient": 150.0, "t_record": 60.0}


def bimodal(separation: float, width: float = 1.0, coupling: float = 1.0) -> mf.Kuramoto:
    return mf.Kuramoto(coupling=coupling, frequencies=mf.bimodal_lorentzian(separation, width))


def k_of_u(u: np.ndarray, separation: float, width: float) -> np.ndarray:
    """K(u) = 2Δ/(1 - u) + 2ω₀²(1 - u)/(Δ(1 + u)²) of the symmetric stationary states, u = |z₊|²."""
    return 2 * width / (1 - u) + 2 * separation ** 2 * (1 - u) / (width * (1 + u) ** 2)


def branch(ds: xr.Dataset, number: int) -> xr.Dataset:
    return ds.isel(point=np.flatnonzero(ds.branch.values == number))


def symmetric_branch(ds: xr.Dataset) -> xr.Dataset:
    """The points with z₋ = conj z₊ and Ω = 0 (to rounding), off incoherence."""
    w = ds.amplitude_real.values + 1j * ds.amplitude_imag.values
    keep = (ds.branch.values > 0) & (np.abs(w[:, 1] - np.conj(w[:, 0])) < 1e-9) & \
        (np.abs(ds.frequency.values) < 1e-9)
    return ds.isel(point=np.flatnonzero(keep))


@pytest.fixture(scope="module")
def bistable():
    """Δ/√3 < ω₀ = 0.8 < Δ = 1: fold at K ≈ 3.1706 below the pitchfork at K = 3.28."""
    return kuramoto_branches(bimodal(0.8), [3.0, 3.22, 3.5], periodic=False, **SURVEY)


@pytest.fixture(scope="module")
def waves():
    """ω₀ = 1.3 > Δ = 1: the Hopf point of incoherence at K = 4Δ, standing waves above it."""
    return kuramoto_branches(bimodal(1.3), np.linspace(4.0, 4.2, 5), **SURVEY)


def incoherence_rates(model: mf.Kuramoto) -> np.ndarray:
    """The rates of the Ott–Antonsen amplitudes z = ∫ e^{iθ} at incoherence: conj of mode 1's rates."""
    return np.conj(mf.kuramoto_linear_rates(model, 1)[0])


def test_incoherence_rates_of_a_lorentzian_with_phase_lag():
    c, gamma, k, alpha = 0.3, 0.5, 2.0, 0.7
    rates = incoherence_rates(mf.Kuramoto.sakaguchi(k, alpha, scipy.stats.cauchy(c, gamma)))
    # one pole: λ = ic - γ + (K/2) e^{-iα}, by one 1 × 1 eigenvalue problem (rounding)
    assert rates.shape == (1,) and abs(rates[0] - (1j * c - gamma + k / 2 * np.exp(-1j * alpha))) < 1e-14


@pytest.mark.parametrize("separation, width", [(0.3, 1.0), (0.8, 1.0), (1.0, 0.5), (1.7, 1.0), (2.5, 0.6)])
def test_incoherence_boundary_of_the_bimodal_law_is_the_root_of_the_largest_rate(separation, width):
    def growth(k: float) -> float:
        return float(incoherence_rates(bimodal(separation, width, k))[0].real)

    root = brentq(growth, 0.5 * width, 20 * width, xtol=1e-13)
    exact = 2 * (width ** 2 + separation ** 2) / width if separation <= width else 4 * width
    # λ = -Δ + K/4 ± √(K²/16 - ω₀²) is evaluated to rounding; brentq brackets its root to 1e-13
    assert abs(root - exact) < 1e-6
    boundaries = bimodal_boundaries([separation], width)
    assert abs(float(boundaries.incoherence_boundary[0]) - exact) < 1e-14
    assert int(boundaries.boundary_kind[0]) == int(separation > width)
    rates = incoherence_rates(bimodal(separation, width, exact + 1e-3))
    assert (abs(rates[0].imag) > 1e-3) == (separation > width)  # Hopf: a complex pair; pitchfork: real


def test_sakaguchi_branch_matches_the_exact_locked_state_and_is_stable():
    c, gamma, alpha = 0.3, 0.5, 0.6
    ds = kuramoto_branches(mf.Kuramoto.sakaguchi(1.0, alpha, scipy.stats.cauchy(c, gamma)),
                           np.linspace(0.5, 6.0, 4), periodic=False, **SURVEY)
    critical = 2 * gamma / np.cos(alpha)
    assert np.allclose(ds.attrs["incoherence_loses_stability_at"], [critical], rtol=1e-12, atol=0)
    locked = branch(ds, 1)
    k, r = locked.point_coupling.values, locked.r.values
    assert locked.sizes["point"] > 50 and k.max() == 6.0 and abs(k.min() - critical) < 1e-5
    # Newton to rounding (one iteration past the tolerance): the formulas hold to ~1e-14
    assert np.max(np.abs(r - np.sqrt(1 - 2 * gamma / (k * np.cos(alpha))))) < 1e-10
    assert np.max(np.abs(locked.frequency.values - (c - k / 2 * np.sin(alpha) * (1 + r ** 2)))) < 1e-10
    assert np.all(locked.stable.values == 1) and np.all(locked.max_growth_rate.values < 0)
    assert set(np.unique(ds.branch.values)) == {0, 1}  # no other stationary state
    incoherence = branch(ds, 0)
    assert np.array_equal(incoherence.stable.values, (incoherence.point_coupling.values < critical).astype(int))


@pytest.mark.parametrize("separation, couplings", [(0.8, [3.0, 3.5]), (1.3, [4.1, 6.0])])
def test_symmetric_bimodal_branch_is_k_of_u_and_its_fold_is_the_saddle_node(separation, couplings):
    ds = kuramoto_branches(bimodal(separation), couplings, periodic=False, **SURVEY)
    points = symmetric_branch(ds)
    w = points.amplitude_real.values[:, 0] + 1j * points.amplitude_imag.values[:, 0]
    u, k = np.abs(w) ** 2, points.point_coupling.values
    assert points.sizes["point"] > 50
    # the branch is solved to rounding; K(u) amplifies u's rounding by dK/du ≤ 2/(1 - u)² (≈ 10² here)
    assert np.max(np.abs(k - k_of_u(u, separation, 1.0))) < 1e-10
    cos2 = 2 / (k * (1 - u))
    assert np.max(np.abs(points.r.values - np.sqrt(u * cos2))) < 1e-10
    # the fold located along the branch (Brent in arclength) is the root of dK/du (bisection): both exact
    saddle = float(bimodal_boundaries([separation], 1.0).saddle_node[0])
    folds = ds.attrs["fold_couplings"]
    assert folds.size == 1 and abs(folds[0] - saddle) < 1e-8
    below, above = points.stable.values[k < saddle + 1e-3], points.stable.values[u > 0.5]
    assert np.all(above == 1) and np.any(below == 0)  # the upper branch is stable, the lower one not


def test_fold_exists_only_beyond_the_tricritical_point():
    ds = bimodal_boundaries([0.5, 1 / np.sqrt(3) - 1e-9, 0.6, 1.0, 2.0], 1.0)
    assert np.isnan(ds.saddle_node.values[:2]).all() and np.isfinite(ds.saddle_node.values[2:]).all()
    assert ds.attrs["tricritical_separation"] == 1 / np.sqrt(3) and ds.attrs["tricritical_coupling"] == 8 / 3
    assert ds.attrs["bogdanov_takens_coupling"] == 4.0
    # the fold meets the pitchfork at the tricritical point and lies below it beyond (subcritical pitchfork)
    near = bimodal_boundaries([1 / np.sqrt(3) + 1e-6], 1.0)
    assert abs(float(near.saddle_node[0]) - 8 / 3) < 1e-5 and float(near.saddle_node_u[0]) < 1e-5
    assert np.all(ds.saddle_node.values[2:4] < ds.incoherence_boundary.values[2:4])


def test_bistability_between_incoherence_and_the_upper_branch(bistable):
    separation, k = 0.8, 3.22
    saddle = float(bimodal_boundaries([separation], 1.0).saddle_node[0])
    assert saddle < k < 2 * (1 + separation ** 2)
    incoherence = branch(bistable, 0)
    assert int(incoherence.stable.values[incoherence.point_coupling.values == k][0]) == 1
    upper = symmetric_branch(bistable)
    u_fold = float(bimodal_boundaries([separation], 1.0).saddle_node_u[0])
    w = upper.amplitude_real.values[:, 0] + 1j * upper.amplitude_imag.values[:, 0]
    on_top = np.abs(w) ** 2 > u_fold
    near = np.abs(upper.point_coupling.values - k) < 0.05
    assert np.any(on_top & near) and np.all(upper.stable.values[on_top] == 1)
    assert np.all(upper.stable.values[~on_top & (upper.point_coupling.values > saddle + 1e-3)] == 0)
    # the exact upper state at K: the root of K(u) = K above the fold
    u = brentq(lambda u: k_of_u(u, separation, 1.0) - k, u_fold, 0.99, xtol=1e-15)
    r_upper = np.sqrt(u * 2 / (k * (1 - u)))
    model = bimodal(separation, coupling=k)
    small = mf.ott_antonsen(model, [0.0, 400.0], 0.05).order_parameter.values[-1]
    large = mf.ott_antonsen(model, [0.0, 400.0], 0.9).order_parameter.values[-1]
    # both converge at rates ≥ 0.05 (incoherence: -Δ + K/4 + √(K²/16 - ω₀²) ≈ -0.106): e^{-20} left after t = 400
    assert small < 1e-8 and abs(large - r_upper) < 1e-8
    outcome = bistable.survey_outcome.sel(coupling=k).values
    assert outcome[0] == 0 and outcome[2] == 1  # the survey's starts 0.01 and 0.95


def test_standing_waves_are_born_at_four_delta_with_amplitude_sqrt_k_minus_four_delta(waves):
    # a conjugate pair crosses at K = 4Δ with frequencies ±√(ω₀² − Δ²): two crossings, one loss of stability
    assert np.allclose(waves.attrs["incoherence_crossings"], [4.0, 4.0], rtol=1e-12, atol=0)
    assert np.allclose(np.sort(waves.attrs["incoherence_crossing_frequencies"]),
                       np.array([-1, 1]) * np.sqrt(1.3 ** 2 - 1), rtol=1e-9, atol=0)
    assert np.allclose(waves.attrs["incoherence_loses_stability_at"], [4.0], rtol=1e-12, atol=0)
    assert waves.attrs["hopf_couplings"].size == 0  # the Hopf point is incoherence's, not a stationary branch's
    k, r_max = waves.orbit_coupling.values, waves.orbit_r_max.values
    assert np.all(waves.orbit_stable.values == 1) and np.all(waves.orbit_max_multiplier.values < 1)
    assert k.min() - 4 < 1e-4 and k.max() == 4.2 and np.max(waves.orbit_r_min.values) < 1e-4
    close = (k - 4 > 1e-4) & (k - 4 < 1e-2)
    exponent = np.polyfit(np.log(k[close] - 4), np.log(r_max[close]), 1)[0]
    # r_max = c √(K - 4Δ) (1 + O(K - 4Δ)): the fitted exponent is 0.5 to ~1e-3 over K - 4Δ ≤ 1e-2
    assert abs(exponent - 0.5) < 0.05
    # the period at the Hopf point: r = |Z| of Z ∝ cos(Ω₀t), Ω₀ = √(ω₀² - Δ²), is π/Ω₀-periodic
    assert abs(waves.orbit_period.values[np.argmin(k)] - np.pi / np.sqrt(1.3 ** 2 - 1)) < 1e-3
    # the survey measures the same waves: the continuation interpolated to K = 4.15 and 4.2 (step ≲ 5e-3)
    order = np.argsort(k)
    for coupling in (4.15, 4.2):
        wave = waves.sel(coupling=coupling)
        assert abs(float(wave.wave_r_max[0]) - np.interp(coupling, k[order], r_max[order])) < 1e-5
        period = np.interp(coupling, k[order], waves.orbit_period.values[order])
        assert abs(float(wave.wave_period[0]) - period) < 1e-4 * period


def test_the_dataset_is_written_and_read_back(waves, tmp_path):
    path = tmp_path / "branches.nc"
    waves.to_netcdf(path)
    with xr.open_dataset(path) as back:
        xr.testing.assert_allclose(back.load(), waves)
        assert list(back.attrs["incoherence_crossings"]) == list(waves.attrs["incoherence_crossings"])


@pytest.mark.parametrize("model, match", [
    (mf.Kuramoto(frequencies=scipy.stats.cauchy(0, 1), noise=0.1), "noise"),
    (mf.Kuramoto(frequencies=scipy.stats.norm(0, 1)), "poles"),
    (mf.Kuramoto.harmonics(1.0, [1.0, 0.5], scipy.stats.cauchy(0, 1)), "harmonic"),
])
def test_models_outside_the_reduction_are_refused(model, match):
    with pytest.raises(ValueError, match=match):
        kuramoto_branches(model, [1.0, 2.0])


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="Lorentzian"):
        kuramoto_branches(mf.Kuramoto(frequencies=mf.DiscreteLaw([-1.0, 1.0])), [1.0, 2.0])
    for couplings in ([1.0], [2.0, 2.0], [-1.0, 2.0], [[1.0, 2.0]], [1.0, np.nan]):
        with pytest.raises(ValueError, match="couplings"):
            kuramoto_branches(bimodal(0.5), couplings)
    with pytest.raises(ValueError, match="starts"):
        kuramoto_branches(bimodal(0.5), [1.0, 2.0], starts=[1.5])
    with pytest.raises(ValueError, match="t_transient"):
        kuramoto_branches(bimodal(0.5), [1.0, 2.0], t_transient=-1.0)
    with pytest.raises(ValueError, match="width"):
        bimodal_boundaries([1.0], 0.0)
    with pytest.raises(ValueError, match="separations"):
        bimodal_boundaries([-1.0], 1.0)

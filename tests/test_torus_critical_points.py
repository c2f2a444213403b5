"""Critical points of E_β on the torus Tⁿ (paper 2, §7.2, eq. (7.4), Problem 3): closed-form gradient and
Hessian, the known families and their spectra, the symmetry reduction, the enumeration and its classes.

Scale: every gradient and Hessian entry is at most e^β/n² in modulus; tolerances are relative to it.
"""

from __future__ import annotations

import numpy as np
import pytest

from meanfield import (canonical_gaps, critical_point_count_stability, critical_point_map, known_critical_points,
                       torus_critical_points, torus_energy, torus_gradient, torus_hessian, torus_hessian_spectrum)
from meanfield.studies.open_problems._torus_critical_points import CRITICAL_POINT_CLASSES, default_betas

ROUND_OFF = 1e-12
"""Closed forms against the computed spectra, relative to e^β/n²: sums of ≤ 8 terms of size ≤ 1 and an
8×8 symmetric eigensolver have backward errors ~ 10⁻¹⁵; 10⁻¹² leaves three orders for accumulation."""


def scale(n, beta):
    return np.exp(beta) / n**2


def test_gradient_is_the_central_difference_of_the_energy_at_second_order(rng):
    n, beta = 5, 1.7
    theta = rng.uniform(0, 2 * np.pi, n)
    exact = torus_gradient(theta, beta)
    errors = []
    for h in (1e-3, 5e-4):
        steps = h * np.eye(n)
        central = (torus_energy(theta + steps, beta) - torus_energy(theta - steps, beta)) / (2 * h)
        errors.append(np.abs(central - exact).max() / scale(n, beta))
    # central differences: error ≈ h²/6 |E'''| ~ 1e-7 at h = 1e-3, falling by 4 when h halves
    assert errors[0] < 1e-6
    assert np.log2(errors[0] / errors[1]) == pytest.approx(2.0, abs=0.05)


def test_hessian_is_the_central_difference_of_the_gradient_at_second_order(rng):
    n, beta = 6, 2.3
    theta = rng.uniform(0, 2 * np.pi, n)
    exact = torus_hessian(theta, beta)
    errors = []
    for h in (1e-3, 5e-4):
        steps = h * np.eye(n)
        central = (torus_gradient(theta + steps, beta) - torus_gradient(theta - steps, beta)) / (2 * h)
        errors.append(np.abs(central - exact).max() / scale(n, beta))
    assert errors[0] < 1e-5
    assert np.log2(errors[0] / errors[1]) == pytest.approx(2.0, abs=0.05)
    np.testing.assert_allclose(exact, exact.T, rtol=0, atol=ROUND_OFF * scale(n, beta))
    np.testing.assert_allclose(exact.sum(axis=-1), 0.0, atol=ROUND_OFF * scale(n, beta))  # H·1 = 0


def test_batched_evaluation_equals_one_at_a_time(rng):
    theta = rng.uniform(0, 2 * np.pi, (3, 4, 7))
    for function in (torus_energy, torus_gradient, torus_hessian, torus_hessian_spectrum):
        batched = function(theta, 1.1)
        single = np.stack([np.stack([function(t, 1.1) for t in row]) for row in theta])
        np.testing.assert_allclose(batched, single, rtol=1e-14, atol=0)


@pytest.mark.parametrize("n", range(2, 9))
@pytest.mark.parametrize("beta", [0.3, 2.0, 9.0])
def test_equispaced_state_is_critical_with_the_circulant_spectrum(n, beta):
    theta = 2 * np.pi * np.arange(n) / n
    assert np.abs(torus_gradient(theta, beta)).max() <= ROUND_OFF * scale(n, beta)
    # H is circulant, H_{i,i+m} = f(2πm/n)/n², f(u) = (cos u − β sin² u) e^{β cos u}, with rows summing to 0:
    # λ_p = (1/n²) Σ_{m=1}^{n−1} f(2πm/n) (cos(2πpm/n) − 1), p = 1 … n−1 (p = 0 is the rotation, λ = 0)
    u = 2 * np.pi * np.arange(1, n) / n
    f = (np.cos(u) - beta * np.sin(u) ** 2) * np.exp(beta * np.cos(u))
    p = np.arange(1, n)[:, None]
    closed = np.sort((f * (np.cos(p * u) - 1)).sum(axis=-1) / n**2)
    np.testing.assert_allclose(torus_hessian_spectrum(theta, beta), closed, rtol=0, atol=ROUND_OFF * scale(n, beta))


@pytest.mark.parametrize(("n", "a"), [(2, 1), (3, 1), (5, 2), (8, 1), (8, 3), (8, 4)])
@pytest.mark.parametrize("beta", [0.5, 4.0])
def test_antipodal_state_is_critical_with_its_spectrum(n, a, beta):
    b = n - a
    theta = np.where(np.arange(n) < a, 0.0, np.pi)
    assert np.abs(torus_gradient(theta, beta)).max() <= ROUND_OFF * scale(n, beta)
    # a particles at 0, b at π: the relative rotation of the clusters has λ = e^{−β}/n > 0; moving the a
    # (resp. b) particles apart within their cluster has (b e^{−β} − a e^β)/n² (resp. (a e^{−β} − b e^β)/n²)
    closed = np.sort(np.concatenate([[np.exp(-beta) / n], np.full(a - 1, (b * np.exp(-beta) - a * np.exp(beta)) / n**2),
                                     np.full(b - 1, (a * np.exp(-beta) - b * np.exp(beta)) / n**2)]))
    np.testing.assert_allclose(torus_hessian_spectrum(theta, beta), closed, rtol=0, atol=ROUND_OFF * scale(n, beta))


@pytest.mark.parametrize("n", [2, 5, 8])
def test_synchronised_hessian_is_minus_e_beta_over_n_times_the_projection(n):
    beta = 1.3
    projection = np.eye(n) - 1.0 / n
    # H_ik = e^β/n² (k ≠ i), H_ii = −(n − 1) e^β/n²: H = (e^β/n²)(11ᵀ − n I) = −(e^β/n) P
    np.testing.assert_allclose(torus_hessian(np.full(n, 0.4), beta), -np.exp(beta) / n * projection, rtol=0,
                               atol=ROUND_OFF * scale(n, beta))
    assert float(torus_energy(np.full(n, 0.4), beta)) == pytest.approx(np.exp(beta) / (2 * beta), rel=1e-15)


def test_known_families_are_critical_and_named():
    families = known_critical_points(8)
    assert set(families) == {"synchronised", "equispaced", "antipodal 7+1", "antipodal 6+2", "antipodal 5+3",
                             "antipodal 4+4", "polygon 4x2"}
    assert set(known_critical_points(6)) >= {"polygon 3x2", "antipodal 3+3"}
    for theta in families.values():
        assert np.abs(torus_gradient(theta, 3.0)).max() <= ROUND_OFF * scale(8, 3.0)


def test_n3_is_exactly_the_three_known_orbits_with_their_energies():
    # E = (1/(2βn²)) Σ_{i,j} e^{β cos}: sync 9 e^β; 2+1 antipodal 5 e^β + 4 e^{−β}; equispaced 3 e^β + 6 e^{−β/2}
    for beta in (0.5, 2 * 9 / np.pi**2):
        points = torus_critical_points(3, beta, starts=256, seed=1)
        assert points["family"].values.tolist() == ["synchronised", "antipodal 2+1", "equispaced"]
        exact = np.array([9 * np.exp(beta), 5 * np.exp(beta) + 4 * np.exp(-beta),
                          3 * np.exp(beta) + 6 * np.exp(-beta / 2)]) / (18 * beta)
        np.testing.assert_allclose(points["energy"].values, exact, rtol=1e-14)
        assert points["classification"].values.tolist() == ["synchronised", "strict saddle", "strict saddle"]
        assert points["morse_index"].values.tolist() == [0, 1, 2]
        np.testing.assert_allclose(points["eigenvalue"].values[0], -3.0, rtol=1e-14)  # −e^β/n in units e^β/n²
        assert np.all(points["starts_reached"].values > 0)  # each also found from random starts


@pytest.mark.parametrize("n", range(3, 9))
def test_proven_regions_have_only_strict_saddles(n):
    """Problem 3 holds for β ≤ 1 and β ≥ n²/π² (paper 2): every non-synchronised point has λ_max > 0."""
    for beta in (0.5, 2 * n**2 / np.pi**2):
        points = torus_critical_points(n, beta, starts=512, seed=2)
        others = points["classification"].values != "synchronised"
        assert points["classification"].values.tolist().count("synchronised") == 1
        assert np.all(points["classification"].values[others] == "strict saddle")
        assert np.all(points["largest_eigenvalue"].values[others] > points["eigenvalue_tolerance"].values[others])
        assert np.all(points["residual"].values <= 1e-13)


def test_canonical_form_is_invariant_under_rotation_permutation_and_reflection(rng):
    points = torus_critical_points(6, 2.0, starts=256, seed=3)
    chiral = points.isel(point=points["multiplicities"].values.tolist().index("3,2,1"))
    theta = chiral["theta"].values
    reference = canonical_gaps(theta)
    for _ in range(5):
        copy = rng.permutation(theta + rng.uniform(-10, 10))
        np.testing.assert_allclose(canonical_gaps(copy), reference, rtol=0, atol=1e-12)
        np.testing.assert_allclose(canonical_gaps(-copy), reference, rtol=0, atol=1e-12)
        np.testing.assert_allclose(canonical_gaps(copy, reflection=False), canonical_gaps(theta, reflection=False),
                                   rtol=0, atol=1e-12)
    # the orbit 3,2,1 has no mirror symmetry: without the reflection its mirror image is another orbit
    assert np.abs(canonical_gaps(-theta, reflection=False) - canonical_gaps(theta, reflection=False)).max() > 0.1
    np.testing.assert_allclose(reference.sum(), 2 * np.pi, rtol=1e-15)


def test_counting_mirror_images_adds_one_orbit_per_chiral_orbit():
    kept = torus_critical_points(6, 2.0, starts=256, seed=3)
    split = torus_critical_points(6, 2.0, starts=256, seed=3, reflection=False)
    theta = kept["theta"].values
    mirror = canonical_gaps(-theta, reflection=False) - canonical_gaps(theta, reflection=False)
    chiral = np.abs(mirror).max(axis=-1) > 1e-6
    assert chiral.sum() == 1  # clusters 3,2,1 at three distinct gaps; every other orbit is its own mirror image
    assert split.sizes["point"] == kept.sizes["point"] + chiral.sum()


def test_each_orbit_is_represented_once_and_is_a_polished_critical_point():
    points = torus_critical_points(7, 2.5, starts=512, seed=4)
    gaps = points["gaps"].values
    distance = np.abs(gaps[:, None] - gaps[None]).max(axis=-1) + np.eye(len(gaps))
    assert distance.min() > 1e-6  # canonical forms of distinct orbits differ
    assert np.all(points["residual"].values <= 1e-13)
    np.testing.assert_allclose(points["theta"].values[:, 0], 0.0)
    assert np.all(np.diff(points["energy"].values) <= 0)
    positive = points["eigenvalue"].values > points["eigenvalue_tolerance"].values[:, None]
    np.testing.assert_array_equal(points["morse_index"].values, positive.sum(axis=-1))
    sizes = [sum(map(int, m.split(","))) for m in points["multiplicities"].values]
    assert sizes == [7] * points.sizes["point"]


def test_found_points_carry_the_closed_form_intra_cluster_eigenvalues():
    """Splitting a cluster c of m ≥ 2 coincident particles at φ_c (a zero-sum vector on c) is an eigenvector:
    λ_c = −m − Σ_{k∉c} f(φ_c − θ_k), f(u) = (cos u − β sin² u) e^{β(cos u − 1)}, multiplicity m − 1 (units e^β/n²)."""
    beta = 2.5
    points = torus_critical_points(7, beta, starts=512, seed=5)
    checked = 0
    for theta, spectrum in zip(points["theta"].values, points["eigenvalue"].values):
        together = np.abs(np.angle(np.exp(1j * (theta[:, None] - theta[None, :])))) <= 1e-6
        for i in np.flatnonzero(together.sum(axis=1) >= 2):
            if np.argmax(together[i]) != i:
                continue  # one check per cluster, at its first member
            u = theta[i] - theta[~together[i]]
            closed = -together[i].sum() - ((np.cos(u) - beta * np.sin(u) ** 2) * np.exp(beta * (np.cos(u) - 1))).sum()
            assert np.sum(np.abs(spectrum - closed) <= ROUND_OFF) >= together[i].sum() - 1
            checked += 1
    assert checked >= 20


def test_equispaced_state_is_a_local_minimum_at_large_n_and_beta():
    # circulant spectrum at n = 8, β = 3: all seven eigenvalues > 0 (a local minimum of E_β, a strict saddle
    # in the paper's sense)
    points = torus_critical_points(8, 3.0, starts=64, seed=0)
    equispaced = points.isel(point=points["family"].values.tolist().index("equispaced"))
    assert bool(equispaced["local_minimum"]) and int(equispaced["morse_index"]) == 7
    assert equispaced["classification"].item() == "strict saddle"


def test_counts_with_s_starts_are_the_first_half_of_a_run_with_2s():
    stability = critical_point_count_stability([4, 5], [1.3, 2.0], starts=128, seed=6).summary
    direct = critical_point_map([4, 5], [1.3, 2.0], starts=128, seed=6).summary
    np.testing.assert_array_equal(stability["count"].sel(starts=128).values, direct["count"].values)
    assert bool(stability["stable"].all())
    assert stability["count"].dims == ("starts", "n", "beta", "class")


def test_map_flags_the_proven_regions_and_the_open_gap():
    betas = [0.5, 1.0, 2.0, 3.0]
    result = critical_point_map([4, 5], betas, starts=128, seed=7)
    summary = result.summary
    assert summary["count"].dims == ("n", "beta", "class")
    assert summary["class"].values.tolist() == list(CRITICAL_POINT_CLASSES)
    # n²/π² = 1.62 (n = 4) and 2.53 (n = 5)
    assert summary["open"].values.tolist() == [[False, False, False, False], [False, False, True, False]]
    assert summary["region"].sel(n=4, beta=3.0).item() == "proven (beta >= n^2/pi^2)"
    assert not bool(summary["counterexample"].any())
    assert np.all(summary["saddle_margin"].values > 0)
    assert np.all(summary["count"].sel({"class": "synchronised"}).values == 1)
    assert summary.attrs["starts"] == 128 and summary.attrs["seed"] == 7
    points = result.points
    assert int(summary["n_points"].sum()) == points.sizes["point"]
    assert np.all(np.isnan(points["theta"].values[points["n"].values == 4][:, 4]))  # padded to n = 5
    assert default_betas(8)[0] == 0.1 and default_betas(8)[-1] == pytest.approx(2 * 64 / np.pi**2)


def test_gap_counts_are_stable_when_the_starts_are_doubled():
    """n = 4, 5 in their gaps 1 < β < n²/π² (1.62 and 2.53)."""
    stability = critical_point_count_stability([4, 5], [1.2, 1.5, 2.0, 2.4], starts=256, seed=8).summary
    assert bool(stability["stable"].all())
    assert stability["count"].sel(starts=512, n=4).sum("class").values.tolist() == [5, 5, 5, 5]
    assert stability["count"].sel(starts=512, n=5).sum("class").values.tolist() == [7, 7, 7, 7]


@pytest.mark.slow
def test_gap_counts_are_stable_when_the_starts_are_doubled_larger_n():
    """n = 6, 7, 8 in their gaps (n²/π² = 3.65, 4.96, 6.48): 29 orbits at n = 8 for every β in the gap."""
    betas = [1.1, 1.6, 2.4, 3.5, 4.5, 6.0]
    stability = critical_point_count_stability([6, 7, 8], betas, starts=1024, seed=9).summary
    assert bool(stability["stable"].where(stability["open"], True).all())
    totals = stability["count"].sel(starts=2048).sum("class")
    assert totals.sel(n=6, beta=[1.1, 1.6, 2.4, 3.5]).values.tolist() == [12] * 4
    assert totals.sel(n=7, beta=betas[:5]).values.tolist() == [17] * 5
    assert totals.sel(n=8).values.tolist() == [29] * 6
    assert not bool(stability["counterexample"].any())


@pytest.mark.parametrize(
    ("call", "match"),
    [(lambda: torus_critical_points(1, 1.0), "n must be between 2 and 8 particles .* got n=1"),
     (lambda: torus_critical_points(9, 1.0), "n must be between 2 and 8 particles .* got n=9"),
     (lambda: torus_critical_points(4, 0.0), "beta must be finite and > 0, got 0.0"),
     (lambda: torus_critical_points(4, -1.0), "beta must be finite and > 0"),
     (lambda: torus_critical_points(4, np.nan), "beta must be finite and > 0"),
     (lambda: torus_critical_points(4, np.inf), "beta must be finite and > 0"),
     (lambda: torus_critical_points(4, 800.0), "beta must be <= 700"),
     (lambda: torus_critical_points(4, 1.0, starts=0), "starts must be >= 1, got 0"),
     (lambda: torus_critical_points(4, 1.0, tolerance=0.0), "tolerance must be finite and > 0"),
     (lambda: torus_critical_points(4, 1.0, seed=-1), "seed must be >= 0"),
     (lambda: critical_point_map([3, 10], [1.0]), "got n=10"),
     (lambda: critical_point_map([], [1.0]), "n must be an integer or a non-empty sequence"),
     (lambda: critical_point_map(3, [2.0, 1.0]), "beta must be strictly increasing"),
     (lambda: critical_point_map(3, [1.0, -2.0]), "beta must be finite and > 0"),
     (lambda: torus_energy([0.0, np.nan], 1.0), "theta must contain finite angles"),
     (lambda: torus_gradient(1.0, 1.0), "theta must be an array of angles"),
     (lambda: torus_hessian_spectrum([1.0], 1.0), "n >= 2 particles"),
     (lambda: torus_hessian([0.0, 1.0], 0.0), "beta must be finite and > 0")])
def test_bad_input_is_refused_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_wrong_types_are_refused():
    with pytest.raises(TypeError, match="n must be an integer"):
        torus_critical_points(4.0, 1.0)
    with pytest.raises(TypeError, match="reflection must be True or False"):
        torus_critical_points(4, 1.0, reflection="yes")

"""W_p on S¹ and S^{d-1}: exact identities, POT cross-checks, reading plain arrays, samplers, bad input.

Property-based (hypothesis) versions of the invariants: test_wasserstein_properties.py (slow).
"""

from __future__ import annotations

import numpy as np
import ot
import pytest

import meanfield as mf
from meanfield.measures import wasserstein
from meanfield.measures import sample

TWO_PI = 2 * np.pi


def geodesic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    d = np.abs(np.mod(x[:, None] - y[None, :], TWO_PI))
    return np.minimum(d, TWO_PI - d)


def emd_circle(x, wx, y, wy, p):
    """Reference: network simplex with the explicit circular geodesic cost."""
    return ot.emd2(wx, wy, geodesic(x, y) ** p, numItermax=10_000_000) ** (1 / p)


def pot_circle(x, wx, y, wy, p):
    """Reference: POT's circle solver on [0, 1); it returns W_p^p in units of the period."""
    value = ot.wasserstein_circle(x / TWO_PI, y / TWO_PI, wx, wy, p=p, eps=1e-14)[0]
    return TWO_PI * value ** (1 / p)


@pytest.mark.parametrize("p", [1, 1.5, 2, 3])
def test_point_masses_at_geodesic_distance(p):
    x = np.array([0.3, 0.3, 6.0, 1.0])
    y = np.array([2.5, 0.3 + np.pi, 0.2, 1.0 + np.pi - 1e-3])
    for a, b in zip(x, y):
        expected = geodesic(np.array([a]), np.array([b]))[0, 0]
        assert wasserstein(np.array([a]), np.array([b]), p) == pytest.approx(expected, abs=1e-14)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_rotation_bounds(p, rng):
    alpha = 0.7
    # a point mass rotated by alpha: exactly |alpha|
    assert wasserstein(np.array([1.0]), np.array([1.0 + alpha]), p) == pytest.approx(alpha, abs=1e-14)
    # the uniform grid measure rotated by a multiple of the spacing: zero
    circle = mf.Circle(64)
    atoms = circle.theta
    assert wasserstein(atoms, atoms + 5 * TWO_PI / 64, p) == pytest.approx(0.0, abs=1e-13)
    # a generic measure rotated by alpha: at most |alpha|
    x = rng.vonmises(0.0, 2.0, 200)
    w = rng.random(200)
    w /= w.sum()
    a = mf.EmpiricalMeasure(x, w)
    b = mf.EmpiricalMeasure(x + alpha, w)
    assert wasserstein(a, b, p) <= alpha + 1e-12


def test_rotated_uniform_density_is_zero_up_to_grid(rng):
    # the node measure of the uniform density against itself rotated by a
    # non-grid angle: exact value is W_p of two interleaved uniform grids,
    # which for W1 is min(s, h - s) with s = alpha mod h (every atom moves by it)
    circle = mf.Circle(128)
    h = TWO_PI / 128
    alpha = 0.31
    s = np.mod(alpha, h)
    rotated = mf.EmpiricalMeasure(circle.theta + alpha)
    assert wasserstein(mf.uniform(circle), rotated, 1) == pytest.approx(min(s, h - s), abs=1e-13)


@pytest.mark.parametrize("p", [1, 1.5, 2, 3])
def test_agrees_with_pot_on_weighted_samples(p, rng):
    # both exact: agreement to rounding (1e-10 leaves room for POT's own cumulative sums)
    for n, m in [(1, 7), (13, 29), (60, 45)]:
        x = rng.uniform(-np.pi, 3 * np.pi, n)
        y = rng.vonmises(1.0, 3.0, m)
        wx = rng.random(n) + 0.1
        wx /= wx.sum()
        wy = rng.random(m) + 0.1
        wy /= wy.sum()
        ours = wasserstein(mf.EmpiricalMeasure(x, wx), mf.EmpiricalMeasure(y, wy), p)
        assert ours == pytest.approx(emd_circle(x, wx, y, wy, p), abs=1e-10)
        assert ours == pytest.approx(pot_circle(x, wx, y, wy, p), abs=1e-10)


@pytest.mark.parametrize("p", [1, 2])
def test_density_against_particles_matches_pot(p, rng):
    circle = mf.Circle(96)
    rho = mf.von_mises(circle, 0.4, 2.5)
    x = rng.vonmises(0.2, 1.0, 150)
    weights = rho.values * circle.weights
    expected = emd_circle(circle.theta, weights / weights.sum(), x, np.full(150, 1 / 150), p)
    assert wasserstein(rho, x, p) == pytest.approx(expected, abs=1e-10)
    assert wasserstein(x, rho, p) == pytest.approx(expected, abs=1e-10)


def test_density_against_density(rng):
    circle = mf.Circle(64)
    a = mf.von_mises(circle, 0.0, 1.0)
    b = mf.wrapped_cauchy(circle, 2.0, 0.6)
    w = circle.weights
    for p in (1, 2.5):
        expected = emd_circle(circle.theta, a.values * w / a.mass, circle.theta, b.values * w / b.mass, p)
        assert wasserstein(a, b, p) == pytest.approx(expected, abs=1e-10)
    assert wasserstein(a, a, 2) == pytest.approx(0.0, abs=1e-12)


def test_batches_against_single_calls(rng):
    x = rng.vonmises(0.0, 1.0, (5, 40))
    rho = mf.von_mises(mf.Circle(32), 1.0, 1.0)
    for p in (1, 2):
        batch = wasserstein(rho, x, p, domain="circle")
        assert batch.shape == (5,)
        single = [wasserstein(rho, row, p) for row in x]
        np.testing.assert_allclose(batch, single, rtol=0, atol=1e-13)
    pairs = wasserstein(x, x[::-1], 2, domain="circle")
    single = [wasserstein(u, v, 2) for u, v in zip(x, x[::-1])]
    np.testing.assert_allclose(pairs, single, rtol=0, atol=1e-13)


def test_return_info_states_method_and_accuracy(rng):
    x, y = rng.uniform(0, TWO_PI, (2, 50))
    info = wasserstein(x, y, 1, return_info=True)
    assert (info.method, info.algorithm, info.exact, info.accuracy) == ("exact", "circle-cdf", True, 0.0)
    info = wasserstein(x, y, 2, return_info=True)
    assert info.algorithm == "circle-quantile" and info.exact and info.accuracy <= 1e-12
    assert info.value == pytest.approx(emd_circle(x, np.full(50, 0.02), y, np.full(50, 0.02), 2), abs=1e-10)


# fixed cases for the invariants: repeated atoms, angles outside [0, 2π), antipodes, single atoms
INVARIANT_CASES = [
    (np.array([0.0]), np.array([np.pi])),
    (np.array([0.3, 0.3, 0.3]), np.array([-9.0, 4.2])),
    (np.array([-10.0, 0.0, 10.0, 2.5, 2.5]), np.array([6.0, 6.2, -0.1, 3.0, 1.0, 9.9, -4.4])),
    (np.linspace(0.0, TWO_PI, 12, endpoint=False), np.linspace(0.1, TWO_PI + 0.1, 12, endpoint=False)),
]


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
@pytest.mark.parametrize("case", range(len(INVARIANT_CASES)))
def test_identity_symmetry_rotation_and_emd_on_fixed_cases(case, p):
    # all exact: differences are rounding (1e-12), 1e-10 against POT's network simplex
    x, y = INVARIANT_CASES[case]
    assert wasserstein(x, x, p) == pytest.approx(0.0, abs=1e-12)
    d_xy = wasserstein(x, y, p)
    assert wasserstein(y, x, p) == pytest.approx(d_xy, abs=1e-12)
    assert 0 <= d_xy <= np.pi + 1e-12
    assert wasserstein(x + 1.7, y + 1.7, p) == pytest.approx(d_xy, abs=1e-12)  # rotation invariance
    assert wasserstein(x[::-1], y[::-1], p) == pytest.approx(d_xy, abs=1e-12)  # order of atoms is irrelevant
    assert wasserstein(-x, -y, p) == pytest.approx(d_xy, abs=1e-12)  # reflection invariance
    assert d_xy == pytest.approx(emd_circle(x, np.full(x.size, 1 / x.size), y, np.full(y.size, 1 / y.size), p), abs=1e-10)


def test_sphere_exact_matches_emd(rng):
    x = rng.normal(size=(40, 3))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = rng.normal(size=(30, 3)) + [0, 0, 1.5]
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    cost = np.arccos(np.clip(x @ y.T, -1, 1))
    for p in (1, 2):
        info = wasserstein(x, y, p, return_info=True)
        assert (info.method, info.algorithm) == ("exact", "emd") and info.exact
        assert info.value == pytest.approx(ot.emd2(np.full(40, 1 / 40), np.full(30, 1 / 30), cost**p) ** (1 / p), abs=1e-12)
    # point masses: the great-circle distance
    e1, e2 = np.array([[1.0, 0, 0]]), np.array([[0, np.sqrt(0.5), np.sqrt(0.5)]])
    assert wasserstein(e1, e2, 2) == pytest.approx(np.pi / 2, abs=1e-12)


def test_exact_beyond_its_size_is_refused_naming_the_sliced_method_which_states_itself(rng):
    x = rng.normal(size=(200, 3))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    with pytest.raises(ValueError, match=r"exact W_p on S\^2 of 200 x 200 atoms exceeds max_exact_atoms\^2 = 100\^2.*"
                                         r"pass method='sliced'"):
        wasserstein(x, x, 1, max_exact_atoms=100)
    info = wasserstein(x, x, 1, method="sliced", return_info=True)
    assert (info.method, info.algorithm) == ("sliced", "sliced-spherical") and not info.exact
    assert info.value == pytest.approx(0.0, abs=1e-12)
    y = x.copy()
    y[:, 2] = np.abs(y[:, 2])  # fold the southern hemisphere north
    info = wasserstein(x, y, 1, method="sliced", return_info=True)
    assert info.value > 5 * info.accuracy > 0
    # the size never chooses the method: the same measures give W_p exactly under a larger limit
    assert wasserstein(x, y, 1, return_info=True, max_exact_atoms=200).algorithm == "emd"
    with pytest.raises(ValueError, match=r"method must be one of \['exact', 'sliced'\] for measures on the sphere "
                                         r"domain, got 'polar'"):
        wasserstein(x, y, 1, method="polar")


def test_quantile_sampler_initial_error_decays_like_one_over_n():
    # midpoint quantiles of a smooth law: W1 = O(1/n); the reference measure is
    # the node measure on a fine grid (its own W1 error ~ h/4 = 1e-4 << 1/n here)
    circle = mf.Circle(2**14)
    rho = mf.density(circle, lambda t: np.exp(1.5 * np.cos(t) + 0.5 * np.sin(2 * t)))
    ns = np.array([16, 32, 64, 128, 256])
    errors = [wasserstein(rho, sample(rho, int(n), method="quantile"), 1) for n in ns]
    slope = np.polyfit(np.log(ns), np.log(errors), 1)[0]
    assert slope == pytest.approx(-1.0, abs=0.1)


def test_iid_sampler_error_decays_like_inverse_sqrt_n():
    # E W1(mu_n, mu) ~ c n^{-1/2}; mean over 20 seeded draws per n, slope within
    # a statistical band of ±0.1 around -1/2
    circle = mf.Circle(2**12)
    rho = mf.von_mises(circle, 0.0, 1.0)
    ns = np.array([64, 256, 1024, 4096])
    means = []
    for n in ns:
        x = np.stack([sample(rho, int(n), seed=1000 * int(n) + s).points for s in range(20)])
        means.append(np.mean(wasserstein(rho, x, 1, domain="circle")))
    slope = np.polyfit(np.log(ns), np.log(means), 1)[0]
    assert slope == pytest.approx(-0.5, abs=0.1)


def test_bad_input_messages(rng):
    x = rng.uniform(0, TWO_PI, 10)
    with pytest.raises(ValueError, match=r"p must be finite and >= 1, got 0.5"):
        wasserstein(x, x, 0.5)
    with pytest.raises(TypeError, match="p must be a real number"):
        wasserstein(x, x, "two")
    circle = mf.Circle(16)
    unnormalised = mf.density(circle, np.ones(16), normalize=False)
    with pytest.raises(ValueError, match=r"a must be a probability density \(mass 1 within 1e-08\), got mass 6.28"):
        wasserstein(unnormalised, x)
    with pytest.raises(ValueError, match="weights must sum to 1"):
        mf.EmpiricalMeasure(x, np.full(10, 0.2))
    sphere_points = rng.normal(size=(10, 3))
    sphere_points /= np.linalg.norm(sphere_points, axis=1, keepdims=True)
    with pytest.raises(ValueError, match="a and b must live on the same domain, got a on 'circle' and b on 'sphere'"):
        wasserstein(mf.EmpiricalMeasure(x), mf.EmpiricalMeasure(sphere_points, domain="sphere"))
    with pytest.raises(ValueError, match=r"^b must lie on the unit sphere S\^2: max \| \|x_i\| - 1 \| = 1 exceeds "
                                         r"sphere_tolerance = 1e-10; the plain array of shape \(10, 3\) was read by "
                                         r"its shape as 10 points of R\^3: if its rows are systems of angles, pass "
                                         r"domain='circle'; if they are points meant for S\^2, normalise them \(x / \|x\|\)$"):
        wasserstein(mf.EmpiricalMeasure(sphere_points, domain="sphere"), 2 * sphere_points)
    with pytest.raises(ValueError, match="same number of systems"):
        wasserstein(rng.uniform(size=(3, 5)), rng.uniform(size=(4, 5)), domain="circle")
    with pytest.raises(TypeError, match="b must be a Density, an EmpiricalMeasure or an array of points, got dict"):
        wasserstein(x, {})


def test_cells_w1_exact_values():
    # the uniform density as cells is the uniform measure: W1 to a point mass is
    # the mean geodesic distance π/2, and to n equispaced atoms π/(2n)
    circle = mf.Circle(32)
    rho = mf.uniform(circle)
    assert wasserstein(rho, np.array([1.234]), 1, density="cells") == pytest.approx(np.pi / 2, abs=1e-13)
    atoms = (np.arange(10) + 0.5) / 10 * TWO_PI + 0.37
    assert wasserstein(atoms, rho, 1, density="cells") == pytest.approx(np.pi / 20, abs=1e-13)


def test_cells_against_fine_subdivision(rng):
    # splitting every cell into r midpoint atoms moves mass by at most h/(2r): W1 within h/(4r)
    circle = mf.Circle(48)
    rho = mf.density(circle, rng.random(48) + 0.1)
    x = rng.vonmises(1.0, 2.0, (3, 30))
    r = 400
    h = TWO_PI / 48
    sub = (circle.theta[:, None] + ((np.arange(r) + 0.5) / r - 0.5) * h).ravel()
    weights = np.repeat(rho.values * circle.weights / r, r)
    reference = wasserstein(mf.EmpiricalMeasure(sub, weights / weights.sum()), x, 1, domain="circle")
    info = wasserstein(rho, x, 1, density="cells", return_info=True, domain="circle")
    assert info.algorithm == "circle-cdf-cells" and info.exact
    np.testing.assert_allclose(info.value, reference, atol=h / (4 * r))
    # p = 2 with 16 sub-atoms per cell: the stated accuracy bounds the error
    info2 = wasserstein(rho, x, 2, density="cells", return_info=True, domain="circle")
    reference2 = wasserstein(mf.EmpiricalMeasure(sub, weights / weights.sum()), x, 2, domain="circle")
    assert not info2.exact and np.all(np.abs(info2.value - reference2) <= info2.accuracy + h / (2 * r))


def test_cells_bad_input(rng):
    x = rng.uniform(0, TWO_PI, 5)
    with pytest.raises(ValueError, match="density must be 'atoms' or 'cells', got 'nodes'"):
        wasserstein(mf.uniform(mf.Circle(8)), x, density="nodes")
    sphere = mf.Sphere(4)
    with pytest.raises(ValueError, match="density='cells' is available for Circle densities only, got a on a 'sphere' domain"):
        wasserstein(mf.uniform(sphere), np.array([[0.0, 0.0, 1.0]]), density="cells")


def test_sphere_and_zonal_densities(rng):
    sphere = mf.Sphere(6)
    rho = mf.uniform(sphere)
    x = rng.normal(size=(20, 3))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    nodes = sphere.points.reshape(-1, 3)
    weights = (rho.values * sphere.weights).ravel()
    cost = np.arccos(np.clip(nodes @ x.T, -1, 1))
    expected = ot.emd2(weights / weights.sum(), np.full(20, 0.05), cost)
    assert wasserstein(rho, x, 1) == pytest.approx(expected, abs=1e-12)
    # zonal: W_p of the polar-angle marginals, a lower bound, stated as not exact
    zonal = mf.ZonalSphere(5, 16)
    north = np.zeros((1, 5))
    north[0, -1] = 1.0
    info = wasserstein(mf.uniform(zonal), north, 1, return_info=True)
    polar = zonal.polar
    mass = mf.uniform(zonal).values * zonal.weights
    assert (info.method, info.algorithm) == ("polar", "zonal-polar") and not info.exact
    assert info.value == pytest.approx(np.sum(mass * polar) / mass.sum(), abs=1e-13)


def test_unit_vectors_in_the_plane_against_the_circle_are_angles(rng):
    # (n, 2) unit vectors are points of S¹ ⊂ R²: the same measure as their angles, to rounding
    circle = mf.Circle(64)
    rho = mf.von_mises(circle, 0.3, 2.0)
    theta = rng.uniform(0, TWO_PI, 30)
    u = np.stack([np.cos(theta), np.sin(theta)], axis=-1)
    for p in (1, 2):
        expected = wasserstein(rho, theta, p)
        assert wasserstein(rho, u, p) == pytest.approx(expected, abs=1e-13)
        assert wasserstein(u, rho, p) == pytest.approx(expected, abs=1e-13)
        assert wasserstein(rho, mf.EmpiricalMeasure(u, domain="sphere"), p) == pytest.approx(expected, abs=1e-13)
        assert wasserstein(u, theta + 0.2, p) == pytest.approx(wasserstein(theta, theta + 0.2, p), abs=1e-13)
    assert wasserstein(rho, u, 1, density="cells") == pytest.approx(wasserstein(rho, theta, 1, density="cells"), abs=1e-13)
    info = wasserstein(rho, u, 2, return_info=True)
    assert info.algorithm == "circle-quantile" and info.n_atoms == (64, 30)
    batch = np.stack([u, u[::-1]])  # (systems, n, 2)
    np.testing.assert_allclose(wasserstein(rho, batch, 1), wasserstein(rho, theta, 1), rtol=0, atol=1e-13)


def test_points_slightly_off_the_circle_are_rejected_not_read_as_angles(rng):
    # norms 1 + 2e-5: within np.allclose's default rtol, far beyond the one sphere tolerance 1e-10
    theta = rng.uniform(0, TWO_PI, 30)
    u = (1 + 2e-5) * np.stack([np.cos(theta), np.sin(theta)], axis=-1)
    rho = mf.von_mises(mf.Circle(64), 0.3, 2.0)
    with pytest.raises(ValueError, match=r"^a must lie on the unit sphere S\^1: max \| \|x_i\| - 1 \| = 2e-05 exceeds "
                                         r"sphere_tolerance = 1e-10; the plain array of shape \(30, 2\) was read by its "
                                         r"shape as 30 points of R\^2: if its rows are systems of angles, pass "
                                         r"domain='circle'; if they are points meant for S\^1, normalise them \(x / \|x\|\)$"):
        wasserstein(u, rho)
    # the same off the sphere S²; an EmpiricalMeasure on a sphere gets no advice about angles
    x = rng.normal(size=(10, 3))
    x *= (1 + 3e-6) / np.linalg.norm(x, axis=1, keepdims=True)
    with pytest.raises(ValueError, match=r"^b must lie on the unit sphere S\^2: .* = 3e-06 exceeds sphere_tolerance = "
                                         r"1e-10; normalise them \(x / \|x\|\)$"):
        wasserstein(mf.uniform(mf.Sphere(4)), mf.EmpiricalMeasure(x, domain="sphere"))


def test_systems_of_angles_need_domain_circle_whatever_the_other_argument(rng):
    # one reading for every function: a 2-D plain array is (n, d) points unless domain='circle'
    rho = mf.von_mises(mf.Circle(32), 1.0, 1.0)
    x = rng.uniform(0, TWO_PI, (4, 5))
    single = [wasserstein(rho, row, 1) for row in x]
    np.testing.assert_allclose(wasserstein(rho, x, 1, domain="circle"), single, rtol=0, atol=1e-13)
    for call in (lambda: wasserstein(rho, x, 1), lambda: wasserstein(x, x[::-1]), lambda: wasserstein(x[0], x)):
        with pytest.raises(ValueError, match=r"must lie on the unit sphere S\^4: .*the plain array of shape \(4, 5\) "
                                             r"was read by its shape as 4 points of R\^5: if its rows are systems of "
                                             r"angles, pass domain='circle'"):
            call()
    np.testing.assert_allclose(wasserstein(x[0], x, 1, domain="circle"), [wasserstein(x[0], r, 1) for r in x], atol=1e-13)
    # systems of two angles: shape (n, 2) means unit vectors unless domain='circle'
    pairs = rng.uniform(0, TWO_PI, (6, 2))
    with pytest.raises(ValueError, match=r"b must lie on the unit sphere S\^1: .* shape \(6, 2\) was read by its shape"):
        wasserstein(rho, pairs)
    np.testing.assert_allclose(wasserstein(rho, pairs, 2, domain="circle"), [wasserstein(rho, r, 2) for r in pairs], atol=1e-13)


def test_domain_argument_bad_input(rng):
    theta = rng.uniform(0, TWO_PI, 5)
    with pytest.raises(ValueError, match=r"domain must be 'circle' or 'sphere' \(how plain arrays are read\), got 'torus'"):
        wasserstein(theta, theta, domain="torus")
    with pytest.raises(ValueError, match=r"^a on the sphere domain must have shape \(n, d\) or \(systems, n, d\) with d >= 2 "
                                         r"and n >= 1, got \(5,\)$"):
        wasserstein(theta, theta, domain="sphere")
    with pytest.raises(ValueError, match=r"b on the circle domain must have shape \(n,\) or \(systems, n\) and n >= 1, "
                                         r"got \(2, 5, 3\)"):
        wasserstein(theta, np.zeros((2, 5, 3)), domain="circle")
    x = rng.normal(size=(5, 3))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    with pytest.raises(ValueError, match="a and b must live on the same domain, got a on 'circle' and b on 'sphere'"):
        wasserstein(theta, x)


def test_zonal_density_needs_points_of_its_dimension(rng):
    zonal = mf.uniform(mf.ZonalSphere(16, 32))
    x = rng.normal(size=(20, 3))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    with pytest.raises(ValueError, match=r"a and b must live on the same sphere, got a on S\^15 \(points in R\^16\) "
                                         r"and b on S\^2 \(points in R\^3\)"):
        wasserstein(zonal, x)
    with pytest.raises(ValueError, match=r"got a on S\^2 \(points in R\^3\) and b on S\^15 \(points in R\^16\)"):
        wasserstein(x, zonal)
    with pytest.raises(ValueError, match=r"got a on S\^15 \(points in R\^16\) and b on S\^4 \(points in R\^5\)"):
        wasserstein(zonal, mf.uniform(mf.ZonalSphere(5, 8)))


@pytest.mark.parametrize("p", [1, 2])
def test_sliced_spherical_value_against_pot_and_direct_projections(p, rng):
    # the sliced distance in radians is 2π x POT's value (POT measures on the unit-period circle):
    # (1/K Σ_k W_p^p(P_k#μ, P_k#ν))^{1/p}, P_k(x) = angle of (x·U_k1, x·U_k2), U_k the QR-orthonormal
    # d x 2 frames drawn from the seed; same seed and K. For p = 1 only rounding separates them (1e-12);
    # for p > 1 POT's bisection stops at a rotation near the minimiser, so its value is an upper bound
    # above ours by ~1e-11 (our circle solver certifies its gap)
    x = rng.normal(size=(60, 3))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = rng.normal(size=(50, 3)) + [0.0, 0.0, 1.0]
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    wy = rng.random(50) + 0.1
    wy /= wy.sum()
    info = wasserstein(x, mf.EmpiricalMeasure(y, wy, domain="sphere"), p, method="sliced", return_info=True,
                       n_projections=64, seed=3)
    assert info.algorithm == "sliced-spherical" and not info.exact
    pot, log = ot.sliced_wasserstein_sphere(x, y, np.full(60, 1 / 60), wy, n_projections=64, p=p, seed=3, log=True)
    if p == 1:
        assert info.value == pytest.approx(TWO_PI * pot, abs=1e-12)
    else:
        assert TWO_PI * pot - 1e-9 < info.value <= TWO_PI * pot + 1e-14
    # direct: project with POT's frames, exact circle W_p of every projection (our circle solver, batched)
    frames = log["projections"]  # (K, 3, 2)
    xa, yb = np.einsum("nd,kdc->knc", x, frames), np.einsum("nd,kdc->knc", y, frames)
    za, zb = np.arctan2(xa[..., 1], xa[..., 0]), np.arctan2(yb[..., 1], yb[..., 0])
    per_projection = wasserstein(za, mf.EmpiricalMeasure(zb, np.broadcast_to(wy, zb.shape)), p, domain="circle")
    direct = np.mean(per_projection**p) ** (1 / p)
    # the same frames and the same exact circle solver, batched differently: rounding only
    assert info.value == pytest.approx(direct, abs=1e-12)
    # the stated accuracy is the Monte Carlo standard error of the mean over projections (delta method)
    se = np.std(per_projection**p, ddof=1) / np.sqrt(64) * direct ** (1 - p) / p
    assert info.accuracy == pytest.approx(se, rel=1e-8)

"""Finite-volume scheme on S¹: order, linear growth, positivity, mass, energy identities, errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

import meanfield as mf
from meanfield.models import energy

from solvers import (
    CallableVelocity,
    CircleFiniteVolume,
    CircleGrid,
    ConvolutionVelocity,
    NegativeDensityError,
    StepSizeError,
    UnderResolvedError,
    evolve,
    schemes_for,
)


def energy_kernel(model, d):
    """Unscaled Funk–Hecke multipliers e^{s} G̃_l of the energy kernel."""
    scaled, log_scale = model.energy_kernel(d)
    return lambda ell: np.exp(log_scale) * scaled(ell)


def smooth_cell_averages(n: int) -> np.ndarray:
    """Exact cell averages of ρ₀ = (1 + 0.5 cos θ + 0.3 sin 2θ)/2π (the mean of e^{ikθ} over a cell is
    e^{ikθ_j} sinc(kh/2))."""
    theta = CircleGrid(n).theta
    return ((1 + 0.5 * np.cos(theta) * np.sinc(1 / n) + 0.3 * np.sin(2 * theta) * np.sinc(2 / n)) / (2 * np.pi))[None]


def coarse_cell_averages(fine: np.ndarray, n: int) -> np.ndarray:
    """Cell averages on n cells of the smooth function whose averages on the fine cells are ``fine``.

    Cells are centred on the nodes, so coarse cells are not unions of fine
    ones; in Fourier space an average over width 2π/n multiplies mode k by
    sinc(k/n), so: divide by sinc(k/n_fine), multiply by sinc(k/n), truncate.
    """
    n_fine = fine.shape[-1]
    coeffs = np.fft.rfft(fine, axis=-1)
    k = np.arange(n // 2 + 1)
    coeffs = coeffs[..., : n // 2 + 1] / np.sinc(k / n_fine) * np.sinc(k / n)
    return np.fft.irfft(coeffs, n=n, axis=-1) * (n / n_fine)


def run(model, n: int, y0: np.ndarray, t, **options):
    scheme = CircleFiniteVolume(CircleGrid(n), model.velocity_spec(2), diffusion=model.noise, **options)
    return scheme, evolve(scheme, y0, t, raise_on_error=True)


def test_registered():
    assert schemes_for(CircleGrid(8))["finite_volume"] is CircleFiniteVolume
    assert CircleFiniteVolume.name == "finite_volume"


@pytest.mark.parametrize(
    ("model", "sizes", "reference_size"),
    [
        (mf.SelfAttention(1.0, normalized=True), [64, 128, 256, 512], 2048),
        (mf.SelfAttention(1.0, normalized=False, noise=0.1), [32, 64, 128, 256], 1024),
    ],
    ids=["SA", "USA-noise"],
)
def test_second_order_convergence_on_a_smooth_solution(model, sizes, reference_size):
    # From a smooth density to t = 1; L¹ error of the cell averages against a run on
    # reference_size = 4 × max(sizes) cells, whose own error is 1/16 of the finest one's and
    # can raise the last observed order by up to log2(1 + 1/16)·… ≈ 0.1. Minmod clips the slope
    # at smooth extrema (first order in O(1) cells), so the pre-asymptotic L¹ order of SA is a
    # little below 2 (measured 1.85, 1.90, 2.00; USA with σ = 0.1: 2.00, 2.02, 2.08). The band
    # 1.8–2.3 excludes first order and a spurious third order.
    t = [0.0, 1.0]
    reference = run(model, reference_size, smooth_cell_averages(reference_size), t)[1].y[-1]
    errors = []
    for n in sizes:
        y = run(model, n, smooth_cell_averages(n), t)[1].y[-1]
        errors.append(np.sum(np.abs(y - coarse_cell_averages(reference, n))) * 2 * np.pi / n)
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all((orders > 1.8) & (orders < 2.3)), orders
    fitted = -np.polyfit(np.log(sizes), np.log(errors), 1)[0]
    assert 1.85 < fitted < 2.2, fitted


@pytest.mark.parametrize(
    "model",
    [
        mf.SelfAttention(2.0, normalized=False),
        mf.SelfAttention(2.0, normalized=True),
        mf.SelfAttention(0.0, normalized=True),
        mf.SelfAttention(2.0, normalized=False, noise=0.3),
        mf.SelfAttention(2.0, normalized=True, noise=0.1),
        mf.SelfAttention(0.0, normalized=True, noise=0.2),
        mf.RepulsiveSelfAttention(2.0, normalized=False),
        mf.RepulsiveSelfAttention(2.0, normalized=True, noise=0.1),
    ],
    ids=["USA", "SA", "beta0", "USA-noise", "SA-noise", "beta0-noise", "USA-repulsive", "SA-repulsive-noise"],
)
@pytest.mark.parametrize("k", [1, 2, 3])
def test_linear_growth_rate(model, k):
    # About the uniform state the scheme linearises to the centred flux with the face velocity
    # averaged over the staggered cell, so mode k grows at exactly λ_k sinc²(kh/2) = λ_k (1 - (kh)²/12 + …):
    # second order, with the constant known. ε = 1e-6 keeps the nonlinear error ~ε relative,
    # max_step = 0.02 keeps the RK3 error ~(λΔt)⁴/Δt < 1e-6; hence the 1e-5 tolerance.
    exact = float(model.growth_rate(k, 2))
    eps, final = 1e-6, 1.0
    observed = {}
    for n in (32, 64):
        theta = CircleGrid(n).theta
        y0 = ((1 + eps * np.cos(k * theta)) / (2 * np.pi))[None]
        scheme = CircleFiniteVolume(CircleGrid(n), model.velocity_spec(2), diffusion=model.noise)
        result = evolve(scheme, y0, [0.0, final], max_step=0.02, raise_on_error=True)
        amplitude = [abs(np.fft.rfft(y[0])[k]) for y in result.y]
        observed[n] = np.log(amplitude[1] / amplitude[0]) / final
        predicted = exact * np.sinc(k / n) ** 2
        assert abs(observed[n] - predicted) < 1e-5 * max(abs(exact), 1.0), (n, observed[n], predicted, exact)
    if abs(exact) > 1e-3:
        ratio = (observed[32] - exact) / (observed[64] - exact)
        assert 3.8 < ratio < 4.2, ratio  # second order: halving h quarters the error


@pytest.mark.parametrize(
    "model",
    [mf.SelfAttention(2.0, normalized=False), mf.SelfAttention(4.0), mf.SelfAttention(9.0)],
    ids=["USA", "SA", "SA9"],
)
def test_default_step_resolves_linear_growth(model):
    # Without max_step the step near the uniform state is cfl_growth/Λ = 0.1/Λ (Λ = max_k λ_k, the
    # positivity bound ~1/ε does not bind). SSP-RK3 turns λ into λ(1 - (λΔt)³/24 + …), so the
    # measured rate may differ from the semi-discrete λ_k sinc²(kh/2) by ≤ (0.1)³/24 ≈ 4.2e-5
    # relative (cfl_growth = 0.5 gave 3e-3, measured), plus the O(ε) nonlinearity.
    n, eps = 64, 1e-6
    theta = CircleGrid(n).theta
    for k in (1, 2, 3):
        exact = float(model.growth_rate(k, 2))
        final = min(1.0, np.log(100.0) / exact)
        scheme = CircleFiniteVolume(CircleGrid(n), model.velocity_spec(2))
        y0 = ((1 + eps * np.cos(k * theta)) / (2 * np.pi))[None]
        result = evolve(scheme, y0, [0.0, final], raise_on_error=True)
        assert result.dt_max <= scheme.growth_step(y0) * (1 + 1e-12)
        amplitude = [abs(np.fft.rfft(y[0])[k]) for y in result.y]
        observed = np.log(amplitude[1] / amplitude[0]) / final
        predicted = exact * np.sinc(k / n) ** 2
        assert abs(observed - predicted) < 4.5e-5 * exact + 1e-6, (k, observed, predicted)


@pytest.mark.parametrize("model", [mf.SelfAttention(4.0, normalized=False), mf.SelfAttention(4.0, noise=0.5)])
def test_growth_bound_is_the_largest_linear_rate(model):
    # Λ = max_k |k A_k| ρ̂_0 (USA) or max_k |k A_k|/B_0 (SA) is the largest exact rate
    # λ_k = k² I_k/β (/I_0) at σ = 0 over the grid's wavenumbers (DESIGN §2; diffusion excluded).
    grid = CircleGrid(64)
    scheme = CircleFiniteVolume(grid, model.velocity_spec(2), diffusion=model.noise)
    uniform = np.full((1, 64), 1 / (2 * np.pi))
    rates = mf.SelfAttention(model.beta, normalized=model.normalized).growth_rate(grid.wavenumbers, 2)
    assert scheme.growth_step(uniform) == pytest.approx(0.1 / rates.max(), rel=1e-12)
    ratio = scheme.growth_step(2 * uniform) / scheme.growth_step(uniform)
    assert ratio == pytest.approx(1.0 if model.normalized else 0.5, rel=1e-12)  # USA: Λ ∝ mass


def two_clusters_with_vacuum(n: int) -> np.ndarray:
    """A von Mises κ = 200 spike at 0 (cut to zero beyond |θ| = 1, where it is < e^{-90}) plus a
    compactly supported cos⁴ bump at 2: exact zeros elsewhere."""
    theta = CircleGrid(n).theta
    spike = np.where(np.cos(theta) > np.cos(1.0), np.exp(200 * (np.cos(theta) - 1)), 0.0)
    distance = np.angle(np.exp(1j * (theta - 2.0)))
    bump = np.where(np.abs(distance) < 0.3, np.cos(np.pi * distance / 0.6) ** 4, 0.0)
    rho = spike + bump
    return (rho / (rho.sum() * 2 * np.pi / n))[None]


def test_positivity_mass_and_energy_through_cluster_formation():
    # SA β = 9: a nearly singular spike and a bump, with exact zeros around both, each
    # concentrate into a cluster. Positivity is guaranteed by the CFL bound (check() would raise beyond round-off);
    # mass changes only by round-off accumulated over the steps; E_h is non-decreasing exactly
    # in the semi-discrete scheme (u F ≥ 0 face by face, see CircleFiniteVolume), so only the
    # round-off of the energy quadrature (≈ 1e-13 E) may show.
    model = mf.SelfAttention(9.0, normalized=True)
    n = 256
    domain = mf.Circle(n)
    t = np.linspace(0.0, 20.0, 81)
    y0 = two_clusters_with_vacuum(n)
    assert np.sum(y0 == 0) > 50
    scheme, result = run(model, n, y0, t)
    assert result.success
    y = result.y[:, 0]
    assert y.min() >= -1e-14 * y.max()
    mass = np.array([scheme.mass(state)[0] for state in result.y])
    # round-off: a few ulps per step at most (measured 1.2e-13 after 3280 steps, i.e. 0.16 eps/step)
    assert np.max(np.abs(mass - 1)) < np.finfo(float).eps * result.n_steps
    energies = np.array([energy(model, mf.Density(domain, np.maximum(v, 0))) for v in y])
    assert np.all(np.diff(energies) >= -1e-13 * energies[-1])
    # no oscillation: at every output time at most the two local maxima of the start (the
    # clusters are metastable: at distance 2 they do not merge by t = 20), and at the end
    # the mass within ±0.15 of the two maxima is everything
    def local_maxima(v):
        return (v > np.roll(v, 1)) & (v >= np.roll(v, -1)) & (v > 1e-8 * v.max())

    assert max(local_maxima(v).sum() for v in y) == 2
    final = y[-1]
    centres = domain.theta[local_maxima(final)]
    gap = np.abs(np.angle(np.exp(1j * (domain.theta[:, None] - centres[None, :]))))
    assert np.sum(final[np.any(gap < 0.15, axis=1)]) * 2 * np.pi / n > 0.999
    assert energies[-1] > energies[0] + 1.0  # clustering happened: E_β rose


def test_usa_energy_non_decreasing_and_identity_refines_at_second_order():
    # dE/dt by a centred difference (δ = 1e-3: error ~δ² E''' ≪ 1e-6) against the quadratures
    # ∫|X|² dμ (USA) and ∫|X|² Z dμ (SA) at the cell centres. The scheme's own dE_h/dt is
    # Σ h u F at the faces, which differs from these quadratures by O(h²): the relative
    # discrepancy must fall at second order (measured orders 1.96, 1.99 USA; 2.04, 2.02 SA).
    for model in (mf.SelfAttention(2.0, normalized=False), mf.SelfAttention(4.0, normalized=True)):
        discrepancy = []
        for n in (64, 128, 256):
            domain = mf.Circle(n)
            t0, delta = 0.5, 1e-3
            scheme, result = run(model, n, smooth_cell_averages(n), [0.0, t0 - delta, t0, t0 + delta])
            energies = [energy(model, mf.Density(domain, state[0])) for state in result.y]
            slope = (energies[3] - energies[1]) / (2 * delta)
            rho = result.y[2][0]
            speed2 = scheme.velocity_field(result.y[2])[0] ** 2
            if model.normalized:
                speed2 = speed2 * model.beta * domain.convolve(rho, energy_kernel(model, 2))
            quadrature = np.sum(rho * speed2) * 2 * np.pi / n
            discrepancy.append(abs(slope - quadrature) / quadrature)
        orders = np.log2(np.array(discrepancy[:-1]) / np.array(discrepancy[1:]))
        assert np.all((orders > 1.8) & (orders < 2.3)), (model.name, discrepancy, orders)
        assert discrepancy[-1] < 2e-3


def test_usa_energy_monotone_without_noise():
    model = mf.SelfAttention(2.0, normalized=False)
    n = 128
    domain = mf.Circle(n)
    t = np.linspace(0.0, 4.0, 41)
    _, result = run(model, n, smooth_cell_averages(n), t)
    energies = np.array([energy(model, mf.Density(domain, np.maximum(y[0], 0))) for y in result.y])
    # exact semi-discrete monotonicity; tolerance = round-off of the quadrature
    assert np.all(np.diff(energies) >= -1e-13 * abs(energies).max())
    assert energies[-1] > energies[0]


def test_usa_free_energy_non_increasing_with_noise():
    # F_h = -E_h + σ Σ h ρ log ρ: dF_h/dt = -Σ h u F ≤ 0 face by face in the semi-discrete
    # scheme (diffusion as the velocity -σ ∂ log ρ, CCH 2015); σ = 0.3 < I_1(2)/2 so mode 1 still
    # grows and F really moves. Tolerance: round-off of the quadratures.
    model = mf.SelfAttention(2.0, normalized=False, noise=0.3)
    n = 128
    domain = mf.Circle(n)
    t = np.linspace(0.0, 4.0, 41)
    _, result = run(model, n, smooth_cell_averages(n), t)
    rho = result.y[:, 0]
    assert rho.min() > 0
    entropy = np.sum(rho * np.log(rho), axis=-1) * 2 * np.pi / n
    free = np.array([-energy(model, mf.Density(domain, r)) for r in rho]) + model.noise * entropy
    assert np.all(np.diff(free) <= 1e-13 * abs(free).max())
    assert free[-1] < free[0] - 0.05


def test_diffusion_fills_vacuum_and_keeps_mass():
    model = mf.SelfAttention(4.0, normalized=True, noise=0.05)
    n = 128
    y0 = two_clusters_with_vacuum(n)
    scheme, result = run(model, n, y0, [0.0, 0.2, 0.5])
    assert result.y[-1].min() > 0  # diffusion has reached every cell
    assert abs(scheme.mass(result.y[-1])[0] - 1) < 1e-13


def test_several_species_conserve_each_mass():
    # Kuramoto with Gaussian frequencies: 8 species coupled through the marginal; each mass
    # is conserved separately (telescoping fluxes).
    model = mf.Kuramoto(coupling=2.0, frequencies=scipy.stats.norm(0, 0.5))
    spec = model.velocity_spec(8)
    n = 128
    grid = CircleGrid(n)
    y0 = np.tile(smooth_cell_averages(n), (8, 1))
    scheme = CircleFiniteVolume(grid, spec)
    result = evolve(scheme, y0, [0.0, 2.0], raise_on_error=True)
    assert result.y.shape == (2, 8, n)
    assert np.max(np.abs(scheme.mass(result.y[-1]) - 1)) < 1e-13
    assert result.y.min() >= 0


def test_callable_velocity_agrees_with_convolution_velocity():
    # X by direct O(N²) quadrature at the centres, averaged to the faces, against the spectral
    # face velocity: both are O(h²) approximations, so the two solutions differ by O(h²)
    # (the ratio of the differences at N = 64 and 128 is ≈ 4).
    model = mf.SelfAttention(2.0, normalized=True)
    beta = model.beta
    differences = []
    for n in (64, 128):
        grid = CircleGrid(n)
        gap = grid.theta[:, None] - grid.theta[None, :]
        kernel = np.exp(beta * np.cos(gap)) * grid.spacing
        kernel_derivative = -np.sin(gap) * kernel

        def direct(y, kernel=kernel, kernel_derivative=kernel_derivative):
            return (y @ kernel_derivative.T) / (y @ kernel.T)

        t = [0.0, 1.0]
        y0 = smooth_cell_averages(n)
        spectral = evolve(CircleFiniteVolume(grid, model.velocity_spec(2)), y0, t, raise_on_error=True).y[-1]
        quadrature = evolve(CircleFiniteVolume(grid, CallableVelocity(direct)), y0, t, raise_on_error=True).y[-1]
        differences.append(np.sum(np.abs(spectral - quadrature)) * grid.spacing)
    assert 3.0 < differences[0] / differences[1] < 5.0, differences


def test_fixed_step_above_the_bound_raises():
    model = mf.SelfAttention(4.0, normalized=True)
    grid = CircleGrid(128)
    scheme = CircleFiniteVolume(grid, model.velocity_spec(2))
    y0 = smooth_cell_averages(128)
    bound = scheme.stable_step(y0)
    fixed = CircleFiniteVolume(grid, model.velocity_spec(2), dt=1.5 * bound)
    with pytest.raises(StepSizeError, match=r"fixed step dt=.* violates the stability bound dt <= "):
        evolve(fixed, y0, [0.0, 1.0], raise_on_error=True)
    partial = evolve(fixed, y0, [0.0, 1.0])
    assert not partial.success and "stability bound" in partial.message
    # with diffusion the bound also contains h²/(2σ)
    diffusive = CircleFiniteVolume(grid, model.velocity_spec(2), diffusion=1.0, dt=grid.spacing**2)
    with pytest.raises(StepSizeError, match="stability bound"):
        evolve(diffusive, y0, [0.0, 0.1], raise_on_error=True)
    # a fixed step below the bound runs with that step
    ok = CircleFiniteVolume(grid, model.velocity_spec(2), dt=0.25 * bound)
    result = evolve(ok, y0, [0.0, 2.5 * bound], raise_on_error=True)
    assert result.success and result.n_steps == 10


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"diffusion": -1.0}, ValueError, "diffusion must be finite and >= 0, got -1.0"),
        ({"diffusion": float("nan")}, ValueError, "diffusion must be finite and >= 0, got nan"),
        ({"cfl": 0.0}, ValueError, r"cfl must satisfy 0 < cfl <= 1, got 0.0"),
        ({"cfl": 1.5}, ValueError, r"cfl must satisfy 0 < cfl <= 1, got 1.5"),
        ({"cfl_growth": 0.0}, ValueError, r"cfl_growth must satisfy 0 < cfl_growth <= 1, got 0.0"),
        ({"dt": -0.1}, ValueError, "dt must be finite and > 0, got -0.1"),
        ({"dt": "big"}, TypeError, "dt must be a real number"),
        ({"limiter": "superbee"}, ValueError, r"limiter must be one of \['minmod', 'mc', 'none'\], got 'superbee'"),
    ],
)
def test_bad_options_name_the_argument(options, error, match):
    with pytest.raises(error, match=match):
        CircleFiniteVolume(CircleGrid(32), mf.SelfAttention(1.0).velocity_spec(2), **options)


def test_bad_grid_velocity_and_state():
    spec = mf.SelfAttention(1.0).velocity_spec(2)
    with pytest.raises(TypeError, match="grid must be a CircleGrid"):
        CircleFiniteVolume(mf.Circle(32), spec)
    with pytest.raises(TypeError, match="velocity must be a ConvolutionVelocity or CallableVelocity"):
        CircleFiniteVolume(CircleGrid(32), lambda y: y)
    scheme = CircleFiniteVolume(CircleGrid(32), spec)
    with pytest.raises(ValueError, match=r"state must have shape \(1, 32\)"):
        scheme.rhs(np.ones(32))
    negative = smooth_cell_averages(32).copy()
    negative[0, 3] = -1e-3
    with pytest.raises(NegativeDensityError, match="negative density"):
        scheme.check(negative)
    # B ⋆ ρ̄ = (1 + 2.5 cos 3θ)/2π changes sign: the kernel is not resolved
    unresolved = CircleFiniteVolume(
        CircleGrid(8),
        ConvolutionVelocity(numerator=lambda k: 1j * k, denominator=lambda k: np.where(k == 3, 5.0, 1.0 * (k == 0))),
    )
    rho = ((1 + 0.5 * np.cos(3 * CircleGrid(8).theta)) / (2 * np.pi))[None]
    with pytest.raises(UnderResolvedError, match="denominator B ⋆ ρ̄ of the velocity is not positive"):
        unresolved.rhs(rho)


@pytest.mark.parametrize(
    "model",
    [
        mf.SelfAttention(4.0, normalized=False),
        mf.SelfAttention(4.0, normalized=True),
        mf.SelfAttention(3.0, normalized=False, noise=0.2),
    ],
    ids=["USA", "SA", "USA-noise"],
)
def test_semi_discrete_energy_identity_on_rough_states(model, rng):
    # Energy consistency holds face by face, not only for smooth states. With Φ = 𝖦_β ⋆ ρ at the
    # centres (the trapezoidal energy E_h = ½ Σ h ρ Φ), ξ = -Φ + σ log ρ and the scheme's face
    # velocity u and flux F:  Σ_j h ξ_j dρ_j/dt = -Σ_j h u_j F_j w_j  with w = 1 (USA) or
    # w = Z_{j+1/2} = β (𝖦_β ⋆ ρ)(θ_{j+1/2}) (SA), exactly (summation by parts plus
    # u = (Φ_{j+1} - Φ_j)/(h w)); and u F ≥ 0 face by face, so E_h rises (F_h falls). Only
    # round-off separates the two sums. (A face velocity taken as the point value at the
    # face instead of the staggered-cell mean breaks the equality at O(h²).)
    from solvers._finite_volume import periodic_face_values, upwind_flux

    n = 64
    domain = mf.Circle(n)
    h = domain.grid.spacing
    scheme = CircleFiniteVolume(CircleGrid(n), model.velocity_spec(2), diffusion=model.noise)
    k = np.arange(n // 2 + 1)
    for _ in range(10):
        rho = rng.uniform(0.0, 1.0, n) ** 3 + 1e-3
        rho /= rho.sum() * h
        potential = domain.convolve(rho, energy_kernel(model, 2))
        xi = -potential + model.noise * np.log(rho)
        rate = scheme.rhs(rho[None])[0]
        u = scheme.face_velocity(rho[None])
        east, west = periodic_face_values(rho[None], scheme.limiter)
        flux = upwind_flux(u, east, np.roll(west, -1, axis=-1))[0]
        weight = 1.0
        if model.normalized:
            weight = model.beta * np.fft.irfft(np.fft.rfft(potential) * np.exp(0.5j * k * h), n)
        lhs = np.sum(xi * rate) * h
        rhs = -np.sum(u[0] * flux * weight) * h
        assert np.all(u[0] * flux >= 0)
        assert abs(lhs - rhs) <= 1e-12 * abs(rhs), (lhs, rhs)


@pytest.mark.parametrize("limiter", ["minmod", "mc", "none"])
def test_compiled_operator_matches_the_generic_one_dimensional_pieces(limiter, rng):
    # The fused compiled pass must do exactly the arithmetic of the generic helpers of
    # solvers._finite_volume (used by the other finite-volume schemes): agreement to round-off.
    from solvers._finite_volume import limited_difference, periodic_face_values, upwind_flux

    n = 48
    spec = mf.SelfAttention(3.0, normalized=True).velocity_spec(2)
    scheme = CircleFiniteVolume(CircleGrid(n), spec, diffusion=0.05, limiter=limiter)
    rho = rng.uniform(0.0, 1.0, (1, n)) ** 2
    rho[0, 5:9] = 0.0  # vacuum, where the logarithm is floored
    east, west = periodic_face_values(rho, limiter)
    flux = upwind_flux(scheme.face_velocity(rho), east, np.roll(west, -1, axis=-1))
    expected = (np.roll(flux, 1, axis=-1) - flux) / scheme.spacing
    np.testing.assert_allclose(scheme.rhs(rho), expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())
    # the limiters by their definitions, element by element
    back, fwd = rng.normal(size=200), rng.normal(size=200)
    slopes = limited_difference(back, fwd, limiter)
    for b, f, s in zip(back, fwd, slopes):
        candidates = {"minmod": [b, f], "mc": [2 * b, (b + f) / 2, 2 * f], "none": [0.0]}[limiter]
        same = all(c > 0 for c in candidates) or all(c < 0 for c in candidates)
        assert s == (min(candidates, key=abs) if same else 0.0)

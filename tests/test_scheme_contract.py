"""The Scheme contract: names, diagnostics with one meaning each, one resolution rule, the step ladder,
the generic 'cannot evaluate' signal of the Runge–Kutta core (the step floor: test_step_floor.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import meanfield as mf
import solvers
from solvers import (
    SCHEMES,
    CircleGrid,
    CircleSpectral,
    NonPositiveNormaliser,
    SphereGrid,
    SphereSpectral,
    UnderResolvedError,
    UnevaluableState,
    ZonalCellGrid,
    ZonalGaussGrid,
    ZonalSpectral,
    degree_tail,
    evolve,
    schemes_for,
)
from solvers._runge_kutta import N_STAGES, LawsonTables, StepController, adaptive_lawson_step


def test_every_scheme_is_named_by_its_grid_and_method() -> None:
    grids = {CircleGrid: "Circle", SphereGrid: "Sphere", ZonalGaussGrid: "Zonal", ZonalCellGrid: "Zonal"}
    assert len(SCHEMES) == 6
    for cls in SCHEMES:
        assert cls.__name__ == grids[cls.grid_type] + ("Spectral" if cls.name == "spectral" else "FiniteVolume")


# ---------------------------------------------------------------- the three spectral schemes on one footing
def _circle(amplitude: float, k: int) -> tuple[CircleSpectral, np.ndarray]:
    grid = CircleGrid(32)  # L = 16, tail above degree ⌊32/3⌋ = 10
    # ρ = (1 + 2a cos kθ)/2π: |ρ̂_k| / |ρ̂_0| = a
    y = ((1 + 2 * amplitude * np.cos(k * grid.theta)) / (2 * np.pi))[None]
    return CircleSpectral(grid, mf.SelfAttention(1.0).velocity_spec(2)), y


def _sphere(amplitude: float, ell: int) -> tuple[SphereSpectral, np.ndarray]:
    grid = SphereGrid(15)  # L = 15, tail above degree 10
    alm = np.zeros(grid.nalm, complex)
    alm[grid.degrees == 0] = 1 / np.sqrt(4 * np.pi)
    alm[(grid.degrees == ell) & (grid.orders == 0)] = amplitude / np.sqrt(4 * np.pi)
    return SphereSpectral(grid, mf.SelfAttention(1.0).velocity_spec(3)), grid.synthesis(alm)[None]


def _zonal(amplitude: float, ell: int) -> tuple[ZonalSpectral, np.ndarray]:
    grid = ZonalGaussGrid(5, 16)  # L = 15, tail above degree 10
    coeffs = np.zeros((1, grid.n))
    coeffs[0, 0], coeffs[0, ell] = 1.0, amplitude
    return ZonalSpectral(grid, mf.SelfAttention(1.0).velocity_spec(5)), grid.synthesis(coeffs)


@pytest.mark.parametrize("make", [_circle, _sphere, _zonal], ids=["circle", "sphere", "zonal"])
def test_one_resolution_rule(make) -> None:
    # a single degree just above ⌊2L/3⌋ = 10 of relative size 5e-4: τ = 5e-4 on every domain
    scheme, y = make(5e-4, 11)
    np.testing.assert_allclose(scheme.spectral_tail(y), [5e-4], rtol=1e-12)
    # the same degree at ⌊2L/3⌋ is not part of the tail (τ = 0 up to round-off of the transforms)
    assert scheme.spectral_tail(make(5e-4, 10)[1])[0] < 1e-15
    # one option name, one default and one floor: max(tail_tol = 1e-6, 100 rtol)
    assert scheme.tail_tol == 1e-6 == solvers.SPECTRAL_TAIL_TOL
    with pytest.raises(UnderResolvedError, match=r"over l > 10 is 0\.0005 > tail_tol="):
        scheme.check(y)
    type(scheme)(scheme.grid, scheme.velocity, tail_tol=6e-4).check(y)
    type(scheme)(scheme.grid, scheme.velocity, rtol=6e-6).check(y)  # floor 100 rtol = 6e-4 > τ
    with pytest.warns(RuntimeWarning, match="under-resolved"):
        type(scheme)(scheme.grid, scheme.velocity, on_underresolved="warn").check(y)


def test_degree_tail_rule() -> None:
    norms = np.array([[2.0, 1.0, 1.0, 1.0, 0.5, 0.2, 0.1], [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]])
    # L = 6: the tail is l > 4; max(0.2, 0.1)/2 and a zero mean under a non-zero tail
    np.testing.assert_array_equal(degree_tail(norms), [0.1, np.inf])
    assert degree_tail(np.array([1.0, 0.3, 0.2, 0.0]))[()] == 0.0  # L = 3: l > 2 is zero


def test_velocity_field_shapes_and_the_zonal_polar_velocity() -> None:
    scheme, y = _circle(0.01, 1)
    assert scheme.velocity_field(y).shape == (1, 32)
    scheme, y = _sphere(0.01, 1)
    assert scheme.velocity_field(y).shape == (1, *scheme.grid.shape, 2)
    # zonal USA, ρ = (1 + ε q_1)/|S^{d-1}|: A ⋆ ρ = (a_0 + a_1 ε q_1)/|S|, q_1(t) = √d t, so
    # u = ∂_ϑ(A ⋆ ρ) = -sin ϑ a_1 ε √d / |S^{d-1}|
    d, eps = 5, 0.2
    grid = ZonalGaussGrid(d, 12)
    spec = mf.SelfAttention(1.5, normalized=False).velocity_spec(d)
    coeffs = np.zeros((1, grid.n))
    coeffs[0, :2] = 1.0 / grid.area, eps / grid.area
    scheme = ZonalSpectral(grid, spec)
    u = scheme.velocity_field(grid.synthesis(coeffs))
    a1 = spec.numerator(np.array([1]))[0]
    expected = -np.sqrt(1 - grid.t**2) * a1 * eps * np.sqrt(d) / grid.area
    assert u.shape == (1, grid.n)
    np.testing.assert_allclose(u[0], expected, rtol=1e-12, atol=1e-15 * np.abs(expected).max())


def _velocity_gap(kind: str, resolution: int) -> float:
    """max |X_spectral - X_finite_volume| / max |X_spectral| for a von Mises density (κ = 2), SA β = 2."""
    model = mf.SelfAttention(2.0)
    if kind == "circle":
        spectral_domain = volume_domain = mf.Circle(resolution)
        d, loc = 2, 0.5
    elif kind == "sphere":
        spectral_domain = volume_domain = mf.Sphere(resolution)
        d, loc = 3, [0.6, 0.0, 0.8]
    else:
        spectral_domain = mf.ZonalSphere(5, resolution, nodes="gauss")
        volume_domain = mf.ZonalSphere(5, resolution, nodes="cells")
        d, loc = 5, None
    spectral = schemes_for(spectral_domain.grid)["spectral"](spectral_domain.grid, model.velocity_spec(d))
    volume = schemes_for(volume_domain.grid)["finite_volume"](volume_domain.grid, model.velocity_spec(d))
    a = spectral.velocity_field(mf.von_mises(spectral_domain, loc, 2.0).normalized().values[None])
    b = volume.velocity_field(volume.from_grid(mf.von_mises(volume_domain, loc, 2.0).normalized().values[None]))
    if kind == "zonal":  # Gauss nodes vs cell centres: interpolate inside the span of the Gauss nodes
        polar, centres = spectral_domain.polar, volume_domain.polar
        inside = (centres > polar.min()) & (centres < polar.max())
        return float(np.max(np.abs(np.interp(centres, polar, a[0]) - b[0])[inside]) / np.abs(a).max())
    return float(np.max(np.abs(a - b)) / np.abs(a).max())


def test_velocity_field_means_the_same_in_both_families() -> None:
    # same nodes, same multipliers (cell averages read as node values): equal to round-off
    assert _velocity_gap("circle", 64) < 1e-14
    # S²: midpoint-rule coefficients of the cells; zonal: the potential of the piecewise-constant
    # density and linear interpolation — both second order (measured ratios 4.03 and 3.96)
    for kind, coarse in (("sphere", 15), ("zonal", 48)):
        ratio = _velocity_gap(kind, coarse) / _velocity_gap(kind, 2 * coarse + (kind == "sphere"))
        assert 3.5 < ratio < 4.5, (kind, ratio)


def test_stable_step() -> None:
    for make in (_circle, _sphere):
        scheme, y = make(0.01, 1)
        assert scheme.stable_step(y) == np.inf
    scheme, y = _zonal(0.3, 1)
    bound = scheme.stable_step(y)
    assert 0 < bound < np.inf
    # a step beyond it is refused and the bound (on the ladder when tables are not trivial) proposed
    result = scheme.step(0.0, y, 2 * bound)
    assert not result.accepted and result.dt_next == bound


def _on_ladder(h: float) -> bool:
    return abs(8 * math.log2(h) - round(8 * math.log2(h))) < 1e-9


@pytest.mark.parametrize("make", [_circle, _sphere, _zonal], ids=["circle", "sphere", "zonal"])
def test_step_ladder_with_diffusion_only(make) -> None:
    scheme, y = make(0.01, 1)
    noisy = type(scheme)(scheme.grid, scheme.velocity, 0.1, tail_tol=1.0)
    h = 0.0123
    result = noisy.step(0.0, y, h)
    assert result.accepted and _on_ladder(result.dt_next)
    # without a linear part there are no exponentials to share: proposals stay off the ladder
    result = type(scheme)(scheme.grid, scheme.velocity, tail_tol=1.0).step(0.0, y, h)
    assert result.accepted and not _on_ladder(result.dt_next)


def test_the_ladder_shares_the_exponentials_of_a_sphere_run() -> None:
    grid = SphereGrid(15)
    model = mf.SelfAttention(4.0, noise=0.1)
    scheme = SphereSpectral(grid, model.velocity_spec(3), diffusion=0.1, rtol=1e-8, tail_tol=1.0)
    computed = []
    tables = scheme._tables
    original = type(tables).__call__

    def counting(self, h):
        if float(h) not in self._cache:
            computed.append(h)
        return original(self, h)

    type(tables).__call__ = counting
    try:
        run = evolve(scheme, mf.von_mises(mf.Sphere(15), [0.6, 0.0, 0.8], 2.0).values[None], [0.0, 2.0])
    finally:
        type(tables).__call__ = original
    # every step size but the first and the last (cut to land on t = 2) is a rung of the ladder,
    # and consecutive steps on one rung share their tables: fewer tables than steps
    assert all(_on_ladder(h) for h in computed[1:-1])
    assert run.n_steps >= 10 and len(computed) < run.n_steps / 2


# ---------------------------------------------------------------- the Runge–Kutta core knows no physics
def test_a_trial_stage_that_cannot_be_evaluated_rejects_the_step() -> None:
    def unevaluable(y, out):
        raise UnevaluableState(-1.0)

    y0 = np.ones(3)
    stages = np.empty((N_STAGES, 3))
    controller = StepController()
    rejected = adaptive_lawson_step(unevaluable, y0, np.zeros(3), LawsonTables(None)(0.5), stages,
                                    lambda a, b, e: 0.0, controller)
    assert not rejected.accepted and rejected.error == np.inf and rejected.factor == controller.min_factor
    # the normaliser of a velocity specification is one case of it, raised by the schemes
    assert issubclass(NonPositiveNormaliser, UnevaluableState)
    assert NonPositiveNormaliser(-0.5).minimum == -0.5

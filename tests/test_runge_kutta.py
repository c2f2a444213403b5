"""Dormand–Prince 5(4): order conditions, dense output, Lawson form, step control, first step."""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import numpy as np
import pytest
from scipy.integrate import RK45

from solvers._runge_kutta import (
    A,
    B,
    B_HAT,
    C,
    E,
    ERROR_ORDER,
    ORDER,
    LawsonTables,
    StepController,
    dense_weights,
    adaptive_lawson_step,
    initial_step,
    lawson_step,
    nan_on_unevaluable,
)
from solvers import NonPositiveNormaliser


# ---------------------------------------------------------------------------- rooted trees
@lru_cache(maxsize=None)
def _trees(order: int) -> tuple[tuple, ...]:
    """Rooted trees with ``order`` vertices, each a sorted tuple of its subtrees."""
    if order == 1:
        return ((),)
    out = set()
    for children in _forests(order - 1, order - 1):
        out.add(tuple(sorted(children)))
    return tuple(sorted(out))


def _forests(vertices: int, largest: int) -> list[tuple]:
    """Multisets of trees with ``vertices`` vertices in total, each of at most ``largest``."""
    if vertices == 0:
        return [()]
    out = []
    for size in range(min(vertices, largest), 0, -1):
        for tree in _trees(size):
            for rest in _forests(vertices - size, size):
                if all(other <= tree for other in rest if _size(other) == size):
                    out.append((tree, *rest))
    return out


def _size(tree: tuple) -> int:
    return 1 + sum(_size(child) for child in tree)


def _gamma(tree: tuple) -> int:
    """Density γ(t) = |t| Π γ(children); the exact solution has elementary weight 1/γ(t)."""
    out = _size(tree)
    for child in tree:
        out *= _gamma(child)
    return out


def _stage_weights(tree: tuple) -> np.ndarray:
    """g(t) with g(•) = 1 and g([t_1, …, t_m]) = Π_k A g(t_k) (elementwise): b·g(t) = Φ(t)."""
    out = np.ones(len(C))
    for child in tree:
        out = out * (A @ _stage_weights(child))
    return out


def test_tree_counts_are_those_of_butcher():
    # number of rooted trees of order 1..5: 1, 1, 2, 4, 9 (OEIS A000081)
    assert [len(_trees(q)) for q in range(1, 6)] == [1, 1, 2, 4, 9]


def test_tableau_is_explicit_consistent_and_fsal():
    assert np.all(np.triu(A) == 0)
    np.testing.assert_allclose(A.sum(axis=1), C, rtol=0, atol=1e-15)  # c_i = Σ_j a_ij
    np.testing.assert_array_equal(A[6], B)  # last stage row = b: K_7 = f(y_{n+1})
    assert C[6] == 1.0 and B[6] == 0.0
    # E = b̂ - b exactly (the error estimate ŷ - y), compared as rationals
    b = [Fraction(35, 384), 0, Fraction(500, 1113), Fraction(125, 192), Fraction(-2187, 6784), Fraction(11, 84), 0]
    b_hat = [Fraction(5179, 57600), 0, Fraction(7571, 16695), Fraction(393, 640), Fraction(-92097, 339200),
             Fraction(187, 2100), Fraction(1, 40)]
    np.testing.assert_array_equal(E, [float(bh - bb) for bb, bh in zip(b, b_hat)])
    np.testing.assert_allclose(B_HAT - B, E, rtol=0, atol=1e-16)
    assert E[0] < 0  # b̂ - b, not b - b̂
    for array in (A, B, B_HAT, C, E):
        assert not array.flags.writeable


@pytest.mark.parametrize("order", range(1, 6))
def test_order_conditions_of_the_fifth_order_weights(order):
    # b·g(t) = 1/γ(t) for every rooted tree with ≤ 5 vertices: order 5 (17 conditions)
    for tree in _trees(order):
        assert B @ _stage_weights(tree) == pytest.approx(1 / _gamma(tree), abs=1e-14), tree


def test_embedded_weights_have_order_four_exactly():
    for order in range(1, 5):
        for tree in _trees(order):
            assert B_HAT @ _stage_weights(tree) == pytest.approx(1 / _gamma(tree), abs=1e-14), tree
    # … and not 5: some order-5 condition fails, so the estimate is O(h⁵), not smaller
    defects = [abs(B_HAT @ _stage_weights(t) - 1 / _gamma(t)) for t in _trees(5)]
    assert max(defects) > 1e-4
    assert ORDER == 5 and ERROR_ORDER == 4


@pytest.mark.parametrize("theta", [0.0, 0.1, 0.37, 0.5, 0.8, 1.0])
def test_dense_output_weights_satisfy_the_order_four_conditions(theta):
    # continuous extension: b(θ)·g(t) = θ^{|t|}/γ(t) for |t| ≤ 4 (order 4 at every θ)
    weights = dense_weights(theta)
    for order in range(1, 5):
        for tree in _trees(order):
            assert weights @ _stage_weights(tree) == pytest.approx(theta**order / _gamma(tree), abs=1e-13)
    if theta == 1.0:
        np.testing.assert_allclose(weights, B, rtol=0, atol=1e-15)


def _one_step_with_dense_output(h: float, theta: float) -> float:
    """y' = y cos t, y(0) = 1 (y = e^{sin t}): error of the dense output at t = θh."""
    stages = np.zeros(7)
    for i in range(7):
        t = C[i] * h
        y = 1.0 + h * (A[i, :i] @ stages[:i])
        stages[i] = y * np.cos(t)
    return abs(1.0 + h * dense_weights(theta) @ stages - np.exp(np.sin(theta * h)))


def test_dense_output_local_error_is_of_order_five_in_h():
    # interpolant of order 4: local error O(h⁵) at an interior θ
    hs = np.array([0.4, 0.2, 0.1])
    errors = np.array([_one_step_with_dense_output(h, 0.6) for h in hs])
    orders = np.log2(errors[:-1] / errors[1:])
    # measured 4.89, 4.99
    assert np.all(np.abs(orders - 5) < 0.3), orders


# ---------------------------------------------------------------------------- Lawson form
def test_lawson_tables_are_the_exponentials_and_are_cached():
    rates = -np.array([0.0, 1.0, 4.0, 9.0, 400.0])
    tables = LawsonTables(rates, cache_size=2)
    h = 0.3
    step = tables(h)
    np.testing.assert_allclose(step.growth, np.exp(np.outer(C, h * rates)), rtol=1e-15)
    np.testing.assert_allclose(step.propagator, np.exp(h * rates), rtol=1e-15)
    for i in range(7):
        expected = h * A[i, :i, None] * np.exp(np.outer(C[i] - C[:i], h * rates))
        np.testing.assert_allclose(step.rows[i], expected, rtol=1e-14, atol=0)
    np.testing.assert_allclose(step.error, h * E[:, None] * np.exp(np.outer(1 - C, h * rates)), rtol=1e-14)
    assert tables(h) is step  # same step size: no new exponentials
    tables(0.1)
    tables(0.2)
    assert tables(h) is not step  # evicted after two other sizes (cache_size = 2)
    plain = LawsonTables(np.zeros(5))
    assert plain.rates is None and plain(h).growth is None and plain(h).propagator == 1.0


def test_lawson_step_is_exact_for_the_linear_part():
    # N ≡ 0: y_{n+1} = e^{hλ} y_n to round-off, and a zero error estimate, however stiff λ is
    rates = -np.array([0.0, 1.0, 1e2, 1e4, 1e6])
    y0 = np.array([1.0, -2.0, 0.5, 3.0, 1.0]) + 0j
    step = LawsonTables(rates)(0.7)
    y1, error = lawson_step(lambda y, out: out.fill(0), y0, np.zeros_like(y0), step, np.empty((7, 5), complex))
    np.testing.assert_allclose(y1, np.exp(0.7 * rates) * y0, rtol=1e-15, atol=1e-300)
    assert np.all(error == 0)


def test_lawson_step_is_dp5_on_the_transformed_linear_system():
    # y' = λy + μy with N(y) = μy: v = e^{-λt}y obeys v' = μv, so one step gives
    # y_1 = e^{hλ} R(hμ) y_0 with R the stability polynomial of DP5, Σ_{k≤6} b·A^{k-1}·1 z^k (+1)
    lam, mu, h = -50.0, -1.3 + 0.4j, 0.25
    z = h * mu
    ones = np.ones(7)
    r = 1 + sum(z**k * (B @ np.linalg.matrix_power(A, k - 1) @ ones) for k in range(1, 8))
    step = LawsonTables(np.array([lam]))(h)
    y0 = np.array([1.0 + 0j])

    def nonlinear(y, out):
        out[...] = mu * y

    y1, _ = lawson_step(nonlinear, y0, mu * y0, step, np.empty((7, 1), complex))
    np.testing.assert_allclose(y1, np.exp(h * lam) * r * y0, rtol=1e-14)
    # the degree-6 coefficient of R is b·A⁵·1 = 1/600 (the FSAL stage does not enter)
    assert B @ np.linalg.matrix_power(A, 5) @ ones == pytest.approx(1 / 600, rel=1e-12)


def test_lawson_step_converges_at_fifth_order_on_a_semilinear_problem():
    # y' = λy + y² (Bernoulli): 1/y = (1/y_0 + 1/λ) e^{-λt} - 1/λ
    lam, y_start, t_end = -2.0, 0.5, 1.0
    exact = 1.0 / ((1 / y_start + 1 / lam) * np.exp(-lam * t_end) - 1 / lam)

    def nonlinear(y, out):
        out[...] = y**2

    errors = []
    for n in (4, 8, 16):
        tables = LawsonTables(np.array([lam]))
        y = np.array([y_start])
        k = y**2
        stages = np.empty((7, 1))
        for _ in range(n):
            y, _ = lawson_step(nonlinear, y, k, tables(t_end / n), stages)
            k = stages[6].copy()
        errors.append(abs(y[0] - exact))
    orders = np.log2(np.array(errors[:-1]) / errors[1:])
    # measured 5.09, 5.05
    assert np.all(np.abs(orders - 5) < 0.3), (errors, orders)


# ---------------------------------------------------------------------------- step control
def test_controller_accepts_rejects_and_clips():
    control = StepController()
    assert (control.safety, control.min_factor, control.max_factor) == (0.9, 0.2, 10.0)
    assert control.decide(0.0) == (True, 10.0)  # no error: the largest growth
    assert control.decide(1e-12) == (True, 10.0)  # 0.9·(1e-12)^(-1/5) = 224 clipped to 10
    accepted, factor = control.decide(0.5)
    assert accepted and factor == pytest.approx(0.9 * 0.5**-0.2)
    accepted, factor = control.decide(1.0)
    assert accepted and factor == pytest.approx(0.9)  # err = 1 is still accepted
    accepted, factor = control.decide(2.0)
    assert not accepted and factor == pytest.approx(0.9 * 2.0**-0.2)
    assert control.decide(1e9) == (False, 0.2)  # clipped to min_factor


def test_controller_does_not_grow_right_after_a_rejection():
    control = StepController()
    assert not control.decide(3.0).accepted
    assert control.decide(1e-3) == (True, 1.0)  # would be 0.9·(1e-3)^(-1/5) = 3.6
    assert control.decide(1e-3).factor == pytest.approx(0.9 * 1e-3**-0.2)  # growth allowed again
    control.decide(3.0)
    control.reset()
    assert control.decide(0.0) == (True, 10.0)


@pytest.mark.parametrize("error", [np.nan, np.inf])
def test_controller_shrinks_by_a_fixed_factor_on_non_finite_errors(error):
    control = StepController(min_factor=0.25)
    assert control.decide(error) == (False, 0.25)
    assert control.decide(0.0) == (True, 1.0)  # right after the rejection


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"safety": 1.5}, ValueError, r"safety must lie in \(0, 1\], got 1.5"),
        ({"safety": "0.9"}, TypeError, "safety must be a real number, got '0.9'"),
        ({"min_factor": 0.0}, ValueError, "min_factor must be finite and > 0, got 0.0"),
        ({"max_factor": 0.5}, ValueError, "0 < min_factor < 1 < max_factor"),
        ({"error_order": 0}, ValueError, "error_order must be a positive integer"),
    ],
)
def test_controller_rejects_bad_parameters(kwargs, error, match):
    with pytest.raises(error, match=match):
        StepController(**kwargs)


# ---------------------------------------------------------------------------- first step
@pytest.mark.parametrize("y0", [np.array([1.0, 0.5, -2.0]), np.array([0.0, 0.0, 0.0]), np.array([1e-3, 2.0, 0.0])])
def test_initial_step_agrees_with_scipy_rk45(y0):
    matrix = np.array([[-1.0, 2.0, 0.0], [0.5, -3.0, 1.0], [0.0, 1.0, -0.2]])

    def fun(t, y):
        return matrix @ y + np.array([0.1, 0.0, np.sin(t)]) + y**2

    rtol, atol = 1e-6, 1e-9
    scale = atol + rtol * np.abs(y0)

    def norm(v):
        return float(np.sqrt(np.mean((v / scale) ** 2)))

    f0 = fun(0.0, y0)
    h = initial_step(f0, lambda h0: fun(h0, y0 + h0 * f0), norm, y0_norm=norm(y0))
    reference = RK45(fun, 0.0, y0, 1e6, rtol=rtol, atol=atol).h_abs  # select_initial_step
    assert h == pytest.approx(reference, rel=1e-14)


def test_initial_step_of_a_constant_state_and_of_an_overflowing_probe():
    def norm(v):
        return float(np.sqrt(np.mean(v**2)))

    # f ≡ 0: h0 = 1e-6, d1 = d2 = 0, so h = min(100 h0, max(1e-6, 1e-3 h0)) = 1e-6
    zero = np.zeros(3)
    assert initial_step(zero, lambda h: zero, norm, y0_norm=1.0) == 1e-6
    # a probe that overflows falls back to h0 = 0.01 d0/d1
    f0 = np.array([2.0])
    assert initial_step(f0, lambda h: np.array([np.inf]), norm, y0_norm=10.0) == pytest.approx(0.05)
    assert initial_step(f0, lambda h: f0, norm, y0_norm=10.0, max_step=1e-3) == 1e-3


def test_lawson_tables_with_complex_species_rates_are_exact_for_linear_problems():
    # y' = L y with L_{m,k} = -ikω_m - σk² (drift and diffusion of m species): exact to round-off
    from solvers._runge_kutta import N_STAGES, LawsonTables, lawson_step

    k = np.arange(9)
    omega = np.array([-40.0, 0.3, 7.0])
    rates = -1j * k[None, :] * omega[:, None] - 0.2 * k[None, :] ** 2
    rng = np.random.default_rng(3)
    y0 = rng.standard_normal((3, 9)) + 1j * rng.standard_normal((3, 9))
    stages = np.empty((N_STAGES, 3, 9), dtype=complex)

    def no_transport(y, out):
        out[...] = 0.0

    y1, error = lawson_step(no_transport, y0, np.zeros_like(y0), LawsonTables(rates)(0.7), stages)
    np.testing.assert_allclose(y1, np.exp(0.7 * rates) * y0, rtol=0, atol=1e-14)
    assert np.max(np.abs(error)) == 0.0


def test_preferred_steps_lie_on_a_ladder_just_below_the_proposal():
    from solvers._runge_kutta import LawsonTables

    tables = LawsonTables(-np.arange(4.0))
    for h in (1e-3, 0.0371, 0.5, 2.0, 3.3):
        q = tables.preferred_step(h)
        assert h * 2 ** (-1 / 8) - 1e-15 <= q <= h
        assert tables.preferred_step(q) == q  # idempotent: consecutive proposals share tables
    assert LawsonTables(None).preferred_step(0.0371) == 0.0371


# ---------------------------------------------------------------------------- adaptive Lawson step
def test_adaptive_lawson_step_is_exact_for_the_linear_part_and_rejects_a_non_positive_normaliser():
    rates = np.array([0.0, -1.0, -4.0])
    tables = LawsonTables(rates)
    y0 = np.array([1.0, 2.0, 3.0])
    stages = np.empty((7, 3))

    def zero(y, out):
        out[...] = 0.0

    controller = StepController()
    accepted, y1, err, factor = adaptive_lawson_step(
        zero, y0, np.zeros(3), tables(0.5), stages, lambda a, b, e: float(np.linalg.norm(e)), controller
    )
    # N ≡ 0: y1 = e^{hλ} y0 to round-off, zero error estimate, the controller's largest growth
    assert accepted and err == 0.0 and factor == controller.max_factor
    np.testing.assert_allclose(y1, np.exp(0.5 * rates) * y0, rtol=1e-15)

    def overshooting(y: np.ndarray, out: np.ndarray) -> None:
        raise NonPositiveNormaliser(-1.0)

    rejected = adaptive_lawson_step(overshooting, y0, np.zeros(3), tables(0.5), stages, lambda a, b, e: 0.0, controller)
    assert rejected == (False, None, np.inf, controller.min_factor)


def test_nan_on_unevaluable_turns_an_overshooting_probe_into_the_h0_fallback():
    f0 = np.array([1.0, -1.0])

    def probe(h: float) -> np.ndarray:
        raise NonPositiveNormaliser(-0.5)

    assert np.isnan(nan_on_unevaluable(probe)(0.1))
    # non-finite d2: initial_step returns h0 = 0.01 d0/d1
    h = initial_step(f0, nan_on_unevaluable(probe), lambda v: float(np.linalg.norm(v)), y0_norm=10.0)
    assert h == pytest.approx(0.01 * 10.0 / np.sqrt(2.0), rel=1e-15)


def test_lawson_tables_evaluate_each_distinct_rate_once_with_the_same_values():
    # rates of spherical harmonics: -σ l(l+1) repeated over the orders of each degree
    degrees = np.concatenate([np.arange(m, 9) for m in range(9)])
    rates = -0.3 * degrees * (degrees + 1.0)
    h = 0.0371
    step = LawsonTables(rates)(h)
    # bit for bit the factors of a direct evaluation e^{c_i h λ} (the node differences c_i - 0 = c_i)
    np.testing.assert_array_equal(step.growth, np.exp(np.multiply.outer(C, h * rates)))
    np.testing.assert_array_equal(step.rows[3], h * A[3, :3, None] * np.exp(np.multiply.outer(C[3] - C[:3], h * rates)))

"""Ensembles of self-attention systems stepped together: the batched Dormand–Prince 5(4), the Gram-matrix ODE,
the three representations of the same dynamics, and the early end of clustered systems."""

from __future__ import annotations

import numpy as np
import pytest

import meanfield as mf
from meanfield.models._batched_velocity import (
    angle_velocity,
    gram_chords,
    gram_velocity,
    pack_gram,
    point_velocity,
    unpack_gram,
)
from meanfield.particles._token_ensembles import representation_for, token_representation, token_statistics
from meanfield.particles._token_statistics import _linked_to_first
from meanfield.studies.clustering._phase_diagram import phase_diagram_tokens
from solvers import evolve_batch
from solvers._batched_dormand_prince import FINISHED, MAX_STEPS, STOPPED


def _unit(rng, shape):
    x = rng.standard_normal(shape)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


# ---------------------------------------------------------------------------- the batched integrator
def test_batched_dormand_prince_is_fifth_order():
    # y' = -λ y, y(0) = 1 for λ = 1 … 4 (one system each): the global error at t = 2 against e^{-2λ} falls
    # like N^-5 with the number of steps N as rtol shrinks (order 5).
    # (fitted over rtol = 1e-6 … 1e-11, where the step sizes are in the asymptotic regime)
    rates = np.array([1.0, 2.0, 3.0, 4.0])
    errors, steps = [], []
    for rtol in 10.0 ** -np.arange(6, 12):
        run = evolve_batch(lambda y, s, out: np.multiply(-rates[s, None], y, out=out), np.ones((4, 1)),
                           np.array([0.0, 2.0]), rtol=rtol, atol=1e-30)
        assert np.all(run.status == FINISHED)
        errors.append(np.abs(run.y[:, -1, 0] - np.exp(-2 * rates)) / np.exp(-2 * rates))
        steps.append(run.n_steps)
    steps, errors = np.array(steps, dtype=float), np.array(errors)
    slopes = np.array([np.polyfit(np.log(steps[:, k]), np.log(errors[:, k]), 1)[0] for k in range(4)])
    assert np.all((slopes < -4.5) & (slopes > -5.6)), slopes


def test_a_system_is_integrated_as_if_alone():
    # Every system takes its own steps: the same rhs on a batch of four gives each system the trajectory,
    # step counts and evaluations it gets alone, bit for bit (elementwise rhs, no BLAS).
    # States of three entries of different sizes: the error scale atol + rtol |y| is per entry, also when a
    # batch holds one system (its first step's norms must not take the first entry's scale for all).
    rates = np.array([0.3, 1.0, 5.0, 20.0])
    t = np.linspace(0, 3, 7)
    y0 = np.tile([1.0, 1e-3, 30.0], (4, 1))
    batch = evolve_batch(lambda y, s, out: np.copyto(out, -rates[s, None] * y + np.sin(y)), y0, t,
                         rtol=1e-6, atol=1e-9)
    for k in range(4):
        alone = evolve_batch(lambda y, s, out: np.copyto(out, -rates[k] * y + np.sin(y)), y0[:1], t,
                             rtol=1e-6, atol=1e-9)
        assert np.array_equal(alone.y[0], batch.y[k])
        assert alone.n_steps[0] == batch.n_steps[k] and alone.nfev[0] == batch.nfev[k]
        assert alone.dt_min[0] == batch.dt_min[k]
    assert len(set(batch.n_steps.tolist())) > 1  # the systems did take different steps


def test_dense_output_is_fourth_order_between_steps():
    # Outputs inside steps come from the continuous extension of order 4: y' = cos t, y = sin t, at rtol 1e-8
    # the dense values agree to 1e-7 with sin t at 41 points that 20-odd steps hold (measured 3.6e-8); the
    # step ends themselves to the integrator's 1e-8.
    t = np.linspace(0, 4, 41)
    run = evolve_batch(lambda y, s, out: np.copyto(out, np.cos(y[:, 1:2]) * np.array([[1.0, 0.0]])
                                                  + np.array([[0.0, 1.0]])),
                       np.zeros((1, 2)), t, rtol=1e-8, atol=1e-10)
    assert run.n_steps[0] < 40
    np.testing.assert_allclose(run.y[0, :, 0], np.sin(t), atol=1e-7)
    np.testing.assert_allclose(run.y[0, :, 1], t, atol=1e-12)


def test_stop_and_max_steps_are_reported_per_system():
    t = np.linspace(0, 5, 11)
    run = evolve_batch(lambda y, s, out: np.negative(y, out=out), np.array([[1.0], [0.01]]), t, rtol=1e-6, atol=1e-9,
                       stop=lambda y, s: y[:, 0] < 0.05)
    assert run.status.tolist() == [STOPPED, STOPPED]
    # the test is applied to accepted states: the second system (below 0.05 from the start) ends after one step
    assert run.n_steps[1] == 1 and np.isnan(run.y[1, 1:]).all()
    assert 2.9 < run.t_stop[0] < 3.3 and np.isnan(run.y[0, -1, 0])
    limited = evolve_batch(lambda y, s, out: np.negative(y, out=out), np.ones((2, 1)), t, rtol=1e-12, atol=1e-14,
                           max_steps=5)
    assert np.all(limited.status == MAX_STEPS) and np.all(np.isnan(limited.y[:, -1]))


# ---------------------------------------------------------------------------- the velocities
@pytest.mark.parametrize("normalized", [True, False])
def test_gram_velocity_is_the_derivative_of_the_inner_products(normalized):
    # ċ_ik = -(<ẋ_i, x_k> + <x_i, ẋ_k>)/(2 c_ik) with ẋ the point velocity; also with unequal weights.
    rng = np.random.default_rng(1)
    x = _unit(rng, (3, 9, 40))
    weights = rng.uniform(0.5, 1.5, (3, 9))
    weights /= weights.sum(axis=1, keepdims=True)
    for w in (None, weights):
        c = pack_gram(gram_chords(x))
        xdot = point_velocity(x, 2.5, normalized, w)
        inner = np.einsum("sid,skd->sik", xdot, x)
        expected = pack_gram(-(inner + np.swapaxes(inner, 1, 2))) / (2 * c)
        np.testing.assert_allclose(gram_velocity(c, 9, 2.5, normalized, w), expected, rtol=0, atol=1e-14)
        np.testing.assert_allclose(np.einsum("sid,sid->si", xdot, x), 0, atol=1e-15)  # tangent


def test_point_and_angle_velocities_are_the_equations():
    # (SA)/(USA) written literally: ẋ_i = Σ_j A_ij (x_j - <x_i, x_j> x_i), A_ij = e^{β<x_i,x_j>}/Σ_l e^{β<x_i,x_l>}
    # (SA) or e^{β<x_i,x_j>}/n (USA); on S¹ θ̇_i = Σ_j A_ij sin(θ_j - θ_i).
    rng = np.random.default_rng(2)
    x = _unit(rng, (2, 7, 3))
    theta = rng.uniform(0, 2 * np.pi, (2, 7))
    beta = 1.7
    for normalized in (True, False):
        for points, velocity in ((x, point_velocity(x, beta, normalized)),
                                 (np.stack([np.cos(theta), np.sin(theta)], -1), None)):
            g = np.einsum("sid,sjd->sij", points, points)
            a = np.exp(beta * g)
            a = a / a.sum(axis=2, keepdims=True) if normalized else a / 7
            expected = np.einsum("sij,sjd->sid", a, points) - np.einsum("sij,sij->si", a, g)[..., None] * points
            if velocity is None:
                rates = angle_velocity(theta[..., None], beta, normalized)[..., 0]
                tangent = np.stack([-np.sin(theta), np.cos(theta)], -1)
                np.testing.assert_allclose(rates, np.einsum("sid,sid->si", expected, tangent), atol=1e-14)
            else:
                np.testing.assert_allclose(velocity, expected, atol=1e-14)


def test_chords_and_packing():
    rng = np.random.default_rng(3)
    x = _unit(rng, (2, 6, 5))
    x[0, 1] = x[0, 0] + 1e-9 * rng.standard_normal(5)
    x[0, 1] /= np.linalg.norm(x[0, 1])
    exact = np.linalg.norm(x[:, :, None] - x[:, None], axis=-1) / np.sqrt(2)
    np.testing.assert_allclose(gram_chords(x), exact, rtol=1e-13, atol=1e-300)  # the near pair without cancellation
    assert np.array_equal(unpack_gram(pack_gram(exact), 6), exact)
    assert pack_gram(exact).shape == (2, 15)


def test_gram_start_has_the_normalised_wishart_moments():
    # iid uniform tokens on S^{d-1}: G_ik = <x_i, x_k> has mean 0 and variance 1/d; here over 120 000 pairs
    # the sample moments lie within 4 standard errors (E G⁴ = 3/(d(d+2)) gives the variance of G²).
    d, n = 24, 16
    x = phase_diagram_tokens(5, np.arange(1000), d, n)
    g = 1 - pack_gram(gram_chords(x)) ** 2
    size = g.size
    assert abs(g.mean()) < 4 * np.sqrt(1 / d / size)
    var_g2 = 3 / (d * (d + 2)) - 1 / d**2
    assert abs((g**2).mean() - 1 / d) < 4 * np.sqrt(var_g2 / size)


# ---------------------------------------------------------------------------- representations
@pytest.mark.parametrize("d, n", [(5, 8), (12, 8), (40, 8)])
@pytest.mark.parametrize("normalized", [True, False])
def test_gram_and_points_agree_on_shared_starts(d, n, normalized):
    # The same tokens in both representations at rtol 1e-11: chords agree to 1e-7 (measured ≤ 3e-10).
    x = phase_diagram_tokens(0, np.arange(6), d, n)
    t = np.linspace(0, 8, 9)
    chords = {}
    for name in ("points", "gram"):
        rep = token_representation(name, d, n)
        run = rep.evolve(rep.initial(x), t, 2.0, normalized, rtol=1e-11, atol=1e-13,
                         record=lambda y, s, rep=rep: rep.chords(y))
        assert np.all(run.status == FINISHED)
        chords[name] = run.y
    np.testing.assert_allclose(chords["gram"], chords["points"], rtol=0, atol=1e-7)
    assert np.abs(chords["gram"][:, -1] - chords["gram"][:, 0]).max() > 0.1  # the tokens did move


def test_angles_and_the_compiled_ensemble_take_the_same_steps():
    # d = 2: the batched integrator and mf.simulate's compiled per-system ensemble follow one rulebook
    # (tableau, controller, first step, unit error scale): the same accepted steps, trajectories to 1e-10.
    x = phase_diagram_tokens(0, np.arange(16), 2, 12)
    theta = np.arctan2(x[..., 1], x[..., 0])
    t = np.linspace(0, 10, 21)
    rep = token_representation("angles", 2, 12)
    run = rep.evolve(rep.initial(x), t, 3.0, True, rtol=1e-6, atol=1e-8, record=lambda y, s: y[..., 0])
    reference = mf.simulate(mf.SelfAttention(3.0), theta, t, rtol=1e-6, atol=1e-8, path="ensemble", domain="circle")
    wrapped = np.angle(np.exp(1j * (run.y - reference["positions"].values)))  # simulate returns angles in [0, 2π)
    np.testing.assert_allclose(wrapped, 0, rtol=0, atol=1e-10)
    assert run.n_steps.sum() == reference.attrs["n_steps"]


def test_representation_rule():
    assert [representation_for(d, 32).name for d in (2, 3, 15, 16, 128)] == ["angles", "points", "points", "gram",
                                                                               "gram"]
    with pytest.raises(ValueError, match="'angles' representation is for d = 2"):
        token_representation("angles", 3, 8)
    with pytest.raises(ValueError, match="representation must be one of"):
        token_representation("cartesian", 3, 8)


@pytest.mark.parametrize("d", [2, 6, 40])
def test_clustered_systems_end_early_without_changing_the_statistics(d):
    # Linked pairs stay linked (every <x_i, x_k> ≥ 1 - δ ≥ 0 is forward invariant): ending a clustered system
    # and filling its statistics with 1 gives what integrating it to the end gives, at a fraction of the cost.
    x = phase_diagram_tokens(1, np.arange(24), d, 10)
    t = np.linspace(0, 20, 41)
    rep = representation_for(d, 10)
    full = token_statistics(rep, x, t, 1.0, True, 1e-2, rtol=1e-9, atol=1e-11, stop_when_clustered=False)
    early = token_statistics(rep, x, t, 1.0, True, 1e-2, rtol=1e-9, atol=1e-11)
    assert np.array_equal(full["pair_fraction"], early["pair_fraction"])
    assert np.array_equal(full["clusters"], early["clusters"])
    assert np.isfinite(early["clustered_at"]).sum() >= 20 and early["nfev"].sum() < 0.7 * full["nfev"].sum()


@pytest.mark.parametrize("name, d", [("angles", 2), ("points", 5), ("gram", 5)])
def test_clustered_is_every_pair_linked(name, d):
    # The quick test of the pairs (1, k) only rules systems out: `clustered` is the pair fraction 1 of
    # `statistics`, for systems far from, near and inside one cluster; at spread 0.06 some systems pass the
    # quick test (every pair (1, k) linked) with another pair unlinked.
    rng = np.random.default_rng(5)
    delta = 1e-3
    spread = np.repeat([0.3, 0.09, 0.06, 0.045, 0.0], 20)[:, None, None]  # |x_i - x_k| ≤ √(2δ) ≈ 0.0447 links
    if name == "angles":
        theta = 1.0 + spread[..., 0] * rng.uniform(-0.5, 0.5, (100, 9))
        x = np.stack([np.cos(theta), np.sin(theta)], axis=-1)
    else:
        x = np.array([1.0, 0, 0, 0, 0]) + 0.5 * spread * _unit(rng, (100, 9, d))
        x /= np.linalg.norm(x, axis=-1, keepdims=True)
    rep = token_representation(name, d, 9)
    state = rep.initial(x)
    every = rep.statistics(state, delta)[:, 0] == 1.0
    assert np.array_equal(rep.clustered(state, delta), every)
    flat = state.reshape(len(state), -1)
    screen = rep.thresholds(delta)[1]
    screened = np.array([_linked_to_first(rep.kind, flat[s:s + 1], 9, d, screen) for s in range(len(flat))])
    assert every.sum() >= 40 and np.count_nonzero(screened & ~every) > 0


@pytest.mark.parametrize("d", [2, 8, 40])
@pytest.mark.parametrize("normalized", [True, False])
def test_statistics_are_those_of_the_batched_integration_bit_for_bit(d, normalized):
    # token_statistics steps one system at a time in one compiled loop: its statistics, steps, evaluations and
    # stop times are those of solvers.evolve_batch with the same record and stop, bit for bit (angles, points
    # in the chart of the sphere, chords).
    n, delta = 20, 1e-2
    x = phase_diagram_tokens(3, np.arange(16), d, n)
    t = np.linspace(0, 6, 31)
    rep = representation_for(d, n)
    stopped = []
    for beta in (1.0, 4.0):
        stats = token_statistics(rep, x, t, beta, normalized, delta, rtol=1e-7, atol=1e-9)
        run = rep.evolve(rep.initial(x), t, beta, normalized, rtol=1e-7, atol=1e-9,
                         record=lambda y, s: rep.statistics(y, delta), stop=lambda y, s: rep.clustered(y, delta))
        filled = np.where(np.isnan(run.y), 1.0, run.y)
        assert np.array_equal(stats["pair_fraction"], filled[..., 0])
        assert np.array_equal(stats["clusters"], filled[..., 1])
        for key in ("nfev", "n_steps", "n_rejected"):
            assert np.array_equal(stats[key], getattr(run, key))
        stopped.append(run.status == STOPPED)
        assert np.array_equal(stats["clustered_at"], np.where(stopped[-1], run.t_stop, np.nan), equal_nan=True)
    assert np.any(stopped)  # some systems ended clustered (and with SA at β = 4 every system ran to t = 6)


def test_minimum_inner_product_never_decreases_once_nonnegative():
    # The invariance behind the early end: min_{i<k} G_ik is non-decreasing while it is ≥ 0 (SA and USA).
    rng = np.random.default_rng(4)
    x = _unit(rng, (8, 7, 4)) + 3 * np.array([1.0, 0, 0, 0])
    x /= np.linalg.norm(x, axis=-1, keepdims=True)
    for normalized in (True, False):
        rep = token_representation("gram", 4, 7)
        run = rep.evolve(rep.initial(x), np.linspace(0, 6, 61), 4.0, normalized, rtol=1e-10, atol=1e-12,
                         record=lambda y, s: (1 - y**2).min(axis=1)[:, None])
        minimum = run.y[..., 0]
        assert minimum[:, 0].min() > 0
        assert np.all(np.diff(minimum, axis=1) >= -1e-12)


def test_statistics_of_every_representation_are_the_diagnostics():
    # Pair fractions and single-linkage clusters read from angles (sorted, two pointers), points (their Gram
    # matrix) and chords are those of mf.particles.pair_fraction / number_of_clusters on the same tokens.
    rng = np.random.default_rng(0)
    delta = 3e-2
    theta = rng.uniform(0, 0.3, (50, 12))
    theta[:, :4] += 3.0
    theta[:, 4] = 2 * np.pi - 0.01  # across the cut at 0
    stats = token_representation("angles", 2, 12).statistics(theta[..., None], delta)
    assert np.array_equal(stats[:, 0], mf.particles.pair_fraction(theta, delta, domain="circle"))
    assert np.array_equal(stats[:, 1], mf.number_of_clusters(theta, np.sqrt(2 * delta), domain="circle"))
    x = _unit(rng, (50, 12, 5))
    x[:, 6:] = x[:, :1] + 0.05 * x[:, 6:]
    x /= np.linalg.norm(x, axis=-1, keepdims=True)
    for name in ("points", "gram"):
        rep = token_representation(name, 5, 12)
        stats = rep.statistics(rep.initial(x), delta)
        assert np.array_equal(stats[:, 0], mf.particles.pair_fraction(x, delta))
        assert np.array_equal(stats[:, 1], mf.number_of_clusters(x, np.sqrt(2 * delta)))
    assert 0 < stats[:, 0].mean() < 1


def test_compiled_sphere_chart_is_the_geometry_chart():
    # The batched chart's rows (sines and cosines of the radii vectorised) are SphereGeometry.exp and dexpinv.
    from meanfield.domains._geometry import SphereGeometry
    from meanfield.particles._compiled_charts import CompiledSphereChart

    rng = np.random.default_rng(6)
    p = _unit(rng, (3, 5, 8))
    u = 0.3 * rng.standard_normal((3, 5, 8))
    u -= np.sum(u * p, -1, keepdims=True) * p
    u[0, 0] = 0.0  # the chart at its centre
    f = rng.standard_normal((3, 5, 8))
    geometry, chart = SphereGeometry(8), CompiledSphereChart()
    np.testing.assert_allclose(chart.exp(p, u), geometry.exp(p, u), rtol=0, atol=1e-15)
    np.testing.assert_allclose(chart.pullback(p, u, f), geometry.dexpinv(p, u, f), rtol=0, atol=4e-15)

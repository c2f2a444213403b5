"""Step control of the Möbius integrator of Kuramoto particles: what each term of its error estimate sees, the
path error against the tolerance, and the equal steps it asks of :func:`solvers.evolve`."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from meanfield.particles._moebius import MoebiusStepper
from solvers import Stepper, StepResult, evolve

A = -1j  # K ĥ_1 for K = 2 and h = sin


def _lorentzian(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Phases, midpoint-quantile Lorentzian frequencies (γ = 0.5) and equal weights, shape (1, n)."""
    theta0 = np.random.default_rng(seed).uniform(0, 2 * np.pi, (1, n))
    omega = scipy.stats.cauchy(0, 0.5).ppf((np.arange(n) + 0.5) / n)[None]
    return theta0, omega, np.full((1, n), 1.0 / n)


def _estimates(stepper: MoebiusStepper, u: np.ndarray, h: float) -> tuple[complex, float, float]:
    """Z_{n+1}, the embedded estimate (|a|h/3)|Z_{n+1} - Z_4| and the Simpson term of one step h from u."""
    core = stepper.core
    z = core.drive(u, h)
    _, z_new, _, z_last = core.step(u, z, h)
    return z_new[0], float(abs(core.a) * h / 3 * abs(z_new - z_last)[0]), float(core.aliasing[0])


def _resolved_step(stepper: MoebiusStepper, u: np.ndarray, h: float, substeps: int = 256) -> complex:
    """Z after h in ``substeps`` plain CF4 steps (``stepper`` built with every oscillator resolved)."""
    core = stepper.core
    for _ in range(substeps):
        u = core.step(u, core.drive(u, h / substeps), h / substeps)[0]
    return complex(np.sum(stepper.core.weights * u))


@pytest.mark.parametrize("bound", [0.0, 2.0])
def test_the_embedded_estimate_is_fourth_order_and_bounds_the_local_error(bound):
    theta0, omega, w = _lorentzian(64, seed=11)
    omega = np.clip(omega, -bound, bound)  # bound 0: identical oscillators synchronising
    stepper = MoebiusStepper(A, omega, w, 0.0)
    resolved = MoebiusStepper(A, omega, w, 0.0, resolved=np.inf)
    u = stepper.state(0.0, theta0)
    estimates, locals_ = [], []
    for h in (0.2, 0.1, 0.05, 0.025):
        z_new, embedded, _ = _estimates(stepper, u, h)
        estimates.append(embedded)
        locals_.append(abs(z_new - _resolved_step(resolved, u, h)))
    slopes = np.log2(np.array(estimates[:-1]) / np.array(estimates[1:]))
    # an order-3 solution against the order-4 step: O(h⁴) (measured slopes 3.92–4.00), above the O(h⁵) local
    # error by a factor that grows as h falls (measured 13–115 for identical, 20–194 for bounded frequencies)
    assert np.all(np.abs(slopes - 4) < 0.3), slopes
    assert np.all(np.array(estimates) > 5 * np.array(locals_))


def test_the_simpson_term_bounds_the_error_of_resolved_fast_rotations():
    theta0, omega, w = _lorentzian(1000)
    resolved = MoebiusStepper(A, omega, w, 0.0, resolved=np.inf)
    u = resolved.state(0.0, theta0)
    for _ in range(2000):  # to t = 2 (r = 0.15)
        u = resolved.core.step(u, resolved.core.drive(u, 1e-3), 1e-3)[0]
    stepper = MoebiusStepper(A, omega, w, 0.0)
    for h in (1e-3, 2e-3):
        z_new, embedded, simpson = _estimates(stepper, u, h)
        local = abs(z_new - _resolved_step(resolved, u, h))
        # max|ω| h = 0.32, 0.64: every oscillator is resolved, and the local error (measured 1.3e-12, 7.2e-12)
        # is Simpson's error on the fastest rotations, which the embedded estimate sees in part (measured
        # 0.49 and 0.54 of it); the Simpson term bounds it (measured 2.2×, 2.7×)
        assert embedded < local
        assert local <= simpson <= 4 * local, (h, local, simpson)


def test_the_path_error_is_held_to_the_tolerance_and_few_steps_are_rejected():
    theta0, omega, w = _lorentzian(300)
    times = np.linspace(0.0, 20.0, 41)

    def order_parameter(**options) -> tuple[np.ndarray, int, int]:
        stepper = MoebiusStepper(A, omega, w, 0.0, **options)
        run = evolve(stepper, stepper.state(0.0, theta0), times)
        z = np.array([np.sum(w * np.exp(1j * stepper.positions(t, u))) for t, u in zip(run.t, run.y)])
        return z, run.n_steps, run.n_rejected

    reference, _, _ = order_parameter(dt=0.25 / np.abs(omega).max(), resolved=np.inf)
    rtols = np.array([1e-4, 1e-5, 1e-6, 1e-7, 1e-8])
    errors = []
    for rtol in rtols:
        z, steps, rejected = order_parameter(rtol=rtol, atol=rtol * 1e-2)
        errors.append(np.abs(z - reference).max())
        assert rejected < 0.2 * steps  # measured 1–11 %
    errors = np.array(errors)
    # measured 2.6e-5, 4.2e-5, 1.3e-6, 1.9e-7, 2.0e-8 (0.3–4 rtol): the path error over 20 time units is
    # held to the tolerance at every row and falls a thousandfold from rtol 1e-4 to 1e-8; at loose
    # tolerances it is at the level of the fast set's remainder, which the step sees only as a bound
    assert np.all(errors < 10 * rtols), errors / rtols
    assert errors[-1] < 1e-3 * errors[0]


class _Decay(Stepper):
    """y' = -y stepped exactly, proposing the same step ``proposal`` after every attempt."""

    def __init__(self, proposal: float, equal: bool) -> None:
        super().__init__()
        self.proposal, self.equal_steps, self.sizes = proposal, equal, []

    def initial_step(self, y, t=0.0):
        return self.proposal

    def _step_impl(self, t, y, dt):
        self.sizes.append(dt)
        return StepResult(True, y * np.exp(-dt), self.proposal)


@pytest.mark.parametrize("equal, sizes", [(True, [0.25] * 8), (False, [0.3, 0.3, 0.3, 0.1] * 2)])
def test_equal_steps_split_each_output_interval_evenly(equal, sizes):
    stepper = _Decay(0.3, equal)
    run = evolve(stepper, np.ones(1), [0.0, 1.0, 2.0])
    np.testing.assert_allclose(stepper.sizes, sizes, rtol=1e-12)
    np.testing.assert_allclose(run.y[:, 0], np.exp(-np.array([0.0, 1.0, 2.0])), rtol=1e-14)

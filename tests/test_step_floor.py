"""One step floor for every adaptive integrator: h_min = 16 eps max(|t0|, |t_end|) (solvers.step_floor).

A run toward a singularity stops there with the floor's message: evolve (every scheme), the general
particle integrator, the compiled ensemble and the Kuramoto Möbius flow."""

from __future__ import annotations

import numpy as np
import pytest

from meanfield.domains import CircleGeometry, EuclideanGeometry
from meanfield.particles._chart_steppers import ChartDormandPrince
from meanfield.particles._ensemble import CIRCLE, EnsembleIntegrator
from meanfield.particles._moebius import MoebiusStepper
from solvers import Scheme, StepController, StepResult, evolve, step_floor, weighted_rms
from solvers._runge_kutta import C, N_STAGES, LawsonTables, adaptive_lawson_step

EPS = np.finfo(float).eps
RTOL, ATOL = 1e-8, 1e-10


class Riccati(Scheme):
    """y' = y² by Dormand–Prince 5(4) (the pair of every adaptive scheme); y(0) = 1 blows up at t = 1.

    Records the start (t, y) of every attempted step and counts the accepted steps with t + h = t."""

    name = "riccati"

    def __init__(self) -> None:
        super().__init__()
        self.tables, self.controller = LawsonTables(None), StepController()
        self.stages = np.empty((N_STAGES, 1))
        self.attempts: list[tuple[float, float]] = []
        self.frozen_steps = 0

    def _square(self, y: np.ndarray, out: np.ndarray) -> None:
        self.nfev += 1
        out[...] = y * y

    def rhs(self, y: np.ndarray) -> np.ndarray:
        return y * y

    def initial_step(self, y: np.ndarray, t: float = 0.0) -> float:
        return 1e-3

    def mass(self, y: np.ndarray) -> np.ndarray:
        return np.zeros(())

    def _error_norm(self, start: np.ndarray, end: np.ndarray, error: np.ndarray) -> float:
        return weighted_rms(error[None], ATOL + RTOL * np.maximum(np.abs(start), np.abs(end)))

    def _step_impl(self, t: float, y: np.ndarray, dt: float) -> StepResult:
        self.attempts.append((t, float(y[0])))
        step = adaptive_lawson_step(self._square, y, y * y, self.tables(dt), self.stages, self._error_norm,
                                    self.controller)
        self.frozen_steps += bool(step.accepted and t + dt == t)
        return StepResult(step.accepted, step.y1, dt * step.factor, step.error)


# ---------------------------------------------------------------------------- the rule
def test_the_floor_is_sixteen_eps_of_the_largest_time_of_the_run() -> None:
    assert step_floor(0.0, 1.0) == 16 * EPS
    assert step_floor(-3.0, 2.0) == 48 * EPS
    assert step_floor(1e6, 1e6 + 1.0) == 16 * EPS * (1e6 + 1.0)
    assert step_floor(0.0, 1e-20) == 16 * EPS * 1e-20  # no absolute unit of time
    # a function of the interval only: a run with t >= 0 resumed over its remaining times keeps its floor
    assert step_floor(4.0, 10.0) == step_floor(0.0, 10.0)


@pytest.mark.parametrize("t_end", [1.0, 1.04, 1.5, 1.999, 3.0, 1e-3, 1e6])
def test_at_the_floor_the_stage_times_are_distinct_and_the_step_is_the_chosen_one(t_end: float) -> None:
    h = step_floor(0.0, t_end)
    nodes = np.unique(C)  # c_6 = c_7 = 1 is one time
    for t in [*np.linspace(0.0, t_end, 1001), t_end, -t_end]:
        times = t + nodes * h
        assert np.all(np.diff(times) > 0), (t, times - t)
        # the step taken, fl(t + h) - t, is within ulp(t)/2 <= eps T/2 = h/32 of h
        assert abs((t + h) - t - h) <= h / 32, t
    # with 8 eps T two of them can coincide (c_4 h and c_5 h round to the same offset of t)
    t, h = 1.0, 8 * EPS * 1.04
    assert t + C[3] * h == t + C[4] * h


# ---------------------------------------------------------------------------- a finite-time blow-up
def test_evolve_stops_at_the_blow_up_with_the_floor_message() -> None:
    scheme = Riccati()
    run = evolve(scheme, np.array([1.0]), [0.0, 2.0])
    floor = step_floor(0.0, 2.0)
    assert not run.success and run.t.size == 1
    assert f"fell below the smallest step {floor:.3g} at t = 1" in run.message
    t_stop, y_stop = scheme.attempts[-1]
    # the computed blow-up time differs from 1 by the accumulated relative error, O(rtol): measured 8.3e-10
    assert abs(t_stop - 1.0) < RTOL
    # relative error control accepts h ∝ 1 - t: no rejection; the floor stops the proposals once y ~ 1/h_min
    # (measured y = 8.1e12; without the check on accepted steps 5151 steps left t unchanged, until y² overflowed)
    assert run.n_rejected == 0 and scheme.frozen_steps == 0
    assert 1e10 < y_stop < 1 / floor
    # steps shrink by a factor ~0.94 per step (h ∝ 1 - t): the last accepted one is just above the floor
    assert floor <= run.dt_min < 2 * floor


def test_the_particle_integrator_stops_at_the_blow_up_with_the_floor_message() -> None:
    times = []

    def square(t: float, x: np.ndarray) -> np.ndarray:
        times.append(t)
        return x * x

    out = evolve(ChartDormandPrince(EuclideanGeometry(1), square, RTOL, ATOL), np.ones((1, 1, 1)), [0.0, 2.0])
    floor = step_floor(0.0, 2.0)
    assert not out.success and out.t.size == 1
    assert f"fell below the smallest step {floor:.3g} at t = 1" in out.message
    assert abs(max(times) - 1.0) < RTOL  # as evolve's: measured 8.3e-10
    assert out.n_rejected == 0 and floor <= out.dt_min < 2 * floor


def test_a_velocity_that_cannot_be_evaluated_stops_the_particle_integrator_at_the_wall() -> None:
    def wall(t: float, x: np.ndarray) -> np.ndarray:  # finite up to t = 0.5, NaN after: every step across is rejected
        return np.where(t < 0.5, -np.sin(x), np.nan)

    out = evolve(ChartDormandPrince(CircleGeometry(), wall, 1e-8, 1e-10), np.array([[0.1, 0.4, 2.0]]), [0.0, 1.0])
    assert not out.success and f"fell below the smallest step {16 * EPS:.3g} at t = 0.5" in out.message


# ---------------------------------------------------------------------------- a tolerance no step can meet
def test_the_compiled_ensemble_and_the_moebius_flow_stop_at_the_floor() -> None:
    x0, weights = np.array([[0.1, 0.4, 2.0]]), np.full((1, 3), 1 / 3)
    # each rejection shrinks h by at least the controller's 0.2: from h ~ 0.1 to 3.6e-15 in at most ~20 (measured 13)
    ensemble = EnsembleIntegrator(CIRCLE, weights, 1.0, True, rtol=1e-300, atol=0.0, max_steps=10**6, live=False)
    out = ensemble.run(x0, np.array([0.0, 1.0]), [], None)
    assert not out.success and "step size fell below the smallest step (system 0 at t = 0)" in out.message
    assert out.n_steps == 0 and 0 < out.n_rejected < 40
    stepper = MoebiusStepper(-0.5j, np.array([[0.3, -0.2, 0.1]]), weights, 0.0, rtol=0.0, atol=1e-300)
    out = evolve(stepper, stepper.state(0.0, x0), [0.0, 1.0])
    assert not out.success and f"fell below the smallest step {16 * EPS:.3g}" in out.message
    assert 0 < out.n_rejected < 40  # measured 21


def test_a_step_cut_short_by_an_output_time_does_not_trip_the_floor() -> None:
    # the step onto 0.5 + 1e-15 is 1e-15 < h_min = 3.6e-15 long: a clipped step, not the controller's proposal
    run = evolve(Riccati(), np.array([1.0]), [0.0, 0.5, 0.5 + 1e-15, 0.9])
    assert run.success, run.message
    np.testing.assert_allclose(run.y[:, 0], 1 / (1 - run.t), rtol=1e-7)  # y = 1/(1 - t), global error ~ rtol

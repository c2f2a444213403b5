"""Weights that change with depth (``DepthVaryingAttention``): piecewise-constant draws re-drawn every τ and
callables t ↦ (Q, K, V), integrated with every step ending at the switching times.

What is exact here, and why. Each piece of a run is stepped by a fresh stepper of that piece's constant
velocity (:class:`solvers.PiecewiseStepper`), its steps ending at the switching time and the step-size control
restarting there, so a run across the switches takes the very steps of the constant models run one piece after
the other with the end state of each as the start of the next: positions are compared bit for bit
(``assert_array_equal``), and the counts of steps and evaluations are the sums over the pieces.
"""

from __future__ import annotations

import numpy as np
import pytest

import meanfield as mf
import meanfield.particles._integrators as integrators
import meanfield.runs._driver
import solvers
from meanfield.io._checkpoint import load_checkpoint
from meanfield.models._depth_varying import ginibre_draw

D, N, BETA, SEED = 3, 6, 1.0, 7


def _points(n=N, d=D, seed=1):
    x = np.random.default_rng(seed).normal(size=(n, d))
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _draw_model(k, beta=BETA, d=D, seed=SEED):
    Q, K, V = ginibre_draw(seed, k, d)
    return mf.Attention(beta, Q=Q, K=K, V=V)


def _chained(x0, edges, method=None, tau=2.0, **options):
    """The constant model of draw k run on [edges[i], edges[i+1]] ⊂ [kτ, (k+1)τ], each from the end state of the
    previous one; (end state, summed counts)."""
    x, counts = x0, dict.fromkeys(("n_steps", "nfev"), 0)
    for a, b in zip(edges[:-1], edges[1:]):
        k = int(a // tau)
        ds = mf.simulate(_draw_model(k), x, [a, b], method, **options)
        assert ds.attrs["success"] == 1
        x = ds.positions.values[-1]
        for name in counts:
            counts[name] += ds.attrs[name]
    return x, counts


@pytest.mark.parametrize("method, options, times, edges", [
    ("dopri5", {}, [0.0, 3.0, 7.0], [0.0, 2.0, 4.0, 6.0, 7.0]),       # outputs inside pieces: dense output
    ("rk4", {"dt": 0.3}, [0.0, 1.0, 3.0], [0.0, 1.0, 2.0, 3.0]),      # pieces between output and switching times
    ("layers", {"dt": 0.25}, [0.0, 1.0, 3.0, 7.0], [0.0, 2.0, 4.0, 6.0, 7.0]),
])
def test_piecewise_run_equals_the_constant_models_chained_bit_for_bit(method, options, times, edges):
    model = mf.DepthVaryingAttention(BETA, period=2.0, seed=SEED, dimension=D)
    x0 = _points()
    ds = mf.simulate(model, x0, times, method, **options)
    assert ds.attrs["success"] == 1
    end, counts = _chained(x0, edges, method, **options)
    np.testing.assert_array_equal(ds.positions.values[-1], end)
    assert ds.attrs["n_steps"] == counts["n_steps"]
    assert ds.attrs["nfev"] == counts["nfev"]
    assert ds.attrs["period"] == 2.0 and ds.attrs["weights_seed"] == SEED and ds.attrs["dimension"] == D
    assert "SeedSequence([seed, k])" in ds.attrs["weights_rule"]


@pytest.mark.parametrize("method, options", [("dopri5", {}), ("rk4", {"dt": 0.3})])
def test_no_step_straddles_a_switching_time(monkeypatch, method, options):
    """Every accepted step [t, t + h] of the run is recorded: each switching time kτ is the end of one step and
    the start of the next, and no step has a switching time strictly inside."""
    steps = []
    base = integrators.ChartDormandPrince if method == "dopri5" else integrators.ChartFixedStep
    name = base.__name__

    class Recording(base):
        def _step_impl(self, t, y, dt):
            res = super()._step_impl(t, y, dt)
            if res.accepted:
                steps.append((t, t + dt))
            return res

    monkeypatch.setattr(integrators, name, Recording)
    tau = 0.7
    model = mf.DepthVaryingAttention(BETA, period=tau, seed=SEED, dimension=D)
    ds = mf.simulate(model, _points(), [0.0, 1.0, 3.0], method, **options)
    assert ds.attrs["success"] == 1 and len(steps) == ds.attrs["n_steps"]
    starts, ends = np.array(steps).T
    switches = model.switching_times(0.0, 3.0)
    np.testing.assert_array_equal(switches, np.arange(1, 5) * tau)
    for s in switches:
        assert np.sum(starts == s) == 1  # a step starts exactly at s
        assert np.sum(np.abs(ends - s) <= 4 * np.spacing(s)) == 1  # and one ends there (t + h rounds to s)
        assert not np.any((starts < s) & (ends > s + 4 * np.spacing(s)))  # none straddles it
    if method == "rk4":  # [0, 0.7], [0.7, 1] | [1, 1.4], [1.4, 2.1], [2.1, 2.8], [2.8, 3]: ceil(len/0.3) steps each
        assert ds.attrs["n_steps"] == 3 + 1 + 2 + 3 + 3 + 1


def test_solvers_piecewise_stepper_lands_on_switches_and_restarts():
    """y' = -y on [0, 1), y' = +y after: exact steps; the run returns to y(0) = 1 to round-off, with the steps
    0.3, 0.3, 0.3, 0.1 on each piece (the step size restarts at the switch)."""
    taken = []

    class Exponential(solvers.Stepper):
        name = "exponential"

        def __init__(self, r):
            super().__init__()
            self.r = r

        def initial_step(self, y, t=0.0):
            return 0.3

        def _step_impl(self, t, y, dt):
            self.nfev += 1
            taken.append(dt)
            return solvers.StepResult(True, np.exp(self.r * dt) * y, 2 * dt)

    stepper = solvers.PiecewiseStepper(lambda k: Exponential(-1.0 if k == 0 else 1.0), lambda t: int(t >= 1.0),
                                       lambda t0, t1: np.array([1.0] if t0 < 1.0 < t1 else []), 0.0)
    run = solvers.evolve(stepper, np.array([1.0]), [0.0, 0.5, 2.0])
    assert abs(run.y[-1, 0] - 1.0) < 1e-15  # e^{-1} e^{+1}: two exact exponentials, round-off only
    ends = np.cumsum(taken)
    switch = int(np.argmin(np.abs(ends - 1.0)))
    assert ends[switch] == pytest.approx(1.0, abs=1e-15)   # a step ends at t = 1 ...
    assert taken[switch + 1] == 0.3                          # ... and the next one restarts at initial_step
    assert run.n_steps == stepper.nfev == len(taken)


def test_constant_callable_equals_the_constant_attention_exactly():
    rng = np.random.default_rng(3)
    Q, K, V = rng.normal(size=(3, D, D)) / np.sqrt(D)
    x0, times = _points(), [0.0, 1.5, 4.0]
    constant = mf.simulate(mf.Attention(BETA, Q=Q, K=K, V=V), x0, times)
    for period in (None, 1.0):  # continuous in t, or declared to switch at the integers (with the same values)
        varying = mf.simulate(mf.DepthVaryingAttention(BETA, weights=lambda t: (Q, K, V), period=period), x0, times)
        if period is None:
            np.testing.assert_array_equal(varying.positions.values, constant.positions.values)
            assert varying.attrs["nfev"] == constant.attrs["nfev"]
        else:  # the step-size control restarts at t = 1, 2, 3: the same flow to the integrator's tolerance
            np.testing.assert_allclose(varying.positions.values, constant.positions.values, atol=1e-7)
            np.testing.assert_array_equal(varying.positions.values[-1],
                                          _chain_callable(Q, K, V, x0, [0.0, 1.0, 2.0, 3.0, 4.0]))


def _chain_callable(Q, K, V, x0, edges):
    x = x0
    for a, b in zip(edges[:-1], edges[1:]):
        x = mf.simulate(mf.Attention(BETA, Q=Q, K=K, V=V), x, [a, b]).positions.values[-1]
    return x


def test_one_draw_is_the_constant_model_of_draw_zero():
    x0, times = _points(), [0.0, 2.0, 5.0]
    once = mf.simulate(mf.DepthVaryingAttention(BETA, period=np.inf, seed=SEED, dimension=D), x0, times)
    constant = mf.simulate(_draw_model(0), x0, times)
    np.testing.assert_array_equal(once.positions.values, constant.positions.values)
    assert once.attrs["switching_rule"] == "none (one draw, period = inf)"


def test_draws_do_not_depend_on_how_the_run_is_split():
    Q, K, V = ginibre_draw(SEED, 5, D)
    again = np.random.default_rng(np.random.SeedSequence([SEED, 5])).standard_normal((3, D, D)) / np.sqrt(D)
    np.testing.assert_array_equal(np.stack([Q, K, V]), again)
    model = mf.DepthVaryingAttention(BETA, period=0.1, seed=SEED, dimension=D)
    # the piece of k·τ is k (right-continuous), whatever the round-off of k·τ / τ
    assert [model.piece_of(k * 0.1) for k in range(1, 200)] == list(range(1, 200))
    assert [model.piece_of(np.nextafter(k * 0.1, -1)) for k in range(1, 200)] == list(range(0, 199))


def test_resumed_run_equals_the_uninterrupted_one_bit_for_bit(tmp_path, monkeypatch):
    """Interrupted after the checkpoint of output 3 (t = 1.5) and after that of output 4 (t = 2.0, a switching
    time: the restart of the step-size control is recorded as pending), resumed to the end."""
    times = np.linspace(0.0, 4.0, 9)
    model = mf.DepthVaryingAttention(BETA, period=1.0, seed=SEED, dimension=D)
    x0 = _points()
    whole = mf.simulate(model, x0, times)
    original = meanfield.runs._driver.Checkpoint
    for method, options in (("dopri5", {}), ("rk4", {"dt": 0.2}), ("layers", {"dt": 0.25})):
        whole = mf.simulate(model, x0, times, method, **options)
        for n_outputs in (4, 5):
            checkpoint = tmp_path / f"{method}{n_outputs}.nc"

            class Interrupting(original):
                def write(self, n_reached, _stop=n_outputs):
                    written = super().write(n_reached)
                    if n_reached == _stop:
                        raise KeyError("interrupted")
                    return written

            monkeypatch.setattr(meanfield.runs._driver, "Checkpoint", Interrupting)
            with pytest.raises(KeyError):
                mf.simulate(model, x0, times, method, checkpoint=checkpoint, checkpoint_interval=0.0, **options)
            monkeypatch.setattr(meanfield.runs._driver, "Checkpoint", original)
            assert load_checkpoint(checkpoint).sizes["time"] == n_outputs
            resumed = mf.simulate(model, x0, times, method, checkpoint=checkpoint, resume=True, **options)
            assert resumed.attrs["resumed_at"] == times[n_outputs - 1]
            np.testing.assert_array_equal(resumed.positions.values, whole.positions.values)
            for name in ("n_steps", "n_rejected", "nfev"):
                assert resumed.attrs[name] == whole.attrs[name], (method, n_outputs, name)


def test_energy_is_refused_by_name():
    model = mf.DepthVaryingAttention(BETA, period=1.0, seed=SEED, dimension=D)
    with pytest.raises(ValueError, match="DepthVaryingAttention has no interaction energy"):
        mf.energy(model, _points())
    ds = mf.simulate(model, _points(), [0.0, 1.0])
    assert "energy" not in ds and not model.has_energy


def _bad_weights(t):
    Q = np.eye(D) if t < 1.0 else np.full((D, D), np.nan)
    return Q, np.eye(D), np.eye(D)


@pytest.mark.parametrize("kwargs, match", [
    ({"period": 0.0, "dimension": D}, "period must be a time tau > 0"),
    ({"period": -1.0, "dimension": D}, "period must be a time tau > 0"),
    ({"period": float("nan"), "dimension": D}, "period must be a time tau > 0"),
    ({"dimension": D}, "give period"),
    ({"period": 1.0}, "needs dimension"),
    ({"period": 1.0, "dimension": D, "seed": -1}, "seed must be a non-negative integer"),
    ({"weights": "gaussian", "period": 1.0}, "weights must be 'ginibre'"),
    ({"weights": lambda t: (np.eye(3), np.ones((3, 2)), None)}, r"weights\(0.0\) must return"),
    ({"weights": lambda t: (np.eye(3), np.eye(2), None)}, r"weights\(0.0\) must return"),
    ({"weights": lambda t: (np.full((3, 3), np.inf), None, None)}, r"weights\(0.0\) must return"),
    ({"weights": lambda t: np.eye(3)}, r"weights\(0.0\) must return"),
    ({"weights": lambda t: (None, None, None), "breakpoints": [1.0, 1.0]}, "breakpoints must be"),
    ({"weights": lambda t: (None, None, None), "breakpoints": [1.0], "period": 1.0}, "not both"),
])
def test_bad_input_names_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        mf.DepthVaryingAttention(BETA, **kwargs)


def test_bad_input_at_run_time(tmp_path):
    model = mf.DepthVaryingAttention(BETA, weights=_bad_weights, period=1.0)  # finite at t = 0, NaN from t = 1
    with pytest.raises(ValueError, match=r"weights\(1.0\) must return .*Q must be finite"):
        mf.simulate(model, _points(), [0.0, 2.0])
    drawn = mf.DepthVaryingAttention(BETA, period=0.5, seed=SEED, dimension=D)
    checkpoint = tmp_path / "run.nc"
    with pytest.raises(ValueError, match=r"dt = 0\.3 must divide the pieces .*period = 0\.5"):
        mf.simulate(drawn, _points(), [0.0, 0.9, 1.8], "layers", dt=0.3, checkpoint=checkpoint)
    assert not checkpoint.exists()
    with pytest.raises(ValueError, match="particles have dimension d = 4 but the weights are 3 x 3"):
        mf.simulate(drawn, _points(d=4), [0.0, 1.0])
    with pytest.raises(ValueError, match="numbered k = 0, 1, ... from t = 0"):
        mf.simulate(drawn, _points(), [-1.0, 1.0])

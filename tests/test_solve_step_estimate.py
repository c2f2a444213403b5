"""Finite-volume runs estimate their step count up front: warn above a threshold, refuse beyond the budget."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import meanfield as mf
from meanfield.pde import _step_estimate


def _rho():
    return mf.von_mises(mf.Circle(64), 0.0, 1.0)


def test_large_noise_warns_before_the_work_with_the_step_count():
    # σ = 1e6, t = 1e-3 on 64 cells took 415 012 steps silently; the warning now comes first
    # (turned into an error here, so the test does not run the 4e5 steps)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(RuntimeWarning, match=r"about 4\.15e\+05 steps .*method='spectral'"):
            mf.solve(mf.SelfAttention(1.0, noise=1e6), _rho(), [0.0, 1e-3], method="finite_volume")


def test_estimate_equals_the_steps_taken_when_diffusion_limits_the_step(monkeypatch):
    monkeypatch.setattr(_step_estimate, "STEP_COUNT_WARNING", 1000)
    with pytest.warns(RuntimeWarning, match=r"about 4\.15e\+03 steps") as record:
        ds = mf.solve(mf.SelfAttention(1.0, noise=1e4), _rho(), [0.0, 1e-3], method="finite_volume")
    estimate = float(str(record[0].message).split("about ")[1].split(" steps")[0])
    # the step stays at h²/(2σ)·cfl throughout (measured: 4151 steps, estimate 4151)
    assert abs(ds.attrs["n_steps"] - estimate) <= 0.01 * estimate


def test_beyond_the_step_budget_is_refused_naming_the_remedy():
    with pytest.raises(ValueError, match=r"about 4\.15e\+08 steps .*diffusive limit.*method='spectral'.*refused"):
        mf.solve(mf.SelfAttention(1.0, noise=1e6), _rho(), [0.0, 1.0], method="finite_volume")


def test_moderate_runs_and_spectral_runs_are_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        mf.solve(mf.SelfAttention(1.0, noise=1.0), _rho(), [0.0, 0.1], method="finite_volume")
        mf.solve(mf.SelfAttention(1.0, noise=1e6), _rho(), np.linspace(0, 1e-3, 3), method="spectral")

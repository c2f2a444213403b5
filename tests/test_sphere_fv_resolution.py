"""Finite volume on S² estimates its resolution (spectral tail of the density) and flags unconverged runs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import meanfield as mf
from meanfield.measures._perturbed_uniform import perturbed_uniform
from meanfield.pde._resolution import FINITE_VOLUME_TAIL_TOL, sphere_tail


def _solve(lmax, noise, t_final):
    model = mf.SelfAttention(2.0, normalized=False, noise=noise)
    return mf.solve(model, perturbed_uniform(mf.Sphere(lmax)), np.linspace(0.0, t_final, 8), method="finite_volume")


def test_concentrating_usa_run_is_flagged_as_under_resolved():
    # USA β = 2, σ = 0.01 on lmax 31: the cluster forming by t = 7 is narrower than the cells
    # (τ measured 0.369 at t = 6, > 1 at t = 7; it reported success = 1 and nothing else). τ of
    # an unresolved cluster depends on the diffusive flux: 0.349 with a centred diffusive flux,
    # 0.369 with the diffusion as the velocity -σ∇log ρ.
    with pytest.warns(RuntimeWarning, match=r"lmax=31 is under-resolved from t=6: .* is 0\.369"):
        ds = _solve(31, 0.01, 7.0)
    assert ds.attrs["resolved"] == 0 and ds.attrs["resolution_tail"] > 1.0


@pytest.mark.parametrize(("noise", "t_final"), [(0.01, 5.0), (0.5, 2.0)])
def test_resolved_runs_are_not_flagged(noise, t_final):
    # measured τ: 1.6e-3 at t = 5 with σ = 0.01 (before the collapse), 2.2e-6 with σ = 0.5 up to t = 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        ds = _solve(31, noise, t_final)
    assert ds.attrs["resolved"] == 1 and ds.attrs["resolution_tail"] < FINITE_VOLUME_TAIL_TOL / 5


def test_tail_of_a_band_limited_density_is_zero_and_of_a_spike_is_order_one():
    s = mf.Sphere(15)
    smooth = mf.density(s, lambda th, ph: 1 + 0.5 * np.cos(th) * np.sin(th) * np.cos(ph)).values
    assert sphere_tail(s.grid, smooth[None]) < 1e-13
    spike = np.zeros(s.grid.shape)
    spike[0, 0] = 1.0
    assert sphere_tail(s.grid, spike[None]) > 1.0

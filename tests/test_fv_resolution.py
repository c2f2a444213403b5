"""Finite volume on S¹ (self-attention and Kuramoto) and on the zonal sphere estimates its resolution
(spectral tail of the density) and flags unconverged runs, like on S²."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest
import scipy.stats

import meanfield as mf
from meanfield.pde import FINITE_VOLUME_TAIL_TOL


@contextlib.contextmanager
def resolution_warnings_fail():
    """A resolution warning raised inside fails the test (other warnings pass)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*under-resolved", category=RuntimeWarning)
        yield


def _circle_rho0(n):
    return mf.density(mf.Circle(n), lambda th: 1 + 0.3 * np.cos(th) + 0.2 * np.sin(2 * th))


def test_circle_tail_of_a_trigonometric_polynomial_is_zero_and_of_a_one_cell_spike_is_one():
    smooth = mf.density(mf.Circle(64), lambda th: 1 + 0.3 * np.cos(2 * th)).values
    assert mf.Circle(64).spectral_tail(smooth[None]) < 1e-14  # modes 0 and 2 only: the tail is rounding (measured 8.7e-17)
    spike = np.zeros((2, 64))
    spike[:, 5] = 1.0
    assert mf.Circle(64).spectral_tail(spike) == pytest.approx(1.0, rel=1e-12)  # |ρ̂_k| = |ρ̂_0| for every k


def test_zonal_tail_of_a_constant_is_zero_and_of_a_polar_cell_is_large():
    zonal = mf.ZonalSphere(10, 64, nodes="cells")
    assert zonal.spectral_tail(np.ones((1, 64))) < 1e-13  # ρ_l = 0 for l ≥ 1 (measured 1.1e-15)
    # the piecewise-constant vMF(κ = 1) is resolved (measured 1.3e-9)
    assert zonal.spectral_tail(mf.von_mises(zonal, kappa=1.0).values[None]) < 1e-6
    polar = np.zeros((1, 64))
    polar[0, 0] = 1.0
    assert zonal.spectral_tail(polar) > 1.0  # |ρ_l|/|ρ_0| ≈ q_l(1) ~ l^{(d-2)/2} (measured 8.5e4)


def test_concentrating_self_attention_on_a_coarse_circle_is_flagged():
    # SA β = 9 on 64 cells: the cluster is a few cells wide by t = 8 (τ measured 0.21 at t = 8,
    # 0.99 by t = 20), and the run reports success = 1
    message = (r"on S¹ with N=64 is under-resolved from t=8: the spectral tail max_\(k > 21\) \|rho_k\|/\|rho_0\| "
               r"of the density is 0\.21 > 0\.01.*use N=128")
    with pytest.warns(RuntimeWarning, match=message):
        ds = mf.solve(mf.SelfAttention(9.0), _circle_rho0(64), np.linspace(0.0, 20.0, 11), method="finite_volume")
    assert ds.attrs["success"] == 1
    assert ds.attrs["resolved"] == 0 and ds.attrs["resolution_tail"] > 0.9


def test_self_attention_before_the_collapse_is_not_flagged():
    # same run to t = 2: τ measured 3.0e-5 (the O(h²) reconstruction error of a smooth density)
    with resolution_warnings_fail():
        ds = mf.solve(mf.SelfAttention(9.0), _circle_rho0(64), np.linspace(0.0, 2.0, 5), method="finite_volume")
    assert ds.attrs["resolved"] == 1 and ds.attrs["resolution_tail"] < FINITE_VOLUME_TAIL_TOL / 100


def test_kuramoto_takes_the_largest_tail_over_frequency_nodes():
    # noiseless K = 5 with frequencies N(0, 0.1²) on 32 cells: every ω-density collapses
    # (τ measured 0.42 at t = 1, 1.0 by t = 4)
    rho0 = mf.density(mf.Circle(32), lambda th: 1 + 0.5 * np.cos(th))
    model = mf.Kuramoto(5.0, scipy.stats.norm(0, 0.1))
    with pytest.warns(RuntimeWarning, match=r"N=32 is under-resolved from t=1: .* of the density \(largest over its "
                                            r"8 frequency nodes\) is 0\.42"):
        ds = mf.solve(model, rho0, np.linspace(0.0, 4.0, 5), method="finite_volume", frequency_nodes=8)
    assert ds.attrs["resolved"] == 0 and ds.attrs["resolution_tail"] > 0.99
    # the tail is the largest over the per-frequency densities of the output
    assert ds.attrs["resolution_tail"] == max(mf.Circle(32).spectral_tail(v) for v in ds.density_by_frequency.values)


def test_noisy_kuramoto_is_not_flagged():
    # K = 2, σ = 0.25, frequencies N(0, 0.5²) on 64 cells: smooth states, τ measured 2.9e-5
    rho0 = mf.density(mf.Circle(64), lambda th: 1 + 0.5 * np.cos(th))
    model = mf.Kuramoto(2.0, scipy.stats.norm(0, 0.5), noise=0.25)
    with resolution_warnings_fail():
        ds = mf.solve(model, rho0, np.linspace(0.0, 5.0, 6), method="finite_volume", frequency_nodes=8)
    assert ds.attrs["resolved"] == 1 and ds.attrs["resolution_tail"] < FINITE_VOLUME_TAIL_TOL / 100


def test_concentrating_zonal_run_is_flagged_and_a_smooth_one_is_not():
    # SA β = 9 from vMF(κ = 1) on S⁹ with 40 cells: the polar cluster outgrows the cells
    # (τ measured 0.0136 at t = 4, 76 at t = 6, with the face distance of the zonal scheme calibrated
    # on cos ϑ; 0.0177 and 92 with the centre distance h, which misses ∂_ϑ by up to 23 % at the pole)
    zonal = mf.ZonalSphere(10, 40, nodes="cells")
    with pytest.warns(RuntimeWarning, match=r"on the zonal S\^9 with n=40 cells is under-resolved from t=4: the "
                                            r"spectral tail max_\(l > 26\) .* is 0\.0136 > 0\.01.*n=80"):
        ds = mf.solve(mf.SelfAttention(9.0), mf.von_mises(zonal, kappa=1.0), np.linspace(0.0, 6.0, 4),
                      method="finite_volume")
    assert ds.attrs["resolved"] == 0 and ds.attrs["resolution_tail"] > 10.0
    # β = 1 to t = 2 on 64 cells stays smooth: τ measured 1.2e-5
    zonal = mf.ZonalSphere(10, 64, nodes="cells")
    with resolution_warnings_fail():
        ds = mf.solve(mf.SelfAttention(1.0), mf.von_mises(zonal, kappa=1.0), np.linspace(0.0, 2.0, 5),
                      method="finite_volume")
    assert ds.attrs["resolved"] == 1 and ds.attrs["resolution_tail"] < FINITE_VOLUME_TAIL_TOL / 100


@pytest.mark.parametrize("kind", ["circle", "zonal"])
def test_spectral_runs_carry_no_finite_volume_tail(kind):
    domain = mf.Circle(32) if kind == "circle" else mf.ZonalSphere(5, 16)
    ds = mf.solve(mf.SelfAttention(1.0), mf.uniform(domain), [0.0, 0.5], method="spectral")
    assert "resolution_tail" not in ds.attrs and "resolved" not in ds.attrs


def test_a_resumed_run_keeps_the_tail_it_had_and_does_not_warn_again(tmp_path):
    model, rho0, times = mf.SelfAttention(9.0), _circle_rho0(64), np.linspace(0.0, 20.0, 11)
    with pytest.warns(RuntimeWarning, match="under-resolved from t=8"):
        full = mf.solve(model, rho0, times, method="finite_volume")
    path = tmp_path / "run.nc"
    with pytest.warns(RuntimeWarning, match="under-resolved from t=8"):
        mf.solve(model, rho0, times[:6], method="finite_volume", checkpoint=path)
    with resolution_warnings_fail():
        resumed = mf.solve(model, rho0, times, method="finite_volume", checkpoint=path, resume=True)
    # the resume is bit-exact, so the largest tail over all outputs is the same number
    assert resumed.attrs["resolution_tail"] == full.attrs["resolution_tail"]
    assert resumed.attrs["resolved"] == 0

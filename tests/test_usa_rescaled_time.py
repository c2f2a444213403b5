"""USA in the rescaled time s = e^β t (``SelfAttention(beta, normalized=False, time="rescaled")``), for any β.

In s the USA velocity is P⊥_x ∫ e^{β(<x,y>-1)} y dμ(y), without the factor e^β that overflows beyond β = 709.78.
Checked: the rescaled run to s equals the plain run to t = s e^{-β} (particles and densities, with and without
noise); two tokens on the circle against the quadrature of their angle's ODE at β = 800 and 4000; every output
finite at β = 800 on S² and on the circle; checkpoint and resume bit for bit; the CLI flag; bad input by name.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from scipy.integrate import quad

import meanfield as mf
from conftest import CheckpointStop
from meanfield.cli import main

EPS = np.finfo(float).eps


def _rescaled(beta: float, **options) -> mf.SelfAttention:
    return mf.SelfAttention(beta, normalized=False, time="rescaled", **options)


def _sphere_points(n: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, 3))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _angle(positions: np.ndarray) -> np.ndarray:
    """φ = θ_2 - θ_1 in (-π, π] of two tokens' angles (time, 2)."""
    return np.remainder(positions[:, 1] - positions[:, 0] + np.pi, 2 * np.pi) - np.pi


def _s_of_angle(phi: float, phi0: float, beta: float) -> float:
    """s(φ) = ∫_φ^{φ0} dψ / (e^{β(cos ψ - 1)} sin ψ): the time the two tokens take from φ0 to φ."""
    return quad(lambda psi: np.exp(beta * (1 - np.cos(psi))) / np.sin(psi), phi, phi0, epsabs=0.0,
                epsrel=1e-13, limit=200)[0]


# ---------------------------------------------------------------------------- (1) s = e^β t at β = 5
@pytest.mark.parametrize("path", ["ensemble", "direct", "nufft"])
def test_rescaled_particles_at_s_equal_the_plain_ones_at_t_equal_s_exp_minus_beta(path):
    # the two runs take their steps to rtol = 1e-10 each, one in s, one in t = e^{-β}s; they agree to a few rtol
    # (measured 3.5e-11 in the angles, 2e-12 relative in the energies): 1e-9. Arrays, not DataArrays: the
    # time coordinates differ (s against t), and xarray would align them
    beta, theta, s = 5.0, np.linspace(0, 2.5, 7), np.array([0.0, 0.5, 1.0])
    options = {"rtol": 1e-10, "atol": 1e-10, "path": path}
    rescaled = mf.simulate(_rescaled(beta), theta, s, **options)
    plain = mf.simulate(mf.SelfAttention(beta, normalized=False), theta, s * np.exp(-beta), **options)
    assert rescaled.attrs["path"] == path
    np.testing.assert_allclose(rescaled.positions.values, plain.positions.values, rtol=0, atol=1e-9)
    # the recorded energy is that of the flow in s, e^{-β}E_β; log E_β as in t
    np.testing.assert_allclose(rescaled.energy.values, np.exp(-beta) * plain.energy.values, rtol=1e-9)
    np.testing.assert_allclose(rescaled.log_energy.values, plain.log_energy.values, rtol=1e-9)
    np.testing.assert_allclose(rescaled.log_time.values[1:], np.log(plain.time.values[1:]), rtol=4 * EPS)


@pytest.mark.parametrize("method", ["spectral", "finite_volume"])
def test_rescaled_density_at_s_equals_the_plain_one_at_t_equal_s_exp_minus_beta(method):
    # noise σ in s is σ e^β in t. The spectral runs are adaptive (rtol 1e-10; measured 2.8e-13 in the density);
    # finite volume takes CFL steps, the same ones up to the scale e^{-β} (measured 1.7e-16): 1e-11
    beta, sigma, s = 2.0, 0.05, np.array([0.0, 0.5, 1.0])
    rho0 = mf.von_mises(mf.Circle(128), 0.0, 1.0)
    options = {"rtol": 1e-10, "atol": 1e-12} if method == "spectral" else {}
    rescaled = mf.solve(_rescaled(beta, noise=sigma), rho0, s, method=method, **options)
    plain = mf.solve(mf.SelfAttention(beta, normalized=False, noise=sigma * np.exp(beta)), rho0, s * np.exp(-beta),
                     method=method, **options)
    np.testing.assert_allclose(rescaled.density.values, plain.density.values, rtol=0, atol=1e-11)
    np.testing.assert_allclose(rescaled.energy.values, np.exp(-beta) * plain.energy.values, rtol=1e-11)
    # F_s = -e^{-β}E_β + σ ∫ρ log ρ = e^{-β} F_t: the Lyapunov functional of the flow in s (measured 3e-16)
    np.testing.assert_allclose(rescaled.free_energy.values, np.exp(-beta) * plain.free_energy.values, rtol=1e-11)
    assert np.all(np.diff(rescaled.free_energy.values) <= 0)
    assert np.max(np.abs(rescaled.density.values[-1] - rho0.values)) > 0.01  # the density moved


def test_growth_rates_per_unit_s_are_the_rates_per_unit_t_times_exp_minus_beta():
    degrees = np.arange(1, 8)
    for d in (2, 3, 5):
        plain = mf.SelfAttention(5.0, normalized=False).growth_rate(degrees, d)
        np.testing.assert_allclose(_rescaled(5.0).growth_rate(degrees, d), np.exp(-5.0) * plain, rtol=4 * EPS)
    assert mf.most_unstable_mode(_rescaled(800.0)).degree == mf.most_unstable_mode(mf.SelfAttention(800.0)).degree


# ---------------------------------------------------------------------------- (2) two tokens, β = 800 and 4000
def test_two_tokens_move_by_the_angle_equation():
    # θ̇_1 = (1/2) e^{β(cos φ - 1)} sin φ, θ̇_2 = -θ̇_1 (the self-terms vanish), so dφ/ds = -e^{β(cos φ - 1)} sin φ
    for beta in (800.0, 4000.0):
        phi = np.arccos(1 - 3 / beta)
        rates = _rescaled(beta).velocity(np.array([0.0, phi]))
        exact = -np.exp(beta * (np.cos(phi) - 1)) * np.sin(phi)
        assert rates[1] - rates[0] == pytest.approx(exact, rel=16 * beta * EPS)  # β(cos φ - 1) to ~4 β eps


@pytest.mark.parametrize("beta", [800.0, 4000.0])
@pytest.mark.parametrize("path", ["ensemble", "direct"])
def test_two_tokens_on_the_circle_against_the_quadrature_of_their_angle(beta, path):
    # φ0 with β(1 - cos φ0) = 4, to φ0/100. The integrator's error δφ (rtol 1e-13) enters s as δφ/|dφ/ds|, largest
    # where the tokens are slowest (|dφ/ds| = e^{-4} sin φ0 at the start): measured ≤ 7e-11 relative; 1e-9 required
    phi0 = np.arccos(1 - 4 / beta)
    s_end = _s_of_angle(phi0 / 100, phi0, beta)
    s = np.linspace(0.0, s_end, 6)
    ds = mf.simulate(_rescaled(beta), np.array([0.0, phi0]), s, rtol=1e-13, atol=1e-15, path=path)
    assert ds.attrs["success"] == 1 and ds.attrs["path"] == path
    phi = _angle(ds.positions.values)
    reached = np.array([_s_of_angle(p, phi0, beta) for p in phi[1:]])
    np.testing.assert_allclose(reached, s[1:], rtol=1e-9)
    assert phi[-1] == pytest.approx(phi0 / 100, rel=1e-8)


# ---------------------------------------------------------------------------- (3) finite at β = 800
def test_simulate_on_the_sphere_at_beta_800_is_finite_and_says_its_time():
    beta = 800.0
    ds = mf.simulate(_rescaled(beta), _sphere_points(16, 3), [0.0, 1.0, 10.0, 100.0])
    assert ds.attrs["success"] == 1, ds.attrs["message"]
    assert ds.attrs["time"] == "rescaled" and "s = exp(beta) t" in ds.attrs["time_description"]
    assert ds.time.attrs["long_name"] == "rescaled time s = exp(beta) t"
    for name, variable in ds.data_vars.items():
        assert np.all(np.isfinite(variable.values)), name
    assert ds.log_time.values[0] == -np.inf and np.all(np.isfinite(ds.log_time.values[1:]))
    np.testing.assert_array_equal(ds.log_time.values[1:], np.log(ds.time.values[1:]) - beta)
    np.testing.assert_array_equal(ds.energy.values, ds.normalized_energy.values)  # the energy of the flow in s is e^{-β}E_β
    assert ds.energy.attrs["long_name"].startswith("normalised interaction energy e^(-beta) E_beta")


def test_one_cluster_at_beta_800_has_the_exact_log_energy():
    # 16 tokens at one point: E_β = e^β/(2β), so log E_β = β - log 2β and e^{-β}E_β = 1/(2β): a few ulps
    beta = 800.0
    ds = mf.simulate(_rescaled(beta), np.tile([0.0, 0.6, 0.8], (16, 1)), [0.0, 1.0])
    assert ds.attrs["success"] == 1
    np.testing.assert_allclose(ds.log_energy.values, beta - np.log(2 * beta), rtol=4 * EPS)
    np.testing.assert_allclose(ds.energy.values, 1 / (2 * beta), rtol=4 * EPS)
    # mf.energy is a function of the state whatever the time: E_β itself overflows, its forms do not
    model = _rescaled(beta)
    assert mf.energy(model, ds.positions.values[-1], scale="log") == pytest.approx(beta - np.log(2 * beta),
                                                                                   rel=4 * EPS)
    assert mf.energy(model, ds.positions.values[-1]) == np.inf


def test_solve_on_the_circle_at_beta_800_is_finite_and_compares_with_particles():
    # the kernel e^{β(cos u - 1)} has width β^{-1/2} ≈ 0.035: 256 nodes resolve its multipliers and the density
    # from κ = 1 over s ≤ 100
    beta, s = 800.0, np.array([0.0, 1.0, 10.0, 100.0])
    model = _rescaled(beta)
    rho0 = mf.von_mises(mf.Circle(256), 0.0, 1.0)
    pde = mf.solve(model, rho0, s, method="spectral")
    assert pde.attrs["success"] == 1, pde.attrs["message"]
    for name, variable in pde.data_vars.items():
        assert np.all(np.isfinite(variable.values)), name
    assert pde.attrs["time"] == "rescaled" and "log_time" in pde.coords
    particles = mf.simulate(model, mf.sample(rho0, 256, seed=1), s)
    gaps = mf.compare(pde, particles)
    assert np.all(np.isfinite(gaps.wasserstein)) and np.all(np.isfinite(gaps.energy_gap))
    np.testing.assert_array_equal(gaps.log_time.values, pde.log_time.values)
    assert gaps.time.attrs["long_name"] == "rescaled time s = exp(beta) t"
    # the rescaled time and t are different variables: refused by name
    plain = mf.simulate(mf.SelfAttention(2.0, normalized=False), mf.sample(rho0, 16, seed=1), s)
    other = mf.solve(_rescaled(2.0), rho0, s, method="spectral")
    with pytest.raises(ValueError, match=r"same time variable, got pde in time='rescaled' and particles in time='t'"):
        mf.compare(other, plain)


def test_solve_says_when_its_grid_no_longer_resolves_beta_800():
    # from κ = 50 the density sharpens beyond 256 nodes: the run stops with the grid's under-resolution message
    pde = mf.solve(_rescaled(800.0), mf.von_mises(mf.Circle(256), 0.0, 50.0), [0.0, 1.0, 10.0], method="spectral")
    assert pde.attrs["success"] == 0 and "under-resolved on N=256 nodes" in pde.attrs["message"]
    assert np.all(np.isfinite(pde.log_energy))


# ---------------------------------------------------------------------------- (4) checkpoint and resume
@pytest.mark.parametrize("path", ["ensemble", "direct"])
def test_resumed_simulate_equals_the_uninterrupted_run_bit_for_bit(tmp_path, stop_after_checkpoint_writes, path):
    model, x0, s = _rescaled(800.0), _sphere_points(12, 5), np.linspace(0.0, 20.0, 6)
    x0[1:4] = x0[0] + 0.02 * _sphere_points(3, 6)  # a cluster that moves at β = 800
    x0[1:4] /= np.linalg.norm(x0[1:4], axis=1, keepdims=True)
    whole = mf.simulate(model, x0, s, path=path)
    checkpoint = tmp_path / "run.nc"
    stop_after_checkpoint_writes(3)
    with pytest.raises(CheckpointStop):
        mf.simulate(model, x0, s, path=path, checkpoint=checkpoint, checkpoint_interval=0.0)
    stop_after_checkpoint_writes.disarm()
    resumed = mf.simulate(model, x0, s, path=path, checkpoint=checkpoint, resume=True)
    assert resumed.attrs["resumed_at"] == s[2] and resumed.attrs["time"] == "rescaled"
    for name in ("positions", "energy", "log_energy", "log_time"):
        np.testing.assert_array_equal(resumed[name].values, whole[name].values, err_msg=name)
    for name in ("n_steps", "n_rejected", "nfev"):
        assert resumed.attrs[name] == whole.attrs[name], name
    assert np.ptp(whole.positions.values[:, 1, 0]) > 1e-4  # the run moved


def test_a_checkpoint_in_s_is_not_resumed_in_t(tmp_path):
    checkpoint, theta = tmp_path / "run.nc", np.linspace(0, 1, 5)
    mf.simulate(_rescaled(5.0), theta, [0.0, 1.0], checkpoint=checkpoint)
    with pytest.raises(mf.CheckpointError, match="made with time=rescaled, but this run has time=<absent>"):
        mf.simulate(mf.SelfAttention(5.0, normalized=False), theta, [0.0, 1.0, 2.0], checkpoint=checkpoint,
                    resume=True)


def test_resumed_solve_equals_the_uninterrupted_run_bit_for_bit(tmp_path):
    model, s = _rescaled(800.0), np.linspace(0.0, 50.0, 6)
    rho0 = mf.von_mises(mf.Circle(256), 0.0, 1.0)
    whole = mf.solve(model, rho0, s, method="spectral")
    checkpoint = tmp_path / "run.nc"
    mf.solve(model, rho0, s[:3], method="spectral", checkpoint=checkpoint)
    resumed = mf.solve(model, rho0, s, method="spectral", checkpoint=checkpoint, resume=True)
    for name in ("density", "energy", "log_energy", "log_time", "steps"):
        np.testing.assert_array_equal(resumed[name].values, whole[name].values, err_msg=name)
    assert resumed.attrs["n_steps"] == whole.attrs["n_steps"] > 0


# ---------------------------------------------------------------------------- (5) the CLI
def test_cli_rescaled_time_flag_runs_beyond_e709(tmp_path, monkeypatch, capsys, no_figure_files):
    monkeypatch.chdir(tmp_path)
    argv = ["solve", "--beta", "800", "--unnormalized", "--rescaled-time", "--noise", "0", "--grid", "256",
            "--t-final", "10", "--n-times", "3", "--method", "spectral", "--no-progress"]
    assert main(argv) == 0
    out = tmp_path / "meanfield_solve_USA_beta800_rescaled_time_circle_spectral.nc"
    assert "USA β=800.0 σ=0.0 in s = e^β t" in capsys.readouterr().out
    with xr.open_dataset(out) as ds:
        assert ds.attrs["time"] == "rescaled" and ds.attrs["success"] == 1
        np.testing.assert_array_equal(ds.time.values, [0.0, 5.0, 10.0])
        np.testing.assert_allclose(ds.log_time.values[1:], np.log([5.0, 10.0]) - 800.0, rtol=4 * EPS)
        assert np.all(np.isfinite(ds.energy)) and np.all(np.isfinite(ds.log_energy))
    with pytest.raises(SystemExit) as stop:
        main(["solve", "--rescaled-time", "--no-progress"])  # SA has no factor e^β to rescale
    assert stop.value.code == 2 and "time='rescaled' applies to the unnormalized model" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["solve", "--kernel", "-exp(2*t)/2", "--rescaled-time", "--no-progress"])
    assert "--rescaled-time describes self-attention" in capsys.readouterr().err


# ---------------------------------------------------------------------------- (6) bad input, by name
def test_bad_time_and_the_plain_model_beyond_e709_are_refused_by_name():
    with pytest.raises(ValueError, match=r"^time must be one of \['t', 'rescaled'\] .* got 's'"):
        mf.SelfAttention(1.0, normalized=False, time="s")
    with pytest.raises(ValueError, match=r"^time must be one of .* got 1"):
        mf.SelfAttention(1.0, normalized=False, time=1)
    with pytest.raises(ValueError, match=r"^time='rescaled' applies to the unnormalized model"):
        mf.SelfAttention(1.0, time="rescaled")
    theta = np.linspace(0, 1, 4)
    plain = mf.SelfAttention(800.0, normalized=False)
    message = r"beta = 800 is too large for the unnormalized model \(USA\).* in the time t; use time='rescaled'"
    with pytest.raises(ValueError, match=message):
        mf.simulate(plain, theta, [0, 1])
    with pytest.raises(ValueError, match=message):
        mf.solve(plain, mf.uniform(mf.Circle(64)), [0, 1])
    with pytest.raises(ValueError, match=r"^betas: the phase diagram of USA \(normalized=False\) runs in the time t"):
        mf.phase_diagram(2, 4, [1.0, 800.0], [0.0, 1.0], 4, normalized=False, progress=False)
    with pytest.raises(ValueError, match=r"^the reduced cluster dynamics: model.time = 'rescaled' is not taken here"):
        mf.cluster_dynamics(_rescaled(800.0), [0.0, 1.0])
    with pytest.raises(ValueError, match=r"^stationary states: model.time = 'rescaled' is not taken here"):
        mf.critical_noise(_rescaled(2.0))

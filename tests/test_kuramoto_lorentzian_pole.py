"""The Kuramoto PDE with a Lorentzian law and one-harmonic coupling, advanced at the law's pole.

For g(ω) = (γ/π)/((ω - c)² + γ²) and h(u) = ĥ_0 + ĥ_1 e^{iu} + conj(ĥ_1) e^{-iu}, the θ-marginal
ρ̄ = ∫ ρ_ω g dω has the Fourier coefficients of ρ_ω at ω = c - iγ (residue theorem), so ``solve``
advances one density with the complex drift c - iγ (:meth:`meanfield.Kuramoto.velocity_spec`).
Checked against three exact facts:

* on the Ott–Antonsen manifold (a wrapped Cauchy density) the order parameter solves
  ż = (ic' - γ) z + (K/2)(e^{-iα} z - e^{iα} z̄ z²), c' = c + Kĥ_0, and ρ̄ stays the wrapped Cauchy
  density of z (Ott & Antonsen, Chaos 18 (2008) 037113);
* without coupling the marginal is the Cauchy average of rotations: ρ̂_k(t) = ρ̂_k(0) e^{-ikct - kγt - σk²t};
* with noise the stationary r solves Sakaguchi's self-consistency (:func:`meanfield.kuramoto_theory`,
  continued fractions over Gauss nodes in ω: independent of the pole);
* without noise it is √(1 - 2γ/K) from any initial density (Ott & Antonsen, Chaos 19 (2009) 023117).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from scipy.integrate import solve_ivp

import meanfield as mf
from solvers import CircleFiniteVolume, CircleGrid, CircleSpectral, ConvolutionVelocity


def sakaguchi(alpha: float) -> np.ndarray:
    """ĥ_0, ĥ_1 of h(u) = sin(u - α)."""
    return np.array([0.0, np.exp(-1j * alpha) / 2j])


def order_parameter(ds) -> np.ndarray:
    theta = ds["theta"].values
    return (ds["density"].values * np.exp(1j * theta)).sum(axis=-1) * (2 * np.pi / theta.size)


def test_the_lorentzian_example_reaches_the_locked_state_by_the_pole():
    # the default solve of a noise-free Lorentzian Kuramoto model: the marginal at the pole, spectral
    model = mf.Kuramoto(3, frequencies=scipy.stats.cauchy(0, 0.5))
    ds = mf.solve(model, mf.von_mises(mf.Circle(256), 0, 1), np.linspace(0, 40, 5))
    assert ds.attrs["success"] == 1 and float(ds["time"][-1]) == 40.0
    assert ds.attrs["method"] == "spectral" and ds.attrs["method_requested"] == "auto"
    assert ds.attrs["frequency_quadrature"] == "cauchy_pole" and "pole" in ds.attrs["method_reason"]
    assert "frequency_nodes" not in ds.attrs and "density_by_frequency" not in ds
    # r(t) → √(1 - 2γ/K) at the rate 2(K/2 - γ) = 2: by t = 40 to round-off (measured 4e-13)
    assert abs(float(ds["order_parameter"][-1]) - np.sqrt(1 - 2 * 0.5 / 3)) < 1e-9


@pytest.mark.parametrize("centre, alpha, shift", [(0.0, 0.0, 0.0), (0.7, 0.4, 0.3)])
def test_on_the_ott_antonsen_manifold_the_order_parameter_solves_their_equation(centre, alpha, shift):
    coupling, gamma, r0, phase0 = 3.0, 0.5, 0.3, 1.1
    interaction = sakaguchi(alpha) + np.array([shift, 0.0])  # ĥ_0 = shift: a constant drift K·shift
    model = mf.Kuramoto(coupling, frequencies=scipy.stats.cauchy(centre, gamma), interaction=interaction)
    circle = mf.Circle(256)
    t = np.linspace(0.0, 12.0, 7)
    ds = mf.solve(model, mf.wrapped_cauchy(circle, phase0, r0), t, rtol=1e-11, atol=1e-14)
    assert ds.attrs["success"] == 1 and ds.attrs["frequency_quadrature"] == "cauchy_pole"

    drift = centre + coupling * shift

    def oa(_, u):
        z = u[0] + 1j * u[1]
        dz = (1j * drift - gamma) * z + coupling / 2 * (np.exp(-1j * alpha) * z - np.exp(1j * alpha) * np.conj(z) * z * z)
        return [dz.real, dz.imag]

    z0 = r0 * np.exp(1j * phase0)
    ref = solve_ivp(oa, (t[0], t[-1]), [z0.real, z0.imag], t_eval=t, rtol=1e-13, atol=1e-15, method="DOP853")
    z = ref.y[0] + 1j * ref.y[1]
    # spectral in θ, exact in ω: the error is the time integration's (rtol 1e-11; measured 2e-13)
    np.testing.assert_allclose(order_parameter(ds), z, rtol=0, atol=1e-9)
    r, psi = np.abs(z[-1]), np.angle(z[-1])
    poisson = mf.wrapped_cauchy(circle, psi, r).values
    np.testing.assert_allclose(ds["density"].values[-1], poisson, rtol=0, atol=1e-9 * poisson.max())


def test_without_coupling_the_marginal_is_the_cauchy_average_of_rotations():
    centre, gamma, noise = 0.8, 0.3, 0.05
    model = mf.Kuramoto(0.0, frequencies=scipy.stats.cauchy(centre, gamma), noise=noise)
    rho0 = mf.von_mises(mf.Circle(64), 0.4, 2.0)
    t = np.array([0.0, 0.5, 2.0])
    ds = mf.solve(model, rho0, t, rtol=1e-12, atol=1e-15)
    k = np.arange(33)
    start = np.fft.rfft(rho0.values)
    for j, tj in enumerate(t):
        exact = np.fft.irfft(start * np.exp(-1j * k * centre * tj - k * gamma * tj - noise * k**2 * tj), 64)
        np.testing.assert_allclose(ds["density"].values[j], exact, rtol=0, atol=1e-12)


@pytest.mark.parametrize("coupling, gamma, noise", [(4.0, 0.6, 0.1), (3.0, 0.5, 0.25)])
def test_with_noise_the_stationary_order_parameter_is_sakaguchis(coupling, gamma, noise):
    model = mf.Kuramoto(coupling, frequencies=scipy.stats.cauchy(0.3, gamma), noise=noise)
    ds = mf.solve(model, mf.von_mises(mf.Circle(128), 0, 1), [0.0, 50.0, 60.0], rtol=1e-10, atol=1e-13)
    assert ds.attrs["success"] == 1
    assert ds.attrs["method"] == "spectral" and ds.attrs["frequency_quadrature"] == "cauchy_pole"
    theory = float(mf.kuramoto_theory(coupling, scipy.stats.cauchy(0, gamma), noise))
    r = ds["order_parameter"].values
    # stationary by t = 50 (rate ≥ 2(K/2 - γ - σ)); measured |r - theory| ≤ 1.4e-12
    assert abs(r[-1] - r[-2]) < 1e-10
    assert r[-1] == pytest.approx(theory, abs=1e-9)


def test_the_pole_is_taken_only_where_it_is_exact():
    circle = mf.Circle(64)
    rho0 = mf.von_mises(circle, 0, 1)
    t = [0.0, 0.1]
    lorentzian = scipy.stats.cauchy(0, 0.5)
    # finite volume takes real drifts: the law is discretised by its 32 midpoint quantiles
    fv = mf.solve(mf.Kuramoto(3, lorentzian), rho0, t, method="finite_volume")
    assert (fv.attrs["frequency_quadrature"], fv.attrs["frequency_nodes"]) == ("midpoint_quantiles", 32)
    assert fv.sizes["frequency"] == 32
    # nodes asked for are nodes
    nodes = mf.solve(mf.Kuramoto(3, lorentzian, noise=0.5), rho0, t, frequency_nodes=8)
    assert (nodes.attrs["method"], nodes.attrs["frequency_quadrature"], nodes.sizes["frequency"]) == (
        "spectral", "midpoint_quantiles", 8)
    # two harmonics: no pole form; without noise auto takes finite volume on quantile nodes
    two = mf.solve(mf.Kuramoto(3, lorentzian, interaction=[0, -0.5j, -0.25j]), rho0, t)
    assert (two.attrs["method"], two.attrs["frequency_quadrature"]) == ("finite_volume", "midpoint_quantiles")
    gauss = mf.solve(mf.Kuramoto(3, scipy.stats.norm(0, 0.5)), rho0, t)
    assert (gauss.attrs["method"], gauss.attrs["frequency_quadrature"]) == ("finite_volume", "gauss_hermite")
    identical = mf.solve(mf.Kuramoto(3), rho0, t)
    assert identical.attrs["method"] == "finite_volume" and "frequency_quadrature" not in identical.attrs


def test_the_pole_form_continues_from_a_checkpoint_bit_for_bit(tmp_path):
    model = mf.Kuramoto(3, frequencies=scipy.stats.cauchy(0, 0.5))
    rho0 = mf.von_mises(mf.Circle(256), 0, 1)  # N/3 modes hold r∞^k, r∞ = 0.8165, above 1e-6 on N = 128
    straight = mf.solve(model, rho0, [0.0, 1.0, 2.0])
    assert straight.attrs["success"] == 1
    path = tmp_path / "run.nc"
    mf.solve(model, rho0, [0.0, 1.0], checkpoint=path)
    resumed = mf.solve(model, rho0, [0.0, 1.0, 2.0], checkpoint=path, resume=True)
    np.testing.assert_array_equal(resumed["density"].values, straight["density"].values)
    for name in ("n_steps", "n_rejected", "nfev", "dt_min", "dt_max", "success"):
        assert resumed.attrs[name] == straight.attrs[name], name
    assert resumed["steps"].values.sum() == straight.attrs["n_steps"] > 0
    # a run on frequency nodes is another run
    with pytest.raises(mf.io.CheckpointError, match="was made with frequency_quadrature="):
        mf.solve(model, rho0, [0.0, 1.0, 2.0], method="spectral", frequency_nodes=8, checkpoint=path, resume=True)


def test_solvers_take_a_cauchy_drift_only_where_it_is_exact():
    grid = CircleGrid(32)
    one = ConvolutionVelocity(numerator=lambda k: np.where(k == 1, 3j * np.pi, 0), drift=[0.2 - 0.5j])
    assert one.cauchy_drift and CircleSpectral.takes_cauchy_drift and not CircleFiniteVolume.takes_cauchy_drift
    assert not ConvolutionVelocity(numerator=one.numerator, drift=[0.2 + 0j]).cauchy_drift
    with pytest.raises(ValueError, match=r"a complex drift c - iγ must have γ >= 0"):
        ConvolutionVelocity(numerator=one.numerator, drift=[0.2 + 0.5j])
    with pytest.raises(ValueError, match="velocity.drift must be real"):
        CircleFiniteVolume(grid, one)
    two = ConvolutionVelocity(numerator=lambda k: np.where(k <= 2, 1j * k, 0), drift=[0.2 - 0.5j])
    with pytest.raises(ValueError, match=r"one harmonic \(a_k = 0 for k >= 2\) and no denominator; got a_k != 0 at k = 2"):
        CircleSpectral(grid, two)
    ratio = ConvolutionVelocity(numerator=one.numerator, denominator=lambda k: np.where(k == 0, 1.0, 0),
                                drift=[0.2 - 0.5j])
    with pytest.raises(ValueError, match="got a denominator"):
        CircleSpectral(grid, ratio)


@pytest.mark.slow
def test_midpoint_quantile_nodes_converge_to_the_pole_form():
    # the nodes' error is dominated by the Cauchy tail, whose rotations e^{-ikωt} the midpoint rule in
    # u = F(ω) samples ever faster towards u = 0, 1: about first order, irregular (measured max-norm errors
    # of the density 1.2e-2, 7.7e-3, 4.1e-3, 3.1e-3, 3.7e-4 for 16 … 256 nodes)
    model = mf.Kuramoto(3.0, frequencies=scipy.stats.cauchy(0.2, 0.5), noise=0.25)
    rho0 = mf.von_mises(mf.Circle(128), 0, 1)
    t = [0.0, 1.0, 2.0, 3.0]
    pole = mf.solve(model, rho0, t, rtol=1e-11, atol=1e-14)["density"].values
    errors = [np.abs(mf.solve(model, rho0, t, method="spectral", frequency_nodes=m, rtol=1e-11,
                              atol=1e-14)["density"].values - pole).max() for m in (16, 64, 256)]
    assert errors[0] > errors[1] > errors[2] and errors[0] / errors[2] > 16 and errors[2] < 1e-3


@pytest.mark.slow
def test_particles_land_on_the_pole_solution():
    # n oscillators at the law's midpoint quantiles, angles from the same von Mises law: r(t) within the
    # finite-n fluctuation 3 n^{-1/2}
    n = 20000
    model = mf.Kuramoto(3.0, frequencies=scipy.stats.cauchy(0, 0.5))
    rho0 = mf.von_mises(mf.Circle(256), 0, 1)
    t = np.linspace(0, 20, 11)
    pde = mf.solve(model, rho0, t)
    particles = mf.simulate(model, mf.sample(rho0, n, seed=3), t, rtol=1e-6, atol=1e-9)
    gaps = mf.compare(pde, particles)["order_parameter_gap"].values
    assert np.max(np.abs(gaps)) < 3 / np.sqrt(n)

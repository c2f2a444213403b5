"""The Ott–Antonsen engine (:func:`meanfield.ott_antonsen`) against exact facts and the other engines.

* Sakaguchi–Kuramoto with a Lorentzian law: r∞ = √(1 - 2γ/(K cos α)) and Ω = c - (K/2) sin α (1 + r²)
  (exact on the manifold; the integrator's tolerance 1e-10 bounds the error);
* the PDE at the law's poles (mf.solve, spectral, exact in ω for any start) from a wrapped Cauchy start: the same
  order parameter and marginal density (both integrators' tolerances);
* a discrete law: the PDE on its atoms (exact in ω), and a probe frequency at an atom has that atom's amplitude;
* particles from the manifold (phases iid wrapped Cauchy, frequencies at the quantiles): r(t) within
  3 n^{-1/2} of the engine (finite-n fluctuations);
* the energy K|Z|²/2 equals mf.energy of the returned density.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

import meanfield as mf
from meanfield.reduced import ManifoldError


def wrapped_cauchy_phases(n: int, r0: float, seed: int) -> np.ndarray:
    """n iid phases of the wrapped Cauchy law of first moment r0 (a Cauchy(0, -ln r0) variable mod 2π)."""
    u = np.random.default_rng(seed).random(n)
    return np.mod(-np.log(r0) * np.tan(np.pi * (u - 0.5)), 2 * np.pi)


@pytest.mark.parametrize("coupling, alpha, centre", [(3.0, 0.5, 0.0), (2.0, -0.3, 0.4), (4.0, 1.0, -0.2)])
def test_sakaguchi_locked_state_and_frequency(coupling, alpha, centre):
    gamma = 0.5
    model = mf.Kuramoto.sakaguchi(coupling, alpha, scipy.stats.cauchy(centre, gamma))
    ds = mf.ott_antonsen(model, np.linspace(0, 80, 161))
    assert ds.attrs["success"] == 1 and ds.attrs["engine"] == "ott-antonsen"
    r = np.sqrt(1 - 2 * gamma / (coupling * np.cos(alpha)))
    omega = centre - 0.5 * coupling * np.sin(alpha) * (1 + r * r)
    assert abs(float(ds.order_parameter[-1]) - r) < 1e-8
    phase = ds.order_parameter_phase.values
    assert abs((phase[-1] - phase[-41]) / 20.0 - omega) < 1e-8
    assert float(mf.kuramoto_theory(coupling, scipy.stats.cauchy(centre, gamma), phase_lag=alpha)) == \
        pytest.approx(r, abs=1e-15)
    assert float(mf.kuramoto_locked_frequency(coupling, scipy.stats.cauchy(centre, gamma), alpha)) == \
        pytest.approx(omega, abs=1e-14)


@pytest.mark.parametrize("law", [scipy.stats.cauchy(0.2, 0.5), mf.bimodal_lorentzian(1.2, 0.6),
                                 mf.LorentzianMixture([-0.5, 1.0], [0.3, 0.6], [2, 1])])
def test_the_pde_at_the_poles_follows_the_engine_from_the_manifold(law):
    model = mf.Kuramoto(3.0, law, phase_lag=0.3)
    circle = mf.Circle(512)  # the narrowest pole (γ = 0.3) sharpens the marginal: N = 256 is under-resolved
    start = mf.wrapped_cauchy(circle, 0.4, 0.3)
    t = np.linspace(0, 10, 11)
    pde = mf.solve(model, start, t, rtol=1e-11, atol=1e-13)
    reduced = mf.ott_antonsen(model, t, start)
    assert pde.attrs["frequency_quadrature"] == "cauchy_pole" and pde.attrs["success"] == 1
    assert reduced.sizes["pole"] == law_size(law) and "density" in reduced
    # both exact in ω; the difference is the two integrators' tolerances (measured ≤ 3e-10 and 3e-9)
    assert np.max(np.abs(pde.order_parameter.values - reduced.order_parameter.values)) < 1e-8
    assert np.max(np.abs(pde.density.values - reduced.density.values)) < 1e-7


def law_size(law) -> int:
    return 1 if hasattr(law, "dist") else law.centres.size


def test_a_discrete_law_on_its_atoms_and_a_probe_at_an_atom():
    law = mf.DiscreteLaw([-0.8, 0.5], [1, 2])
    model = mf.Kuramoto(1.0, law)
    circle = mf.Circle(512)  # each atom's density sharpens towards a Dirac: a short run on a fine grid
    start = mf.wrapped_cauchy(circle, 0.0, 0.4)
    t = np.linspace(0, 1, 5)
    pde = mf.solve(model, start, t, method="spectral", rtol=1e-11, atol=1e-13)
    assert pde.attrs["frequency_quadrature"] == "discrete_atoms"
    reduced = mf.ott_antonsen(model, t, start, frequencies=[0.5])
    assert np.max(np.abs(pde.order_parameter.values - reduced.order_parameter.values)) < 1e-8
    probe = reduced.density_by_frequency.sel(frequency=0.5).values
    atom = pde.density_by_frequency.isel(frequency=1).values
    assert np.max(np.abs(probe - atom)) < 1e-7


def test_particles_on_the_manifold_follow_the_engine():
    n, coupling, gamma, alpha = 20_000, 3.0, 0.5, 0.5
    model = mf.Kuramoto.sakaguchi(coupling, alpha, scipy.stats.cauchy(0, gamma))
    t = np.linspace(0, 30, 31)
    reduced = mf.ott_antonsen(model, t, 0.2)
    particles = mf.simulate(model, wrapped_cauchy_phases(n, 0.2, 7), t, rtol=1e-4, atol=1e-7)
    # finite-n fluctuations of r are ~n^{-1/2} = 0.007; the quantile frequencies and the engine are exact
    assert np.max(np.abs(particles.order_parameter.values - reduced.order_parameter.values)) < 3 / np.sqrt(n)


def test_energy_is_that_of_the_density():
    model = mf.Kuramoto(2.5, scipy.stats.cauchy(0, 0.4))
    ds = mf.ott_antonsen(model, np.linspace(0, 5, 6), 0.3, grid=128)
    z = ds.order_parameter.values
    assert np.allclose(ds.energy.values, 2.5 * z**2 / 2, rtol=1e-14, atol=0)
    density = mf.density(mf.Circle(128), ds.density.values[-1])
    assert float(mf.energy(model, density)) == pytest.approx(float(ds.energy[-1]), rel=1e-10)
    assert "energy" not in mf.ott_antonsen(mf.Kuramoto.sakaguchi(2.5, 0.2, scipy.stats.cauchy(0, 0.4)), [0, 1])


def test_the_result_says_how_it_was_made():
    law = mf.bimodal_lorentzian(1.0, 0.5)
    ds = mf.ott_antonsen(mf.Kuramoto(2.0, law), [0, 1, 2], 0.1)
    assert ds.attrs["frequencies"] == repr(law) and ds.attrs["rtol"] == 1e-10 and ds.attrs["n_steps"] > 0
    assert np.array_equal(ds.pole_real.values, [-1.0, 1.0]) and np.array_equal(ds.pole_imag.values, [0.5, 0.5])
    assert np.array_equal(ds.mass.values, np.ones(3))


@pytest.mark.parametrize("model, initial, match", [
    (mf.Kuramoto(1.0, scipy.stats.cauchy(0, 1), noise=0.1), 0.1, "not invariant under noise"),
    (mf.Kuramoto.harmonics(1.0, [1.0, 0.5], scipy.stats.cauchy(0, 1)), 0.1, "one harmonic"),
    (mf.Kuramoto(1.0, scipy.stats.norm(0, 1)), 0.1, "a frequency law with poles"),
    (mf.Kuramoto(1.0, scipy.stats.cauchy(0, 1)), 1.0, r"\|z\| < 1"),
    (mf.Kuramoto(1.0, mf.bimodal_lorentzian(1.0, 1.0)), [0.1, 0.2, 0.3], "2 such amplitudes"),
    (mf.Kuramoto(1.0, scipy.stats.cauchy(0, 1)), mf.von_mises(mf.Circle(64), 0, 1), "not a wrapped Cauchy"),
])
def test_what_the_engine_does_not_cover_is_refused(model, initial, match):
    with pytest.raises(ValueError, match=match):
        mf.ott_antonsen(model, [0, 1], initial)


def test_a_von_mises_start_is_a_manifold_error_and_probes_need_a_grid():
    with pytest.raises(ManifoldError, match="mf.solve"):
        mf.ott_antonsen(mf.Kuramoto(1.0, scipy.stats.cauchy(0, 1)), [0, 1], mf.von_mises(mf.Circle(64), 0, 1))
    with pytest.raises(ValueError, match="pass grid="):
        mf.ott_antonsen(mf.Kuramoto(1.0, scipy.stats.cauchy(0, 1)), [0, 1], frequencies=[0.0])

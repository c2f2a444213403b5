"""A model defined outside the package (docs/extending.md) runs through solve, simulate, energy and compare.

``RepulsiveSync``: identical oscillators that repel, θ̇_i = -(K/n) Σ_j sin(θ_j - θ_i), i.e.
X[μ](θ) = -K Im(Z e^{-iθ}), Z = ∫ e^{iθ} dμ, with energy E = -(K/2)|Z|² (the Kuramoto energy with
the sign of K reversed). Nothing in meanfield knows it: it subclasses :class:`meanfield.models.Model`
and answers the protocol itself, including that it never concentrates (so ``solve`` picks the spectral
scheme without noise).

Exact fact: the wrapped Cauchy densities (the Ott–Antonsen manifold) are invariant, with
ż = -(K/2)(z - z̄ z²), so r = |z| solves ṙ = -(K/2) r (1 - r²):

    r(t) = (1 + (r_0^{-2} - 1) e^{Kt})^{-1/2},    E(t) = -(K/2) r(t)².

n particles at the Möbius image of equally spaced angles, e^{iθ_j} = (e^{iψ_j} + r_0)/(1 + r_0 e^{iψ_j}),
have the moments of the wrapped Cauchy law up to O(r_0^n) and keep them (Watanabe–Strogatz), so the
particles follow the same r(t) to the integrator's tolerance.
"""

from __future__ import annotations

import numpy as np

import meanfield as mf
from meanfield.domains import CircleGeometry
from meanfield.models import Model
from solvers import ConvolutionVelocity


class RepulsiveVelocity:
    """θ̇_i = -K Im(Z e^{-iθ_i}) for states (systems, n) with weights (systems, n)."""

    path = "moments"
    collapse_rate = 0.0
    fourier_modes = -1

    def __init__(self, coupling: float, weights: np.ndarray) -> None:
        self.coupling, self.weights = coupling, weights

    def __call__(self, t: float, theta: np.ndarray) -> np.ndarray:
        z = np.sum(self.weights * np.exp(1j * theta), axis=-1, keepdims=True)
        return -self.coupling * np.imag(z * np.exp(-1j * theta))


class RepulsiveSync(Model):
    particle_domain = "circle"

    def __init__(self, coupling: float, noise: float = 0.0) -> None:
        self.coupling, self.noise = float(coupling), float(noise)

    @property
    def attrs(self):
        return {"model": self.name, "coupling": self.coupling, "noise": self.noise}

    def check_particles(self, geometry):
        if not isinstance(geometry, CircleGeometry):
            raise ValueError("RepulsiveSync moves angles on the circle")

    def particle_velocity(self, geometry, weights, frequencies, *, path="auto", accuracy=1e-10,
                          block_elements=1 << 16):
        return RepulsiveVelocity(self.coupling, weights)

    @property
    def has_energy(self):
        return True

    def particle_energy(self, states, weights, geometry, accuracy=None):
        z = np.sum(weights * np.exp(1j * states), axis=-1)
        return -0.5 * self.coupling * np.abs(z) ** 2

    def density_energy(self, domain, values):
        z = (np.asarray(values) * np.exp(1j * domain.theta)) @ domain.weights
        return -0.5 * self.coupling * np.abs(z) ** 2  # one per leading index of the node values

    def concentrates(self, velocity):
        return False  # repulsion spreads the density: no Diracs form, with or without noise

    def grid_velocity(self, domain, frequency_nodes=None):
        # X(θ) = -K ∫ sin(φ - θ) ρ(φ) dφ = (A ⋆ ρ)(θ), A(u) = K sin u: multiplier 2π Â_1 = -iπK at k = 1
        return ConvolutionVelocity(numerator=lambda k: np.where(np.asarray(k) == 1, -1j * np.pi * self.coupling, 0))

    def density_velocity(self, domain, values, frequencies):
        z = (np.asarray(values) * np.exp(1j * domain.theta)) @ domain.weights
        return -self.coupling * np.imag(z * np.exp(-1j * domain.theta))


COUPLING, R0 = 1.5, 0.8


def exact_r(t: np.ndarray) -> np.ndarray:
    return (1 + (R0**-2 - 1) * np.exp(COUPLING * np.asarray(t))) ** -0.5


def test_a_model_defined_outside_the_package_runs_through_every_front_door():
    model = RepulsiveSync(COUPLING)
    circle = mf.Circle(256)  # the modes r_0^k of the initial density fall below 1e-6 beyond N/3 = 85
    t = np.linspace(0.0, 3.0, 7)
    pde = mf.solve(model, mf.wrapped_cauchy(circle, 0.0, R0), t, rtol=1e-11, atol=1e-14)
    assert pde.attrs["success"] == 1 and pde.attrs["method"] == "spectral"
    assert pde.attrs["model"] == "RepulsiveSync" and "RepulsiveSync says its density does not concentrate" in pde.attrs["method_reason"]
    # spectral in θ on the invariant manifold: the error is the time integration's
    np.testing.assert_allclose(pde["order_parameter"].values, exact_r(t), rtol=0, atol=1e-9)
    np.testing.assert_allclose(pde["energy"].values, -0.5 * COUPLING * exact_r(t) ** 2, rtol=0, atol=1e-9)

    n = 400
    psi = 2 * np.pi * (np.arange(n) + 0.5) / n
    u = (np.exp(1j * psi) + R0) / (1 + R0 * np.exp(1j * psi))
    theta0 = np.mod(np.angle(u), 2 * np.pi)
    particles = mf.simulate(model, theta0, t, rtol=1e-11, atol=1e-13)
    assert particles.attrs["success"] == 1 and particles.attrs["method"] == "dopri5"
    # r_0^n = 1e-39: the particles' moments are the manifold's to round-off, and stay so
    np.testing.assert_allclose(particles["order_parameter"].values, exact_r(t), rtol=0, atol=1e-8)
    assert abs(mf.energy(model, theta0) + 0.5 * COUPLING * R0**2) < 1e-12
    assert abs(mf.energy(model, mf.wrapped_cauchy(circle, 0.0, R0)) + 0.5 * COUPLING * R0**2) < 1e-12

    gaps = mf.compare(pde, particles)
    assert np.max(np.abs(gaps["order_parameter_gap"].values)) < 1e-8
    assert np.max(np.abs(gaps["energy_gap"].values)) < 1e-8
    # W_1 between the density and n atoms at its mid-quantiles: a quarter of the mean cell 2π/n, π/(2n)
    # (measured 0.00393 = π/(2n)); twice that bounds it
    assert np.all(gaps["wasserstein"].values < np.pi / n)

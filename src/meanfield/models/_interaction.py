r"""The aggregation–diffusion model of a user's kernel and potential on S¹, S² and the zonal S^{d-1}:
its velocity for particles and for the PDE, its energy and free energy, its linear rates (the model
protocol: :mod:`meanfield.models._model`)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from solvers import ConvolutionVelocity, kernel_tail, sphere_area

from ..domains._circle import Circle
from ..domains._geometry import CircleGeometry, EuclideanGeometry
from .._validate import as_degrees, check_flag, check_nonnegative
from ._attention_weights import BETA_MAX_UNNORMALIZED
from ._energy import double_integral, entropy
from ._interaction_sums import InteractionSums, energy_sums, fourier_truncation_of, scaled_energy
from ._kernels import Kernel, as_kernel
from ._model import Model
from ._potentials import Potential, as_potential
from ._self_attention_sums import BLOCK_ELEMENTS

__all__ = ["Interaction", "PARTICLE_PATHS"]

#: how the particle velocities of an Interaction may be summed
PARTICLE_PATHS = ("auto", "direct", "fourier", "nufft")
#: below this many particles per system the direct sums are taken on S¹ ("auto")
FOURIER_MIN_PARTICLES = 256
#: the most harmonics "auto" sums by their moments (O(nK)) rather than by the NUFFT
MAX_MOMENT_HARMONICS = 64


class MultiplierTable:
    """k ↦ multipliers of a kernel's velocity on S^{d-1}, extended on demand (a :class:`solvers.ConvolutionVelocity`
    numerator or denominator); ``quadrature_nodes`` says how they were computed (0: closed form)."""

    def __init__(self, kernel: Kernel, d: int, factor: float, derivative: bool) -> None:
        self.kernel, self.d, self.factor, self.derivative = kernel, d, factor, derivative
        self.quadrature_nodes = 0
        self.band_limit: int | None = None

    def tail(self) -> float:
        """:func:`solvers.kernel_tail` of the velocity multipliers up to ``band_limit`` (the grid's, set by
        :meth:`Interaction.grid_velocity`)."""
        ell = np.arange(self.band_limit + 1)
        speeds = np.abs(self(ell)) if self.derivative else np.sqrt(ell * (ell + self.d - 2.0)) * np.abs(self(ell))
        return kernel_tail(speeds)[0]

    def __call__(self, degrees: np.ndarray) -> np.ndarray:
        degrees = np.abs(np.asarray(degrees))
        table = self.kernel.multipliers(int(np.max(degrees, initial=0)) + 1, self.d)
        self.quadrature_nodes = max(self.quadrature_nodes, table.quadrature_nodes)
        values = self.factor * table.values[degrees]
        return 1j * degrees * values if self.derivative else values


@dataclass(frozen=True, eq=False)
class Interaction(Model):
    r"""Aggregation–diffusion with an interaction kernel W and an external potential U on S¹ or S^{d-1}:

        ∂_t ρ + div(ρ X[ρ]) = σ Δρ,
        X[ρ](x) = -P⊥_x ∇_x ( ∫ W(<x, y>) dρ(y) ) - ∇_S U(x)                  (normalized=False),
        X[ρ](x) = -P⊥_x ∇_x ( ∫ W(<x, y>) dρ(y) ) / ∫ |W'(<x, y>)| dρ(y) - ∇_S U(x)   (normalized=True),

    with -P⊥_x ∇_x ∫ W(<x, y>) dρ(y) = -P⊥_x ∫ W'(<x, y>) y dρ(y), densities w.r.t. the area measure
    (∫ρ dσ = 1) and particles ẋ_i = X[μ_n](x_i), μ_n = Σ_j w_j δ_{x_j}. The energy and free energy are

        E[ρ] = ½ ∬ W(<x, y>) dρ(x) dρ(y) + ∫ U dρ,     F[ρ] = E[ρ] + σ ∫ ρ log ρ dσ,

    and without normalisation the flow is the W₂ gradient flow of F:
    dF/dt = -∫ |X - σ ∇ log ρ|² dρ ≤ 0. Self-attention is the case W(t) = -e^{βt}/β: USA with
    ``normalized=False`` (and then E = -E_β of :class:`SelfAttention`), SA with ``normalized=True``
    (|W'| = e^{βt}); Kuramoto's identical oscillators on S¹ are W(t) = -K t; the repulsive models turn W's
    sign. About the uniform state (U = 0) the degree-l mode grows at

        λ_l = -l(l+d-2) (λ_l^W / |S^{d-1}| + σ)                (normalized=False),
        λ_l = -l(l+d-2) (λ_l^W / λ_0^{|W'|} + σ)               (normalized=True),

    λ_l^W the Funk–Hecke multipliers of W (:meth:`growth_rate`; for W = -e^{βt}/β these are paper 2's
    USA and SA rates, λ_l^W = -c_l(β)/β).

    Parameters
    ----------
    kernel : Kernel, str or callable
        W: a :class:`~meanfield.Kernel` (named families, Fourier or Legendre coefficients, sums), a formula in
        t (``"-exp(2*t)/2"``) or named family (``"riesz:s=1"``), or a callable of t (:func:`as_kernel`).
    potential : Potential, str, callable or None
        U: a :class:`~meanfield.Potential`, a formula in t = <x, e_d> (zonal about e_d), a callable of points,
        or None (U ≡ 0).
    noise : float
        σ ≥ 0.
    normalized : bool
        Divide the interaction by ∫|W'(<x, y>)| dρ(y) (SA-type); needs W' finite and of one sign on [-1, 1].

    Raises
    ------
    ValueError
        A kernel that is not finite on [-1, 1] or cannot be read, σ < 0, ``normalized=True`` with a W'
        that is unbounded or changes sign, or (``normalized=False``) a kernel whose scale e^{s}
        overflows a double.
    TypeError
        A kernel or potential of an unknown kind, ``normalized`` not a bool.

    Notes
    -----
    The model, in the notation above (``normalized=False``; with ``normalized=True`` the interaction
    term is divided by ∫ |W'(<x, y>)| dρ(y)):

    .. math::

        \partial_t \rho + \operatorname{div}(\rho\, \mathcal{X}[\rho]) = \sigma \Delta\rho, \qquad
        \mathcal{X}[\rho](x) = -\mathsf{P}^\perp_x \int W'(\langle x, y\rangle)\, y\,\mathrm{d}\rho(y)
        - \nabla_{\mathbb{S}} U(x),

    .. math::

        F[\rho] = \frac{1}{2} \iint W(\langle x, y\rangle)\,\mathrm{d}\rho(x)\,\mathrm{d}\rho(y)
        + \int U\,\mathrm{d}\rho + \sigma \int \rho \log\rho\,\mathrm{d}\sigma,
        \qquad
        \lambda_l = -l(l+d-2)\Big(\frac{\lambda_l^W}{\lvert\mathbb{S}^{d-1}\rvert} + \sigma\Big).

    A grid of band limit L represents W by its multipliers λ_l, l ≤ L. The spectral schemes check that the
    velocity multipliers v_l = √(l(l+d-2)) |λ_l| above 2/3 of L are at most ``tail_tol`` of their largest
    (:func:`solvers.kernel_tail`) and refuse the grid otherwise (UnderResolvedError naming the degree and the
    tail) rather than ring; the finite-volume schemes truncate the kernel at L, a change of the velocity of
    the order of that tail (recorded as ``kernel_tail``), and stay positive. The Riesz kernels |x - y|^s have
    λ_l ~ l^{-(s+d-1)}, v_l ~ l^{-(s+d-2)}: on a spectral grid they need ``tail_tol`` raised or a band limit
    of order tail_tol^{-1/(s+d-2)}.

    Examples
    --------
    >>> import meanfield as mf
    >>> from scipy.special import iv
    >>> model = mf.Interaction(kernel=-mf.Kernel.exponential(4.0) / 4.0)   # USA, β = 4
    >>> round(float(model.growth_rate(3)), 10) == round(float(mf.SelfAttention(4.0, normalized=False).growth_rate(3)), 10)
    True
    >>> print(f"{float(model.growth_rate(3)):.6f} {9 * iv(3, 4.0) / 4.0:.6f}")   # k² I_k(β)/β on S¹
    7.508871 7.508871
    >>> # its energy is -E_β of USA: -I_0(β)/(2β) at the uniform measure of S¹
    >>> print(f"{mf.energy(model, mf.uniform(mf.Circle(64))):.6f} {-iv(0, 4.0) / 8.0:.6f}")
    -1.412740 -1.412740
    >>> # W(t) = -2t (Kuramoto, K = 2) with noise σ = 1/2: λ_1 = -(-2π/2π + σ) = 1/2
    >>> kuramoto_like = mf.Interaction("-2*t", noise=0.5)
    >>> print(f"{float(kuramoto_like.growth_rate(1)):.6f} {float(kuramoto_like.growth_rate(2)):.6f}")
    0.500000 -2.000000
    """

    kernel: Any
    potential: Any = None
    noise: float = 0.0
    normalized: bool = False

    def __post_init__(self) -> None:
        kernel = as_kernel(self.kernel)
        kernel.check_finite()
        object.__setattr__(self, "kernel", kernel)
        object.__setattr__(self, "potential", as_potential(self.potential))
        object.__setattr__(self, "noise", check_nonnegative("noise", self.noise))
        object.__setattr__(self, "normalized", check_flag("normalized", self.normalized))
        object.__setattr__(self, "_sign", _normaliser_sign(kernel) if self.normalized else None)
        if not self.normalized and kernel.log_scale > BETA_MAX_UNNORMALIZED:
            raise ValueError(f"the kernel {kernel.description} reaches e^{kernel.log_scale:.6g}, beyond the largest "
                             f"double; normalized=True divides the scale out")

    # ------------------------------------------------------------------ identity
    @property
    def name(self) -> str:
        return "Interaction"

    @property
    def attrs(self) -> dict[str, Any]:
        return {"model": "Interaction", "kernel": self.kernel.description,
                "potential": "none" if self.potential is None else self.potential.description,
                "noise": self.noise, "normalized": int(self.normalized)}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Interaction) and self.attrs == other.attrs

    def __hash__(self) -> int:
        return hash(tuple(self.attrs.items()))

    # ------------------------------------------------------------------ multipliers and rates
    def velocity_spec(self, d: int, potential: np.ndarray | None = None) -> ConvolutionVelocity:
        """X as ∇(A ⋆ ρ)/(B ⋆ ρ) - ∇U: A = -W (e^{s} W̃ unnormalised), B = |W'| (normalised), by their
        Funk–Hecke multipliers (on S¹ the θ-derivative's, ik times them); U's node values ``potential``."""
        derivative = d == 2
        if self._sign is None:
            numerator = MultiplierTable(self.kernel, d, -np.exp(self.kernel.log_scale), derivative)
            return ConvolutionVelocity(numerator=numerator, potential=potential, resolve_kernel=True)
        weight = self.kernel.derivative_kernel()
        ratio = -np.exp(self.kernel.log_scale - weight.log_scale)
        return ConvolutionVelocity(numerator=MultiplierTable(self.kernel, d, ratio, derivative),
                                   denominator=MultiplierTable(weight, d, self._sign, False), potential=potential,
                                   resolve_kernel=True)

    def growth_rate(self, degree: int | np.ndarray, d: int = 2) -> np.ndarray:
        """λ_l of the class docstring from the kernel's Funk–Hecke multipliers (none for a potential: the uniform
        state is then not stationary)."""
        if self.potential is not None:
            raise ValueError("growth_rate is the rate about the uniform state, which an external potential moves; "
                             "it is defined for potential=None")
        ell = as_degrees(degree, d)
        table = self.kernel.multipliers(int(np.max(ell, initial=0)) + 1, d)
        if self._sign is None:
            ratio = table.values[ell] * np.exp(table.log_scale) / sphere_area(d)
        else:
            weight = self.kernel.derivative_kernel().multipliers(1, d)
            ratio = table.values[ell] * np.exp(table.log_scale - weight.log_scale) / (self._sign * weight.values[0])
        return -ell * (ell + d - 2) * (ratio + self.noise)

    # ------------------------------------------------------------------ particles
    def check_particles(self, geometry: Any) -> None:
        """Particles on S¹ or S^{d-1} of the potential's sphere."""
        if isinstance(geometry, EuclideanGeometry):
            raise ValueError("Interaction particles live on the circle or a sphere, got domain 'euclidean'")
        if self.potential is not None:
            self.potential.check_dimension(geometry.dimension, f"particles on S^{geometry.dimension - 1}")

    def particle_velocity(self, geometry: Any, weights: np.ndarray, frequencies: np.ndarray | None, *,
                          path: str = "auto", accuracy: float = 1e-10,
                          block_elements: int = BLOCK_ELEMENTS) -> InteractionSums:
        """The sums of :mod:`._interaction_sums` by ``path``: "direct" (any sphere), on S¹ "fourier" (kernels of
        finitely many harmonics, exact) or "nufft" (decaying harmonics, to ``accuracy``); "auto" takes the
        direct sums below 256 particles per system and off S¹, else "fourier" for ≤ 64 harmonics, else "nufft"
        when the harmonics decay, else "direct"."""
        if path not in PARTICLE_PATHS:
            raise ValueError(f"path must be one of {PARTICLE_PATHS}, got {path!r}")
        angles = isinstance(geometry, CircleGeometry)
        if path in ("fourier", "nufft") and not angles:
            raise ValueError(f"path={path!r} sums harmonics on the circle; particles on S^{geometry.dimension - 1} "
                             "take path='direct'")
        harmonics = self.kernel.fourier_harmonics
        if path == "fourier" and harmonics is None:
            raise ValueError(f"path='fourier' needs a kernel of finitely many harmonics (a polynomial in t, "
                             f"Kernel.fourier, Kernel.legendre), got {self.kernel.description}; use 'nufft' or 'direct'")
        if path == "auto":
            path = "direct"
            if angles and weights.shape[1] >= FOURIER_MIN_PARTICLES:
                if harmonics is not None and harmonics <= MAX_MOMENT_HARMONICS:
                    path = "fourier"
                elif _truncates(self.kernel, self._sign is not None, accuracy / 2):
                    path = "nufft"
        return InteractionSums(self.kernel, self.potential, self._sign, weights, angles, path, accuracy,
                               block_elements)

    @property
    def one_harmonic(self) -> bool:
        """W(cos θ) of harmonics |k| ≤ 1 (W = a + b t), no potential, no normalisation: on S¹ the flow is Kuramoto's
        of identical oscillators, K = -b, with its exact Möbius flow."""
        harmonics = self.kernel.fourier_harmonics
        return harmonics is not None and harmonics <= 2 and self.potential is None and not self.normalized

    def default_particle_method(self, geometry: Any) -> str:
        """Euler–Maruyama with noise; without, on S¹ the exact Möbius flow for one harmonic, else Dormand–Prince
        5(4)."""
        if self.noise > 0:
            return "euler-maruyama"
        return "moebius" if self.one_harmonic and isinstance(geometry, CircleGeometry) else "dopri5"

    def riccati_form(self, frequencies: np.ndarray) -> tuple[complex, np.ndarray]:
        """a = ĥ_1 = i Ŵ_1 e^{s} (Ŵ_1 = λ_1/2π) and ν_i = 0 (no natural frequencies; ``frequencies`` is None) of
        u̇_i = i a Z + i ν_i u_i + i conj(a Z) u_i² (:mod:`meanfield.particles._moebius`), for a kernel of one
        harmonic."""
        if not self.one_harmonic:
            return super().riccati_form(frequencies)
        table = self.kernel.multipliers(2, 2)
        return complex(1j * table.values[1] * np.exp(table.log_scale) / (2 * np.pi)), np.zeros(1)

    # ------------------------------------------------------------------ energy
    @property
    def has_energy(self) -> bool:
        return True

    @property
    def energy_description(self) -> str:
        return "energy E = ½∬W(<x,y>) dρ dρ + ∫U dρ"

    @property
    def has_free_energy(self) -> bool:
        """With noise and without normalisation: F = E + σ ∫ρ log ρ, non-increasing."""
        return self.noise > 0 and not self.normalized

    def particle_energy(self, states: np.ndarray, weights: np.ndarray, geometry: Any,
                        accuracy: float | None = None) -> np.ndarray:
        """E = ½ Σ_ij w_i w_j W(<x_i, x_j>) + Σ_i w_i U(x_i) per system (:func:`._interaction_sums.energy_sums`)."""
        return energy_sums(self.kernel, self.potential, np.asarray(states, dtype=float),
                           np.asarray(weights, dtype=float), isinstance(geometry, CircleGeometry))

    def density_energy(self, domain: Any, values: np.ndarray) -> np.ndarray:
        """E = (e^{s}/2) ∫ ρ (W̃ ⋆ ρ) dσ + ∫ U ρ dσ by the domain's quadrature (the convolution by the
        multipliers of W̃, exact for ρ of the grid's band limit)."""
        d = domain.dimension
        table = MultiplierTable(self.kernel, d, 1.0, False)
        out = scaled_energy(self.kernel.log_scale, 0.5 * double_integral(domain, values, table))
        if self.potential is not None:
            axes = tuple(range(values.ndim - len(domain.shape), values.ndim))
            out = out + np.sum(values * self.potential.grid_values(domain) * domain.weights, axis=axes)
        return out

    def density_free_energy(self, domain: Any, values: np.ndarray) -> np.ndarray:
        """F = E + σ ∫ ρ log ρ dσ (:func:`._energy.entropy`)."""
        return self.density_energy(domain, values) + self.noise * entropy(domain, values)

    # ------------------------------------------------------------------ the PDE
    def grid_velocity(self, domain: Any, frequency_nodes: int | None = None) -> ConvolutionVelocity:
        """:meth:`velocity_spec` on ``domain`` with U on its grid (a ZonalSphere takes a potential zonal about e_d
        only); the spectral schemes check that the grid resolves the kernel (``resolve_kernel``)."""
        d = domain.dimension
        potential = None
        if self.potential is not None:
            if getattr(domain, "kind", "") == "zonal" and not self.potential.about_pole(d):
                raise ValueError(f"a density on {domain!r} is zonal about e_d, but the potential "
                                 f"{self.potential.description} is not; use Sphere or particles")
            potential = self.potential.grid_values(domain)
        velocity = self.velocity_spec(d, potential)
        velocity.numerator.band_limit = domain.band_limit
        return velocity

    def pde_attrs(self, velocity: ConvolutionVelocity) -> dict[str, Any]:
        """``kernel_quadrature_nodes`` (0: closed-form multipliers), ``kernel_tail`` (:func:`solvers.kernel_tail`
        of the velocity multipliers at the grid's band limit) and the SHA-256 of U on the grid."""
        table = velocity.numerator
        attrs: dict[str, Any] = {"kernel_quadrature_nodes": int(table.quadrature_nodes),
                                 "kernel_tail": table.tail()}
        if velocity.potential is not None:
            attrs["potential_sha256"] = hashlib.sha256(np.ascontiguousarray(velocity.potential).tobytes()).hexdigest()
        return attrs

    def density_velocity(self, domain: Any, values: np.ndarray, frequencies: Any) -> np.ndarray:
        """X at the nodes of the quadrature measure Σ_j ρ_j w_j δ_{x_j}: on S¹ by FFT from the multipliers
        (angular velocity), on S² by the direct sums (tangent vectors); a ZonalSphere's nodes stand for
        parallels, not points, and are refused."""
        if getattr(domain, "kind", "") == "zonal":
            raise ValueError(f"the velocity at the nodes of a density on {domain!r} is not computed (each node "
                             "stands for a parallel of S^(d-1)); mf.solve moves zonal densities")
        if isinstance(domain, Circle):
            spec = self.velocity_spec(2)
            field = domain.convolve(values, spec.numerator)
            if spec.denominator is not None:
                field = field / domain.convolve(values, spec.denominator)
            if self.potential is not None:
                points = domain.points
                gradient = self.potential.surface_gradient(points)
                field = field - (points[..., 0] * gradient[..., 1] - points[..., 1] * gradient[..., 0])
            return field
        points = domain.points.reshape(1, -1, domain.points.shape[-1])
        weights = (values * domain.weights).reshape(1, -1)
        sums = InteractionSums(self.kernel, self.potential, self._sign, weights, False)
        return sums(0.0, points).reshape(*domain.shape, -1)


def _normaliser_sign(kernel: Kernel) -> float:
    """σ_W = ±1 with σ_W W' ≥ 0 on [-1, 1] (checked at 2001 points, ends included).

    Raises
    ------
    ValueError
        W' unbounded at t = 1, or of both signs.
    """
    if not kernel.bounded_derivative:
        raise ValueError(f"normalized=True divides by ∫|W'(<x, y>)| dρ(y), which needs W' finite on [-1, 1]; "
                         f"W' of {kernel.description} is unbounded at t = 1")
    t = np.cos(np.pi * np.arange(2001) / 2000)
    slope = kernel.derivative_kernel().scaled_value(t)
    top = float(np.max(np.abs(slope)))
    if top == 0:
        raise ValueError(f"normalized=True divides by ∫|W'|dρ, but W' of {kernel.description} vanishes")
    if np.min(slope) < -1e-12 * top and np.max(slope) > 1e-12 * top:
        change = round(float(t[np.nonzero(np.diff(np.sign(slope)))[0][0]]), 12) + 0.0
        raise ValueError(f"normalized=True divides by ∫|W'(<x, y>)| dρ(y), which needs W' of one sign on [-1, 1]; "
                         f"W' of {kernel.description} changes sign near t = {change:.6g}; use normalized=False")
    return 1.0 if np.max(slope) > 0 else -1.0


def _truncates(kernel: Kernel, normalized: bool, accuracy: float) -> bool:
    """Whether :func:`fourier_truncation_of` finds a truncation."""
    try:
        fourier_truncation_of(kernel, normalized, accuracy)
    except ValueError:
        return False
    return True


"""Models: the velocity fields of self-attention and Kuramoto dynamics.

A model is a frozen set of parameters. It hands a scheme what the scheme
needs (kernel multipliers, :class:`solvers.ConvolutionVelocity`) and gives
the velocity of a density on a grid or of a set of particles.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.stats

from solvers import ConvolutionVelocity

from ..domains._domain import sphere_area
from ._attention_weights import velocity_factor
from ._kernels import scaled_funk_hecke, scaled_funk_hecke_over_beta
from .._validate import check_beta, check_nonnegative

__all__ = ["SelfAttention", "Kuramoto"]


@dataclass(frozen=True)
class SelfAttention:
    r"""Self-attention dynamics with Q = K = V = I on S^{d-1} (paper 2, (SA), (USA), (3.2)).

        ∂_t μ + div(X[μ] μ) = σ Δμ,
        USA: X[μ](x) = P⊥_x ∫ e^{β<x,y>} y dμ(y)           = ∇(𝖦_β ⋆ μ)(x),  𝖦_β(t) = e^{βt}/β,
        SA:  X[μ](x) = P⊥_x ∫ e^{β<x,y>} y dμ(y) / Z_μ(x),  Z_μ(x) = ∫ e^{β<x,y>} dμ(y),

    and at β = 0 both reduce to X = P⊥_x m, m = ∫ y dμ(y). On S¹ (angles, (7.1)),
    with h_β(θ) = e^{β cos θ}: USA X = β⁻¹ (h_β' ⋆ μ), SA X = β⁻¹ (h_β' ⋆ μ)/(h_β ⋆ μ).
    Particles: ẋ_i = X[μ_n](x_i) with μ_n = (1/n) Σ_j δ_{x_j}. Every path evaluates these
    with the shifted weights e^{β(<x,y>-1)} and the SA/USA rule of
    :mod:`meanfield.models._attention_weights`.

    Parameters
    ----------
    beta : float
        Inverse temperature β ≥ 0.
    normalized : bool
        True for SA (softmax normalisation by Z_μ), False for USA.
    noise : float
        Diffusion coefficient σ ≥ 0 of the term σΔμ (particles: dX = … + √(2σ) dB).
    """

    beta: float
    normalized: bool = True
    noise: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "beta", check_beta(self.beta))
        object.__setattr__(self, "noise", check_nonnegative("noise", self.noise))
        if not isinstance(self.normalized, (bool, np.bool_)):
            raise TypeError(f"normalized must be True (SA) or False (USA), got {self.normalized!r}")

    @property
    def name(self) -> str:
        """"SA" or "USA"."""
        return "SA" if self.normalized else "USA"

    @property
    def attrs(self) -> dict[str, Any]:
        """Parameters for a result's attrs."""
        return {"model": self.name, "beta": self.beta, "noise": self.noise, "normalized": int(self.normalized)}

    def potential_multipliers(self, degrees: np.ndarray, d: int) -> np.ndarray:
        """Funk–Hecke multipliers of the energy kernel 𝖦_β(<x,y>) = e^{β<x,y>}/β for degrees l ≥ 1
        (0 at l = 0; β → 0 limit included): c_l(β)/β, the scaled e^{-β} c_l(β)/β times the USA
        factor e^β (:func:`meanfield.models._attention_weights.velocity_factor`), X_USA = ∇(𝖦_β ⋆ μ)."""
        return scaled_funk_hecke_over_beta(degrees, self.beta, d) * velocity_factor(self.beta, False)

    def velocity_spec(self, d: int) -> ConvolutionVelocity:
        """Velocity as X = ∇(A ⋆ μ)/(B ⋆ μ) with Funk–Hecke (d ≥ 3) or Fourier (d = 2) multipliers.

        On S¹ the multipliers are those of θ-derivatives: A ↦ ik · 2π Î_k, so
        that X = A ⋆ μ / (B ⋆ μ) directly. A and B are the multipliers of the
        shifted weights e^{β(<x,y>-1)}, e^{-β} c_l(β)/β and e^{-β} c_l(β); the
        SA/USA rule of :mod:`meanfield.models._attention_weights` divides by
        B ⋆ μ (SA) or multiplies A by e^β (USA, :func:`velocity_factor`).
        """
        beta = self.beta
        scale = velocity_factor(beta, self.normalized)

        def potential(ell: np.ndarray) -> np.ndarray:
            return scale * scaled_funk_hecke_over_beta(ell, beta, d)

        if d == 2:

            def numerator(k: np.ndarray) -> np.ndarray:
                return 1j * k * potential(k)

        else:
            numerator = potential
        denominator = (lambda ell: scaled_funk_hecke(ell, beta, d)) if self.normalized else None
        return ConvolutionVelocity(numerator=numerator, denominator=denominator)

    def velocity(self, measure: Any, **kwargs: Any) -> np.ndarray:
        """X[μ] at the nodes of a density or the atoms of particles
        (see :func:`meanfield.models._velocity_field.velocity_field`)."""
        from ._velocity_field import velocity_field

        return velocity_field(self, measure, **kwargs)

    def growth_rate(self, degree: int | np.ndarray, d: int = 2) -> np.ndarray:
        """Linear growth rate of a degree-l perturbation of the uniform measure (linearised (SA)/(USA) of paper 2, arXiv:2312.10794, with the Funk–Hecke multipliers c_l(β)):

        USA λ_l = l(l+d-2) (c_l(β)/(β|S^{d-1}|) - σ),  SA λ_l = l(l+d-2) (c_l(β)/(β c_0(β)) - σ).
        """
        ell = np.asarray(degree)
        lap = ell * (ell + d - 2)
        c_over_beta = scaled_funk_hecke_over_beta(ell, self.beta, d)
        if self.normalized:
            ratio = c_over_beta / scaled_funk_hecke(0, self.beta, d)
        else:
            ratio = c_over_beta * velocity_factor(self.beta, False) / sphere_area(d)
        return lap * (ratio - self.noise)


@dataclass(frozen=True)
class Kuramoto:
    r"""Kuramoto-type dynamics on S¹ (paper 2, (7.2), (7.5)):

        θ̇_i = ω_i + (K/n) Σ_j h(θ_j - θ_i),     ∂_t ρ_ω + ∂_θ(ρ_ω X_ω) = σ ∂²_θ ρ_ω,
        X_ω(θ) = ω + K ∫∫ h(φ - θ) ρ_{ω'}(φ) g(ω') dφ dω'.

    The interaction h(u) = Σ_{|k| ≤ K} ĥ_k e^{iku} is given by its Fourier
    coefficients ĥ_0, …, ĥ_K (h real: ĥ_{-k} = conj ĥ_k); the default h = sin
    (ĥ_1 = -i/2) is Kuramoto's model, h(u) = e^{β cos u} sin u is USA.

    Parameters
    ----------
    coupling : float
        Coupling strength K ≥ 0.
    frequencies : None, float or scipy.stats frozen distribution
        Law g of the natural frequencies: None or a number for identical
        oscillators (g = δ_ω), or a continuous law (``scipy.stats.norm(0, s)``,
        ``scipy.stats.cauchy(0, γ)``, …), discretised by quadrature in ω.
    noise : float
        Diffusion σ ≥ 0.
    interaction : array_like of complex, optional
        ĥ_0, …, ĥ_K; default sin.
    """

    coupling: float = 1.0
    frequencies: Any = None
    noise: float = 0.0
    interaction: np.ndarray = field(default_factory=lambda: np.array([0.0, -0.5j]))

    def __post_init__(self) -> None:
        object.__setattr__(self, "coupling", check_nonnegative("coupling", self.coupling))
        object.__setattr__(self, "noise", check_nonnegative("noise", self.noise))
        if isinstance(self.interaction, (str, bytes)):
            raise TypeError(f"interaction must be an array of Fourier coefficients ĥ_0, …, ĥ_K (e.g. [0, -0.5j] for "
                            f"sin), got {self.interaction!r}")
        coeffs = np.atleast_1d(np.asarray(self.interaction, dtype=complex))
        if coeffs.ndim != 1 or coeffs.size < 2 or not np.all(np.isfinite(coeffs)):
            raise ValueError(
                "interaction must be a 1-D array of finite Fourier coefficients ĥ_0, …, ĥ_K with K >= 1, "
                f"got {self.interaction!r}"
            )
        if abs(coeffs[0].imag) > 1e-14:
            raise ValueError(f"interaction ĥ_0 must be real for a real h, got {coeffs[0]!r}")
        object.__setattr__(self, "interaction", coeffs)
        freq = self.frequencies
        if isinstance(freq, (scipy.stats.rv_continuous, scipy.stats.rv_discrete)):
            raise TypeError(
                f"frequencies must be a frozen distribution with its parameters, e.g. scipy.stats.{freq.name}(0, 1), "
                f"got the unfrozen family scipy.stats.{freq.name}"
            )
        if freq is not None and not _is_number(freq) and not (hasattr(freq, "ppf") and hasattr(freq, "dist")):
            raise TypeError(
                "frequencies must be None, a number, or a scipy.stats frozen distribution, "
                f"got {type(freq).__name__}"
            )
        if _is_number(freq) and not np.isfinite(float(freq)):
            raise ValueError(f"frequencies must be finite, got {freq!r}")

    def __eq__(self, other: object) -> bool:
        """Same coupling, noise, frequency law and interaction coefficients."""
        if not isinstance(other, Kuramoto):
            return NotImplemented
        return (self.coupling, self.noise, self.attrs["frequencies"]) == (
            other.coupling, other.noise, other.attrs["frequencies"]) and np.array_equal(
            self.interaction, other.interaction)

    def __hash__(self) -> int:
        return hash((self.coupling, self.noise, self.attrs["frequencies"], self.interaction.tobytes()))

    @property
    def name(self) -> str:
        return "Kuramoto"

    @property
    def attrs(self) -> dict[str, Any]:
        freq = self.frequencies
        if freq is None:
            law = "identical(0)"
        elif _is_number(freq):
            law = f"identical({float(freq)!r})"
        else:
            law = f"{freq.dist.name}{tuple(freq.args)}{dict(freq.kwds) or ''}"
        return {
            "model": "Kuramoto",
            "coupling": self.coupling,
            "noise": self.noise,
            "frequencies": law,
            "interaction": repr(self.interaction.tolist()),
        }

    def frequency_quadrature(self, n_nodes: int = 32) -> tuple[np.ndarray, np.ndarray]:
        """Nodes ω_m and weights w_m (Σ w_m = 1) discretising the frequency law.

        Identical oscillators: one node. Normal law: Gauss–Hermite (exact for
        polynomials of degree < 2m in ω). Any other law: the midpoint rule in
        probability space, ω_j = F⁻¹((j + 1/2)/m), w_j = 1/m, which puts nodes
        where the mass is and keeps the extreme node at F⁻¹(1 - 1/2m) (for a
        Lorentzian of half-width γ, |ω| ≤ 2mγ/π), so heavy tails do not force
        tiny explicit time steps. Its error is O(m⁻²) for smooth integrands in
        u = F(ω) and O(m⁻¹) across the locked/drifting boundary of Kuramoto's
        stationary states.
        """
        freq = self.frequencies
        if freq is None or _is_number(freq):
            return np.array([0.0 if freq is None else float(freq)]), np.ones(1)
        if n_nodes < 1:
            raise ValueError(f"n_nodes must be >= 1, got {n_nodes}")
        if isinstance(getattr(freq, "dist", None), type(scipy.stats.norm)):
            x, w = np.polynomial.hermite_e.hermegauss(n_nodes)
            loc, scale = freq.mean(), freq.std()
            return loc + scale * x, w / w.sum()
        u = (np.arange(n_nodes) + 0.5) / n_nodes
        return freq.ppf(u), np.full(n_nodes, 1.0 / n_nodes)

    def interaction_multipliers(self, k: np.ndarray) -> np.ndarray:
        """Multipliers 2π K conj(ĥ_k) of K g, g(u) = h(-u), at wavenumbers k ≥ 0 (0 beyond K_h)."""
        k = np.asarray(k)
        out = np.zeros(k.shape, dtype=complex)
        inside = k < self.interaction.size
        out[inside] = 2 * np.pi * self.coupling * np.conj(self.interaction[k[inside]])
        return out

    def velocity_spec(self, n_frequency_nodes: int = 32) -> ConvolutionVelocity:
        """X_m = ω_m + K (g ⋆ ρ̄) with g(u) = h(-u): multiplier 2π K conj(ĥ_k)."""
        nodes, weights = self.frequency_quadrature(n_frequency_nodes)
        return ConvolutionVelocity(numerator=self.interaction_multipliers, drift=nodes, weights=weights)

    def potential_multipliers(self, k: np.ndarray) -> np.ndarray:
        """Multipliers 2π Ĝ_k of the potential G with X = ω + ∂_θ(G ⋆ ρ̄), for an odd h.

        h odd ⇒ g(u) = h(-u) = ∂_u G(u) with Ĝ_k = ĝ_k/(ik) for k ≠ 0.
        Used for the energy E = (1/2) ∬ G(θ - φ) dμ dμ (K|m|²/2 for h = sin).
        """
        if not self.is_gradient:
            raise ValueError("the Kuramoto interaction h is not odd, so X has no potential")
        k = np.asarray(k)
        num = self.interaction_multipliers(k)
        out = np.zeros(k.shape, dtype=complex)
        nz = k != 0
        out[nz] = num[nz] / (1j * k[nz])
        return out

    def velocity(self, measure: Any, **kwargs: Any) -> np.ndarray:
        """X[μ] at the nodes of a density or the atoms of particles
        (see :func:`meanfield.models._velocity_field.velocity_field`)."""
        from ._velocity_field import velocity_field

        return velocity_field(self, measure, **kwargs)

    @property
    def is_gradient(self) -> bool:
        """True when h is odd (ĥ_k purely imaginary), so the dynamics has an energy."""
        return bool(np.all(np.abs(self.interaction.real) < 1e-14))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)

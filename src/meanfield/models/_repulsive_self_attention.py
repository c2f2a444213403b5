"""Repulsive self-attention, Q = K = I and V = -I on S¹ and S^{d-1} (paper 2, §9.1; paper 1, Theorem 8.5).

The velocity of :class:`~meanfield.SelfAttention` with its sign turned: the same attention weights,
the same energy E_β, which now decreases along the flow (paper 2, Lemma 3.7 with V = -I), and the
uniform measure as its unique minimiser over P(S^{d-1}) (Proposition 3.4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from solvers import ConvolutionVelocity

from ..domains._geometry import EuclideanGeometry
from .._validate import as_degrees

from ._energy import entropy
from ._self_attention import SelfAttention
from ._self_attention_sums import BLOCK_ELEMENTS

__all__ = ["RepulsiveSelfAttention"]


class _Reversed:
    """-X(t, x) of a particle velocity X, with its path, collapse rate and Fourier truncation."""

    def __init__(self, velocity: Any) -> None:
        self.velocity = velocity
        self.path = velocity.path
        self.collapse_rate = velocity.collapse_rate
        self.fourier_modes = velocity.fourier_modes

    def __call__(self, t: float, x: np.ndarray) -> np.ndarray:
        return -self.velocity(t, x)


@dataclass(frozen=True)
class RepulsiveSelfAttention(SelfAttention):
    r"""Self-attention with V = -I on S^{d-1} (paper 2, §9.1):

        ∂_t μ + div(X[μ] μ) = σ Δμ,
        USA: X[μ](x) = -P⊥_x ∫ e^{β<x,y>} y dμ(y)           = -∇(𝖦_β ⋆ μ)(x),  𝖦_β(t) = e^{βt}/β,
        SA:  X[μ](x) = -P⊥_x ∫ e^{β<x,y>} y dμ(y) / Z_μ(x),  Z_μ(x) = ∫ e^{β<x,y>} dμ(y).

    USA is the gradient flow of E_β[μ] = (1/2β) ∬ e^{β<x,y>} dμ dμ in W₂ turned downhill:
    dE_β/dt = -∫ |X|² dμ - σ ∫ ∇(𝖦_β ⋆ μ)·∇μ ≤ 0 at σ = 0; for SA, dE_β/dt = -∫ Z_μ |X|² dμ
    at σ = 0 (paper 2, (3.12) with V = -I). Every mode of the uniform measure decays (see
    :meth:`growth_rate`). Parameters as :class:`~meanfield.SelfAttention`; the compiled ensemble
    kernels are attractive only, so particles take the direct or NUFFT sums.
    """

    @property
    def name(self) -> str:
        """"SA-repulsive" or "USA-repulsive"."""
        return f"{super().name}-repulsive"

    @property
    def attrs(self) -> dict[str, Any]:
        return {**super().attrs, "repulsive": 1}

    def velocity_spec(self, d: int) -> ConvolutionVelocity:
        """:meth:`SelfAttention.velocity_spec` with the numerator (the potential's gradient) negated."""
        spec = super().velocity_spec(d)
        numerator = spec.numerator
        return ConvolutionVelocity(numerator=lambda ell: -numerator(ell), denominator=spec.denominator)

    def check_particles(self, geometry: Any) -> None:
        """Particles on S¹ or S^{d-1}; for R^d (paper 1, Theorem 8.5) the model is ``Attention(beta, V=-I,
        projection=False)``."""
        if isinstance(geometry, EuclideanGeometry):
            raise ValueError("RepulsiveSelfAttention particles live on the circle or a sphere, got domain "
                             "'euclidean'; use Attention(beta, V=-np.eye(d), projection=False) for R^d")

    def particle_velocity(self, geometry: Any, weights: np.ndarray, frequencies: np.ndarray | None, *,
                          path: str = "auto", accuracy: float = 1e-10, block_elements: int = BLOCK_ELEMENTS) -> _Reversed:
        """-X of :meth:`SelfAttention.particle_velocity` on the same path."""
        return _Reversed(super().particle_velocity(geometry, weights, frequencies, path=path, accuracy=accuracy,
                                                   block_elements=block_elements))

    def density_free_energy(self, domain: Any, values: np.ndarray) -> np.ndarray:
        """F = E_β + σ ∫ ρ log ρ dσ: the repulsive USA flow is its W₂ gradient flow, F non-increasing."""
        return self.density_energy(domain, values) + self.noise * entropy(domain, values)

    def ensemble_kernel(self, geometry: Any) -> None:
        """None: the compiled per-system kernels integrate the attractive sign only."""
        return None

    def concentrates(self, velocity: ConvolutionVelocity) -> bool:
        """False: the repulsion spreads the density towards the uniform measure."""
        return False

    def density_velocity(self, domain: Any, values: np.ndarray, frequencies: Any) -> np.ndarray:
        """-X of the attractive model at the nodes (its circle path reads :meth:`velocity_spec`, which is
        turned here already, so the attractive model is asked, not ``super()``)."""
        attractive = SelfAttention(self.beta, self.normalized, self.noise)
        return -attractive.density_velocity(domain, values, frequencies)

    def growth_rate(self, degree: int | np.ndarray, d: int = 2) -> np.ndarray:
        """Linear rate of a degree-l perturbation of the uniform measure, every one negative for l ≥ 1:

        USA λ_l = -l(l+d-2) (c_l(β)/(β|S^{d-1}|) + σ),  SA λ_l = -l(l+d-2) (c_l(β)/(β c_0(β)) + σ),

        the rates of :meth:`SelfAttention.growth_rate` with the interaction's sign turned (c_l(β) > 0, the
        Funk–Hecke multipliers of e^{βt}).
        """
        ell = as_degrees(degree, d)
        lap = ell * (ell + d - 2)
        attractive = SelfAttention(self.beta, self.normalized, 0.0).growth_rate(ell, d)
        return -attractive - lap * self.noise

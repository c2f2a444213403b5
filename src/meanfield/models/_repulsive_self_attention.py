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


@dataclass(frozen=True, repr=False)
class RepulsiveSelfAttention(SelfAttention):
    r"""Self-attention with V = -I on S^{d-1} (paper 2, §9.1):

        ∂_t μ + div(X[μ] μ) = σ Δμ,
        USA: X[μ](x) = -P⊥_x ∫ e^{β<x,y>} y dμ(y)           = -∇(𝖦_β ⋆ μ)(x),  𝖦_β(t) = e^{βt}/β,
        SA:  X[μ](x) = -P⊥_x ∫ e^{β<x,y>} y dμ(y) / Z_μ(x),  Z_μ(x) = ∫ e^{β<x,y>} dμ(y).

    USA is the gradient flow of E_β[μ] = (1/2β) ∬ e^{β<x,y>} dμ dμ in W₂ turned downhill:
    dE_β/dt = -∫ |X|² dμ - σ ∫ ∇(𝖦_β ⋆ μ)·∇μ ≤ 0 at σ = 0; for SA, dE_β/dt = -∫ Z_μ |X|² dμ
    at σ = 0 (paper 2, (3.6) with V = -I). Every mode of the uniform measure decays (see
    :meth:`growth_rate`). Parameters as :class:`~meanfield.SelfAttention`; the compiled ensemble
    kernels are attractive only, so particles take the direct or NUFFT sums.

    Parameters
    ----------
    beta : float
        Inverse temperature β ≥ 0.
    normalized : bool
        True for SA (softmax normalisation by Z_μ), False for USA.
    noise : float
        Diffusion coefficient σ ≥ 0 of the term σΔμ (particles: dX = … + √(2σ) dB).
    graph : Graph, scipy.sparse matrix, array_like (n, n) or networkx graph, optional
        Attention restricted to edges, as for :class:`~meanfield.SelfAttention` (particles only), with
        the velocity's sign turned.
    time : {"t", "rescaled"}
        As for :class:`~meanfield.SelfAttention`: "rescaled" (USA) runs in s = e^β t, velocity
        -P⊥_x ∫ e^{β(<x,y>-1)} y dμ(y), any β.

    Raises
    ------
    ValueError
        β < 0 or not finite, σ < 0, or a graph SA cannot restrict to (negative weights, isolated nodes).
    TypeError
        ``normalized`` not a bool.

    Notes
    -----
    The velocity is minus that of :class:`~meanfield.SelfAttention`, with the same weights and Z_μ:

    .. math::

        \mathcal{X}_{\mathrm{USA}}[\mu](x) = -\mathsf{P}^\perp_x \int e^{\beta\langle x, y\rangle}\, y\,\mathrm{d}\mu(y)
        = -\nabla(\mathsf{G}_\beta * \mu)(x), \qquad
        \mathcal{X}_{\mathrm{SA}}[\mu](x) = -\frac{1}{Z_\mu(x)}\, \mathsf{P}^\perp_x
        \int e^{\beta\langle x, y\rangle}\, y\,\mathrm{d}\mu(y).

    For β > 0 the uniform measure is the unique minimiser of E_β over P(S^{d-1}) (paper 2, Proposition
    3.4; at β = 0 every measure with ∫ y dμ = 0 is), and about it every degree l ≥ 1 decays
    (:meth:`growth_rate`):

    .. math::

        \lambda_l^{\mathrm{USA}} = -l(l+d-2)\Big(\frac{c_l(\beta)}{\beta\,\lvert\mathbb{S}^{d-1}\rvert} + \sigma\Big),
        \qquad
        \lambda_l^{\mathrm{SA}} = -l(l+d-2)\Big(\frac{c_l(\beta)}{\beta\, c_0(\beta)} + \sigma\Big),

    on S¹: λ_k = -k² I_k(β)/β - σk² (USA).

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> from scipy.special import iv
    >>> model = mf.RepulsiveSelfAttention(4.0, normalized=False)
    >>> model.name
    'USA-repulsive'
    >>> # mode k = 3 about the uniform measure on S¹ decays at -k² I_k(β)/β
    >>> print(f"{float(model.growth_rate(3)):.6f} {-9 * iv(3, 4.0) / 4.0:.6f}")
    -7.508871 -7.508871
    >>> # the uniform measure has the least energy: I_0(β)/(2β) below a von Mises density's
    >>> circle = mf.Circle(64)
    >>> e_uniform = mf.energy(model, mf.uniform(circle))
    >>> e_vm = mf.energy(model, mf.von_mises(circle, kappa=1.0))
    >>> print(f"{e_uniform:.6f} {iv(0, 4.0) / 8.0:.6f} {e_uniform < e_vm}")
    1.412740 1.412740 True
    >>> # particles at θ = 0 and π/2 move apart: θ̇_1 = -(1/2) e^{β cos(π/2)} sin(π/2)
    >>> print(model.velocity(np.array([0.0, np.pi / 2])))
    [-0.5  0.5]
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
        """F = E + σ ∫ ρ log ρ dσ: the repulsive USA flow is its W₂ gradient flow, F non-increasing; E is the energy
        of the flow, E_β in t and e^{-β}E_β in s = e^β t."""
        return self.density_energy_forms(domain, values)[0] + self.noise * entropy(domain, values)

    def ensemble_kernel(self, geometry: Any) -> None:
        """None: the compiled per-system kernels integrate the attractive sign only."""
        return None

    def concentrates(self, velocity: ConvolutionVelocity) -> bool:
        """False: the repulsion spreads the density towards the uniform measure."""
        return False

    def density_velocity(self, domain: Any, values: np.ndarray, frequencies: Any) -> np.ndarray:
        """-X of the attractive model at the nodes (its circle path reads :meth:`velocity_spec`, which is
        turned here already, so the attractive model is asked, not ``super()``). Refused on a graph, like
        :meth:`SelfAttention.density_velocity`: a graph's tokens have no density PDE here."""
        self._no_graph_pde()
        attractive = SelfAttention(self.beta, self.normalized, self.noise, time=self.time)
        return -attractive.density_velocity(domain, values, frequencies)

    def growth_rate(self, degree: int | np.ndarray, d: int = 2) -> np.ndarray:
        """Linear rate of a degree-l perturbation of the uniform measure, every one negative for l ≥ 1:

        USA λ_l = -l(l+d-2) (c_l(β)/(β|S^{d-1}|) + σ),  SA λ_l = -l(l+d-2) (c_l(β)/(β c_0(β)) + σ),

        the rates of :meth:`SelfAttention.growth_rate` with the interaction's sign turned (c_l(β) > 0, the
        Funk–Hecke multipliers of e^{βt}).
        """
        ell = as_degrees(degree, d)
        lap = ell * (ell + d - 2)
        attractive = SelfAttention(self.beta, self.normalized, 0.0, time=self.time).growth_rate(ell, d)
        return -attractive - lap * self.noise

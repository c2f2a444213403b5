"""Self-attention with Q = K = V = I on S¹ and S^{d-1}: its velocity for particles and for the PDE,
its energy, its linear growth rates (the model protocol: :mod:`meanfield.models._model`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from solvers import ConvolutionVelocity, sphere_area

from ..domains._circle import Circle
from ..domains._zonal import ZonalSphere
from ..domains._funk_hecke import scaled_funk_hecke, scaled_funk_hecke_over_beta
from ..domains._geometry import CircleGeometry, EuclideanGeometry
from .._validate import as_degrees, check_beta, check_nonnegative
from ._attention import softmax_attention
from ._attention_weights import (check_time, check_unnormalized_beta, energy_forms, interaction_energy,
                                 rescaled_time_coordinates, velocity_factor)
from ._compiled_kernels import kernel_sums
from ._edge_attention import EdgeSelfAttention, edge_energy_sums
from ._energy import double_integral, entropy
from ._graph import model_repr, read_graph
from ._model import Model
from ._self_attention_sums import BLOCK_ELEMENTS, DirectSelfAttention, NufftSelfAttention, fourier_kernel_sums

__all__ = ["NUFFT_MIN_PARTICLES", "PARTICLE_PATHS", "SelfAttention"]

#: below this many particles per system the direct O(n²) sum beats the NUFFT path on S¹
#: (benchmarks/bench_particles_nufft.py)
NUFFT_MIN_PARTICLES = 256
#: how particle velocities may be summed ("ensemble": the compiled per-system kernels of
#: :mod:`meanfield.particles._ensemble`, chosen by simulate)
PARTICLE_PATHS = ("auto", "direct", "nufft", "ensemble")


@dataclass(frozen=True)
class SelfAttention(Model):
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
    graph : Graph, scipy.sparse matrix, array_like (n, n) or networkx graph, optional
        Attention restricted to edges (None: every pair): with the coupling operator
        B_ij = A_ij w_j / c_i of the graph (:mod:`meanfield.models._graph`),
        N_i = Σ_j B_ij a_ij x_j, D_i = Σ_j B_ij a_ij, SA ẋ_i = P⊥ N_i/D_i (the softmax over i's edges; c_i
        cancels), USA ẋ_i = e^β P⊥ N_i (normalised by n or by the degree). Summed over the edges in
        O(entries · d) (:mod:`meanfield.models._edge_attention`); particles only (no density PDE). SA needs
        non-negative weights and no isolated node.
    time : {"t", "rescaled"}
        The time variable the model runs in. "t" (default): the time of the equation above. "rescaled" (USA
        only): s = e^β t, in which the velocity is e^{-β} X,

            USA in s:  ∂_s μ + div(X̃[μ] μ) = σ Δμ,   X̃[μ](x) = P⊥_x ∫ e^{β(<x,y>-1)} y dμ(y),

        finite for every β, where USA in t is refused beyond β = 709.78 (e^β overflows a double). ``noise`` σ is
        the coefficient of Δμ in s (the model in t with noise σ e^β). Results carry the attr ``time = "rescaled"``,
        their ``time`` coordinate is s and ``log_time`` = log s - β = log t beside it; their ``energy`` is that of
        the flow in s, e^{-β}E_β (dE/ds = ∫ |X̃|² dμ at σ = 0), and ``log_energy`` is log E_β. :func:`energy`
        gives E_β of a state whatever the time.

    Raises
    ------
    ValueError
        β < 0 or not finite, σ < 0, a graph SA cannot restrict to (negative weights, isolated nodes), ``time``
        not "t" or "rescaled", or "rescaled" with SA.
    TypeError
        ``normalized`` not a bool.

    Notes
    -----
    The velocity fields (paper 2, (3.2) for SA, (3.8)–(3.10) for USA), with P⊥_x = I - x xᵀ:

    .. math::

        \partial_t \mu + \operatorname{div}(\mathcal{X}[\mu]\,\mu) = \sigma \Delta \mu, \qquad
        \mathcal{X}_{\mathrm{USA}}[\mu](x) = \mathsf{P}^\perp_x \int e^{\beta\langle x, y\rangle}\, y\,\mathrm{d}\mu(y)
        = \nabla(\mathsf{G}_\beta * \mu)(x), \quad \mathsf{G}_\beta(t) = \frac{e^{\beta t}}{\beta},

    .. math::

        \mathcal{X}_{\mathrm{SA}}[\mu](x) = \frac{1}{Z_\mu(x)}\, \mathsf{P}^\perp_x \int e^{\beta\langle x, y\rangle}\,
        y\,\mathrm{d}\mu(y), \qquad Z_\mu(x) = \int e^{\beta\langle x, y\rangle}\,\mathrm{d}\mu(y).

    The interaction energy (3.5), E_β[μ] = (1/2β) ∬ e^{β<x,y>} dμ dμ (E_0 = |m|²/2), increases along
    both flows at σ = 0: USA dE_β/dt = ∫ |X[μ]|² dμ (Lemma 3.7), SA dE_β/dt = ∫ |X[μ]|² Z_μ dμ (3.6):

    .. math::

        \mathsf{E}_\beta[\mu] = \frac{1}{2\beta} \iint e^{\beta\langle x, y\rangle}\,\mathrm{d}\mu(x)\,\mathrm{d}\mu(y).

    About the uniform measure the degree-l mode grows at (:meth:`growth_rate`), with the Funk–Hecke
    multipliers c_l(β) = (2π)^{d/2} β^{1-d/2} I_{l+d/2-1}(β) of e^{β<x,y>},

        USA λ_l = l(l+d-2) (c_l(β)/(β |S^{d-1}|) - σ),   SA λ_l = l(l+d-2) (c_l(β)/(β c_0(β)) - σ),

    .. math::

        \lambda_l^{\mathrm{USA}} = l(l+d-2)\Big(\frac{c_l(\beta)}{\beta\,\lvert\mathbb{S}^{d-1}\rvert} - \sigma\Big),
        \qquad
        \lambda_l^{\mathrm{SA}} = l(l+d-2)\Big(\frac{c_l(\beta)}{\beta\, c_0(\beta)} - \sigma\Big),

    on S¹ (d = 2): λ_k = k² I_k(β)/β - σk² (USA) and k² I_k(β)/(β I_0(β)) - σk² (SA).

    In the rescaled time s = e^β t (``time="rescaled"``, USA) the velocity is e^{-β} times that of t, the
    potential e^{-β}𝖦_β, the rates per unit s l(l+d-2) (e^{-β} c_l(β)/(β |S^{d-1}|) - σ):

    .. math::

        \partial_s \mu + \operatorname{div}(\tilde{\mathcal{X}}[\mu]\,\mu) = \sigma \Delta \mu, \qquad
        \tilde{\mathcal{X}}[\mu](x) = e^{-\beta}\mathcal{X}_{\mathrm{USA}}[\mu](x)
        = \mathsf{P}^\perp_x \int e^{\beta(\langle x, y\rangle - 1)}\, y\,\mathrm{d}\mu(y).

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> from scipy.special import iv
    >>> usa = mf.SelfAttention(4.0, normalized=False)
    >>> usa.name
    'USA'
    >>> # growth rate of mode k = 3 about the uniform measure on S¹: k² I_k(β)/β
    >>> print(f"{float(usa.growth_rate(3)):.6f} {9 * iv(3, 4.0) / 4.0:.6f}")
    7.508871 7.508871
    >>> # E_β of the uniform measure on S¹ is I_0(β)/(2β)
    >>> print(f"{mf.energy(usa, mf.uniform(mf.Circle(64))):.6f} {iv(0, 4.0) / 8.0:.6f}")
    1.412740 1.412740
    >>> # two particles at θ = 0 and π/2 (7.1): θ̇_1 = (1/2) e^{β cos(π/2)} sin(π/2) = 1/2
    >>> print(mf.SelfAttention(1.0, normalized=False).velocity(np.array([0.0, np.pi / 2])))
    [ 0.5 -0.5]
    >>> # at β = 800 USA runs in s = e^β t: particles at 0 and φ = 0.1 move by dθ_1/ds = (1/2) e^{β(cos φ - 1)} sin φ
    >>> usa = mf.SelfAttention(800.0, normalized=False, time="rescaled")
    >>> rate = usa.velocity(np.array([0.0, 0.1]))[0]
    >>> print(f"{rate:.9e} {0.5 * np.exp(800 * (np.cos(0.1) - 1)) * np.sin(0.1):.9e}")
    9.173079913e-04 9.173079913e-04
    """

    beta: float
    normalized: bool = True
    noise: float = 0.0
    graph: Any = field(default=None, repr=False)
    time: str = field(default="t", repr=False)

    def __repr__(self) -> str:
        text = model_repr(self)
        return text if self.time == "t" else f"{text[:-1]}, time={self.time!r})"

    def __post_init__(self) -> None:
        object.__setattr__(self, "beta", check_beta(self.beta))
        object.__setattr__(self, "noise", check_nonnegative("noise", self.noise))
        if not isinstance(self.normalized, (bool, np.bool_)):
            raise TypeError(f"normalized must be True (SA) or False (USA), got {self.normalized!r}")
        check_time(self.time, bool(self.normalized))
        if self.graph is not None:
            graph = read_graph(self.graph)
            if self.normalized and graph.signed:
                raise ValueError("graph: the softmax of SA over a node's edges needs non-negative weights; signed "
                                 "graphs go with normalized=False (USA)")
            if self.normalized and graph.isolated.size:
                raise ValueError(f"graph has isolated nodes {graph.isolated[:8].tolist()}: the softmax of SA over a "
                                 f"node's edges needs at least one edge per node")
            object.__setattr__(self, "graph", graph)

    @property
    def name(self) -> str:
        """"SA" or "USA"."""
        return "SA" if self.normalized else "USA"

    @property
    def attrs(self) -> dict[str, Any]:
        """Parameters for a result's attrs."""
        attrs = {"model": self.name, "beta": self.beta, "noise": self.noise, "normalized": int(self.normalized)}
        if self.time != "t":
            attrs["time"] = self.time
        return attrs if self.graph is None else {**attrs, **self.graph.attrs}

    def time_coordinates(self, times: np.ndarray) -> dict[str, Any]:
        """``time`` (t, or s = e^β t in the rescaled time, with ``log_time`` = log s - β beside it)."""
        if self.time == "t":
            return super().time_coordinates(times)
        return rescaled_time_coordinates(times, self.beta)

    @property
    def _factor(self) -> float:
        """The factor f of the shifted sums in the velocity: 1 (SA), e^β (USA in t), 1 (USA in s = e^β t)."""
        return velocity_factor(self.beta, self.normalized, self.time)

    def potential_multipliers(self, degrees: np.ndarray, d: int) -> np.ndarray:
        """Funk–Hecke multipliers of the energy kernel 𝖦_β(<x,y>) = e^{β<x,y>}/β for degrees l ≥ 1
        (0 at l = 0; β → 0 limit included): c_l(β)/β, the scaled e^{-β} c_l(β)/β times the USA
        factor e^β (:func:`meanfield.models._attention_weights.velocity_factor`), X_USA = ∇(𝖦_β ⋆ μ); in the
        rescaled time those of e^{-β}𝖦_β, X̃ = ∇(e^{-β}𝖦_β ⋆ μ)."""
        return scaled_funk_hecke_over_beta(degrees, self.beta, d) * velocity_factor(self.beta, False, self.time)

    def velocity_spec(self, d: int) -> ConvolutionVelocity:
        """Velocity as X = ∇(A ⋆ μ)/(B ⋆ μ) with Funk–Hecke (d ≥ 3) or Fourier (d = 2) multipliers.

        On S¹ the multipliers are those of θ-derivatives: A ↦ ik · 2π Î_k, so
        that X = A ⋆ μ / (B ⋆ μ) directly. A and B are the multipliers of the
        shifted weights e^{β(<x,y>-1)}, e^{-β} c_l(β)/β and e^{-β} c_l(β); the
        SA/USA rule of :mod:`meanfield.models._attention_weights` divides by
        B ⋆ μ (SA) or multiplies A by e^β (USA in t; by 1 in s = e^β t, :func:`velocity_factor`).
        """
        beta = self.beta
        scale = self._factor

        def potential(ell: np.ndarray) -> np.ndarray:
            return scale * scaled_funk_hecke_over_beta(ell, beta, d)

        if d == 2:

            def numerator(k: np.ndarray) -> np.ndarray:
                return 1j * k * potential(k)

        else:
            numerator = potential
        denominator = (lambda ell: scaled_funk_hecke(ell, beta, d)) if self.normalized else None
        return ConvolutionVelocity(numerator=numerator, denominator=denominator)

    # ------------------------------------------------------------------ particles
    def check_particles(self, geometry: Any) -> None:
        """Particles on S¹ or S^{d-1}; R^d is refused (use :class:`Attention` with ``projection=False``)."""
        if isinstance(geometry, EuclideanGeometry):
            raise ValueError("SelfAttention particles live on the circle or a sphere, got domain 'euclidean'; "
                             "use Attention(projection=False) for R^d")

    def particle_velocity(self, geometry: Any, weights: np.ndarray, frequencies: np.ndarray | None, *,
                          path: str = "auto", accuracy: float = 1e-10,
                          block_elements: int = BLOCK_ELEMENTS
                          ) -> DirectSelfAttention | NufftSelfAttention | EdgeSelfAttention:
        """Blocked BLAS sums ("direct"), or on S¹ the NUFFT path ("nufft"; "auto" takes it from
        :data:`NUFFT_MIN_PARTICLES` particles per system on), of :mod:`._self_attention_sums`; on a graph sums over
        the edges (:class:`EdgeSelfAttention`, path "edges"; "auto" or "direct" ask for it)."""
        check_unnormalized_beta(self.beta, self.normalized, self.time)
        if path not in PARTICLE_PATHS:
            raise ValueError(f"path={path!r} is not available for {self.name}; its paths are {PARTICLE_PATHS}")
        angles = isinstance(geometry, CircleGeometry)
        if self.graph is not None:
            if path not in ("auto", "direct"):
                raise ValueError(f"path={path!r} is not available for {self.name} on a graph, whose velocity is "
                                 f"summed over the edges; use path='auto'")
            self.graph.check_nodes(weights.shape[-1])
            return EdgeSelfAttention(self.beta, self.normalized, self.graph.operator(weights), angles,
                                     time=self.time)
        if path == "nufft" and not angles:
            raise ValueError(f"path='nufft' is available for SelfAttention on the circle only, got {self.name} "
                             f"on a {geometry.name!r} domain")
        if angles and (path == "nufft" or (path == "auto" and weights.shape[1] >= NUFFT_MIN_PARTICLES)):
            return NufftSelfAttention(self.beta, self.normalized, weights, accuracy, time=self.time)
        return DirectSelfAttention(self.beta, self.normalized, weights, angles, block_elements, time=self.time)

    def attention_matrix(self, points: np.ndarray, head: int = 0, t: float = 0.0) -> np.ndarray:
        """P_ij = e^{β<x_i, x_j>} / Σ_l e^{β<x_i, x_l>} of points (systems, n, d); on a graph the softmax over each
        node's edges, P_ij ∝ A_ij e^{β<x_i, x_j>}."""
        mask = None if self.graph is None else self.graph.adjacency.toarray()
        return softmax_attention(points, points, self.beta * np.eye(points.shape[-1]), mask=mask)

    def ensemble_kernel(self, geometry: Any) -> tuple[float, bool, str] | None:
        """(β, normalized, time): the compiled per-system kernels apply on S¹ and S^{d-1} without noise and without
        a graph."""
        if self.noise > 0 or isinstance(geometry, EuclideanGeometry) or self.graph is not None:
            return None
        check_unnormalized_beta(self.beta, self.normalized, self.time)
        return self.beta, self.normalized, self.time

    # ------------------------------------------------------------------ energy
    @property
    def has_energy(self) -> bool:
        """E_β of (3.5); on a graph E_β = e^β/(2β) Σ_ij w_i w_j A_ij e^{β(<x_i,x_j>-1)} when the graph is undirected
        and normalised by n."""
        return self.graph is None or (self.graph.symmetric and self.graph.normalization == "n")

    def energy_kernel(self, d: int) -> tuple[Any, float]:
        """Scaled Funk–Hecke multipliers G̃_l = e^{-β} c_l(β)/β of the potential 𝖦_β(t) = e^{βt}/β (the l = 0 term
        only for β > 0) and the log of their scale s = β, so that E = e^s (1/2) ∫ ρ (G̃ ⋆ ρ) dσ and β up to
        several hundred neither overflows the multipliers nor turns e^β · 0 into NaN; the gradient of
        𝖦_β ⋆ ρ is the USA velocity."""
        beta = self.beta

        def multipliers(ell: np.ndarray) -> np.ndarray:
            ell = np.asarray(ell)
            out = scaled_funk_hecke_over_beta(ell, beta, d)
            if beta > 0:
                with np.errstate(over="ignore"):
                    out = np.where(ell == 0, scaled_funk_hecke(0, beta, d) / beta, out)
            return out

        return multipliers, beta

    @property
    def has_energy_forms(self) -> bool:
        """E_β = e^β S/(2β) is also reported as e^{-β}E_β = S/(2β) and log E_β, finite for every β
        (:func:`meanfield.models._attention_weights.energy_forms`)."""
        return self.has_energy

    @property
    def energy_description(self) -> str:
        """E_β, or in the rescaled time e^{-β}E_β, the energy of the flow in s."""
        if self.time == "t":
            return "interaction energy E_β"
        return ("normalised interaction energy e^(-beta) E_beta, the energy of the flow in the rescaled time "
                "s = e^beta t (E_beta itself: log_energy)")

    def _recorded_forms(self, total: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(E, e^{-β}E_β, log E_β) from S = ∬ e^{β(<x,y>-1)} dμ dμ, E the energy of the flow a result records:
        E_β in t, e^{-β}E_β in s = e^β t (finite for every β)."""
        energy, normalized, log = energy_forms(self.beta, total)
        return (energy if self.time == "t" else normalized), normalized, log

    def particle_energy(self, states: np.ndarray, weights: np.ndarray, geometry: Any,
                        accuracy: float | None = None) -> np.ndarray:
        """E_β = e^β/(2β) Σ_ij w_i w_j e^{β(<x_i,x_j>-1)} per system, each pair once, in parallel over systems
        (:func:`kernel_sums`); on S¹ with ``accuracy`` the Fourier sum of the NUFFT path
        (:func:`fourier_kernel_sums`, relative error ≤ ``accuracy``, O(n)). E_0 = |m|²/2."""
        return interaction_energy(self.beta, self._particle_kernel_integral(states, weights, geometry, accuracy))

    def particle_energy_forms(self, states: np.ndarray, weights: np.ndarray, geometry: Any,
                              accuracy: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(E, e^{-β}E_β, log E_β) per system from the sums of :meth:`particle_energy`, computed once; E is E_β, or
        e^{-β}E_β in the rescaled time (:meth:`energy_description`)."""
        return self._recorded_forms(self._particle_kernel_integral(states, weights, geometry, accuracy))

    def _particle_kernel_integral(self, states: np.ndarray, weights: np.ndarray, geometry: Any,
                                  accuracy: float | None) -> np.ndarray:
        """S = Σ_ij w_i w_j e^{β(<x_i,x_j>-1)} per system (|m|² at β = 0), on a graph with A_ij."""
        beta = self.beta
        angles = isinstance(geometry, CircleGeometry)
        if self.graph is not None:
            if not self.has_energy:
                raise ValueError(f"{self.name} on the graph {self.graph.name!r} has an interaction energy only when the "
                                 f"graph is undirected and normalised by n")
            self.graph.check_nodes(weights.shape[-1], "states")
            adjacency = self.graph.operator(weights)  # A diag(w): normalisation "n"
            return edge_energy_sums(adjacency, geometry.embed(states), weights, beta)
        if beta == 0:
            m = np.einsum("sn,snd->sd", weights, geometry.embed(states))
            return np.sum(m * m, axis=-1)
        if angles and accuracy is not None:
            return fourier_kernel_sums(states, weights, float(beta), accuracy)
        stack = states[..., None] if angles else states
        return kernel_sums(np.ascontiguousarray(stack, dtype=float), np.ascontiguousarray(weights, dtype=float),
                           angles, float(beta))

    def density_energy(self, domain: Any, values: np.ndarray) -> np.ndarray:
        """E_β = e^β/(2β) ∫ ρ (a_β ⋆ ρ) dσ with the Funk–Hecke multipliers e^{-β} c_l(β) of
        a_β(t) = e^{β(t-1)} (at β = 0 the kernel t, multiplier |S^{d-1}|/d at l = 1, E_0 = |m|²/2); an energy
        beyond the largest double (β ≳ 700, or β below ~1e-300) is inf with a logged warning
        (:func:`interaction_energy`)."""
        return interaction_energy(self.beta, self._density_kernel_integral(domain, values))

    def density_energy_forms(self, domain: Any, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(E, e^{-β}E_β, log E_β) of node values from the integral of :meth:`density_energy`, computed once; E as
        in :meth:`particle_energy_forms`."""
        return self._recorded_forms(self._density_kernel_integral(domain, values))

    def _density_kernel_integral(self, domain: Any, values: np.ndarray) -> np.ndarray:
        """S = ∫ ρ (a_β ⋆ ρ) dσ (|m|² at β = 0) by the domain's quadrature."""
        self._no_graph_pde()
        beta, d = self.beta, domain.dimension
        scaled = scaled_funk_hecke if beta > 0 else scaled_funk_hecke_over_beta  # a_β, or t at β = 0
        return double_integral(domain, values, lambda ell: scaled(ell, beta, d))

    @property
    def has_free_energy(self) -> bool:
        """USA with noise: the W₂ gradient flow of F = -E_β + σ ∫ρ log ρ (paper 2, §3; DESIGN.md §2)."""
        return self.noise > 0 and not self.normalized

    def density_free_energy(self, domain: Any, values: np.ndarray) -> np.ndarray:
        """F = -E + σ ∫ ρ log ρ dσ, non-increasing for USA; E is the energy of the flow, E_β in t and e^{-β}E_β in
        s = e^β t (:meth:`density_energy_forms`)."""
        return -self.density_energy_forms(domain, values)[0] + self.noise * entropy(domain, values)

    # ------------------------------------------------------------------ the PDE
    def _no_graph_pde(self) -> None:
        if self.graph is not None:
            raise TypeError(f"{self.name} on the graph {self.graph.name!r} has no density PDE in meanfield: its "
                            f"particles are simulated by mf.simulate")

    def grid_velocity(self, domain: Any, frequency_nodes: int | None = None) -> ConvolutionVelocity:
        """:meth:`velocity_spec` of the domain's dimension (one species); USA in t with β > 709.78 is refused by
        name (its multipliers carry e^β)."""
        self._no_graph_pde()
        check_unnormalized_beta(self.beta, self.normalized, self.time)
        return self.velocity_spec(domain.dimension)

    def density_velocity(self, domain: Any, values: np.ndarray, frequencies: Any) -> np.ndarray:
        """X at the nodes of the quadrature measure Σ_j ρ_j w_j δ_{x_j}: on S¹ by FFT from the multipliers of
        :meth:`velocity_spec` (angular velocity dθ/dt), elsewhere by blocked direct sums (tangent vectors in
        R^d, bounded memory). A density on a :class:`ZonalSphere` is refused: its nodes stand for whole
        parallels of S^{d-1}, not points, so a direct sum over them is not X."""
        self._no_graph_pde()
        check_unnormalized_beta(self.beta, self.normalized, self.time)
        if isinstance(domain, ZonalSphere):
            raise ValueError(f"the velocity at the nodes of a density on {domain!r} is not computed (each node "
                             "stands for a parallel of S^(d-1), not a point); mf.solve moves zonal densities, and "
                             "mf.simulate moves particles on S^(d-1)")
        if isinstance(domain, Circle):
            spec = self.velocity_spec(2)
            numerator = domain.convolve(values, spec.numerator)
            return numerator if spec.denominator is None else numerator / domain.convolve(values, spec.denominator)
        points = domain.points.reshape(1, -1, domain.points.shape[-1])
        weights = (values * domain.weights).reshape(1, -1)
        field = DirectSelfAttention(self.beta, self.normalized, weights, False, time=self.time)(0.0, points)
        return field.reshape(*domain.shape, -1)

    def growth_rate(self, degree: int | np.ndarray, d: int = 2) -> np.ndarray:
        """Linear growth rate of a degree-l perturbation of the uniform measure (linearised (SA)/(USA) of paper 2, arXiv:2312.10794, with the Funk–Hecke multipliers c_l(β)):

        USA λ_l = l(l+d-2) (c_l(β)/(β|S^{d-1}|) - σ),  SA λ_l = l(l+d-2) (c_l(β)/(β c_0(β)) - σ);

        per unit of the rescaled time s = e^β t, USA λ_l = l(l+d-2) (e^{-β} c_l(β)/(β|S^{d-1}|) - σ).
        """
        ell = as_degrees(degree, d)
        lap = ell * (ell + d - 2)
        c_over_beta = scaled_funk_hecke_over_beta(ell, self.beta, d)
        if self.normalized:
            ratio = c_over_beta / scaled_funk_hecke(0, self.beta, d)
        else:
            ratio = c_over_beta * self._factor / sphere_area(d)
        return lap * (ratio - self.noise)

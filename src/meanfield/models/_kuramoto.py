"""Kuramoto-type angular models on S¹: oscillators with natural frequencies and a Fourier interaction, their
velocity for particles and for the PDE on (θ, ω), their energy (the model protocol: :mod:`meanfield.models._model`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.stats

from solvers import ConvolutionVelocity

from ..domains._circle import Circle
from ..domains._geometry import CircleGeometry
from .._validate import as_real_array, check_nonnegative
from ._energy import double_integral
from ._frequency_laws import DiscreteLaw, describe_law, is_identical, law_poles, read_frequency_law
from ._graph import model_repr, read_graph
from ._graph_operator import CouplingOperator
from ._kuramoto_moments import KuramotoVelocity, fourier_moments
from ._model import DEFAULT_FREQUENCY_NODES, Model
from ._network_kuramoto import NetworkKuramotoVelocity, coupling_derivative, network_energy, network_jacobian

__all__ = ["FREQUENCY_RULES", "Kuramoto"]

#: how simulate draws the natural frequencies of Kuramoto particles from the law
FREQUENCY_RULES = ("quantile", "iid")


@dataclass(frozen=True)
class Kuramoto(Model):
    r"""Kuramoto-type dynamics on S¹ (paper 2, (7.2), (7.5)):

        θ̇_i = ω_i + (K/n) Σ_j h(θ_j - θ_i - α),     ∂_t ρ_ω + ∂_θ(ρ_ω X_ω) = σ ∂²_θ ρ_ω,
        X_ω(θ) = ω + K ∫∫ h(φ - θ - α) ρ_{ω'}(φ) g(ω') dφ dω'.

    The interaction h(u) = Σ_{|k| ≤ K} ĥ_k e^{iku} is given by its Fourier
    coefficients ĥ_0, …, ĥ_K (h real: ĥ_{-k} = conj ĥ_k); the default h = sin
    (ĥ_1 = -i/2) is Kuramoto's model, h(u) = e^{β cos u} sin u is USA. The phase
    lag α shifts it: the coupling function is h(u - α), with coefficients
    ĥ_k e^{-ikα} (:attr:`coefficients`); h = sin with α is Kuramoto–Sakaguchi
    (:meth:`sakaguchi`), a sum of sines Daido's harmonics (:meth:`harmonics`).

    On a graph (``graph=``) the sum runs over the edges of each node, normalised by n or by the degree
    (:mod:`meanfield.models._graph`): θ̇_i = ω_i + (K/c_i) Σ_j A_ij w_j h(θ_j - θ_i - α), c_i = 1 or
    Σ_j |A_ij| w_j (w_j = 1/n). Its particles are summed over the edges in O(entries) per evaluation
    (:mod:`meanfield.models._network_kuramoto`); a graph has no density PDE here (its dense-graph limit is
    :class:`meanfield.GraphonKuramoto`).

    Parameters
    ----------
    coupling : float
        Coupling strength K ≥ 0.
    frequencies : None, float, scipy.stats frozen law or a law of :mod:`meanfield.models._frequency_laws`
        Law g of the natural frequencies: None or a number for identical
        oscillators (g = δ_ω), a continuous law (``scipy.stats.norm(0, s)``,
        ``scipy.stats.cauchy(0, γ)``, ``mf.LorentzianMixture``, ``mf.Mixture``,
        ``mf.bimodal_lorentzian(ω₀, Δ)``) or finitely many frequencies
        (``mf.DiscreteLaw(values, weights)``). The PDE discretises a continuous
        law by quadrature in ω (:meth:`frequency_quadrature`), or, for a law
        with poles (Lorentzians and their mixtures) and an interaction of one
        harmonic, represents it exactly by its poles (:meth:`velocity_spec`).
    noise : float
        Diffusion σ ≥ 0.
    interaction : array_like of complex, optional
        ĥ_0, …, ĥ_K of h; default sin.
    phase_lag : float
        α: the coupling function is h(u - α); default 0.
    graph : Graph, scipy.sparse matrix, array_like (n, n) or networkx graph, optional
        The coupling structure (None: all-to-all). A matrix or a networkx graph is read once as
        ``mf.Graph(graph)`` (normalisation "n"); pass a :class:`meanfield.Graph` to choose
        ``normalization="degree"`` or signed weights. Particles must be one per node.

    Raises
    ------
    ValueError
        K < 0 or σ < 0, interaction coefficients that are not a 1-D finite array of at least two
        entries or whose ĥ_0 is not real, a non-finite phase lag, a non-finite frequency or a law
        without a spread.
    TypeError
        An interaction given as a string, or frequencies that are not a law this model reads.

    Notes
    -----
    The particles and the density ρ_ω(θ) of the oscillators of frequency ω (paper 2, (7.2), (7.5)):

    .. math::

        \dot\theta_i = \omega_i + \frac{K}{n}\sum_{j=1}^n h(\theta_j - \theta_i - \alpha), \qquad
        h(u) = \sum_{\lvert k\rvert \le K_h} \hat h_k e^{iku},

    .. math::

        \partial_t \rho_\omega + \partial_\theta(\rho_\omega X_\omega) = \sigma\,\partial_\theta^2 \rho_\omega,
        \qquad
        X_\omega(\theta) = \omega + K \iint h(\varphi - \theta - \alpha)\, \rho_{\omega'}(\varphi)\, g(\omega')\,
        \mathrm{d}\varphi\, \mathrm{d}\omega'.

    For an odd coupling function h(· - α) the dynamics has the energy E = (1/2) ∬ G(θ - φ) dμ dμ with
    G' = h(-·), which is E = K |m|²/2, m = ∫ e^{iθ} dμ, for h = sin (paper 2, (7.3)).

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> from scipy.special import iv
    >>> model = mf.Kuramoto(coupling=2.0)                     # h = sin
    >>> theta = np.array([0.0, np.pi / 2])
    >>> print(model.velocity(theta))                          # (K/2) sin(±π/2)
    [ 1. -1.]
    >>> print(f"{mf.energy(model, theta):.6f}")              # K |m|²/2 with |m|² = 1/2
    0.500000
    >>> # at a von Mises density: X(θ) = -K r sin θ with r = I_1(κ)/I_0(κ)
    >>> rho = mf.von_mises(mf.Circle(64), kappa=1.0)
    >>> r = iv(1, 1.0) / iv(0, 1.0)
    >>> print(np.allclose(model.velocity(rho), -2.0 * r * np.sin(rho.domain.theta)))
    True
    >>> # h(u) = e^{β cos u} sin u, i.e. ĥ_k = -ik I_k(β)/β, is USA on S¹ (7.1)
    >>> k = np.arange(30)
    >>> usa_like = mf.Kuramoto(interaction=-1j * k * iv(k, 2.0) / 2.0)
    >>> x = np.array([0.0, 0.5, 2.0, 4.0])
    >>> print(np.allclose(usa_like.velocity(x), mf.SelfAttention(2.0, normalized=False).velocity(x)))
    True
    """

    coupling: float = 1.0
    frequencies: Any = None
    noise: float = 0.0
    interaction: np.ndarray = field(default_factory=lambda: np.array([0.0, -0.5j]))
    phase_lag: float = 0.0
    graph: Any = field(default=None, repr=False)

    def __repr__(self) -> str:
        return model_repr(self)

    @classmethod
    def sakaguchi(cls, coupling: float, phase_lag: float, frequencies: Any = None, noise: float = 0.0,
                  graph: Any = None) -> Kuramoto:
        """Kuramoto–Sakaguchi: θ̇_i = ω_i + (K/n) Σ_j sin(θ_j - θ_i - α) (Sakaguchi & Kuramoto 1986)."""
        return cls(coupling=coupling, frequencies=frequencies, noise=noise, phase_lag=phase_lag, graph=graph)

    @classmethod
    def harmonics(cls, coupling: float, amplitudes: Any, frequencies: Any = None, noise: float = 0.0,
                  phase_lag: float = 0.0, graph: Any = None) -> Kuramoto:
        """Daido-type coupling h(u) = Σ_{k ≥ 1} a_k sin(k u): ``amplitudes`` a_1, a_2, … (ĥ_k = -i a_k/2)."""
        a = np.atleast_1d(np.asarray(amplitudes, dtype=float))
        if a.ndim != 1 or a.size == 0 or not np.all(np.isfinite(a)):
            raise ValueError(f"amplitudes must be a non-empty 1-D sequence of finite a_1, a_2, …, got {amplitudes!r}")
        return cls(coupling=coupling, frequencies=frequencies, noise=noise, phase_lag=phase_lag,
                   interaction=np.concatenate([[0.0], -0.5j * a]), graph=graph)

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
        lag = self.phase_lag
        if isinstance(lag, bool) or not isinstance(lag, (int, float, np.integer, np.floating)) or not np.isfinite(lag):
            raise ValueError(f"phase_lag must be a finite angle α (radians), got {lag!r}")
        object.__setattr__(self, "phase_lag", float(lag))
        read_frequency_law(self.frequencies)
        if self.graph is not None:
            object.__setattr__(self, "graph", read_graph(self.graph))

    @property
    def coefficients(self) -> np.ndarray:
        """ĥ_k e^{-ikα}, k = 0, …, K: the Fourier coefficients of the coupling function h(u - α)."""
        return self.interaction * np.exp(-1j * np.arange(self.interaction.size) * self.phase_lag)

    def __eq__(self, other: object) -> bool:
        """Same coupling, noise, frequency law and interaction coefficients."""
        if not isinstance(other, Kuramoto):
            return NotImplemented
        return (self.coupling, self.noise, self.phase_lag, self.attrs["frequencies"], self.graph) == (
            other.coupling, other.noise, other.phase_lag, other.attrs["frequencies"], other.graph) and np.array_equal(
            self.interaction, other.interaction)

    def __hash__(self) -> int:
        return hash((self.coupling, self.noise, self.phase_lag, self.attrs["frequencies"], self.interaction.tobytes(),
                     self.graph))

    @property
    def name(self) -> str:
        return "Kuramoto"

    @property
    def attrs(self) -> dict[str, Any]:
        freq = self.frequencies
        law = "identical(0)" if freq is None else describe_law(freq)
        attrs = {
            "model": "Kuramoto",
            "coupling": self.coupling,
            "noise": self.noise,
            "frequencies": law,
            "interaction": repr(self.interaction.tolist()),
        }
        if self.phase_lag != 0:
            attrs["phase_lag"] = self.phase_lag
        if self.graph is not None:
            attrs.update(self.graph.attrs)
        return attrs

    def frequency_quadrature(self, n_nodes: int = DEFAULT_FREQUENCY_NODES) -> tuple[np.ndarray, np.ndarray]:
        """Nodes ω_m and weights w_m (Σ w_m = 1) discretising the frequency law.

        Identical oscillators: one node; a discrete law: its atoms (exact, for any
        ``n_nodes``). Normal law: Gauss–Hermite (exact for
        polynomials of degree < 2m in ω). Any other law: the midpoint rule in
        probability space, ω_j = F⁻¹((j + 1/2)/m), w_j = 1/m, which puts nodes
        where the mass is and keeps the extreme node at F⁻¹(1 - 1/2m) (for a
        Lorentzian of half-width γ, |ω| ≤ 2mγ/π), so heavy tails do not force
        tiny explicit time steps. Its error is O(m⁻²) for smooth integrands in
        u = F(ω) and O(m⁻¹) across the locked/drifting boundary of Kuramoto's
        stationary states.
        """
        freq = self.frequencies
        if is_identical(freq):
            return np.array([0.0 if freq is None else float(freq)]), np.ones(1)
        if isinstance(freq, DiscreteLaw):
            return freq.values.copy(), freq.weights.copy()
        if n_nodes < 1:
            raise ValueError(f"n_nodes must be >= 1, got {n_nodes}")
        if isinstance(getattr(freq, "dist", None), type(scipy.stats.norm)):
            x, w = np.polynomial.hermite_e.hermegauss(n_nodes)
            loc, scale = freq.mean(), freq.std()
            return loc + scale * x, w / w.sum()
        u = (np.arange(n_nodes) + 0.5) / n_nodes
        return freq.ppf(u), np.full(n_nodes, 1.0 / n_nodes)

    def interaction_multipliers(self, k: np.ndarray) -> np.ndarray:
        """Multipliers 2π K conj(ĥ_k e^{-ikα}) of K g, g(u) = h(-u - α), at wavenumbers k ≥ 0 (0 beyond K_h)."""
        k = np.asarray(k)
        out = np.zeros(k.shape, dtype=complex)
        coefficients = self.coefficients
        inside = k < coefficients.size
        out[inside] = 2 * np.pi * self.coupling * np.conj(coefficients[k[inside]])
        return out

    def velocity_spec(self, n_frequency_nodes: int | None = None) -> ConvolutionVelocity:
        """X_m = ω_m + K (g ⋆ ρ̄) with g(u) = h(-u - α): multiplier 2π K conj(ĥ_k e^{-ikα}).

        ``n_frequency_nodes`` nodes ω_m of :meth:`frequency_quadrature`, one species each. None: the law's
        exact form where there is one, else :data:`DEFAULT_FREQUENCY_NODES` nodes. A discrete law is exact on
        its atoms. The exact form of a Lorentzian law g(ω) = (γ/π)/((ω - c)² + γ²) with an interaction of one
        harmonic (:attr:`first_harmonic`) is one species of complex drift c - iγ: the θ-marginal
        ∫ ρ_ω g(ω) dω itself, whose Fourier coefficients ρ̂_k, k ≥ 1, are those of ρ_ω at the pole ω = c - iγ
        (the residue theorem; :class:`solvers.ConvolutionVelocity`), so that dρ̂_k/dt = -ik(c + Kĥ_0)ρ̂_k -
        kγρ̂_k + (transport by the first harmonic) - σk²ρ̂_k is exact in ω, with and without noise (Ott &
        Antonsen, Chaos 18 (2008) 037113; 19 (2009) 023117: their manifold ρ̂_k ∝ z^k is invariant under it).
        A mixture of Lorentzians is one species per pole, weighted by its p_m (:attr:`frequency_poles`).
        """
        if n_frequency_nodes is None:
            poles = self.frequency_poles
            if poles is not None and np.any(poles[0].imag > 0):
                return ConvolutionVelocity(numerator=self.interaction_multipliers, drift=np.conj(poles[0]),
                                           weights=poles[1])
            n_frequency_nodes = DEFAULT_FREQUENCY_NODES
        nodes, weights = self.frequency_quadrature(n_frequency_nodes)
        return ConvolutionVelocity(numerator=self.interaction_multipliers, drift=nodes, weights=weights)

    @property
    def frequency_poles(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(ζ_m, p_m) of the law (:func:`meanfield.models._frequency_laws.law_poles`: c_m + iγ_m of its
        Lorentzians, the atoms of a discrete law) when the interaction has one harmonic, for which the law's
        average is exact at the poles (:meth:`velocity_spec`, the Ott–Antonsen engine); None otherwise."""
        if not self.first_harmonic:
            return None
        return law_poles(self.frequencies)

    def potential_multipliers(self, k: np.ndarray) -> np.ndarray:
        """Multipliers 2π Ĝ_k of the potential G with X = ω + ∂_θ(G ⋆ ρ̄), for an odd h.

        h odd ⇒ g(u) = h(-u) = ∂_u G(u) with Ĝ_k = ĝ_k/(ik) for k ≠ 0.
        Used for the energy E = (1/2) ∬ G(θ - φ) dμ dμ (K|m|²/2 for h = sin).
        """
        if not self.is_gradient:
            raise ValueError("the Kuramoto coupling function h(u - α) is not odd, so X has no potential")
        k = np.asarray(k)
        num = self.interaction_multipliers(k)
        out = np.zeros(k.shape, dtype=complex)
        nz = k != 0
        out[nz] = num[nz] / (1j * k[nz])
        return out

    @property
    def is_gradient(self) -> bool:
        """True when h(u - α) is odd (ĥ_k e^{-ikα} purely imaginary), so the dynamics has an energy."""
        return bool(np.all(np.abs(self.coefficients.real) < 1e-14))

    @property
    def first_harmonic(self) -> bool:
        """True when h has no Fourier mode beyond k = 1 (ĥ_k = 0 exactly for k ≥ 2)."""
        return bool(np.all(self.interaction[2:] == 0))

    # ------------------------------------------------------------------ particles
    particle_domain = "circle"

    def check_particles(self, geometry: Any) -> None:
        """Kuramoto particles are angles on the circle."""
        if not isinstance(geometry, CircleGeometry):
            raise ValueError(f"Kuramoto particles are angles on the circle, got positions on the {geometry.name!r} "
                             f"domain")

    def particle_velocity(self, geometry: Any, weights: np.ndarray, frequencies: np.ndarray | None, *,
                          path: str = "auto", accuracy: float = 1e-10, block_elements: int = 1 << 16
                          ) -> KuramotoVelocity | NetworkKuramotoVelocity:
        """θ̇_i = ω_i + K Σ_j w_j h(θ_j - θ_i) from the Fourier moments of the angles (:class:`KuramotoVelocity`,
        O(n K_h)); on a graph θ̇_i = ω_i + K Σ_j B_ij h(θ_j - θ_i) from sparse sums over the edges
        (:class:`NetworkKuramotoVelocity`, O(K_h · entries)). No other path."""
        if path not in ("auto", "direct"):
            raise ValueError(f"path={path!r} is not available for Kuramoto models, whose velocity is the O(n K_h) "
                             f"sum of Fourier moments (on a graph: over the edges); use path='auto'")
        omega = np.zeros(weights.shape) if frequencies is None else frequencies
        if self.graph is not None:
            return NetworkKuramotoVelocity(self.coupling, self.coefficients, omega, self._operator(weights))
        return KuramotoVelocity(self.coupling, self.coefficients, omega, weights)

    def _operator(self, weights: np.ndarray) -> CouplingOperator:
        """B = diag(1/c) A diag(w) of the model's graph for particle weights (systems, n)."""
        self.graph.check_nodes(weights.shape[-1])
        return self.graph.operator(weights)

    def jacobian(self, theta: Any, weights: Any = None) -> np.ndarray | Any:
        r"""The Jacobian ∂θ̇_i/∂θ_j of the particle velocity at the angles ``theta`` (n,) (weights: 1/n each).

        J = S - diag(S 1) with S_ij = K B_ij h'(θ_j - θ_i - α) (:mod:`._network_kuramoto`); B_ij = w_j all-to-all
        (a dense (n, n) array), the graph's coupling operator on a graph (a scipy.sparse CSR array with the
        pattern of A plus the diagonal). The natural frequencies do not enter. Its eigenvalues at an equilibrium
        decide its linear stability (one zero eigenvalue for the common rotation).
        """
        theta = np.asarray(theta, dtype=float)
        if theta.ndim != 1 or not np.all(np.isfinite(theta)):
            raise ValueError(f"theta must be a 1-D array of finite angles, got shape {theta.shape}")
        n = theta.size
        w = np.full((1, n), 1.0 / n) if weights is None else np.asarray(weights, dtype=float).reshape(1, -1)
        if w.shape[-1] != n:
            raise ValueError(f"weights must have one entry per angle ({n}), got {w.shape[-1]}")
        if self.graph is not None:
            return network_jacobian(self.coupling, self.coefficients, self._operator(w), theta)
        slopes = self.coupling * w * coupling_derivative(self.coefficients, theta[None, :] - theta[:, None])
        np.fill_diagonal(slopes, 0.0)
        return slopes - np.diag(slopes.sum(axis=1))

    def natural_frequencies(self, rule: Any, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        """ω_i by ``rule``: midpoint quantiles F⁻¹((i+1/2)/n) of the law ("quantile"), iid draws ("iid"), or
        given values (n,) / (systems, n); identical oscillators: the one frequency."""
        law = self.frequencies
        if isinstance(rule, str) and rule not in FREQUENCY_RULES:
            raise ValueError(f"frequencies must be 'quantile', 'iid' or an array, got {rule!r}")
        if isinstance(rule, str):
            if is_identical(law):
                return np.full(shape, 0.0 if law is None else float(law))
            n = shape[-1]
            if rule == "quantile":
                return np.broadcast_to(law.ppf((np.arange(n) + 0.5) / n), shape).copy()
            return law.rvs(size=shape, random_state=rng)
        omega = as_real_array("frequencies", rule)
        try:
            omega = np.broadcast_to(omega, shape).copy()
        except ValueError:
            raise ValueError(f"frequencies must have shape {shape[-1:]} or {shape}, got {omega.shape}") from None
        if is_identical(law):
            common = 0.0 if law is None else float(law)
            if not np.all(omega == common):
                raise ValueError(f"frequencies: the model's oscillators are identical (ω = {common:g}), but the array "
                                 f"given ranges over [{omega.min():g}, {omega.max():g}]; give the model their law, "
                                 "mf.Kuramoto(K, frequencies=law), to use other frequencies")
        return omega

    def default_particle_method(self, geometry: Any) -> str:
        """Geodesic Euler–Maruyama with noise; without, the exact Möbius flow for one harmonic
        ("moebius"), else Dormand–Prince 5(4)."""
        if self.noise > 0:
            return "euler-maruyama"
        return "moebius" if self.first_harmonic else "dopri5"

    def riccati_form(self, frequencies: np.ndarray) -> tuple[complex, np.ndarray]:
        """a = K ĥ_1 e^{-iα} and ν_i = ω_i + K ĥ_0 of u̇_i = i a Z + i ν_i u_i + i conj(a Z) u_i² (one harmonic);
        ν_i may be complex (a pole ζ_m of the law, the Ott–Antonsen equations). Refused on a graph, where every
        oscillator feels its own field (:meth:`local_riccati_form`)."""
        if not self.first_harmonic:
            return super().riccati_form(frequencies)
        if self.graph is not None:
            raise ValueError(f"the mean-field Riccati form (u̇_i driven by one Z = Σ_j w_j u_j, the Ott–Antonsen "
                             f"reduction) assumes all-to-all coupling, but this Kuramoto model couples on the graph "
                             f"{self.graph.name!r}; mf.simulate integrates it (method='moebius' with local fields)")
        frequencies = np.asarray(frequencies)
        return self.coupling * complex(self.coefficients[1]), frequencies + self.coupling * self.interaction[0].real

    def local_riccati_form(self, frequencies: np.ndarray, weights: np.ndarray
                           ) -> tuple[complex, np.ndarray, CouplingOperator] | None:
        """On a graph with one harmonic: (a, ν, B) of u̇_i = i a Z_i + i ν_i u_i + i conj(a Z_i) u_i² with the local
        fields Z_i = Σ_j B_ij u_j, a = K ĥ_1 e^{-iα}, ν_i = ω_i + K ĥ_0 Σ_j B_ij; None otherwise."""
        if self.graph is None or not self.first_harmonic:
            return None
        operator = self._operator(weights)
        nu = np.asarray(frequencies, dtype=float) + self.coupling * self.interaction[0].real * operator.row_sums
        return self.coupling * complex(self.coefficients[1]), nu, operator

    # ------------------------------------------------------------------ energy
    @property
    def has_energy(self) -> bool:
        """An odd h (:attr:`is_gradient`) has the energy E = (1/2) ∬ G(θ - φ) dμ dμ, G' = h(-·); on a graph when the
        graph is undirected and normalised by n (E = (1/2) Σ_ij w_i w_j A_ij G(θ_i - θ_j))."""
        if self.graph is not None and not (self.graph.symmetric and self.graph.normalization == "n"):
            return False
        return self.is_gradient

    def _no_energy(self) -> ValueError:
        if self.graph is not None and self.is_gradient:
            return ValueError(f"a Kuramoto model on the graph {self.graph.name!r} has an interaction energy only when "
                              f"the graph is undirected and normalised by n (got symmetric={self.graph.symmetric}, "
                              f"normalization={self.graph.normalization!r})")
        return ValueError("the Kuramoto coupling function h(u - α) is not odd, so the dynamics has no interaction "
                          "energy")

    def energy_kernel(self, d: int) -> tuple[Any, float]:
        """The multipliers 2π Ĝ_k of the potential G with G' = h(-·) (:meth:`potential_multipliers`), scale 1."""
        if d != 2:
            raise ValueError(f"Kuramoto models live on the circle (d = 2), got d = {d}")
        if not self.is_gradient:
            raise self._no_energy()
        return (lambda k: np.real(self.potential_multipliers(np.asarray(k)))), 0.0

    def particle_energy(self, states: np.ndarray, weights: np.ndarray, geometry: Any,
                        accuracy: float | None = None) -> np.ndarray:
        """E = (1/2) Σ_ij w_i w_j G(θ_i - θ_j) = Σ_{k ≥ 1} Ĝ_k |Z_k|² per system (K|Z_1|²/2 for h = sin); on a graph
        (undirected, normalised by n) E = (1/2) Σ_ij w_i w_j A_ij G(θ_i - θ_j) over the edges
        (:func:`network_energy`)."""
        if not self.has_energy:
            raise self._no_energy()
        ks = np.arange(self.coefficients.size)
        g_hat = np.real(self.potential_multipliers(ks)) / (2 * np.pi)
        if self.graph is not None:
            return network_energy(states, weights, self._operator(weights), g_hat)
        total = np.zeros(states.shape[0])
        for k, _, moment in fourier_moments(states, weights, ks.size - 1):
            total += g_hat[k] * np.abs(moment) ** 2
        return total

    def density_energy(self, domain: Any, values: np.ndarray) -> np.ndarray:
        """E = (1/2) ∫ ρ (G ⋆ ρ) dσ by the multipliers 2π Ĝ_k of :meth:`potential_multipliers`."""
        self._check_domain(domain)
        multipliers, _ = self.energy_kernel(2)
        return 0.5 * double_integral(domain, values, multipliers)

    # ------------------------------------------------------------------ the PDE
    def _check_domain(self, domain: Any) -> None:
        if self.graph is not None:
            raise TypeError(f"a Kuramoto model on the graph {self.graph.name!r} has no density PDE in meanfield (its "
                            f"particles are simulated by mf.simulate); the dense-graph limit of a graph sampled from a "
                            f"graphon W is mf.GraphonKuramoto")
        if not isinstance(domain, Circle):
            raise ValueError(f"Kuramoto models live on the circle, got a {domain.kind} domain")

    def grid_velocity(self, domain: Any, frequency_nodes: int | None = None) -> ConvolutionVelocity:
        """:meth:`velocity_spec` with ``frequency_nodes`` quadrature nodes in ω (one species per node; None: the
        exact pole of a Lorentzian law with one harmonic, else :data:`DEFAULT_FREQUENCY_NODES` nodes)."""
        self._check_domain(domain)
        return self.velocity_spec(frequency_nodes)

    def concentration_reason(self, velocity: ConvolutionVelocity) -> str:
        """Finite volume, and what resolves the problem better: a continuous law on quadrature nodes is first
        order in ω and rephases; particles have neither limit, and a law with poles is exact (module docs)."""
        reason = super().concentration_reason(velocity)
        if is_identical(self.frequencies) or isinstance(self.frequencies, DiscreteLaw):
            return reason
        return (f"{reason}; the law {describe_law(self.frequencies)} is discretised on {velocity.n_species} nodes "
                f"in ω (first order across the locked/drifting boundary, rephasing at T_rec = 2π/Δω): mf.simulate "
                f"(particles) has neither limit, and a law with poles (mf.LorentzianMixture) is exact in ω "
                f"(mf.ott_antonsen, or mf.solve's spectral scheme at its poles)")

    def resolution_advice(self, velocity: ConvolutionVelocity) -> str:
        """Without noise a continuous law's locked oscillators form Diracs at every frequency node, which no finer
        grid resolves: name the engines that do (particles; the Ott–Antonsen engine for a law with poles)."""
        if self.noise > 0 or is_identical(self.frequencies) or isinstance(self.frequencies, DiscreteLaw):
            return super().resolution_advice(velocity)
        return ("or, without noise, particles (mf.simulate), which have no grid; for one harmonic and a law with "
                "poles (mf.LorentzianMixture) mf.ott_antonsen is exact")

    def pde_attrs(self, velocity: ConvolutionVelocity) -> dict[str, Any]:
        """``frequency_quadrature`` ("cauchy_pole": the exact form of a Lorentzian law; "gauss_hermite" or
        "midpoint_quantiles", :meth:`frequency_quadrature`) and ``frequency_nodes``, for a frequency law."""
        if velocity.cauchy_drift:
            return {"frequency_quadrature": "cauchy_pole"}
        freq = self.frequencies
        if is_identical(freq):
            return {}
        if isinstance(freq, DiscreteLaw):
            return {"frequency_quadrature": "discrete_atoms", "frequency_nodes": int(velocity.n_species)}
        rule = "gauss_hermite" if isinstance(getattr(freq, "dist", None), type(scipy.stats.norm)) else \
            "midpoint_quantiles"
        return {"frequency_quadrature": rule, "frequency_nodes": int(velocity.n_species)}

    def density_velocity(self, domain: Any, values: np.ndarray, frequencies: Any) -> np.ndarray:
        """ω + K ∫ h(φ - θ - α) ρ(φ) dφ at the nodes (ω: ``frequencies``, default 0), by FFT."""
        self._check_domain(domain)
        omega = 0.0 if frequencies is None else np.asarray(frequencies, dtype=float)
        return domain.convolve(values, self.interaction_multipliers) + omega


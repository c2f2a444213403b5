r"""Kuramoto oscillators on a graphon: the continuum limit of dense graphs, and the graphs sampled from it.

A graphon W: [0, 1]² → [0, 1], symmetric, is the limit of dense graphs whose node i sits at a position
x_i ∈ [0, 1] and whose edges are drawn with probability W(x_i, x_j) (a W-random graph), or weighted by it.
Kuramoto on such a graph, θ̇_i = ω + (K/c_i) Σ_j A_ij w_j h(θ_j - θ_i - α) (:mod:`._graph`), has as n → ∞
the density ρ(t, x, θ) of the oscillators at position x solving (Medvedev, SIAM J. Math. Anal. 46 (2014)
2743; Chiba & Medvedev, Discrete Contin. Dyn. Syst. 39 (2019) 131)

    ∂_t ρ(x, ·) + ∂_θ(ρ(x, ·) X_x) = σ ∂²_θ ρ(x, ·),
    X_x(θ) = ω + (K/c(x)) ∫_0^1 W(x, y) ∫ h(φ - θ - α) ρ(y, φ) dφ dy,

c(x) = 1 (normalisation "n") or the degree c(x) = ∫ W(x, y) dy ("degree"). The constant graphon W ≡ p (the
Erdős–Rényi graphs G(n, p)) gives X = ω + Kp ∫ h(φ - θ - α) ρ̄(φ) dφ: the all-to-all model with coupling Kp
("n"; K with "degree").

Discretisation (:meth:`GraphonKuramoto.grid_velocity`): the positions are quadrature nodes x_m of [0, 1]
with weights v_m — Gauss–Legendre (exact for polynomials of degree < 2M; spectral for a smooth W) or the
midpoint rule (second order; a W with jumps on a grid of blocks of equal size, e.g. a stochastic block model,
is exact on block-aligned nodes) — one density ρ_m(θ) per node, a species of the circle schemes. The
velocity of species m uses the K_h Fourier modes of the interaction only:

    X_m(θ_j) = ω + Re Σ_{k=0}^{K_h} (1 + [k > 0]) e^{ikθ_j} 2πK conj(c_k) Σ_{m'} (v_{m'} W(x_m, x_{m'})/c_m) ρ̂_{m',k},

ρ̂_{m,k} = (1/N) Σ_j ρ_m(θ_j) e^{-ikθ_j}: two products with an N × (K_h + 1) table and one with the M × M
matrix of W, O(M N K_h + M² K_h) per evaluation, handed to the scheme as a callable on node values
(:class:`solvers.CallableVelocity`). The result's ``density`` is the θ-marginal Σ_m v_m ρ_m, what particles on
a sampled graph are compared with (:func:`meanfield.compare`).
"""

from __future__ import annotations

import hashlib
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import scipy.sparse

from solvers import CallableVelocity

from ..domains._circle import Circle
from .._validate import as_real, check_positive_int
from ._graph import NORMALIZATIONS, Graph, _generator
from ._kuramoto import Kuramoto
from ._model import Model

__all__ = ["GRAPHON_QUADRATURES", "GraphonKuramoto", "GraphonVelocity"]

#: rules placing the positions x_m in [0, 1]
GRAPHON_QUADRATURES = ("gauss", "midpoint")
#: rows of W evaluated at once when a graph is sampled (bounded memory for any n)
_SAMPLE_BLOCK = 1 << 20


@dataclass(frozen=True)
class GraphonVelocity(CallableVelocity):
    """The velocity of the graphon PDE on node values (M species × N nodes), with what ``solve`` needs to know
    about its species: their positions x_m and weights v_m."""

    positions: np.ndarray = field(default_factory=lambda: np.zeros(1))
    weights: np.ndarray = field(default_factory=lambda: np.ones(1))

    @property
    def n_species(self) -> int:
        return int(self.positions.size)

    @property
    def cauchy_drift(self) -> bool:
        return False

    @property
    def drift(self) -> np.ndarray:
        return np.zeros(self.positions.size)


def _constant(value: float) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def graphon(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.full(np.broadcast(x, y).shape, value)

    return graphon


@dataclass(frozen=True, eq=False)
class GraphonKuramoto(Model):
    r"""Kuramoto oscillators on a graphon W (module docstring): the PDE of ρ(t, x, θ) on [0, 1] × S¹.

    Parameters
    ----------
    coupling : float
        K ≥ 0.
    graphon : callable or float
        W(x, y), vectorised over arrays of positions (broadcasting), symmetric with values in [0, 1]; a number p
        is the constant graphon W ≡ p (Erdős–Rényi).
    nodes : int
        Quadrature nodes M in x (one density each).
    quadrature : {"gauss", "midpoint"}
        Gauss–Legendre or the midpoint rule on [0, 1].
    normalization : {"n", "degree"}
        c(x) = 1 or c(x) = ∫ W(x, y) dy.
    frequencies : float, optional
        The natural frequency ω of every oscillator (identical oscillators; default 0).
    noise, interaction, phase_lag
        As :class:`meanfield.Kuramoto`.
    graphon_name : str, optional
        The graphon's description in results (default: ``constant(p)`` or the callable's ``__name__``).

    Raises
    ------
    TypeError, ValueError
        A graphon that is not a callable or a number, values outside [0, 1], a W that is not symmetric (the
        limit assumes an undirected graph), positions with degree 0 under ``normalization="degree"``.

    Notes
    -----
    The density ρ(t, x, θ) of the oscillators at position x ∈ [0, 1] (Medvedev 2014; Chiba & Medvedev
    2019), with c(x) = 1 (``"n"``) or c(x) = ∫ W(x, y) dy (``"degree"``):

    .. math::

        \partial_t \rho(x, \cdot) + \partial_\theta\big(\rho(x, \cdot)\, X_x\big) = \sigma\,\partial_\theta^2 \rho(x, \cdot),
        \qquad
        X_x(\theta) = \omega + \frac{K}{c(x)} \int_0^1 W(x, y) \int h(\varphi - \theta - \alpha)\,
        \rho(y, \varphi)\,\mathrm{d}\varphi\,\mathrm{d}y.

    The constant graphon W ≡ p gives the all-to-all :class:`~meanfield.Kuramoto` model with coupling
    Kp (``"n"``) or K (``"degree"``). The PDE discretises x by ``nodes`` quadrature nodes, one circle
    density each; :meth:`sampled` draws the finite graphs whose limit this is.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> model = mf.GraphonKuramoto(coupling=2.0, graphon=0.5, nodes=4)   # W ≡ 1/2
    >>> x, v = model.positions()                       # Gauss–Legendre nodes of [0, 1]
    >>> print(np.round(x, 4), f"{v.sum():.6f}")
    [0.0694 0.33   0.67   0.9306] 1.000000
    >>> # every species at the same density moves as all-to-all Kuramoto with K p = 1
    >>> circle = mf.Circle(32)
    >>> rho = mf.von_mises(circle, kappa=1.0)
    >>> X = model.density_velocity(circle, np.tile(rho.values, (4, 1)), None)
    >>> print(X.shape, np.allclose(X, mf.Kuramoto(coupling=1.0).velocity(rho)))
    (4, 32) True
    >>> graph = model.sampled(200, seed=0).graph       # a G(200, 1/2) random graph
    >>> print(graph.n_nodes, f"{graph.n_edges / (200 * 199 / 2):.2f}")
    200 0.50
    """

    coupling: float = 1.0
    graphon: Any = 1.0
    nodes: int = 32
    quadrature: str = "gauss"
    normalization: str = "n"
    frequencies: Any = None
    noise: float = 0.0
    interaction: Any = None
    phase_lag: float = 0.0
    graphon_name: str | None = None

    def __post_init__(self) -> None:
        options = {} if self.interaction is None else {"interaction": self.interaction}
        if self.frequencies is not None:
            as_real("frequencies", self.frequencies, "a number (identical oscillators)")
        oscillators = Kuramoto(self.coupling, self.frequencies, self.noise, phase_lag=self.phase_lag, **options)
        object.__setattr__(self, "_kuramoto", oscillators)
        object.__setattr__(self, "coupling", oscillators.coupling)
        object.__setattr__(self, "noise", oscillators.noise)
        object.__setattr__(self, "nodes", check_positive_int("nodes", self.nodes))
        if self.quadrature not in GRAPHON_QUADRATURES:
            raise ValueError(f"quadrature must be one of {GRAPHON_QUADRATURES}, got {self.quadrature!r}")
        if self.normalization not in NORMALIZATIONS:
            raise ValueError(f"normalization must be one of {NORMALIZATIONS}, got {self.normalization!r}")
        graphon, label = self.graphon, self.graphon_name
        if not callable(graphon):
            value = as_real("graphon", graphon, "a callable W(x, y) or a number p in [0, 1]")
            graphon, label = _constant(value), label or f"constant({value:g})"
        elif label is None:
            label = getattr(graphon, "__name__", "graphon")
        object.__setattr__(self, "graphon", graphon)
        object.__setattr__(self, "graphon_name", label)
        x, v = self.positions()
        matrix = self._evaluate(x[:, None], x[None, :])
        scale = max(float(np.max(matrix)), 1e-300)
        if np.max(np.abs(matrix - matrix.T)) > 1e-12 * scale:
            raise ValueError(f"graphon {label!r} is not symmetric (W(x, y) != W(y, x) at the quadrature nodes): the "
                             f"graphon limit assumes an undirected graph")
        degree = matrix @ v
        if self.normalization == "degree" and np.any(degree <= 0):
            raise ValueError(f"graphon {label!r} has degree ∫ W(x, y) dy = 0 at x = "
                             f"{np.round(x[degree <= 0][:4], 6).tolist()}: normalization='degree' divides by it")
        object.__setattr__(self, "_matrix", matrix)

    def _evaluate(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """W(x, y), checked finite and in [0, 1]."""
        values = np.asarray(self.graphon(x, y), dtype=float)
        shape = np.broadcast(x, y).shape
        if values.shape != shape:
            raise ValueError(f"graphon must return an array of the broadcast shape {shape} of its arguments, got "
                             f"{values.shape}")
        if not np.all(np.isfinite(values)) or np.any(values < 0) or np.any(values > 1):
            raise ValueError(f"graphon {self.graphon_name!r} must take values in [0, 1], got values in "
                             f"[{np.nanmin(values):g}, {np.nanmax(values):g}]")
        return values

    # ------------------------------------------------------------------ identity
    @property
    def name(self) -> str:
        return "GraphonKuramoto"

    @property
    def fingerprint(self) -> str:
        """SHA-1 of W at the quadrature nodes: the discretised graphon."""
        return hashlib.sha1(np.ascontiguousarray(self._matrix).tobytes()).hexdigest()

    @property
    def attrs(self) -> dict[str, Any]:
        """The oscillators' parameters (``model`` "Kuramoto", so that :func:`meanfield.compare` takes particles on
        a sampled graph) and the graphon's."""
        return {**self._kuramoto.attrs, "graphon": self.graphon_name, "graphon_nodes": self.nodes,
                "graphon_quadrature": self.quadrature, "graph_normalization": self.normalization,
                "graphon_sha1": self.fingerprint}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GraphonKuramoto):
            return NotImplemented
        return self.attrs == other.attrs

    def __hash__(self) -> int:
        return hash(tuple(sorted((k, str(v)) for k, v in self.attrs.items())))

    @property
    def coefficients(self) -> np.ndarray:
        """c_k = ĥ_k e^{-ikα} of the coupling function (:attr:`meanfield.Kuramoto.coefficients`)."""
        return self._kuramoto.coefficients

    def positions(self) -> tuple[np.ndarray, np.ndarray]:
        """The quadrature nodes x_m of [0, 1] and their weights v_m (Σ v_m = 1)."""
        m = self.nodes
        if self.quadrature == "gauss":
            x, w = np.polynomial.legendre.leggauss(m)
            return 0.5 * (x + 1), 0.5 * w
        return (np.arange(m) + 0.5) / m, np.full(m, 1.0 / m)

    # ------------------------------------------------------------------ the PDE
    def grid_velocity(self, domain: Any, frequency_nodes: int | None = None) -> GraphonVelocity:
        """The velocity of every species on the nodes of ``domain`` (a Circle), module docstring."""
        if not isinstance(domain, Circle):
            raise ValueError(f"GraphonKuramoto lives on [0, 1] × S¹: its density needs a Circle, got a {domain.kind} "
                             f"domain")
        x, v = self.positions()
        coupling = self._matrix * v[None, :]
        if self.normalization == "degree":
            coupling = coupling / coupling.sum(axis=1, keepdims=True)
        theta = domain.grid.theta
        ks = np.arange(min(self.coefficients.size, domain.grid.n // 2))
        waves = np.exp(1j * np.outer(ks, theta))                       # (K+1, N)
        analysis = np.conj(waves).T / theta.size                       # ρ̂_k = ρ @ analysis
        synthesis = waves * np.where(ks > 0, 2.0, 1.0)[:, None]        # real part of Σ_k (1 + [k > 0]) f̂_k e^{ikθ}
        multipliers = self._kuramoto.interaction_multipliers(ks)
        omega = 0.0 if self.frequencies is None else float(self.frequencies)

        def velocity(rho: np.ndarray) -> np.ndarray:
            mixed = coupling @ (rho @ analysis)
            return omega + np.real((mixed * multipliers) @ synthesis)

        return GraphonVelocity(velocity, positions=x, weights=v)

    def scheme_arguments(self, scheme: Any, velocity: GraphonVelocity) -> dict[str, Any]:
        """``n_species`` for a scheme that sizes its state from it (the spectral scheme)."""
        return {"n_species": velocity.n_species} if "n_species" in _parameters(scheme) else {}

    def species_coordinate(self, velocity: GraphonVelocity) -> dict[str, Any]:
        """The species are the positions x_m: coordinate ``position``, variable ``density_by_position``."""
        return {"dim": "position", "values": velocity.positions,
                "attrs": {"long_name": "position x in [0, 1] (quadrature node)", "units": "1"},
                "variable": "density_by_position", "long_name": "density of the oscillators at each position",
                "noun": "positions"}

    def pde_attrs(self, velocity: GraphonVelocity) -> dict[str, Any]:
        return {"graphon_positions": "Gauss-Legendre nodes" if self.quadrature == "gauss" else "midpoints"}

    def density_velocity(self, domain: Any, values: np.ndarray, frequencies: Any) -> np.ndarray:
        """X_m at the nodes of node values (M, N) of every species (M = ``nodes``); one density (N,) is refused
        by name (which species it is cannot be told), e.g. ``model.velocity(rho)``."""
        values = np.asarray(values, dtype=float)
        species = self.nodes
        if values.ndim != 2 or values.shape[0] != species:
            raise ValueError(f"{self.name} moves one density per graphon node ({species} species): node values of "
                             f"shape ({species}, {domain.n}) are needed, got {values.shape} (every species at one "
                             f"density: np.tile(rho.values, ({species}, 1)))")
        return self.grid_velocity(domain).func(values)

    def particle_velocity(self, geometry: Any, weights: np.ndarray, frequencies: np.ndarray | None, *,
                          path: str = "auto", accuracy: float = 1e-10, block_elements: int = 1 << 16) -> Any:
        """Refused: particles live on a graph sampled from W (:meth:`sampled`)."""
        raise TypeError("GraphonKuramoto is the continuum limit; its particles live on a graph sampled from the "
                        "graphon: mf.simulate(model.sampled(n, seed=...), x0, t)")

    # ------------------------------------------------------------------ sampled graphs
    def sampled(self, n: int, *, seed: int | np.random.Generator | None = None, positions: str = "grid",
                weighted: bool = False) -> Kuramoto:
        r"""The Kuramoto model on a graph of n nodes sampled from W, with this model's oscillators.

        Positions x_i = (i + 1/2)/n (``"grid"``) or sorted iid uniform draws (``"random"``); A_ij, i < j, an edge
        with probability W(x_i, x_j) (A_ji = A_ij), or the weight W(x_i, x_j) itself (``weighted``); no loops.
        Normalisation as the graphon's. Rows of W are evaluated in blocks of bounded memory.
        """
        n = check_positive_int("n", n, 2)
        rng, label = _generator(seed)
        if positions == "grid":
            x = (np.arange(n) + 0.5) / n
        elif positions == "random":
            x = np.sort(rng.uniform(0.0, 1.0, n))
        else:
            raise ValueError(f"positions must be 'grid' or 'random', got {positions!r}")
        rows_per_block = max(1, _SAMPLE_BLOCK // n)
        parts = []
        for start in range(0, n, rows_per_block):
            block = np.arange(start, min(n, start + rows_per_block))
            values = self._evaluate(x[block, None], x[None, :])
            upper = np.arange(n)[None, :] > block[:, None]
            keep = upper & (rng.random(values.shape) < values) if not weighted else upper & (values > 0)
            i, j = np.nonzero(keep)
            parts.append((block[i], j, values[i, j] if weighted else np.ones(i.size)))
        rows, cols, data = (np.concatenate(p) for p in zip(*parts))
        adjacency = scipy.sparse.csr_array((np.concatenate([data, data]), (np.concatenate([rows, cols]),
                                           np.concatenate([cols, rows]))), shape=(n, n))
        kind = "weighted" if weighted else "W-random"
        graph = Graph(adjacency, self.normalization,
                      name=f"{kind} graph of graphon {self.graphon_name}(n={n}, positions={positions}, seed={label})")
        k = self._kuramoto
        return Kuramoto(k.coupling, k.frequencies, k.noise, k.interaction, k.phase_lag, graph=graph)


def _parameters(scheme: Any) -> tuple[str, ...]:
    return tuple(inspect.signature(scheme.__init__).parameters)

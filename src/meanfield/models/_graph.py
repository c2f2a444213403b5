r"""A graph as the coupling structure of a model: its adjacency read once, checked, and normalised.

A model on a graph sums over the edges of each node instead of over all particles. For Kuramoto,

    θ̇_i = ω_i + (K/c_i) Σ_j A_ij w_j h(θ_j - θ_i - α),

with particle weights w_j (1/n by default) and the normalisation c_i:

* ``"n"``: c_i = 1, i.e. (K/n) Σ_j A_ij h(…) for equal weights — the all-to-all model (paper 2, (7.2))
  with A inserted; a complete graph with loops (A_ij = 1 for all i, j) is that model exactly;
* ``"degree"``: c_i = Σ_j |A_ij| w_j, i.e. (K/d_i) Σ_j A_ij h(…) with the (weighted) degree
  d_i = Σ_j |A_ij|: every node feels a mean over its neighbours.

A_ij ≠ 0 means that node i feels node j (for a directed networkx graph, the edge i → j). Weights are real;
negative ones (inhibitory coupling) only with ``signed=True``. The adjacency is stored once as a CSR
matrix of float64 with sorted indices, no duplicates and no explicit zeros (read-only), whatever it came
from: a scipy.sparse matrix or array, a dense array, a networkx graph (converted once; networkx is an
optional dependency), or another :class:`Graph`.

Attention restricted to edges uses the same object: A_ij ≠ 0 lets token i attend to token j, and the causal
mask of a decoder is the lower-triangular graph (:meth:`Graph.causal`).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse

from ._graph_files import parse_graph_spec, read_adjacency_file
from ._graph_generators import (
    causal_adjacency,
    complete_adjacency,
    erdos_renyi_adjacency,
    lattice_adjacency,
    ring_adjacency,
    scale_free_adjacency,
    small_world_adjacency,
)
from ._graph_operator import CouplingOperator

__all__ = ["NORMALIZATIONS", "Graph", "model_repr", "read_graph"]

#: how the sum over a node's edges is normalised (module docstring)
NORMALIZATIONS = ("n", "degree")
#: the relative asymmetry max|A - Aᵀ| / max|A| below which a graph counts as undirected
SYMMETRY_TOLERANCE = 1e-14
#: how many offending nodes or entries an error message lists
_LISTED = 8


def _listed(indices: np.ndarray) -> str:
    shown = ", ".join(str(int(i)) for i in indices[:_LISTED])
    return shown + (f", … ({indices.size} in all)" if indices.size > _LISTED else "")


def _is_networkx(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "networkx"


def _from_networkx(graph: Any) -> scipy.sparse.csr_array:
    """The adjacency of a networkx graph in the order of ``graph.nodes``, edge attribute "weight" (default 1)."""
    import networkx

    return networkx.to_scipy_sparse_array(graph, weight="weight", dtype=float, format="csr")


def _adjacency(value: Any, name: str) -> scipy.sparse.csr_array:
    """``value`` as a CSR array of float64 (square, finite; not yet checked for signs)."""
    if isinstance(value, Graph):
        return value.adjacency.copy()
    if _is_networkx(value):
        matrix = _from_networkx(value)
    elif scipy.sparse.issparse(value):
        if np.iscomplexobj(value.data) or not np.issubdtype(value.dtype, np.number):
            raise TypeError(f"{name} must have real weights, got a sparse matrix of dtype {value.dtype}")
        matrix = scipy.sparse.csr_array(value, dtype=float)
    else:
        if isinstance(value, (str, bytes)) or value is None:
            raise TypeError(f"{name} must be an adjacency matrix (scipy.sparse or a dense 2-D array), a networkx graph "
                            f"or a meanfield Graph, got {value!r}")
        array = np.asarray(value)
        if array.dtype == bool:
            array = array.astype(float)
        if np.iscomplexobj(array) or not np.issubdtype(array.dtype, np.number):
            raise TypeError(f"{name} must be an adjacency matrix of real weights, got an array of dtype {array.dtype}")
        if array.ndim != 2:
            raise ValueError(f"{name} must be a square adjacency matrix (n, n), got an array of shape {array.shape}")
        matrix = scipy.sparse.csr_array(array.astype(float))
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"{name} must be a square adjacency matrix (n, n), got shape {matrix.shape}")
    if matrix.shape[0] < 1:
        raise ValueError(f"{name} must have at least one node, got shape {matrix.shape}")
    matrix.sum_duplicates()
    bad = ~np.isfinite(matrix.data)
    if bad.any():
        rows, cols = _entries(matrix)
        first = np.flatnonzero(bad)[0]
        raise ValueError(f"{name} must have finite weights, got {int(bad.sum())} non-finite entries (first "
                         f"A[{rows[first]}, {cols[first]}] = {matrix.data[first]!r})")
    matrix.eliminate_zeros()
    matrix.sort_indices()
    return matrix


def _entries(matrix: scipy.sparse.csr_array) -> tuple[np.ndarray, np.ndarray]:
    """Row and column of every stored entry of a CSR matrix, in storage order."""
    rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    return rows, matrix.indices


@dataclass(frozen=True, eq=False)
class Graph:
    r"""A weighted graph of n nodes, the coupling structure of a model (module docstring).

    Parameters
    ----------
    adjacency : scipy.sparse matrix or array, array_like (n, n), networkx graph, or Graph
        The weights A_ij (i feels j). Duplicated sparse entries are summed; explicit zeros dropped.
    normalization : {"n", "degree"}
        c_i = 1 (K/n Σ_j A_ij … for equal weights) or c_i = Σ_j |A_ij| w_j (K/d_i Σ_j A_ij …).
    signed : bool
        Allow negative weights.
    name : str, optional
        A description for results (default: the generator's, or "adjacency matrix").

    Raises
    ------
    TypeError
        An adjacency that is not a matrix of real numbers or a graph.
    ValueError
        A matrix that is not square, non-finite weights, negative weights without ``signed=True``, isolated
        nodes (no edge: Σ_j |A_ij| = 0) under ``normalization="degree"`` (named), an unknown normalisation.

    Notes
    -----
    A model on the graph sums over the edges of each node with the particle weights w_j (1/n by
    default) and the normalisation c_i; for Kuramoto

    .. math::

        \dot\theta_i = \omega_i + \frac{K}{c_i} \sum_{j} A_{ij}\, w_j\, h(\theta_j - \theta_i - \alpha),
        \qquad c_i = 1 \ (\texttt{"n"}) \quad\text{or}\quad c_i = \sum_j \lvert A_{ij}\rvert\, w_j \ (\texttt{"degree"}).

    The complete graph with loops under ``"n"`` is the all-to-all model (paper 2, (7.2)).

    Examples
    --------
    >>> import meanfield as mf
    >>> ring = mf.Graph.ring(100, k=2, normalization="degree")
    >>> ring.n_nodes, ring.n_edges, ring.symmetric
    (100, 200, True)
    >>> print(ring.degrees[:3])                        # 2k neighbours each
    [4. 4. 4.]
    """

    adjacency: Any
    normalization: str = "n"
    signed: bool = False
    name: str | None = None

    def __post_init__(self) -> None:
        source = self.adjacency
        if self.normalization not in NORMALIZATIONS:
            raise ValueError(f"normalization must be one of {NORMALIZATIONS} (c_i = 1 or the degree), got "
                             f"{self.normalization!r}")
        if not isinstance(self.signed, (bool, np.bool_)):
            raise TypeError(f"signed must be True or False, got {self.signed!r}")
        if self.name is not None and not isinstance(self.name, str):
            raise TypeError(f"name must be a string or None, got {self.name!r}")
        matrix = _adjacency(source, "graph")
        negative = matrix.data < 0
        if negative.any() and not self.signed:
            rows, cols = _entries(matrix)
            first = np.flatnonzero(negative)[0]
            raise ValueError(f"graph has {int(negative.sum())} negative weights (first A[{rows[first]}, {cols[first]}] "
                             f"= {matrix.data[first]:g}); pass signed=True to allow inhibitory coupling")
        matrix.data.flags.writeable = False
        matrix.indices.flags.writeable = False
        matrix.indptr.flags.writeable = False
        object.__setattr__(self, "adjacency", matrix)
        object.__setattr__(self, "signed", bool(self.signed))
        name = self.name
        if name is None:
            name = source.name if isinstance(source, Graph) else (
                "networkx graph" if _is_networkx(source) else "adjacency matrix")
        object.__setattr__(self, "name", name)
        if self.normalization == "degree" and self.isolated.size:
            raise ValueError(f"graph has isolated nodes (no edge, degree 0) {_listed(self.isolated)}: "
                             "normalization='degree' divides by the degree; remove them or use normalization='n'")

    # ------------------------------------------------------------------ generators
    @classmethod
    def complete(cls, n: int, *, loops: bool = True, normalization: str = "n") -> Graph:
        """Every pair coupled, A_ij = 1 (with ``loops`` also A_ii = 1: then the all-to-all model exactly)."""
        return cls(complete_adjacency(n, loops), normalization, name=f"complete(n={n}, loops={int(loops)})")

    @classmethod
    def ring(cls, n: int, k: int = 1, *, normalization: str = "n") -> Graph:
        """A ring: node i coupled to i ± 1, …, i ± k (mod n)."""
        return cls(ring_adjacency(n, k), normalization, name=f"ring(n={n}, k={k})")

    @classmethod
    def lattice(cls, shape: Any, *, periodic: bool = True, normalization: str = "n") -> Graph:
        """Nearest neighbours on a grid of ``shape`` (nodes in C order), periodic (a torus) or not."""
        dims = tuple(int(s) for s in np.atleast_1d(shape))
        return cls(lattice_adjacency(dims, periodic), normalization,
                   name=f"lattice(shape={'x'.join(map(str, dims))}, periodic={int(periodic)})")

    @classmethod
    def erdos_renyi(cls, n: int, p: float, *, seed: int | np.random.Generator | None = None,
                    directed: bool = False, normalization: str = "n") -> Graph:
        """G(n, p): each pair i < j (each ordered pair i ≠ j if ``directed``) an edge with probability p."""
        rng, label = _generator(seed)
        return cls(erdos_renyi_adjacency(n, p, rng, directed), normalization,
                   name=f"erdos-renyi(n={n}, p={p:g}, directed={int(directed)}, seed={label})")

    @classmethod
    def small_world(cls, n: int, k: int, p: float, *, seed: int | np.random.Generator | None = None,
                    normalization: str = "n") -> Graph:
        """Watts–Strogatz: a ring(n, k) whose edges (i, i + s) have their far end rewired with probability p."""
        rng, label = _generator(seed)
        return cls(small_world_adjacency(n, k, p, rng), normalization,
                   name=f"small-world(n={n}, k={k}, p={p:g}, seed={label})")

    @classmethod
    def scale_free(cls, n: int, m: int, *, seed: int | np.random.Generator | None = None,
                   normalization: str = "n") -> Graph:
        """Barabási–Albert: each new node attaches to m distinct nodes chosen with probability ∝ degree."""
        rng, label = _generator(seed)
        return cls(scale_free_adjacency(n, m, rng), normalization, name=f"scale-free(n={n}, m={m}, seed={label})")

    @classmethod
    def causal(cls, n: int, *, normalization: str = "n") -> Graph:
        """The causal mask of a decoder: token i attends to tokens j ≤ i (lower triangle with the diagonal)."""
        return cls(causal_adjacency(n), normalization, name=f"causal(n={n})")

    @classmethod
    def disjoint_union(cls, *graphs: Graph, normalization: str | None = None) -> Graph:
        """The graphs side by side (block-diagonal adjacency), nodes numbered in order; the normalisation of the
        first unless given."""
        if not graphs:
            raise ValueError("disjoint_union needs at least one graph")
        parts = [read_graph(g, name=f"graphs[{i}]") for i, g in enumerate(graphs)]
        return cls(scipy.sparse.block_diag([g.adjacency for g in parts], format="csr"),
                   parts[0].normalization if normalization is None else normalization,
                   signed=any(g.signed for g in parts),
                   name="disjoint-union(" + ", ".join(g.name for g in parts) + ")")

    @classmethod
    def from_file(cls, path: Any, *, n: int | None = None, directed: bool = False, normalization: str = "n",
                  signed: bool = False) -> Graph:
        """An edge list (``i j [weight]`` per line, 0-based) or a scipy.sparse ``.npz`` file
        (:mod:`meanfield.models._graph_files`); an edge list is undirected unless ``directed``."""
        return cls(read_adjacency_file(path, n, directed), normalization, signed=signed,
                   name=f"file {str(path)!r}" + (" (directed)" if directed else ""))

    @classmethod
    def from_spec(cls, spec: str, n: int, *, seed: int | np.random.Generator | None = None,
                  normalization: str = "n") -> Graph:
        """The graph a description names for n nodes: ``complete``, ``ring:k=2``, ``lattice:shape=40x50``,
        ``erdos-renyi:p=0.1``, ``small-world:k=3,p=0.1``, ``scale-free:m=3`` (random ones drawn with ``seed``)."""
        kind, params = parse_graph_spec(spec)
        if kind == "lattice":
            if int(np.prod(params["shape"])) != n:
                raise ValueError(f"graph lattice:shape={'x'.join(map(str, params['shape']))} has "
                                 f"{int(np.prod(params['shape']))} nodes, but there are n = {n} particles")
            return cls.lattice(params["shape"], normalization=normalization)
        if kind == "complete":
            return cls.complete(n, normalization=normalization)
        if kind == "ring":
            return cls.ring(n, params["k"], normalization=normalization)
        if kind == "erdos-renyi":
            return cls.erdos_renyi(n, params["p"], seed=seed, normalization=normalization)
        if kind == "small-world":
            return cls.small_world(n, params["k"], params["p"], seed=seed, normalization=normalization)
        return cls.scale_free(n, params["m"], seed=seed, normalization=normalization)

    # ------------------------------------------------------------------ structure
    @property
    def n_nodes(self) -> int:
        return int(self.adjacency.shape[0])

    @property
    def n_entries(self) -> int:
        """Stored entries A_ij ≠ 0 (each direction of an undirected edge once, a loop once)."""
        return int(self.adjacency.nnz)

    @functools.cached_property
    def n_loops(self) -> int:
        """Entries A_ii ≠ 0."""
        return int(np.count_nonzero(self.adjacency.diagonal()))

    @property
    def n_edges(self) -> int:
        """Edges: unordered pairs {i, j} for an undirected graph (a loop counts once), ordered pairs otherwise."""
        if self.symmetric:
            return (self.n_entries - self.n_loops) // 2 + self.n_loops
        return self.n_entries

    @functools.cached_property
    def symmetric(self) -> bool:
        """A = Aᵀ to :data:`SYMMETRY_TOLERANCE` relative (an undirected graph)."""
        a = self.adjacency
        if a.nnz == 0:
            return True
        difference = abs(a - a.T)
        largest = float(difference.max()) if difference.nnz else 0.0
        return largest <= SYMMETRY_TOLERANCE * float(abs(a).max())

    @functools.cached_property
    def degrees(self) -> np.ndarray:
        """d_i = Σ_j |A_ij| (the number of neighbours for 0/1 weights)."""
        return np.asarray(abs(self.adjacency).sum(axis=1), dtype=float).ravel()

    @functools.cached_property
    def isolated(self) -> np.ndarray:
        """The nodes with d_i = 0."""
        return np.flatnonzero(self.degrees == 0)

    @functools.cached_property
    def fingerprint(self) -> str:
        """SHA-1 of the CSR arrays, the normalisation and the sign flag: two graphs with equal fingerprints couple
        alike."""
        digest = hashlib.sha1(np.asarray(self.adjacency.indptr, dtype=np.int64).tobytes())
        digest.update(np.asarray(self.adjacency.indices, dtype=np.int64).tobytes())
        digest.update(np.asarray(self.adjacency.data, dtype=float).tobytes())
        digest.update(f"{self.n_nodes}|{self.normalization}|{int(self.signed)}".encode())
        return digest.hexdigest()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Graph):
            return NotImplemented
        return self.fingerprint == other.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __repr__(self) -> str:
        return (f"Graph({self.name}, nodes={self.n_nodes}, edges={self.n_edges}, "
                f"normalization={self.normalization!r}{', signed' if self.signed else ''})")

    @property
    def attrs(self) -> dict[str, Any]:
        """What a result records of the graph: description, size, normalisation, symmetry, sign, fingerprint."""
        return {"graph": self.name, "graph_nodes": self.n_nodes, "graph_edges": self.n_edges,
                "graph_entries": self.n_entries, "graph_normalization": self.normalization,
                "graph_symmetric": int(self.symmetric), "graph_signed": int(self.signed),
                "graph_sha1": self.fingerprint}

    def with_normalization(self, normalization: str) -> Graph:
        """The same adjacency with another normalisation."""
        return Graph(self, normalization, signed=self.signed, name=self.name)

    # ------------------------------------------------------------------ coupling
    def check_nodes(self, n: int, name: str = "x0") -> None:
        """Refuse ``n`` particles on a graph of another size, naming ``name``."""
        if n != self.n_nodes:
            raise ValueError(f"graph has {self.n_nodes} nodes but {name} has {n} particles; give one particle per node")

    def require_symmetric(self, what: str) -> None:
        """Refuse a directed graph where ``what`` assumes an undirected one."""
        if not self.symmetric:
            raise ValueError(f"{what} assumes an undirected graph (A = Aᵀ), but graph {self.name!r} is directed")

    def operator(self, weights: np.ndarray) -> CouplingOperator:
        """B = diag(1/c) A diag(w) for particle weights ``weights`` (n,) or (systems, n) equal in every system.

        Raises
        ------
        ValueError
            Weights of another length, weights that differ between systems, or (degree normalisation) a node
            whose neighbours all have weight 0.
        """
        w = np.asarray(weights, dtype=float)
        w = w.reshape(-1, w.shape[-1])
        self.check_nodes(w.shape[-1], "weights")
        if np.any(w != w[:1]):
            raise ValueError("a model on a graph needs the same particle weights in every system")
        w = w[0]
        scaled = self.adjacency @ scipy.sparse.diags_array(w)
        if self.normalization == "n":
            return CouplingOperator(scaled)
        norm = np.asarray(abs(scaled).sum(axis=1)).ravel()
        empty = np.flatnonzero(norm == 0)
        if empty.size:
            raise ValueError(f"nodes {_listed(empty)} have no neighbour of positive weight: normalization='degree' "
                             "divides by Σ_j |A_ij| w_j")
        return CouplingOperator(scipy.sparse.diags_array(1.0 / norm) @ scaled)

    def edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(i, j, A_ij) of every stored entry, in CSR order."""
        rows, cols = _entries(self.adjacency)
        return rows, cols, np.asarray(self.adjacency.data)


def read_graph(graph: Any, normalization: str | None = None, name: str = "graph") -> Graph:
    """``graph`` as a :class:`Graph` (an adjacency matrix or a networkx graph converted once, with
    ``normalization`` or "n"); a Graph is returned as it is unless another ``normalization`` is asked for.

    Raises
    ------
    TypeError, ValueError
        As :class:`Graph`, naming ``name``.
    """
    if isinstance(graph, Graph):
        return graph if normalization in (None, graph.normalization) else graph.with_normalization(normalization)
    try:
        return Graph(graph, "n" if normalization is None else normalization)
    except (TypeError, ValueError) as exc:
        message = str(exc)
        raise type(exc)(message.replace("graph ", f"{name} ", 1) if message.startswith("graph ") else message) \
            from None


def _generator(seed: int | np.random.Generator | None) -> tuple[np.random.Generator, str]:
    """The generator of ``seed`` and how a description records it."""
    if isinstance(seed, np.random.Generator):
        return seed, "generator"
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (2**63))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise TypeError(f"seed must be a non-negative integer, a numpy Generator or None, got {seed!r}")
    return np.random.default_rng(int(seed)), str(int(seed))


def model_repr(model: Any) -> str:
    """``Name(field=value, …)`` of a dataclass model, with ``graph=…`` only when it has one (the field is left out of
    the generated repr, so that a model without a graph reads as it always has)."""
    shown = ", ".join(f"{f.name}={getattr(model, f.name)!r}" for f in dataclasses.fields(model) if f.repr)
    graph = getattr(model, "graph", None)
    return f"{type(model).__name__}({shown}{'' if graph is None else f', graph={graph!r}'})"

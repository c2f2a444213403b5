"""Self-attention with general weights: heads, feed-forward term, R^d, rescaled dynamics.

Paper 2, (2.7)–(2.8), with H heads and an optional feed-forward term:

    ẋ_i = Π_{x_i} ( Σ_h Σ_j P^h_ij V_h x_j + W φ(A x_i + b) ),
    P^h_ij = e^{β<Q_h x_i, K_h x_j>} / Σ_l e^{β<Q_h x_i, K_h x_l>},

with Π_x = P⊥_x = I - x xᵀ (``projection=True``, particles on S^{d-1}) or
Π_x = I (``projection=False``, pure self-attention on R^d, paper 1).
Paper 1's rescaled form (one head, no feed-forward, no projection):
z_i = e^{-tV} x_i solves

    ż_i = Σ_j P_ij(t) V (z_j - z_i),   P_ij(t) = softmax_j(β<Q e^{tV} z_i, K e^{tV} z_j>)    (9.3),

and paper 2's (9.4), the same with the scores of z itself (``scores_at_z=True``),

    ż_i = Σ_j softmax_j(β<Q z_i, K z_j>) V (z_j - z_i)                                       (9.4),

whose limit β → ∞ is the hard-max dynamics (:class:`meanfield.HardmaxAttention`).
Weights are time-independent.

With ``normalization="sinkhorn"`` (paper 2, Remark 3.5; Sander et al. 2022) every softmax P^h above is
replaced by the doubly stochastic P^h = diag(e^f) e^{β<Q_h x_i, K_h x_j>} diag(e^g), rows and columns
summing to 1, found by Sinkhorn's iteration in logarithms (:mod:`meanfield.models._sinkhorn`).

With ``layer_norm="rms"`` (gain D) or ``layer_norm="centred"`` (LayerNorm) the tokens y_i live on the manifold of
that normalisation (the ellipsoid |D^{-1} y| = 1; the sphere |y| = √d in Σ_k y_k = 0) and Π_y is the continuous
limit of the normalised residual step there (:mod:`meanfield.domains._normalized`):

    ẏ_i = Π_{y_i} w_i,   w_i = Σ_h Σ_j P^h_ij V_h y_j + W φ(A y_i + b),   P^h_ij = softmax_j(β<Q_h y_i, K_h y_j>),
    rms:      Π_y w = w - y <D^{-2} y, w>              (oblique, along y, onto T_y of the ellipsoid),
    centred:  Π_y w = C w - y <y, C w>/d,  C = I - 1 1ᵀ/d  (orthogonal onto T_y of the centred sphere).

D = cI: y = c x with x on S^{d-1} solving the unit-sphere dynamics with β' = c²β *in the same time* (the
scores β<Q cx_i, K cx_j> = c²β<Q x_i, K x_j>; w(cx) = c w'(x) and Π_{cx} = P⊥_x, so c ẋ = c P⊥_x w'(x)): the
time factor is 1, the gain acts only through β. With Q = K = V = I, "centred" is SA on S^{d-2} (the
hyperplane's unit sphere) with β' = dβ, tokens √d x.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.special

from ..domains._geometry import EuclideanGeometry, SphereGeometry, tangent_projection
from ..domains._normalized import TokenNormalization
from .._validate import as_real_array, check_beta
from ._edge_attention import edge_sums
from ._graph import model_repr, read_graph
from ._matrix_exponential import matrix_exponential
from ._model import Model
from ._self_attention_sums import BLOCK_ELEMENTS, blocks
from ._sinkhorn import SinkhornNotConverged, sinkhorn_attention

__all__ = ["Attention", "FeedForward", "consensus_velocity", "softmax_attention"]

_ACTIVATIONS = {"relu": lambda z: np.maximum(z, 0.0), "tanh": np.tanh}
NORMALIZATIONS = ("softmax", "sinkhorn")
#: default bound on the normalisations of ``normalization="sinkhorn"`` and its default tolerance on the row and
#: column sums
SINKHORN_ITERATIONS = 1000
SINKHORN_TOLERANCE = 1e-10


@dataclass(frozen=True)
class FeedForward:
    """Feed-forward term W φ(A x + b) of (2.8): W (d, m), A (m, d), b (m,), φ = "relu" or "tanh"."""

    W: np.ndarray
    A: np.ndarray
    b: np.ndarray
    activation: str = "relu"

    def __post_init__(self) -> None:
        W, A, b = (as_real_array(name, v) for name, v in (("W", self.W), ("A", self.A), ("b", self.b)))
        if W.ndim != 2 or A.ndim != 2 or b.ndim != 1 or A.shape != (W.shape[1], W.shape[0]) or b.size != A.shape[0]:
            raise ValueError(
                f"ffn needs W of shape (d, m), A of shape (m, d), b of shape (m,), got W {W.shape}, "
                f"A {A.shape}, b {b.shape}"
            )
        if self.activation not in _ACTIVATIONS:
            raise ValueError(f"ffn activation must be one of {sorted(_ACTIVATIONS)}, got {self.activation!r}")
        for name, v in (("W", W), ("A", A), ("b", b)):
            object.__setattr__(self, name, v)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return _ACTIVATIONS[self.activation](x @ self.A.T + self.b) @ self.W.T


def _as_heads(name: str, value: Any) -> np.ndarray | None:
    if value is None:
        return None
    arr = as_real_array(name, value, finite=False)
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3 or arr.shape[1] != arr.shape[2]:
        raise ValueError(f"{name} must be a square (d, d) matrix or a stack (heads, d, d), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    return arr


@dataclass(frozen=True, eq=False)
class Attention(Model):
    r"""Self-attention dynamics with weights (Q_h, K_h, V_h), h = 1..H (see module docstring).

    Parameters
    ----------
    beta : float
        β ≥ 0.
    Q, K, V : None, (d, d) or (heads, d, d) arrays
        None means the identity. All given matrices must agree in d and heads.
    heads : int, optional
        Number of heads H (checked against the stacks; identity heads are repeated).
    ffn : FeedForward or (W, A, b[, activation]), optional
        The feed-forward term of (2.8).
    projection : bool
        True: particles on S^{d-1}, velocity projected by P⊥_x (layer
        normalisation). False: pure self-attention on R^d.
    rescaled : bool
        Integrate paper 1's z = e^{-tV} x instead of x (one head, no ffn, no projection), (9.3).
    scores_at_z : bool
        With ``rescaled=True``: the softmax scores are β<Q z_i, K z_j> of the rescaled tokens
        themselves, paper 2's (9.4), instead of those of x = e^{tV} z.
    graph : Graph, scipy.sparse matrix, array_like (n, n) or networkx graph, optional
        Attention restricted to edges: P^h_ij = A_ij e^{β<Q_h x_i, K_h x_j>} / Σ_l A_il e^{β<Q_h x_i, K_h x_l>}
        (a softmax over i's edges, whatever the graph's normalisation), summed over the edges in
        O(entries · d) (:mod:`meanfield.models._edge_attention`). ``mf.Graph.causal(n)`` is the causal mask of a
        decoder (token i attends to j ≤ i). Weights must be non-negative and every node needs an edge.
    normalization : {"softmax", "sinkhorn"}
        "softmax" (default): P^h of (2.7), rows summing to 1. "sinkhorn": the doubly stochastic
        P^h = diag(e^f) K^h diag(e^g), K^h_ij = e^{β<Q_h x_i, K_h x_j>}, rows and columns summing to 1
        (paper 2, Remark 3.5; Sander et al. 2022), by Sinkhorn's iteration in logarithms
        (:mod:`meanfield.models._sinkhorn`). It needs equal token weights (a run with unequal weights is
        refused) and no graph.
    sinkhorn_iterations : int
        With "sinkhorn": the largest number k of normalisations, alternately of the rows and the columns,
        rows first (default 1000). k = 1 is one row normalisation: the softmax, SA.
    sinkhorn_tolerance : float or None
        With "sinkhorn": the iteration stops at the first normalisation after which every row and column
        sum is within this of 1 (default 1e-10); one that does not get there in ``sinkhorn_iterations``
        stops a :func:`meanfield.simulate` run with ``success = 0`` and a message giving the iterations and
        the residual reached, and is a ValueError of :func:`meanfield.attention_matrix`. None: exactly
        ``sinkhorn_iterations`` normalisations, nothing judged (Sander et al.'s fixed-count Sinkformer).
    layer_norm : {None, "rms", "centred"}
        The token normalisation (:mod:`meanfield.domains._normalized`). None (default): the unit sphere
        (``projection=True``) or R^d. "rms": RMS norm with the diagonal ``gain`` D, unit-norm convention
        y = D z/|z|, tokens on the ellipsoid |D^{-1} y| = 1 (the RMSNorm D z/rms(z), rms = |z|/√d, is the gain
        √d·g). "centred": the LayerNorm (z - mean z)/std z with γ = 1, b = 0, tokens on the sphere |y| = √d of
        the hyperplane Σ_k y_k = 0 (d ≥ 3). The velocity is projected by the continuous limit Π_y of the
        layer (module docstring); ``simulate(method="layers")`` takes the layers themselves.
    gain : array_like (d,), optional
        With ``layer_norm="rms"``: the positive diagonal g of D (None: D = I, which is the unit sphere).

    Raises
    ------
    ValueError
        β < 0 or not finite; Q, K, V not square, not finite, or disagreeing in d or in the number of
        heads; an ``ffn`` whose shapes do not fit; ``rescaled=True`` with a projection, several heads or
        an ffn; ``scores_at_z=True`` without ``rescaled=True``; a graph with negative weights or
        isolated nodes; ``normalization`` not "softmax" or "sinkhorn", ``sinkhorn_iterations`` not a
        positive integer, ``sinkhorn_tolerance`` not None or in (0, 1), Sinkhorn settings with
        ``normalization="softmax"``, or "sinkhorn" with a graph; ``layer_norm`` not None, "rms" or "centred",
        or with ``projection=False`` or ``rescaled=True``; ``gain`` without ``layer_norm="rms"``, not a 1-D
        array of positive finite numbers, or of a length other than the weights' d; "centred" with d < 3.

    Notes
    -----
    Paper 2, (2.7)–(2.8), with Π_x = P⊥_x = I - x xᵀ (``projection=True``) or Π_x = I:

    .. math::

        \dot x_i = \Pi_{x_i}\Big(\sum_{h=1}^{H} \sum_{j=1}^{n} P^h_{ij}\, V_h x_j + W\varphi(A x_i + b)\Big),
        \qquad
        P^h_{ij} = \frac{e^{\beta\langle Q_h x_i, K_h x_j\rangle}}{\sum_{l=1}^{n} e^{\beta\langle Q_h x_i, K_h x_l\rangle}}.

    Paper 1's rescaled tokens z_i = e^{-tV} x_i (``rescaled=True``) solve paper 2's (9.3); with
    ``scores_at_z=True`` the scores are those of z itself, paper 2's (9.4):

    .. math::

        \dot z_i = \sum_{j=1}^{n} \operatorname{softmax}_j\big(\beta\langle Q e^{tV} z_i, K e^{tV} z_j\rangle\big)\,
        V (z_j - z_i).

    With identity weights, one head and no ffn this is :class:`~meanfield.SelfAttention` (SA). The
    dynamics has the energy E_β = (1/2β) Σ_ij w_i w_j e^{β<Q x_i, K x_j>} when V = c QᵀK with QᵀK
    symmetric (one head, no ffn, not rescaled, paper 2, §3.4.1).

    Sinkhorn attention (``normalization="sinkhorn"``) replaces each P^h by its doubly stochastic scaling.
    Because the columns sum to 1 too, Σ_i Σ_j P_ij V x_j = V Σ_j x_j: on R^d (no projection, one head, no
    ffn) the mean m = (1/n) Σ_i x_i solves ṁ = V m exactly, m(t) = e^{tV} m(0), whatever Q, K, V, and the
    rescaled tokens z = e^{-tV} x of (9.3) and (9.4), ż_i = Σ_j P_ij V (z_j - z_i), keep their mean, to the
    tolerance of the iteration. With QᵀK symmetric the scaling is symmetric, P = diag(e^f) K diag(e^f),
    Sander et al.'s symmetric case. The projection P⊥_{x_i} of the sphere breaks these identities. It has
    no interaction energy in meanfield (:meth:`gradient_factor` refuses it).

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> x = mf.sample(mf.uniform(mf.ZonalSphere(3, 8)), 5, seed=0).points   # 5 tokens on S²
    >>> sa = mf.SelfAttention(2.0)
    >>> print(np.allclose(mf.Attention(2.0).velocity(x), sa.velocity(x)))  # identity weights: SA
    True
    >>> two = mf.Attention(2.0, heads=2)              # two identity heads add up
    >>> print(np.allclose(two.velocity(x), 2 * sa.velocity(x)))
    True
    >>> P = mf.attention_matrix(mf.Attention(2.0), x)
    >>> P.shape, np.round(P.sum(axis=1), 12).tolist()    # rows of a softmax sum to 1
    ((5, 5), [1.0, 1.0, 1.0, 1.0, 1.0])
    >>> sink = mf.Attention(2.0, normalization="sinkhorn")   # doubly stochastic: columns sum to 1 too
    >>> bool(np.abs(mf.attention_matrix(sink, x).sum(axis=0) - 1).max() <= 1e-10)
    True
    >>> rms = mf.Attention(2.0, layer_norm="rms", gain=[0.5, 0.5, 0.5])   # D = cI: SA at β' = c²β, same time
    >>> print(np.allclose(rms.velocity(0.5 * x), 0.5 * mf.Attention(0.5).velocity(x)))
    True
    """

    beta: float
    Q: Any = None
    K: Any = None
    V: Any = None
    heads: int | None = None
    ffn: Any = None
    projection: bool = True
    rescaled: bool = False
    scores_at_z: bool = False
    graph: Any = field(default=None, repr=False)
    normalization: str = field(default="softmax", repr=False)
    sinkhorn_iterations: int = field(default=SINKHORN_ITERATIONS, repr=False)
    sinkhorn_tolerance: float | None = field(default=SINKHORN_TOLERANCE, repr=False)
    layer_norm: str | None = field(default=None, repr=False)
    gain: Any = field(default=None, repr=False)

    def __repr__(self) -> str:
        text = model_repr(self)
        if self.normalization != "softmax":
            text = (f"{text[:-1]}, normalization={self.normalization!r}, sinkhorn_iterations="
                    f"{self.sinkhorn_iterations!r}, sinkhorn_tolerance={self.sinkhorn_tolerance!r})")
        if self.layer_norm is not None:
            gain = None if self.gain is None else self.gain.tolist()
            text = f"{text[:-1]}, layer_norm={self.layer_norm!r}, gain={gain!r})"
        return text

    def __post_init__(self) -> None:
        object.__setattr__(self, "beta", check_beta(self.beta))
        mats = {name: _as_heads(name, getattr(self, name)) for name in ("Q", "K", "V")}
        given = {k: v for k, v in mats.items() if v is not None}
        dims = {v.shape[1] for v in given.values()}
        if len(dims) > 1:
            raise ValueError(
                "Q, K, V must have the same dimension d, got shapes "
                + ", ".join(f"{k} {v.shape[1:]}" for k, v in given.items())
            )
        counts = {v.shape[0] for v in given.values() if v.shape[0] > 1}
        if self.heads is not None:
            if isinstance(self.heads, bool) or not isinstance(self.heads, (int, np.integer)) or self.heads < 1:
                raise ValueError(f"heads must be a positive integer, got {self.heads!r}")
            counts.add(int(self.heads))
        if len(counts) > 1:
            raise ValueError(f"Q, K, V and heads disagree on the number of heads: {sorted(counts)}")
        object.__setattr__(self, "heads", counts.pop() if counts else 1)
        object.__setattr__(self, "_dim", dims.pop() if dims else None)
        for name, v in mats.items():
            object.__setattr__(self, name, v)
        ffn = self.ffn
        if ffn is not None and not isinstance(ffn, FeedForward):
            ffn = FeedForward(*ffn)
        object.__setattr__(self, "ffn", ffn)
        if ffn is not None and self._dim is not None and ffn.W.shape[0] != self._dim:
            raise ValueError(f"ffn W has {ffn.W.shape[0]} rows but the weights have d = {self._dim}")
        if self.rescaled and (self.projection or self.heads != 1 or ffn is not None):
            raise ValueError("rescaled=True is paper 1's dynamics: it needs projection=False, one head and no ffn")
        if self.scores_at_z and not self.rescaled:
            raise ValueError("scores_at_z=True is paper 2's (9.4), an equation of the rescaled tokens z: it needs "
                             "rescaled=True")
        if self.graph is not None:
            graph = read_graph(self.graph)
            if graph.signed:
                raise ValueError("graph: attention restricted to edges is a softmax over each node's edges and needs "
                                 "non-negative weights")
            if graph.isolated.size:
                raise ValueError(f"graph has isolated nodes {graph.isolated[:8].tolist()}: the softmax over a node's "
                                 f"edges needs at least one edge per node")
            object.__setattr__(self, "graph", graph)
        self._check_normalization()
        self._check_layer_norm()

    def _check_layer_norm(self) -> None:
        """Refuse, by name, a token normalisation that does not apply; keep it as ``_tokens``."""
        if self.layer_norm is None:
            if self.gain is not None:
                raise ValueError("gain is the diagonal D of layer_norm='rms'; pass layer_norm='rms' with it")
            object.__setattr__(self, "_tokens", None)
            return
        tokens = TokenNormalization(self.layer_norm, self.gain)
        if not self.projection or self.rescaled:
            raise ValueError(f"layer_norm={self.layer_norm!r} normalises the tokens after every layer: it needs "
                             f"projection=True and rescaled=False, got projection={self.projection}, "
                             f"rescaled={self.rescaled}")
        if self._dim is not None:
            tokens.check_dimension(self._dim)
        object.__setattr__(self, "gain", tokens.gain)
        object.__setattr__(self, "_tokens", tokens)

    def _check_normalization(self) -> None:
        """Refuse, by name, a normalisation or Sinkhorn setting that does not apply."""
        if self.normalization not in NORMALIZATIONS:
            raise ValueError(f"normalization must be one of {NORMALIZATIONS}, got {self.normalization!r}")
        if self.normalization == "softmax":
            if self.sinkhorn_iterations != SINKHORN_ITERATIONS or self.sinkhorn_tolerance != SINKHORN_TOLERANCE:
                raise ValueError("sinkhorn_iterations and sinkhorn_tolerance set the doubly stochastic attention of "
                                 "normalization='sinkhorn'; the softmax has none (got sinkhorn_iterations="
                                 f"{self.sinkhorn_iterations!r}, sinkhorn_tolerance={self.sinkhorn_tolerance!r})")
            return
        k = self.sinkhorn_iterations
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"sinkhorn_iterations must be a positive integer (the number of row and column "
                             f"normalisations; 1 is the softmax), got {k!r}")
        object.__setattr__(self, "sinkhorn_iterations", int(k))
        tol = self.sinkhorn_tolerance
        if tol is not None:
            if isinstance(tol, bool) or not isinstance(tol, (int, float, np.integer, np.floating)) \
                    or not 0 < tol < 1:
                raise ValueError(f"sinkhorn_tolerance must be None (a fixed number of normalisations) or a number in "
                                 f"(0, 1) bounding |row and column sums - 1|, got {tol!r}")
            object.__setattr__(self, "sinkhorn_tolerance", float(tol))
        if self.graph is not None:
            raise ValueError("normalization='sinkhorn' scales the full attention matrix; restricted to a graph the "
                             "doubly stochastic scaling need not exist: pass graph=None")

    @property
    def name(self) -> str:
        return "Attention"

    @property
    def noise(self) -> float:
        return 0.0

    @property
    def particle_domain(self) -> Any:
        """R^d ("euclidean") for pure self-attention (``projection=False``); the manifold of a ``layer_norm``
        (its :class:`~meanfield.domains._normalized.TokenNormalization`); else read by shape (S^{d-1})."""
        if self._tokens is not None:
            return self._tokens
        return None if self.projection else "euclidean"

    @property
    def attrs(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "model": "Attention", "beta": self.beta, "heads": int(self.heads),
            "projection": int(self.projection), "rescaled": int(self.rescaled), "scores_at_z": int(self.scores_at_z), "noise": 0.0,
        }
        for name in ("Q", "K", "V"):
            m = getattr(self, name)
            out[name] = "identity" if m is None else repr(np.round(m, 12).tolist())
        out["ffn"] = "none" if self.ffn is None else f"{self.ffn.activation}, width {self.ffn.A.shape[0]}"
        if self.normalization == "sinkhorn":  # a softmax model's attrs stay those it always had
            out.update(normalization="sinkhorn", sinkhorn_iterations=self.sinkhorn_iterations,
                       sinkhorn_tolerance=-1.0 if self.sinkhorn_tolerance is None else self.sinkhorn_tolerance)
        if self._tokens is not None:  # a unit-sphere model's attrs stay those it always had
            out.update(self._tokens.attrs)
        return out if self.graph is None else {**out, **self.graph.attrs}

    def matrices(self, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Stacks (heads, d, d) of Q_h, K_h, V_h (identity where not given)."""
        if self._dim is not None and self._dim != d:
            raise ValueError(f"particles have dimension d = {d} but Q, K, V are {self._dim} × {self._dim}")
        eye = np.broadcast_to(np.eye(d), (self.heads, d, d))
        out = []
        for name in ("Q", "K", "V"):
            m = getattr(self, name)
            out.append(eye if m is None else np.broadcast_to(m, (self.heads, d, d)))
        return tuple(out)

    def attention_matrix(self, points: np.ndarray, head: int = 0, t: float = 0.0) -> np.ndarray:
        """P^h_ij = softmax_j(β<Q_h x_i, K_h x_j>) of points (systems, n, d) (its doubly stochastic scaling with
        ``normalization="sinkhorn"``; a ValueError when that did not converge); for the rescaled dynamics the
        points are z and x = e^{tV} z enters P ((9.3)), or z itself with ``scores_at_z`` ((9.4))."""
        Q, K, V = self.matrices(points.shape[-1])
        if self.rescaled and not self.scores_at_z:
            points = points @ matrix_exponential(t * V[0]).T
        if self.normalization == "sinkhorn":
            try:
                return self._sinkhorn(points, self.beta * Q[head].T @ K[head], t)
            except SinkhornNotConverged as err:
                raise ValueError(str(err)) from None
        mask = None if self.graph is None else self.graph.adjacency.toarray()
        return softmax_attention(points, points, self.beta * Q[head].T @ K[head], mask=mask)

    def _sinkhorn(self, x: np.ndarray, M: np.ndarray, t: float, block_elements: int = BLOCK_ELEMENTS) -> np.ndarray:
        """The doubly stochastic attention matrix of scores x_iᵀ M x_j (:func:`sinkhorn_attention`), or
        :class:`SinkhornNotConverged` naming the iterations and the residual reached."""
        result = sinkhorn_attention(x, x, M, self.sinkhorn_iterations, self.sinkhorn_tolerance, block_elements)
        if self.sinkhorn_tolerance is not None and not result.residual <= self.sinkhorn_tolerance:
            raise SinkhornNotConverged(
                f"Sinkhorn attention did not converge at t = {t:.17g}: after sinkhorn_iterations = "
                f"{result.iterations} normalisations the row and column sums are off by {result.residual:.3g} > "
                f"sinkhorn_tolerance = {self.sinkhorn_tolerance:g}; allow more sinkhorn_iterations, a larger "
                f"sinkhorn_tolerance, or lower beta = {self.beta:g}")
        return result.matrix

    # ------------------------------------------------------------------ energy
    def gradient_factor(self, d: int) -> float:
        """c with V = c QᵀK, QᵀK symmetric, one head, no feed-forward term, not rescaled, no graph: the case where
        the dynamics is a gradient flow of E_β for the metric Σ_i Z_i <a_i, b_i> (paper 2, §3.4.1, (3.12)) turned
        by c; a ValueError saying which condition fails otherwise (always for ``normalization="sinkhorn"``)."""
        if self.normalization == "sinkhorn":
            raise ValueError("Attention(normalization='sinkhorn') has no interaction energy in meanfield: E_β of "
                             "paper 2 (3.5) is not a Lyapunov function of doubly stochastic attention (Sander et al. "
                             "2022 write its symmetric case as a Wasserstein gradient flow of another functional, "
                             "which meanfield does not compute)")
        if self.graph is not None:
            raise ValueError(f"Attention restricted to the graph {self.graph.name!r} has no interaction energy in "
                             f"meanfield")
        if self._tokens is not None and self._tokens.kind == "rms" and self._tokens.scalar_gain is None:
            raise ValueError("Attention(layer_norm='rms') with a gain D whose entries differ has no interaction "
                             "energy in meanfield: its projection Π_y = I - y (D^{-2} y)ᵀ is oblique, and along it "
                             "dE_β/dt = Σ_i (c/Z_i)<P⊥ g_i, D^{-2} g_i> (x = D^{-1} y, g_i = ∇_{x_i} E_β) has no sign; "
                             "only D = cI (SA's energy at β' = c²β) and layer_norm='centred' have one")
        if self.heads != 1 or self.ffn is not None or self.rescaled:
            raise ValueError("Attention has an interaction energy only with one head, no ffn and rescaled=False "
                             f"(got heads={self.heads}, ffn={'none' if self.ffn is None else 'given'}, "
                             f"rescaled={self.rescaled})")
        Q, K, V = (m[0] for m in self.matrices(d))
        M = Q.T @ K
        scale = max(float(np.abs(M).max()), 1e-300)
        if np.abs(M - M.T).max() > 1e-12 * scale:
            raise ValueError("Attention has an interaction energy only when QᵀK is symmetric (paper 2, §3.4.1); "
                             f"here |QᵀK - KᵀQ| = {np.abs(M - M.T).max():.3g}")
        if not np.any(M):
            raise ValueError("Attention has an interaction energy only when QᵀK is not zero (paper 2, §3.4.1)")
        c = float(np.sum(V * M) / np.sum(M * M))
        if c == 0 or np.abs(V - c * M).max() > 1e-12 * max(float(np.abs(V).max()), 1e-300):
            raise ValueError("Attention has an interaction energy only when V = c QᵀK for a real c ≠ 0 "
                             "(paper 2, §3.4.1: V = QᵀK, c = 1; V = -I with Q = K = I, c = -1)")
        return c

    @property
    def has_energy(self) -> bool:
        """True where :meth:`gradient_factor` exists (its dimension is that of the weights, or any for
        identity weights)."""
        try:
            self.gradient_factor(self._dim or 2)
        except ValueError:
            return False
        return True

    def particle_energy(self, states: np.ndarray, weights: np.ndarray, geometry: Any,
                        accuracy: float | None = None) -> np.ndarray:
        """E_β(X) = (1/2β) Σ_{i,j} w_i w_j e^{β<Q x_i, K x_j>} per system (paper 2, §3.4.1 with the weights
        w_i = 1/n of :func:`meanfield.energy`; E_0 = (1/2) Σ w_i w_j <Q x_i, K x_j>), summed in logarithms.
        Along the dynamics ẋ_i = Π_{x_i} Σ_j P_ij V x_j with V = c QᵀK:

            dE_β/dt = (1/c) Σ_i w_i Z_i |ẋ_i|²,   Z_i = Σ_j w_j e^{β<Q x_i, K x_j>},

        so E_β increases for c > 0 and decreases for c < 0 (V = -I).

        With a ``layer_norm`` of scalar G = g I (the "rms" gain cI: g = c; "centred": g = √d) it is the energy
        of the unit tokens x = y/g at β' = g²β, E_{β'}(x) = (1/(2g²β)) Σ w_i w_j e^{β<Q y_i, K y_j>}: x solves
        ẋ_i = Π_{x_i} Σ_j softmax_j(β'<Q x_i, K x_j>) V x_j with Π the orthogonal projection onto the tangent
        space of the unit sphere (of S^{d-1} ∩ 1^⊥ for "centred"), a gradient flow of E_{β'} for the same metric
        Σ_i Z_i <a_i, b_i> as on S^{d-1} (the argument of (3.12) holds on any submanifold whose projection is
        orthogonal), so the identity above holds for x, β'."""
        x = np.asarray(states, dtype=float)
        self.gradient_factor(x.shape[-1])
        beta = self.beta
        if self._tokens is not None:
            d = x.shape[-1]
            g = self._tokens.scalar_gain if self._tokens.kind == "rms" else float(np.sqrt(d))
            x, beta = x / g, beta * g * g
        Q, K, _ = (m[0] for m in self.matrices(x.shape[-1]))
        M = Q.T @ K
        out = np.empty(x.shape[0])
        for system, (points, w) in enumerate(zip(x, weights)):  # one (n, n) Gram matrix in memory at a time
            inner = points @ M @ points.T
            if beta == 0:
                out[system] = 0.5 * w @ inner @ w
            else:
                out[system] = scipy.special.logsumexp(beta * inner, b=np.outer(w, w)) - np.log(2 * beta)
        if beta == 0:
            return out
        with np.errstate(over="ignore"):
            return np.exp(out)

    def check_particles(self, geometry: Any) -> None:
        """Points of S^{d-1} with the projection, of R^d without it, of the manifold of the ``layer_norm``
        (shape (n, d))."""
        if self._tokens is not None:
            if not self._tokens.holds(geometry):
                raise ValueError(f"Attention(layer_norm={self.layer_norm!r}) needs points on the {self._tokens.name} "
                                 f"of its normalisation (shape (n, d), read with domain=None), got domain "
                                 f"{geometry.name!r}")
            return
        want = SphereGeometry if self.projection else EuclideanGeometry
        if not isinstance(geometry, want):
            raise ValueError(f"Attention(projection={self.projection}) needs points on the "
                             f"{'sphere' if self.projection else 'euclidean'} domain (shape (n, d)), got domain "
                             f"{geometry.name!r}")

    def particle_velocity(self, geometry: Any, weights: np.ndarray, frequencies: np.ndarray | None, *,
                          path: str = "auto", accuracy: float = 1e-10, block_elements: int = BLOCK_ELEMENTS):
        """The velocity callable X(t, x) for states (systems, n, d) (equal weights: the softmax of (2.7)
        averages over all tokens), by blocked BLAS sums."""
        if path not in ("auto", "direct"):
            raise ValueError(f"path={path!r} is not available for Attention, whose velocity is summed directly; "
                             f"use path='auto'")
        if self.normalization == "sinkhorn":
            spread = np.ptp(weights, axis=-1).max(initial=0.0)
            if spread > 1e-12 * float(np.max(weights)):
                raise ValueError(f"weights: Attention(normalization='sinkhorn') makes rows and columns of P sum to 1, "
                                 f"the doubly stochastic matrix of equal token weights; got weights differing by "
                                 f"{spread:.3g}")
        project = self._projector(geometry)
        if self.graph is None:
            return _AttentionVelocity(self._velocity(geometry.dimension, project, block_elements))
        self.graph.check_nodes(weights.shape[-1])
        return _AttentionVelocity(self._edge_velocity(geometry.dimension, project, self.graph.operator(weights)),
                                  "edges")

    def _projector(self, geometry: Any):
        """Π(x, w) of the velocity: P⊥_x (the unit sphere), Π_y of the ``layer_norm``'s manifold
        (``geometry.tangent``), or None (R^d, no projection)."""
        if self._tokens is not None:
            return geometry.tangent
        return tangent_projection if self.projection else None

    def particle_velocity_parts(self, geometry: Any, weights: np.ndarray, frequencies: np.ndarray | None,
                                split: str, *, path: str = "auto", accuracy: float = 1e-10,
                                block_elements: int = BLOCK_ELEMENTS) -> tuple[Any, Any]:
        """The attention part Π_x Σ_h Σ_j P^h_ij V_h x_j and the feed-forward part Π_x W φ(A x + b) of the velocity
        (their sum is :meth:`particle_velocity`), the sub-layers of a Lie–Trotter split; a model without a
        feed-forward term has no split."""
        if self.ffn is None or self.graph is not None:
            given = {name: "none" if value is None else "given" for name, value in (("ffn", self.ffn),
                                                                                     ("graph", self.graph))}
            raise ValueError(f"split={split!r} takes a layer as attention then feed-forward: it needs an Attention "
                             f"with a feed-forward term (ffn) and no graph, got ffn={given['ffn']}, "
                             f"graph={given['graph']}")
        if path not in ("auto", "direct"):
            raise ValueError(f"path={path!r} is not available for Attention, whose velocity is summed directly; "
                             f"use path='auto'")
        d = geometry.dimension
        ffn, project = self.ffn, self._projector(geometry)

        def feed_forward(t: float, x: np.ndarray) -> np.ndarray:
            out = ffn(x)
            return out if project is None else project(x, out)

        return (_AttentionVelocity(self._velocity(d, project, block_elements, with_ffn=False)),
                _AttentionVelocity(feed_forward))

    def _velocity(self, d: int, project: Any, block_elements: int = BLOCK_ELEMENTS, with_ffn: bool = True):
        """The velocity function X(t, x) for states (systems, n, d), projected by ``project`` (None: not)
        (without the feed-forward term if not ``with_ffn``)."""
        Q, K, V = self.matrices(d)
        M = np.einsum("hab,hac->hbc", Q, K)  # <Q x, K y> = xᵀ (QᵀK) y
        beta, rescaled = self.beta, self.rescaled
        ffn = self.ffn if with_ffn else None
        scores_at_z = self.scores_at_z
        if self.normalization == "sinkhorn":
            def attention(t: float, x: np.ndarray, m: np.ndarray) -> np.ndarray:
                return self._sinkhorn(x, m, t, block_elements)
        else:
            def attention(t: float, x: np.ndarray, m: np.ndarray) -> np.ndarray:
                return softmax_attention(x, x, m, block_elements)

        def velocity(t: float, x: np.ndarray) -> np.ndarray:
            if rescaled:
                xt = x if scores_at_z else x @ matrix_exponential(t * V[0]).T
                p = attention(t, xt, beta * M[0])
                if scores_at_z:
                    return consensus_velocity(p, x, block_elements) @ V[0].T
                vz = x @ V[0].T
                return np.matmul(p, vz) - vz
            out = np.zeros_like(x)
            for h in range(M.shape[0]):
                p = attention(t, x, beta * M[h])
                out += np.matmul(p, x @ V[h].T)
            if ffn is not None:
                out += ffn(x)
            return out if project is None else project(x, out)

        return velocity

    def _edge_velocity(self, d: int, project: Any, operator: Any):
        """X(t, x) restricted to the edges of ``operator`` (the graph's): per head N/D of
        :func:`edge_sums` with a row-max shift (the softmax over each node's edges); the rescaled forms as
        Σ_j P_ij (v_j - v_i), summed as differences."""
        Q, K, V = self.matrices(d)
        M = np.einsum("hab,hac->hbc", Q, K)
        beta, ffn, rescaled = self.beta, self.ffn, self.rescaled
        scores_at_z = self.scores_at_z

        def velocity(t: float, x: np.ndarray) -> np.ndarray:
            if rescaled:
                xt = x if scores_at_z else x @ matrix_exponential(t * V[0]).T
                values = x if scores_at_z else x @ V[0].T
                num, den = edge_sums(operator, xt @ (beta * M[0]), xt, values, row_max=True, differences=True)
                out = num / den[..., None]
                return out @ V[0].T if scores_at_z else out
            out = np.zeros_like(x)
            for h in range(M.shape[0]):
                num, den = edge_sums(operator, x @ (beta * M[h]), x, x @ V[h].T, row_max=True)
                out += num / den[..., None]
            if ffn is not None:
                out += ffn(x)
            return out if project is None else project(x, out)

        return velocity


def consensus_velocity(p: np.ndarray, z: np.ndarray, block_elements: int = BLOCK_ELEMENTS) -> np.ndarray:
    """Σ_j p_ij (z_j - z_i) for rows p_i· summing to 1, stacks (systems, n, n) and (systems, n, d).

    Summed as differences, elementwise in one fixed order for every row: no cancellation between
    Σ_j p_ij z_j and z_i when the tokens cluster, and a symmetry of the tokens that permutes them and
    changes signs of components (Example 9.3's reflection) holds exactly in floating point, where a
    matrix product with fused multiply-adds breaks it at one ulp (which (9.4)'s repelling ties
    amplify at rate ~β). Memory: blocks of at most ``block_elements`` differences.
    """
    n_sys, n, d = z.shape
    out = np.empty_like(z)
    for ss, rs in blocks(n_sys, n, n * d, block_elements):
        differences = z[ss, None, :, :] - z[ss, rs, None, :]
        out[ss, rs] = np.sum(p[ss, rs, :, None] * differences, axis=2)
    return out


def softmax_attention(x: np.ndarray, y: np.ndarray, M: np.ndarray, block_elements: int = BLOCK_ELEMENTS,
                      mask: np.ndarray | None = None) -> np.ndarray:
    """P_ij = e^{x_iᵀ M y_j} / Σ_l e^{x_iᵀ M y_l} for stacks x, y of shape (systems, n, d); with a ``mask``
    A (n, n) of non-negative weights, P_ij = A_ij e^{x_iᵀ M y_j} / Σ_l A_il e^{x_iᵀ M y_l} (attention restricted
    to the edges of a graph; every row needs an entry).

    The row maximum (over the row's entries) is subtracted before exponentiating (no overflow for any scale).
    """
    n_sys, n, _ = x.shape
    xm = x @ M
    out = np.empty((n_sys, n, y.shape[1]))
    for ss, rs in blocks(n_sys, n, y.shape[1], block_elements):
        s = np.matmul(xm[ss, rs], np.swapaxes(y[ss], 1, 2))
        if mask is None:
            s -= s.max(axis=-1, keepdims=True)
            np.exp(s, out=s)
        else:
            rows = mask[rs]
            s -= np.where(rows > 0, s, -np.inf).max(axis=-1, keepdims=True)
            np.exp(np.minimum(s, 0.0), out=s)
            s *= rows
        s /= s.sum(axis=-1, keepdims=True)
        out[ss, rs] = s
    return out


class _AttentionVelocity:
    """X(t, x) of :class:`Attention` (and of the hard-max dynamics) with the attributes of a particle velocity
    (direct sums, no collapse rate)."""

    collapse_rate = 0.0
    fourier_modes = -1

    def __init__(self, function: Any, path: str = "direct") -> None:
        self._function = function
        self.path = path

    def __call__(self, t: float, x: np.ndarray) -> np.ndarray:
        return self._function(t, x)

"""Diagnostics of particle configurations: clusters, order parameter, attention matrix, inner products.

Positions are read as every function that takes particles reads them
(:func:`meanfield.measures._read_particles.read_particles`): an :class:`EmpiricalMeasure`, or a
plain array read on the ``domain=`` argument if given ("circle": angles,
"sphere": unit vectors, "euclidean": points of R^d), else on the domain the
model fixes (``attention_matrix`` with ``Attention(projection=False)``: R^d),
else by its shape (1-D angles on the circle, 2-D (n, d) points on S^{d-1},
3-D (systems, n, d)). Points on a sphere must satisfy
| |x_i| - 1 | ≤ ``sphere_tolerance`` (default ``SPHERE_TOLERANCE``) unless
``renormalize=True`` projects them. ``number_of_clusters`` and
``pair_fraction`` also take any number of leading axes (systems, time, ...)
and a :func:`simulate` Dataset.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from ..measures._measure import EmpiricalMeasure
from ..measures._read_particles import SPHERE_TOLERANCE, read_particles
from ..models._model import check_model
from .._validate import as_real, as_real_array, as_weights, check_nonnegative, check_positive_int
from ._compiled_statistics import cluster_counts, pair_fractions

__all__ = [
    "number_of_clusters",
    "pair_fraction",
    "order_parameter",
    "attention_matrix",
    "numerical_rank",
    "pairwise_inner_products",
]


def _points(positions: Any, domain: str | None, renormalize: bool, sphere_tolerance: float,
            fixed: str | None = None) -> tuple[np.ndarray, np.ndarray, bool]:
    """Points (systems, n, d) (angles as (cos θ, sin θ)), weights (systems, n), and whether
    the input was a single system."""
    read = read_particles(positions, name="positions", domain=domain, fixed=fixed, renormalize=renormalize,
                          tolerance=sphere_tolerance, copy=False)
    return read.geometry.embed(read.points), read.weights, not read.batched


def _configurations(positions: Any, domain: str | None, renormalize: bool,
                    sphere_tolerance: float) -> tuple[np.ndarray, bool, tuple[int, ...], Any]:
    """A stack (N, n, m) of configurations (m = 1: angles), whether it is angles, the leading shape,
    and the leading dims of a ``simulate`` Dataset (None for arrays).

    Leading axes beyond one systems axis are flattened into it before the
    array is read, so the reading (and its messages) is that of
    :func:`read_particles` on a (systems, n) or (systems, n, d) stack.
    """
    dims = None
    if isinstance(positions, xr.Dataset):
        if "positions" not in positions:
            raise ValueError("a Dataset of positions must hold the variable 'positions' (a simulate result)")
        domain = positions.attrs.get("domain") if domain is None else domain
        array = positions["positions"]
        dims = tuple(dim for dim in array.dims if dim not in ("particle", "component"))
        positions = array.values
    x: Any = positions
    lead: tuple[int, ...] | None = None
    array = _as_array(x)
    if array is not None:
        atom_ndim = 1 if (domain == "circle" or (domain is None and array.ndim == 1)) else 2
        if array.ndim > atom_ndim + 1 and array.size:
            lead = array.shape[: array.ndim - atom_ndim]
            x = array.reshape(-1, *array.shape[array.ndim - atom_ndim:])
    read = read_particles(x, name="positions", domain=domain, renormalize=renormalize, tolerance=sphere_tolerance,
                          copy=False)
    if lead is None:
        lead = read.points.shape[:1] if read.batched else ()
    circle = read.geometry.atom_ndim == 1
    flat = read.points[..., None] if circle else read.points
    return np.ascontiguousarray(flat), circle, lead, dims


def _as_array(x: Any) -> np.ndarray | None:
    """``x`` as a float array, or None when the reader must judge it (a measure, text, non-numbers)."""
    if x is None or isinstance(x, (EmpiricalMeasure, str, bytes)):
        return None
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        return None


def _shaped(values: np.ndarray, lead: tuple[int, ...], dims: Any, positions: Any, name: str) -> Any:
    """Per-configuration values in the leading shape: a scalar, an array, or a DataArray over ``dims``."""
    values = values.reshape(lead)
    if dims is not None:
        coords = {dim: positions[dim] for dim in dims if dim in positions.coords}
        return xr.DataArray(values, dims=dims, coords=coords, name=name)
    return values.item() if values.ndim == 0 else values


def number_of_clusters(positions: Any, tolerance: float = 1e-3, domain: str | None = None, *, renormalize: bool = False,
                       sphere_tolerance: float = SPHERE_TOLERANCE) -> Any:
    r"""Number of clusters: connected components of the graph linking particles at distance ≤ ``tolerance``.

    Distance is the Euclidean (chord) distance |x_i - x_j| (angles are mapped to
    (cos θ, sin θ), where the chord of an arc φ is 2 sin(φ/2)); this is
    single-linkage clustering cut at ``tolerance``. On S¹ the count is the
    number of circular gaps between consecutive sorted angles whose chord
    exceeds ``tolerance`` (at least 1); elsewhere a union–find over the pairs.

    Parameters
    ----------
    positions : array_like, EmpiricalMeasure or xarray.Dataset
        One configuration, (n,) angles or (n, d) points, or a stack of them with
        any leading axes, e.g. (systems, time, n) angles (``domain="circle"``) or
        (systems, time, n, d) points; or a :func:`simulate` Dataset (its
        ``domain`` attr gives the domain).
    tolerance : float
        Linking distance ε > 0 (chord distance; default 1e-3).
    domain : {"circle", "sphere", "euclidean"}, optional
        How a plain array is read (default: a Dataset's ``domain`` attr, else by its shape: 1-D
        angles on the circle, 2-D one system of (n, d) points on S^{d-1}, more axes a stack of
        them); "circle" for stacks of angles (..., n).
    renormalize : bool
        Project points onto the sphere (x / |x|) instead of rejecting points off it (default False).
    sphere_tolerance : float
        Allowed | |x_i| - 1 | of points on S^{d-1} (default ``SPHERE_TOLERANCE`` = 1e-10).

    Returns
    -------
    int, ndarray of int or xarray.DataArray
        The number of clusters (≥ 1) of one configuration; an integer array over the leading
        axes of a stack; for a Dataset a DataArray ``number_of_clusters`` over its dims other
        than ``particle``/``component``.

    Raises
    ------
    ValueError
        ``tolerance`` not finite and > 0; a Dataset without ``positions``; positions that cannot
        be read on the domain.

    Notes
    -----
    Particles i and j are linked when their chord distance is at most ε; the clusters are the
    connected components of that graph. On S¹, with sorted angles θ_(1) ≤ … ≤ θ_(n) and the
    circular gaps φ_k = θ_(k+1) - θ_(k) (φ_n = θ_(1) + 2π - θ_(n)):

    .. math::

        N = \max\Big(1,\; \#\{k : 2\sin(\varphi_k / 2) > \varepsilon\}\Big).

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> # two systems of 3 angles: {0, 1e-4} and {π} are two clusters; three equal angles are one
    >>> mf.number_of_clusters(np.array([[0.0, 1e-4, np.pi], [0.0, 0.0, 0.0]]), domain="circle")
    array([2, 1])
    >>> # the 4 vertices of a square on S¹ are chords √2 apart: one cluster at ε = 1.5, four at ε = 1
    >>> square = np.pi / 2 * np.arange(4)
    >>> mf.number_of_clusters(square, tolerance=1.5), mf.number_of_clusters(square, tolerance=1.0)
    (1, 4)
    """
    if not (np.isfinite(tolerance) and tolerance > 0):
        raise ValueError(f"tolerance must be finite and > 0, got {tolerance!r}")
    flat, circle, lead, dims = _configurations(positions, domain, renormalize, sphere_tolerance)
    counts = cluster_counts(flat, circle, float(tolerance))
    return _shaped(counts, lead, dims, positions, "number_of_clusters")


def pair_fraction(positions: Any, delta: float = 1e-3, domain: str | None = None, *, renormalize: bool = False,
                  sphere_tolerance: float = SPHERE_TOLERANCE) -> Any:
    r"""Fraction of ordered pairs i ≠ j of a configuration with <x_i, x_j> ≥ 1 - δ.

        F = #{(i, j) : i ≠ j, <x_i, x_j> ≥ 1 - δ} / (n (n - 1))

    (on S¹: cos(θ_i - θ_j) ≥ 1 - δ). For exchangeable particles, e.g. iid
    starts, E F = P(<x_1(t), x_2(t)> ≥ 1 - δ), the statistic of paper 2's
    Figures 3–5; averaging F over systems estimates it with a smaller variance
    than the first pair alone.

    Parameters
    ----------
    positions : array_like, EmpiricalMeasure or xarray.Dataset
        As for :func:`number_of_clusters`: one configuration or a stack with any
        leading axes, or a :func:`simulate` Dataset.
    delta : float
        δ ∈ (0, 2] (default 1e-3): a pair counts when <x_i, x_j> ≥ 1 - δ, i.e. when its chord
        distance is at most √(2δ).
    domain : {"circle", "sphere", "euclidean"}, optional
        How a plain array is read (default: a Dataset's ``domain`` attr, else by its shape: 1-D
        angles on the circle, 2-D one system of (n, d) points on S^{d-1}, more axes a stack of
        them); "circle" for stacks of angles (..., n).
    renormalize : bool
        Project points onto the sphere (x / |x|) instead of rejecting points off it (default False).
    sphere_tolerance : float
        Allowed | |x_i| - 1 | of points on S^{d-1} (default ``SPHERE_TOLERANCE`` = 1e-10).

    Returns
    -------
    float, ndarray or xarray.DataArray
        F of one configuration; an array over the leading axes of a stack; for a Dataset a
        DataArray ``pair_fraction`` over its dims other than ``particle``/``component``. A
        single particle gives 0.

    Raises
    ------
    ValueError
        δ outside (0, 2]; a Dataset without ``positions``; positions that cannot be read on the
        domain.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> # of the 6 ordered pairs of {0, 0.01, π} only (0, 1) and (1, 0) have cos(θ_i - θ_j) ≥ 1 - 1e-3
    >>> mf.particles.pair_fraction(np.array([0.0, 0.01, np.pi]), delta=1e-3, domain="circle")
    0.3333333333333333
    """
    if not (np.isfinite(delta) and 0 < delta <= 2):
        raise ValueError(f"delta must lie in (0, 2], got {delta!r}")
    flat, circle, lead, dims = _configurations(positions, domain, renormalize, sphere_tolerance)
    fractions = pair_fractions(flat, circle, float(delta))
    return _shaped(fractions, lead, dims, positions, "pair_fraction")


def order_parameter(positions: Any, weights: np.ndarray | None = None, domain: str | None = None, *, renormalize: bool = False,
                    sphere_tolerance: float = SPHERE_TOLERANCE) -> Any:
    r"""Order parameter r = |m|, the length of the weighted mean m = Σ_i w_i x_i of the particles.

    .. math::

        r = \Big|\sum_{i=1}^{n} w_i x_i\Big| \quad (\text{on } \mathbb{S}^1:\;
        r = \Big|\sum_{i=1}^{n} w_i e^{i\theta_i}\Big|),

    the Kuramoto order parameter on the circle; r ∈ [0, 1] on a sphere, r = 1 exactly when all
    particles of positive weight coincide, r = 0 for a balanced configuration. For the empirical measure
    μ_n = Σ_i w_i δ_{x_i}, m = ∫ y dμ_n(y) is the mean that drives the β = 0 dynamics X = P⊥_x m.

    Parameters
    ----------
    positions : array_like or EmpiricalMeasure
        (n,) angles or (n, d) points, or a batch (systems, n, d) (angles (systems, n) with
        ``domain="circle"``); or an :class:`EmpiricalMeasure`.
    weights : array_like, optional
        Weights w_i ≥ 0 summing to 1, shape (n,) or (systems, n) (default: a measure's own
        weights, else 1/n).
    domain : {"circle", "sphere", "euclidean"}, optional
        How a plain array is read (default: by its shape, 1-D angles on the circle, 2-D (n, d)
        points on S^{d-1}, 3-D (systems, n, d)); "circle" for systems of angles (systems, n).
    renormalize : bool
        Project points onto the sphere (x / |x|) instead of rejecting points off it (default False).
    sphere_tolerance : float
        Allowed | |x_i| - 1 | of points on S^{d-1} (default ``SPHERE_TOLERANCE`` = 1e-10).

    Returns
    -------
    float or ndarray
        r of one configuration, or an array of shape (systems,) for a batch.

    Raises
    ------
    ValueError
        Weights that are not a probability vector or do not fit the systems and particles;
        positions that cannot be read on the domain.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> # angles 0 and π/2 with equal weights: |(1 + i)/2| = 1/√2
    >>> print(round(mf.order_parameter(np.array([0.0, np.pi / 2])), 12), round(1 / np.sqrt(2), 12))
    0.707106781187 0.707106781187
    >>> # weights (1/4, 1/4, 1/2) on angles (0, 0, π) balance: r = 0
    >>> print(round(mf.order_parameter(np.array([0.0, 0.0, np.pi]), weights=[0.25, 0.25, 0.5]), 12))
    0.0
    >>> # a batch of two systems of unit vectors in R³: coincident (r = 1) and orthonormal (r = √3/3)
    >>> x = np.stack([np.tile([0.0, 0.0, 1.0], (3, 1)), np.eye(3)])
    >>> print(np.round(mf.order_parameter(x), 6), round(np.sqrt(3) / 3, 6))
    [1.       0.57735] 0.57735
    """
    x, w, single = _points(positions, domain, renormalize, sphere_tolerance)
    if weights is not None:
        given = as_weights("weights", weights, x.shape[1])
        try:
            w = np.broadcast_to(given, x.shape[:2])
        except ValueError:
            raise ValueError(f"weights of shape {given.shape} do not fit {x.shape[0]} systems of {x.shape[1]} "
                             "particles") from None
    r = np.linalg.norm(np.einsum("sn,snd->sd", w, x), axis=-1)
    return float(r[0]) if single else r


def attention_matrix(model: Any, positions: Any, domain: str | None = None, head: int = 0, t: float = 0.0, *,
                     renormalize: bool = False, sphere_tolerance: float = SPHERE_TOLERANCE) -> np.ndarray:
    r"""Attention matrix P_ij = e^{β<Qx_i, Kx_j>} / Σ_l e^{β<Qx_i, Kx_l>} of a configuration (rows sum to 1).

    .. math::

        P^h_{ij} = \frac{e^{\beta\langle Q_h x_i, K_h x_j\rangle}}{\sum_{l=1}^{n} e^{\beta\langle Q_h x_i,
        K_h x_l\rangle}}

    (paper 2, (2.7)). For :class:`SelfAttention` Q = K = I (SA and USA alike: the matrix is the
    softmax, whatever the velocity's normalisation). For a rescaled :class:`Attention` (paper 1)
    the positions are z and x = e^{tV} z enters P, paper 2's (9.3), or z itself with ``scores_at_z``, paper
    2's (9.4).
    A model restricted to a graph takes the softmax over each node's edges, P_ij ∝ A_ij e^{…}.
    :class:`HardmaxAttention` gives its selected weights λ_ij. Particle weights do not enter.

    Parameters
    ----------
    model : SelfAttention, Attention or HardmaxAttention
        The model whose scores are used; other models raise TypeError.
    positions : array_like or EmpiricalMeasure
        (n,) angles or (n, d) points, or a batch (systems, n, d) (angles (systems, n) with
        ``domain="circle"``); ``Attention(projection=False)`` reads arrays as points of R^d.
    domain : {"circle", "sphere", "euclidean"}, optional
        How a plain array is read (default: the domain the model fixes, else by its shape: 1-D
        angles on the circle, 2-D (n, d) points on S^{d-1}, 3-D (systems, n, d)).
    head : int
        Index h of the head, 0 ≤ h < ``model.heads`` (default 0).
    t : float
        Time of the rescaled dynamics, where x = e^{tV} z (default 0; ignored otherwise).
    renormalize : bool
        Project points onto the sphere (x / |x|) instead of rejecting points off it (default False).
    sphere_tolerance : float
        Allowed | |x_i| - 1 | of points on S^{d-1} (default ``SPHERE_TOLERANCE`` = 1e-10).

    Returns
    -------
    ndarray
        P, shape (n, n), or (systems, n, n) for a batch; non-negative, rows summing to 1.

    Raises
    ------
    ValueError
        ``head`` out of range; positions that cannot be read on the domain.
    TypeError
        A model without an attention matrix (e.g. :class:`Kuramoto`).

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> # SA at β = 1 on angles (0, π/2, π): P_00 = e / (e + 1 + 1/e)
    >>> P = mf.attention_matrix(mf.SelfAttention(1.0), np.array([0.0, np.pi / 2, np.pi]))
    >>> print(P.shape, np.allclose(P.sum(axis=1), 1.0), np.isclose(P[0, 0], np.e / (np.e + 1 + 1 / np.e)))
    (3, 3) True True
    >>> # Attention with Q = 2I at β = 1 scores like SelfAttention at β = 2 (second head of a stack)
    >>> x = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.6, 0.8, 0.0]])
    >>> two_heads = mf.Attention(1.0, Q=np.stack([np.eye(3), 2 * np.eye(3)]))
    >>> np.allclose(mf.attention_matrix(two_heads, x, head=1), mf.attention_matrix(mf.SelfAttention(2.0), x))
    True
    """
    check_model(model)
    heads = int(getattr(model, "heads", None) or 1)
    head = check_positive_int("head", head, minimum=0)
    if head >= heads:
        raise ValueError(f"head must be one of 0 … {heads - 1} ({model.name} has {heads} head{'s' * (heads > 1)}), "
                         f"got {head}")
    x, _, single = _points(positions, domain, renormalize, sphere_tolerance, fixed=model.particle_domain)
    p = model.attention_matrix(x, head, as_real("t", t))
    return p[0] if single else p


def numerical_rank(matrix: np.ndarray, tolerance: float = 1e-8) -> int | np.ndarray:
    """Numerical rank: the number of singular values s_k > tolerance · s_max (per matrix of a stack).

    It follows, e.g., the rank of the attention matrix P(t), which becomes low-rank as the tokens
    cluster (paper 1, §2). A zero matrix has rank 0.

    Parameters
    ----------
    matrix : array_like
        A real, finite matrix (m, n), or a stack (..., m, n).
    tolerance : float
        Relative threshold ≥ 0 on the singular values, relative to the largest s_max of each
        matrix (default 1e-8); 0 counts every non-zero singular value.

    Returns
    -------
    int or ndarray of int
        The rank of one matrix, or an array of ranks over the leading axes of a stack.

    Raises
    ------
    ValueError
        ``tolerance`` < 0; a matrix with fewer than two axes or non-finite entries.
    TypeError
        A matrix that is not real (e.g. complex).

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> # an outer product has rank 1; a stack gives one rank per matrix
    >>> mf.numerical_rank(np.outer([1.0, 2.0, 3.0], [1.0, -1.0]))
    1
    >>> mf.numerical_rank(np.stack([np.eye(3), np.ones((3, 3)), np.zeros((3, 3))]))
    array([3, 1, 0])
    >>> # diag(1, 1e-6): rank 2 at the default tolerance, 1 at tolerance 1e-3
    >>> mf.numerical_rank(np.diag([1.0, 1e-6])), mf.numerical_rank(np.diag([1.0, 1e-6]), tolerance=1e-3)
    (2, 1)
    """
    tolerance = check_nonnegative("tolerance", tolerance)
    a = as_real_array("matrix", matrix)
    if a.ndim < 2:
        raise ValueError(f"matrix must have at least two axes (..., m, n), got shape {a.shape}")
    s = np.linalg.svd(a, compute_uv=False)
    r = np.sum(s > tolerance * s[..., :1], axis=-1)
    return int(r) if np.ndim(r) == 0 else r


def pairwise_inner_products(positions: Any, domain: str | None = None, *,
                            renormalize: bool = False, sphere_tolerance: float = SPHERE_TOLERANCE) -> np.ndarray:
    """The inner products <x_i, x_j>, i ≠ j, of one configuration (paper 2, Figure 1).

    The off-diagonal entries of the Gram matrix G = X Xᵀ in row-major order (each unordered pair
    appears twice); on S¹, <x_i, x_j> = cos(θ_i - θ_j). Their histogram is the statistic of paper 2's
    Figure 1: it concentrates at 1 as the particles cluster.

    Parameters
    ----------
    positions : array_like or EmpiricalMeasure
        One configuration: (n,) angles or (n, d) points (a batch is refused).
    domain : {"circle", "sphere", "euclidean"}, optional
        How a plain array is read (default: by its shape, 1-D angles on the circle, 2-D (n, d)
        points on S^{d-1}, 3-D (systems, n, d)); "circle" for systems of angles (systems, n).
    renormalize : bool
        Project points onto the sphere (x / |x|) instead of rejecting points off it (default False).
    sphere_tolerance : float
        Allowed | |x_i| - 1 | of points on S^{d-1} (default ``SPHERE_TOLERANCE`` = 1e-10).

    Returns
    -------
    ndarray
        Shape (n(n-1),): the entries G_ij, i ≠ j, ordered by i then j.

    Raises
    ------
    ValueError
        More than one system; positions that cannot be read on the domain.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> # angles (0, π/3, π): cos(π/3) = 0.5, cos(π) = -1, cos(2π/3) = -0.5, each pair twice
    >>> print(np.round(mf.pairwise_inner_products(np.array([0.0, np.pi / 3, np.pi])), 12))
    [ 0.5 -1.   0.5 -0.5 -1.  -0.5]
    >>> # an orthonormal frame of R⁴: 12 zeros
    >>> g = mf.pairwise_inner_products(np.eye(4))
    >>> print(g.shape, np.all(g == 0))
    (12,) True
    """
    x, _, single = _points(positions, domain, renormalize, sphere_tolerance)
    if not single:
        raise ValueError(f"pairwise_inner_products takes one system, got {x.shape[0]} systems")
    g = x[0] @ x[0].T
    return g[~np.eye(g.shape[0], dtype=bool)]

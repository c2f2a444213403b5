"""Detectors of paper 1's limit sets: hyperplanes (Theorem 4.2) and polytope × subspace (Theorem 5.2).

Paper 1 (arXiv 2305.05465) integrates pure self-attention on R^d,
ẋ_i = Σ_j P_ij V x_j, P_ij = softmax_j(β <Q x_i, K x_j>), through the rescaled
tokens z_i(t) = e^{-tV} x_i(t), which solve

    ż_i = V Σ_j P_ij(t) (z_j - z_i),   P_ij(t) = softmax_j(β <Q e^{tV} z_i, K e^{tV} z_j>)

(differentiate x = e^{tV} z, use Σ_j P_ij = 1 and V e^{tV} = e^{tV} V);
:class:`meanfield.Attention` with ``projection=False, rescaled=True``
integrates exactly this (z stays bounded while x grows like e^{λ_1 t}).

**Theorem 4.2** (good triple, :func:`check_good_triple`). Write z = a φ_1 + g
with g in the span G of the other generalised eigenvectors, a = <ψ_1, z> /
<ψ_1, φ_1> (ψ_1 the left eigenvector). Since ψ_1ᵀ V = λ_1 ψ_1ᵀ,

    ȧ_i = λ_1 Σ_j P_ij (a_j - a_i),

so max_i a_i decreases, min_i a_i increases, and every a_i converges to one of
at most three levels: lim min a, 0, lim max a. The hyperplanes are
{a = level} = level φ_1 + G. For large t the attention exponent is
≈ β e^{2λ_1 t} a_i a_j <Q φ_1, K φ_1>, so a token with a_i > 0 (< 0) attends
to the largest (smallest) a_j and ȧ_i ≈ λ_1 (level - a_i): the residual
decays like e^{-λ_1 t}.

:func:`hyperplanes` groups the coordinates a_i into levels: sorted values
separated by a gap larger than ``tolerance`` · scale start a new level
(single linkage in 1-D, the rule of :func:`meanfield.number_of_clusters`);
the level is the mean of its group; the residual is max_i |a_i - level(i)| /
scale, with scale = max(0, max_i a_i) - min(0, min_i a_i), the width of the
hull of the coordinates and the candidate level 0.

**Theorem 5.2** (paranormal V, :func:`check_mixed_triple`): with z = Φ c + g,
c ∈ R^k the coordinates in the dominant eigenspace F (V = λ I there), the
c_i converge to finitely many points on the boundary of a convex polytope K ⊂ F
(or to 0), while g ∈ G is unconstrained: the limit set is (∂K ∪ {0}) × G.
:func:`polytope_vertices` clusters the c_i and flags the points that are
vertices of their convex hull.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import numpy as np
import xarray as xr
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.optimize import linprog

from ..._version import __version__
from ...models._matrix_exponential import matrix_exponential
from ...particles._diagnostics import _configurations
from ._good_triples import TripleCheck, as_matrix, check_good_triple, check_mixed_triple

__all__ = ["hyperplanes", "polytope_vertices", "group_levels"]

logger = logging.getLogger(__name__)

#: default relative tolerance: coordinates closer than this times the scale belong to one level
TOLERANCE = 1e-3


def _width(a: np.ndarray) -> np.ndarray:
    """max(0, max_i a_i) - min(0, min_i a_i) over the last axis: the width of the coordinates and level 0."""
    return np.maximum(a.max(axis=-1), 0.0) - np.minimum(a.min(axis=-1), 0.0)


def group_levels(coordinates: Any, tolerance: float = TOLERANCE, scale: Any = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""Group 1-D coordinates into levels by gaps, for a stack of configurations.

    Parameters
    ----------
    coordinates : (..., n) array_like
        Real coordinates a_i of n tokens, any leading axes.
    tolerance : float, default 1e-3
        A gap between consecutive sorted coordinates larger than
        ``tolerance`` · scale separates two levels; in (0, 1).
    scale : None, float or (...) array_like
        None: max(0, max_i a_i) - min(0, min_i a_i) per configuration.

    Returns
    -------
    count : (...) int
        Number of levels.
    levels : (..., n) float
        The levels (mean of each group), ascending, NaN beyond ``count``.
    labels : (..., n) int
        The level index of each token.
    residual : (...) float
        max_i |a_i - levels[labels_i]| / scale (0 when scale = 0).
    scale : (...) float
        The scale used.

    Raises
    ------
    ValueError
        Empty or non-finite coordinates, tolerance outside (0, 1), a negative or non-finite scale.

    Notes
    -----
    Single linkage in 1-D (the rule of :func:`meanfield.number_of_clusters`): sorted values
    separated by a gap larger than ``tolerance`` · scale start a new level. With the default scale,
    the width of the hull of the coordinates and the candidate level 0,

    .. math::

        s = \max(0, \max_i a_i) - \min(0, \min_i a_i), \qquad
        \text{residual} = \frac{1}{s} \max_i |a_i - \ell(i)|,

    ℓ(i) the level of token i.

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.rescaled import group_levels
    >>> count, levels, labels, residual, scale = group_levels([2.0, -1.0, 2.001, 0.0], tolerance=1e-2)
    >>> int(count), np.round(levels[:3], 6).tolist(), labels.tolist()
    (3, [-1.0, 0.0, 2.0005], [2, 0, 2, 1])

    The scale is max(0, 2.001) - min(0, -1) = 3.001, the residual 0.0005/3.001:

    >>> print(f"{scale:.6f} {residual:.8f} {0.0005 / 3.001:.8f}")
    3.001000 0.00016661 0.00016661
    """
    a = np.asarray(coordinates, dtype=float)
    if a.ndim == 0 or a.shape[-1] == 0:
        raise ValueError(f"coordinates must have shape (..., n) with n >= 1, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError("coordinates must be finite (found NaN or infinity)")
    if not (np.isfinite(tolerance) and 0 < tolerance < 1):
        raise ValueError(f"tolerance must lie in (0, 1) (relative to the scale), got {tolerance!r}")
    lead, n = a.shape[:-1], a.shape[-1]
    flat = a.reshape(-1, n)
    if scale is None:
        width = _width(flat)
    else:
        width = np.broadcast_to(np.asarray(scale, dtype=float), lead).reshape(-1)
        if not (np.all(np.isfinite(width)) and np.all(width >= 0)):
            raise ValueError(f"scale must be finite and >= 0, got {scale!r}")
    order = np.argsort(flat, axis=1, kind="stable")
    ranked = np.take_along_axis(flat, order, axis=1)
    breaks = np.diff(ranked, axis=1) > tolerance * width[:, None]
    groups = np.concatenate([np.zeros((flat.shape[0], 1), dtype=int), np.cumsum(breaks, axis=1)], axis=1)
    count = groups[:, -1] + 1
    rows = np.repeat(np.arange(flat.shape[0]), n)
    sums = np.zeros((flat.shape[0], n))
    sizes = np.zeros((flat.shape[0], n))
    np.add.at(sums, (rows, groups.ravel()), ranked.ravel())
    np.add.at(sizes, (rows, groups.ravel()), 1.0)
    levels = np.full((flat.shape[0], n), np.nan)
    filled = sizes > 0
    levels[filled] = sums[filled] / sizes[filled]
    labels = np.empty_like(groups)
    np.put_along_axis(labels, order, groups, axis=1)
    deviation = np.max(np.abs(flat - np.take_along_axis(levels, labels, axis=1)), axis=1)
    residual = np.divide(deviation, width, out=np.zeros_like(deviation), where=width > 0)
    return (count.reshape(lead), levels.reshape(*lead, n), labels.reshape(*lead, n), residual.reshape(lead),
            width.reshape(lead))


def _read(positions: Any, V: Any, Q: Any, K: Any, beta: Any
          ) -> tuple[np.ndarray, tuple[int, ...], Any, np.ndarray, np.ndarray, np.ndarray, float]:
    """Rescaled tokens z as a stack (N, n, d), the leading shape and dims, and (Q, K, V, β).

    A ``simulate`` Dataset supplies the weights its attrs record when V is None; positions of a
    run with ``rescaled=0`` are x and become z = e^{-tV} x with the Dataset's times.
    """
    from_dataset = isinstance(positions, xr.Dataset)
    if from_dataset:
        attrs = positions.attrs
        if attrs.get("domain") != "euclidean":
            raise ValueError(f"positions must come from paper 1's dynamics on R^d (Attention(projection=False), "
                             f"domain 'euclidean'), got a Dataset on the domain {attrs.get('domain')!r}")
        if int(attrs.get("scores_at_z", 0)) == 1:
            raise ValueError("the Dataset is a run of (9.4) (scores_at_z=1: scores of z, not of e^{tV} z); Theorem "
                             "4.2's hyperplanes are those of paper 1's dynamics, run with rescaled=True, "
                             "scores_at_z=False")
        if V is None:
            V, Q, K = (_attr_matrix(attrs, name) for name in ("V", "Q", "K"))
            beta = attrs.get("beta") if beta is None else beta
    if V is None:
        raise ValueError("V is required (the value matrix); only a simulate Dataset of an Attention model "
                         "supplies it from its attrs")
    V = as_matrix("V", V)
    d = V.shape[0]
    Q, K = as_matrix("Q", Q, d), as_matrix("K", K, d)
    beta = 1.0 if beta is None else beta
    flat, _, lead, dims = _configurations(positions, "euclidean", False, 0.0)
    if flat.shape[-1] != d:
        raise ValueError(f"positions have dimension d = {flat.shape[-1]} but V is {d} × {d}")
    if from_dataset and int(positions.attrs.get("rescaled", 1)) == 0:
        times = positions["time"].broadcast_like(positions["positions"].isel(particle=0, component=0))
        stack = np.asarray(times.transpose(*dims).values, dtype=float).reshape(-1)
        output_times, which = np.unique(stack, return_inverse=True)
        maps = np.stack([matrix_exponential(-t * V) for t in output_times])  # one e^{-tV} per output time
        flat = np.einsum("cnj,cij->cni", flat, maps[which.reshape(-1)])
    return flat, lead, dims, Q, K, V, float(beta)


def _attr_matrix(attrs: dict, name: str) -> np.ndarray | None:
    """A weight matrix recorded by ``Attention.attrs`` ("identity" or a (heads, d, d) list); one head only."""
    value = attrs.get(name)
    if value is None:
        raise ValueError(f"the Dataset records no {name} (not an Attention run); pass V, Q, K, beta")
    if value == "identity":
        return None
    matrix = np.asarray(json.loads(value), dtype=float)
    if matrix.ndim == 3:
        if matrix.shape[0] != 1:
            raise ValueError(f"the Dataset's run has {matrix.shape[0]} heads; the theorems concern one head")
        matrix = matrix[0]
    return matrix


def _default_scale(values: np.ndarray, lead: tuple[int, ...], dims: Any, from_dataset: bool, scale: Any,
                   width) -> Any:
    """``scale`` as given; None: each configuration's own width, or for a Dataset with a time axis the
    width at the first output time."""
    if scale is not None:
        return scale
    if not (from_dataset and dims and "time" in dims):
        return None
    own = width(values).reshape(lead)
    axis = list(dims).index("time")
    return np.broadcast_to(np.take(own, [0], axis=axis), lead)


def _frame(lead: tuple[int, ...], dims: Any, positions: Any) -> tuple[tuple[str, ...], dict]:
    if dims is not None:
        return tuple(dims), {dim: positions[dim] for dim in dims if dim in positions.coords}
    names = ("configuration",) if len(lead) == 1 else tuple(f"configuration_{i}" for i in range(len(lead)))
    return names, {}


def _attrs(check: TripleCheck, tolerance: float, beta: float, method: str) -> dict[str, Any]:
    return {"method": method, "tolerance": tolerance, "beta": beta, "source": "arXiv 2305.05465",
            **check.attrs, "meanfield_version": __version__}


def hyperplanes(positions: Any, V: Any = None, *, Q: Any = None, K: Any = None, beta: float | None = None,
                tolerance: float = TOLERANCE, scale: Any = None) -> xr.Dataset:
    r"""The hyperplanes of paper 1's Theorem 4.2 (arXiv 2305.05465 §4) that rescaled tokens approach.

    Projects each token z_i on the leading eigen-direction of V,
    a_i = <ψ_1, z_i> / <ψ_1, φ_1> (φ_1, ψ_1 right and left eigenvectors of the
    dominant eigenvalue λ_1, |φ_1| = 1), and groups the a_i into levels
    (:func:`group_levels`, gaps > ``tolerance`` · scale). The theorem (for a
    good triple) says that, as t → ∞, there are at most three levels and they
    lie in {lim min_i a_i, 0, lim max_i a_i}.

    Parameters
    ----------
    positions : array_like or xarray.Dataset
        Rescaled tokens z: (n, d), or a stack (..., n, d); or a
        :func:`meanfield.simulate` Dataset of an ``Attention(projection=False)``
        run (with ``rescaled=False`` its positions x are mapped to
        z = e^{-tV} x at each output time).
    V : (d, d) array_like, optional
        Value matrix; required for arrays. For a Dataset, None takes V, Q, K and β from its attrs.
    Q, K : (d, d) array_like or None
        Query and key matrices (None: identity); used by the hypothesis check.
    beta : float, optional
        β of P = softmax(β <Q x, K y>) (default 1); used by the hypothesis check.
    tolerance : float, default 1e-3
        Relative gap separating levels, in (0, 1).
    scale : None, float or array over the leading axes
        The reference width of the residual and the gaps. None: each
        configuration's own width max(0, max a) - min(0, min a); for a Dataset
        with a time axis, the width at its first output time (so that a
        configuration shrinking onto level 0 reads as converged).

    Returns
    -------
    xarray.Dataset
        Over the leading dims (a Dataset's ``system``/``time``; for arrays
        ``configuration``…): ``n_hyperplanes`` (number of levels), ``levels``
        (ascending, NaN-padded along ``level``), ``label`` and
        ``coordinate`` (per ``particle``), ``residual`` (max distance of a
        coordinate to its level / scale), ``scale``, ``middle_levels_at_zero``
        (every level other than the lowest and highest lies within
        ``tolerance`` · scale of 0, as the theorem requires) and
        ``theorem_holds`` (at most 3 levels and middle levels at 0). Attrs: λ_1,
        ``direction`` φ_1, ``normal`` ψ_1/|ψ_1| (the hyperplanes'
        normal), the hypothesis check (``hypotheses_hold``,
        ``hypotheses_failures``, ``condition_*``), ``tolerance``, version.

    Raises
    ------
    ValueError
        Non-square or non-finite V, Q, K; V missing for arrays; positions of another dimension;
        non-finite positions; a dominant eigenvalue that is not real (no leading direction) or whose
        eigenspace has dimension > 1 (use :func:`polytope_vertices`); tolerance outside (0, 1); a
        Dataset not on R^d, a run with ``scores_at_z=1`` (scores of z, not of e^{tV} z) or with several heads.

    Notes
    -----
    The rescaled tokens z_i = e^{-tV} x_i solve

    .. math::

        \dot z_i = V \sum_j P_{ij}(t)\,(z_j - z_i), \qquad
        a_i = \frac{\langle \psi_1, z_i\rangle}{\langle \psi_1, \varphi_1\rangle}, \qquad
        \dot a_i = \lambda_1 \sum_j P_{ij}(t)\,(a_j - a_i),

    so max_i a_i decreases and min_i a_i increases; the hyperplanes are {a = level} = level φ_1 + G,
    perpendicular to the left eigenvector ψ_1 (to φ_1 itself only when G ⊥ φ_1, e.g. V normal). See
    the module docstring for the derivation and the rate e^{-λ_1 t} of the residual.

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.rescaled import hyperplanes
    >>> z = np.array([[2.0, 5.0], [2.0, -3.0], [-1.0, 0.5], [1e-7, 1.0]])
    >>> out = hyperplanes(z, np.diag([1.0, 0.5]))
    >>> int(out["n_hyperplanes"]), out["levels"].values.tolist()
    (3, [-1.0, 1e-07, 2.0])
    >>> bool(out["theorem_holds"]), out.attrs["normal"]
    (True, '[1.0, 0.0]')

    For a non-normal V the normal is ψ_1 = (1, 2)/√5, so a_i = z_i1 + 2 z_i2; three levels with a
    middle one away from 0 are not the theorem's limit:

    >>> out = hyperplanes(np.array([[3.0, 1.0], [1.0, -1.0], [0.0, 0.5]]), [[1.0, 1.0], [0.0, 0.5]])
    >>> out["coordinate"].values.tolist(), out.attrs["normal"], bool(out["theorem_holds"])
    ([5.0, -1.0, 1.0], '[0.4472135955, 0.894427191]', False)
    """
    from_dataset = isinstance(positions, xr.Dataset)
    flat, lead, dims, Q, K, V, beta = _read(positions, V, Q, K, beta)
    if not (np.isfinite(tolerance) and 0 < tolerance < 1):
        raise ValueError(f"tolerance must lie in (0, 1) (relative to the scale), got {tolerance!r}")
    check = check_good_triple(Q, K, V, beta)
    if not check.conditions["dominant_real"]:
        raise ValueError("V has no leading direction: " + check.failures[0])
    if check.basis.shape[1] != 1 or check.dual.shape[1] != 1:
        raise ValueError(f"V has no single leading direction: its dominant eigenvalue {check.dominant:.6g} has a "
                         f"{check.basis.shape[1]}-dimensional eigenspace; use polytope_vertices")
    phi, psi = check.basis[:, 0], check.dual[:, 0]
    a = flat @ psi
    scale = _default_scale(a, lead, dims, from_dataset, scale, _width)
    count, levels, labels, residual, used = group_levels(a.reshape(*lead, -1), tolerance, scale)
    n = a.shape[-1]
    width_levels = max(int(np.max(count)), 1)
    levels = levels[..., :width_levels]
    inner = (np.arange(width_levels) >= 1) & (np.arange(width_levels) < count[..., None] - 1)
    at_zero = np.all(~inner | (np.abs(np.nan_to_num(levels)) <= tolerance * used[..., None]), axis=-1)
    names, coords = _frame(lead, dims, positions)
    per_particle = (*names, "particle")
    data = {
        "n_hyperplanes": (names, count, {"long_name": "number of hyperplanes (levels of the leading coordinate)"}),
        "levels": ((*names, "level"), levels, {"long_name": "levels of a = <psi_1, z>/<psi_1, phi_1>, ascending"}),
        "label": (per_particle, labels, {"long_name": "index of the level of each token"}),
        "coordinate": (per_particle, a.reshape(*lead, n), {"long_name": "leading coordinate a_i"}),
        "residual": (names, residual, {"long_name": "max_i |a_i - level(i)| / scale"}),
        "scale": (names, np.asarray(used, dtype=float), {"long_name": "max(0, max a) - min(0, min a)"}),
        "middle_levels_at_zero": (names, at_zero, {"long_name": "levels other than the extreme ones are 0"}),
        "theorem_holds": (names, (count <= 3) & at_zero,
                          {"long_name": "at most three levels, in {min a, 0, max a}"}),
    }
    attrs = _attrs(check, tolerance, beta, "gaps of the sorted leading coordinates (single linkage)")
    attrs.update({"direction": repr(np.round(phi, 12).tolist()),
                  "normal": repr(np.round(psi / np.linalg.norm(psi), 12).tolist())})
    return xr.Dataset(data, coords=coords, attrs=attrs)


def _is_vertex(points: np.ndarray, m: int) -> bool:
    """Whether points[m] lies outside the convex hull of the other points (linear feasibility)."""
    others = np.delete(points, m, axis=0)
    if others.shape[0] == 0:
        return True
    k = others.shape[0]
    A_eq = np.vstack([others.T, np.ones((1, k))])
    b_eq = np.concatenate([points[m], [1.0]])
    result = linprog(np.zeros(k), A_eq=A_eq, b_eq=b_eq, bounds=[(0, None)] * k, method="highs")
    return result.status != 0


def _cluster_points(c: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Single-linkage clusters of the rows of c cut at ``threshold``: labels (0-based) and cluster means,
    the means in lexicographic order of their coordinates."""
    labels = np.zeros(c.shape[0], dtype=int) if c.shape[0] == 1 else \
        fcluster(linkage(c, "single"), threshold, "distance") - 1
    sizes = np.bincount(labels)
    means = np.zeros((sizes.size, c.shape[1]))
    np.add.at(means, labels, c)
    means /= sizes[:, None]
    order = np.lexsort(means.T[::-1])
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return rank[labels], means[order]


def polytope_vertices(positions: Any, V: Any = None, *, Q: Any = None, K: Any = None, beta: float | None = None,
                      tolerance: float = TOLERANCE, scale: Any = None) -> xr.Dataset:
    r"""Limit points of paper 1's Theorem 5.2 (arXiv 2305.05465 §5): a polytope in F times G.

    Projects each rescaled token on the dominant eigenspace F of V along G,
    c_i = dualᵀ z_i ∈ R^k (see :class:`TripleCheck`), clusters the c_i by
    single linkage at ``tolerance`` · scale (scale: the diameter of
    {c_i} ∪ {0}), and flags which cluster points are vertices of the convex
    hull of the cluster points (a point is a vertex when it is not a convex
    combination of the others: a linear feasibility problem) and which lie at
    the origin. The theorem says the c_i converge to finitely many points of
    ∂K ∪ {0}, K a convex polytope, generically its vertices.

    When V restricted to G has a real, simple eigenvalue of largest modulus,
    its coordinate along that direction is grouped into levels as in
    :func:`hyperplanes` (``g_n_levels``, ``g_levels``, ``g_residual``): an
    exploratory reading of the G-directions, which the theorem leaves free.

    ``positions`` is read as in :func:`hyperplanes`; the hypotheses checked are
    :func:`check_mixed_triple`'s.

    Parameters
    ----------
    positions : array_like or xarray.Dataset
        Rescaled tokens z: (n, d), or a stack (..., n, d); or a :func:`meanfield.simulate` Dataset of
        an ``Attention(projection=False)`` run (with ``rescaled=False`` its positions x are mapped to
        z = e^{-tV} x at each output time).
    V : (d, d) array_like, optional
        Value matrix; required for arrays. For a Dataset, None takes V, Q, K and β from its attrs.
    Q, K : (d, d) array_like or None
        Query and key matrices (None: identity); used by the hypothesis check.
    beta : float, optional
        β of P = softmax(β <Q x, K y>) (default 1); used by the hypothesis check.
    tolerance : float, default 1e-3
        Relative clustering threshold (and radius of "at the origin"), in (0, 1).
    scale : None, float or array over the leading axes
        The reference length. None: each configuration's diameter of {c_i} ∪ {0}; for a Dataset with
        a time axis, that at its first output time.

    Returns
    -------
    xarray.Dataset
        ``n_points`` (distinct points in F), ``points`` (NaN-padded along
        ``point``, components along ``eigen``), ``vertex`` and ``at_origin``
        per point, ``n_vertices`` (number of vertices), ``label`` and
        ``coordinate`` (c_i) per particle, ``residual`` (max |c_i - its point|
        / scale), ``scale``; the G-levels when defined; attrs as
        :func:`hyperplanes` with ``basis`` (Φ, columns).

    Raises
    ------
    ValueError
        As :func:`hyperplanes`; and a V whose dominant eigenvalue is not real or not semisimple (V is
        not λ I on F), or a negative or non-finite scale.

    Notes
    -----
    With Φ (``basis``) spanning F = ker(V - λ I) and Ψ the left eigenspace, scaled so that
    ``dual`` = Ψ(ΨᵀΦ)⁻¹ has dualᵀ Φ = I_k,

    .. math::

        z_i = \Phi c_i + g_i, \quad g_i \in G, \qquad
        c_i = (\Psi^\top \Phi)^{-1} \Psi^\top z_i \in \mathbb{R}^k .

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.rescaled import polytope_vertices
    >>> z = np.array([[1.0, 0.0, 3.0], [0.0, 1.0, -2.0], [1.0, 1e-6, 0.0], [0.0, 0.0, 1.0]])
    >>> out = polytope_vertices(z, np.diag([1.0, 1.0, -0.5]))
    >>> int(out["n_points"]), int(out["n_vertices"]), out["at_origin"].values.tolist()
    (3, 3, [True, False, False])

    The G-coordinate z_3 is left free by the theorem; here it is read as four levels:

    >>> int(out["g_n_levels"]), out["g_levels"].values.tolist()
    (4, [-2.0, 0.0, 1.0, 3.0])
    """
    from_dataset = isinstance(positions, xr.Dataset)
    flat, lead, dims, Q, K, V, beta = _read(positions, V, Q, K, beta)
    if not (np.isfinite(tolerance) and 0 < tolerance < 1):
        raise ValueError(f"tolerance must lie in (0, 1) (relative to the scale), got {tolerance!r}")
    check = check_mixed_triple(Q, K, V, beta)
    if not (check.conditions["dominant_real"] and check.conditions["dominant_semisimple"]):
        raise ValueError("V has no dominant eigenspace on which it acts as lambda I: " + "; ".join(check.failures))
    basis, dual = check.basis, check.dual
    k, n = basis.shape[1], flat.shape[1]
    c = flat @ dual

    def diameter(values: np.ndarray) -> np.ndarray:
        with_origin = np.concatenate([values, np.zeros((*values.shape[:-2], 1, k))], axis=-2)
        gaps = with_origin[..., :, None, :] - with_origin[..., None, :, :]
        return np.sqrt(np.max(np.sum(gaps**2, axis=-1), axis=(-2, -1)))

    given = _default_scale(c, lead, dims, from_dataset, scale, diameter)
    used = diameter(c) if given is None else np.broadcast_to(np.asarray(given, dtype=float), lead).reshape(-1)
    if not (np.all(np.isfinite(used)) and np.all(used >= 0)):
        raise ValueError(f"scale must be finite and >= 0, got {scale!r}")
    results = [_cluster_points(ci, tolerance * si) for ci, si in zip(c, used)]
    counts = np.array([len(means) for _, means in results])
    width = max(int(counts.max()), 1)
    points = np.full((len(results), width, k), np.nan)
    vertex = np.zeros((len(results), width), dtype=bool)
    origin = np.zeros((len(results), width), dtype=bool)
    residual = np.zeros(len(results))
    labels = np.stack([lab for lab, _ in results])
    for s, ((lab, means), si) in enumerate(zip(results, used)):
        points[s, : len(means)] = means
        vertex[s, : len(means)] = [_is_vertex(means, m) for m in range(len(means))]
        origin[s, : len(means)] = np.linalg.norm(means, axis=1) <= tolerance * si
        deviation = np.max(np.linalg.norm(c[s] - means[lab], axis=1))
        residual[s] = deviation / si if si > 0 else 0.0
    names, coords = _frame(lead, dims, positions)
    per_particle = (*names, "particle")
    data = {
        "n_points": (names, counts.reshape(lead), {"long_name": "distinct limit points in the dominant eigenspace F"}),
        "points": ((*names, "point", "eigen"), points.reshape(*lead, width, k),
                   {"long_name": "cluster points c in F (coordinates in the basis Phi)"}),
        "vertex": ((*names, "point"), vertex.reshape(*lead, width),
                   {"long_name": "the point is a vertex of the hull of the points"}),
        "at_origin": ((*names, "point"), origin.reshape(*lead, width), {"long_name": "the point is 0"}),
        "n_vertices": (names, vertex.sum(axis=1).reshape(lead), {"long_name": "number of polytope vertices"}),
        "label": (per_particle, labels.reshape(*lead, n), {"long_name": "index of the point of each token"}),
        "coordinate": ((*per_particle, "eigen"), c.reshape(*lead, n, k), {"long_name": "F-coordinates c_i"}),
        "residual": (names, residual.reshape(lead), {"long_name": "max_i |c_i - point(i)| / scale"}),
        "scale": (names, used.reshape(lead), {"long_name": "diameter of {c_i} and 0"}),
    }
    attrs = _attrs(check, tolerance, beta, "single linkage of the F-coordinates; vertices by linear feasibility")
    attrs["basis"] = repr(np.round(basis, 12).tolist())
    g_attrs = _g_levels(V, basis, flat, lead, names, tolerance, data)
    attrs.update(g_attrs)
    return xr.Dataset(data, coords=coords, attrs=attrs)


def _g_levels(V: np.ndarray, basis: np.ndarray, flat: np.ndarray, lead: tuple[int, ...], names: tuple[str, ...],
              tolerance: float, data: dict) -> dict[str, Any]:
    """Levels of the coordinate along V|_G's leading direction, when it is real and simple (exploratory)."""
    d, k = basis.shape
    if k == d:
        return {"g_levels": "not computed: G = {0}"}
    lam = float(np.real(np.linalg.eigvals(V)[np.argmax(np.abs(np.linalg.eigvals(V)))]))
    # G = range(V - lam I) for a semisimple dominant eigenvalue: its rank is d - k
    G = np.linalg.svd(V - lam * np.eye(d))[0][:, : d - k]
    W = np.linalg.lstsq(G, V @ G, rcond=None)[0]  # V|_G in the basis G
    inner = check_good_triple(None, None, W, 1.0)
    if not (inner.conditions["dominant_real"] and inner.conditions["dominant_simple"]):
        return {"g_levels": "not computed: the eigenvalue of V on G of largest modulus is not real and simple "
                            f"(eigenvalues on G: {np.round(inner.eigenvalues, 6).tolist()})"}
    # G-coordinates of z: solve [Phi G] [c; w] = z, then the leading coordinate of w for W
    coefficients = np.linalg.solve(np.hstack([basis, G]), flat.reshape(-1, d).T).T[:, k:]
    g = (coefficients @ inner.dual[:, 0]).reshape(flat.shape[0], -1)
    count, levels, labels, residual, used = group_levels(g, tolerance)
    width = max(int(count.max()), 1)
    data["g_n_levels"] = (names, count.reshape(lead), {"long_name": "levels of the leading G-coordinate"})
    data["g_levels"] = ((*names, "g_level"), levels[:, :width].reshape(*lead, width),
                        {"long_name": "levels of the leading G-coordinate, ascending"})
    data["g_residual"] = (names, residual.reshape(lead), {"long_name": "G-level residual / own scale"})
    return {"g_levels": f"leading G eigenvalue {inner.dominant:.6g} (exploratory: no theorem)",
            "g_direction": repr(np.round(G @ inner.basis[:, 0], 12).tolist())}

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
    """Number of clusters: connected components of the graph linking particles at distance ≤ ``tolerance``.

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
        Linking distance ε > 0.
    domain, renormalize, sphere_tolerance
        See the module docstring (a 2-D array is one system of points unless
        ``domain="circle"``).

    Returns
    -------
    int, ndarray of int over the leading axes, or a DataArray over the
    Dataset's dims other than ``particle``/``component``.

    Examples
    --------
    >>> import numpy as np
    >>> number_of_clusters(np.array([[0.0, 1e-4, np.pi], [0.0, 0.0, 0.0]]), domain="circle")
    array([2, 1])
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
        δ ∈ (0, 2].
    domain, renormalize, sphere_tolerance
        See the module docstring.

    Returns
    -------
    float, ndarray over the leading axes, or a DataArray over the Dataset's
    dims other than ``particle``/``component``. A single particle gives 0.

    Examples
    --------
    >>> import numpy as np
    >>> pair_fraction(np.array([0.0, 0.01, np.pi]), delta=1e-3, domain="circle")  # the pair (0, 1) of 6
    0.3333333333333333
    """
    if not (np.isfinite(delta) and 0 < delta <= 2):
        raise ValueError(f"delta must lie in (0, 2], got {delta!r}")
    flat, circle, lead, dims = _configurations(positions, domain, renormalize, sphere_tolerance)
    fractions = pair_fractions(flat, circle, float(delta))
    return _shaped(fractions, lead, dims, positions, "pair_fraction")


def order_parameter(positions: Any, weights: np.ndarray | None = None, domain: str | None = None, *, renormalize: bool = False,
                    sphere_tolerance: float = SPHERE_TOLERANCE) -> Any:
    """|m| = |Σ_i w_i x_i| (on S¹: |Σ_i w_i e^{iθ_i}|); float, or array over systems.

    ``weights`` default to a measure's own weights, else 1/n. ``domain``,
    ``renormalize``, ``sphere_tolerance``: see the module docstring.
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
    """Attention matrix P_ij = e^{β<Qx_i, Kx_j>} / Σ_l e^{β<Qx_i, Kx_l>} (rows sum to 1).

    For :class:`SelfAttention` Q = K = I. For a rescaled :class:`Attention`
    (paper 1) the positions are z and x = e^{tV} z enters P (``model.attention_matrix``).
    Shape (n, n) or (systems, n, n). Positions are read as in the module docstring, where
    ``Attention(projection=False)`` fixes the domain R^d ("euclidean").
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
    """Number of singular values > tolerance · σ_max (per matrix of a stack): ``matrix`` (..., m, n) real and finite,
    ``tolerance`` ≥ 0."""
    tolerance = check_nonnegative("tolerance", tolerance)
    a = as_real_array("matrix", matrix)
    if a.ndim < 2:
        raise ValueError(f"matrix must have at least two axes (..., m, n), got shape {a.shape}")
    s = np.linalg.svd(a, compute_uv=False)
    r = np.sum(s > tolerance * s[..., :1], axis=-1)
    return int(r) if np.ndim(r) == 0 else r


def pairwise_inner_products(positions: Any, domain: str | None = None, *,
                            renormalize: bool = False, sphere_tolerance: float = SPHERE_TOLERANCE) -> np.ndarray:
    """The inner products <x_i, x_j>, i ≠ j, of one system (paper 2, Figure 1): shape (n(n-1),).

    Positions are read as in the module docstring.
    """
    x, _, single = _points(positions, domain, renormalize, sphere_tolerance)
    if not single:
        raise ValueError(f"pairwise_inner_products takes one system, got {x.shape[0]} systems")
    g = x[0] @ x[0].T
    return g[~np.eye(g.shape[0], dtype=bool)]

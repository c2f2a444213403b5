"""Diagnostics of particle configurations: clusters, order parameter, attention matrix, inner products.

``kind`` is "circle" (angles; default for 1-D input), "sphere" (unit vectors,
default otherwise; points off the sphere beyond ``sphere_tolerance`` are an
error) or "euclidean" (points of R^d, no constraint).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from .._models import SelfAttention
from ._attention import Attention, softmax_attention
from ._compiled_statistics import cluster_counts, pair_fractions
from ._geometry import RENORMALIZE_HINT, SPHERE_TOLERANCE, check_on_sphere

__all__ = [
    "number_of_clusters",
    "pair_fraction",
    "order_parameter",
    "attention_matrix",
    "numerical_rank",
    "pairwise_inner_products",
    "plot_pairwise_inner_products",
]

KINDS = ("circle", "sphere", "euclidean")
_SPHERE_HINT = f"{RENORMALIZE_HINT}, or kind='euclidean' for points of R^d"


def _points(positions: Any, kind: str | None, renormalize: bool = False,
            sphere_tolerance: float = SPHERE_TOLERANCE) -> tuple[np.ndarray, bool]:
    """(systems, n, d) points and whether the input was a single system."""
    x = np.asarray(positions, dtype=float)
    if kind is None:
        kind = "circle" if x.ndim == 1 else "sphere"
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS} or None, got {kind!r}")
    if kind == "circle":
        single = x.ndim == 1
        x = np.stack([np.cos(x), np.sin(x)], axis=-1)
    else:
        single = x.ndim == 2
    if x.ndim == 2:
        x = x[None]
    if x.ndim != 3:
        raise ValueError(f"positions must have shape (n,) / (systems, n) for angles or (n, d) / (systems, n, d), "
                         f"got {np.shape(positions)}")
    if kind == "sphere":
        x = check_on_sphere(x, sphere_tolerance, renormalize, name="positions", hint=_SPHERE_HINT)
    return x, single


def _configurations(positions: Any, kind: str | None, renormalize: bool,
                    sphere_tolerance: float) -> tuple[np.ndarray, bool, tuple[int, ...], Any]:
    """A stack (N, n, m) of configurations (m = 1: angles), whether it is angles, the leading shape,
    and the leading dims of a ``simulate`` Dataset (None for arrays)."""
    dims = None
    if isinstance(positions, xr.Dataset):
        if "positions" not in positions:
            raise ValueError("a Dataset of positions must hold the variable 'positions' (a simulate result)")
        kind = positions.attrs.get("domain") if kind is None else kind
        array = positions["positions"]
        dims = tuple(dim for dim in array.dims if dim not in ("particle", "component"))
        positions = array.values
    x = np.asarray(positions, dtype=float)
    if kind is None:
        kind = "circle" if x.ndim == 1 else "sphere"
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS} or None, got {kind!r}")
    atom_ndim = 1 if kind == "circle" else 2
    if x.ndim < atom_ndim or x.shape[-1] < 1 or x.size == 0:
        raise ValueError(f"positions must have shape (..., n) for angles or (..., n, d) for points, "
                         f"got {np.shape(positions)}")
    if not np.all(np.isfinite(x)):
        raise ValueError("positions must be finite (found NaN or infinity)")
    if kind == "sphere":
        x = check_on_sphere(x, sphere_tolerance, renormalize, name="positions", hint=_SPHERE_HINT)
    lead = x.shape[: x.ndim - atom_ndim]
    flat = x.reshape(-1, x.shape[-1], 1) if kind == "circle" else x.reshape(-1, *x.shape[-2:])
    return np.ascontiguousarray(flat), kind == "circle", lead, dims


def _shaped(values: np.ndarray, lead: tuple[int, ...], dims: Any, positions: Any, name: str) -> Any:
    """Per-configuration values in the leading shape: a scalar, an array, or a DataArray over ``dims``."""
    values = values.reshape(lead)
    if dims is not None:
        coords = {dim: positions[dim] for dim in dims if dim in positions.coords}
        return xr.DataArray(values, dims=dims, coords=coords, name=name)
    return values.item() if values.ndim == 0 else values


def number_of_clusters(positions: Any, tolerance: float = 1e-3, kind: str | None = None, *,
                       renormalize: bool = False, sphere_tolerance: float = SPHERE_TOLERANCE) -> Any:
    """Number of clusters: connected components of the graph linking particles at distance ≤ ``tolerance``.

    Distance is the Euclidean (chord) distance |x_i - x_j| (angles are mapped to
    (cos θ, sin θ), where the chord of an arc φ is 2 sin(φ/2)); this is
    single-linkage clustering cut at ``tolerance``. On S¹ the count is the
    number of circular gaps between consecutive sorted angles whose chord
    exceeds ``tolerance`` (at least 1); elsewhere a union–find over the pairs.

    Parameters
    ----------
    positions : array_like or xarray.Dataset
        One configuration, (n,) angles or (n, d) points, or a stack of them with
        any leading axes, e.g. (systems, time, n) angles (``kind="circle"``) or
        (systems, time, n, d) points; or a :func:`simulate` Dataset (its
        ``domain`` attr gives the kind).
    tolerance : float
        Linking distance ε > 0.
    kind, renormalize, sphere_tolerance
        See the module docstring (a 2-D array is one system of points unless
        ``kind="circle"``).

    Returns
    -------
    int, ndarray of int over the leading axes, or a DataArray over the
    Dataset's dims other than ``particle``/``component``.

    Examples
    --------
    >>> import numpy as np
    >>> number_of_clusters(np.array([[0.0, 1e-4, np.pi], [0.0, 0.0, 0.0]]), kind="circle")
    array([2, 1])
    """
    if not (np.isfinite(tolerance) and tolerance > 0):
        raise ValueError(f"tolerance must be finite and > 0, got {tolerance!r}")
    flat, circle, lead, dims = _configurations(positions, kind, renormalize, sphere_tolerance)
    counts = cluster_counts(flat, circle, float(tolerance))
    return _shaped(counts, lead, dims, positions, "number_of_clusters")


def pair_fraction(positions: Any, delta: float = 1e-3, kind: str | None = None, *,
                  renormalize: bool = False, sphere_tolerance: float = SPHERE_TOLERANCE) -> Any:
    r"""Fraction of ordered pairs i ≠ j of a configuration with <x_i, x_j> ≥ 1 - δ.

        F = #{(i, j) : i ≠ j, <x_i, x_j> ≥ 1 - δ} / (n (n - 1))

    (on S¹: cos(θ_i - θ_j) ≥ 1 - δ). For exchangeable particles, e.g. iid
    starts, E F = P(<x_1(t), x_2(t)> ≥ 1 - δ), the statistic of paper 2's
    Figures 3–5; averaging F over systems estimates it with a smaller variance
    than the first pair alone.

    Parameters
    ----------
    positions : array_like or xarray.Dataset
        As for :func:`number_of_clusters`: one configuration or a stack with any
        leading axes, or a :func:`simulate` Dataset.
    delta : float
        δ ∈ (0, 2].
    kind, renormalize, sphere_tolerance
        See the module docstring.

    Returns
    -------
    float, ndarray over the leading axes, or a DataArray over the Dataset's
    dims other than ``particle``/``component``. A single particle gives 0.

    Examples
    --------
    >>> import numpy as np
    >>> pair_fraction(np.array([0.0, 0.01, np.pi]), delta=1e-3, kind="circle")  # the pair (0, 1) of 6
    0.3333333333333333
    """
    if not (np.isfinite(delta) and 0 < delta <= 2):
        raise ValueError(f"delta must lie in (0, 2], got {delta!r}")
    flat, circle, lead, dims = _configurations(positions, kind, renormalize, sphere_tolerance)
    fractions = pair_fractions(flat, circle, float(delta))
    return _shaped(fractions, lead, dims, positions, "pair_fraction")


def order_parameter(positions: Any, weights: np.ndarray | None = None, kind: str | None = None, *,
                    renormalize: bool = False, sphere_tolerance: float = SPHERE_TOLERANCE) -> Any:
    """|m| = |Σ_i w_i x_i| (on S¹: |Σ_i w_i e^{iθ_i}|), w_i = 1/n by default; float or array over systems."""
    x, single = _points(positions, kind, renormalize, sphere_tolerance)
    w = np.full(x.shape[:2], 1.0 / x.shape[1]) if weights is None else np.broadcast_to(weights, x.shape[:2])
    r = np.linalg.norm(np.einsum("sn,snd->sd", w, x), axis=-1)
    return float(r[0]) if single else r


def attention_matrix(model: SelfAttention | Attention, positions: Any, kind: str | None = None,
                     head: int = 0, t: float = 0.0, *, renormalize: bool = False,
                     sphere_tolerance: float = SPHERE_TOLERANCE) -> np.ndarray:
    """Attention matrix P_ij = e^{β<Qx_i, Kx_j>} / Σ_l e^{β<Qx_i, Kx_l>} (rows sum to 1).

    For :class:`SelfAttention` Q = K = I. For a rescaled :class:`Attention`
    (paper 1) the positions are z and x = e^{tV} z enters P. Shape (n, n) or
    (systems, n, n). ``kind`` defaults to "euclidean" for ``Attention(projection=False)``.
    """
    if kind is None and isinstance(model, Attention) and not model.projection:
        kind = "euclidean"
    x, single = _points(positions, kind, renormalize, sphere_tolerance)
    d = x.shape[-1]
    if isinstance(model, SelfAttention):
        M = model.beta * np.eye(d)
    elif isinstance(model, Attention):
        Q, K, V = model.matrices(d)
        M = model.beta * Q[head].T @ K[head]
        if model.rescaled:
            import scipy.linalg

            x = x @ scipy.linalg.expm(t * V[0]).T
    else:
        raise TypeError(f"model must be SelfAttention or Attention, got {type(model).__name__}")
    p = softmax_attention(x, x, M)
    return p[0] if single else p


def numerical_rank(matrix: np.ndarray, tolerance: float = 1e-8) -> int | np.ndarray:
    """Number of singular values > tolerance · σ_max (per matrix of a stack)."""
    s = np.linalg.svd(np.asarray(matrix, dtype=float), compute_uv=False)
    r = np.sum(s > tolerance * s[..., :1], axis=-1)
    return int(r) if np.ndim(r) == 0 else r


def pairwise_inner_products(positions: Any, kind: str | None = None, *, renormalize: bool = False,
                            sphere_tolerance: float = SPHERE_TOLERANCE) -> np.ndarray:
    """The inner products <x_i, x_j>, i ≠ j, of one system (paper 2, Figure 1): shape (n(n-1),)."""
    x, single = _points(positions, kind, renormalize, sphere_tolerance)
    if not single:
        raise ValueError(f"pairwise_inner_products takes one system, got {x.shape[0]} systems")
    g = x[0] @ x[0].T
    return g[~np.eye(g.shape[0], dtype=bool)]


def plot_pairwise_inner_products(dataset: Any, times: Any = None, bins: int = 50, ax: Any = None) -> Any:
    """Histograms of {<x_i(t), x_j(t)>}_{i≠j} at selected times of a ``simulate`` result (paper 2, Figure 1).

    ``times``: output times to show (nearest available; default: 4 evenly spaced).
    Returns the matplotlib Axes.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots()
    all_times = np.asarray(dataset["time"].values)
    if times is None:
        times = all_times[np.linspace(0, all_times.size - 1, 4).astype(int)]
    kind = dataset.attrs.get("domain", None)
    for t in np.atleast_1d(times):
        pos = dataset["positions"].sel(time=t, method="nearest").values
        if pos.ndim == (2 if kind == "circle" else 3):
            pos = pos[0]
        ip = pairwise_inner_products(pos, kind=kind)
        ax.hist(ip, bins=bins, range=(-1, 1), density=True, histtype="step", label=f"t = {t:g}")
    ax.set_xlabel("<x_i, x_j>, i ≠ j")
    ax.set_ylabel("density")
    ax.legend()
    return ax

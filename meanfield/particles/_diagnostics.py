"""Diagnostics of particle configurations: clusters, order parameter, attention matrix, inner products.

``kind`` is "circle" (angles; default for 1-D input), "sphere" (unit vectors,
default otherwise; points off the sphere beyond ``sphere_tolerance`` are an
error) or "euclidean" (points of R^d, no constraint).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage

from .._models import SelfAttention
from ._attention import Attention, softmax_attention
from ._geometry import RENORMALIZE_HINT, SPHERE_TOLERANCE, check_on_sphere

__all__ = [
    "number_of_clusters",
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


def number_of_clusters(positions: Any, tolerance: float = 1e-3, kind: str | None = None, *,
                       renormalize: bool = False, sphere_tolerance: float = SPHERE_TOLERANCE) -> int | np.ndarray:
    """Number of clusters: connected components of the graph linking particles at distance < ``tolerance``.

    Distance is the Euclidean (chord) distance |x_i - x_j| (angles are mapped to
    (cos θ, sin θ)); this is single-linkage clustering cut at ``tolerance``.
    ``kind``, ``renormalize``, ``sphere_tolerance``: see the module docstring.
    Returns an int, or an array over systems.
    """
    if not (np.isfinite(tolerance) and tolerance > 0):
        raise ValueError(f"tolerance must be finite and > 0, got {tolerance!r}")
    x, single = _points(positions, kind, renormalize, sphere_tolerance)
    counts = np.empty(x.shape[0], dtype=int)
    for s in range(x.shape[0]):
        if x.shape[1] == 1:
            counts[s] = 1
            continue
        labels = fcluster(linkage(x[s], method="single"), t=tolerance, criterion="distance")
        counts[s] = labels.max()
    return int(counts[0]) if single else counts


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

"""Exponential charts of S^{d-1} (and the identity chart of angles) as compiled loops.

The maps of :class:`meanfield.domains._geometry.SphereGeometry`, written once for compiled callers:
:func:`chart_exp` (exp_p(u) = cos(r) p + sin(r) u/r, r = |u|, per point) and :func:`chart_pullback`
(dexp_p(u)^{-1} f), for one system (n, m), used by the compiled ensembles (:mod:`._ensemble`); and
:class:`CompiledSphereChart`, the same maps over all points of a batch of systems (m, n, d) for
:func:`solvers.evolve_batch`, with the sines and cosines of the radii vectorised over the points
(:func:`meanfield._vector_math.sincos`).
"""

from __future__ import annotations

import numba
import numpy as np

from ..domains._geometry import ANGLES
from .._vector_math import LOOP_FASTMATH, sincos

__all__ = ["chart_exp", "chart_pullback", "points_exp", "points_pullback", "CompiledSphereChart"]

CIRCLE = ANGLES


@numba.njit(cache=True, fastmath=LOOP_FASTMATH)
def _radii(u, radii):
    """(r, sin r, cos r) of the rows of u (P, d) into the rows of ``radii`` (3, P): the radii, then their sines and
    cosines in one vectorised loop."""
    count, d = u.shape
    radius, sine, cosine = radii[0], radii[1], radii[2]
    for q in range(count):
        r2 = 0.0
        for k in range(d):
            r2 += u[q, k] * u[q, k]
        radius[q] = np.sqrt(r2)
    for q in range(count):
        sine[q], cosine[q] = sincos(radius[q])
    return radius, sine, cosine


@numba.njit(cache=True, fastmath=LOOP_FASTMATH)
def points_exp(p, u, out, radii):
    """exp_p(u) = cos(r) p + (sin r / r) u for rows of points (P, d), r = |u| (1 for r = 0); ``radii`` (3, P) work."""
    count, d = p.shape
    radius, sine, cosine = _radii(u, radii)
    for q in range(count):
        sinc = sine[q] / radius[q] if radius[q] > 0 else 1.0
        for k in range(d):
            out[q, k] = cosine[q] * p[q, k] + sinc * u[q, k]


@numba.njit(cache=True, fastmath=LOOP_FASTMATH)
def points_pullback(p, u, f, out, radii):
    """dexp_p(u)^{-1} f for rows of points (P, d), the sines and cosines of the radii vectorised over rows
    (``radii`` (3, P) work).

    With û = u/r, e_r = cos(r) û - sin(r) p and x = cos(r) p + sin(r) û:
    <f, e_r> û + (r / sin r)(f - <f, e_r> e_r - <f, x> x), then P⊥_p (removes round-off along p)."""
    count, d = p.shape
    radius, sine, cosine = _radii(u, radii)
    for q in range(count):
        r = radius[q]
        if r > 0:
            c, s = cosine[q], sine[q]
            inv_r = 1.0 / r
            f_u, f_p = 0.0, 0.0
            for k in range(d):
                f_u += f[q, k] * u[q, k]
                f_p += f[q, k] * p[q, k]
            f_u *= inv_r
            f_r = c * f_u - s * f_p
            f_x = c * f_p + s * f_u
            inv_sinc = r / s
            for k in range(d):
                uh = u[q, k] * inv_r
                e_r = c * uh - s * p[q, k]
                xk = c * p[q, k] + s * uh
                out[q, k] = (f[q, k] - f_r * e_r - f_x * xk) * inv_sinc + f_r * uh
        else:
            for k in range(d):
                out[q, k] = f[q, k]
        g = 0.0
        for k in range(d):
            g += p[q, k] * out[q, k]
        for k in range(d):
            out[q, k] -= g * p[q, k]


@numba.njit(cache=True)
def chart_exp(kind, p, u, out):
    """exp_p(u) of one system (n, m): p + u for angles; cos(r) p + (sin r / r) u, r = |u|, per point on the
    sphere (:func:`points_exp`)."""
    if kind == CIRCLE:
        for i in range(p.shape[0]):
            out[i, 0] = p[i, 0] + u[i, 0]
        return
    points_exp(p, u, out, np.empty((3, p.shape[0])))


@numba.njit(cache=True)
def chart_pullback(kind, p, u, f, out):
    """dexp_p(u)^{-1} f of one system (:meth:`meanfield.domains._geometry.SphereGeometry.dexpinv`; the identity
    for angles; :func:`points_pullback` on the sphere)."""
    if kind == CIRCLE:
        for i in range(p.shape[0]):
            out[i, 0] = f[i, 0]
        return
    points_pullback(p, u, f, out, np.empty((3, p.shape[0])))


class CompiledSphereChart:
    """The exponential chart of S^{d-1} around every point of a batch (systems, n, d) (:class:`solvers.BatchChart`):
    the maps of :func:`chart_exp` and :func:`chart_pullback` over all points of all systems at once."""

    def exp(self, p: np.ndarray, u: np.ndarray) -> np.ndarray:
        out = np.empty_like(p)
        d = p.shape[-1]
        points = p.reshape(-1, d)
        points_exp(points, np.ascontiguousarray(u).reshape(-1, d), out.reshape(-1, d),
                   np.empty((3, points.shape[0])))
        return out

    def pullback(self, p: np.ndarray, u: np.ndarray, f: np.ndarray) -> np.ndarray:
        out = np.empty_like(p)
        d = p.shape[-1]
        points = p.reshape(-1, d)
        points_pullback(points, np.ascontiguousarray(u).reshape(-1, d), np.ascontiguousarray(f).reshape(-1, d),
                        out.reshape(-1, d), np.empty((3, points.shape[0])))
        return out

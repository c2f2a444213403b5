"""State spaces of particle systems and their exponential charts.

A geometry knows how to move a point along a tangent vector (its exponential
map ``exp(p, u)``) and how to pull a velocity at ``exp(p, u)`` back to the
tangent space at ``p`` (the inverse of the differential of the exponential,
``dexpinv(p, u, f)``). Runge–Kutta methods written in these charts
(Hairer–Lubich–Wanner, *Geometric Numerical Integration*, §IV.5) keep points
exactly on the manifold: every stage and every step is an image of ``exp``.

Shapes: circle states are angles ``(systems, n)``; sphere and Euclidean
states are ``(systems, n, d)`` with the component on the last axis.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CircleGeometry", "SphereGeometry", "EuclideanGeometry", "geometry_for", "tangent_projection"]

def tangent_projection(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """P⊥_x y = y - <x, y> x along the last axis (onto T_x S^{d-1} for |x| = 1)."""
    return y - np.sum(x * y, axis=-1, keepdims=True) * x


def _sphere_deviation(norms: np.ndarray) -> float:
    """max_i | |x_i| - 1 | from the norms |x_i| (0 for no points)."""
    return float(np.max(np.abs(norms - 1.0))) if norms.size else 0.0


class _ComponentScale:
    """Relative error control per Cartesian component: size max(|p|, |q|)."""

    def scale(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        return np.maximum(np.abs(p), np.abs(q))


class _FlatChart:
    """Charts of flat coordinates: exp_p(u) = p + u, dexp = identity, Gaussian noise per coordinate."""

    def exp(self, p: np.ndarray, u: np.ndarray) -> np.ndarray:
        return p + u

    def dexpinv(self, p: np.ndarray, u: np.ndarray, f: np.ndarray) -> np.ndarray:
        return f

    def tangent_noise(self, p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A standard Gaussian vector of the tangent space (one real per coordinate)."""
        return rng.standard_normal(p.shape)

    def deviation(self, x: np.ndarray) -> float:
        """Distance from the manifold (0: every point of the chart is on it)."""
        return 0.0


class CircleGeometry(_FlatChart):
    """S¹ in the angle chart: exp_θ(u) = θ + u, dexp = identity."""

    kind = "circle"

    def scale(self, p: np.ndarray, q: np.ndarray) -> np.ndarray | float:
        """Size of the state used by relative error control (angles: 1, the radius)."""
        return 1.0


class SphereGeometry(_ComponentScale):
    r"""The unit sphere S^{d-1} ⊂ R^d with its Riemannian exponential map.

        exp_p(u) = cos(r) p + sin(r) u/r,   r = |u|,  u ⊥ p.

    With û = u/r and e_r = -sin(r) p + cos(r) û (the transported radial
    direction), the differential maps w = w_r û + w_⊥ (w_⊥ ⊥ p, û) to
    w_r e_r + (sin r / r) w_⊥, so its inverse applied to a tangent vector f at
    x = exp_p(u) is

        dexp_p(u)^{-1} f = <f, e_r> û + (r / sin r) (f - <f, e_r> e_r - <f, x> x),

    valid for r < π (steps never come close). At u = 0 it is the projection
    P⊥_p f = f - <f, p> p.
    """

    kind = "sphere"

    def exp(self, p: np.ndarray, u: np.ndarray) -> np.ndarray:
        r = np.linalg.norm(u, axis=-1, keepdims=True)
        return np.cos(r) * p + np.sinc(r / np.pi) * u

    def dexpinv(self, p: np.ndarray, u: np.ndarray, f: np.ndarray) -> np.ndarray:
        r = np.linalg.norm(u, axis=-1, keepdims=True)
        if not np.any(r):
            return tangent_projection(p, f)
        u_hat = np.divide(u, r, out=np.zeros_like(u), where=r > 0)
        x = np.cos(r) * p + np.sin(r) * u_hat
        e_r = np.cos(r) * u_hat - np.sin(r) * p
        f_r = np.sum(f * e_r, axis=-1, keepdims=True)
        f_x = np.sum(f * x, axis=-1, keepdims=True)
        perp = f - f_r * e_r - f_x * x
        out = perp / np.sinc(r / np.pi)
        out += f_r * u_hat
        # out ⊥ p in exact arithmetic; remove the round-off along p
        return tangent_projection(p, out)

    def tangent_noise(self, p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A standard Gaussian vector of T_p S^{d-1}: P⊥_p ξ with ξ ~ N(0, I_d)."""
        return tangent_projection(p, rng.standard_normal(p.shape))

    def deviation(self, x: np.ndarray) -> float:
        """max_i | |x_i| - 1 |."""
        return _sphere_deviation(np.linalg.norm(x, axis=-1))


class EuclideanGeometry(_ComponentScale, _FlatChart):
    """R^d: exp_p(u) = p + u."""

    kind = "euclidean"


def geometry_for(kind: str) -> CircleGeometry | SphereGeometry | EuclideanGeometry:
    """The geometry of a domain kind ("circle", "sphere", "euclidean")."""
    return {"circle": CircleGeometry, "sphere": SphereGeometry, "euclidean": EuclideanGeometry}[kind]()

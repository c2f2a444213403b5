"""The spaces particles move in: S¹ in angles, S^{d-1} as unit vectors of R^d, R^d, and the polar angle.

A geometry knows how to move a point along a tangent vector (its exponential
map ``exp(p, u)``) and how to pull a velocity at ``exp(p, u)`` back to the
tangent space at ``p`` (the inverse of the differential of the exponential,
``dexpinv(p, u, f)``). Runge–Kutta methods written in these charts
(Hairer–Lubich–Wanner, *Geometric Numerical Integration*, §IV.5) keep points
exactly on the manifold: every stage and every step is an image of ``exp``.
It also knows its distance, the Wasserstein distances between measures on it
(``transport_methods``, :meth:`wasserstein`), their moments, and how its
points are stored in a result.

Shapes: circle states are angles ``(systems, n)``; sphere and Euclidean
states are ``(systems, n, d)`` with the component on the last axis.

Every geometry has

* ``name``: "circle", "sphere", "euclidean" or "polar" (the ``domain`` of a result);
* ``dimension``: the ambient d (2 on the circle);
* ``atom_ndim``: 1 for angles, 2 for points with a component axis;
* ``unit_vectors``: whether the points are unit vectors (of S¹ as angles, or of S^{d-1}), which have an
  order parameter |Σ_i w_i x_i|;
* ``layer(p, v, h)``: the discrete layer Π(p + h v) of a velocity v at p (Π the normalisation of the
  space: x/|x| on S^{d-1}, the identity on R^d, on S¹ that of the unit vector, read back as an angle);
* ``exp``, ``dexpinv``, ``tangent_noise``, ``scale`` (the size of a state for
  relative error control), ``start_size`` (d0 of the first-step rule),
  ``deviation`` (the distance of states from the manifold);
* ``embed(states)``: the points in R^d (angles as (cos θ, sin θ));
* ``stored(states)``: positions as a result stores them (angles reduced to [0, 2π));
* ``transport_methods`` and ``wasserstein(xa, wa, xb, wb, p, method, options)``;
* ``moment_gaps(x, w, moments)``: |m_k[μ_n] - m_k| of particles against given moments.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..transport._circle import circle_w1, circle_wp, interval_wp
from ..transport._sphere import sphere_emd, sphere_sliced

__all__ = [
    "CircleGeometry",
    "EuclideanGeometry",
    "PolarGeometry",
    "SphereGeometry",
    "TransportResult",
    "tangent_projection",
]

#: compiled kernels' code of a state of angles (CIRCLE) or of points with a component axis (SPHERE)
ANGLES, POINTS = 0, 1


def tangent_projection(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """P⊥_x y = y - <x, y> x along the last axis (onto T_x S^{d-1} for |x| = 1)."""
    return y - np.sum(x * y, axis=-1, keepdims=True) * x


@dataclass(frozen=True)
class TransportResult:
    """W_p per system with what computed it: the concrete ``algorithm``, whether it is ``exact``, and a bound
    ``accuracy`` on |value - W_p| (exact methods) or the Monte Carlo standard error (the sliced distance)."""

    value: np.ndarray
    algorithm: str
    exact: bool
    accuracy: float


class _Flat:
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


class _Components:
    """States with a component axis: relative error control per Cartesian component."""

    atom_ndim: ClassVar[int] = 2
    code: ClassVar[int] = POINTS

    def scale(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Size of each entry for relative error control: max(|p|, |q|)."""
        return np.maximum(np.abs(p), np.abs(q))

    def start_size(self, x: np.ndarray, scale: np.ndarray) -> float:
        """d0 = RMS of x / scale (the Hairer–Nørsett–Wanner first-step rule)."""
        return float(np.sqrt(np.mean((x / scale) ** 2)))

    def embed(self, states: np.ndarray) -> np.ndarray:
        return states

    def stored(self, states: np.ndarray) -> np.ndarray:
        return states


def _unsupported(geometry: Any, method: str) -> ValueError:
    return ValueError(f"method={method!r} is not a Wasserstein method of measures on the {geometry.name} domain; "
                      f"it has {list(geometry.transport_methods)}")


@dataclass(frozen=True)
class CircleGeometry(_Flat):
    """S¹ in the angle chart: exp_θ(u) = θ + u, dexp = identity; geodesic distance |θ - φ| mod 2π in [0, π]."""

    name: ClassVar[str] = "circle"
    dimension: ClassVar[int] = 2
    atom_ndim: ClassVar[int] = 1
    unit_vectors: ClassVar[bool] = True
    code: ClassVar[int] = ANGLES
    transport_methods: ClassVar[tuple[str, ...]] = ("exact",)
    """"exact": W₁ by the cumulative distribution functions and the median shift, W_p (p > 1) by the
    quantile functions with an optimal rotation (Delon, Salomon and Sobolevski 2010)."""

    def layer(self, p: np.ndarray, v: np.ndarray, h: float) -> np.ndarray:
        """The layer map on the unit vectors u = (cos θ, sin θ), read back as an angle: u + h θ̇ u^⊥ normalised
        is the angle θ + arctan(h θ̇) (not θ + h θ̇, which is the exponential-map Euler step)."""
        return p + np.arctan(h * v)

    def scale(self, p: np.ndarray, q: np.ndarray) -> float:
        """Size of the state used by relative error control (angles: 1, the radius)."""
        return 1.0

    def start_size(self, x: np.ndarray, scale: float) -> float:
        """d0 of the first-step rule: the size of an angle means nothing, so 1/mean(scale)."""
        return float(1.0 / np.mean(scale))

    def embed(self, states: np.ndarray) -> np.ndarray:
        """(cos θ, sin θ), a trailing component axis added."""
        return np.stack([np.cos(states), np.sin(states)], axis=-1)

    def stored(self, states: np.ndarray) -> np.ndarray:
        """Angles in [0, 2π)."""
        return np.remainder(states, 2 * np.pi)

    def wasserstein(self, xa: np.ndarray, wa: np.ndarray, xb: np.ndarray, wb: np.ndarray, p: float, method: str,
                    **options: Any) -> TransportResult:
        """Exact W_p on S¹ of weighted angles (B, n) and (B, m)."""
        if method != "exact":
            raise _unsupported(self, method)
        if p == 1:
            return TransportResult(circle_w1(xa, wa, xb, wb), "circle-cdf", True, 0.0)
        value, gap = circle_wp(xa, wa, xb, wb, p)
        return TransportResult(value, "circle-quantile", True, float(np.max(gap)))

    def moment_gaps(self, x: np.ndarray, w: np.ndarray, moments: list[np.ndarray]) -> np.ndarray:
        """|m̂_k[μ_n] - m̂_k|, m̂_k[μ] = ∫ e^{ikθ} dμ, k = 1, …, len(moments); shape (systems, modes)."""
        k = np.arange(1, len(moments) + 1)
        particles = np.einsum("sn,ksn->sk", w, np.exp(1j * k[:, None, None] * x[None]))
        return np.abs(particles - np.asarray(moments)[None])


@dataclass(frozen=True)
class SphereGeometry(_Components):
    r"""The unit sphere S^{d-1} ⊂ R^d with its Riemannian exponential map; geodesic distance arccos⟨x, y⟩.

        exp_p(u) = cos(r) p + sin(r) u/r,   r = |u|,  u ⊥ p.

    With û = u/r and e_r = -sin(r) p + cos(r) û (the transported radial
    direction), the differential maps w = w_r û + w_⊥ (w_⊥ ⊥ p, û) to
    w_r e_r + (sin r / r) w_⊥, so its inverse applied to a tangent vector f at
    x = exp_p(u) is

        dexp_p(u)^{-1} f = <f, e_r> û + (r / sin r) (f - <f, e_r> e_r - <f, x> x),

    valid for r < π (steps never come close). At u = 0 it is the projection
    P⊥_p f = f - <f, p> p.
    """

    dimension: int
    name: ClassVar[str] = "sphere"
    unit_vectors: ClassVar[bool] = True
    transport_methods: ClassVar[tuple[str, ...]] = ("exact", "sliced")
    """"exact": the network simplex on the cost arccos⟨x, y⟩^p; "sliced": the spherical sliced distance
    (a different metric)."""

    def exp(self, p: np.ndarray, u: np.ndarray) -> np.ndarray:
        r = np.linalg.norm(u, axis=-1, keepdims=True)
        return np.cos(r) * p + np.sinc(r / np.pi) * u

    def layer(self, p: np.ndarray, v: np.ndarray, h: float) -> np.ndarray:
        """(p + h v)/|p + h v|: the layer normalisation of the residual step."""
        y = p + h * v
        y /= np.linalg.norm(y, axis=-1, keepdims=True)
        return y

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
        """max_i | |x_i| - 1 | (0 for no points)."""
        norms = np.linalg.norm(x, axis=-1)
        return float(np.max(np.abs(norms - 1.0))) if norms.size else 0.0

    def wasserstein(self, xa: np.ndarray, wa: np.ndarray, xb: np.ndarray, wb: np.ndarray, p: float, method: str,
                    *, max_exact_atoms: int = 3000, n_projections: int = 400, seed: int | None = 0,
                    **options: Any) -> TransportResult:
        """W_p ("exact", refused when n·m > ``max_exact_atoms``²) or the sliced distance ("sliced")."""
        n, m = xa.shape[1], xb.shape[1]
        if method == "exact":
            if n * m > max_exact_atoms**2:
                raise ValueError(
                    f"exact W_p on S^{self.dimension - 1} of {n} x {m} atoms exceeds max_exact_atoms^2 = "
                    f"{max_exact_atoms}^2 (the network simplex needs the full {n} x {m} cost matrix, memory "
                    f"8nm bytes and time ~ (n + m)^3); pass method='sliced' for the spherical sliced distance "
                    f"(a different metric, O(P (n + m) log(n + m)) for P = n_projections projections, reported "
                    f"with its Monte Carlo error), or a larger max_exact_atoms")
            return TransportResult(sphere_emd(xa, wa, xb, wb, p), "emd", True, 0.0)
        if method == "sliced":
            value, error = sphere_sliced(xa, wa, xb, wb, p, n_projections, seed)
            return TransportResult(value, "sliced-spherical", False, error)
        raise _unsupported(self, method)

    def moment_gaps(self, x: np.ndarray, w: np.ndarray, moments: list[np.ndarray]) -> np.ndarray:
        """|∫ x dμ_n - m_1| and ‖∫ x xᵀ dμ_n - m_2‖_F; shape (systems, 2)."""
        mean, second = moments
        part_mean = np.einsum("sn,sna->sa", w, x)
        part_second = np.einsum("sn,sna,snb->sab", w, x, x)
        return np.stack([np.linalg.norm(part_mean - mean, axis=-1),
                         np.linalg.norm(part_second - second, axis=(-2, -1))], axis=-1)


@dataclass(frozen=True)
class EuclideanGeometry(_Flat, _Components):
    """R^d: exp_p(u) = p + u."""

    dimension: int
    name: ClassVar[str] = "euclidean"
    unit_vectors: ClassVar[bool] = False
    transport_methods: ClassVar[tuple[str, ...]] = ()

    def layer(self, p: np.ndarray, v: np.ndarray, h: float) -> np.ndarray:
        """p + h v: no normalisation in R^d (the residual step itself)."""
        return p + h * v

    def wasserstein(self, xa: np.ndarray, wa: np.ndarray, xb: np.ndarray, wb: np.ndarray, p: float, method: str,
                    **options: Any) -> TransportResult:
        raise ValueError("Wasserstein distances of measures on R^d are not available (the geodesic ones are "
                         "on S^1 and S^{d-1})")


@dataclass(frozen=True)
class PolarGeometry:
    """The polar angle ϑ = arccos⟨x, e_d⟩ ∈ [0, π] of S^{d-1}: the atoms of zonal (axisymmetric) measures.

    Its Wasserstein distance is that of [0, π]: W_p between the polar-angle marginals, which equals W_p
    against the particles' rotational average about e_d and is a lower bound of W_p on S^{d-1} itself
    (equal when both measures are zonal).
    """

    dimension: int
    name: ClassVar[str] = "polar"
    atom_ndim: ClassVar[int] = 1
    unit_vectors: ClassVar[bool] = False
    transport_methods: ClassVar[tuple[str, ...]] = ("polar",)

    def wasserstein(self, xa: np.ndarray, wa: np.ndarray, xb: np.ndarray, wb: np.ndarray, p: float, method: str,
                    **options: Any) -> TransportResult:
        """Exact W_p on [0, π] of weighted polar angles ("polar")."""
        if method != "polar":
            raise _unsupported(self, method)
        return TransportResult(interval_wp(xa, wa, xb, wb, p), "zonal-polar", False, float("nan"))

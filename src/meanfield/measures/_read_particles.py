"""One reading of particle positions for every public function that takes them.

``simulate``, ``energy``, ``velocity`` (``model.velocity``) and ``wasserstein``
accept an :class:`EmpiricalMeasure` or a plain array. A plain array is read on

1. the domain given by the caller's ``domain=`` argument, else
2. the domain the model fixes (its ``particle_domain``: Kuramoto the circle,
   ``Attention(projection=False)`` R^d), passed as ``fixed=``, else
3. its shape: 1-D is n angles on the circle, 2-D is n points (n, d) on S^{d-1},
   3-D is (systems, n, d). A 2-D array of systems of angles (systems, n)
   needs ``domain="circle"``.

The reading gives the positions with the space they move in (a geometry of
:mod:`meanfield.domains._geometry`); the names "circle", "sphere", "euclidean"
are parsed here and nowhere else.

Values never decide the reading. Points on a sphere must satisfy
| |x_i| - 1 | ≤ ``SPHERE_TOLERANCE`` (unless the caller projects them), and an
error names the reading and the ``domain=`` argument that changes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import as_real_array
from ..domains._geometry import CircleGeometry, EuclideanGeometry, SphereGeometry
from ._measure import EmpiricalMeasure

__all__ = ["Particles", "SPHERE_TOLERANCE", "read_particles", "geometry_named"]

#: allowed | |x_i| - 1 | of points given on S^{d-1}, for every function that reads particles
SPHERE_TOLERANCE = 1e-10
KINDS = ("circle", "sphere", "euclidean")
_SHAPES = {"circle": "(n,) or (systems, n) and n >= 1", "sphere": "(n, d) or (systems, n, d) with d >= 2 and n >= 1",
           "euclidean": "(n, d) or (systems, n, d) with d, n >= 1"}
#: appended to a shape error of a plain array read by its shape
_SHAPE_RULE = (" (a plain array without domain= is read by its shape: 1-D angles on the circle, 2-D (n, d) points on "
               "S^{d-1}, 3-D (systems, n, d); pass domain='circle' for systems of angles (systems, n))")


@dataclass(frozen=True)
class Particles:
    """Positions read as a batch: ``points`` (systems, n) angles or (systems, n, d),
    ``weights`` (systems, n) summing to 1 per system, the ``geometry`` they move in;
    ``batched`` tells whether the input had a systems axis."""

    geometry: Any
    points: np.ndarray
    weights: np.ndarray
    batched: bool

    @property
    def kind(self) -> str:
        """The name of the domain: "circle", "sphere" or "euclidean"."""
        return self.geometry.name


def geometry_named(kind: str, points: np.ndarray) -> Any:
    """The geometry of positions ``points`` (component last) on the domain named ``kind``."""
    if kind == "circle":
        return CircleGeometry()
    return (SphereGeometry if kind == "sphere" else EuclideanGeometry)(int(points.shape[-1]))


def read_particles(x: Any, *, name: str, domain: str | None = None, fixed: str | None = None,
                   kinds: tuple[str, ...] = KINDS, renormalize: bool = False,
                   tolerance: float = SPHERE_TOLERANCE, can_renormalize: bool = True,
                   copy: bool = True) -> Particles:
    """Read particle positions ``x`` (EmpiricalMeasure or array) by the module's rule.

    Parameters
    ----------
    x : EmpiricalMeasure or array_like
    name : str
        The caller's argument name, used in messages.
    domain : {"circle", "sphere", "euclidean"} or None
        The caller's ``domain=`` argument.
    fixed : {"circle", "euclidean"}, a token normalisation, or None
        The domain the caller's model fixes for plain arrays (its ``particle_domain``). A token normalisation
        (:class:`meanfield.domains._normalized.TokenNormalization`: an object with ``geometry(d)`` and
        ``onto(states, name, tolerance, renormalize)``) puts points (n, d) or (systems, n, d) on its own
        manifold (an ellipsoid, a centred sphere), checked against ``tolerance`` there; an EmpiricalMeasure's
        points are read the same way. ``domain=`` overrides it.
    kinds : tuple of str
        Domains the caller accepts.
    renormalize : bool
        Project points onto the sphere (x / |x|) instead of rejecting points off it.
    tolerance : float
        Allowed | |x_i| - 1 | on a sphere.
    can_renormalize : bool
        Whether the caller has a ``renormalize`` option (only then is it suggested,
        and never for an array read by its shape, which may hold angles).
    copy : bool
        Return points the caller may modify; False lets them share memory with
        ``x`` (for callers that only read them).

    Raises
    ------
    ValueError
        Unknown ``domain``, wrong shape, non-finite values, points off the sphere,
        a measure whose domain contradicts ``domain=``.
    TypeError
        ``x`` is neither an EmpiricalMeasure nor numeric.
    """
    if domain is not None and domain not in kinds:
        raise ValueError(f"domain must be one of {list(kinds)} (how {name} is read), got {domain!r}")
    if not (np.isfinite(tolerance) and tolerance >= 0):
        raise ValueError(f"sphere_tolerance must be finite and >= 0, got {tolerance!r}")
    weights = None
    by_shape = False
    if domain is None and fixed is not None and not isinstance(fixed, str):
        return _on_normalized(x, fixed, name, tolerance, renormalize)
    if isinstance(x, EmpiricalMeasure):
        if domain is not None and domain != x.kind:
            raise ValueError(f"{name} is an EmpiricalMeasure on the {x.kind!r} domain, but domain={domain!r}; "
                             f"pass domain=None or a measure on the {domain!r} domain")
        points, weights, kind = np.asarray(x.points, dtype=float), x.weights, x.kind
    else:
        if isinstance(x, (str, bytes)) or x is None:
            raise TypeError(f"{name} must be an array of positions or an EmpiricalMeasure, got {type(x).__name__}")
        try:
            points = as_real_array(name, x, finite=False)
        except TypeError as err:
            raise TypeError(f"{name} must be an array of positions or an EmpiricalMeasure: {err}") from None
        kind = domain or fixed
        if kind is None:
            kind, by_shape = ("circle" if points.ndim == 1 else "sphere"), True
    if kind not in kinds:
        raise ValueError(f"{name} must live on one of {list(kinds)}, got positions on the {kind!r} domain")
    reading = _SHAPE_RULE if by_shape else ""
    atom_ndim = 1 if kind == "circle" else 2
    min_d = {"circle": 0, "sphere": 2, "euclidean": 1}[kind]
    if (points.ndim not in (atom_ndim, atom_ndim + 1) or points.size == 0
            or (kind != "circle" and points.shape[-1] < min_d)):
        raise ValueError(f"{name} on the {kind} domain must have shape {_SHAPES[kind]}, "
                         f"got {points.shape}{reading}")
    if not np.all(np.isfinite(points)):
        raise ValueError(f"{name} must be finite (found NaN or infinity)")
    batched = points.ndim == atom_ndim + 1
    states = np.array(points if batched else points[None], dtype=float, copy=copy or None)
    if weights is None:
        weights = np.full(states.shape[:2], 1.0 / states.shape[1])
    else:
        weights = np.array(weights if batched else np.asarray(weights)[None], dtype=float)
    if kind == "sphere":
        states = _on_sphere(states, name, tolerance, renormalize, can_renormalize, points.shape if by_shape else None)
    return Particles(geometry_named(kind, states), states, weights, batched)


def _on_normalized(x: Any, normalization: Any, name: str, tolerance: float, renormalize: bool) -> Particles:
    """Points of ``x`` (n, d) or (systems, n, d) on the manifold of a model's token ``normalization``."""
    weights = None
    if isinstance(x, EmpiricalMeasure):
        points, weights = np.asarray(x.points, dtype=float), x.weights
    elif isinstance(x, (str, bytes)) or x is None:
        raise TypeError(f"{name} must be an array of positions or an EmpiricalMeasure, got {type(x).__name__}")
    else:
        points = as_real_array(name, x, finite=False)
    if points.ndim not in (2, 3) or points.size == 0:
        raise ValueError(f"{name} on the {normalization.name} must have shape (n, d) or (systems, n, d) with "
                         f"n >= 1, got {points.shape}")
    if not np.all(np.isfinite(points)):
        raise ValueError(f"{name} must be finite (found NaN or infinity)")
    batched = points.ndim == 3
    states = np.array(points if batched else points[None], dtype=float)
    if weights is None:
        weights = np.full(states.shape[:2], 1.0 / states.shape[1])
    else:
        weights = np.array(weights if batched else np.asarray(weights)[None], dtype=float)
    states = normalization.onto(states, name, tolerance, renormalize)
    return Particles(normalization.geometry(states.shape[-1]), states, weights, batched)


def _on_sphere(states: np.ndarray, name: str, tolerance: float, renormalize: bool, can_renormalize: bool,
               shape_read: tuple[int, ...] | None) -> np.ndarray:
    """``states`` checked to lie on the unit sphere (or projected); ``shape_read``: the shape of a
    plain array read by its shape (a 2-D one may hold angles: its error offers domain='circle' first)."""
    norms = np.linalg.norm(states, axis=-1)
    if renormalize:
        if np.any(norms == 0):
            raise ValueError(f"{name} include the zero vector, which cannot be projected onto the sphere")
        return states / norms[..., None]
    deviation = float(np.max(np.abs(norms - 1.0)))
    if deviation <= tolerance:
        return states
    d = states.shape[-1]
    message = (f"{name} must lie on the unit sphere S^{d - 1}: max | |x_i| - 1 | = {deviation:.3g} exceeds "
               f"sphere_tolerance = {tolerance:.3g}")
    fix = "normalise them (x / |x|)" + (" or pass renormalize=True to project them" if can_renormalize else "")
    if shape_read is not None and len(shape_read) == 2:
        message += (f"; the plain array of shape {shape_read} was read by its shape as {shape_read[0]} points of "
                    f"R^{d}: if its rows are systems of angles, pass domain='circle'; if they are points meant for "
                    f"S^{d - 1}, {fix}")
    else:
        message += f"; {fix}"
    raise ValueError(message)

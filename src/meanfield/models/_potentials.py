r"""External potentials U(x) on S¹ and S^{d-1} of the aggregation–diffusion model :class:`Interaction`.

A potential answers for its values U(x) at points x (unit vectors, last axis the component) and for its
surface gradient ∇_S U(x) = P⊥_x ∇U(x) there (what moves a particle: ẋ = … - ∇_S U(x)); the schemes of
:func:`meanfield.solve` take U on their grid (:meth:`Potential.grid_values`: node values, or cell averages on
a grid of cells) and form its gradient themselves. Four ways to give one (:func:`as_potential`):

* :meth:`Potential.zonal` — U(x) = f(<x, e>) about an axis e (default e_d, the pole of a
  :class:`~meanfield.ZonalSphere`), f given as a kernel is (a formula in t, a callable, a named family);
  f(t) = -κ t is the von Mises–Fisher field, whose Gibbs state with noise σ is ρ ∝ e^{κ<x, e>/σ};
* :meth:`Potential.fourier` — U(θ) = Σ_{|k| ≤ K} û_k e^{ikθ} on S¹ from û_0, …, û_K (û_{-k} = conj û_k);
* :meth:`Potential.harmonics` — U = Σ_{l,m} a_lm Y_lm on S², in the conventions of ducc0 and
  :class:`solvers.SphereGrid` (orthonormal Y_lm with the Condon–Shortley phase, m ≥ 0 stored, U real:
  U = Σ_l [a_l0 Y_l0 + 2 Re Σ_{m>0} a_lm Y_lm]);
* :meth:`Potential.function` — U = ``f(points)``, with ``gradient(points)`` (ambient ∇U, projected here) for
  particles.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import sph_harm_y_all

from solvers import SphereGrid

from ._kernels import Kernel, as_kernel

__all__ = ["Potential", "as_potential", "code_digest"]


class Potential(ABC):
    r"""An external potential U on S^{d-1} (module docstring).

    A potential is made by a constructor, not by ``Potential()``: :meth:`zonal` (U(x) = f(<x, e>)),
    :meth:`fourier` (a Fourier series on S¹), :meth:`harmonics` (spherical harmonics on S²) or
    :meth:`function` (a Python function of the points). It answers for its values U(x) at unit vectors
    x (last axis the component, :meth:`values`) and its surface gradient ∇_S U(x) = P⊥_x ∇U(x)
    (:meth:`surface_gradient`), which moves particles in :class:`~meanfield.Interaction`.

    Notes
    -----
    In :class:`~meanfield.Interaction` the potential adds -∇_S U to the velocity and ∫ U dρ to the
    energy:

    .. math::

        \mathcal{X}[\rho](x) = \dots - \nabla_{\mathbb{S}} U(x), \qquad
        \nabla_{\mathbb{S}} U(x) = (I - x x^\top)\,\nabla U(x), \qquad
        E[\rho] = \dots + \int U\,\mathrm{d}\rho.

    For a zonal potential U(x) = f(<x, e>) this is ∇_S U(x) = f'(<x, e>) (e - <x, e> x); f(t) = -κ t is
    the von Mises–Fisher field, whose Gibbs state with noise σ is ρ ∝ e^{κ<x, e>/σ}.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> U = mf.Potential.zonal("-2*t")                 # U(x) = -2 <x, e_d>
    >>> U.description
    'zonal about e_d: -2*t'
    >>> print(f"{float(U.values(np.array([0.0, 0.0, 1.0]))):.6f}")        # at the pole e_3 of S²
    -2.000000
    >>> # on the equator ∇_S U = f'(0) e_3 = -2 e_3
    >>> print(np.round(U.surface_gradient(np.array([1.0, 0.0, 0.0])), 12) + 0.0)
    [ 0.  0. -2.]
    >>> V = mf.Potential.fourier([0.0, 0.5])           # U(θ) = cos θ on S¹
    >>> print(np.round(V.grid_values(mf.Circle(4)), 12) + 0.0)
    [ 1.  0. -1.  0.]
    """

    #: the d of S^{d-1} it is defined on (None: any)
    dimension: int | None = None

    @abstractmethod
    def values(self, points: np.ndarray) -> np.ndarray:
        """U at ``points`` (…, d), shape (…)."""

    @abstractmethod
    def surface_gradient(self, points: np.ndarray) -> np.ndarray:
        """∇_S U = P⊥_x ∇U at ``points`` (…, d), shape (…, d)."""

    @property
    @abstractmethod
    def description(self) -> str:
        """The potential in one line (a result's ``potential`` attr)."""

    def about_pole(self, d: int) -> bool:
        """Whether U depends on x only through <x, e_d> (the potentials a ZonalSphere takes)."""
        return False

    def check_dimension(self, d: int, where: str) -> None:
        """Refuse S^{d-1} if the potential lives on another sphere (``where`` names the domain)."""
        if self.dimension is not None and self.dimension != d:
            raise ValueError(f"the potential {self.description} lives on S^{self.dimension - 1} (d = {self.dimension}), "
                             f"got {where} with d = {d}")

    def grid_values(self, domain: Any) -> np.ndarray:
        """U on ``domain``'s grid (``domain.field``: node values, or cell averages on a grid of cells)."""
        self.check_dimension(domain.dimension, repr(domain))
        return np.asarray(domain.field(self.values), dtype=float)

    def __repr__(self) -> str:
        return f"Potential({self.description!r})"

    # ------------------------------------------------------------------ inputs
    @staticmethod
    def zonal(profile: Any, axis: Any = None) -> Potential:
        """U(x) = f(<x, e>): ``profile`` f as any kernel input (a formula in t such as ``"-2*t"``, a callable of
        t, a Kernel), ``axis`` e a unit vector (default e_d of the domain)."""
        function = as_kernel(profile, "profile")
        function.check_finite("profile")
        return ZonalPotential(function, axis)

    @staticmethod
    def fourier(coefficients: Any) -> Potential:
        """U(θ) = û_0 + 2 Re Σ_{k=1}^{K} û_k e^{ikθ} on S¹ from û_0 (real), û_1, …, û_K."""
        return FourierPotential(coefficients)

    @staticmethod
    def harmonics(alm: Any) -> Potential:
        """U = Σ a_lm Y_lm on S² from ducc0-ordered coefficients (m ≥ 0, a_l0 real; module docstring)."""
        return HarmonicPotential(alm)

    @staticmethod
    def function(f: Callable[[np.ndarray], np.ndarray], gradient: Callable[[np.ndarray], np.ndarray] | None = None,
                 dimension: int | None = None) -> Potential:
        """U = ``f(points)`` on points (…, d); ``gradient(points)`` its ambient gradient (…, d), needed by
        particles; ``dimension`` d if the function is for one sphere only."""
        return FunctionPotential(f, gradient, dimension)


class ZonalPotential(Potential):
    """U(x) = f(<x, e>), ∇_S U = f'(<x, e>) (e - <x, e> x)."""

    def __init__(self, profile: Kernel, axis: Any) -> None:
        self.profile = profile
        if axis is None:
            self.axis = None
        else:
            vector = np.asarray(axis, dtype=float)
            norm = float(np.linalg.norm(vector)) if vector.ndim == 1 else 0.0
            if vector.ndim != 1 or vector.size < 2 or not np.isfinite(norm) or abs(norm - 1) > 1e-12:
                raise ValueError(f"axis must be a unit vector of R^d (d >= 2), got {axis!r}")
            self.axis = vector
            self.dimension = vector.size

    def _axis(self, d: int) -> np.ndarray:
        if self.axis is not None:
            return self.axis
        e = np.zeros(d)
        e[-1] = 1.0
        return e

    @property
    def description(self) -> str:
        axis = "e_d" if self.axis is None else np.array2string(self.axis, precision=17, separator=", ")
        return f"zonal about {axis}: {self.profile.description}"

    def about_pole(self, d: int) -> bool:
        pole = np.zeros(d)
        pole[-1] = 1.0
        return self.axis is None or bool(np.array_equal(self.axis, pole))

    def values(self, points: np.ndarray) -> np.ndarray:
        return self.profile.value(points @ self._axis(points.shape[-1]))

    def surface_gradient(self, points: np.ndarray) -> np.ndarray:
        e = self._axis(points.shape[-1])
        t = points @ e
        return self.profile.derivative(t)[..., None] * (e - t[..., None] * points)


class FourierPotential(Potential):
    """U(θ) = û_0 + 2 Re Σ_k û_k e^{ikθ}, θ the angle of x ∈ S¹; ∇_S U = U'(θ) (-sin θ, cos θ)."""

    dimension = 2

    def __init__(self, coefficients: Any) -> None:
        if isinstance(coefficients, (str, bytes)):
            raise TypeError(f"coefficients must be Fourier coefficients û_0, …, û_K, got {coefficients!r}")
        c = np.atleast_1d(np.asarray(coefficients))
        if c.dtype == bool or not np.issubdtype(c.dtype, np.number):
            raise TypeError(f"coefficients must be numbers (û_0, …, û_K), got dtype {c.dtype}")
        c = c.astype(complex)
        if c.ndim != 1 or not np.all(np.isfinite(c)):
            raise ValueError(f"coefficients must be a 1-D sequence of finite û_0, …, û_K, got {coefficients!r}")
        if c[0].imag != 0:
            raise ValueError(f"û_0 must be real (U is real), got {c[0]!r}")
        self.coefficients = c

    @property
    def description(self) -> str:
        return "fourier[" + ", ".join(repr(complex(v)) for v in self.coefficients) + "]"

    def _series(self, theta: np.ndarray, derivative: bool) -> np.ndarray:
        k = np.arange(1, self.coefficients.size)
        modes = self.coefficients[1:] * (1j * k if derivative else 1.0)
        out = 2 * np.real(np.exp(1j * theta[..., None] * k) @ modes)
        return out if derivative else out + self.coefficients[0].real

    def values(self, points: np.ndarray) -> np.ndarray:
        return self._series(np.arctan2(points[..., 1], points[..., 0]), False)

    def surface_gradient(self, points: np.ndarray) -> np.ndarray:
        theta = np.arctan2(points[..., 1], points[..., 0])
        slope = self._series(theta, True)
        return slope[..., None] * np.stack([-np.sin(theta), np.cos(theta)], axis=-1)


class HarmonicPotential(Potential):
    """U = Σ a_lm Y_lm on S² (module docstring), evaluated by ``scipy.special.sph_harm_y_all``.

    The surface gradient is taken along two great circles through each point, in tangent directions v_1, v_2:
    restricted to a great circle, U(cos h x + sin h v) is a trigonometric polynomial of degree ≤ lmax in h, so
    its derivative at h = 0 is exact from 2 lmax + 1 equispaced samples (an FFT), at the poles as anywhere
    (the form ∂_ϑU e_ϑ + ∂_φU / sin ϑ e_φ divides 0 by 0 there)."""

    dimension = 3

    def __init__(self, alm: Any) -> None:
        if isinstance(alm, (str, bytes)):
            raise TypeError(f"alm must be spherical-harmonic coefficients, got {alm!r}")
        a = np.asarray(alm)
        if a.dtype == bool or not np.issubdtype(a.dtype, np.number):
            raise TypeError(f"alm must be numbers, got dtype {a.dtype}")
        a = np.atleast_1d(a).astype(complex)
        lmax = int(round((np.sqrt(8 * a.size + 1) - 3) / 2)) if a.ndim == 1 else -1
        if a.ndim != 1 or (lmax + 1) * (lmax + 2) // 2 != a.size or not np.all(np.isfinite(a)):
            raise ValueError(f"alm must be a 1-D array of (lmax+1)(lmax+2)/2 finite coefficients in ducc0 order "
                             f"(m-major, m ≥ 0), got shape {a.shape}")
        grid = SphereGrid(max(lmax, 1))
        self.lmax, self.degrees, self.orders = lmax, grid.degrees[: a.size], grid.orders[: a.size]
        if np.any(a[self.orders == 0].imag != 0):
            raise ValueError("alm with m = 0 must be real (U is real)")
        self.alm = a

    @property
    def description(self) -> str:
        return "harmonics[" + ", ".join(repr(complex(v)) for v in self.alm) + "]"

    def _angles(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # ϑ = atan2(ρ, z), accurate at the poles (arccos z loses half the digits of ϑ there)
        return (np.arctan2(np.hypot(points[..., 0], points[..., 1]), points[..., 2]),
                np.arctan2(points[..., 1], points[..., 0]))

    def _weights(self) -> np.ndarray:
        return np.where(self.orders == 0, 1.0, 2.0) * self.alm

    def values(self, points: np.ndarray) -> np.ndarray:
        theta, phi = self._angles(points)
        table = sph_harm_y_all(self.lmax, self.lmax, theta, phi)
        return np.real(np.tensordot(self._weights(), table[self.degrees, self.orders], axes=(0, 0)))

    def surface_gradient(self, points: np.ndarray) -> np.ndarray:
        points = np.asarray(points, dtype=float)
        # tangent directions: v_1 ⊥ x from the coordinate axis least aligned with x, v_2 = x × v_1
        axis = np.eye(3)[np.argmin(np.abs(points), axis=-1)]
        first = np.cross(points, axis)
        first /= np.linalg.norm(first, axis=-1, keepdims=True)
        second = np.cross(points, first)
        samples = 2 * self.lmax + 1
        h = 2 * np.pi * np.arange(samples) / samples
        wavenumbers = np.fft.fftfreq(samples, 1.0 / samples)
        gradient = np.zeros_like(points)
        for direction in (first, second):
            circle = np.cos(h)[:, None] * points[..., None, :] + np.sin(h)[:, None] * direction[..., None, :]
            coefficients = np.fft.fft(self.values(circle), axis=-1) / samples
            slope = np.real(coefficients @ (1j * wavenumbers))
            gradient += slope[..., None] * direction
        return gradient


class FunctionPotential(Potential):
    """U = f(points) with an optional ambient gradient (projected onto the tangent space)."""

    def __init__(self, f: Callable[[np.ndarray], np.ndarray], gradient: Callable[[np.ndarray], np.ndarray] | None,
                 dimension: int | None) -> None:
        if not callable(f):
            raise TypeError(f"f must be a callable of points (…, d), got {type(f).__name__}")
        if gradient is not None and not callable(gradient):
            raise TypeError(f"gradient must be a callable of points (…, d), got {type(gradient).__name__}")
        if dimension is not None and (isinstance(dimension, bool) or not isinstance(dimension, (int, np.integer))
                                      or dimension < 2):
            raise ValueError(f"dimension must be None or an integer d >= 2 (S^(d-1)), got {dimension!r}")
        self.f, self.gradient = f, gradient
        self.dimension = None if dimension is None else int(dimension)
        name = getattr(f, "__qualname__", type(f).__name__)
        self._label = f"function {getattr(f, '__module__', '?')}.{name} [code sha256 {code_digest(f)}]"

    @property
    def description(self) -> str:
        return self._label

    def values(self, points: np.ndarray) -> np.ndarray:
        out = np.asarray(self.f(points))
        if out.shape != points.shape[:-1]:
            raise ValueError(f"the potential function must return one value per point, shape {points.shape[:-1]}, "
                             f"got {out.shape}")
        if np.iscomplexobj(out) or not np.issubdtype(out.dtype, np.number) or not np.all(np.isfinite(out)):
            raise ValueError("the potential function must return real, finite values")
        return out.astype(float)

    def surface_gradient(self, points: np.ndarray) -> np.ndarray:
        if self.gradient is None:
            raise ValueError("particles in a potential given as a function need its gradient: "
                             "Potential.function(f, gradient=...) (or give the potential as zonal, Fourier or "
                             "spherical-harmonic coefficients, whose gradients are exact)")
        g = np.asarray(self.gradient(points), dtype=float)
        if g.shape != points.shape or not np.all(np.isfinite(g)):
            raise ValueError(f"the potential gradient must return finite vectors of shape {points.shape}, got {g.shape}")
        return g - np.sum(g * points, axis=-1, keepdims=True) * points


def code_digest(f: Any) -> str:
    """12 hex digits of the SHA-256 of what a Python function computes: its bytecode, constants, default arguments
    and the values its closure captures (two lambdas of one name but different bodies or captured numbers
    differ); the repr of any other callable."""
    code = getattr(f, "__code__", None)
    if code is None:
        text = repr(f)
    else:
        cells = []
        for cell in getattr(f, "__closure__", None) or ():
            try:
                cells.append(repr(cell.cell_contents))
            except ValueError:  # an empty cell
                cells.append("<empty>")
        text = repr((code.co_code, code.co_consts, code.co_names, getattr(f, "__defaults__", None), cells))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def as_potential(potential: Any) -> Potential | None:
    """None, a :class:`Potential`, a formula in t (zonal about e_d, :meth:`Potential.zonal`) or a callable of
    points (:meth:`Potential.function`).

    Raises
    ------
    TypeError
        Anything else.
    """
    if potential is None or isinstance(potential, Potential):
        return potential
    if isinstance(potential, str):
        return Potential.zonal(potential)
    if callable(potential):
        return Potential.function(potential)
    raise TypeError(f"potential must be None, a meanfield Potential, a formula in t = <x, e_d> or a callable of "
                    f"points, got {type(potential).__name__}")

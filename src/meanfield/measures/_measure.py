"""Probability measures: densities on a domain's grid and empirical measures.

A :class:`Density` holds node values of ρ with respect to the area measure of
its domain (∫ ρ dσ = 1 after normalisation). An :class:`EmpiricalMeasure`
holds weighted atoms (angles on S¹, unit vectors on S^{d-1}, points of R^d),
optionally a batch of independent systems along a leading axis.

Masses and normalisation are scaled by powers of two. With ρ_j = 2^{e_ρ} ρ̃_j
and w_j = 2^{e_w} w̃_j, e_ρ and e_w the binary exponents of max_j ρ_j and
max_j w_j (``np.frexp``: max ρ̃, max w̃ ∈ [1/2, 1); the scaling is exact except
for entries below 2^{-1022} times the largest, which carry no mass in double
precision),

    ∫ ρ dσ = Σ_j ρ_j w_j = 2^{e_ρ + e_w} m̃,    m̃ = Σ_j ρ̃_j w̃_j < n,

    ρ / ∫ ρ dσ = 2^{-e_w} (ρ̃ / m̃),

so neither products nor sums leave the normal range: node values of any
size, subnormal (1e-320, whose products with the weights kept a few bits:
mass 0.99852 after normalising on a circle of 64 nodes) or huge (1e308, whose
sum overflowed), normalise to mass 1 to round-off.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..domains._circle import Circle
from .._validate import as_real, as_real_array, check_nonnegative

__all__ = [
    "Density",
    "EmpiricalMeasure",
    "density",
    "uniform",
    "von_mises",
    "wrapped_cauchy",
]


@dataclass(frozen=True, eq=False)
class Density:
    r"""Node values of a density on a domain's grid.

    Usually made by :func:`density`, :func:`uniform`, :func:`von_mises`,
    :func:`wrapped_cauchy` or :func:`perturbed_uniform`, which normalise; the
    constructor keeps the values as given (``normalized()`` divides by the mass).

    Parameters
    ----------
    domain : Circle, Sphere or ZonalSphere
        The grid the values live on.
    values : ndarray, shape ``domain.shape``
        ρ at the nodes, with respect to the area measure (∫ ρ dσ = mass).
        Copied and made read-only.
    law : dict
        How the density was made (e.g. ``{"name": "von_mises", "loc": 0.0,
        "kappa": 2.0}``); exact samplers use it when present.

    Raises
    ------
    ValueError
        Values of another shape than the grid's, non-finite or negative
        values, or zero mass.

    Notes
    -----
    The mass and the mean are quadratures with the domain's weights w_j:

        mass = ∫ ρ dσ = Σ_j ρ_j w_j,     mean() = ∫ x ρ(x) dσ(x) = Σ_j ρ_j w_j x_j,

    .. math::

        \int \rho\,\mathrm{d}\sigma = \sum_j \rho_j w_j, \qquad
        \int x\,\rho(x)\,\mathrm{d}\sigma(x) = \sum_j \rho_j w_j\, x_j,

    x_j the ``moment_points`` of the domain (its nodes, or on a ZonalSphere
    cos ϑ_j e_d). The mass is formed with power-of-two scalings (module
    docstring), so subnormal or huge node values keep their mass.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> circle = mf.Circle(64)
    >>> rho = mf.Density(circle, np.ones(64))      # ρ ≡ 1: mass 2π
    >>> print(f"{rho.mass:.6f}")
    6.283185
    >>> p = rho.normalized()                         # the uniform density 1/(2π)
    >>> print(f"{p.mass:.6f} {p.values[0]:.6f} {1 / (2 * np.pi):.6f}")
    1.000000 0.159155 0.159155
    >>> print(np.round(p.mean(), 12) + 0.0)        # its mean ∫ x ρ dσ is 0
    [0. 0.]
    """

    domain: Any
    values: np.ndarray
    law: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        values = np.array(as_real_array("values", self.values, finite=False), copy=True)
        if values.shape != tuple(self.domain.shape):
            raise ValueError(
                f"density values must have the grid's shape {tuple(self.domain.shape)}, got {values.shape}"
            )
        if not np.all(np.isfinite(values)):
            raise ValueError("density values must be finite (found NaN or infinity)")
        if np.any(values < 0):
            raise ValueError(f"density values must be non-negative, got minimum {values.min():.3g}")
        if not _scaled_mass(values, self.domain.weights)[2] > 0:
            raise ValueError("density has zero mass; a probability density needs positive mass")
        values.setflags(write=False)
        object.__setattr__(self, "values", values)

    @property
    def mass(self) -> float:
        """∫ ρ dσ = Σ_j ρ_j w_j by the domain's quadrature, formed as 2^{e_ρ + e_w} m̃ (module docstring):
        accurate for subnormal values, ``inf`` where the mass exceeds the largest double."""
        _, exponent, scaled = _scaled_mass(self.values, self.domain.weights)
        with np.errstate(over="ignore"):
            return float(np.ldexp(scaled, exponent))

    def normalized(self) -> Density:
        """The density divided by its mass, ρ / ∫ ρ dσ = 2^{-e_w} (ρ̃ / m̃) (module docstring): mass 1 to
        round-off for node values of any positive finite size."""
        values, _, scaled = _scaled_mass(self.values, self.domain.weights)
        weight_exponent = int(np.frexp(np.max(self.domain.weights))[1])
        return Density(self.domain, np.ldexp(values / scaled, -weight_exponent), self.law)

    def integrate(self, f: np.ndarray) -> float:
        """∫ f ρ dσ for node values ``f`` of shape ``domain.shape``."""
        return float(np.sum(f * self.values * self.domain.weights))

    def mean(self) -> np.ndarray:
        """First moment m = ∫ x ρ(x) dσ(x) in R^d."""
        return np.tensordot(self.values * self.domain.weights, self.domain.moment_points, axes=self.values.ndim)


@dataclass(frozen=True, eq=False)
class EmpiricalMeasure:
    """Weighted atoms μ = Σ_i w_i δ_{x_i}.

    Parameters
    ----------
    points : ndarray
        Angles of shape (n,) on S¹, unit vectors (n, d) on S^{d-1}, points
        (n, d) in R^d; a leading axis of independent systems is allowed:
        (systems, n) or (systems, n, d).
    weights : ndarray or None
        Atom weights, shape ``points.shape[:-1]`` (angles: ``points.shape``),
        summing to 1 per system; None for equal weights 1/n.
    domain : str or domain object
        "circle", "sphere" or "euclidean", or a domain object (its particles' space).

    Raises
    ------
    ValueError
        Non-finite points, points of the wrong shape for ``domain`` or
        without an atom, weights of the wrong shape, negative, non-finite or
        not summing to 1 (per system) within 1e-10, an unknown ``domain``.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> mu = mf.EmpiricalMeasure(np.array([0.0, np.pi]), weights=[0.25, 0.75])
    >>> mu.n_atoms, mu.kind
    (2, 'circle')
    >>> nu = mf.EmpiricalMeasure(np.eye(3), domain="sphere")   # 3 unit vectors of R³
    >>> nu.n_atoms, nu.kind, nu.weights.round(6).tolist()
    (3, 'sphere', [0.333333, 0.333333, 0.333333])
    >>> # W₁ on S¹: moving mass 1/4 by π (the two atoms at distance π)
    >>> print(f"{mf.wasserstein(mu, np.array([np.pi])):.6f}")
    0.785398
    """

    points: np.ndarray
    weights: np.ndarray | None = None
    domain: Any = "circle"

    def __post_init__(self) -> None:
        points = as_real_array("points", self.points)
        kind = domain_kind(self.domain)
        atom_shape = points.shape if kind == "circle" else points.shape[:-1]
        if kind != "circle" and points.ndim < 2:
            raise ValueError(f"points on a {kind} domain must have shape (n, d), got {points.shape}")
        if len(atom_shape) == 0 or atom_shape[-1] < 1:
            raise ValueError(f"points must hold at least one atom, got shape {points.shape}")
        if self.weights is None:
            weights = np.full(atom_shape, 1.0 / atom_shape[-1])
        else:
            weights = as_real_array("weights", self.weights, finite=False)
            if weights.shape != atom_shape:
                raise ValueError(f"weights must have shape {atom_shape}, got {weights.shape}")
            if not np.all(np.isfinite(weights)) or np.any(weights < 0):
                raise ValueError("weights must be finite and non-negative")
            sums = weights.sum(axis=-1)
            off = np.abs(np.ravel(sums) - 1.0) > 1e-10
            if np.any(off):
                shown = ", ".join(f"1 {'+' if x > 1 else '-'} {abs(x - 1):.3g}" if abs(x - 1) < 1e-3 else repr(float(x))
                                  for x in np.ravel(sums)[off][:5])
                raise ValueError(f"weights must sum to 1 (per system) to within 1e-10, got sums {shown}"
                                 + (f" ({int(off.sum())} systems off)" if off.sum() > 1 else ""))
        object.__setattr__(self, "points", points)
        object.__setattr__(self, "weights", weights)

    @property
    def n_atoms(self) -> int:
        """Number of atoms per system."""
        return int(self.weights.shape[-1])

    @property
    def kind(self) -> str:
        """"circle", "sphere" or "euclidean"."""
        return domain_kind(self.domain)


def _scaled_mass(values: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, int, float]:
    """(ρ̃, e_ρ + e_w, m̃) of non-negative finite node values and quadrature weights (module docstring):
    ρ̃ = 2^{-e_ρ} ρ, m̃ = Σ_j ρ̃_j w̃_j with w̃ = 2^{-e_w} w; m̃ = 0 exactly when no weighted value is positive."""
    weights = np.asarray(weights, dtype=float)
    value_exponent = int(np.frexp(np.max(values))[1])
    weight_exponent = int(np.frexp(np.max(weights))[1])
    scaled_values = np.ldexp(values, -value_exponent)
    scaled = float(np.sum(scaled_values * np.ldexp(weights, -weight_exponent)))
    return scaled_values, value_exponent + weight_exponent, scaled


def domain_kind(domain: Any) -> str:
    """"circle", "sphere" or "euclidean" for a name or a domain object (the name of its particles' space)."""
    if isinstance(domain, str):
        if domain not in ("circle", "sphere", "euclidean"):
            raise ValueError(f"domain must be 'circle', 'sphere' or 'euclidean' or a domain object, got {domain!r}")
        return domain
    return str(domain.geometry.name)


def density(domain: Any, f: np.ndarray | Callable[..., np.ndarray], normalize: bool = True) -> Density:
    """A density on ``domain`` from node values or a callable of the coordinates.

    Parameters
    ----------
    domain : Circle, Sphere or ZonalSphere
    f : array_like or callable
        Node values of shape ``domain.shape``, or a callable evaluated at the
        node coordinates: ``f(theta)`` on S¹, ``f(lat, lon)`` on S²,
        ``f(polar)`` on a :class:`ZonalSphere`.
    normalize : bool
        Divide by the mass so that ∫ ρ dσ = 1 (default), scaled by powers of
        two (module docstring): any non-negative finite values with positive
        mass, subnormal (1e-320) or huge (1e308), give mass 1 to round-off.

    Returns
    -------
    Density
        The density on ``domain`` (no ``law``: exact samplers do not apply).

    Raises
    ------
    ValueError
        Values of the wrong shape, negative, non-finite, or of zero mass (all
        zero, or positive only where the quadrature weight is 0).

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> circle = mf.Circle(64)
    >>> rho = mf.density(circle, lambda theta: 1 + np.cos(theta))   # ρ = (1 + cos θ)/(2π)
    >>> print(f"{rho.mass:.6f} {rho.values.max():.6f} {1 / np.pi:.6f}")
    1.000000 0.318310 0.318310
    >>> print(np.round(rho.mean(), 12) + 0.0)                        # ∫ x ρ dσ = (1/2, 0)
    [0.5 0. ]
    >>> raw = mf.density(circle, np.ones(64), normalize=False)
    >>> print(f"{raw.mass:.6f}")                                     # kept as given: 2π
    6.283185
    """
    if callable(f):
        values = np.broadcast_to(np.asarray(domain.node_values(f), dtype=float), domain.shape)
    else:
        values = as_real_array("values", f, finite=False)
    rho = Density(domain, values)
    return rho.normalized() if normalize else rho


def uniform(domain: Any) -> Density:
    """The uniform probability density 1/|S^{d-1}|.

    Parameters
    ----------
    domain : Circle, Sphere or ZonalSphere
        The grid (|S¹| = 2π, |S²| = 4π, |S^{d-1}| = 2π^{d/2}/Γ(d/2)).

    Returns
    -------
    Density
        Node values 1/|S^{d-1}| everywhere, with law ``{"name": "uniform"}``
        (sampled exactly by :func:`sample`).

    Raises
    ------
    TypeError
        ``domain`` is not a grid domain (e.g. the string "circle").

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> rho = mf.uniform(mf.Sphere(8))
    >>> print(f"{rho.mass:.6f} {rho.values[0, 0]:.6f} {1 / (4 * np.pi):.6f}")
    1.000000 0.079577 0.079577
    >>> # E_β of the uniform measure on S²: sinh(β)/(2β²), here β = 1
    >>> print(f"{mf.energy(mf.SelfAttention(1.0), rho):.6f} {np.sinh(1.0) / 2:.6f}")
    0.587601 0.587601
    """
    check_domain(domain)
    return Density(domain, np.full(domain.shape, 1.0 / domain.area), {"name": "uniform"})


def check_domain(domain: Any, name: str = "domain") -> Any:
    """Refuse anything but a grid domain (TypeError naming ``name``): ``mf.uniform("circle")`` would otherwise fail
    deep inside with an AttributeError."""
    if not all(hasattr(domain, attribute) for attribute in ("shape", "area", "schemes", "von_mises_values")):
        raise TypeError(f"{name} must be a grid domain, mf.Circle(n), mf.Sphere(lmax) or mf.ZonalSphere(d, n), "
                        f"got {domain!r}")
    return domain


def von_mises(domain: Any, loc: float | np.ndarray | None = None, kappa: float = 1.0) -> Density:
    r"""Von Mises(–Fisher) density with mean direction ``loc`` and concentration κ.

    On S¹: ρ(θ) = e^{κ cos(θ - loc)} / (2π I_0(κ)), ``loc`` an angle. On S^{d-1}:
    ρ(x) = C_d(κ) e^{κ <loc, x>}, ``loc`` a unit vector (on a ZonalSphere the
    axis e_d is the only admissible mean direction). Exponentially scaled
    Bessel functions keep κ up to several hundred exact. ``loc=None`` means
    the angle 0 on S¹ and the axis e_d on spheres.

    Parameters
    ----------
    domain : Circle, Sphere or ZonalSphere
        The grid.
    loc : float, array_like or None
        Mean direction: an angle (radians) on S¹, a unit vector of R^d on a
        sphere; None: 0 on S¹, e_d on spheres.
    kappa : float
        Concentration κ ≥ 0 (κ = 0: the uniform density).

    Returns
    -------
    Density
        Its node values, with law ``{"name": "von_mises", "loc": …, "kappa": …}``
        (sampled exactly by :func:`sample`).

    Raises
    ------
    ValueError
        A grid too coarse for κ: the node values integrate (by the domain's
        quadrature) to a mass further than :data:`VON_MISES_MASS_TOLERANCE` from 1
        (the width ~1/√κ is not resolved; on S¹ the error is
        2 Σ_{m≥1} I_{mn}(κ)/I_0(κ) and the message names the n that resolves κ).
        Also a negative κ, a ``loc`` that is not a finite angle or unit
        vector (on a ZonalSphere: not e_d), or node values that overflow.
    TypeError
        ``domain`` is not a grid domain.

    Notes
    -----
    With respect to the area measure of S^{d-1},

    .. math::

        \rho(x) = C_d(\kappa)\, e^{\kappa\langle \mathrm{loc}, x\rangle}, \qquad
        C_d(\kappa) = \frac{\kappa^{d/2-1}}{(2\pi)^{d/2} I_{d/2-1}(\kappa)},

    so that C_2(κ) = 1/(2π I_0(κ)) on S¹ and C_3(κ) = κ/(4π sinh κ) on S². The
    mean ∫ x ρ dσ is A_d(κ) loc with A_d(κ) = I_{d/2}(κ)/I_{d/2-1}(κ)
    (I_1(κ)/I_0(κ) on S¹, coth κ - 1/κ on S²).

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> from scipy.special import iv
    >>> rho = mf.von_mises(mf.Circle(64), loc=0.0, kappa=2.0)
    >>> print(f"{rho.mass:.6f}")
    1.000000
    >>> # mean resultant ∫ cos θ ρ dθ = I_1(κ)/I_0(κ)
    >>> print(f"{rho.mean()[0]:.6f} {iv(1, 2.0) / iv(0, 2.0):.6f}")
    0.697775 0.697775
    >>> zonal = mf.von_mises(mf.ZonalSphere(3, 32), kappa=2.0)    # about e_3 on S²
    >>> print(f"{zonal.mean()[2]:.6f} {1 / np.tanh(2.0) - 1 / 2.0:.6f}")
    0.537315 0.537315
    """
    kappa_f = check_nonnegative("kappa", kappa)
    check_domain(domain)
    values, law = domain.von_mises_values(loc, kappa_f)
    if not np.all(np.isfinite(values)):
        raise ValueError(f"von_mises: kappa = {kappa_f:g} overflows the node values on {domain!r} (NaN or "
                         f"infinity); the largest kappa this grid resolves is about "
                         f"{_largest_resolved_kappa(domain, loc, kappa_f):.3g}")
    density = Density(domain, values, law)
    _check_resolved(density, kappa_f)
    return density


def _largest_resolved_kappa(domain: Any, loc: Any, above: float) -> float:
    """The largest κ < ``above`` whose von Mises node values are finite with mass within the tolerance (bisection
    in log κ to 1 %; 0 when none from 1e-6 up)."""
    def resolved(kappa: float) -> bool:
        values, _ = domain.von_mises_values(loc, kappa)
        return bool(np.all(np.isfinite(values))) and abs(Density(domain, values).mass - 1.0) <= VON_MISES_MASS_TOLERANCE

    low, high = -6.0, float(np.log10(above))
    if not resolved(10.0 ** low):
        return 0.0
    while high - low > 0.004:
        middle = 0.5 * (low + high)
        low, high = (middle, high) if resolved(10.0 ** middle) else (low, middle)
    return float(10.0 ** low)


#: largest |∫ρ - 1| accepted for a von Mises density on its grid
VON_MISES_MASS_TOLERANCE = 1e-6


def _check_resolved(density: Density, kappa: float) -> None:
    """Refuse a von Mises density whose grid cannot resolve its width ~1/√κ (mass off by > tolerance)."""
    mass = density.mass
    if abs(mass - 1.0) <= VON_MISES_MASS_TOLERANCE:
        return
    domain = density.domain
    remedy = domain.von_mises_remedy(kappa, VON_MISES_MASS_TOLERANCE)
    raise ValueError(f"von_mises: kappa = {kappa:g} is too concentrated for {domain!r}: its width "
                     f"1/sqrt(kappa) = {1 / np.sqrt(kappa):.3g} rad is not resolved and the node values integrate "
                     f"to mass {mass:.6g} instead of 1 (tolerance {VON_MISES_MASS_TOLERANCE:g}); {remedy}")


def wrapped_cauchy(domain: Circle, loc: float = 0.0, r: float = 0.5) -> Density:
    r"""Wrapped Cauchy density on S¹ with mean resultant length ``r`` ∈ [0, 1).

    ρ(θ) = (1 - r²) / (2π (1 + r² - 2r cos(θ - loc))).

    Parameters
    ----------
    domain : Circle
        The grid (the circle only).
    loc : float
        Mean direction (an angle in radians).
    r : float
        Mean resultant length, 0 ≤ r < 1 (0: the uniform density).

    Returns
    -------
    Density
        Its node values, with law ``{"name": "wrapped_cauchy", "loc": …, "r": …}``
        (sampled exactly by :func:`sample`).

    Raises
    ------
    ValueError
        A domain other than a :class:`~meanfield.Circle`, r outside [0, 1), a
        non-finite ``loc``.

    Notes
    -----
    .. math::

        \rho(\theta) = \frac{1 - r^2}{2\pi\,(1 + r^2 - 2r\cos(\theta - \mathrm{loc}))}
        = \frac{1}{2\pi}\Big(1 + 2\sum_{k \ge 1} r^k \cos k(\theta - \mathrm{loc})\Big),

    so ∫ e^{ikθ} ρ dθ = r^{|k|} e^{ik loc}.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> rho = mf.wrapped_cauchy(mf.Circle(64), loc=np.pi / 2, r=0.5)
    >>> print(f"{rho.mass:.6f}")
    1.000000
    >>> print(np.round(rho.mean(), 12) + 0.0)      # ∫ x ρ dσ = r (cos loc, sin loc)
    [0.  0.5]
    """
    if not isinstance(domain, Circle):
        raise ValueError(f"wrapped_cauchy is defined on the circle only, got domain {domain!r}")
    r_f = float(r)
    if not (0 <= r_f < 1):
        raise ValueError(f"r must satisfy 0 <= r < 1, got {r!r}")
    loc_f = _angle(loc, "loc")
    values = (1 - r_f**2) / (2 * np.pi * (1 + r_f**2 - 2 * r_f * np.cos(domain.theta - loc_f)))
    return Density(domain, values, {"name": "wrapped_cauchy", "loc": loc_f, "r": r_f})


def _angle(value: Any, name: str) -> float:
    out = as_real(name, value, "an angle in radians")
    if not np.isfinite(out):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return out

r"""Laws g of natural frequencies beyond scipy.stats, and how every law is read.

A law is ``None`` or a number (identical oscillators), a frozen continuous scipy.stats law, or one of:

* :class:`LorentzianMixture`: g(ω) = Σ_m p_m (γ_m/π) / ((ω - c_m)² + γ_m²), γ_m > 0, with its poles
  ζ_m = c_m + iγ_m in the upper half-plane (:func:`bimodal_lorentzian`: centres ±ω₀, one half-width Δ);
* :class:`Mixture`: g = Σ_m p_m g_m of any laws (scipy.stats or these);
* :class:`DiscreteLaw`: g = Σ_m p_m δ_{ω_m}, finitely many frequencies.

Every law answers ``pdf`` (not the discrete one), ``cdf``, ``ppf``, ``rvs(size, random_state)`` and ``median``
like a frozen scipy law. :func:`law_poles` gives the points ζ_m and weights p_m at which ∫ g(ω) f(ω) dω = Σ_m p_m
f(ζ_m) for every f analytic and bounded in the upper half ω-plane (the residue theorem; a discrete law's atoms
are real "poles"); this is what the Ott–Antonsen engine and the PDE's exact form in ω use. :func:`describe_law`
writes a law by its parameters (for attrs and fingerprints; never a repr carrying an address).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.stats

__all__ = ["DiscreteLaw", "FrequencyLaw", "LorentzianMixture", "Mixture", "bimodal_lorentzian", "describe_law",
           "is_identical", "law_poles", "read_frequency_law"]

#: bisection steps of a mixture's quantile function (the bracket shrinks 2^-64: below one ulp of its width)
PPF_BISECTIONS = 64


def _relative_weights(name: str, weights: Any, size: int) -> np.ndarray:
    """Weights p_m > 0 (relative; normalised to sum 1), one per component."""
    w = np.ones(size) if weights is None else np.atleast_1d(np.asarray(weights, dtype=float))
    if w.shape != (size,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError(f"{name} must be {size} finite positive (relative) weights, got {weights!r}")
    return w / w.sum()


def _finite_vector(name: str, values: Any) -> np.ndarray:
    v = np.atleast_1d(np.asarray(values, dtype=float))
    if v.ndim != 1 or v.size == 0 or not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be a non-empty 1-D sequence of finite numbers, got {values!r}")
    return v


class FrequencyLaw:
    """A law of natural frequencies with the methods of a frozen scipy law; subclasses say what it is."""

    weights: np.ndarray

    def pdf(self, omega: Any) -> np.ndarray:
        raise NotImplementedError

    def cdf(self, omega: Any) -> np.ndarray:
        raise NotImplementedError

    def ppf(self, u: Any) -> np.ndarray:
        """The quantile function F⁻¹(u), by bisection on the cdf within the components' own quantiles."""
        u = np.asarray(u, dtype=float)
        lo, hi = self._quantile_bracket(u)
        for _ in range(PPF_BISECTIONS):
            mid = 0.5 * (lo + hi)
            below = self.cdf(mid) < u
            lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
        return 0.5 * (lo + hi)

    def _quantile_bracket(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def median(self) -> float:
        return float(self.ppf(0.5))

    def rvs(self, size: Any = None, random_state: Any = None) -> np.ndarray:
        raise NotImplementedError

    @property
    def poles(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(ζ_m, p_m) with ∫ g f dω = Σ p_m f(ζ_m) for f analytic and bounded in Im ω ≥ 0; None if g has none."""
        return None

    def describe(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.describe()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FrequencyLaw) and self.describe() == other.describe()

    def __hash__(self) -> int:
        return hash(self.describe())


class LorentzianMixture(FrequencyLaw):
    r"""g(ω) = Σ_m p_m (γ_m/π) / ((ω - c_m)² + γ_m²): Lorentzians of centres c_m and half-widths γ_m > 0.

    Parameters
    ----------
    centres, widths : sequence of float
        c_m and γ_m (one width is used for every centre).
    weights : sequence of float, optional
        Relative weights p_m > 0 (normalised to sum 1); default equal.

    Raises
    ------
    ValueError
        Centres or widths that are not finite, widths ≤ 0 (a width 0 is an atom: :class:`DiscreteLaw`) or
        of another number than the centres, weights that are not positive and finite, one per centre.

    Notes
    -----
    .. math::

        g(\omega) = \sum_m p_m\, \frac{\gamma_m/\pi}{(\omega - c_m)^2 + \gamma_m^2}, \qquad
        \int g(\omega) f(\omega)\,\mathrm{d}\omega = \sum_m p_m\, f(c_m + i\gamma_m)

    for every f analytic and bounded in the upper half-plane (the residue theorem): the poles
    ζ_m = c_m + iγ_m (:attr:`poles`) at which :class:`~meanfield.Kuramoto` with one harmonic, and the
    Ott–Antonsen reduction, are exact in ω. Like a frozen scipy law it answers ``pdf``, ``cdf``, ``ppf``,
    ``rvs`` and ``median``.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> g = mf.LorentzianMixture([0.0], 0.5)          # one Lorentzian, half-width γ = 1/2
    >>> print(f"{float(g.pdf(0.0)):.6f} {1 / (0.5 * np.pi):.6f}")            # g(c) = 1/(πγ)
    0.636620 0.636620
    >>> print(f"{float(g.cdf(0.5)):.6f} {float(g.ppf(0.75)):.6f}")          # quartile at c + γ
    0.750000 0.500000
    >>> g.poles
    (array([0.+0.5j]), array([1.]))
    """

    def __init__(self, centres: Sequence[float], widths: Sequence[float] | float,
                 weights: Sequence[float] | None = None) -> None:
        self.centres = _finite_vector("centres", centres)
        widths = np.broadcast_to(np.asarray(widths, dtype=float), self.centres.shape) if np.ndim(widths) == 0 \
            else _finite_vector("widths", widths)
        if widths.shape != self.centres.shape or not np.all(np.isfinite(widths)) or np.any(widths <= 0):
            raise ValueError(f"widths must be {self.centres.size} finite half-widths > 0 (a width 0 is an atom: use "
                             f"DiscreteLaw), got {widths!r}")
        self.widths = np.array(widths, dtype=float)
        self.weights = _relative_weights("weights", weights, self.centres.size)

    def pdf(self, omega: Any) -> np.ndarray:
        x = (np.asarray(omega, dtype=float)[..., None] - self.centres) / self.widths
        return np.sum(self.weights / (np.pi * self.widths * (1 + x * x)), axis=-1)

    def cdf(self, omega: Any) -> np.ndarray:
        x = (np.asarray(omega, dtype=float)[..., None] - self.centres) / self.widths
        return np.sum(self.weights * (0.5 + np.arctan(x) / np.pi), axis=-1)

    def _quantile_bracket(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        q = self.centres + self.widths * np.tan(np.pi * (u[..., None] - 0.5))
        return q.min(axis=-1), q.max(axis=-1)

    def rvs(self, size: Any = None, random_state: Any = None) -> np.ndarray:
        rng = np.random.default_rng(random_state)
        m = rng.choice(self.centres.size, size=size, p=self.weights)
        return self.centres[m] + self.widths[m] * np.tan(np.pi * (rng.random(np.shape(m)) - 0.5))

    @property
    def poles(self) -> tuple[np.ndarray, np.ndarray]:
        return self.centres + 1j * self.widths, self.weights.copy()

    def describe(self) -> str:
        return (f"lorentzian_mixture(centres={self.centres.tolist()}, widths={self.widths.tolist()}, "
                f"weights={self.weights.tolist()})")


def bimodal_lorentzian(separation: float, width: float) -> LorentzianMixture:
    r"""The symmetric bimodal Lorentzian g = ½ [L_Δ(ω - ω₀) + L_Δ(ω + ω₀)] of Martens et al. (PRE 79, 026204
    (2009)): ``separation`` ω₀ ≥ 0, ``width`` Δ > 0; bimodal (a dip at 0) for ω₀ > Δ/√3.

    Parameters
    ----------
    separation : float
        ω₀ ≥ 0: the centres are ±ω₀.
    width : float
        Δ > 0: the half-width of both Lorentzians.

    Returns
    -------
    LorentzianMixture
        Centres (-ω₀, ω₀), half-widths Δ, weights (1/2, 1/2); poles ±ω₀ + iΔ.

    Raises
    ------
    ValueError
        ω₀ negative or not finite, Δ ≤ 0.

    Notes
    -----
    With L_Δ(ω) = (Δ/π)/(ω² + Δ²),

    .. math::

        g(\omega) = \frac{1}{2}\big[L_\Delta(\omega - \omega_0) + L_\Delta(\omega + \omega_0)\big].

    For Kuramoto oscillators (h = sin) incoherence loses stability at K = 2(Δ² + ω₀²)/Δ for ω₀ ≤ Δ
    and by a Hopf bifurcation at K = 4Δ for ω₀ > Δ (Martens et al. 2009).

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> g = mf.bimodal_lorentzian(1.0, 0.5)           # ω₀ = 1 > Δ/√3: bimodal
    >>> g.poles
    (array([-1.+0.5j,  1.+0.5j]), array([0.5, 0.5]))
    >>> # the dip: g(0) = (Δ/π)/(ω₀² + Δ²) below g(ω₀)
    >>> print(f"{float(g.pdf(0.0)):.6f} {0.5 / np.pi / 1.25:.6f} {bool(g.pdf(0.0) < g.pdf(1.0))}")
    0.127324 0.127324 True
    >>> print(f"{float(g.cdf(0.0)):.6f}")             # symmetric about 0
    0.500000
    """
    separation = float(separation)
    if not (np.isfinite(separation) and separation >= 0):
        raise ValueError(f"separation must be finite and >= 0, got {separation!r}")
    return LorentzianMixture([-separation, separation], width)


class DiscreteLaw(FrequencyLaw):
    """g = Σ_m p_m δ_{ω_m}: oscillators with finitely many natural frequencies.

    Parameters
    ----------
    values : sequence of float
        The frequencies ω_m (distinct).
    weights : sequence of float, optional
        Relative weights p_m > 0 (normalised to sum 1); default equal.

    Raises
    ------
    ValueError
        Values that are not finite or not distinct, weights that are not positive and finite, one per
        value.

    Notes
    -----
    The atoms are stored sorted. The law has a ``cdf``, a ``ppf`` (the smallest ω_m with F(ω_m) ≥ u)
    and ``rvs``, but no ``pdf``. In :class:`~meanfield.Kuramoto` the PDE takes one density per atom
    (exact in ω), and its atoms are the "poles" of :func:`law_poles` (real).

    Examples
    --------
    >>> import meanfield as mf
    >>> g = mf.DiscreteLaw([1.0, -1.0], weights=[3, 1])
    >>> g
    discrete(values=[-1.0, 1.0], weights=[0.25, 0.75])
    >>> print(float(g.cdf(0.0)), float(g.ppf(0.5)))
    0.25 1.0
    >>> nodes, weights = mf.Kuramoto(frequencies=g).frequency_quadrature()
    >>> print(nodes, weights)
    [-1.  1.] [0.25 0.75]
    """

    def __init__(self, values: Sequence[float], weights: Sequence[float] | None = None) -> None:
        values = _finite_vector("values", values)
        weights = _relative_weights("weights", weights, values.size)
        order = np.argsort(values, kind="stable")
        self.values, self.weights = values[order], weights[order]
        if np.any(np.diff(self.values) == 0):
            raise ValueError(f"values must be distinct frequencies (merge repeated ones into one weight), "
                             f"got {values.tolist()}")
        self._cumulative = np.cumsum(self.weights)

    def pdf(self, omega: Any) -> np.ndarray:
        raise ValueError(f"{self.describe()} has no density: it is a sum of atoms")

    def cdf(self, omega: Any) -> np.ndarray:
        index = np.searchsorted(self.values, np.asarray(omega, dtype=float), side="right")
        return np.concatenate([[0.0], self._cumulative])[index]

    def ppf(self, u: Any) -> np.ndarray:
        """The smallest ω_m with F(ω_m) ≥ u."""
        index = np.searchsorted(self._cumulative, np.asarray(u, dtype=float) * (1 - 1e-15), side="left")
        return self.values[np.minimum(index, self.values.size - 1)]

    def rvs(self, size: Any = None, random_state: Any = None) -> np.ndarray:
        return np.random.default_rng(random_state).choice(self.values, size=size, p=self.weights)

    @property
    def poles(self) -> tuple[np.ndarray, np.ndarray]:
        return self.values.astype(complex), self.weights.copy()

    def describe(self) -> str:
        return f"discrete(values={self.values.tolist()}, weights={self.weights.tolist()})"


class Mixture(FrequencyLaw):
    """g = Σ_m p_m g_m of frequency laws g_m (frozen continuous scipy.stats laws or :class:`FrequencyLaw`).

    Parameters
    ----------
    components : sequence of laws
        The laws g_m.
    weights : sequence of float, optional
        Relative weights p_m > 0 (normalised to sum 1); default equal.

    Raises
    ------
    ValueError
        No component, or weights that are not positive and finite, one per component.
    TypeError
        A component that is not a continuous law (a number, a :class:`DiscreteLaw`, an unfrozen scipy
        family).

    Notes
    -----
    ``pdf`` and ``cdf`` are the weighted sums of the components', ``ppf`` is found by bisection on the
    cdf. The mixture has poles (:func:`law_poles`) when every component has: a mixture of Cauchy laws
    and :class:`LorentzianMixture` laws is exact in ω for :class:`~meanfield.Kuramoto` with one harmonic.

    Examples
    --------
    >>> import scipy.stats
    >>> import meanfield as mf
    >>> g = mf.Mixture([scipy.stats.norm(-1, 0.5), scipy.stats.norm(1, 0.5)])
    >>> print(f"{float(g.cdf(0.0)):.6f} {abs(g.median()):.6f}")      # symmetric about 0
    0.500000 0.000000
    >>> print(g.poles)                                 # normal laws have none
    None
    >>> h = mf.Mixture([scipy.stats.cauchy(-1, 0.5), mf.LorentzianMixture([1.0], 0.5)], weights=[1, 3])
    >>> h.poles
    (array([-1.+0.5j,  1.+0.5j]), array([0.25, 0.75]))
    """

    def __init__(self, components: Sequence[Any], weights: Sequence[float] | None = None) -> None:
        components = list(components)
        if not components:
            raise ValueError("components must hold at least one law")
        for law in components:
            if is_identical(law) or isinstance(law, DiscreteLaw) or not hasattr(law, "cdf"):
                raise TypeError(f"components must be continuous laws (frozen scipy.stats laws, LorentzianMixture or "
                                f"Mixture), got {law!r}; atoms belong in a DiscreteLaw")
            read_frequency_law(law)
        self.components = components
        self.weights = _relative_weights("weights", weights, len(components))

    def pdf(self, omega: Any) -> np.ndarray:
        return sum(p * np.asarray(law.pdf(omega)) for p, law in zip(self.weights, self.components))

    def cdf(self, omega: Any) -> np.ndarray:
        return sum(p * np.asarray(law.cdf(omega)) for p, law in zip(self.weights, self.components))

    def _quantile_bracket(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        q = np.stack([np.broadcast_to(law.ppf(u), u.shape) for law in self.components], axis=-1)
        return q.min(axis=-1), q.max(axis=-1)

    def rvs(self, size: Any = None, random_state: Any = None) -> np.ndarray:
        rng = np.random.default_rng(random_state)
        m = np.asarray(rng.choice(len(self.components), size=size, p=self.weights))
        out = np.empty(m.shape)
        for index, law in enumerate(self.components):
            mask = m == index
            out[mask] = law.rvs(size=int(mask.sum()), random_state=rng)
        return out if size is not None else float(out)

    @property
    def poles(self) -> tuple[np.ndarray, np.ndarray] | None:
        parts = [law_poles(law) for law in self.components]
        if any(part is None for part in parts):
            return None
        return (np.concatenate([z for z, _ in parts]),
                np.concatenate([p * w for p, (_, w) in zip(self.weights, parts)]))

    def describe(self) -> str:
        return (f"mixture(weights={self.weights.tolist()}, "
                f"components=[{', '.join(describe_law(law) for law in self.components)}])")


def is_identical(law: Any) -> bool:
    """True for ``None`` or a number: identical oscillators."""
    return law is None or (isinstance(law, (int, float, np.integer, np.floating)) and not isinstance(law, bool))


def read_frequency_law(law: Any) -> Any:
    """``law`` checked to be None, a finite number, a frozen continuous scipy.stats law or a FrequencyLaw.

    Raises
    ------
    TypeError
        An unfrozen scipy family, a discrete scipy law, or another object.
    ValueError
        A non-finite number.
    """
    if isinstance(law, (scipy.stats.rv_continuous, scipy.stats.rv_discrete)):
        raise TypeError(f"frequencies must be a frozen distribution with its parameters, e.g. "
                        f"scipy.stats.{law.name}(0, 1), got the unfrozen family scipy.stats.{law.name}")
    if is_identical(law):
        if not np.isfinite(float(law if law is not None else 0.0)):
            raise ValueError(f"frequencies must be finite, got {law!r}")
        return law
    if isinstance(law, FrequencyLaw):
        return law
    dist = getattr(law, "dist", None)
    if isinstance(dist, scipy.stats.rv_discrete):
        raise TypeError(f"frequencies as a discrete scipy law ({dist.name}) are not read; give the atoms as "
                        f"mf.DiscreteLaw(values, weights)")
    if isinstance(dist, scipy.stats.rv_continuous) and hasattr(law, "ppf"):
        with np.errstate(all="ignore"):
            quartiles = np.asarray(law.ppf([0.25, 0.75]), dtype=float)
        if not (np.all(np.isfinite(quartiles)) and quartiles[1] > quartiles[0]):
            raise ValueError(f"frequencies {describe_law(law)} is not a law with a spread (its quartiles are "
                             f"{quartiles.tolist()}: a zero or invalid scale); for identical oscillators at ω pass "
                             "frequencies=ω, a number")
        return law
    raise TypeError("frequencies must be None, a number, a frozen scipy.stats law, mf.LorentzianMixture, "
                    f"mf.Mixture or mf.DiscreteLaw, got {type(law).__name__}")


def _scipy_cauchy(law: Any) -> tuple[float, float] | None:
    """(centre, half-width) of a frozen ``scipy.stats.cauchy``; None for any other law."""
    if not isinstance(getattr(law, "dist", None), type(scipy.stats.cauchy)):
        return None
    args, kwds = tuple(law.args), dict(law.kwds)
    loc = float(args[0]) if len(args) > 0 else float(kwds.get("loc", 0.0))
    scale = float(args[1]) if len(args) > 1 else float(kwds.get("scale", 1.0))
    return loc, scale


def law_poles(law: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """(ζ_m, p_m) of a law: ∫ g(ω) f(ω) dω = Σ_m p_m f(ζ_m) for every f analytic and bounded in Im ω ≥ 0.

    Identical oscillators: their frequency; ``scipy.stats.cauchy(c, γ)``: c + iγ; a Lorentzian mixture: its
    poles; a discrete law: its atoms; a mixture of such laws: the union. None for a law without such a form
    (a normal law, a uniform law, …).
    """
    if is_identical(law):
        return np.array([complex(0.0 if law is None else float(law))]), np.ones(1)
    cauchy = _scipy_cauchy(law)
    if cauchy is not None:
        return np.array([complex(cauchy[0], cauchy[1])]), np.ones(1)
    if isinstance(law, FrequencyLaw):
        return law.poles
    return None


def describe_law(law: Any) -> str:
    """A law by its parameters: ``identical(ω)``, ``cauchy(0.0, 0.5)``, ``lorentzian_mixture(...)``, …"""
    if is_identical(law):
        return f"identical({0.0 if law is None else float(law)!r})"
    if isinstance(law, FrequencyLaw):
        return law.describe()
    return f"{law.dist.name}{tuple(law.args)}{dict(law.kwds) or ''}"

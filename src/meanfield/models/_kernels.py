r"""Interaction kernels W(t), t = <x, y> ∈ [-1, 1], of the aggregation–diffusion model :class:`Interaction`.

A kernel answers for its values W(t), its derivative W'(t) (a kernel itself, :meth:`Kernel.derivative_kernel`)
and its Funk–Hecke multipliers on S^{d-1} (:meth:`Kernel.multipliers`),

    ∫_{S^{d-1}} W(<x, y>) Y_l(y) dσ(y) = λ_l Y_l(x),     λ_l = |S^{d-2}| ∫_{-1}^{1} W(t) P_l(t) (1 - t²)^{(d-3)/2} dt,

P_l(1) = 1 (on S¹: λ_k = 2π Ŵ_k for W(cos θ) = Σ_k Ŵ_k e^{ikθ}). Values and multipliers are carried with a
scale, W = e^{s} W̃ (:attr:`Kernel.log_scale`), so that e^{βt} with β of several hundred neither overflows nor
loses the ratio of its multipliers; only the unnormalised velocity multiplies by e^{s}.

Three ways to give a kernel (:func:`as_kernel`), and sums and scalar multiples of them:

* a named family, with closed-form or exactly weighted multipliers: :meth:`Kernel.exponential` e^{βt},
  :meth:`Kernel.gaussian` e^{-|x-y|²/ε}, :meth:`Kernel.riesz` |x - y|^s = (2 - 2t)^{s/2} and
  :meth:`Kernel.power` (1 - t)^{s/2} (s > 0), :meth:`Kernel.morse` -C_a e^{-|x-y|/ℓ_a} + C_r e^{-|x-y|/ℓ_r};
* coefficients: :meth:`Kernel.fourier` (Ŵ_k on S¹) or :meth:`Kernel.legendre` (W = Σ_l a_l P_l of dimension d);
* a function of t: :meth:`Kernel.function` (a Python callable on arrays) or :meth:`Kernel.formula` (a formula
  such as ``"exp(2*t)"``, parsed without evaluating code, :mod:`._expression`).

Multipliers of kernels without closed form come from the Gauss–Jacobi quadrature of
:func:`solvers.funk_hecke_multipliers` (nodes grown by 3/2 until two quadratures agree to 1e-12 of the
largest multiplier, or stop improving below 1e-9 — the round-off floor of a kernel given in t whose singularity
|x - y|^s is divided out of t; the number used is :attr:`KernelMultipliers.quadrature_nodes`); a singularity |x - y|^s at t = 1 is part of
its weight, so the Riesz family is integrated exactly. A sum's multipliers are the sum of its terms'.
"""

from __future__ import annotations

import hashlib
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numpy.polynomial import chebyshev

from solvers import funk_hecke_multipliers, gegenbauer_table, legendre_table, sphere_area

from ..domains._funk_hecke import scaled_funk_hecke
from .._validate import as_real, check_nonnegative, check_positive
from ._expression import Formula, parse_formula

__all__ = ["Kernel", "KernelMultipliers", "as_kernel", "parse_kernel"]

#: coefficients of a Chebyshev interpolant of a function kernel below this (relative) are its noise floor
CHEBYSHEV_TOLERANCE = 1e-13
#: the largest Chebyshev degree tried for the derivative of a function kernel
CHEBYSHEV_MAX_DEGREE = 1 << 14


class KernelMultipliers(NamedTuple):
    """Funk–Hecke multipliers λ_l = e^{s} λ̃_l, l = 0, …, L-1, of a kernel on S^{d-1}.

    ``values`` are λ̃_l, ``log_scale`` is s, ``quadrature_nodes`` the Gauss–Jacobi nodes used (0: closed form).
    """

    values: np.ndarray
    log_scale: float
    quadrature_nodes: int


class Kernel(ABC):
    r"""An interaction kernel W(t) = e^{s} W̃(t), t = <x, y> (module docstring).

    Subclasses provide :meth:`scaled_value` W̃, :attr:`log_scale` s, :meth:`derivative_kernel` W', the
    scaled multipliers (:meth:`_scaled_multipliers`) and :attr:`description`; the arithmetic, the cache of
    multipliers and the checks are shared here.

    A kernel is made by a constructor, not by ``Kernel()``: the named families :meth:`exponential`,
    :meth:`gaussian`, :meth:`riesz`, :meth:`power`, :meth:`morse`; coefficients :meth:`fourier`,
    :meth:`legendre`; a function of t :meth:`function` or :meth:`formula`. Kernels add, subtract and
    scale by numbers (``-Kernel.exponential(4.0) / 4.0``), and the multipliers of a sum are the sum of
    its terms' multipliers.

    Notes
    -----
    The Funk–Hecke multipliers on S^{d-1} (:meth:`multipliers`, returned as e^{s} times ``values``),
    with P_l the Legendre polynomial of dimension d, P_l(1) = 1:

        ∫_{S^{d-1}} W(<x, y>) Y_l(y) dσ(y) = λ_l Y_l(x),   λ_l = |S^{d-2}| ∫_{-1}^{1} W(t) P_l(t) (1 - t²)^{(d-3)/2} dt,

    .. math::

        \int_{\mathbb{S}^{d-1}} W(\langle x, y\rangle)\, Y_l(y)\,\mathrm{d}\sigma(y) = \lambda_l\, Y_l(x),
        \qquad
        \lambda_l = \lvert\mathbb{S}^{d-2}\rvert \int_{-1}^{1} W(t)\, P_l(t)\, (1 - t^2)^{(d-3)/2}\,\mathrm{d}t,

    on S¹ λ_k = 2π Ŵ_k for W(cos θ) = Σ_k Ŵ_k e^{ikθ}. For W = e^{βt} they are
    c_l(β) = (2π)^{d/2} β^{1-d/2} I_{l+d/2-1}(β): 2π I_l(β) on S¹, 4π i_l(β) on S².

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> from scipy.special import iv
    >>> W = mf.Kernel.exponential(2.0)                  # e^{2t}, multipliers in closed form
    >>> m = W.multipliers(4, 2)                         # degrees 0..3 on S¹
    >>> print(np.round(m.values * np.exp(m.log_scale), 6))
    [14.323057  9.994266  4.328791  1.336685]
    >>> print(np.round(2 * np.pi * iv(np.arange(4), 2.0), 6))        # 2π I_k(β)
    [14.323057  9.994266  4.328791  1.336685]
    >>> # the same kernel as a formula, by Gauss–Jacobi quadrature
    >>> q = mf.Kernel.formula("exp(2*t)").multipliers(4, 2)
    >>> print(np.allclose(q.values * np.exp(q.log_scale), m.values * np.exp(m.log_scale)))
    True
    >>> m3 = W.multipliers(1, 3)                        # on S²: λ_0 = 4π sinh(β)/β
    >>> print(f"{m3.values[0] * np.exp(m3.log_scale):.6f} {4 * np.pi * np.sinh(2.0) / 2.0:.6f}")
    22.788236 22.788236
    >>> usa = -mf.Kernel.exponential(4.0) / 4.0         # W = -e^{βt}/β of USA
    >>> print(f"{float(usa.value(0.5)):.6f} {float(usa.derivative(0.5)):.6f} {-np.exp(2.0):.6f}")
    -1.847264 -7.389056 -7.389056
    """

    log_scale: float = 0.0
    #: s of a factor |x - y|^s at t = 1 that the quadrature takes into its weight (None: smooth in t)
    singularity: float | None = None

    def __init__(self) -> None:
        self._multipliers: dict[tuple[int, int], KernelMultipliers] = {}
        self._derivative: Kernel | None = None

    # ------------------------------------------------------------------ to provide
    @abstractmethod
    def scaled_value(self, t: np.ndarray) -> np.ndarray:
        """W̃(t) = e^{-s} W(t) on an array of t ∈ [-1, 1]."""

    @abstractmethod
    def _derivative_kernel(self) -> Kernel:
        """W' as a kernel."""

    @property
    @abstractmethod
    def description(self) -> str:
        """The kernel in one line, the same for equal kernels (a result's ``kernel`` attr)."""

    def _scaled_multipliers(self, n_degrees: int, d: int) -> tuple[np.ndarray, int]:
        """(λ̃_l for l < n_degrees, Gauss–Jacobi nodes used): by default the quadrature of :meth:`scaled_value`."""
        result = funk_hecke_multipliers(self.scaled_value, n_degrees, d, singularity=self.singularity)
        return result.values, result.nodes

    @property
    def fourier_harmonics(self) -> int | None:
        """K + 1 when W(cos θ) has no harmonic beyond K on S¹ (its multipliers vanish from K + 1 on), else None."""
        return None

    # ------------------------------------------------------------------ shared
    def value(self, t: np.ndarray | float) -> np.ndarray:
        """W(t) on a number or an array of t."""
        t = np.asarray(t, dtype=float)
        return np.exp(self.log_scale) * (self.scaled_value(t[None])[0] if t.ndim == 0 else self.scaled_value(t))

    def check_finite(self, name: str = "kernel") -> None:
        """Refuse a kernel whose W̃ = e^{-s} W is not real and finite at 129 points of [-1, 1], the ends included
        (the quadrature nodes never reach t = ±1, where a kernel such as 1/(1 - t) is infinite)."""
        t = np.cos(np.pi * np.arange(129) / 128)
        with np.errstate(all="ignore"):
            values = np.asarray(self.scaled_value(t))
        bad = ~np.isfinite(values)
        if np.any(bad):
            raise ValueError(f"the {name} {self.description} must be finite on [-1, 1]; it is "
                             f"{float(values[bad][0])!r} at t = {t[bad][0]:.17g}")

    def derivative_kernel(self) -> Kernel:
        """W' as a kernel (built once)."""
        if self._derivative is None:
            self._derivative = self._derivative_kernel()
        return self._derivative

    def derivative(self, t: np.ndarray | float) -> np.ndarray:
        """W'(t) on a number or an array of t."""
        return self.derivative_kernel().value(t)

    def multipliers(self, n_degrees: int, d: int) -> KernelMultipliers:
        """Funk–Hecke multipliers λ_l, l < ``n_degrees``, on S^{d-1} (cached per (n_degrees, d)).

        Raises
        ------
        ValueError
            The kernel is not finite or not real at a quadrature node, or the quadrature does not converge.
        """
        for label, value, least in (("n_degrees", n_degrees, 1), ("d", d, 2)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
                raise ValueError(f"{label} must be an integer >= {least}, got {value!r}")
        key = (int(n_degrees), int(d))
        if key not in self._multipliers:
            values, nodes = self._scaled_multipliers(*key)
            values = np.array(values, dtype=float)
            values.setflags(write=False)  # cached: a caller cannot change what the next one reads
            self._multipliers[key] = KernelMultipliers(values, float(self.log_scale), int(nodes))
        return self._multipliers[key]

    @property
    def bounded_derivative(self) -> bool:
        """Whether W' is finite on all of [-1, 1] (False for |x - y|^s, s < 2, at t = 1)."""
        return True

    def __repr__(self) -> str:
        return f"Kernel({self.description!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Kernel) and self.description == other.description

    def __hash__(self) -> int:
        return hash(self.description)

    # ------------------------------------------------------------------ arithmetic
    def __add__(self, other: Any) -> Kernel:
        return SumKernel.of([(1.0, self), (1.0, as_kernel(other))])

    def __radd__(self, other: Any) -> Kernel:
        return as_kernel(other) + self

    def __sub__(self, other: Any) -> Kernel:
        return SumKernel.of([(1.0, self), (-1.0, as_kernel(other))])

    def __rsub__(self, other: Any) -> Kernel:
        return as_kernel(other) - self

    def __neg__(self) -> Kernel:
        return SumKernel.of([(-1.0, self)])

    def __mul__(self, factor: Any) -> Kernel:
        if isinstance(factor, Kernel):
            raise TypeError("a kernel can be multiplied by a number, not by another kernel (its multipliers would "
                            "not be the product of theirs); write the product as one function or formula")
        return SumKernel.of([(_coefficient(factor), self)])

    __rmul__ = __mul__

    def __truediv__(self, divisor: Any) -> Kernel:
        value = _coefficient(divisor, "divisor")
        if value == 0:
            raise ZeroDivisionError("a kernel divided by 0")
        return SumKernel.of([(1.0 / value, self)])

    # ------------------------------------------------------------------ named families and inputs
    @staticmethod
    def exponential(beta: float) -> Kernel:
        """W(t) = e^{βt}, β real: the self-attention kernel (USA is W = -e^{βt}/β); multipliers
        c_l(β) = (2π)^{d/2} β^{1-d/2} I_{l+d/2-1}(β) in closed form, (-1)^l c_l(|β|) for β < 0."""
        return ExponentialKernel(as_real("beta", beta))

    @staticmethod
    def gaussian(epsilon: float) -> Kernel:
        """W = e^{-|x-y|²/ε} = e^{-2(1-t)/ε}, ε > 0 (the exponential family with β = 2/ε, scaled by e^{-2/ε})."""
        eps = check_positive("epsilon", epsilon)
        if not np.isfinite(2.0 / eps):
            raise ValueError(f"epsilon must be at least {2 / np.finfo(float).max:.3g} (2/ε finite), got {epsilon!r}")
        return ExponentialKernel(2.0 / eps, log_amplitude=-2.0 / eps, label=f"exp(-|x-y|^2/{eps!r})")

    @staticmethod
    def riesz(s: float) -> Kernel:
        """W = |x - y|^s = (2 - 2t)^{s/2}, s > 0; the singular factor is part of the quadrature weight, so the
        multipliers are exact although they decay only like l^{-(s+d-1)}."""
        return RadialKernel(_power("s", s))

    @staticmethod
    def power(s: float) -> Kernel:
        """W = (1 - t)^{s/2} = 2^{-s/2} |x - y|^s, s > 0 (:meth:`riesz`)."""
        return SumKernel.of([(2.0 ** (-0.5 * _power("s", s)), RadialKernel(float(s)))])

    @staticmethod
    def morse(attraction: float, attraction_length: float, repulsion: float, repulsion_length: float) -> Kernel:
        """W = -C_a e^{-|x-y|/ℓ_a} + C_r e^{-|x-y|/ℓ_r} (the Morse potential of swarming models), C ≥ 0, ℓ > 0;
        smooth in |x - y|, not in t, and integrated in |x - y|."""
        c_a, c_r = check_nonnegative("attraction", attraction), check_nonnegative("repulsion", repulsion)
        l_a = check_positive("attraction_length", attraction_length)
        l_r = check_positive("repulsion_length", repulsion_length)
        return SumKernel.of([(-c_a, RadialKernel(0.0, l_a)), (c_r, RadialKernel(0.0, l_r))])

    @staticmethod
    def fourier(coefficients: Any) -> Kernel:
        """W(cos θ) = Σ_{|k| ≤ K} Ŵ_k e^{ikθ} on S¹ from Ŵ_0, …, Ŵ_K (real; Ŵ_{-k} = Ŵ_k since W(cos θ) is
        even): the Chebyshev series W(t) = Ŵ_0 + 2 Σ_k Ŵ_k T_k(t), multipliers λ_k = 2π Ŵ_k."""
        w = _real_coefficients("coefficients", coefficients, "Fourier coefficients Ŵ_0, …, Ŵ_K of W(cos θ)")
        series = w.copy()
        series[1:] *= 2.0
        return PolynomialKernel(series, f"fourier{_numbers(w)}")

    @staticmethod
    def legendre(coefficients: Any, d: int) -> Kernel:
        """W(t) = Σ_l a_l P_l(t) with P_l the Legendre polynomials of dimension d (Gegenbauer C_l^{(d-2)/2}
        normalised by P_l(1) = 1; d = 2: Chebyshev T_l, d = 3: Legendre): on S^{d-1} its multipliers are
        λ_l = a_l |S^{d-1}| / N(d, l), N(d, l) the dimension of the degree-l harmonics (addition theorem)."""
        a = _real_coefficients("coefficients", coefficients, "Legendre coefficients a_0, …, a_L")
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 2:
            raise ValueError(f"d must be an integer >= 2 (the kernel lives on S^(d-1)), got {d!r}")
        d = int(d)
        nodes = np.cos(np.pi * (np.arange(a.size) + 0.5) / a.size)  # Chebyshev points: exact interpolation
        series = chebyshev.chebfit(nodes, legendre_table(a.size, d, nodes) @ a, a.size - 1)
        if d == 2:
            exact = a * np.where(np.arange(a.size) == 0, 2 * np.pi, np.pi)
        else:  # N(d, l) = q_l(1)² for the normalised Gegenbauer polynomials q_l
            exact = a * sphere_area(d) / gegenbauer_table(a.size, d, np.ones(1))[0] ** 2
        return PolynomialKernel(series, f"legendre_d{d}{_numbers(a)}", native=(d, exact))

    @staticmethod
    def function(f: Callable[[np.ndarray], np.ndarray], derivative: Callable[[np.ndarray], np.ndarray] | None = None,
                 singularity: float | None = None) -> Kernel:
        """W = ``f``(t), a Python function on arrays of t ∈ [-1, 1]; ``derivative`` W' if known, else (for a
        kernel smooth in t) the derivative of its Chebyshev interpolant to 1e-13; ``singularity`` s for a
        factor |x - y|^s at t = 1 (the rest smooth in |x - y|), which then needs ``derivative``."""
        if not callable(f):
            raise TypeError(f"f must be a callable of t, got {type(f).__name__}")
        if derivative is not None and not callable(derivative):
            raise TypeError(f"derivative must be a callable of t, got {type(derivative).__name__}")
        return FunctionKernel(f, derivative, _singularity(singularity))

    @staticmethod
    def formula(text: str, singularity: float | None = None) -> Kernel:
        """W from a formula in t (``"exp(2*t)"``, ``"-(1-t)**1.5"``): arithmetic, t, pi, e and standard
        functions only (:mod:`._expression`); its derivative is symbolic. A polynomial in t (``"-2*t"``) is a
        Chebyshev series, with exact multipliers and finitely many harmonics."""
        return formula_kernel(parse_formula(text, "t", "kernel"), _singularity(singularity))


# ---------------------------------------------------------------------- families
class ExponentialKernel(Kernel):
    """W(t) = e^{a + βt} (``a`` = log_amplitude): scale s = a + |β|, W̃ = e^{βt - |β|}."""

    def __init__(self, beta: float, log_amplitude: float = 0.0, label: str | None = None) -> None:
        super().__init__()
        if not (np.isfinite(beta) and np.isfinite(log_amplitude)):
            raise ValueError(f"beta must be finite, got {beta!r}")
        self.beta, self.log_amplitude, self._label = float(beta), float(log_amplitude), label
        self.log_scale = self.log_amplitude + abs(self.beta)

    @property
    def description(self) -> str:
        return self._label or f"exp({self.beta!r}*t)"

    def scaled_value(self, t: np.ndarray) -> np.ndarray:
        out = np.multiply(t, self.beta, dtype=float)  # e^{βt - |β|}, formed in one array
        out -= abs(self.beta)
        return np.exp(out, out=out)

    def _derivative_kernel(self) -> Kernel:
        return SumKernel.of([(self.beta, self)])

    def _scaled_multipliers(self, n_degrees: int, d: int) -> tuple[np.ndarray, int]:
        ell = np.arange(n_degrees)
        values = scaled_funk_hecke(ell, abs(self.beta), d)
        return (values if self.beta >= 0 else values * (-1.0) ** ell), 0

    @property
    def fourier_harmonics(self) -> int | None:
        return 1 if self.beta == 0 else None


class RadialKernel(Kernel):
    """W = r^p e^{-r/ℓ}, r = |x - y| = (2 - 2t)^{1/2} (ℓ None: r^p, the Riesz kernel); smooth in r once r^p is
    taken into the quadrature weight. W' = (r^{p-1}/ℓ - p r^{p-2}) e^{-r/ℓ} (dr/dt = -1/r)."""

    def __init__(self, power: float, length: float | None = None) -> None:
        super().__init__()
        self.power, self.length = float(power), None if length is None else float(length)
        self.singularity = self.power

    @property
    def description(self) -> str:
        base = f"|x-y|^{self.power!r}" if self.power != 0 else ""
        decay = "" if self.length is None else f"exp(-|x-y|/{self.length!r})"
        return "*".join(part for part in (base, decay) if part) or "1"

    def scaled_value(self, t: np.ndarray) -> np.ndarray:
        squared = np.multiply(t, -2.0, dtype=float)  # r² = 2 - 2t ≥ 0, formed in one array
        squared += 2.0
        np.maximum(squared, 0.0, out=squared)
        if self.length is None:
            with np.errstate(divide="ignore"):
                return np.power(squared, 0.5 * self.power, out=squared) if self.power != 2 else squared
        r = np.sqrt(squared)
        with np.errstate(divide="ignore"):
            out = np.power(squared, 0.5 * self.power, out=squared) if self.power != 0 else np.ones_like(r)
        r *= -1.0 / self.length
        return out * np.exp(r, out=r)

    def profile(self, r: np.ndarray) -> np.ndarray:
        """g(r) = e^{-r/ℓ} (1 without ℓ): W = r^p g(r)."""
        return np.ones_like(r) if self.length is None else np.exp(-r / self.length)

    def _scaled_multipliers(self, n_degrees: int, d: int) -> tuple[np.ndarray, int]:
        result = funk_hecke_multipliers(self.scaled_value, n_degrees, d, singularity=self.power, profile=self.profile)
        return result.values, result.nodes

    def _derivative_kernel(self) -> Kernel:
        terms = []
        if self.length is not None:
            terms.append((1.0 / self.length, RadialKernel(self.power - 1.0, self.length)))
        if self.power != 0:
            terms.append((-self.power, RadialKernel(self.power - 2.0, self.length)))
        return SumKernel.of(terms)

    @property
    def bounded_derivative(self) -> bool:
        return all(term.power >= 0 for _, term in self.derivative_kernel().terms)

    @property
    def fourier_harmonics(self) -> int | None:
        even = self.length is None and self.power >= 0 and self.power % 2 == 0
        return int(self.power // 2) + 1 if even else None


class PolynomialKernel(Kernel):
    """W(t) = Σ_k c_k T_k(t) (Chebyshev series); on S¹ λ_0 = 2π c_0, λ_k = π c_k, and on the dimension it
    was given for (``native`` = (d, exact multipliers)) its exact multipliers; elsewhere the quadrature,
    exact for a polynomial, with the multipliers beyond its degree set to 0."""

    def __init__(self, series: np.ndarray, label: str, native: tuple[int, np.ndarray] | None = None) -> None:
        super().__init__()
        self.series, self._label, self.native = np.asarray(series, dtype=float), label, native

    @property
    def description(self) -> str:
        return self._label

    def scaled_value(self, t: np.ndarray) -> np.ndarray:
        return chebyshev.chebval(np.asarray(t, dtype=float), self.series)

    def _derivative_kernel(self) -> Kernel:
        series = chebyshev.chebder(self.series) if self.series.size > 1 else np.zeros(1)
        return PolynomialKernel(series, f"d/dt {self._label}")

    def _scaled_multipliers(self, n_degrees: int, d: int) -> tuple[np.ndarray, int]:
        out = np.zeros(n_degrees)
        keep = min(n_degrees, self.series.size)
        if d == 2:
            out[:keep] = np.pi * self.series[:keep]
            out[0] *= 2.0
            return out, 0
        if self.native is not None and self.native[0] == d:
            out[:keep] = self.native[1][:keep]
            return out, 0
        values, nodes = super()._scaled_multipliers(max(keep, 1), d)
        out[:keep] = values[:keep]
        return out, nodes

    @property
    def fourier_harmonics(self) -> int | None:
        return self.series.size


class FunctionKernel(Kernel):
    """W = f(t) for a Python callable f; W' given, or the derivative of f's Chebyshev interpolant."""

    def __init__(self, f: Callable[[np.ndarray], np.ndarray], derivative: Callable[[np.ndarray], np.ndarray] | None,
                 singularity: float | None) -> None:
        super().__init__()
        self.f, self.derivative_function, self.singularity = f, derivative, singularity
        probe = np.cos(np.pi * (np.arange(65) + 0.5) / 65)
        values = _checked(f, probe, "f")
        digest = hashlib.sha256(np.ascontiguousarray(values).tobytes()).hexdigest()[:12]
        name = getattr(f, "__qualname__", type(f).__name__)
        self._label = f"function {getattr(f, '__module__', '?')}.{name} [values sha256 {digest}]"

    @property
    def description(self) -> str:
        return self._label

    def scaled_value(self, t: np.ndarray) -> np.ndarray:
        return _checked(self.f, np.asarray(t, dtype=float), "the kernel")

    def _derivative_kernel(self) -> Kernel:
        if self.derivative_function is not None:
            singular = None if self.singularity is None else self.singularity - 2.0
            return FunctionKernel(self.derivative_function, None, singular)
        if self.singularity is not None:
            raise ValueError("the derivative of a kernel function with a singularity at t = 1 is not interpolated: "
                             "give derivative=, or use Kernel.riesz / Kernel.formula")
        series = chebyshev_series(self.scaled_value)
        return PolynomialKernel(chebyshev.chebder(series), f"d/dt {self._label} (Chebyshev, degree {series.size - 1})")

    @property
    def bounded_derivative(self) -> bool:
        return self.singularity is None or self.singularity >= 2


class FormulaKernel(Kernel):
    """W from a :class:`~meanfield.models._expression.Formula` in t; W' is its symbolic derivative."""

    def __init__(self, formula: Formula, singularity: float | None) -> None:
        super().__init__()
        self.formula, self.singularity = formula, singularity
        self._function = formula.function

    def __reduce__(self) -> tuple:
        """Pickled as its formula (the compiled function is rebuilt)."""
        return FormulaKernel, (self.formula, self.singularity)

    @property
    def description(self) -> str:
        return self.formula.text

    def scaled_value(self, t: np.ndarray) -> np.ndarray:
        return self._function(np.asarray(t, dtype=float))

    def _derivative_kernel(self) -> Kernel:
        return FormulaKernel(self.formula.derivative, None if self.singularity is None else self.singularity - 2.0)

    @property
    def bounded_derivative(self) -> bool:
        with np.errstate(all="ignore"):
            return bool(np.all(np.isfinite(self.derivative(np.array([-1.0, 1.0])))))


class SumKernel(Kernel):
    """W = Σ_i c_i W_i: scale max_i s_i, values and multipliers the sums of the terms' (each by its own rule)."""

    def __init__(self, terms: tuple[tuple[float, Kernel], ...]) -> None:
        super().__init__()
        self.terms = terms
        scales = [kernel.log_scale for c, kernel in terms if c != 0]
        self.log_scale = max(scales) if scales else 0.0

    @classmethod
    def of(cls, terms: list[tuple[float, Kernel]]) -> SumKernel:
        """The sum of ``terms`` with nested sums flattened and zero coefficients dropped."""
        flat: list[tuple[float, Kernel]] = []
        for coefficient, kernel in terms:
            if isinstance(kernel, SumKernel):
                flat.extend((coefficient * c, k) for c, k in kernel.terms)
            else:
                flat.append((float(coefficient), kernel))
        return cls(tuple((c, k) for c, k in flat if c != 0))

    def _weights(self) -> list[tuple[float, Kernel]]:
        return [(c * np.exp(k.log_scale - self.log_scale), k) for c, k in self.terms]

    @property
    def description(self) -> str:
        if not self.terms:
            return "0"
        return " + ".join(f"{c!r}*({k.description})" for c, k in self.terms)

    def scaled_value(self, t: np.ndarray) -> np.ndarray:
        t = np.asarray(t, dtype=float)
        terms = self._weights()
        if not terms:
            return np.zeros(t.shape)
        out = None
        for weight, kernel in terms:
            value = kernel.scaled_value(t)
            if np.may_share_memory(value, t) or not value.flags.writeable:
                value = value * weight  # a new array: t and read-only views (broadcast constants) stay untouched
            else:
                value *= weight
            if out is None:
                out = value
            else:
                out += value
        return out

    def _derivative_kernel(self) -> Kernel:
        return SumKernel.of([(c, k.derivative_kernel()) for c, k in self.terms])

    def _scaled_multipliers(self, n_degrees: int, d: int) -> tuple[np.ndarray, int]:
        out, nodes = np.zeros(n_degrees), 0
        for weight, kernel in self._weights():
            term = kernel.multipliers(n_degrees, d)
            out = out + weight * term.values
            nodes = max(nodes, term.quadrature_nodes)
        return out, nodes

    @property
    def bounded_derivative(self) -> bool:
        return all(k.bounded_derivative for _, k in self.terms)

    @property
    def fourier_harmonics(self) -> int | None:
        counts = [k.fourier_harmonics for _, k in self.terms]
        if any(count is None for count in counts):
            return None
        return max(counts, default=1)


# ---------------------------------------------------------------------- inputs
def as_kernel(kernel: Any, name: str = "kernel") -> Kernel:
    """A :class:`Kernel` from a kernel, a number (a constant kernel), a string (a named family,
    :func:`parse_kernel`, or a formula in t) or a callable of t (:meth:`Kernel.function`).

    Raises
    ------
    TypeError
        Anything else, naming ``name``.
    """
    if isinstance(kernel, Kernel):
        return kernel
    if isinstance(kernel, str):
        return parse_kernel(kernel, name)
    if isinstance(kernel, (int, float, np.integer, np.floating)) and not isinstance(kernel, bool):
        return PolynomialKernel(np.array([_coefficient(kernel, name)]), f"{float(kernel)!r}")
    if callable(kernel):
        return Kernel.function(kernel)
    raise TypeError(f"{name} must be a meanfield Kernel, a formula string in t, a named family "
                    f"({', '.join(sorted(NAMED))}) or a callable of t, got {type(kernel).__name__}")


#: the named families a string may give, with their parameters (``"riesz:s=1"``, ``"morse:..."``)
NAMED: dict[str, tuple[Callable[..., Kernel], tuple[str, ...]]] = {
    "exponential": (Kernel.exponential, ("beta",)),
    "gaussian": (Kernel.gaussian, ("epsilon",)),
    "riesz": (Kernel.riesz, ("s",)),
    "power": (Kernel.power, ("s",)),
    "morse": (Kernel.morse, ("attraction", "attraction_length", "repulsion", "repulsion_length")),
}

_NAMED_SPEC = re.compile(r"^\s*([a-z]+)\s*:\s*(.*)$")


def parse_kernel(text: str, name: str = "kernel") -> Kernel:
    """The kernel of a string: ``"<family>:<p>=<v>,…"`` for a named family of :data:`NAMED` (e.g.
    ``"riesz:s=1"``, ``"exponential:beta=2"``), else a formula in t (:meth:`Kernel.formula`).

    Raises
    ------
    ValueError
        An unknown family or parameter, a value that is not a number, or a formula that is not allowed.
    """
    match = _NAMED_SPEC.match(text)
    if match is None:
        return formula_kernel(parse_formula(text, "t", name), None)
    family, arguments = match.groups()
    if family not in NAMED:
        forms = ", ".join(key + ":" + ",".join(p + "=…" for p in params) for key, (_, params) in NAMED.items())
        raise ValueError(f"{name} {text!r} names the family {family!r}; the families are {forms}")
    make, params = NAMED[family]
    values: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in arguments.split(","))):
        key, _, value = item.partition("=")
        key = key.strip()
        if key not in params:
            raise ValueError(f"{name} {text!r}: {family} takes {', '.join(params)}, got {key!r}")
        try:
            values[key] = float(value)
        except ValueError:
            raise ValueError(f"{name} {text!r}: {key} must be a number, got {value.strip()!r}") from None
    missing = [p for p in params if p not in values]
    if missing:
        raise ValueError(f"{name} {text!r}: {family} needs {', '.join(f'{p}=' for p in missing)}")
    return make(**values)


def formula_kernel(formula: Formula, singularity: float | None) -> Kernel:
    """The kernel of a formula: a :class:`PolynomialKernel` (its Chebyshev coefficients, exact at degree p) when it
    is a polynomial in t of degree p ≤ 64, else a :class:`FormulaKernel`."""
    degree = formula.polynomial_degree
    if singularity is None and degree is not None and degree <= 64:
        with np.errstate(all="ignore"):  # a coefficient beyond the doubles is refused by check_finite
            series = chebyshev.chebinterpolate(formula.function, max(degree, 1))
        return PolynomialKernel(series, formula.text)
    return FormulaKernel(formula, singularity)


def chebyshev_series(f: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Chebyshev coefficients of f on [-1, 1], the degree doubled until the last eighth of them is below
    :data:`CHEBYSHEV_TOLERANCE` relative to the largest (then trimmed there).

    Raises
    ------
    ValueError
        Not converged by degree :data:`CHEBYSHEV_MAX_DEGREE` (f not smooth on [-1, 1]).
    """
    degree = 32
    while degree <= CHEBYSHEV_MAX_DEGREE:
        series = chebyshev.chebinterpolate(f, degree)
        scale = np.max(np.abs(series))
        tail = np.max(np.abs(series[-max(degree // 8, 2):]))
        if scale == 0 or tail <= CHEBYSHEV_TOLERANCE * scale:
            significant = np.nonzero(np.abs(series) > CHEBYSHEV_TOLERANCE * scale)[0]
            return series[: (significant[-1] + 1 if significant.size else 1)]
        degree *= 2
    raise ValueError(f"the kernel function is not smooth enough on [-1, 1] for its derivative to be interpolated "
                     f"(its Chebyshev coefficients do not fall below {CHEBYSHEV_TOLERANCE:g} by degree "
                     f"{CHEBYSHEV_MAX_DEGREE}); give derivative=, a singularity=, or use a named family")


def _checked(f: Callable[[np.ndarray], np.ndarray], t: np.ndarray, name: str) -> np.ndarray:
    """``f(t)`` checked: an array of t's shape, real and finite."""
    values = np.asarray(f(t))
    if values.shape != t.shape:
        try:
            values = np.broadcast_to(values, t.shape)
        except ValueError:
            raise ValueError(f"{name} must return an array shaped like its argument {t.shape} (a function of "
                             f"arrays of t), got shape {values.shape}") from None
    if np.iscomplexobj(values):
        raise ValueError(f"{name} must be real on [-1, 1], got complex values (max |Im| "
                         f"{float(np.max(np.abs(values.imag))):.3g})")
    if not np.issubdtype(values.dtype, np.number) or values.dtype == bool:
        raise TypeError(f"{name} must return numbers, got dtype {values.dtype}")
    bad = ~np.isfinite(values)
    if np.any(bad):
        raise ValueError(f"{name} must be finite on [-1, 1], got {values[bad][0]!r} at t = {float(t[bad][0]):.17g}")
    return values.astype(float)


def _coefficient(value: Any, name: str = "factor") -> float:
    out = as_real(name, value)
    if not np.isfinite(out):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return out


#: the largest power s of |x - y|^s (≤ 2^s, finite in float64 to s = 1023)
MAX_POWER = 1000.0


def _power(name: str, value: Any) -> float:
    """A power s in (0, :data:`MAX_POWER`]."""
    out = check_positive(name, value)
    if out > MAX_POWER:
        raise ValueError(f"{name} must be at most {MAX_POWER:g} (|x - y|^s reaches 2^s), got {value!r}")
    return out


def _singularity(value: Any) -> float | None:
    if value is None:
        return None
    out = as_real("singularity", value)
    if not (np.isfinite(out) and out >= 0):
        raise ValueError(f"singularity must be None or the power s >= 0 of |x - y|^s at t = 1, got {value!r}")
    return out


def _real_coefficients(name: str, coefficients: Any, what: str) -> np.ndarray:
    if isinstance(coefficients, (str, bytes)):
        raise TypeError(f"{name} must be {what}, got {coefficients!r}")
    array = np.asarray(coefficients)
    if np.iscomplexobj(array):
        if np.any(array.imag != 0):
            raise ValueError(f"{name} must be real ({what}; W(cos θ) is even, so its coefficients are real), got "
                             f"imaginary parts up to {float(np.max(np.abs(array.imag))):.3g}")
        array = array.real
    if array.dtype == bool or not np.issubdtype(array.dtype, np.number):
        raise TypeError(f"{name} must be {what}, got dtype {array.dtype}")
    array = np.atleast_1d(array.astype(float))
    if array.ndim != 1 or array.size == 0 or not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be a non-empty 1-D sequence of finite numbers ({what}), got {coefficients!r}")
    return array


def _numbers(values: np.ndarray) -> str:
    return "[" + ", ".join(repr(float(v)) for v in values) + "]"

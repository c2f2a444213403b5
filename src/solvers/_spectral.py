r"""What the spectral schemes share: adaptive Lawson stepping on coefficients and one resolution policy.

A spectral scheme (:class:`~solvers.CircleSpectral`, :class:`~solvers.SphereSpectral`,
:class:`~solvers.ZonalSpectral`) expands each density in eigenfunctions of the
Laplacian of its domain (Fourier modes e^{ikθ}, spherical harmonics Y_lm,
Gegenbauer polynomials q_l) and advances the coefficients a of

    da/dt = N(a) + λ ⊙ a,

N the transport -div(ρX) of the coefficients (products formed on a dealiased
grid) and λ the diagonal linear part (diffusion -σ l(l+d-2), drifts -ikω_m),
by Dormand–Prince 5(4) in Lawson's integrating-factor form (J. R. Dormand,
P. J. Prince, J. Comput. Appl. Math. 6 (1980) 19–26; J. D. Lawson, SIAM J.
Numer. Anal. 4 (1967) 372–380):

    Y_i = e^{c_i hλ} a^n + h Σ_{j<i} a_ij e^{(c_i - c_j)hλ} N(Y_j),
    a^{n+1} = e^{hλ} a^n + h Σ_j b_j e^{(1 - c_j)hλ} N(Y_j),

with first same as last (the last stage is N(a^{n+1})). Error, control and
first step (formulas in :mod:`solvers._runge_kutta`):

* err = max_m ‖e_m‖ / (atol_m + rtol max(‖ρ_m^n - ρ̄_m‖, ‖ρ_m^{n+1} - ρ̄_m‖)), ‖·‖ the L²
  norm of a density (by Parseval, on its coefficients), e the embedded estimate,
  ρ̄_m the mean (the degree-0 part, constant: the mass) and atol_m = atol + 64 ε ‖ρ_m^n‖
  (ε the machine epsilon). The tolerance is relative to the fluctuation about the
  mean, not to ρ: the mean never changes and is no measure of what the step must get
  right, and against ‖ρ‖ a perturbation of relative size 1e-7 would be controlled
  only to ≈ rtol/1e-7 of itself. The floor 64 ε ‖ρ_m‖ keeps a nearly uniform state
  from asking for less than the rounding of its evaluation;
* h_new = h min(10, max(0.2, 0.9 err^{-1/5})), no growth right after a
  rejection, 0.2 h after a non-finite error or a stage whose right-hand side
  cannot be evaluated (:class:`~solvers.UnevaluableState`); err > 1 rejects;
* proposals are rounded down to the ladder 2^{j/8} whenever λ ≠ 0, so that
  consecutive steps share the tabulated exponentials e^{dhλ} (cached per step
  size): a proposal is at most 8.3 % shorter, never less accurate;
* a scheme with a stability bound (:meth:`stable_step`) caps every step by it;
* the first step by Hairer, Nørsett & Wanner's algorithm on the transport part.

The states handed to and returned by ``step`` are node values (returned
read-only), the coefficients and last stage of an accepted state are cached
with it, so a step costs one synthesis beyond its six evaluations of N.

Resolution policy (one rule for every spectral scheme). After every accepted
step, and on the initial state, the scheme measures

    τ_m = max_{l > ⌊2L/3⌋} ‖ρ_{m,l}‖ / ‖ρ_{m,0}‖,

L the largest degree the grid represents, ‖ρ_l‖ the size of the degree-l
component (:func:`degree_tail`; |ρ̂_k| on S¹, the L² norm (|a_l0|² + 2Σ_{m>0} |a_lm|²)^{1/2} on S²,
|ρ_l| on zonal grids), and raises :class:`~solvers.UnderResolvedError` (or
warns, ``on_underresolved="warn"``) when max_m τ_m > max(``tail_tol``,
100 ``rtol``). Why this rule:

* the top third of the degrees, because those are the modes the 3/2-rule
  products do not protect from aliasing, and because an exponentially decaying
  spectrum shows lack of resolution there first;
* the largest single degree relative to the mean ‖ρ_0‖ (fixed by the mass),
  not the L² norm of the whole tail relative to ‖ρ‖: a concentrating density
  grows ‖ρ‖, which would hide its growing tail, and a sum over the tail
  depends on how many degrees the grid has — a per-degree ratio to the mean
  means the same on every grid and every domain;
* ``tail_tol`` = 1e-6 by default: beyond it the dropped degrees are no longer
  negligible against the per-step tolerance (the truncation error of a
  geometric spectrum is of the size of its first dropped degrees);
* the floor 100 rtol, because the step-size control admits errors of relative
  size ≈ rtol in every mode: where the step is limited by the stability of the
  transport at high degrees, the tail of a resolved solution settles at
  10–30 rtol (measured on S¹), which is time-integration error, not lack of
  resolution. Keep rtol ≤ tail_tol/100 for the full sensitivity.

A kernel is judged by the same rule on its velocity multipliers v_l (|a_k| on S¹, where a_k carries
the ik of the derivative; √(l(l+d-2)) |a_l| on spheres), when its velocity specification asks for it
(``resolve_kernel``): τ_A = max_{l > ⌊2L/3⌋} v_l / max_{l ≥ 1} v_l (:func:`kernel_tail`) above
``tail_tol`` means the grid truncates a part of the kernel that the velocity feels, and the scheme
refuses the grid at construction (:class:`~solvers.UnderResolvedError`) instead of ringing.

The finite-volume runs are judged by the same τ (:func:`degree_tail`) with
their own threshold, :data:`FINITE_VOLUME_TAIL_TOL`: a second-order
reconstruction leaves tails of 1e-6–1e-3 on resolved densities.
"""

from __future__ import annotations

import warnings
from abc import abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from . import _validate as check_arg
from ._runge_kutta import (
    N_STAGES,
    FsalCache,
    LawsonTables,
    StepController,
    adaptive_lawson_step,
    initial_step,
    nan_on_unevaluable,
    relative_error_norm,
)
from ._errors import UnderResolvedError
from ._evolve import StepResult
from ._scheme import Scheme
from ._velocity import NonPositiveNormaliser

__all__ = ["SpectralScheme", "degree_tail", "gradient_speeds", "kernel_tail", "SPECTRAL_TAIL_TOL", "FINITE_VOLUME_TAIL_TOL"]

SPECTRAL_TAIL_TOL = 1e-6
"""Default ``tail_tol`` of the spectral schemes (module docstring)."""
FINITE_VOLUME_TAIL_TOL = 1e-2
"""Largest τ of a finite-volume density that counts as resolved (module docstring)."""
ROUNDING_FLOOR = 64 * np.finfo(float).eps
"""Smallest error, relative to ‖ρ‖, that the step-size control asks for (module docstring)."""


def degree_tail(norms: np.ndarray, cut: int | None = None) -> np.ndarray:
    r"""τ = max_{l > cut} norms[..., l] / norms[..., 0], shape ``norms.shape[:-1]``, cut = ⌊2L/3⌋ by default.

    The resolution measure of every scheme (module docstring): the largest size of a
    degree above the cut relative to the mean,

    .. math::

        \tau = \max_{\mathrm{cut} < l \le L} \frac{\lVert \rho_l \rVert}{\lVert \rho_0 \rVert},
        \qquad \mathrm{cut} = \lfloor 2L/3 \rfloor \text{ by default.}

    ``norms[..., l]`` is ‖ρ_l‖ for the degrees l = 0, …, L (on S¹ the
    wavenumbers k = 0, …, N//2, with ‖ρ_k‖ = |ρ̂_k|: each e^{±ikθ} on its own).
    A zero mean with a non-zero tail gives ∞, a zero tail 0 (also when no degree
    lies above the cut).

    Parameters
    ----------
    norms : array_like, shape (..., L + 1)
        ‖ρ_l‖ ≥ 0 for l = 0, …, L along the last axis (any leading axes, e.g. one row per
        density): |ρ̂_k| on S¹, (|a_l0|² + 2 Σ_{m>0} |a_lm|²)^{1/2} on S²
        (:meth:`solvers.SphereGrid.degree_norms`), |ρ_l| on zonal grids.
    cut : int or None
        Largest degree not counted in the tail; None (default) for ⌊2L/3⌋, the degrees that
        the 3/2-rule products protect from aliasing.

    Returns
    -------
    ndarray, shape ``norms.shape[:-1]``
        τ of each row, float (a 0-d array for 1-D ``norms``).

    Examples
    --------
    A geometric spectrum ‖ρ_l‖ = 2^{-l}, L = 9: the cut is ⌊18/3⌋ = 6, so τ = 2^{-7}
    (with cut = 2, τ = 2^{-3}):

    >>> import numpy as np
    >>> import solvers
    >>> norms = 0.5 ** np.arange(10)
    >>> float(solvers.degree_tail(norms)), float(solvers.degree_tail(norms, cut=2))
    (0.0078125, 0.125)

    One τ per row (L = 3, cut = 2): a zero mean with a tail gives ∞, a zero tail 0:

    >>> solvers.degree_tail([[1.0, 0.5, 0.25, 0.1], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 0.0, 0.0]])
    array([0.1, inf, 0. ])
    """
    norms = np.asarray(norms, dtype=float)
    cut = 2 * (norms.shape[-1] - 1) // 3 if cut is None else cut
    top = np.max(norms[..., cut + 1 :], axis=-1, initial=0.0)
    mean = norms[..., 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(top == 0, 0.0, top / mean)


def kernel_tail(speeds: np.ndarray) -> tuple[float, int]:
    r"""(τ_A, l*) of velocity multipliers v_0, …, v_L: τ_A = max_{l > ⌊2L/3⌋} v_l / max_{1 ≤ l ≤ L} v_l and the
    degree l* > ⌊2L/3⌋ where it is taken (0 and L for a kernel without velocity).

    The resolution rule of :func:`degree_tail` applied to a kernel (module docstring): a
    spectral scheme whose velocity asks for it (``resolve_kernel``) refuses a grid of band
    limit L on which τ_A > ``tail_tol``, since the truncated kernel would ring.

    .. math::

        \tau_A = \frac{\max_{\lfloor 2L/3 \rfloor < l \le L} v_l}{\max_{1 \le l \le L} v_l},
        \qquad l^* = \operatorname{arg\,max}_{\lfloor 2L/3 \rfloor < l \le L} v_l .

    Parameters
    ----------
    speeds : array_like, shape (L + 1,)
        The velocity multipliers v_l, l = 0, …, L (their absolute values are used): |a_k| on
        S¹, where a_k carries the ik of the derivative; √(l(l+d-2)) |a_l| on S^{d-1} for the
        Funk–Hecke multipliers a_l of the potential. v_0 does not enter.

    Returns
    -------
    tail : float
        τ_A; 0.0 when every v_l, l ≥ 1, is zero (no velocity) or no degree lies above the cut.
    degree : int
        l*, the first degree above the cut where the maximum is taken; L in the cases where
        ``tail`` is 0.0 by definition.

    Examples
    --------
    v_l = 2^{-l}, L = 9: the largest v_l, l ≥ 1, is v_1 = 1/2; above the cut ⌊18/3⌋ = 6 the
    largest is v_7 = 2^{-7}, so τ_A = 2^{-6}:

    >>> import numpy as np
    >>> import solvers
    >>> solvers.kernel_tail(0.5 ** np.arange(10))
    (0.015625, 7)
    >>> solvers.kernel_tail(np.zeros(5))  # no velocity
    (0.0, 4)
    """
    speeds = np.abs(np.asarray(speeds, dtype=float))
    band = speeds.size - 1
    top = float(np.max(speeds[1:], initial=0.0))
    cut = 2 * band // 3
    if top == 0 or cut + 1 > band:
        return 0.0, band
    above = speeds[cut + 1 :]
    return float(np.max(above)) / top, int(cut + 1 + np.argmax(above))


def gradient_speeds(numerator: Any, band_limit: int, d: int) -> np.ndarray:
    """√(l(l+d-2)) |a_l|, l = 0, …, ``band_limit``: the size of the velocity multipliers of a potential's."""
    ell = np.arange(band_limit + 1)
    values = check_arg.multipliers(numerator, ell, "velocity.numerator", real=True, index_name="degrees")
    return np.sqrt(ell * (ell + d - 2.0)) * np.abs(values)


class SpectralScheme(Scheme):
    r"""Base of the spectral schemes: start, first step, Lawson step, error norm, resolution (module docstring).

    The coefficients a of each density in eigenfunctions of the Laplacian (Fourier modes
    on S¹, spherical harmonics on S², Gegenbauer polynomials on zonal grids) obey

    .. math::

        \frac{da}{dt} = N(a) + \lambda \odot a,

    N the transport -div(ρX) (products on a dealiased grid) and λ the diagonal linear part
    (diffusion -σ l(l+d-2), drifts -ikω_m). A step of Dormand–Prince 5(4) in Lawson's
    integrating-factor form treats λ exactly, so diffusion never limits the step; the step
    size is controlled by the embedded error estimate in the L² norm of each density. After
    every accepted step (and on the initial state) :meth:`check` raises
    :class:`~solvers.UnderResolvedError` (or warns) when the spectral tail
    τ = max_{l > ⌊2L/3⌋} ‖ρ_l‖ / ‖ρ_0‖ (:func:`degree_tail`) exceeds
    max(``tail_tol``, 100 ``rtol``). The subclasses :class:`~solvers.CircleSpectral`,
    :class:`~solvers.SphereSpectral` and :class:`~solvers.ZonalSpectral` are the ones to
    build; the formulas and the reasons for the rule are in :mod:`solvers._spectral`.

    A subclass calls :meth:`_setup` in its ``__init__`` and provides

    * ``_analysis(y)``: coefficients of the node values ``y`` (validating ``y``);
    * ``_synthesis(a)``: node values (the scheme state) of coefficients ``a``;
    * ``_transport(a)``: N(a), counting one evaluation in ``nfev``; it may raise
      :class:`~solvers.UnevaluableState` (e.g. a non-positive normaliser);
    * ``_norms(a)``: a multiple of the L² norm of each density (RMS of node values on
      S¹, L²(S²), L²(σ̄) on zonal grids), shape (m,) (or () for one);
    * ``_degree_norms(a)``: ‖ρ_{m,l}‖ for l = 0, …, L, shape (m, L + 1);
    * ``_grid_words()``, ``_remedy()``: the grid and how to refine it, for messages;

    and, when a stability bound applies, ``_bound(extra)`` (the largest step
    from a state whose evaluation left ``extra`` = ``_transport_extra()``).

    Examples
    --------
    Pure diffusion on S¹ (X ≡ 0, σ = 0.1) is all linear part: one Lawson step of any size h
    multiplies the mode cos 3θ by e^{-σ k² h} exactly, here with h = 0.5:

    >>> import numpy as np
    >>> import solvers
    >>> grid = solvers.CircleGrid(16)
    >>> heat = solvers.ConvolutionVelocity(numerator=lambda k: np.zeros(k.shape))
    >>> scheme = solvers.CircleSpectral(grid, heat, diffusion=0.1)
    >>> isinstance(scheme, solvers.SpectralScheme)
    True
    >>> y0 = (1 + 0.5 * np.cos(3 * grid.theta))[None] / (2 * np.pi)
    >>> result = scheme.step(0.0, y0, 0.5)
    >>> amplitude = (2 * np.pi * result.y[0, 0] - 1) / 0.5
    >>> print(result.accepted, f"{amplitude:.12f} {np.exp(-0.1 * 9 * 0.5):.12f}")
    True 0.637628151622 0.637628151622

    A density concentrated on one node has a flat spectrum, τ = 1, and is refused:

    >>> spike = np.zeros((1, 16))
    >>> spike[0, 0] = 16 / (2 * np.pi)
    >>> scheme.spectral_tail(spike)
    array([1.])
    >>> scheme.check(spike)
    Traceback (most recent call last):
    ...
    solvers._errors.UnderResolvedError: spectral: under-resolved on N=16 nodes: ...
    """

    name: ClassVar[str] = "spectral"
    order: ClassVar[int] = 0  # spectral (exponential) accuracy in space; time order 5
    checks_resolution: ClassVar[bool] = True

    def _setup(self, rates: np.ndarray | None, stage_shape: tuple[int, ...], dtype: type, *, rtol: float,
               atol: float, tail_tol: float, on_underresolved: str) -> None:
        """Tolerances, Lawson tables of the linear part ``rates``, controller, stage array, FSAL cache."""
        self.rtol = check_arg.positive("rtol", rtol)
        self.atol = check_arg.nonnegative("atol", atol)
        self.tail_tol = check_arg.positive("tail_tol", tail_tol)
        self.on_underresolved = check_arg.choice("on_underresolved", on_underresolved, ("raise", "warn"))
        self._tables = LawsonTables(rates)
        self._controller = StepController()
        self._stages = np.empty((N_STAGES, *stage_shape), dtype=dtype)
        self._fsal = FsalCache()

    # ------------------------------------------------------------------ to provide
    @abstractmethod
    def _analysis(self, y: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def _synthesis(self, coefficients: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def _transport(self, coefficients: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def _norms(self, coefficients: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def _degree_norms(self, coefficients: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def _grid_words(self) -> str: ...

    @abstractmethod
    def _remedy(self) -> str: ...

    def _check_kernel(self, speeds_to: Callable[[int], np.ndarray], band_limit: int) -> None:
        """Refuse a grid of band limit ``band_limit`` that does not resolve a kernel whose velocity asks for the
        check (``resolve_kernel``): :func:`kernel_tail` of its velocity multipliers (``speeds_to(L)``: v_0, …, v_L)
        above ``tail_tol`` (module docstring); the message names the band limit, up to 4 times the grid's, from
        which the kernel is resolved."""
        tail, degree = kernel_tail(speeds_to(band_limit))
        if tail <= self.tail_tol:
            return
        longer = speeds_to(4 * band_limit)
        needed = next((L for L in range(band_limit + 1, 4 * band_limit + 1)
                       if kernel_tail(longer[: L + 1])[0] <= self.tail_tol), None)
        where = (f"a band limit of {needed} resolves it" if needed is not None
                 else f"no band limit up to {4 * band_limit} resolves it")
        raise UnderResolvedError(
            f"{self.name}: the kernel is under-resolved on {self._grid_words()}: its velocity multipliers above "
            f"degree {2 * band_limit // 3} reach {tail:.3g} of their largest (degree {degree}) > "
            f"tail_tol={self.tail_tol:.3g}, so the truncated kernel would ring; {where} — refine the grid, use the "
            f"finite-volume scheme (which truncates the kernel at second order), or raise tail_tol to accept the "
            f"truncation"
        )

    def _transport_into(self, coefficients: np.ndarray, out: np.ndarray) -> None:
        """``out[...] = N(coefficients)`` (a scheme that can write in place overrides this)."""
        out[...] = self._transport(coefficients)

    def _transport_extra(self) -> Any:
        """What the last evaluation of N leaves for :meth:`_bound` (None: no bound)."""
        return None

    def _bound(self, extra: Any) -> float:
        """Largest stable step from a state whose evaluation left ``extra`` (∞: none)."""
        return np.inf

    # ------------------------------------------------------------------ coefficients and derivative
    def coefficients(self, y: np.ndarray) -> np.ndarray:
        """The coefficients of the node values ``y`` (those cached with a state returned by :meth:`step`)."""
        entry = self._fsal.lookup(y)
        return entry.coefficients if entry is not None else self._analysis(np.asarray(y, dtype=float))

    def nonlinear(self, coefficients: np.ndarray) -> np.ndarray:
        """N(a), the transport part of da/dt, at an accepted state.

        Raises :class:`~solvers.UnderResolvedError` where the velocity cannot be
        evaluated (B ⋆ ρ ≤ 0 at a node: the grid does not resolve the density).
        """
        try:
            return self._transport(coefficients)
        except NonPositiveNormaliser as exc:
            raise UnderResolvedError(
                f"{self.name}: under-resolved — the normaliser B ⋆ ρ became non-positive (min {exc.minimum:.3g}); "
                f"{self._remedy()}"
            ) from None

    def _start(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, Any]:
        """(a, N(a), extra) of ``y``, those of a state returned by :meth:`step` from its step."""
        entry = self._fsal.start(y, self.coefficients, self.nonlinear, self._transport_extra)
        return entry.coefficients, entry.derivative, entry.extra

    def rhs(self, y: np.ndarray) -> np.ndarray:
        """dρ/dt = -div(ρX) + σΔρ (+ drifts) at the nodes, shaped like ``y``."""
        a = self.coefficients(y)
        derivative = self.nonlinear(a)
        if self._tables.rates is not None:
            derivative = derivative + self._tables.rates * a
        return self._synthesis(derivative)

    # ------------------------------------------------------------------ stepping
    def stable_step(self, y: np.ndarray) -> float:
        """Largest step the scheme's stability bound admits from ``y`` (∞ when none applies)."""
        return self._bound(self._start(y)[2])

    def initial_step(self, y: np.ndarray, t: float = 0.0) -> float:
        """First step by Hairer, Nørsett & Wanner's algorithm (Solving ODEs I, II.4) on the transport part
        (the scheme is autonomous: ``t`` is unused).

        The weighted norm is max_m ‖v_m‖ / (atol_m + rtol ‖ρ_m - ρ̄_m‖) (see :meth:`_error_norm` and
        :func:`solvers._runge_kutta.initial_step`); at most :meth:`stable_step`.
        Also starts a new run of the step-size controller.
        """
        self._controller.reset()
        a, f0, extra = self._start(y)
        scale = self._absolute_tolerance(a) + self.rtol * self._fluctuation_norms(a)

        def norm(v: np.ndarray) -> float:
            return float(np.max(self._norms(v) / scale))

        probe = nan_on_unevaluable(lambda h: self._transport(a + h * f0))
        return initial_step(f0, probe, norm, y0_norm=norm(a), max_step=self._bound(extra))

    def _error_norm(self, start: np.ndarray, end: np.ndarray, error: np.ndarray) -> float:
        """max_m ‖e_m‖ / (atol_m + rtol max(‖ρ_m^n - ρ̄_m‖, ‖ρ_m^{n+1} - ρ̄_m‖)), the fluctuations about the
        mean ρ̄_m (degree 0, fixed by the mass), atol_m = atol + 64 ε ‖ρ_m^n‖ (ε the machine epsilon)."""
        return relative_error_norm(self._norms(error), self._fluctuation_norms(start),
                                   self._fluctuation_norms(end), self.rtol, self._absolute_tolerance(start))

    def _fluctuation_norms(self, a: np.ndarray) -> np.ndarray:
        """‖ρ_m - ρ̄_m‖ of each density: its norm without the degree-0 coefficient (the first of every layout)."""
        fluctuation = a.copy()
        fluctuation[..., 0] = 0.0
        return self._norms(fluctuation)

    def _absolute_tolerance(self, a: np.ndarray) -> np.ndarray:
        """atol + 64 ε ‖ρ_m‖: the error control never asks for less than the rounding of the whole density."""
        return self.atol + ROUNDING_FLOOR * self._norms(a)

    def _step_impl(self, t: float, y: np.ndarray, dt: float) -> StepResult:
        h = float(dt)
        a0, k0, extra = self._start(y)
        bound = self._bound(extra)
        if h > bound * (1 + 1e-12):
            return StepResult(False, None, self._tables.preferred_step(bound))
        accepted, a1, err, factor = adaptive_lawson_step(
            self._transport_into, a0, k0, self._tables(h), self._stages, self._error_norm, self._controller
        )
        if not accepted:
            return StepResult(False, None, self._tables.preferred_step(h * factor), err)
        extra = self._transport_extra()
        y1 = self._fsal.accept(self._synthesis(a1), a1, self._stages[N_STAGES - 1], extra)
        return StepResult(True, y1, self._tables.preferred_step(min(h * factor, self._bound(extra))), err)

    def snapshot(self, y: np.ndarray) -> dict[str, np.ndarray]:
        """``y`` with its cached coefficients and last stage (not recomputed: that differs at round-off)."""
        return self._fsal.snapshot(y)

    def restore(self, snapshot: dict[str, np.ndarray]) -> np.ndarray:
        return self._fsal.restore(snapshot)

    # ------------------------------------------------------------------ resolution
    def spectral_tail(self, y: np.ndarray) -> np.ndarray:
        """τ_m = max_{l > ⌊2L/3⌋} ‖ρ_{m,l}‖ / ‖ρ_{m,0}‖ of each density, shape (m,)
        (:func:`degree_tail`)."""
        return np.atleast_1d(degree_tail(self._degree_norms(self.coefficients(y))))

    def check(self, y: np.ndarray) -> None:
        """Raise on non-finite values; raise (or warn, ``on_underresolved="warn"``) on an
        under-resolved spectrum, τ > max(tail_tol, 100 rtol)."""
        a = self.coefficients(y)
        super().check(np.asarray(y))
        norms = self._degree_norms(a)
        tail = float(np.max(degree_tail(norms)))
        tolerance = max(self.tail_tol, 100 * self.rtol)
        if tail > tolerance:
            cut = 2 * (norms.shape[-1] - 1) // 3
            note = "" if tolerance == self.tail_tol else f" (raised to 100·rtol={tolerance:.3g})"
            message = (
                f"{self.name}: under-resolved on {self._grid_words()}: spectral tail max|ρ_l|/|ρ_0| over l > {cut} "
                f"is {tail:.3g} > tail_tol={self.tail_tol:.3g}{note}; the solution is no longer resolved by the grid "
                f"— {self._remedy()}"
            )
            if self.on_underresolved == "raise":
                raise UnderResolvedError(message)
            warnings.warn(message, RuntimeWarning, stacklevel=2)

"""Dormand–Prince 5(4): tableau, Lawson integrating factor, step-size control, first step.

One copy of the explicit pair used by every adaptive scheme of :mod:`solvers`
(and by the particle integrators of ``meanfield``). The rules of step-size
control are written once, as functions compiled with ``numba.njit(inline="always")``
so that compiled loops inline them and Python calls the same formulas
(``.py_func``): the controller's decision (:func:`controller_decision`, used by
:class:`StepController`), the first step (:func:`first_step_probe`,
:func:`first_step_size`, used by :func:`initial_step`), the smallest step
(:func:`step_floor`) and when a step covers the rest of an interval
(:func:`covers`).

Tableau. Dormand & Prince's RK5(4)7M (J. R. Dormand, P. J. Prince, "A family
of embedded Runge–Kutta formulae", J. Comput. Appl. Math. 6 (1980) 19–26):
for y' = f(t, y) a step of size h from y_n is

    K_i = f(t_n + c_i h, y_n + h Σ_{j<i} a_ij K_j),      i = 1, …, 7,
    y_{n+1} = y_n + h Σ_j b_j K_j                         (order 5),
    ŷ_{n+1} = y_n + h Σ_j b̂_j K_j                         (order 4, embedded),

with a_7j = b_j and c_7 = 1, so K_7 = f(t_{n+1}, y_{n+1}) is the first stage
of the next step ("first same as last", FSAL: six evaluations per step). The
local error estimate is

    ŷ_{n+1} - y_{n+1} = h Σ_j E_j K_j,     E = b̂ - b,

which is O(h⁵) (the error of the order-4 solution); its sign is irrelevant
to the norm. Dense output (L. F. Shampine, "Some practical Runge–Kutta
formulas", Math. Comp. 46 (1986) 135–150; the matrix P of scipy's ``RK45``):

    y(t_n + θh) ≈ y_n + h Σ_j b_j(θ) K_j,     b_j(θ) = Σ_{q=1}^{4} P_jq θ^q,

a continuous extension of order 4 with b(1) = b.

Array layout: ``A`` is the 7 × 7 strictly lower triangular stage matrix (its
last row is b), ``B``, ``B_HAT``, ``C``, ``E`` have 7 entries, ``P`` is 7 × 4.
All are read-only.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

import numba

from ._errors import UnevaluableState
from ._validate import positive, positive_int

__all__ = [
    "A",
    "B",
    "B_HAT",
    "C",
    "E",
    "P",
    "ORDER",
    "ERROR_ORDER",
    "N_STAGES",
    "dense_weights",
    "FsalCache",
    "FsalEntry",
    "LawsonStep",
    "LawsonTables",
    "lawson_step",
    "StepController",
    "StepDecision",
    "initial_step",
    "nan_on_unevaluable",
    "ROUND_OFF_MARGIN",
    "step_floor",
    "covers",
    "controller_decision",
    "first_step_probe",
    "first_step_size",
    "relative_error_norm",
    "weighted_rms",
    "DORMAND_PRINCE",
    "ButcherTableau",
    "AdaptiveStep",
    "adaptive_lawson_step",
]

ORDER = 5
"""Order of the propagated solution y_{n+1}."""
ERROR_ORDER = 4
"""Order of the embedded solution ŷ_{n+1}; the estimate ŷ - y is O(h^{ERROR_ORDER + 1})."""
N_STAGES = 7


def _frozen(values) -> np.ndarray:
    array = np.array(values, dtype=float)
    array.flags.writeable = False
    return array


C = _frozen([0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0])
A = _frozen(
    [
        [0, 0, 0, 0, 0, 0, 0],
        [1 / 5, 0, 0, 0, 0, 0, 0],
        [3 / 40, 9 / 40, 0, 0, 0, 0, 0],
        [44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0],
        [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0],
        [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0],
        [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0],
    ]
)
B = _frozen(A[6])
B_HAT = _frozen([5179 / 57600, 0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40])
E = _frozen([-71 / 57600, 0, 71 / 16695, -71 / 1920, 17253 / 339200, -22 / 525, 1 / 40])
"""Error weights E = b̂ - b (the exact rationals; ``B_HAT - B`` up to round-off)."""
P = _frozen(
    [
        [1, -8048581381 / 2820520608, 8663915743 / 2820520608, -12715105075 / 11282082432],
        [0, 0, 0, 0],
        [0, 131558114200 / 32700410799, -68118460800 / 10900136933, 87487479700 / 32700410799],
        [0, -1754552775 / 470086768, 14199869525 / 1410260304, -10690763975 / 1880347072],
        [0, 127303824393 / 49829197408, -318862633887 / 49829197408, 701980252875 / 199316789632],
        [0, -282668133 / 205662961, 2019193451 / 616988883, -1453857185 / 822651844],
        [0, 40617522 / 29380423, -110615467 / 29380423, 69997945 / 29380423],
    ]
)


class ButcherTableau(NamedTuple):
    r"""An embedded explicit pair: stage matrix ``A``, weights ``B`` (order ``order``) and ``B_HAT``,
    nodes ``C``, error weights ``E`` = b̂ - b (estimate O(h^{error_order + 1})), dense output ``P``.

    :data:`solvers.DORMAND_PRINCE` is the one instance (Dormand–Prince RK5(4)7M, read-only arrays).

    Parameters
    ----------
    A : ndarray, shape (s, s)
        Strictly lower triangular stage matrix a_ij.
    B : ndarray, shape (s,)
        Weights b_j of the propagated solution (order ``order``).
    B_HAT : ndarray, shape (s,)
        Weights b̂_j of the embedded solution (order ``error_order``).
    C : ndarray, shape (s,)
        Nodes c_i = Σ_j a_ij.
    E : ndarray, shape (s,)
        Error weights b̂ - b.
    P : ndarray, shape (s, q)
        Dense output: b_j(θ) = Σ_q P_jq θ^q (:func:`dense_weights`).
    order : int
        Order of the propagated solution.
    error_order : int
        Order of the embedded solution; the estimate is O(h^{error_order + 1}).

    Notes
    -----
    For y' = f(t, y), a step of size h from y_n:

    .. math::

        K_i = f\Bigl(t_n + c_i h,\; y_n + h \sum_{j<i} a_{ij} K_j\Bigr), \qquad
        y_{n+1} = y_n + h \sum_j b_j K_j, \qquad
        \hat y_{n+1} - y_{n+1} = h \sum_j E_j K_j .

    Examples
    --------
    >>> import numpy as np
    >>> import solvers
    >>> dp = solvers.DORMAND_PRINCE
    >>> dp.order, dp.error_order, dp.A.shape, dp.P.shape
    (5, 4, (7, 7), (7, 4))

    Order conditions: Σ_j b_j = 1 and Σ_j b_j c_j⁴ = 1/5; the nodes are the row sums of A:

    >>> print(f"{dp.B.sum():.12f} {dp.B @ dp.C ** 4:.12f}")
    1.000000000000 0.200000000000
    >>> bool(np.allclose(dp.A.sum(axis=1), dp.C)), bool(np.allclose(dp.B_HAT - dp.B, dp.E))
    (True, True)
    """

    A: np.ndarray
    B: np.ndarray
    B_HAT: np.ndarray
    C: np.ndarray
    E: np.ndarray
    P: np.ndarray
    order: int
    error_order: int


DORMAND_PRINCE = ButcherTableau(A, B, B_HAT, C, E, P, ORDER, ERROR_ORDER)
"""Dormand–Prince 5(4) (the arrays of this module, read-only)."""


def dense_weights(theta: float) -> np.ndarray:
    r"""Weights b_j(θ) = Σ_q P_jq θ^q of the dense output, shape (7,).

    y(t_n + θh) ≈ y_n + h Σ_j b_j(θ) K_j for 0 ≤ θ ≤ 1 (order 4; b(1) = b).

    Parameters
    ----------
    theta : float
        Fraction θ ∈ [0, 1] of the step.

    Returns
    -------
    ndarray, shape (7,)
        b_j(θ), j = 1, …, 7.

    Notes
    -----
    Shampine's continuous extension (the matrix P of scipy's ``RK45``):

    .. math::

        y(t_n + \theta h) \approx y_n + h \sum_{j=1}^{7} b_j(\theta) K_j, \qquad
        b_j(\theta) = \sum_{q=1}^{4} P_{jq}\, \theta^q .

    Examples
    --------
    The weights vanish at θ = 0, equal b at θ = 1 and sum to θ (consistency):

    >>> import numpy as np
    >>> import solvers
    >>> bool(np.all(solvers.dense_weights(0.0) == 0))
    True
    >>> bool(np.allclose(solvers.dense_weights(1.0), solvers.DORMAND_PRINCE.B))
    True
    >>> print(f"{solvers.dense_weights(0.3).sum():.12f}")
    0.300000000000
    """
    return P @ (float(theta) ** np.arange(1, 5))


# ---------------------------------------------------------------------------- Lawson form
# every factor e^{d h λ} needed has d = c_i - c_j ≥ 0 (stage rows) or 1 - c_j (error, c_7 = 1)
# (rounded keys identify equal differences; the factors use the unrounded values)
_KEYS, _FIRST = np.unique(np.round([ci - cj for ci in C for cj in C if ci >= cj], 14), return_index=True)
_DIFFS = np.array([ci - cj for ci in C for cj in C if ci >= cj])[_FIRST]
_ROW_INDEX = tuple(np.searchsorted(_KEYS, np.round(C[i] - C[:i], 14)) for i in range(N_STAGES))
_GROWTH_INDEX = np.searchsorted(_KEYS, np.round(C, 14))
_ERROR_INDEX = np.searchsorted(_KEYS, np.round(1.0 - C, 14))


class LawsonStep(NamedTuple):
    """Weights of one Lawson step of size h (see :class:`LawsonTables`).

    Attributes
    ----------
    h : float
    growth : ndarray, shape (7, K), or None
        e^{c_i h λ}; None when λ ≡ 0 (every factor is 1).
    rows : tuple of ndarray
        rows[i] = h a_ij e^{(c_i - c_j) h λ}, shape (i, K) (shape (i,) when λ ≡ 0).
    error : ndarray, shape (7, K) or (7,)
        h E_j e^{(1 - c_j) h λ}.
    """

    h: float
    growth: np.ndarray | None
    rows: tuple[np.ndarray, ...]
    error: np.ndarray

    @property
    def propagator(self) -> np.ndarray | float:
        """e^{hλ} (the exact solution operator of y' = λy over the step); 1.0 when λ ≡ 0."""
        return 1.0 if self.growth is None else self.growth[N_STAGES - 1]


class LawsonTables:
    r"""Dormand–Prince 5(4) in Lawson's integrating-factor form for y' = λ ⊙ y + N(y).

    The linear part is diagonal: λ is one rate per trailing index of the state
    (e.g. -σk² for Fourier modes, -σl(l+1) for spherical harmonics). Lawson's
    method (J. D. Lawson, "Generalized Runge–Kutta processes for stable systems
    with large Lipschitz constants", SIAM J. Numer. Anal. 4 (1967) 372–380)
    applies the explicit pair to v(t) = e^{-λ(t - t_n)} y(t), v' = e^{-λ(t-t_n)}
    N(e^{λ(t-t_n)} v), and transforms back: stage i of a step h is

        Y_i = e^{c_i hλ} y_n + h Σ_{j<i} a_ij e^{(c_i - c_j) hλ} N(Y_j),
        y_{n+1} = Y_7 = e^{hλ} y_n + h Σ_j b_j e^{(1 - c_j) hλ} N(Y_j),
        error estimate  h Σ_j E_j e^{(1 - c_j) hλ} N(Y_j),

    so y' = λy is integrated exactly (N ≡ 0 gives y_{n+1} = e^{hλ} y_n to
    round-off), the order 5 is kept for the transformed system, and for
    Re λ ≤ 0 every factor is bounded by 1 (c is non-decreasing): stiff decay
    does not limit the step. FSAL holds as for the plain pair (c_1 = 0).

    Calling the tables with a step size h returns the :class:`LawsonStep`
    weights: the exponentials e^{dhλ} are evaluated once per distinct node
    difference d (14 of them) and per distinct rate (λ repeats: -σl(l+1) is
    one value for the 2l + 1 orders of a degree) and cached for the last
    ``cache_size`` step sizes, so steps of a repeated size (a step-size cap, a
    fixed output spacing, the ladder of :meth:`preferred_step`) cost no
    exponentials.

    Parameters
    ----------
    rates : array_like, shape (K,) or (..., K), real or complex, or None
        λ, broadcast against the trailing axes of the state (e.g. (m, K) for
        m species with drifts: λ_{m,k} = -ikω_m - σk², Re λ ≤ 0); None, or all
        zero, for the plain Dormand–Prince pair.
    cache_size : int
        Number of step sizes whose tables are kept.

    Raises
    ------
    ValueError
        ``rates`` not finite or without an axis, or ``cache_size`` not a positive integer.

    Notes
    -----
    Stage i of a step h from y_n, and the error estimate:

    .. math::

        Y_i = e^{c_i h\lambda} y_n + h \sum_{j<i} a_{ij}\, e^{(c_i - c_j) h\lambda} N(Y_j), \qquad
        y_{n+1} = e^{h\lambda} y_n + h \sum_j b_j\, e^{(1 - c_j) h\lambda} N(Y_j),

    .. math::

        \text{error} = h \sum_j E_j\, e^{(1 - c_j) h\lambda} N(Y_j).

    Examples
    --------
    The tables of a step h hold the propagator e^{hλ}, the exact solution of y' = λy:

    >>> import numpy as np
    >>> import solvers
    >>> tables = solvers.LawsonTables(np.array([-1.0, -4.0]))
    >>> step = tables(0.5)
    >>> print(step.propagator.round(6), np.exp([-0.5, -2.0]).round(6))
    [0.606531 0.135335] [0.606531 0.135335]

    Proposals are rounded down to the ladder 2^{j/8} (here 2^{-27/8}), so that steps share tables:

    >>> print(f"{tables.preferred_step(0.1):.6f} {2 ** (-27 / 8):.6f}")
    0.096388 0.096388
    >>> solvers.LawsonTables(None)(0.5).propagator
    1.0
    """

    def __init__(self, rates: np.ndarray | None, cache_size: int = 4) -> None:
        if rates is not None:
            rates = np.asarray(rates)
            if rates.ndim < 1 or not np.all(np.isfinite(rates)):
                raise ValueError(f"rates must be a finite array with at least one axis, got shape {rates.shape}")
            if not np.any(rates != 0):
                rates = None
        self.rates = rates
        self.cache_size = positive_int("cache_size", cache_size)
        self._cache: OrderedDict[float, LawsonStep] = OrderedDict()
        self._distinct: np.ndarray | None = None  # the distinct rates, when they are at most half of them
        if rates is not None:
            distinct, inverse = np.unique(rates, return_inverse=True)
            if 2 * distinct.size <= rates.size:
                self._distinct, self._inverse = distinct, inverse.reshape(rates.shape)

    def preferred_step(self, h: float) -> float:
        """``h`` rounded down to the ladder 2^{j/8} when the tables are not trivial.

        Adaptive steps change every step, which would recompute the
        exponentials every step; proposals on a ladder (at most 8.3 % below
        the controller's choice, so never less accurate) make consecutive steps
        share cached tables.
        """
        h = float(h)
        if self.rates is None or not (np.isfinite(h) and h > 0):
            return h
        return float(2.0 ** (np.floor(8.0 * np.log2(h)) / 8.0))

    def __call__(self, h: float) -> LawsonStep:
        h = float(h)
        step = self._cache.get(h)
        if step is not None:
            self._cache.move_to_end(h)
            return step
        if self.rates is None:
            step = LawsonStep(h, None, tuple(h * A[i, :i] for i in range(N_STAGES)), h * E)
        else:
            if self._distinct is None:
                factors = np.exp(np.multiply.outer(_DIFFS, h * self.rates))
            else:
                factors = np.exp(np.multiply.outer(_DIFFS, h * self._distinct))[:, self._inverse]
            expand = (slice(None),) + (None,) * self.rates.ndim
            rows = tuple(h * A[i, :i][expand] * factors[_ROW_INDEX[i]] for i in range(N_STAGES))
            step = LawsonStep(h, factors[_GROWTH_INDEX], rows, h * E[expand] * factors[_ERROR_INDEX])
        self._cache[h] = step
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return step


def _combine(weights: np.ndarray, stages: np.ndarray) -> np.ndarray:
    """Σ_j weights_j ⊙ stages_j over the leading axis; weights (j,) or (j, *rates.shape)
    broadcast against the trailing axes of stages (j, ..., K)."""
    if weights.ndim == 1:
        return (weights @ stages.reshape(weights.size, -1)).reshape(stages.shape[1:])
    if weights.ndim == 2:
        return np.einsum("jk,j...k->...k", weights, stages)
    lead = (slice(None),) + (None,) * (stages.ndim - weights.ndim)
    return np.sum(weights[lead] * stages, axis=0)


def lawson_step(
    nonlinear: Callable[[np.ndarray, np.ndarray], object],
    y0: np.ndarray,
    k0: np.ndarray,
    step: LawsonStep,
    stages: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """One Dormand–Prince 5(4) step in Lawson form (formulas in :class:`LawsonTables`).

    Parameters
    ----------
    nonlinear : callable
        ``nonlinear(y, out)`` writes N(y) into ``out`` (shape of y).
    y0 : ndarray, shape (..., K)
        State at the start of the step.
    k0 : ndarray
        N(y0) (the last stage of the previous step, FSAL).
    step : LawsonStep
        Weights for the step size, ``tables(h)``.
    stages : ndarray, shape (7, ..., K)
        Work array; on return ``stages[6]`` = N(y_{n+1}) (the next step's ``k0``).

    Returns
    -------
    y1, error : ndarray
        The order-5 solution y_{n+1} and the local error estimate h Σ_j E_j e^{(1-c_j)hλ} K_j.
    """
    stages[0] = k0
    for i in range(1, N_STAGES):
        acc = _combine(step.rows[i], stages[:i])
        acc += y0 if step.growth is None else step.growth[i] * y0
        nonlinear(acc, stages[i])
    return acc, _combine(step.error, stages)


# ---------------------------------------------------------------------------- first same as last
class FsalEntry(NamedTuple):
    """An accepted state with what the next step needs of it (see :class:`FsalCache`).

    Attributes
    ----------
    state : ndarray
        The state as handed out (node values, read-only).
    coefficients : ndarray
        Its coefficients (the variables the steps run on).
    derivative : ndarray
        N(coefficients), the first stage of the next step.
    extra : object
        Anything else a scheme derives from the same evaluation (None by default).
    """

    state: np.ndarray
    coefficients: np.ndarray
    derivative: np.ndarray
    extra: Any = None


class FsalCache:
    """The last accepted state of a spectral scheme with its coefficients and N(coefficients).

    The last stage of a Dormand–Prince step is N(y_{n+1}) ("first same as
    last"); a scheme whose states are node values keeps it with the
    coefficients of y_{n+1}, so that the next step from the same state needs
    neither a transform nor an evaluation. A state is recognised by identity,
    and only read-only arrays are kept (:meth:`accept` makes the state it
    stores read-only), so a state changed in place is never mistaken for the
    cached one.
    """

    def __init__(self) -> None:
        self._entry: FsalEntry | None = None

    def lookup(self, y: object) -> FsalEntry | None:
        """The entry of ``y`` when ``y`` is the cached state, else None."""
        entry = self._entry
        return entry if entry is not None and entry.state is y else None

    def store(self, y: object, coefficients: np.ndarray, derivative: np.ndarray, extra: Any = None) -> None:
        """Keep (coefficients, derivative, extra) of ``y`` when ``y`` is a read-only array (else keep nothing)."""
        if isinstance(y, np.ndarray) and not y.flags.writeable:
            self._entry = FsalEntry(y, coefficients, derivative, extra)

    def accept(self, y: np.ndarray, coefficients: np.ndarray, last_stage: np.ndarray, extra: Any = None) -> np.ndarray:
        """Make the accepted state ``y`` read-only, keep it with a copy of ``last_stage``, and return it."""
        y.flags.writeable = False
        self.store(y, coefficients, last_stage.copy(), extra)
        return y

    def start(
        self,
        y: object,
        coefficients: Callable[[Any], np.ndarray],
        derivative: Callable[[np.ndarray], np.ndarray],
        extra: Callable[[], Any] | None = None,
    ) -> FsalEntry:
        """The entry of ``y``: the cached one, or ``coefficients(y)``, N = ``derivative`` of them
        and ``extra()`` (called after N) evaluated now and kept when ``y`` is read-only."""
        entry = self.lookup(y)
        if entry is None:
            a = coefficients(y)
            k = derivative(a)
            entry = FsalEntry(y, a, k, None if extra is None else extra())
            self.store(*entry)
        return entry

    def clear(self) -> None:
        """Forget the cached state."""
        self._entry = None

    def snapshot(self, y: np.ndarray) -> dict[str, np.ndarray]:
        """``y`` with its coefficients, N(coefficients) and a float ``extra`` when ``y`` is the cached state."""
        saved = {"state": np.array(y, dtype=float)}
        entry = self.lookup(y)
        if entry is not None:
            saved["coefficients"] = np.array(entry.coefficients)
            saved["derivative"] = np.array(entry.derivative)
            if entry.extra is not None:
                saved["extra"] = np.array(float(entry.extra))
        return saved

    def restore(self, snapshot: dict[str, np.ndarray]) -> np.ndarray:
        """The state of :meth:`snapshot`, read-only and cached with what was saved of it."""
        y = np.array(snapshot["state"], dtype=float)
        y.flags.writeable = False
        if "coefficients" in snapshot:
            extra = float(snapshot["extra"]) if "extra" in snapshot else None
            self.store(y, np.array(snapshot["coefficients"]), np.array(snapshot["derivative"]), extra)
        return y


# ---------------------------------------------------------------------------- error norm, step floor
def relative_error_norm(error: np.ndarray, start: np.ndarray, end: np.ndarray, rtol: float, atol: float) -> float:
    """err = max_m e_m / (atol + rtol max(s_m, s'_m)) for the sizes e_m of the error estimate and s_m,
    s'_m of the state at the start and end of the step, one per system (or species) m."""
    scale = atol + rtol * np.maximum(start, end)
    return float(np.max(error / scale))


def weighted_rms(error: np.ndarray, scale: np.ndarray | float) -> float:
    r"""err = max over the leading axis (systems) of the root mean square of error/scale over the others;
    ``scale`` = atol + rtol |y| componentwise (Hairer, Nørsett & Wanner, Solving ODEs I, §II.4).

    Parameters
    ----------
    error : ndarray, shape (S, ...)
        Error estimates of S systems.
    scale : ndarray or float
        atol + rtol |y|, broadcast against ``error``.

    Returns
    -------
    float
        err (≤ 1 accepts a step).

    Notes
    -----
    .. math::

        \mathrm{err} = \max_s \Bigl(\frac{1}{n} \sum_{i=1}^{n}
        \Bigl(\frac{e_{s,i}}{\mathrm{scale}_{s,i}}\Bigr)^2\Bigr)^{1/2} .

    Examples
    --------
    Root mean squares √((9 + 16)/2) and √(1/2) of two systems:

    >>> import numpy as np
    >>> import solvers
    >>> err = solvers.weighted_rms(np.array([[3.0, 4.0], [0.0, 1.0]]), 1.0)
    >>> print(f"{err:.6f} {np.sqrt(12.5):.6f}")
    3.535534 3.535534
    """
    ratio = (error / scale) ** 2
    return float(np.sqrt(ratio.reshape(ratio.shape[0], -1).mean(axis=1)).max())


ROUND_OFF_MARGIN = 16
"""The step floor in units of eps·T (:func:`step_floor`)."""


def step_floor(t0: float, t_end: float) -> float:
    r"""The smallest admissible step of a run over [t0, t_end]: h_min = 16 ε T, T = max(|t0|, |t_end|).

    ε = 2^-52 is the spacing of doubles at 1, so every time t of the run
    (|t| ≤ T) is stored with a spacing ulp(t) ≤ εT: a step below h_min moves
    t by fewer than 16 units of the coarsest round-off of the run's times.
    A controller that proposes such a step, after a rejection or after a
    full step, has met a state it cannot integrate (a singularity, or a
    tolerance below round-off); the run stops there instead of creeping on
    (near a blow-up y ~ 1/(t* - t) a relative error control accepts steps
    h ∝ t* - t forever, with t + h = t once h < ulp(t)/2).

    Why 16: the Dormand–Prince stage times t + c_i h are at least
    (c_5 - c_4) h = 4h/45 apart, which at h = 16εT is 1.42 εT ≥ 1.42 ulp(t):
    the seven stage times are distinct, ordered doubles (8εT would leave
    0.71 ulp, and two of them could round to the same time); and the step
    actually taken, fl(t + h) - t, is within ulp(t)/2 ≤ h/32 of the step the
    controller chose, so its error model (∝ h⁵) sees that step to within
    (1 + 1/32)⁵ - 1 = 17 %.

    Why T and not |t|: the spacing of t vanishes at t = 0 (down to 5e-324),
    so a floor ∝ |t| would let a run that meets a singularity near the
    origin go on through hundreds of rejections to subnormal steps; the
    extent of the run has to enter, and with it |t| ≤ T adds nothing. T is
    the coarsest spacing of the run's times, the resolution at which the
    output times and t_end are met (T = t_end - t0 for a run from 0). The
    floor depends on the interval only: one number per run (compiled loops
    take it as such), unchanged when a run with t ≥ 0 is resumed over its
    remaining times.

    Parameters
    ----------
    t0, t_end : float
        The run's first and last time.

    Returns
    -------
    float
        h_min.

    Notes
    -----
    .. math::

        h_{\min} = 16\, \varepsilon\, \max(|t_0|, |t_\mathrm{end}|), \qquad \varepsilon = 2^{-52}.

    Examples
    --------
    >>> import numpy as np
    >>> import solvers
    >>> h_min = solvers.step_floor(0.0, 10.0)
    >>> print(f"{h_min:.6e} {16 * np.finfo(float).eps * 10:.6e}")
    3.552714e-14 3.552714e-14
    >>> solvers.step_floor(-20.0, 10.0) == 2 * h_min
    True
    """
    return ROUND_OFF_MARGIN * float(np.finfo(float).eps) * max(abs(float(t0)), abs(float(t_end)))


@numba.njit(cache=True, inline="always")
def covers(dt, remaining):
    r"""Whether a step of proposed size ``dt`` covers the time ``remaining`` to the next stop of a run:
    dt ≥ remaining (1 - 10⁻¹²). The step is then taken as exactly ``remaining``, so that the stop is met
    as a double, not approached by a sliver of round-off (a step of 10⁻¹² of it or less).

    Every adaptive loop uses it: :func:`solvers.evolve` at each output time (or only at the final time,
    for a stepper with dense output) and the compiled ensembles of ``meanfield`` at their final time.
    Compiled with numba (``inline="always"``); ``covers.py_func`` is the same rule in Python.

    Parameters
    ----------
    dt : float
        Proposed step size.
    remaining : float
        Time left to the next stop.

    Returns
    -------
    bool
        dt ≥ remaining (1 - 10⁻¹²).

    Notes
    -----
    .. math::

        \Delta t \ge (1 - 10^{-12})\, r .

    Examples
    --------
    >>> import solvers
    >>> solvers.covers(0.5, 1.0), solvers.covers(1.0 - 1e-13, 1.0), solvers.covers(1.0 - 1e-11, 1.0)
    (False, True, False)
    """
    return dt >= remaining * (1.0 - 1e-12)


# ---------------------------------------------------------------------------- step-size control
class StepDecision(NamedTuple):
    """Outcome of :meth:`StepController.decide`: accept the step?, and h_next / h."""

    accepted: bool
    factor: float


@dataclass
class StepController:
    r"""Standard (integral) step-size controller of an embedded pair.

    For the error norm err of a step h (the estimate divided by its tolerance,
    err ≤ 1 accepts; E. Hairer, S. P. Nørsett, G. Wanner, *Solving Ordinary
    Differential Equations I*, 2nd ed., Springer 1993, §II.4), the
    next step is h_new = factor · h with::

        factor = min(max_factor, max(min_factor, safety · err^{-1/(q+1)})),

    q = ``ERROR_ORDER`` = 4 (exponent -1/5), and

    * err = 0: factor = max_factor;
    * err > 1: the step is rejected, and factor < 1 (min_factor < 1, safety ≤ 1);
    * the step after a rejection may not grow: factor ≤ 1 (as scipy's RK45,
      which avoids alternating rejections);
    * err NaN or infinite (an overflowing trial step): rejected, factor = min_factor.

    The defaults safety = 0.9, min_factor = 0.2, max_factor = 10 are those of
    scipy's RK45 and of Hairer–Wanner's DOPRI5 (whose facmin, facmax are 0.2, 10).
    The controller remembers whether the last attempt was rejected;
    :meth:`reset` forgets it (call it at the start of a run).

    Parameters
    ----------
    safety : float
        In (0, 1].
    min_factor, max_factor : float
        0 < min_factor < 1 < max_factor.
    error_order : int
        q: the error estimate is O(h^{q+1}).

    Raises
    ------
    ValueError
        An option out of range, naming it.

    Notes
    -----
    .. math::

        h_\mathrm{new} = h \cdot \min\Bigl(f_{\max},\, \max\bigl(f_{\min},\,
        s\, \mathrm{err}^{-1/(q+1)}\bigr)\Bigr),

    s = ``safety``, f_min = ``min_factor``, f_max = ``max_factor``.

    Examples
    --------
    >>> import solvers
    >>> controller = solvers.StepController()
    >>> accepted, factor = controller.decide(0.5)
    >>> print(accepted, f"{factor:.6f} {0.9 * 0.5 ** -0.2:.6f}")
    True 1.033829 1.033829
    >>> accepted, factor = controller.decide(2.0)
    >>> print(accepted, f"{factor:.6f} {0.9 * 2.0 ** -0.2:.6f}")
    False 0.783496 0.783496

    After a rejection the step may not grow:

    >>> controller.decide(0.5)
    StepDecision(accepted=True, factor=1.0)
    """

    safety: float = 0.9
    min_factor: float = 0.2
    max_factor: float = 10.0
    error_order: int = ERROR_ORDER

    def __post_init__(self) -> None:
        self.safety = positive("safety", self.safety)
        self.min_factor = positive("min_factor", self.min_factor)
        self.max_factor = positive("max_factor", self.max_factor)
        if self.safety > 1:
            raise ValueError(f"safety must lie in (0, 1], got {self.safety!r}")
        if not self.min_factor < 1 < self.max_factor:
            raise ValueError(
                f"min_factor and max_factor must satisfy 0 < min_factor < 1 < max_factor, "
                f"got {self.min_factor!r} and {self.max_factor!r}"
            )
        self.error_order = positive_int("error_order", self.error_order)
        self._exponent = -1.0 / (self.error_order + 1)
        self.rejected_last = False

    def reset(self) -> None:
        """Forget the last rejection."""
        self.rejected_last = False

    def decide(self, error: float) -> StepDecision:
        """Accept or reject a step of error norm ``error`` and give h_new / h (:func:`controller_decision`)."""
        accepted, factor = controller_decision.py_func(float(error), self.rejected_last, self.safety,
                                                       self.min_factor, self.max_factor, self._exponent)
        self.rejected_last = not accepted
        return StepDecision(accepted, factor)


@numba.njit(cache=True, inline="always")
def controller_decision(error, rejected_last, safety, min_factor, max_factor, exponent):
    r"""(accepted, h_new / h) of the integral controller (:class:`StepController`) for the error norm
    ``error`` of a step, after a rejected attempt when ``rejected_last``; ``exponent`` = -1/(q + 1).

    Not finite: rejected, min_factor. Otherwise factor = min(max_factor, max(min_factor, safety ·
    error^exponent)) (max_factor at error = 0); accepted when error ≤ 1, and then not above 1 after a
    rejection. Compiled with numba (``inline="always"``); ``.py_func`` is the same rule in Python.

    Parameters
    ----------
    error : float
        Error norm of the step (≤ 1 accepts).
    rejected_last : bool
        Whether the previous attempt was rejected.
    safety : float
        Safety factor s ∈ (0, 1].
    min_factor : float
        Smallest factor, < 1.
    max_factor : float
        Largest factor, > 1.
    exponent : float
        -1/(q + 1) for an error estimate O(h^{q+1}).

    Returns
    -------
    accepted : bool
        Whether the step is accepted.
    factor : float
        h_new / h.

    Notes
    -----
    .. math::

        \mathrm{factor} = \min\bigl(f_{\max},\, \max(f_{\min},\, s\, \mathrm{err}^{\,\mathrm{exponent}})\bigr).

    Examples
    --------
    >>> import solvers
    >>> accepted, factor = solvers.controller_decision(0.5, False, 0.9, 0.2, 10.0, -0.2)
    >>> print(accepted, f"{factor:.6f}")
    True 1.033829
    >>> solvers.controller_decision(0.5, True, 0.9, 0.2, 10.0, -0.2)
    (True, 1.0)
    >>> solvers.controller_decision(float("nan"), False, 0.9, 0.2, 10.0, -0.2)
    (False, 0.2)
    """
    if not np.isfinite(error):
        return False, min_factor
    if error == 0:
        factor = max_factor
    else:
        factor = min(max_factor, max(min_factor, safety * error**exponent))
    if error > 1:
        return False, factor
    if rejected_last:
        factor = min(1.0, factor)
    return True, factor


# ---------------------------------------------------------------------------- first step
def initial_step(
    f0: np.ndarray,
    euler_derivative: Callable[[float], np.ndarray],
    norm: Callable[[np.ndarray], float],
    *,
    y0_norm: float,
    error_order: int = ERROR_ORDER,
    max_step: float = np.inf,
) -> float:
    r"""First step size by Hairer, Nørsett & Wanner's algorithm (*Solving ODEs I*, §II.4).

    As scipy's ``select_initial_step``: with ‖·‖ the tolerance-weighted norm
    (‖v‖ = RMS of v/(atol + rtol|y_0|), or any norm with the same scaling)::

        d0 = ‖y_0‖, d1 = ‖f(y_0)‖,
        h0 = 0.01 d0/d1   (h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5),
        d2 = ‖f(y_0 + h0 f(y_0)) - f(y_0)‖ / h0      (an estimate of ‖y''‖),
        h1 = (0.01 / max(d1, d2))^{1/(q+1)}          (h1 = max(1e-6, 1e-3 h0) if max(d1, d2) ≤ 1e-15),
        h = min(100 h0, h1, max_step),

    q = ``error_order`` (scipy passes the error estimator's order, 4 for RK45).
    A non-finite d1 or d2 (an overflowing probe) gives h = min(h0, max_step), with
    h0 = 1e-6 when d1 is not finite.

    Parameters
    ----------
    f0 : ndarray
        f(y_0).
    euler_derivative : callable
        h ↦ f(y_0 + h f(y_0)) (or the same probe in a chart of a manifold).
    norm : callable
        The weighted norm ‖·‖.
    y0_norm : float
        d0 = ‖y_0‖ (passed separately: on a manifold chart y_0 itself may have
        no meaningful size).
    error_order : int
        q.
    max_step : float
        Upper bound of the result.

    Returns
    -------
    float
        h > 0.

    Notes
    -----
    .. math::

        h_0 = 0.01\, \frac{d_0}{d_1}, \qquad
        d_2 = \frac{\lVert f(y_0 + h_0 f(y_0)) - f(y_0) \rVert}{h_0}, \qquad
        h_1 = \Bigl(\frac{0.01}{\max(d_1, d_2)}\Bigr)^{1/(q+1)}, \qquad
        h = \min(100 h_0,\, h_1,\, \mathtt{max\_step}).

    Examples
    --------
    For y' = -y, y_0 = 1 and ‖·‖ = |·|: d0 = d1 = 1, h0 = 0.01, d2 = 1, so h = 0.01^{1/5}:

    >>> import numpy as np
    >>> import solvers
    >>> h = solvers.initial_step(np.array([-1.0]), lambda h: -(1.0 - h) * np.ones(1),
    ...                          lambda v: float(np.abs(v).max()), y0_norm=1.0)
    >>> print(f"{h:.6f} {0.01 ** 0.2:.6f}")
    0.398107 0.398107
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        d1 = float(norm(f0))
        h0 = min(first_step_probe.py_func(float(y0_norm), d1), max_step)
        d2 = float(norm(euler_derivative(h0) - f0)) / h0
        return float(min(first_step_size.py_func(h0, d1, d2, error_order), max_step))


@numba.njit(cache=True, inline="always")
def first_step_probe(d0, d1):
    r"""h0 of :func:`initial_step`: 0.01 d0/d1, or 1e-6 when d0 or d1 is below 1e-5 or not finite.

    Compiled with numba (``inline="always"``); ``.py_func`` is the same rule in Python.

    Parameters
    ----------
    d0 : float
        ‖y_0‖ in the weighted norm.
    d1 : float
        ‖f(y_0)‖ in the weighted norm.

    Returns
    -------
    float
        h0.

    Notes
    -----
    .. math::

        h_0 = 0.01\, d_0 / d_1 .

    Examples
    --------
    >>> import solvers
    >>> solvers.first_step_probe(1.0, 10.0), solvers.first_step_probe(1e-6, 1.0)
    (0.001, 1e-06)
    """
    if not (np.isfinite(d0) and np.isfinite(d1)) or d0 < 1e-5 or d1 < 1e-5 or not 0.01 * d0 / d1 > 0:
        return 1e-6
    return 0.01 * d0 / d1


@numba.njit(cache=True, inline="always")
def first_step_size(h0, d1, d2, error_order):
    r"""min(100 h0, h1) of :func:`initial_step`, h1 = (0.01/max(d1, d2))^{1/(q+1)} (max(1e-6, 1e-3 h0) when
    max(d1, d2) ≤ 1e-15); h0 itself when d1 or d2 is not finite.

    Compiled with numba (``inline="always"``); ``.py_func`` is the same rule in Python.

    Parameters
    ----------
    h0 : float
        The probe step of :func:`first_step_probe`.
    d1 : float
        ‖f(y_0)‖.
    d2 : float
        ‖f(y_0 + h0 f(y_0)) - f(y_0)‖ / h0, an estimate of ‖y''‖.
    error_order : int
        q: the error estimate is O(h^{q+1}).

    Returns
    -------
    float
        The first step (before the cap ``max_step``).

    Notes
    -----
    .. math::

        h = \min\Bigl(100\, h_0,\; \bigl(0.01 / \max(d_1, d_2)\bigr)^{1/(q+1)}\Bigr).

    Examples
    --------
    100 h0 = 0.1 is below h1 = (0.01/100)^{1/5} ≈ 0.158:

    >>> import solvers
    >>> solvers.first_step_size(0.001, 10.0, 100.0, 4)
    0.1
    >>> solvers.first_step_size(0.001, 0.0, 0.0, 4)  # no derivative: max(1e-6, 1e-3 h0)
    1e-06
    """
    if not (np.isfinite(d1) and np.isfinite(d2)):
        return h0
    big = max(d1, d2)
    if big <= 1e-15:
        h1 = max(1e-6, 1e-3 * h0)
    else:
        h1 = (0.01 / big) ** (1.0 / (error_order + 1))
    return min(100 * h0, h1)


# ---------------------------------------------------------------------------- adaptive Lawson step
def nan_on_unevaluable(probe: Callable[[float], np.ndarray]) -> Callable[[float], np.ndarray]:
    """``probe`` for :func:`initial_step` with :class:`~solvers.UnevaluableState` (a
    right-hand side that cannot be evaluated at the probe) turned into NaN: an
    overshooting probe then gives the non-finite d2 that :func:`initial_step`
    answers with h = h0."""

    def guarded(h: float) -> np.ndarray:
        try:
            return probe(h)
        except UnevaluableState:
            return np.full((), np.nan)

    return guarded


class AdaptiveStep(NamedTuple):
    """Outcome of :func:`adaptive_lawson_step`.

    Attributes
    ----------
    accepted : bool
    y1 : ndarray or None
        y_{n+1} (None when a stage could not be evaluated).
    error : float
        The error norm (∞ when it or y_{n+1} is not finite, or a stage could not be evaluated).
    factor : float
        h_next / h from the controller.
    """

    accepted: bool
    y1: np.ndarray | None
    error: float
    factor: float


def adaptive_lawson_step(
    nonlinear: Callable[[np.ndarray, np.ndarray], object],
    y0: np.ndarray,
    k0: np.ndarray,
    step: LawsonStep,
    stages: np.ndarray,
    error_norm: Callable[[np.ndarray, np.ndarray, np.ndarray], float],
    controller: StepController,
) -> AdaptiveStep:
    """One :func:`lawson_step` judged by ``controller``.

    ``error_norm(y0, y1, error)`` is the tolerance-weighted norm of the
    estimate (≤ 1 accepts). Overflow in the trial step is silenced; a stage
    whose right-hand side cannot be evaluated (:class:`~solvers.UnevaluableState`,
    e.g. a normaliser B ⋆ ρ ≤ 0: the step overshoots),
    a non-finite norm or a non-finite y_{n+1} give err = ∞, which the
    controller rejects with factor ``min_factor``. On return ``stages[6]``
    = N(y_{n+1}) when accepted (the next step's ``k0``).
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        try:
            y1, error = lawson_step(nonlinear, y0, k0, step, stages)
        except UnevaluableState:
            y1, err = None, np.inf
        else:
            err = float(error_norm(y0, y1, error))
    if not (np.isfinite(err) and np.all(np.isfinite(y1))):
        err = np.inf
    accepted, factor = controller.decide(err)
    return AdaptiveStep(accepted, y1, err, factor)

"""Equiangular tokens (paper 2, Theorem 6.8) and the phase-transition curve Γ_{∞,δ} (6.12).

n pairwise orthogonal initial tokens (n ≤ d) keep one common inner product
γ_β(t) = <x_i(t), x_j(t)>, i ≠ j, with γ_β(0) = 0 and

    SA  (6.9):   γ' = 2 e^{βγ} (1 - γ) ((n - 1) γ + 1) / (e^β + (n - 1) e^{βγ})
                    = 2 (1 - γ) ((n - 1) γ + 1) / (e^{β(1-γ)} + n - 1),
    USA (6.10):  γ' = (2/n) e^{βγ} (1 - γ) ((n - 1) γ + 1).

The right-hand side is positive on [0, 1) and vanishes at γ = 1, so γ_β rises
monotonically to 1 and reaches every level 1 - δ (0 < δ < 1) at one time
t*(β); Γ_{∞,δ} = {(t, β): γ_β(t) = 1 - δ} is the graph β ↦ t*(β). At β = 0
both equations read γ' = (2/n)(1 - γ)((n - 1)γ + 1), solved by
γ_0(t) = (e^{2t} - 1)/(e^{2t} + n - 1), so t*(0) = ½ log((n - (n - 1)δ)/δ).

Under the discrete layers x_{k+1} = (x_k + h ẋ_k)/|x_k + h ẋ_k| (:mod:`meanfield.particles._layers`) the
tokens stay equiangular too, with an explicit recursion γ_{k+1} = g_h(γ_k) (:func:`equiangular_layers`)
that tends to the ODE's solution at rate O(h).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy.integrate import solve_ivp

from ..._validate import check_beta, check_positive, check_positive_int, check_rtol

__all__ = ["equiangular_gamma", "equiangular_curve", "equiangular_layers"]

#: default tolerances of the DOP853 integration of u = log(1 - γ): measured relative error of t*
#: ≤ 1.2e-12 against quadrature of ∫ dg/γ'(g) for β ∈ [0, 20], n ∈ {2, 8, 32}, δ ∈ {1e-6, 1e-3, 0.1}
RTOL = 1e-12
ATOL = 1e-14


def _log_gap_rate(beta: float, n: int, normalized: bool) -> Callable[[float, np.ndarray], np.ndarray]:
    """The right-hand side of u = log(1 - γ): u' = -γ'/(1 - γ), with 1 - γ = e^u.

    SA: u' = -2((n - 1)γ + 1)/(e^{β e^u} + n - 1); USA: u' = -(2/n) e^{β(1 - e^u)} ((n - 1)γ + 1).
    |u'| is bounded below on γ ≥ 0, so the time at which u = log δ is well conditioned for every δ.
    """
    beta = check_beta(beta)
    n = check_positive_int("n", n, 2)

    def rate(_: float, u: np.ndarray) -> np.ndarray:
        gap = np.exp(u)
        growth = (n - 1) * (1.0 - gap) + 1.0
        if normalized:
            return -2.0 * growth / (np.exp(beta * gap) + (n - 1))
        return -(2.0 / n) * np.exp(beta * (1.0 - gap)) * growth

    return rate


def _time_bound(beta: float, n: int, log_gap: float, normalized: bool) -> float:
    """An upper bound of the time u = log(1 - γ) takes to fall to ``log_gap`` < 0: while γ ≥ 0,
    |u'| ≥ 2/(e^β + n - 1) (SA) or ≥ 2/n (USA)."""
    slowest = 2.0 / (np.exp(beta) + n - 1) if normalized else 2.0 / n
    return 2.0 * abs(log_gap) / slowest + 1.0


def check_delta(delta: float) -> float:
    """Return the threshold ``delta`` as a float, requiring a real number in (0, 2)."""
    try:
        out = float(delta)
    except (TypeError, ValueError):
        raise TypeError(f"delta must be a real number in (0, 2), got {delta!r}") from None
    if not 0 < out < 2:
        raise ValueError(f"delta must lie in (0, 2), got {delta!r}")
    return out


def equiangular_gamma(beta: float, n: int, t: Sequence[float] | np.ndarray, *, normalized: bool = True,
                      rtol: float = RTOL, atol: float = ATOL) -> np.ndarray:
    r"""The common inner product γ_β(t) of n initially orthogonal tokens (paper 2, Theorem 6.8).

    Solves (6.9) (SA, ``normalized=True``) or (6.10) (USA) from γ_β(0) = 0
    with DOP853, written for u = log(1 - γ) so that 1 - γ keeps its relative
    accuracy as γ → 1 (see the module docstring for the equations). The
    integration runs from one output time to the next, so every value is the
    end of a step: DOP853's dense output (order 7) would lose an order of
    magnitude of the tolerance between steps. Relative accuracy ≈ 1e-12 with
    the default tolerances (≤ 7e-13 against the closed form at β = 0).

    Parameters
    ----------
    beta : float
        β ≥ 0.
    n : int
        Number of tokens, n ≥ 2.
    t : array_like
        Times ≥ 0, strictly increasing (t[0] may be 0).
    normalized : bool
        SA (6.9) if True, USA (6.10) if False.
    rtol, atol : float
        Tolerances of the integration.

    Returns
    -------
    numpy.ndarray
        γ_β at the times ``t``, in [0, 1).

    Notes
    -----
    The equations solved, with γ_β(0) = 0 (paper 2, Theorem 6.8):

    .. math::

        \text{SA (6.9):}\quad \dot\gamma = \frac{2 e^{\beta\gamma} (1 - \gamma) ((n - 1)\gamma + 1)}
                                             {e^{\beta} + (n - 1) e^{\beta\gamma}},
        \qquad
        \text{USA (6.10):}\quad \dot\gamma = \frac{2}{n} e^{\beta\gamma} (1 - \gamma) ((n - 1)\gamma + 1).

    At β = 0 both read γ' = (2/n)(1 - γ)((n - 1)γ + 1), whose solution is

    .. math::

        \gamma_0(t) = \frac{e^{2t} - 1}{e^{2t} + n - 1}.

    Examples
    --------
    At β = 0, SA and USA agree with the closed form γ_0(t) = (e^{2t} - 1)/(e^{2t} + n - 1):

    >>> import numpy as np
    >>> import meanfield as mf
    >>> t = np.array([0.0, 0.5, 1.0])
    >>> sa = mf.equiangular_gamma(0.0, 4, t)
    >>> usa = mf.equiangular_gamma(0.0, 4, t, normalized=False)
    >>> exact = np.expm1(2 * t) / (np.exp(2 * t) + 3)
    >>> print(np.round(exact, 8))
    [0.         0.30048918 0.61497946]
    >>> bool(np.abs(sa - exact).max() < 1e-12), bool(np.abs(usa - exact).max() < 1e-12)
    (True, True)

    For β > 0 the unnormalised dynamics (USA) cluster faster than SA:

    >>> sa = mf.equiangular_gamma(1.0, 4, [1.0])
    >>> usa = mf.equiangular_gamma(1.0, 4, [1.0], normalized=False)
    >>> print(f"{sa[0]:.6f} {usa[0]:.6f}")
    0.479487 0.832088
    """
    rate = _log_gap_rate(beta, n, normalized)
    times = np.atleast_1d(np.asarray(t, dtype=float))
    if times.ndim != 1 or not np.all(np.isfinite(times)) or times[0] < 0 or np.any(np.diff(times) <= 0):
        raise ValueError(f"t must be a 1-D array of finite times >= 0, strictly increasing, got {t!r}")
    rtol, atol = check_rtol("rtol", rtol), check_positive("atol", atol)
    if times[-1] == 0:
        return np.zeros(1)
    nodes = times if times[0] == 0 else np.concatenate([[0.0], times])
    log_gap = np.zeros(nodes.size)
    for k in range(1, nodes.size):
        sol = solve_ivp(rate, (nodes[k - 1], nodes[k]), log_gap[k - 1:k], method="DOP853", rtol=rtol, atol=atol)
        log_gap[k] = sol.y[0, -1]
    return -np.expm1(log_gap[-times.size:])


def equiangular_curve(betas: Sequence[float] | np.ndarray | float, n: int, delta: float = 1e-3, *,
                      normalized: bool = True, rtol: float = RTOL, atol: float = ATOL) -> np.ndarray:
    r"""The curve Γ_{∞,δ} = {(t, β): γ_β(t) = 1 - δ} of paper 2, (6.12), as t*(β).

    t*(β) is the first time the equiangular inner product γ_β of Theorem 6.8
    reaches 1 - δ; it equals ∫_0^{1-δ} dg / γ'(g). It is computed by
    integrating (6.9)/(6.10) with DOP853 in the variable u = log(1 - γ)
    (whose rate |u'| stays bounded below, so the crossing is well conditioned
    even for small δ) and locating the event u = log δ on the dense output
    (Brent's method); relative accuracy ≈ 1e-12 with the default tolerances.
    For δ ≥ 1 the level is reached at t = 0.

    Parameters
    ----------
    betas : float or array_like
        Values β ≥ 0 (any shape).
    n : int
        Number of tokens, n ≥ 2.
    delta : float
        0 < δ < 2; the paper uses δ = 1e-3.
    normalized : bool
        SA (6.9) if True, USA (6.10) if False.
    rtol, atol : float
        Tolerances of the integration.

    Returns
    -------
    numpy.ndarray
        t*(β), shaped like ``betas``. It grows with β (for SA like e^β/2 for β ≫ log n).

    Notes
    -----
    With γ' the right-hand side of (6.9) (SA) or (6.10) (USA),

    .. math::

        t^*(\beta) = \int_0^{1-\delta} \frac{dg}{\dot\gamma(g)},
        \qquad
        t^*(0) = \frac{1}{2} \log \frac{n - (n - 1)\delta}{\delta},

    the second from the closed form γ_0(t) = (e^{2t} - 1)/(e^{2t} + n - 1) at β = 0.

    Examples
    --------
    At β = 0 the closed form t*(0) = ½ log((n - (n - 1)δ)/δ):

    >>> import numpy as np
    >>> import meanfield as mf
    >>> t = mf.equiangular_curve([0.0, 1.0, 5.0], 32, 1e-3)
    >>> print(np.round(t, 6))
    [5.186261 5.270284 9.544329]
    >>> print(f"{0.5 * np.log((32 - 31e-3) / 1e-3):.6f}")
    5.186261

    At t*(β) the inner product γ_β has reached 1 - δ:

    >>> print(f"{mf.equiangular_gamma(5.0, 32, [t[2]])[0]:.9f}")
    0.999000000
    """
    n = check_positive_int("n", n, 2)
    delta = check_delta(delta)
    rtol, atol = check_rtol("rtol", rtol), check_positive("atol", atol)
    beta_array = np.asarray(betas, dtype=float)
    flat = beta_array.ravel()
    if not np.all(np.isfinite(flat)) or np.any(flat < 0):
        raise ValueError(f"betas must be finite and >= 0, got {betas!r}")
    out = np.zeros(flat.shape)
    if delta >= 1:
        return out.reshape(beta_array.shape)
    log_gap = np.log(delta)
    for k, beta in enumerate(flat):

        def reached(_: float, u: np.ndarray) -> float:
            return u[0] - log_gap

        reached.terminal = True  # type: ignore[attr-defined]
        reached.direction = -1.0  # type: ignore[attr-defined]
        sol = solve_ivp(_log_gap_rate(beta, n, normalized), (0.0, _time_bound(beta, n, log_gap, normalized)),
                        [0.0], method="DOP853", events=reached, rtol=rtol, atol=atol)
        if sol.t_events[0].size != 1:
            raise RuntimeError(f"gamma did not reach 1 - delta = {1 - delta} for beta = {beta} ({sol.message})")
        out[k] = sol.t_events[0][0]
    return out.reshape(beta_array.shape)


def equiangular_layers(beta: float, n: int, h: float, n_layers: int, *, normalized: bool = True) -> np.ndarray:
    r"""The common inner product γ_k of n initially orthogonal tokens after k discrete layers of step h.

    The layer map x_{k+1} = (x_k + h v_k)/|x_k + h v_k| of SA or USA (``simulate(method="layers")``)
    permutes with the tokens, so n orthonormal tokens stay equiangular, ⟨x_i, x_j⟩ = γ_k for i ≠ j, and
    γ_{k+1} = g_h(γ_k), γ_0 = 0. Derivation: with every inner product equal to γ, the attention weights are
    a = e^β/Z on the diagonal and b = e^{βγ}/Z off it (SA: Z = e^β + (n - 1)e^{βγ}; USA: a = e^β/n,
    b = e^{βγ}/n), so with S_i = Σ_{j≠i} x_j the tangent velocity is v_i = b (S_i - (n - 1)γ x_i) and

    .. math::

        y_i = x_i + h v_i = p\, x_i + q\, S_i, \qquad p = 1 - h b (n - 1)\gamma, \quad q = h b .

    The Gram entries of the x_i give ⟨x_i, S_i⟩ = (n - 1)γ, ⟨x_i, S_j⟩ = 1 + (n - 2)γ,
    |S_i|² = (n - 1)(1 + (n - 2)γ), ⟨S_i, S_j⟩ = (n - 2) + ((n - 1)² - (n - 2))γ (i ≠ j), hence

    .. math::

        g_h(\gamma) = \frac{p^2 \gamma + 2pq\,(1 + (n - 2)\gamma) + q^2 \big((n - 2) + ((n - 1)^2 - (n - 2))\gamma\big)}
                           {p^2 + 2pq\,(n - 1)\gamma + q^2 (n - 1)(1 + (n - 2)\gamma)} .

    Expanding in h, g_h(γ) = γ + 2hb(1 - γ)((n - 1)γ + 1) + O(h²): one Euler step of Theorem 6.8's
    (6.9)/(6.10), so γ_k - γ(kh) = O(h) at a fixed time kh.

    Parameters
    ----------
    beta : float
        β ≥ 0.
    n : int
        Number of tokens, n ≥ 2 (orthogonal tokens need the dimension d ≥ n).
    h : float
        Layer step h > 0.
    n_layers : int
        Number of layers K ≥ 0.
    normalized : bool
        SA (True) or USA (False).

    Returns
    -------
    numpy.ndarray
        γ_0 = 0, γ_1, …, γ_K (K + 1 values).

    Raises
    ------
    ValueError
        β < 0, n < 2, h not positive and finite, n_layers negative.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> gamma = mf.equiangular_layers(1.0, 4, 0.01, 100)       # 100 layers of h = 0.01 reach t = 1
    >>> ode = mf.equiangular_gamma(1.0, 4, [1.0])[0]
    >>> print(f"{gamma[-1]:.4f} {ode:.4f}")                 # O(h) apart
    0.4786 0.4795
    """
    beta = check_beta(beta)
    n = check_positive_int("n", n, 2)
    h = check_positive("h", h)
    n_layers = check_positive_int("n_layers", n_layers, 0)
    gamma = np.zeros(n_layers + 1)
    for k in range(n_layers):
        g = gamma[k]
        if normalized:
            b = 1.0 / (np.exp(beta * (1.0 - g)) + n - 1)  # e^{βγ}/Z with Z = e^β + (n - 1)e^{βγ}
        else:
            b = np.exp(beta * g) / n
        q = h * b
        p = 1.0 - q * (n - 1) * g
        cross = (n - 2) + ((n - 1) ** 2 - (n - 2)) * g
        inner = p * p * g + 2 * p * q * (1 + (n - 2) * g) + q * q * cross
        norm2 = p * p + 2 * p * q * (n - 1) * g + q * q * (n - 1) * (1 + (n - 2) * g)
        gamma[k + 1] = inner / norm2
    return gamma

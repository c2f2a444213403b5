r"""Monte-Carlo rate of the residual of the BBGKY equation (8.1): R(t) ∝ M^{-1/2} over ensemble sizes M.

The residual r_k of :func:`meanfield.studies.open_problems._bbgky.bbgky_estimates` has mean exactly zero, so its norm
R(t) = (Σ_{k=1}^K |r_k|²)^{1/2} satisfies E R² = Σ_k Var(r_k)/M. One ensemble gives R with a wide spread (R² is
a weighted χ² with few effective degrees of freedom: the r_k of different k are strongly correlated; measured
std of log R 0.3-0.4 at β = 2, n = 12), so each size M is replicated r_M = max(1, ⌊budget/M⌋) times with
independent ensembles and the fit uses the root mean square R_rms(M) = (mean over replicates of R²)^{1/2}.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from ..._validate import as_times, check_positive, check_positive_int
from ..._version import __version__
from ._bbgky import SEED_RULE, bbgky_estimates, initial_angles, simulate_usa

__all__ = ["bbgky_residual_scaling"]


def bbgky_residual_scaling(
    beta: float,
    n_particles: int,
    sizes: Sequence[int],
    times: Sequence[float] | np.ndarray,
    *,
    budget: int | None = None,
    max_wavenumber: int = 16,
    seed: int = 0,
    rtol: float = 1e-8,
    atol: float = 1e-10,
) -> xr.Dataset:
    r"""R(t) of (8.1) against the number M of systems, and the fitted exponent a of R_rms ≈ c M^a.

    Parameters
    ----------
    beta, n_particles : float, int
        β > 0 and n ≥ 3 of the USA dynamics (7.1).
    sizes : sequence of int
        At least two distinct ensemble sizes M ≥ 2.
    times : array_like
        Output times; times[0] is the initial time (uniform starts) and is not fitted.
    budget : int, optional
        Systems per size: replicate j = 0, …, r_M - 1 of size M, r_M = max(1, ⌊budget/M⌋), is an independent
        ensemble whose angles come from ``SeedSequence((seed, M, j))`` (``SEED_RULE``). Default: max(sizes).
    max_wavenumber : int, default 16
        K ≥ 1 of the residual norm.
    seed : int, default 0
        Non-negative base seed.
    rtol, atol : float, default 1e-8, 1e-10
        Tolerances of :func:`meanfield.simulate`.

    Returns
    -------
    xarray.Dataset
        ``residual_norm`` (systems, time) R_rms, ``residual_norm_stderr`` (systems, time) the root mean square
        of the per-replicate (Σ_k stderr(r_k)²)^{1/2} (E R² at zero mean), ``replicates`` (systems);
        ``exponent`` and ``exponent_stderr`` (time, from times[1] on): weighted least squares of log R_rms on
        log M, weights r_M, the standard error from the weighted residuals. The log of a mean of r_M values is
        biased low by ≈ Var(R²)/(2 r_M E[R²]²), most at the largest M (fewest replicates), which steepens the
        slope by O(0.01) for budget = max(sizes).

    Raises
    ------
    ValueError
        Fewer than two distinct sizes, a size < 2, β ≤ 0, n < 3, a negative seed, bad times.

    Notes
    -----
    The residual r_k of (8.1) (:func:`bbgky_estimates`) has mean exactly zero, so

    .. math::

        R(t) = \Big(\sum_{k=1}^K |r_k|^2\Big)^{1/2}, \qquad
        \mathbb E R^2 = \frac{1}{M}\sum_{k=1}^K \operatorname{Var}(r_k), \qquad
        R_{\mathrm{rms}}(M) = \big(\overline{R^2}\big)^{1/2} \approx c\, M^{a},

    and the expected exponent is a = -1/2 (the mean over replicates is taken of R², over r_M
    independent ensembles of size M).

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.open_problems import bbgky_residual_scaling
    >>> out = bbgky_residual_scaling(2.0, 4, [2, 4, 8], [0.0, 0.5], budget=8, max_wavenumber=2)
    >>> out["replicates"].values.tolist(), out["exponent"].dims
    ([4, 2, 1], ('fit_time',))

    r_M = max(1, ⌊8/M⌋) replicates per size; with so few systems the exponent is rough (a = -1/2 is
    expected) and its standard error large:

    >>> print(out["exponent"].values.round(2), out["exponent_stderr"].values.round(2))
    [-0.38] [0.28]
    """
    beta = check_positive("beta", beta)
    n = check_positive_int("n_particles", n_particles, minimum=3)
    times = as_times(times, "times")
    ms = np.array(sorted({check_positive_int("sizes entry", m, minimum=2) for m in sizes}))
    if ms.size < 2:
        raise ValueError(f"sizes must hold at least two distinct ensemble sizes, got {list(sizes)!r}")
    budget = int(ms.max()) if budget is None else check_positive_int("budget", budget)
    seed = check_positive_int("seed", seed, minimum=0)
    replicates = np.maximum(1, budget // ms)
    blocks = [(int(m), j) for m, r in zip(ms, replicates) for j in range(int(r))]
    theta0 = np.concatenate([initial_angles(np.random.SeedSequence((seed, m, j)), m, n) for m, j in blocks])
    positions = simulate_usa(beta, theta0, times, rtol=rtol, atol=atol)["positions"].values
    norm_sq = np.zeros((ms.size, times.size))
    stderr_sq = np.zeros((ms.size, times.size))
    start = 0
    for m, j in blocks:
        est = bbgky_estimates(positions[start:start + m], beta, times, max_wavenumber=max_wavenumber)
        i = int(np.searchsorted(ms, m))
        norm_sq[i] += est["residual_norm"].values ** 2 / replicates[i]
        stderr_sq[i] += est["residual_norm_stderr"].values ** 2 / replicates[i]
        start += m
    rms = np.sqrt(norm_sq)
    exponent, exponent_stderr = _weighted_slope(np.log(ms), np.log(rms[:, 1:]), replicates.astype(float))
    fitted = times[1:]
    coords = {
        "systems": ("systems", ms, {"long_name": "ensemble size M"}),
        "time": ("time", times, {"long_name": "time", "units": "1"}),
        "fit_time": ("fit_time", fitted, {"long_name": "times of the fit", "units": "1"}),
    }
    data = {
        "residual_norm": (("systems", "time"), rms, {"long_name": "root mean square over replicates of R(t)"}),
        "residual_norm_stderr": (("systems", "time"), np.sqrt(stderr_sq),
                                 {"long_name": "root mean square of (sum_k stderr(r_k)^2)^(1/2)"}),
        "replicates": ("systems", replicates, {"long_name": "independent ensembles of this size"}),
        "exponent": ("fit_time", exponent, {"long_name": "fitted a in R_rms ~ c M^a"}),
        "exponent_stderr": ("fit_time", exponent_stderr, {"long_name": "standard error of a"}),
    }
    attrs = {
        "beta": beta, "n_particles": int(n), "max_wavenumber": int(max_wavenumber), "budget": int(budget),
        "seed": int(seed), "seed_rule": f"replicate j of size M: SeedSequence((seed, M, j)); {SEED_RULE}",
        "norm": "R(t) = (sum_{k=1}^K |r_k|^2)^(1/2)",
        "fit": "weighted least squares of log R_rms on log M, weights = replicates",
        "meanfield_version": __version__,
    }
    return xr.Dataset(data, coords=coords, attrs=attrs)


def _weighted_slope(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Slope of y (N, T) on x (N,) by weighted least squares and its standard error (N - 2 degrees of freedom)."""
    xc = x - np.sum(w * x) / w.sum()
    sxx = np.sum(w * xc**2)
    yc = y - np.sum(w[:, None] * y, axis=0) / w.sum()
    slope = np.sum((w * xc)[:, None] * yc, axis=0) / sxx
    if x.size < 3:
        return slope, np.full(slope.shape, np.nan)
    residual = yc - slope * xc[:, None]
    return slope, np.sqrt(np.sum(w[:, None] * residual**2, axis=0) / (x.size - 2) / sxx)

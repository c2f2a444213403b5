r"""Closures of the BBGKY equation (8.1) of paper 2 (Problem 4), the closed equation, and its distance to ensembles.

A closure is an approximation g ≈ G[ψ] of the three-particle term of (8.1). With it the pair law solves the
closed, nonlocal continuity equation

    ∂_t ψ + ∂_x(v[ψ] ψ) = 0,  v[ψ](x) = (2/(βn)) h_β'(x) - (2(n-2)/(βn)) G[ψ](x),  ψ(0) = 1/(2π),

on T, h_β(u) = e^{β cos u}. ψ = 1/(2π) is not stationary: G[1/(2π)] = 0 for the closures below, and
v = (2/(βn)) h_β' ≠ 0 pulls pairs together from t = 0 (the finite-n term).

A closure is a callable ``closure(psi) -> g`` on node values ψ(x_j), x_j = 2πj/N, along the last axis, returning
g on the same nodes. Both closures here are written through the conditional law p(y | x) of θ_3 - θ_1 given
θ_2 - θ_1 = x, g(x) = ∫ -h_β'(y) p(y | x) dy, and evaluated by FFT correlations on the nodes (trapezoidal rule,
spectrally accurate for smooth ψ):

* Kirkwood superposition, ρ^(3) ≈ ρ^(2) ρ^(2) ρ^(2) / (ρ^(1))³: p(y | x) = ψ(y) ψ(y - x) / ∫ ψ(y') ψ(y' - x) dy'.
* Cluster mixture: θ_3 is correlated with θ_1 or with θ_2, with equal probability, as a pair is:
  p(y | x) = [ψ(y) + ψ(y - x)] / (2 ∫ψ), so g(x) = -[∫ h_β' ψ + ∫ h_β'(y) ψ(y - x) dy] / (2 ∫ψ), which for
  even ψ is -(h_β' * ψ)(x)/2 (linear in ψ).

The closed equation is solved by a circle scheme of :mod:`solvers` with a :class:`solvers.CallableVelocity`
and :func:`solvers.evolve`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

import solvers

from ..._validate import as_times, check_positive, check_positive_int
from ..._version import __version__
from ._bbgky import hprime

__all__ = ["ClusterClosure", "KirkwoodClosure", "bbgky_closure_distance", "bbgky_closed_equation"]

SCHEMES = {"finite_volume": solvers.CircleFiniteVolume, "spectral": solvers.CircleSpectral}


def _nodes(n_grid: int) -> np.ndarray:
    return 2 * np.pi * np.arange(n_grid) / n_grid


def _correlation(q: np.ndarray, psi: np.ndarray) -> np.ndarray:
    """c(x_j) = ∫ q(y) ψ(y - x_j) dy ≈ h Σ_m q(x_m) ψ(x_m - x_j) on the nodes (FFT, last axis), h = 2π/N."""
    n_grid = psi.shape[-1]
    return (2 * np.pi / n_grid) * np.fft.irfft(np.fft.rfft(q) * np.conj(np.fft.rfft(psi)), n=n_grid)


def _check_psi(psi: Any) -> np.ndarray:
    psi = np.asarray(psi, dtype=float)
    if psi.ndim < 1 or psi.shape[-1] < 4:
        raise ValueError(f"psi must hold node values on at least 4 nodes along its last axis, got shape {psi.shape}")
    if not np.all(np.isfinite(psi)):
        raise ValueError("psi must be finite")
    return psi


@dataclass(frozen=True)
class KirkwoodClosure:
    r"""Kirkwood superposition closure of (8.1): ρ^(3)(θ_1, θ_2, θ_3) ≈ ρ^(2)_{12} ρ^(2)_{13} ρ^(2)_{23} / (ρ^(1))³.

    With ρ^(2)(a, b) = ψ(b - a)/(2π), ρ^(1) = 1/(2π) and ψ even, the conditional density of θ_3 given θ_1 = 0,
    θ_2 = x is ∝ ψ(y) ψ(y - x), so

        G[ψ](x) = ∫ -h_β'(y) ψ(y) ψ(y - x) dy / ∫ ψ(y) ψ(y - x) dy.

    G is odd for even ψ, G[1/(2π)] = 0 (h_β' has zero mean), and G[ψ](x) is an average of -h_β' over a
    probability density, so |G| ≤ max|h_β'|. To first order about the uniform law, ψ = (1 + εf)/(2π), the
    superposition is exact for the conditional law (p(y | x) = (1 + ε f(y) + ε f(y - x))/(2π) + O(ε²)); at
    x = 0 it gives p(y | 0) ∝ ψ(y)², too concentrated when 1 and 2 sit in one cluster (the law is ψ there).

    Parameters
    ----------
    beta : float
        β > 0.

    Raises
    ------
    solvers.UnevaluableState
        From ``__call__`` where ∫ ψ(y) ψ(y - x) dy ≤ 0 (ψ is not a density; a trial stage overshot).

    Notes
    -----
    .. math::

        G[\psi](x) = \frac{\int_{\mathbb T} -h_\beta'(y)\, \psi(y)\, \psi(y - x)\, dy}
                           {\int_{\mathbb T} \psi(y)\, \psi(y - x)\, dy},
        \qquad h_\beta(u) = e^{\beta\cos u},

    evaluated on the nodes x_j = 2πj/N of ψ's last axis by FFT correlations (trapezoidal rule).
    Problem 4 of paper 2 asks for a closure of (8.1) that proves the convergence of ψ to a Dirac mass.

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.open_problems import KirkwoodClosure
    >>> closure = KirkwoodClosure(2.0)
    >>> x = 2 * np.pi * np.arange(16) / 16
    >>> bool(np.allclose(closure(np.full(16, 1 / (2 * np.pi))), 0.0, atol=1e-14))  # G[1/(2π)] = 0
    True

    For an even density G is odd, and bounded by max|h_β'| (G is a weighted average of -h_β'):

    >>> psi = np.exp(np.cos(x)) / (2 * np.pi * np.mean(np.exp(np.cos(x))))
    >>> g = closure(psi)
    >>> u = np.linspace(0.0, np.pi, 10001)
    >>> bound = np.abs(2 * np.sin(u) * np.exp(2 * np.cos(u))).max()  # max|h_β'|, β = 2: 5.956
    >>> bool(np.allclose(g, -np.roll(g[::-1], 1))), bool(np.abs(g).max() <= bound)
    (True, True)
    >>> print(g[1:5].round(6))
    [0.810199 1.45055  1.807058 1.847989]
    """

    beta: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "beta", check_positive("beta", self.beta))

    def __call__(self, psi: np.ndarray) -> np.ndarray:
        """G[ψ] on the nodes x_j = 2πj/N of ψ's last axis."""
        psi = _check_psi(psi)
        weight = -hprime(_nodes(psi.shape[-1]), self.beta)
        denominator = _correlation(psi, psi)
        if not np.all(denominator > 0):
            raise solvers.UnevaluableState(float(denominator.min()))
        return _correlation(weight * psi, psi) / denominator


@dataclass(frozen=True)
class ClusterClosure:
    r"""Cluster-mixture closure of (8.1): θ_3 sits, as a pair, with θ_1 or with θ_2, with probability 1/2 each.

    ρ^(3)(θ_1, θ_2, θ_3) ≈ ρ^(2)(θ_1, θ_2) [ρ^(2)(θ_1, θ_3) + ρ^(2)(θ_2, θ_3)] / (2ρ^(1)), i.e.
    p(y | x) = [ψ(y) + ψ(y - x)] / (2∫ψ), and

        G[ψ](x) = -[∫ h_β'(y) ψ(y) dy + ∫ h_β'(y) ψ(y - x) dy] / (2∫ψ) = -(h_β' * ψ)(x) / 2   (ψ even, ∫ψ = 1).

    It keeps the marginal ∫ ρ^(3) dθ_3 = ρ^(2)(θ_1, θ_2) exact, is exact at x = 0 when 1 and 2 are one cluster
    (p(y | 0) = ψ(y)), and makes (8.1) quadratic: v = (2/(βn)) h_β' + ((n-2)/(βn)) (h_β' * ψ), the mean-field
    velocity of ψ itself plus the pair term. About the uniform law it halves the first-order correlation.

    Parameters
    ----------
    beta : float
        β > 0.

    Raises
    ------
    solvers.UnevaluableState
        From ``__call__`` where ∫ψ ≤ 0 (ψ is not a density; a trial stage overshot).

    Notes
    -----
    .. math::

        G[\psi](x) = -\frac{\int h_\beta'(y)\, \psi(y)\, dy + \int h_\beta'(y)\, \psi(y - x)\, dy}
                            {2 \int \psi}
        = -\tfrac12 (h_\beta' * \psi)(x) \quad (\psi \text{ even}, \textstyle\int\psi = 1),

    evaluated on the nodes x_j = 2πj/N of ψ's last axis by FFT correlations (trapezoidal rule).

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.open_problems import ClusterClosure
    >>> closure = ClusterClosure(2.0)
    >>> x = 2 * np.pi * np.arange(16) / 16
    >>> psi = np.exp(np.cos(x)) / (2 * np.pi * np.mean(np.exp(np.cos(x))))

    For this even density, G = -(h_β' * ψ)/2, with h_β'(u) = -β sin u e^{β cos u}:

    >>> convolution = [2 * np.pi * np.mean(-2.0 * np.sin(xj - x) * np.exp(2.0 * np.cos(xj - x)) * psi)
    ...                for xj in x]
    >>> bool(np.allclose(closure(psi), -np.array(convolution) / 2))
    True
    >>> bool(np.allclose(closure(np.full(16, 1 / (2 * np.pi))), 0.0, atol=1e-14))  # G[1/(2π)] = 0
    True
    """

    beta: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "beta", check_positive("beta", self.beta))

    def __call__(self, psi: np.ndarray) -> np.ndarray:
        """G[ψ] on the nodes x_j = 2πj/N of ψ's last axis."""
        psi = _check_psi(psi)
        n_grid = psi.shape[-1]
        weight = hprime(_nodes(n_grid), self.beta)
        h = 2 * np.pi / n_grid
        mass = h * psi.sum(axis=-1, keepdims=True)
        if not np.all(mass > 0):
            raise solvers.UnevaluableState(float(mass.min()))
        return -(h * (weight * psi).sum(axis=-1, keepdims=True) + _correlation(weight, psi)) / (2 * mass)


def bbgky_closed_equation(
    closure: Callable[[np.ndarray], np.ndarray],
    beta: float,
    n_particles: int,
    times: Sequence[float] | np.ndarray,
    *,
    grid_size: int = 512,
    method: str = "finite_volume",
    max_wavenumber: int = 16,
    **scheme_options: Any,
) -> xr.Dataset:
    r"""Integrate the closed equation ∂_t ψ + ∂_x(v[ψ] ψ) = 0 from ψ(0) = 1/(2π) (module docstring).

    Parameters
    ----------
    closure : callable
        ``closure(psi) -> g`` on node values (last axis, x_j = 2πj/N), e.g. :class:`KirkwoodClosure`.
        A closure with a ``beta`` attribute must have the same β.
    beta : float
        β > 0 of h_β.
    n_particles : int
        n ≥ 3 in the coefficients 2/(βn) and 2(n-2)/(βn).
    times : array_like
        Output times, times[0] the initial time of ψ = 1/(2π).
    grid_size : int, default 512
        N ≥ 8 nodes (cells) of the :class:`solvers.CircleGrid`.
    method : {"finite_volume", "spectral"}
        :class:`solvers.CircleFiniteVolume` (positivity preserving, the default: ψ concentrates) or
        :class:`solvers.CircleSpectral`.
    max_wavenumber : int, default 16
        K ≥ 1 of the output ``psi_hat``.
    **scheme_options
        Passed to the scheme (e.g. ``cfl``, ``limiter``; ``rtol``, ``atol`` for spectral).

    Returns
    -------
    xarray.Dataset
        ``psi`` (time, x) (cell averages for finite volume, node values for spectral), ``psi_hat`` (time,
        wavenumber) = (1/N) Σ_j ψ_j e^{-ikx_j}, divided by sinc(kh/2) for cell averages (then it estimates the
        coefficients of ψ itself), ``mass`` ∫ψ and ``asymmetry`` max_x |ψ(x) - ψ(-x)| (time); attrs with the
        closure, β, n, the method, N, steps and ``success``/``message`` (a run stopped early returns the times
        it reached).

    Raises
    ------
    ValueError
        β ≤ 0, n < 3, N < 8, K < 1, an unknown method, a closure whose β differs, bad times.
    TypeError
        A closure that is not callable.

    Notes
    -----
    The closed equation (paper 2, (8.1) with g ≈ G[ψ], Problem 4):

    .. math::

        \partial_t \psi + \partial_x\big(v[\psi]\, \psi\big) = 0, \qquad
        v[\psi](x) = \frac{2}{\beta n} h_\beta'(x) - \frac{2(n-2)}{\beta n} G[\psi](x), \qquad
        \psi(0) = \frac{1}{2\pi}.

    ψ = 1/(2π) is not stationary: G[1/(2π)] = 0 for the closures here, and v = (2/(βn)) h_β' ≠ 0
    pulls pairs together from t = 0.

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.open_problems import KirkwoodClosure, bbgky_closed_equation
    >>> closed = bbgky_closed_equation(KirkwoodClosure(2.0), 2.0, 5, [0.0, 0.5, 1.0], grid_size=32,
    ...                                max_wavenumber=4)
    >>> closed.attrs["success"], closed["psi"].shape
    (1, (3, 32))

    Mass and evenness are kept; the correlations ψ̂_k (k ≥ 1) grow from 0, ψ̂_0 = 1/(2π):

    >>> print(closed["mass"].values, bool(closed["asymmetry"].max() < 1e-14))
    [1. 1. 1.] True
    >>> print(closed["psi_hat"].values[-1, :3].round(6), f"{1 / (2 * np.pi):.6f}")
    [0.159155 0.039657 0.081889] 0.159155
    """
    beta = check_positive("beta", beta)
    n = check_positive_int("n_particles", n_particles, minimum=3)
    times = as_times(times, "times")
    n_grid = check_positive_int("grid_size", grid_size, minimum=8)
    k_max = check_positive_int("max_wavenumber", max_wavenumber)
    if method not in SCHEMES:
        raise ValueError(f"method must be one of {sorted(SCHEMES)}, got {method!r}")
    if not callable(closure):
        raise TypeError(f"closure must be a callable psi -> g, got {closure!r}")
    closure_beta = getattr(closure, "beta", beta)
    if closure_beta != beta:
        raise ValueError(f"closure.beta = {closure_beta!r} differs from beta = {beta!r}")
    grid = solvers.CircleGrid(n_grid)
    pair = (2 / (beta * n)) * hprime(grid.theta, beta)
    coupling = 2 * (n - 2) / (beta * n)

    def velocity(state: np.ndarray) -> np.ndarray:
        return pair - coupling * np.asarray(closure(state), dtype=float)

    scheme = SCHEMES[method](grid, solvers.CallableVelocity(velocity), **scheme_options)
    run = solvers.evolve(scheme, np.full((1, n_grid), 1 / (2 * np.pi)), times)
    psi = run.y[:, 0]
    k = np.arange(k_max + 1)
    psi_hat = np.fft.rfft(psi, axis=-1)[:, : k_max + 1].real / n_grid
    if method == "finite_volume":
        psi_hat = psi_hat / np.sinc(k / n_grid)                         # cell averages: × sinc(kh/2)
    mirrored = np.roll(psi[:, ::-1], 1, axis=-1)                        # ψ(-x_j) = ψ(x_{N-j})
    coords = {
        "time": ("time", run.t, {"long_name": "time", "units": "1"}),
        "wavenumber": ("wavenumber", k, {"long_name": "Fourier wavenumber k"}),
        "x": ("x", grid.theta, {"long_name": "separation x = theta_2 - theta_1", "units": "rad"}),
    }
    data = {
        "psi": (("time", "x"), psi, {"long_name": "psi(t, x) of the closed equation", "units": "1/rad"}),
        "psi_hat": (("time", "wavenumber"), psi_hat, {"long_name": "Fourier coefficients of psi"}),
        "mass": ("time", grid.spacing * psi.sum(axis=-1), {"long_name": "int psi dx"}),
        "asymmetry": ("time", np.abs(psi - mirrored).max(axis=-1), {"long_name": "max |psi(x) - psi(-x)|"}),
    }
    attrs = {
        "closure": type(closure).__name__, "beta": beta, "n_particles": int(n), "method": method,
        "grid_size": int(n_grid), "max_wavenumber": int(k_max),
        "equation": "d_t psi + d_x(v psi) = 0, v = (2/(beta n)) h' - (2(n-2)/(beta n)) G[psi], psi(0) = 1/(2 pi)",
        "fourier_convention": "psi_hat_k = (1/2pi) int psi exp(-ikx) dx",
        "n_steps": int(run.n_steps), "n_rejected": int(run.n_rejected), "success": int(run.success),
        "message": run.message, "meanfield_version": __version__,
    }
    return xr.Dataset(data, coords=coords, attrs=attrs)


def bbgky_closure_distance(closed: xr.Dataset, ensemble: xr.Dataset) -> xr.Dataset:
    r"""L² distance on T between the closed ψ and the ensemble ψ, through their Fourier coefficients k ≤ K.

        d(t) = ‖P_K(ψ_closed - ψ_ensemble)‖_{L²(T)} = (4π Σ_{k=1}^K |ψ̂^closed_k - ψ̂^ensemble_k|²)^{1/2},

    P_K the projection on |k| ≤ K (both laws have ψ̂_0 = 1/(2π)), K the smaller of the two datasets' ranges, at
    the ensemble's times that the closed run reached (matched to 1e-9). The ensemble's noise adds to d²
    on average ``noise`` ² = 4π Σ_k stderr(ψ̂_k)²; ``relative`` = d / ‖P_K(ψ_ensemble - 1/(2π))‖ (NaN where
    that is 0).

    Parameters
    ----------
    closed : xarray.Dataset
        A result of :func:`bbgky_closed_equation` (``psi_hat`` over time and wavenumber).
    ensemble : xarray.Dataset
        A result of :func:`bbgky_estimates` or :func:`bbgky_study` (``psi_hat`` and ``psi_hat_stderr``).

    Returns
    -------
    xarray.Dataset
        ``distance``, ``noise``, ``relative`` over ``time``; attrs ``max_wavenumber`` (K) and ``closure``.

    Raises
    ------
    ValueError
        The datasets share no output time.

    Notes
    -----
    .. math::

        d(t) = \big\| P_K(\psi_{\mathrm{closed}} - \psi_{\mathrm{ensemble}}) \big\|_{L^2(\mathbb T)}
        = \Big(4\pi \sum_{k=1}^K |\hat\psi^{\mathrm{closed}}_k - \hat\psi^{\mathrm{ensemble}}_k|^2\Big)^{1/2},

    by Parseval with f̂_k = (1/2π) ∫ f e^{-ikx} dx and ψ̂_{-k} = conj(ψ̂_k).

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.open_problems import (ClusterClosure, bbgky_closed_equation,
    ...                                              bbgky_closure_distance, bbgky_study)
    >>> times = [0.0, 0.5, 1.0]
    >>> closed = bbgky_closed_equation(ClusterClosure(2.0), 2.0, 5, times, grid_size=32, max_wavenumber=4)
    >>> ensemble = bbgky_study(2.0, 5, 64, times, max_wavenumber=4, seed=1, grid_size=16)
    >>> out = bbgky_closure_distance(closed, ensemble)
    >>> out.attrs["max_wavenumber"], out["distance"].dims
    (4, ('time',))
    >>> print(out["distance"].values.round(4), out["noise"].values.round(4))
    [0.0342 0.0922 0.1086] [0.0311 0.0523 0.0574]

    The distance of a run to itself is 0:

    >>> itself = closed.assign(psi_hat_stderr=0 * closed["psi_hat"])
    >>> print(bbgky_closure_distance(closed, itself)["distance"].values)
    [0. 0. 0.]
    """
    k_max = int(min(closed.sizes["wavenumber"], ensemble.sizes["wavenumber"])) - 1
    times = [t for t in ensemble["time"].values if np.any(np.abs(closed["time"].values - t) <= 1e-9)]
    if not times:
        raise ValueError("closed and ensemble share no output time")
    ks = np.arange(1, k_max + 1)
    a = closed["psi_hat"].sel(time=times, method="nearest").sel(wavenumber=ks).values
    b = ensemble["psi_hat"].sel(time=times, wavenumber=ks).values
    se = ensemble["psi_hat_stderr"].sel(time=times, wavenumber=ks).values
    distance = np.sqrt(4 * np.pi * np.sum((a - b) ** 2, axis=-1))
    scale = np.sqrt(4 * np.pi * np.sum(b**2, axis=-1))
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = np.where(scale > 0, distance / scale, np.nan)
    data = {
        "distance": ("time", distance, {"long_name": "||P_K(psi_closed - psi_ensemble)||_L2"}),
        "noise": ("time", np.sqrt(4 * np.pi * np.sum(se**2, axis=-1)),
                  {"long_name": "Monte-Carlo size of the distance at zero difference"}),
        "relative": ("time", relative, {"long_name": "distance / ||P_K(psi_ensemble - 1/2pi)||_L2"}),
    }
    return xr.Dataset(data, coords={"time": ("time", np.asarray(times), {"long_name": "time"})},
                      attrs={"max_wavenumber": k_max, "closure": closed.attrs.get("closure", "")})

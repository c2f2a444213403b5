r"""Pseudo-arclength continuation of zonal stationary states of noisy self-attention in the noise σ.

The branch {(y, σ) : R(y, σ) = 0} of the self-consistency equation (see
:mod:`meanfield.studies.noisy._stationary_problem`) is followed in the scaled
unknowns z = (y, σ/σ_c). From a point z_k with unit tangent τ_k, the predictor
z_k + h τ_k is corrected by damped Newton on the bordered system

    R(y, σ) = 0,     τ_k · (z - z_k - h τ_k) = 0,

and the next tangent solves [∂_y R, σ_c ∂_σ R; τ_kᵀ] τ = (0, …, 0, 1),
normalised; it keeps the orientation through folds, where ∂_y R is singular but
the bordered matrix is not. A fold is a sign change of the σ-component of τ;
it is located by maximising or minimising σ over the branch parametrised by
y_1 (Brent's bounded method, bordered Newton with the row e_1).
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import xarray as xr
from scipy.optimize import minimize_scalar

from ...models._self_attention import SelfAttention
from ..._validate import as_real, check_positive, check_positive_int
from ..._version import __version__
from ._noisy_transition import landau_coefficient
from ._stationary import MAX_NODES, MIN_NODES, TOLERANCE, check_model, initial_moments, newton, state_scalars
from ._stationary_problem import TAIL_TOLERANCE, StationaryProblem, degrees_needed

__all__ = ["continuation"]

logger = logging.getLogger(__name__)

#: Newton iterations of one corrector; a corrector needing more halves the step
CORRECTOR_ITERATIONS = 10
#: step growth (corrector converged in ≤ 3 iterations) and shrink factors
GROW, SHRINK = 1.5, 0.5
#: relative precision of the fold location in y_1
FOLD_XTOL = 1e-10


def _tangent(problem: StationaryProblem, y: np.ndarray, sigma: float, scale: float,
             previous: np.ndarray) -> np.ndarray:
    jac, d_sigma = problem.jacobian(y, sigma)
    matrix = np.block([[jac, d_sigma[:, None] * scale], [previous[None, :]]])
    rhs = np.zeros(problem.degrees + 1)
    rhs[-1] = 1.0
    tangent = np.linalg.solve(matrix, rhs)
    return tangent / np.linalg.norm(tangent)


def _refine_nodes(problem: StationaryProblem, y: np.ndarray, sigma: float, fixed: bool) -> StationaryProblem:
    n = problem.nodes
    while not fixed and problem.tail(y, sigma) > TAIL_TOLERANCE and n < MAX_NODES:
        n *= 2
        problem = StationaryProblem(problem.beta, problem.normalized, problem.d, problem.degrees, n)
    return problem


def _locate_fold(problem: StationaryProblem, left: tuple, right: tuple, scale: float,
                 kind: str, tol: float) -> tuple[float, float, np.ndarray] | None:
    """(σ, y_1, y) at the extremum of σ over y_1 between two branch points (y, σ)."""
    (y_left, s_left), (y_right, s_right) = left, right
    a_lo, a_hi = sorted((y_left[0], y_right[0]))
    unit = np.zeros(problem.degrees)
    unit[0] = 1.0
    cache: dict[float, tuple[float, np.ndarray]] = {}

    def sigma_at(a: float) -> float:
        theta = (a - y_left[0]) / (y_right[0] - y_left[0])
        guess_y, guess_s = (1 - theta) * y_left + theta * y_right, (1 - theta) * s_left + theta * s_right
        result = newton(problem, guess_y, guess_s, border=(unit, 0.0, a, scale), tol=tol)
        if not result.success:
            return np.nan
        cache[a] = (result.sigma, result.y)
        return result.sigma if kind == "minimum" else -result.sigma

    found = minimize_scalar(sigma_at, bounds=(a_lo, a_hi), method="bounded",
                            options={"xatol": FOLD_XTOL * max(1.0, abs(a_hi))})
    if not np.isfinite(found.fun) or found.x not in cache:
        return None
    sigma, y = cache[found.x]
    return sigma, float(found.x), y


def continuation(
    model: SelfAttention,
    d: int = 2,
    noise_range: tuple[float, float] = (0.05, 5.0),
    *,
    start: Any = "bifurcation",
    step: float = 0.05,
    max_step: float = 0.3,
    min_step: float = 1e-7,
    max_points: int = 400,
    max_order: float = 0.995,
    degrees: int | None = None,
    nodes: int | None = None,
    tol: float = TOLERANCE,
) -> xr.Dataset:
    r"""Follow a branch of zonal stationary states of noisy self-attention in σ, through folds.

    Stationary states solve ρ = e^{Ψ[ρ]/σ}/Z (see :func:`stationary_state`,
    paper 2 arXiv:2312.10794 Problem 7). The branch is followed by
    pseudo-arclength continuation in z = (y, σ/σ_c) (y: Gegenbauer moments),
    so folds — where the branch turns back in σ — are passed, detected (sign
    change of dσ/ds) and located (extremum of σ along the branch).

    ``start="bifurcation"`` starts at the uniform state's bifurcation point
    σ_c = κ_1 (λ_1 = 0; :func:`critical_noise`) and switches onto the
    branch along the degree-1 eigenvector q_1 = √d t: the first point has
    y_1 = ``step`` and σ predicted by σ_c + s y_1² (:func:`landau_coefficient`),
    corrected by Newton with y_1 fixed. The pitchfork is symmetric (y → -y
    reflects the pole); the branch with y_1 > 0 is followed. The first
    recorded point is the bifurcation point itself (uniform, r = 0).

    Parameters
    ----------
    model : SelfAttention
        β and SA/USA; ``model.noise`` is ignored (σ is the branch parameter),
        except as the σ of a ``start`` given as moments or a Density.
    d : int
        Ambient dimension ≥ 2.
    noise_range : (float, float)
        0 < σ_min < σ_max: the continuation stops when σ leaves it.
    start : "bifurcation", Dataset, array or Density
        Where to start: the bifurcation point, a :func:`stationary_state`
        result (its σ), or moments / a density at σ = ``model.noise``; from
        such a state the branch is followed towards decreasing σ first.
    step, max_step, min_step : float
        Initial, largest and smallest arclength step in z (σ measured in units
        of σ_c); a step grows by 1.5 after a corrector of ≤ 3 Newton iterations
        and halves after a failed one.
    max_points : int
        Most branch points.
    max_order : float
        Stop once the order parameter r exceeds this (r → 1 as σ → 0).
    degrees, nodes : int, optional
        Moments L (default: the truncation rule at σ_min) and quadrature nodes
        (default: doubled as the branch concentrates, see :func:`stationary_state`).
    tol : float
        Newton tolerance on max_l |R_l| for every point.

    Returns
    -------
    xarray.Dataset
        Over ``point``: ``noise`` σ, ``order_parameter`` r, ``free_energy``
        (USA: F - F[uniform]; SA: NaN), ``entropy``, ``leading_eigenvalue`` (of
        the zonal linearised dynamics), ``stable``, ``residual``,
        ``iterations``, ``tangent_noise`` (dσ/ds in units of σ_c), ``moment``
        (point, degree). Over ``fold``: ``fold_noise``, ``fold_order_parameter``,
        ``fold_kind`` ("maximum"/"minimum" of σ). attrs: the model, d,
        ``critical_noise``, ``landau_coefficient``, ``degrees``, ``nodes``,
        ``message`` (why it stopped), method and version.

    Raises
    ------
    TypeError, ValueError
        A model other than SelfAttention, d < 2, a noise range that is not
        0 < σ_min < σ_max, bad step sizes.

    Examples
    --------
    >>> import meanfield as mf
    >>> ds = mf.continuation(mf.SelfAttention(4.0, normalized=False), d=2, noise_range=(2.0, 5.0))
    >>> ds.sizes["fold"], bool(ds.fold_noise[0] > ds.attrs["critical_noise"])
    (1, True)
    """
    d = check_model(model, d)
    lo, hi = _check_range(noise_range)
    step = check_positive("step", step)
    max_step = check_positive("max_step", max_step)
    min_step = check_positive("min_step", min_step)
    if not min_step <= step <= max_step:
        raise ValueError(f"step sizes must satisfy min_step <= step <= max_step, got {min_step}, {step}, {max_step}")
    max_points = check_positive_int("max_points", max_points, minimum=2)
    max_order = as_real("max_order", max_order)
    if not 0 < max_order < 1:
        raise ValueError(f"max_order must lie in (0, 1), got {max_order}")
    tol = check_positive("tol", tol)
    size = degrees_needed(model.beta, d, model.normalized, lo) if degrees is None else check_positive_int(
        "degrees", degrees, minimum=2)
    n = max(MIN_NODES, 2 * size) if nodes is None else check_positive_int("nodes", nodes, minimum=8)
    problem = StationaryProblem(model.beta, model.normalized, d, size, n)
    sigma_c = problem.critical_noise
    scale = sigma_c

    points: list[tuple[np.ndarray, float, int, float, float]] = []  # (y, σ, iterations, residual, τ_σ)
    if isinstance(start, str) and start == "bifurcation":
        if not lo <= sigma_c <= hi:
            raise ValueError(f"noise_range {noise_range} must contain the bifurcation point sigma_c = {sigma_c:.6g}")
        points.append((np.zeros(size), sigma_c, 0, 0.0, 0.0))
        unit = np.zeros(size)
        unit[0] = 1.0
        s = landau_coefficient(model, d) / d
        first = newton(problem, step * unit, sigma_c + s * step**2, border=(unit, 0.0, step, scale), tol=tol)
        if not first.success:
            raise RuntimeError(f"continuation: no branch point at y_1 = {step} ({first.message}); try a smaller step")
        secant = np.append(first.y, (first.sigma - sigma_c) / scale)
        tangent = _tangent(problem, first.y, first.sigma, scale, secant / np.linalg.norm(secant))
        points.append((first.y, first.sigma, first.iterations, first.residual, float(tangent[-1])))
    else:
        if isinstance(start, xr.Dataset):
            sigma0 = float(start["noise"]) if "noise" in start.variables else float(start.attrs["noise"])
        else:
            sigma0 = check_positive("model.noise", model.noise)
        if not lo <= sigma0 <= hi:
            raise ValueError(f"noise_range {noise_range} must contain the start's noise {sigma0:.6g}")
        first = newton(problem, initial_moments(problem, start, sigma0), sigma0, tol=tol)
        if not first.success:
            raise RuntimeError(f"continuation: the start does not converge at sigma = {sigma0} ({first.message})")
        jac, d_sigma = problem.jacobian(first.y, sigma0)
        null = np.linalg.svd(np.hstack([jac, d_sigma[:, None] * scale]))[2][-1]
        tangent = null if null[-1] < 0 else -null
        points.append((first.y, first.sigma, first.iterations, first.residual, float(tangent[-1])))

    message = f"reached max_points = {max_points}"
    h = step
    while len(points) < max_points:
        y, sigma = points[-1][0], points[-1][1]
        z = np.append(y, sigma / scale)
        predicted = z + h * tangent
        border = (tangent[:-1], tangent[-1], float(np.dot(tangent, predicted)), scale)
        result = newton(problem, predicted[:-1], predicted[-1] * scale, border=border, tol=tol,
                        max_iter=CORRECTOR_ITERATIONS)
        if result.success:
            refined = _refine_nodes(problem, result.y, result.sigma, nodes is not None)
            if refined is not problem:
                problem = refined
                result = newton(problem, result.y, result.sigma, border=border, tol=tol)
        if not result.success:
            h *= SHRINK
            if h < min_step:
                message = f"step below min_step = {min_step} at sigma = {sigma:.6g} ({result.message})"
                break
            continue
        if not lo <= result.sigma <= hi:
            message = f"left the noise range at sigma = {result.sigma:.6g}"
            break
        tangent = _tangent(problem, result.y, result.sigma, scale, tangent)
        points.append((result.y, result.sigma, result.iterations, result.residual, float(tangent[-1])))
        if problem.order_parameter(result.y) > max_order:
            message = f"order parameter above max_order = {max_order}"
            break
        if result.iterations <= 3:
            h = min(GROW * h, max_step)
        elif result.iterations >= 6:
            h *= SHRINK
    logger.info("continuation: %d points, %s", len(points), message)
    return _branch_dataset(problem, points, model, scale, tol, message)


def _check_range(noise_range: Any) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in noise_range)
    except (TypeError, ValueError):
        raise ValueError(f"noise_range must be a pair (sigma_min, sigma_max), got {noise_range!r}") from None
    if not (np.isfinite(lo) and np.isfinite(hi) and 0 < lo < hi):
        raise ValueError(f"noise_range must satisfy 0 < sigma_min < sigma_max (finite), got {noise_range!r}")
    return lo, hi


def _branch_dataset(problem: StationaryProblem, points: list, model: SelfAttention, scale: float, tol: float,
                    message: str) -> xr.Dataset:
    ys = np.array([p[0] for p in points])
    sigmas = np.array([p[1] for p in points])
    scalars = [state_scalars(problem, y, s) for y, s in zip(ys, sigmas)]
    tangent_sigma = np.array([p[4] for p in points])
    folds = []
    for i in range(1, len(points) - 1):
        if tangent_sigma[i] * tangent_sigma[i + 1] < 0:
            kind = "maximum" if tangent_sigma[i] > 0 else "minimum"
            fold = _locate_fold(problem, (ys[i], sigmas[i]), (ys[i + 1], sigmas[i + 1]), scale, kind, tol)
            if fold is not None:
                folds.append((fold[0], abs(fold[1]) / np.sqrt(problem.d), kind))
    data = {
        "noise": ("point", sigmas, {"long_name": "noise σ"}),
        "moment": (("point", "degree"), ys, {"long_name": "y_l = ∫ ρ q_l dσ"}),
        "residual": ("point", np.array([p[3] for p in points])),
        "iterations": ("point", np.array([p[2] for p in points])),
        "tangent_noise": ("point", tangent_sigma, {"long_name": "dσ/ds / σ_c along the branch"}),
        "fold_noise": ("fold", np.array([f[0] for f in folds], dtype=float)),
        "fold_order_parameter": ("fold", np.array([f[1] for f in folds], dtype=float)),
        "fold_kind": ("fold", np.array([f[2] for f in folds], dtype=str)),
    }
    for name in scalars[0]:
        data[name] = ("point", np.array([row[name] for row in scalars]))
    attrs = {
        **model.attrs,
        "d": problem.d,
        "critical_noise": problem.critical_noise,
        "landau_coefficient": landau_coefficient(model, problem.d),
        "degrees": problem.degrees,
        "nodes": problem.nodes,
        "tol": tol,
        "message": message,
        "method": "pseudo-arclength continuation in (moments, noise/critical_noise), bordered damped Newton",
        "meanfield_version": __version__,
    }
    attrs.pop("noise")
    return xr.Dataset(data, coords={"point": np.arange(len(points)), "degree": np.arange(1, problem.degrees + 1)},
                      attrs=attrs)

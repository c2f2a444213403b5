r"""Zonal stationary states of noisy self-attention by Newton's method on the self-consistency equation.

A stationary density of ∂_t ρ + div(ρ X[ρ]) = σ Δρ on S^{d-1} (paper 2,
arXiv:2312.10794, Problem 7) solves ρ = exp(Ψ[ρ]/σ)/Z with
Ψ = 𝖦_β ⋆ ρ (USA) or Ψ = β⁻¹ log Z_ρ (SA). :func:`stationary_state` solves it
for densities axisymmetric about a pole (on S¹: even in the angle from the pole)
in their Gegenbauer moments (see :mod:`meanfield.studies.noisy._stationary_problem`),
reports the order parameter, the free energy, the residual and the stability of
the state, and :func:`stationary_density` turns the result into a
:class:`~meanfield.Density` for :func:`meanfield.solve`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from ...domains._circle import Circle
from ...measures._measure import Density
from ...models._self_attention import SelfAttention
from ..._validate import check_positive, check_positive_int
from ..._version import __version__
from .._checks import require_self_attention
from ...domains._zonal import ZonalSphere
from ._stationary_problem import TAIL_TOLERANCE, StationaryProblem, degrees_needed

__all__ = ["stationary_state", "stationary_density", "NewtonResult"]

logger = logging.getLogger(__name__)

#: fewest quadrature nodes; more are taken until the density's tail is below TAIL_TOLERANCE
MIN_NODES = 64
#: most quadrature nodes the automatic refinement tries
MAX_NODES = 2048
#: Armijo constant and smallest step fraction of the damped Newton iteration
ARMIJO, MIN_DAMPING = 1e-4, 2.0**-20
#: default convergence tolerance on max_l |R_l| (moments relative to y_0 = 1)
TOLERANCE = 1e-12
#: a state is reported stable when the leading eigenvalue is below -STABILITY_MARGIN·σ
STABILITY_MARGIN = 1e-9


@dataclass
class NewtonResult:
    """Outcome of a damped Newton solve: the moments, residual norm, iterations, success and why it stopped."""

    y: np.ndarray
    sigma: float
    residual: float
    iterations: int
    success: bool
    message: str


def check_model(model: Any, d: Any) -> int:
    """The ambient dimension d ≥ 2 (int) after checking that ``model`` is a SelfAttention model."""
    require_self_attention(model, "stationary states")
    return check_positive_int("d", d, minimum=2)


def newton(problem: StationaryProblem, y0: np.ndarray, sigma: float, *, border: tuple | None = None,
           tol: float = TOLERANCE, max_iter: int = 50) -> NewtonResult:
    """Damped Newton on R(y, σ) = 0 (σ fixed), or with ``border = (a, b, c, scale)`` on the bordered
    system R(y, σ) = 0, a·y + b·σ/scale = c for the unknowns (y, σ) (continuation).

    Each step solves the linear system exactly and halves the step until
    ‖F(z + αδ)‖ ≤ (1 - 10⁻⁴ α)‖F(z)‖ (Armijo; steps that make SA's Z_ρ non-positive
    count as failures). Converged when max_l |R_l| ≤ ``tol`` (and the border
    equation to round-off).
    """
    y = np.array(y0, dtype=float)

    def equations(y: np.ndarray, s: float) -> np.ndarray:
        res = problem.residual(y, s)
        if border is None:
            return res
        a, b, c, scale = border
        return np.append(res, np.dot(a, y) + b * s / scale - c)

    values = equations(y, sigma)
    norm = float(np.max(np.abs(values))) if np.all(np.isfinite(values)) else np.inf
    for iteration in range(max_iter + 1):
        if norm <= tol:
            return NewtonResult(y, sigma, norm, iteration, True, "converged")
        if iteration == max_iter or not np.isfinite(norm):
            break
        jac, d_sigma = problem.jacobian(y, sigma)
        if border is None:
            step = np.linalg.solve(jac, -values)
            dy, ds = step, 0.0
        else:
            a, b, _, scale = border
            full = np.block([[jac, d_sigma[:, None] * scale], [np.asarray(a)[None, :], np.array([[b]])]])
            step = np.linalg.solve(full, -values)
            dy, ds = step[:-1], step[-1] * scale
        alpha = 1.0
        while alpha >= MIN_DAMPING:
            trial_y, trial_s = y + alpha * dy, sigma + alpha * ds
            trial = equations(trial_y, trial_s) if trial_s > 0 else np.full_like(values, np.nan)
            trial_norm = float(np.max(np.abs(trial))) if np.all(np.isfinite(trial)) else np.inf
            if trial_norm <= (1 - ARMIJO * alpha) * norm or trial_norm <= tol:
                break
            alpha *= 0.5
        else:
            return NewtonResult(y, sigma, norm, iteration, False, "line search failed (no decrease of the residual)")
        y, sigma, values, norm = trial_y, trial_s, trial, trial_norm
    return NewtonResult(y, sigma, norm, max_iter, False, f"no convergence in {max_iter} iterations")


def initial_moments(problem: StationaryProblem, guess: Any, sigma: float) -> np.ndarray:
    """Moments y_1..y_L of ``guess``: "clustered" (one Picard step from a point mass at the pole),
    "uniform", an array of moments, a stationary-state Dataset or a Density on a Circle/ZonalSphere."""
    size = problem.degrees
    if isinstance(guess, str):
        if guess == "uniform":
            return np.zeros(size)
        if guess == "clustered":
            return problem.point_mass() - problem.residual(problem.point_mass(), sigma)
        raise ValueError(f"guess must be 'clustered', 'uniform', moments, a Dataset or a Density, got {guess!r}")
    if isinstance(guess, xr.Dataset):
        if "moment" not in guess:
            raise ValueError("guess Dataset must carry the variable 'moment' (a result of stationary_state)")
        moments = np.asarray(guess["moment"].values, dtype=float)
    elif isinstance(guess, Density):
        moments = density_moments(guess, size)
    else:
        moments = np.asarray(guess, dtype=float)
        if moments.ndim != 1 or not np.all(np.isfinite(moments)):
            raise ValueError(f"guess moments must be a finite 1-d array, got shape {moments.shape}")
    out = np.zeros(size)
    out[: min(size, moments.size)] = moments[:size]
    return out


def density_moments(rho: Density, size: int) -> np.ndarray:
    """y_l = ∫ ρ q_l dσ, l = 1..size, of a density on a Circle (pole θ = 0) or a ZonalSphere (pole e_d)."""
    domain = rho.domain
    if isinstance(domain, Circle):
        ell = np.arange(1, size + 1)
        return np.sqrt(2.0) * np.cos(np.outer(ell, domain.theta)) @ (domain.weights * rho.values)
    if isinstance(domain, ZonalSphere):
        coefficients = domain.coefficients(rho.values) * domain.area
        out = np.zeros(size)
        out[: min(size, coefficients.size - 1)] = coefficients[1 : size + 1]
        return out
    raise TypeError(f"guess Density must live on a Circle or a ZonalSphere, got {type(domain).__name__}")


def solve_refined(model: SelfAttention, d: int, sigma: float, guess: Any, degrees: int | None, nodes: int | None,
                  tol: float, max_iter: int) -> tuple[StationaryProblem, NewtonResult]:
    """Newton on a problem with L degrees; with ``nodes=None`` the quadrature doubles until the tail is resolved."""
    size = degrees_needed(model.beta, d, model.normalized, sigma) if degrees is None else degrees
    n = max(MIN_NODES, 2 * size) if nodes is None else nodes
    problem = StationaryProblem(model.beta, model.normalized, d, size, n)
    result = newton(problem, initial_moments(problem, guess, sigma), sigma, tol=tol, max_iter=max_iter)
    while nodes is None and result.success and problem.tail(result.y, sigma) > TAIL_TOLERANCE and n < MAX_NODES:
        n *= 2
        problem = StationaryProblem(model.beta, model.normalized, d, size, n)
        done = result.iterations
        result = newton(problem, result.y, sigma, tol=tol, max_iter=max_iter)
        result.iterations += done
    return problem, result


def state_scalars(problem: StationaryProblem, y: np.ndarray, sigma: float, *, modes: int | None = None) -> dict:
    """Scalars of a solved state: order parameter, free energy, entropy, leading eigenvalue, tail."""
    modes = min(problem.nodes // 2, max(2 * problem.degrees, 16)) if modes is None else modes
    spectrum = problem.linearised_spectrum(y, sigma, modes)
    leading = float(np.max(spectrum.real))
    return {
        "order_parameter": problem.order_parameter(y),
        "free_energy": problem.free_energy(y, sigma),
        "entropy": problem.entropy(y, sigma),
        "leading_eigenvalue": leading,
        "stable": bool(leading < -STABILITY_MARGIN * sigma),
        "tail": problem.tail(y, sigma),
    }


def stationary_state(
    model: SelfAttention,
    d: int = 2,
    *,
    guess: Any = "clustered",
    degrees: int | None = None,
    nodes: int | None = None,
    tol: float = TOLERANCE,
    max_iter: int = 50,
) -> xr.Dataset:
    r"""A zonal stationary state of noisy self-attention on S^{d-1}, by Newton's method.

    Solves the self-consistency (Gibbs) equation of ∂_t ρ + div(ρ X[ρ]) = σ Δρ
    (paper 2, arXiv:2312.10794, (USA)/(SA) with noise, Problem 7),

    .. math::

        ρ = e^{Ψ[ρ]/σ} / ∫ e^{Ψ[ρ]/σ} dσ,\quad
        Ψ_{USA} = \frac1β ∫ e^{β⟨x,y⟩} ρ(y)\,dσ(y),\quad
        Ψ_{SA} = \frac1β \log ∫ e^{β⟨x,y⟩} ρ(y)\,dσ(y),

    for ρ axisymmetric about the pole e (S¹: θ = 0; S^{d-1}, d ≥ 3: e_d). With
    ρ = |S^{d-1}|⁻¹ Σ_l y_l q_l(⟨x, e⟩) (normalised Gegenbauer polynomials,
    q_1 = √d t) Funk–Hecke turns Ψ into Σ_l κ_l y_l q_l (USA; SA: its
    log(1 + β·)/β) with κ_l = c_l(β)/(β|S^{d-1}|) (USA), c_l/(β c_0) (SA); the
    unknowns are y_1, …, y_L. The κ_l decay like (β/2)^l/l!, and L is the
    smallest degree with Σ_{l>L} κ_l dim H_l/σ ≤ 1e-16 (dropping the rest
    changes ρ by a relative 1e-16).

    Newton: the exact Jacobian ∂G_l/∂y_k = Cov_ρ(q_l, g'(v) κ_k q_k)/σ, steps
    halved until the residual's max-norm decreases (Armijo), converged when
    max_l |y_l - G_l(y)| ≤ ``tol``.

    Stability: the eigenvalues of the dynamics linearised about ρ* on zonal,
    mass-zero perturbations ρ* p (Galerkin in p = q_m - ⟨q_m⟩_ρ*, m ≤ 2L, at
    least 16); ``stable`` when the leading one is < -1e-9 σ. Non-zonal
    perturbations (rotations of the pole: a zero eigenvalue) are not checked.
    At the uniform state these eigenvalues are λ_l = l(l+d-2)(κ_l - σ), the
    growth rates of :meth:`SelfAttention.growth_rate`.

    Parameters
    ----------
    model : SelfAttention
        β, SA/USA and the noise σ > 0.
    d : int
        Ambient dimension, ≥ 2 (S¹ for d = 2).
    guess : {"clustered", "uniform"}, array, Dataset or Density
        Start of the iteration: "clustered" is one fixed-point step from a
        point mass at the pole, ρ ∝ e^{Ψ[δ_e]/σ} (the concentrated branch when
        it exists); moments y_1, y_2, …; a result of this function; or a
        density on a Circle (pole θ = 0) or ZonalSphere.
    degrees : int, optional
        Number L of Gegenbauer moments (default: the truncation rule above).
    nodes : int, optional
        Quadrature nodes (default: doubled from max(64, 2L) until the density's
        coefficients of the top quarter of degrees are below 1e-11).
    tol : float
        Convergence tolerance on max_l |R_l|.
    max_iter : int
        Newton iterations allowed.

    Returns
    -------
    xarray.Dataset
        ``density`` over ``polar`` (angle from the pole, quadrature nodes),
        ``moment`` over ``degree`` (y_l), scalars ``order_parameter`` |∫ x ρ dσ|,
        ``free_energy`` (USA: F[ρ] - F[uniform], F = -E_β + σ∫ρ log ρ; SA: NaN,
        no Lyapunov functional is known), ``entropy`` ∫ρ log(ρ|S^{d-1}|),
        ``residual``, ``iterations``, ``leading_eigenvalue``, ``stable``; attrs
        with the model, d, ``success``, ``message``, the method and the version.

    Raises
    ------
    TypeError, ValueError
        A model other than SelfAttention, d < 2, noise σ = 0, a bad guess.

    Examples
    --------
    >>> import meanfield as mf

    In USA's hysteresis window at β = 4 on S¹ (σ_c = 2.4399 < σ < σ_f = 2.5835)
    the concentrated state and the uniform state are both stable:

    >>> model = mf.SelfAttention(4.0, normalized=False, noise=2.5)
    >>> ds = mf.stationary_state(model, d=2)
    >>> bool(ds.attrs["success"]), round(float(ds.order_parameter), 4), bool(ds.stable)
    (True, 0.7399, True)
    >>> bool(mf.stationary_state(model, d=2, guess="uniform").stable)
    True
    """
    d = check_model(model, d)
    sigma = check_positive("model.noise", model.noise)
    if degrees is not None:
        degrees = check_positive_int("degrees", degrees, minimum=2)
    if nodes is not None:
        nodes = check_positive_int("nodes", nodes, minimum=8)
    tol = check_positive("tol", tol)
    max_iter = check_positive_int("max_iter", max_iter)
    problem, result = solve_refined(model, d, sigma, guess, degrees, nodes, tol, max_iter)
    if not result.success:
        logger.warning("stationary_state: %s (residual %.3g)", result.message, result.residual)
    return to_dataset(problem, result, model)


def to_dataset(problem: StationaryProblem, result: NewtonResult, model: SelfAttention) -> xr.Dataset:
    """The Dataset of :func:`stationary_state` for a Newton result."""
    rho, _ = problem.density(result.y, result.sigma)
    scalars = state_scalars(problem, result.y, result.sigma)
    data = {
        "density": ("polar", rho, {"long_name": "stationary density w.r.t. the area measure"}),
        "moment": ("degree", result.y, {"long_name": "y_l = ∫ ρ q_l dσ (normalised Gegenbauer moments)"}),
        "residual": ((), result.residual),
        "iterations": ((), result.iterations),
    }
    data.update({name: ((), value) for name, value in scalars.items()})
    attrs = {
        **model.attrs,
        "noise": result.sigma,
        "d": problem.d,
        "degrees": problem.degrees,
        "nodes": problem.nodes,
        "critical_noise": problem.critical_noise,
        "success": int(result.success),
        "message": result.message,
        "method": "damped Newton on the Gegenbauer moments of the self-consistency equation",
        "meanfield_version": __version__,
    }
    coords = {"polar": ("polar", problem.polar, {"units": "rad", "long_name": "angle from the pole"}),
              "degree": np.arange(1, problem.degrees + 1)}
    return xr.Dataset(data, coords=coords, attrs=attrs)


def stationary_density(state: xr.Dataset, domain: Circle | ZonalSphere) -> Density:
    r"""The stationary density of a :func:`stationary_state` (or continuation point) on ``domain``'s grid.

    ρ = e^{Ψ/σ}/Z is evaluated exactly at the nodes (cell averages on a
    ``nodes="cells"`` ZonalSphere) from the stored moments, with its pole at
    θ = 0 on a Circle and at e_d on a ZonalSphere, normalised to mass 1 on the grid:

    .. math::

        \rho(x) = \frac{e^{\Psi[\rho](x)/\sigma}}{\sum_j w_j\, e^{\Psi[\rho](x_j)/\sigma}},

    with w_j the domain's quadrature weights of the area measure and Ψ the potential of the state's moments
    (:func:`stationary_state`). The result is a start for :func:`meanfield.solve`, which then stays put.

    Parameters
    ----------
    state : xarray.Dataset
        A result of :func:`stationary_state`, or one point of :func:`continuation` (its ``noise`` variable
        gives σ): the variable ``moment`` and the attrs ``beta``, ``normalized``, ``d``, ``nodes`` are read.
    domain : Circle or ZonalSphere
        The grid to evaluate ρ on: a Circle for a state on S¹ (d = 2), a ZonalSphere of the state's d
        otherwise.

    Returns
    -------
    Density
        ρ on ``domain`` (values shaped like the domain's nodes, density with respect to the area measure,
        ∑_j w_j ρ_j = 1), with attrs ``name`` ("stationary_state"), ``beta`` and ``noise``.

    Raises
    ------
    TypeError, ValueError
        ``state`` without moments or attrs, a domain of another dimension.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> model = mf.SelfAttention(4.0, normalized=False, noise=2.5)
    >>> state = mf.stationary_state(model, d=2)
    >>> rho = mf.stationary_density(state, mf.Circle(64))
    >>> theta, w = rho.domain.theta, rho.domain.weights
    >>> # mass 1, peak at the pole θ = 0, and the state's order parameter |∫ e^{iθ} ρ dθ|
    >>> round(float(w @ rho.values), 12), float(theta[np.argmax(rho.values)])
    (1.0, 0.0)
    >>> bool(np.isclose(abs(np.sum(w * rho.values * np.exp(1j * theta))), float(state.order_parameter)))
    True
    >>> # the PDE leaves it where it is
    >>> run = mf.solve(model, rho, [0.0, 1.0])
    >>> float(np.abs(run.density.isel(time=1) - run.density.isel(time=0)).max()) < 1e-8
    True
    """
    if not isinstance(state, xr.Dataset) or "moment" not in state or "beta" not in state.attrs:
        raise TypeError("state must be a Dataset from stationary_state or continuation (with 'moment' and attrs)")
    d = int(state.attrs["d"])
    if isinstance(domain, Circle):
        if d != 2:
            raise ValueError(f"domain is a Circle (d = 2) but the state lives on S^{d - 1} (d = {d})")
    elif isinstance(domain, ZonalSphere):
        if domain.d != d:
            raise ValueError(f"domain is a ZonalSphere with d = {domain.d} but the state has d = {d}")
    else:
        raise TypeError(f"domain must be a Circle or a ZonalSphere, got {type(domain).__name__}")
    y = np.asarray(state["moment"].values, dtype=float)
    problem = StationaryProblem(float(state.attrs["beta"]), bool(state.attrs["normalized"]), d, y.size,
                                int(state.attrs["nodes"]))
    sigma = float(state["noise"]) if "noise" in state.variables else float(state.attrs["noise"])
    shift = float(np.max(problem.density(y, sigma)[1])) / sigma

    def values(angle: np.ndarray) -> np.ndarray:
        return np.exp(problem.potential_at(y, angle) / sigma - shift)

    if isinstance(domain, Circle):
        raw = values(np.abs(np.angle(np.exp(1j * domain.theta))))
    elif domain.nodes == "gauss":
        raw = values(domain.polar)
    else:
        raw = domain.grid.cell_averages(values)
    mass = float(np.dot(domain.weights, raw))
    return Density(domain, raw / mass, {"name": "stationary_state", "beta": problem.beta, "noise": sigma})

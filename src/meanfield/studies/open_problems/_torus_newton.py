"""The interaction energy E_β on the torus Tⁿ, its gradient and Hessian in closed form, and a damped
Newton solver for ∇E_β = 0 vectorised over many starts (paper 2, §7.2, eq. (7.4)).

    E_β(θ) = (1/(2βn²)) Σ_{i,j} e^{β cos(θ_i − θ_j)},

    ∂_i E_β = −(1/n²) Σ_j sin(θ_i − θ_j) e^{β cos(θ_i − θ_j)},

    H_ik = (1/n²) [cos(θ_i − θ_k) − β sin²(θ_i − θ_k)] e^{β cos(θ_i − θ_k)}   (k ≠ i),
    H_ii = −Σ_{k≠i} H_ik.

The USA particle dynamics on S¹ (7.1) is the gradient ascent θ̇ = n ∇E_β. Every row of H sums to zero
(H·1 = 0: E_β is invariant under the rotation θ → θ + c·1), so −H is the Laplacian of the complete graph
with edge weights H_ik, and ∇E_β·1 = 0.

Internally every quantity is carried in the units e^β/n² (``scaled``: the kernel is e^{β(cos − 1)} ≤ 1),
so that nothing overflows before the final multiplication and tolerances are relative to the largest
possible entry e^β/n² of the gradient and of the Hessian.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._validate import check_positive

__all__ = ["BETA_MAX", "NewtonResult", "newton_critical_points", "torus_energy", "torus_gradient", "torus_hessian",
           "torus_hessian_spectrum"]

BETA_MAX = 700.0
"""Largest β: the scale e^β of E_β overflows a double beyond 709."""

_ARMIJO = 1e-4
"""Sufficient decrease of the merit |∇E|₂ along a damped step t·δ: |∇E(θ + tδ)|₂ ≤ (1 − 10⁻⁴ t) |∇E(θ)|₂."""
_HALVINGS = 30
"""Step lengths tried by the line search: 1, 1/2, …, 2^{-29}."""
_MAX_STEP = 1.0
"""A Newton correction longer than 1 rad (max norm) is shortened to 1 rad before the line search."""
_STEP_FLOOR = 1e-12
"""Polishing stops once the Newton correction is below 1e-12 rad (angles up to 2π carry 9e-16 round-off)."""
_POLISH_STEPS = 8
"""At most 8 full Newton steps within the gradient tolerance."""


def check_beta_positive(beta: float) -> float:
    """β as a float, requiring 0 < β ≤ :data:`BETA_MAX` (E_β is defined for β > 0)."""
    beta = check_positive("beta", beta)
    if beta > BETA_MAX:
        raise ValueError(f"beta must be <= {BETA_MAX:g} (the scale e^beta of E_beta overflows a double beyond), "
                         f"got {beta:g}")
    return beta


def _as_angles(theta: np.ndarray) -> np.ndarray:
    arr = np.asarray(theta, dtype=float)
    if arr.ndim == 0 or arr.shape[-1] < 1:
        raise ValueError(f"theta must be an array of angles with the particles on its last axis, got shape "
                         f"{arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("theta must contain finite angles (radians)")
    return arr


def _kernel(theta: np.ndarray, beta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    diff = theta[..., :, None] - theta[..., None, :]
    cos = np.cos(diff)
    return cos, np.sin(diff), np.exp(beta * (cos - 1.0))


def scaled_gradient(theta: np.ndarray, beta: float) -> np.ndarray:
    """(n²/e^β) ∇E_β = −Σ_j sin(θ_i − θ_j) e^{β(cos(θ_i − θ_j) − 1)}, shape of ``theta``."""
    _, sin, weight = _kernel(theta, beta)
    return -np.einsum("...ij,...ij->...i", sin, weight)


def scaled_hessian(theta: np.ndarray, beta: float) -> np.ndarray:
    """(n²/e^β) H: off the diagonal [cos − β sin²] e^{β(cos − 1)} of θ_i − θ_k, rows summing to zero."""
    cos, sin, weight = _kernel(theta, beta)
    off = (cos - beta * sin * sin) * weight
    n = theta.shape[-1]
    off[..., np.arange(n), np.arange(n)] = 0.0
    off[..., np.arange(n), np.arange(n)] = -off.sum(axis=-1)
    return off


def complement_basis(n: int) -> np.ndarray:
    """An orthonormal basis (n, n − 1) of the complement of 1 = (1, …, 1) in Rⁿ."""
    frame = np.concatenate([np.ones((n, 1)), np.eye(n)[:, : n - 1]], axis=1)
    q, _ = np.linalg.qr(frame)
    return q[:, 1:]


def scaled_spectrum(theta: np.ndarray, beta: float) -> np.ndarray:
    """Eigenvalues of (n²/e^β) H restricted to the complement of 1, ascending, shape (..., n − 1)."""
    basis = complement_basis(theta.shape[-1])
    return np.linalg.eigvalsh(basis.T @ scaled_hessian(theta, beta) @ basis)


def torus_energy(theta: np.ndarray, beta: float) -> np.ndarray:
    r"""The interaction energy E_β on Tⁿ (paper 2, eq. (7.4)).

    ::

        E_β(θ) = (1/(2βn²)) Σ_{i,j=1}^n e^{β cos(θ_i − θ_j)},

    the diagonal i = j included; maximal, e^β/(2β), at synchronisation.

    Parameters
    ----------
    theta : array_like, shape (..., n)
        Angles in radians, particles on the last axis; leading axes are independent configurations.
    beta : float
        0 < β ≤ 700.

    Returns
    -------
    numpy.ndarray, shape (...)
        E_β of each configuration.

    Raises
    ------
    ValueError
        Non-finite angles, β ≤ 0, β > 700 or non-finite.

    Notes
    -----
    .. math::

        E_\beta(\theta) = \frac{1}{2\beta n^2} \sum_{i,j=1}^n e^{\beta\cos(\theta_i - \theta_j)}
        \qquad \text{(paper 2, (7.4))},

    computed as (e^β/(2βn²)) Σ e^{β(cos − 1)} so that nothing overflows before the last product. The USA
    dynamics (7.1) is the gradient ascent θ̇ = n∇E_β (:func:`torus_gradient`).

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.open_problems import torus_energy
    >>> float(torus_energy([0.0, 0.0], 1.0)) == np.e / 2
    True

    Leading axes are independent configurations: synchronised, e^β/(2β), and antipodal,
    (e^β + e^{-β})/(2β·2) for n = 2:

    >>> print(torus_energy([[0.0, 0.0], [0.0, np.pi]], 1.0), (np.e + np.exp(-1)) / 4)
    [1.35914091 0.77154032] 0.7715403174076219
    """
    theta = _as_angles(theta)
    beta = check_beta_positive(beta)
    n = theta.shape[-1]
    _, _, weight = _kernel(theta, beta)
    return np.exp(beta) / (2 * beta * n * n) * weight.sum(axis=(-2, -1))


def torus_gradient(theta: np.ndarray, beta: float) -> np.ndarray:
    r"""The gradient of E_β on Tⁿ.

    ::

        ∂_i E_β(θ) = −(1/n²) Σ_j sin(θ_i − θ_j) e^{β cos(θ_i − θ_j)};

    the USA dynamics (7.1) is θ̇ = n ∇E_β. Its components sum to zero (rotation invariance).

    Parameters
    ----------
    theta : array_like, shape (..., n)
        Angles in radians.
    beta : float
        0 < β ≤ 700.

    Returns
    -------
    numpy.ndarray, shape (..., n)
        ∇E_β of each configuration.

    Raises
    ------
    ValueError
        Non-finite angles, β ≤ 0, β > 700 or non-finite.

    Notes
    -----
    .. math::

        \partial_i E_\beta(\theta) = -\frac{1}{n^2} \sum_{j=1}^n \sin(\theta_i - \theta_j)\,
        e^{\beta\cos(\theta_i - \theta_j)}, \qquad \dot\theta = n \nabla E_\beta \quad \text{(paper 2, (7.1))}.

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.open_problems import torus_energy, torus_gradient
    >>> theta, beta = np.array([0.0, 0.4, 2.0]), 1.5
    >>> gradient = torus_gradient(theta, beta)
    >>> print(gradient.round(8), f"{abs(gradient.sum()):.1e}")
    [ 0.22638406 -0.06595857 -0.16042549] 0.0e+00

    It is the derivative of :func:`torus_energy`, and n∇E_β is the velocity of (7.1):

    >>> h = 1e-6
    >>> fd = [(torus_energy(theta + h * e, beta) - torus_energy(theta - h * e, beta)) / (2 * h)
    ...       for e in np.eye(3)]
    >>> bool(np.allclose(gradient, fd, atol=1e-9))
    True
    >>> diff = theta[:, None] - theta[None, :]
    >>> velocity = -(np.exp(beta * np.cos(diff)) * np.sin(diff)).sum(axis=1) / 3
    >>> bool(np.allclose(3 * gradient, velocity))
    True
    """
    theta = _as_angles(theta)
    beta = check_beta_positive(beta)
    n = theta.shape[-1]
    return np.exp(beta) / (n * n) * scaled_gradient(theta, beta)


def torus_hessian(theta: np.ndarray, beta: float) -> np.ndarray:
    r"""The Hessian of E_β on Tⁿ.

    ::

        H_ik = (1/n²) [cos(θ_i − θ_k) − β sin²(θ_i − θ_k)] e^{β cos(θ_i − θ_k)}   (k ≠ i),
        H_ii = −Σ_{k≠i} H_ik,

    symmetric with H·1 = 0. At synchronisation H = −(e^β/n) (I − 11ᵀ/n).

    Parameters
    ----------
    theta : array_like, shape (..., n)
        Angles in radians.
    beta : float
        0 < β ≤ 700.

    Returns
    -------
    numpy.ndarray, shape (..., n, n)
        H of each configuration.

    Raises
    ------
    ValueError
        Non-finite angles, β ≤ 0, β > 700 or non-finite.

    Notes
    -----
    .. math::

        H_{ik} = \frac{1}{n^2}\big[\cos(\theta_i - \theta_k) - \beta\sin^2(\theta_i - \theta_k)\big]
        e^{\beta\cos(\theta_i - \theta_k)} \quad (k \ne i), \qquad H_{ii} = -\sum_{k \ne i} H_{ik}.

    Every row sums to zero (E_β is invariant under θ → θ + c·1), so −H is the Laplacian of the
    complete graph with edge weights H_ik.

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.open_problems import torus_gradient, torus_hessian

    At synchronisation H = −(e^β/n)(I − 11ᵀ/n):

    >>> print(torus_hessian(np.zeros(3), 1.0) * 3 / np.e)
    [[-0.66666667  0.33333333  0.33333333]
     [ 0.33333333 -0.66666667  0.33333333]
     [ 0.33333333  0.33333333 -0.66666667]]

    Elsewhere it is the derivative of :func:`torus_gradient`, with rows summing to 0:

    >>> theta, beta, h = np.array([0.0, 0.4, 2.0]), 1.5, 1e-6
    >>> hessian = torus_hessian(theta, beta)
    >>> fd = [(torus_gradient(theta + h * e, beta) - torus_gradient(theta - h * e, beta)) / (2 * h)
    ...       for e in np.eye(3)]
    >>> bool(np.allclose(hessian, fd, atol=1e-8)), bool(np.allclose(hessian.sum(axis=1), 0.0))
    (True, True)
    """
    theta = _as_angles(theta)
    beta = check_beta_positive(beta)
    n = theta.shape[-1]
    return np.exp(beta) / (n * n) * scaled_hessian(theta, beta)


def torus_hessian_spectrum(theta: np.ndarray, beta: float) -> np.ndarray:
    r"""The n − 1 eigenvalues of the Hessian of E_β on the complement of 1, ascending.

    The eigenvalue 0 of H on 1 (rotations) is discarded exactly: the spectrum is that of QᵀHQ with Q an
    orthonormal basis of 1^⊥, i.e. of PHP on 1^⊥ with P = I − 11ᵀ/n.

    Parameters
    ----------
    theta : array_like, shape (..., n), n ≥ 2
        Angles in radians.
    beta : float
        0 < β ≤ 700.

    Returns
    -------
    numpy.ndarray, shape (..., n − 1)
        In the units of E_β (not scaled).

    Raises
    ------
    ValueError
        n < 2, non-finite angles, β ≤ 0, β > 700 or non-finite.

    Notes
    -----
    With Q (n × (n − 1)) an orthonormal basis of 1^⊥, the eigenvalues are those of

    .. math::

        Q^\top H Q, \qquad H = \nabla^2 E_\beta(\theta)

    (H from :func:`torus_hessian`);

    a critical point other than a global maximum is a strict saddle (paper 2, Problem 3) when the
    largest of them is positive.

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.open_problems import torus_hessian_spectrum
    >>> bool(np.allclose(torus_hessian_spectrum([0.0, 0.0, 0.0], 1.0), -np.e / 3))
    True

    The equispaced triple at β = 1 is a local minimum of E_β: both eigenvalues are positive.

    >>> print(torus_hessian_spectrum(2 * np.pi * np.arange(3) / 3, 1.0))
    [0.25272111 0.25272111]
    """
    theta = _as_angles(theta)
    beta = check_beta_positive(beta)
    n = theta.shape[-1]
    if n < 2:
        raise ValueError(f"theta must hold n >= 2 particles for a spectrum on the complement of 1, got n={n}")
    return np.exp(beta) / (n * n) * scaled_spectrum(theta, beta)


@dataclass(frozen=True)
class NewtonResult:
    """End points of :func:`newton_critical_points`, all gradients and steps in the units e^β/n².

    Attributes
    ----------
    theta : numpy.ndarray, shape (starts, n)
        End points (not wrapped).
    residual : numpy.ndarray, shape (starts,)
        |(n²/e^β) ∇E_β(θ)|_∞ at the end point.
    correction : numpy.ndarray, shape (starts,)
        |δ|_∞ of the Newton correction δ = −H⁺∇E at the end point (not taken): the estimated distance
        to the exact critical point.
    iterations : numpy.ndarray, shape (starts,)
        Newton steps taken.
    converged : numpy.ndarray of bool, shape (starts,)
        residual ≤ tolerance and correction ≤ step_tolerance.
    """

    theta: np.ndarray
    residual: np.ndarray
    correction: np.ndarray
    iterations: np.ndarray
    converged: np.ndarray


def residual_of(gradient: np.ndarray) -> np.ndarray:
    """|g|_∞ over the last axis."""
    return np.abs(gradient).max(axis=-1)


def newton_direction(theta: np.ndarray, gradient: np.ndarray, beta: float, rcond: float = 1e-13) -> np.ndarray:
    """δ = −H⁺ g on the complement of 1, by the eigen-decomposition of the scaled Hessian shifted by
    −11ᵀ/n (which moves the eigenvalue 0 on 1 to −1 and leaves the rest); eigenvalues below
    rcond·max|λ| are dropped (pseudo-inverse)."""
    n = theta.shape[-1]
    values, vectors = np.linalg.eigh(scaled_hessian(theta, beta) - 1.0 / n)
    keep = np.abs(values) > rcond * np.abs(values).max(axis=-1, keepdims=True)
    inverse = np.where(keep, 1.0 / np.where(keep, values, 1.0), 0.0)
    coefficients = np.einsum("sji,sj->si", vectors, gradient) * inverse
    step = -np.einsum("sij,sj->si", vectors, coefficients)
    return step - step.mean(axis=-1, keepdims=True)


def newton_critical_points(theta0: np.ndarray, beta: float, *, tolerance: float = 1e-12,
                           step_tolerance: float = 1e-9, max_iterations: int = 100,
                           rcond: float = 1e-13) -> NewtonResult:
    """Damped Newton's method on ∇E_β = 0 from many starts at once.

    Each iteration solves H δ = −∇E_β on the complement of 1 (pseudo-inverse, ``rcond``).

    * Far from a root (|∇E_β|_∞ > ``tolerance``·e^β/n²): δ is shortened to |δ|_∞ ≤ 1 rad and the step
      t·δ backtracks t = 1, 1/2, … until the merit |∇E_β|₂ decreases by the factor 1 − 10⁻⁴ t (Armijo).
      A start whose line search finds no decrease stops there (a local minimum of |∇E_β|₂ that is not
      a root).
    * Within ``tolerance``: full Newton steps polish the point, at most 8 of them, the last one the first
      with |δ|_∞ ≤ 10⁻¹² rad (taken only if it does not increase |∇E_β|_∞).
      The gradient alone does not locate a point: along a direction of small curvature λ (for instance
      two antipodal clusters at large β, λ = n e^{−2β} in the units e^β/n²) a residual r leaves an
      error r/λ in the angles; the Newton correction measures it.

    Newton is attracted by every critical point (saddles included), not only by maxima. Steps are
    vectorised over starts: no Python loop over starts or pairs.

    Parameters
    ----------
    theta0 : numpy.ndarray, shape (starts, n)
        Start angles.
    beta : float
        0 < β ≤ 700.
    tolerance : float
        Relative gradient tolerance (units e^β/n²).
    step_tolerance : float
        Converged when |∇E_β|_∞ ≤ tolerance · e^β/n² and the remaining Newton correction |δ|_∞ ≤
        step_tolerance (radians).
    max_iterations : int
        Newton steps per start, polishing steps included.
    rcond : float
        Relative cut-off of the pseudo-inverse.

    Returns
    -------
    NewtonResult
    """
    theta = np.array(theta0, dtype=float)
    gradient = scaled_gradient(theta, beta)
    merit = np.linalg.norm(gradient, axis=-1)
    iterations = np.zeros(len(theta), dtype=int)
    polishing = np.zeros(len(theta), dtype=int)
    active = np.ones(len(theta), dtype=bool)
    for _ in range(max_iterations):
        index = np.flatnonzero(active)
        if index.size == 0:
            break
        step = newton_direction(theta[index], gradient[index], beta, rcond)
        size = np.abs(step).max(axis=-1)
        near = residual_of(gradient[index]) <= tolerance
        polish = index[near]
        trial = theta[polish] + step[near]
        trial_gradient = scaled_gradient(trial, beta)
        keep = (size[near] > _STEP_FLOOR) | (residual_of(trial_gradient) <= residual_of(gradient[polish]))
        theta[polish[keep]] = trial[keep]
        gradient[polish[keep]] = trial_gradient[keep]
        merit[polish[keep]] = np.linalg.norm(trial_gradient[keep], axis=-1)
        iterations[polish[keep]] += 1
        polishing[polish] += 1
        active[polish[(size[near] <= _STEP_FLOOR) | (polishing[polish] >= _POLISH_STEPS)]] = False
        far, step = index[~near], step[~near] * np.minimum(1.0, _MAX_STEP / size[~near])[:, None]
        pending = np.ones(far.size, dtype=bool)
        length = 1.0
        for _ in range(_HALVINGS):
            if not pending.any():
                break
            trial = theta[far[pending]] + length * step[pending]
            trial_gradient = scaled_gradient(trial, beta)
            trial_merit = np.linalg.norm(trial_gradient, axis=-1)
            accept = trial_merit <= (1.0 - _ARMIJO * length) * merit[far[pending]]
            taken = far[pending][accept]
            theta[taken] = trial[accept]
            gradient[taken] = trial_gradient[accept]
            merit[taken] = trial_merit[accept]
            iterations[taken] += 1
            pending[np.flatnonzero(pending)[accept]] = False
            length *= 0.5
        active[far[pending]] = False
    residual = residual_of(gradient)
    correction = np.abs(newton_direction(theta, gradient, beta, rcond)).max(axis=-1)
    return NewtonResult(theta=theta, residual=residual, correction=correction, iterations=iterations,
                        converged=(residual <= tolerance) & (correction <= step_tolerance))

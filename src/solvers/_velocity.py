"""Velocity specifications handed to schemes by a model.

A scheme never sees physics: a model describes its velocity field either by
multipliers of convolution kernels (cheap in Fourier or spherical-harmonic
space) or by a callable on grid values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ._errors import UnevaluableState

__all__ = ["ConvolutionVelocity", "CallableVelocity", "Multipliers", "NonPositiveNormaliser"]

Multipliers = Callable[[np.ndarray], np.ndarray]
"""Maps an integer array of wavenumbers k ≥ 0 (or degrees l ≥ 0) to multipliers."""


class NonPositiveNormaliser(UnevaluableState):
    """B ⋆ ρ̄ ≤ 0 at a node where a :class:`ConvolutionVelocity` divides by it (carries the minimum).

    In a trial stage the step overshoots (rejected and retried smaller); at an
    accepted state the grid does not resolve the density (the spectral schemes
    then raise :class:`~solvers.UnderResolvedError`).

    Parameters
    ----------
    value : float
        The smallest value of B ⋆ ρ̄ met, also :attr:`minimum`.

    Examples
    --------
    >>> import solvers
    >>> err = solvers.NonPositiveNormaliser(-0.25)
    >>> err.minimum, isinstance(err, solvers.UnevaluableState)
    (-0.25, True)
    """

    @property
    def minimum(self) -> float:
        """The smallest value of B ⋆ ρ̄ met."""
        return self.value


@dataclass(frozen=True)
class ConvolutionVelocity:
    r"""Velocity built from convolutions of the weighted marginal density and an external potential.

    For densities ρ_1, …, ρ_m on one grid (one per node ω_m of a frequency
    quadrature, weights w_m with Σ w_m = 1) and their marginal
    ρ̄ = Σ_m w_m ρ_m, the velocity of species m is::

        X_m = ω_m + (A ⋆ ρ̄) / (B ⋆ ρ̄) - ∂_θ U           (circle)
        X_m = ∇(A ⋆ ρ̄) / (B ⋆ ρ̄) - ∇U                   (sphere, ω ≡ 0)

    where ``B ⋆ ρ̄ ≡ 1`` when ``denominator`` is None and U ≡ 0 when
    ``potential`` is None. U is given on the scheme's grid: its values at the
    nodes, or its cell averages on a grid of cells (the representation of a
    density there). Spectral schemes take ∇U from U's expansion on the grid
    (exact for U of the grid's band limit), and so does the S² finite-volume
    scheme at its faces (as it does the interaction's gradient); the circle and
    zonal finite-volume schemes take it as the difference quotient of
    neighbouring values across each face, the form that keeps their energy
    identity with the term Σ_i V_i ρ_i U_i and their Gibbs states.

    Parameters
    ----------
    numerator : callable
        k ↦ multipliers of A (complex on S¹, real on spheres).
    denominator : callable or None
        k ↦ multipliers of B, or None for B ⋆ ρ̄ ≡ 1.
    drift : ndarray, shape (m,)
        Natural frequencies ω_m (circle only): real, or complex c_m - iγ_m
        (γ_m ≥ 0) for a species averaged over a Cauchy law (Notes).
    weights : ndarray, shape (m,)
        Quadrature weights w_m of the species, summing to 1.
    potential : ndarray or None
        U on the grid (node values or cell averages, the grid's shape), real and
        finite; None for U ≡ 0.
    resolve_kernel : bool
        Ask the spectral schemes to check that the numerator's kernel is resolved by
        their grid (:func:`solvers.kernel_tail` at most ``tail_tol``) and to refuse
        the grid otherwise, for a kernel whose multipliers may decay slowly (a
        user's kernel); the finite-volume schemes truncate the kernel at their band
        limit at second order and do not check.

    Raises
    ------
    ValueError
        ``drift`` and ``weights`` not 1-D of equal length, not finite, a complex
        drift with γ < 0, weights negative or not summing to 1, or a non-finite potential.
    TypeError
        A complex or non-numeric potential.

    Notes
    -----
    The velocity of species m, on S¹ and on S^{d-1}:

    .. math::

        X_m = \omega_m + \frac{A \star \bar\rho}{B \star \bar\rho} - \partial_\theta U,
        \qquad
        X_m = \frac{\nabla (A \star \bar\rho)}{B \star \bar\rho} - \nabla U,
        \qquad
        \bar\rho = \sum_m w_m \rho_m .

    Convolution convention on S¹: (f ⋆ ρ)(θ) = ∫ f(θ - φ) ρ(φ) dφ. With
    f(θ) = Σ_k f̂_k e^{ikθ} and ρ̂_k = (1/2π) ∫ ρ e^{-ikθ} dθ, the multiplier
    at wavenumber k ≥ 0 is 2π f̂_k:  (f ⋆ ρ)^_k = 2π f̂_k ρ̂_k. Kernels are real,
    so negative k follow by conjugation. On S^{d-1} (zonal kernels,
    (f ⋆ ρ)(x) = ∫ f(<x, y>) ρ(y) dσ(y)) the multiplier at degree l is the
    Funk–Hecke coefficient of f:

    .. math::

        \widehat{(f \star \rho)}_k = 2\pi \hat f_k\, \hat\rho_k \quad (S^1),
        \qquad
        (f \star \rho)_l = \lambda_l(f)\, \rho_l \quad (S^{d-1}).

    Species averaged over a Cauchy law of drifts (circle, spectral schemes). A
    complex drift ν_m = c_m - iγ_m (γ_m > 0) stands for the continuum of species
    with real drifts ω ~ Cauchy(c_m, γ_m), density (γ_m/π)/((ω - c_m)² + γ_m²):
    density m is then ρ̄_m = ∫ ρ_ω (γ_m/π) dω/((ω - c_m)² + γ_m²), and the
    scheme advances its coefficients ρ̂_{m,k}, k ≥ 0, with the rate -ikν_m =
    -ikc_m - kγ_m in place of -ikω. This is exact (not a quadrature) when A
    has one harmonic (a_k = 0 for |k| ≥ 2), B ⋆ ρ̄ ≡ 1 and the initial
    densities do not depend on ω: the equation of ρ̂_{ω,k}, k ≥ 1, then
    involves only ρ̂_{ω,k-1}, ρ̂_{ω,k}, ρ̂_{ω,k+1} and the marginal, so
    ρ̂_{ω,k} is analytic and bounded in the lower half ω-plane (its drift factor
    is e^{-ikωt}), and the residue at the law's pole c_m - iγ_m gives
    ∫ ρ̂_{ω,k} (γ_m/π) dω/((ω - c_m)² + γ_m²) = ρ̂_{c_m - iγ_m, k}; negative k
    follow by conjugation since ρ̄_m is real (E. Ott, T. M. Antonsen, Chaos 18
    (2008) 037113 and Chaos 19 (2009) 023117, whose invariant manifold is the
    special case ρ̂_k ∝ z^k). With the residue, ρ̄_m is smooth for every
    t > 0 even where each ρ_ω concentrates into a Dirac.

    Examples
    --------
    Kuramoto with K = 1, X(θ) = ∫ sin(φ - θ) ρ(φ) dφ: A = -sin has the one multiplier
    2π f̂_1 = iπ. For ρ = (1 + cos θ)/2π the velocity is X = -sin(θ)/2, -1/2 at θ = π/2:

    >>> import numpy as np
    >>> import solvers
    >>> kuramoto = solvers.ConvolutionVelocity(numerator=lambda k: np.where(k == 1, np.pi * 1j, 0))
    >>> kuramoto.n_species, kuramoto.cauchy_drift
    (1, False)
    >>> grid = solvers.CircleGrid(16)
    >>> scheme = solvers.CircleSpectral(grid, kuramoto)
    >>> X = scheme.velocity_field(((1 + np.cos(grid.theta)) / (2 * np.pi))[None])
    >>> print(f"{grid.theta[4]:.6f} {X[0, 4]:.6f}")
    1.570796 -0.500000

    Two species with drifts ±1, and one averaged over Cauchy(1/2, 1/10):

    >>> solvers.ConvolutionVelocity(kuramoto.numerator, drift=[-1.0, 1.0], weights=[0.5, 0.5]).n_species
    2
    >>> solvers.ConvolutionVelocity(kuramoto.numerator, drift=[0.5 - 0.1j]).cauchy_drift
    True
    """

    numerator: Multipliers
    denominator: Multipliers | None = None
    drift: np.ndarray = field(default_factory=lambda: np.zeros(1))
    weights: np.ndarray = field(default_factory=lambda: np.ones(1))
    potential: np.ndarray | None = None
    resolve_kernel: bool = False

    def __post_init__(self) -> None:
        drift = np.atleast_1d(np.asarray(self.drift))
        cauchy = np.iscomplexobj(drift) and bool(np.any(drift.imag != 0))
        drift = drift.astype(complex) if cauchy else np.real(drift).astype(float)
        weights = np.atleast_1d(np.asarray(self.weights, dtype=float))
        if drift.ndim != 1 or weights.shape != drift.shape:
            raise ValueError(
                f"drift and weights must be 1-D of equal length, got shapes {drift.shape} and {weights.shape}"
            )
        if not (np.all(np.isfinite(drift)) and np.all(np.isfinite(weights))):
            raise ValueError("drift and weights must be finite")
        if np.any(drift.imag > 0):
            raise ValueError(f"a complex drift c - iγ must have γ >= 0 (the Cauchy law's pole in the lower half-plane), "
                             f"got {drift!r}")
        if np.any(weights < 0) or not np.isclose(weights.sum(), 1.0, rtol=0, atol=1e-12):
            raise ValueError(f"weights must be non-negative and sum to 1, got sum {weights.sum()!r}")
        object.__setattr__(self, "drift", drift)
        object.__setattr__(self, "weights", weights)
        if self.potential is not None:
            potential = np.asarray(self.potential)
            if np.iscomplexobj(potential) or not np.issubdtype(potential.dtype, np.number):
                raise TypeError(f"potential must hold real values of U on the grid, got dtype {potential.dtype}")
            if not np.all(np.isfinite(potential)):
                raise ValueError("potential must be finite at every node")
            potential = np.array(potential, dtype=float)
            potential.setflags(write=False)
            object.__setattr__(self, "potential", potential)

    @property
    def n_species(self) -> int:
        """Number m of densities coupled through the marginal."""
        return self.drift.size

    @property
    def cauchy_drift(self) -> bool:
        """Whether a species averages its drifts over a Cauchy law (a complex drift)."""
        return bool(np.iscomplexobj(self.drift))


@dataclass(frozen=True)
class CallableVelocity:
    """Velocity given as ``func(values) -> X`` on grid nodes.

    ``func`` receives the state (shape ``(m, *grid_shape)``) and returns the
    velocity at the nodes with the same shape (on S², a trailing axis of 2
    tangent components (θ, φ)). Finite-volume schemes evaluate it at cell
    centres and average to faces.

    Parameters
    ----------
    func : callable
        ``func(values) -> X``, values of shape ``(m, *grid_shape)``.

    Examples
    --------
    A rigid rotation X ≡ 1 on S¹ carries ρ_0(θ) to ρ_0(θ - t): after t = π/2,
    (1 + cos θ/2)/2π becomes (1 + sin θ/2)/2π.

    >>> import numpy as np
    >>> import solvers
    >>> rotation = solvers.CallableVelocity(lambda rho: np.ones_like(rho))
    >>> grid = solvers.CircleGrid(16)
    >>> scheme = solvers.CircleSpectral(grid, rotation, rtol=1e-10)
    >>> rho0 = (1 + 0.5 * np.cos(grid.theta))[None] / (2 * np.pi)
    >>> run = solvers.evolve(scheme, rho0, [0.0, np.pi / 2])
    >>> exact = (1 + 0.5 * np.sin(grid.theta)) / (2 * np.pi)
    >>> bool(np.abs(run.y[-1, 0] - exact).max() < 1e-9)
    True
    """

    func: Callable[[np.ndarray], np.ndarray]

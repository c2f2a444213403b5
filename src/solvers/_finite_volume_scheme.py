"""Base class of the finite-volume schemes on S¹, S² and zonal S^{d-1}.

All three solve, for cell averages ρ_c of one or several densities,

    ∂_t ρ + div(ρ u) = 0,    u = X[ρ̄] - σ ∇log ρ,

the continuity equation with the diffusion σΔρ = div(ρ σ∇log ρ) written as
transport (Carrillo, Chertock & Huang, "A finite-volume method for nonlinear
nonlocal equations with a gradient flow structure", Commun. Comput. Phys. 17
(2015) 233–258, arXiv:1402.4252: the equation (1.1) with its free energy (1.2) and
dissipation (1.3)–(1.4), and the one-dimensional scheme of its Section 2):

    d(|c| ρ_c)/dt = -Σ_{faces f of c} ± |f| F_f,
    F_f = u⁺_f ρ^-_f + u⁻_f ρ^+_f,    u_f = X_f - σ (log ρ_right - log ρ_left) / d_f,

ρ^∓_f the values of a limited linear reconstruction on either side of the
face, u⁺ = max(u, 0), u⁻ = min(u, 0), d_f the distance of the two cell
centres and X_f the scheme's transport velocity at the face. For
self-attention without normalisation (USA, X = ∇Φ, Φ = 𝖦_β ⋆ ρ) the total
velocity is u = -∇ξ with ξ = -Φ + σ log ρ = δ𝓕/δρ, the first variation of the
free energy 𝓕 = -E_β + σ∫ρ log ρ, and the discrete free energy
𝓕_h = -E_h + σ Σ_c |c| ρ_c log ρ_c obeys, by summation by parts,

    d𝓕_h/dt = Σ_c |c| ξ_c dρ_c/dt = -Σ_f |f| d_f ũ_f F_f,   ũ_f = -(ξ_right - ξ_left)/d_f.

Every term u_f F_f is ≥ 0, since the face values are ≥ 0 and F_f has the
sign of u_f; where u_f = ũ_f the upwind flux is the discrete gradient flow of
𝓕 and d𝓕_h/dt = -D_h, D_h = Σ_f |f| d_f u_f F_f ≥ 0
(:meth:`FiniteVolumeScheme.dissipation`). On S¹ and on zonal grids u = ũ
exactly, on any state (X_f is the difference quotient of the potential at the
cell centres, respectively of its cell averages). On S² X_f is the gradient of
the potential at the face, which differs from the difference quotient by
O(h²), and the log ρ at the coarse side of a refinement line is taken at the
sub-face's longitude, so there the identity holds to O(h²): across a
refinement line the centroid of the coarse cell is offset along the face from
those of the fine cells, and a two-point quotient of cell values misses the
tangential gradient by O(1) there (measured with cell values on both sides:
L¹ orders 1.77, 1.51, 1.17 against the heat kernel instead of 1.94, 2.03,
2.04). A centred diffusive flux -σ(ρ_right - ρ_left)/d_f would also keep
positivity but dissipate 𝓕_h only up to O(h²).

Positivity and step. A forward-Euler stage keeps ρ ≥ 0 when the outflow
through the faces of every cell, at most 2ρ_c Σ_f |f| u⁺_f (face values lie in
[0, 2ρ_c]; on S¹ the sharper h/(2 max|u|)), leaves the cell non-empty, and it
is stable for the diffusive part (which linearises about a smooth positive
state to the centred Laplacian) when Δt σ Σ_f |f|/d_f ≤ |c|:

    Δt* = min( min_c |c| / (2 Σ_f |f| u⁺_f),   min_c |c| / (σ Σ_f |f|/d_f) )

(:meth:`FiniteVolumeScheme.stable_step`). SSP-RK3 (Shu–Osher) is a convex
combination of forward-Euler steps, so a step with Δt ≤ Δt* at each of its
stages keeps ρ ≥ 0 (:func:`solvers._finite_volume.ssp_rk3_step`). Because
u contains -σ∇log ρ, Δt* shrinks where ρ is small next to large values: log ρ
is taken of max(ρ, tiny), so from a state with vacuum the first steps are
short until diffusion has filled the empty cells. The adaptive step is

    Δt = min( cfl · Δt*,  cfl_growth / Λ ),

Λ the largest linear growth rate about the uniform state of the same mass
(:func:`solvers._finite_volume.linear_growth_bound`), which limits the step
where the velocity gives no bound: near the uniform state. A stage violating
Δt ≤ Δt* rejects the step, which is retried with cfl times that stage's bound;
a fixed step ``dt`` violating it raises :class:`StepSizeError`.
"""

from __future__ import annotations

import logging
from abc import abstractmethod
from typing import Any

import numpy as np

from . import _validate as check_arg
from ._finite_volume import (
    LIMITERS,
    check_nonnegative,
    growth_step,
    linear_growth_bound,
    ssp_rk3_step,
    step_fraction,
)
from ._errors import StepSizeError
from ._evolve import StepResult
from ._scheme import Scheme
from ._spectral import degree_tail

logger = logging.getLogger(__name__)

__all__ = ["FiniteVolumeScheme", "TINY"]

TINY = np.finfo(float).tiny
"""Floor of ρ under the logarithm of the diffusive velocity -σ∇log ρ."""


def log_density(rho: np.ndarray) -> np.ndarray:
    """log max(ρ, tiny): the logarithm of the diffusive velocity, finite in vacuum."""
    return np.log(np.maximum(rho, TINY))


class FiniteVolumeScheme(Scheme):
    """SSP-RK3 with CFL control, positivity and mass checks of the finite-volume schemes (module docstring).

    A subclass sets, besides the options validated here, ``_growth_rates``
    (r_l of :func:`~solvers._finite_volume.linear_growth_bound`, or None when
    no multipliers are known: no growth cap), ``_denominator_zero`` (B_0, or
    None when B ≡ 1) and ``_species_weights`` (w_m of the marginal), and defines

    * ``_as_state(y)``: ``y`` as a float array of the state's shape (ValueError otherwise);
    * ``_stage(y)``: the time derivative of the cell averages and the bound Δt* at ``y``;
    * ``face_fluxes(y)``: the face velocities u_f, fluxes F_f and weights |f| d_f;
    * ``_degree_norms(y)``: ‖ρ_{m,l}‖ for the degrees l = 0, …, L the grid represents, shape (m, L + 1);
    * ``mass(y)`` and ``domain_area`` (|S¹| = 2π, |S²| = 4π, |S^{d-1}|).

    Parameters (common to the subclasses)
    -------------------------------------
    diffusion : float
        σ ≥ 0.
    cfl : float
        Fraction 0 < cfl ≤ 1 of the bound Δt* used by the adaptive step (stages
        are checked against Δt* itself).
    cfl_growth : float
        0 < cfl_growth ≤ 1: the adaptive step satisfies Λ Δt ≤ cfl_growth
        (default 0.1: relative error ≤ (0.1)³/24 ≈ 4e-5 in the growth rates,
        :data:`solvers._finite_volume.CFL_GROWTH`).
    dt : float or None
        Fixed step: each output interval is split into equal steps of at most
        ``dt`` (:attr:`solvers.Stepper.fixed_step`; validated against Δt* at every
        stage), or None for CFL control.
    limiter : {"minmod", "mc", "none"}
        Slope limiter of the reconstruction ("none": first-order upwind).
    """

    name = "finite_volume"
    order = 2
    explicit_steps = True

    _growth_rates: np.ndarray | None
    _denominator_zero: complex | None
    _species_weights: np.ndarray
    domain_area: float

    def __init__(self, diffusion: float, cfl: float, cfl_growth: float, dt: float | None, limiter: str) -> None:
        super().__init__()
        self.diffusion = check_arg.nonnegative("diffusion", diffusion)
        self.cfl = step_fraction("cfl", cfl)
        self.cfl_growth = step_fraction("cfl_growth", cfl_growth)
        self.dt = None if dt is None else check_arg.positive("dt", dt)
        self.limiter = check_arg.choice("limiter", limiter, LIMITERS)

    @property
    def fixed_step(self) -> float | None:
        """The fixed step ``dt``, or None (CFL control)."""
        return self.dt

    @abstractmethod
    def _as_state(self, y: Any) -> np.ndarray:
        """``y`` as a float array of the state's shape."""

    @abstractmethod
    def _stage(self, y: np.ndarray) -> tuple[np.ndarray, float]:
        """dy/dt and the admissible forward-Euler step Δt* at the state ``y``."""

    @abstractmethod
    def face_fluxes(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(u_f, F_f, |f| d_f) at every face, each of shape (m, n_faces)."""

    @abstractmethod
    def _degree_norms(self, y: np.ndarray) -> np.ndarray:
        """‖ρ_{m,l}‖, l = 0, …, L, of the state ``y``, shape (m, L + 1)."""

    def _operator(self, y: np.ndarray) -> tuple[np.ndarray, float]:
        self.nfev += 1
        return self._stage(y)

    def rhs(self, y: np.ndarray) -> np.ndarray:
        """d/dt of the cell averages: -(1/|c|) Σ_f ± |f| F_f."""
        return self._operator(self._as_state(y))[0]

    def stable_step(self, y: np.ndarray) -> float:
        """Δt*, the largest step of one forward-Euler stage from ``y`` that keeps ρ ≥ 0 and the diffusion stable."""
        return self._operator(self._as_state(y))[1]

    def dissipation(self, y: np.ndarray) -> np.ndarray:
        """D_h = Σ_f |f| d_f u_f F_f ≥ 0 of each density, shape (m,).

        For USA it is the rate -d𝓕_h/dt at which the upwind flux dissipates the
        discrete free energy 𝓕_h = -E_h + σ Σ_c |c| ρ_c log ρ_c (exactly where
        X_f is the difference quotient of the potential, module docstring).
        """
        u, flux, weight = self.face_fluxes(self._as_state(y))
        return np.sum(weight * u * flux, axis=-1)

    def spectral_tail(self, y: np.ndarray) -> np.ndarray:
        """τ_m = max_{l > ⌊2L/3⌋} ‖ρ_{m,l}‖ / ‖ρ_{m,0}‖ of each density, shape (m,).

        The resolution rule of every scheme (:func:`solvers.degree_tail`). A
        second-order scheme stays positive and stable while a density
        concentrates below the cell size; τ tells when it has (compare it with
        :data:`solvers.FINITE_VOLUME_TAIL_TOL`).
        """
        return degree_tail(self._degree_norms(self._as_state(y)))

    def _mean_density(self, y: np.ndarray) -> float:
        """ρ̄ = mass of the marginal / |domain|."""
        return float(self._species_weights @ self.mass(y)) / self.domain_area

    def growth_step(self, y: np.ndarray) -> float:
        """cfl_growth / Λ at the mean density of ``y``'s marginal (∞ when Λ = 0 or no multipliers are known)."""
        if self._growth_rates is None:
            return np.inf
        rate = linear_growth_bound(self._growth_rates, self._mean_density(y), self._denominator_zero)
        return growth_step(rate, self.cfl_growth)

    def _next_step(self, y: np.ndarray, bound: float) -> float:
        """min(cfl · bound, cfl_growth / Λ) for the forward-Euler bound ``bound`` at ``y``."""
        return min(self.cfl * bound, self.growth_step(y))

    def initial_step(self, y: np.ndarray, t: float = 0.0) -> float:
        """The fixed ``dt``, or min(cfl · Δt*, cfl_growth / Λ) at ``y`` (the scheme is autonomous: ``t`` unused)."""
        if self.dt is not None:
            return self.dt
        return self._next_step(y, self.stable_step(y))

    def _step_impl(self, t: float, y: np.ndarray, dt: float) -> StepResult:
        y = self._as_state(y)
        y_new, bound = ssp_rk3_step(y, dt, self._operator)
        if y_new is None:
            if self.dt is not None:
                raise StepSizeError(
                    f"{self.name}: fixed step dt={dt:.6g} violates the stability bound dt <= {bound:.6g} "
                    f"(positivity and diffusive stability of a forward-Euler stage) at t={t:.6g}"
                )
            logger.debug("%s: step %.3g rejected at t=%.6g (bound %.3g)", self.name, dt, t, bound)
            return StepResult(False, None, self._next_step(y, bound))
        return StepResult(True, y_new, self.dt if self.dt is not None else self._next_step(y, bound))

    def check(self, y: np.ndarray) -> None:
        """Raise for a wrong shape, non-finite values or a negative value beyond round-off."""
        y = self._as_state(y)
        super().check(y)
        check_nonnegative(self.name, y)

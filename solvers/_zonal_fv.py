"""Finite-volume scheme for zonal densities on S^{d-1} (uniform cells in the polar angle).

Equation (ρ w.r.t. the area measure, ϑ the angle from e_d):

    ∂_t ρ + (1/sin^{d-2}ϑ) ∂_ϑ(sin^{d-2}ϑ F) = 0,    F = ρ u - σ ∂_ϑ ρ,
    u = ∂_ϑ(A ⋆ ρ̄) / (B ⋆ ρ̄).

Semi-discretisation, conservative in the weighted measure. Cell i has area
V_i = ∫_cell dσ and faces with areas S_{i±1/2} = |S^{d-2}| sin^{d-2}ϑ_{i±1/2}
(zero at the poles, so no flux crosses them). The cell masses m_i = V_i ρ_i obey

    dm_i/dt = -(S_{i+1/2} F_{i+1/2} - S_{i-1/2} F_{i-1/2}),

so Σ_i m_i is conserved to round-off. Face fluxes, in the family of
Carrillo–Chertock–Huang (2015):

    F_{i+1/2} = u⁺ ρ⁻_{i+1/2} + u⁻ ρ⁺_{i+1/2} - σ (ρ_{i+1} - ρ_i)/h,

with u⁺ = max(u_{i+1/2}, 0), u⁻ = min(u_{i+1/2}, 0), and the one-sided values
ρ⁻_{i+1/2} = ρ_i + (h/2) s_i, ρ⁺_{i+1/2} = ρ_{i+1} - (h/2) s_{i+1} of a minmod
reconstruction s_i = minmod((ρ_{i+1}-ρ_i)/h, (ρ_i-ρ_{i-1})/h) (even
reflection across each pole: the ghost value equals ρ_0 resp. ρ_{n-1}, so
s = 0 in the polar cells, where a smooth zonal ρ has ∂_ϑρ = 0). The face
reconstructions lie between neighbouring averages, hence are ≥ 0, and the
two faces of cell i average to ρ_i.

Velocity at the faces. The potential is evaluated exactly for the
piecewise-constant density by Funk–Hecke: ρ̄_l = Σ_i M_{li} ρ̄_i with the cell
moments M_{li} = (1/|S^{d-1}|) ∫_cell q_l dσ, then
∂_ϑ(A ⋆ ρ̄)(ϑ_f) = -sin ϑ_f Σ_l a_l ρ̄_l q_l'(cos ϑ_f) and
(B ⋆ ρ̄)(ϑ_f) = Σ_l b_l ρ̄_l q_l(cos ϑ_f), for l < L (``n_degrees``, default
n; the multipliers of smooth kernels decay faster than any power, so the
truncation is below round-off unless β is large compared with n²).

Positivity. A forward-Euler step keeps m_i ≥ 0 when

    dt (2 max(S_{i+1/2} u⁺_{i+1/2}, -S_{i-1/2} u⁻_{i-1/2}) + σ (S_{i+1/2} + S_{i-1/2})/h) ≤ V_i,

since the outflow is at most 2ρ_i max(…) and the diffusive outflow at most
σ ρ_i (S_{i+1/2} + S_{i-1/2})/h. Time stepping is SSP-RK3 (Shu–Osher), a convex
combination of forward-Euler steps; each stage checks dt against its own
bound dt* and a violating step is rejected before it can lose positivity.
The adaptive step follows the policy of :mod:`solvers._finite_volume`,

    dt = min( cfl · dt*,  cfl_growth / Λ ),
    Λ = max_{1 ≤ l < L} l(l+d-2) |a_l| ρ̄ / (b_0 ρ̄),   ρ̄ = mass/|S^{d-1}|

(ρ̄/(b_0 ρ̄) read as ρ̄ when B ≡ 1): Λ is the largest linear growth rate about
the uniform state (:func:`solvers._finite_volume.linear_growth_bound`); near
that state the face velocities are O(perturbation) and dt* gives no limit,
so Λ alone keeps the SSP-RK3 error of the growing modes ≤ (cfl_growth)³/24
relative. Reconstruction, upwind flux and SSP-RK3 come from
:mod:`solvers._finite_volume`.
Second order in space (first order at isolated extrema, where minmod clips),
third order in time.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ._finite_volume import (
    CFL_GROWTH,
    LIMITERS,
    GrowthLimitedSteps,
    limited_difference,
    ssp_rk3_step,
    step_fraction,
    upwind_flux,
)
from . import _validate as check_arg
from ._scheme import Scheme, StepResult
from ._velocity import ConvolutionVelocity
from ._zonal_grid import ZonalCellGrid, gegenbauer_table

__all__ = ["ZonalFiniteVolumeScheme"]


class ZonalFiniteVolumeScheme(GrowthLimitedSteps, Scheme):
    """Positivity-preserving finite volumes for zonal densities; see the module docstring.

    Parameters
    ----------
    grid : ZonalCellGrid
        n uniform cells in ϑ; the state holds cell averages ρ_m,i, shape (m, n).
    velocity : ConvolutionVelocity
        Funk–Hecke multipliers of A (potential) and B (denominator or None).
    diffusion : float
        σ ≥ 0.
    cfl : float
        Fraction (0, 1] of the positivity bound dt* used by the adaptive step
        (stages are checked against dt* itself).
    cfl_growth : float
        0 < cfl_growth ≤ 1: the adaptive step satisfies Λ dt ≤ cfl_growth, Λ the
        largest linear growth rate about the uniform state (default 0.1:
        relative error ≤ 4e-5 in the growth rates).
    n_degrees : int or None
        Gegenbauer degrees of the potential (default n).
    limiter : {"minmod", "mc", "none"}
        Slope limiter of the reconstruction (:mod:`solvers._finite_volume`).
    """

    name: ClassVar[str] = "zonal-finite-volume"
    order: ClassVar[int] = 2

    def __init__(
        self,
        grid: ZonalCellGrid,
        velocity: ConvolutionVelocity,
        diffusion: float = 0.0,
        *,
        cfl: float = 0.5,
        cfl_growth: float = CFL_GROWTH,
        n_degrees: int | None = None,
        limiter: str = "minmod",
    ) -> None:
        super().__init__()
        what = "a ZonalCellGrid (ZonalSphere(d, n, nodes='cells')) for the finite-volume scheme"
        check_arg.instance("grid", grid, ZonalCellGrid, what, error=ValueError)
        check_arg.sphere_velocity(velocity)
        self.cfl = step_fraction("cfl", cfl)
        self.cfl_growth = step_fraction("cfl_growth", cfl_growth)
        self.limiter = check_arg.choice("limiter", limiter, LIMITERS)
        self.diffusion = check_arg.nonnegative("diffusion", diffusion)
        n_degrees = grid.n if n_degrees is None else n_degrees
        if check_arg.positive_int("n_degrees", n_degrees) < 2:
            raise ValueError(f"n_degrees must be an integer >= 2, got {n_degrees!r}")
        self.grid = grid
        self.velocity = velocity
        ell = np.arange(n_degrees)
        num, den = check_arg.velocity_multipliers(velocity, ell, real=True, index_name="degrees")
        self._growth_rates = ell * (ell + grid.d - 2) * np.abs(num)
        self._denominator_zero = None if den is None else float(den[0])
        moments = grid.cell_moments(int(n_degrees))
        inner = grid.faces[1:-1]
        q, dq = gegenbauer_table(int(n_degrees), grid.d, np.cos(inner), derivative=True)
        # Face values as matrices acting on cell averages of the marginal.
        self._dphi = (-np.sin(inner)[:, None] * dq * num[None, :]) @ moments
        self._bface = None if den is None else (q * den[None, :]) @ moments
        self._h = grid.spacing
        self._s_inner = grid.face_areas[1:-1]
        self._inv_vol = 1.0 / grid.volumes

    def face_velocity(self, y: np.ndarray) -> np.ndarray:
        """u at the n-1 interior faces, shape (n-1,)."""
        marginal = self.velocity.weights @ np.asarray(y)
        u = self._dphi @ marginal
        if self._bface is not None:
            u = u / (self._bface @ marginal)
        return u

    def _flux(self, y: np.ndarray, u: np.ndarray) -> np.ndarray:
        """S_{i+1/2} F_{i+1/2} at the interior faces, shape (m, n-1)."""
        jump = np.diff(y, axis=-1)
        zero = np.zeros(y.shape[:-1] + (1,))
        # even reflection across the poles: the ghost differences are zero
        backward = np.concatenate([zero, jump], axis=-1)
        forward = np.concatenate([jump, zero], axis=-1)
        half = 0.5 * limited_difference(backward, forward, self.limiter)
        flux = upwind_flux(u, (y + half)[..., :-1], (y - half)[..., 1:])
        if self.diffusion > 0:
            flux = flux - (self.diffusion / self._h) * jump
        return self._s_inner * flux

    def _euler_rate(self, y: np.ndarray, u: np.ndarray) -> np.ndarray:
        flux = self._flux(y, u)
        zero = np.zeros(y.shape[:-1] + (1,))
        total = np.concatenate([zero, flux, zero], axis=-1)
        return -np.diff(total, axis=-1) * self._inv_vol

    def rhs(self, y: np.ndarray) -> np.ndarray:
        """dρ_i/dt = -(S_{i+1/2} F_{i+1/2} - S_{i-1/2} F_{i-1/2})/V_i."""
        self.nfev += 1
        y = np.asarray(y, dtype=float)
        return self._euler_rate(y, self.face_velocity(y))

    def _positivity_bound(self, u: np.ndarray) -> float:
        """The forward-Euler positivity bound of the module docstring for face velocities u."""
        s = self._s_inner
        out_right = np.concatenate([s * np.maximum(u, 0.0), [0.0]])
        out_left = np.concatenate([[0.0], -s * np.minimum(u, 0.0)])
        face_sum = np.concatenate([s, [0.0]]) + np.concatenate([[0.0], s])
        rate = (2 * np.maximum(out_right, out_left) + self.diffusion * face_sum / self._h) * self._inv_vol
        top = float(np.max(rate))
        return np.inf if top == 0 else 1.0 / top

    def _mean_density(self, y: np.ndarray) -> float:
        """ρ̄ = mass/|S^{d-1}| of ``y``'s marginal: Λ = max_l l(l+d-2)|a_l| ρ̄/(b_0 ρ̄)."""
        return float(self.velocity.weights @ self.mass(np.asarray(y, dtype=float))) / self.grid.area

    def stable_step(self, y: np.ndarray) -> float:
        """min(cfl × dt*, cfl_growth/Λ) at state ``y`` (module docstring)."""
        y = np.asarray(y, dtype=float)
        return self._next_step(y, self._positivity_bound(self.face_velocity(y)))

    def initial_step(self, y: np.ndarray) -> float:
        return self.stable_step(y)

    def _stage(self, y: np.ndarray) -> tuple[np.ndarray, float]:
        self.nfev += 1
        u = self.face_velocity(y)
        return self._euler_rate(y, u), self._positivity_bound(u)

    def _step_impl(self, t: float, y: np.ndarray, dt: float) -> StepResult:
        """SSP-RK3 (:func:`ssp_rk3_step`); every stage checks dt against its positivity bound."""
        y = np.asarray(y, dtype=float)
        y_new, bound = ssp_rk3_step(y, dt, self._stage)
        # bound: the smallest dt* over the stages evaluated (the next step is checked against its own)
        return StepResult(y_new is not None, y_new, self._next_step(y, bound))

    def mass(self, y: np.ndarray) -> np.ndarray:
        """Σ_i V_i ρ_m,i, per species."""
        return np.asarray(y) @ self.grid.volumes

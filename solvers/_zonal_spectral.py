"""Gegenbauer–Galerkin spectral scheme for zonal densities on S^{d-1}.

Equation. For a zonal density ρ(ϑ) with respect to the area measure of
S^{d-1} (ϑ the angle from e_d, t = cos ϑ) and a zonal velocity X = u(ϑ) e_ϑ,

    ∂_t ρ + (1/sin^{d-2}ϑ) ∂_ϑ(sin^{d-2}ϑ ρ u) = σ (1/sin^{d-2}ϑ) ∂_ϑ(sin^{d-2}ϑ ∂_ϑ ρ),
    u = ∂_ϑ(A ⋆ ρ̄) / (B ⋆ ρ̄)      (the polar component of X = ∇(A ⋆ ρ̄)/(B ⋆ ρ̄)),

where ρ̄ = Σ_m w_m ρ_m is the marginal of the species and B ⋆ ρ̄ ≡ 1 when no
denominator is given. Convolutions by Funk–Hecke: with ρ̄ = Σ_l ρ̄_l q_l
(normalised Gegenbauer polynomials, see :mod:`solvers._zonal_grid`),
Φ = A ⋆ ρ̄ = Σ_l a_l ρ̄_l q_l and B ⋆ ρ̄ = Σ_l b_l ρ̄_l q_l with the multipliers
a_l, b_l of the velocity specification.

Galerkin form. Testing with q_l and integrating by parts (the flux
sin^{d-2}ϑ ρ u vanishes at both poles), with ∂_ϑ = -sin ϑ d/dt,

    d ρ_l/dt = (1/|S^{d-1}|) ∫ ∇q_l · X ρ dσ - σ l(l+d-2) ρ_l
             = (1/|S^{d-1}|) ∫ (1-t²) q_l'(t) ρ Φ_t / (B ⋆ ρ̄) dσ - σ l(l+d-2) ρ_l.

The integral is evaluated by Gauss–Gegenbauer quadrature on ⌈3n/2⌉ nodes:
for B ≡ 1 the integrand is a polynomial of degree ≤ 3n - 3, integrated
exactly, so no aliasing (the 3/2 rule). All transforms are matrix products.

Time stepping. Dormand–Prince 5(4) with FSAL, applied through the integrating
factor e^{-σ l(l+d-2) t} (the diffusion is integrated exactly; its stiffness
never limits the step): stages Y_i = E(c_i h) ρ_0 + h Σ_j a_ij E((c_i-c_j)h) K_j,
K_j = N(Y_j), with E(s) = diag(e^{-σ l(l+d-2) s}) (Lawson's form; tableau,
tables cached per step size, controller and first step from
:mod:`solvers._runge_kutta`). The embedded solution gives
the error e = h Σ_j (b̂_j - b_j) E((1-c_j)h) K_j; a step is accepted when
‖e‖₂ ≤ atol + rtol ‖ρ‖₂ (coefficient norms = L²(σ̄) norms) and the part of e
in the top ⌈n/8⌉ degrees is below 0.1 · tail_tol · ‖ρ‖₂, so that time-stepping
errors (which an explicit step puts mostly into the fastest, highest modes)
never trigger the resolution check below. The embedded estimate cannot see
a mode that is unstable but still at round-off level, so steps are also
bounded by h ≤ cfl / (n max|u|), u the polar speed at the quadrature nodes:
the fastest transport modes (wavenumber ≈ n in ϑ) then stay inside the
stability region of the explicit stages (cfl = 1 by default; Dormand–Prince
is stable on the imaginary axis up to |hλ| ≈ 3.3). The next step is
h min(10, max(0.2, 0.9 err^{-1/5})) (no growth right after a rejection, 0.2 h
after a non-finite error), capped by that bound.

Resolution. After each accepted step the relative L²-weight of the top
⌈n/8⌉ degrees is compared with ``tail_tol``; above it the scheme raises
:class:`UnderResolvedError` instead of returning oscillating values.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from . import _validate as check_arg
from ._runge_kutta import (
    N_STAGES,
    FsalCache,
    FsalSnapshots,
    LawsonTables,
    StepController,
    adaptive_lawson_step,
    initial_step,
    nan_on_nonpositive,
    writing_into,
)
from ._scheme import NonPositiveNormaliser, Scheme, StepResult, UnderResolvedError, resolved
from ._velocity import ConvolutionVelocity
from ._zonal_grid import ZonalGaussGrid, gegenbauer_table

__all__ = ["ZonalSpectralScheme"]


class ZonalSpectralScheme(FsalSnapshots, Scheme):
    """Spectral scheme for zonal densities on S^{d-1}; see the module docstring.

    Parameters
    ----------
    grid : ZonalGaussGrid
        Gauss–Gegenbauer grid with n nodes; the state holds node values
        ρ_m(t_j), shape (m, n), m = number of species of the velocity (states
        returned by :meth:`step` are read-only: the next step reuses their
        coefficients and last stage).
    velocity : ConvolutionVelocity
        Funk–Hecke multipliers of A (potential) and B (denominator or None).
    diffusion : float
        σ ≥ 0.
    rtol, atol : float
        Tolerances of the embedded error estimate (rtol > 0, atol ≥ 0).
    tail_tol : float
        Largest admissible relative L² weight of the top ⌈n/8⌉ degrees.
    cfl : float
        Steps are at most cfl / (n max|u|) (see the module docstring), cfl > 0.

    Raises
    ------
    TypeError
        ``velocity`` not a ConvolutionVelocity, an option not a real number.
    ValueError
        ``grid`` not a ZonalGaussGrid, an option out of range, a non-zero
        drift, or multipliers that are not real, finite, one per degree.
    """

    name: ClassVar[str] = "zonal-spectral"
    order: ClassVar[int] = 0

    def __init__(
        self,
        grid: ZonalGaussGrid,
        velocity: ConvolutionVelocity,
        diffusion: float = 0.0,
        *,
        rtol: float = 1e-8,
        atol: float = 0.0,
        tail_tol: float = 1e-8,
        cfl: float = 1.0,
    ) -> None:
        super().__init__()
        what = "a ZonalGaussGrid (ZonalSphere(d, n, nodes='gauss')) for the spectral scheme"
        check_arg.instance("grid", grid, ZonalGaussGrid, what, error=ValueError)
        check_arg.sphere_velocity(velocity)
        self.rtol = check_arg.positive("rtol", rtol)
        self.atol = check_arg.nonnegative("atol", atol)
        self.tail_tol = check_arg.positive("tail_tol", tail_tol)
        self.cfl = check_arg.positive("cfl", cfl)
        self.diffusion = check_arg.nonnegative("diffusion", diffusion)
        self.grid = grid
        self.velocity = velocity
        n, d = grid.n, grid.d
        ell = grid.degrees
        self._decay = -self.diffusion * ell * (ell + d - 2.0)
        self._num, self._den = check_arg.velocity_multipliers(velocity, ell, real=True, index_name="degrees")
        fine = ZonalGaussGrid(d, math.ceil(1.5 * n))
        self._q_fine, self._dq_fine = gegenbauer_table(n, d, fine.t, derivative=True)
        self._flux_weight = (1.0 - fine.t**2) * fine.weights / fine.area
        self._sin_fine = np.sqrt(1.0 - fine.t**2)
        self._speed = 0.0
        self._n_tail = max(2, math.ceil(n / 8))
        self._fsal = FsalCache()
        self._tables = LawsonTables(self._decay)
        self._controller = StepController()
        self._stages = np.empty((N_STAGES, velocity.n_species, n))

    # --- transforms -------------------------------------------------------
    def _coeffs(self, y: np.ndarray) -> np.ndarray:
        entry = self._fsal.lookup(y)
        if entry is not None:
            return entry.coefficients
        return self.grid.analysis(y)

    def _values(self, coeffs: np.ndarray) -> np.ndarray:
        return self.grid.synthesis(coeffs)

    # --- right-hand side --------------------------------------------------
    def _transport(self, coeffs: np.ndarray) -> np.ndarray:
        """N_l = (1/|S|) ∫ (1-t²) q_l' ρ Φ_t/(B⋆ρ̄) dσ for coefficients of shape (m, n).

        Also records the largest polar speed |u| = sqrt(1-t²) |Φ_t| / (B⋆ρ̄)
        at the quadrature nodes in ``self._speed``. Raises
        :class:`NonPositiveNormaliser` when B⋆ρ̄ ≤ 0 at a node.
        """
        self.nfev += 1
        marginal = self.velocity.weights @ coeffs
        dphi = self._dq_fine @ (self._num * marginal)
        factor = dphi * self._flux_weight
        if self._den is not None:
            denom = self._q_fine @ (self._den * marginal)
            if not np.all(denom > 0):
                raise NonPositiveNormaliser(float(np.min(denom)))
            factor = factor / denom
            self._speed = float(np.max(self._sin_fine * np.abs(dphi) / denom))
        else:
            self._speed = float(np.max(self._sin_fine * np.abs(dphi)))
        rho_fine = coeffs @ self._q_fine.T
        return (rho_fine * factor) @ self._dq_fine

    def _transport_of_state(self, coeffs: np.ndarray) -> np.ndarray:
        """:meth:`_transport` of an accepted state: B⋆ρ̄ ≤ 0 there is under-resolution."""
        return resolved(self._transport, coeffs, self.name, f"increase n (now {self.grid.n})")

    def rhs(self, y: np.ndarray) -> np.ndarray:
        """dρ/dt at the nodes: synthesis of N(ρ) - σ l(l+d-2) ρ_l."""
        coeffs = self._coeffs(y)
        return self._values(self._transport_of_state(coeffs) + self._decay * coeffs)

    def initial_step(self, y: np.ndarray) -> float:
        """First step by Hairer, Nørsett & Wanner's algorithm (Solving ODEs I, II.4) on the transport part.

        The weighted norm is ‖v‖₂ / (atol + rtol ‖ρ‖₂) over the coefficients
        (see :func:`solvers._runge_kutta.initial_step`); the step is at most
        cfl / (n max|u|). Also starts a new run of the step-size controller.
        """
        self._controller.reset()
        coeffs, f0, speed = self._start(y)
        bound = self._speed_bound(speed)
        scale = self.atol + self.rtol * np.linalg.norm(coeffs)

        def norm(v: np.ndarray) -> float:
            return float(np.linalg.norm(v)) / scale

        probe = nan_on_nonpositive(lambda h: self._transport(coeffs + h * f0))
        return initial_step(f0, probe, norm, y0_norm=norm(coeffs), max_step=bound)

    # --- stepping ---------------------------------------------------------
    def _start(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """(ρ_l, N(ρ_l), max|u|) of ``y``, those of a state returned by :meth:`step` from its step
        (:class:`FsalCache`)."""
        _, coeffs, derivative, speed = self._fsal.start(y, self._coeffs, self._transport_of_state, lambda: self._speed)
        return coeffs, derivative, speed

    def _step_impl(self, t: float, y: np.ndarray, dt: float) -> StepResult:
        a0, k0, speed = self._start(y)
        bound = self._speed_bound(speed)
        if dt > bound * (1 + 1e-12):
            return StepResult(False, None, bound)
        accepted, a1, err, factor = adaptive_lawson_step(
            writing_into(self._transport), a0, k0, self._tables(dt), self._stages, self._error_norm, self._controller
        )
        if not accepted:
            return StepResult(False, None, dt * factor, err)
        y1 = self._fsal.accept(self._values(a1), a1, self._stages[N_STAGES - 1], self._speed)
        return StepResult(True, y1, min(dt * factor, self._speed_bound(self._speed)), err)

    def _error_norm(self, a0: np.ndarray, a1: np.ndarray, err_vec: np.ndarray) -> float:
        """‖e‖₂ / (atol + rtol ‖ρ‖₂), or the top-degree part of e over 0.1 · tail_tol · ‖ρ‖₂ when larger."""
        size = max(np.linalg.norm(a0), np.linalg.norm(a1))
        scale = self.atol + self.rtol * size
        err = float(np.linalg.norm(err_vec) / scale) if scale > 0 else 0.0
        if size > 0:
            tail_err = np.linalg.norm(err_vec[..., -self._n_tail :]) / (0.1 * self.tail_tol * size)
            err = max(err, float(tail_err))
        return err

    def _speed_bound(self, speed: float) -> float:
        """cfl / (n max|u|): keeps h·(n max|u|), the size of the fastest transport
        modes, inside the stability region of the explicit stages."""
        return np.inf if speed == 0 else self.cfl / (self.grid.n * speed)

    # --- diagnostics ------------------------------------------------------
    def tail(self, y: np.ndarray) -> np.ndarray:
        """Relative L² weight of the top ⌈n/8⌉ degrees, per species."""
        coeffs = self._coeffs(y)
        total = np.linalg.norm(coeffs, axis=-1)
        top = np.linalg.norm(coeffs[..., -self._n_tail :], axis=-1)
        return top / np.where(total > 0, total, 1.0)

    def check(self, y: np.ndarray) -> None:
        super().check(y)
        tail = self.tail(y)
        if np.any(tail > self.tail_tol):
            raise UnderResolvedError(
                f"{self.name}: spectral tail {tail.max():.3g} above tail_tol={self.tail_tol:.3g} "
                f"(top {self._n_tail} of {self.grid.n} degrees); increase n"
            )

    def mass(self, y: np.ndarray) -> np.ndarray:
        """∫ ρ_m dσ = Σ_j w_j ρ_m(t_j), per species."""
        return np.asarray(y) @ self.grid.weights

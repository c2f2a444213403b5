"""Gegenbauer–Galerkin spectral scheme for zonal densities on S^{d-1}.

Equation. For a zonal density ρ(ϑ) with respect to the area measure of
S^{d-1} (ϑ the angle from e_d, t = cos ϑ) and a zonal velocity X = u(ϑ) e_ϑ,

    ∂_t ρ + (1/sin^{d-2}ϑ) ∂_ϑ(sin^{d-2}ϑ ρ u) = σ (1/sin^{d-2}ϑ) ∂_ϑ(sin^{d-2}ϑ ∂_ϑ ρ),
    u = ∂_ϑ(A ⋆ ρ̄) / (B ⋆ ρ̄) - ∂_ϑ U      (the polar component of X = ∇(A ⋆ ρ̄)/(B ⋆ ρ̄) - ∇U),

where ρ̄ = Σ_m w_m ρ_m is the marginal of the species and B ⋆ ρ̄ ≡ 1 when no
denominator is given, U ≡ 0 when no potential is (a zonal U is given by its node
values, expanded once in the q_l: exact for U of degree < n). Convolutions by Funk–Hecke: with ρ̄ = Σ_l ρ̄_l q_l
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
never limits the step), with the error norm, step-size control, step ladder
and first step of every spectral scheme (:mod:`solvers._spectral`). The
embedded estimate cannot see a mode that is unstable but still at round-off
level, so steps are also bounded by h ≤ cfl / (n max|u|) (:meth:`stable_step`),
u the polar speed at the quadrature nodes: the fastest transport modes
(wavenumber ≈ n in ϑ) then stay inside the stability region of the explicit
stages (cfl = 1 by default; Dormand–Prince is stable on the imaginary axis up
to |hλ| ≈ 3.3).

High dimension. Node values are densities w.r.t. σ, of size 1/|S^{d-1}|
(6.5e219 at d = 340, 3.2e307 at d = 438), so nothing squares them: the norms
of coefficient vectors are scaled by their largest entry, and the transport
integrand is formed as ((1-t_k²)(w_k/|S^{d-1}|) ρ(t_k)) Φ_t/(B⋆ρ̄), the
weighted values coming straight from the coefficients through the bounded
matrix (1-t_k²)(w_k/|S^{d-1}|) q_l(t_k). The node values themselves carry the
round-off ε‖ρ‖ of the coefficients as ε‖ρ‖ (w_j/|S^{d-1}|)^{-1/2} (the rows of
q_l(t_j)(w_j/|S^{d-1}|)^{1/2} are orthonormal): exact in the weighted norms the
scheme controls, but at the polar nodes, whose weights are tiny in high d
(5e-42 at d = 340, n = 64), a relative error of 1e4 (d = 340, n = 64) or 4e8
(d = 100, n = 128) of a value that carries no mass. Where it exceeds the
largest double :meth:`_synthesis` raises :class:`~solvers.NonFiniteError`
naming d and n.

Resolution. After each accepted step the tail τ = max_{l > ⌊2(n-1)/3⌋} |ρ_l| / |ρ_0|
of the Gegenbauer coefficients is compared with max(``tail_tol``, 100 ``rtol``);
above it the scheme raises :class:`UnderResolvedError` instead of returning
oscillating values (the rule of every spectral scheme, :mod:`solvers._spectral`).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from . import _validate as check_arg
from ._errors import NonFiniteError
from ._spectral import SPECTRAL_TAIL_TOL, SpectralScheme, gradient_speeds
from ._velocity import ConvolutionVelocity, NonPositiveNormaliser
from ._zonal_grid import ZonalGaussGrid, gegenbauer_table

__all__ = ["ZonalSpectral"]


class ZonalSpectral(SpectralScheme):
    r"""Spectral scheme for zonal densities on S^{d-1}; see the module docstring.

    Solves, for zonal densities ρ_m(ϑ) w.r.t. the area measure of S^{d-1} (ϑ the angle from
    e_d, t = cos ϑ), ∂_t ρ + div(ρ u e_ϑ) = σΔρ with the polar velocity
    u = ∂_ϑ(A ⋆ ρ̄)/(B ⋆ ρ̄) - ∂_ϑU, in the Galerkin form on the normalised Gegenbauer
    polynomials q_l, l < n (ρ = Σ_l ρ_l q_l, Funk–Hecke multipliers a_l, b_l); the
    transport integral is evaluated by Gauss–Gegenbauer quadrature on ⌈3n/2⌉ nodes (exact,
    hence free of aliasing, for B ≡ 1), the diffusion exactly by the integrating factor
    e^{-σ l(l+d-2) t}, the rest by adaptive Dormand–Prince 5(4) in Lawson's form
    (:class:`~solvers.SpectralScheme`), each step also bounded by cfl / (n max|u|).
    A tail τ = max_{l > ⌊2(n-1)/3⌋} |ρ_l| / |ρ_0| above max(``tail_tol``, 100 ``rtol``)
    raises :class:`UnderResolvedError`.

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
        σ ≥ 0 (default 0), the coefficient of σΔρ.
    rtol, atol : float
        Tolerances of the embedded error estimate (rtol > 0, default 1e-8; atol ≥ 0,
        default 0), on the L²(σ̄) norm of each density (σ̄ = σ/|S^{d-1}|): the local error
        must stay below atol + rtol ‖ρ - ρ̄‖, relative to the fluctuation about the mean ρ̄
        (:mod:`solvers._spectral`).
    tail_tol : float
        Largest admissible spectral tail τ (> 0, default :data:`solvers.SPECTRAL_TAIL_TOL`
        = 1e-6); the test uses max(tail_tol, 100 rtol).
    on_underresolved : {"raise", "warn"}
        Raise :class:`UnderResolvedError` (default) or emit a ``RuntimeWarning``.
    cfl : float
        Steps are at most cfl / (n max|u|) (see the module docstring), cfl > 0 (default 1).

    Raises
    ------
    TypeError
        ``velocity`` not a ConvolutionVelocity, an option not a real number.
    ValueError
        ``grid`` not a ZonalGaussGrid, an option out of range, a non-zero
        drift, or multipliers that are not real, finite, one per degree.
    UnderResolvedError
        A velocity with ``resolve_kernel`` whose kernel n degrees do not resolve
        (:func:`solvers.kernel_tail` above ``tail_tol``).

    Notes
    -----
    The Galerkin equations (module docstring), with Φ = A ⋆ ρ̄ = Σ_l a_l ρ̄_l q_l:

    .. math::

        \frac{d\rho_l}{dt} = \frac{1}{\lvert S^{d-1}\rvert} \int_{S^{d-1}} (1 - t^2)\, q_l'(t)\,
        \rho\, \Bigl(\frac{\Phi_t}{B \star \bar\rho} - U_t\Bigr) d\sigma
        - \sigma\, l(l + d - 2)\, \rho_l .

    Examples
    --------
    Pure diffusion on S⁴ (d = 5, σ = 0.1): the degree-2 coefficient decays exactly as
    e^{-σ l(l+d-2) t} = e^{-1} by t = 1, at constant mass:

    >>> import numpy as np
    >>> import solvers
    >>> grid = solvers.ZonalGaussGrid(5, 8)
    >>> coefficients = np.zeros(8)
    >>> coefficients[[0, 2]] = [1.0, 0.3]
    >>> rho0 = grid.synthesis(coefficients / grid.area)[None]  # ρ_0 = 1/|S⁴|: mass 1
    >>> heat = solvers.ConvolutionVelocity(numerator=lambda l: np.zeros(l.shape))
    >>> scheme = solvers.ZonalSpectral(grid, heat, diffusion=0.1)
    >>> run = solvers.evolve(scheme, rho0, [0.0, 1.0])
    >>> decay = grid.analysis(run.y[-1])[0, 2] * grid.area / 0.3
    >>> print(f"{decay:.10f} {np.exp(-1.0):.10f} {scheme.mass(run.y[-1])[0]:.12f}")
    0.3678794412 0.3678794412 1.000000000000

    The kernel A(<x, y>) = <x, y> (multiplier |S⁴|/5 at l = 1, zero otherwise) gives
    X = P⊥_x m; for ρ = (1 + t/2)/|S⁴|, m = e_d/10 and u = -sin(ϑ)/10:

    >>> linear = solvers.ConvolutionVelocity(numerator=lambda l: np.where(l == 1, grid.area / 5, 0.0))
    >>> u = solvers.ZonalSpectral(grid, linear).velocity_field(((1 + 0.5 * grid.t) / grid.area)[None])
    >>> bool(np.allclose(u, -np.sin(grid.polar) / 10)), u.shape
    (True, (1, 8))
    """

    grid_type: ClassVar[type] = ZonalGaussGrid

    def __init__(
        self,
        grid: ZonalGaussGrid,
        velocity: ConvolutionVelocity,
        diffusion: float = 0.0,
        *,
        rtol: float = 1e-8,
        atol: float = 0.0,
        tail_tol: float = SPECTRAL_TAIL_TOL,
        on_underresolved: str = "raise",
        cfl: float = 1.0,
    ) -> None:
        super().__init__()
        what = "a ZonalGaussGrid (ZonalSphere(d, n, nodes='gauss')) for the spectral scheme"
        check_arg.instance("grid", grid, ZonalGaussGrid, what, error=ValueError)
        check_arg.sphere_velocity(velocity)
        self.cfl = check_arg.positive("cfl", cfl)
        self.diffusion = check_arg.nonnegative("diffusion", diffusion)
        self.grid = grid
        self.velocity = velocity
        n, d = grid.n, grid.d
        ell = grid.degrees
        self._num, self._den = check_arg.velocity_multipliers(velocity, ell, real=True, index_name="degrees")
        fine = ZonalGaussGrid(d, math.ceil(1.5 * n))
        self._q_fine, self._dq_fine = gegenbauer_table(n, d, fine.t, derivative=True)
        # (1-t_k²) (w_k/|S|) q_l(t_k): bounded by 1 (|q_l(t_k)| ≤ (w_k/|S|)^{-1/2}), so ρ at the fine nodes is
        # never formed on its own (module docstring, "High dimension")
        self._q_fine_weighted = self._q_fine * ((1.0 - fine.t**2) * fine.relative_weights)[:, None]
        self._sin_fine = np.sqrt(1.0 - fine.t**2)
        potential = check_arg.velocity_potential(velocity, (n,), "node values at the Gauss nodes")
        self._potential_coefficients = None if potential is None else grid.analysis(potential)
        self._external_t = None if potential is None else self._dq_fine @ self._potential_coefficients  # U_t
        self._speed = 0.0
        self._setup(-self.diffusion * ell * (ell + d - 2.0), (velocity.n_species, n), float, rtol=rtol, atol=atol,
                    tail_tol=tail_tol, on_underresolved=on_underresolved)
        if velocity.resolve_kernel:
            self._check_kernel(lambda band: gradient_speeds(velocity.numerator, band, d), n - 1)

    # --- transforms -------------------------------------------------------
    def _analysis(self, y: np.ndarray) -> np.ndarray:
        return self.grid.analysis(y)

    def _synthesis(self, coeffs: np.ndarray) -> np.ndarray:
        """Node values of ``coeffs``; raises :class:`NonFiniteError` (naming d and n) where finite
        coefficients give node values beyond the largest double (module docstring, "High dimension")."""
        with np.errstate(over="ignore", invalid="ignore"):
            values = self.grid.synthesis(coeffs)
        if not np.all(np.isfinite(values)) and np.all(np.isfinite(coeffs)):
            grid = self.grid
            raise NonFiniteError(
                f"{self.name}: node values overflow on {self._grid_words()}: near the poles the node weights "
                f"w_j/|S^(d-1)| fall to {np.min(grid.relative_weights):.1e}, where round-off eps |rho| in the "
                f"coefficients becomes eps |rho| (w_j/|S^(d-1)|)^(-1/2) in the node values, and with |rho| of "
                f"size 1/|S^(d-1)| = {1 / grid.area:.1e} at d={grid.d} that exceeds the largest double; use fewer "
                f"nodes (n={max(grid.n // 2, 2)}) or a smaller d"
            )
        return values

    def _norms(self, coeffs: np.ndarray) -> np.ndarray:
        """‖ρ_m‖_{L²(σ̄)} = (Σ_l ρ_{m,l}²)^{1/2} (orthonormal q_l), shape (m,).

        Formed as s (Σ_l (ρ_{m,l}/s)²)^{1/2} with s = max_l |ρ_{m,l}|: the
        coefficients are of the size of ρ ~ 1/|S^{d-1}|, whose square
        overflows from d ≈ 260 (|S^{d-1}| < 1e-154).
        """
        scale = np.max(np.abs(coeffs), axis=-1, keepdims=True)
        safe = np.where(scale > 0, scale, 1.0)
        return safe[..., 0] * np.sqrt(np.sum((coeffs / safe) ** 2, axis=-1))

    def _degree_norms(self, coeffs: np.ndarray) -> np.ndarray:
        """|ρ_{m,l}| for l = 0, …, n-1, shape (m, n)."""
        return np.abs(coeffs)

    def _grid_words(self) -> str:
        return f"the zonal S^{self.grid.d - 1} with n={self.grid.n} nodes"

    def _remedy(self) -> str:
        return f"increase n (now {self.grid.n})"

    # --- right-hand side --------------------------------------------------
    def _transport(self, coeffs: np.ndarray) -> np.ndarray:
        """N_l = (1/|S|) ∫ (1-t²) q_l' ρ (Φ_t/(B⋆ρ̄) - U_t) dσ for coefficients of shape (m, n).

        Also records the largest polar speed |u| = sqrt(1-t²) |Φ_t| / (B⋆ρ̄)
        at the quadrature nodes in ``self._speed``. Raises
        :class:`NonPositiveNormaliser` when B⋆ρ̄ ≤ 0 at a node.
        """
        self.nfev += 1
        marginal = self.velocity.weights @ coeffs
        dphi = self._dq_fine @ (self._num * marginal)
        factor = dphi
        if self._den is not None:
            denom = self._q_fine @ (self._den * marginal)
            if not np.all(denom > 0):
                raise NonPositiveNormaliser(float(np.min(denom)))
            factor = factor / denom
        if self._external_t is not None:
            factor = factor - self._external_t
        self._speed = float(np.max(self._sin_fine * np.abs(factor)))
        weighted_rho = coeffs @ self._q_fine_weighted.T
        return (weighted_rho * factor) @ self._dq_fine

    def _transport_extra(self) -> float:
        """max|u| of the last evaluation."""
        return self._speed

    def _bound(self, speed: Any) -> float:
        """cfl / (n max|u|): keeps h·(n max|u|), the size of the fastest transport
        modes, inside the stability region of the explicit stages."""
        return np.inf if speed == 0 else self.cfl / (self.grid.n * speed)

    # --- diagnostics ------------------------------------------------------
    def velocity_field(self, y: np.ndarray) -> np.ndarray:
        """The polar velocity u = ∂_ϑ(A ⋆ ρ̄)/(B ⋆ ρ̄) - ∂_ϑ U = -sin ϑ (Φ_t / (B ⋆ ρ̄) - U_t) at the nodes,
        shape (m, n)."""
        coeffs = self.coefficients(y)
        marginal = self.velocity.weights @ coeffs
        q, dq = gegenbauer_table(self.grid.n, self.grid.d, self.grid.t, derivative=True)
        u = -np.sqrt(1.0 - self.grid.t**2) * (dq @ (self._num * marginal))
        if self._den is not None:
            u = u / (q @ (self._den * marginal))
        if self._potential_coefficients is not None:
            u = u + np.sqrt(1.0 - self.grid.t**2) * (dq @ self._potential_coefficients)
        return np.broadcast_to(u, coeffs.shape).copy()

    def mass(self, y: np.ndarray) -> np.ndarray:
        """∫ ρ_m dσ = Σ_j w_j ρ_m(t_j), per species."""
        return np.asarray(y) @ self.grid.weights


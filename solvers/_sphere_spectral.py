"""Spherical-harmonic scheme for the continuity equation on S².

    ∂_t ρ + div(ρ X) = σ Δρ,     X = ∇(A ⋆ ρ) / (B ⋆ ρ)     (B ⋆ ρ ≡ 1 without denominator)

Discretisation (Galerkin in spherical harmonics of degree ≤ lmax, with
pseudo-spectral products):

* ρ = Σ a_lm Y_lm; the convolutions are multipliers on the coefficients,
  (A ⋆ ρ)_lm = Â_l a_lm (Funk–Hecke);
* ∇(A ⋆ ρ) by spin-1 synthesis, ρ and B ⋆ ρ by scalar synthesis, all on the
  padded Gauss–Legendre grid of band limit ⌈3 lmax/2⌉ (the quadrature of the
  flux against ∇Y_lm is then exact when X is itself band-limited — USA — and
  aliasing-free to the degree of the product otherwise);
* (div(ρX))_lm = -∫ ∇conj(Y_lm)·ρX dσ by the adjoint spin-1 transform; the
  l = 0 coefficient of the divergence vanishes identically, so the mass
  a_00 √(4π) is conserved to round-off;
* diffusion exactly by the integrating factor e^{-σ l(l+1) t}; the remaining
  non-stiff part by the Dormand–Prince 5(4) pair with error control
  (Lawson's integrating-factor Runge–Kutta: stage i uses
  a_i = e^{-σΛ c_i h} a_0 + h Σ_j a_ij e^{-σΛ(c_i - c_j)h} N(a_j), Λ = l(l+1);
  the exponentials are tabulated once per step size). Tableau, Lawson tables,
  controller (h_new = h min(10, max(0.2, 0.9 err^{-1/5})), no growth right
  after a rejection, 0.2 h after a non-finite error) and first step are those
  of :mod:`solvers._runge_kutta`.

The state handed to and returned by the scheme is node values on the
Gauss–Legendre grid, shape (1, nlat, nlon) (returned read-only); coefficients
are cached between steps so each step costs one analysis and one synthesis
beyond the six right-hand sides.

Resolution. :meth:`SphereSpectral.check` (the initial state and every
accepted one) measures the tail τ = ‖ρ_{l > tail_start·lmax}‖_{L²} / ‖ρ‖_{L²}
and raises :class:`UnderResolvedError` when τ > max(``tail_tol``, 100 ``rtol``).
The floor 100 rtol is the rule of the circle scheme: the step-size control
admits errors of relative size ≈ rtol in every degree, so a tail at a small
multiple of rtol is time-integration error, not lack of resolution. With a
normaliser B, B ⋆ ρ ≤ 0 somewhere on the product grid means the same thing:
at an accepted state it raises :class:`UnderResolvedError`; inside the stages
of a trial step it only rejects the step (a step too large for the transport
overshoots there first), which is retried with 0.2 h.
"""

from __future__ import annotations

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
from ._scheme import NonPositiveNormaliser, Scheme, StepResult, UnderResolvedError, resolved, tail_tolerance
from ._sphere_grid import SphereGrid, padded_lmax
from ._velocity import ConvolutionVelocity

__all__ = ["SphereSpectral"]


class SphereSpectral(FsalSnapshots, Scheme):
    """Spherical-harmonic Galerkin scheme with dealiased products (see module docstring).

    Parameters
    ----------
    grid : SphereGrid
        Gauss–Legendre grid; its ``lmax`` is the band limit of ρ.
    velocity : ConvolutionVelocity
        Funk–Hecke multipliers of A (``numerator``, the potential) and of B
        (``denominator``, or None); one species.
    diffusion : float
        σ ≥ 0.
    rtol, atol : float
        Error control of the embedded pair (both ≥ 0, not both 0): the L²(S²)
        norm of the local error estimate must stay below
        atol + rtol max(‖ρ^n‖_{L²}, ‖ρ^{n+1}‖_{L²}).
    tail_tol : float
        Largest admitted relative L² norm of the degrees l > tail_start·lmax
        (> 0); the test uses max(tail_tol, 100 rtol) (module docstring).
    tail_start : float
        Fraction of lmax where the monitored tail begins (0 < tail_start < 1).
    dealias : bool
        Evaluate products on the padded grid (default) or on the base grid.

    Raises
    ------
    TypeError
        ``grid`` not a SphereGrid, ``velocity`` not a ConvolutionVelocity, an
        option not a number (a bool for ``dealias``).
    ValueError
        An option out of range, more than one species, a non-zero drift, or
        multipliers that are not real, finite, one per degree 0..lmax (the
        complex ones of the circle, for instance).
    """

    name = "sphere-spectral"
    order = 0  # spectral in space; time: 5th order (DP5 with integrating factor)

    def __init__(
        self,
        grid: SphereGrid,
        velocity: ConvolutionVelocity,
        diffusion: float = 0.0,
        *,
        rtol: float = 1e-7,
        atol: float = 1e-9,
        tail_tol: float = 1e-5,
        tail_start: float = 2 / 3,
        dealias: bool = True,
    ) -> None:
        super().__init__()
        check_arg.instance("grid", grid, SphereGrid)
        check_arg.sphere_velocity(velocity, one_species=True)
        self.diffusion = check_arg.nonnegative("diffusion", diffusion)
        self.rtol = check_arg.nonnegative("rtol", rtol)
        self.atol = check_arg.nonnegative("atol", atol)
        if self.rtol == 0 and self.atol == 0:
            raise ValueError("rtol and atol must not both be 0")
        self.tail_tol = check_arg.positive("tail_tol", tail_tol)
        self.tail_start = check_arg.open_interval("tail_start", tail_start, 0, 1)
        dealias = check_arg.boolean("dealias", dealias)
        self.grid = grid
        ell = grid.degrees
        self._num, self._den = check_arg.velocity_multipliers(velocity, ell, real=True, index_name="degrees")
        self._lam = ell * (ell + 1.0)
        self._pw = grid.parseval_weights
        self._shape_pad = grid.padded_shape(padded_lmax(grid.lmax)) if dealias else grid.shape
        self._tail_mask = ell > int(np.floor(self.tail_start * grid.lmax))
        self._tables = LawsonTables(-self.diffusion * self._lam)
        self._controller = StepController()
        self._stages = np.empty((N_STAGES, grid.nalm), dtype=complex)
        self._fsal = FsalCache()

    def _validate(self, y: np.ndarray) -> None:
        if y.shape != (1, *self.grid.shape):
            raise ValueError(f"state must have shape (1, {self.grid.nlat}, {self.grid.nlon}), got {y.shape}")

    def _coeffs(self, y: np.ndarray) -> np.ndarray:
        entry = self._fsal.lookup(y)
        if entry is not None:
            return entry.coefficients
        self._validate(y)
        return self.grid.analysis(y[0])

    def _norm(self, alm: np.ndarray) -> float:
        return float(np.sqrt(np.sum(self._pw * (alm.real**2 + alm.imag**2))))

    # ------------------------------------------------------------------ right-hand side
    def _transport(self, alm: np.ndarray) -> np.ndarray:
        """-div(ρX) coefficients; raises NonPositiveNormaliser when B ⋆ ρ ≤ 0 at a node."""
        self.nfev += 1
        g = self.grid
        flux = g.gradient(self._num * alm, self._shape_pad)
        rho = g.synthesis(alm, self._shape_pad)
        if self._den is not None:
            z = g.synthesis(self._den * alm, self._shape_pad)
            if not np.all(z > 0):
                raise NonPositiveNormaliser(float(np.min(z)))
            rho = rho / z
        flux *= rho
        return -g.divergence(flux)

    def nonlinear(self, alm: np.ndarray) -> np.ndarray:
        """Coefficients of -div(ρ X[ρ]) for coefficients ``alm`` of ρ.

        Raises :class:`UnderResolvedError` when B ⋆ ρ ≤ 0 at a node of the
        product grid (the density is not resolved).
        """
        return resolved(self._transport, alm, self.name, f"increase lmax (now {self.grid.lmax})")

    def velocity(self, y: np.ndarray) -> np.ndarray:
        """X = ∇(A ⋆ ρ)/(B ⋆ ρ) at the nodes, components (X_ϑ, X_φ), shape (2, nlat, nlon)."""
        alm = self._coeffs(np.asarray(y, dtype=float))
        x = self.grid.gradient(self._num * alm)
        if self._den is not None:
            x = x / self.grid.synthesis(self._den * alm)
        return x

    def rhs(self, y: np.ndarray) -> np.ndarray:
        """dρ/dt = -div(ρX) + σΔρ at the nodes, shape (1, nlat, nlon)."""
        y = np.asarray(y, dtype=float)
        alm = self._coeffs(y)
        return self.grid.synthesis(self.nonlinear(alm) - self.diffusion * self._lam * alm)[None]

    def mass(self, y: np.ndarray) -> np.ndarray:
        """∫ ρ dσ by Gauss–Legendre quadrature, shape (1,)."""
        return np.sum(np.asarray(y) * self.grid.weights, axis=(-2, -1))

    # ------------------------------------------------------------------ stepping
    def _start(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(a, N(a)) of ``y``, those of a state returned by :meth:`step` from its step (:class:`FsalCache`)."""
        entry = self._fsal.start(y, self._coeffs, self.nonlinear)
        return entry.coefficients, entry.derivative

    def initial_step(self, y: np.ndarray) -> float:
        """First step by Hairer, Nørsett & Wanner's algorithm (Solving ODEs I, II.4) on the transport part.

        The weighted norm is ‖v‖_{L²} / (atol + rtol ‖ρ‖_{L²}) (see
        :func:`solvers._runge_kutta.initial_step`). Also starts a new run of
        the step-size controller.
        """
        self._controller.reset()
        y = np.asarray(y, dtype=float)
        alm, f0 = self._start(y)
        scale = self.atol + self.rtol * self._norm(alm)

        def norm(v: np.ndarray) -> float:
            return self._norm(v) / scale

        probe = nan_on_nonpositive(lambda h: self._transport(alm + h * f0))
        return initial_step(f0, probe, norm, y0_norm=norm(alm))

    def _step_impl(self, t: float, y: np.ndarray, dt: float) -> StepResult:
        h = float(dt)
        a0, k0 = self._start(y)

        def error_norm(start: np.ndarray, end: np.ndarray, error: np.ndarray) -> float:
            return self._norm(error) / (self.atol + self.rtol * max(self._norm(start), self._norm(end)))

        accepted, a_new, err, factor = adaptive_lawson_step(
            writing_into(self._transport), a0, k0, self._tables(h), self._stages, error_norm, self._controller
        )
        if not accepted:
            return StepResult(False, None, h * factor, err)
        y_new = self._fsal.accept(self.grid.synthesis(a_new)[None], a_new, self._stages[N_STAGES - 1])
        return StepResult(True, y_new, h * factor, err)

    # ------------------------------------------------------------------ diagnostics
    def tail(self, y: np.ndarray) -> float:
        """Relative L² norm of the degrees l > tail_start·lmax of ρ."""
        alm = self._coeffs(np.asarray(y, dtype=float))
        total = self._norm(alm)
        return self._norm(np.where(self._tail_mask, alm, 0)) / total if total > 0 else 0.0

    def check(self, y: np.ndarray) -> None:
        """Raise on non-finite values or an under-resolved spectrum (tail > max(tail_tol, 100 rtol))."""
        y = np.asarray(y, dtype=float)
        self._validate(y)
        super().check(y)
        tail = self.tail(y)
        tolerance, note = tail_tolerance(self.tail_tol, self.rtol, ".1e")
        if tail > tolerance:
            lstart = int(np.floor(self.tail_start * self.grid.lmax)) + 1
            raise UnderResolvedError(
                f"{self.name}: under-resolved — degrees l >= {lstart} hold a relative L2 norm {tail:.2e} "
                f"> tail_tol={self.tail_tol:.1e}"
                + note
                + f"; increase lmax (now {self.grid.lmax}) or stop earlier"
            )

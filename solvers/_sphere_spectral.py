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
  a_i = e^{-σΛ c_i h} a_0 + h Σ_j a_ij e^{-σΛ(c_i - c_j)h} N(a_j), Λ = l(l+1)).

The state handed to and returned by the scheme is node values on the
Gauss–Legendre grid, shape (1, nlat, nlon); coefficients are cached between
steps so each step costs one analysis and one synthesis beyond the six
right-hand sides. After every accepted step the spectrum tail
(√ of the power in degrees above ``tail_start``·lmax over the total) is
compared with ``tail_tol``; a larger tail raises :class:`UnderResolvedError`.
"""

from __future__ import annotations

import logging

import numpy as np

from ._scheme import Scheme, StepResult, UnderResolvedError, NonFiniteError
from ._sphere_grid import SphereGrid, padded_lmax
from ._velocity import ConvolutionVelocity

logger = logging.getLogger(__name__)

__all__ = ["SphereSpectral"]

# Dormand–Prince 5(4) tableau (Dormand & Prince 1980), FSAL.
_C = np.array([0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0])
_A = [
    [],
    [1 / 5],
    [3 / 40, 9 / 40],
    [44 / 45, -56 / 15, 32 / 9],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
    [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84],
]
_B = np.array([35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0])
_B_LOW = np.array([5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40])
_E = _B - _B_LOW


class SphereSpectral(Scheme):
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
        Error control of the embedded pair: the L²(S²) norm of the local
        error estimate must stay below atol + rtol ‖ρ‖_{L²}.
    tail_tol : float
        Largest admitted relative L² norm of the degrees l > tail_start·lmax.
    tail_start : float
        Fraction of lmax where the monitored tail begins (0 < tail_start < 1).
    dealias : bool
        Evaluate products on the padded grid (default) or on the base grid.

    Raises
    ------
    TypeError
        ``grid`` not a SphereGrid or ``velocity`` not a ConvolutionVelocity.
    ValueError
        An option out of range or more than one species.
    """

    name = "sphere-spectral"
    order = 0  # spectral in space; time: 5th order (DP5 with integrating factor)

    def __init__(
        self,
        grid: SphereGrid,
        velocity: ConvolutionVelocity,
        diffusion: float = 0.0,
        *,
        rtol: float = 1e-6,
        atol: float = 1e-9,
        tail_tol: float = 1e-5,
        tail_start: float = 2 / 3,
        dealias: bool = True,
    ) -> None:
        super().__init__()
        if not isinstance(grid, SphereGrid):
            raise TypeError(f"grid must be a SphereGrid, got {type(grid).__name__}")
        if not isinstance(velocity, ConvolutionVelocity):
            raise TypeError(
                f"velocity must be a ConvolutionVelocity (Funk–Hecke multipliers), got {type(velocity).__name__}"
            )
        if velocity.n_species != 1:
            raise ValueError(f"velocity must describe one species on S², got {velocity.n_species}")
        for name, value in (("diffusion", diffusion), ("rtol", rtol), ("atol", atol), ("tail_tol", tail_tol)):
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
        if rtol == 0 and atol == 0:
            raise ValueError("rtol and atol must not both be 0")
        if not 0 < tail_start < 1:
            raise ValueError(f"tail_start must lie in (0, 1), got {tail_start!r}")
        self.grid = grid
        self.diffusion = float(diffusion)
        self.rtol, self.atol = float(rtol), float(atol)
        self.tail_tol = float(tail_tol)
        self.tail_start = float(tail_start)
        ell = grid.degrees
        self._num = np.asarray(velocity.numerator(ell), dtype=float)
        self._den = None if velocity.denominator is None else np.asarray(velocity.denominator(ell), dtype=float)
        self._lam = ell * (ell + 1.0)
        self._pw = grid.parseval_weights
        self._shape_pad = grid.padded_shape(padded_lmax(grid.lmax)) if dealias else grid.shape
        self._tail_mask = ell > int(np.floor(self.tail_start * grid.lmax))
        self._cache: tuple[np.ndarray, np.ndarray, np.ndarray | None] | None = None

    def _validate(self, y: np.ndarray) -> None:
        if y.shape != (1, *self.grid.shape):
            raise ValueError(f"state must have shape (1, {self.grid.nlat}, {self.grid.nlon}), got {y.shape}")

    def _coeffs(self, y: np.ndarray) -> np.ndarray:
        if self._cache is not None and self._cache[0] is y:
            return self._cache[1]
        self._validate(y)
        return self.grid.analysis(y[0])

    def _norm(self, alm: np.ndarray) -> float:
        return float(np.sqrt(np.sum(self._pw * (alm.real**2 + alm.imag**2))))

    # ------------------------------------------------------------------ right-hand side
    def nonlinear(self, alm: np.ndarray) -> np.ndarray:
        """Coefficients of -div(ρ X[ρ]) for coefficients ``alm`` of ρ."""
        self.nfev += 1
        g = self.grid
        flux = g.gradient(self._num * alm, self._shape_pad)
        rho = g.synthesis(alm, self._shape_pad)
        if self._den is not None:
            z = g.synthesis(self._den * alm, self._shape_pad)
            if not np.all(z > 0):
                raise NonFiniteError(
                    f"{self.name}: the normaliser B ⋆ ρ became non-positive (min {z.min():.3g}); "
                    "the density is under-resolved — increase lmax"
                )
            rho = rho / z
        flux *= rho
        return -g.divergence(flux)

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
    def initial_step(self, y: np.ndarray) -> float:
        """Hairer–Nørsett–Wanner's first-step heuristic on the non-stiff part."""
        y = np.asarray(y, dtype=float)
        alm = self._coeffs(y)
        n0 = self.nonlinear(alm)
        scale = self.atol + self.rtol * self._norm(alm)
        d0, d1 = self._norm(alm) / scale, self._norm(n0) / scale
        h = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
        return float(min(h, 1.0))

    def _decay(self, tau: float) -> np.ndarray | float:
        if self.diffusion == 0 or tau == 0:
            return 1.0
        return np.exp(-self.diffusion * self._lam * tau)

    def _step_impl(self, t: float, y: np.ndarray, dt: float) -> StepResult:
        a0 = self._coeffs(y)
        cached = self._cache
        k = [cached[2] if cached is not None and cached[0] is y and cached[2] is not None else self.nonlinear(a0)]
        self._cache = (y, a0, k[0])
        for i in range(1, 7):
            ai = self._decay(_C[i] * dt) * a0
            for j, aij in enumerate(_A[i]):
                if aij != 0:
                    ai = ai + (dt * aij) * (self._decay((_C[i] - _C[j]) * dt) * k[j])
            if i == 6:
                a_new = ai
            k.append(self.nonlinear(ai))
        err = dt * sum(_E[j] * (self._decay((1 - _C[j]) * dt) * k[j]) for j in range(7) if _E[j] != 0)
        scale = self.atol + self.rtol * max(self._norm(a0), self._norm(a_new))
        ratio = self._norm(err) / scale
        if not np.isfinite(ratio):
            return StepResult(False, None, 0.25 * dt, np.inf)
        factor = 0.9 * ratio ** (-0.2) if ratio > 0 else 5.0
        if ratio > 1:
            return StepResult(False, None, dt * max(0.2, factor), ratio)
        self._check_tail(a_new)
        y_new = self.grid.synthesis(a_new)[None]
        self._cache = (y_new, a_new, k[6])
        return StepResult(True, y_new, dt * min(5.0, max(0.2, factor)), ratio)

    def tail(self, y: np.ndarray) -> float:
        """Relative L² norm of the degrees l > tail_start·lmax of ρ."""
        return self._tail_of(self._coeffs(np.asarray(y, dtype=float)))

    def _tail_of(self, alm: np.ndarray) -> float:
        total = self._norm(alm)
        return self._norm(np.where(self._tail_mask, alm, 0)) / total if total > 0 else 0.0

    def _check_tail(self, alm: np.ndarray) -> None:
        tail = self._tail_of(alm)
        if tail > self.tail_tol:
            lstart = int(np.floor(self.tail_start * self.grid.lmax)) + 1
            raise UnderResolvedError(
                f"{self.name}: under-resolved — degrees l >= {lstart} hold a relative L2 norm {tail:.2e} "
                f"> tail_tol={self.tail_tol:.1e}; increase lmax (now {self.grid.lmax}) or stop earlier"
            )

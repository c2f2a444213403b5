"""Spherical-harmonic scheme for the continuity equation on S².

    ∂_t ρ + div(ρ X) = σ Δρ,     X = ∇(A ⋆ ρ) / (B ⋆ ρ) - ∇U     (B ⋆ ρ ≡ 1 without denominator,
                                                                U ≡ 0 without a potential)

Discretisation (Galerkin in spherical harmonics of degree ≤ lmax, with
pseudo-spectral products):

* ρ = Σ a_lm Y_lm; the convolutions are multipliers on the coefficients,
  (A ⋆ ρ)_lm = Â_l a_lm (Funk–Hecke);
* ∇(A ⋆ ρ) by spin-1 synthesis, ρ and B ⋆ ρ by scalar synthesis (∇U once, from the
  analysis of U's node values: exact for U of band limit lmax), all on the
  padded Gauss–Legendre grid of band limit ⌈3 lmax/2⌉ (the quadrature of the
  flux against ∇Y_lm is then exact when X is itself band-limited — USA — and
  aliasing-free to the degree of the product otherwise);
* (div(ρX))_lm = -∫ ∇conj(Y_lm)·ρX dσ by the adjoint spin-1 transform; the
  l = 0 coefficient of the divergence vanishes identically, so the mass
  a_00 √(4π) is conserved to round-off;
* diffusion exactly by the integrating factor e^{-σ l(l+1) t}; the remaining
  non-stiff part by the Dormand–Prince 5(4) pair with error control in
  Lawson's form, the exponentials tabulated once per step size on the step
  ladder (:mod:`solvers._spectral`, shared by every spectral scheme).

The state handed to and returned by the scheme is node values on the
Gauss–Legendre grid, shape (1, nlat, nlon) (returned read-only); coefficients
are cached between steps so each step costs one analysis and one synthesis
beyond the six right-hand sides.

Resolution. :meth:`SphereSpectral.check` (the initial state and every
accepted one) measures the tail τ = max_{l > ⌊2 lmax/3⌋} ‖ρ_l‖ / ‖ρ_0‖,
‖ρ_l‖² = |a_l0|² + 2 Σ_{m > 0} |a_lm|² = ∫ ρ_l² dσ (:meth:`SphereGrid.degree_norms`), and raises :class:`UnderResolvedError` when
τ > max(``tail_tol``, 100 ``rtol``) (the rule of every spectral scheme,
:mod:`solvers._spectral`). With a normaliser B, B ⋆ ρ ≤ 0 somewhere on the
product grid means the same thing: at an accepted state it raises
:class:`UnderResolvedError`; inside the stages of a trial step it only rejects
the step (a step too large for the transport overshoots there first), which
is retried with 0.2 h.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from . import _validate as check_arg
from ._spectral import SPECTRAL_TAIL_TOL, SpectralScheme, gradient_speeds
from ._sphere_grid import SphereGrid, padded_lmax
from ._velocity import ConvolutionVelocity, NonPositiveNormaliser

__all__ = ["SphereSpectral"]


class SphereSpectral(SpectralScheme):
    r"""Spherical-harmonic Galerkin scheme with dealiased products (see module docstring).

    Solves on S², for one density ρ of mass ∫ ρ dσ (dσ the area measure, |S²| = 4π),

        ∂_t ρ + div(ρX) = σΔρ,   X = ∇(A ⋆ ρ)/(B ⋆ ρ) - ∇U,

    with ρ = Σ_{l ≤ lmax} a_lm Y_lm, the convolutions as Funk–Hecke multipliers on the
    coefficients, the products ρX formed on the Gauss–Legendre grid of band limit
    ⌈3 lmax/2⌉ (3/2 rule) and the divergence by the adjoint spin-1 transform, so that the
    mass √(4π) a_00 is conserved to round-off. Diffusion is integrated exactly
    (e^{-σ l(l+1) t}), the transport by adaptive Dormand–Prince 5(4) in Lawson's form
    (:class:`~solvers.SpectralScheme`). The state is the node values on ``grid``, shape
    (1, nlat, nlon); a tail τ = max_{l > ⌊2 lmax/3⌋} ‖ρ_l‖ / ‖ρ_0‖ above
    max(``tail_tol``, 100 ``rtol``) raises :class:`UnderResolvedError`.

    Parameters
    ----------
    grid : SphereGrid
        Gauss–Legendre grid; its ``lmax`` is the band limit of ρ.
    velocity : ConvolutionVelocity
        Funk–Hecke multipliers of A (``numerator``, the potential) and of B
        (``denominator``, or None); one species.
    diffusion : float
        σ ≥ 0 (default 0), the coefficient of σΔρ.
    rtol, atol : float
        Error control of the embedded pair (rtol > 0, default 1e-7; atol ≥ 0, default
        1e-9; not both 0): the L²(S²) norm of the local error estimate must stay below
        atol + rtol max(‖ρ^n - ρ̄‖_{L²}, ‖ρ^{n+1} - ρ̄‖_{L²}), relative to the fluctuation about the
        mean ρ̄ = 1/(4π) ∫ρ (:mod:`solvers._spectral`).
    tail_tol : float
        Largest admitted spectral tail τ (> 0, default :data:`solvers.SPECTRAL_TAIL_TOL`
        = 1e-6); the test uses max(tail_tol, 100 rtol) (module docstring).
    on_underresolved : {"raise", "warn"}
        Raise :class:`UnderResolvedError` (default) or emit a ``RuntimeWarning``.
    dealias : bool
        Evaluate products on the padded grid (True, default) or on the base grid.

    Raises
    ------
    TypeError
        ``grid`` not a SphereGrid, ``velocity`` not a ConvolutionVelocity, an
        option not a number (a bool for ``dealias``).
    ValueError
        An option out of range, more than one species, a non-zero drift, or
        multipliers that are not real, finite, one per degree 0..lmax (the
        complex ones of the circle, for instance).
    UnderResolvedError
        A velocity with ``resolve_kernel`` whose kernel the band limit does not resolve
        (:func:`solvers.kernel_tail` above ``tail_tol``).

    Notes
    -----
    With ρ = Σ a_lm Y_lm and the Funk–Hecke multipliers Â_l, B̂_l of the kernels:

    .. math::

        \partial_t \rho + \operatorname{div}(\rho X) = \sigma \Delta \rho, \qquad
        X = \frac{\nabla (A \star \rho)}{B \star \rho} - \nabla U, \qquad
        (A \star \rho)_{lm} = \hat A_l\, a_{lm},

    .. math::

        \frac{da_{lm}}{dt} = \int_{S^2} \nabla \overline{Y_{lm}} \cdot \rho X \, d\sigma
        - \sigma\, l(l+1)\, a_{lm}.

    Examples
    --------
    Pure diffusion (Â ≡ 0, σ = 0.1): the degree-1 part of ρ = (1 + z/2)/4π decays exactly
    as e^{-σ l(l+1) t} = e^{-0.2} by t = 1, at constant mass:

    >>> import numpy as np
    >>> import solvers
    >>> grid = solvers.SphereGrid(8)
    >>> z = grid.points[..., 2]
    >>> rho0 = ((1 + 0.5 * z) / (4 * np.pi))[None]
    >>> heat = solvers.ConvolutionVelocity(numerator=lambda l: np.zeros(l.shape))
    >>> scheme = solvers.SphereSpectral(grid, heat, diffusion=0.1)
    >>> run = solvers.evolve(scheme, rho0, [0.0, 1.0])
    >>> def degree_one(y):
    ...     return grid.degree_norms(grid.analysis(y[0]))[1]
    >>> decay = degree_one(run.y[-1]) / degree_one(rho0)
    >>> print(f"{decay:.10f} {np.exp(-0.2):.10f} {scheme.mass(run.y[-1])[0]:.12f}")
    0.8187307531 0.8187307531 1.000000000000

    The kernel A(<x, y>) = <x, y> (Funk–Hecke multiplier 4π/3 at l = 1, zero otherwise;
    self-attention at β → 0) gives X = P⊥_x m, m = ∫ y ρ dσ = e_z/6 here, whose polar
    component is X_ϑ = -sin(ϑ)/6 (components (X_ϑ, X_φ) last):

    >>> linear = solvers.ConvolutionVelocity(numerator=lambda l: np.where(l == 1, 4 * np.pi / 3, 0.0))
    >>> field = solvers.SphereSpectral(grid, linear).velocity_field(rho0)
    >>> field.shape
    (1, 9, 18, 2)
    >>> polar = -np.sin(grid.colatitude)[:, None] / 6
    >>> bool(np.allclose(field[0, ..., 0], polar)), bool(np.allclose(field[0, ..., 1], 0))
    (True, True)
    """

    grid_type: ClassVar[type] = SphereGrid

    def __init__(
        self,
        grid: SphereGrid,
        velocity: ConvolutionVelocity,
        diffusion: float = 0.0,
        *,
        rtol: float = 1e-7,
        atol: float = 1e-9,
        tail_tol: float = SPECTRAL_TAIL_TOL,
        on_underresolved: str = "raise",
        dealias: bool = True,
    ) -> None:
        super().__init__()
        check_arg.instance("grid", grid, SphereGrid)
        check_arg.sphere_velocity(velocity, one_species=True)
        self.diffusion = check_arg.nonnegative("diffusion", diffusion)
        if rtol == 0 and atol == 0:
            raise ValueError("rtol and atol must not both be 0")
        dealias = check_arg.boolean("dealias", dealias)
        self.grid = grid
        self.velocity = velocity
        ell = grid.degrees
        self._num, self._den = check_arg.velocity_multipliers(velocity, ell, real=True, index_name="degrees")
        self._lam = ell * (ell + 1.0)
        self._pw = grid.parseval_weights
        self._shape_pad = grid.padded_shape(padded_lmax(grid.lmax)) if dealias else grid.shape
        potential = check_arg.velocity_potential(velocity, grid.shape, "node values on the Gauss–Legendre grid")
        self._potential_alm = None if potential is None else grid.analysis(potential)
        self._external = None if potential is None else -grid.gradient(self._potential_alm, self._shape_pad)
        self._setup(-self.diffusion * self._lam, (grid.nalm,), complex, rtol=rtol, atol=atol, tail_tol=tail_tol,
                    on_underresolved=on_underresolved)
        if velocity.resolve_kernel:
            self._check_kernel(lambda band: gradient_speeds(velocity.numerator, band, 3), grid.lmax)

    # ------------------------------------------------------------------ coefficients
    def _analysis(self, y: np.ndarray) -> np.ndarray:
        if y.shape != (1, *self.grid.shape):
            raise ValueError(f"state must have shape (1, {self.grid.nlat}, {self.grid.nlon}), got {y.shape}")
        return self.grid.analysis(y[0])

    def _synthesis(self, alm: np.ndarray) -> np.ndarray:
        return self.grid.synthesis(alm)[None]

    def _norms(self, alm: np.ndarray) -> np.ndarray:
        """‖ρ‖_{L²(S²)} = (Σ_l Σ_{|m| ≤ l} |a_lm|²)^{1/2} (Parseval)."""
        return np.sqrt(np.sum(self._pw * (alm.real**2 + alm.imag**2), axis=-1))

    def _degree_norms(self, alm: np.ndarray) -> np.ndarray:
        """‖ρ_l‖ for l = 0, …, lmax (:meth:`SphereGrid.degree_norms`), shape (1, lmax + 1)."""
        return self.grid.degree_norms(alm)[None]

    def _grid_words(self) -> str:
        return f"S² with lmax={self.grid.lmax}"

    def _remedy(self) -> str:
        return f"increase lmax (now {self.grid.lmax}) or stop earlier"

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
            if self._external is None:
                rho = rho / z
            else:
                flux /= z
        if self._external is not None:
            flux += self._external
        flux *= rho
        return -g.divergence(flux)

    def velocity_field(self, y: np.ndarray) -> np.ndarray:
        """X = ∇(A ⋆ ρ)/(B ⋆ ρ) - ∇U at the nodes, components (X_ϑ, X_φ) last, shape (1, nlat, nlon, 2)."""
        alm = self.coefficients(y)
        x = self.grid.gradient(self._num * alm)
        if self._den is not None:
            x = x / self.grid.synthesis(self._den * alm)
        if self._potential_alm is not None:
            x = x - self.grid.gradient(self._potential_alm)
        return np.moveaxis(x, 0, -1)[None]

    def mass(self, y: np.ndarray) -> np.ndarray:
        """∫ ρ dσ by Gauss–Legendre quadrature, shape (1,)."""
        return np.sum(np.asarray(y) * self.grid.weights, axis=(-2, -1))

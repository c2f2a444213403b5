"""Finite-volume scheme for zonal densities on S^{d-1} (uniform cells in the polar angle).

Equation (ρ w.r.t. the area measure, ϑ the angle from e_d):

    ∂_t ρ + (1/sin^{d-2}ϑ) ∂_ϑ(sin^{d-2}ϑ ρ u) = 0,
    u = ∂_ϑ(A ⋆ ρ̄) / (B ⋆ ρ̄) - ∂_ϑ U - σ ∂_ϑ log ρ,

the diffusion σΔρ written as the velocity -σ∂_ϑ log ρ (Carrillo–Chertock–Huang,
arXiv:1402.4252, eqs. (1.1)–(1.4); :mod:`solvers._finite_volume_scheme`).

Semi-discretisation, conservative in the weighted measure. Cell i has area
V_i = ∫_cell dσ and faces with areas S_{i±1/2} = |S^{d-2}| sin^{d-2}ϑ_{i±1/2}
(zero at the poles, so no flux crosses them). The cell masses m_i = V_i ρ_i obey

    dm_i/dt = -(S_{i+1/2} F_{i+1/2} - S_{i-1/2} F_{i-1/2}),

so Σ_i m_i is conserved to round-off. Face fluxes (CCH 2015, Section 2):

    F_{i+1/2} = u⁺ ρ⁻_{i+1/2} + u⁻ ρ⁺_{i+1/2},
    u_{i+1/2} = X_{i+1/2} - σ (log ρ_{i+1} - log ρ_i)/d_{i+1/2},

with u⁺ = max(u, 0), u⁻ = min(u, 0), and the one-sided values
ρ⁻_{i+1/2} = ρ_i + (h/2) s_i, ρ⁺_{i+1/2} = ρ_{i+1} - (h/2) s_{i+1} of a limited
reconstruction (even reflection across each pole: the ghost value equals
ρ_0 resp. ρ_{n-1}, so s = 0 in the polar cells, where a smooth zonal ρ has
∂_ϑρ = 0). The face reconstructions lie between neighbouring averages, hence
are ≥ 0, and the two faces of cell i average to ρ_i.

Velocity at the faces. The potential is evaluated exactly for the
piecewise-constant density by Funk–Hecke: ρ̄_l = Σ_i M_{li} ρ̄_i with the cell
moments M_{li} = (1/|S^{d-1}|) ∫_cell q_l dσ (in closed form,
:meth:`ZonalCellGrid.cell_moments`: Σ_i M_{li} = 0 for l ≥ 1 to round-off in
any d, so the uniform state has no velocity), whose cell averages are

    Φ̄_i = (1/V_i) ∫_cell (A ⋆ ρ̄) dσ = (|S^{d-1}|/V_i) Σ_l a_l ρ̄_l M_{li},

and the face velocity is their difference quotient over the same distance as
the diffusive part,

    X_{i+1/2} = (Φ̄_{i+1} - Φ̄_i) / (d_{i+1/2} (B ⋆ ρ̄)(ϑ_f)),
    d_{i+1/2} = (⟨cos ϑ⟩_i - ⟨cos ϑ⟩_{i+1}) / sin ϑ_{i+1/2},
    (B ⋆ ρ̄)(ϑ_f) = Σ_l b_l ρ̄_l q_l(cos ϑ_f)

(B ≡ 1 without a denominator), minus (Ū_{i+1} - Ū_i)/d_{i+1/2} for an external
potential given by its cell averages Ū_i (exact for U linear in t, as above),
for l < L (``n_degrees``, default n; the
multipliers of smooth kernels decay faster than any power, so the truncation
is below round-off unless β is large compared with n²). ⟨·⟩_i is the cell
average. A zonal f is a smooth function of t = cos ϑ, and f̄_i = f(⟨t⟩_i) +
O(h²), so (f̄_{i+1} - f̄_i)/d = ∂_ϑf(ϑ_f) + O(h²) on every face, exactly for f
linear in t: also next to the poles, where the cell averages sit far from the
cell centres in high d (there the distance h of the centres would miss ∂_ϑf by
a factor independent of h: 1.07 at the first face for d = 5, 1.23 for d = 10).

Free energy (exact identity). For USA, with E_h = (1/2) Σ_i V_i ρ_i Φ̄_i (the
energy of the piecewise-constant density, symmetric in ρ), the discrete free
energy 𝓕_h = -E_h + Σ_i V_i ρ_i Ū_i + σ Σ_i V_i ρ_i log ρ_i has the variation
ξ_i = -Φ̄_i + Ū_i + σ log ρ_i and u_{i+1/2} = -(ξ_{i+1} - ξ_i)/d_{i+1/2} exactly, so by
summation by parts, on any state,

    d𝓕_h/dt = Σ_i V_i ξ_i dρ_i/dt = -Σ_f d_f S_f u_f F_f = -D_h ≤ 0

(:meth:`dissipation`; every u_f F_f ≥ 0). With σ = 0 it reads dE_h/dt = D_h ≥ 0,
and for SA with σ = 0, dE_h/dt = Σ_f d_f S_f Z_f u_f F_f ≥ 0, Z_f = (B ⋆ ρ̄)(ϑ_f).

Positivity and step. A forward-Euler step keeps m_i ≥ 0 when
dt · 2 max(S_{i+1/2} u⁺_{i+1/2}, -S_{i-1/2} u⁻_{i-1/2}) ≤ V_i (outflow at most
λ|u|ρ^± through each face, the two faces splitting ρ_i), and the diffusion is
stable when dt σ (S_{i+1/2}/d_{i+1/2} + S_{i-1/2}/d_{i-1/2}) ≤ V_i; dt* is the smaller of the two
bounds over the cells. Time stepping is SSP-RK3 with the step policy of
:mod:`solvers._finite_volume_scheme`,

    dt = min( cfl · dt*,  cfl_growth / Λ ),
    Λ = max_{1 ≤ l < L} l(l+d-2) |a_l| ρ̄ / (b_0 ρ̄),   ρ̄ = mass/|S^{d-1}|

(ρ̄/(b_0 ρ̄) read as ρ̄ when B ≡ 1; :func:`solvers._finite_volume.linear_growth_bound`).

Accuracy: second order in space (first order at isolated extrema, where the
limiter clips), third order in time. Measured (tests/test_fv_diffusion.py):
L¹ orders 1.97–2.00 against the heat-kernel series of pure diffusion
(σ = 0.1, d = 3 and 5), 1.99–2.00 for the drift away from the exact Gibbs
states ρ* ∝ e^{Ψ/σ} (USA β = 1, σ = 0.25; SA β = 6, σ = 0.1; d = 3), and
1.81–2.10 (n = 32 → 64) and 1.74–2.03 (64 → 128) for the linear growth rates
about the uniform state (tests/test_zonal_schemes.py).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from . import _validate as check_arg
from ._finite_volume import CFL_GROWTH, limited_difference, upwind_flux
from ._finite_volume_scheme import FiniteVolumeScheme, log_density
from ._velocity import ConvolutionVelocity
from ._zonal_grid import ZonalCellGrid, gegenbauer_table

__all__ = ["ZonalFiniteVolume"]


class ZonalFiniteVolume(FiniteVolumeScheme):
    r"""Positivity-preserving finite volumes for zonal densities; see the module docstring.

    Solves, for zonal densities ρ_m(ϑ) w.r.t. the area measure of S^{d-1} (ϑ the angle from
    e_d), ∂_t ρ + div(ρ u e_ϑ) = 0 with u = ∂_ϑ(A ⋆ ρ̄)/(B ⋆ ρ̄) - ∂_ϑU - σ∂_ϑ log ρ
    (the diffusion σΔρ written as transport), on n uniform cells in ϑ: the cell masses
    V_i ρ_i change by the upwind fluxes of a limited linear reconstruction through the
    faces of areas S_{i±1/2} = |S^{d-2}| sin^{d-2}ϑ_{i±1/2} (zero at the poles), the
    potential is the exact Funk–Hecke convolution of the piecewise-constant density
    (degrees l < ``n_degrees``), and SSP-RK3 steps dt = min(cfl · dt*, cfl_growth / Λ).
    Mass is conserved to round-off, ρ stays ≥ 0, and for USA the discrete free energy
    𝓕_h = -E_h + Σ_i V_i ρ_i Ū_i + σ Σ_i V_i ρ_i log ρ_i decreases at the rate
    :meth:`dissipation` exactly; its discrete Gibbs states are exactly stationary.

    Parameters
    ----------
    grid : ZonalCellGrid
        n uniform cells in ϑ; the state holds cell averages ρ_m,i, shape (m, n).
    velocity : ConvolutionVelocity
        Funk–Hecke multipliers of A (potential) and B (denominator or None), zero drift;
        an external potential U as cell averages Ū_i.
    diffusion : float
        σ ≥ 0 (default 0), the coefficient of σΔρ.
    cfl : float
        Fraction 0 < cfl ≤ 1 of the bound dt* used by the adaptive step (default 0.5;
        stages are checked against dt* itself).
    cfl_growth : float
        0 < cfl_growth ≤ 1: the adaptive step satisfies Λ dt ≤ cfl_growth, Λ the largest
        linear growth rate about the uniform state (default
        :data:`solvers._finite_volume.CFL_GROWTH` = 0.1).
    dt : float or None
        Fixed step: each output interval is split into equal steps of at most ``dt``
        (validated against dt* at every stage: :class:`~solvers.StepSizeError`), or None
        (default) for CFL control.
    n_degrees : int or None
        Gegenbauer degrees l < ``n_degrees`` of the potential (≥ 2; default n).
    limiter : {"minmod", "mc", "none"}
        Slope limiter of the reconstruction (default "minmod"; "none": first-order upwind).

    Raises
    ------
    TypeError
        ``velocity`` not a ConvolutionVelocity, an option of the wrong type.
    ValueError
        ``grid`` not a ZonalCellGrid, an option out of range (``n_degrees`` < 2), a
        non-zero drift, or multipliers that are not real and finite.

    Notes
    -----
    The semi-discrete scheme (module docstring), with ⟨·⟩_i the cell average,
    d_{i+1/2} = (⟨cos ϑ⟩_i - ⟨cos ϑ⟩_{i+1}) / sin ϑ_{i+1/2} and Φ̄_i the cell averages of
    A ⋆ ρ̄:

    .. math::

        V_i \frac{d\rho_i}{dt} = -\bigl(S_{i+1/2} F_{i+1/2} - S_{i-1/2} F_{i-1/2}\bigr), \qquad
        F_{i+1/2} = u^+_{i+1/2}\, \rho^-_{i+1/2} + u^-_{i+1/2}\, \rho^+_{i+1/2},

    .. math::

        u_{i+1/2} = \frac{\bar\Phi_{i+1} - \bar\Phi_i}{d_{i+1/2}\, (B \star \bar\rho)(\vartheta_{i+1/2})}
        - \frac{\bar U_{i+1} - \bar U_i}{d_{i+1/2}}
        - \sigma\, \frac{\log\rho_{i+1} - \log\rho_i}{d_{i+1/2}} .

    Examples
    --------
    No interaction, the external potential U = -κ cos ϑ (κ = 2, as cell averages) and
    σ = 0.5 on S⁴: the discrete Gibbs state ρ_i ∝ e^{-Ū_i/σ} makes every face velocity
    vanish, so it is stationary to round-off, and the uniform density relaxes to it:

    >>> import numpy as np
    >>> import solvers
    >>> grid = solvers.ZonalCellGrid(5, 16)
    >>> U = -2.0 * grid.cell_averages(np.cos)
    >>> field = solvers.ConvolutionVelocity(numerator=lambda l: np.zeros(l.shape), potential=U)
    >>> scheme = solvers.ZonalFiniteVolume(grid, field, diffusion=0.5)
    >>> gibbs = np.exp(-U / 0.5)
    >>> gibbs = (gibbs / (gibbs @ grid.volumes))[None]
    >>> print(scheme.mass(gibbs).round(12), bool(np.abs(scheme.rhs(gibbs)).max() < 1e-13 * gibbs.max()))
    [1.] True
    >>> run = solvers.evolve(scheme, np.full((1, 16), 1 / grid.area), [0.0, 5.0])
    >>> bool(np.abs(run.y[-1] - gibbs).max() < 1e-5 * gibbs.max()), scheme.mass(run.y[-1]).round(12)
    (True, array([1.]))
    """

    grid_type = ZonalCellGrid

    def __init__(
        self,
        grid: ZonalCellGrid,
        velocity: ConvolutionVelocity,
        diffusion: float = 0.0,
        *,
        cfl: float = 0.5,
        cfl_growth: float = CFL_GROWTH,
        dt: float | None = None,
        n_degrees: int | None = None,
        limiter: str = "minmod",
    ) -> None:
        super().__init__(diffusion, cfl, cfl_growth, dt, limiter)
        what = "a ZonalCellGrid (ZonalSphere(d, n, nodes='cells')) for the finite-volume scheme"
        check_arg.instance("grid", grid, ZonalCellGrid, what, error=ValueError)
        check_arg.sphere_velocity(velocity)
        n_degrees = grid.n if n_degrees is None else n_degrees
        if check_arg.positive_int("n_degrees", n_degrees) < 2:
            raise ValueError(f"n_degrees must be an integer >= 2, got {n_degrees!r}")
        self.grid = grid
        self.velocity = velocity
        self.domain_area = grid.area
        self._species_weights = velocity.weights
        ell = np.arange(n_degrees)
        num, den = check_arg.velocity_multipliers(velocity, ell, real=True, index_name="degrees")
        self._growth_rates = ell * (ell + grid.d - 2) * np.abs(num)
        self._denominator_zero = None if den is None else float(den[0])
        self._num, self._den = num, den
        moments = self._moments = grid.cell_moments(int(n_degrees))
        self._dist = -np.diff(grid.cell_averages(np.cos)) / np.sin(grid.faces[1:-1])
        # Face values as matrices acting on cell averages of the marginal: the difference quotient of
        # the cell averages Φ̄_i = (|S|/V_i) Σ_l a_l ρ̄_l M_li, and B ⋆ ρ̄ at the face.
        averages = (1.0 / grid.relative_weights)[:, None] * (moments.T @ (num[:, None] * moments))
        self._dphi = np.diff(averages, axis=0) / self._dist[:, None]
        q_faces = gegenbauer_table(int(n_degrees), grid.d, np.cos(grid.faces[1:-1]))
        self._bface = None if den is None else (q_faces * den[None, :]) @ moments
        potential = check_arg.velocity_potential(velocity, (grid.n,), "cell averages")
        # -∂_ϑ U: at the faces the difference quotient of the cell averages, at the centres their average
        self._external_faces = None if potential is None else -np.diff(potential) / self._dist
        self._s_inner = grid.face_areas[1:-1]
        self._inv_vol = 1.0 / grid.volumes
        conductance = np.concatenate([[0.0], self._s_inner / self._dist, [0.0]])
        top = float(np.max(self.diffusion * (conductance[1:] + conductance[:-1]) * self._inv_vol))
        self._diffusive_step = np.inf if top == 0 else 1.0 / top

    def velocity_field(self, y: np.ndarray) -> np.ndarray:
        """X = ∂_ϑ(A ⋆ ρ̄)/(B ⋆ ρ̄) at the cell centres ϑ_i (the polar component dϑ/dt), shape (m, n).

        The potential of the piecewise-constant density, as at the faces; the
        diffusive part -σ∂_ϑ log ρ is not included.
        """
        y = self._as_state(y)
        marginal = self._species_weights @ y
        numerator, denominator = self._centre_matrices
        x = numerator @ marginal
        if denominator is not None:
            x = x / (denominator @ marginal)
        if self._external_faces is not None:
            faces = np.concatenate([[0.0], self._external_faces, [0.0]])
            x = x + 0.5 * (faces[1:] + faces[:-1])
        return np.broadcast_to(x, y.shape).copy()

    @cached_property
    def _centre_matrices(self) -> tuple[np.ndarray, np.ndarray | None]:
        """∂_ϑ(A ⋆ ·) and B ⋆ · at the cell centres as matrices acting on cell averages."""
        q, dq = gegenbauer_table(self._num.size, self.grid.d, self.grid.t, derivative=True)
        numerator = (-np.sin(self.grid.polar)[:, None] * dq * self._num[None, :]) @ self._moments
        return numerator, None if self._den is None else (q * self._den[None, :]) @ self._moments

    def face_velocity(self, y: np.ndarray) -> np.ndarray:
        """u_{i+1/2} = X_{i+1/2} - σ (log ρ_{i+1} - log ρ_i)/d_{i+1/2} at the n-1 interior faces, shape (m, n-1)."""
        y = self._as_state(y)
        marginal = self._species_weights @ y
        x = self._dphi @ marginal
        if self._bface is not None:
            x = x / (self._bface @ marginal)
        if self._external_faces is not None:
            x = x + self._external_faces
        if self.diffusion > 0:
            return x - self.diffusion * np.diff(log_density(y), axis=-1) / self._dist
        return np.broadcast_to(x, (y.shape[0], x.size))

    def face_fluxes(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(u_f, F_f, d_f S_f) at the n-1 interior faces, each of shape (m, n-1)."""
        y = self._as_state(y)
        u = self.face_velocity(y)
        flux = self._upwind(y, u)
        return u, flux, np.broadcast_to(self._dist * self._s_inner, flux.shape)

    def _upwind(self, y: np.ndarray, u: np.ndarray) -> np.ndarray:
        """F_{i+1/2} = u⁺ ρ⁻ + u⁻ ρ⁺ at the interior faces, shape (m, n-1)."""
        jump = np.diff(y, axis=-1)
        zero = np.zeros(y.shape[:-1] + (1,))
        # even reflection across the poles: the ghost differences are zero
        backward = np.concatenate([zero, jump], axis=-1)
        forward = np.concatenate([jump, zero], axis=-1)
        half = 0.5 * limited_difference(backward, forward, self.limiter)
        return upwind_flux(u, (y + half)[..., :-1], (y - half)[..., 1:])

    def _stage(self, y: np.ndarray) -> tuple[np.ndarray, float]:
        """dρ_i/dt = -(S_{i+1/2} F_{i+1/2} - S_{i-1/2} F_{i-1/2})/V_i and dt* (module docstring)."""
        u = self.face_velocity(y)
        flux = self._s_inner * self._upwind(y, u)
        zero = np.zeros(y.shape[:-1] + (1,))
        rate = -np.diff(np.concatenate([zero, flux, zero], axis=-1), axis=-1) * self._inv_vol
        # outflow through the south (right) and north (left) face of every cell
        out_right = np.concatenate([self._s_inner * np.maximum(u, 0.0), zero], axis=-1)
        out_left = np.concatenate([zero, -self._s_inner * np.minimum(u, 0.0)], axis=-1)
        top = float(np.max(2 * np.maximum(out_right, out_left) * self._inv_vol))
        return rate, min(np.inf if top == 0 else 1.0 / top, self._diffusive_step)

    def _degree_norms(self, y: np.ndarray) -> np.ndarray:
        """|ρ_l| of the piecewise-constant density, l = 0, …, n-1, shape (m, n)."""
        return np.abs(y @ self._all_moments.T)

    @cached_property
    def _all_moments(self) -> np.ndarray:
        """Cell moments M_li for every degree l < n the grid represents."""
        return self._moments if self._moments.shape[0] == self.grid.n else self.grid.cell_moments(self.grid.n)

    def mass(self, y: np.ndarray) -> np.ndarray:
        """Σ_i V_i ρ_m,i, per species (any leading axes)."""
        return np.asarray(y, dtype=float) @ self.grid.volumes

    def _as_state(self, y: np.ndarray) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        n, m = self.grid.n, self.velocity.n_species
        if y.ndim != 2 or y.shape != (m, n):
            raise ValueError(f"state must be cell averages of shape ({m}, {n}) (species, cells), got {y.shape}")
        return y

"""Finite-volume scheme on S² on a reduced latitude–longitude grid.

    ∂_t ρ + div(ρ X) = σ Δρ,     X = ∇(A ⋆ ρ) / (B ⋆ ρ)

Grid (why this one)
-------------------
``n_lat`` latitude bands of equal width Δϑ = π/n_lat (ϑ the colatitude);
band i is cut into n_i equal cells in longitude, n_i = n_max / 2^k with
n_max = 2 n_lat and 2^k the largest power of two with 2^k ≤ 1/sin ϑ_i
(ϑ_i the band's mid-colatitude), and n_i ≥ 4. So the zonal width
sin ϑ_i · 2π/n_i of every cell lies within a factor two of Δϑ all the way to
the poles (a plain latitude–longitude grid would have cells of width
O(Δϑ²) there, forcing Δt = O(Δϑ²) for transport and O(Δϑ⁴) for diffusion).
The polar bands are rings of n_0 ≥ 4 triangles meeting at the pole: the pole
is a vertex, never a face, so no flux and no special treatment is needed
there; reconstruction across the pole uses the cell on the opposite
meridian. Because consecutive n_i differ by a power of two, a face between
bands is split into the sub-faces of the finer band (non-conforming but
nested), and every sub-face has one cell on each side. Reduction keeps the
grid logically simple (rings) with no singular cells, unlike a cubed sphere
needs no coordinate patches, and gives exact face lengths and cell areas:

    |cell| = (cos ϑ_{i-1/2} - cos ϑ_{i+1/2}) 2π/n_i,  zonal face length Δϑ,
    meridional sub-face length sin ϑ_{i+1/2} · 2π/n_f,

n_f = max(n_i, n_{i+1}); consecutive n_i differ by a power of two (1, 2 or 4
next to the poles), so the cells of the coarser band are unions of sub-faces'
neighbours.

Fluxes (upwind with limited linear reconstruction, Carrillo–Chertock–Huang
2015, arXiv:1402.4252, Section 2)
---------------------------------------------------------------------------
In each cell ρ ≈ ρ_c + s_ϑ (ϑ - ϑ̄_c) + s_φ (φ - φ_c), ϑ̄_c the area
centroid of the band; s_φ, s_ϑ are minmod-limited slopes (neighbours across
a refinement are averaged or repeated), then scaled so that every face value
lies in [0, 2ρ_c]. The flux through a face of length L with normal velocity
u is

    F = L (u⁺ ρ_left + u⁻ ρ_right),    u = X - σ (log ρ^c_right - log ρ^c_left) / d,

ρ_left/right the face values, d the distance of the centroids and ρ^c the
cell values, shifted by s_φ δφ to the sub-face's longitude on the coarse
side of a refinement (which keeps the gradient consistent there; such a
shifted value is ≥ ρ_c/4 > 0). The diffusion enters as the velocity -σ∇log ρ
(:mod:`solvers._finite_volume_scheme`): where no shift occurs (all zonal
faces, and meridional faces between bands of equal n_i) the diffusive
part is the exact discrete gradient flow of the entropy σ Σ|c| ρ_c log ρ_c;
across the refinement lines it holds to O(h²).
The velocity comes from the same potential as the spectral scheme: the
coefficients of ρ - ρ̄ (ρ̄ its mean, whose coefficient is exact, so the
uniform density is exactly stationary) are computed from the cell averages by
the midpoint rule (adjoint spherical-harmonic synthesis with the cell areas
as weights, band
limit ``lmax_velocity``), and ∇(A ⋆ ρ) and B ⋆ ρ are synthesised exactly at
the face midpoints (ducc0 synthesis on the rings of faces).

Properties: mass is conserved to round-off (fluxes are antisymmetric); with
forward Euler ρ stays ≥ 0 when Δt Σ_faces 2 u⁺ L ≤ |cell| in every cell,
since outflow through a face is at most 2ρ_c u⁺ L, and the diffusion is
stable when Δt σ Σ_faces L/d ≤ |cell|; SSP-RK3 (Shu–Osher) is a convex
combination of such steps, so every step with Δt ≤ Δt* (the smaller of the two
bounds over the cells) at each stage keeps ρ ≥ 0.
The adaptive step follows the policy of :mod:`solvers._finite_volume_scheme`,

    Δt = min( cfl · Δt*,  cfl_growth / Λ ),   Λ = max_{l ≥ 1} l(l+1) |A_l| ρ̄ / (B_0 ρ̄),

ρ̄ = mass/4π (ρ̄/(B_0 ρ̄) read as ρ̄ when B ≡ 1): Λ is the largest linear
growth rate about the uniform state
(:func:`solvers._finite_volume.linear_growth_bound`), which bounds the step
where the velocity, hence 1/Δt*, is tiny; a stage violating Δt ≤ Δt* rejects
the step, which is retried with cfl times that stage's bound.
Second order in space away from the refinement lines and the poles (where
the reconstruction is first order on a set of cells of vanishing area), third
order in time. Measured on a smooth SA problem (β = 2, σ = 0.1, t = 0.5,
against the spectral solution): L¹ errors 1.2e-2, 3.5e-3, 9.2e-4, 2.4e-4 at
n_lat = 8, 16, 32, 64 (orders 1.80, 1.93, 1.97; a centred diffusive flux gave
2.1e-2, 6.4e-3, 1.7e-3, 4.4e-4); the maximum error converges at order
≈ 1.2–1.3 (limiter clipping at the density peak, the refinement lines and the
polar cells, where the difference quotient across the cap is 9/8 of the
derivative). Pure diffusion against the heat kernel: L¹ orders 1.94, 2.03
(tests/test_fv_diffusion.py).

State: cell averages, shape (1, n_cells), cells ordered band by band from the
north pole, west to east from φ = 0. :meth:`SphereFiniteVolume.from_grid`
turns node values on the Gauss–Legendre grid into the cell averages of their
spherical-harmonic interpolant, exact to round-off (each longitude mode
averaged exactly, Gauss–Legendre in ϑ); where rough data make some of them
negative (Gibbs), it blends them with a positive second-order nodal rule of
the same mass, as little as keeps every cell ≥ 0. :meth:`SphereFiniteVolume.to_grid`
evaluates the (limited, positive) linear reconstruction at the Gauss–Legendre
nodes.
"""

from __future__ import annotations

import logging
from functools import cached_property

import numpy as np
import scipy.sparse as sp
import ducc0.sht.experimental as _sht

from . import _validate as check_arg
from ._finite_volume import CFL_GROWTH, limited_difference
from ._finite_volume_scheme import FiniteVolumeScheme, log_density
from ._errors import UnderResolvedError
from ._sphere_grid import SphereGrid
from ._velocity import ConvolutionVelocity

logger = logging.getLogger(__name__)

__all__ = ["SphereFiniteVolume", "ReducedGrid"]


class ReducedGrid:
    """Reduced latitude–longitude finite-volume grid with ``n_lat`` bands (see module docstring)."""

    def __init__(self, n_lat: int) -> None:
        if isinstance(n_lat, bool) or not isinstance(n_lat, (int, np.integer)):
            raise TypeError(f"n_lat must be an even integer number of latitude bands, got {n_lat!r}")
        if n_lat < 4 or n_lat % 2:
            raise ValueError(f"n_lat must be an even integer >= 4, got {n_lat}")
        self.n_lat = int(n_lat)
        n_max = 2 * self.n_lat
        self.dtheta = np.pi / self.n_lat
        self.edges = self.dtheta * np.arange(self.n_lat + 1)
        self.mid = 0.5 * (self.edges[1:] + self.edges[:-1])
        a, b = self.edges[:-1], self.edges[1:]
        self.centroid = (np.sin(b) - b * np.cos(b) - np.sin(a) + a * np.cos(a)) / (np.cos(a) - np.cos(b))
        max_k = 0
        while n_max % 2 ** (max_k + 1) == 0 and n_max // 2 ** (max_k + 1) >= 4:
            max_k += 1
        k = np.minimum(np.floor(np.log2(1.0 / np.sin(self.mid))).astype(int), max_k)
        self.n_lon = n_max // 2**k
        self.offsets = np.concatenate([[0], np.cumsum(self.n_lon)])
        self.n_cells = int(self.offsets[-1])
        self.dphi = 2 * np.pi / self.n_lon
        band = np.repeat(np.arange(self.n_lat), self.n_lon)
        self.band = band
        local = np.arange(self.n_cells) - self.offsets[band]
        self.local = local
        self.cell_dphi = self.dphi[band]
        self.cell_phi = (local + 0.5) * self.cell_dphi
        self.cell_theta = self.centroid[band]
        self.area = (np.cos(a) - np.cos(b))[band] * self.cell_dphi

    def ring_geometry(self, theta: np.ndarray, n_phi: np.ndarray, phi0: np.ndarray) -> dict[str, np.ndarray]:
        """ducc0 ring description of points on rings (ϑ, n_φ equispaced from φ0)."""
        n_phi = np.asarray(n_phi, dtype=np.uintp)
        start = np.concatenate([[0], np.cumsum(n_phi)[:-1]]).astype(np.uintp)
        return {
            "theta": np.asarray(theta, dtype=float),
            "nphi": n_phi,
            "phi0": np.asarray(phi0, dtype=float),
            "ringstart": start,
        }


class SphereFiniteVolume(FiniteVolumeScheme):
    r"""Positivity-preserving second-order finite volumes on S² (see module docstring).

    Solves ∂_t ρ + div(ρu) = 0, u = X - σ∇log ρ, X = ∇(A ⋆ ρ)/(B ⋆ ρ) - ∇U, for the
    cell averages of one density on a reduced latitude–longitude grid (``n_lat`` bands of
    width π/n_lat, fewer cells near the poles so that every cell is about as wide as it is
    tall), with upwind fluxes of a limited linear reconstruction (Carrillo–Chertock–Huang
    2015, arXiv:1402.4252, Section 2), X synthesised exactly at the face midpoints from the
    spherical-harmonic coefficients of ρ up to ``lmax_velocity``, and SSP-RK3 with
    Δt = min(cfl · Δt*, cfl_growth / Λ). Mass is conserved to round-off and every step
    keeps ρ ≥ 0; the uniform density is exactly stationary. The state is the cell
    averages, shape (1, n_cells), band by band from the north pole
    (:meth:`from_grid` / :meth:`to_grid` convert from and to node values on ``grid``).

    Parameters
    ----------
    grid : SphereGrid
        Gauss–Legendre grid of the densities handed in and out
        (:meth:`from_grid`, :meth:`to_grid`); its ``lmax`` is the default
        band limit of the velocity.
    velocity : ConvolutionVelocity
        Funk–Hecke multipliers of A (potential) and B (or None); one species,
        zero drift (ValueError otherwise); an external potential U as node
        values on ``grid``, whose gradient at the faces comes from its
        expansion to ``grid.lmax``.
    diffusion : float
        σ ≥ 0 (default 0), the coefficient of σΔρ, taken as the velocity -σ∇log ρ.
    n_lat : int, optional
        Number of latitude bands (even, ≥ 4); default the even number ≥ ``grid.nlat``.
    cfl : float
        Fraction 0 < cfl ≤ 1 of the bound Δt* used by the adaptive step (default 0.8;
        stages are checked against Δt* itself).
    cfl_growth : float
        0 < cfl_growth ≤ 1: the adaptive step satisfies Λ Δt ≤ cfl_growth, Λ the
        largest linear growth rate about the uniform state (default
        :data:`solvers._finite_volume.CFL_GROWTH` = 0.1).
    dt : float or None
        Fixed step: each output interval is split into equal steps of at most ``dt``
        (validated against Δt* at every stage: :class:`~solvers.StepSizeError`), or None
        (default) for CFL control.
    limiter : {"minmod", "mc", "none"}
        Slope limiter of the reconstruction (default "minmod"; "none": first-order upwind).
    lmax_velocity : int, optional
        Band limit of the potential (default ``grid.lmax``).

    Raises
    ------
    TypeError
        ``grid`` not a SphereGrid, ``velocity`` not a ConvolutionVelocity, ``n_lat`` not
        an integer, an option of the wrong type.
    ValueError
        An option out of range (``n_lat`` odd or < 4, ``lmax_velocity`` not a positive
        integer), more than one species, a non-zero drift, or multipliers that are not
        real and finite.

    Notes
    -----
    Flux through a face of length L between cells whose centroids lie a distance d apart,
    and the stage bound over the cells c with faces f (|c| the cell area):

    .. math::

        F = L\,(u^+ \rho_{\mathrm{left}} + u^- \rho_{\mathrm{right}}), \qquad
        u = X - \sigma\, \frac{\log\rho^c_{\mathrm{right}} - \log\rho^c_{\mathrm{left}}}{d},

    .. math::

        \Delta t^* = \min\Bigl( \min_c \frac{\lvert c\rvert}{2 \sum_f \lvert f\rvert u_f^+},\;
        \min_c \frac{\lvert c\rvert}{\sigma \sum_f \lvert f\rvert / d_f} \Bigr).

    Examples
    --------
    The kernel A(<x, y>) = <x, y> (Funk–Hecke multiplier 4π/3 at l = 1: X = P⊥_x m,
    self-attention at β → 0) on the grid of lmax = 8: 10 bands (the even number ≥ nlat = 9)
    of 5 to 20 cells:

    >>> import numpy as np
    >>> import solvers
    >>> grid = solvers.SphereGrid(8)
    >>> linear = solvers.ConvolutionVelocity(numerator=lambda l: np.where(l == 1, 4 * np.pi / 3, 0.0))
    >>> scheme = solvers.SphereFiniteVolume(grid, linear)
    >>> scheme.mesh.n_lat, scheme.mesh.n_lon.tolist(), scheme.mesh.n_cells
    (10, [5, 10, 20, 20, 20, 20, 20, 20, 10, 5], 150)

    The uniform density has mass 1 and is stationary:

    >>> uniform = scheme.from_grid(np.full((1, *grid.shape), 1 / (4 * np.pi)))
    >>> print(scheme.mass(uniform).round(12), bool(np.abs(scheme.rhs(uniform)).max() < 1e-15))
    [1.] True

    From ρ = (1 + z/2)/4π (mass 1, m = e_z/6) the density gathers towards the north pole:
    the mean ∫ z ρ dσ of its reconstruction (:meth:`to_grid`) grows, at constant mass and
    with ρ > 0:

    >>> z = grid.points[..., 2]
    >>> y0 = scheme.from_grid(((1 + 0.5 * z) / (4 * np.pi))[None])
    >>> print(scheme.mass(y0).round(12))
    [1.]
    >>> run = solvers.evolve(scheme, y0, [0.0, 1.0])
    >>> m_z = [float(np.sum(grid.weights * z * scheme.to_grid(y)[0])) for y in run.y]
    >>> bool(m_z[1] > m_z[0])
    True
    >>> bool(abs(scheme.mass(run.y[-1])[0] - 1) < 1e-13), bool(run.y[-1].min() > 0)
    (True, True)
    """

    grid_type = SphereGrid

    def __init__(
        self,
        grid: SphereGrid,
        velocity: ConvolutionVelocity,
        diffusion: float = 0.0,
        *,
        n_lat: int | None = None,
        cfl: float = 0.8,
        cfl_growth: float = CFL_GROWTH,
        dt: float | None = None,
        limiter: str = "minmod",
        lmax_velocity: int | None = None,
    ) -> None:
        super().__init__(diffusion, cfl, cfl_growth, dt, limiter)
        check_arg.instance("grid", grid, SphereGrid)
        check_arg.sphere_velocity(velocity, one_species=True)
        self.grid = grid
        self.velocity = velocity
        self.domain_area = 4 * np.pi
        self._species_weights = velocity.weights
        lmax_velocity = grid.lmax if lmax_velocity is None else lmax_velocity
        self.lmax_velocity = check_arg.positive_int("lmax_velocity", lmax_velocity)
        self.mesh = ReducedGrid(n_lat if n_lat is not None else grid.nlat + grid.nlat % 2)
        velocity_grid = SphereGrid(max(self.lmax_velocity, 2))
        ell = velocity_grid.degrees
        self.velocity_grid = velocity_grid
        numerator, self._den = check_arg.velocity_multipliers(velocity, ell, real=True, index_name="degrees")
        self._num = numerator * (ell <= self.lmax_velocity)
        self._growth_rates = ell * (ell + 1) * np.abs(self._num)
        self._denominator_zero = None if self._den is None else self._den[0]
        self._build()
        potential = check_arg.velocity_potential(velocity, grid.shape, "node values on the Gauss–Legendre grid")
        self._potential_alm = None if potential is None else grid.analysis(potential)
        if potential is None:
            self._external_zonal = self._external_merid = None
        else:  # -∇U at the faces, from the expansion of U's node values (band limit grid.lmax)
            grad = _sht.synthesis(alm=self._potential_alm[None], lmax=grid.lmax, spin=1, mode="DERIV1",
                                  **self._faces_geom)
            self._external_zonal = -grad[1, : self._n_zonal]
            self._external_merid = -grad[0, self._n_zonal :]

    # ------------------------------------------------------------------ geometry
    def _build(self) -> None:
        m = self.mesh
        n, off = m.n_lon, m.offsets
        idx = np.arange(m.n_cells)
        band, local = m.band, m.local
        self._west = off[band] + (local - 1) % n[band]
        self._east = off[band] + (local + 1) % n[band]
        # zonal faces: face c is the west face of cell c (between west neighbour and c)
        self._zonal_len = np.full(m.n_cells, m.dtheta)
        self._zonal_dist = np.sin(m.cell_theta) * m.cell_dphi
        # meridional sub-faces between bands i and i+1
        up, down, dphi_up, dphi_down, sub_len, sub_dist, sub_theta, sub_nphi, sub_phi0 = ([] for _ in range(9))
        for i in range(m.n_lat - 1):
            nf = max(n[i], n[i + 1])
            k = np.arange(nf)
            phi = (k + 0.5) * 2 * np.pi / nf
            cu = k // (nf // n[i])
            cd = k // (nf // n[i + 1])
            up.append(off[i] + cu)
            down.append(off[i + 1] + cd)
            dphi_up.append(phi - (cu + 0.5) * m.dphi[i])
            dphi_down.append(phi - (cd + 0.5) * m.dphi[i + 1])
            sub_len.append(np.full(nf, np.sin(m.edges[i + 1]) * 2 * np.pi / nf))
            sub_dist.append(np.full(nf, m.centroid[i + 1] - m.centroid[i]))
            sub_theta.append(m.edges[i + 1])
            sub_nphi.append(nf)
            sub_phi0.append(np.pi / nf)
        self._up, self._down = np.concatenate(up), np.concatenate(down)
        self._dphi_up, self._dphi_down = np.concatenate(dphi_up), np.concatenate(dphi_down)
        self._sub_len, self._sub_dist = np.concatenate(sub_len), np.concatenate(sub_dist)
        self._dtheta_up = m.edges[band[self._up] + 1] - m.cell_theta[self._up]
        self._dtheta_down = m.edges[band[self._down]] - m.cell_theta[self._down]
        n_sub = self._up.size
        # ring geometries: cell centroids; zonal faces (band mid, φ = jΔφ); sub-faces
        self._cells_geom = m.ring_geometry(m.centroid, n, 0.5 * m.dphi)
        self._faces_geom = m.ring_geometry(
            np.concatenate([m.mid, sub_theta]), np.concatenate([n, sub_nphi]), np.concatenate([np.zeros(m.n_lat), sub_phi0])
        )
        self._n_zonal = m.n_cells
        # neighbour values across bands: sparse averaging (finer → coarser) or repetition (coarser → finer)
        self._north = self._band_neighbour_matrix(-1)
        self._south = self._band_neighbour_matrix(+1)
        pole_n = band == 0
        pole_s = band == m.n_lat - 1
        self._dist_north = np.where(pole_n, 2 * m.cell_theta, m.cell_theta - m.centroid[np.maximum(band - 1, 0)])
        self._dist_south = np.where(
            pole_s, 2 * (np.pi - m.cell_theta), m.centroid[np.minimum(band + 1, m.n_lat - 1)] - m.cell_theta
        )
        # largest |ϑ - ϑ̄| over a cell's faces, for the slope scaling
        self._htheta = np.maximum(m.edges[band + 1] - m.cell_theta, m.cell_theta - m.edges[band])
        # diffusive stability bound Δt σ Σ L/d ≤ |cell| (state independent)
        diff_sum = 2 * self._zonal_len / self._zonal_dist
        diff_sum = diff_sum + np.bincount(self._up, self._sub_len / self._sub_dist, m.n_cells)
        diff_sum = diff_sum + np.bincount(self._down, self._sub_len / self._sub_dist, m.n_cells)
        self._diffusive_step = float(np.min(m.area / (self.diffusion * diff_sum))) if self.diffusion > 0 else np.inf
        # conservative update: cell ← Σ ± face fluxes
        rows = np.concatenate([idx, self._west, self._up, self._down])
        cols = np.concatenate([np.arange(m.n_cells), np.arange(m.n_cells), m.n_cells + np.arange(n_sub), m.n_cells + np.arange(n_sub)])
        vals = np.concatenate([np.ones(m.n_cells), -np.ones(m.n_cells), -np.ones(n_sub), np.ones(n_sub)])
        self._div = sp.csr_matrix((vals / m.area[rows], (rows, cols)), shape=(m.n_cells, m.n_cells + n_sub))
        self._interp = None
        self._average_rule: tuple[dict[str, np.ndarray], np.ndarray, sp.csr_matrix] | None = None

    def _band_neighbour_matrix(self, direction: int) -> sp.csr_matrix:
        m = self.mesh
        rows, cols, vals = [], [], []
        for i in range(m.n_lat):
            cells = m.offsets[i] + np.arange(m.n_lon[i])
            j = i + direction
            if j < 0 or j >= m.n_lat:  # across the pole: the cell on the opposite meridian of the same band
                rows.append(cells)
                cols.append(m.offsets[i] + (np.arange(m.n_lon[i]) + m.n_lon[i] // 2) % m.n_lon[i])
                vals.append(np.ones(m.n_lon[i]))
                continue
            ni, nj = m.n_lon[i], m.n_lon[j]
            if nj <= ni:
                rows.append(cells)
                cols.append(m.offsets[j] + np.arange(ni) // (ni // nj))
                vals.append(np.ones(ni))
            else:
                r = nj // ni
                rows.append(np.repeat(cells, r))
                cols.append(m.offsets[j] + np.arange(nj))
                vals.append(np.full(nj, 1.0 / r))
        return sp.csr_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(m.n_cells, m.n_cells)
        )

    # ------------------------------------------------------------------ state conversion
    def from_grid(self, values: np.ndarray) -> np.ndarray:
        """Cell averages (…, n_cells) of non-negative node values (…, nlat, nlon) on the Gauss–Legendre grid.

        The averages are those of the spherical-harmonic interpolant
        f = Σ f_lm Y_lm of the nodes, exact up to round-off: in longitude each
        mode is averaged exactly, (1/Δφ) ∫ e^{imφ} dφ over a cell =
        sinc(mΔφ/2) e^{imφ_c} (a factor on the Legendre coefficients of the
        rings, ducc0 ``alm2leg``/``leg2map``); in colatitude a q-point
        Gauss–Legendre rule in ϑ with weight sin ϑ per band, q chosen so that
        it averages trigonometric polynomials of degree lmax + 1 (which
        P̄_lm(cos ϑ) sin ϑ is) to 1e-14. (In cos ϑ the integrand is not smooth
        at the poles for odd m.)

        Rough data (a cap indicator, a histogram) make the interpolant undershoot
        (Gibbs), and some of these averages S_c < 0. Then each density is the
        blend θ S + (1 - θ) P with the positive rule P_c = μ (bilinear
        interpolation of the nodes in (ϑ, φ) at the cell centroid), second
        order, μ = Σ|c| S_c / Σ|c| P̃_c giving it the same mass, and the largest
        θ ∈ [0, 1] keeping every cell ≥ 0, θ = min_{S_c < 0} P_c / (P_c - S_c):
        mass exact, ρ ≥ 0, and θ = 1 (the spectral averages, unchanged) whenever
        they are all ≥ 0.

        Raises
        ------
        ValueError
            For a wrong shape, or negative or non-finite node values.
        """
        values = np.asarray(values, dtype=float)
        if values.shape[-2:] != self.grid.shape:
            raise ValueError(f"values must end with the grid's shape {self.grid.shape}, got {values.shape}")
        if not np.all(np.isfinite(values)) or np.any(values < 0):
            raise ValueError(
                f"values must be finite and non-negative densities at the nodes, got minimum {np.min(values):.3g}"
            )
        geom, factor, average = self._cell_average_rule()
        lmax = self.grid.lmax
        mval = np.arange(lmax + 1, dtype=np.uintp)
        mstart = (mval * (2 * lmax + 1 - mval) // 2).astype(np.uintp)
        lead = values.shape[:-2]
        flat = values.reshape(-1, *self.grid.shape)
        out = np.empty((flat.shape[0], self.mesh.n_cells))
        for k in range(flat.shape[0]):
            alm = self.grid.analysis(flat[k])[None]
            leg = _sht.alm2leg(alm=alm, lmax=lmax, theta=geom["theta"], spin=0, mval=mval, mstart=mstart)
            leg *= factor
            pts = _sht.leg2map(leg=leg, nphi=geom["nphi"], phi0=geom["phi0"], ringstart=geom["ringstart"])[0]
            out[k] = average @ pts
            if out[k].min() < 0:
                out[k] = self._positive_blend(out[k], self._bilinear_rule @ flat[k].ravel())
        return out.reshape(*lead, self.mesh.n_cells)

    def _positive_blend(self, spectral: np.ndarray, nodal: np.ndarray) -> np.ndarray:
        """θ S + (1 - θ) μ P̃ (:meth:`from_grid`): the largest θ keeping every cell ≥ 0."""
        area = self.mesh.area
        positive = nodal * (float(spectral @ area) / float(nodal @ area))
        below = spectral < 0
        theta = float(np.min(positive[below] / (positive[below] - spectral[below])))
        logger.info("%s: from_grid blends the spectral cell averages (weight %.3g) with a positive nodal rule", self.name, theta)
        return theta * spectral + (1 - theta) * positive

    @cached_property
    def _bilinear_rule(self) -> sp.csr_matrix:
        """Sparse (n_cells, nlat·nlon) bilinear interpolation in (ϑ, φ) of the nodes at the cell centroids
        (constant in ϑ beyond the outermost rings)."""
        m, g = self.mesh, self.grid
        theta = g.colatitude
        i = np.clip(np.searchsorted(theta, m.cell_theta) - 1, 0, g.nlat - 2)
        t = np.clip((m.cell_theta - theta[i]) / (theta[i + 1] - theta[i]), 0.0, 1.0)
        x = m.cell_phi * g.nlon / (2 * np.pi)
        j = np.floor(x).astype(int) % g.nlon
        s = x - np.floor(x)
        rows = np.tile(np.arange(m.n_cells), 4)
        cols = np.concatenate([i * g.nlon + j, i * g.nlon + (j + 1) % g.nlon,
                               (i + 1) * g.nlon + j, (i + 1) * g.nlon + (j + 1) % g.nlon])
        vals = np.concatenate([(1 - t) * (1 - s), (1 - t) * s, t * (1 - s), t * s])
        return sp.csr_matrix((vals, (rows, cols)), shape=(m.n_cells, g.nlat * g.nlon))

    def _cell_average_rule(self) -> tuple[dict[str, np.ndarray], np.ndarray, sp.csr_matrix]:
        """Rings of the ϑ-Gauss nodes (cell centres in φ), the sinc factors per ring and order, and
        the sparse matrix summing the weighted ring values into cell averages (built once)."""
        if self._average_rule is not None:
            return self._average_rule
        m = self.mesh
        lmax = self.grid.lmax
        width = m.dtheta
        degree = lmax + 1
        for q in range(2, 257):  # Gauss error of the band mean of cos(kϑ), k = lmax + 1 (the worst mode)
            x, w = np.polynomial.legendre.leggauss(q)
            error = abs(0.5 * w @ np.cos(0.5 * degree * width * x) - np.sinc(degree * width / (2 * np.pi)))
            if error < 1e-14:
                break
        else:
            logger.warning("%s: cell averages of degree %d on %d bands accurate to %.1e only", self.name, lmax, m.n_lat, error)
        theta = m.edges[:-1, None] + 0.5 * width * (x + 1)[None, :]  # (n_lat, q)
        weight = 0.5 * width * w[None, :] * np.sin(theta) / (np.cos(m.edges[:-1]) - np.cos(m.edges[1:]))[:, None]
        band = np.repeat(np.arange(m.n_lat), q)
        geom = m.ring_geometry(theta.ravel(), m.n_lon[band], 0.5 * m.dphi[band])
        orders = np.arange(lmax + 1)
        factor = np.sinc(orders[None, :] * m.dphi[band][:, None] / (2 * np.pi))[None].astype(complex)
        ring = np.repeat(np.arange(band.size), m.n_lon[band])
        cell = m.offsets[band[ring]] + (np.arange(ring.size) - geom["ringstart"][ring].astype(int))
        average = sp.csr_matrix((weight.ravel()[ring], (cell, np.arange(ring.size))), shape=(m.n_cells, ring.size))
        self._average_rule = (geom, factor, average)
        return self._average_rule

    def to_grid(self, y: np.ndarray) -> np.ndarray:
        """Node values (…, nlat, nlon) on the Gauss–Legendre grid from cell averages (…, n_cells).

        Evaluates the limited linear reconstruction of the containing cell
        (second order, non-negative for non-negative ρ).
        """
        y = np.asarray(y, dtype=float)
        m = self.mesh
        if self._interp is None:
            th = np.repeat(self.grid.colatitude, self.grid.nlon)
            ph = np.tile(self.grid.lon, self.grid.nlat)
            band = np.minimum(np.searchsorted(m.edges, th) - 1, m.n_lat - 1)
            j = np.minimum((ph / m.dphi[band]).astype(int), m.n_lon[band] - 1)
            cell = m.offsets[band] + j
            self._interp = (cell, th - m.cell_theta[cell], ph - m.cell_phi[cell])
        cell, dth, dph = self._interp
        lead = y.shape[:-1]
        flat = y.reshape(-1, m.n_cells)
        out = np.empty((flat.shape[0], cell.size))
        for k in range(flat.shape[0]):
            s_th, s_ph = self._slopes(flat[k])
            out[k] = flat[k][cell] + s_th[cell] * dth + s_ph[cell] * dph
        return out.reshape(*lead, *self.grid.shape)

    # ------------------------------------------------------------------ operator
    def _slopes(self, rho: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.limiter == "none":
            z = np.zeros_like(rho)
            return z, z
        m = self.mesh
        s_ph = limited_difference(rho - rho[self._west], rho[self._east] - rho, self.limiter) / m.cell_dphi
        s_th = limited_difference(
            (rho - self._north @ rho) / self._dist_north, (self._south @ rho - rho) / self._dist_south, self.limiter
        )
        spread = np.abs(s_ph) * 0.5 * m.cell_dphi + np.abs(s_th) * self._htheta
        scale = np.where(spread > rho, np.divide(np.maximum(rho, 0), spread, where=spread > 0, out=np.zeros_like(rho)), 1.0)
        return s_th * scale, s_ph * scale

    def coefficients(self, rho: np.ndarray) -> np.ndarray:
        """Coefficients ρ_lm, l ≤ lmax_velocity, shape (1, nalm), of cell averages ``rho`` (n_cells,).

        Midpoint rule applied to ρ - ρ̄ (ρ̄ = mass/4π, whose coefficient is
        exact), so that the uniform density has exactly zero velocity.
        """
        mean = float(rho @ self.mesh.area) / (4 * np.pi)
        alm = _sht.adjoint_synthesis(
            map=((rho - mean) * self.mesh.area)[None], lmax=self.velocity_grid.lmax, spin=0, **self._cells_geom
        )
        alm[0, 0] += mean * np.sqrt(4 * np.pi)
        return alm

    def _transport_velocity(self, rho: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """X_φ at the zonal faces (n_cells,) and X_ϑ at the meridional sub-faces."""
        alm = self.coefficients(rho)
        lv = self.velocity_grid.lmax
        grad = _sht.synthesis(alm=self._num * alm, lmax=lv, spin=1, mode="DERIV1", **self._faces_geom)
        u_zonal = grad[1, : self._n_zonal]
        u_merid = grad[0, self._n_zonal :]
        if self._den is not None:
            z = _sht.synthesis(alm=self._den * alm, lmax=lv, spin=0, **self._faces_geom)[0]
            if not np.all(z > 0):
                raise UnderResolvedError(
                    f"{self.name}: under-resolved — the normaliser B ⋆ ρ became non-positive (min {z.min():.3g}); "
                    f"the kernel is not resolved with lmax_velocity={self.lmax_velocity}"
                )
            u_zonal = u_zonal / z[: self._n_zonal]
            u_merid = u_merid / z[self._n_zonal :]
        if self._external_zonal is not None:
            u_zonal = u_zonal + self._external_zonal
            u_merid = u_merid + self._external_merid
        return u_zonal, u_merid

    def velocity_field(self, y: np.ndarray) -> np.ndarray:
        """X = ∇(A ⋆ ρ)/(B ⋆ ρ) - ∇U at the Gauss–Legendre nodes of ``grid``, components (X_ϑ, X_φ) last,
        shape (1, nlat, nlon, 2); the potential of the midpoint-rule coefficients, -σ∇log ρ not included."""
        alm = self.coefficients(self._as_state(y)[0])[0]
        x = self.velocity_grid.gradient(self._num * alm, self.grid.shape)
        if self._den is not None:
            x = x / self.velocity_grid.synthesis(self._den * alm, self.grid.shape)
        if self._potential_alm is not None:
            x = x - self.grid.gradient(self._potential_alm)
        return np.moveaxis(x, 0, -1)[None]

    def _faces(self, rho: np.ndarray) -> tuple[np.ndarray, ...]:
        """Normal velocities u and upwind-side values (left, right) of the zonal faces and (up, down)
        of the meridional sub-faces (module docstring)."""
        m = self.mesh
        u_z, u_m = self._transport_velocity(rho)
        s_th, s_ph = self._slopes(rho)
        half = 0.5 * s_ph * m.cell_dphi
        # zonal face c: left = west neighbour (east value), right = c (west value)
        w = self._west
        left = rho[w] + half[w]
        right = rho - half
        up, dn = self._up, self._down
        shift_up = s_ph[up] * self._dphi_up
        shift_dn = s_ph[dn] * self._dphi_down
        v_up = rho[up] + s_th[up] * self._dtheta_up + shift_up
        v_dn = rho[dn] + s_th[dn] * self._dtheta_down + shift_dn
        if self.diffusion > 0:
            log_rho = log_density(rho)
            u_z = u_z - self.diffusion * (log_rho - log_rho[w]) / self._zonal_dist
            log_up, log_dn = log_density(rho[up] + shift_up), log_density(rho[dn] + shift_dn)
            u_m = u_m - self.diffusion * (log_dn - log_up) / self._sub_dist
        return u_z, u_m, left, right, v_up, v_dn

    def face_velocity(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Normal velocities u = X - σ∇log ρ, in the order of the components (X_ϑ, X_φ): southward at
        the meridional sub-faces, shape (1, n_sub), and eastward at the zonal faces, shape
        (1, n_cells) (face c the west face of cell c)."""
        u_z, u_m = self._faces(self._as_state(y)[0])[:2]
        return u_m[None], u_z[None]

    def face_fluxes(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(u_f, F_f, L_f d_f) at the zonal faces followed by the meridional sub-faces, shape (1, n_faces)."""
        u_z, u_m, left, right, v_up, v_dn = self._faces(self._as_state(y)[0])
        u = np.concatenate([u_z, u_m])
        flux = np.maximum(u, 0) * np.concatenate([left, v_up]) + np.minimum(u, 0) * np.concatenate([right, v_dn])
        weight = np.concatenate([self._zonal_len * self._zonal_dist, self._sub_len * self._sub_dist])
        return u[None], flux[None], weight[None]

    def _stage(self, y: np.ndarray) -> tuple[np.ndarray, float]:
        """d/dt of the cell averages and Δt* = min_c |c| / (2 Σ_f L u⁺), capped by the diffusive bound."""
        m = self.mesh
        u_z, u_m, left, right, v_up, v_dn = self._faces(y[0])
        f_z = self._zonal_len * (np.maximum(u_z, 0) * left + np.minimum(u_z, 0) * right)
        f_m = self._sub_len * (np.maximum(u_m, 0) * v_up + np.minimum(u_m, 0) * v_dn)
        rate = self._div @ np.concatenate([f_z, f_m])
        # positivity bound: Δt Σ 2u⁺L ≤ |cell| (outflow through every face of the cell)
        out = 2 * (np.maximum(-u_z, 0) * self._zonal_len)  # face c is the west face of c: outflow when u < 0
        out += 2 * np.bincount(self._west, np.maximum(u_z, 0) * self._zonal_len, m.n_cells)
        out += 2 * np.bincount(self._up, np.maximum(u_m, 0) * self._sub_len, m.n_cells)
        out += 2 * np.bincount(self._down, np.maximum(-u_m, 0) * self._sub_len, m.n_cells)
        active = out > 0
        bound = float(np.min(m.area[active] / out[active])) if np.any(active) else np.inf
        return rate[None], min(bound, self._diffusive_step)

    def _degree_norms(self, y: np.ndarray) -> np.ndarray:
        """‖ρ_l‖ = (|ρ_l0|² + 2Σ_{m > 0} |ρ_lm|²)^{1/2}, l ≤ grid.lmax (:meth:`SphereGrid.degree_norms`),
        of the reconstruction at the Gauss–Legendre nodes, shape (1, lmax + 1)."""
        return self.grid.degree_norms(self.grid.analysis(self.to_grid(y)[0]))[None]

    def mass(self, y: np.ndarray) -> np.ndarray:
        """Σ_cells |cell| ρ_c, shape (1,)."""
        return np.asarray(y) @ self.mesh.area

    def _as_state(self, y: np.ndarray) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        if y.shape != (1, self.mesh.n_cells):
            raise ValueError(
                f"state must be cell averages of shape (1, {self.mesh.n_cells}) (use from_grid), got {y.shape}"
            )
        return y

"""Gauss–Legendre grid on S² and spherical-harmonic transforms (ducc0.sht).

Conventions
-----------
Nodes: ``nlat = lmax + 1`` rings at the colatitudes ϑ_i of the Gauss–Legendre
rule in cos ϑ, ordered from the north pole to the south pole, and
``nlon = 2 lmax + 2`` equispaced longitudes φ_j = 2πj/nlon. Latitude is
λ = π/2 - ϑ ∈ (-π/2, π/2) (decreasing along axis 0).

Quadrature: ∫_{S²} f dσ ≈ Σ_ij W_ij f(ϑ_i, φ_j) with W_ij = w_i 2π/nlon and
w_i the Gauss–Legendre weights; exact for polynomials of degree ≤ 2 lmax + 1
(Σ W = 4π).

Spherical harmonics: orthonormal, Condon–Shortley phase, ∫ Y_lm conj(Y_l'm') dσ
= δ_ll' δ_mm'. A real f = Σ_{l, |m| ≤ l} f_lm Y_lm is stored by its
coefficients with m ≥ 0 (f_{l,-m} = (-1)^m conj f_lm) in ducc0's (healpy)
order: index(l, m) = m (2 lmax + 3 - m)/2 + l - m.

Tangent vectors: components (V_ϑ, V_φ) on the unit vectors e_ϑ (southward)
and e_φ (eastward). The gradient is ∇f = (∂_ϑ f, ∂_φ f / sin ϑ) (spin-1
synthesis of √(l(l+1)) f_lm, ducc0 mode "DERIV1"); the divergence follows by
duality, ∫ g div V dσ = -∫ ∇g · V dσ, i.e. (div V)_lm = -(adjoint of the
gradient synthesis applied to the quadrature-weighted V). On a grid with band
limit ≥ (3 lmax)/2 this is exact for fluxes that are products of two degree-
lmax fields (dealiasing by padding).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import ducc0.sht.experimental as _sht

__all__ = ["SphereGrid", "degrees_orders", "padded_lmax"]

_GEOMETRY = "GL"


def padded_lmax(lmax: int) -> int:
    """Band limit ⌈3 lmax/2⌉ of a grid on which the quadrature of (degree-lmax)³
    products, hence the analysis of quadratic products, is exact."""
    return int(np.ceil(1.5 * lmax))


def degrees_orders(lmax: int) -> tuple[np.ndarray, np.ndarray]:
    """Degree l and order m of every stored coefficient (ducc0 order), shape (nalm,)."""
    ms = np.concatenate([np.full(lmax + 1 - m, m) for m in range(lmax + 1)])
    ls = np.concatenate([np.arange(m, lmax + 1) for m in range(lmax + 1)])
    return ls, ms


class SphereGrid:
    r"""Gauss–Legendre grid with band limit ``lmax`` and its transforms.

    ``nlat = lmax + 1`` rings at the Gauss–Legendre colatitudes ϑ_i (north to south) and
    ``nlon = 2 lmax + 2`` equispaced longitudes φ_j = 2πj/nlon. Spherical harmonics are
    orthonormal with the Condon–Shortley phase; a real field is stored by its
    coefficients f_lm, m ≥ 0, in ducc0's (healpy) order.

    Parameters
    ----------
    lmax : int
        Band limit (≥ 2); the grid has (lmax + 1) × (2 lmax + 2) nodes.
    nthreads : int
        Threads used by ducc0 (default 1: small transforms do not gain from more).

    Raises
    ------
    TypeError
        ``lmax`` not an integer.
    ValueError
        lmax < 2, or ``nthreads`` not a positive integer.

    Notes
    -----
    Synthesis maps coefficients to node values, ``analysis`` is its exact
    inverse on band-limited node values (adjoint synthesis of the
    quadrature-weighted values). Transforms may be evaluated on a finer
    Gauss–Legendre grid of the same family (``nlat``/``nlon`` arguments)
    while keeping the band limit: that is how products are dealiased.

    Quadrature: ∫_{S²} f dσ ≈ Σ_ij W_ij f(ϑ_i, φ_j) with W_ij = w_i 2π/nlon, w_i the
    Gauss–Legendre weights, exact for polynomials of degree ≤ 2 lmax + 1 (Σ W = 4π):

    .. math::

        \int_{S^2} f\, d\sigma \approx \sum_{i,j} W_{ij}\, f(\vartheta_i, \varphi_j), \qquad
        f_{lm} = \int_{S^2} f\, \overline{Y_{lm}}\, d\sigma, \qquad
        \int_{S^2} Y_{lm} \overline{Y_{l'm'}}\, d\sigma = \delta_{ll'} \delta_{mm'} .

    Examples
    --------
    >>> import numpy as np
    >>> import solvers
    >>> grid = solvers.SphereGrid(4)
    >>> grid.shape, grid.nalm
    ((5, 10), 15)

    The weights sum to 4π and integrate z² = cos²ϑ exactly, to 4π/3:

    >>> z = grid.points[..., 2]
    >>> print(f"{grid.weights.sum() / np.pi:.12f} {np.sum(grid.weights * z ** 2) / np.pi:.12f}")
    4.000000000000 1.333333333333

    z = (4π/3)^{1/2} Y_10 is all of degree 1, and analysis inverts synthesis:

    >>> alm = grid.analysis(z)
    >>> print(grid.degree_norms(alm).round(12), f"{np.sqrt(4 * np.pi / 3):.12f}")
    [0.         2.04665342 0.         0.         0.        ] 2.046653415893
    >>> bool(np.allclose(grid.synthesis(alm), z))
    True
    """

    def __init__(self, lmax: int, nthreads: int = 1) -> None:
        if isinstance(lmax, bool) or not isinstance(lmax, (int, np.integer)):
            raise TypeError(f"lmax must be an integer band limit, got {lmax!r}")
        if lmax < 2:
            raise ValueError(f"lmax must be >= 2, got {lmax}")
        if isinstance(nthreads, bool) or not isinstance(nthreads, (int, np.integer)) or nthreads < 1:
            raise ValueError(f"nthreads must be a positive integer, got {nthreads!r}")
        self.lmax = int(lmax)
        self.nthreads = int(nthreads)
        self.nlat = self.lmax + 1
        self.nlon = 2 * self.lmax + 2

    def __repr__(self) -> str:
        return f"SphereGrid(lmax={self.lmax})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SphereGrid) and other.lmax == self.lmax

    def __hash__(self) -> int:
        return hash(("SphereGrid", self.lmax))

    @property
    def shape(self) -> tuple[int, int]:
        """(nlat, nlon)."""
        return (self.nlat, self.nlon)

    @property
    def nalm(self) -> int:
        """Number of stored complex coefficients (m ≥ 0), (lmax+1)(lmax+2)/2."""
        return (self.lmax + 1) * (self.lmax + 2) // 2

    @cached_property
    def colatitude(self) -> np.ndarray:
        """Ring colatitudes ϑ_i ∈ (0, π), increasing (north to south), shape (nlat,)."""
        x, _ = np.polynomial.legendre.leggauss(self.nlat)
        return np.arccos(x[::-1].copy())

    @cached_property
    def lat(self) -> np.ndarray:
        """Latitudes λ_i = π/2 - ϑ_i ∈ (-π/2, π/2), decreasing, shape (nlat,)."""
        return 0.5 * np.pi - self.colatitude

    @cached_property
    def lon(self) -> np.ndarray:
        """Longitudes φ_j = 2πj/nlon ∈ [0, 2π), shape (nlon,)."""
        return 2 * np.pi * np.arange(self.nlon) / self.nlon

    @cached_property
    def weights(self) -> np.ndarray:
        """Quadrature weights W_ij = w_i 2π/nlon of the area measure, shape (nlat, nlon), sum 4π."""
        return np.repeat(self.ring_weights(self.nlat)[:, None] / self.nlon, self.nlon, axis=1)

    @cached_property
    def points(self) -> np.ndarray:
        """Unit vectors (sin ϑ cos φ, sin ϑ sin φ, cos ϑ) of the nodes, shape (nlat, nlon, 3)."""
        th = self.colatitude[:, None]
        ph = self.lon[None, :]
        return np.stack(np.broadcast_arrays(np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)), axis=-1)

    @cached_property
    def degrees(self) -> np.ndarray:
        """Degree l of each stored coefficient, shape (nalm,)."""
        return degrees_orders(self.lmax)[0]

    @cached_property
    def orders(self) -> np.ndarray:
        """Order m ≥ 0 of each stored coefficient, shape (nalm,)."""
        return degrees_orders(self.lmax)[1]

    @cached_property
    def parseval_weights(self) -> np.ndarray:
        """1 for m = 0, 2 for m > 0: ∫ f² dσ = Σ parseval_weights |f_lm|²."""
        return np.where(self.orders == 0, 1.0, 2.0)

    def degree_norms(self, alm: np.ndarray) -> np.ndarray:
        """L² norms ‖f_l‖ = (|a_l0|² + 2 Σ_{m > 0} |a_lm|²)^{1/2} of the degree-l parts f_l of a real
        field, l = 0, …, lmax, from its coefficients ``alm`` (..., nalm), shape (..., lmax + 1).

        With orthonormal Y_lm and only m ≥ 0 stored (a_{l,-m} = (-1)^m conj(a_lm) for a real
        field), Σ_{|m| ≤ l} |a_lm|² = ∫ f_l² dσ; so Σ_l ‖f_l‖² = ∫ f² dσ (Parseval).
        """
        power = np.abs(np.asarray(alm)) ** 2 * self.parseval_weights
        return np.sqrt(power @ self._of_degree)

    @cached_property
    def _of_degree(self) -> np.ndarray:
        """Indicator (nalm, lmax + 1): coefficient i belongs to degree l."""
        return np.equal.outer(self.degrees, np.arange(self.lmax + 1)).astype(float)

    @staticmethod
    def ring_weights(nlat: int) -> np.ndarray:
        """Gauss–Legendre ring weights 2π w_i (sum 4π) of a grid with ``nlat`` rings."""
        return _sht.get_gridweights(_GEOMETRY, nlat)

    def padded_shape(self, lmax_grid: int) -> tuple[int, int]:
        """Node counts (nlat, nlon) of the Gauss–Legendre grid of band limit ``lmax_grid``."""
        return (lmax_grid + 1, 2 * lmax_grid + 2)

    # ------------------------------------------------------------------ transforms
    def synthesis(self, alm: np.ndarray, shape: tuple[int, int] | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """Node values f(ϑ_i, φ_j) = Σ f_lm Y_lm of coefficients ``alm`` (..., nalm).

        ``shape`` = (nlat, nlon) of a finer Gauss–Legendre grid (default: this grid).
        Returns shape (..., nlat, nlon).
        """
        nlat, nlon = shape or self.shape
        alm = np.asarray(alm, dtype=complex)
        lead = alm.shape[:-1]
        flat = alm.reshape(-1, alm.shape[-1])
        res = out if out is not None else np.empty((flat.shape[0], nlat, nlon))
        res = res.reshape(flat.shape[0], nlat, nlon)
        for k in range(flat.shape[0]):
            _sht.synthesis_2d(
                alm=flat[k : k + 1], spin=0, lmax=self.lmax, geometry=_GEOMETRY, ntheta=nlat, nphi=nlon,
                nthreads=self.nthreads, map=res[k : k + 1],
            )
        return res.reshape(*lead, nlat, nlon)

    def analysis(self, values: np.ndarray) -> np.ndarray:
        """Coefficients f_lm = ∫ f conj(Y_lm) dσ by Gauss–Legendre quadrature.

        ``values`` (..., nlat, nlon) on this grid or any finer Gauss–Legendre
        grid; exact for band-limited f of degree ≤ 2 nlat - 1 - lmax.
        Returns (..., nalm) complex.
        """
        values = np.asarray(values, dtype=float)
        nlat, nlon = values.shape[-2:]
        lead = values.shape[:-2]
        flat = values.reshape(-1, nlat, nlon)
        wr = self.ring_weights(nlat)[:, None] / nlon
        res = np.empty((flat.shape[0], self.nalm), dtype=complex)
        for k in range(flat.shape[0]):
            _sht.adjoint_synthesis_2d(
                map=(flat[k] * wr)[None], spin=0, lmax=self.lmax, geometry=_GEOMETRY, nthreads=self.nthreads,
                alm=res[k : k + 1],
            )
        return res.reshape(*lead, self.nalm)

    def gradient(self, alm: np.ndarray, shape: tuple[int, int] | None = None) -> np.ndarray:
        """∇f = (∂_ϑ f, ∂_φ f / sin ϑ) at the nodes for coefficients ``alm`` (nalm,).

        Returns shape (2, nlat, nlon) (spin-1 synthesis, mode DERIV1).
        """
        nlat, nlon = shape or self.shape
        alm = np.asarray(alm, dtype=complex).reshape(1, -1)
        return _sht.synthesis_2d(
            alm=alm, spin=1, lmax=self.lmax, geometry=_GEOMETRY, ntheta=nlat, nphi=nlon,
            nthreads=self.nthreads, mode="DERIV1",
        )

    def divergence(self, vector: np.ndarray) -> np.ndarray:
        """Coefficients (div V)_lm, l ≤ lmax, of a tangent field V = (V_ϑ, V_φ).

        ``vector`` has shape (2, nlat, nlon) on this or a finer Gauss–Legendre
        grid; computed as -Σ W ∇conj(Y_lm)·V (exact when V·∇Y_lm is resolved by
        the quadrature). Returns (nalm,) complex.
        """
        vector = np.asarray(vector, dtype=float)
        nlat, nlon = vector.shape[-2:]
        wr = self.ring_weights(nlat)[:, None] / nlon
        res = _sht.adjoint_synthesis_2d(
            map=vector * wr, spin=1, lmax=self.lmax, geometry=_GEOMETRY, nthreads=self.nthreads, mode="DERIV1",
        )
        return -res[0]

    def laplacian_eigenvalues(self) -> np.ndarray:
        """-l(l+1) for every stored coefficient."""
        ell = self.degrees
        return -(ell * (ell + 1.0))

    def power(self, alm: np.ndarray) -> np.ndarray:
        """Power per degree P_l = Σ_{|m| ≤ l} |f_lm|², shape (..., lmax+1)."""
        alm = np.asarray(alm)
        pw = (self.parseval_weights * np.abs(alm) ** 2).reshape(-1, self.nalm)
        out = np.stack([np.bincount(self.degrees, weights=row, minlength=self.lmax + 1) for row in pw])
        return out.reshape(*alm.shape[:-1], self.lmax + 1)

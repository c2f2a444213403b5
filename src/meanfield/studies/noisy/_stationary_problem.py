r"""The self-consistency equation of zonal stationary states of noisy self-attention, in Gegenbauer moments.

A stationary density of ∂_t ρ + div(ρ X[ρ]) = σ Δρ on S^{d-1} (paper 2, arXiv:2312.10794, Problem 7) with
X = ∇Ψ[ρ] has zero flux, ρ∇Ψ = σ∇ρ, hence

    ρ = exp(Ψ[ρ]/σ) / ∫ exp(Ψ[ρ]/σ) dσ,
    USA: Ψ = 𝖦_β ⋆ ρ = (1/β) ∫ e^{β<x,y>} ρ(y) dσ(y),      SA: Ψ = (1/β) log Z_ρ.

For a zonal ρ (a function of t = <x, e> only; on S¹ an even function of the
angle from e) write ρ = (1/|S^{d-1}|) Σ_l y_l q_l(t), with q_l the Gegenbauer
polynomials normalised by ∫ q_l q_m dσ = |S^{d-1}| δ_lm (on S¹: q_l = √2 cos lθ),
y_0 = 1 and y_l = ∫ ρ q_l dσ. Funk–Hecke gives, up to constants,

    Ψ/σ = g(v)/σ,   v(t) = Σ_{l≥1} κ_l y_l q_l(t),
    USA: κ_l = c_l(β)/(β|S^{d-1}|),  g(v) = v;     SA: κ_l = c_l(β)/(β c_0(β)),  g(v) = log(1 + βv)/β,

with the Funk–Hecke multipliers c_l of e^{β<x,y>} (meanfield.models._kernels); κ_l is
also the growth-rate ratio λ_l/(l(l+d-2)) + σ, so σ_c = κ_1. The unknown is the
vector y = (y_1, …, y_L) and the equation R(y, σ) = y - G(y, σ) = 0 with
G_l = ∫ exp(Ψ/σ) q_l dσ / ∫ exp(Ψ/σ) dσ.

Truncation. |y_l| ≤ q_l(1) = √(dim H_l), so dropping degrees l > L changes
Ψ/σ by at most Σ_{l>L} κ_l dim H_l / σ; κ_l ∝ I_{l+d/2-1}(β) falls like
(β/2)^l / l!, so L is a few tens even at β = 20 (:func:`degrees_needed`).
Quadrature: n Gauss–Gegenbauer nodes (S¹: n midpoint nodes in θ ∈ (0, π),
Gauss–Chebyshev), exact for polynomial integrands of degree < 2n; n is
adequate when the density's own coefficients y_l, l ≥ 3n/4, are below
:data:`TAIL_TOLERANCE` = 1e-11 (:meth:`StationaryProblem.tail`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.linalg import eigh, eigvals
from scipy.special import gammaln

from solvers import ZonalGaussGrid, gegenbauer_table

from solvers import sphere_area
from ...models._self_attention import SelfAttention

__all__ = ["StationaryProblem", "degrees_needed", "TRUNCATION_TOLERANCE", "TAIL_TOLERANCE"]

#: bound on the change of Ψ/σ (hence the relative change of ρ) from the dropped degrees l > L
TRUNCATION_TOLERANCE = 1e-16
#: largest |y_l| allowed in the top quarter of the quadrature's degrees. The moments l ≤ L alias only
#: degrees ≥ 2n - L, far below this; the coefficients' own round-off floor is ≈ 1e-15 (S¹) to 1e-13
#: (S², where q_l(1) = √(2l+1) grows), so a smaller bound could never be met.
TAIL_TOLERANCE = 1e-11
#: eigenvalues of the perturbations' mass matrix below this fraction of the largest are dropped (their
#: directions are round-off in the ρ*-weighted inner product)
MASS_CUTOFF = 1e-11
#: most degrees considered by the truncation rule
MAX_DEGREES = 400


def coupling_ratios(degrees: np.ndarray, beta: float, d: int, normalized: bool) -> np.ndarray:
    """κ_l = λ_l/(l(l+d-2)) at σ = 0 for degrees l ≥ 1 (:meth:`SelfAttention.growth_rate`):
    USA c_l/(β|S^{d-1}|), SA c_l/(β c_0); β → 0: 1/d at l = 1, 0 above."""
    ell = np.asarray(degrees)
    if np.any(ell < 1):
        raise ValueError(f"degrees must be >= 1, got {degrees!r}")
    return SelfAttention(beta, normalized=normalized).growth_rate(ell, d) / (ell * (ell + d - 2))


def harmonic_dimension(degrees: np.ndarray, d: int) -> np.ndarray:
    """dim H_l = q_l(1)²: 2 on S¹ (l ≥ 1), (2l+d-2)(l+d-3)!/(l!(d-2)!) on S^{d-1}; 1 at l = 0."""
    ell = np.asarray(degrees, dtype=float)
    if d == 2:
        return np.where(ell == 0, 1.0, 2.0)
    log_dim = np.log(2 * ell + d - 2) + gammaln(ell + d - 2) - gammaln(ell + 1) - gammaln(d - 1)
    return np.where(ell == 0, 1.0, np.exp(log_dim))


def degrees_needed(beta: float, d: int, normalized: bool, noise: float) -> int:
    """Smallest L ≥ 2 with Σ_{l>L} κ_l dim H_l / σ ≤ :data:`TRUNCATION_TOLERANCE`."""
    ell = np.arange(1, MAX_DEGREES + 1)
    terms = coupling_ratios(ell, beta, d, normalized) * harmonic_dimension(ell, d) / noise
    tails = np.cumsum(terms[::-1])[::-1]  # tails[i] = Σ_{l ≥ ell[i]} terms
    above = np.nonzero(tails <= TRUNCATION_TOLERANCE)[0]
    if above.size == 0:
        raise ValueError(
            f"beta = {beta} with noise = {noise} needs more than {MAX_DEGREES} Gegenbauer degrees; "
            "use a larger noise or a smaller beta"
        )
    return max(2, int(ell[above[0]]) - 1)


def zonal_nodes(d: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(polar angles increasing in (0, π), weights of the area measure summing to |S^{d-1}|)."""
    if d == 2:
        polar = (np.arange(n) + 0.5) * np.pi / n
        return polar, np.full(n, 2 * np.pi / n)
    grid = ZonalGaussGrid(d, n)
    return grid.polar, grid.weights


def zonal_basis(d: int, n_degrees: int, polar: np.ndarray, derivative: bool = True):
    """q_l(cos ϑ) (and q_l'(t) at t = cos ϑ, for ϑ in the open (0, π)) for l < n_degrees, shapes (m, n_degrees)."""
    if d == 2:
        ell = np.arange(n_degrees)
        scale = np.where(ell == 0, 1.0, np.sqrt(2.0))
        angle = np.outer(polar, ell)
        q = scale * np.cos(angle)
        if not derivative:
            return q
        return q, scale * ell * np.sin(angle) / np.sin(polar)[:, None]
    return gegenbauer_table(n_degrees, d, np.cos(polar), derivative=derivative)


@dataclass(frozen=True)
class StationaryProblem:
    """R(y, σ) = y - G(y, σ) for the moments y = (y_1, …, y_L) on n quadrature nodes (module docstring)."""

    beta: float
    normalized: bool
    d: int
    degrees: int
    nodes: int

    @cached_property
    def polar(self) -> np.ndarray:
        return zonal_nodes(self.d, self.nodes)[0]

    @cached_property
    def weights(self) -> np.ndarray:
        return zonal_nodes(self.d, self.nodes)[1]

    @cached_property
    def t(self) -> np.ndarray:
        return np.cos(self.polar)

    @cached_property
    def _table(self) -> tuple[np.ndarray, np.ndarray]:
        return zonal_basis(self.d, self.nodes, self.polar)

    @property
    def q(self) -> np.ndarray:
        """q_l(t_j), l = 1, …, L, shape (n, L)."""
        return self._table[0][:, 1 : self.degrees + 1]

    @property
    def dq(self) -> np.ndarray:
        return self._table[1][:, 1 : self.degrees + 1]

    @cached_property
    def kappa(self) -> np.ndarray:
        """κ_l, l = 1, …, L."""
        return coupling_ratios(np.arange(1, self.degrees + 1), self.beta, self.d, self.normalized)

    @property
    def area(self) -> float:
        return sphere_area(self.d)

    @property
    def critical_noise(self) -> float:
        """σ_c = κ_1, where λ_1 = (d-1)(κ_1 - σ) changes sign."""
        return float(self.kappa[0])

    def point_mass(self) -> np.ndarray:
        """Moments y_l = q_l(1) of a point mass at the pole."""
        return np.sqrt(harmonic_dimension(np.arange(1, self.degrees + 1), self.d))

    def field(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(Ψ, g'(v), g''(v)) at the nodes; Ψ is NaN where SA's 1 + βv ≤ 0."""
        v = self.q @ (self.kappa * y)
        if not self.normalized or self.beta == 0:
            return v, np.ones_like(v), np.zeros_like(v)
        z = 1.0 + self.beta * v
        with np.errstate(invalid="ignore", divide="ignore"):  # z ≤ 0 at a rejected trial step: Ψ is NaN there
            psi = np.where(z > 0, np.log(np.where(z > 0, z, 1.0)) / self.beta, np.nan)
            return psi, 1.0 / z, -self.beta / (z * z)

    def potential_at(self, y: np.ndarray, polar: np.ndarray) -> np.ndarray:
        """Ψ at arbitrary polar angles (any shape), from the moments y."""
        angle = np.asarray(polar, dtype=float)
        q = zonal_basis(self.d, self.degrees + 1, angle.ravel(), derivative=False)
        v = q[:, 1:] @ (self.kappa * y)
        if self.normalized and self.beta > 0:
            v = np.log1p(self.beta * v) / self.beta
        return v.reshape(angle.shape)

    def density(self, y: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray]:
        """(ρ at the nodes with ∫ρ dσ = 1, Ψ at the nodes)."""
        psi = self.field(y)[0]
        a = psi / sigma
        a = a - np.max(a)
        rho = np.exp(a)
        return rho / np.dot(self.weights, rho), psi

    def residual(self, y: np.ndarray, sigma: float) -> np.ndarray:
        """R(y, σ) = y - G(y, σ); non-finite where Ψ is undefined."""
        psi = self.field(y)[0]
        if not np.all(np.isfinite(psi)):
            return np.full_like(y, np.nan)
        rho = self.density(y, sigma)[0]
        return y - self.q.T @ (self.weights * rho)

    def jacobian(self, y: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray]:
        """(∂R/∂y, ∂R/∂σ) with R = y - G:

        ∂G_l/∂y_k = Cov_ρ(q_l, g'(v) κ_k q_k)/σ,   ∂G_l/∂σ = -Cov_ρ(q_l, Ψ)/σ².
        """
        rho, psi = self.density(y, sigma)
        _, g1, _ = self.field(y)
        wr = self.weights * rho
        q_centred = self.q - wr @ self.q
        h = (g1[:, None] * self.q) * (self.kappa / sigma)
        jac = np.eye(self.degrees) - q_centred.T @ (wr[:, None] * h)
        d_sigma = q_centred.T @ (wr * psi) / sigma**2
        return jac, d_sigma

    def order_parameter(self, y: np.ndarray) -> float:
        """r = |∫ x ρ dσ| = |y_1|/√d (q_1 = √d t)."""
        return float(abs(y[0]) / np.sqrt(self.d))

    def free_energy(self, y: np.ndarray, sigma: float) -> float:
        """USA: F[ρ] - F[uniform] = -½ Σ_l κ_l y_l² + σ ∫ ρ log(ρ|S^{d-1}|) dσ, F = -E_β + σ∫ρ log ρ.

        SA: NaN (no Lyapunov functional is known)."""
        if self.normalized:
            return float("nan")
        rho = self.density(y, sigma)[0]
        entropy = float(np.dot(self.weights * rho, np.log(rho * self.area)))
        return float(-0.5 * np.dot(self.kappa, y * y) + sigma * entropy)

    def entropy(self, y: np.ndarray, sigma: float) -> float:
        """∫ ρ log(ρ|S^{d-1}|) dσ (relative entropy to the uniform law)."""
        rho = self.density(y, sigma)[0]
        return float(np.dot(self.weights * rho, np.log(rho * self.area)))

    def tail(self, y: np.ndarray, sigma: float) -> float:
        """max |y_l| of the density over the top quarter of the degrees the quadrature resolves."""
        rho = self.density(y, sigma)[0]
        q_all = self._table[0]
        coefficients = q_all.T @ (self.weights * rho)
        return float(np.max(np.abs(coefficients[(3 * self.nodes) // 4 :])))

    def linearised_spectrum(self, y: np.ndarray, sigma: float, modes: int) -> np.ndarray:
        """Eigenvalues of the linearised dynamics about ρ* restricted to zonal mass-zero perturbations.

        Perturbations δρ = ρ* p with p in the span of q_m - <q_m>_ρ*, m = 1, …, ``modes``
        (mass zero). The linearisation ∂_t δρ = σ div(ρ* ∇f), f = p - DΨ[δρ]/σ,
        DΨ[δρ] = g'(v) Σ_k κ_k δy_k q_k, is taken in weak form against the test
        functions q_i: M ṗ = A p with M_im = ∫ ρ* p_i p_m dσ and
        A_im = -σ ∫ ρ* (1 - t²) q_i' f_m' dσ, solved in an M-orthonormal basis of
        the directions with M-eigenvalues above 1e-11 of the largest. At the
        uniform state this gives λ_l = l(l+d-2)(κ_l - σ) exactly (SelfAttention.growth_rate).
        """
        rho, _ = self.density(y, sigma)
        _, g1, g2 = self.field(y)
        q_all, dq_all = self._table
        w = self.weights
        wr = w * rho
        basis, dbasis = q_all[:, 1 : modes + 1], dq_all[:, 1 : modes + 1]
        perturbation = basis - wr @ basis
        mass = perturbation.T @ (wr[:, None] * perturbation)
        delta_y = self.q.T @ (wr[:, None] * perturbation)  # δy_k per mode m, shape (L, modes)
        kdy = self.kappa[:, None] * delta_y
        dv = self.dq @ (self.kappa * y)
        df = dbasis - (g2 * dv)[:, None] * (self.q @ kdy) / sigma - g1[:, None] * (self.dq @ kdy) / sigma
        stiffness = -sigma * dbasis.T @ ((wr * (1 - self.t**2))[:, None] * df)
        # ρ*-orthonormal basis: for a concentrated ρ* the q_m are nearly dependent in the ρ*-weighted inner
        # product, and the generalised problem would return spurious eigenvalues of M's round-off null space
        scale, vectors = eigh(mass)
        keep = scale > MASS_CUTOFF * scale[-1]
        basis_change = vectors[:, keep] / np.sqrt(scale[keep])
        return eigvals(basis_change.T @ stiffness @ basis_change)

r"""Resolution estimate of finite-volume runs (spectral tail of the density on S¹, S² and zonal S^{d-1}).

A second-order finite-volume scheme stays stable and positive while a density
concentrates below the cell size, so it cannot tell from its own step control that
the result has stopped converging in the grid. At every output the density is
expanded in the eigenfunctions of the domain's Laplacian and the tail

    τ = max_{l > 2 L/3} ‖ρ_l‖ / ‖ρ_0‖

is compared with :data:`FINITE_VOLUME_TAIL_TOL`, where L is the largest degree the
grid represents:

* S² (node values of the scheme's reconstruction, ``lmax`` = L):
  ρ_lm = ∫ ρ conj(Y_lm), ‖ρ_l‖² = Σ_{m ≥ 0} |ρ_lm|²;
* S¹ (N cell averages, L = N/2, so the cut is k > N/3): the discrete Fourier
  coefficients ρ̂_k = Σ_j ρ_j e^{-ikθ_j}, ‖ρ_k‖ = |ρ̂_k|, 0 ≤ k ≤ N/2;
* zonal S^{d-1} (n cells, L = n - 1): the Gegenbauer coefficients
  ρ_l = (1/|S^{d-1}|) ∫ ρ q_l dσ of the piecewise-constant density
  (:meth:`meanfield.ZonalSphere.coefficients`), ‖ρ_l‖ = |ρ_l|.

With several densities (a Kuramoto run: one per frequency node ω_j) τ is the
largest over them. A resolved smooth density has τ ≈ 1e-6–1e-3 (the scheme's
reconstruction error); a density concentrated on a few cells has τ = O(1) (a Dirac
has ‖ρ_l‖ ≥ ‖ρ_0‖ for every l). Above the tolerance the run warns once
(RuntimeWarning, naming the time) and reports ``resolved = 0``.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

__all__ = ["FINITE_VOLUME_TAIL_TOL", "ResolutionMonitor", "circle_tail", "density_tail", "sphere_tail", "zonal_tail"]

#: largest spectral tail τ of a finite-volume density that counts as resolved
FINITE_VOLUME_TAIL_TOL = 1e-2


def _tail(power: np.ndarray, cut: int) -> float:
    """max over rows of max(power[:, cut+1:]) / power[:, 0] (∞ for a row with power[:, 0] = 0)."""
    power = np.atleast_2d(power)
    top, mean = np.max(power[:, cut + 1:], axis=-1, initial=0.0), power[:, 0]
    return float(np.max(np.divide(top, mean, out=np.full_like(top, np.inf), where=mean > 0)))


def sphere_tail(grid: Any, values: np.ndarray) -> float:
    """τ of node values ``values`` (species, nlat, nlon) on the S² ``grid`` (max over species)."""
    lmax = grid.lmax
    alm = np.atleast_2d(grid.analysis(np.asarray(values, dtype=float)))  # (species, nalm)
    power = np.sqrt([np.bincount(grid.degrees, weights=np.abs(row) ** 2, minlength=lmax + 1) for row in alm])
    return _tail(power, 2 * lmax // 3)


def circle_tail(values: np.ndarray) -> float:
    """τ = max_{k > N/3} |ρ̂_k| / |ρ̂_0| of values (species, N) on S¹ (max over species)."""
    values = np.atleast_2d(np.asarray(values, dtype=float))
    return _tail(np.abs(np.fft.rfft(values, axis=-1)), values.shape[-1] // 3)


def zonal_tail(domain: Any, values: np.ndarray) -> float:
    """τ = max_{l > 2(n-1)/3} |ρ_l| / |ρ_0| of values (species, n) on a ``ZonalSphere`` (max over species)."""
    return _tail(np.abs(domain.coefficients(np.atleast_2d(values))), 2 * (int(domain.n) - 1) // 3)


def density_tail(domain: Any, values: np.ndarray) -> float:
    """τ of ``values`` (species, *domain.shape) on a Circle, Sphere or ZonalSphere."""
    if domain.kind == "sphere":
        return sphere_tail(domain.grid, values)
    if domain.kind == "circle":
        return circle_tail(values)
    return zonal_tail(domain, values)


def _grid_words(domain: Any) -> tuple[str, str, str]:
    """(the grid, the tail expression, a grid twice as fine) for the warning."""
    if domain.kind == "sphere":
        lmax = domain.grid.lmax
        return f"on S² with lmax={lmax}", f"max_(l > {2 * lmax // 3}) |rho_l|/|rho_0|", f"lmax={2 * lmax + 1}"
    if domain.kind == "circle":
        n = int(domain.n)
        return f"on S¹ with N={n}", f"max_(k > {n // 3}) |rho_k|/|rho_0|", f"N={2 * n}"
    n = int(domain.n)
    return (f"on the zonal S^{int(domain.d) - 1} with n={n} cells", f"max_(l > {2 * (n - 1) // 3}) |rho_l|/|rho_0|",
            f"n={2 * n}")


class ResolutionMonitor:
    """Tracks τ over the outputs of a finite-volume run (inactive for other runs)."""

    def __init__(self, domain: Any, method: str, prior: float | None = None) -> None:
        self.active = method == "finite_volume" and domain.kind in ("sphere", "circle", "zonal")
        self.domain = domain
        self.worst = float(prior) if prior is not None and np.isfinite(prior) else 0.0
        self.warned = self.worst > FINITE_VOLUME_TAIL_TOL

    def __call__(self, time: float, values: np.ndarray) -> None:
        if not self.active:
            return
        tail = density_tail(self.domain, values)
        self.worst = max(self.worst, tail)
        if tail > FINITE_VOLUME_TAIL_TOL and not self.warned:
            self.warned = True
            grid, expression, finer = _grid_words(self.domain)
            species = len(values)
            which = f" (largest over its {species} frequency nodes)" if species > 1 else ""
            message = (f"finite_volume {grid} is under-resolved from t={time:g}: the spectral tail {expression} "
                       f"of the density{which} is {tail:.3g} > {FINITE_VOLUME_TAIL_TOL:g}; the result is not "
                       f"converged in the grid (use {finer} and compare, or more noise)")
            logger.warning(message)
            warnings.warn(message, RuntimeWarning, stacklevel=2)

    def facts(self) -> dict[str, Any]:
        """``resolution_tail`` (max τ so far) and ``resolved`` (τ ≤ tolerance), or {} when inactive."""
        if not self.active:
            return {}
        return {"resolution_tail": self.worst, "resolved": int(self.worst <= FINITE_VOLUME_TAIL_TOL)}

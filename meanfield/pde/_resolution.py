r"""Resolution estimate of finite-volume runs (spectral tail of the density on S¹, S² and zonal S^{d-1}).

A second-order finite-volume scheme stays stable and positive while a density
concentrates below the cell size, so it cannot tell from its own step control that
the result has stopped converging in the grid. At every output the density is
expanded in the eigenfunctions of the domain's Laplacian and its tail is measured
by the rule every scheme states in its ``spectral_tail`` (:func:`solvers.degree_tail`;
the spectral schemes check it themselves after every step),

    τ = max_{l > ⌊2L/3⌋} ‖ρ_l‖ / ‖ρ_0‖,

L the largest degree the grid represents, here compared with
:data:`solvers.FINITE_VOLUME_TAIL_TOL` (1e-2; the spectral schemes use their
``tail_tol``, 1e-6 by default):

* S² (node values of the scheme's reconstruction, ``lmax`` = L):
  ρ_lm = ∫ ρ conj(Y_lm), ‖ρ_l‖² = |ρ_l0|² + 2 Σ_{m > 0} |ρ_lm|² = ∫ ρ_l² dσ (the L² norm of the
  degree-l part, :meth:`solvers.SphereGrid.degree_norms`);
* S¹ (N cell averages, L = ⌊N/2⌋): the discrete Fourier coefficients
  ρ̂_k = Σ_j ρ_j e^{-ikθ_j}, ‖ρ_k‖ = |ρ̂_k|, 0 ≤ k ≤ N/2;
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

from solvers import FINITE_VOLUME_TAIL_TOL, degree_tail

logger = logging.getLogger(__name__)

__all__ = ["FINITE_VOLUME_TAIL_TOL", "ResolutionMonitor", "circle_tail", "density_tail", "sphere_tail", "zonal_tail"]


def _largest(norms: np.ndarray) -> float:
    """max over densities of :func:`solvers.degree_tail` of per-degree norms (densities, L + 1)."""
    return float(np.max(degree_tail(np.atleast_2d(norms))))


def sphere_tail(grid: Any, values: np.ndarray) -> float:
    """τ of node values ``values`` (species, nlat, nlon) on the S² ``grid`` (max over species)."""
    alm = np.atleast_2d(grid.analysis(np.asarray(values, dtype=float)))  # (species, nalm)
    return _largest([grid.degree_norms(row) for row in alm])


def circle_tail(values: np.ndarray) -> float:
    """τ = max_{k > ⌊2⌊N/2⌋/3⌋} |ρ̂_k| / |ρ̂_0| of values (species, N) on S¹ (max over species)."""
    return _largest(np.abs(np.fft.rfft(np.atleast_2d(np.asarray(values, dtype=float)), axis=-1)))


def zonal_tail(domain: Any, values: np.ndarray) -> float:
    """τ = max_{l > ⌊2(n-1)/3⌋} |ρ_l| / |ρ_0| of values (species, n) on a ``ZonalSphere`` (max over species)."""
    return _largest(np.abs(domain.coefficients(np.atleast_2d(values))))


def density_tail(domain: Any, values: np.ndarray) -> float:
    """τ of node values ``values`` (species, *domain.shape) on a Circle, Sphere or ZonalSphere
    (the quantity a scheme's ``spectral_tail`` gives from its own state)."""
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
        return f"on S¹ with N={n}", f"max_(k > {2 * (n // 2) // 3}) |rho_k|/|rho_0|", f"N={2 * n}"
    n = int(domain.n)
    return (f"on the zonal S^{int(domain.d) - 1} with n={n} cells", f"max_(l > {2 * (n - 1) // 3}) |rho_l|/|rho_0|",
            f"n={2 * n}")


class ResolutionMonitor:
    """Tracks τ = max over densities of ``scheme.spectral_tail(y)`` over the outputs of a
    finite-volume run (inactive for other runs: a spectral scheme checks itself every step)."""

    def __init__(self, scheme: Any, domain: Any, method: str, prior: float | None = None) -> None:
        self.active = method == "finite_volume" and domain.kind in ("sphere", "circle", "zonal")
        self.scheme = scheme
        self.domain = domain
        self.worst = float(prior) if prior is not None and np.isfinite(prior) else 0.0
        self.warned = self.worst > FINITE_VOLUME_TAIL_TOL

    def __call__(self, time: float, y: np.ndarray) -> None:
        """Record τ of the scheme state ``y`` at ``time``; warn once when it exceeds the tolerance."""
        if not self.active:
            return
        values = np.asarray(y)
        tail = float(np.max(self.scheme.spectral_tail(values)))
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

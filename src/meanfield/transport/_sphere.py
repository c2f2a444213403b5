"""Wasserstein distances between discrete measures on S^{d-1} (geodesic cost arccos⟨x, y⟩), by POT.

Arrays in, arrays out: unit vectors of shape (B, n, d) and (B, m, d), weights (B, n) and (B, m) summing
to 1 along the last axis; one value per system b.

* :func:`sphere_emd`: W_p exactly, the network simplex of ``ot.emd2`` on the cost (d/π)^p ≤ 1 (no
  overflow for any p; π^p overflows beyond p ≈ 620), W_p = π (Σ π_ij (d_ij/π)^p)^{1/p}.
* :func:`sphere_sliced`: the spherical sliced Wasserstein distance of Bonet et al. (ICLR 2023,
  ``ot.sliced_wasserstein_sphere``): the mean of W_p^p of the projections on great circles, a
  different metric than W_p, with its Monte Carlo standard error by the delta method. POT works on
  the unit-period circle, so the per-projection W_p^p are in units of (2π)^p.
"""

from __future__ import annotations

import numpy as np

__all__ = ["sphere_emd", "sphere_sliced"]


def sphere_emd(xa: np.ndarray, wa: np.ndarray, xb: np.ndarray, wb: np.ndarray, p: float) -> np.ndarray:
    """Exact W_p (radians) per system by the network simplex, shape (B,)."""
    import ot

    values = np.empty(xa.shape[0])
    for s in range(xa.shape[0]):  # one network-simplex problem per system
        cost = (np.arccos(np.clip(xa[s] @ xb[s].T, -1.0, 1.0)) / np.pi) ** p
        values[s] = np.pi * max(float(ot.emd2(wa[s], wb[s], cost, numItermax=10_000_000)), 0.0) ** (1.0 / p)
    return values


def sphere_sliced(xa: np.ndarray, wa: np.ndarray, xb: np.ndarray, wb: np.ndarray, p: float, n_projections: int,
                  seed: int | None) -> tuple[np.ndarray, float]:
    """The spherical sliced distance (radians) per system, shape (B,), and the largest standard error."""
    import ot

    values = np.empty(xa.shape[0])
    errors = np.empty(xa.shape[0])
    for s in range(xa.shape[0]):
        _, log = ot.sliced_wasserstein_sphere(xa[s], xb[s], wa[s], wb[s], n_projections=n_projections, p=p,
                                              seed=seed, log=True)
        per_projection = np.asarray(log["projected_emds"], dtype=float)
        mean = float(np.mean(per_projection))
        values[s] = 2 * np.pi * mean ** (1.0 / p)
        se_pp = float(np.std(per_projection, ddof=1) / np.sqrt(per_projection.size))
        # delta method: d(x^{1/p}) = x^{1/p - 1} dx / p
        errors[s] = 2 * np.pi * se_pp * mean ** (1.0 / p - 1.0) / p if mean > 0 else 0.0
    return values, float(np.max(errors))

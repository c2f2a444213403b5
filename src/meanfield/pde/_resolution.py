r"""Resolution estimate of finite-volume runs (spectral tail of the density on S¹, S² and zonal S^{d-1}).

The tail of each domain is its own (``domain.spectral_tail``, the scheme's ``spectral_tail`` of its state);
this module watches it over a run's outputs.

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

import warnings
from typing import Any

import numpy as np

from solvers import FINITE_VOLUME_TAIL_TOL

__all__ = ["FINITE_VOLUME_TAIL_TOL", "ResolutionMonitor"]


class ResolutionMonitor:
    """Tracks τ = max over densities of ``scheme.spectral_tail(y)`` over the outputs of a run whose scheme does
    not check its resolution itself (:attr:`solvers.Scheme.checks_resolution`: a spectral scheme stops
    on its own); inactive otherwise."""

    def __init__(self, scheme: Any, domain: Any, prior: float | None = None, advice: str = "or more noise",
                 species: str = "frequency nodes") -> None:
        self.active = not scheme.checks_resolution
        self.species = species
        self.scheme = scheme
        self.domain = domain
        self.advice = advice
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
            grid, expression, finer = self.domain.resolution_words()
            species = len(values)
            which = f" (largest over its {species} {self.species})" if species > 1 else ""
            message = (f"{self.scheme.name} {grid} is under-resolved from t={time:g}: the spectral tail {expression} "
                       f"of the density{which} is {tail:.3g} > {FINITE_VOLUME_TAIL_TOL:g}; the result is not "
                       f"converged in the grid (use {finer} and compare, {self.advice})")
            warnings.warn(message, RuntimeWarning, stacklevel=2)

    def facts(self) -> dict[str, Any]:
        """``resolution_tail`` (max τ so far) and ``resolved`` (τ ≤ tolerance), or {} when inactive."""
        if not self.active:
            return {}
        return {"resolution_tail": self.worst, "resolved": int(self.worst <= FINITE_VOLUME_TAIL_TOL)}

"""Paper 2's open problems as computations: the hard-max limit (Problem 6, §9.3), the BBGKY hierarchy and its
closures (Problem 4, §8), critical points of E_β on the torus Tⁿ (Problem 3, §7.2)."""

from __future__ import annotations

from ._bbgky import bbgky_averages, bbgky_ensemble, bbgky_estimates, bbgky_study
from ._bbgky_closures import ClusterClosure, KirkwoodClosure, bbgky_closed_equation, bbgky_closure_distance
from ._bbgky_residual import bbgky_residual_scaling
from ._hardmax_limit import hardmax_limit
from ._torus_critical_points import (CriticalPointMap, canonical_gaps, critical_point_count_stability,
                                     critical_point_map, known_critical_points, torus_critical_points, torus_energy,
                                     torus_gradient, torus_hessian, torus_hessian_spectrum)

__all__ = ["ClusterClosure", "CriticalPointMap", "KirkwoodClosure", "bbgky_averages", "bbgky_closed_equation",
           "bbgky_closure_distance", "bbgky_ensemble", "bbgky_estimates", "bbgky_residual_scaling", "bbgky_study",
           "canonical_gaps", "critical_point_count_stability", "critical_point_map", "hardmax_limit",
           "known_critical_points", "torus_critical_points", "torus_energy", "torus_gradient", "torus_hessian",
           "torus_hessian_spectrum"]

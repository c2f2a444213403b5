"""Studies: sweeps of runs over parameters and seeds, and the papers' diagrams built on them.

Each public name is re-exported by :mod:`meanfield`.
"""

from __future__ import annotations

from ._sweep import SweepError, sweep
from ._equiangular import equiangular_curve, equiangular_gamma
from ._phase_diagram import ginibre_matrices, phase_diagram, phase_diagram_tokens, phase_diagram_trajectories
from ._kuramoto import frequency_law, kuramoto_bifurcation, kuramoto_run
from ._kuramoto_theory import (kuramoto_critical_coupling, kuramoto_linear_rates, kuramoto_locked_frequency,
                               kuramoto_theory)
from ._kuramoto_states import bimodal_states
from ._kuramoto_branches import bimodal_boundaries, kuramoto_branches
from ._cluster_dynamics import cluster_dynamics
from ._metastability import energy_staircase, equispaced_instability_rate, two_cluster_jump
from ._good_triples import TripleCheck, check_good_triple, check_mixed_triple, random_good_triple, random_mixed_triple
from ._hyperplanes import group_levels, hyperplanes, polytope_vertices
from ._unstable_modes import MostUnstableMode, most_unstable_mode, unstable_mode_run
from ._inner_products import equiangular_concentration
from ._stationary import stationary_density, stationary_state
from ._continuation import continuation
from ._noisy_transition import critical_beta, critical_noise, landau_coefficient
from ._meanfield_limit import meanfield_study
from ._hardmax_limit import hardmax_limit
from ._bbgky import bbgky_averages, bbgky_ensemble, bbgky_estimates, bbgky_study
from ._bbgky_closures import ClusterClosure, KirkwoodClosure, bbgky_closed_equation, bbgky_closure_distance
from ._bbgky_residual import bbgky_residual_scaling
from ._torus_critical_points import (CriticalPointMap, canonical_gaps, critical_point_count_stability,
                                     critical_point_map, known_critical_points, torus_critical_points, torus_energy,
                                     torus_gradient, torus_hessian, torus_hessian_spectrum)
from ._configurations import SharpConfiguration, design_strength, sharp_configuration
from ._optimal_configurations import candidate_configurations, optimal_configurations

__all__: list[str] = ["SweepError", "sweep"]
__all__ += ["equiangular_curve", "equiangular_gamma", "ginibre_matrices", "phase_diagram", "phase_diagram_tokens",
            "phase_diagram_trajectories"]
__all__ += ["bimodal_boundaries", "bimodal_states", "frequency_law", "kuramoto_branches", "kuramoto_bifurcation",
            "kuramoto_critical_coupling", "kuramoto_linear_rates", "kuramoto_locked_frequency", "kuramoto_run",
            "kuramoto_theory"]
__all__ += ["MostUnstableMode", "most_unstable_mode", "unstable_mode_run"]
__all__ += ["equiangular_concentration"]
__all__ += ["TripleCheck", "check_good_triple", "check_mixed_triple", "group_levels", "hyperplanes",
            "polytope_vertices", "random_good_triple", "random_mixed_triple"]
__all__ += ["continuation", "critical_beta", "critical_noise", "landau_coefficient", "stationary_density",
            "stationary_state"]
__all__ += ["cluster_dynamics", "energy_staircase", "equispaced_instability_rate", "two_cluster_jump"]
__all__ += ["hardmax_limit", "meanfield_study"]
__all__ += ["ClusterClosure", "KirkwoodClosure", "bbgky_averages", "bbgky_closed_equation", "bbgky_closure_distance",
            "bbgky_ensemble", "bbgky_estimates", "bbgky_residual_scaling", "bbgky_study"]
__all__ += ["CriticalPointMap", "canonical_gaps", "critical_point_count_stability", "critical_point_map",
            "known_critical_points", "torus_critical_points", "torus_energy", "torus_gradient", "torus_hessian",
            "torus_hessian_spectrum"]
__all__ += ["SharpConfiguration", "candidate_configurations", "design_strength", "optimal_configurations",
            "sharp_configuration"]

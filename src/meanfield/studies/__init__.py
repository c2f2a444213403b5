"""Studies: sweeps of runs over parameters and seeds, and the papers' diagrams built on them, one room per
subject:

* :mod:`.sweeps` — a function over a grid of parameters and seeds, resumable (the floor the others stand on);
* :mod:`.clustering` — self-attention tokens: phase diagrams, equiangular tokens, metastability, unstable modes;
* :mod:`.noisy` — stationary states of noisy self-attention and the transition of the uniform state;
* :mod:`.limits` — the mean-field limit measured against the number of particles;
* :mod:`.kuramoto` — Kuramoto bifurcation diagrams, theory, Ott–Antonsen branches and bimodal states;
* :mod:`.rescaled` — paper 1's limit sets of the rescaled tokens;
* :mod:`.repulsive` — minimisers of the repulsive energy;
* :mod:`.open_problems` — the hard-max limit, the BBGKY hierarchy, critical points on the torus.

A room imports :mod:`.sweeps` and the shared argument checks, never another room. Each public name is
re-exported here and by :mod:`meanfield`.
"""

from __future__ import annotations

from . import clustering, kuramoto, limits, noisy, open_problems, repulsive, rescaled, sweeps
from .sweeps import SweepError, sweep
from .clustering import (
    MostUnstableMode, arc_length_staircase, cluster_dynamics, energy_staircase, equiangular_concentration,
    equiangular_curve, equiangular_gamma, equiangular_layers, equispaced_instability_rate, ginibre_matrices,
    most_unstable_mode, phase_diagram, phase_diagram_tokens, phase_diagram_trajectories, random_weights,
    staircase_angles, two_cluster_jump, unstable_mode_run,
)
from .noisy import (
    continuation, critical_beta, critical_noise, landau_coefficient, stationary_density, stationary_state,
)
from .limits import meanfield_study
from .kuramoto import (
    bimodal_boundaries, bimodal_states, frequency_law, kuramoto_bifurcation, kuramoto_branches,
    kuramoto_critical_coupling, kuramoto_linear_rates, kuramoto_locked_frequency, kuramoto_run, kuramoto_theory,
)
from .rescaled import (
    TripleCheck, check_good_triple, check_mixed_triple, group_levels, hyperplanes, limit_attention_rank, limit_set,
    polytope_vertices, random_good_triple, random_mixed_triple,
)
from .repulsive import (
    SharpConfiguration, candidate_configurations, design_strength, optimal_configurations, sharp_configuration,
)
from .open_problems import (
    ClusterClosure, CriticalPointMap, KirkwoodClosure, bbgky_averages, bbgky_closed_equation,
    bbgky_closure_distance, bbgky_ensemble, bbgky_estimates, bbgky_residual_scaling, bbgky_study,
    canonical_gaps, critical_point_count_stability, critical_point_map, hardmax_limit, known_critical_points,
    torus_critical_points, torus_energy, torus_gradient, torus_hessian, torus_hessian_spectrum,
)

ROOMS = (sweeps, clustering, noisy, limits, kuramoto, rescaled, repulsive, open_problems)
"""The rooms of the studies, the floor first."""

__all__: list[str] = sorted(name for room in ROOMS for name in room.__all__)

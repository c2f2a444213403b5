"""meanfield: mean-field continuity equations of self-attention and Kuramoto
dynamics on the circle and on spheres, a particle engine, energies and
Wasserstein distances.

The public API is re-exported here; the implementation lives in sub-packages, a one-way stack (each
imports only those before it): io and transport (infrastructure and the transport algorithms), domains,
measures, models, runs (the run driver), particles, pde and reduced (the Ott–Antonsen engine), compare, studies, plot and cli.
Figures and animations are in the sub-package :mod:`meanfield.plot` (``mf.plot.density_map(ds)``), loaded
on first use so that importing meanfield does not import matplotlib.
"""

from __future__ import annotations

import importlib

from .io import CheckpointError, CheckpointInUseError, WriteError
from .domains import Circle, sphere_area, Sphere, ZonalSphere
from .measures import (
    Density,
    EmpiricalMeasure,
    WassersteinResult,
    density,
    perturbed_uniform,
    sample,
    uniform,
    von_mises,
    wasserstein,
    wrapped_cauchy,
)
from .models import Attention, DepthVaryingAttention, HardmaxAttention, Kuramoto, RepulsiveSelfAttention
from .models import SelfAttention, energy
from .models import Graph, GraphonKuramoto, Interaction, Kernel, Potential
from .models import DiscreteLaw, LorentzianMixture, Mixture, bimodal_lorentzian
from .particles import (
    attention_matrix,
    effective_frequencies,
    frequency_clusters,
    local_order_parameters,
    phase_locking_time,
    number_of_clusters,
    numerical_rank,
    order_parameter,
    orthogonal_frame,
    pairwise_inner_products,
    simulate,
)
from .pde import methods, solve
from .runs import RunInterrupted
from .reduced import ManifoldError, ott_antonsen
from ._version import __version__
from ._compare import compare
from .studies import SweepError, sweep
from .studies import equiangular_curve, equiangular_gamma, equiangular_layers, phase_diagram, phase_diagram_trajectories
from .studies import kuramoto_bifurcation, kuramoto_critical_coupling, kuramoto_theory
from .studies import bimodal_boundaries, bimodal_states, kuramoto_branches, kuramoto_linear_rates
from .studies import kuramoto_locked_frequency
from .studies import cluster_dynamics, energy_staircase, equispaced_instability_rate, two_cluster_jump
from .studies import arc_length_staircase, staircase_angles
from .studies import check_good_triple, check_mixed_triple, hyperplanes, polytope_vertices, random_good_triple
from .studies import limit_attention_rank, limit_set, random_mixed_triple
from .studies import MostUnstableMode, most_unstable_mode, unstable_mode_run
from .studies import equiangular_concentration
from .studies import continuation, critical_beta, critical_noise, landau_coefficient
from .studies import stationary_density, stationary_state
from .studies import hardmax_limit, meanfield_study
from .studies import (ClusterClosure, KirkwoodClosure, bbgky_averages, bbgky_closed_equation, bbgky_closure_distance,
                      bbgky_ensemble, bbgky_estimates, bbgky_residual_scaling, bbgky_study)
from .studies import (CriticalPointMap, canonical_gaps, critical_point_count_stability, critical_point_map,
                      known_critical_points, torus_critical_points, torus_energy, torus_gradient, torus_hessian,
                      torus_hessian_spectrum)
from .studies import SharpConfiguration, design_strength, optimal_configurations, sharp_configuration

__all__ = [
    "ClusterClosure",
    "CriticalPointMap",
    "KirkwoodClosure",
    "bbgky_averages",
    "bbgky_closed_equation",
    "bbgky_closure_distance",
    "bbgky_ensemble",
    "bbgky_estimates",
    "bbgky_residual_scaling",
    "bbgky_study",
    "canonical_gaps",
    "critical_point_count_stability",
    "critical_point_map",
    "known_critical_points",
    "torus_critical_points",
    "torus_energy",
    "torus_gradient",
    "torus_hessian",
    "torus_hessian_spectrum",
    "hardmax_limit",
    "meanfield_study",
    "perturbed_uniform",
    "plot",
    "Attention",
    "DepthVaryingAttention",
    "CheckpointError",
    "CheckpointInUseError",
    "Circle",
    "Density",
    "DiscreteLaw",
    "EmpiricalMeasure",
    "Graph",
    "GraphonKuramoto",
    "HardmaxAttention",
    "Interaction",
    "Kernel",
    "Kuramoto",
    "LorentzianMixture",
    "ManifoldError",
    "Mixture",
    "MostUnstableMode",
    "Potential",
    "RepulsiveSelfAttention",
    "RunInterrupted",
    "SelfAttention",
    "SharpConfiguration",
    "SweepError",
    "Sphere",
    "WassersteinResult",
    "WriteError",
    "ZonalSphere",
    "__version__",
    "arc_length_staircase",
    "attention_matrix",
    "bimodal_lorentzian",
    "bimodal_boundaries",
    "bimodal_states",
    "cluster_dynamics",
    "design_strength",
    "compare",
    "density",
    "effective_frequencies",
    "energy",
    "energy_staircase",
    "staircase_angles",
    "equispaced_instability_rate",
    "equiangular_concentration",
    "equiangular_curve",
    "equiangular_gamma",
    "equiangular_layers",
    "frequency_clusters",
    "kuramoto_bifurcation",
    "kuramoto_branches",
    "kuramoto_critical_coupling",
    "kuramoto_linear_rates",
    "kuramoto_locked_frequency",
    "kuramoto_theory",
    "local_order_parameters",
    "methods",
    "most_unstable_mode",
    "number_of_clusters",
    "numerical_rank",
    "order_parameter",
    "orthogonal_frame",
    "ott_antonsen",
    "optimal_configurations",
    "pairwise_inner_products",
    "phase_diagram",
    "phase_diagram_trajectories",
    "phase_locking_time",
    "sample",
    "sharp_configuration",
    "simulate",
    "solve",
    "sphere_area",
    "sweep",
    "two_cluster_jump",
    "uniform",
    "unstable_mode_run",
    "von_mises",
    "wasserstein",
    "wrapped_cauchy",
    "check_good_triple",
    "check_mixed_triple",
    "limit_attention_rank",
    "limit_set",
    "hyperplanes",
    "polytope_vertices",
    "random_good_triple",
    "random_mixed_triple",
    "continuation",
    "critical_beta",
    "critical_noise",
    "landau_coefficient",
    "stationary_density",
    "stationary_state",
]


def __getattr__(name: str) -> object:
    """``meanfield.plot``, imported on first use (it loads matplotlib)."""
    if name == "plot":
        return importlib.import_module(".plot", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

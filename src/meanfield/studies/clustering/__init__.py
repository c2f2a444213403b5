"""Clustering of self-attention tokens (paper 2): the phase diagram of Figures 3 and 5, equiangular tokens
(Theorems 6.8, 6.9), the metastable energy staircase and the cluster dynamics on S¹, the most-unstable mode
of the uniform state."""

from __future__ import annotations

from ._arc_length_staircase import arc_length_staircase, staircase_angles
from ._cluster_dynamics import cluster_dynamics
from ._equiangular import equiangular_curve, equiangular_gamma, equiangular_layers
from ._inner_products import equiangular_concentration
from ._metastability import energy_staircase, equispaced_instability_rate, two_cluster_jump
from ._phase_diagram import ginibre_matrices, phase_diagram, phase_diagram_tokens, phase_diagram_trajectories
from ._random_weights import random_weights
from ._unstable_modes import MostUnstableMode, most_unstable_mode, unstable_mode_run

__all__ = ["MostUnstableMode", "arc_length_staircase", "cluster_dynamics", "energy_staircase",
           "equiangular_concentration", "equiangular_curve", "equiangular_gamma", "equiangular_layers",
           "equispaced_instability_rate", "ginibre_matrices",
           "most_unstable_mode", "phase_diagram", "phase_diagram_tokens", "phase_diagram_trajectories",
           "random_weights", "staircase_angles", "two_cluster_jump", "unstable_mode_run"]

"""Minimisers of the repulsive energy (paper 2, §9.1, Theorem 9.2): the exact sharp configurations, their
design strength and energy, and minimisers over n-point configurations from random starts."""

from __future__ import annotations

from ._configurations import SharpConfiguration, design_strength, sharp_configuration
from ._optimal_configurations import candidate_configurations, optimal_configurations

__all__ = ["SharpConfiguration", "candidate_configurations", "design_strength", "optimal_configurations",
           "sharp_configuration"]

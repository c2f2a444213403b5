"""Kuramoto research: bifurcation diagrams of r∞ over the coupling, the mean-field theory of the stationary
order parameter, branches on the Ott–Antonsen manifold and the states of the bimodal plane."""

from __future__ import annotations

from ._bifurcation import frequency_law, kuramoto_bifurcation, kuramoto_run
from ._branches import bimodal_boundaries, kuramoto_branches
from ._states import bimodal_states
from ._theory import kuramoto_critical_coupling, kuramoto_linear_rates, kuramoto_locked_frequency, kuramoto_theory

__all__ = ["bimodal_boundaries", "bimodal_states", "frequency_law", "kuramoto_bifurcation", "kuramoto_branches",
           "kuramoto_critical_coupling", "kuramoto_linear_rates", "kuramoto_locked_frequency", "kuramoto_run",
           "kuramoto_theory"]

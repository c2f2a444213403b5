"""The particle engine: self-attention and Kuramoto particles on S¹, S^{d-1} and R^d.

* :func:`simulate` integrates n particles (or a batch of independent systems)
  with the model's velocity (:mod:`meanfield.models._model`): Runge–Kutta
  methods written in exponential charts of the sphere, so that |x_i| = 1 holds
  to round-off without renormalisation (:mod:`._chart_steppers`); adaptive
  Dormand–Prince 5(4) with dense output, fixed-step RK4/Euler, and geodesic
  Euler–Maruyama for noise σ > 0 (dX = X dt + √(2σ) dB, generator σΔ); the exact
  Möbius flow of Kuramoto oscillators (:mod:`._moebius`); compiled per-system
  ensembles (:mod:`._ensemble`); on a graph the Möbius flow with local fields
  (:mod:`._network_moebius`). :mod:`._integrators` chooses among them.
* Diagnostics (vectorised over stacks of configurations, e.g. systems × times):
  :func:`number_of_clusters`, :func:`pair_fraction`, :func:`order_parameter`,
  :func:`attention_matrix`, :func:`numerical_rank`,
  :func:`pairwise_inner_products`; of oscillators on a graph
  (:mod:`._network_diagnostics`): :func:`local_order_parameters`,
  :func:`effective_frequencies`, :func:`frequency_clusters`, :func:`phase_locking_time`.
* Initial conditions: :func:`uniform_sphere`, :func:`von_mises_fisher`,
  :func:`orthogonal_frame` (the samplers of :mod:`meanfield.domains`), and
  :func:`meanfield.sample` of a density.

:mod:`meanfield` re-exports :func:`simulate`, :func:`orthogonal_frame` and the
diagnostics :func:`number_of_clusters`, :func:`order_parameter`,
:func:`attention_matrix`, :func:`numerical_rank`, :func:`pairwise_inner_products` and the network
diagnostics.
"""

from __future__ import annotations

from ..domains._sampling import orthogonal_frame, uniform_sphere, von_mises_fisher
from ._diagnostics import (
    attention_matrix,
    number_of_clusters,
    numerical_rank,
    order_parameter,
    pair_fraction,
    pairwise_inner_products,
)
from ._network_diagnostics import effective_frequencies, frequency_clusters, local_order_parameters, phase_locking_time
from ._simulate import simulate

__all__ = [
    "attention_matrix",
    "effective_frequencies",
    "frequency_clusters",
    "local_order_parameters",
    "phase_locking_time",
    "number_of_clusters",
    "numerical_rank",
    "order_parameter",
    "orthogonal_frame",
    "pair_fraction",
    "pairwise_inner_products",
    "simulate",
    "uniform_sphere",
    "von_mises_fisher",
]

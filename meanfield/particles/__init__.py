"""The particle engine: self-attention and Kuramoto particles on S¹, S^{d-1} and R^d.

* :func:`simulate` integrates n particles (or a batch of independent systems)
  with Runge–Kutta methods written in exponential charts of the sphere, so
  that |x_i| = 1 holds to round-off without renormalisation
  (:mod:`._integrators`); adaptive Dormand–Prince 5(4) with dense output,
  fixed-step RK4/Euler, and geodesic Euler–Maruyama for noise σ > 0
  (dX = X dt + √(2σ) dB, generator σΔ).
* Velocities (:mod:`._velocity`): blocked BLAS sums of bounded memory, a NUFFT
  path on S¹ (finufft, Bessel-coefficient Fourier series truncated to the
  requested accuracy), Kuramoto moments; :class:`Attention` for general
  Q, K, V, heads, feed-forward terms, R^d and paper 1's rescaled dynamics.
* :func:`sample`, :func:`uniform_sphere`, :func:`von_mises_fisher`,
  :func:`orthogonal_frame`: initial conditions.
* Diagnostics (vectorised over stacks of configurations, e.g. systems × times):
  :func:`number_of_clusters`, :func:`pair_fraction`, :func:`order_parameter`,
  :func:`attention_matrix`, :func:`numerical_rank`,
  :func:`pairwise_inner_products`, :func:`particle_energy`.

:mod:`meanfield` re-exports :func:`simulate`, :func:`sample`,
:func:`orthogonal_frame`, :class:`Attention` and the diagnostics
:func:`number_of_clusters`, :func:`order_parameter`, :func:`attention_matrix`,
:func:`numerical_rank`, :func:`pairwise_inner_products`; the other names
(:func:`uniform_sphere`, :func:`von_mises_fisher`, :class:`FeedForward`,
:func:`particle_energy` — also reached through ``meanfield.energy``) live in :mod:`meanfield.particles`.
"""

from __future__ import annotations

from ..models._attention import Attention, FeedForward
from ._diagnostics import (
    attention_matrix,
    number_of_clusters,
    numerical_rank,
    order_parameter,
    pair_fraction,
    pairwise_inner_products,
)
from ._energy import particle_energy
from ._sampling import orthogonal_frame, sample, uniform_sphere, von_mises_fisher
from ._simulate import simulate

__all__ = [
    "Attention",
    "FeedForward",
    "attention_matrix",
    "number_of_clusters",
    "numerical_rank",
    "order_parameter",
    "orthogonal_frame",
    "pair_fraction",
    "pairwise_inner_products",
    "particle_energy",
    "sample",
    "simulate",
    "uniform_sphere",
    "von_mises_fisher",
]

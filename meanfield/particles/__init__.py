"""The particle engine: self-attention and Kuramoto particles on S¹, S^{d-1} and R^d.

Public names are re-exported by :mod:`meanfield`.
"""

from __future__ import annotations

from ._attention import Attention, FeedForward
from ._diagnostics import (
    attention_matrix,
    number_of_clusters,
    numerical_rank,
    order_parameter,
    pairwise_inner_products,
    plot_pairwise_inner_products,
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
    "pairwise_inner_products",
    "particle_energy",
    "plot_pairwise_inner_products",
    "sample",
    "simulate",
    "uniform_sphere",
    "von_mises_fisher",
]

"""Models of the interaction: the aggregation–diffusion model of a user's kernel and potential (of which
self-attention and identical Kuramoto oscillators are instances), self-attention (paper 2, arXiv:2312.10794,
(2.1)) and Kuramoto-type angular models, self-attention with general weights (heads, feed-forward, R^d, paper 1's
rescaled tokens) and its hard-max limit (paper 2, §9.3), each on all pairs or restricted to the edges of a graph
(:class:`Graph`), and Kuramoto oscillators on a graphon (:class:`GraphonKuramoto`): their
velocities for particles and for the PDE, their interaction energy (paper 2, (3.5)), the attention weights
and the SA/USA rule. What a model provides is written in :mod:`._model`.
"""

from __future__ import annotations

from ._attention import Attention, FeedForward, softmax_attention
from ._depth_varying import DepthVaryingAttention
from ._energy import energy, particle_energy
from ._hardmax import HardmaxAttention
from ._interaction import Interaction
from ._kernels import Kernel
from ._frequency_laws import DiscreteLaw, LorentzianMixture, Mixture, bimodal_lorentzian
from ._graph import Graph
from ._graphon import GraphonKuramoto
from ._kuramoto import Kuramoto
from ._model import Model
from ._potentials import Potential
from ._repulsive_self_attention import RepulsiveSelfAttention
from ._self_attention import SelfAttention
from ._sinkhorn import SinkhornNotConverged, sinkhorn_attention

__all__ = [
    "Attention",
    "DepthVaryingAttention",
    "DiscreteLaw",
    "FeedForward",
    "Graph",
    "GraphonKuramoto",
    "HardmaxAttention",
    "Interaction",
    "Kernel",
    "Kuramoto",
    "LorentzianMixture",
    "Mixture",
    "Model",
    "Potential",
    "RepulsiveSelfAttention",
    "SelfAttention",
    "SinkhornNotConverged",
    "bimodal_lorentzian",
    "energy",
    "particle_energy",
    "sinkhorn_attention",
    "softmax_attention",
]

"""Models of the interaction: self-attention (paper 2, arXiv:2312.10794, (2.1)) and Kuramoto, their velocity
field X[μ], the Fourier and Funk–Hecke multipliers of the kernel e^{β<x,y>}, the interaction energy
(paper 2, (3.5)) and self-attention with general weights.

The names load on first use (PEP 562): the particle engine reads the models, and ``Attention`` and
``velocity_field`` evaluate through the particle engine, so neither side may import the other eagerly.
"""

from __future__ import annotations

from importlib import import_module

_MODULES = {
    "SelfAttention": "._dynamics",
    "Kuramoto": "._dynamics",
    "scaled_funk_hecke": "._kernels",
    "scaled_funk_hecke_over_beta": "._kernels",
    "von_mises_fisher_values": "._kernels",
    "velocity_field": "._velocity_field",
    "density_energy": "._energy",
    "energy": "._energy",
    "energy_multipliers": "._energy",
    "Attention": "._attention",
    "FeedForward": "._attention",
    "softmax_attention": "._attention",
}

__all__ = list(_MODULES)


def __getattr__(name: str) -> object:
    """The public names of the models, each imported from its module on first use."""
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_MODULES[name], __name__), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

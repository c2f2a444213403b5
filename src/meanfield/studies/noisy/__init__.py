"""Noisy self-attention (paper 2, Problem 7): zonal stationary states by Newton's method, their continuation
in the noise, and where and how the uniform state bifurcates."""

from __future__ import annotations

from ._continuation import continuation
from ._noisy_transition import critical_beta, critical_noise, landau_coefficient
from ._stationary import stationary_density, stationary_state

__all__ = ["continuation", "critical_beta", "critical_noise", "landau_coefficient", "stationary_density",
           "stationary_state"]

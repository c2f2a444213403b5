"""The mean-field limit measured: W_p(μ_n(t), μ(t)) against the number of particles n."""

from __future__ import annotations

from ._meanfield_limit import meanfield_study

__all__ = ["meanfield_study"]

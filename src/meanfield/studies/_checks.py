"""Argument checks shared by the studies (on top of :mod:`meanfield._validate`)."""

from __future__ import annotations

from typing import Any

from ..models._repulsive_self_attention import RepulsiveSelfAttention
from ..models._self_attention import SelfAttention

__all__ = ["require_self_attention"]


def require_self_attention(model: Any, purpose: str, *, rescaled_time: bool = False) -> SelfAttention:
    """``model`` itself if it is an attractive :class:`meanfield.SelfAttention` (SA or USA), else a
    TypeError naming ``purpose``, the study that needs it (these studies are of clustering, which the
    repulsive model does not do); a model in the rescaled time s = e^β t (``time="rescaled"``) is refused by a
    ValueError unless the study takes it (``rescaled_time``: it asks the model for its velocity and rates)."""
    if not isinstance(model, SelfAttention) or isinstance(model, RepulsiveSelfAttention):
        raise TypeError(f"model must be a meanfield.SelfAttention (SA or USA) for {purpose}, "
                        f"got {type(model).__name__}" + (" (its tokens repel, they do not cluster)"
                                                         if isinstance(model, RepulsiveSelfAttention) else ""))
    if model.time != "t" and not rescaled_time:
        raise ValueError(f"{purpose}: model.time = {model.time!r} is not taken here, only the time t of the "
                         f"equation; use time='t' (USA in t needs beta <= 709.78)")
    return model

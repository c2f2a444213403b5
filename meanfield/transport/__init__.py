"""Optimal transport: Wasserstein distances W_p between measures on S¹ and S^{d-1} (geodesic cost)."""

from __future__ import annotations

from ._wasserstein import WassersteinResult, wasserstein
from ._circle import circle_w1, circle_w1_cells, circle_wp, interval_wp

__all__ = [
    "WassersteinResult",
    "wasserstein",
    "circle_w1",
    "circle_w1_cells",
    "circle_wp",
    "interval_wp",
]

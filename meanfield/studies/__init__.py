"""Studies: sweeps of runs over parameters and seeds, and the papers' diagrams built on them.

Each public name is re-exported by :mod:`meanfield`.
"""

from __future__ import annotations

from ._sweep import SweepError, sweep

__all__: list[str] = ["SweepError", "sweep"]

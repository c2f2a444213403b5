"""The mean-field continuity equation: ``solve`` and its checks and trackers (resolution, step counts,
recurrence of a frequency quadrature, progress).
"""

from __future__ import annotations

from ._solve import solve, methods
from ._resolution import (
    FINITE_VOLUME_TAIL_TOL,
    ResolutionMonitor,
    circle_tail,
    density_tail,
    sphere_tail,
    zonal_tail,
)
from ._step_estimate import STEP_COUNT_WARNING, STEP_COUNT_LIMIT, check_step_count
from ._recurrence import recurrence_time, recurrence_free, check_recurrence, MAX_SUGGESTED_NODES
from ._trackers import ProgressBar

__all__ = [
    "solve",
    "methods",
    "FINITE_VOLUME_TAIL_TOL",
    "ResolutionMonitor",
    "circle_tail",
    "density_tail",
    "sphere_tail",
    "zonal_tail",
    "STEP_COUNT_WARNING",
    "STEP_COUNT_LIMIT",
    "check_step_count",
    "recurrence_time",
    "recurrence_free",
    "check_recurrence",
    "MAX_SUGGESTED_NODES",
    "ProgressBar",
]

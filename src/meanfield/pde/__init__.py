"""The mean-field continuity equation: ``solve``, the choice of its scheme (:mod:`._methods`), the record of
its outputs (:mod:`._dataset`) and its checks (resolution of schemes that do not check it themselves, step
counts of explicit schemes, recurrence of a frequency quadrature).
"""

from __future__ import annotations

from ._dataset import density_dataset
from ._methods import METHOD_AUTO, choose_method, scheme_options
from ._recurrence import MAX_SUGGESTED_NODES, check_recurrence, recurrence_free, recurrence_time
from ._resolution import FINITE_VOLUME_TAIL_TOL, ResolutionMonitor
from ._solve import methods, solve
from ._step_estimate import STEP_COUNT_LIMIT, STEP_COUNT_WARNING, check_step_count

__all__ = [
    "FINITE_VOLUME_TAIL_TOL",
    "MAX_SUGGESTED_NODES",
    "METHOD_AUTO",
    "ResolutionMonitor",
    "STEP_COUNT_LIMIT",
    "STEP_COUNT_WARNING",
    "check_recurrence",
    "check_step_count",
    "choose_method",
    "density_dataset",
    "methods",
    "recurrence_free",
    "recurrence_time",
    "scheme_options",
    "solve",
]

"""Up-front step counts of explicit finite-volume runs: refuse or warn before the work.

A finite-volume scheme steps explicitly; with noise σ > 0 its forward-Euler bound contains
the diffusive limit Δt ≤ h²/(2σ) (h the cell width; on the sphere |cell| / Σ σ L/d), so
the number of steps grows like σ t / h². The estimate is

    N ≈ (t_end - t_start) / Δt_0,   Δt_0 = min(the scheme's first adaptive step, max_step)

(or its fixed ``dt``), exact when the step stays at its diffusive limit, which it does
when σ dominates the velocity. Above :data:`STEP_COUNT_WARNING` steps a RuntimeWarning
is emitted; above :data:`STEP_COUNT_LIMIT` (the ``max_steps`` of :func:`solvers.evolve`,
which would stop the run after that much work) the run is refused.
"""

from __future__ import annotations

import logging
import math
import warnings
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

__all__ = ["STEP_COUNT_WARNING", "STEP_COUNT_LIMIT", "check_step_count"]

#: estimated steps above which a finite-volume run warns
STEP_COUNT_WARNING = 100_000
#: estimated steps above which a finite-volume run is refused (the step budget of ``solvers.evolve``)
STEP_COUNT_LIMIT = 10_000_000


def check_step_count(scheme: Any, y0: np.ndarray, times: np.ndarray, max_step: float, noise: float,
                     model_attrs: dict[str, Any] | None = None) -> int:
    """Estimated number of steps of ``scheme`` from ``times[0]`` to ``times[-1]`` (0 for a scheme whose steps
    are not bounded by an explicit stability limit, :attr:`solvers.Scheme.explicit_steps`).

    Raises
    ------
    ValueError
        More than :data:`STEP_COUNT_LIMIT` estimated steps, naming the estimate, the step and
        the diffusive bound, and suggesting the spectral scheme (diffusion by integrating factor).

    Warns
    -----
    RuntimeWarning
        More than :data:`STEP_COUNT_WARNING` estimated steps.
    """
    span = float(times[-1] - times[0])
    if not scheme.explicit_steps or span <= 0:
        return 0
    fixed = scheme.fixed_step
    evaluations = scheme.nfev  # the estimate is not an evaluation of the run (resumed counts stay exact)
    step = min(float(fixed) if fixed is not None else float(scheme.initial_step(y0)), float(max_step))
    scheme.nfev = evaluations
    if not (np.isfinite(step) and step > 0):
        return 0
    estimate = math.ceil(span / step)
    if estimate <= STEP_COUNT_WARNING:
        return estimate
    cause = (f"with noise sigma = {noise:g} the explicit step is bounded by the diffusive limit "
             f"~ h^2/(2 sigma)" if noise > 0 else "the explicit step is bounded by the CFL limit h/(2 max|u|)")
    attrs = model_attrs or {}
    beta = float(attrs.get("beta", 0.0))
    if attrs.get("normalized") in (0, False) and attrs.get("time", "t") == "t" and beta > 1:
        # the unnormalised velocity carries e^β: the cause is β, not the grid
        cause += (f", and max|u| carries the factor e^beta = {np.exp(min(beta, 709.0)):.3g} of the unnormalised "
                  f"interaction at beta = {beta:g} (normalized=True has velocities of order 1)")
    message = (f"{scheme.name} needs about {estimate:.3g} steps of dt = {step:.3g} for t from {times[0]:g} to "
               f"{times[-1]:g}: {cause}; use method='spectral' (it treats diffusion exactly by an integrating "
               f"factor), a coarser grid or a shorter t")
    if estimate > STEP_COUNT_LIMIT:
        raise ValueError(f"{message} (refused: more than {STEP_COUNT_LIMIT:.3g} steps)")
    logger.warning(message)
    warnings.warn(message, RuntimeWarning, stacklevel=5)
    return estimate

"""The run driver shared by :func:`meanfield.solve` and :func:`meanfield.simulate`: an integrator, the record
of its outputs and the attrs that identify it, run with a progress bar and checkpoints and resumed from them
(:mod:`._driver`)."""

from __future__ import annotations

from ._driver import COUNTS, RUN_FACTS, EvolveIntegrator, Integrator, Outputs, Run, RunInterrupted, drive
from ._finite import non_finite_outputs
from ._progress import ProgressBar

__all__ = ["COUNTS", "RUN_FACTS", "EvolveIntegrator", "Integrator", "Outputs", "ProgressBar", "Run", "RunInterrupted",
           "drive", "non_finite_outputs"]

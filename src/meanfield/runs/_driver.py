"""The one run driver of :func:`meanfield.solve` and :func:`meanfield.simulate`.

A run is an integrator (anything with ``run`` and ``snapshot``: a stepper of
:mod:`solvers` driven by :func:`solvers.evolve` (:class:`EvolveIntegrator`), or
the compiled ensembles of :mod:`meanfield.particles._ensemble`), the record of its
outputs (``record`` each output, build the ``dataset`` of the first outputs, take
back the outputs of a checkpoint) and the attrs that identify it. :func:`drive`

1. checks a checkpoint to resume from (every identifying attr equal, times a prefix);
2. runs the integrator from the checkpoint's continuation (or the initial state) with
   the observers: the record of the outputs, a progress bar over simulated time, and
   the checkpoint writer (at most every ``checkpoint_interval`` seconds);
3. returns the dataset of every output with the run facts, counted over all segments,
   and writes it (with the integrator's continuation, so that a run extended to a later
   time continues from it).

Checkpoint and resume are written here once. A file written while the run goes on says
so: ``success = 0`` and the message ``"checkpoint: …"``, until the run's own last write.
A run interrupted (Ctrl-C, SIGINT) relabels its last checkpoint ``"interrupted at t = …"``
(still ``success = 0``) and raises :class:`RunInterrupted`, a ``KeyboardInterrupt`` that
says where the run got to and where it continues from.
"""

from __future__ import annotations

import logging
import os
import time as _time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import xarray as xr

from solvers import Evolution, Stepper, evolve

from ..io._checkpoint import (
    Checkpoint,
    CheckpointError,
    check_same_run,
    SNAPSHOT_PREFIX,
    load_checkpoint,
    snapshot_of,
    snapshot_variables,
)
from ..io._conventions import continued_history
from ..io._files import CHECKSUM_ATTR
from ._progress import ProgressBar

logger = logging.getLogger(__name__)

__all__ = ["COUNTS", "EvolveIntegrator", "Integrator", "Outputs", "Run", "RUN_FACTS", "RunInterrupted", "drive"]

#: the counts of a run, summed over its segments
COUNTS = ("n_steps", "n_rejected", "nfev")
#: attrs of a run that are facts of the run, not parameters: never compared when resuming
RUN_FACTS = frozenset({"success", "message", *COUNTS, "dt_min", "dt_max", "sha256", "meanfield_version",
                       "wall_time", "resumed_at", "resolution_tail", "resolved", "max_sphere_deviation",
                       "rng_state", "stability_rate", "diagnostic_errors", "method_reason"})


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by an interrupt; its checkpoint (if any) holds the outputs up to ``t_reached``.

    Raised by :func:`meanfield.solve` and :func:`meanfield.simulate` (through :func:`drive`) when an
    interrupt (Ctrl-C, SIGINT) stops the integration. The last checkpoint written at an output is read
    back and relabelled ``success = 0``, ``message = "interrupted at t = …"``; calling the same run again
    with ``resume=True`` continues from it. A ``KeyboardInterrupt``, so ``except Exception`` does not
    catch it.

    Parameters
    ----------
    checkpoint : Path or None
        The relabelled checkpoint file; None when the run had no checkpoint or had written none yet.
    t_reached : float
        The last output time that checkpoint holds (nan when there is none).

    Attributes
    ----------
    checkpoint : Path or None
        The checkpoint relabelled ``success = 0``, ``message = "interrupted at t = …"``; None when the run had
        no checkpoint or had written none yet.
    t_reached : float
        The last output time that checkpoint holds (nan when there is none).

    Examples
    --------
    >>> from pathlib import Path
    >>> import meanfield as mf
    >>> stop = mf.RunInterrupted(Path("run.nc"), 2.5)
    >>> isinstance(stop, KeyboardInterrupt), stop.t_reached, stop.checkpoint.name
    (True, 2.5, 'run.nc')
    >>> print(stop)
    interrupted: the outputs up to t = 2.5 are in 'run.nc'; resume=True continues from there
    >>> print(mf.RunInterrupted(None, float("nan")))
    interrupted: no checkpoint holds its outputs
    >>> # caught as a KeyboardInterrupt, not as an Exception
    >>> try:
    ...     raise stop
    ... except Exception:
    ...     print("not here")
    ... except KeyboardInterrupt as interrupt:
    ...     print(f"resume from t = {interrupt.t_reached}")
    resume from t = 2.5
    """

    def __init__(self, checkpoint: Path | None, t_reached: float) -> None:
        self.checkpoint, self.t_reached = checkpoint, t_reached
        kept = (f"the outputs up to t = {t_reached:g} are in {str(checkpoint)!r}; resume=True continues from there"
                if checkpoint is not None else "no checkpoint holds its outputs")
        super().__init__(f"interrupted: {kept}")


class Integrator(Protocol):
    """What :func:`drive` runs."""

    def run(self, y0: Any, times: np.ndarray, observers: list[Any], resume: dict[str, np.ndarray] | None
            ) -> Evolution:
        """Integrate from ``y0`` at ``times[0]`` (or from the continuation ``resume`` of a checkpoint) through
        ``times``, calling ``observer(index, t, y)`` at every output; counts of this segment only."""

    def snapshot(self) -> dict[str, np.ndarray]:
        """Where the run continues from after the latest output: arrays, the counts of this segment up to
        there (``n_steps``, ``n_rejected``, ``nfev``) and its step range so far (``dt_min``, ``dt_max``)."""


class Outputs(Protocol):
    """The record of a run's outputs."""

    def record(self, index: int, t: float, y: Any) -> None:
        """Keep the output ``index`` of this segment (an observer)."""

    def resume_from(self, done: xr.Dataset) -> Any:
        """Take back the outputs of the checkpoint ``done``; the integrator's state at its last output."""

    def facts(self) -> dict[str, Any]:
        """Run facts this record adds (resolution, deviation from the manifold, …)."""

    def failure(self, ds: xr.Dataset) -> str | None:
        """Why the outputs in ``ds`` are not a valid result although the integrator succeeded (points off the
        manifold, non-finite values, a flow that lost its digits); None when they are valid."""

    def dataset(self, n_outputs: int, attrs: dict[str, Any]) -> xr.Dataset:
        """The dataset of the checkpoint's outputs and the first ``n_outputs`` of this segment, with ``attrs``."""


@dataclass
class Run:
    """One run: what it integrates, how its outputs are kept, and what identifies it."""

    integrator: Integrator
    outputs: Outputs
    y0: Any
    times: np.ndarray
    attrs: dict[str, Any]
    """Every parameter of the run (compared, as text, with a checkpoint's attrs on resuming)."""
    label: str
    """The progress bar's label."""
    may_differ: frozenset[str] = field(default_factory=frozenset)
    """Attrs a resumed run may change (settings that do not change the trajectory)."""


def drive(run: Run, *, checkpoint: str | os.PathLike | None = None, checkpoint_interval: float = 30.0,
          resume: bool = False, progress: bool = False) -> xr.Dataset:
    """Run ``run`` (the module docstring), checkpointed at ``checkpoint`` and resumed from it with ``resume``.

    Raises
    ------
    CheckpointError
        ``resume`` with a checkpoint that is damaged or made by a different run (the differing parameter
        is named), or whose times are not a prefix of the run's.
    """
    done = _resumable(Path(checkpoint), run) if resume and checkpoint is not None else None
    if done is not None and done.sizes["time"] == run.times.size and int(done.attrs.get("success", 0)):
        logger.info("checkpoint %s holds the finished run; returned as it is", checkpoint)
        return _finished_result(done)
    prior: dict[str, Any] = {**dict.fromkeys(COUNTS, 0), "dt_min": np.inf, "dt_max": 0.0}
    times, y0, snapshot = run.times, run.y0, None
    if done is not None:
        y0 = run.outputs.resume_from(done)
        snapshot = snapshot_of(done) or None
        source = snapshot if snapshot is not None else done.attrs
        for name in prior:
            value = float(np.asarray(source.get(name, prior[name])))
            if np.isfinite(value):
                prior[name] = int(value) if name in COUNTS else value
        times = run.times[done.sizes["time"] - 1:]
        logger.info("resuming from %s at t=%g", checkpoint, times[0])

    def facts(counts: dict[str, Any]) -> dict[str, Any]:
        """Counts and step range over both segments (``counts``: this segment's), with the record's facts."""
        total = {name: int(prior[name]) + int(counts[name]) for name in COUNTS}
        taken = total["n_steps"] > 0
        return {**total, "dt_min": float(min(prior["dt_min"], counts["dt_min"])) if taken else np.nan,
                "dt_max": float(max(prior["dt_max"], counts["dt_max"])) if taken else np.nan,
                "resumed_at": float(times[0]) if done is not None else -1.0, **run.outputs.facts()}

    def with_history(ds: xr.Dataset) -> xr.Dataset:
        if done is not None:
            ds.attrs = continued_history(ds.attrs, done.attrs.get("history", ""))
        return ds

    def with_state(ds: xr.Dataset) -> xr.Dataset:
        """``ds`` with the integrator's continuation, its counts and step range over both segments."""
        state = run.integrator.snapshot()
        state.update({name: np.int64(int(prior[name]) + int(state[name])) for name in COUNTS})
        state.update(dt_min=np.float64(min(prior["dt_min"], float(state["dt_min"]))),
                     dt_max=np.float64(max(prior["dt_max"], float(state["dt_max"]))))
        return ds.assign(snapshot_variables(state))

    def checkpoint_write(n_outputs: int) -> xr.Dataset:
        reached = float(times[n_outputs - 1])
        running = {**facts(run.integrator.snapshot()), "success": 0,
                   "message": f"checkpoint: the run was still going at t = {reached:g}; resume=True continues it"}
        return with_state(with_history(run.outputs.dataset(n_outputs, {**run.attrs, **running})))

    observers: list[Any] = [run.outputs.record]
    bar = ProgressBar(times, description=run.label) if progress else None
    if bar is not None:
        observers.append(bar)
    keeper = None if checkpoint is None else Checkpoint(checkpoint, checkpoint_write, checkpoint_interval)
    if keeper is not None:
        observers.append(keeper)
    start = _time.perf_counter()
    try:
        result = run.integrator.run(y0, times, observers, snapshot)
    except KeyboardInterrupt:
        raise _interrupted(keeper) from None
    finally:
        if bar is not None:
            bar.close()
    counts = {name: getattr(result, name) for name in (*COUNTS, "dt_min", "dt_max")}
    final = {**facts(counts), "success": int(result.success), "message": result.message,
             "wall_time": _time.perf_counter() - start}
    ds = with_history(run.outputs.dataset(result.t.size, {**run.attrs, **final}))
    invalid = run.outputs.failure(ds) if result.success else None
    if invalid is not None:
        ds.attrs.update(success=0, message=f"invalid result: {invalid}")
    if keeper is not None and not keeper.save(with_state(ds)):
        held = f"the outputs up to t = {times[keeper.n_written - 1]:g}" if keeper.n_written else "no outputs"
        logger.warning("the result is returned but was not written to checkpoint %s (%s); the file holds %s",
                       keeper.path, keeper.last_error, held)
    if not result.success:
        logger.warning("%s stopped early at t=%g: %s", run.label, ds.time.values[-1], result.message)
    elif invalid is not None:
        logger.warning("%s reached t=%g with an invalid result: %s", run.label, ds.time.values[-1], invalid)
    return ds


def _finished_result(done: xr.Dataset) -> xr.Dataset:
    """The result saved in a finished run's file: its outputs and attrs (counts over the whole run), without the
    scheme state kept for resuming or the file's checksum."""
    state = [name for name in done.data_vars if str(name).startswith(SNAPSHOT_PREFIX)]
    ds = done.drop_vars(state)  # their dimensions go with them
    ds.attrs = {key: value.item() if isinstance(value, np.generic) else value
                for key, value in ds.attrs.items() if key != CHECKSUM_ATTR}
    return ds


def _interrupted(keeper: Checkpoint | None) -> RunInterrupted:
    """Relabel the last checkpoint ``keeper`` wrote as interrupted; the :class:`RunInterrupted` to raise.

    The state of the integrator when the interrupt arrives may be mid-step, so the last file written at an
    output (consistent: outputs and continuation together) is what is kept, read back and relabelled."""
    try:
        ds = None if keeper is None else load_checkpoint(keeper.path)
    except CheckpointError:
        ds = None
    if ds is None or int(ds.attrs.get("success", 0)):  # none, damaged, or a previous run's finished result
        return RunInterrupted(None, np.nan)
    reached = float(ds.time.values[-1])
    ds.attrs.update(success=0, message=f"interrupted at t = {reached:g}; resume=True continues it")
    keeper.save(ds)
    return RunInterrupted(keeper.path, reached)


def _resumable(path: Path, run: Run) -> xr.Dataset | None:
    """The verified checkpoint at ``path`` made by the same run (every parameter), or None when there is none."""
    done = load_checkpoint(path)
    if done is None:
        return None
    check_same_run(done.attrs, run.attrs, path, RUN_FACTS | run.may_differ)
    saved = done.time.values
    if saved.size > run.times.size or not np.allclose(saved, run.times[: saved.size], rtol=1e-12, atol=0):
        raise CheckpointError(f"checkpoint {str(path)!r} holds times that are not a prefix of t; "
                              "remove it or pass resume=False")
    return done


class EvolveIntegrator:
    """A :class:`solvers.Stepper` driven by :func:`solvers.evolve`, continued from the :class:`solvers.Continuation`
    of its latest output.

    ``snapshot()`` saves the stepper's own arrays there (:meth:`solvers.Stepper.snapshot`) with ``t``, ``dt`` and
    the counts; ``run(..., resume=snapshot)`` restores the stepper and takes the next step from there (a
    stepper with dense output takes again the step that reached the output), so that the continuation
    equals an uninterrupted run bit for bit.
    """

    def __init__(self, stepper: Stepper, *, first_step: float | None = None, max_step: float = np.inf,
                 max_steps: int = 10_000_000, raise_on_error: bool = False) -> None:
        self.stepper = stepper
        self.first_step = first_step
        self.max_step = max_step
        self.max_steps = max_steps
        self.raise_on_error = raise_on_error
        self.record = Evolution(t=np.zeros(0), y=np.zeros(0))

    def run(self, y0: Any, times: np.ndarray, observers: list[Any], resume: dict[str, np.ndarray] | None
            ) -> Evolution:
        self.record = Evolution(t=times, y=np.zeros(0))
        options = {"max_step": self.max_step, "observers": observers, "raise_on_error": self.raise_on_error,
                   "record": self.record}
        if resume is None:
            return evolve(self.stepper, y0, times, first_step=self.first_step,
                          max_steps=self.max_steps, **options)
        loop_state = self.stepper.restore(resume)
        dt = float(resume["dt"])
        first = dt if np.isfinite(dt) and dt > 0 else None
        budget = max(self.max_steps - int(resume["n_steps"]) - int(resume["n_rejected"]), 0)
        if self.stepper.dense_output:
            return evolve(self.stepper, y0, times, first_step=first, max_steps=budget,
                          start=(float(resume["t"]), loop_state), **options)
        return evolve(self.stepper, loop_state, times, first_step=first, max_steps=budget, **options)

    def snapshot(self) -> dict[str, np.ndarray]:
        c, record = self.record.continuation, self.record
        return {**self.stepper.snapshot(c.y), "t": np.float64(c.t), "dt": np.float64(c.dt),
                "n_steps": np.int64(c.n_steps), "n_rejected": np.int64(c.n_rejected), "nfev": np.int64(c.nfev),
                "dt_min": np.float64(record.dt_min), "dt_max": np.float64(record.dt_max)}

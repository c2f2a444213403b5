"""A right-hand side that switches at known times, integrated piece by piece: one fresh stepper per piece.

For y' = F_k(t, y) on the piece [s_k, s_{k+1}) of the switching times s_k (weights that change with depth),
:class:`PiecewiseStepper` declares the s_k to :func:`solvers.evolve` (which ends a step at each of them and
restarts the step-size control there) and takes every step with the stepper of the piece the step starts in,
built afresh by ``make(k)`` when the piece changes. A step therefore never sees two pieces: its stages, its
first-same-as-last velocity and its error estimate all belong to F_k, and a run across s_k equals the run of
F_{k-1} up to s_k chained with the run of F_k from there, step for step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._evolve import Stepper, StepResult

__all__ = ["PiecewiseStepper"]


class PiecewiseStepper(Stepper):
    """The steppers of the pieces of a switching right-hand side as one :class:`Stepper` (module docstring).

    Parameters
    ----------
    make : callable
        ``make(k)`` -> the :class:`Stepper` of piece k (all of one kind: same loop state, same ``dense_output``
        and ``fixed_step``).
    piece_of : callable
        ``piece_of(t)`` -> the piece k with s_k ≤ t < s_{k+1} (right-continuous: a step starting at s_k is in
        piece k).
    switching_times : callable
        ``switching_times(t0, t1)`` -> the s_k in the open interval (t0, t1), increasing.
    t0 : float
        The time the run starts at (its piece is built first).

    Examples
    --------
    y' = -y on [0, 1) and y' = +y from t = 1 on, each piece stepped exactly; the step that would cross
    t = 1 lands on it, and the run from t = 0 to 2 returns to y(0):

    >>> import numpy as np
    >>> import solvers
    >>> class Exponential(solvers.Stepper):  # y' = r y, stepped exactly
    ...     name = "exponential"
    ...     def __init__(self, r):
    ...         super().__init__()
    ...         self.r = r
    ...     def initial_step(self, y, t=0.0):
    ...         return 0.3
    ...     def _step_impl(self, t, y, dt):
    ...         self.nfev += 1
    ...         return solvers.StepResult(True, np.exp(self.r * dt) * y, dt)
    >>> stepper = solvers.PiecewiseStepper(lambda k: Exponential(-1.0 if k == 0 else 1.0),
    ...                                    lambda t: int(t >= 1.0),
    ...                                    lambda t0, t1: np.array([1.0] if t0 < 1.0 < t1 else []), 0.0)
    >>> run = solvers.evolve(stepper, np.array([1.0]), [0.0, 2.0])
    >>> print(run.y[-1].round(12), run.n_steps)   # steps 0.3, 0.3, 0.3, 0.1 | 0.3, 0.3, 0.3, 0.1
    [1.] 8
    """

    def __init__(self, make: Callable[[int], Stepper], piece_of: Callable[[float], int],
                 switching_times: Callable[[float, float], np.ndarray], t0: float) -> None:
        self._make, self._piece_of, self._switching = make, piece_of, switching_times
        self._retired = 0  # evaluations of the steppers of earlier pieces
        self._piece = int(piece_of(float(t0)))
        self._current = make(self._piece)
        self.name = self._current.name
        self.dense_output = self._current.dense_output
        self.equal_steps = self._current.equal_steps
        self.fixed_step = self._current.fixed_step

    @property
    def nfev(self) -> int:  # type: ignore[override]
        """Right-hand-side evaluations of every piece so far."""
        return self._retired + self._current.nfev

    @property
    def current(self) -> Stepper:
        """The stepper of the piece of the latest step."""
        return self._current

    def _enter(self, piece: int) -> Stepper:
        if piece != self._piece:
            self._retired += self._current.nfev
            self._piece, self._current = piece, self._make(piece)
        return self._current

    def _at(self, t: float) -> Stepper:
        return self._enter(int(self._piece_of(t)))

    def switching_times(self, t0: float, t1: float) -> np.ndarray:
        return np.asarray(self._switching(t0, t1), dtype=float)

    def initial_step(self, y: Any, t: float = 0.0) -> float:
        return self._at(t).initial_step(y, t)

    def _step_impl(self, t: float, y: Any, dt: float) -> StepResult:
        return self._at(t).step(t, y, dt)

    def interpolate(self, t: float) -> Any:
        return self._current.interpolate(t)

    def check(self, y: Any) -> None:
        self._current.check(y)

    def snapshot(self, y: Any) -> dict[str, np.ndarray]:
        """The snapshot of the stepper of the latest step, with its piece (``piece``)."""
        return {**self._current.snapshot(y), "piece": np.int64(self._piece)}

    def restore(self, snapshot: dict[str, np.ndarray]) -> Any:
        own = {key: value for key, value in snapshot.items() if key != "piece"}
        return self._enter(int(snapshot["piece"])).restore(own)

    def __getattr__(self, name: str) -> Any:
        """What the steppers of the pieces have besides the contract (``positions``, ``state``, ...): the current
        one's."""
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._current, name)

r"""The event-driven Filippov stepper of the hard-max dynamics (paper 2, (9.5)–(9.6)).

Between two switching times the maximiser sets C_i and the weight rule of
:mod:`._hardmax_selection` are fixed and the flow ż_i = Σ_j λ_ij V(z_j - z_i) is smooth (linear
when no row slides). Each such segment is integrated by scipy's DOP853 (order 8, error control by
``rtol``/``atol``) with three event functions located by root finding on its dense output:

* a non-member k passes the lowest score of a set, min_{j∈C_i} S_ij - S_ik < 0 (a new maximiser; a
  few ulps past equality, so that a token that stops exactly on a tie is not a switch);
* the scores of a set spread beyond the tie tolerance (a tie breaks; a sliding set, held to the integrator's
  accuracy, beyond :func:`event_tolerance`);
* a weight of a sliding row reaches 0, or no λ ≥ 0 holds its tie any longer (sliding ends).

At an event the sets are selected anew and the next segment starts there. The solution is that of
the selection rule to the integrator's tolerance, switching times included (to the root finder's
tolerance, ~4 ulps of t); an accumulation of switching times (a Zeno point) stops the run with
:class:`SwitchingAccumulation` after ``max_switches`` events in one output interval, and an event after which
the rule selects the sets it had (it cannot go on) stops it with a :class:`solvers.SchemeError` that says so.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.integrate

from solvers import SchemeError, Stepper, StepResult

from ._hardmax_selection import ROUND_OFF, Selection, scores, select

__all__ = ["FilippovStepper", "SwitchingAccumulation"]

FILIPPOV_METHOD = ("event-driven Filippov flow: segments between switching times by DOP853 (order 8), switching "
                   "times by root finding on its dense output, maximiser sets selected anew at each event")


#: the widest relative tie tolerance a segment may take to admit a crossing its event fell short of
MAX_WIDENED_TOLERANCE = 1e-6


class SwitchingAccumulation(SchemeError):
    """The switching times of the hard-max dynamics accumulate (more than ``max_switches`` in one interval)."""


class FilippovStepper(Stepper):
    """Steps of the hard-max dynamics over whole output intervals, through any number of switching times.

    Parameters
    ----------
    Q, K, V : (d, d) arrays
    rtol, atol : float
        Tolerances of DOP853 on each segment.
    tie_tolerance : float or None
        The tie rule (:func:`._hardmax_selection.select`): None, ties at the round-off of the scores; a float,
        the relative rule.
    max_switches : int
        Events allowed in one step before :class:`SwitchingAccumulation`.

    ``nfev`` counts evaluations of the velocity.
    """

    name = "filippov"

    def __init__(self, Q: np.ndarray, K: np.ndarray, V: np.ndarray, *, rtol: float, atol: float,
                 tie_tolerance: float | None, max_switches: int = 10_000) -> None:
        super().__init__()
        self.Q, self.K, self.V = Q, K, V
        self.rtol, self.atol = rtol, atol
        self.tie_tolerance = tie_tolerance
        self.max_switches = max_switches

    def initial_step(self, y: np.ndarray, t: float = 0.0) -> float:
        """A step covers a whole output interval: the segments inside it are the stepper's own."""
        return np.inf

    def _step_impl(self, t: float, y: np.ndarray, dt: float) -> StepResult:
        out = np.empty_like(y)
        for system, z in enumerate(y):
            out[system] = self._advance(z, t, t + dt)
        return StepResult(True, out, np.inf)

    def _advance(self, z: np.ndarray, t: float, t_end: float) -> np.ndarray:
        shape = z.shape
        switches = 0
        tolerance = self.tie_tolerance
        selection = select(z, self.Q, self.K, self.V, tolerance)
        while True:
            solution = scipy.integrate.solve_ivp(
                _rhs(selection, shape), (t, t_end), z.ravel(), method="DOP853", rtol=self.rtol, atol=self.atol,
                events=_events(selection, shape, tolerance, self._held(selection, z, tolerance)))
            self.nfev += int(solution.nfev)
            if solution.status == -1:
                raise SchemeError(f"{self.name}: DOP853 failed on a segment from t = {t:.17g}: {solution.message}")
            z = solution.y[:, -1].reshape(shape)
            if solution.status == 0:
                return z
            t = float(solution.t[-1])
            switches += 1
            if switches > self.max_switches:
                raise SwitchingAccumulation(
                    f"{self.name}: more than {self.max_switches} switching times before t = {t_end:.6g} (they "
                    f"accumulate at t ≈ {t:.17g}: a Zeno point of the selection rule)")
            selection, tolerance = self._reselect(selection, z, t)

    def _held(self, selection: Selection, z: np.ndarray, tolerance: float | None) -> float | None:
        """The tie tolerance of the sliding rows of a segment: their ties are held by the equivalent control to
        the integrator's accuracy, not to round-off (:func:`event_tolerance` at the segment's start)."""
        if not selection.sliding.any():
            return tolerance
        return max(tolerance or 0.0, event_tolerance(z, self.Q, self.K, self.rtol, self.atol))

    def _reselect(self, previous: Selection, z: np.ndarray, t: float) -> tuple[Selection, float | None]:
        """The selection after a switching time, and the tie tolerance of the next segment.

        The state of a switching time is the root of an event function on DOP853's dense output: a token
        that meets a set there has overtaken it by the event's threshold (64 ε · max(1, max_k |S_ik|)), and
        the state is known to the step's error, δ = atol + rtol |z| per component. Its scores are therefore
        tied to the relative tolerance :func:`event_tolerance`, not to their round-off, and the sets are
        selected with it (a wider explicit ``tie_tolerance`` wins). When the rule then selects what it
        selected before, the tolerance is widened to admit the gap left (at most
        :data:`MAX_WIDENED_TOLERANCE`); a selection that still does not change is a failure of the rule,
        reported as such (a sliding set whose weight reaches 0 while all its members stay tied, as in a
        collapsed cluster, is one).
        """
        tolerance = max(self.tie_tolerance or 0.0, event_tolerance(z, self.Q, self.K, self.rtol, self.atol))
        selection = select(z, self.Q, self.K, self.V, tolerance)
        if not previous.same_sets(selection):
            return selection, tolerance
        s = scores(z, self.Q, self.K)
        gaps = previous.gaps(z)
        widened = 2 * float(np.abs(gaps).min()) / max(1.0, float(np.abs(s).max())) if gaps.size else 0.0
        if tolerance < widened <= MAX_WIDENED_TOLERANCE:
            selection = select(z, self.Q, self.K, self.V, widened)
            if not previous.same_sets(selection):
                return selection, widened
        raise SchemeError(f"{self.name}: the selection rule failed at t = {t:.17g}: a switching time was met but "
                          f"the maximiser sets it selects there are those before it")

    def check(self, y: np.ndarray) -> None:
        if not np.all(np.isfinite(y)):
            raise SchemeError(f"{self.name}: the tokens contain NaN or infinity")


def event_tolerance(z: np.ndarray, Q: np.ndarray, K: np.ndarray, rtol: float, atol: float) -> float:
    """The relative tie tolerance at a switching time: the event's threshold and the state's error, in scores.

    With δ_i = atol + rtol |z_i| (per component) the scores err by at most
    D_ij = (|Q| δ_i) · (|K| |z_j|) + (|Q| |z_i|) · (|K| δ_j); two scores of a row are tied when they differ by
    less than 2 max_k D_ik + 2 · 64 ε max(1, max_k |S_ik|) (twice the event's threshold). Returned relative
    to max(1, max_k |S_ik|), the largest over the rows.
    """
    a = np.abs(z)
    delta = atol + rtol * a
    errors = (delta @ np.abs(Q).T) @ (a @ np.abs(K).T).T + (a @ np.abs(Q).T) @ (delta @ np.abs(K).T).T
    scale = np.maximum(1.0, np.abs(scores(z, Q, K)).max(axis=1))
    return float((2 * errors.max(axis=1) / scale).max() + 2 * ROUND_OFF)


def _rhs(selection: Selection, shape: tuple[int, ...]) -> Any:
    V = selection.V

    def rhs(t: float, flat: np.ndarray) -> np.ndarray:
        z = flat.reshape(shape)
        lam = selection.weights(z)
        if not np.isfinite(lam).all():
            lam = selection.uniform()
        return ((lam @ z - z) @ V.T).ravel()

    return rhs


def _events(selection: Selection, shape: tuple[int, ...], tie_tolerance: float | None,
            held_tolerance: float | None) -> list[Any]:
    def entering(t: float, flat: np.ndarray) -> float:
        gaps = selection.gaps(flat.reshape(shape))
        return float(gaps.min()) if gaps.size else 1.0

    def splitting(t: float, flat: np.ndarray) -> float:
        z = flat.reshape(shape)
        spreads = np.where(selection.sliding, selection.spreads(z, held_tolerance), selection.spreads(z, tie_tolerance))
        return float(spreads.max())

    def leaving(t: float, flat: np.ndarray) -> float:
        if not selection.sliding.any():
            return 1.0
        lam = selection.weights(flat.reshape(shape))
        held = lam[selection.members & selection.sliding[:, None]]
        return float(held.min()) + ROUND_OFF if np.isfinite(held).all() else -1.0

    entering.terminal, entering.direction = True, -1
    splitting.terminal, splitting.direction = True, 1
    leaving.terminal, leaving.direction = True, -1
    return [entering, splitting, leaving]

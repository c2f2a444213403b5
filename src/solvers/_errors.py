"""The exceptions of :mod:`solvers`: what a scheme raises when its solution cannot be trusted,
and what a right-hand side raises at a state where it cannot be evaluated."""

from __future__ import annotations

__all__ = [
    "SchemeError",
    "UnderResolvedError",
    "NegativeDensityError",
    "NonFiniteError",
    "StepSizeError",
    "UnevaluableState",
]


class SchemeError(RuntimeError):
    """A scheme found that its solution can no longer be trusted."""


class UnderResolvedError(SchemeError):
    """The grid does not resolve the solution (spectral tail above tolerance)."""


class NegativeDensityError(SchemeError):
    """The density became negative beyond round-off."""


class NonFiniteError(SchemeError):
    """The state contains NaN or infinity."""


class StepSizeError(SchemeError):
    """The step size fell below the smallest admissible value, or a fixed
    step violates the scheme's stability bound."""


class UnevaluableState(ArithmeticError):
    """The right-hand side cannot be evaluated at a trial state (carries a number saying how far off).

    The Runge–Kutta core (:mod:`solvers._runge_kutta`) treats it as an
    infinite error: the trial step is rejected and retried smaller. What it
    means physically, and what it means at an accepted state, is the scheme's
    business (e.g. :class:`solvers.NonPositiveNormaliser`).
    """

    def __init__(self, value: float) -> None:
        super().__init__(value)
        self.value = value

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
    """A scheme found that its solution can no longer be trusted.

    The base of :class:`UnderResolvedError`, :class:`NegativeDensityError`,
    :class:`NonFiniteError` and :class:`StepSizeError`. :func:`solvers.evolve`
    catches it: the run stops, and the states reached so far are returned with
    ``success=False`` and the error's message (or it is re-raised with
    ``raise_on_error=True``).

    Examples
    --------
    >>> import numpy as np
    >>> import solvers
    >>> [cls.__name__ for cls in (solvers.UnderResolvedError, solvers.NegativeDensityError,
    ...                           solvers.NonFiniteError, solvers.StepSizeError)
    ...  if issubclass(cls, solvers.SchemeError)]
    ['UnderResolvedError', 'NegativeDensityError', 'NonFiniteError', 'StepSizeError']

    A Kuramoto density (K = 1, no noise) concentrates until 16 nodes no longer resolve it;
    :func:`solvers.evolve` stops there and keeps the outputs reached:

    >>> grid = solvers.CircleGrid(16)
    >>> kuramoto = solvers.ConvolutionVelocity(numerator=lambda k: np.where(k == 1, np.pi * 1j, 0))
    >>> scheme = solvers.CircleSpectral(grid, kuramoto)
    >>> rho0 = (1 + 0.5 * np.cos(grid.theta))[None] / (2 * np.pi)
    >>> run = solvers.evolve(scheme, rho0, [0.0, 5.0])
    >>> run.success, run.t
    (False, array([0.]))
    >>> print(run.message)
    spectral: under-resolved on N=16 nodes: ... use a larger grid (e.g. N=32) or the finite-volume scheme
    """


class UnderResolvedError(SchemeError):
    """The grid does not resolve the solution (spectral tail above tolerance).

    Raised by the spectral schemes when the tail τ of a density's expansion
    exceeds max(``tail_tol``, 100 ``rtol``) (:func:`solvers.degree_tail`), when a
    normaliser B ⋆ ρ is non-positive at an accepted state, or at construction when
    a kernel that asks for the check (``resolve_kernel``) is not resolved by the grid.

    Examples
    --------
    >>> import numpy as np
    >>> import solvers
    >>> grid = solvers.CircleGrid(16)
    >>> kuramoto = solvers.ConvolutionVelocity(numerator=lambda k: np.where(k == 1, np.pi * 1j, 0))
    >>> scheme = solvers.CircleSpectral(grid, kuramoto)
    >>> rho0 = (1 + 0.5 * np.cos(grid.theta))[None] / (2 * np.pi)
    >>> try:
    ...     solvers.evolve(scheme, rho0, [0.0, 5.0], raise_on_error=True)
    ... except solvers.UnderResolvedError as err:
    ...     print(err)
    spectral: under-resolved on N=16 nodes: spectral tail max|ρ_l|/|ρ_0| over l > 5 is ... > tail_tol=1e-06; ...
    """


class NegativeDensityError(SchemeError):
    """The density became negative beyond round-off.

    Raised by the finite-volume schemes' :meth:`~solvers.Scheme.check` (and by
    :class:`~solvers.CircleSpectral` when given ``negative_tol``).

    Examples
    --------
    >>> import numpy as np
    >>> import solvers
    >>> grid = solvers.CircleGrid(16)
    >>> kuramoto = solvers.ConvolutionVelocity(numerator=lambda k: np.where(k == 1, np.pi * 1j, 0))
    >>> scheme = solvers.CircleFiniteVolume(grid, kuramoto)
    >>> try:
    ...     scheme.check(np.cos(grid.theta)[None])
    ... except solvers.NegativeDensityError as err:
    ...     print(err)
    finite_volume: negative density -1 beyond round-off (floor -2.22e-14)
    """


class NonFiniteError(SchemeError):
    """The state contains NaN or infinity.

    Examples
    --------
    >>> import numpy as np
    >>> import solvers
    >>> grid = solvers.CircleGrid(16)
    >>> kuramoto = solvers.ConvolutionVelocity(numerator=lambda k: np.where(k == 1, np.pi * 1j, 0))
    >>> scheme = solvers.CircleSpectral(grid, kuramoto)
    >>> try:
    ...     scheme.check(np.full((1, 16), np.nan))
    ... except solvers.NonFiniteError as err:
    ...     print(err)
    spectral: the state contains NaN or infinity
    """


class StepSizeError(SchemeError):
    """The step size fell below the smallest admissible value, or a fixed
    step violates the scheme's stability bound.

    Also raised for a non-positive or non-finite step handed to
    :meth:`solvers.Stepper.step`, and when a run exceeds ``max_steps``
    (:func:`solvers.evolve`); the smallest step is :func:`solvers.step_floor`.

    Examples
    --------
    A fixed step (dt = 10) about twelve times the finite-volume scheme's stability bound:

    >>> import numpy as np
    >>> import solvers
    >>> grid = solvers.CircleGrid(16)
    >>> kuramoto = solvers.ConvolutionVelocity(numerator=lambda k: np.where(k == 1, np.pi * 1j, 0))
    >>> scheme = solvers.CircleFiniteVolume(grid, kuramoto, dt=10.0)
    >>> rho0 = (1 + 0.5 * np.cos(grid.theta))[None] / (2 * np.pi)
    >>> run = solvers.evolve(scheme, rho0, [0.0, 10.0])
    >>> run.success
    False
    >>> print(run.message)
    finite_volume: fixed step dt=10 violates the stability bound dt <= 0.805954 ... at t=0
    """


class UnevaluableState(ArithmeticError):
    """The right-hand side cannot be evaluated at a trial state (carries a number saying how far off).

    The Runge–Kutta core (:mod:`solvers._runge_kutta`) treats it as an
    infinite error: the trial step is rejected and retried smaller. What it
    means physically, and what it means at an accepted state, is the scheme's
    business (e.g. :class:`solvers.NonPositiveNormaliser`).

    Parameters
    ----------
    value : float
        How far off the state is (e.g. the minimum of a normaliser that should be
        positive), kept as :attr:`value`.

    Examples
    --------
    >>> import solvers
    >>> err = solvers.UnevaluableState(-0.25)
    >>> err.value, isinstance(err, ArithmeticError)
    (-0.25, True)
    >>> issubclass(solvers.NonPositiveNormaliser, solvers.UnevaluableState)
    True
    """

    def __init__(self, value: float) -> None:
        super().__init__(value)
        self.value = value

"""Fourier pseudo-spectral scheme for continuity equations on the circle S¹."""

from __future__ import annotations

import logging
import threading
from typing import Any, ClassVar

import numpy as np
import scipy.fft

from . import _circle_kernels as kernels
from . import _fftw_compiled
from . import _validate as check_arg
from ._circle_grid import CircleGrid
from ._errors import NegativeDensityError
from ._evolve import Advance, StepResult
from ._fft import backend_name, shared_real_fft
from ._runge_kutta import N_STAGES
from ._spectral import SPECTRAL_TAIL_TOL, SpectralScheme
from ._velocity import CallableVelocity, ConvolutionVelocity

__all__ = ["CircleSpectral"]

logger = logging.getLogger(__name__)


class CircleSpectral(SpectralScheme):
    r"""Fourier pseudo-spectral scheme on S¹ with adaptive (integrating-factor) Dormand–Prince 5(4).

    Equations. For densities ρ_1, …, ρ_m on S¹ (one per frequency node ω_m,
    weights w_m, marginal ρ̄ = Σ_m w_m ρ_m)::

        ∂_t ρ_m + ∂_θ(ρ_m X_m[ρ̄]) = σ ∂²_θ ρ_m,
        X_m = ω_m + (A ⋆ ρ̄)/(B ⋆ ρ̄) - ∂_θ U   (ConvolutionVelocity; B ⋆ ρ̄ ≡ 1 without a denominator,
                                             U ≡ 0 without a potential),
        X_m = func(ρ)_m                    (CallableVelocity, node values).

    A complex drift ω_m = c_m - iγ_m makes density m the average of the species over
    drifts ω ~ Cauchy(c_m, γ_m), exactly (:class:`ConvolutionVelocity`; numerators of one
    harmonic, no denominator): its linear part is -ikc_m - kγ_m - σk².

    Space. ρ_m is represented by its trigonometric interpolant on the nodes
    θ_j = 2πj/N of ``grid``, ρ_m(θ) = Σ_{|k| ≤ N/2} ρ̂_{m,k} e^{ikθ} with
    ρ̂_{m,k} = (1/N) Σ_j ρ_m(θ_j) e^{-ikθ_j} (the :class:`CircleGrid`
    normalisation). Convolutions are products of multipliers evaluated once
    on the wavenumbers: (A ⋆ ρ̄)^_k = a_k ρ̄̂_k, (B ⋆ ρ̄)^_k = b_k ρ̄̂_k. The
    nonlinear terms are dealiased by the 3/2 rule: ρ_m, A ⋆ ρ̄ and B ⋆ ρ̄ are
    synthesised on M ≥ 3N/2 nodes (zero padding; the Nyquist mode is split
    symmetrically between ±N/2), the ratio and the flux ρ_m X_m are formed
    there, and the flux is transformed back and truncated to |k| < N/2, so
    the quadratic product ρ_m (A ⋆ ρ̄) is free of aliasing. An external
    potential U (node values) enters as -∂_θ U of its interpolant, synthesised
    on the M nodes once. A :class:`CallableVelocity` is evaluated at the N nodes and its
    interpolant multiplies ρ_m's on the padded grid. Then

        dρ̂_{m,k}/dt = -ik (ρ_m (X_m - ω_m))^_k + (-ikω_m - σk²) ρ̂_{m,k} =: N_k(ρ̂) + L_{m,k} ρ̂_{m,k},

    the drift ω_m and the diffusion forming the diagonal linear part L, and
    the Nyquist mode of the derivative set to zero. The error of a resolved
    smooth solution decays exponentially in N. The k = 0 component of -ik(·)
    is exactly zero, so the mass 2π ρ̂_{m,0} is conserved to round-off.

    Time. Dormand–Prince RK5(4)7M (J. R. Dormand, P. J. Prince, "A family
    of embedded Runge–Kutta formulae", J. Comput. Appl. Math. 6 (1980)
    19–26), order 5 with an embedded order-4 error estimate, FSAL. When
    L ≠ 0 it is applied in integrating-factor (Lawson) form to
    v̂_{m,k} = e^{-L_{m,k} t} ρ̂_{m,k} (J. D. Lawson, "Generalized Runge–Kutta
    processes for stable systems with large Lipschitz constants", SIAM J.
    Numer. Anal. 4 (1967) 372–380): stage i of a step h from ρ̂^n is

        Y_i = e^{c_i h L} ρ̂^n + h Σ_{j<i} a_ij e^{(c_i - c_j) h L} N(Y_j),
        ρ̂^{n+1} = e^{h L} ρ̂^n + h Σ_j b_j e^{(1 - c_j) h L} N(Y_j),

    which treats the diffusion and the drifts exactly (|e^{dhL}| ≤ 1 since
    Re L ≤ 0 and c is non-decreasing), keeps order 5 for the transformed
    system, and leaves the step limited by the transport N only: the fast
    drifts of a heavy-tailed frequency law (a Lorentzian's extreme nodes)
    cost nothing. Error norm (‖·‖ the root mean square of node values, by
    Parseval in Fourier space), step-size control with the step ladder, first
    step and the resolution check are those of every spectral scheme
    (:mod:`solvers._spectral`). Steps run on the coefficients; the states
    handed to and returned by :meth:`step` are node values (returned
    read-only, which lets the next step reuse their coefficients and last stage).

    Compiled steps. With a :class:`ConvolutionVelocity`, pyfftw's FFTW library and one
    thread, the transport, the steps and the adaptive loop between output times
    (:meth:`advance`) run as numba loops on FFTW plans made once per thread and
    layout (:mod:`solvers._circle_kernels`): a stage costs its FFTs and a pass over
    the coefficients. Otherwise (a :class:`CallableVelocity`, the scipy backend,
    several threads) the same formulas run in numpy, on the thread's shared
    :class:`~solvers._fft.RealFFT` plans. The two agree to round-off.

    Resolution. The spectral tail τ_m = max_{k > ⌊2L/3⌋} |ρ̂_{m,k}| / |ρ̂_{m,0}|,
    L = ⌊N/2⌋ (k above 2/3 of the Nyquist range), above max(``tail_tol``,
    100 ``rtol``) raises :class:`UnderResolvedError` (or warns): beyond that
    the pseudo-spectral solution starts to oscillate and a larger N (or the
    finite-volume scheme) is needed (the rule and its floor:
    :mod:`solvers._spectral`).

    Parameters
    ----------
    grid : CircleGrid
        The N nodes θ_j = 2πj/N; the state holds the node values ρ_m(θ_j).
    velocity : ConvolutionVelocity or CallableVelocity
        The velocity specification; the state has shape (m, N) with
        m = ``velocity.n_species`` (``n_species`` for a callable).
    diffusion : float
        σ ≥ 0 (default 0), the coefficient of σ ∂²_θ ρ_m.
    rtol, atol : float
        Relative (> 0, default 1e-8) and absolute (≥ 0, default 1e-12) tolerances of the
        step-size control, on the root mean square of the node values of each density: the
        local error must stay below atol + rtol ‖ρ - ρ̄‖, relative to the fluctuation about the
        mean ρ̄ (:mod:`solvers._spectral`).
    dealias : bool
        3/2-rule padding of the products (True, default) or products on the N nodes.
    tail_tol : float
        Largest admissible spectral tail τ (> 0, default :data:`solvers.SPECTRAL_TAIL_TOL`
        = 1e-6); the test uses max(tail_tol, 100 rtol) (see Resolution above).
    on_underresolved : {"raise", "warn"}
        Raise :class:`UnderResolvedError` (default) or emit a ``RuntimeWarning``.
    negative_tol : float or None
        When given, raise :class:`NegativeDensityError` if
        min ρ < -negative_tol · max |ρ|; None (default) does not check.
    n_species : int or None
        Number of densities for a :class:`CallableVelocity` (default 1);
        must equal ``velocity.n_species`` for a :class:`ConvolutionVelocity`.
    threads : int
        FFTW threads (default 1, the fastest for N below ≈ 10⁴).
    fft_backend : {"pyfftw", "scipy"} or None
        FFT backend (None, default: pyfftw when importable).

    Raises
    ------
    TypeError
        ``grid`` or ``velocity`` of the wrong type.
    ValueError
        An option out of range, naming it; ``n_species`` different from
        ``velocity.n_species``; a complex drift with a numerator of more than one harmonic
        or with a denominator.
    UnderResolvedError
        A velocity with ``resolve_kernel`` whose kernel the N nodes do not resolve
        (:func:`solvers.kernel_tail` above ``tail_tol``).

    Notes
    -----
    The equations, with (f ⋆ ρ)(θ) = ∫ f(θ - φ) ρ(φ) dφ and the coefficients of the
    interpolant:

    .. math::

        \partial_t \rho_m + \partial_\theta\bigl(\rho_m X_m[\bar\rho]\bigr) = \sigma\, \partial_\theta^2 \rho_m,
        \qquad
        X_m = \omega_m + \frac{A \star \bar\rho}{B \star \bar\rho} - \partial_\theta U,
        \qquad
        \bar\rho = \sum_m w_m \rho_m,

    .. math::

        \frac{d\hat\rho_{m,k}}{dt} = -ik\, \widehat{(\rho_m (X_m - \omega_m))}_k
        + (-ik\omega_m - \sigma k^2)\, \hat\rho_{m,k},
        \qquad
        \hat\rho_{m,k} = \frac{1}{N} \sum_{j=0}^{N-1} \rho_m(\theta_j)\, e^{-ik\theta_j}.

    Examples
    --------
    Kuramoto with K = 1 and identical oscillators, X = (A ⋆ ρ)(θ) with A(θ) = -sin θ, whose
    multiplier at k = 1 is 2π Â_1 = πi. A Poisson kernel of order parameter r stays one,
    with ṙ = (K/2)(r - r³) (Ott–Antonsen), so r(t)² = r_0² e^{Kt} / (1 - r_0² + r_0² e^{Kt}):

    >>> import numpy as np
    >>> from solvers import CircleGrid, CircleSpectral, ConvolutionVelocity, evolve
    >>> kuramoto = ConvolutionVelocity(numerator=lambda k: np.where(k == 1, np.pi * 1j, 0))
    >>> grid = CircleGrid(64)
    >>> scheme = CircleSpectral(grid, kuramoto)
    >>> r0 = 0.2
    >>> rho0 = ((1 - r0**2) / (1 - 2 * r0 * np.cos(grid.theta) + r0**2))[None] / (2 * np.pi)
    >>> run = evolve(scheme, rho0, [0.0, 1.0])
    >>> r = abs(run.y[-1, 0] @ (grid.weights * np.exp(1j * grid.theta)))
    >>> print(f"{r:.8f} {r0 * np.exp(0.5) / np.sqrt(1 - r0**2 + r0**2 * np.e):.8f}")
    0.31896496 0.31896496

    The mass 2π ρ̂_0 is conserved to round-off, and the spectrum is resolved:

    >>> print(f"{scheme.mass(run.y[-1])[0]:.14f}", bool(scheme.spectral_tail(run.y[-1])[0] < 1e-6))
    1.00000000000000 True
    """

    grid_type: ClassVar[type] = CircleGrid
    takes_cauchy_drift: ClassVar[bool] = True

    def __init__(
        self,
        grid: CircleGrid,
        velocity: ConvolutionVelocity | CallableVelocity,
        diffusion: float = 0.0,
        *,
        rtol: float = 1e-8,
        atol: float = 1e-12,
        dealias: bool = True,
        tail_tol: float = SPECTRAL_TAIL_TOL,
        on_underresolved: str = "raise",
        negative_tol: float | None = None,
        n_species: int | None = None,
        threads: int = 1,
        fft_backend: str | None = None,
    ) -> None:
        super().__init__()
        check_arg.instance("grid", grid, CircleGrid)
        check_arg.instance("velocity", velocity, (ConvolutionVelocity, CallableVelocity))
        self.diffusion = check_arg.nonnegative("diffusion", diffusion)
        self.negative_tol = None if negative_tol is None else check_arg.nonnegative("negative_tol", negative_tol)
        self.dealias = check_arg.boolean("dealias", dealias)
        self.threads = check_arg.positive_int("threads", threads)
        if isinstance(velocity, ConvolutionVelocity):
            m = velocity.n_species
            if n_species is not None and n_species != m:
                raise ValueError(f"n_species must equal velocity.n_species={m} for a ConvolutionVelocity, got {n_species!r}")
        else:
            m = 1 if n_species is None else check_arg.positive_int("n_species", n_species)
        self.grid = grid
        self.velocity = velocity
        self.n_species = int(m)

        n = grid.n
        k = grid.wavenumbers
        n_modes = k.size
        self._even = n % 2 == 0
        self.n_padded = _padded_size(n) if self.dealias else n
        padded = self.n_padded > n
        # Nyquist coefficient split between ±N/2 on the padded grid (symmetric interpolant)
        self._nyquist_split = padded and self._even
        derivative = -1j * k.astype(float)
        if self._even:
            derivative[-1] = 0.0
        self._derivative = derivative
        self._flux_derivative = derivative / self.n_padded
        self._decay = self.diffusion * k.astype(float) ** 2
        parseval = np.full(n_modes, 2.0)
        parseval[0] = 1.0
        if self._even:
            parseval[-1] = 1.0
        self._parseval = parseval

        split = np.ones(n_modes)
        if self._nyquist_split:
            split[-1] = 0.5
        self._split = split

        if isinstance(velocity, ConvolutionVelocity):
            self._callable = None
            self._weights = velocity.weights
            self._single = m == 1
            self._num, self._den = check_arg.velocity_multipliers(velocity, k, real=False)
            drift = velocity.drift
            n_fields = 1 if self._den is None else 2
            potential = check_arg.velocity_potential(velocity, (n,), "node values")
        else:
            self._callable = velocity.func
            drift = np.zeros(1)
            n_fields = m
            potential = None
        # -∂_θ U of the potential's interpolant, on the padded nodes (products) and on the grid (velocity_field)
        self._external = None if potential is None else self._potential_velocity(potential, self.n_padded)
        self._external_nodes = None if potential is None else self._potential_velocity(potential, n)
        # the linear part L_{m,k} = -ikω_m - σk², integrated exactly (Lawson): drifts of
        # heavy-tailed frequency laws do not limit the step; a complex drift c - iγ adds the damping -kγ
        # of its Cauchy law (also at the Nyquist mode, whose derivative is set to zero)
        if np.all(drift == 0):
            self._linear = -self._decay
        else:
            self._linear = (drift.real[:, None] * derivative[None, :] + drift.imag[:, None] * k[None, :]
                            - self._decay)
        if isinstance(velocity, ConvolutionVelocity) and velocity.cauchy_drift:
            higher = np.abs(self._num[2:]) > 0
            if self._den is not None or np.any(higher):
                raise ValueError(
                    f"{self.name}: a complex drift (species averaged over a Cauchy law) is exact only for a numerator "
                    f"of one harmonic (a_k = 0 for k >= 2) and no denominator; got "
                    + ("a denominator" if self._den is not None else
                       f"a_k != 0 at k = {int(k[2:][higher][0])}"))
        self._n_fields = n_fields
        self._backend = backend_name(fft_backend)
        self._compiled = (self._callable is None and self.threads == 1 and self._backend == "pyfftw"
                          and _fftw_compiled.available())
        if self._callable is None:
            # rows synthesised from the marginal: A ⋆ ρ̄ (and B ⋆ ρ̄), the Nyquist entry
            # split between ±N/2; with one species (ρ̄ = ρ) also ρ itself, so that a
            # single product fills every row
            fields = [self._num * split] if self._den is None else [self._num * split, self._den * split]
            self._field_multipliers = np.array(([split] if self._single else []) + fields, dtype=complex)
        self._ratio = np.empty(self.n_padded)
        self._external_padded = np.zeros(0) if self._external is None else np.ascontiguousarray(self._external)
        self._marginal = np.empty(n_modes, dtype=complex)
        self._work: tuple[int, Any] | None = None
        self._setup(self._linear, (m, n_modes), complex, rtol=rtol, atol=atol, tail_tol=tail_tol,
                    on_underresolved=on_underresolved)
        rates = self._tables.rates
        self._rates = np.zeros((1, 1)) if rates is None else np.ascontiguousarray(np.atleast_2d(rates))
        self._lawson = (np.zeros((4, kernels.DIFFS.size, *self._rates.shape), dtype=self._rates.dtype),
                        np.full(4, np.nan), np.full(4, -1.0))
        self._clock = 0.0
        self._scratch = (np.empty((m, n_modes), dtype=complex), np.empty((m, n_modes), dtype=complex),
                         np.empty((4, m)))
        if self._callable is None and velocity.resolve_kernel:
            self._check_kernel(lambda band: np.abs(check_arg.multipliers(
                velocity.numerator, np.arange(band + 1), "velocity.numerator", real=False)), n // 2)
        logger.debug(
            "%s: N=%d nodes, products on M=%d, %d species, σ=%g, rtol=%g, FFT backend %s, compiled steps %s",
            self.name, n, self.n_padded, m, self.diffusion, self.rtol, self._backend, self._compiled,
        )

    # ------------------------------------------------------------------ state <-> coefficients
    def _validate(self, y: np.ndarray) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        shape = (self.n_species, self.grid.n)
        if y.shape != shape:
            raise ValueError(f"y must have shape (m, N) = {shape} (species, nodes), got {y.shape}")
        return y

    def spectrum(self, y: np.ndarray) -> np.ndarray:
        """Fourier coefficients ρ̂_{m,k} = (1/N) Σ_j ρ_m(θ_j) e^{-ikθ_j}, shape (m, N//2 + 1)."""
        return self.coefficients(y)

    def _analysis(self, y: np.ndarray) -> np.ndarray:
        y = self._validate(y)
        if not self._compiled:
            return self._plans().grid.forward(y)
        out = np.empty((self.n_species, self.grid.n // 2 + 1), dtype=complex)
        plan = self._plans()[0]
        kernels.analysis(y, plan.values, plan.coefficients, plan.pointer, _fftw_compiled.EXECUTE, 1.0 / self.grid.n,
                         out)
        return out

    def _synthesis(self, coefficients: np.ndarray) -> np.ndarray:
        if not self._compiled:
            return self._plans().grid.backward(coefficients)
        out = np.empty((self.n_species, self.grid.n))
        plan = self._plans()[1]
        kernels.synthesis(np.ascontiguousarray(coefficients, dtype=complex), plan.coefficients, plan.values,
                          plan.pointer, _fftw_compiled.EXECUTE, out)
        return out

    def _plans(self) -> Any:
        """The calling thread's FFT plans, looked up once per thread: compiled, (grid analysis, grid synthesis,
        the arguments of :func:`solvers._circle_kernels.transport`); else the :class:`_NumpyPlans`."""
        ident = threading.get_ident()
        work = self._work
        if work is not None and work[0] == ident:
            return work[1]
        n, m, padded = self.grid.n, self.n_species, self.n_padded
        rows = m + self._n_fields
        if self._compiled:
            synth = _fftw_compiled.raw_plan(padded, rows, "backward")
            flux = _fftw_compiled.raw_plan(padded, m, "forward")
            transport = (self._single, np.ascontiguousarray(self._weights, dtype=float), self._field_multipliers,
                         self._split, self._flux_derivative, self._external_padded, self._den is not None,
                         self._marginal, synth.coefficients, synth.values, synth.pointer, flux.values,
                         flux.coefficients, flux.pointer, self._ratio)
            plans: Any = (_fftw_compiled.raw_plan(n, m, "forward"), _fftw_compiled.raw_plan(n, m, "backward"),
                          transport)
        else:
            plans = _NumpyPlans(self, rows)
        self._work = (ident, plans)
        return plans

    # ------------------------------------------------------------------ right-hand side
    def nonlinear(self, rho_hat: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Transport part N(ρ̂)_k = -ik (ρX)^_k (dealiased) of dρ̂/dt, shape (m, N//2 + 1).

        ``rho_hat`` are the coefficients ρ̂_{m,k} (see :meth:`spectrum`); this
        is what one Runge–Kutta stage costs: two batched FFTW executions on
        the padded grid (synthesis of ρ, A ⋆ ρ̄, B ⋆ ρ̄; analysis of the
        flux). Written into ``out`` when given. Counts one evaluation in ``nfev``.
        """
        self.nfev += 1
        if self._compiled:
            if out is None:
                out = np.empty((self.n_species, self.grid.n // 2 + 1), dtype=complex)
            kernels.transport(np.ascontiguousarray(rho_hat, dtype=complex), out, *self._plans()[2],
                              _fftw_compiled.EXECUTE)
            return out
        work = self._plans()
        if self._callable is not None:
            x_hat = work.grid.forward(self._callable_velocity(self._synthesis(rho_hat)))
        if work.pad_in is not None:
            work.pad_in[...] = 0.0
        if self._callable is None:
            if self._single:
                np.multiply(self._field_multipliers, rho_hat, out=work.marginal_in)
            else:
                np.multiply(rho_hat, self._split, out=work.rho_in)
                np.multiply(self._field_multipliers, self._weights @ rho_hat, out=work.marginal_in)
            work.synth.execute_backward()
            if work.den_out is None:
                ratio = work.num_out
            else:
                ratio = np.divide(work.num_out, work.den_out, out=self._ratio)
            if self._external is not None:
                ratio = np.add(ratio, self._external, out=self._ratio)
            np.multiply(work.rho_out, ratio, out=work.flux.values)
        else:
            np.multiply(rho_hat, self._split, out=work.rho_in)
            np.multiply(x_hat, self._split, out=work.fields_in)
            work.synth.execute_backward()
            np.multiply(work.rho_out, work.fields_out, out=work.flux.values)
        work.flux.execute_forward()
        return np.multiply(work.flux_out, self._flux_derivative, out=out)

    # ------------------------------------------------------------------ compiled steps
    def _kernel_arguments(self) -> tuple[Any, ...]:
        """The work arrays of :func:`solvers._circle_kernels.attempt` and ``advance`` after ``a, k0``."""
        return (self._tables.rates is not None, self._rates, *self._lawson)

    def _step_impl(self, t: float, y: np.ndarray, dt: float) -> StepResult:
        if not self._compiled:
            return super()._step_impl(t, y, dt)
        h = float(dt)
        a0, k0, _ = self._start(y)
        linear, rates, tables, keys, ages = self._kernel_arguments()
        y1, error, norms = self._scratch
        self._clock += 1.0
        err = kernels.attempt(a0, k0, h, linear, rates, tables, keys, ages, self._clock, self._stages, y1, error,
                              norms, self._parseval, self.rtol, self.atol, self._plans()[2], _fftw_compiled.EXECUTE)
        self.nfev += N_STAGES - 1
        accepted, factor = self._controller.decide(err)
        if not accepted:
            return StepResult(False, None, kernels.preferred_step(h * factor, linear), err)
        a1 = y1.copy()
        y_new = self._fsal.accept(self._synthesis(a1), a1, self._stages[N_STAGES - 1])
        return StepResult(True, y_new, kernels.preferred_step(h * factor, linear), err)

    def advance(self, t: float, y: np.ndarray, stop: float, dt: float, *, max_step: float, h_min: float,
                attempts: int) -> Advance | None:
        """Adaptive steps from ``(t, y)`` towards ``stop`` in one compiled loop (:func:`solvers.evolve`'s
        rules, :meth:`solvers.Stepper.advance`); None where the steps are not compiled or a step's state
        needs more than the spectral tail checked (``negative_tol``)."""
        if not self._compiled or self.negative_tol is not None:
            return None
        a0, k0, _ = self._start(y)
        a, k = a0.copy(), k0.copy()
        linear, rates, tables, keys, ages = self._kernel_arguments()
        y1, error, norms = self._scratch
        state = np.array([t, dt, float(self._controller.rejected_last)])
        counts = np.array([0.0, 0.0, 0.0, 0.0, np.inf, 0.0, np.nan])
        control = np.array([max_step, h_min, float(attempts), self.rtol, self.atol, self._controller.safety,
                            self._controller.min_factor, self._controller.max_factor, self._controller._exponent,
                            max(self.tail_tol, 100 * self.rtol), float(2 * (self.grid.n // 2) // 3), self._clock])
        status = kernels.advance(state, counts, a, k, float(stop), linear, rates, tables, keys, ages, self._stages,
                                 y1, error, norms, self._parseval, control, self._plans()[2],
                                 _fftw_compiled.EXECUTE)
        self._clock = control[11]
        self._controller.rejected_last = bool(state[2])
        self.nfev += int(counts[3])
        if counts[0] > 0 or status == kernels.CHECK:
            y = self._fsal.accept(self._synthesis(a), a, k)
        return Advance(float(state[0]), y, float(state[1]), int(counts[0]), int(counts[1]), int(counts[2]),
                       float(counts[4]), float(counts[5]), _STOPPED[status], float(counts[6]))

    def _potential_velocity(self, potential: np.ndarray, n_nodes: int) -> np.ndarray:
        """-∂_θ U of the trigonometric interpolant of the node values ``potential`` at ``n_nodes`` equispaced
        nodes (the Nyquist mode's derivative, zero at the grid's nodes, is dropped as in the transport)."""
        derivative = self._derivative * (scipy.fft.rfft(potential) / self.grid.n)
        return scipy.fft.irfft(derivative, n_nodes, norm="forward")

    def _callable_velocity(self, rho: np.ndarray) -> np.ndarray:
        x = np.asarray(self._callable(rho), dtype=float)
        if x.shape != rho.shape:
            raise ValueError(f"the velocity callable must return node values of shape {rho.shape}, got {x.shape}")
        return x

    def _transport(self, rho_hat: np.ndarray) -> np.ndarray:
        return self.nonlinear(rho_hat)

    def _transport_into(self, rho_hat: np.ndarray, out: np.ndarray) -> None:
        self.nonlinear(rho_hat, out)

    def velocity_field(self, y: np.ndarray) -> np.ndarray:
        """X_m at the nodes, shape (m, N) (interpolated on the N nodes, no padding); for a species averaged over
        a Cauchy law of drifts, the velocity at its centre c_m."""
        rho_hat = self.spectrum(y)
        n = self.grid.n
        if self._callable is not None:
            return self._callable_velocity(self._synthesis(rho_hat))
        marginal = self._weights @ rho_hat
        ratio = scipy.fft.irfft(self._num * marginal, n, norm="forward")
        if self._den is not None:
            ratio = ratio / scipy.fft.irfft(self._den * marginal, n, norm="forward")
        if self._external_nodes is not None:
            ratio = ratio + self._external_nodes
        return self.velocity.drift.real[:, None] + ratio[None, :]

    def mass(self, y: np.ndarray) -> np.ndarray:
        """∫ ρ_m dθ by the trapezoidal rule (2π/N) Σ_j ρ_m(θ_j), shape (m,)."""
        return np.asarray(y, dtype=float) @ self.grid.weights

    # ------------------------------------------------------------------ diagnostics
    def _norms(self, coefficients: np.ndarray) -> np.ndarray:
        """Root mean square of the node values of each species (Parseval), shape (m,)."""
        power = coefficients.real**2 + coefficients.imag**2
        return np.sqrt(power @ self._parseval)

    def _degree_norms(self, coefficients: np.ndarray) -> np.ndarray:
        """|ρ̂_{m,k}| for k = 0, …, N//2, shape (m, N//2 + 1)."""
        return np.abs(coefficients)

    def _grid_words(self) -> str:
        return f"N={self.grid.n} nodes"

    def _remedy(self) -> str:
        larger = f"use a larger grid (e.g. N={2 * self.grid.n})"
        if isinstance(self.velocity, ConvolutionVelocity) and self.velocity.cauchy_drift:
            return larger + " (a density averaged over a Cauchy law of drifts stays smooth)"
        return larger + " or the finite-volume scheme"

    def check(self, y: np.ndarray) -> None:
        """Raise on non-finite values, an under-resolved spectrum or (optionally) negative density."""
        super().check(y)
        if self.negative_tol is not None:
            y_checked = np.asarray(y, dtype=float)
            low = float(y_checked.min())
            bound = self.negative_tol * float(np.abs(y_checked).max())
            if low < -bound:
                raise NegativeDensityError(
                    f"{self.name}: density reached {low:.3g} < -negative_tol·max|ρ| = {-bound:.3g} on N={self.grid.n} nodes"
                )


_STOPPED = {kernels.REACHED: "reached", kernels.MAX_STEPS: "max_steps", kernels.FLOOR: "floor",
            kernels.CHECK: "check"}


class _NumpyPlans:
    """The thread's :class:`~solvers._fft.RealFFT` plans of a scheme's layout and views into their buffers
    (made once: slicing costs as much as the small copies)."""

    def __init__(self, scheme: CircleSpectral, rows: int) -> None:
        n, m, n_modes, padded = scheme.grid.n, scheme.n_species, scheme.grid.n // 2 + 1, scheme.n_padded
        options = {"threads": scheme.threads, "backend": scheme._backend}
        self.grid = shared_real_fft(n, (m,), **options)
        self.synth = shared_real_fft(padded, (rows,), directions=("backward",), **options)
        self.flux = shared_real_fft(padded, (m,), directions=("forward",), **options)
        coeffs, values = self.synth.coefficients, self.synth.values
        self.rho_in = coeffs[:m, :n_modes]
        self.fields_in = coeffs[m:, :n_modes]
        self.pad_in = coeffs[:, n_modes:] if padded > n else None
        self.rho_out = values[:m]
        self.fields_out = values[m:]
        has_den = scheme._callable is None and scheme._den is not None
        self.num_out = values[rows - 2] if has_den else values[rows - 1]
        self.den_out = values[rows - 1] if has_den else None
        self.marginal_in = coeffs[(0 if scheme._single else m):, :n_modes] if scheme._callable is None else None
        self.flux_out = self.flux.coefficients[:, :n_modes]


def _padded_size(n: int) -> int:
    """Smallest fast FFT length M ≥ 3N/2 (3K + 1 for the odd-N band |k| ≤ K = (N-1)/2)."""
    need = 3 * n // 2 if n % 2 == 0 else (3 * n - 1) // 2
    return int(scipy.fft.next_fast_len(need, real=True))


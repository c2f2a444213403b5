"""Runge–Kutta methods in exponential charts (geometry-respecting integrators), as steppers of
:func:`solvers.evolve`.

A step from x_n = p solves, in the chart x = exp_p(u) of the geometry
(:mod:`._geometry`), the ODE

    u' = dexp_p(u)^{-1} X(t, exp_p(u)),     u(0) = 0,

with an explicit Runge–Kutta tableau and sets x_{n+1} = exp_p(u_{n+1}).
Every stage point is on the manifold, so |x| = 1 holds to round-off on the
sphere with no renormalisation; the order of the tableau is kept (the chart
is smooth near u = 0). This is the Runge–Kutta–Munthe-Kaas idea for the
homogeneous space S^{d-1} with the Riemannian exponential as coordinate map.

Methods
-------
``"dopri5"``  Dormand–Prince 5(4), adaptive with the embedded 4th-order error
              estimate and the step-size control of :mod:`solvers` (controller,
              first step, step floor), FSAL, 4th-order dense output at requested
              times (its steps are cut only at the final time).
``"rk4"``     classical RK4 with fixed step ≤ ``dt`` (order 4).
``"euler"``   exponential-map Euler with fixed step (order 1).
``"euler-maruyama"``  geodesic Euler–Maruyama for dX = X dt + √(2σ) dB on
              the manifold: x_{k+1} = exp_{x_k}(h X(x_k) + √(2σh) ξ_k), ξ_k a
              standard Gaussian of the tangent space. The geodesic random walk
              has generator σΔ (Laplace–Beltrami) in the limit h → 0, so the
              law of the particles follows ∂_t μ + div(Xμ) = σΔμ; weak order 1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from solvers import (
    DORMAND_PRINCE,
    NonFiniteError,
    StepController,
    Stepper,
    StepResult,
    dense_weights,
    fixed_steps,
    initial_step,
    weighted_rms,
)

__all__ = ["METHODS", "STABILITY_LIMITS", "ChartDormandPrince", "ChartFixedStep", "check_fixed_step",
           "jacobian_rate"]

# Dormand–Prince 5(4): stage matrix A (7 × 7, last row b), weights B, nodes C,
# error weights E = b̂ - b (FSAL), dense output b(θ) = P θ
_DP_A, _DP_B, _DP_C, _DP_E = DORMAND_PRINCE.A, DORMAND_PRINCE.B, DORMAND_PRINCE.C, DORMAND_PRINCE.E

_RK4_A = [[], [0.5], [0.0, 0.5], [0.0, 0.0, 1.0]]
_RK4_B = np.array([1 / 6, 1 / 3, 1 / 3, 1 / 6])
_RK4_C = np.array([0.0, 0.5, 0.5, 1.0])

#: extent of the stability region on the negative real axis: |R(z)| ≤ 1 for z ∈ [-limit, 0]
#: (R(z) = 1 + z for Euler, Σ_{k≤4} z^k/k! for RK4, whose root of |R| = 1 is z ≈ -2.785)
STABILITY_LIMITS = {"euler": 2.0, "euler-maruyama": 2.0, "rk4": 2.785}

METHODS = {
    "dopri5": "Dormand–Prince 5(4) in exponential charts, adaptive, dense output",
    "rk4": "classical Runge–Kutta 4 in exponential charts, fixed step",
    "euler": "exponential-map Euler, fixed step",
    "euler-maruyama": "geodesic Euler–Maruyama (dX = X dt + sqrt(2 sigma) dB), fixed step",
}

Velocity = Callable[[float, np.ndarray], np.ndarray]


def _stages(geometry, velocity, t, p, h, a_rows, c, k1):
    """Stage derivatives K_i (chart coordinates) of an explicit tableau; K_1 given."""
    ks = [k1]
    for row, ci in zip(a_rows[1:], c[1:]):
        u = h * sum(aij * kj for aij, kj in zip(row, ks) if aij != 0.0)
        f = velocity(t + ci * h, geometry.exp(p, u))
        ks.append(geometry.dexpinv(p, u, f))
    return ks


class PositionStepper(Stepper):
    """A stepper whose state is the particles' positions (systems, n[, d]), checked finite after each step."""

    def check(self, y: np.ndarray) -> None:
        if not np.all(np.isfinite(y)):
            raise NonFiniteError(f"{self.name}: the particles' state contains NaN or infinity")

    def positions(self, t: float, y: np.ndarray) -> np.ndarray:
        """The positions of the state ``y`` at ``t`` (the state itself)."""
        return y

    def state(self, t: float, positions: np.ndarray) -> np.ndarray:
        """The state of ``positions`` at ``t`` (the positions themselves)."""
        return np.array(positions, dtype=float)


class _ChartStepper(PositionStepper):
    """Settings shared by the chart steppers."""

    def __init__(self, geometry: Any, velocity: Velocity) -> None:
        super().__init__()
        self.geometry = geometry
        self.velocity = velocity


class ChartDormandPrince(_ChartStepper):
    """Dormand–Prince 5(4) in exponential charts, adaptive, with dense output (module docstring).

    The error norm is the RMS over particles and components of err/(atol + rtol·scale),
    scale = ``geometry.scale`` (1 for angles, max(|x|, |x_new|) per component on the
    sphere), its largest value over systems (adaptive steps are shared by all systems).
    The velocity at an accepted state is the first stage of the next step (FSAL):
    accepted states are read-only, and the stepper keeps the velocity of the one it
    produced last.
    """

    name = "dopri5"
    dense_output = True

    def __init__(self, geometry: Any, velocity: Velocity, rtol: float, atol: float) -> None:
        super().__init__(geometry, velocity)
        self.rtol, self.atol = rtol, atol
        self.controller = StepController()
        self._x: np.ndarray | None = None  # the state whose velocity is _f (FSAL)
        self._f: np.ndarray | None = None
        self._last: tuple[float, np.ndarray, list[np.ndarray], float] | None = None  # t, x, stages, h
        self._start: tuple[np.ndarray, bool] | None = None  # f and the controller's memory at its start

    def _velocity_at(self, t: float, x: np.ndarray) -> np.ndarray:
        if x is not self._x:
            self._x, self._f = x, self.velocity(t, x)
            self.nfev += 1
        return self._f

    def initial_step(self, y: np.ndarray, t: float = 0.0) -> float:
        """Hairer–Nørsett–Wanner starting step (:func:`solvers.initial_step`): RMS of v/(atol + rtol·scale),
        the Euler probe along the geodesic f(exp_{x0}(h dexp^{-1} f0)), d0 = ``geometry.start_size``."""
        self.controller.reset()
        geometry, velocity = self.geometry, self.velocity
        f0 = self._velocity_at(t, y)
        scale = self.atol + self.rtol * geometry.scale(y, y)

        def norm(v: np.ndarray) -> float:
            return float(np.sqrt(np.mean((v / scale) ** 2)))

        def probe(h: float) -> np.ndarray:
            self.nfev += 1
            return velocity(t + h, geometry.exp(y, h * geometry.dexpinv(y, np.zeros_like(y), f0)))

        return initial_step(f0, probe, norm, y0_norm=geometry.start_size(y, scale))

    def _step_impl(self, t: float, y: np.ndarray, dt: float) -> StepResult:
        geometry, velocity, h = self.geometry, self.velocity, dt
        f = self._velocity_at(t, y)
        k1 = geometry.dexpinv(y, np.zeros_like(y), f)
        ks = _stages(geometry, velocity, t, y, h, _DP_A[:6], _DP_C[:6], k1)
        self.nfev += 5
        u_new = h * sum(b * k for b, k in zip(_DP_B, ks) if b != 0.0)
        x_new = geometry.exp(y, u_new)
        f_new = velocity(t + h, x_new)
        self.nfev += 1
        ks.append(geometry.dexpinv(y, u_new, f_new))
        err = h * sum(e * k for e, k in zip(_DP_E, ks) if e != 0.0)
        scale = self.atol + self.rtol * geometry.scale(y, x_new)
        err_norm = weighted_rms(err, scale) if np.all(np.isfinite(err)) else np.inf
        rejected_before = self.controller.rejected_last
        accepted, factor = self.controller.decide(err_norm)
        if not accepted:
            return StepResult(False, None, h * factor, err_norm)
        x_new.flags.writeable = False
        self._last, self._start = (t, y, ks, h), (f, rejected_before)
        self._x, self._f = x_new, f_new
        return StepResult(True, x_new, h * factor, err_norm)

    def interpolate(self, t: float) -> np.ndarray:
        """exp_{x_n}(h Σ_j b_j(θ) K_j), θ = (t - t_n)/h, in the last accepted step (order 4)."""
        t_n, x, ks, h = self._last
        coeff = dense_weights((t - t_n) / h)
        return self.geometry.exp(x, h * sum(cf * k for cf, k in zip(coeff, ks) if cf != 0.0))

    def snapshot(self, y: np.ndarray) -> dict[str, np.ndarray]:
        """The start ``y`` of the last accepted step (its continuation) with its velocity and the controller's
        memory there: taken again from them, the step repeats bit for bit. Before the first step: ``y``
        alone (the run starts afresh from it)."""
        if self._start is None:
            return {"state": np.array(y)}
        f, rejected = self._start
        return {"state": np.array(y), "f": np.array(f), "rejected_last": np.int64(rejected)}

    def restore(self, snapshot: dict[str, np.ndarray]) -> np.ndarray:
        x = np.array(snapshot["state"], dtype=float)
        x.flags.writeable = False
        if "f" in snapshot:
            f, rejected = np.array(snapshot["f"], dtype=float), bool(snapshot["rejected_last"])
            self._x, self._f, self._start = x, f, (f, rejected)
            self.controller.rejected_last = rejected
        return x


class ChartFixedStep(_ChartStepper):
    """RK4, exponential-map Euler, or geodesic Euler–Maruyama with noise σ (module docstring), each output
    interval split into equal steps ≤ ``dt`` (:func:`solvers.fixed_steps`)."""

    def __init__(self, geometry: Any, velocity: Velocity, method: str, dt: float, noise: float = 0.0,
                 rng: np.random.Generator | None = None) -> None:
        super().__init__(geometry, velocity)
        self.name = method
        self.fixed_step = dt
        self.noise = noise
        self.rng = rng

    def _step_impl(self, t: float, y: np.ndarray, dt: float) -> StepResult:
        geometry, h = self.geometry, dt
        f = self.velocity(t, y)
        self.nfev += 1
        if self.name == "rk4":
            ks = _stages(geometry, self.velocity, t, y, h, _RK4_A, _RK4_C, geometry.dexpinv(y, np.zeros_like(y), f))
            self.nfev += 3
            u = h * sum(b * k for b, k in zip(_RK4_B, ks))
        else:  # euler, or euler-maruyama (euler with noise = 0)
            u = h * geometry.dexpinv(y, np.zeros_like(y), f)
            if self.noise > 0:
                u = u + np.sqrt(2 * self.noise * h) * geometry.tangent_noise(y, self.rng)
        return StepResult(True, geometry.exp(y, u), h)


def jacobian_rate(geometry, velocity: Velocity, t: float, x: np.ndarray, iterations: int = 12) -> float:
    """Estimate of the spectral radius of the chart Jacobian DF(0), F(u) = dexp_x(u)^{-1} X(t, exp_x(u)).

    Power iteration with finite-difference products DF(0) δ ≈ (F(εδ) - F(0))/ε
    (ε = √eps_mach · √size, so each coordinate moves by ≈ 1.5e-8), started from a
    fixed pseudo-random tangent vector; the estimate is the geometric mean of the
    growth ratios |DF δ_k| / |δ_k| of the second half of the iterations (it
    tends to |λ_max| for a diagonalisable Jacobian). Costs ``iterations`` + 1
    velocity evaluations.
    """
    probe_rng = np.random.default_rng(0)
    zero = np.zeros_like(x)
    f0 = geometry.dexpinv(x, zero, velocity(t, x))
    delta = geometry.tangent_noise(x, probe_rng)
    eps = np.sqrt(np.finfo(float).eps) * np.sqrt(x.size)
    log_ratios = []
    for _ in range(iterations):
        norm = np.linalg.norm(delta)
        if norm == 0:
            return 0.0
        u = eps * delta / norm
        jd = (geometry.dexpinv(x, u, velocity(t, geometry.exp(x, u))) - f0) / eps
        growth = np.linalg.norm(jd)
        if growth == 0 or not np.isfinite(growth):
            return float(growth)
        log_ratios.append(np.log(growth))
        delta = jd
    return float(np.exp(np.mean(log_ratios[iterations // 2:])))


def check_fixed_step(geometry, velocity: Velocity, method: str, t_eval: np.ndarray, x0: np.ndarray,
                     dt: float) -> float:
    """Raise ValueError when the largest step h of a fixed-step method violates its stability bound.

    The bound is h · L ≤ limit, with ``limit`` the extent of the method's
    stability region on the negative real axis (:data:`STABILITY_LIMITS`: 2 for
    Euler and Euler–Maruyama's drift, 2.785 for RK4) and L the larger of the
    estimated spectral radius of the velocity's Jacobian at x0
    (:func:`jacobian_rate`) and the velocity's ``collapse_rate`` (the rate at a
    single cluster, which SA/USA dynamics approach). Returns L.
    """
    _, sizes = fixed_steps(t_eval, dt)
    h = float(sizes.max())
    rate = max(jacobian_rate(geometry, velocity, float(t_eval[0]), x0), getattr(velocity, "collapse_rate", 0.0))
    limit = STABILITY_LIMITS[method]
    if not np.isfinite(rate) or h * rate > limit:
        raise ValueError(
            f"dt = {dt:g} violates the stability bound of method={method!r}: step h = {h:.3g} times the "
            f"velocity's rate L = {rate:.3g} (spectral radius of its Jacobian at x0, or its collapse rate) "
            f"is h·L = {h * rate:.3g} > {limit}; take dt <= {limit / rate:.3g}"
            + (" or method='dopri5'" if method != "euler-maruyama" else "")
        )
    return rate

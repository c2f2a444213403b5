"""Runge–Kutta methods in exponential charts (geometry-respecting integrators).

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
              estimate, FSAL, 4th-order dense output at requested times.
``"rk4"``     classical RK4 with fixed step ≤ ``dt`` (order 4).
``"euler"``   exponential-map Euler with fixed step (order 1).
``"euler-maruyama"``  geodesic Euler–Maruyama for dX = X dt + √(2σ) dB on
              the manifold: x_{k+1} = exp_{x_k}(h X(x_k) + √(2σh) ξ_k), ξ_k a
              standard Gaussian of the tangent space. The geodesic random walk
              has generator σΔ (Laplace–Beltrami) in the limit h → 0, so the
              law of the particles follows ∂_t μ + div(Xμ) = σΔμ; weak order 1.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from solvers import DORMAND_PRINCE, StepController, dense_weights, initial_step, step_floor, weighted_rms

__all__ = ["METHODS", "STABILITY_LIMITS", "IntegrationResult", "integrate", "check_fixed_step", "jacobian_rate"]

logger = logging.getLogger(__name__)

# Dormand–Prince 5(4): stage matrix A (7 × 7, last row b), weights B, nodes C,
# error weights E = b̂ - b (FSAL), dense output b(θ) = P θ; error norm, controller,
# first step and smallest step are those of every adaptive scheme of solvers
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


@dataclass
class IntegrationResult:
    """States at the output times and run facts."""

    states: list[np.ndarray]
    success: bool = True
    message: str = "reached the final time"
    n_steps: int = 0
    n_rejected: int = 0
    nfev: int = 0
    step_sizes: list[float] = field(default_factory=list)


def _stages(geometry, velocity, t, p, h, a_rows, c, k1):
    """Stage derivatives K_i (chart coordinates) of an explicit tableau; K_1 given."""
    ks = [k1]
    for row, ci in zip(a_rows[1:], c[1:]):
        u = h * sum(aij * kj for aij, kj in zip(row, ks) if aij != 0.0)
        f = velocity(t + ci * h, geometry.exp(p, u))
        ks.append(geometry.dexpinv(p, u, f))
    return ks


def integrate(
    geometry,
    velocity: Velocity,
    x0: np.ndarray,
    t_eval: np.ndarray,
    method: str,
    *,
    rtol: float = 1e-8,
    atol: float = 1e-10,
    dt: float | None = None,
    noise: float = 0.0,
    rng: np.random.Generator | None = None,
    max_steps: int = 10_000_000,
    on_output: Callable[[int, np.ndarray], None] | None = None,
    record: dict[str, Any] | None = None,
    resume: dict[str, np.ndarray] | None = None,
) -> IntegrationResult:
    """Integrate ẋ = X(t, x) on ``geometry`` from ``x0`` at ``t_eval[0]``; states at ``t_eval``.

    ``x0`` carries a leading axis of systems; adaptive steps are shared by
    all systems and controlled by the worst system's error.

    Before ``on_output(i, x)`` for i ≥ 1, ``record["snapshot"]`` (when ``record``
    is given) is set to a function returning the integrator's own state there
    (arrays by name, with the counts ``n_steps``, ``n_rejected``, ``nfev``);
    passing it back as ``resume`` (with ``x0`` the state at output i and
    ``t_eval`` the times from output i) continues the run exactly as it would
    have gone on: the same steps, bit for bit, and counts that are totals over
    both segments. For dopri5 it is the start of the step that reached output
    i (time, state, FSAL velocity, step size, controller memory; that step is
    taken again), for fixed-step methods the state at output i.
    """
    if method == "dopri5":
        return _integrate_adaptive(geometry, velocity, x0, t_eval, rtol, atol, max_steps, on_output, record, resume)
    return _integrate_fixed(geometry, velocity, x0, t_eval, method, dt, noise, rng, max_steps, on_output, record,
                            resume)


def _counts(out: IntegrationResult, nfev_pending: int = 0) -> dict[str, np.ndarray]:
    """The counts of ``out`` as snapshot entries, without ``nfev_pending`` evaluations of a step taken again."""
    return {"n_steps": np.int64(out.n_steps), "n_rejected": np.int64(out.n_rejected),
            "nfev": np.int64(out.nfev - nfev_pending)}


def _restore_counts(out: IntegrationResult, resume: dict[str, np.ndarray]) -> None:
    out.n_steps, out.n_rejected, out.nfev = (int(resume[k]) for k in ("n_steps", "n_rejected", "nfev"))


def fixed_steps(t_eval: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """Number of equal steps per output interval (each ≤ ``dt``) and their sizes."""
    lengths = np.diff(t_eval)
    n_sub = np.maximum(1, np.ceil(lengths / dt * (1 - 1e-12)).astype(int))
    return n_sub, lengths / n_sub


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


def _fixed_snapshot(x: np.ndarray, counts: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {"x": x.copy(), **counts}


def _integrate_fixed(geometry, velocity, x0, t_eval, method, dt, noise, rng, max_steps, on_output, record=None,
                     resume=None):
    out = IntegrationResult(states=[np.array(x0, dtype=float)])
    if on_output is not None:
        on_output(0, out.states[0])
    x = out.states[0].copy()
    if resume is not None:
        x = np.array(resume["x"], dtype=float)
        _restore_counts(out, resume)
    n_subs, sizes = fixed_steps(t_eval, dt)
    for i in range(1, t_eval.size):
        t0, t1 = t_eval[i - 1], t_eval[i]
        n_sub, h = n_subs[i - 1], sizes[i - 1]
        if out.n_steps + n_sub > max_steps:
            out.success, out.message = False, f"exceeded max_steps = {max_steps} at t = {t0:.6g}"
            break
        for s in range(n_sub):
            t = t0 + s * h
            f = velocity(t, x)
            out.nfev += 1
            if method == "rk4":
                ks = _stages(geometry, velocity, t, x, h, _RK4_A, _RK4_C, geometry.dexpinv(x, np.zeros_like(x), f))
                out.nfev += 3
                u = h * sum(b * k for b, k in zip(_RK4_B, ks))
            else:  # euler, or euler-maruyama (euler with noise = 0)
                u = h * geometry.dexpinv(x, np.zeros_like(x), f)
                if noise > 0:
                    u = u + np.sqrt(2 * noise * h) * geometry.tangent_noise(x, rng)
            x = geometry.exp(x, u)
            out.n_steps += 1
            out.step_sizes.append(h)
        if not np.all(np.isfinite(x)):
            out.success, out.message = False, f"non-finite state at t = {t1:.6g}"
            break
        out.states.append(x.copy())
        if record is not None:
            record["snapshot"] = partial(_fixed_snapshot, x, _counts(out))
        if on_output is not None:
            on_output(i, x)
    return out


def _initial_step(geometry, velocity, t0, x0, f0, rtol, atol):
    """Hairer–Nørsett–Wanner starting step (:func:`solvers.initial_step`).

    Norm: RMS of v/(atol + rtol·scale) over all entries; the Euler probe
    moves along the geodesic, f(exp_{x0}(h dexp^{-1} f0)); on the circle the
    size of x0 (an angle) means nothing and d0 = 1/mean(scale).
    """
    scale = atol + rtol * geometry.scale(x0, x0)

    def norm(v: np.ndarray) -> float:
        return float(np.sqrt(np.mean((v / scale) ** 2)))

    def probe(h: float) -> np.ndarray:
        return velocity(t0 + h, geometry.exp(x0, h * geometry.dexpinv(x0, np.zeros_like(x0), f0)))

    d0 = norm(x0) if geometry.kind != "circle" else float(1.0 / np.mean(scale))
    return initial_step(f0, probe, norm, y0_norm=d0)


def _adaptive_snapshot(t, x, f, h, rejected_before, counts):
    return {"t": np.float64(t), "x": x.copy(), "f": f.copy(), "h": np.float64(h),
            "rejected_last": np.int64(rejected_before), **counts}


def _integrate_adaptive(geometry, velocity, x0, t_eval, rtol, atol, max_steps, on_output, record=None, resume=None):
    x = np.array(x0, dtype=float)
    out = IntegrationResult(states=[x.copy()])
    if on_output is not None:
        on_output(0, x)
    t, t_end = float(t_eval[0]), float(t_eval[-1])
    h_min = step_floor(t_eval[0], t_end)
    controller = StepController()
    if resume is None:
        f = velocity(t, x)
        out.nfev += 1
        h = _initial_step(geometry, velocity, t, x, f, rtol, atol)
        out.nfev += 1
    else:
        t, h = float(resume["t"]), float(resume["h"])
        x, f = np.array(resume["x"], dtype=float), np.array(resume["f"], dtype=float)
        controller.rejected_last = bool(resume["rejected_last"])
        _restore_counts(out, resume)
    next_out = 1
    while next_out < t_eval.size:
        if out.n_steps + out.n_rejected >= max_steps:
            out.success, out.message = False, f"exceeded max_steps = {max_steps} at t = {t:.6g}"
            break
        if h < h_min:  # the controller's proposal, after a rejection or a step
            out.success = False
            out.message = f"step size {h:.3g} fell below the smallest step {h_min:.3g} at t = {t:.6g}"
            break
        h = min(h, t_end - t)
        k1 = geometry.dexpinv(x, np.zeros_like(x), f)
        ks = _stages(geometry, velocity, t, x, h, _DP_A[:6], _DP_C[:6], k1)
        out.nfev += 5
        u_new = h * sum(b * k for b, k in zip(_DP_B, ks) if b != 0.0)
        x_new = geometry.exp(x, u_new)
        f_new = velocity(t + h, x_new)
        out.nfev += 1
        ks.append(geometry.dexpinv(x, u_new, f_new))
        err = h * sum(e * k for e, k in zip(_DP_E, ks) if e != 0.0)
        scale = atol + rtol * geometry.scale(x, x_new)
        err_norm = weighted_rms(err, scale) if np.all(np.isfinite(err)) else np.inf
        rejected_before = controller.rejected_last
        accepted, factor = controller.decide(err_norm)
        if not accepted:
            out.n_rejected += 1
            h *= factor
            continue
        t_new = t + h if t_end - (t + h) > 1e-13 * max(1.0, abs(t_end)) else t_end
        while next_out < t_eval.size and t_eval[next_out] <= t_new:
            coeff = dense_weights((t_eval[next_out] - t) / h)
            u = h * sum(cf * k for cf, k in zip(coeff, ks) if cf != 0.0)
            state = x_new.copy() if t_eval[next_out] == t_new else geometry.exp(x, u)
            out.states.append(state)
            if record is not None:  # this step is taken again on resuming: its 6 evaluations are not counted
                record["snapshot"] = partial(_adaptive_snapshot, t, x, f, h, rejected_before, _counts(out, 6))
            if on_output is not None:
                on_output(next_out, state)
            next_out += 1
        out.step_sizes.append(h)
        out.n_steps += 1
        t, x, f = t_new, x_new, f_new
        h *= factor
    return out

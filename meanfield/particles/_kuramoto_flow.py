r"""Kuramoto particles with the natural frequencies integrated exactly (method ``"moebius"``).

For an interaction with one harmonic, h(u) = ĥ_0 + ĥ_1 e^{iu} + conj(ĥ_1) e^{-iu}
(Kuramoto's h = sin: ĥ_0 = 0, ĥ_1 = -i/2; Sakaguchi–Kuramoto h(u) = sin(u + α)),
the velocity θ̇_i = ω_i + K Σ_j w_j h(θ_j - θ_i) reads, with u_i = e^{iθ_i},
a = K ĥ_1, ν_i = ω_i + K ĥ_0 and Z = Σ_j w_j u_j,

    u̇_i = i a Z + i ν_i u_i + i conj(a Z) u_i²        (a Riccati equation in u_i).

For Z frozen, u = p/q with (p, q)' = M (p, q), M = [[iν/2, α], [conj(α), -iν/2]],
α = i a Z (traceless, in su(1,1)), so the flow over a time τ is the Möbius map

    u ↦ (P u + Q)/(conj(Q) u + conj(P)),   exp(τM) = C I + τ S M,
    P = C + i S τ ν/2,  Q = S τ α,
    λ² = |α|² - ν²/4 (real),  C = cosh(λτ),  S = sinh(λτ)/(λτ)
    (cos and sin(·)/· of |λ|τ when λ² < 0),

which keeps |u| = 1 and is exact for every ν: a step costs the same for
|ω_i| = 1 and |ω_i| = 10⁶.

Time stepping: the order-4 commutator-free Lie-group method of Celledoni,
Marthinsen and Owren (Future Gener. Comput. Syst. 19, 341 (2003)) with the
frozen-Z generators F_k = D + N(Z_k) at its stages, D = diag(iν/2, -iν/2),
N(Z) = [[0, iaZ], [conj(iaZ), 0]] (N is linear in Z, so a combination of
generators is one Möbius map with the combined Z):

    Y_1 = u_n,                    Z_k = Σ_j w_j (Y_k)_j,
    Y_2 = exp(h F_1/2) u_n,
    Y_3 = exp(h F_2/2) u_n,
    Y_4 = exp(h (F_3 - F_1/2)) Y_2,
    u_{n+1} = exp(h(-F_1 + 2F_2 + 2F_3 + 3F_4)/12) exp(h(3F_1 + 2F_2 + 2F_3 - F_4)/12) u_n.

Every exponential carries D with the weight 1/2 (the weights of each sum to
1/2), so the drift is applied exactly; with Z constant (a stationary state of
the mean-field limit) a step is exact, and otherwise its error comes from the
variation of Z(t) over the step: order 4 in h (measured 3.94–3.97).

Fast oscillators. The stage values Z_k sample Z(t), and a finite population
of oscillators rotating at rates Ω_i with Ω_i h ≳ 1 puts into Z a component
that oscillates faster than the stages resolve (amplitude ~ (mass/n)^{1/2});
sampled, it would be aliased into O(1)·amplitude errors and drive the step
control to h ~ 1/max Ω_i. So, for a step h, the drifting oscillators with
Ω_i = (ν_i² - 4|aZ|²)^{1/2} > ``resolved``/h (locked ones never) enter the
drive (i) at their time average over a rotation, the elliptic fixed point of
their Möbius flow, u*_i = -2a Z/(ν_i + sgn(ν_i) Ω_i), and (ii) through the
impulse of their oscillation about it, integrated exactly for uniform
rotation over each half step, J = Σ_F w_i (u_i - u*_i) ∫ e^{iΩ_i t} dt (a
Filon-type quadrature), added to the exponentials spanning that half step.
They are themselves advanced exactly by the flows of that drive. What is
left is their non-uniform speed and the timing of the impulse within a half
step, estimated as 2|a||J| 2|aZ| (h + 1/min Ω_i); the adaptive control keeps
it below the tolerance. It is independent of max|ω_i| and falls as the fast
frequencies grow (tests: error ≤ 8|Z_fast|/Ω, measured 15–20× below; the
adaptive step count falls from Ω = 10² to 10⁴). As h → 0 every oscillator is
resolved and the scheme is the plain order-4 method. Pathwise accuracy of Z
at a tolerance below the fast set's finite-n effect needs steps that resolve
it; r∞ and other statistics need far less (rtol 1e-3–1e-4 leaves r∞ at its
finite-n fluctuation level). The scheme runs in the frame rotating at the
weighted median of ν (h depends on angle differences only), so a law centred
away from 0 leaves Z slow.

Step control: step doubling on the order parameter. A step h and two steps
h/2 give Z_h and Z_{h/2}; err = |Z_{h/2} - Z_h|/15 estimates the local error
of the two half steps (Richardson, order 4), which are kept when
err ≤ atol + rtol |Z_{h/2}| in every system; a step whose fast-set remainder
exceeds atol + rtol |Z| is shortened before it is tried. With ``dt`` the step is fixed
(equal steps ≤ dt per output interval) and no estimate is made.

Noise σ > 0 is not covered here (simulate uses geodesic Euler–Maruyama, whose
Euler step of the constant drift ω_i is exact as well), nor are interactions
with more than one harmonic (simulate's ``dopri5``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import Any

import numba
import numpy as np

from solvers import StepController, step_floor

from ._integrators import IntegrationResult, fixed_steps

__all__ = ["KURAMOTO_METHODS", "RESOLVED", "first_harmonic", "integrate_moebius", "moebius_map", "weighted_median"]

logger = logging.getLogger(__name__)

KURAMOTO_METHODS = {
    "moebius": "commutator-free Lie-group RK4 (Celledoni-Marthinsen-Owren) with exact Moebius flows of the "
               "frozen-Z Riccati equation (natural frequencies exact); adaptive by step doubling on Z, "
               "or fixed step dt",
}

#: oscillators with |ν_i| h > RESOLVED drive nobody during a step h (see the module docstring)
RESOLVED = 1.0
#: weights (on Z_1..Z_4) of the two final exponentials, applied right one first
_FINAL_FIRST = np.array([3.0, 2.0, 2.0, -1.0]) / 12
_FINAL_SECOND = np.array([-1.0, 2.0, 2.0, 3.0]) / 12


def first_harmonic(interaction: np.ndarray) -> bool:
    """True when h has no Fourier mode beyond k = 1 (ĥ_k = 0 exactly for k ≥ 2)."""
    return bool(np.all(np.asarray(interaction)[2:] == 0))


@numba.njit(cache=True)
def _moebius_kernel(u, nu, drift_weight, alpha, tau, weights, slow, out):  # pragma: no cover - compiled
    n_sys, n = u.shape
    z = np.zeros(n_sys, dtype=np.complex128)
    for s in range(n_sys):
        a = alpha[s]
        a2 = a.real * a.real + a.imag * a.imag
        acc = 0j
        for i in range(n):
            half = 0.5 * drift_weight * nu[s, i]
            x = (a2 - half * half) * tau * tau
            if x >= 0.0:
                r = np.sqrt(x)
                c = np.cosh(r)
                sc = np.sinh(r) / r if r > 0.0 else 1.0
            else:
                r = np.sqrt(-x)
                c = np.cos(r)
                sc = np.sin(r) / r
            p = complex(c, sc * tau * half)
            q = (sc * tau) * a
            ui = u[s, i]
            # (P u + Q)/(conj(Q) u + conj(P)) has modulus 1: its direction is that of num · conj(den)
            prod = (p * ui + q) * (q * ui.conjugate() + p)
            v = prod / np.sqrt(prod.real * prod.real + prod.imag * prod.imag)
            out[s, i] = v
            if slow[s, i]:
                acc += weights[s, i] * v
        z[s] = acc
    return z


@numba.njit(cache=True)
def _drive_kernel(u, slow, weights):  # pragma: no cover - compiled
    n_sys, n = u.shape
    z = np.zeros(n_sys, dtype=np.complex128)
    for s in range(n_sys):
        acc = 0j
        for i in range(n):
            if slow[s, i]:
                acc += weights[s, i] * u[s, i]
        z[s] = acc
    return z


def moebius_map(u: np.ndarray, nu: np.ndarray, drift_weight: float, alpha: np.ndarray, tau: float,
                weights: np.ndarray, slow: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exact flow over time τ of u̇ = α + i c ν u - conj(α) u² (Z frozen), and the new drive.

    ``u`` (systems, n) complex of modulus 1, ``nu`` (systems, n) frequencies ν_i,
    ``drift_weight`` c, ``alpha`` (systems,) complex. Returns u(τ) and
    Σ_{i slow} w_i u_i(τ) (every i when ``slow`` is None).
    """
    out = np.empty_like(u)
    if slow is None:
        slow = np.ones(u.shape, dtype=np.bool_)
    z = _moebius_kernel(u, nu, float(drift_weight), alpha, float(tau), weights, slow, out)
    return out, z


class _Stepper:
    """CF4 steps of the frozen-Z Möbius flows for all systems, in the frame rotating at Ω_0.

    ``drive`` fixes, for steps of size ≤ h, the fast set F of drifting oscillators
    whose rotation rate under the current Z, Ω_i = (ν_i² - 4|aZ|²)^{1/2}, has
    Ω_i h > ``resolved``; they enter the drive at their time-averaged position
    (the elliptic fixed point of their Möbius flow), u*_i = c_i Z with
    c_i = -2a/(ν_i + sgn(ν_i) Ω_i), so Z = Z_S + m Z, m = Σ_F w_i c_i, and
    Z = Z_S/(1 - m) with Z_S = Σ_{i∉F} w_i u_i.
    """

    def __init__(self, a: complex, nu: np.ndarray, weights: np.ndarray, resolved: float) -> None:
        self.a = a
        self.nu = nu
        self.weights = weights
        self.resolved = resolved
        self.slow = np.ones(nu.shape, dtype=np.bool_)
        self.slaved = np.ones(nu.shape[0], dtype=complex)
        self.fast = np.zeros(nu.shape, dtype=np.bool_)
        self.rate = np.ones(nu.shape)
        self.coefficient = np.zeros(nu.shape, dtype=complex)
        self.n_maps = 0

    def drive(self, u: np.ndarray, h: float) -> np.ndarray:
        """Fix the fast set, its rates and the slaved factor for steps ≤ h; the drive Z of u."""
        z_all = np.sum(self.weights * u, axis=-1)
        rate2 = self.nu**2 - 4 * abs(self.a) ** 2 * np.abs(z_all[:, None]) ** 2
        self.fast = rate2 * h * h > self.resolved**2
        self.rate = np.where(self.fast, np.sign(self.nu) * np.sqrt(np.where(self.fast, rate2, 0.0)), 1.0)
        self.coefficient = np.where(self.fast, -2 * self.a / (self.nu + self.rate), 0.0)
        self.slaved = 1.0 / (1.0 - np.sum(self.weights * self.coefficient, axis=-1))
        self.slow = ~self.fast
        return self.slaved * _drive_kernel(u, self.slow, self.weights)

    def impulses(self, u: np.ndarray, z: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Time averages over [0, h/2] and [h/2, h] of the fast set's oscillation about u*, and the jitter.

        The fast oscillators are taken to rotate uniformly, u_i(t) ≈ u*_i + (u_i - u*_i) e^{iΩ_i t}
        (Ω_i signed like ν_i), so J = Σ_F w_i (u_i - u*_i) ∫ e^{iΩ_i t} dt is exact up to their
        non-uniform speed, a relative O(2|aZ|/|Ω_i|), and the impulse's timing within a half
        step matters to the others at relative O(2|aZ| h); ``jitter`` =
        2|a| |J| 2|aZ| (h + 1/min_F |Ω_i|) is the estimate of both on the drive.
        """
        if not self.fast.any():
            zero = np.zeros(u.shape[0], dtype=complex)
            return zero, zero, np.zeros(u.shape[0])
        deviation = np.where(self.fast, self.weights * (u - self.coefficient * z[:, None]), 0.0)
        half = np.expm1(0.5j * self.rate * h) / (1j * self.rate)
        first = np.sum(deviation * half, axis=-1)
        second = np.sum(deviation * np.exp(0.5j * self.rate * h) * half, axis=-1)
        slowest = np.min(np.where(self.fast, np.abs(self.rate), np.inf), axis=-1)
        jitter = 4 * abs(self.a) ** 2 * np.abs(first + second) * np.abs(z) * (h + 1 / slowest)
        return self.slaved * first / h, self.slaved * second / h, jitter

    def _map(self, u: np.ndarray, z_comb: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
        self.n_maps += 1
        out, z = moebius_map(u, self.nu, 0.5, 1j * self.a * z_comb, h, self.weights, self.slow)
        return out, self.slaved * z

    def step(self, u: np.ndarray, z1: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """u_{n+1}, its drive and the step's jitter from u_n and its drive ``z1``.

        The fast set's oscillation enters each exponential as the impulse of the half step it spans.
        """
        early, late, jitter = self.impulses(u, z1, h)
        y2, z2 = self._map(u, 0.5 * z1 + early, h)
        _, z3 = self._map(u, 0.5 * z2 + early, h)
        _, z4 = self._map(y2, z3 - 0.5 * z1 + late, h)
        zs = (z1, z2, z3, z4)
        mid, _ = self._map(u, sum(c * z for c, z in zip(_FINAL_FIRST, zs)) + early, h)
        u_new, z_new = self._map(mid, sum(c * z for c, z in zip(_FINAL_SECOND, zs)) + late, h)
        return u_new, z_new, jitter


def weighted_median(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per system (last axis) the smallest value whose cumulative weight reaches half the total."""
    order = np.argsort(values, axis=-1)
    v = np.take_along_axis(values, order, axis=-1)
    cw = np.cumsum(np.take_along_axis(weights, order, axis=-1), axis=-1)
    idx = np.argmax(cw >= 0.5 * cw[..., -1:], axis=-1)
    return np.take_along_axis(v, idx[..., None], axis=-1)[..., 0]


def integrate_moebius(
    coupling: float,
    interaction: np.ndarray,
    frequencies: np.ndarray,
    weights: np.ndarray,
    theta0: np.ndarray,
    t_eval: np.ndarray,
    *,
    rtol: float = 1e-8,
    atol: float = 1e-10,
    dt: float | None = None,
    max_steps: int = 10_000_000,
    resolved: float = RESOLVED,
    on_output: Callable[[int, np.ndarray], None] | None = None,
    record: dict[str, Any] | None = None,
    resume: dict[str, np.ndarray] | None = None,
) -> IntegrationResult:
    """Integrate θ̇_i = ω_i + K Σ_j w_j h(θ_j - θ_i) (h with one harmonic) by the CF4 Möbius scheme.

    ``theta0``, ``frequencies``, ``weights`` of shape (systems, n); angles are
    reported at ``t_eval``. The scheme runs in the frame rotating at Ω_0, the
    weighted median of ν per system (h depends on differences of angles only),
    so a law centred away from 0 leaves Z slow. ``nfev`` counts Möbius maps
    over all particles; ``step_sizes`` the accepted steps. Adaptive (step
    doubling on Z, ``rtol``/``atol`` on |Z|) unless ``dt`` is given.

    Before ``on_output(i, θ)`` for i ≥ 1, ``record["snapshot"]`` (when ``record``
    is given) is set to a function returning the scheme's state there: u = e^{iθ}
    in the rotating frame, the time origin of that frame, the step size and
    controller memory (adaptive) and the counts ``n_steps``, ``n_rejected``,
    ``nfev``. Passed back as ``resume`` (``theta0`` the angles at output i,
    ``t_eval`` the times from output i) the run goes on as it would have, bit
    for bit, with counts that are totals over both segments.
    """
    if not first_harmonic(interaction):
        raise ValueError("method='moebius' needs an interaction with one harmonic (ĥ_k = 0 for k >= 2), got "
                         f"{len(interaction) - 1} harmonics; use method='dopri5'")
    interaction = np.asarray(interaction, dtype=complex)
    a = coupling * complex(interaction[1])
    w = np.ascontiguousarray(weights, dtype=float)
    nu = np.asarray(frequencies, dtype=float) + coupling * interaction[0].real
    frame = weighted_median(nu, w)
    stepper = _Stepper(a, np.ascontiguousarray(nu - frame[:, None]), w, resolved)
    u = np.ascontiguousarray(np.exp(1j * np.asarray(theta0, dtype=float)))
    out = IntegrationResult(states=[np.array(theta0, dtype=float)])
    if on_output is not None:
        on_output(0, out.states[0])
    origin = float(t_eval[0])
    if resume is not None:
        u = np.ascontiguousarray(resume["u"], dtype=complex)
        origin = float(resume["origin"])
        out.n_steps, out.n_rejected, stepper.n_maps = (int(resume[k]) for k in ("n_steps", "n_rejected", "nfev"))

    def report(i: int, u_now: np.ndarray, adaptive: dict[str, np.ndarray]) -> None:
        theta = np.angle(u_now) + frame[:, None] * (t_eval[i] - origin)
        out.states.append(theta)
        if record is not None:
            record["snapshot"] = partial(dict, u=u_now.copy(), origin=np.float64(origin), **adaptive,
                                         n_steps=np.int64(out.n_steps), n_rejected=np.int64(out.n_rejected),
                                         nfev=np.int64(stepper.n_maps))
        if on_output is not None:
            on_output(i, theta)

    if dt is not None:
        _run_fixed(stepper, u, t_eval, dt, max_steps, report, out)
    else:
        _run_adaptive(stepper, u, t_eval, rtol, atol, max_steps, report, out, a, resume)
    out.nfev = stepper.n_maps
    logger.debug("moebius: %d steps, %d rejected, %d Möbius maps", out.n_steps, out.n_rejected, out.nfev)
    return out


def _run_fixed(stepper, u, t_eval, dt, max_steps, report, out) -> None:
    n_subs, sizes = fixed_steps(t_eval, dt)
    for i in range(1, t_eval.size):
        if out.n_steps + n_subs[i - 1] > max_steps:
            out.success, out.message = False, f"exceeded max_steps = {max_steps} at t = {t_eval[i - 1]:.6g}"
            return
        z = stepper.drive(u, sizes[i - 1])
        for _ in range(n_subs[i - 1]):
            u, z, _ = stepper.step(u, z, sizes[i - 1])
            out.n_steps += 1
            out.step_sizes.append(float(sizes[i - 1]))
        report(i, u, {})


def _run_adaptive(stepper, u, t_eval, rtol, atol, max_steps, report, out, a, resume=None) -> None:
    controller = StepController()
    t, t_end = float(t_eval[0]), float(t_eval[-1])
    h_min = step_floor(t, t_end)
    # Z moves at rates of the order of K|ĥ_1|: start an order of magnitude below
    h = min(t_end - t, 0.1 / (1.0 + 2 * abs(a)))
    if resume is not None:
        h = float(resume["h"])
        controller.rejected_last = bool(resume["rejected_last"])
    next_out = 1
    while next_out < t_eval.size:
        if out.n_steps + out.n_rejected >= max_steps:
            out.success, out.message = False, f"exceeded max_steps = {max_steps} at t = {t:.6g}"
            return
        target = float(t_eval[next_out])
        step = min(h, target - t)
        if h < h_min:
            out.success = False
            out.message = f"step size {h:.3g} fell below the smallest step {h_min:.3g} at t = {t:.6g}"
            return
        z = stepper.drive(u, step)
        excess = float(np.max(stepper.impulses(u, z, step)[2] / (atol + rtol * np.abs(z))))
        if excess > 1:
            # the fast set's remainder would move Z by more than the tolerance: shrink h (it falls
            # like h^{5/2} for a Lorentzian tail) and re-plan
            h = step * max(0.2, 0.9 * excess ** (-2 / 5))
            continue
        _, z_big, _ = stepper.step(u, z, step)
        u_half, z_half, _ = stepper.step(u, z, step / 2)
        u_new, z_new, _ = stepper.step(u_half, z_half, step / 2)
        ratio = (np.abs(z_new - z_big) / 15) / (atol + rtol * np.abs(z_new))
        err_norm = float(ratio.max()) if np.all(np.isfinite(ratio)) else np.inf
        accepted, factor = controller.decide(err_norm)
        if not accepted:
            out.n_rejected += 1
            h = step * factor
            continue
        out.n_steps += 1
        out.step_sizes.append(step)
        clipped = step < h
        landed = target - (t + step) <= 1e-13 * max(1.0, abs(target))
        t = target if landed else t + step
        u = u_new
        # a step cut short to land on an output time neither sets the next one nor lets it grow
        h = (h if factor >= 1 else min(h, step * factor)) if clipped else step * factor
        if landed:
            report(next_out, u, {"h": np.float64(h), "rejected_last": np.int64(controller.rejected_last)})
            next_out += 1

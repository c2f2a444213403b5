r"""Kuramoto particles with the natural frequencies integrated exactly (method ``"moebius"``), as a stepper
of :func:`solvers.evolve`.

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
of the two half steps (Richardson, order 4), judged by the controller of
:mod:`solvers` (:class:`solvers.StepController`) with the norm
max over systems of |Z_{h/2} - Z_h|/15 / (atol + rtol |Z_{h/2}|); a step whose
fast-set remainder exceeds atol + rtol |Z| is refused and shortened before it is
tried. With ``dt`` the step is fixed (equal steps ≤ dt per output interval) and no
estimate is made. The steps land on the output times (:func:`solvers.evolve`).

Noise σ > 0 is not covered here (simulate uses geodesic Euler–Maruyama, whose
Euler step of the constant drift ω_i is exact as well), nor are interactions
with more than one harmonic (simulate's ``dopri5``).
"""

from __future__ import annotations

import numba
import numpy as np

from solvers import NonFiniteError, StepController, Stepper, StepResult

__all__ = ["RESOLVED", "MoebiusStepper", "moebius_map", "moebius_point", "weighted_median"]

#: oscillators with |ν_i| h > RESOLVED drive nobody during a step h (see the module docstring)
RESOLVED = 1.0
#: weights (on Z_1..Z_4) of the two final exponentials, applied right one first
_FINAL_FIRST = np.array([3.0, 2.0, 2.0, -1.0]) / 12
_FINAL_SECOND = np.array([-1.0, 2.0, 2.0, 3.0]) / 12


@numba.njit(cache=True, inline="always")
def moebius_point(ui, half, a, a2, tau):  # pragma: no cover - compiled
    """The exact flow over τ of u̇ = a + 2i·half·u - conj(a) u² at one point (|a|² = ``a2``): the Möbius map of the
    module docstring with ν/2 = ``half`` (the drift weight applied)."""
    x = (a2 - half * half) * tau * tau
    if x >= 0.0:
        # cosh r = 1 + e²/(2(1 + e)) and sinh r = e(2 + e)/(2(1 + e)) with e = e^r - 1: one expm1, no cancellation
        r = np.sqrt(x)
        e = np.expm1(r)
        inverse = 1.0 / (1.0 + e)
        c = 1.0 + 0.5 * e * e * inverse
        sc = 0.5 * e * (2.0 + e) * inverse / r if r > 0.0 else 1.0
    else:
        r = np.sqrt(-x)
        c = np.cos(r)
        sc = np.sin(r) / r
    # P = c + i sc τ half, Q = sc τ a; (P u + Q)/(conj(Q) u + conj(P)) has modulus 1: its direction is that of
    # num · conj(den) = (P u + Q)(Q conj(u) + P), in real arithmetic (a complex quotient costs a division per part)
    pr, pi = c, sc * tau * half
    qr, qi = sc * tau * a.real, sc * tau * a.imag
    ur, ui_ = ui.real, ui.imag
    nr, ni = pr * ur - pi * ui_ + qr, pr * ui_ + pi * ur + qi
    dr, di = qr * ur + qi * ui_ + pr, qi * ur - qr * ui_ + pi
    xr, xi = nr * dr - ni * di, nr * di + ni * dr
    scale = 1.0 / np.sqrt(xr * xr + xi * xi)
    return complex(xr * scale, xi * scale)


@numba.njit(cache=True)
def _moebius_kernel(u, nu, drift_weight, alpha, tau, weights, slow, out):  # pragma: no cover - compiled
    n_sys, n = u.shape
    z = np.zeros(n_sys, dtype=np.complex128)
    for s in range(n_sys):
        a = alpha[s]
        a2 = a.real * a.real + a.imag * a.imag
        acc = 0j
        for i in range(n):
            v = moebius_point(u[s, i], 0.5 * drift_weight * nu[s, i], a, a2, tau)
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


@numba.njit(cache=True)
def _impulse_kernel(u, z, fast, weights, coefficient, rate, h):  # pragma: no cover - compiled
    """Σ_F w_i (u_i - c_i Z) ∫_0^{h/2} e^{iΩ_i t} dt, the same over [h/2, h], and min_F |Ω_i|, per system."""
    n_sys, n = u.shape
    first = np.zeros(n_sys, dtype=np.complex128)
    second = np.zeros(n_sys, dtype=np.complex128)
    slowest = np.full(n_sys, np.inf)
    for s in range(n_sys):
        for i in range(n):
            if not fast[s, i]:
                continue
            omega = rate[s, i]
            deviation = weights[s, i] * (u[s, i] - coefficient[s, i] * z[s])
            phase = 0.5 * omega * h
            rotation = complex(np.cos(phase), np.sin(phase))
            # ∫_0^{h/2} e^{iΩt} dt = (e^{iΩh/2} - 1)/(iΩ), with e^{iφ} - 1 = 2i sin(φ/2) e^{iφ/2} (no cancellation)
            half_angle = 0.5 * phase
            half = 2.0 * np.sin(half_angle) / omega * complex(np.cos(half_angle), np.sin(half_angle))
            first[s] += deviation * half
            second[s] += deviation * rotation * half
            if abs(omega) < slowest[s]:
                slowest[s] = abs(omega)
    return first, second, slowest


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
        first, second, slowest = _impulse_kernel(u, z, self.fast, self.weights, self.coefficient, self.rate, h)
        jitter = 4 * abs(self.a) ** 2 * np.abs(first + second) * np.abs(z) * (h + 1 / slowest)
        return self.slaved * first / h, self.slaved * second / h, jitter

    def _map(self, u: np.ndarray, z_comb: np.ndarray, h: float, drive: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """The frozen-Z flow over h of u with the drive ``z_comb``, and the new drive (summed by the same compiled
        pass whatever ``drive`` says: it costs nothing here)."""
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
        mid, _ = self._map(u, sum(c * z for c, z in zip(_FINAL_FIRST, zs)) + early, h, drive=False)
        u_new, z_new = self._map(mid, sum(c * z for c, z in zip(_FINAL_SECOND, zs)) + late, h)
        return u_new, z_new, jitter


def weighted_median(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per system (last axis) the smallest value whose cumulative weight reaches half the total."""
    order = np.argsort(values, axis=-1)
    v = np.take_along_axis(values, order, axis=-1)
    cw = np.cumsum(np.take_along_axis(weights, order, axis=-1), axis=-1)
    idx = np.argmax(cw >= 0.5 * cw[..., -1:], axis=-1)
    return np.take_along_axis(v, idx[..., None], axis=-1)[..., 0]


class MoebiusStepper(Stepper):
    """The CF4 Möbius scheme of the module docstring as a :class:`solvers.Stepper` on u = e^{iθ} (systems, n)
    in the frame rotating at Ω_0, the weighted median of ν per system (h depends on differences of angles
    only, so a law centred away from 0 leaves Z slow).

    Parameters
    ----------
    a : complex
        K ĥ_1 (:meth:`meanfield.Kuramoto.riccati_form`).
    nu : ndarray, shape (systems, n)
        ν_i = ω_i + K ĥ_0.
    weights : ndarray, shape (systems, n)
    origin : float
        The time at which the rotating frame and the lab frame agree (the run's first time).
    rtol, atol : float
        Tolerances of the step doubling on Z.
    dt : float, optional
        A fixed step (equal steps ≤ dt per output interval), no error estimate.
    resolved : float
        Oscillators with Ω_i h > ``resolved`` enter the drive by their time average.

    ``nfev`` counts Möbius maps over all particles.
    """

    name = "moebius"

    def __init__(self, a: complex, nu: np.ndarray, weights: np.ndarray, origin: float, *, rtol: float = 1e-8,
                 atol: float = 1e-10, dt: float | None = None, resolved: float = RESOLVED) -> None:
        super().__init__()
        w = np.ascontiguousarray(weights, dtype=float)
        self.frame = weighted_median(nu, w)
        self.origin = float(origin)
        self.a = a
        self.core = _Stepper(a, np.ascontiguousarray(nu - self.frame[:, None]), w, resolved)
        self.rtol, self.atol = rtol, atol
        self.fixed_step = dt
        self.controller = StepController()

    def positions(self, t: float, u: np.ndarray) -> np.ndarray:
        """The angles θ = arg u + Ω_0 (t - origin) of the state u at ``t``."""
        return np.angle(u) + self.frame[:, None] * (t - self.origin)

    def state(self, t: float, positions: np.ndarray) -> np.ndarray:
        """u = e^{i(θ - Ω_0 (t - origin))} of the angles θ at ``t``."""
        return np.ascontiguousarray(np.exp(1j * (np.asarray(positions, dtype=float)
                                                 - self.frame[:, None] * (t - self.origin))))

    def initial_step(self, y: np.ndarray, t: float = 0.0) -> float:
        """Z moves at rates of the order of K|ĥ_1|: an order of magnitude below, 0.1/(1 + 2|a|)."""
        self.controller.reset()
        return 0.1 / (1.0 + 2 * abs(self.a))

    def _step_impl(self, t: float, u: np.ndarray, dt: float) -> StepResult:
        core, h = self.core, dt
        z = core.drive(u, h)
        try:
            if self.fixed_step is not None:
                return StepResult(True, core.step(u, z, h)[0], h)
            excess = self._remainder_norm(core.impulses(u, z, h)[2], z)
            if excess > 1:
                # the fast set's remainder would move Z by more than the tolerance: shrink h (it falls
                # like h^{5/2} for a Lorentzian tail) and re-plan
                return StepResult(False, None, h * max(0.2, 0.9 * excess ** (-2 / 5)))
            _, z_big, _ = core.step(u, z, h)
            u_half, z_half, _ = core.step(u, z, h / 2)
            u_new, z_new, _ = core.step(u_half, z_half, h / 2)
            err_norm = self._error_norm(z_new, z_big)
            accepted, factor = self.controller.decide(err_norm)
            factor = self._remainder_factor(factor, excess)
            return StepResult(accepted, u_new if accepted else None, h * factor, err_norm)
        finally:
            self.nfev = core.n_maps

    def _remainder_factor(self, factor: float, excess: float) -> float:
        """The next step's factor given the fast set's remainder ``excess`` (≤ 1) at this one: here the
        controller's, unchanged."""
        return factor

    def _remainder_norm(self, jitter: np.ndarray, z: np.ndarray) -> float:
        """max over systems of the fast set's remainder ``jitter`` / (atol + rtol |Z|)."""
        return float(np.max(jitter / (self.atol + self.rtol * np.abs(z))))

    def _error_norm(self, z_new: np.ndarray, z_big: np.ndarray) -> float:
        """max over systems of |Z_{h/2} - Z_h|/15 / (atol + rtol |Z_{h/2}|) (inf if not finite)."""
        ratio = (np.abs(z_new - z_big) / 15) / (self.atol + self.rtol * np.abs(z_new))
        return float(ratio.max()) if np.all(np.isfinite(ratio)) else np.inf

    def check(self, u: np.ndarray) -> None:
        if not np.all(np.isfinite(u)):
            raise NonFiniteError(f"{self.name}: the oscillators' state contains NaN or infinity")

    def snapshot(self, u: np.ndarray) -> dict[str, np.ndarray]:
        """u at the output and the controller's memory there."""
        return {"u": np.array(u), "rejected_last": np.int64(self.controller.rejected_last)}

    def restore(self, snapshot: dict[str, np.ndarray]) -> np.ndarray:
        self.controller.rejected_last = bool(snapshot["rejected_last"])
        return np.ascontiguousarray(snapshot["u"], dtype=complex)

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
sampled, it is integrated by the stages' quadrature (Simpson's rule, weights
1, 2 + 2, 1 at t, t + h/2, t + h), whose error on e^{iΩt} grows like (Ωh)⁴/2880
and is O(1) at Ωh ~ 2π. So, for a step h, the drifting oscillators with
Ω_i = (ν_i² - 4|aZ|²)^{1/2} > ``resolved``/h (locked ones never) enter the
drive (i) at their time average over a rotation, the elliptic fixed point of
their Möbius flow, u*_i = -2a Z/(ν_i + sgn(ν_i) Ω_i), and (ii) through the
impulse of their oscillation about it, integrated exactly for uniform
rotation over each half step, J = Σ_F w_i (u_i - u*_i) ∫ e^{iΩ_i t} dt (a
Filon-type quadrature), added to the exponentials spanning that half step.
They are themselves advanced exactly by the flows of that drive. What is
left is their non-uniform speed and the timing of the impulse within a half
step, estimated as 2|a||J| 2|aZ| (h + 1/min Ω_i). Simpson's relative error
is 3.5e-4 at Ωh = 1 and 1.4e-2 at Ωh = 2.5, while the averaged drive's
relative error, 2|aZ|/Ω, does not fall with Ωh. The threshold ``resolved`` =
2.5 was chosen on the workload of ``benchmarks/bench_kuramoto_path.py``: the
path error falls with the tolerance at every row (with 1 it rises from
1.9e-6 at rtol 1e-6 to 8.9e-6 at 1e-7, as oscillators move between the two
treatments at the steps of that tolerance; with 4 it falls too, but is 4×
larger at rtol 1e-6). The remainder is independent
of max|ω_i| and falls as the fast frequencies grow (tests: error ≤ 8|Z_fast|/Ω,
measured 15–20× below). As h → 0 every oscillator is resolved and the scheme
is the plain order-4 method. r∞ and other statistics need far less than the
path (rtol 1e-3–1e-4 leaves r∞ at its finite-n fluctuation level). The scheme
runs in the frame rotating at the weighted median of ν (h depends on angle
differences only), so a law centred away from 0 leaves Z slow.

Step control. The local error of Z over a step is estimated by three terms
(each checked in the tests against the error of one step resolved by 256
plain substeps):

* the embedded estimate (|a|h/3) |Z_{n+1} - Z_4|: the drive at the new state
  comes free with the last pass, and, as the classical RK4's weights with the
  last stage k_4 replaced by k_5 = f(y_{n+1}) give an order-3 solution
  (Σ b̂ = 1, Σ b̂c = 1/2, Σ b̂c² = 1/3, Σ b̂ac = 1/6), the CF4 step with Z_4
  replaced by Z_{n+1} in its weight 1/6 differs from it by h/6 (N(Z_4) -
  N(Z_{n+1})), which moves Z by at most 2|a| times that: O(h⁴), as the
  order-3 member of an embedded 4(3) pair (measured slopes 3.92–4.00, and
  13–194 times the local error of 64 synchronising or bounded-frequency
  oscillators at h = 0.2 … 0.025, K = 2);
* Simpson's error on the rotations of the resolved drifting oscillators, which
  the stages share and the embedded estimate sees only in part:
  A = 2|a| h |Σ_{i∉F, drifting} w_i (u_i - u*_i) q(Ω_i h)|,
  q(x) = (1 + 4e^{ix/2} + e^{ix})/6 - (e^{ix} - 1)/(ix) = x⁴/2880 + O(x⁵)
  (the first-order error of ∫Z over the step, which moves each oscillator by
  at most 2|a| times it); it bounds the measured local error within 3× where
  it dominates (measured 1.4e-11 and 4.5e-10 against 5.9e-12 and 1.9e-10 at
  h = 0.001 and 0.002 from the state at t = 10, n = 10³ Lorentzian γ = 0.5,
  K = 2, where the embedded estimate gives 2.3e-12 and 3.6e-11);
* the fast set's remainder above.

Their sum plus 4ε|Z_{n+1}| (no estimate claims less than the round-off of Z)
over atol + rtol |Z_{n+1}|, the largest over systems, is judged by the
controller of :mod:`solvers` (:class:`solvers.StepController`, exponent -1/4);
a step whose fast-set remainder alone exceeds the tolerance is refused and
shortened before it is tried. The local errors of the unresolved rotations
oscillate at their rates Ω_i and cancel over a regular sequence of steps
(their sum is a geometric series), but accumulate when the step changes at
random from one step to the next (measured at n = 10³, K = 2: equal steps of
0.0089 leave Z within 9e-8 of the reference over t ∈ [0, 50], the same steps
each changed by a random ±30 % within 5e-6). So an accepted step keeps its
size unless the controller would change it by a factor ``HOLD`` = 2.5 or more
(a step after one with fast-set remainder ``excess`` may grow by at most
0.6 excess^{-2/5}: the remainder jumps as oscillators join the fast set), and
each output interval is split into equal steps
(:attr:`solvers.Stepper.equal_steps`).
With ``dt`` the step is fixed (equal steps ≤ dt per output interval) and no
estimate is made.

Noise σ > 0 is not covered here (simulate uses geodesic Euler–Maruyama, whose
Euler step of the constant drift ω_i is exact as well), nor are interactions
with more than one harmonic (simulate's ``dopri5``).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from solvers import NonFiniteError, StepController, Stepper, StepResult

__all__ = ["RESOLVED", "MoebiusStepper", "moebius_map", "moebius_point", "weighted_median"]

#: oscillators with Ω_i h > RESOLVED drive nobody during a step h (see the module docstring)
RESOLVED = 2.5
#: the embedded estimate is O(h⁴) (order 3 against the order-4 step): the controller's exponent is -1/4
ERROR_ORDER = 3
#: the error estimate is at least ROUNDOFF |Z|: stages agreeing to the last bit say nothing finer
ROUNDOFF = 4 * np.finfo(float).eps
#: an accepted step keeps its size unless the controller would change it by a factor HOLD or more
HOLD = 2.5
#: a step after one whose fast-set remainder was ``excess`` grows by at most REMAINDER_SAFETY excess^{-2/5}
REMAINDER_SAFETY = 0.6
#: q(x) = Σ_{k ≥ 4} SIMPSON_SERIES[k - 4] (ix)^k for |x| < 1/2: Simpson's rule minus the integral of e^{ixs}
#: on [0, 1]
SIMPSON_SERIES = np.array([(4 * 0.5**k + 1) / (6 * math.factorial(k)) - 1 / math.factorial(k + 1)
                           for k in range(4, 16)])
#: weights (on Z_1..Z_4) of the two final exponentials, applied right one first
_FINAL_FIRST = np.array([3.0, 2.0, 2.0, -1.0]) / 12
_FINAL_SECOND = np.array([-1.0, 2.0, 2.0, 3.0]) / 12


@numba.njit(cache=True, inline="always")
def moebius_point(ui, half, a, a2, tau):  # pragma: no cover - compiled
    """The exact flow over τ of u̇ = a + 2i·half·u - conj(a) u² at one point (|a|² = ``a2``): the Möbius map of the
    module docstring with ν/2 = ``half`` (the drift weight applied)."""
    x = (a2 - half * half) * tau * tau
    r = np.sqrt(abs(x))
    if r < 0.1:
        # C and S = sinh(r)/r (sin(r)/r) as series in x = ±r²: truncation below x⁵/10! < 3e-17
        c = 1.0 + x * (0.5 + x * (1.0 / 24 + x * (1.0 / 720 + x * (1.0 / 40320))))
        sc = 1.0 + x * (1.0 / 6 + x * (1.0 / 120 + x * (1.0 / 5040 + x * (1.0 / 362880))))
    elif x > 0.0:
        e = np.exp(r)
        inverse = 1.0 / e
        c = 0.5 * (e + inverse)
        sc = 0.5 * (e - inverse) / r
    else:
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
        acc_r = 0.0
        acc_i = 0.0
        for i in range(n):
            v = moebius_point(u[s, i], 0.5 * drift_weight * nu[s, i], a, a2, tau)
            out[s, i] = v
            if slow[s, i]:
                acc_r += weights[s, i] * v.real
                acc_i += weights[s, i] * v.imag
        z[s] = complex(acc_r, acc_i)
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


@numba.njit(cache=True, inline="always")
def _flow_row(u, nu, weights, slow, alpha, tau, out, store):  # pragma: no cover - compiled
    """One frozen-drive exponential (drift weight 1/2) over one system's oscillators: stores the images in
    ``out`` when ``store``, returns Σ_{i slow} w_i (image)_i."""
    a2 = alpha.real * alpha.real + alpha.imag * alpha.imag
    acc_r = 0.0
    acc_i = 0.0
    for i in range(u.size):
        v = moebius_point(u[i], 0.25 * nu[i], alpha, a2, tau)
        if store:
            out[i] = v
        if slow[i]:
            acc_r += weights[i] * v.real
            acc_i += weights[i] * v.imag
    return complex(acc_r, acc_i)


@numba.njit(cache=True)
def _cf4_kernel(u, nu, weights, slow, a, slaved, z1, early, late, h, out, stage):  # pragma: no cover - compiled
    """One CF4 step of every system (module docstring): u_{n+1} into ``out`` (``stage`` is scratch of u's
    shape), and the drives Z_{n+1} and Z_4 of the last stage (slaved), per system."""
    n_sys = u.shape[0]
    z_new = np.zeros(n_sys, dtype=np.complex128)
    z_last = np.zeros(n_sys, dtype=np.complex128)
    ia = 1j * a
    for s in range(n_sys):
        k = slaved[s]
        z_1 = z1[s]
        z_2 = k * _flow_row(u[s], nu[s], weights[s], slow[s], ia * (0.5 * z_1 + early[s]), h, stage[s], True)
        z_3 = k * _flow_row(u[s], nu[s], weights[s], slow[s], ia * (0.5 * z_2 + early[s]), h, stage[s], False)
        z_4 = k * _flow_row(stage[s], nu[s], weights[s], slow[s], ia * (z_3 - 0.5 * z_1 + late[s]), h, stage[s],
                            False)
        first = (3.0 * z_1 + 2.0 * z_2 + 2.0 * z_3 - z_4) / 12.0 + early[s]
        second = (-z_1 + 2.0 * z_2 + 2.0 * z_3 + 3.0 * z_4) / 12.0 + late[s]
        _flow_row(u[s], nu[s], weights[s], slow[s], ia * first, h, stage[s], True)
        z_new[s] = k * _flow_row(stage[s], nu[s], weights[s], slow[s], ia * second, h, out[s], True)
        z_last[s] = z_4
    return z_new, z_last


@numba.njit(cache=True)
def _plan_kernel(u, nu, weights, a, h, resolved, series, fast, rate, coefficient):  # pragma: no cover - compiled
    """The fast set of a step h and what the step's drive and estimate need of it, per system, in two passes.

    With Z_all = Σ_i w_i u_i and Ω_i = sgn(ν_i) (ν_i² - 4|a Z_all|²)^{1/2} for the drifting oscillators:
    ``fast``, ``rate`` (Ω_i on F, 1 elsewhere) and ``coefficient`` (c_i = -2a/(ν_i + Ω_i) on F, 0 elsewhere)
    are filled in place; returned are Z_S = Σ_{i∉F} w_i u_i, m = Σ_F w_i c_i and
    |Σ_{i∉F, drifting} w_i (u_i - c_i Z_all) q(Ω_i h)| (Simpson's error on the resolved rotations; terms with
    |Ω_i h| < 1e-3, whose q < 4e-16, are left out), q by its series below |Ω_i h| = 1/2.
    """
    n_sys, n = u.shape
    slow_sum = np.zeros(n_sys, dtype=np.complex128)
    mass = np.zeros(n_sys, dtype=np.complex128)
    aliased = np.zeros(n_sys)
    field = 4.0 * (a.real * a.real + a.imag * a.imag)
    for s in range(n_sys):
        z_all = 0j
        for i in range(n):
            z_all += weights[s, i] * u[s, i]
        field2 = field * (z_all.real * z_all.real + z_all.imag * z_all.imag)
        zs = 0j
        m = 0j
        acc = 0j
        for i in range(n):
            rate2 = nu[s, i] * nu[s, i] - field2
            fast[s, i] = rate2 * h * h > resolved * resolved
            if fast[s, i]:
                omega = np.sqrt(rate2) if nu[s, i] > 0 else -np.sqrt(rate2)
                rate[s, i] = omega
                coefficient[s, i] = -2.0 * a / (nu[s, i] + omega)
                m += weights[s, i] * coefficient[s, i]
                continue
            rate[s, i] = 1.0
            coefficient[s, i] = 0j
            zs += weights[s, i] * u[s, i]
            if rate2 <= 0.0:
                continue
            omega = np.sqrt(rate2) if nu[s, i] > 0 else -np.sqrt(rate2)
            x = omega * h
            if abs(x) < 1e-3:
                continue
            if abs(x) < 0.5:
                ix = 1j * x
                q = 0j
                for k in range(series.size - 1, -1, -1):
                    q = q * ix + series[k]
                q *= ix * ix * ix * ix
            else:
                half = complex(np.cos(0.5 * x), np.sin(0.5 * x))
                full = half * half
                q = (1.0 + 4.0 * half + full) / 6.0 - (full - 1.0) / (1j * x)
            acc += weights[s, i] * (u[s, i] + 2.0 * a * z_all / (nu[s, i] + omega)) * q
        slow_sum[s] = zs
        mass[s] = m
        aliased[s] = abs(acc)
    return slow_sum, mass, aliased


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
        self.aliasing = np.zeros(nu.shape[0])
        self.n_maps = 0

    def drive(self, u: np.ndarray, h: float) -> np.ndarray:
        """Fix the fast set, its rates and the slaved factor for steps ≤ h, and Simpson's error on the resolved
        rotations over a step h (:attr:`aliasing`, module docstring); the drive Z of u."""
        slow_sum, mass, aliased = _plan_kernel(u, self.nu, self.weights, complex(self.a), float(h),
                                               float(self.resolved), SIMPSON_SERIES, self.fast, self.rate,
                                               self.coefficient)
        self.slow = ~self.fast
        self.slaved = 1.0 / (1.0 - mass)
        self.aliasing = 2 * abs(self.a) * h * np.abs(self.slaved) * aliased
        return self.slaved * slow_sum

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

    def step(self, u: np.ndarray, z1: np.ndarray, h: float,
             impulses: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """u_{n+1}, its drive, the step's jitter and the drive Z_4 of the last stage, from u_n and its drive
        ``z1`` (``impulses``: :meth:`impulses` of (u, z1, h) when already computed): five compiled passes.

        The fast set's oscillation enters each exponential as the impulse of the half step it spans.
        """
        early, late, jitter = self.impulses(u, z1, h) if impulses is None else impulses
        early = np.broadcast_to(np.asarray(early, dtype=complex), z1.shape)
        late = np.broadcast_to(np.asarray(late, dtype=complex), z1.shape)
        u_new = np.empty_like(u)
        z_new, z_last = _cf4_kernel(u, self.nu, self.weights, self.slow, complex(self.a), self.slaved, z1, early,
                                    late, float(h), u_new, np.empty_like(u))
        self.n_maps += 5
        return u_new, z_new, jitter, z_last


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
        Tolerances of the local error estimate on Z (module docstring).
    dt : float, optional
        A fixed step (equal steps ≤ dt per output interval), no error estimate.
    resolved : float
        Oscillators with Ω_i h > ``resolved`` enter the drive by their time average.

    ``nfev`` counts Möbius maps over all particles.
    """

    name = "moebius"
    equal_steps = True

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
        self.controller = StepController(error_order=ERROR_ORDER)

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
            impulses = core.impulses(u, z, h)
            excess = self._remainder_norm(impulses[2], z)
            if excess > 1:
                # the fast set's remainder alone would move Z by more than the tolerance: shrink h (it falls
                # like h^{5/2} for a Lorentzian tail) and re-plan
                return StepResult(False, None, h * max(0.2, 0.9 * excess ** (-2 / 5)))
            return self._adaptive_step(u, z, h, impulses, excess)
        finally:
            self.nfev = core.n_maps

    def _adaptive_step(self, u: np.ndarray, z: np.ndarray, h: float,
                       impulses: tuple[np.ndarray, np.ndarray, np.ndarray], excess: float) -> StepResult:
        """The step h from u (drive ``z``, the fast set's ``impulses`` and remainder norm ``excess`` ≤ 1) judged
        by the estimate of the module docstring."""
        core = self.core
        u_new, z_new, jitter, z_last = core.step(u, z, h, impulses)
        err_norm = self._error_norm(abs(self.a) * h / 3 * np.abs(z_new - z_last) + core.aliasing + jitter, z_new)
        accepted, factor = self.controller.decide(err_norm)
        if excess > 0:
            # the remainder jumps as oscillators join the fast set: grow at most to where it would be
            # REMAINDER_SAFETY^{5/2} of the tolerance by its h^{5/2} law
            factor = min(factor, REMAINDER_SAFETY * excess ** (-2 / 5))
        if accepted and 1 / HOLD < factor < HOLD:
            factor = 1.0
        return StepResult(accepted, u_new if accepted else None, h * factor, err_norm)

    def _remainder_norm(self, jitter: np.ndarray, z: np.ndarray) -> float:
        """max over systems of the fast set's remainder ``jitter`` / (atol + rtol |Z|)."""
        return float(np.max(jitter / (self.atol + self.rtol * np.abs(z))))

    def _error_norm(self, estimate: np.ndarray, z_new: np.ndarray) -> float:
        """max over systems of (``estimate`` + 4ε|Z_{n+1}|) / (atol + rtol |Z_{n+1}|) (inf if not finite): the
        local error ``estimate`` of the module docstring against the tolerance."""
        size = np.abs(z_new)
        ratio = (estimate + ROUNDOFF * size) / (self.atol + self.rtol * size)
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

r"""Bifurcation diagrams of Kuramoto models on the Ott–Antonsen manifold, over the coupling K.

Model (:class:`meanfield.Kuramoto`, one harmonic, σ = 0, a law with poles ζ_m = c_m + iγ_m, γ_m > 0, and weights
p_m; :mod:`meanfield.reduced._ott_antonsen`): the amplitudes z_m obey

    ż_m = F_m(z) = i a Z + i ν_m z_m + i conj(a Z) z_m²,   Z = Σ_m p_m z_m,                        (OA)

a = K a_1, a_1 = ĥ_1 e^{-iα} (sin coupling: a_1 = -(i/2) e^{-iα}), ν_m = ζ_m + K ĥ_0 (:func:`reduced_form`);
r = |Z| is the order parameter. Every object below is a function of K at the model's law and phase lag.

* Incoherence z = 0. Its linearisation ż = L z is complex-linear (the z̄ terms are quadratic):
  L = diag(iν) + i a 1 pᵀ, so λ ≠ iν_m is an eigenvalue iff 1 = i a Σ_m p_m/(λ - iν_m) (rank one). An
  eigenvalue crosses the imaginary axis, λ = iΩ, iff Ω' = Ω - K ĥ_0 is real with a_1 G(Ω') real and positive,
  G(Ω') = Σ_m p_m/(Ω' - ζ_m), and then K = 1/(a_1 G(Ω')): the real roots of the polynomial
  Im[a_1 N(Ω') conj(D)(Ω')] (D = Π(Ω' - ζ_m), G = N/D) give every crossing exactly. Its eigenvector is
  v_m = a/(Ω - ν_m) (p·v = 1), and z = ε v e^{iΩt} + O(ε³) is a branch of rotating states born there (a
  pitchfork in the rotating frame; Ω = 0 for the real eigenvalue of a symmetric law, Ω ≠ 0 a travelling wave).
* Stationary states: relative equilibria z_m(t) = w_m e^{iΩt}, i.e. G_m(w) = F_m(w) - iΩ w_m = 0, with the
  rotation phase fixed by Im Z = 0, Re Z > 0 (so r = Z). The 2M + 1 real equations H(x) = 0 in
  x = (Re w, Im w, Ω, K) define curves, followed by pseudo-arclength continuation: predictor x + hτ, Newton
  corrector on [H(x); τ·(x - x_pred)] (one iteration past the tolerance, so that points are exact to rounding
  even next to a bifurcation), the analytic Jacobian from the Wirtinger derivatives ∂F_m/∂z_j = i a p_j +
  δ_mj (i ν_m + 2i conj(aZ) z_m), ∂F_m/∂z̄_j = i conj(a) p_j z_m² (with ∂_Ω G = -iw and ∂_K F). Branches
  start ε-close to every crossing of incoherence in the coupling range (Re Z = :data:`START_AMPLITUDE`), at
  every branch point met on the way (below), and at every relative equilibrium that the *survey* (long
  integrations, below) converged to and that lies on no branch found before; a branch ends on the boundary of
  the range (its last point exactly there), back on incoherence (Re Z < :data:`END_AMPLITUDE`), where it
  closes on itself, or after :data:`MAX_POINTS` steps.
* Stability of a stationary state: the eigenvalues of the real 2M × 2M Jacobian J of (Re G, Im G) in
  (Re w, Im w) (the rotating frame: ∂G/∂z = ∂F/∂z - iΩ I) without the neutral rotation mode i w (J i w = 0 by
  equivariance; the 2M - 1 others are those of Qᵀ J Q, Q an orthonormal basis of (i w)^⊥): stability on the
  manifold, which attracts every density for such laws (Ott & Antonsen, Chaos 19 (2009) 023117). Events between
  consecutive points, each located by Brent's method in the arclength s of the corrector: a real eigenvalue
  through 0 (det changes sign) is a fold where dK/ds changes sign with it and a branch point (this branch
  crosses another) where it does not; dK/ds changing sign without det is a branch point this branch turns at
  (a symmetric pitchfork seen from its asymmetric branch, along which the spectrum is even); a Hopf point is a
  sign change of the bialternate product Π_{i<j}(λ_i + λ_j) where the crossing pair is complex. At a branch
  point ∂H has a 2-D null space; the direction φ in it orthogonal to the branch is the other branch's (exact
  for a symmetric pitchfork) and x + hφ, corrected, starts it.
* Survey: every start (:data:`DEFAULT_STARTS` and three random ones) at every coupling of ``couplings``,
  integrated in one batch by :func:`meanfield.reduced.evolve_amplitudes` over t_transient, then r(t) recorded
  over t_record. A run whose r varies by less than :data:`WAVE_SPREAD` (or is not steady) and is not at
  incoherence is rotated to Z > 0 and polished by Newton at its K into a relative equilibrium; a run whose
  spread of r is ≥ :data:`WAVE_SPREAD` and changes by less than :data:`WAVE_STEADY` (relative) between the
  halves of the window is an oscillation: its r_min, r_max (extrema of r² refined by parabolas), and the
  period of r(t) (mean spacing of the maxima within 1e-3 of the largest, kept when r²(t + T) matches r²(t) to
  :data:`WAVE_PERIODIC` of its spread). Runs closer than :data:`WAVE_DISTINCT` in r_min and r_max are one wave.
* Periodic states (``periodic=True``): relative periodic orbits z(t + T) = e^{iφ} z(t) (r(t) is T-periodic; a
  standing wave of the symmetric bimodal law is one with φ = π, Z(t) real and changing sign, r_min = 0). Orbit
  branches start at every Hopf point of a stationary branch (z(0) = w + ε Re u from the critical eigenvector u,
  T = 2π/ω, φ = ΩT; followed the way the orbits grow) and at each distinct periodic wave of the survey on no
  orbit branch found before (followed both ways); they are continued by Newton single shooting in
  (z(0), ln T, φ, K), with the phase conditions ⟨z(0) - z_ref, f_⊥(z_ref)⟩ = 0
  and ⟨z(0) - z_ref, i z_ref⟩ = 0 (z_ref the previous point; f_⊥ the flow without its rotation part) and the
  monodromy from the variational equations integrated alongside (:func:`solvers.evolve_batch`, Dormand–Prince
  5(4) at :data:`ORBIT_RTOL`), so that unstable parts beyond folds of orbits are continued too. Floquet
  multipliers: the eigenvalues of e^{-iφ} ∂z(T)/∂z(0) without the two trivial ones (flow and rotation). An
  orbit branch ends on the range's boundary, where r_max - r_min shrinks below :data:`ORBIT_END_SPREAD` (onto
  a Hopf point: steps are at most half of it, so that the branch does not pass through), where T exceeds
  ``max_period`` (a homoclinic orbit or a saddle-node on the cycle ahead), or where single shooting fails
  (close to a homoclinic orbit ∂z(T)/∂z(0) grows like e^{λT}). Not computed: unstable orbits that neither a
  Hopf point of a stationary branch nor a stable survey wave connects to (e.g. those born at a Hopf point of
  incoherence itself, like the standing waves' O(2)-symmetric one at K = 4Δ), bifurcations of orbits
  other than folds (their stability is reported point by point), quasi-periodic and chaotic states (the survey
  reports their r_min, r_max with a NaN period).

The symmetric bimodal law g = ½[L_Δ(ω - ω₀) + L_Δ(ω + ω₀)] at α = 0 (Martens et al., PRE 79, 026204 (2009)):
λ = -Δ + K/4 ± √(K²/16 - ω₀²) at incoherence; the stationary states z₊ = ρ e^{iψ}, z₋ = conj z₊ (Ω = 0) lie on
K(u) = 2Δ/(1 - u) + 2ω₀²(1 - u)/(Δ(1 + u)²), u = ρ², with r = ρ|cos ψ|, cos²ψ = 2Δ/(K(1 - u)), and a fold
where Δ²(1 + u)³ = ω₀²(3 - u)(1 - u)² (:func:`bimodal_boundaries`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numba
import numpy as np
import xarray as xr
from scipy.optimize import brentq

from solvers import evolve_batch
from solvers._batched_dormand_prince import FINISHED

from ...models._kuramoto import Kuramoto
from ...reduced._ott_antonsen import evolve_amplitudes, reduced_form
from ..._validate import check_positive, check_rtol
from ..._version import __version__

__all__ = ["bimodal_boundaries", "kuramoto_branches"]

#: Re Z = r of the first point of a stationary branch started off incoherence
START_AMPLITUDE = 1e-3
#: a stationary branch whose Re Z falls below this has come back to incoherence and ends
END_AMPLITUDE = 5e-4
#: Newton's sup-norm residual tolerance for stationary states, relative to the field's size 1 + K|a_1| + max|ν_m|
STATIONARY_TOLERANCE = 1e-13
#: Newton iterations of one corrector (more: the step is halved)
CORRECTOR_ITERATIONS = 10
#: smallest cosine between consecutive tangents of a branch (a sharper turn halves the step)
MIN_COS = 0.99
#: step growth after a corrector of at most 3 iterations, and shrink factor after a failed one
GROW, SHRINK = 1.5, 0.5
#: continuation steps per branch (one direction) at most
MAX_POINTS = 3000
#: imaginary parts below this (relative to the spectrum's size) make an eigenvalue real
REAL_EIGENVALUE = 1e-7
#: survey: samples of r(t) over the record window
RECORD_SAMPLES = 4001
#: survey: bound on the integrator's attempts per run
SURVEY_MAX_STEPS = 10_000_000
#: survey: |Z| below which a run has gone to incoherence
INCOHERENT = 1e-6
#: survey: spread of r over the record window above which a run oscillates (and relative change of the spread
#: between the window's halves below which the oscillation is steady)
WAVE_SPREAD, WAVE_STEADY = 1e-4, 1e-3
#: survey: max |r²(t + T) - r²(t)| relative to the spread of r² below which r is T-periodic
WAVE_PERIODIC = 2e-2
#: survey: relative difference of r_min, r_max above which two oscillating runs are distinct waves
WAVE_DISTINCT = 1e-3
#: shooting: integrator tolerances, residual tolerance, samples of r over one period
ORBIT_RTOL, ORBIT_ATOL, ORBIT_TOLERANCE, ORBIT_SAMPLES = 1e-11, 1e-13, 1e-9, 4097
#: shooting: an orbit branch ends when r_max - r_min falls below this (it shrinks onto a Hopf point)
ORBIT_END_SPREAD = 1e-3
#: shooting: smallest step relative to the largest (single shooting fails near a homoclinic orbit: give up there)
ORBIT_MIN_STEP = 1e-3
#: shooting: continuation steps per orbit branch (one direction) at most
ORBIT_POINTS = 400
#: survey starts z_m(0) (the same at every pole) besides the random ones
DEFAULT_STARTS = (0.01, 0.5, 0.95)


# ---------------------------------------------------------------------------------------------- the equations
@dataclass(frozen=True)
class _Reduced:
    """(OA) as a function of K: a = K a_1, ν_m = ζ_m + K ĥ_0, weights p_m. Arrays broadcast over leading axes."""

    a1: complex
    zeta: np.ndarray
    h0: float
    p: np.ndarray

    @property
    def m(self) -> int:
        return self.p.size

    def coefficients(self, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        k = np.asarray(k, dtype=float)
        return k * self.a1, self.zeta + (k * self.h0)[..., None]

    def size(self, k: np.ndarray) -> np.ndarray:
        """1 + K|a_1| + max|ν_m|: the scale of the field, for tolerances."""
        a, nu = self.coefficients(k)
        return 1 + np.abs(a) + np.max(np.abs(nu), axis=-1)

    def field(self, z: np.ndarray, k: np.ndarray) -> np.ndarray:
        a, nu = self.coefficients(k)
        az = (a * (z @ self.p))[..., None]
        return 1j * (az + nu * z + np.conj(az) * z * z)

    def field_k(self, z: np.ndarray) -> np.ndarray:
        """∂F/∂K = i a_1 Z + i ĥ_0 z + i conj(a_1 Z) z²."""
        az = (self.a1 * (z @ self.p))[..., None]
        return 1j * (az + self.h0 * z + np.conj(az) * z * z)

    def wirtinger(self, z: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """∂F_m/∂z_j = i a p_j + δ_mj (i ν_m + 2i conj(aZ) z_m) and ∂F_m/∂z̄_j = i conj(a) p_j z_m²."""
        a, nu = self.coefficients(k)
        az = a * (z @ self.p)
        a = np.asarray(a)[..., None, None]
        dz = 1j * a * self.p + _diag(1j * nu + 2j * np.conj(az)[..., None] * z)
        dzbar = 1j * np.conj(a) * (z * z)[..., :, None] * self.p
        return dz, dzbar


def _diag(v: np.ndarray) -> np.ndarray:
    return v[..., :, None] * np.eye(v.shape[-1])


def _reduced(model: Kuramoto) -> _Reduced:
    """The (OA) coefficients of ``model``'s law, phase lag and interaction, as functions of K."""
    a1, nu1, p = reduced_form(replace(model, coupling=1.0))
    _, zeta, _ = reduced_form(replace(model, coupling=0.0))
    return _Reduced(complex(a1), np.asarray(zeta, dtype=complex), float(np.real(nu1[0] - zeta[0])),
                    np.asarray(p, dtype=float))


def _realify(dz: np.ndarray, dzbar: np.ndarray) -> np.ndarray:
    """The real Jacobian of (Re G, Im G) in (Re z, Im z) from ∂G/∂z and ∂G/∂z̄."""
    plus, minus = dz + dzbar, dz - dzbar
    return np.concatenate([np.concatenate([plus.real, -minus.imag], axis=-1),
                           np.concatenate([plus.imag, minus.real], axis=-1)], axis=-2)


def _real(z: np.ndarray) -> np.ndarray:
    return np.concatenate([z.real, z.imag], axis=-1)


def _complement(vectors: np.ndarray) -> np.ndarray:
    """An orthonormal basis (..., n, n - k) of the orthogonal complement of the columns of ``vectors`` (..., n, k)."""
    q, _ = np.linalg.qr(vectors, mode="complete")
    return q[..., vectors.shape[-1]:]


# ---------------------------------------------------------------------------------------------- incoherence
def _incoherence_spectrum(reduced: _Reduced, k: np.ndarray) -> np.ndarray:
    """Eigenvalues (..., M) of L = diag(iν) + i a 1pᵀ, by decreasing real part."""
    a, nu = reduced.coefficients(k)
    matrix = _diag(1j * nu) + 1j * np.asarray(a)[..., None, None] * reduced.p
    values = np.linalg.eigvals(matrix)
    return np.take_along_axis(values, np.argsort(-values.real, axis=-1, kind="stable"), axis=-1)


@dataclass(frozen=True)
class _Crossings:
    """Where an eigenvalue λ of L(K) crosses the imaginary axis at λ = iΩ: K, Ω, the eigenvector v (p·v = 1),
    and the direction +1 (Re λ grows with K: incoherence gains an unstable mode) or -1."""

    k: np.ndarray
    omega: np.ndarray
    vector: np.ndarray
    direction: np.ndarray


def _incoherence_crossings(reduced: _Reduced, k_lo: float, k_hi: float) -> _Crossings:
    """Every crossing with k_lo ≤ K ≤ k_hi, from the real roots of Im[a_1 N(Ω') conj(D)(Ω')] (module docstring)."""
    poly = np.polynomial.polynomial
    zeta, p = reduced.zeta, reduced.p
    d = poly.polyfromroots(zeta)
    n = sum(p[m] * poly.polyfromroots(np.delete(zeta, m)) for m in range(zeta.size))
    imag = poly.polymul(reduced.a1 * n, np.conj(d)).imag
    imag = poly.polytrim(imag, 1e-14 * np.max(np.abs(imag)))
    roots = poly.polyroots(imag) if imag.size > 1 else np.zeros(0, dtype=complex)
    scale = 1 + np.max(np.abs(zeta))
    x = roots[np.abs(roots.imag) <= 1e-6 * scale].real
    for _ in range(3):  # Newton on Im(a_1 G) polishes the roots
        g, dg = (p / (x[:, None] - zeta)).sum(-1), -(p / (x[:, None] - zeta) ** 2).sum(-1)
        x = x - np.imag(reduced.a1 * g) / np.imag(reduced.a1 * dg)
    g, dg = (p / (x[:, None] - zeta)).sum(-1), -(p / (x[:, None] - zeta) ** 2).sum(-1)
    gain = np.real(reduced.a1 * g)
    with np.errstate(divide="ignore"):
        k = np.where(gain > 0, 1 / gain, np.inf)
    slack = 1e-12 * (1 + k_hi)  # a crossing on the range's edge (to rounding) is in it
    keep = (k >= k_lo - slack) & (k <= k_hi + slack)
    x, g, dg, k = x[keep], g[keep], dg[keep], k[keep]
    order = np.argsort(k)
    x, g, dg, k = x[order], g[order], dg[order], k[order]
    # λ = i(s + K ĥ_0) with 1 = K a_1 G(s): ds/dK = -G/(K G'), Re dλ/dK = -Im ds/dK
    direction = np.sign(np.imag(g / (k * dg))).astype(int)
    vector = (k * reduced.a1)[:, None] / (x[:, None] - zeta)
    return _Crossings(k, x + k * reduced.h0, vector, direction)


# ---------------------------------------------------------------------------------------------- continuation
class _Curve:
    """A curve {x : H(x) = 0} in R^{n+1}, the last unknown K; subclasses give H, its Jacobian and the stops."""

    k_range: tuple[float, float]
    #: reasons of :meth:`ended` whose point is not kept (it is past the end of the branch)
    dropped: tuple[str, ...] = ()
    #: smallest step, relative to the largest one, before the branch is given up
    min_step: float = 1e-9
    #: Newton iterations after the residual is within tolerance (the solution is then exact to rounding even
    #: where ∂H is nearly singular, close to a bifurcation)
    extra_iterations: int = 0

    def residual(self, x: np.ndarray, base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """H(x) (n,) and ∂H/∂x (n, n + 1); ``base`` is the last point of the branch (for phase conditions)."""
        raise NotImplementedError

    def tolerance(self, x: np.ndarray) -> float:
        raise NotImplementedError

    def step_cap(self, x: np.ndarray) -> float:
        """The largest step from x (besides ``h_max``)."""
        return np.inf

    def ended(self, x: np.ndarray) -> str:
        """Why the branch ends at x ("" if it goes on; :attr:`dropped`: x itself is past the end), besides leaving
        the coupling range."""
        raise NotImplementedError


def _correct(curve: _Curve, x_pred: np.ndarray, border: np.ndarray, base: np.ndarray
             ) -> tuple[np.ndarray, bool, int]:
    """Newton on [H(x); border·(x - x_pred)] = 0 from x_pred: (x, converged, iterations)."""
    x = x_pred.copy()
    extra = curve.extra_iterations
    for iteration in range(CORRECTOR_ITERATIONS + 1 + curve.extra_iterations):
        res, jac = curve.residual(x, base)
        if not np.all(np.isfinite(res)) or not np.all(np.isfinite(jac)):
            return x, False, iteration
        if np.max(np.abs(res)) <= curve.tolerance(x) and iteration > 0:
            if extra == 0:
                return x, True, iteration
            extra -= 1
        elif iteration >= CORRECTOR_ITERATIONS:
            break
        try:
            x = x - np.linalg.solve(np.vstack([jac, border]), np.append(res, border @ (x - x_pred)))
        except np.linalg.LinAlgError:
            return x, False, iteration
    return x, False, CORRECTOR_ITERATIONS


def _tangent(curve: _Curve, x: np.ndarray, base: np.ndarray, previous: np.ndarray) -> np.ndarray:
    """The unit tangent at x, oriented along ``previous`` (the bordered system [∂H; previous] τ = e_{n+1})."""
    _, jac = curve.residual(x, base)
    rhs = np.zeros(x.size)
    rhs[-1] = 1.0
    tangent = np.linalg.solve(np.vstack([jac, previous]), rhs)
    return tangent / np.linalg.norm(tangent)


def _null_tangent(curve: _Curve, x: np.ndarray) -> np.ndarray:
    """A unit tangent at x without a previous one: the right singular vector of ∂H for its smallest value."""
    _, jac = curve.residual(x, x)
    return np.linalg.svd(jac)[2][-1]


@dataclass
class _Trace:
    """Points x_i, tangents τ_i and the steps h_i from x_i to x_{i+1} (x_{i+1} corrected on τ_i·(x - x_i) = h_i),
    and why the branch ended."""

    x: np.ndarray
    t: np.ndarray
    h: np.ndarray
    reason: str


def _trace(curve: _Curve, x0: np.ndarray, t0: np.ndarray, h0: float, h_max: float, max_points: int,
           on_point: Callable[[np.ndarray], None] | None = None) -> _Trace:
    """Pseudo-arclength continuation from (x0, τ0) until :meth:`_Curve.ended`, the range's boundary (whose point is
    solved for exactly and is the last one), a closed loop, a failing step or ``max_points``."""
    xs, ts, hs = [x0], [t0], []
    x, t, h = x0, t0, min(h0, h_max)
    k_lo, k_hi = curve.k_range
    reason = "max_points"
    while len(xs) < max_points:
        h = min(h, curve.step_cap(x))
        x_new, ok, iterations = _correct(curve, x + h * t, t, x)
        if ok:
            t_new = _tangent(curve, x_new, x, t)
            ok = t_new @ t > MIN_COS
        if not ok:
            h *= SHRINK
            if h < curve.min_step * h_max:
                reason = "step"
                break
            continue
        if not k_lo <= x_new[-1] <= k_hi:
            edge = k_lo if x_new[-1] < k_lo else k_hi
            theta = (edge - x[-1]) / (x_new[-1] - x[-1])
            guess = x + theta * (x_new - x)
            border = np.zeros(x.size)
            border[-1] = 1.0
            x_edge, ok, _ = _correct(curve, guess, border, x)
            if ok and theta > 1e-9:  # (not when x itself is on the edge)
                xs.append(x_edge)
                ts.append(_tangent(curve, x_edge, x, t))
                hs.append(t @ (x_edge - x))
                if on_point is not None:
                    on_point(x_edge)
            reason = "range"
            break
        reason = curve.ended(x_new)
        if reason in curve.dropped:
            break
        xs.append(x_new)
        ts.append(t_new)
        hs.append(h)
        if on_point is not None:
            on_point(x_new)
        if reason:
            break
        if len(xs) > 3 and np.linalg.norm(x_new - x0) < h:
            reason = "loop"
            break
        if iterations - curve.extra_iterations <= 3:
            h = min(h * GROW, h_max)
        x, t = x_new, t_new
        reason = "max_points"
    return _Trace(np.array(xs), np.array(ts), np.array(hs), reason)


def _locate(curve: _Curve, trace: _Trace, i: int, test: Callable[[np.ndarray, np.ndarray], float]
            ) -> np.ndarray | None:
    """The point between x_i and x_{i+1} where ``test(x, τ)`` changes sign: Brent's method in the arclength s of
    the corrector x(s) on τ_i·(x - x_i) = s from x_i. None if the corrector's ends do not change sign (a sign
    change of a tangent computed next to a branch point, where it is ill-conditioned)."""
    x_a, t_a = trace.x[i], trace.t[i]

    def point(s: float) -> tuple[np.ndarray, np.ndarray]:
        x, _, _ = _correct(curve, x_a + s * t_a, t_a, x_a)
        return x, _tangent(curve, x, x_a, t_a)

    def value(s: float) -> float:
        return test(*point(s))

    if value(0.0) * value(trace.h[i]) >= 0:
        return None
    s = brentq(value, 0.0, trace.h[i], xtol=1e-14 * max(1.0, trace.h[i]), rtol=1e-15)
    return point(s)[0]


# ---------------------------------------------------------------------------------------------- stationary states
class _Stationary(_Curve):
    """H(w, Ω, K) = (Re G, Im G, Im Z), G = F(w) - iΩw: relative equilibria with Z real."""

    dropped = ("incoherence", "unit_circle")
    extra_iterations = 1

    def __init__(self, reduced: _Reduced, k_range: tuple[float, float]) -> None:
        self.reduced, self.k_range = reduced, k_range

    def residual(self, x: np.ndarray, base: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        return _stationary_residual(self.reduced, x)

    def tolerance(self, x: np.ndarray) -> float:
        return STATIONARY_TOLERANCE * float(self.reduced.size(x[-1]))

    def ended(self, x: np.ndarray) -> str:
        w = _amplitudes(x, self.reduced.m)
        z = float(np.real(w @ self.reduced.p))
        if z < END_AMPLITUDE:
            return "incoherence"
        return "unit_circle" if np.max(np.abs(w)) >= 1 else ""


def _amplitudes(x: np.ndarray, m: int) -> np.ndarray:
    return x[..., :m] + 1j * x[..., m:2 * m]


def _stationary_residual(reduced: _Reduced, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """H (..., 2M + 1) and ∂H/∂(Re w, Im w, Ω, K) (..., 2M + 1, 2M + 2), batched over leading axes."""
    m = reduced.m
    w, omega, k = _amplitudes(x, m), x[..., 2 * m], x[..., 2 * m + 1]
    g = reduced.field(w, k) - 1j * omega[..., None] * w
    dz, dzbar = reduced.wirtinger(w, k)
    jac = np.zeros(x.shape[:-1] + (2 * m + 1, 2 * m + 2))
    jac[..., :2 * m, :2 * m] = _realify(dz - 1j * omega[..., None, None] * np.eye(m), dzbar)
    jac[..., :2 * m, 2 * m] = _real(-1j * w)
    jac[..., :2 * m, 2 * m + 1] = _real(reduced.field_k(w))
    jac[..., 2 * m, m:2 * m] = reduced.p
    res = np.concatenate([_real(g), (w.imag @ reduced.p)[..., None]], axis=-1)
    return res, jac


def _stationary_spectrum(reduced: _Reduced, x: np.ndarray) -> np.ndarray:
    """The 2M - 1 eigenvalues (..., 2M - 1) of the rotating-frame Jacobian without the rotation mode i w."""
    _, jac = _stationary_residual(reduced, x)
    m = reduced.m
    full = jac[..., :2 * m, :2 * m]
    basis = _complement(_real(1j * _amplitudes(x, m))[..., None])
    return np.linalg.eigvals(np.swapaxes(basis, -1, -2) @ full @ basis)


def _polish(reduced: _Reduced, w: np.ndarray, omega: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Batched Newton at fixed K on H(w, Ω) = 0 from rotated states (Z real > 0): the points x (S, 2M + 2) and
    whether each converged (to a state with Re Z > 0 and |w_m| < 1)."""
    m = reduced.m
    x = np.concatenate([_real(w), omega[:, None], k[:, None]], axis=-1)
    tolerance = STATIONARY_TOLERANCE * reduced.size(k)
    with np.errstate(all="ignore"):
        for _ in range(3 * CORRECTOR_ITERATIONS):
            res, jac = _stationary_residual(reduced, x)
            square = jac[..., :2 * m + 1]
            singular = ~(np.abs(np.linalg.det(square)) > 1e-300)
            square[singular] = np.eye(2 * m + 1)
            step = np.linalg.solve(square, np.where(np.isfinite(res), res, 0.0)[..., None])[..., 0]
            x[:, :2 * m + 1] -= np.where(np.isfinite(step), step, 0.0)
        res, _ = _stationary_residual(reduced, x)
    w = _amplitudes(x, m)
    ok = (np.max(np.abs(res), axis=-1) <= tolerance) & (np.real(w @ reduced.p) > END_AMPLITUDE) & \
        (np.max(np.abs(w), axis=-1) < 1)
    return x, ok


def _bialternate(values: np.ndarray) -> np.ndarray:
    """Π_{i<j} (λ_i + λ_j) (real for a real matrix): zero where a complex pair (or a ±λ real pair) sits at ±iω."""
    i, j = np.triu_indices(values.shape[-1], 1)
    return np.prod(values[..., i] + values[..., j], axis=-1).real


def _determinant(values: np.ndarray) -> np.ndarray:
    return np.prod(values, axis=-1).real


@dataclass
class _Events:
    """Bifurcation points along branches: coupling, branch id and (Hopf) the frequency |Im λ| of the crossing;
    and the branch points still to switch at (the point and the branch's tangent next to it)."""

    folds: list[tuple[float, int]] = field(default_factory=list)
    hopf: list[tuple[float, int, float, np.ndarray]] = field(default_factory=list)   # (K, branch, ω, point)
    branch_points: list[tuple[float, int]] = field(default_factory=list)
    located: list[tuple[np.ndarray, int]] = field(default_factory=list)   # the branch points themselves
    switches: list[tuple[np.ndarray, np.ndarray, int]] = field(default_factory=list)

    def met_on(self, x: np.ndarray, branch: int, same: bool) -> bool:
        """Whether a branch point at x is recorded on ``branch`` (``same``) or on another branch."""
        return any((other == branch) == same and np.max(np.abs(y - x)) <= 1e-6 * (1 + np.max(np.abs(x)))
                   for y, other in self.located)

    def add_branch_point(self, x: np.ndarray, tangent: np.ndarray | None, branch: int) -> None:
        """Record the branch point x on ``branch`` (once), to switch at along ``tangent`` (None: not)."""
        if self.met_on(x, branch, same=True):
            return
        self.branch_points.append((float(x[-1]), branch))
        self.located.append((x, branch))
        if tangent is not None:
            self.switches.append((x, tangent, branch))


def _stationary_events(curve: _Stationary, trace: _Trace, branch: int, events: _Events) -> None:
    """Folds, Hopf points and branch points between consecutive points of ``trace``, located. A real eigenvalue
    through 0 (det J changes sign) is a fold where dK/ds changes sign too and a branch point (this branch
    crosses another) where it does not; dK/ds changing sign without det J is a branch point this branch turns
    at (a symmetric pitchfork seen from its asymmetric branch, along which the spectrum is even)."""
    reduced = curve.reduced
    spectra = _stationary_spectrum(reduced, trace.x)
    fold_test, hopf_test, det_test = trace.t[:, -1], _bialternate(spectra), _determinant(spectra)

    def hopf_value(x: np.ndarray, _: np.ndarray) -> float:
        return float(_bialternate(_stationary_spectrum(reduced, x)))

    for i in range(trace.h.size):
        fold = fold_test[i] * fold_test[i + 1] < 0
        crossing = det_test[i] * det_test[i + 1] < 0
        if fold or crossing:
            test = (lambda x, t: t[-1]) if fold else \
                (lambda x, t: float(_determinant(_stationary_spectrum(reduced, x))))
            x = _locate(curve, trace, i, test)
            if x is not None and fold and crossing:
                events.folds.append((float(x[-1]), branch))
            elif x is not None:
                events.add_branch_point(x, trace.t[i], branch)
        x = _locate(curve, trace, i, hopf_value) if hopf_test[i] * hopf_test[i + 1] < 0 else None
        if x is not None:  # the pair λ_i + λ_j = 0: a Hopf point if complex (±iω), a neutral saddle if real (±λ)
            values = _stationary_spectrum(reduced, x)
            first, second = np.triu_indices(values.size, 1)
            pair = values[first[np.argmin(np.abs(values[first] + values[second]))]]
            if abs(pair.imag) > REAL_EIGENVALUE * (1 + np.max(np.abs(values))):
                events.hopf.append((float(x[-1]), branch, float(abs(pair.imag)), x))


def _switch(curve: _Stationary, x: np.ndarray, tangent: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray] | None:
    """A point of the other branch through the branch point x, and its tangent: ∂H has a 2-D null space there;
    its direction φ orthogonal to the branch's ``tangent`` is the other branch's (exact for a symmetric pitchfork,
    the symmetry acting orthogonally), and x + hφ is corrected on φ·(y - x - hφ) = 0."""
    null = np.linalg.svd(curve.residual(x)[1])[2][-2:].T
    along = null.T @ tangent
    other = null @ (np.array([-along[1], along[0]]) / np.linalg.norm(along))
    y, ok, _ = _correct(curve, x + h * other, other, x)
    if not ok or np.linalg.norm(y - x) > 2 * h:
        return None
    return y, _tangent(curve, y, y, other)


def _on_branches(reduced: _Reduced, branches: list[np.ndarray], x: np.ndarray) -> np.ndarray:
    """Which points x (S, 2M + 2) lie on one of ``branches``: the branch's points are interpolated to each K and
    corrected at that K (batched); on it when the correction lands on x (sup distance ≤ 1e-7)."""
    found = np.zeros(x.shape[0], dtype=bool)
    m = reduced.m
    for points in branches:
        above = points[:, -1][None, :] >= x[:, -1][:, None]
        seed, i = np.nonzero(above[:, :-1] != above[:, 1:])
        if seed.size == 0:
            continue
        theta = (x[seed, -1] - points[i, -1]) / (points[i + 1, -1] - points[i, -1])
        guess = points[i] + theta[:, None] * (points[i + 1] - points[i])
        guess[:, -1] = x[seed, -1]
        polished, ok = _polish(reduced, _amplitudes(guess, m), guess[:, 2 * m], guess[:, -1])
        same = ok & (np.max(np.abs(polished - x[seed]), axis=-1) <= 1e-7)
        found[seed[same]] = True
    return found


def _stationary_branches(reduced: _Reduced, k_range: tuple[float, float], crossings: _Crossings,
                         seeds: np.ndarray, h_max: float) -> tuple[list[np.ndarray], _Events]:
    """Every branch from the crossings, the branch points met on the way (switched at) and the survey's relative
    equilibria ``seeds`` (S, 2M + 2), with their events."""
    curve = _Stationary(reduced, k_range)
    m = reduced.m
    branches: list[np.ndarray] = []
    events = _Events()
    visited = np.zeros(crossings.k.size, dtype=bool)
    amplitude_row = np.concatenate([reduced.p, np.zeros(m + 2)])
    for c in range(crossings.k.size):
        if visited[c]:
            continue
        visited[c] = True
        guess = np.concatenate([_real(START_AMPLITUDE * crossings.vector[c]), [crossings.omega[c], crossings.k[c]]])
        x0, ok, _ = _correct(curve, guess, amplitude_row, guess)
        if not ok:
            continue
        t0 = _null_tangent(curve, x0)
        t0 = t0 if amplitude_row @ t0 > 0 else -t0
        trace = _trace(curve, x0, t0, START_AMPLITUDE, h_max, MAX_POINTS)
        if trace.reason == "incoherence":  # it ends on another crossing
            end = trace.x[-1]
            distance = np.abs(crossings.k - end[-1]) + np.abs(crossings.omega - end[2 * m])
            visited[np.argmin(distance)] = True
        _stationary_events(curve, trace, len(branches) + 1, events)
        branches.append(trace.x)
    remaining = seeds[np.argsort(seeds[:, -1], kind="stable")]
    while True:
        if events.switches:
            x_bp, tangent, branch = events.switches.pop(0)
            if events.met_on(x_bp, branch, same=False):
                continue
            start = _switch(curve, x_bp, tangent, 0.1 * h_max)
            if start is None or _on_branches(reduced, branches, start[0][None])[0]:
                continue
            x0, t0 = start
            events.add_branch_point(x_bp, None, len(branches) + 1)
        else:
            remaining = remaining[~_on_branches(reduced, branches, remaining)]
            if not remaining.shape[0]:
                break
            x0, remaining = remaining[0], remaining[1:]
            t0 = _null_tangent(curve, x0)
        forward = _trace(curve, x0, t0, 0.1 * h_max, h_max, MAX_POINTS)
        _stationary_events(curve, forward, len(branches) + 1, events)
        if forward.reason == "loop":  # a closed branch
            branches.append(forward.x)
            continue
        backward = _trace(curve, x0, -t0, 0.1 * h_max, h_max, MAX_POINTS)
        _stationary_events(curve, backward, len(branches) + 1, events)
        branches.append(np.concatenate([backward.x[:0:-1], forward.x]))
    return branches, events


# ---------------------------------------------------------------------------------------------- survey
@dataclass
class _Survey:
    """The long integrations: relative equilibria reached (polished), and the oscillating runs per coupling."""

    equilibria: np.ndarray          # (E, 2M + 2) polished points
    wave_r_min: np.ndarray          # (N, W)
    wave_r_max: np.ndarray
    wave_period: np.ndarray
    seeds: list[tuple[np.ndarray, float, float, float]]   # (z at a maximum of r, T, φ, K) of periodic waves
    outcome: np.ndarray             # (N, S): 0 incoherence, 1 relative equilibrium, 2 wave, -1 undecided


def _parabola(values: np.ndarray, i: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vertex offset (in samples) and value of the parabola through samples i - 1, i, i + 1 of ``values``."""
    left, mid, right = values[rows, i - 1], values[rows, i], values[rows, i + 1]
    curvature = left - 2 * mid + right
    with np.errstate(divide="ignore", invalid="ignore"):
        offset = np.where(curvature != 0, 0.5 * (left - right) / curvature, 0.0)
    return offset, mid - 0.25 * (left - right) * offset


def _survey(reduced: _Reduced, ks: np.ndarray, starts: np.ndarray, t_transient: float, t_record: float,
            rtol: float, atol: float) -> _Survey:
    """Integrate (OA) from every start at every K (one batch), then classify the record window's r(t)."""
    n_k, n_s = ks.size, starts.shape[0]
    k = np.repeat(ks, n_s)
    a, nu = reduced.coefficients(k)
    record = t_transient + np.linspace(0.0, t_record, RECORD_SAMPLES)
    dt = record[1] - record[0]
    run = evolve_amplitudes(a, nu, reduced.p, np.tile(starts, (n_k, 1)), np.concatenate([[0.0], record]),
                            rtol=rtol, atol=atol, max_steps=SURVEY_MAX_STEPS)
    z = run.z[:, 1:]
    finished = (run.status == FINISHED) & np.all(np.isfinite(z), axis=(1, 2))
    z = np.where(finished[:, None, None], z, 0.0)
    big_z = z @ reduced.p.astype(complex)
    r2 = np.abs(big_z) ** 2
    r = np.sqrt(r2)
    half = RECORD_SAMPLES // 2
    spread, first, second = np.ptp(r, axis=1), np.ptp(r[:, :half], axis=1), np.ptp(r[:, half:], axis=1)
    incoherent = finished & (r[:, -1] < INCOHERENT) & (spread < WAVE_SPREAD)
    waving = finished & (spread >= WAVE_SPREAD) & (np.abs(first - second) <= WAVE_STEADY * spread)

    # relative equilibria: every other finished run, rotated to Z > 0 and polished at its K
    trial = finished & ~incoherent & ~waving & (r[:, -1] >= INCOHERENT)
    z_end, big_end = z[trial, -1], big_z[trial, -1]
    w = z_end * (np.conj(big_end) / np.abs(big_end))[:, None]
    omega = np.imag((reduced.field(z_end, k[trial]) @ reduced.p) / big_end)
    polished, ok = _polish(reduced, w, omega, k[trial])
    equilibria = polished[ok]
    outcome = np.full(n_k * n_s, -1)
    outcome[incoherent] = 0
    outcome[np.flatnonzero(trial)[ok]] = 1
    outcome[waving] = 2

    # waves: refined extrema of r², the period from the maxima within 1e-3 of the largest
    interior = np.arange(1, RECORD_SAMPLES - 1)
    rows = np.arange(n_k * n_s)[:, None]
    is_max = (r2[:, interior] > r2[:, interior - 1]) & (r2[:, interior] >= r2[:, interior + 1])
    is_min = (r2[:, interior] < r2[:, interior - 1]) & (r2[:, interior] <= r2[:, interior + 1])
    offset, peak = _parabola(r2, np.broadcast_to(interior, r2[:, interior].shape), rows)
    tops = np.where(is_max, peak, -np.inf).max(axis=1)
    bottoms = np.where(is_min, peak, np.inf).min(axis=1)
    r2_max = np.maximum(tops, r2.max(axis=1))
    r2_min = np.minimum(bottoms, r2.min(axis=1))
    high = is_max & (peak >= r2_max[:, None] - 1e-3 * (r2_max - r2_min)[:, None])
    peak_time = np.where(high, interior + offset, np.nan)
    count = high.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        period = (np.nanmax(peak_time, axis=1, initial=-np.inf) - np.nanmin(peak_time, axis=1, initial=np.inf)) \
            / (count - 1) * dt
    period = np.where(waving & (count >= 3), period, np.nan)
    # r T-periodic: r²(t + T), linearly interpolated, against r²(t) (r² is smooth where r = |Z| has kinks at 0)
    shift = np.where(np.isfinite(period), period / dt, 0.0)
    whole, frac = np.floor(shift).astype(int), shift - np.floor(shift)
    j = np.arange(RECORD_SAMPLES)[None, :] + whole[:, None]
    valid = j + 1 < RECORD_SAMPLES
    jc = np.minimum(j, RECORD_SAMPLES - 2)
    shifted = (1 - frac[:, None]) * np.take_along_axis(r2, jc, 1) + \
        frac[:, None] * np.take_along_axis(r2, jc + 1, 1)
    mismatch = np.where(valid, np.abs(shifted - r2), 0.0).max(axis=1)
    period = np.where(mismatch <= WAVE_PERIODIC * np.ptp(r2, axis=1), period, np.nan)
    r_min = np.where(waving, np.sqrt(np.maximum(r2_min, 0.0)), np.nan)
    r_max = np.where(waving, np.sqrt(r2_max), np.nan)

    # distinct waves per coupling (sorted by r_max; equal r_min, r_max within WAVE_DISTINCT: the same wave)
    shape = (n_k, n_s)
    order = np.argsort(np.where(waving, r_max, np.inf).reshape(shape), axis=1, kind="stable")
    sorted_max = np.take_along_axis(r_max.reshape(shape), order, 1)
    sorted_min = np.take_along_axis(r_min.reshape(shape), order, 1)
    differs = np.ones(shape, dtype=bool)
    differs[:, 1:] = (np.abs(np.diff(sorted_max, axis=1)) > WAVE_DISTINCT * sorted_max[:, 1:]) | \
        (np.abs(np.diff(sorted_min, axis=1)) > WAVE_DISTINCT * np.maximum(sorted_max[:, 1:], 1e-300))
    distinct = differs & np.isfinite(sorted_max)
    index = np.cumsum(distinct, axis=1) - 1
    n_waves = max(1, int(distinct.sum(axis=1).max(initial=0)))
    waves = [np.full((n_k, n_waves), np.nan) for _ in range(3)]
    kk, ss = np.nonzero(distinct)
    runs = kk * n_s + order[kk, ss]
    for target, values in zip(waves, (r_min, r_max, period)):
        target[kk, index[kk, ss]] = values[runs]

    # seeds of the shooting continuation: each distinct periodic wave at its first high maximum
    periodic = runs[np.isfinite(period[runs])]
    at = np.argmax(high[periodic], axis=1) + 1
    later = np.minimum(RECORD_SAMPLES - 1, at + np.round(period[periodic] / dt).astype(int))
    phi = np.angle(big_z[periodic, later] * np.conj(big_z[periodic, at])) % (2 * np.pi)
    seeds = list(zip(z[periodic, at], period[periodic].tolist(), phi.tolist(), k[periodic].tolist()))
    return _Survey(equilibria, *waves, seeds, outcome.reshape(shape))


def _default_starts(m: int) -> np.ndarray:
    """:data:`DEFAULT_STARTS` at every pole and three random amplitudes per pole (|z| < 0.9, seed 0)."""
    rng = np.random.default_rng(0)
    random = 0.9 * np.sqrt(rng.random((3, m))) * np.exp(2j * np.pi * rng.random((3, m)))
    return np.concatenate([np.repeat(np.array(DEFAULT_STARTS, dtype=complex)[:, None], m, axis=1), random])


# ---------------------------------------------------------------------------------------------- periodic orbits
class _Orbits(_Curve):
    """H(z0, ln T, φ, K) = (Re, Im of z(T) - e^{iφ} z0, the two phase conditions): relative periodic orbits (the
    unknown ln T keeps the steps short in K where the period diverges)."""

    min_step = ORBIT_MIN_STEP

    def __init__(self, reduced: _Reduced, k_range: tuple[float, float], max_period: float) -> None:
        self.reduced, self.k_range, self.max_period = reduced, k_range, max_period
        self.cache: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}

    def flow(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """z(τT), τ ∈ [0, 1] (:data:`ORBIT_SAMPLES`, M), and ∂z(T)/∂(Re z0, Im z0, K) (M, 2M + 1), by the variational
        equations in the time τ = t/T: Ẋ = T (∂F/∂z X + ∂F/∂z̄ X̄) (+ T ∂F/∂K in the last column)."""
        key = x.tobytes()
        if key in self.cache:
            return self.cache[key]
        reduced, m = self.reduced, self.reduced.m
        if not (np.all(np.isfinite(x)) and x[2 * m] <= np.log(self.max_period) + 1):
            return np.full((ORBIT_SAMPLES, m), np.nan), np.full((m, 2 * m + 1), np.nan)
        period, k = np.exp(x[2 * m]), x[-1]
        a, nu = reduced.coefficients(np.asarray(k))
        y0 = np.zeros((m, 2 * m + 2), dtype=complex)
        y0[:, 0] = _amplitudes(x, m)
        y0[:, 1:m + 1] = np.eye(m)
        y0[:, m + 1:2 * m + 1] = 1j * np.eye(m)
        constants = (float(period), complex(a), nu.astype(complex), reduced.p, reduced.a1, reduced.h0)

        def rhs(y: np.ndarray, systems: np.ndarray, out: np.ndarray) -> None:
            _variational_field(y, *constants, out)

        run = evolve_batch(rhs, np.stack([y0.real, y0.imag])[None], np.linspace(0.0, 1.0, ORBIT_SAMPLES),
                           rtol=ORBIT_RTOL, atol=ORBIT_ATOL)
        y = run.y[0, :, 0] + 1j * run.y[0, :, 1]
        result = (y[..., 0], y[-1, :, 1:]) if run.status[0] == FINISHED else \
            (np.full((ORBIT_SAMPLES, m), np.nan), np.full((m, 2 * m + 1), np.nan))
        self.cache = {key: result}
        return result

    def residual(self, x: np.ndarray, base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        reduced, m = self.reduced, self.reduced.m
        zs, sensitivity = self.flow(x)
        if not np.all(np.isfinite(sensitivity)):
            return np.full(2 * m + 2, np.nan), np.full((2 * m + 2, 2 * m + 3), np.nan)
        z0, period, phi = _amplitudes(x, m), np.exp(x[2 * m]), x[2 * m + 1]
        rotation = np.exp(1j * phi)
        jac = np.zeros((2 * m + 2, 2 * m + 3))
        jac[:2 * m, :2 * m] = _real(sensitivity[:, :2 * m].T).T - _realify(rotation * np.eye(m), np.zeros((m, m)))
        jac[:2 * m, 2 * m] = period * _real(reduced.field(zs[-1], x[-1]))
        jac[:2 * m, 2 * m + 1] = _real(-1j * rotation * z0)
        jac[:2 * m, -1] = _real(sensitivity[:, -1])
        normal, rotate = self.phase_directions(base)
        jac[2 * m, :2 * m], jac[2 * m + 1, :2 * m] = normal, rotate
        offset = x[:2 * m] - base[:2 * m]
        res = np.concatenate([_real(zs[-1] - rotation * z0), [normal @ offset, rotate @ offset]])
        return res, jac

    def phase_directions(self, base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """f_⊥(z_ref) (the flow without its rotation part) and i z_ref, in real coordinates."""
        m = self.reduced.m
        z_ref = _amplitudes(base, m)
        flow, rotate = _real(self.reduced.field(z_ref, base[-1])), _real(1j * z_ref)
        return flow - (flow @ rotate) / (rotate @ rotate) * rotate, rotate

    def tolerance(self, x: np.ndarray) -> float:
        return ORBIT_TOLERANCE

    def spread(self, x: np.ndarray) -> float:
        """max r - min r over the orbit (on the samples)."""
        return float(np.ptp(np.abs(self.flow(x)[0] @ self.reduced.p)))

    def step_cap(self, x: np.ndarray) -> float:
        """Half the spread of r: a branch shrinking onto a Hopf point ends there instead of passing through it."""
        return 0.5 * self.spread(x)

    def ended(self, x: np.ndarray) -> str:
        if self.spread(x) < ORBIT_END_SPREAD:
            return "hopf"
        return "period" if np.exp(x[2 * self.reduced.m]) > self.max_period else ""

    def statistics(self, x: np.ndarray) -> tuple[float, float, float]:
        """r_min, r_max over the orbit (refined extrema of r² on the periodic samples) and max |μ| of its
        nontrivial Floquet multipliers."""
        reduced, m = self.reduced, self.reduced.m
        zs, sensitivity = self.flow(x)
        r2 = np.abs(zs[:-1] @ reduced.p) ** 2
        wrapped = np.concatenate([r2[-1:], r2, r2[:1]])[None, :]
        i = np.arange(1, r2.size + 1)
        _, top = _parabola(wrapped, np.array([i[np.argmax(r2)]]), np.zeros(1, dtype=int))
        _, bottom = _parabola(wrapped, np.array([i[np.argmin(r2)]]), np.zeros(1, dtype=int))
        monodromy = _realify(np.exp(-1j * x[2 * m + 1]) * np.eye(m), np.zeros((m, m))) @ \
            _real(sensitivity[:, :2 * m].T).T
        z0 = _amplitudes(x, m)
        trivial = np.stack([_real(reduced.field(z0, x[-1])), _real(1j * z0)], axis=-1)
        basis = _complement(trivial)
        multipliers = np.linalg.eigvals(basis.T @ monodromy @ basis)
        largest = float(np.max(np.abs(multipliers))) if multipliers.size else 0.0
        return float(np.sqrt(max(bottom[0], 0.0))), float(np.sqrt(top[0])), largest


@numba.njit(cache=True)
def _variational_field(y, period, a, nu, p, a1, h0, out):  # pragma: no cover - compiled
    """T F(z) into column 0 and T (∂F/∂z X + ∂F/∂z̄ X̄) (+ T ∂F/∂K in the last column) into the others, for
    ``y`` (S, 2, M, C): real and imaginary parts of z and of the C - 1 columns X."""
    n_sys, m, c = y.shape[0], y.shape[2], y.shape[3]
    pu = np.empty(c, dtype=np.complex128)
    for s in range(n_sys):
        for col in range(c):
            pu[col] = 0.0
            for j in range(m):
                pu[col] += p[j] * complex(y[s, 0, j, col], y[s, 1, j, col])
        az = a * pu[0]
        a1z = a1 * pu[0]
        for j in range(m):
            z = complex(y[s, 0, j, 0], y[s, 1, j, 0])
            zz = z * z
            f = 1j * period * (az + nu[j] * z + az.conjugate() * zz)
            out[s, 0, j, 0], out[s, 1, j, 0] = f.real, f.imag
            diagonal = nu[j] + 2 * az.conjugate() * z
            for col in range(1, c):
                d = 1j * period * (a * pu[col] + diagonal * complex(y[s, 0, j, col], y[s, 1, j, col]) +
                                   a.conjugate() * zz * pu[col].conjugate())
                if col == c - 1:
                    d += 1j * period * (a1z + h0 * z + a1z.conjugate() * zz)
                out[s, 0, j, col], out[s, 1, j, col] = d.real, d.imag


def _hopf_start(reduced: _Reduced, x: np.ndarray) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """The first orbit of the branch born at the Hopf point x of a stationary branch: with the critical
    eigenvector u of Qᵀ J Q (eigenvalue iω, scaled so that p·u_z is real > 0), z(t) = e^{iΩt}(w + ε Re(u e^{iωt}))
    is a relative periodic orbit to first order in ε, T = 2π/ω, φ = ΩT; ε makes the spread of r
    5 :data:`ORBIT_END_SPREAD`. Returns the guess (None if the mode leaves r unchanged), the amplitude row that
    fixes ε for Newton (K free), and the direction of growing ε."""
    m = reduced.m
    w, omega = _amplitudes(x, m), x[2 * m]
    _, jac = _stationary_residual(reduced, x)
    basis = _complement(_real(1j * w)[:, None])
    values, vectors = np.linalg.eig(basis.T @ jac[:2 * m, :2 * m] @ basis)
    critical = np.argmin(np.where(values.imag > 0, np.abs(values.real), np.inf))
    u = basis @ vectors[:, critical]
    along_r = reduced.p @ u[:m]
    if abs(along_r) < 1e-6:
        return None, np.zeros(0), np.zeros(0)
    u = u * np.conj(along_r) / abs(along_r)
    epsilon = 2.5 * ORBIT_END_SPREAD / abs(along_r)
    mode = u.real / np.linalg.norm(u.real)
    period = 2 * np.pi / values[critical].imag
    z0 = w + epsilon * np.linalg.norm(u.real) * (mode[:m] + 1j * mode[m:])
    guess = np.concatenate([_real(z0), [np.log(period), (omega * period) % (2 * np.pi), x[-1]]])
    row = np.concatenate([mode, np.zeros(3)])
    return guess, row, row


def _orbit_branches(reduced: _Reduced, k_range: tuple[float, float], hopf_points: list[np.ndarray],
                    seeds: list[tuple[np.ndarray, float, float, float]], max_period: float, h_max: float
                    ) -> tuple[list[np.ndarray], list[np.ndarray], list[tuple[float, int]]]:
    """Shooting continuation from the Hopf points of the stationary branches (one way: growing orbits), then from
    each survey wave on no branch found before (both ways): the branches' points (P, 2M + 3), their (r_min,
    r_max, max |μ|) (P, 3), and the folds of orbits (coupling, orbit branch)."""
    m = reduced.m
    branches: list[np.ndarray] = []
    statistics: list[np.ndarray] = []
    folds: list[tuple[float, int]] = []
    border = np.zeros(2 * m + 3)
    border[-1] = 1.0
    starts = [_hopf_start(reduced, x) for x in hopf_points] + \
        [(np.concatenate([_real(z0), [np.log(period), phi, k]]), border, None)
         for z0, period, phi, k in sorted(seeds, key=lambda seed: seed[3])]
    for guess, row, direction in starts:
        if guess is None or any(_orbit_known(points, guess[-1], np.exp(guess[2 * m])) for points in branches):
            continue
        curve = _Orbits(reduced, k_range, max_period)
        x0, ok, _ = _correct(curve, guess, row, guess)
        if not ok or (direction is not None and any(_orbit_known(points, x0[-1], np.exp(x0[2 * m]))
                                                    for points in branches)):
            continue
        t0 = _null_tangent(curve, x0)
        halves = []
        for sign in (1, -1) if direction is None else (np.sign(direction @ t0),):
            rows: list[tuple[float, float, float]] = [curve.statistics(x0)]
            half = _trace(curve, x0, sign * t0, 0.1 * h_max, h_max, ORBIT_POINTS,
                          on_point=lambda x, rows=rows, curve=curve: rows.append(curve.statistics(x)))
            for i in np.flatnonzero(half.t[:-1, -1] * half.t[1:, -1] < 0):
                fold = _locate(curve, half, int(i), lambda x, t: t[-1])
                if fold is not None:
                    folds.append((float(fold[-1]), len(branches) + 1))
            halves.append((half.x, np.array(rows)))
            if half.reason == "loop":  # a closed branch
                break
        points, values = halves[0]
        if len(halves) == 2:  # the backward half, reversed, before the forward one
            points = np.concatenate([halves[1][0][:0:-1], points])
            values = np.concatenate([halves[1][1][:0:-1], values])
        branches.append(points)
        statistics.append(values)
    return branches, statistics, folds


def _orbit_known(points: np.ndarray, k: float, period: float) -> bool:
    """A wave at K of period T lies on an orbit branch if the branch's period interpolated to K is within 1e-3."""
    above = points[:, -1] >= k
    for i in np.flatnonzero(above[:-1] != above[1:]):
        theta = (k - points[i, -1]) / (points[i + 1, -1] - points[i, -1])
        if abs(np.exp(points[i, -3] + theta * (points[i + 1, -3] - points[i, -3])) - period) <= 1e-3 * period:
            return True
    return False


# ---------------------------------------------------------------------------------------------- the study
def kuramoto_branches(
    model: Kuramoto,
    couplings: Sequence[float] | np.ndarray,
    *,
    periodic: bool = True,
    t_transient: float | None = None,
    t_record: float | None = None,
    starts: Sequence[Any] | np.ndarray | None = None,
    max_step: float | None = None,
    max_period: float | None = None,
    rtol: float = 1e-9,
    atol: float = 1e-11,
) -> xr.Dataset:
    r"""Every stationary branch of a Kuramoto model on the Ott–Antonsen manifold over a range of couplings, their
    stability and bifurcations, incoherence, and the periodic states (module docstring for the method).

    Parameters
    ----------
    model : Kuramoto
        One harmonic, σ = 0, a law whose poles are all Lorentzian (Im ζ_m > 0: ``scipy.stats.cauchy``,
        :class:`meanfield.LorentzianMixture`, mixtures of these); its coupling is ignored, its law, phase lag
        and interaction are used.
    couplings : array_like
        Couplings K ≥ 0, at least two distinct: the range [min, max] of the continuation, and the couplings of
        the survey (the long integrations) and of the incoherence branch.
    periodic : bool
        Continue the periodic states the survey finds by Newton shooting (the costly part); the survey's own
        measurement of them (``wave_*``) is always returned.
    t_transient, t_record : float, optional
        The survey integrates every start at every coupling over t_transient, then records r(t) over t_record
        (:data:`RECORD_SAMPLES` samples); defaults 200/γ_min and 100/γ_min, γ_min the smallest half-width.
    starts : array_like, optional
        Survey starts: complex z₀ (at every pole) or rows of M amplitudes, |z| < 1; default
        :data:`DEFAULT_STARTS` and three random starts (seed 0).
    max_step : float, optional
        Largest arclength step in (Re w, Im w, Ω, K) (orbits: in (Re z0, Im z0, ln T, φ, K)); default
        (max K - min K)/100.
    max_period : float, optional
        An orbit branch ends where its period exceeds this; default 3 times the longest of the periods of r(t)
        that the survey measured and of the periods 2π/ω at the Hopf points of the stationary branches.
    rtol, atol : float
        Tolerances of the survey's integration (its relative equilibria are then polished by Newton to
        :data:`STATIONARY_TOLERANCE`; the shooting uses :data:`ORBIT_RTOL`, :data:`ORBIT_ATOL`).

    Returns
    -------
    xarray.Dataset
        Dimension ``point`` (the stationary states, branch after branch, point after point along each):
        ``point_coupling`` K, ``r`` (= Re Z), ``frequency`` Ω of the rotating frame (NaN for incoherence),
        ``stable`` (1: every eigenvalue but the rotation mode has Re < 0), ``max_growth_rate`` (the largest such
        real part), ``branch`` (0: incoherence at each K of ``couplings``; 1, 2, …: the continued branches),
        ``amplitude_real``/``amplitude_imag`` (point, pole) of w_m (0 for incoherence), with coords
        ``pole_real``, ``pole_imag``, ``pole_weight``. Dimensions (coupling, wave), coordinate ``coupling`` =
        the sorted distinct ``couplings``: the survey's distinct oscillating states ``wave_r_min``,
        ``wave_r_max``, ``wave_period`` (of r(t); NaN where r is not found periodic, and everywhere where there
        is no oscillation; wave has size ≥ 1); (coupling, start) ``survey_outcome`` (0 incoherence, 1 a
        relative equilibrium, 2 an oscillation, -1 undecided) with (start, pole) ``start_real``/``start_imag``.
        With ``periodic``, dimension ``orbit_point`` (orbit branch after orbit branch): ``orbit_coupling``,
        ``orbit_period`` T, ``orbit_r_min``, ``orbit_r_max``, ``orbit_max_multiplier`` (largest nontrivial
        |μ|), ``orbit_stable`` (1: all nontrivial |μ| < 1), ``orbit_branch`` (1, 2, …). attrs (arrays, possibly
        empty): ``fold_couplings``/``fold_branches``, ``hopf_couplings``/``hopf_branches``/``hopf_frequencies``
        (|Im λ| at the crossing), ``branch_point_couplings``/``branch_point_branches`` (once per branch through
        the point), ``orbit_fold_couplings``/``orbit_fold_branches``, ``incoherence_crossings``/
        ``incoherence_crossing_frequencies`` (Ω = Im λ)/``incoherence_crossing_directions`` (+1: an eigenvalue
        becomes unstable as K grows), ``incoherence_loses_stability_at`` (the couplings, each once, where
        incoherence turns from stable to unstable: a conjugate pair crossing at ±Ω counts once); the model's
        attrs but its coupling; the method's parameters.

    Raises
    ------
    ValueError
        A model outside the reduction (:func:`meanfield.reduced.reduced_form`: noise, several harmonics, a law
        without poles), a law with atoms (real poles), bad couplings, starts, times or tolerances.

    Examples
    --------
    >>> import numpy as np, scipy.stats, meanfield as mf
    >>> model = mf.Kuramoto(frequencies=scipy.stats.cauchy(0, 0.5))
    >>> ds = mf.kuramoto_branches(model, [0.5, 3.0], periodic=False)
    >>> round(float(ds.attrs["incoherence_loses_stability_at"][0]), 12)  # K_c = 2γ
    1.0
    >>> # the partially locked branch is r = √(1 - 2γ/K) (γ = 0.5), stable at every point
    >>> branch = ds.sel(point=ds.branch == 1)
    >>> bool(np.allclose(branch.r, np.sqrt(1 - 1.0 / branch.point_coupling), atol=1e-6)), bool(branch.stable.all())
    (True, True)
    """
    reduced = _reduced(model)
    if np.any(reduced.zeta.imag <= 0):
        raise ValueError(f"kuramoto_branches needs a law whose poles are all Lorentzian (Im ζ > 0), got "
                         f"{model.attrs['frequencies']}: atoms make the stationary states of the reduction "
                         f"degenerate (locked amplitudes on |z| = 1)")
    ks = np.asarray(couplings, dtype=float)
    if ks.ndim != 1 or ks.size < 2 or not np.all(np.isfinite(ks)) or np.any(ks < 0) or np.ptp(ks) == 0:
        raise ValueError(f"couplings must be a 1-D sequence of finite K >= 0 with at least two distinct values, "
                         f"got {couplings!r}")
    ks = np.unique(ks)
    k_range = (float(ks[0]), float(ks[-1]))
    gamma = float(np.min(reduced.zeta.imag))
    t_transient = check_positive("t_transient", 200 / gamma if t_transient is None else t_transient)
    t_record = check_positive("t_record", 100 / gamma if t_record is None else t_record)
    h_max = check_positive("max_step", np.ptp(ks) / 100 if max_step is None else max_step)
    rtol, atol = check_rtol("rtol", rtol), check_positive("atol", atol)
    start_values = _default_starts(reduced.m) if starts is None else _read_starts(starts, reduced.m)

    crossings = _incoherence_crossings(reduced, *k_range)
    survey = _survey(reduced, ks, start_values, t_transient, t_record, rtol, atol)
    branches, events = _stationary_branches(reduced, k_range, crossings, survey.equilibria, h_max)
    ds = _stationary_dataset(reduced, ks, branches)
    ds["wave_r_min"] = (("coupling", "wave"), survey.wave_r_min, {"long_name": "min of r(t) of an oscillating "
                                                                               "state of the survey"})
    ds["wave_r_max"] = (("coupling", "wave"), survey.wave_r_max, {"long_name": "max of r(t)"})
    ds["wave_period"] = (("coupling", "wave"), survey.wave_period, {"long_name": "period of r(t) (NaN: not "
                                                                                 "periodic or none)"})
    ds["survey_outcome"] = (("coupling", "start"), survey.outcome,
                            {"long_name": "where a survey run ends", "flag_values": np.array([-1, 0, 1, 2]),
                             "flag_meanings": "undecided incoherence relative_equilibrium oscillation"})
    ds["start_real"] = (("start", "pole"), start_values.real, {"long_name": "Re z_m(0) of a survey start"})
    ds["start_imag"] = (("start", "pole"), start_values.imag, {"long_name": "Im z_m(0) of a survey start"})
    ds = ds.assign_coords(coupling=("coupling", ks, {"long_name": "coupling K", "units": "1"}))
    orbit_folds: list[tuple[float, int]] = []
    if max_period is None:
        periods = [seed[1] for seed in survey.seeds] + [2 * np.pi / hopf[2] for hopf in events.hopf]
        max_period = 3 * max(periods, default=np.nan)
    else:
        max_period = check_positive("max_period", max_period)
    if periodic:
        orbits, stats, orbit_folds = _orbit_branches(reduced, k_range, [hopf[3] for hopf in events.hopf],
                                                     survey.seeds, max_period, h_max)
        ds = ds.merge(_orbit_dataset(reduced, orbits, stats))
    below = _incoherence_spectrum(reduced, crossings.k * (1 - 1e-9) - 1e-12)
    loses = np.sort(crossings.k[(crossings.direction > 0) & (below[:, 0].real < 0)])
    loses = loses[np.concatenate([[True], np.diff(loses) > 1e-10 * (1 + loses[1:])])] if loses.size else loses
    ds.attrs.update({
        **{name: value for name, value in model.attrs.items() if name != "coupling"},
        "study": "kuramoto_branches",
        "fold_couplings": np.array([f[0] for f in events.folds]),
        "fold_branches": np.array([f[1] for f in events.folds], dtype=np.int64),
        "hopf_couplings": np.array([h[0] for h in events.hopf]),
        "hopf_branches": np.array([h[1] for h in events.hopf], dtype=np.int64),
        "hopf_frequencies": np.array([h[2] for h in events.hopf]),
        "branch_point_couplings": np.array([b[0] for b in events.branch_points]),
        "branch_point_branches": np.array([b[1] for b in events.branch_points], dtype=np.int64),
        "orbit_fold_couplings": np.array([f[0] for f in orbit_folds]),
        "orbit_fold_branches": np.array([f[1] for f in orbit_folds], dtype=np.int64),
        "incoherence_crossings": crossings.k,
        "incoherence_crossing_frequencies": crossings.omega,
        "incoherence_crossing_directions": crossings.direction.astype(np.int64),
        "incoherence_loses_stability_at": loses,
        "t_transient": t_transient, "t_record": t_record, "max_step": h_max, "max_period": max_period,
        "rtol": rtol, "atol": atol, "periodic": int(bool(periodic)), "meanfield_version": __version__,
    })
    return ds


def _read_starts(starts: Any, m: int) -> np.ndarray:
    values = np.asarray(starts, dtype=complex)
    if values.ndim == 1:
        values = np.repeat(values[:, None], m, axis=1)
    if values.ndim != 2 or values.shape[1] != m or values.shape[0] == 0 or not np.all(np.isfinite(values)) or \
            np.any(np.abs(values) >= 1):
        raise ValueError(f"starts must be complex z with |z| < 1 (one per start, or rows of {m} amplitudes), got "
                         f"{starts!r}")
    return values


def _stationary_dataset(reduced: _Reduced, ks: np.ndarray, branches: list[np.ndarray]) -> xr.Dataset:
    """Incoherence at every K of ``ks`` (branch 0), then each continued branch's points."""
    m = reduced.m
    rates = _incoherence_spectrum(reduced, ks)
    points = np.concatenate(branches) if branches else np.zeros((0, 2 * m + 2))
    spectra = _stationary_spectrum(reduced, points) if points.shape[0] else np.zeros((0, 2 * m - 1))
    growth = np.concatenate([rates[:, 0].real, spectra.real.max(axis=-1, initial=-np.inf)])
    w = np.concatenate([np.zeros((ks.size, m), dtype=complex), _amplitudes(points, m)])
    data = {
        "point_coupling": ("point", np.concatenate([ks, points[:, -1]]), {"long_name": "coupling K",
                                                                            "units": "1"}),
        "r": ("point", np.real(w @ reduced.p), {"long_name": "order parameter r = Re Z (Im Z = 0)"}),
        "frequency": ("point", np.concatenate([np.full(ks.size, np.nan), points[:, 2 * m]]),
                      {"long_name": "frequency Ω of the rotating frame, z_m(t) = w_m e^{iΩt}"}),
        "stable": ("point", (growth < 0).astype(np.int8),
                   {"long_name": "1 if every eigenvalue but the rotation mode has a negative real part"}),
        "max_growth_rate": ("point", growth, {"long_name": "largest real part of the eigenvalues (without the "
                                                           "rotation mode)"}),
        "branch": ("point", np.concatenate([np.zeros(ks.size, dtype=np.int64)] +
                                           [np.full(b.shape[0], i + 1, dtype=np.int64)
                                            for i, b in enumerate(branches)]),
                   {"long_name": "branch id (0: incoherence)"}),
        "amplitude_real": (("point", "pole"), w.real, {"long_name": "Re w_m"}),
        "amplitude_imag": (("point", "pole"), w.imag, {"long_name": "Im w_m"}),
    }
    coords = {"pole_real": ("pole", reduced.zeta.real, {"long_name": "Re ζ_m"}),
              "pole_imag": ("pole", reduced.zeta.imag, {"long_name": "Im ζ_m"}),
              "pole_weight": ("pole", reduced.p, {"long_name": "weight p_m"})}
    return xr.Dataset(data, coords=coords)


def _orbit_dataset(reduced: _Reduced, orbits: list[np.ndarray], stats: list[np.ndarray]) -> xr.Dataset:
    m = reduced.m
    points = np.concatenate(orbits) if orbits else np.zeros((0, 2 * m + 3))
    values = np.concatenate(stats) if stats else np.zeros((0, 3))
    ids = np.concatenate([np.full(o.shape[0], i + 1, dtype=np.int64) for i, o in enumerate(orbits)]) if orbits \
        else np.zeros(0, dtype=np.int64)
    return xr.Dataset({
        "orbit_coupling": ("orbit_point", points[:, -1], {"long_name": "coupling K", "units": "1"}),
        "orbit_period": ("orbit_point", np.exp(points[:, 2 * m]), {"long_name": "period T: z(t + T) = e^{iφ} z(t)"}),
        "orbit_r_min": ("orbit_point", values[:, 0], {"long_name": "min of r(t) over the orbit"}),
        "orbit_r_max": ("orbit_point", values[:, 1], {"long_name": "max of r(t) over the orbit"}),
        "orbit_max_multiplier": ("orbit_point", values[:, 2], {"long_name": "largest nontrivial |Floquet "
                                                                            "multiplier|"}),
        "orbit_stable": ("orbit_point", (values[:, 2] < 1).astype(np.int8),
                         {"long_name": "1 if every nontrivial Floquet multiplier has |μ| < 1"}),
        "orbit_branch": ("orbit_point", ids, {"long_name": "orbit branch id"}),
    })


# ---------------------------------------------------------------------------------------------- bimodal law
def bimodal_boundaries(separations: Sequence[float] | np.ndarray, width: float) -> xr.Dataset:
    r"""Bifurcation couplings of the symmetric bimodal Lorentzian ½[L_Δ(ω - ω₀) + L_Δ(ω + ω₀)] at α = 0, sin
    coupling (Martens et al., PRE 79, 026204 (2009), in this package's normalisation).

    Incoherence: λ = -Δ + K/4 ± √(K²/16 - ω₀²); it loses stability at K = 2(Δ² + ω₀²)/Δ through a real
    eigenvalue (pitchfork of stationary states) for ω₀ ≤ Δ, at K = 4Δ through a complex pair (Hopf: standing
    waves) for ω₀ > Δ. The symmetric stationary states z₋ = conj z₊, |z₊|² = u, lie on
    K(u) = 2Δ/(1 - u) + 2ω₀²(1 - u)/(Δ(1 + u)²) with

        dK/du = 2Δ/(1 - u)² - (2ω₀²/Δ)(3 - u)/(1 + u)³ ∝ Δ²(1 + u)³ - ω₀²(3 - u)(1 - u)²,

    whose unique root u* in (0, 1) for ω₀ > Δ/√3 ((3 - u)(1 - u)²/(1 + u)³ decreases from 3 to 0) is the fold
    (saddle-node) of stationary states at K(u*), here by bisection to machine precision (then K(u*), a minimum
    of K(u), is exact to rounding). The pitchfork is supercritical for ω₀ < Δ/√3 and subcritical above
    (tricritical point ω₀ = Δ/√3, K = 8Δ/3, where u* → 0); the Hopf and pitchfork lines meet at the
    Bogdanov–Takens point ω₀ = Δ, K = 4Δ (a double zero eigenvalue).

    Parameters
    ----------
    separations : array_like
        ω₀ ≥ 0 (the dimension ``separation``).
    width : float
        Δ > 0.

    Returns
    -------
    xarray.Dataset
        ``incoherence_boundary`` K at which incoherence loses stability, ``boundary_kind`` (0 pitchfork, 1 Hopf),
        ``saddle_node`` K at the fold (NaN for ω₀ ≤ Δ/√3), ``saddle_node_u`` u* (NaN likewise) over
        ``separation``; attrs ``width``, ``tricritical_separation``, ``tricritical_coupling``,
        ``bogdanov_takens_separation``, ``bogdanov_takens_coupling``.

    Raises
    ------
    ValueError
        A negative or non-finite separation, a width ≤ 0.

    Examples
    --------
    >>> import numpy as np, meanfield as mf
    >>> ds = mf.bimodal_boundaries([0.5, 2.0], 1.0)
    >>> # ω₀ = 0.5 ≤ Δ: pitchfork at 2(Δ² + ω₀²)/Δ = 2.5; ω₀ = 2 > Δ: Hopf at 4Δ = 4
    >>> ds.incoherence_boundary.values.tolist(), ds.boundary_kind.values.tolist()
    ([2.5, 4.0], [0, 1])
    >>> # the fold exists only above ω₀ = Δ/√3; at ω₀ = 2, u* is the root of Δ²(1 + u)³ = ω₀²(3 - u)(1 - u)²
    >>> u = float(ds.saddle_node_u.sel(separation=2.0))
    >>> bool(np.isnan(ds.saddle_node_u.sel(separation=0.5))), bool(np.isclose((1 + u) ** 3, 4 * (3 - u) * (1 - u) ** 2))
    (True, True)
    >>> # and K(u*) = 2Δ/(1 - u*) + 2ω₀²(1 - u*)/(Δ(1 + u*)²)
    >>> bool(np.isclose(float(ds.saddle_node.sel(separation=2.0)), 2 / (1 - u) + 8 * (1 - u) / (1 + u) ** 2))
    True
    """
    delta = check_positive("width", width)
    w0 = np.atleast_1d(np.asarray(separations, dtype=float))
    if w0.ndim != 1 or w0.size == 0 or not np.all(np.isfinite(w0)) or np.any(w0 < 0):
        raise ValueError(f"separations must be a non-empty 1-D sequence of finite ω₀ >= 0, got {separations!r}")
    hopf = w0 > delta
    boundary = np.where(hopf, 4 * delta, 2 * (delta ** 2 + w0 ** 2) / delta)
    fold = w0 > delta / np.sqrt(3)
    lo, hi = np.zeros(w0.size), np.ones(w0.size)
    for _ in range(64):  # bisection on Δ²(1 + u)³ - ω₀²(3 - u)(1 - u)², negative at 0 and positive at 1
        u = 0.5 * (lo + hi)
        negative = delta ** 2 * (1 + u) ** 3 < w0 ** 2 * (3 - u) * (1 - u) ** 2
        lo, hi = np.where(negative, u, lo), np.where(negative, hi, u)
    u = np.where(fold, 0.5 * (lo + hi), np.nan)
    saddle = 2 * delta / (1 - u) + 2 * w0 ** 2 * (1 - u) / (delta * (1 + u) ** 2)
    return xr.Dataset(
        {"incoherence_boundary": ("separation", boundary, {"long_name": "K at which incoherence loses stability"}),
         "boundary_kind": ("separation", hopf.astype(np.int8),
                           {"long_name": "how incoherence loses stability", "flag_values": np.array([0, 1]),
                            "flag_meanings": "pitchfork hopf"}),
         "saddle_node": ("separation", saddle, {"long_name": "K at the fold of the symmetric stationary states"}),
         "saddle_node_u": ("separation", u, {"long_name": "u = |z_+|² at the fold"})},
        coords={"separation": ("separation", w0, {"long_name": "separation ω₀ of the peaks from 0"})},
        attrs={"width": delta, "tricritical_separation": delta / np.sqrt(3), "tricritical_coupling": 8 * delta / 3,
               "bogdanov_takens_separation": delta, "bogdanov_takens_coupling": 4 * delta,
               "study": "bimodal_boundaries", "meanfield_version": __version__})

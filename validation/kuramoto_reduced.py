"""The Ott–Antonsen engine against theory and particles: Sakaguchi, the bimodal Lorentzian, bistability.

Model: θ̇_i = ω_i + (K/n) Σ_j sin(θ_j - θ_i - α), σ = 0 (:mod:`meanfield.reduced._ott_antonsen`).

1. **Sakaguchi–Kuramoto**, Lorentzian γ = 0.5 at three (K, α): r∞ and the locked frequency Ω from the engine
   (t = 80, rtol 1e-10) against r² = 1 - 2γ/(K cos α), Ω = -(K/2) sin α (1 + r²) within 1e-8; from particles
   (n = 20 000 at the quantiles, iid uniform phases, mean over t ∈ [60, 80]) within 3 n^{-1/2} (r) and
   :data:`OMEGA_TOLERANCE` (Ω, the slope of arg Z over the window).
2. **Bimodal boundaries** (peaks ±ω₀, half-width Δ = 1): the coupling where incoherence loses stability, found
   from the engine itself — the growth of tiny starts integrated by it gives its linearisation
   Φ(T) = e^{AT}, the largest Re log(eig Φ)/T its rate, root in K by brentq — against 2(Δ² + ω₀²)/Δ (ω₀ ≤ Δ,
   pitchfork) and 4Δ (ω₀ > Δ, Hopf) within 1e-6.
3. **Bistability** (ω₀ = 0.8, Δ = 1; Δ/√3 < ω₀ < Δ: the pitchfork is subcritical), at K halfway between the
   saddle-node and the pitchfork: the engine from z₀ = 0.01 stays incoherent (r < 1e-6) and from z₀ = 0.9 lands
   on the upper stationary branch of :func:`meanfield.kuramoto_branches` (1e-8); particles (n = 50 000) from iid
   uniform phases stay near incoherence (r < :data:`NEAR_INCOHERENT`) and from θ = 0 land on the upper branch
   within 3 n^{-1/2}.
4. **Branches**: the saddle-node of :func:`meanfield.bimodal_boundaries` equals the fold of the stationary
   branch of :func:`meanfield.kuramoto_branches` (1e-8).

Writes ``kuramoto_reduced.txt`` (the tables), ``kuramoto_reduced.png`` (the bimodal bifurcation diagram with
branches, engine and particle points, and the (ω₀, K) diagram of :func:`meanfield.bimodal_states`) and the
NetCDF of the branches and states to ``--output-dir``; exit 1 on any mismatch.

Run:  python validation/kuramoto_reduced.py [--output-dir DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import scipy.stats
from matplotlib.figure import Figure
from scipy.optimize import brentq

import meanfield as mf
from meanfield.reduced import evolve_amplitudes, reduced_form

GAMMA = 0.5
SAKAGUCHI = [(3.0, 0.5), (2.0, 0.3), (4.0, 1.0)]
N_SAKAGUCHI, N_BIMODAL = 20_000, 50_000
T_FINAL, WINDOW = 80.0, 20.0
#: |Ω_particles - Ω| allowed: the slope of arg Z over the window carries the finite-n wander of Z's phase
OMEGA_TOLERANCE = 0.01
#: r of the particles from uniform phases in the bistable range: finite-n incoherence, ~n^{-1/2} enhanced near K_c
NEAR_INCOHERENT = 0.05
SEPARATIONS = [0.3, 0.6, 0.9, 1.2, 1.8]
WIDTH = 1.0
BISTABLE_SEPARATION = 0.8


def locked_state(times: np.ndarray, z: np.ndarray) -> tuple[float, float]:
    """(mean r, slope of unwrapped arg Z) over the final window of a complex Z(t)."""
    late = times >= times[-1] - WINDOW
    phase = np.unwrap(np.angle(z[late]))
    slope = np.polyfit(times[late], phase, 1)[0]
    return float(np.mean(np.abs(z[late]))), float(slope)


def sakaguchi(failures: list[str]) -> list[str]:
    lines = [f"1. Sakaguchi, Lorentzian gamma = {GAMMA}: engine and particles (n = {N_SAKAGUCHI}) against theory",
             f"{'K':>5} {'alpha':>6} {'r theory':>10} {'r engine-th':>12} {'r part-th':>10} {'Omega th':>9} "
             f"{'Om eng-th':>10} {'Om part-th':>11} {'part s':>7}"]
    times = np.linspace(0, T_FINAL, 161)
    law = scipy.stats.cauchy(0, GAMMA)
    theta0 = np.random.default_rng(0).uniform(0, 2 * np.pi, N_SAKAGUCHI)
    for k, alpha in SAKAGUCHI:
        model = mf.Kuramoto.sakaguchi(k, alpha, law)
        r_th = float(mf.kuramoto_theory(k, law, phase_lag=alpha))
        om_th = float(mf.kuramoto_locked_frequency(k, law, alpha))
        reduced = mf.ott_antonsen(model, times)
        z_red = reduced.order_parameter.values * np.exp(1j * reduced.order_parameter_phase.values)
        r_red, om_red = locked_state(times, z_red)
        start = time.perf_counter()
        particles = mf.simulate(model, theta0, times, rtol=1e-3, atol=1e-6)
        wall = time.perf_counter() - start
        z_part = np.mean(np.exp(1j * particles.positions.values), axis=-1)
        r_part, om_part = locked_state(times, z_part)
        lines.append(f"{k:5.2f} {alpha:6.2f} {r_th:10.6f} {r_red - r_th:12.1e} {r_part - r_th:10.1e} {om_th:9.5f} "
                     f"{om_red - om_th:10.1e} {om_part - om_th:11.1e} {wall:7.1f}")
        if abs(r_red - r_th) > 1e-8 or abs(om_red - om_th) > 1e-8:
            failures.append(f"Sakaguchi K = {k}, alpha = {alpha}: engine r - theory {r_red - r_th:.2e}, "
                            f"Omega - theory {om_red - om_th:.2e} (allowed 1e-8)")
        if abs(r_part - r_th) > 3 / np.sqrt(N_SAKAGUCHI) or abs(om_part - om_th) > OMEGA_TOLERANCE:
            failures.append(f"Sakaguchi K = {k}, alpha = {alpha}: particles r - theory {r_part - r_th:.2e} (allowed "
                            f"{3 / np.sqrt(N_SAKAGUCHI):.3f}), Omega - theory {om_part - om_th:.2e} "
                            f"(allowed {OMEGA_TOLERANCE})")
    return lines


def engine_rate(separation: float, coupling: float, horizon: float = 20.0) -> float:
    """The largest growth rate of incoherence measured by integrating the engine from tiny starts."""
    a, nu, weights = reduced_form(mf.Kuramoto(coupling, mf.bimodal_lorentzian(separation, WIDTH)))
    epsilon = 1e-10
    # one tiny start per pole, the columns of Φ(0) = ε I; atol relative to ε (components that stay at round-off
    # must not set the step)
    starts = epsilon * np.eye(nu.size, dtype=complex)
    run = evolve_amplitudes(np.full(nu.size, a), np.broadcast_to(nu, (nu.size, nu.size)), weights, starts,
                            np.array([0.0, horizon]), rtol=1e-12, atol=1e-12 * epsilon)
    monodromy = run.z[:, -1, :].T / epsilon  # Φ(T) = e^{AT} of the linearisation (cubic terms ~ε² relative)
    return float(np.max(np.log(np.abs(np.linalg.eigvals(monodromy)))) / horizon)


def boundaries(failures: list[str]) -> tuple[list[str], object]:
    lines = ["", f"2. Bimodal Lorentzian (Delta = {WIDTH}): incoherence boundary from the engine's growth rates",
             f"{'omega0':>7} {'kind':>10} {'K exact':>10} {'K engine':>14} {'difference':>11}"]
    exact = mf.bimodal_boundaries(np.array(SEPARATIONS), WIDTH)
    for j, w0 in enumerate(SEPARATIONS):
        k_exact = float(exact.incoherence_boundary[j])
        k_engine = brentq(lambda k: engine_rate(w0, k), 0.8 * k_exact, 1.2 * k_exact, xtol=1e-12)
        kind = "pitchfork" if int(exact.boundary_kind[j]) == 0 else "Hopf"
        lines.append(f"{w0:7.2f} {kind:>10} {k_exact:10.6f} {k_engine:14.10f} {k_engine - k_exact:11.1e}")
        if abs(k_engine - k_exact) > 1e-6:
            failures.append(f"bimodal omega0 = {w0}: the engine's incoherence boundary {k_engine:.10f}, exact "
                            f"{k_exact:.10f} (allowed 1e-6)")
    return lines, exact


def bistability(failures: list[str], output: Path) -> tuple[list[str], dict]:
    law = mf.bimodal_lorentzian(BISTABLE_SEPARATION, WIDTH)
    edges = mf.bimodal_boundaries(np.array([BISTABLE_SEPARATION]), WIDTH)
    k_sn, k_pf = float(edges.saddle_node[0]), float(edges.incoherence_boundary[0])
    couplings = np.linspace(2.5, 4.5, 41)
    branches = mf.kuramoto_branches(mf.Kuramoto(frequencies=law), couplings)
    branches.to_netcdf(output / "kuramoto_reduced_branches.nc")
    fold = np.asarray(branches.attrs["fold_couplings"], dtype=float).ravel()
    k_mid, upper = _upper_stable(branches, 0.5 * (k_sn + k_pf))
    lines = ["", f"3. Bistability, omega0 = {BISTABLE_SEPARATION}, Delta = {WIDTH}: saddle-node K = {k_sn:.8f}, "
                 f"pitchfork K = {k_pf:.8f}; at K = {k_mid:.6f}",
             f"   fold of kuramoto_branches: {', '.join(f'{f:.8f}' for f in fold)}"]
    if fold.size == 0 or np.min(np.abs(fold - k_sn)) > 1e-8:
        failures.append(f"the fold of kuramoto_branches {fold} is not the saddle-node {k_sn:.10f} (allowed 1e-8)")
    times = np.linspace(0, 300, 601)
    model = mf.Kuramoto(k_mid, law)
    low = float(mf.ott_antonsen(model, times, 0.01).order_parameter[-1])
    high = float(mf.ott_antonsen(model, times, 0.9).order_parameter[-1])
    t_part = np.linspace(0, 150, 301)
    start = time.perf_counter()
    uniform = mf.simulate(model, np.random.default_rng(1).uniform(0, 2 * np.pi, N_BIMODAL), t_part, rtol=1e-3,
                          atol=1e-6)
    synchronised = mf.simulate(model, np.zeros(N_BIMODAL), t_part, rtol=1e-3, atol=1e-6)
    wall = time.perf_counter() - start
    late = t_part >= t_part[-1] - 50
    p_low = float(uniform.order_parameter.values[late].mean())
    p_high = float(synchronised.order_parameter.values[late].mean())
    lines += [f"   upper stable branch r = {upper:.10f}",
              f"   engine: from z0 = 0.01 r = {low:.2e}, from z0 = 0.9 r = {high:.10f} (branch - engine "
              f"{upper - high:.1e})",
              f"   particles n = {N_BIMODAL} ({wall:.1f} s): from uniform phases r = {p_low:.4f}, from theta = 0 "
              f"r = {p_high:.4f} (branch - particles {upper - p_high:.1e}, allowed {3 / np.sqrt(N_BIMODAL):.4f})"]
    if not (low < 1e-6 and abs(high - upper) < 1e-8):
        failures.append(f"bistability: the engine ends at r = {low:.3e} and {high:.10f}; expected incoherence and "
                        f"the upper branch {upper:.10f}")
    if not (p_low < NEAR_INCOHERENT and abs(p_high - upper) < 3 / np.sqrt(N_BIMODAL)):
        failures.append(f"bistability: particles end at r = {p_low:.4f} and {p_high:.4f}; expected < "
                        f"{NEAR_INCOHERENT} and {upper:.4f} +- {3 / np.sqrt(N_BIMODAL):.4f}")
    points = {"coupling": k_mid, "engine": (low, high), "particles": (p_low, p_high), "branches": branches}
    return lines, points


def _upper_stable(branches, coupling: float) -> tuple[float, float]:
    """(K, r) of the point of a stable stationary branch with r > 0 nearest to ``coupling`` (a computed point:
    the engine is compared with the branch there, not with an interpolation between points)."""
    k, r, stable = branches.point_coupling.values, branches.r.values, branches.stable.values.astype(bool)
    candidates = np.nonzero(stable & (r > 0))[0]
    nearest = candidates[np.argmin(np.abs(k[candidates] - coupling))]
    return float(k[nearest]), float(r[nearest])


def figure(points: dict, exact, output: Path) -> None:
    fig = Figure(figsize=(13, 4.8))
    left, right = fig.subplots(1, 2)
    k_mid = points["coupling"]
    diagram = mf.kuramoto_bifurcation(points["branches"].coupling.values, "bimodal", width=WIDTH,
                                      separation=BISTABLE_SEPARATION, engine="ott-antonsen",
                                      t_final=300.0, average_window=50.0)
    mf.plot.bifurcation(diagram, branches=points["branches"], ax=left)
    left.plot([k_mid, k_mid], points["engine"], "bo", ms=7, mfc="none", label="engine, z0 = 0.01 and 0.9")
    left.plot([k_mid, k_mid], points["particles"], "r^", ms=6, label=f"particles n = {N_BIMODAL}")
    left.set_title(f"bimodal Lorentzian ω₀ = {BISTABLE_SEPARATION}, Δ = {WIDTH}: bistability")
    left.legend(fontsize=7, loc="lower right")
    states = mf.bimodal_states(np.linspace(0, 2, 41), np.linspace(1, 6, 51), WIDTH)
    states.to_netcdf(output / "kuramoto_reduced_states.nc")
    mf.plot.bimodal_phase_diagram(states, mf.bimodal_boundaries(np.linspace(0, 2, 201), WIDTH), ax=right)
    fig.savefig(output / "kuramoto_reduced.png", dpi=120, bbox_inches="tight")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", type=Path, default=Path("validation_output"))
    args = parser.parse_args(argv)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    failures: list[str] = []
    lines = sakaguchi(failures)
    print("\n".join(lines), flush=True)
    more, exact = boundaries(failures)
    print("\n".join(more), flush=True)
    lines += more
    more, points = bistability(failures, args.output_dir)
    print("\n".join(more), flush=True)
    lines += more
    figure(points, exact, args.output_dir)
    (args.output_dir / "kuramoto_reduced.txt").write_text("\n".join(lines) + "\n")
    for line in failures:
        print("MISMATCH", line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

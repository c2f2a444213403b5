"""Kuramoto oscillators on a sparse graph: ``mf.simulate`` (Möbius flow with local fields) against solve_ivp.

Workload: an Erdős–Rényi graph G(n, 20/(n - 1)) (mean degree 20, seed 1) normalised by the degree,
θ̇_i = ω_i + (K/d_i) Σ_j A_ij sin(θ_j - θ_i), K = 2, midpoint-quantile Lorentzian frequencies (γ = 0.5, so
max|ω_i| ≈ 2nγ/π: 32 000 at n = 10⁵), iid uniform initial phases (seed 0).

1. Scale: n = ``--n`` (10⁵) on t ∈ [0, 50], 6 outputs, at ``--rtol`` (atol = rtol/100, the ratio of the
   defaults), one run; the goal is 60 s. No path error at this n: a reference that resolves 32 000 rad/s over
   50 time units costs hours; the error at the same rtol is that of part 2. mf.simulate's default rtol is
   probed over the first ``--probe-time`` time units at n = ``--compare-n`` (steps per time unit, wall).
2. Sparse peers at equal accuracy, n = ``--compare-n`` (10⁴), t ∈ [0, ``--compare-time``], 11 outputs:
   scipy.integrate.solve_ivp (DOP853, RK45; atol = rtol: an absolute tolerance on phases) with the right-hand
   side θ̇ = ω + K Im(e^{-iθ} ⊙ (B e^{iθ})), B = diag(1/d) A a complex CSR matrix built once (one sparse
   product per evaluation; faster than real B on complex values or two real products). Path error: max over
   outputs of the root mean square over nodes of the wrapped phase difference to a reference (DOP853 at
   ``--reference-rtol``; at 1e-8 it differs from 1e-10 by 2e-7 at n = 10⁴, t ≤ 10, below every error
   compared). Work-precision pairs for each method at its tolerances, and every mf.simulate run against the
   fastest run of each peer that is at least as accurate; then each peer's rtol is tuned (secant in log
   error) until its error is at most, and within a factor 2 of, that of mf.simulate at ``--rtol``, and the
   runs are timed alternately (``--repeats`` rounds, medians). Printed ratio: peer time / mf.simulate time
   (> 1: meanfield faster).
3. Dense peer at n = ``--dense-n`` (2000), as part 2, plus the matched sparse peer that was faster with B a
   dense real array (ω + K(cos θ ⊙ B sin θ - sin θ ⊙ B cos θ): two BLAS products, twice as fast as a complex
   B @ e^{iθ}; the same trajectory as the sparse one to round-off), timed alternately with mf.simulate.

``--profile`` prints the top functions of a cProfile of the part-2 mf.simulate run.

Run with ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/bench_networks.py``
(about 5 min on an idle core, part 1 about 35 s of them, more when the other core is busy; ``--quick``: one
timing round and no default-rtol probe, about 1.5 min less; ``--skip-scale`` leaves out part 1).
"""

from __future__ import annotations

import argparse
import cProfile
import inspect
import pstats
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.integrate
import scipy.sparse
import scipy.stats

import meanfield as mf

GAMMA, COUPLING, MEAN_DEGREE = 0.5, 2.0, 20
GRAPH_SEED, PHASE_SEED = 1, 0
DEFAULT_RTOL = inspect.signature(mf.simulate).parameters["rtol"].default
#: the tuning of a peer's rtol stops at an error in [MATCH_WINDOW, 1] × the target
MATCH_WINDOW = 0.5


@dataclass(frozen=True)
class Workload:
    """One size of the workload (module docstring)."""

    graph: mf.Graph
    frequencies: np.ndarray
    theta0: np.ndarray

    @classmethod
    def make(cls, n: int) -> Workload:
        graph = mf.Graph.erdos_renyi(n, MEAN_DEGREE / (n - 1), seed=GRAPH_SEED, normalization="degree")
        frequencies = scipy.stats.cauchy(0, GAMMA).ppf((np.arange(n) + 0.5) / n)
        theta0 = np.random.default_rng(PHASE_SEED).uniform(0, 2 * np.pi, n)
        return cls(graph, frequencies, theta0)

    @property
    def n(self) -> int:
        return self.graph.n_nodes

    def normalised_adjacency(self) -> scipy.sparse.csr_array:
        """B = diag(1/d) A."""
        return (scipy.sparse.diags_array(1.0 / self.graph.degrees) @ self.graph.adjacency).tocsr()


@dataclass(frozen=True)
class Run:
    """One integration: its wall time, work (steps or evaluations) and path error."""

    label: str
    rtol: float
    wall: float
    work: int
    error: float
    z_error: float


class SparseVelocity:
    """θ̇ = ω + K Im(e^{-iθ} ⊙ (B e^{iθ})) with B a complex CSR matrix."""

    def __init__(self, workload: Workload) -> None:
        self.frequencies = workload.frequencies
        self.matrix = workload.normalised_adjacency().astype(complex)

    def __call__(self, t: float, theta: np.ndarray) -> np.ndarray:
        z = np.exp(1j * theta)
        return self.frequencies + COUPLING * np.imag(np.conj(z) * (self.matrix @ z))


class DenseVelocity:
    """θ̇ = ω + K (cos θ ⊙ B sin θ - sin θ ⊙ B cos θ) with B a dense real array."""

    def __init__(self, workload: Workload) -> None:
        self.frequencies = workload.frequencies
        self.matrix = workload.normalised_adjacency().toarray()

    def __call__(self, t: float, theta: np.ndarray) -> np.ndarray:
        c, s = np.cos(theta), np.sin(theta)
        return self.frequencies + COUPLING * (c * (self.matrix @ s) - s * (self.matrix @ c))


class Integrators:
    """mf.simulate and the solve_ivp peers on one workload, with the path error against a reference."""

    def __init__(self, workload: Workload, times: np.ndarray, reference_rtol: float) -> None:
        self.workload = workload
        self.times = times
        self.model = mf.Kuramoto(COUPLING, frequencies=scipy.stats.cauchy(0, GAMMA), graph=workload.graph)
        self.sparse = SparseVelocity(workload)
        start = time.perf_counter()
        self.reference, self.reference_work = self._scipy(self.sparse, "DOP853", reference_rtol)
        self.reference_wall = time.perf_counter() - start

    def _scipy(self, velocity: Callable[[float, np.ndarray], np.ndarray], method: str, rtol: float
               ) -> tuple[np.ndarray, int]:
        sol = scipy.integrate.solve_ivp(velocity, (self.times[0], self.times[-1]), self.workload.theta0,
                                        method=method, t_eval=self.times, rtol=rtol, atol=rtol)
        if not sol.success:
            raise RuntimeError(f"solve_ivp {method} at rtol {rtol:g} failed: {sol.message}")
        return sol.y.T, int(sol.nfev)

    def _meanfield(self, rtol: float) -> tuple[np.ndarray, int]:
        ds = mf.simulate(self.model, self.workload.theta0, self.times, rtol=rtol, atol=rtol / 100,
                         frequencies=self.workload.frequencies)
        return ds["positions"].values, int(ds.attrs["n_steps"])

    def _run(self, label: str, rtol: float, call: Callable[[], tuple[np.ndarray, int]]) -> Run:
        start = time.perf_counter()
        theta, work = call()
        wall = time.perf_counter() - start
        return Run(label, rtol, wall, work, phase_error(theta, self.reference), order_error(theta, self.reference))

    def meanfield(self, rtol: float) -> Run:
        """mf.simulate (method "moebius", the default here); work: accepted steps."""
        return self._run("mf.simulate", rtol, lambda: self._meanfield(rtol))

    def peer(self, method: str, rtol: float, dense: bool = False) -> Run:
        """solve_ivp with the sparse (or dense) right-hand side; work: evaluations."""
        velocity = DenseVelocity(self.workload) if dense else self.sparse
        label = f"{method} {'dense' if dense else 'sparse'}"
        return self._run(label, rtol, lambda: self._scipy(velocity, method, rtol))


def phase_error(theta: np.ndarray, reference: np.ndarray) -> float:
    """Max over outputs of the root mean square over nodes of the wrapped phase difference."""
    gap = np.angle(np.exp(1j * (theta - reference)))
    return float(np.max(np.sqrt(np.mean(gap**2, axis=1))))


def order_error(theta: np.ndarray, reference: np.ndarray) -> float:
    """Max over outputs of |Z - Z_ref|, Z the order parameter."""
    return float(np.max(np.abs(np.mean(np.exp(1j * theta), axis=1) - np.mean(np.exp(1j * reference), axis=1))))


def next_rtol(runs: list[Run], target: float) -> float:
    """The next rtol to try for an error of 0.8 ``target``, the error taken as growing with rtol.

    Bracketed (the largest rtol with error ≤ target below the smallest larger one with error > target): log(error)
    linear in log(rtol) between the two, or their geometric midpoint when that falls outside the middle 80% of
    the interval (the error jumps where the steps stop resolving the fastest oscillators). Otherwise
    extrapolated from the closest run with the slope of the two runs closest to ``target`` (at least 0.2; steps
    of at most 100×).
    """
    below = [r for r in runs if r.error <= target]
    low = max(below, key=lambda r: r.rtol) if below else None
    higher = [r for r in runs if r.error > target and (low is None or r.rtol > low.rtol)]
    if low is not None and higher:
        high = min(higher, key=lambda r: r.rtol)
        slope = np.log(high.error / low.error) / np.log(high.rtol / low.rtol)
        guess = np.log(low.rtol) + np.log(0.8 * target / low.error) / slope
        left, right = np.log(low.rtol), np.log(high.rtol)
        margin = 0.1 * (right - left)
        if not left + margin <= guess <= right - margin:
            guess = 0.5 * (left + right)
        return float(np.exp(guess))
    anchor = low if low is not None else min(runs, key=lambda r: r.error)
    closest = sorted(runs, key=lambda r: abs(np.log(r.error / target)))[:2]
    slope = 1.0
    if len(closest) == 2 and closest[0].rtol != closest[1].rtol and closest[0].error != closest[1].error:
        slope = max(np.log(closest[0].error / closest[1].error) / np.log(closest[0].rtol / closest[1].rtol), 0.2)
    step = np.clip(np.log(0.8 * target / anchor.error) / slope, -np.log(100), np.log(100))
    return float(anchor.rtol * np.exp(step))


def match(peer: Callable[[float], Run], runs: list[Run], target: float, attempts: int = 3) -> tuple[Run, list[Run]]:
    """The peer run with the largest error ≤ ``target``, tuning rtol (:func:`next_rtol`) until that error is
    at least MATCH_WINDOW × target or ``attempts`` more runs are made (printed as they are made); and all the
    runs."""
    runs = list(runs)
    for _ in range(attempts):
        good = [r for r in runs if r.error <= target]
        if good and max(r.error for r in good) >= MATCH_WINDOW * target:
            break
        runs.append(peer(next_rtol(runs, target)))
        print_run(runs[-1], "  (tuning)")
    good = [r for r in runs if r.error <= target]
    return (max(good, key=lambda r: r.error) if good else min(runs, key=lambda r: r.error)), runs


def alternate(calls: list[Callable[[], Run]], repeats: int) -> list[float]:
    """Median wall times of ``calls`` run in turn, ``repeats`` rounds."""
    walls = np.array([[call().wall for call in calls] for _ in range(repeats)])
    return [float(w) for w in np.median(walls, axis=0)]


def print_header() -> None:
    print(f"  {'integrator':<16} {'rtol':>8} {'wall s':>8} {'work':>8} {'rms dtheta':>11} {'max|dZ|':>9}")


def print_run(run: Run, note: str = "") -> None:
    print(f"  {run.label:<16} {run.rtol:8.2e} {run.wall:8.2f} {run.work:8d} {run.error:11.2e} {run.z_error:9.2e}"
          f"{note}", flush=True)


def scale(n: int, t_final: float, rtol: float) -> None:
    """Part 1: one run at n nodes (module docstring)."""
    workload = Workload.make(n)
    model = mf.Kuramoto(COUPLING, frequencies=scipy.stats.cauchy(0, GAMMA), graph=workload.graph)
    times = np.linspace(0, t_final, 6)
    start = time.perf_counter()
    ds = mf.simulate(model, workload.theta0, times, rtol=rtol, atol=rtol / 100, frequencies=workload.frequencies)
    wall = time.perf_counter() - start
    print(f"1. n = {n}, {workload.graph.n_entries} entries (mean degree {workload.graph.n_entries / n:.2f}), "
          f"max|w| = {np.abs(workload.frequencies).max():.4g}, t in [0, {t_final:g}], rtol = {rtol:g} "
          f"(mf.simulate default {DEFAULT_RTOL:g})")
    print(f"   mf.simulate ({ds.attrs['method']}): {wall:.1f} s (goal 60 s), {ds.attrs['n_steps']} steps, "
          f"{ds.attrs['n_rejected']} rejected, {ds.attrs['nfev']} maps")
    print("   r(t): " + ", ".join(f"r({t:g}) = {r:.4f}" for t, r in zip(times, ds["order_parameter"].values)))
    print("   path error: not measured at this n (reference unaffordable); see part 2 at the same rtol", flush=True)


def probe_default(workload: Workload, duration: float) -> None:
    """mf.simulate at its default tolerances over [0, duration] on the part-2 workload."""
    model = mf.Kuramoto(COUPLING, frequencies=scipy.stats.cauchy(0, GAMMA), graph=workload.graph)
    start = time.perf_counter()
    ds = mf.simulate(model, workload.theta0, [0.0, duration], frequencies=workload.frequencies)
    wall = time.perf_counter() - start
    steps = int(ds.attrs["n_steps"]) + int(ds.attrs["n_rejected"])
    print(f"   default rtol {DEFAULT_RTOL:g} at n = {workload.n}, t in [0, {duration:g}]: {wall:.1f} s, "
          f"{ds.attrs['n_steps']} steps + {ds.attrs['n_rejected']} rejected ({steps / duration:.0f} per time unit, "
          f"{wall / duration:.0f} s per time unit)", flush=True)


def sweep(integrators: Integrators, args: argparse.Namespace
          ) -> tuple[list[Run], dict[str, Run], dict[str, list[Run]]]:
    """Work-precision pairs of every integrator: the mf.simulate runs, the peer runs matched to the error of
    the one at ``args.rtol``, and all the peer runs."""
    print_header()
    ours = [integrators.meanfield(rtol) for rtol in args.meanfield_rtols]
    for run in ours:
        print_run(run)
    target = next(r for r in ours if r.rtol == args.rtol).error
    matched, runs = {}, {}
    for method, rtols in (("DOP853", args.dop853_rtols), ("RK45", args.rk45_rtols)):
        runs[method] = [integrators.peer(method, rtol) for rtol in rtols]
        for run in runs[method]:
            print_run(run)
        matched[method], runs[method] = match(lambda r, m=method: integrators.peer(m, r), runs[method], target)
    return ours, matched, runs


def frontier(ours: list[Run], peers: dict[str, list[Run]]) -> None:
    """Each mf.simulate run against the fastest run of each peer that is at least as accurate (single runs)."""
    print("   every mf.simulate run against the fastest run of each peer at least as accurate (single runs above; "
          "ratio peer/mf, < 1: meanfield slower):")
    print(f"   {'rtol':>8} {'rms dtheta':>11} {'mf s':>7}" + "".join(f" {m + ' s':>10} {'ratio':>6}" for m in peers))
    for run in ours:
        cells = ""
        for runs in peers.values():
            good = [r for r in runs if r.error <= run.error]
            best = min(good, key=lambda r: r.wall) if good else None
            cells += f" {best.wall:10.2f} {best.wall / run.wall:6.2f}" if best else f" {'-':>10} {'-':>6}"
        print(f"   {run.rtol:8.2e} {run.error:11.2e} {run.wall:7.2f}{cells}")


def compare(integrators: Integrators, args: argparse.Namespace, dense: bool) -> None:
    """Parts 2 and 3: work-precision pairs, matched peers, alternate timings and ratios."""
    workload = integrators.workload
    print(f"   n = {workload.n}, max|w| = {np.abs(workload.frequencies).max():.4g}, t in [0, "
          f"{integrators.times[-1]:g}]; reference DOP853 at rtol {args.reference_rtol:g}: "
          f"{integrators.reference_wall:.1f} s, {integrators.reference_work} evaluations; work = steps "
          f"(mf.simulate) or evaluations (solve_ivp)")
    ours, matched, runs = sweep(integrators, args)
    frontier(ours, runs)
    headline = next(r for r in ours if r.rtol == args.rtol)
    print(f"   at equal accuracy (mf.simulate rtol {args.rtol:g}, rms dtheta {headline.error:.2e}), median of "
          f"{args.repeats} alternate rounds:")
    calls = [lambda: integrators.meanfield(args.rtol)]
    calls += [lambda m=method, r=run.rtol: integrators.peer(m, r) for method, run in matched.items()]
    labels = ["mf.simulate"] + [f"{run.label} rtol {run.rtol:.2e} (rms dtheta {run.error:.2e})"
                                for run in matched.values()]
    if dense:
        method, fastest = min(matched.items(), key=lambda item: item[1].wall)
        calls.append(lambda: integrators.peer(method, fastest.rtol, dense=True))
        labels.append(f"{method} dense rtol {fastest.rtol:.2e}")
    walls = alternate(calls, args.repeats)
    for label, wall in zip(labels, walls):
        verdict = "" if label == "mf.simulate" else (
            f"  ratio {wall / walls[0]:6.2f}  " + ("(meanfield faster)" if wall > walls[0] else "(MEANFIELD SLOWER)"))
        print(f"   {label:<58} {wall:8.2f} s{verdict}", flush=True)


def profile(integrators: Integrators, rtol: float, top: int = 15) -> None:
    """cProfile of one mf.simulate run, top functions by own time."""
    profiler = cProfile.Profile()
    profiler.enable()
    integrators.meanfield(rtol)
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="nodes of part 1")
    parser.add_argument("--t-final", type=float, default=50.0, help="interval of part 1")
    parser.add_argument("--rtol", type=float, default=1e-3, help="mf.simulate tolerance of parts 1-3")
    parser.add_argument("--compare-n", type=int, default=10_000, help="nodes of part 2")
    parser.add_argument("--dense-n", type=int, default=2000, help="nodes of part 3")
    parser.add_argument("--compare-time", type=float, default=5.0, help="interval of parts 2 and 3")
    parser.add_argument("--reference-rtol", type=float, default=1e-8)
    parser.add_argument("--meanfield-rtols", type=float, nargs="+", default=[1e-3, 1e-4, 1e-5])
    parser.add_argument("--dop853-rtols", type=float, nargs="+", default=[1e-5, 1e-6, 1e-7])
    parser.add_argument("--rk45-rtols", type=float, nargs="+", default=[1e-5, 1e-6, 1e-7])
    parser.add_argument("--repeats", type=int, default=3, help="alternate timing rounds at equal accuracy")
    parser.add_argument("--probe-time", type=float, default=0.25, help="interval of the default-rtol probe")
    parser.add_argument("--quick", action="store_true", help="one timing round, no default-rtol probe")
    parser.add_argument("--skip-scale", action="store_true", help="skip part 1")
    parser.add_argument("--profile", action="store_true", help="profile the part-2 mf.simulate run")
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats = 1
    if args.rtol not in args.meanfield_rtols:
        args.meanfield_rtols = [args.rtol, *args.meanfield_rtols]
    warm = Workload.make(200)
    mf.simulate(mf.Kuramoto(COUPLING, frequencies=scipy.stats.cauchy(0, GAMMA), graph=warm.graph), warm.theta0,
                [0.0, 1.0], rtol=args.rtol)  # compile the kernels outside the timings
    print(f"Kuramoto on G(n, {MEAN_DEGREE}/(n-1)), degree-normalised, K = {COUPLING:g}, Lorentzian gamma = {GAMMA:g} "
          f"(midpoint quantiles)")
    if not args.skip_scale:
        scale(args.n, args.t_final, args.rtol)
    times = np.linspace(0, args.compare_time, 11)
    integrators = Integrators(Workload.make(args.compare_n), times, args.reference_rtol)
    print("2. sparse solve_ivp peers")
    if not args.quick:
        probe_default(integrators.workload, args.probe_time)
    compare(integrators, args, dense=False)
    if args.profile:
        profile(integrators, args.rtol)
    print("3. dense-adjacency peer")
    compare(Integrators(Workload.make(args.dense_n), times, args.reference_rtol), args, dense=True)


if __name__ == "__main__":
    main()

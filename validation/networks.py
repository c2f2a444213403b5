"""Kuramoto oscillators on networks: twisted states of a ring, the complete graph, Erdős–Rényi graphs, the graphon
limit, and a run of 10⁵ nodes.

(a) Twisted states (Wiley, Strogatz & Girvan, Chaos 16 (2006) 015103). On a ring of n = 40 identical
    oscillators, nearest neighbours, normalised by the degree, K = 1, the states θ_i = 2πqi/n, q = 0 … 20,
    are equilibria: max_i |θ̇_i| ≤ 1e-12. The Jacobian J_ij = (K/d_i) A_ij cos(θ_j - θ_i),
    J_ii = -Σ_j J_ij, assembled here from the graph's edges, equals ``Kuramoto.jacobian`` and has the
    spectrum λ_m = K cos(2πq/n)(cos(2πm/n) - 1), both to 1e-13. Its largest eigenvalue beside the
    rotation's zero is < 0 for q < n/4 (stable) and > 0 for q > n/4 (unstable). q = n/4 = 10 is marginal:
    cos(2πq/n) = 0, so J = 0 to round-off (checked: every |λ| ≤ 1e-12) and the linearisation decides
    nothing; it is reported, not classified. Perturbed runs (kicks of 1e-3, rtol 1e-11): q = 4 returns to
    the twisted state up to a rotation, its distance at t = 10/λ_slow at most 10 e^{-10} times the initial
    one (λ_slow = K cos(2πq/n)(1 - cos(2π/n)), the slowest rate), winding number still 4; q = 14 leaves it:
    distance > 0.1 and a final winding number q' with |q'| < n/4.
(b) A complete graph with loops given explicitly is the all-to-all model: n = 48, K = 2.5, N(0, 0.5)
    frequencies, t ∈ [0, 4], Möbius (dt = 0.05), RK4 (dt = 0.02) and dopri5 (adaptive): the same steps and
    max |Δθ| ≤ 1e-12 (sums over edges and Fourier moments differ in the order of their additions). Two
    disjoint complete components (20 and 30 nodes, normalised by the degree, RK4, dt = 0.01) evolve as two
    independent systems: max |Δθ| ≤ 1e-12.
(c) Dense Erdős–Rényi graphs: Kuramoto on G(n, p), normalised by n, with coupling K/p against the all-to-all
    model with coupling K (K = 2, p = 0.2, N(0, 0.5) frequencies, von Mises starts, the same for both,
    t ∈ [0, 10]); n = 250, 1000, 4000 (np = 50, 200, 800), 8 graphs each. Every node's field is p Z
    + O((np)^{-1/2}), which bounds the gap of r; r averages the nodes' errors, so its gap falls faster, towards
    the O(1/(np)) of their second order and the O(1/(n √p)) of their mean (both (np)^{-1} at fixed p).
    Checked: max_t |r_G(t) - r(t)| ≤ 0.2 (np)^{-1/2} for every graph (measured 0.02–0.16), and its exponent in
    np (mean of the per-seed least-squares slopes; measured -0.78 ± 0.09) between -1 and -1/2 within two
    standard errors.
(d) Synchronisation above the connectivity threshold (paper 2, §7.2: Erdős–Rényi graphs synchronise with high
    probability for every p right above the connectivity threshold p = log(n)/n, [ABK+22]): the gradient flow
    θ̇_i = (K/n) Σ_j A_ij sin(θ_j - θ_i) of identical oscillators on 100 draws of G(200, p), p = 2 log(n)/n,
    K = 1/p, from iid uniform angles, run as one graph (their disjoint union). Checked: at least 95 draws
    connected (each is disconnected with probability ≈ n e^{-np} = 1/n), and 1 - r ≤ 1e-10 at t = 200 on
    every connected draw; the time from which every θ̇_i agrees to 1e-6 is reported.
(e) The graphon limit: particles on W-random graphs sampled from W(x, y) = 0.5 + 0.4 cos 2π(x - y)
    (``GraphonKuramoto.sampled``, random positions, K = 1.5) against the graphon PDE (spectral, 512 nodes in θ,
    16 Gauss nodes in x), by ``mf.compare`` (W₁ of the θ-marginals) at t = 2, from a von Mises start
    (κ = 1), n = 100, 400, 1600. With iid starts (16 seeds) the start's sampling error, carried by the flow,
    dominates: fitted exponent within two standard errors of -1/2. With the start's quantiles shuffled over the
    nodes (8 seeds; a marginal exact to 1/(2n)) only the graph acts: each node's field is off by O(n^{-1/2}),
    which moves the empirical marginal by (n^{-1/2}/n)^{1/2} = n^{-3/4} (the graphon is translation invariant,
    so the positions' sampling does not enter at first order); fitted exponent within 0.1 of -3/4.
(f) 10⁵ nodes: Erdős–Rényi, mean degree 20, normalised by the degree, K = 2, Lorentzian frequencies
    (Cauchy(0, 0.5), quantiles), iid uniform start, t ∈ [0, 50], the Möbius flow with local fields at the
    particle tolerance of ``mf.studies.kuramoto_run`` and ``meanfield kuramoto`` (rtol 1e-3, atol 1e-6). Checked:
    success, finite angles and order parameter, and r∞ (the mean of r over t ∈ [30, 50]) within 1/√d̄ (d̄ = 20, the
    order of the finite-degree correction) of the dense-graph limit, the all-to-all theory √(1 - 2γ/K) = 0.7071.
    The run's CPU time (this process: one thread) is reported, not checked: speed is measured against its goal
    (60 s) in benchmarks/bench_networks.py.

Writes networks.txt, networks.nc and networks.png (r(t) on G(n, p) against the all-to-all model with coupling Kp;
the gap of r against np; W₁ against n, graphon PDE against sampled graphs); exits with status 1 on a mismatch.
Run time: about 1.5 minutes on one core, 45 s of them for the run of 10⁵ nodes.

Run:  python validation/networks.py [--output-dir DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse.csgraph
import scipy.stats
import xarray as xr
from matplotlib.figure import Figure

import meanfield as mf
from meanfield.studies.kuramoto._bifurcation import PARTICLE_RTOL
from meanfield.studies.limits._meanfield_limit import fit_exponent

ROUND_OFF = 1e-12
RING_NODES = 40
STABLE_TWIST, UNSTABLE_TWIST = 4, 14
ER_SIZES = (250, 1000, 4000)
ER_P, ER_COUPLING, ER_SEEDS = 0.2, 2.0, 8
ER_TIMES = np.linspace(0.0, 10.0, 41)
ER_CONSTANT = 0.2
"""max_t |r_G - r| ≤ ER_CONSTANT (np)^{-1/2}."""
SYNC_NODES, SYNC_DRAWS, SYNC_CONNECTED = 200, 100, 95
SYNC_TIMES = np.linspace(0.0, 200.0, 41)
GRAPHON_SIZES = (100, 400, 1600)
GRAPHON_TIMES = np.linspace(0.0, 2.0, 3)
IID_SEEDS, SHUFFLED_SEEDS = 16, 8
GRAPH_EXPONENT_TOLERANCE = 0.1
LARGE_NODES, LARGE_DEGREE = 100_000, 20
LARGE_TIMES = np.linspace(0.0, 50.0, 51)
LARGE_COUPLING, LARGE_WIDTH = 2.0, 0.5
LARGE_WINDOW = 20.0
"""r∞ is the mean of r over the last LARGE_WINDOW of the run."""
CPU_GOAL = 60.0
"""The speed goal of the run, reported (benchmarks/bench_networks.py measures it)."""


def _phase_gap(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| of angles, taken mod 2π."""
    return float(np.max(np.abs(np.angle(np.exp(1j * (np.asarray(a) - np.asarray(b)))))))


def _winding(theta: np.ndarray) -> np.ndarray:
    """Winding numbers Σ_i wrap(θ_{i+1} - θ_i)/(2π) around a ring of the angles (…, n)."""
    steps = np.angle(np.exp(1j * (np.roll(theta, -1, axis=-1) - theta)))
    return np.rint(steps.sum(axis=-1) / (2 * np.pi)).astype(int)


def _cosine_graphon(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return 0.5 + 0.4 * np.cos(2 * np.pi * (x - y))


# ---------------------------------------------------------------- (a) twisted states
def edge_jacobian(graph: mf.Graph, coupling: float, theta: np.ndarray) -> np.ndarray:
    """J (systems, n, n) of θ̇_i = (K/d_i) Σ_j A_ij sin(θ_j - θ_i) at the configurations ``theta`` (systems, n),
    from the graph's edges: J_ij = (K/d_i) A_ij cos(θ_j - θ_i), J_ii = -Σ_{j≠i} J_ij."""
    rows, cols, weights = graph.edges()
    n = graph.n_nodes
    slopes = coupling * weights / graph.degrees[rows] * np.cos(theta[:, cols] - theta[:, rows])
    jacobian = np.zeros((theta.shape[0], n, n))
    jacobian[:, rows, cols] = slopes
    diagonal = np.arange(n)
    jacobian[:, diagonal, diagonal] = 0.0
    jacobian[:, diagonal, diagonal] = -jacobian.sum(axis=2)
    return jacobian


def _twist_distance(run: xr.Dataset, twisted: np.ndarray) -> np.ndarray:
    """max_i |θ_i - θ*_i - c| at every output, the rotation c = θ_0 - θ*_0 removed."""
    relative = np.angle(np.exp(1j * (run.positions.values - twisted)))
    return np.abs(np.angle(np.exp(1j * (relative - relative[:, :1])))).max(axis=1)


def twisted_states() -> tuple[list[str], bool, xr.Dataset]:
    n, coupling = RING_NODES, 1.0
    graph = mf.Graph.ring(n, 1, normalization="degree")
    model = mf.Kuramoto(coupling, graph=graph)
    q = np.arange(n // 2 + 1)
    modes = np.arange(n)
    theta = 2 * np.pi * np.outer(q, modes) / n
    speed = np.max(np.abs(model.velocity(theta)), axis=1)
    jacobian = edge_jacobian(graph, coupling, theta)
    library = np.stack([model.jacobian(row).toarray() for row in theta])
    spectrum = np.linalg.eigvalsh(jacobian)
    exact = np.sort(coupling * np.cos(2 * np.pi * q / n)[:, None] * (np.cos(2 * np.pi * modes / n) - 1), axis=1)
    beside = np.abs(spectrum).argmin(axis=1)
    largest = np.max(np.where(modes[None] == beside[:, None], -np.inf, spectrum), axis=1)
    stable, marginal = 4 * q < n, 4 * q == n
    classified = np.where(stable, largest < 0, largest > 0)
    ok_spectrum = bool(np.all(speed <= ROUND_OFF) and np.max(np.abs(jacobian - library)) <= 1e-13
                       and np.max(np.abs(spectrum - exact)) <= 1e-13 and np.all(classified[~marginal])
                       and np.all(np.abs(spectrum[marginal]) <= ROUND_OFF))
    lines = [f"(a) twisted states θ_i = 2πqi/n on ring(n = {n}, k = 1), K = {coupling:g}, normalised by the degree",
             f"  max |θ̇| over q = 0 … {q[-1]}: {speed.max():.1e}; |J_edges - Kuramoto.jacobian| = "
             f"{np.max(np.abs(jacobian - library)):.1e}; |spectrum - K cos(2πq/n)(cos(2πm/n) - 1)| = "
             f"{np.max(np.abs(spectrum - exact)):.1e}",
             f"  {'q':>3} {'q/n':>6} {'largest λ beside the rotation':>30} {'verdict':>10}"]
    for k in q:
        verdict = "marginal" if marginal[k] else ("stable" if largest[k] < 0 else "unstable")
        lines.append(f"  {k:3d} {k / n:6.3f} {largest[k]:30.3e} {verdict:>10}")
    lines.append(f"  q < n/4 stable, q > n/4 unstable, q = n/4: J = 0 (max |λ| = "
                 f"{np.abs(spectrum[marginal]).max():.1e}): {'ok' if ok_spectrum else 'MISMATCH'}")
    noise = 1e-3 * np.random.default_rng(11).standard_normal(n)
    slowest = coupling * np.cos(2 * np.pi * STABLE_TWIST / n) * (1 - np.cos(2 * np.pi / n))
    t_final = 10 / slowest
    runs = {}
    for twist in (STABLE_TWIST, UNSTABLE_TWIST):
        twisted = 2 * np.pi * twist * modes / n
        run = mf.simulate(model, twisted + noise, np.linspace(0.0, t_final, 11), rtol=1e-11, atol=1e-13)
        runs[twist] = (_twist_distance(run, twisted), _winding(run.positions.values))
    back, winding_back = runs[STABLE_TWIST]
    away, winding_away = runs[UNSTABLE_TWIST]
    returned = back[-1] <= 10 * np.exp(-slowest * t_final) * back[0] and winding_back[-1] == STABLE_TWIST
    left = away[-1] > 0.1 and winding_away[-1] != UNSTABLE_TWIST and 4 * abs(winding_away[-1]) < n
    ok_runs = bool(returned and left)
    lines += [f"  perturbed runs to t = {t_final:.0f} (= 10/λ_slow, λ_slow = {slowest:.3e} for q = {STABLE_TWIST}):",
              f"    q = {STABLE_TWIST:2d}: distance {back[0]:.2e} -> {back[-1]:.2e} (bound "
              f"{10 * np.exp(-slowest * t_final) * back[0]:.2e}), winding {winding_back[0]} -> {winding_back[-1]}",
              f"    q = {UNSTABLE_TWIST:2d}: distance {away[0]:.2e} -> {away[-1]:.2e}, winding {winding_away[0]} -> "
              f"{winding_away[-1]}",
              f"  stable returns, unstable leaves for a stable twist: {'ok' if ok_runs else 'MISMATCH'}"]
    data = xr.Dataset({"twisted_spectrum": (("q", "mode"), spectrum), "twisted_speed": ("q", speed),
                       "twisted_largest_eigenvalue": ("q", largest)}, coords={"q": q})
    return lines, ok_spectrum and ok_runs, data


# ---------------------------------------------------------------- (b) complete graph
def complete_graph() -> tuple[list[str], bool]:
    n = 48
    law = scipy.stats.norm(0, 0.5)
    theta = np.random.default_rng(1).uniform(0.0, 2 * np.pi, n)
    t = np.linspace(0.0, 4.0, 5)
    lines, ok = ["", f"(b) complete graph with loops (n = {n}) against the all-to-all model, K = 2.5"], True
    for method, options in (("moebius", {"dt": 0.05}), ("rk4", {"dt": 0.02}), ("dopri5", {})):
        alone = mf.simulate(mf.Kuramoto(2.5, frequencies=law), theta, t, method=method, **options)
        network = mf.simulate(mf.Kuramoto(2.5, frequencies=law, graph=mf.Graph.complete(n)), theta, t,
                              method=method, **options)
        gap = _phase_gap(alone.positions, network.positions)
        good = gap <= ROUND_OFF and alone.attrs["n_steps"] == network.attrs["n_steps"]
        ok &= good
        lines.append(f"  {method:8s} max |Δθ| = {gap:.1e}, steps {alone.attrs['n_steps']} / "
                     f"{network.attrs['n_steps']} {'ok' if good else 'MISMATCH'}")
    sizes = (20, 30)
    union = mf.Graph.disjoint_union(*(mf.Graph.complete(s) for s in sizes), normalization="degree")
    omega = np.concatenate([np.full(sizes[0], 0.3), np.full(sizes[1], -0.2)])
    theta = np.random.default_rng(9).uniform(0.0, 2 * np.pi, sum(sizes))
    t = np.linspace(0.0, 3.0, 4)
    spread = scipy.stats.norm(0, 1)  # a law, so that the given frequencies are used
    whole = mf.simulate(mf.Kuramoto(2.0, frequencies=spread, graph=union), theta, t, method="rk4", dt=0.01,
                        frequencies=omega)
    bounds = np.cumsum((0,) + sizes)
    gaps = [_phase_gap(whole.positions.values[:, a:b], mf.simulate(
        mf.Kuramoto(2.0, frequencies=spread), theta[a:b], t, method="rk4", dt=0.01, frequencies=omega[a:b]).positions)
        for a, b in zip(bounds[:-1], bounds[1:])]
    good = max(gaps) <= ROUND_OFF
    ok &= good
    lines.append(f"  two complete components {sizes} = two systems (RK4): max |Δθ| = "
                 + ", ".join(f"{g:.1e}" for g in gaps) + f" {'ok' if good else 'MISMATCH'}")
    return lines, ok


# ---------------------------------------------------------------- (c) dense Erdős–Rényi
def erdos_renyi_limit() -> tuple[list[str], bool, xr.Dataset]:
    law = scipy.stats.norm(0, 0.5)
    degrees = np.array(ER_SIZES) * ER_P
    gaps = np.zeros((len(ER_SIZES), ER_SEEDS))
    curves = np.zeros((len(ER_SIZES), 2, ER_TIMES.size))
    for a, n in enumerate(ER_SIZES):
        for seed in range(ER_SEEDS):
            theta = np.random.default_rng(seed).vonmises(0.0, 1.0, n)
            limit = mf.simulate(mf.Kuramoto(ER_COUPLING, frequencies=law), theta, ER_TIMES, rtol=1e-6, atol=1e-9)
            graph = mf.Graph.erdos_renyi(n, ER_P, seed=100 + seed)
            network = mf.simulate(mf.Kuramoto(ER_COUPLING / ER_P, frequencies=law, graph=graph), theta, ER_TIMES,
                                  rtol=1e-6, atol=1e-9)
            r = np.stack([network.order_parameter.values, limit.order_parameter.values])
            gaps[a, seed] = np.max(np.abs(r[0] - r[1]))
            if seed == 0:
                curves[a] = r
    exponent, stderr, _ = fit_exponent(degrees, gaps[:, :, None])
    scaled = gaps * np.sqrt(degrees)[:, None]
    in_band = -1 - 2 * stderr[0] <= exponent[0] <= -0.5 + 2 * stderr[0]
    ok = bool(np.all(scaled <= ER_CONSTANT) and in_band)
    lines = ["", f"(c) G(n, p = {ER_P:g}) normalised by n, coupling K/p, against all-to-all with K = {ER_COUPLING:g} "
             f"({ER_SEEDS} graphs each)",
             f"  {'n':>5} {'np':>5} {'mean max|Δr|':>13} {'max|Δr| √(np), each graph':>36}"]
    for n, d, g, s in zip(ER_SIZES, degrees, gaps, scaled):
        lines.append(f"  {n:5d} {d:5.0f} {g.mean():13.3e} " + " ".join(f"{v:8.3f}" for v in s))
    lines.append(f"  all ≤ {ER_CONSTANT}: {bool(np.all(scaled <= ER_CONSTANT))}; exponent in np: {exponent[0]:.3f} ± "
                 f"{stderr[0]:.3f}, in [-1, -1/2] within two standard errors: {in_band} {'ok' if ok else 'MISMATCH'}")
    data = xr.Dataset({"er_gap": (("np", "er_seed"), gaps),
                       "er_order_parameter": (("np", "model", "er_time"), curves)},
                      coords={"np": degrees, "model": ["graph", "all_to_all"], "er_time": ER_TIMES})
    return lines, ok, data


def erdos_renyi_synchronisation() -> tuple[list[str], bool, xr.Dataset]:
    n, draws = SYNC_NODES, SYNC_DRAWS
    p = 2 * np.log(n) / n
    rng = np.random.default_rng(7)
    graphs = [mf.Graph.erdos_renyi(n, p, seed=rng) for _ in range(draws)]
    connected = np.array([scipy.sparse.csgraph.connected_components(g.adjacency)[0] == 1 for g in graphs])
    # the union is normalised by its draws·n nodes: K = draws/p is (1/p)/n on every edge of a draw
    model = mf.Kuramoto(draws / p, graph=mf.Graph.disjoint_union(*graphs))
    run = mf.simulate(model, rng.uniform(0.0, 2 * np.pi, n * draws), SYNC_TIMES)
    angles = run.positions.values.reshape(SYNC_TIMES.size, draws, n)
    incoherence = 1 - np.abs(np.mean(np.exp(1j * angles), axis=2))  # (time, draw)
    synchronised = incoherence[-1] <= 1e-10
    reached = SYNC_TIMES[np.argmax(incoherence <= 1e-10, axis=0)]
    locked = float(mf.phase_locking_time(run, model, tolerance=1e-6))
    ok = bool(connected.sum() >= SYNC_CONNECTED and np.all(synchronised[connected]))
    lines = ["", f"(d) {draws} draws of G({n}, p = 2 log(n)/n = {p:.4f}), θ̇_i = (1/(np)) Σ_j A_ij sin(θ_j - θ_i), "
             f"iid uniform starts, t ≤ {SYNC_TIMES[-1]:g}",
             f"  connected: {connected.sum()} (≥ {SYNC_CONNECTED}); synchronised (1 - r ≤ 1e-10 at t = "
             f"{SYNC_TIMES[-1]:g}): {synchronised[connected].sum()} of {connected.sum()}; max 1 - r = "
             f"{incoherence[-1, connected].max():.1e}",
             f"  1 - r ≤ 1e-10 reached at t = {np.median(reached):g} (median), {reached.max():g} (last); every θ̇_i "
             f"equal to 1e-6 from t = {locked:g} {'ok' if ok else 'MISMATCH'}"]
    data = xr.Dataset({"sync_incoherence": (("sync_time", "draw"), incoherence),
                       "sync_connected": ("draw", connected.astype(np.int8))}, coords={"sync_time": SYNC_TIMES})
    return lines, ok, data


# ---------------------------------------------------------------- (e) graphon limit
def _graphon_distances(model: mf.GraphonKuramoto, pde: xr.Dataset, rho0: mf.Density, seeds: int,
                       shuffled: bool) -> np.ndarray:
    """W₁ (n, seed, time) of particles on graphs sampled from ``model`` against ``pde``: iid starts, or the
    start's midpoint quantiles shuffled over the nodes."""
    distances = np.zeros((len(GRAPHON_SIZES), seeds, GRAPHON_TIMES.size))
    for a, n in enumerate(GRAPHON_SIZES):
        for seed in range(seeds):
            if shuffled:
                x0 = np.random.default_rng(seed).permutation(mf.sample(rho0, n, method="quantile").points)
            else:
                x0 = mf.sample(rho0, n, seed=50 + seed)
            particles = mf.simulate(model.sampled(n, seed=seed, positions="random"), x0, GRAPHON_TIMES)
            distances[a, seed] = mf.compare(pde, particles).wasserstein.values[0]
    return distances


def graphon_limit() -> tuple[list[str], bool, xr.Dataset]:
    rho0 = mf.von_mises(mf.Circle(512), 0.0, 1.0)
    model = mf.GraphonKuramoto(1.5, _cosine_graphon, nodes=16, graphon_name="cosine")
    pde = mf.solve(model, rho0, GRAPHON_TIMES, method="spectral")
    iid = _graphon_distances(model, pde, rho0, IID_SEEDS, shuffled=False)
    shuffled = _graphon_distances(model, pde, rho0, SHUFFLED_SEEDS, shuffled=True)
    sizes = np.array(GRAPHON_SIZES)
    iid_exponent, iid_error, _ = fit_exponent(sizes, iid)
    graph_exponent, graph_error, _ = fit_exponent(sizes, shuffled)
    ok_iid = abs(iid_exponent[-1] + 0.5) <= 2 * iid_error[-1]
    ok_graph = abs(graph_exponent[-1] + 0.75) <= GRAPH_EXPONENT_TOLERANCE
    ok = bool(pde.attrs["success"] and ok_iid and ok_graph)
    lines = ["", "(e) graphon W = 0.5 + 0.4 cos 2π(x - y), K = 1.5: W₁ of the θ-marginals at t = 2, PDE against "
             "particles on sampled graphs (random positions)",
             f"  {'n':>5} {'iid start (mean ± std)':>24} {'shuffled quantiles':>24}"]
    for n, a, b in zip(GRAPHON_SIZES, iid[:, :, -1], shuffled[:, :, -1]):
        lines.append(f"  {n:5d} {a.mean():13.3e} ± {a.std():8.1e} {b.mean():13.3e} ± {b.std():8.1e}")
    lines += [f"  iid start ({IID_SEEDS} seeds): exponent {iid_exponent[-1]:.3f} ± {iid_error[-1]:.3f}, within two "
              f"standard errors of -1/2: {'ok' if ok_iid else 'MISMATCH'}",
              f"  shuffled quantiles ({SHUFFLED_SEEDS} seeds, the graph alone): exponent {graph_exponent[-1]:.3f} ± "
              f"{graph_error[-1]:.3f}, within {GRAPH_EXPONENT_TOLERANCE} of -3/4: {'ok' if ok_graph else 'MISMATCH'}"]
    data = xr.Dataset({"graphon_w1_iid": (("graphon_n", "iid_seed", "graphon_time"), iid),
                       "graphon_w1_shuffled": (("graphon_n", "shuffled_seed", "graphon_time"), shuffled)},
                      coords={"graphon_n": sizes, "graphon_time": GRAPHON_TIMES})
    return lines, ok, data


# ---------------------------------------------------------------- (f) 10⁵ nodes
def large_network() -> tuple[list[str], bool, xr.Dataset]:
    n = LARGE_NODES
    graph = mf.Graph.erdos_renyi(n, LARGE_DEGREE / (n - 1), seed=1, normalization="degree")
    model = mf.Kuramoto(LARGE_COUPLING, frequencies=scipy.stats.cauchy(0, LARGE_WIDTH), graph=graph)
    theta = np.random.default_rng(2).uniform(0.0, 2 * np.pi, n)
    wall, cpu = time.perf_counter(), time.process_time()
    run = mf.simulate(model, theta, LARGE_TIMES, rtol=PARTICLE_RTOL, atol=PARTICLE_RTOL * 1e-3)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    r = run.order_parameter.values
    finite = bool(np.all(np.isfinite(run.positions.values)) and np.all(np.isfinite(r)))
    r_inf = float(np.mean(r[LARGE_TIMES >= LARGE_TIMES[-1] - LARGE_WINDOW]))
    theory = float(np.sqrt(1 - 2 * LARGE_WIDTH / LARGE_COUPLING))
    near = abs(r_inf - theory) <= 1 / np.sqrt(LARGE_DEGREE)
    ok = bool(run.attrs["success"] and finite and near)
    lines = ["", f"(f) G(n = {n}, mean degree {LARGE_DEGREE}) normalised by the degree ({graph.n_edges} edges), K = 2, "
             f"Cauchy(0, 0.5) frequencies, t ∈ [0, {LARGE_TIMES[-1]:g}], {run.attrs['method']} "
             f"(rtol {PARTICLE_RTOL:g}, atol {PARTICLE_RTOL * 1e-3:g})",
             f"  success {run.attrs['success']}, finite {finite}; {run.attrs['n_steps']} steps, "
             f"{run.attrs['n_rejected']} rejected, {run.attrs['nfev']} Möbius maps, step {run.attrs['dt_min']:.1e} … "
             f"{run.attrs['dt_max']:.1e}; r(0) = {r[0]:.4f}, r({LARGE_TIMES[-1]:g}) = {r[-1]:.4f}",
             f"  r∞ = {r_inf:.4f} (t ≥ {LARGE_TIMES[-1] - LARGE_WINDOW:g}) vs the dense-graph limit {theory:.4f}: "
             f"|Δ| = {abs(r_inf - theory):.4f} ≤ 1/√{LARGE_DEGREE} = {1 / np.sqrt(LARGE_DEGREE):.3f} "
             f"{'ok' if ok else 'MISMATCH'}",
             f"  CPU time {cpu:.1f} s (goal {CPU_GOAL:g} s: {'met' if cpu < CPU_GOAL else 'not met'}; not checked "
             f"here), wall time {wall:.1f} s"]
    data = xr.Dataset({"large_order_parameter": ("large_time", r)}, coords={"large_time": LARGE_TIMES},
                      attrs={"large_cpu_seconds": cpu, "large_wall_seconds": wall})
    return lines, ok, data


def figure(data: xr.Dataset) -> Figure:
    fig = Figure(figsize=(15, 3.8), layout="constrained")
    curves, gaps, graphon = fig.subplots(1, 3)
    degrees = data.np.values
    for k, d in enumerate(degrees):
        curves.plot(data.er_time, data.er_order_parameter.values[k, 0], color=f"C{k}", label=f"G(n, p), np = {d:g}")
        curves.plot(data.er_time, data.er_order_parameter.values[k, 1], "--", color=f"C{k}", lw=1)
    curves.plot([], [], "k--", lw=1, label="all-to-all, coupling Kp")
    curves.set(xlabel="t", ylabel="r(t)", title=f"Erdős–Rényi, p = {ER_P:g}, against all-to-all with Kp")
    curves.legend(fontsize=8)
    gap = data.er_gap.values
    gaps.loglog(np.repeat(degrees, gap.shape[1]), gap.ravel(), "o", color="0.6", ms=4, label="each graph")
    gaps.loglog(degrees, gap.mean(axis=1), "o-", color="C0", label="mean")
    for slope, style in ((0.5, "--"), (1.0, ":")):
        gaps.loglog(degrees, gap.mean(axis=1)[0] * (degrees / degrees[0]) ** -slope, style, color="k", lw=1,
                    label=f"(np)^(-{slope:g})")
    gaps.set(xlabel="np", ylabel="max_t |r_G(t) - r(t)|", title="gap of r against the mean degree np")
    gaps.set_xticks(degrees, [f"{d:g}" for d in degrees])
    gaps.set_xticks([], minor=True)
    gaps.legend(fontsize=8)
    sizes = data.graphon_n.values.astype(float)
    for name, label, slope, color in (("graphon_w1_iid", "iid start", 0.5, "C0"),
                                      ("graphon_w1_shuffled", "shuffled quantiles (graph alone)", 0.75, "C3")):
        w = data[name].values[:, :, -1]
        graphon.errorbar(sizes, w.mean(axis=1), yerr=w.std(axis=1), fmt="o", color=color, capsize=3, label=label)
        graphon.loglog(sizes, w.mean(axis=1)[0] * (sizes / sizes[0]) ** -slope, "--", color=color, lw=1,
                     label=f"n^(-{slope:g})")
    graphon.set(xscale="log", yscale="log", xlabel="n", ylabel="W₁ at t = 2",
                title="graphon PDE against particles on sampled graphs")
    graphon.set_xticks(sizes, [f"{n:g}" for n in sizes])
    graphon.set_xticks([], minor=True)
    graphon.legend(fontsize=8)
    return fig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", type=Path, default=Path("validation_output"))
    args = parser.parse_args(argv)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    lines, ok, pieces = [], True, []
    for part in (twisted_states, complete_graph, erdos_renyi_limit, erdos_renyi_synchronisation, graphon_limit,
                 large_network):
        more, good, *data = part()
        print("\n".join(more), flush=True)
        lines += more
        ok &= good
        pieces += data
    lines += ["", f"{'PASS' if ok else 'FAIL'} ({time.perf_counter() - start:.0f} s)"]
    print(lines[-1])
    (args.output_dir / "networks.txt").write_text("\n".join(lines) + "\n")
    data = xr.merge(pieces, combine_attrs="drop_conflicts")
    data.attrs.update(description="Kuramoto oscillators on networks (validation/networks.py)",
                      meanfield_version=mf.__version__)
    data.to_netcdf(args.output_dir / "networks.nc")
    figure(data).savefig(args.output_dir / "networks.png", dpi=100)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

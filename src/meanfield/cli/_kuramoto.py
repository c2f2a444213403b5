"""``meanfield kuramoto``: one Kuramoto run (r(t)) or a bifurcation diagram r∞(K), as NetCDF + PNG.

Without ``--couplings`` it runs one coupling (``--coupling``) by particles, the
PDE or the Ott–Antonsen engine (``--engine particles|pde|ott-antonsen``, the
``engine`` of :func:`meanfield.studies.kuramoto_run`; the PDE's scheme follows
from the noise: finite volume without, spectral with) and writes r(t) with r∞
and the theory value. With ``--couplings a:b:k`` it sweeps K (and ``--systems``
systems for particles) through :func:`meanfield.kuramoto_bifurcation` (dask
LocalCluster by default; the Ott–Antonsen engine in one batch) and writes r∞(K)
with the branches of the reduced equations where the law has poles
(:func:`meanfield.kuramoto_branches`) and the self-consistency theory where it
applies. Prints a short table. ``--graph`` couples the particles of one run on a graph
(:class:`meanfield.Graph`: a description such as ``erdos-renyi:p=0.1`` drawn with ``--graph-seed``, or an
edge-list / ``.npz`` file), normalised by n or the degree (``--normalization``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

import meanfield as mf

from ..io._conventions import described_run
from ..models._graph import NORMALIZATIONS, Graph
from ..models._graph_files import GRAPH_KINDS
from ..io._files import write_netcdf
from ..reduced import ENGINE
from ..studies import frequency_law, kuramoto_run
from ._options import add_output_arguments, check_at_least, result_paths
from ._sweep_options import VALUES_HELP, parse_values, sweep_options

__all__ = ["add_kuramoto_arguments", "kuramoto_command", "default_output"]

#: what ``--graph`` names besides a file
GRAPH_EXAMPLES = ("complete", "ring:k=2", "lattice:shape=40x50", "erdos-renyi:p=0.1", "small-world:k=3,p=0.1",
                  "scale-free:m=3")


DEFAULT_COUPLING = 4.0
"""K of a single run when neither ``--coupling`` nor ``--couplings`` is given."""


def default_output(args: argparse.Namespace, couplings: np.ndarray | None) -> Path:
    """``kuramoto_<law><width>[_sep<ω₀>][_lag<α>]_<engine>[_n<n>|_grid<N>][_noise<σ>]_K<K>_t<t_final>.nc`` of one run,
    ``…_K<first>-<last>x<count>[_s<systems>]_t<t_final>_bifurcation.nc`` of a diagram."""
    noise = f"_noise{args.noise:g}" if args.noise > 0 else ""
    if couplings is None:
        what = f"K{args.coupling:g}" + (f"_seed{args.seed}" if args.engine == "particles" else "")
    else:
        systems = f"_s{args.systems}" if args.engine == "particles" else ""
        what = f"K{couplings[0]:g}-{couplings[-1]:g}x{couplings.size}{systems}"
    size = {"particles": f"_n{args.particles}", "pde": f"_grid{args.grid}"}.get(args.engine, "")
    law = f"{args.law}{args.width:g}" + (f"_sep{args.separation:g}" if args.law == "bimodal" else "")
    lag = f"_lag{args.phase_lag:g}" if args.phase_lag != 0 else ""
    diagram = "_bifurcation" if couplings is not None else ""
    return Path(f"kuramoto_{law}{lag}_{args.engine}{size}{_graph_label(args)}{noise}_{what}_t{args.t_final:g}"
                f"{diagram}.nc")


def add_kuramoto_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``meanfield kuramoto`` to ``parser``."""
    parser.add_argument("--coupling", type=float, default=None,
                        help=f"coupling K of a single run (default {DEFAULT_COUPLING:g}; not with --couplings)")
    parser.add_argument("--couplings", default=None, help=f"sweep K for a bifurcation diagram: {VALUES_HELP}, e.g. 0:4:17 or 1,2,4")
    parser.add_argument("--law", choices=["lorentzian", "gaussian", "bimodal"], default="lorentzian",
                        help="law of the natural frequencies (bimodal: two Lorentzians at +-separation)")
    parser.add_argument("--width", type=float, default=0.6,
                        help="Lorentzian half-width gamma (bimodal: of each peak) or Gaussian standard deviation")
    parser.add_argument("--separation", type=float, default=None,
                        help="--law bimodal: distance omega_0 of each peak from 0 (required there)")
    parser.add_argument("--phase-lag", type=float, default=0.0,
                        help="phase lag alpha of the coupling sin(theta_j - theta - alpha) (Sakaguchi)")
    parser.add_argument("--noise", type=float, default=0.0, help="sigma in dtheta = ... + sqrt(2 sigma) dW")
    parser.add_argument("--engine", choices=["particles", "pde", "ott-antonsen"], default="particles",
                        help="particles (exact-drift integrator; Euler-Maruyama with noise), the PDE "
                        "(finite volume without noise, spectral with noise) or the Ott-Antonsen amplitudes "
                        "(no noise, Lorentzian or bimodal law: exact, milliseconds)")
    parser.add_argument("--particles", type=int, default=2000, help="oscillators n (--engine particles)")
    parser.add_argument("--t-final", type=float, default=60.0, help="final time")
    parser.add_argument("--average-window", type=float, default=20.0, help="r_inf averages r over the last window")
    parser.add_argument("--seed", type=int, default=0, help="seed of the initial phases (single particle run)")
    parser.add_argument("--systems", type=int, default=4,
                        help="independent systems (seeds 0, 1, ...) per coupling (particle bifurcation diagram)")
    parser.add_argument("--grid", type=int, default=128, help="PDE nodes in theta")
    parser.add_argument("--frequency-nodes", type=int, default=None,
                        help="PDE quadrature nodes in omega (default: enough to avoid rephasing up to t-final)")
    parser.add_argument("--dt", type=float, default=0.01, help="Euler-Maruyama step (particles with noise)")
    parser.add_argument("--rtol", type=float, default=None,
                        help="tolerance of the adaptive integrators (default: 1e-3 particles, 1e-4 PDE)")
    parser.add_argument("--graph", default=None,
                        help="couple the particles on a graph of --particles nodes: " + ", ".join(
                            GRAPH_EXAMPLES) + ", or a file: an edge list 'i j [weight]' per line (0-based; "
                        ".txt/.csv/.edges) or a scipy.sparse .npz (--engine particles, one run)")
    parser.add_argument("--normalization", choices=list(NORMALIZATIONS), default="n",
                        help="--graph: divide the sum over a node's edges by n (default) or by its degree")
    parser.add_argument("--graph-seed", type=int, default=0, help="--graph: seed of a random graph")
    parser.add_argument("--directed", action="store_true",
                        help="--graph FILE: an edge 'i j' means node i feels node j only")
    add_output_arguments(parser,
                         "NetCDF output (default: named after the run, e.g. "
                         "kuramoto_lorentzian0.6_particles_n2000_K4_seed0_t60.nc); PNG beside it",
                         "hide the progress bar over tasks")


def kuramoto_command(args: argparse.Namespace) -> int:
    """Run what ``args`` describe; write NetCDF and PNG; print a summary."""
    couplings = parse_values(args.couplings, "--couplings") if args.couplings is not None else None
    if couplings is not None and args.coupling is not None:
        raise ValueError("--coupling (one run) and --couplings (a diagram) exclude each other; give one")
    args.coupling = DEFAULT_COUPLING if args.coupling is None else args.coupling
    if (args.law == "bimodal") != (args.separation is not None):
        raise ValueError("--separation goes with --law bimodal (and is required there)")
    args.separation = 0.0 if args.separation is None else args.separation
    law = frequency_law(args.law, args.width, separation=args.separation)
    check_at_least(args, particles=2, systems=1, grid=8)
    if not args.dt > 0:
        raise ValueError(f"--dt must be > 0, got {args.dt}")
    graph = _graph(args, couplings)
    output, png = result_paths(args, default_output(args, couplings))
    common = {"phase_lag": args.phase_lag, "noise": args.noise, "engine": args.engine, "n": args.particles,
              "t_final": args.t_final, "average_window": args.average_window,
              "frequency_nodes": args.frequency_nodes, "grid": args.grid, "dt": args.dt, "rtol": args.rtol}
    bimodal = {"separation": args.separation} if args.law == "bimodal" else {}
    described = f"{args.law} ({args.width:g}{', ±' + format(args.separation, 'g') if bimodal else ''})" + (
        f", phase lag {args.phase_lag:g}" if args.phase_lag else "")
    if couplings is None:
        ds = kuramoto_run(args.coupling, args.seed if args.engine == "particles" else None, law=args.law,
                          width=args.width, graph=graph, **bimodal, **common)
        ds.attrs["coupling"] = float(args.coupling)
        effective = _dense_limit_coupling(args.coupling, graph)
        theory, critical = _theory(effective, law, args.noise, args.phase_lag) if effective is not None else (
            np.nan, np.nan)
        ds.attrs = described_run(ds.attrs, args.command_line)
        write_netcdf(ds, output)
        mf.plot.order_parameter_curve(ds, theory=theory if np.isfinite(theory) else None).savefig(
            png, dpi=120, bbox_inches="tight")
        limit = ""
        if graph is not None:
            described += f", on {graph!r}"
            limit = f" of the dense-graph limit (all-to-all, K_eff = {effective:.4g})" if effective is not None else ""
        print(f"Kuramoto K = {args.coupling:g}, {described}, noise {args.noise:g}, {args.engine}: "
              f"r_inf = {float(ds['r_inf']):.4f} +- {float(ds['r_spread']):.4f} (window spread), "
              + (f"theory{limit} {theory:.4f}, K_c = {critical:.4g}" if np.isfinite(theory) else
                 "no self-consistency theory on this graph" if graph is not None and effective is None else
                 "no self-consistency theory for this law"))
    else:
        ds = mf.kuramoto_bifurcation(couplings, args.law, width=args.width, seeds=args.systems,
                                     progress=not args.no_progress, **bimodal, **common, **sweep_options(args))
        ds.attrs = described_run(ds.attrs, args.command_line)
        write_netcdf(ds, output)
        branches = mf.kuramoto_branches(mf.Kuramoto(frequencies=law, phase_lag=args.phase_lag), couplings) \
            if args.noise == 0 and mf.Kuramoto(frequencies=law).frequency_poles is not None else None
        mf.plot.bifurcation(ds, branches=branches).savefig(png, dpi=120, bbox_inches="tight")
        how = "one batch" if args.engine == ENGINE else \
            f"{ds.attrs['tasks_run']} tasks run, {ds.attrs['tasks_skipped']} skipped"
        if np.isfinite(ds.attrs["critical_coupling"]):
            threshold = f"K_c = {ds.attrs['critical_coupling']:.4g}"
        elif branches is not None:
            threshold = "incoherence loses stability at K = " + (", ".join(
                f"{k:.6g}" for k in np.atleast_1d(branches.attrs["incoherence_loses_stability_at"])) or "none")
        else:
            threshold = "no self-consistency theory for this law"
        print(f"Kuramoto bifurcation, {described}, noise {args.noise:g}, {args.engine}: {threshold}, "
              f"{ds.attrs['wall_time']:.2f} s ({how})")
        print(f"{'K':>8} {'r_inf':>8} {'+-':>7} {'theory':>8}")
        for k in range(couplings.size):
            print(f"{couplings[k]:8.4g} {float(ds.r_mean[k]):8.4f} {float(ds.r_error[k]):7.4f} "
                  f"{float(ds.r_theory[k]):8.4f}")
    print(f"wrote {output}")
    print(f"wrote {png}")
    return 0


def _graph(args: argparse.Namespace, couplings: np.ndarray | None) -> Graph | None:
    """The graph ``--graph`` names (a description or a file), or None; refused where it does not apply."""
    given = {"--normalization": args.normalization != "n", "--graph-seed": args.graph_seed != 0,
             "--directed": args.directed}
    if args.graph is None:
        stray = [name for name, set_ in given.items() if set_]
        if stray:
            raise ValueError(f"{', '.join(stray)} {'goes' if len(stray) == 1 else 'go'} with --graph")
        return None
    if couplings is not None or args.engine != "particles":
        raise ValueError("--graph couples the particles of one run: it needs --engine particles and --coupling "
                         "(not --couplings)")
    if not _is_description(args.graph):
        return Graph.from_file(args.graph, n=args.particles, directed=args.directed, normalization=args.normalization)
    if args.directed:
        raise ValueError("--directed goes with --graph FILE (an edge list)")
    return Graph.from_spec(args.graph, args.particles, seed=args.graph_seed, normalization=args.normalization)


def _is_description(graph: str) -> bool:
    """Whether ``--graph`` names a kind of graph (``kind[:…]``) rather than a file."""
    return graph.partition(":")[0] in GRAPH_KINDS


def _graph_label(args: argparse.Namespace) -> str:
    """``_graph-<description>[-<normalization>][-gseed<s>]`` of ``--graph`` for the default file name ("" without)."""
    if args.graph is None:
        return ""
    text = args.graph if _is_description(args.graph) else Path(args.graph).stem
    text = "".join(c if c.isalnum() or c in "-." else "-" for c in text.replace("=", ""))
    seed = f"-gseed{args.graph_seed}" if args.graph_seed else ""
    return f"_graph-{text}" + (f"-{args.normalization}" if args.normalization != "n" else "") + seed


def _dense_limit_coupling(coupling: float, graph: Graph | None) -> float | None:
    """The all-to-all coupling whose theory a run on ``graph`` approaches: K itself without a graph; on a complete
    or Erdős–Rényi graph (the constant graphon p, :class:`meanfield.GraphonKuramoto`) K·⟨d⟩/n under
    normalisation by n and K under normalisation by the degree; None on any other graph (no such limit)."""
    if graph is None:
        return coupling
    if not graph.name.startswith(("complete(", "erdos-renyi(")):
        return None
    if graph.normalization == "degree":
        return coupling
    return coupling * float(np.mean(graph.degrees)) / graph.n_nodes


def _theory(coupling: float, law: Any, noise: float, phase_lag: float) -> tuple[float, float]:
    """(r∞, K_c) of the self-consistency theory, NaN where it does not apply (a bimodal law)."""
    try:
        return (float(mf.kuramoto_theory(coupling, law, noise, phase_lag)),
                mf.kuramoto_critical_coupling(law, noise, phase_lag))
    except ValueError:
        return np.nan, np.nan

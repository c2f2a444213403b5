"""Bad and edge calls across the public API, each classified automatically.

Run as a script (not collected by pytest)::

    OMP_NUM_THREADS=1 python tests/fuzz_bad_inputs.py [--only CATEGORY ...] [--timeout SECONDS] [--list]

Every case is a line of Python evaluated with ``mf`` (meanfield), ``np``, ``st``
(scipy.stats), ``main`` (the command line) and a few small fixtures in scope.
A *bad* case must be refused; an *edge* case must either give a correct result
(its check passes) or be refused clearly. Outcomes:

clear error     ValueError/TypeError (argparse: exit code 2) whose message names the argument
correct         an edge case whose result passes its check
obscure         any other exception, or a message that names none of the case's arguments
silent garbage  a bad case that returns, or an edge case whose result fails its check
                (NaN, inf, wrong mass, success=1 where the run failed, rc 0 …)
crash           the process died or the case exceeded the time limit
n/a             a public name the case needs does not exist in this version

Cases run in a worker process that is restarted after a crash, so one dying call
costs only itself. The table is printed per category.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import queue
import subprocess
import sys
import threading
from dataclasses import dataclass

OUTCOMES = ("clear error", "correct", "obscure", "silent garbage", "crash", "n/a")


@dataclass(frozen=True)
class Case:
    category: str
    code: str
    names: tuple[str, ...]  # argument names a clear message mentions (any of them)
    check: str | None = None  # edge case: expression of `r` that is True for a correct result
    needs: tuple[str, ...] = ()  # public names (attributes of mf, or "cli:<subcommand>")


def _bad(category, code, *names, needs=()):
    return Case(category, code, tuple(names), None, tuple(needs))


def _edge(category, code, check, *names, needs=()):
    return Case(category, code, tuple(names), check, tuple(needs))


BAD_NUMBERS = ["'4'", "True", "-1.0", "float('nan')", "float('inf')", "None", "[1.0, 2.0]", "1j"]
BAD_COUNTS = ["0", "-3", "2.5", "'8'", "True", "None", "float('nan')", "10**30"]
BAD_TIMES = ["[0.0]", "[1.0, 0.5]", "[0.0, float('nan')]", "[[0.0, 1.0]]", "'0 1'", "[]", "None",
             "[0.0, 0.0]", "0.5", "[0.0, float('inf')]"]


def cases() -> list[Case]:
    out: list[Case] = []
    # --- models -----------------------------------------------------------------------------
    for v in BAD_NUMBERS:
        out.append(_bad("models", f"mf.SelfAttention({v})", "beta"))
        out.append(_bad("models", f"mf.SelfAttention(1.0, noise={v})", "noise"))
        out.append(_bad("models", f"mf.Kuramoto({v})", "coupling"))
        out.append(_bad("models", f"mf.Kuramoto(1.0, noise={v})", "noise"))
    for v in ["1", "'yes'", "None", "1.0"]:
        out.append(_bad("models", f"mf.SelfAttention(1.0, normalized={v})", "normalized"))
    for v in ["st.norm", "st.cauchy", "'gaussian'", "[0.1, 0.2]", "float('nan')", "object()"]:
        out.append(_bad("models", f"mf.Kuramoto(1.0, {v})", "frequencies"))
    for v in ["[0.0]", "[]", "[[0, 1j]]", "[0, float('nan')]", "[1.0j, 0.5j]", "'sin'"]:
        out.append(_bad("models", f"mf.Kuramoto(interaction={v})", "interaction"))
    out.append(_edge("models", "mf.Kuramoto() == mf.Kuramoto()", "r is True"))
    out.append(_edge("models", "mf.Kuramoto(1.0, st.norm(0, 1)) == mf.Kuramoto(1.0, st.norm(0, 2))", "r is False"))
    out.append(_edge("models", "mf.SelfAttention(1.0) == mf.SelfAttention(1.0)", "r is True"))
    out.append(_edge("models", "mf.SelfAttention(800.0, normalized=False).velocity(X10)", "False", "beta"))
    for v in BAD_NUMBERS:
        out.append(_bad("models", f"mf.Interaction('-t', noise={v})", "noise", needs=("Interaction",)))
        out.append(_bad("models", f"mf.Kernel.riesz({v})", "s", needs=("Kernel",)))
        out.append(_bad("models", f"mf.Kernel.gaussian({v})", "epsilon", needs=("Kernel",)))
    for v in ["\"__import__('os').system('true')\"", "'open(1)'", "'x + 1'", "'t.real'", "'1/(1-t)'",
              "'log(t)'", "lambda t: t + 1j", "lambda t: np.ones(3)", "[1, 2]", "None"]:
        out.append(_bad("models", f"mf.Interaction({v})", "kernel", "f", needs=("Interaction",)))
    for v in ["1", "'yes'", "None"]:
        out.append(_bad("models", f"mf.Interaction('-t', normalized={v})", "normalized", needs=("Interaction",)))
    out.append(_bad("models", "mf.Interaction('t**2', normalized=True)", "normalized", needs=("Interaction",)))
    out.append(_bad("models", "mf.Interaction('riesz:s=1', normalized=True)", "normalized", needs=("Interaction",)))
    out.append(_bad("models", "mf.Kernel.fourier([0, 1j])", "coefficients", needs=("Kernel",)))
    out.append(_bad("models", "mf.Potential.zonal('t', axis=[1.0, 1.0])", "axis", needs=("Potential",)))
    out.append(_bad("models", "mf.Interaction('-t', potential=3.0)", "potential", needs=("Interaction",)))
    out.append(_edge("models", "mf.Interaction('-t').growth_rate(1)", "abs(r - 0.5) < 1e-15", needs=("Interaction",)))
    # --- domains and densities ----------------------------------------------------------------
    for v in BAD_COUNTS:
        out.append(_bad("density", f"mf.Circle({v})", "n"))
        out.append(_bad("density", f"mf.Sphere({v})", "lmax"))
        out.append(_bad("density", f"mf.ZonalSphere({v}, 16)", "d"))
        out.append(_bad("density", f"mf.ZonalSphere(3, {v})", "n"))
    for v in BAD_NUMBERS:
        out.append(_bad("density", f"mf.von_mises(C32, 0.0, {v})", "kappa"))
        if v not in ("-1.0", "None"):  # a negative angle and None (the angle 0) are valid
            out.append(_bad("density", f"mf.von_mises(C32, {v}, 1.0)", "loc"))
        out.append(_bad("density", f"mf.wrapped_cauchy(C32, 0.0, {v})", "r"))
    for v in ["np.ones(31)", "-np.ones(32)", "np.zeros(32)", "np.full(32, np.nan)", "'flat'", "np.ones((32, 2))"]:
        out.append(_bad("density", f"mf.density(C32, {v})", "values", "density", "f"))
    out.append(_bad("density", "mf.von_mises(mf.Sphere(15), np.array([0.0, 0.0, 2.0]), 1.0)", "loc"))
    out.append(_bad("density", "mf.von_mises(mf.Sphere(15), np.array([0.0, 1.0]), 1.0)", "loc"))
    out.append(_bad("density", "mf.wrapped_cauchy(mf.Sphere(15), 0.0, 0.5)", "domain", "circle"))
    for n, kappa in [(16, 1e3), (16, 200.0), (32, 1e4), (64, 1e5)]:
        out.append(_edge("density", f"mf.von_mises(mf.Circle({n}), 0.0, {kappa})", "abs(r.mass - 1) < 1e-6",
                         "kappa", "n"))
    out.append(_edge("density", "mf.von_mises(mf.Sphere(7), None, 500.0)", "abs(r.mass - 1) < 1e-6", "kappa", "lmax"))
    out.append(_edge("density", "mf.von_mises(mf.ZonalSphere(3, 16), None, 1e3)", "abs(r.mass - 1) < 1e-6",
                     "kappa", "n"))
    # --- sample -------------------------------------------------------------------------------
    for v in BAD_COUNTS:
        out.append(_bad("sample", f"mf.sample(RHO, {v})", "n"))
    for v in ["-1", "'seed'", "1.5", "[1, -2]"]:
        out.append(_bad("sample", f"mf.sample(RHO, 10, seed={v})", "seed"))
    for v in ["'sobol'", "None", "1"]:
        out.append(_bad("sample", f"mf.sample(RHO, 10, method={v})", "method"))
    for v in ["X10", "None", "'rho'", "np.ones(32)"]:
        out.append(_bad("sample", f"mf.sample({v}, 10)", "measure"))
    out.append(_edge("sample", "mf.sample(mf.von_mises(mf.Circle(16), 0.0, 1e3), 100)",
                     "np.all(np.isfinite(r.points))", "kappa"))
    # --- energy -------------------------------------------------------------------------------
    sa = "mf.SelfAttention(1.0)"
    for v in ["[]", "np.nan", "[np.nan, 1.0]", "np.zeros((0, 3))", "ANGLES_3x10", "'x'", "None",
              "np.zeros((2, 3, 4, 5))", "[[1.0, 0.0], [0.0, 2.0]]", "np.full((4, 3), np.inf)"]:
        out.append(_bad("energy", f"mf.energy({sa}, {v})", "measure", "domain", "x0", "positions"))
    for v in ["'circle'", "None", "1.0", "RHO"]:
        out.append(_bad("energy", f"mf.energy({v}, X10)", "model"))
    out.append(_bad("energy", "mf.energy(mf.Kuramoto(interaction=[0.3, 0.5]), X10)", "interaction", "h"))
    # the model fixes the circle: (10, 3) is 10 systems of 3 angles, as for every Kuramoto function
    out.append(_edge("energy", "mf.energy(mf.Kuramoto(), SPH10)", "r.shape == (10,)", "domain"))
    out.append(_bad("energy", "mf.energy(mf.Kuramoto(), SPH10, domain='sphere')", "domain", "circle"))
    out.append(_bad("energy", f"mf.energy({sa}, X10, sphere_tolerance=-1.0)", "sphere_tolerance"))
    out.append(_bad("energy", f"mf.energy({sa}, SPH10 * 1.01)", "measure", "renormalize", "sphere"))
    out.append(_edge("energy", "mf.energy(mf.SelfAttention(1.0), ANGLES_3x10, domain='circle')",
                     "r.shape == (3,) and np.all(np.isfinite(r))", "domain"))
    out.append(_edge("energy", "mf.energy(mf.SelfAttention(800.0), X10)", "np.isfinite(r) or r == np.inf", "beta"))
    out.append(_edge("energy", "mf.energy(mf.SelfAttention(0.0), X10)", "abs(r - 0.5 * abs(np.mean(np.exp(1j * X10)))**2) < 1e-14"))
    # --- velocity -----------------------------------------------------------------------------
    for v in ["[]", "[np.nan]", "ANGLES_3x10", "SPH10 * 2", "'x'", "np.zeros((2, 3, 4, 5))"]:
        out.append(_bad("velocity", f"{sa}.velocity({v})", "measure", "domain", "positions"))
    out.append(_edge("velocity", "mf.Kuramoto().velocity(SPH10)", "r.shape == (10, 3)", "domain"))
    out.append(_bad("velocity", "mf.Kuramoto().velocity(SPH10, domain='sphere')", "domain", "circle"))
    out.append(_edge("velocity", f"{sa}.velocity(ANGLES_3x10, domain='circle')", "r.shape == (3, 10)", "domain"))
    # --- wasserstein --------------------------------------------------------------------------
    for v in ["0.5", "float('nan')", "float('inf')", "'2'", "None", "-1", "[1, 2]", "True"]:
        out.append(_bad("wasserstein", f"mf.wasserstein(X10, X10 + 0.1, {v})", "p"))
    for v in ["'torus'", "1", "'euclidean'"]:
        out.append(_bad("wasserstein", f"mf.wasserstein(X10, X10, domain={v})", "domain"))
    for a, b in [("X10", "SPH10"), ("[]", "X10"), ("[np.nan]", "X10"), ("X10", "{}"), ("SPH10 * 1.01", "SPH10"),
                 ("SPH10", "SPH10[:, :2] / np.linalg.norm(SPH10[:, :2], axis=1, keepdims=True)"),
                 ("np.zeros((3, 4, 5))", "X10"), ("RHO_UNNORMALIZED", "X10"), ("'x'", "X10"),
                 ("ANGLES_3x10", "X10")]:
        out.append(_bad("wasserstein", f"mf.wasserstein({a}, {b})", "a", "b", "domain", "p"))
    out.append(_bad("wasserstein", "mf.wasserstein(X10, X10, density='smooth')", "density"))
    out.append(_bad("wasserstein", "mf.wasserstein(mf.uniform(mf.Sphere(7)), SPH10, density='cells')", "density"))
    for p in [700, 1000, 1e6]:
        out.append(_edge("wasserstein", f"mf.wasserstein(np.array([0.0]), np.array([1.0]), {p})",
                         "abs(r - 1.0) < 1e-9", "p"))
        out.append(_edge("wasserstein", f"mf.wasserstein(SPH10, -SPH10[::-1], {p})",
                         "np.isfinite(r) and r > 0", "p"))
    out.append(_edge("wasserstein", "mf.wasserstein(RHO, ANGLES_3x10, domain='circle')",
                     "r.shape == (3,) and np.all(r > 0)", "domain"))
    out.append(_edge("wasserstein", "mf.wasserstein(X10, X10 + 2 * np.pi)", "abs(r) < 1e-12"))
    # --- simulate -----------------------------------------------------------------------------
    T = "[0.0, 0.1]"
    for v in BAD_TIMES:
        out.append(_bad("simulate", f"mf.simulate({sa}, X10, {v})", "t"))
    for v in ["[]", "[np.nan, 1.0]", "np.zeros((0, 3))", "ANGLES_3x10", "SPH10 * 1.01", "'x'", "None",
              "np.zeros((2, 3, 4, 5))", "{}"]:
        out.append(_bad("simulate", f"mf.simulate({sa}, {v}, {T})", "x0", "domain"))
    for kw in ["method='rk77'", "method='euler'", "dt=-0.1, method='rk4'", "dt=float('nan'), method='rk4'",
               "rtol=-1.0", "rtol=float('nan')", "atol=0.0", "path='gpu'", "path='nufft', domain='sphere'",
               "domain='torus'", "domain='euclidean'", "accuracy=2.0", "seed=-1", "seed='a'", "max_steps=0",
               "block_elements=0", "sphere_tolerance=-1.0", "frequencies='random'", "checkpoint=None, resume=True",
               "checkpoint='/proc/nope/x.nc'", "progress='yes'"]:
        model_x = ("mf.Kuramoto(), X10" if "frequencies" in kw else
                   f"{sa}, SPH10" if "sphere" in kw else f"{sa}, X10")
        name = kw.split("=")[0]
        out.append(_bad("simulate", f"mf.simulate({model_x}, {T}, {kw})", name, "path", "method", "domain"))
    out.append(_bad("simulate", f"mf.simulate(mf.SelfAttention(1.0, noise=0.1), X10, {T}, method='dopri5')",
                    "noise", "method"))
    out.append(_edge("simulate", f"mf.simulate(mf.Kuramoto(), SPH10, {T})", "r['positions'].shape == (10, 2, 3)",
                     "domain"))
    out.append(_bad("simulate", f"mf.simulate(mf.Kuramoto(), SPH10, {T}, domain='sphere')", "domain"))
    out.append(_bad("simulate", f"mf.simulate('SA', X10, {T})", "model"))
    out.append(_edge("simulate", f"mf.simulate({sa}, ANGLES_3x10, {T}, domain='circle')",
                     "r['positions'].shape == (3, 2, 10) and r.attrs['success'] == 1", "domain"))
    out.append(_edge("simulate", f"mf.simulate({sa}, SPH10, {T})",
                     "r.attrs['success'] == 1 and np.all(np.isfinite(r['energy']))"))
    out.append(_edge("simulate", f"mf.simulate(mf.SelfAttention(1.0, noise=1e6), X10, {T}, dt=0.01)",
                     "np.all(np.isfinite(r['positions']))", "noise", "dt"))
    out.append(_edge("simulate", f"mf.simulate(mf.SelfAttention(700.0), X10, {T})",
                     "r.attrs['success'] == 1 and np.all(np.isfinite(r['positions']))", "beta"))
    # --- solve --------------------------------------------------------------------------------
    for v in BAD_TIMES:
        out.append(_bad("solve", f"mf.solve({sa}, RHO, {v})", "t"))
    for v in ["X10", "None", "np.ones(32)", "'rho'"]:
        out.append(_bad("solve", f"mf.solve({sa}, {v}, {T})", "rho0"))
    for kw in ["'rk4'", "'spectral', rtol=-1.0", "'spectral', rtol='a'", "'spectral', bogus=1",
               "'spectral', diffusion=0.1", "'finite_volume', cfl=-1.0", "'spectral', max_step=-1.0",
               "'spectral', frequency_nodes=0", "'spectral', checkpoint_interval=-1.0",
               "'spectral', checkpoint=None, resume=True", "'spectral', checkpoint='/proc/nope/x.nc'",
               "'spectral', progress='yes'", "None"]:
        name = kw.split(",")[-1].split("=")[0].strip(" '") if "=" in kw else "method"
        out.append(_bad("solve", f"mf.solve({sa}, RHO, {T}, {kw})", name, "method", "option"))
    out.append(_bad("solve", f"mf.solve('SA', RHO, {T})", "model"))
    out.append(_bad("solve", f"mf.solve(mf.Kuramoto(), mf.uniform(mf.Sphere(7)), {T})", "domain", "rho0", "Kuramoto"))
    out.append(_edge("solve", f"mf.solve({sa}, mf.von_mises(mf.Circle(16), 0.0, 30.0), [0.0, 1.0])",
                     "r.attrs['success'] == 0 and r.sizes['time'] == 1", "rho0", "n"))
    out.append(_edge("solve", f"mf.solve({sa}, mf.von_mises(mf.ZonalSphere(3, 16), None, 200.0), [0.0, 0.1])",
                     "r.attrs['success'] == 0 and r.sizes['time'] == 1", "rho0", "n"))
    out.append(_edge("solve", f"mf.solve({sa}, RHO, [0.0, 1.0], 'finite_volume')",
                     "r.attrs['success'] == 1 and abs(float(r['mass'][-1]) - 1) < 1e-10"))
    out.append(_edge("solve", "mf.solve(mf.SelfAttention(1.0, noise=1e6), RHO, [0.0, 1e-3], 'finite_volume')",
                     "np.all(np.isfinite(r['density'])) and abs(float(r['mass'][-1]) - 1) < 1e-8", "noise"))
    # --- extreme inputs: refused by name, or a result that says it failed ---------------------------
    ex = "extreme"
    for code in ["mf.simulate(mf.SelfAttention(1.0, noise=1e14), SPH10, [0.0, 1.0], dt=0.1, seed=1)",
                 "mf.simulate(mf.SelfAttention(1.0, noise=1e100), SPH10, [0.0, 1.0], dt=0.1, seed=1)",
                 "mf.simulate(mf.SelfAttention(1.0, noise=1e100), X10, [0.0, 1.0], dt=0.1, seed=1)",
                 "mf.simulate(mf.Kuramoto(1.0, st.cauchy(0, 1e18)), X10, [0.0, 1.0])",
                 "mf.simulate(mf.Kuramoto(1.0, st.cauchy(0, 1e30)), X10, [0.0, 1.0])"]:
        out.append(_edge(ex, code, "r.attrs['success'] == 0 and r.attrs['message'].startswith('invalid result')",
                         "noise", "frequencies"))
    out.append(_bad(ex, "mf.solve(mf.SelfAttention(800.0, normalized=False), RHO, [0.0, 1.0])", "beta"))
    out.append(_bad(ex, "mf.solve(mf.Kuramoto(1.0, st.uniform(0.5, 0)), RHO, [0.0, 1.0])", "frequencies"))
    out.append(_bad(ex, "mf.simulate(mf.Kuramoto(1.0, st.norm(0, 0)), X10, [0.0, 1.0])", "frequencies"))
    out.append(_bad(ex, "mf.EmpiricalMeasure(X10, np.full(10, 0.1) - 1e-10)", "weights"))
    for values in ["np.full(32, 1e-320)", "np.full(32, 1e308)", "np.r_[np.full(31, 5e-324), 1.0]"]:
        out.append(_edge(ex, f"mf.density(C32, {values})", "abs(r.mass - 1) < 1e-14", "values"))
    for d in [600, 5000]:
        out.append(_edge(ex, f"mf.uniform(mf.ZonalSphere({d}, 32))", "abs(r.mass - 1) < 1e-13", "d"))
    # --- dtypes: complex, strings and booleans where real numbers are meant ---------------------------
    for code, names in [("mf.solve(SA4, RHO, np.array([0, 0.5 + 1j]))", ("t",)),
                        ("mf.solve(SA4, RHO, ['0', '1'])", ("t",)),
                        ("mf.simulate(SA4, X10 + 1j, [0.0, 0.1])", ("x0",)),
                        ("mf.simulate(SA4, X10 > 1, [0.0, 0.1])", ("x0",)),
                        ("mf.wasserstein(X10 + 1j, X10)", ("a",)),
                        ("mf.wasserstein(X10, X10.astype(str))", ("b",)),
                        ("mf.Density(C64, np.ones(64, dtype=complex) / (2 * np.pi))", ("values",)),
                        ("mf.density(C64, np.ones(64, dtype=complex) / (2 * np.pi))", ("values",)),
                        ("mf.order_parameter(X10 + 1j)", ("positions",)),
                        ("mf.energy(SA4, np.array(['1', '2']))", ("positions", "measure"))]:
        out.append(_bad("dtypes", code, *names))
    # --- non-finite results: refused by name, or success 0 --------------------------------------------
    for code, names in [("mf.solve(mf.SelfAttention(1e4), RHO64, [0.0, 1.0])", ("beta",)),
                        ("mf.simulate(mf.SelfAttention(1e4), X10, [0.0, 1.0])", ("beta",)),
                        ("mf.solve(mf.SelfAttention(4.0, noise=1e300), RHO64, [0.0, 1.0], method='spectral')",
                         ("noise",))]:
        out.append(_edge("non-finite", code, "FINITE_OR_FAILED(r)", *names))
    out.append(_bad("non-finite", "mf.simulate(mf.Kuramoto(1.0), X10, [0.0, 0.1], frequencies=np.full(10, np.nan))",
                    "frequencies"))
    out.append(_bad("non-finite", "mf.simulate(mf.Kuramoto(1.0), X10, [0.0, 0.1], frequencies=np.full(10, 1j))",
                    "frequencies"))
    # --- sizes checked against memory before allocation -----------------------------------------------
    for code, names in [("mf.Circle(10**12)", ("n",)), ("mf.Sphere(10**6)", ("lmax",)),
                        ("mf.ZonalSphere(3, 10**12)", ("n",)),
                        ("mf.sharp_configuration('polygon', n=10**9)", ("n",)),
                        ("mf.sample(RHO, 10**12)", ("n",)),
                        ("mf.solve(mf.Kuramoto(1.0, st.norm(0, 0.5)), RHO, [0.0, 0.1], 'spectral', "
                         "frequency_nodes=10**9)", ("frequency_nodes",))]:
        out.append(_bad("sizes", code, *names))
    # --- options outside their meaning ----------------------------------------------------------------
    for code, names in [("mf.simulate(SA4, X10, [0.0, 0.1], rtol=1e-30)", ("rtol",)),
                        ("mf.solve(SA4, RHO, [0.0, 0.1], 'spectral', rtol=1e-30)", ("rtol",)),
                        ("mf.wasserstein(SPH10, SPH10[::-1], method='sliced', n_projections=0)", ("n_projections",)),
                        ("mf.wasserstein(X10, X10 + 0.1, 1e300)", ("p",)),
                        ("mf.numerical_rank(np.eye(3), tolerance=-1.0)", ("tolerance",)),
                        ("SA4.growth_rate(-1, 3)", ("degree",)), ("SA4.growth_rate(2.5)", ("degree",)),
                        ("mf.sphere_area(-3)", ("d",)), ("mf.sphere_area(2.5)", ("d",)), ("mf.sphere_area(0)", ("d",)),
                        ("mf.order_parameter(X10, weights=-np.ones(10) / 10)", ("weights",)),
                        ("mf.order_parameter(X10, weights=np.ones(10))", ("weights",)),
                        ("mf.attention_matrix(SA4, X10, head=3)", ("head",))]:
        out.append(_bad("options", code, *names))
    # numpy takes any non-negative integer as a seed; the run is reproducible and its file keeps the seed
    out.append(_edge("options", "mf.simulate(mf.SelfAttention(1.0, noise=0.1), X10, [0.0, 0.1], dt=0.01, seed=2**70)",
                     "r.attrs['success'] == 1 and r.attrs['seed'] == str(2**70)", "seed"))
    # on S¹ a degree is a wavenumber k, of either sign: λ_{-k} = λ_k
    out.append(_edge("options", "SA4.growth_rate(-1)", "r == SA4.growth_rate(1)", "degree"))
    # a (systems, n) array of angles: (10, 3) on the circle is 10 systems of 3 atoms
    out.append(_edge("options", "mf.EmpiricalMeasure(SPH10, domain='circle')",
                     "r.points.shape == (10, 3) and np.allclose(r.weights.sum(axis=-1), 1)", "domain"))
    # --- messages that name the argument --------------------------------------------------------------
    for code, names in [("mf.uniform('circle')", ("domain",)), ("mf.Density(C64, 'flat')", ("values",)),
                        ("mf.methods('torus')", ("domain",)),
                        ("mf.order_parameter(X10, weights=np.ones(3) / 3)", ("weights",)),
                        ("mf.numerical_rank(np.full((3, 3), np.nan))", ("matrix",)),
                        ("mf.von_mises(C64, 0.0, 1e300)", ("kappa",)),
                        ("mf.solve(mf.SelfAttention(700.0, normalized=False), RHO64, [0.0, 1.0])", ("beta",))]:
        out.append(_bad("messages", code, *names))
    # --- compare ------------------------------------------------------------------------------
    for v in ["0.5", "float('nan')", "'2'", "None"]:
        out.append(_bad("compare", f"mf.compare(PDE(), PARTICLES(), {v})", "p"))
    out.append(_bad("compare", "mf.compare(PDE(), PARTICLES(mf.SelfAttention(1.0, normalized=False)))",
                    "model", "beta", "normalized"))
    out.append(_bad("compare", "mf.compare(PDE(mf.SelfAttention(2.0)), PARTICLES())", "model", "beta"))
    out.append(_bad("compare", "mf.compare(PDE(), PARTICLES(t=[0.0, 0.2]))", "time"))
    out.append(_bad("compare", "mf.compare(PARTICLES(), PDE())", "pde", "particles", "density", "positions"))
    out.append(_bad("compare", "mf.compare(PDE(), PDE())", "particles", "positions"))
    out.append(_bad("compare", "mf.compare(PDE(), PARTICLES(), density='smooth')", "density"))
    out.append(_bad("compare", "mf.compare(PDE(), PARTICLES(), n_modes=0)", "n_modes"))
    out.append(_bad("compare", "mf.compare(PDE(), PARTICLES(), n_modes='3')", "n_modes"))
    out.append(_bad("compare", "mf.compare(PDE(), PARTICLES(x0=SPH10))", "domain", "sphere", "circle"))
    out.append(_bad("compare", "mf.compare(PDE(), PARTICLES(model=mf.Kuramoto()))", "model"))
    out.append(_edge("compare", "mf.compare(PDE(), PARTICLES(), 1e6)",
                     "np.all(np.isfinite(r['wasserstein']))", "p"))
    out.append(_edge("compare", "mf.compare(PDE(), PARTICLES())", "np.all(np.isfinite(r['wasserstein']))"))
    # --- sweep --------------------------------------------------------------------------------
    sw = ("sweep",)
    fn = "SWEEP_FUNC"
    for g in ["{}", "{'scale': []}", "{'scale': 1.0}", "{'scale': [[1.0, 2.0]]}", "[1, 2]", "None",
              "{'seed': [1, 2]}", "{'nope': [1.0]}", "{'scale': [1.0, 1.0]}"]:
        out.append(_bad("sweep", f"mf.sweep({fn}, {g}, fixed={{'shift': 0.0}}, seeds=1, scheduler='serial', "
                        "progress=False)",
                        "grid", "scale", "seed", "nope", needs=sw))
    for kw in ["seeds=-1", "seeds='4'", "seeds=[1, -1]", "seeds=[1, 1]", "batch={'scale': 0}",
               "batch={'nope': 2}", "batch=3", "scheduler='gpu'", "scheduler=3", "n_workers=0",
               "resume=True", "fixed={'scale': 1.0}", "fixed=3", "store='/proc/nope'"]:
        name = kw.split("=")[0]
        fixed = ("" if kw.startswith("fixed") else ", fixed={'shift': 0.0}") + ("" if kw.startswith("seeds") else ", seeds=1")
        serial = "" if "scheduler" in kw or "n_workers" in kw else ", scheduler='serial'"
        out.append(_bad("sweep", f"mf.sweep({fn}, {{'scale': [1.0]}}, {kw}{fixed}{serial}, progress=False)", name,
                        needs=sw))
    out.append(_bad("sweep", "mf.sweep(lambda scale: None, {'scale': [1.0]}, scheduler='serial', progress=False)",
                    "func", needs=sw))
    out.append(_bad("sweep", "mf.sweep('f', {'scale': [1.0]}, scheduler='serial', progress=False)", "func", needs=sw))
    out.append(_edge("sweep", f"mf.sweep({fn}, {{'scale': [1.0, 2.0]}}, seeds=2, fixed={{'shift': 0.0}}, "
                     "scheduler='serial', progress=False)", "dict(r.sizes)['scale'] == 2", needs=sw))
    # --- phase_diagram ------------------------------------------------------------------------
    pd = ("phase_diagram",)
    base = dict(d="2", n="4", betas="[1.0]", t="[0.0, 0.5]", systems="2")
    for key, values in {"d": ["1", "0", "2.5", "'3'"], "n": ["1", "0", "-2", "2.5"],
                        "betas": ["[]", "[-1.0]", "[float('nan')]", "'1'", "[[1.0]]"],
                        "t": ["[0.0]", "[1.0, 0.5]", "[float('nan'), 1.0]", "[0.5, 1.0]"],
                        "systems": ["0", "-1", "2.5", "'2'"]}.items():
        for v in values:
            args = dict(base, **{key: v})
            out.append(_bad("phase_diagram", "mf.phase_diagram(" + ", ".join(f"{k}={a}" for k, a in args.items())
                            + ", scheduler='serial', progress=False)", key, "beta", "time", needs=pd))
    for kw in ["delta=-0.1", "delta=3.0", "delta=float('nan')", "matrices='random'", "rtol=-1.0", "batch=0", "seed=-1"]:
        out.append(_bad("phase_diagram", "mf.phase_diagram(2, 4, [1.0], [0.0, 0.5], 2, "
                        f"{kw}, scheduler='serial', progress=False)", kw.split("=")[0], needs=pd))
    out.append(_edge("phase_diagram", "mf.phase_diagram(2, 4, [1.0], [0.0, 0.5], 2, scheduler='serial', progress=False)",
                     "all(np.all(np.isfinite(r[v])) for v in r.data_vars if np.issubdtype(r[v].dtype, np.floating))",
                     needs=pd))
    # --- kuramoto_bifurcation -----------------------------------------------------------------
    kb = ("kuramoto_bifurcation",)
    small = "n=50, t_final=2.0, average_window=1.0, seeds=1, progress=False, scheduler='serial'"
    for v in ["[]", "[-1.0]", "[float('nan')]", "'1'", "[[1.0]]"]:
        out.append(_bad("kuramoto_bifurcation", f"mf.kuramoto_bifurcation({v}, {small})", "couplings", needs=kb))
    for kw in ["frequencies='uniformish'", "frequencies=st.norm", "width=-1.0", "noise=-1.0", "engine='exact'",
               "n=0", "n=2.5", "average_window=5.0", "grid=2, engine='pde'", "dt=0.0, noise=0.1", "rtol=-1.0",
               "frequency_nodes=0, engine='pde'", "seeds=0"]:
        name = kw.split("=")[0]
        args = small.replace(f"{name}=", f"_{name}=") if f" {name}=" in " " + small else small
        code = f"mf.kuramoto_bifurcation([1.0], {kw}, " + ", ".join(
            a for a in args.split(", ") if not a.startswith("_")) + ")"
        out.append(_bad("kuramoto_bifurcation", code, name, "t_final", needs=kb))
    out.append(_edge("kuramoto_bifurcation", f"mf.kuramoto_bifurcation([0.5, 3.0], {small})",
                     "np.all(np.isfinite(r['r_inf'])) if 'r_inf' in r else True", needs=kb))
    # --- command line -------------------------------------------------------------------------
    cli = []
    for args in [["--beta", "x"], ["--beta", "-1"], ["--beta", "nan"], ["--noise", "-1"], ["--grid", "0"],
                 ["--grid", "2.5"], ["--domain", "torus"], ["--method", "rk4"], ["--t-final", "-1"],
                 ["--t-final", "nan"], ["--n-times", "1"], ["--n-times", "0"], ["--amplitude", "-1"],
                 ["--amplitude", "nan"], ["--lmax", "0", "--domain", "sphere"], ["--dimension", "1", "--domain", "zonal"],
                 ["--kappa", "-1", "--domain", "zonal"], ["--output", "/proc/nope/x.nc"], ["--output", "@DEVICE"],
                 ["--checkpoint-interval", "-1"], ["--bogus"]]:
        cli.append(("solve", args))
    for args in [["--p", "0.5"], ["--p", "1e6"], ["--p", "nan"], ["--particles", "0"], ["--particles", "-5"], ["--systems", "0"],
                 ["--times", "1", "0.5"], ["--times", "nan"], ["--grid", "2"], ["--sampler", "sobol"], ["--beta", "-1"],
                 ["--method", "rk4"], ["--kappa", "-1"], ["--scheduler", "gpu"], ["--workers", "0"], ["--dt", "-1"]]:
        cli.append(("compare", args))
    for args in [["--dimension", "1"], ["--particles", "1"], ["--systems", "0"], ["--betas", "1:0:x"], ["--betas", "-1"],
                 ["--t-final", "-1"], ["--n-times", "1"], ["--delta", "-1"], ["--rtol", "-1"], ["--batch", "0"]]:
        cli.append(("phase-diagram", args))
    for args in [["--coupling", "-1"], ["--couplings", "x"], ["--law", "uniform"], ["--width", "-1"],
                 ["--noise", "-1"], ["--engine", "exact"], ["--particles", "0"], ["--t-final", "-1"],
                 ["--average-window", "1e9"], ["--grid", "2", "--engine", "pde"], ["--dt", "0"], ["--rtol", "-1"]]:
        cli.append(("kuramoto", args))
    for sub, args in cli:
        names = tuple(a.lstrip("-") for a in args if a.startswith("--")) + tuple(a for a in args if a.startswith("--"))
        # --no-progress only where every version has it (compare gained it later)
        code = f"CLI({[sub, *args, '--no-progress'] if sub in ('phase-diagram', 'kuramoto') else [sub, *args]!r})"
        out.append(Case("cli", code, names + tuple(n.replace("-", "_") for n in names), None, (f"cli:{sub}",)))
    out.append(Case("cli", "CLI(['simulate'])", ("simulate", "command"), None, ()))
    return out


# --- fixtures and evaluation ------------------------------------------------------------------------

PRELUDE = r'''
import os
import numpy as np, scipy.stats as st, meanfield as mf
from meanfield.cli import main as _main
_rng = np.random.default_rng(0)
C32 = mf.Circle(32)
RHO = mf.von_mises(C32, 0.0, 1.0)
RHO_UNNORMALIZED = mf.density(C32, np.ones(32), normalize=False)
X10 = _rng.uniform(0, 2 * np.pi, 10)
ANGLES_3x10 = _rng.uniform(0, 2 * np.pi, (3, 10))
SPH10 = _rng.normal(size=(10, 3)); SPH10 /= np.linalg.norm(SPH10, axis=1, keepdims=True)
C64 = mf.Circle(64)
RHO64 = mf.von_mises(C64, 0.0, 1.0)
SA4 = mf.SelfAttention(4.0)

def FINITE_OR_FAILED(result):
    """success 0, or success 1 with every floating output finite."""
    if result.attrs.get("success") == 0:
        return True
    return all(np.all(np.isfinite(result[v].values)) for v in result.data_vars
               if np.issubdtype(result[v].dtype, np.inexact))

def PDE(model=None, t=(0.0, 0.1)):
    return mf.solve(model or mf.SelfAttention(4.0), mf.von_mises(mf.Circle(32), 0.0, 1.0), list(t))

def PARTICLES(model=None, t=(0.0, 0.1), x0=None):
    return mf.simulate(model or mf.SelfAttention(4.0), X10 if x0 is None else x0, list(t))

class _CliResult:
    def __init__(self, rc, err):
        self.rc, self.err = rc, err

def _device():
    # a character device of our own (a copy of /dev/null's numbers): a writer that replaces it harms nothing
    import stat, tempfile
    path = os.path.join(tempfile.mkdtemp(prefix="fuzz-device-"), "null")
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, AttributeError):
        os.mkdir(path)  # a directory is also an output path that must be refused
    return path

def CLI(argv):
    import contextlib, io, tempfile
    argv = [_device() if a == "@DEVICE" else a for a in argv]
    err = io.StringIO()
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stderr(err):
        old = os.getcwd(); os.chdir(tmp)
        try:
            rc = _main(argv)
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
            if rc == 0:
                return _CliResult(0, err.getvalue())
            raise _CliExit(rc, err.getvalue()) from None
        finally:
            os.chdir(old)
    if rc:
        raise _CliExit(rc, err.getvalue())
    return _CliResult(rc or 0, err.getvalue())

class _CliExit(Exception):
    def __init__(self, rc, message):
        super().__init__(message.strip().splitlines()[-1] if message.strip() else f"exit code {rc}")
        self.rc = rc

import importlib.util as _util, os as _os, sys as _sys
_spec = _util.spec_from_file_location("_sweep_funcs", _os.path.join(_os.path.dirname(FUZZ_FILE), "_sweep_funcs.py"))
_module = _util.module_from_spec(_spec); _sys.modules["_sweep_funcs"] = _module; _spec.loader.exec_module(_module)
SWEEP_FUNC = _module.noisy_moments
'''


def _available(need: str, namespace: dict) -> bool:
    mf = namespace["mf"]
    if need.startswith("cli:"):
        import meanfield.cli._main as cli_module

        return need[4:] in open(cli_module.__file__).read()
    return hasattr(mf, need)


def _mentions(message: str, names: tuple[str, ...]) -> bool:
    low = message.lower()
    return any(name.lower() in low for name in names) if names else bool(message.strip())


def classify(case: Case, namespace: dict) -> tuple[str, str]:
    """(outcome, detail) of one case evaluated in ``namespace``."""
    if not all(_available(need, namespace) for need in case.needs):
        return "n/a", "needs " + ", ".join(case.needs)
    import logging
    import warnings

    logging.disable(logging.CRITICAL)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            result = eval(case.code, namespace)  # noqa: S307 - the cases are this file's own strings
    except Exception as exc:  # noqa: BLE001 - classifying every failure is the point
        message = f"{type(exc).__name__}: {exc}"
        cli_exit = type(exc).__name__ == "_CliExit"
        if (isinstance(exc, (ValueError, TypeError)) or cli_exit) and _mentions(str(exc), case.names):
            return "clear error", message
        return "obscure", message
    finally:
        logging.disable(logging.NOTSET)  # the library logs again after the case
    if case.check is None:
        attrs = getattr(result, "attrs", None)
        if isinstance(attrs, dict) and attrs.get("success") == 0 and _mentions(str(attrs.get("message")), case.names):
            return "clear error", f"success 0: {attrs.get('message')}"
        return "silent garbage", f"returned {_short(result)}"
    try:
        ok = bool(eval(case.check, dict(namespace, r=result)))  # noqa: S307
    except Exception as exc:  # noqa: BLE001
        return "silent garbage", f"check raised {type(exc).__name__}: {exc}"
    return ("correct", "") if ok else ("silent garbage", f"check {case.check!r} failed on {_short(result)}")


def _short(value) -> str:
    text = repr(value)
    if type(value).__name__ == "Dataset":
        attrs = value.attrs
        text = f"Dataset(success={attrs.get('success')!r}, message={str(attrs.get('message'))[:80]!r})"
    if hasattr(value, "rc") and hasattr(value, "err"):
        text = f"exit code {value.rc}; stderr {value.err.strip()[-120:]!r}"
    return text[:200]


def run_all(selected: set[int], timeout: float) -> dict[int, tuple[str, str]]:
    """Run the selected cases in restartable worker processes."""
    total = len(cases())
    results: dict[int, tuple[str, str]] = {}
    start = 0
    while start < total:
        proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", str(start),
                                 "--select", ",".join(map(str, sorted(selected)))],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout] + [lines.put(None)],
                         daemon=True).start()
        current = None
        while True:
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                proc.kill()
                results[current] = ("crash", f"no answer within {timeout:g} s")
                start = current + 1
                break
            if line is None:
                proc.wait()
                if current is not None and current not in results:
                    results[current] = ("crash", f"process died (exit code {proc.returncode})")
                    start = current + 1
                else:
                    start = total
                break
            message = json.loads(line)
            if "begin" in message:
                current = message["begin"]
            else:
                results[message["index"]] = (message["outcome"], message["detail"])
        proc.wait()
    return {i: results.get(i, ("crash", "not reached")) for i in selected}


def table(results: dict[int, tuple[str, str]], all_cases: list[Case]) -> str:
    categories = sorted({all_cases[i].category for i in results}, key=[c.category for c in all_cases].index)
    header = ["category", "tried", *OUTCOMES]
    rows = []
    for cat in categories + ["all"]:
        picked = [o for i, (o, _) in results.items() if cat == "all" or all_cases[i].category == cat]
        rows.append([cat, str(len(picked)), *(str(picked.count(o)) for o in OUTCOMES)])
    widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header))]
    fmt = lambda r: " | ".join(c.ljust(w) for c, w in zip(r, widths))  # noqa: E731
    return "\n".join([fmt(header), "-+-".join("-" * w for w in widths), *map(fmt, rows)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="categories to run (default: all)")
    parser.add_argument("--timeout", type=float, default=90.0, help="seconds per case before it counts as a crash")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--details", action="store_true", help="print every case that is not a clear error or correct")
    parser.add_argument("--json", help="also write the outcomes to this file")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--select", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    all_cases = cases()
    if args.worker is not None:
        selected = set(map(int, args.select.split(","))) if args.select else set(range(len(all_cases)))
        namespace: dict = {"FUZZ_FILE": os.path.abspath(__file__)}
        exec(PRELUDE, namespace)  # noqa: S102
        for index in range(args.worker, len(all_cases)):
            if index not in selected:
                continue
            print(json.dumps({"begin": index}), flush=True)
            outcome, detail = classify(all_cases[index], namespace)
            print(json.dumps({"index": index, "outcome": outcome, "detail": detail[:400]}), flush=True)
        return 0
    selected = {i for i, c in enumerate(all_cases) if not args.only or c.category in args.only}
    if args.list:
        for i in sorted(selected):
            print(i, all_cases[i].category, all_cases[i].code)
        return 0
    results = run_all(selected, args.timeout)
    print(table(results, all_cases))
    if args.details:
        for i in sorted(results):
            outcome, detail = results[i]
            if outcome not in ("clear error", "correct", "n/a"):
                print(f"[{outcome}] {all_cases[i].code}\n    {detail}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({str(i): [all_cases[i].category, all_cases[i].code, *results[i]] for i in results}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

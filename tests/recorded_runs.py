"""A fixed set of circle, sphere, zonal and particle runs, recorded once and compared after a change.

Restructuring the schemes must not change what they compute. This script runs
every scheme on a small fixed problem (both models, with and without noise,
and the particle engine's paths) and either records the results or compares
them with a recording made earlier, for example from a checkout of the code
before the change:

    PYTHONPATH=<old checkout> python tests/recorded_runs.py --record DIR
    python tests/recorded_runs.py --compare DIR

The comparison prints, per run and variable, the largest difference relative
to the variable's scale (max |a − b| / max |a|) and the number of time steps
taken before and after, and exits with status 1 when a difference exceeds
``ROUND_OFF`` or a run takes a different number of steps.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

import numpy as np
import scipy.stats
import xarray as xr

import meanfield as mf
from meanfield import perturbed_uniform

ROUND_OFF = 1e-12
"""Largest relative difference accepted: reordered floating-point sums move
results by a few ulps per step, which over a few hundred steps stays far below
1e-12 of the variable's scale."""

VARIABLES = ("density", "positions", "energy", "mass", "order_parameter")


def _circle(method: str, normalized: bool, noise: float) -> xr.Dataset:
    circle = mf.Circle(128)
    rho0 = perturbed_uniform(circle, amplitude=0.1, modes=4, seed=3)
    model = mf.SelfAttention(2.0, normalized=normalized, noise=noise)
    return mf.solve(model, rho0, np.linspace(0.0, 1.5, 7), method=method)


def _sphere(method: str, normalized: bool, noise: float) -> xr.Dataset:
    sphere = mf.Sphere(47)
    rho0 = mf.von_mises(sphere, [0.3, 0.4, np.sqrt(0.75)], 1.0)
    model = mf.SelfAttention(1.5, normalized=normalized, noise=noise)
    return mf.solve(model, rho0, np.linspace(0.0, 0.5, 5), method=method)


def _zonal(method: str, normalized: bool, noise: float) -> xr.Dataset:
    nodes = "gauss" if method == "spectral" else "cells"
    zonal = mf.ZonalSphere(5, 64 if method == "spectral" else 128, nodes=nodes)
    rho0 = mf.von_mises(zonal, None, 1.0)
    model = mf.SelfAttention(1.5, normalized=normalized, noise=noise)
    return mf.solve(model, rho0, np.linspace(0.0, 0.5, 5), method=method)


def _kuramoto(method: str) -> xr.Dataset:
    circle = mf.Circle(128)
    rho0 = perturbed_uniform(circle, amplitude=0.2, modes=2, seed=5)
    model = mf.Kuramoto(coupling=2.0, noise=0.1)
    return mf.solve(model, rho0, np.linspace(0.0, 2.0, 5), method=method)


def _particles(kind: str) -> xr.Dataset:
    rng = np.random.default_rng(11)
    t = np.linspace(0.0, 3.0, 7)
    if kind == "circle":
        return mf.simulate(mf.SelfAttention(4.0), rng.uniform(0, 2 * np.pi, 64), t)
    if kind == "sphere":
        x = rng.standard_normal((48, 3))
        return mf.simulate(mf.SelfAttention(2.0, normalized=False), x / np.linalg.norm(x, axis=1, keepdims=True), t)
    if kind == "ensemble":
        x = rng.standard_normal((8, 16, 4))
        return mf.simulate(mf.SelfAttention(3.0), x / np.linalg.norm(x, axis=-1, keepdims=True), t)
    return mf.simulate(mf.Kuramoto(coupling=2.0, frequencies=0.5), rng.uniform(0, 2 * np.pi, 64), t)


def _sphere_points(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    x = rng.standard_normal(shape)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _particle_paths(kind: str) -> xr.Dataset:
    """The particle engine's other paths: direct sums, NUFFT, fixed steps, noise, general weights, Kuramoto laws."""
    rng = np.random.default_rng(23)
    t = np.linspace(0.0, 2.0, 5)
    if kind == "circle_direct":
        return mf.simulate(mf.SelfAttention(4.0), rng.uniform(0, 2 * np.pi, 64), t, path="direct")
    if kind == "circle_nufft":
        return mf.simulate(mf.SelfAttention(3.0, normalized=False), rng.uniform(0, 2 * np.pi, 300), t, path="nufft")
    if kind == "sphere_direct":
        return mf.simulate(mf.SelfAttention(2.0), _sphere_points(rng, (40, 5)), t, path="direct")
    if kind == "rk4":
        return mf.simulate(mf.SelfAttention(2.0), _sphere_points(rng, (24, 3)), t, method="rk4", dt=0.01)
    if kind == "noise":
        return mf.simulate(mf.SelfAttention(2.0, noise=0.05), rng.uniform(0, 2 * np.pi, 48), t, dt=0.01, seed=4)
    if kind == "sphere_noise":
        return mf.simulate(mf.SelfAttention(2.0, noise=0.05), _sphere_points(rng, (32, 3)), t, dt=0.01, seed=4)
    if kind == "attention":
        q, k, v = rng.standard_normal((3, 2, 3, 3)) / 2
        return mf.simulate(mf.Attention(1.5, Q=q, K=k, V=v), _sphere_points(rng, (16, 3)), t)
    if kind == "attention_ffn":
        ffn = (rng.standard_normal((3, 4)) / 2, rng.standard_normal((4, 3)) / 2, rng.standard_normal(4) / 2)
        return mf.simulate(mf.Attention(1.0, ffn=ffn), _sphere_points(rng, (12, 3)), t)
    if kind == "attention_rd":
        v = np.diag([1.0, 0.5])
        return mf.simulate(mf.Attention(1.0, V=v, projection=False), rng.standard_normal((10, 2)), t)
    if kind == "rescaled":
        v = np.array([[1.0, 0.3], [0.0, 0.5]])
        return mf.simulate(mf.Attention(1.0, V=v, projection=False, rescaled=True), rng.standard_normal((10, 2)), t)
    if kind == "kuramoto_lorentz":
        model = mf.Kuramoto(coupling=3.0, frequencies=scipy.stats.cauchy(0, 0.5))
        return mf.simulate(model, rng.uniform(0, 2 * np.pi, 400), t, rtol=1e-6)
    if kind == "kuramoto_fixed":
        model = mf.Kuramoto(coupling=3.0, frequencies=scipy.stats.norm(0, 0.5))
        return mf.simulate(model, rng.uniform(0, 2 * np.pi, 100), t, dt=0.01)
    if kind == "kuramoto_harmonics":
        model = mf.Kuramoto(coupling=2.0, frequencies=scipy.stats.norm(0, 0.3), interaction=[0.0, -0.5j, -0.2j])
        return mf.simulate(model, rng.uniform(0, 2 * np.pi, 64), t)
    if kind == "kuramoto_noise":
        return mf.simulate(mf.Kuramoto(coupling=2.0, noise=0.1), rng.uniform(0, 2 * np.pi, 64), t, dt=0.01, seed=6)
    raise ValueError(kind)


def _kuramoto_law(method: str) -> xr.Dataset:
    circle = mf.Circle(64)
    rho0 = perturbed_uniform(circle, amplitude=0.2, modes=2, seed=5)
    model = mf.Kuramoto(coupling=2.0, frequencies=scipy.stats.norm(0, 0.3), noise=0.05)
    return mf.solve(model, rho0, np.linspace(0.0, 1.0, 3), method=method, frequency_nodes=8)


RUNS: dict[str, Callable[[], xr.Dataset]] = {}
for _method in ("spectral", "finite_volume"):
    for _normalized in (True, False):
        for _noise in (0.0, 0.05):
            _tag = f"{'SA' if _normalized else 'USA'}_noise{_noise}_{_method}"
            RUNS[f"circle_{_tag}"] = lambda m=_method, n=_normalized, s=_noise: _circle(m, n, s)
            RUNS[f"sphere_{_tag}"] = lambda m=_method, n=_normalized, s=_noise: _sphere(m, n, s)
            RUNS[f"zonal_{_tag}"] = lambda m=_method, n=_normalized, s=_noise: _zonal(m, n, s)
    RUNS[f"kuramoto_{_method}"] = lambda m=_method: _kuramoto(m)
for _kind in ("circle", "sphere", "ensemble", "kuramoto"):
    RUNS[f"particles_{_kind}"] = lambda k=_kind: _particles(k)
for _kind in ("circle_direct", "circle_nufft", "sphere_direct", "rk4", "noise", "sphere_noise", "attention",
              "attention_ffn", "attention_rd", "rescaled", "kuramoto_lorentz", "kuramoto_fixed", "kuramoto_harmonics",
              "kuramoto_noise"):
    RUNS[f"particles_{_kind}"] = lambda k=_kind: _particle_paths(k)
for _method in ("spectral", "finite_volume"):
    RUNS[f"kuramoto_law_{_method}"] = lambda m=_method: _kuramoto_law(m)


def _steps(ds: xr.Dataset) -> int:
    return int(ds.attrs.get("n_steps", -1))


def record(directory: Path) -> None:
    """Run every case and write ``<name>.nc`` into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, run in RUNS.items():
        ds = run()
        keep = [v for v in VARIABLES if v in ds]
        out = ds[keep]
        out.attrs = {"steps": _steps(ds), "success": int(bool(ds.attrs.get("success", 1)))}
        out.to_netcdf(directory / f"{name}.nc")
        print(f"recorded {name}: steps {out.attrs['steps']}")


def compare(directory: Path) -> int:
    """Rerun every case and compare with the recording; return the number of mismatches."""
    failures = 0
    print(f"{'run':40s} {'variable':16s} {'rel. difference':>16s} {'steps before/after':>20s}")
    for name, run in RUNS.items():
        path = directory / f"{name}.nc"
        if not path.exists():
            print(f"{name:40s} not recorded")
            failures += 1
            continue
        old = xr.load_dataset(path)
        new = run()
        steps_after = _steps(new)
        steps_before = int(old.attrs["steps"])
        for var in old.data_vars:
            a, b = old[var].values, new[var].values
            if a.shape != b.shape:
                print(f"{name:40s} {var:16s} shape {a.shape} -> {b.shape}")
                failures += 1
                continue
            scale = max(float(np.max(np.abs(a))), 1e-300)
            rel = float(np.max(np.abs(a - b))) / scale
            bad = rel > ROUND_OFF or steps_before != steps_after
            failures += bad
            print(f"{name:40s} {var:16s} {rel:16.3e} {steps_before:>9d}/{steps_after:<9d}{'  MISMATCH' if bad else ''}")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--record", type=Path, metavar="DIR", help="write the runs into DIR")
    group.add_argument("--compare", type=Path, metavar="DIR", help="compare the runs with those recorded in DIR")
    args = parser.parse_args(argv)
    if args.record is not None:
        record(args.record)
        return 0
    failures = compare(args.compare)
    print(f"{failures} mismatch(es) against {args.compare}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

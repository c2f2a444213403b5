"""Discrete layers x_{k+1} = Π(x_k + h v(x_k)) (paper 2 §2.1) converge to the flow at first order.

``mf.simulate(model, x0, t, method="layers", dt=h)`` is the residual step of a Transformer with layer
normalisation Π (x/|x| on S^{d-1}; on S¹ the map of the unit vectors, θ + arctan(h θ̇)), and with
``split="lie-trotter"`` attention then feed-forward, each normalised. The script checks:

(a) first order: max over outputs and tokens of |x_h(t) - x(t)| against dopri5 at rtol 1e-12 (error
    ≈ 1e-11, far below the smallest layer error), t ∈ {1, 2}, for h = 0.1, 0.05, 0.025, 0.0125; the
    least-squares slope of log error against log h is 1 ± SLOPE_TOLERANCE for SA on S² (n = 32),
    SA on S¹ (n = 32), USA on S² and an Attention with a tanh feed-forward term, unsplit and
    Lie–Trotter split (n = 16 on S²);
(b) equiangular tokens: n = 8 orthonormal tokens in d = 8 keep one common inner product under the
    layers (spread of the off-diagonal Gram entries ≤ ROUND_OFF at every layer), equal to the closed
    recursion γ_{k+1} = g_h(γ_k) of ``mf.equiangular_layers`` to ROUND_OFF, SA and USA, β = 1 and 4,
    h = 0.05, 100 layers;
(c) the recursion tends to Theorem 6.8's ODE (``mf.equiangular_gamma``): max_k |γ_k - γ(kh)| over
    kh ≤ 2 has slope 1 ± SLOPE_TOLERANCE in h, for SA at β = 1 and 4 and USA at β = 1. (USA at β = 4
    is reported, not checked: near γ = 1 its ODE relaxes at rate 2e^β ≈ 109, so these h are not yet in the
    asymptotic regime, h·2e^β = 1.4 … 11; the measured slope over them is 0.56. Checked where the largest
    h has 0.1·2e^β < 1.)

Writes discrete_layers.txt (table), discrete_layers.nc (errors against h, slopes) and
discrete_layers.png (errors against h; γ_k against the ODE); exits with status 1 on a mismatch.
Run time ≈ 5 s on one core.

Run:  python validation/transformer_variants/discrete_layers.py [--output-dir DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

import meanfield as mf
from meanfield.models._attention import FeedForward

STEPS = np.array([0.1, 0.05, 0.025, 0.0125])
TIMES = np.array([0.0, 1.0, 2.0])
SLOPE_TOLERANCE = 0.1
"""|slope - 1| (the bound asked of first order over four h); measured slopes 0.97 … 1.02."""
ROUND_OFF = 1e-14
"""Equiangular tokens over 100 layers: spread of the inner products and distance to the recursion (measured
≤ 1e-15: a few ulp, not growing with the layers)."""
EQUIANGULAR = {"n": 8, "d": 8, "h": 0.05, "layers": 100, "betas": (1.0, 4.0), "horizon": 2.0, "ode_n": 8}


def _points(shape: tuple[int, ...], seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=shape)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _feed_forward(d: int, width: int, seed: int) -> FeedForward:
    rng = np.random.default_rng(seed)
    return FeedForward(0.5 * rng.normal(size=(d, width)) / np.sqrt(width), rng.normal(size=(width, d)),
                       rng.normal(size=width), "tanh")


def cases() -> dict[str, tuple]:
    """name -> (model, x0, options of the layers)."""
    ffn = mf.Attention(2.0, ffn=_feed_forward(3, 8, 3))
    return {
        "SA on S^2, beta = 2": (mf.SelfAttention(2.0), _points((32, 3), 1), {}),
        "SA on S^1, beta = 2": (mf.SelfAttention(2.0), np.random.default_rng(2).uniform(0, 2 * np.pi, 32), {}),
        "USA on S^2, beta = 1": (mf.SelfAttention(1.0, normalized=False), _points((32, 3), 4), {}),
        "Attention + tanh ffn": (ffn, _points((16, 3), 3), {}),
        "Attention + tanh ffn, lie-trotter": (ffn, _points((16, 3), 3), {"split": "lie-trotter"}),
    }


def slope(errors: np.ndarray) -> float:
    """Least-squares slope of log(errors) against log(STEPS)."""
    return float(np.polyfit(np.log(STEPS), np.log(errors), 1)[0])


def layer_errors(model, x0: np.ndarray, options: dict) -> np.ndarray:
    """max |x_h(t) - x(t)| over outputs and tokens for each h (angles: the distance on the circle)."""
    reference = mf.simulate(model, x0, TIMES, rtol=1e-12, atol=1e-14).positions.values
    out = []
    for h in STEPS:
        ds = mf.simulate(model, x0, TIMES, method="layers", dt=h, **options)
        if ds.attrs["success"] != 1:
            raise RuntimeError(f"layers of h = {h} failed: {ds.attrs['message']}")
        x = ds.positions.values
        gap = np.abs(np.angle(np.exp(1j * (x - reference)))) if x.ndim == reference.ndim == 2 else np.abs(x - reference)
        out.append(float(gap.max()))
    return np.array(out)


def equiangular(beta: float, normalized: bool) -> tuple[float, float, np.ndarray]:
    """Spread of the off-diagonal inner products, distance to the recursion, and the simulated γ_k."""
    n, d, h, layers = EQUIANGULAR["n"], EQUIANGULAR["d"], EQUIANGULAR["h"], EQUIANGULAR["layers"]
    ds = mf.simulate(mf.SelfAttention(beta, normalized=normalized), np.eye(d)[:n], np.arange(layers + 1) * h,
                     method="layers", dt=h)
    x = ds.positions.values
    off = np.einsum("tia,tja->tij", x, x)[:, ~np.eye(n, dtype=bool)]
    gamma = mf.equiangular_layers(beta, n, h, layers, normalized=normalized)
    return float(np.ptp(off, axis=1).max()), float(np.abs(off - gamma[:, None]).max()), off.mean(axis=1)


def recursion_errors(beta: float, normalized: bool) -> np.ndarray:
    """max_k |γ_k - γ(kh)| over kh ≤ horizon, for each h."""
    n, horizon = EQUIANGULAR["ode_n"], EQUIANGULAR["horizon"]
    out = []
    for h in STEPS:
        layers = int(round(horizon / h))
        gamma = mf.equiangular_layers(beta, n, h, layers, normalized=normalized)
        ode = mf.equiangular_gamma(beta, n, np.arange(layers + 1) * h, normalized=normalized)
        out.append(float(np.abs(gamma - ode).max()))
    return np.array(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", type=Path, default=Path("validation_output"))
    args = parser.parse_args(argv)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    ok = True
    header = "".join(f"{f'h = {h:g}':>12}" for h in STEPS)
    lines = [f"(a) max |x_h(t) - x(t)|, t in {TIMES[1:].tolist()}, against dopri5 rtol 1e-12; slope 1 ± "
             f"{SLOPE_TOLERANCE}", f"{'case':<36}{header}{'slope':>8}  verdict"]
    errors, slopes, names = [], [], []
    for name, (model, x0, options) in cases().items():
        e = layer_errors(model, x0, options)
        s = slope(e)
        good = abs(s - 1.0) <= SLOPE_TOLERANCE
        ok &= good
        errors.append(e)
        slopes.append(s)
        names.append(name)
        lines.append(f"{name:<36}" + "".join(f"{v:>12.3e}" for v in e) + f"{s:>8.3f}  {'ok' if good else 'MISMATCH'}")
    lines += ["", f"(b) n = {EQUIANGULAR['n']} orthonormal tokens in d = {EQUIANGULAR['d']}, h = {EQUIANGULAR['h']}, "
                  f"{EQUIANGULAR['layers']} layers: spread of <x_i, x_j> (i ≠ j) and distance to "
                  f"mf.equiangular_layers (each ≤ {ROUND_OFF:g})",
              f"{'model':<6}{'β':>5}{'spread':>12}{'vs recursion':>15}{'γ_K':>9}  verdict"]
    gammas = {}
    for normalized, label in ((True, "SA"), (False, "USA")):
        for beta in EQUIANGULAR["betas"]:
            spread, gap, gamma = equiangular(beta, normalized)
            gammas[(label, beta)] = gamma
            good = spread <= ROUND_OFF and gap <= ROUND_OFF
            ok &= good
            lines.append(f"{label:<6}{beta:>5g}{spread:>12.2e}{gap:>15.2e}{gamma[-1]:>9.4f}  "
                         f"{'ok' if good else 'MISMATCH'}")
    lines += ["", f"(c) max_k |γ_k - γ(kh)| over kh ≤ {EQUIANGULAR['horizon']:g} (n = {EQUIANGULAR['ode_n']}), "
                  f"γ Theorem 6.8's ODE; slope 1 ± {SLOPE_TOLERANCE}", f"{'case':<36}{header}{'slope':>8}  verdict"]
    for normalized, label in ((True, "SA"), (False, "USA")):
        for beta in EQUIANGULAR["betas"]:
            e = recursion_errors(beta, normalized)
            s = slope(e)
            good = abs(s - 1.0) <= SLOPE_TOLERANCE
            checked = normalized or STEPS[0] * 2 * np.exp(beta) < 1  # USA relaxes at 2e^β near γ = 1
            ok &= good or not checked
            name = f"recursion {label}, beta = {beta:g}"
            errors.append(e)
            slopes.append(s)
            names.append(name)
            verdict = ("ok" if good else "MISMATCH") if checked else "not checked (0.1·2e^β > 1)"
            lines.append(f"{name:<36}" + "".join(f"{v:>12.3e}" for v in e) + f"{s:>8.3f}  {verdict}")
    lines.append(f"run time {time.perf_counter() - start:.1f} s")
    text = "\n".join(lines)
    print(text)
    (args.output_dir / "discrete_layers.txt").write_text(text + "\n")
    summary = xr.Dataset(
        {"error": (("case", "step"), np.array(errors), {"long_name": "max |layers - flow| (cases (a)) or "
                                                                    "max_k |γ_k - γ(kh)| (recursions (c))"}),
         "slope": ("case", np.array(slopes), {"long_name": "least-squares slope of log error against log h"})},
        coords={"case": names, "step": ("step", STEPS, {"long_name": "layer step h"})},
        attrs={"script": "validation/transformer_variants/discrete_layers.py", "slope_tolerance": SLOPE_TOLERANCE,
               "round_off": ROUND_OFF, "success": int(ok), "meanfield_version": mf.__version__})
    summary.to_netcdf(args.output_dir / "discrete_layers.nc")
    fig = Figure(figsize=(11, 4.2))
    left, right = fig.subplots(1, 2)
    for name, e in zip(names, errors):
        left.loglog(STEPS, e, "o-", label=name, lw=1)
    left.loglog(STEPS, STEPS * errors[0][0] / STEPS[0], "k:", label="slope 1")
    left.set(xlabel="layer step h", ylabel="error", title="layers against the flow; recursion against (6.9)/(6.10)")
    left.legend(fontsize=6)
    h, n = EQUIANGULAR["h"], EQUIANGULAR["n"]
    fine = np.linspace(0.0, EQUIANGULAR["layers"] * h, 201)
    for (label, beta), gamma in gammas.items():
        k = np.arange(gamma.size) * h
        ode = mf.equiangular_gamma(beta, n, fine, normalized=label == "SA")
        line, = right.plot(fine, ode, lw=1, label=f"{label} β = {beta:g}: Theorem 6.8")
        right.plot(k[::5], gamma[::5], ".", color=line.get_color(), label=f"{label} β = {beta:g}: layers, h = {h}")
    right.set(xlabel="t = k h", ylabel="common inner product γ", title=f"{n} orthogonal tokens")
    right.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(args.output_dir / "discrete_layers.png", dpi=120)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

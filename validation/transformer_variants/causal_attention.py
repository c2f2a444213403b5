"""Causal attention (token i attends to j ≤ i): every token converges to the first, which never moves.

With the causal mask of a decoder, Q = K = V = I and tokens on S^{d-1}, the first token attends to itself
only, so its velocity P⊥(x_1) x_1 = (1 - |x_1|²) x_1 vanishes to round-off; every other token converges to it
(the collapse of causal self-attention onto the first token). For 100 systems of n = 32 iid uniform tokens
on S² at β = 1 (``mf.simulate`` of ``mf.Attention(1, graph=mf.Graph.causal(32))``, rtol = 1e-8), checks,
each exiting 1 on a mismatch:

* the first token moves by at most FIRST_TOKEN_DRIFT (round-off of |x_1| = 1 over the run's steps);
* at t = 60, max_i |x_i - x_1| ≤ COLLAPSED in every system (measured 4e-8; the approach is exponential);
* the median over systems of max_i |x_i - x_1| decreases at every output time after the first;
* its decay rate between t = 50 and 60 is 1/2 within RATE_TOLERANCE: near the first token, token 2 attends
  to x_1 and to itself with weights → 1/2 each, so its distance decays as e^{-t/2}; token k relaxes at rate
  (k - 1)/k towards tokens 1 … k - 1 and is carried at the slowest of their rates, 1/2;
* ``mf.phase_diagram(3, 32, [1], t, 100, mask="causal")``: the same systems have every pair linked (P = 1,
  one cluster) at t = 60, and at t = 0 the same P as the unmasked diagram (same tokens).

Writes causal_attention.txt (the quantiles of max_i |x_i - x_1| over the systems per output time) and
causal_attention.png (those quantiles against t, log scale). About 10 s.

Run:  python validation/transformer_variants/causal_attention.py [--output-dir DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

import meanfield as mf
from meanfield.studies.clustering import phase_diagram_tokens

N, D, BETA, SYSTEMS = 32, 3, 1.0, 100
TIMES = np.linspace(0.0, 60.0, 13)
#: the first token's velocity is (1 - |x_1|²) x_1 = O(eps) per step: a few hundred steps move it by ~1e-16
FIRST_TOKEN_DRIFT = 1e-14
#: distance of every token from the first at t = 60 (measured 4e-8 at rtol = 1e-8)
COLLAPSED = 1e-6
#: the late decay rate against 1/2 (the next mode, rate 2/3, contributes e^{-t/6} ≈ 2e-4 relative at t = 50)
RATE_TOLERANCE = 0.01


def collapse() -> tuple[np.ndarray, float]:
    """max_i |x_i - x_1| per (system, time) and the largest displacement of the first token."""
    tokens = phase_diagram_tokens(0, np.arange(SYSTEMS), D, N)
    run = mf.simulate(mf.Attention(BETA, graph=mf.Graph.causal(N)), tokens, TIMES, rtol=1e-8, atol=1e-10,
                      domain="sphere")
    if not run.attrs["success"]:
        raise RuntimeError(run.attrs["message"])
    x = run["positions"].values
    distance = np.linalg.norm(x - x[:, :, :1], axis=-1).max(axis=-1)
    drift = float(np.abs(x[:, :, 0] - tokens[:, None, 0]).max())
    return distance, drift


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", type=Path, default=Path("validation_output"))
    args = parser.parse_args(argv)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    distance, drift = collapse()
    quantiles = np.quantile(distance, [0.5, 0.9, 1.0], axis=0)
    median = quantiles[0]
    late = np.searchsorted(TIMES, 50.0)
    rate = float(np.log(median[late] / median[-1]) / (TIMES[-1] - TIMES[late]))
    masked = mf.phase_diagram(D, N, [BETA], TIMES, SYSTEMS, mask="causal", scheduler="serial", progress=False)
    unmasked = mf.phase_diagram(D, N, [BETA], TIMES[:2], SYSTEMS, scheduler="serial", progress=False)
    checks = [
        ("first token displacement", drift, FIRST_TOKEN_DRIFT, drift <= FIRST_TOKEN_DRIFT),
        ("max over systems of max_i |x_i - x_1| at t = 60", float(distance[:, -1].max()), COLLAPSED,
         distance[:, -1].max() <= COLLAPSED),
        ("median decreasing after t = 0 (1 = yes)", float(np.all(np.diff(median[1:]) < 0)), 1.0,
         bool(np.all(np.diff(median[1:]) < 0))),
        ("decay rate of the median, t = 50 ... 60", rate, 0.5, abs(rate - 0.5) <= RATE_TOLERANCE),
        ("diagram P at t = 60", float(masked.probability[0, -1]), 1.0, float(masked.probability[0, -1]) == 1.0),
        ("diagram fraction clustered at t = 60", float(masked.fraction_clustered[0, -1]), 1.0,
         float(masked.fraction_clustered[0, -1]) == 1.0),
        ("diagram P at t = 0, masked - unmasked",
         float(masked.probability[0, 0] - unmasked.probability[0, 0]), 0.0,
         float(masked.probability[0, 0]) == float(unmasked.probability[0, 0])),
    ]
    lines = [f"causal attention, n = {N}, d = {D}, beta = {BETA:g}, {SYSTEMS} systems",
             f"{'t':>6} {'median':>12} {'90%':>12} {'max':>12}   (max_i |x_i - x_1| over the systems)"]
    lines += [f"{t:6.1f} {q[0]:12.3e} {q[1]:12.3e} {q[2]:12.3e}" for t, q in zip(TIMES, quantiles.T)]
    lines += ["", f"{'check':52s} {'measured':>12} {'bound':>10}  ok"]
    lines += [f"{name:52s} {value:12.4g} {bound:10.3g}  {'yes' if ok else 'NO'}" for name, value, bound, ok in checks]
    report = "\n".join(lines)
    print(report)
    (args.output_dir / "causal_attention.txt").write_text(report + "\n")
    fig = Figure(figsize=(6.0, 3.8))
    ax = fig.add_subplot()
    for q, label in zip(quantiles, ("median", "90 %", "max")):
        ax.semilogy(TIMES[1:], np.maximum(q[1:], 1e-17), marker="o", label=label)
    ax.set_xlabel("t")
    ax.set_ylabel("max_i |x_i - x_1| over systems")
    ax.set_title(f"causal SA, n = {N} on S^{D - 1}, beta = {BETA:g}: collapse onto the first token")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.output_dir / "causal_attention.png", dpi=120)
    failed = [name for name, _, _, ok in checks if not ok]
    print(f"{len(failed)} mismatch(es)" + (": " + "; ".join(failed) if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

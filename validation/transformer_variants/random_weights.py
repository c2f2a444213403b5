"""Figure-5-style phase diagrams with random weights V = +QᵀK and V = -QᵀK drawn per system; the energy is monotone.

Paper 2, §3.4.1: with QᵀK symmetric and V = c QᵀK, (SA) is the gradient flow of
E_β(X) = (1/(2βn²)) Σ_ij e^{β<Q x_i, K x_j>} for the metric (3.12), turned by c: E_β increases along every
trajectory for c > 0 and decreases for c < 0. For d = 2 and d = 32, n = 16 tokens, 48 systems, 6 values of β in
[0.5, 8] and t ∈ [0, 20] (QᵀK = A from the GOE of ``matrices="plus-qk"`` / ``"minus-qk"``, drawn per system),
this script

* computes the diagrams ``mf.phase_diagram(d, 16, betas, t, 48, matrices=..., draw="per_system")`` (probability,
  fraction clustered, mean Gram rank), and draws them (PNG, four panels);
* integrates the same systems with the same weights (``phase_diagram_tokens``, ``random_weights``) keeping the
  tokens, and checks, each exiting 1 on a mismatch:
  - the pair fraction of the kept tokens equals the diagram's, system by system (the same steps);
  - the direction: ``mf.Attention(β, Q, K, V).gradient_factor`` is +1 for "plus-qk" and -1 for "minus-qk";
  - E_β is monotone at the 21 output times on every system in the direction of c:
    c (E(t_{k+1}) - E(t_k)) ≥ -ENERGY_SLACK · E(t_k); the integration at rtol = 1e-8 makes each E(t_k) accurate
    to ~1e-8 relative, so ENERGY_SLACK = 1e-6 leaves room for round-off and nothing else;
  - E_β of this script equals ``Attention.particle_energy`` on one system (the library's normalisation).

Writes random_weights.txt and random_weights.png. About 30 s.

Run:  python validation/transformer_variants/random_weights.py [--output-dir DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import scipy.special
from matplotlib.figure import Figure

import meanfield as mf
from meanfield.studies import phase_diagram_tokens, random_weights
from meanfield.studies.clustering._random_weights import weighted_token_evolution

N, SYSTEMS, DIMENSIONS = 16, 48, (2, 32)
BETAS = np.linspace(0.5, 8.0, 6)
TIMES = np.linspace(0.0, 20.0, 21)
RTOL, ATOL = 1e-8, 1e-10
#: relative slack of each energy increment against the direction of c (integration error ~1e-8 relative)
ENERGY_SLACK = 1e-6
ENSEMBLES = {"plus-qk": 1.0, "minus-qk": -1.0}


def energies(x: np.ndarray, scores: np.ndarray, beta: float) -> np.ndarray:
    """E_β = (1/(2βn²)) Σ_ij e^{β x_iᵀ A x_j} of tokens x (systems, times, n, d), A per system (systems, d, d)."""
    inner = np.einsum("stia,sab,stjb->stij", x, scores, x)
    n = x.shape[2]
    return np.exp(scipy.special.logsumexp(beta * inner, axis=(2, 3)) - np.log(2 * beta * n * n))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", type=Path, default=Path("validation_output"))
    args = parser.parse_args(argv)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    systems = np.arange(SYSTEMS)
    checks, lines, diagrams = [], [], {}
    for d in DIMENSIONS:
        tokens = phase_diagram_tokens(0, systems, d, N)
        for ensemble, c_expected in ENSEMBLES.items():
            ds = mf.phase_diagram(d, N, BETAS, TIMES, SYSTEMS, matrices=ensemble, draw="per_system", rtol=RTOL,
                                  atol=ATOL, scheduler="serial", progress=False, per_system=True)
            diagrams[d, ensemble] = ds
            weights = [random_weights(ensemble, d, 0, draw="per_system", system=s) for s in systems]
            scores = np.stack([Q.T @ K for Q, K, _ in weights])
            values = np.stack([V for *_, V in weights])
            factors = {mf.Attention(1.0, Q=Q, K=K, V=V).gradient_factor(d) for Q, K, V in weights}
            worst, same = np.inf, True
            for b, beta in enumerate(BETAS):
                run = weighted_token_evolution(tokens, scores, values, TIMES, beta, True, rtol=RTOL, atol=ATOL)
                x = run.y
                inner = np.einsum("stia,stja->stij", x, x)
                fraction = ((inner >= 1 - 1e-3).sum(axis=(2, 3)) - N) / (N * (N - 1))
                same &= bool(np.array_equal(fraction, ds["pair_fraction"].isel(beta=b).transpose("seed", "time")))
                e = energies(x, scores, beta)
                steps = c_expected * np.diff(e, axis=1) / e[:, :-1]
                worst = min(worst, float(steps.min()))
                if d == DIMENSIONS[0] and b == 0:
                    Q, K, V = weights[0]
                    lib = mf.Attention(beta, Q=Q, K=K, V=V).particle_energy(x[0], np.full((TIMES.size, N), 1 / N),
                                                                            None)
                    gap = float(np.abs(lib / e[0] - 1).max())
                    checks.append((f"E_beta here vs Attention.particle_energy, d = {d}", gap, 1e-12, gap <= 1e-12))
            checks.append((f"d = {d}, {ensemble}: gradient factor c", float(np.mean(list(factors))), c_expected,
                           all(abs(c - c_expected) < 1e-12 for c in factors)))
            checks.append((f"d = {d}, {ensemble}: diagram pair fraction = kept tokens' (1 = yes)", float(same), 1.0,
                           same))
            checks.append((f"d = {d}, {ensemble}: min over systems of c dE/E per output step", worst, -ENERGY_SLACK,
                           worst >= -ENERGY_SLACK))
            final = ds.isel(time=-1)
            lines.append(f"d = {d:3d} {ensemble:9s} " + " ".join(
                f"b={beta:.1f}: P={p:.3f} rank={r:.2f}" for beta, p, r in
                zip(BETAS, final.probability.values, final.rank_mean.values)))
    report = "\n".join([f"random weights V = +-Q^T K (GOE Q^T K, per system), n = {N}, {SYSTEMS} systems, "
                        f"t in [0, {TIMES[-1]:g}], rtol = {RTOL:g}", *lines, "",
                        f"{'check':62s} {'measured':>12} {'bound':>10}  ok"] +
                       [f"{name:62s} {value:12.4g} {bound:10.3g}  {'yes' if ok else 'NO'}"
                        for name, value, bound, ok in checks])
    print(report)
    (args.output_dir / "random_weights.txt").write_text(report + "\n")
    fig = Figure(figsize=(10.0, 7.0))
    for k, ((d, ensemble), ds) in enumerate(diagrams.items()):
        ax = fig.add_subplot(2, 2, k + 1)
        mesh = ax.pcolormesh(TIMES, BETAS, ds.probability.values, vmin=0, vmax=1, cmap="RdBu_r", shading="nearest")
        ax.set_title(f"d = {d}, V = {'+' if ENSEMBLES[ensemble] > 0 else '-'}Q^T K (per system)")
        ax.set_xlabel("t")
        ax.set_ylabel("beta")
        fig.colorbar(mesh, ax=ax, label="P(<x_1, x_2> >= 1 - delta)")
    fig.tight_layout()
    fig.savefig(args.output_dir / "random_weights.png", dpi=110)
    failed = [name for name, _, _, ok in checks if not ok]
    print(f"{len(failed)} mismatch(es)" + (": " + "; ".join(failed) if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Paper 1 (arXiv 2305.05465) §4 and §11, paper 2 Problem 5: limit sets of the rescaled tokens by the spectrum of V.

Pure self-attention on R^d, P = softmax(β <Q x_i, K x_j>), integrated through z_i = e^{-tV} x_i
(``mf.Attention(beta, Q, K, V, projection=False, rescaled=True)``), classified by ``mf.limit_set``.

(a) The codimension-2 example: the authors' 3 × 3 symmetric V of their codimension-k example
    (eigenvalues 1.96345, 0.25287, -0.22210: two positive, one negative), Q = K = I, β = 1, n = 20
    tokens uniform in [-5, 5]^3 (their draw; seed 0 here), t ∈ [0, 40]. Checked:
    - case ``flats``, codimension 2; at t = 40 at most three flats (the codimension conjecture),
      resolved (levels more than 10 residuals apart), the same assignment at t = 30 and 40;
    - the flats are lines parallel to the eigenvector of the negative eigenvalue (Dᵀ φ_3 = 0);
    - the largest distance of a token from its line shrinks from t = 30 to 40 at the rate of the
      smallest positive eigenvalue, 0.25287 (hard-max regime: z_i - z_leader relaxes like e^{-λ_m t}
      along each positive eigenvector), within RATE_TOLERANCE relative.
(b) One run per case of the classifier (d = 3, n = 16 Gaussian tokens): V = -I (point; the original
    dynamics, paper 1 Theorem C.5), V = I (polytope), a non-normal V with one positive eigenvalue
    (flats, k = 1, checked against ``mf.hyperplanes``), (a)'s V (flats, k = 2), a complex leading pair
    1 ± 2i (rotation). Checked: the case and the codimension; for V = -I the spread halves as t
    quadruples (|y| ~ t^{-1/2}); for k = 1 the levels equal those of ``mf.hyperplanes``.
(c) Rank of P(T) against n (paper 1 §11), T = 10, d = 2 and 3, n = 8, 16, 32, 64, 3 seeds each:
    V symmetric positive definite with a simple top eigenvalue, and V = I for contrast. Numerical rank:
    σ_k > 1e-8 σ_1. Checked: every P(T) Boolean (rows within 1e-8 of basis vectors), rank = number of
    leaders; for the simple-top V, rank ≤ 2 at every n (measured); for V = I the rank is reported
    (it is the number of polytope vertices and grows with n), not bounded.

Writes rescaled_limit_sets.txt/.nc, rescaled_rank.nc and rescaled_limit_sets.png; exits with
status 1 on a mismatch. Run time: ~40 s on one core.

Run:  python validation/transformer_variants/rescaled_limit_sets.py [--output-dir DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

import meanfield as mf

AUTHORS_V = np.array([[0.92761287, 0.94333073, 0.3827744],
                      [0.94333073, 0.59991396, 0.47825472],
                      [0.3827744, 0.47825472, 0.46668605]])
"""The authors' codimension-k example ("clustering-Tformers.py", choice "codimension-k": "Real eigenvalues
(2 positive, 1 negative)"); they take Q = K = I (A = I in their scores) and tokens uniform in [-5, 5]^d."""
N_TOKENS = 20
TIMES = np.arange(0.0, 40.5, 2.5)
EARLY, LATE = 30.0, 40.0
RATE_TOLERANCE = 0.01
"""Relative: the measured rate is 0.2528718 against λ_2 = 0.2528718 (the leaders are fixed once the
attention is hard-max, so the relaxation is exactly linear)."""
RTOL, ATOL = 1e-10, 1e-13
RANK_NS = (8, 16, 32, 64)
RANK_SEEDS = 3
RANK_T = 10.0
RANK_TOLERANCE = 1e-8
_R3 = np.linalg.qr(np.array([[1.0, 0.4, -0.3], [0.2, 1.0, 0.5], [-0.6, 0.1, 1.0]]))[0]
RANK_MATRICES = {
    "spd_d2": np.array([[0.8, 0.3], [0.3, 0.5]]),
    "spd_d3": _R3 @ np.diag([1.0, 0.6, 0.3]) @ _R3.T,
    "identity_d3": np.eye(3),
}
"""Symmetric positive definite V with a simple top eigenvalue (d = 2, 3) and V = I (d = 3)."""
SIMPLE_TOP_MAX_RANK = 2


def _simulate(V: np.ndarray, x0: np.ndarray, times: Any, rescaled: bool = True) -> xr.Dataset:
    model = mf.Attention(1.0, None, None, V, projection=False, rescaled=rescaled)
    return mf.simulate(model, x0, times, rtol=RTOL, atol=ATOL)


def codimension_two_example(seed: int = 0) -> dict[str, Any]:
    """(a): run the authors' 3 × 3 example and check its codimension-2 flats.

    Returns a dict with ``ok`` (every check passed), ``checks`` (name → bool), ``lines`` (the table
    rows), ``run`` (the simulate Dataset), ``late`` and ``early`` (``mf.limit_set`` at t = 40 and 30),
    ``to_final`` (at every output time, the largest distance in R^d of a token from its line at t = 40)
    and ``rate``.
    """
    values, vectors = np.linalg.eigh(AUTHORS_V)
    x0 = np.random.default_rng(seed).uniform(-5.0, 5.0, (N_TOKENS, 3))
    ds = _simulate(AUTHORS_V, x0, TIMES)
    early, late = mf.limit_set(ds.sel(time=slice(None, EARLY))), mf.limit_set(ds.sel(time=slice(None, LATE)))
    D = late["normal"].values
    gap = ds["positions"].values @ D - late["levels"].values[late["label"].values]  # (time, particle, eigen)
    to_final = np.sqrt(np.einsum("tik,kl,til->ti", gap, np.linalg.inv(D.T @ D), gap)).max(axis=1)
    rate = float(np.log(float(early["residual"]) / float(late["residual"])) / (LATE - EARLY))
    lambda2 = float(values[1])
    checks = {
        "run reached t = 40": bool(ds.attrs["success"]) and float(ds["time"][-1]) == LATE,
        "case flats, codimension 2": late.attrs["case"] == "flats" and late.attrs["codimension"] == 2,
        "at most three flats": bool(late["at_most_three"]),
        "resolved at t = 30 and 40": bool(late["resolved"]) and bool(early["resolved"]),
        "same assignment at t = 30 and 40": bool(np.array_equal(late["label"].values, early["label"].values)),
        "lines parallel to phi_3": bool(np.max(np.abs(late["normal"].values.T @ vectors[:, 0])) < 1e-12),
        "distances shrink": float(late["distance"].max()) < float(early["distance"].max()),
        f"rate = lambda_2 within {RATE_TOLERANCE:.0%}": abs(rate - lambda2) <= RATE_TOLERANCE * lambda2,
    }
    lines = [f"(a) authors' 3 x 3 V, eigenvalues {np.round(values[::-1], 5).tolist()}, Q = K = I, beta = 1, "
             f"n = {N_TOKENS} uniform in [-5, 5]^3 (seed {seed})",
             f"    t = {LATE:g}: {int(late['n_flats'])} lines (codimension 2), levels (a_1, a_2) = "
             f"{np.round(late['levels'].values, 5).tolist()}, tokens per line "
             f"{np.bincount(late['label'].values).tolist()}",
             f"    largest distance to its line: t = {EARLY:g} {float(early['distance'].max()):.4e}, "
             f"t = {LATE:g} {float(late['distance'].max()):.4e}; residual (/scale {float(late['scale']):.4g}) "
             f"{float(early['residual']):.4e} -> {float(late['residual']):.4e}",
             f"    rate {rate:.7f} (lambda_2 = {lambda2:.7f}); separation {float(late['separation']):.4f}"]
    lines += [f"    {'ok ' if good else 'BAD'} {name}" for name, good in checks.items()]
    return dict(ok=all(checks.values()), checks=checks, lines=lines, run=ds, early=early, late=late,
                to_final=to_final, rate=rate, lambda2=lambda2)


def classification_table() -> tuple[bool, list[str], xr.Dataset]:
    """(b): one run per case, the classifier's answer and the case's check."""
    S = np.array([[1.0, 0.6, 0.3], [0.2, 1.0, -0.4], [0.5, 0.1, 1.0]])
    cases = [
        ("V = -I (original dynamics)", -np.eye(3), "point", 3, False, (0.0, 10.0, 40.0)),
        ("V = I", np.eye(3), "polytope", 3, True, (0.0, 12.0)),
        ("one positive eigenvalue, non-normal", S @ np.diag([1.0, -0.5, -0.3]) @ np.linalg.inv(S), "flats", 1,
         True, (0.0, 12.0)),
        ("authors' 3 x 3 (two positive)", AUTHORS_V, "flats", 2, True, (0.0, 30.0)),
        ("complex pair 1 +- 2i, -0.5", np.array([[1.0, -2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, -0.5]]),
         "rotation", 2, True, (0.0, 10.0)),
    ]
    ok = True
    lines = ["(b) the classifier on one run per case (d = 3, n = 16 Gaussian tokens, seed 4)",
             f"    {'V':<38} {'case':<9} {'k':>2} {'flats':>5} {'residual':>10} {'claim':>6}  check"]
    rows = []
    x0 = np.random.default_rng(4).standard_normal((16, 3))
    for name, V, expected, k, rescaled, times in cases:
        ds = _simulate(V, x0, list(times), rescaled=rescaled)
        out = mf.limit_set(ds)
        good = out.attrs["case"] == expected and out.attrs["codimension"] == k and bool(ds.attrs["success"])
        note = ""
        if expected == "point":
            spread = [float(mf.limit_set(ds.sel(time=slice(None, t)))["spread"]) for t in times[1:]]
            ratio = spread[1] / spread[0]
            good &= abs(ratio - 0.5) < 0.05
            note = f"spread t = 10 -> 40: {spread[0]:.4f} -> {spread[1]:.4f} (x {ratio:.3f}, t^-1/2 law: 0.5)"
        elif k == 1:
            ref = mf.hyperplanes(ds).isel(time=-1)
            count = int(ref["n_hyperplanes"])
            same = count == int(out["n_flats"]) and np.allclose(out["levels"].values[:, 0],
                                                                ref["levels"].values[:count], rtol=1e-12)
            good &= bool(same)
            note = f"levels {np.round(out['levels'].values[:, 0], 5).tolist()} = hyperplanes: {same}"
        elif expected == "polytope":
            note = f"{int(out['vertex'].sum())} vertices of {int(out['n_flats'])} points"
        elif expected == "rotation":
            note = f"{int(out['vertex'].sum())} of {int(out['n_flats'])} points in the leading plane are hull vertices"
        claim = "-" if "claim_holds" not in out else ("yes" if bool(out["claim_holds"]) else "no")
        ok &= good
        lines.append(f"    {name:<38} {out.attrs['case']:<9} {k:>2} {int(out['n_flats']):>5} "
                     f"{float(out['residual']):>10.3e} {claim:>6}  {'ok ' if good else 'BAD'} {note}")
        rows.append(dict(V=name, case=out.attrs["case"], codimension=k, n_flats=int(out["n_flats"]),
                         residual=float(out["residual"]), ok=int(good)))
    table = xr.Dataset({key: ("case", np.array([row[key] for row in rows])) for key in rows[0]})
    return ok, lines, table


def rank_table() -> tuple[bool, list[str], dict[str, xr.Dataset]]:
    """(c): numerical rank of P(T) against n."""
    ok = True
    lines = [f"(c) rank of P(T = {RANK_T:g}) against n: #{{sigma_k > {RANK_TOLERANCE:g} sigma_1}}, "
             f"{RANK_SEEDS} seeds of Gaussian tokens per n (ranks listed per seed)",
             f"    {'V':<12} " + " ".join(f"{'n = ' + str(n):>12}" for n in RANK_NS) + "  check"]
    tables = {}
    for name, V in RANK_MATRICES.items():
        out = mf.limit_attention_rank(V, RANK_NS, seeds=RANK_SEEDS, t_final=RANK_T, tolerance=RANK_TOLERANCE)
        tables[name] = out
        good = bool(out["success"].all() and out["boolean"].all()
                    and np.array_equal(out["rank"].values, out["n_leaders"].values))
        if name.startswith("spd"):
            good &= int(out["rank"].max()) <= SIMPLE_TOP_MAX_RANK
        ok &= good
        cells = " ".join(f"{','.join(map(str, out['rank'].sel(n=n).values)):>12}" for n in RANK_NS)
        lines.append(f"    {name:<12} {cells}  {'ok ' if good else 'BAD'}")
    example = tables["spd_d3"]["singular_values"].sel(n=64, seed=0).values
    lines.append(f"    spd_d3, n = 64, seed 0: leading singular values {np.round(example[:4], 6).tolist()} "
                 f"(sqrt of the followers per leader; sum of squares {np.nansum(example ** 2):.6f} = n)")
    return ok, lines, tables


def figure(example: dict, tables: dict[str, xr.Dataset], path: Path) -> None:
    fig = Figure(figsize=(15, 4.6))
    ax = fig.add_subplot(1, 3, 1)
    late = example["late"]
    c = example["run"]["positions"].values @ late["normal"].values  # leading coordinates (a_1, a_2) over time
    for i in range(c.shape[1]):
        ax.plot(c[:, i, 0], c[:, i, 1], lw=0.6, color="0.6")
    ax.scatter(c[0, :, 0], c[0, :, 1], s=10, facecolors="none", edgecolors="0.3", label="t = 0")
    ax.scatter(c[-1, :, 0], c[-1, :, 1], c=late["label"].values, cmap="coolwarm", s=30,
               label=f"t = {LATE:g}: {int(late['n_flats'])} lines")
    ax.set_xlabel(r"$a_1 = \langle\varphi_1, z\rangle$ ($\lambda_1$ = 1.963)")
    ax.set_ylabel(r"$a_2 = \langle\varphi_2, z\rangle$ ($\lambda_2$ = 0.253)")
    ax.legend(fontsize=8)
    ax.set_title("authors' 3x3 V: leading coordinates (each line a point)")
    ax = fig.add_subplot(1, 3, 2)
    distance = example["to_final"]
    ax.semilogy(TIMES, distance, "o-", ms=3, label="max distance of a token from its line at t = 40")
    ax.semilogy(TIMES, distance[TIMES == EARLY] * np.exp(-example["lambda2"] * (TIMES - EARLY)), "--",
                label=fr"$e^{{-\lambda_2 t}}$, $\lambda_2$ = {example['lambda2']:.4f}")
    ax.set_xlabel("t")
    ax.legend(fontsize=8)
    ax.set_title("distance to the codimension-2 flats")
    ax = fig.add_subplot(1, 3, 3)
    for name, out in tables.items():
        ax.plot(out["n"], out["rank"].mean("seed"), "o-", label=name)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("n")
    ax.set_ylabel(f"rank P(T = {RANK_T:g}) (mean over seeds)")
    ax.legend(fontsize=8)
    ax.set_title(f"numerical rank, sigma_k > {RANK_TOLERANCE:g} sigma_1")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", type=Path, default=Path("validation_output"))
    args = parser.parse_args(argv)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    example = codimension_two_example()
    ok_b, lines_b, table = classification_table()
    ok_c, lines_c, ranks = rank_table()
    ok = example["ok"] and ok_b and ok_c
    lines = [*example["lines"], "", *lines_b, "", *lines_c, "",
             f"{'PASS' if ok else 'FAIL'} ({time.perf_counter() - start:.0f} s)"]
    text = "\n".join(lines)
    print(text)
    (args.output_dir / "rescaled_limit_sets.txt").write_text(text + "\n")
    table.attrs.update(description="limit_set on one run per case", meanfield_version=mf.__version__)
    table.to_netcdf(args.output_dir / "rescaled_limit_sets.nc")
    xr.concat([out.expand_dims(V=[name]).drop_attrs() for name, out in ranks.items()], dim="V").to_netcdf(
        args.output_dir / "rescaled_rank.nc")
    figure(example, ranks, args.output_dir / "rescaled_limit_sets.png")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""The hard-max limit of self-attention: paper 2 §9.3, (9.4)-(9.6), Example 9.3, Problem 6.

(a) Example 9.3 (d = 2, n = 3, Q = K = V = I, z1 = (1, 1), z2 = (-1, 1), z3 = 0): the Filippov engine
    (``mf.HardmaxAttention``) against the branch the symmetry selects, z3(t) = (0, 1 - e^{-t}), z1, z2
    fixed: checked to 1e-10 at t = 5. The two other branches that (9.5) admits (z3 -> z1, z3 -> z2)
    are reproduced by the engine from z3(0) = (+-1e-12, 0) (scores 2e-12 apart, far above their round-off:
    not a tie), and their distance to every finite-beta run at t = 5 is reported (they are not limits).
(b) The ladder beta = 4, 8, ..., 256 of (9.4) (``Attention(..., rescaled=True, scores_at_z=True)``):
    sup over [0, 5] of max_i |z_i^beta - z_i^infinity| checked to decrease monotonically; its fitted rate
    and beta e(beta) (derived limit 1/2, docs/hardmax.md) are reported and checked (rate in (0.85, 1),
    |beta e - 1/2| < 2.5/beta from beta = 64).
(c) A switch followed by sliding (d = 1, Q = 1, K = -1, V = 1, z = (-1, 1, 1/2)): exact solution
    z3 = e^{-t}(e^{-t} - 1/2) until t = ln 2, then z3 = 0; checked to 1e-10.
(d) An attracting tie (d = 1, V = -1, z = (1, -2, 0)): the sliding solution z3 = 0 and beta e -> ln 2 / 3,
    checked.
(e) Generic weights (Q, K, V = I + 0.3 G, n = 6, d = 2, three draws): the ladder reported, checked
    to end below where it starts.

Writes hardmax.txt, hardmax.nc (the ladder of (b)) and hardmax.png; exits with status 1 on a mismatch.
Run time: about 10 s on one core.

Run:  python validation/hardmax.py [--output-dir DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

import meanfield as mf

EXAMPLE_93 = np.array([[1.0, 1.0], [-1.0, 1.0], [0.0, 0.0]])
LADDER_TIMES = np.concatenate([[0.0], np.geomspace(1e-5, 5.0, 600)])
BRANCH_TOLERANCE = 1e-10


def example_93() -> tuple[list[str], bool, dict]:
    lines, ok = ["(a) Example 9.3: the Filippov engine and the branches of (9.5)"], True
    t = np.linspace(0.0, 5.0, 101)
    u = np.exp(-t)
    engine = mf.HardmaxAttention()
    symmetric = mf.simulate(engine, EXAMPLE_93, t, rtol=1e-13, atol=1e-15)["positions"].values
    exact = np.broadcast_to(EXAMPLE_93, symmetric.shape).copy()
    exact[:, 2, 1] = 1 - u
    error = float(np.abs(symmetric[-1] - exact[-1]).max())
    fixed = bool(np.array_equal(symmetric[:, :2], exact[:, :2]))
    good = error <= BRANCH_TOLERANCE and fixed
    ok &= good
    lines.append(f"  symmetric branch z3 = (0, 1 - e^-t): |z(5) - exact| = {error:.2e} (<= {BRANCH_TOLERANCE:g}), "
                 f"z1, z2 fixed exactly: {fixed}  {'ok' if good else 'MISMATCH'}")
    branches = {"symmetric": symmetric}
    for name, sign, target in (("to z1", 1.0, EXAMPLE_93[0]), ("to z2", -1.0, EXAMPLE_93[1])):
        start = EXAMPLE_93.copy()
        start[2, 0] = sign * 1e-12
        run = mf.simulate(engine, start, t, rtol=1e-13, atol=1e-15)["positions"].values
        expected = target[None, :] + (start[2] - target)[None, :] * u[:, None]
        error = float(np.abs(run[:, 2] - expected).max())
        good = error <= BRANCH_TOLERANCE
        ok &= good
        branches[name] = run
        lines.append(f"  branch {name} from z3(0) = ({sign * 1e-12:+.0e}, 0): |z3 - (target + (z3(0) - target) e^-t)| "
                     f"= {error:.2e}  {'ok' if good else 'MISMATCH'}")
    return lines, ok, branches


def ladder(branches: dict) -> tuple[list[str], bool, object]:
    ds = mf.hardmax_limit(EXAMPLE_93, LADDER_TIMES)
    beta, sup = ds["beta"].values, ds["sup_error"].values
    lines = ["", "(b) (9.4) -> (9.5)-(9.6) on Example 9.3, sup over [0, 5] of max_i |z_i^beta - z_i^inf|",
             "   beta   sup error   beta*error   |z3^beta(5) - branch to z1|(5)"]
    final = ds["positions"].values[:, -1, 2]
    other = branches["to z1"][-1, 2]
    for b, e, z in zip(beta, sup, final):
        lines.append(f"  {b:5.0f}   {e:.4e}   {b * e:.5f}      {np.linalg.norm(z - other):.4f}")
    big = beta >= 64
    good = bool(ds.attrs["monotone"] and ds.attrs["success"] and 0.85 < ds.attrs["rate"] < 1.0
                and np.all(np.abs(beta[big] * sup[big] - 0.5) < 2.5 / beta[big]))
    lines.append(f"  monotone: {bool(ds.attrs['monotone'])}; fitted e ~ {ds.attrs['prefactor']:.3f} beta^-"
                 f"{ds.attrs['rate']:.3f} over the ladder; beta e -> 1/2 (derived): {beta[-1] * sup[-1]:.5f} at "
                 f"beta = {beta[-1]:.0f}  {'ok' if good else 'MISMATCH'}")
    return lines, good, ds


def switch_and_slide() -> tuple[list[str], bool]:
    one = np.eye(1)
    t = np.linspace(0.0, 3.0, 121)
    run = mf.simulate(mf.HardmaxAttention(Q=one, K=-one, V=one), np.array([[-1.0], [1.0], [0.5]]), t, rtol=1e-12,
                      atol=1e-14)
    u = np.exp(-t)
    exact = np.stack([-u**2, u**2, np.where(t < np.log(2), u * (u - 0.5), 0.0)], axis=1)
    error = float(np.abs(run["positions"].values[..., 0] - exact).max())
    good = error <= BRANCH_TOLERANCE and bool(run.attrs["success"])
    return ["", "(c) switch at t = ln 2 then sliding at 0 (d = 1, Q = 1, K = -1, V = 1)",
            f"  max over [0, 3] |z - exact| = {error:.2e}  {'ok' if good else 'MISMATCH'}"], good


def attracting_tie() -> tuple[list[str], bool]:
    z0 = np.array([[1.0], [-2.0], [0.0]])
    ds = mf.hardmax_limit(z0, np.linspace(0.0, 3.0, 121), betas=[16, 32, 64, 128, 256, 512], V=-np.eye(1))
    beta, sup = ds["beta"].values, ds["sup_error"].values
    held = float(np.abs(ds["limit"].values - z0).max())
    good = bool(held < 1e-12 and ds.attrs["monotone"] and np.all(np.abs(beta * sup - np.log(2) / 3) < 0.2 / beta))
    lines = ["", "(d) attracting tie (d = 1, V = -1, z = (1, -2, 0)): Filippov sliding holds z3 = 0",
             f"  hard-max |z - z(0)| = {held:.1e}; beta e(beta) = "
             + ", ".join(f"{b * e:.4f}" for b, e in zip(beta, sup))
             + f" -> ln2/3 = {np.log(2) / 3:.4f}  {'ok' if good else 'MISMATCH'}"]
    return lines, good


def generic() -> tuple[list[str], bool]:
    rng = np.random.default_rng(2026)
    lines, ok = ["", "(e) generic weights Q, K, V = I + 0.3 G, n = 6, d = 2: sup error over [0, 3]"], True
    t = np.concatenate([[0.0], np.geomspace(1e-4, 3.0, 300)])
    for draw in range(3):
        Q, K, V = (np.eye(2) + 0.3 * rng.standard_normal((2, 2)) for _ in range(3))
        ds = mf.hardmax_limit(rng.standard_normal((6, 2)), t, betas=[8, 32, 128, 512], Q=Q, K=K, V=V)
        sup = ds["sup_error"].values
        good = bool(ds.attrs["success"] and sup[-1] < sup[0])
        ok &= good
        lines.append(f"  draw {draw}: " + ", ".join(f"beta {b:.0f}: {e:.2e}" for b, e in zip(ds["beta"].values, sup))
                     + f"  {'ok' if good else 'MISMATCH'}")
    return lines, ok


def figure(branches: dict, ds, path: Path) -> None:
    fig = Figure(figsize=(15, 4.5))
    ax, bx, cx = fig.subplots(1, 3)
    ax.plot(*EXAMPLE_93[:2].T, "ks", label="z1, z2 (fixed)")
    ax.plot(*branches["symmetric"][:, 2].T, "k-", lw=2, label="limit branch z3 = (0, 1 - e^-t)")
    for name in ("to z1", "to z2"):
        ax.plot(*branches[name][:, 2].T, ":", color="gray", lw=2,
                label="branches z3 -> z1, z3 -> z2 (not limits)" if name == "to z1" else None)
    for beta in (4.0, 256.0):
        ax.plot(*ds["positions"].sel(beta=beta).values[:, 2].T, "--", lw=1, label=f"(9.4), beta = {beta:.0f}")
    ax.set_aspect("equal")
    ax.set_title("Example 9.3: z3 in the plane, t in [0, 5]")
    ax.legend(fontsize=7, loc="center right")
    for beta in (4.0, 16.0, 64.0, 256.0):
        bx.plot(ds["time"].values, ds["positions"].sel(beta=beta).values[:, 2, 1], lw=1, label=f"(9.4), beta = {beta:.0f}")
    bx.plot(ds["time"].values, ds["limit"].values[:, 2, 1], "k--", lw=1.5, label="hard-max engine")
    bx.set_xscale("log")
    bx.set_xlim(1e-4, 5)
    bx.set_xlabel("t")
    bx.set_title("z3 . e2: the initial layer of width ~1/beta")
    bx.legend(fontsize=7)
    beta, sup = ds["beta"].values, ds["sup_error"].values
    cx.loglog(beta, sup, "o-", label="sup_[0,5] max_i |z^beta - z^inf|")
    cx.loglog(beta, 0.5 / beta, "k--", lw=1, label="1/(2 beta) (derived)")
    cx.set_xlabel("beta")
    cx.set_title(f"fitted rate {ds.attrs['rate']:.3f} over the ladder")
    cx.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", type=Path, default=Path("validation_output"))
    args = parser.parse_args(argv)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    lines, ok, branches = example_93()
    more, good, ds = ladder(branches)
    lines += more
    ok &= good
    for part in (switch_and_slide, attracting_tie, generic):
        more, good = part()
        lines += more
        ok &= good
    lines += ["", f"{'PASS' if ok else 'FAIL'} ({time.perf_counter() - start:.0f} s)"]
    print("\n".join(lines))
    (args.output_dir / "hardmax.txt").write_text("\n".join(lines) + "\n")
    ds.attrs.update(description="the limit beta -> infinity of (9.4) on Example 9.3 (paper 2, §9.3)",
                    meanfield_version=mf.__version__)
    ds.to_netcdf(args.output_dir / "hardmax.nc")
    figure(branches, ds, args.output_dir / "hardmax.png")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

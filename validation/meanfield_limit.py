"""Mean-field limit on S¹: W₁(μ_n(t), μ(t)) ~ n^{-1/2} for iid starts, ~ n^{-1} initially for quantile starts.

For SA and USA without noise and SA with noise σ > 0 (PDE with σΔ against the
particle SDE), n particles drawn iid from a von Mises density are advanced by
the particle engine and compared with the PDE solution from that density
(meanfield_study). At every output time the exponent a in W₁ ≈ c n^a is
fitted per seed on log-log axes; its mean over seeds must match -1/2 within
two standard errors (and the standard error must be small enough, ≤ 0.08, for
the check to mean something). The deterministic quantile sampler must give an
initial W₁ exponent of -1 within ±0.1.

Writes meanfield_limit_<case>.nc (one study per case), meanfield_limit.png
and meanfield_limit.txt in the output directory; exits with status 1 on a
mismatch.

Run:  python validation/meanfield_limit.py [--output-dir DIR] [--seeds 16]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import meanfield as mf  # noqa: E402
from meanfield.studies.limits._meanfield_limit import fit_exponent  # noqa: E402
from meanfield import meanfield_study  # noqa: E402

N_VALUES = [64, 256, 1024, 4096]
TIMES = [0.0, 0.5, 1.0]
GRID = 512
KAPPA = 1.0
MAX_STDERR = 0.08
"""A check whose standard error exceeds this would accept almost any exponent."""

CASES = [
    ("SA beta=2", mf.SelfAttention(2.0), {}),
    ("USA beta=1", mf.SelfAttention(1.0, normalized=False), {}),
    ("SA beta=2 sigma=0.1", mf.SelfAttention(2.0, noise=0.1), {"dt": 5e-3}),
]


def quantile_exponent() -> tuple[np.ndarray, np.ndarray, float]:
    """Initial W₁ of midpoint-quantile samples against the density as cells (O(h²) ≈ 2e-6 ≪ 1/n)."""
    rho = mf.von_mises(mf.Circle(4096), 0.0, KAPPA)
    ns = np.array([16, 64, 256, 1024])
    w = np.array([mf.wasserstein(rho, mf.sample(rho, int(n), method="quantile"), 1, density="cells") for n in ns])
    slope, _, _ = fit_exponent(ns, w[:, None, None])
    return ns, w, float(slope[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", type=Path, default=Path("validation_output"))
    parser.add_argument("--seeds", type=int, default=16)
    args = parser.parse_args(argv)
    out = args.output_dir
    out.mkdir(parents=True, exist_ok=True)

    rho0 = mf.von_mises(mf.Circle(GRID), 0.0, KAPPA)
    rows = []
    ok = True
    fig, axes = plt.subplots(1, len(CASES) + 1, figsize=(4.2 * (len(CASES) + 1), 4))
    for ax, (name, model, sim_opts) in zip(axes, CASES):
        study = meanfield_study(model, rho0, TIMES, N_VALUES, seeds=range(args.seeds), simulate_options=sim_opts)
        study.to_netcdf(out / f"meanfield_limit_{name.replace(' ', '_').replace('=', '')}.nc")
        for k, tk in enumerate(study.time.values):
            a, se = float(study.exponent[k]), float(study.exponent_stderr[k])
            passed = abs(a + 0.5) <= 2 * se and se <= MAX_STDERR
            ok &= passed
            rows.append((name, f"iid, t={tk:g}", a, se, -0.5, "ok" if passed else "MISMATCH"))
        mf.plot.meanfield_limit(study, times=study.time.values, ax=ax)
        ax.set_title(name, fontsize=10)

    ns, w, slope = quantile_exponent()
    passed = abs(slope + 1.0) <= 0.1
    ok &= passed
    rows.append(("von Mises kappa=1", "quantile, t=0", slope, float("nan"), -1.0, "ok" if passed else "MISMATCH"))
    ax = axes[-1]
    ax.loglog(ns, w, "o-", label=f"quantile: slope {slope:.3f}")
    ax.loglog(ns, w[0] * (ns / ns[0]) ** -1.0, "k--", lw=0.8, label="n^-1")
    ax.set_title("initial error, quantile sampler", fontsize=10)
    ax.set_xlabel("n")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "meanfield_limit.png", dpi=120)

    header = f"{'case':<22} {'start, time':<16} {'exponent':>9} {'stderr':>8} {'expected':>9}  status"
    lines = [header] + [f"{c:<22} {s:<16} {a:9.4f} {se:8.4f} {e:9.2f}  {st}" for c, s, a, se, e, st in rows]
    table = "\n".join(lines)
    (out / "meanfield_limit.txt").write_text(table + "\n")
    print(table)
    print(f"wrote {out / 'meanfield_limit.png'} and {out / 'meanfield_limit.txt'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Stationary states of noisy self-attention: Newton on the moments against long-time integration.

A stable stationary state of ∂_t ρ + div(ρ X[ρ]) = σ Δρ can be found by
integrating the PDE until it stops moving (the baseline: ``mf.solve`` from a
clustered start, run in chunks until the order parameter changes by less than
``--tol`` per unit time) or by ``mf.stationary_state`` (damped Newton on the
Gegenbauer moments of the self-consistency equation ρ = e^{Ψ[ρ]/σ}/Z). For each
case the table gives both wall times, their ratio, and the order parameter r
of each, with the integration's distance to Newton's r (the integration is
only as converged as its stopping rule allows; Newton's residual is ≤ 1e-12).

Cases: USA and SA on S¹ (spectral scheme on ``Circle(128)``) and on S²
(zonal spectral scheme on ``ZonalSphere(3, 64)``), each at a noise where the
clustered state is stable.

Run:  OMP_NUM_THREADS=1 python benchmarks/bench_stationary.py [--tol 1e-8]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import meanfield as mf

CASES = [
    # (label, beta, normalized, d, noise as a fraction of sigma_c)
    ("USA  S¹ β=5", 5.0, False, 2, 1.05),
    ("SA   S¹ β=4", 4.0, True, 2, 0.7),
    ("USA  S² β=4", 4.0, False, 3, 1.1),
    ("SA   S² β=4", 4.0, True, 3, 0.7),
]


def integrate_to_rest(model: mf.SelfAttention, domain, tol: float, chunk: float = 5.0,
                      max_time: float = 2000.0) -> tuple[float, float, float]:
    """Run ``mf.solve`` from a von Mises start in chunks of ``chunk`` until |Δr|/chunk < tol.

    Returns (wall seconds, final r, time reached).
    """
    rho = mf.von_mises(domain, None, 2.0) if isinstance(domain, mf.ZonalSphere) else mf.von_mises(domain, 0.0, 2.0)
    start = time.perf_counter()
    t, r_old = 0.0, np.inf
    while t < max_time:
        run = mf.solve(model, rho, [t, t + chunk], method="spectral")
        r = float(run.order_parameter[-1])
        rho = mf.density(domain, run.density.isel(time=-1).values)
        t += chunk
        if abs(r - r_old) / chunk < tol:
            break
        r_old = r
    return time.perf_counter() - start, r, t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tol", type=float, default=1e-8, help="stopping rule of the integration: |Δr| per unit time")
    args = parser.parse_args()
    print(f"{'case':14s} {'σ':>8s} {'Newton s':>9s} {'integrate s':>12s} {'ratio':>8s} "
          f"{'r Newton':>10s} {'|Δr| integ.':>12s} {'t reached':>10s}")
    for label, beta, normalized, d, fraction in CASES:
        sigma = fraction * mf.critical_noise(mf.SelfAttention(beta, normalized=normalized), d)
        model = mf.SelfAttention(beta, normalized=normalized, noise=sigma)
        mf.stationary_state(model, d)  # first call outside the timing (imports, caches)
        start = time.perf_counter()
        state = mf.stationary_state(model, d)
        newton = time.perf_counter() - start
        domain = mf.Circle(128) if d == 2 else mf.ZonalSphere(d, 64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            wall, r, reached = integrate_to_rest(model, domain, args.tol)
        r_newton = float(state.order_parameter)
        print(f"{label:14s} {sigma:8.4f} {newton:9.4f} {wall:12.2f} {wall / newton:8.0f} "
              f"{r_newton:10.6f} {abs(r - r_newton):12.2e} {reached:10.0f}")


if __name__ == "__main__":
    main()

"""Cost of the spectral schemes with diffusion, where the Lawson tables e^{dhλ} enter.

SA β = 4, σ = 0.1, von Mises–Fisher initial density (κ = 2), t ∈ [0, 5], one
output, rtol = 1e-8: CPU time of :func:`solvers.evolve` (best of 3), accepted
steps. The step ladder of :class:`solvers.SpectralScheme` rounds proposals
down to 2^{j/8} so that consecutive steps share their tables; it costs a few
per cent more (shorter) steps. Run it on two checkouts to compare them:

    OMP_NUM_THREADS=1 PYTHONPATH=<checkout> python benchmarks/bench_spectral_stage.py
"""

from __future__ import annotations

import time

import numpy as np

import meanfield as mf
import solvers


def measure(kind: str, size: int) -> tuple[float, int]:
    """(best CPU time [s], accepted steps) of one run on S² (lmax = size) or zonal S⁴ (n = size)."""
    if kind == "sphere":
        domain, cls, d, loc = mf.Sphere(size), solvers.SphereSpectral, 3, [0.6, 0.0, 0.8]
    else:
        domain, d, loc = mf.ZonalSphere(5, size, nodes="gauss"), 5, None
        cls = getattr(solvers, "ZonalSpectral", None) or getattr(solvers, "ZonalSpectralScheme")
    model = mf.SelfAttention(4.0, noise=0.1)
    rho0 = mf.von_mises(domain, loc, 2.0).normalized().values[None]
    best, steps = np.inf, 0
    for _ in range(3):
        scheme = cls(domain.grid, model.velocity_spec(d), diffusion=0.1, rtol=1e-8, tail_tol=1.0)
        start = time.process_time()
        run = solvers.evolve(scheme, rho0, [0.0, 5.0])
        best, steps = min(best, time.process_time() - start), run.n_steps
    return best, steps


def main() -> None:
    print(f"{'domain':>8} {'size':>5} {'CPU [s]':>8} {'steps':>6}")
    for kind, size in (("sphere", 63), ("sphere", 127), ("zonal", 128)):
        cpu, steps = measure(kind, size)
        print(f"{kind:>8} {size:5d} {cpu:8.4f} {steps:6d}")


if __name__ == "__main__":
    main()

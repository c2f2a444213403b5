"""A user's kernel against the built-in self-attention: the cost of a PDE step, of the one-time quadrature, of
the particle sums.

1. Per step: the scheme of ``mf.Interaction`` with the USA kernel given by coefficients
   (``Kernel.fourier`` on S¹, ``Kernel.legendre`` on S²: its Funk–Hecke coefficients to the grid's band
   limit) against ``mf.SelfAttention(beta, normalized=False)`` on the same grid; baseline the built-in
   model's right-hand side (``scheme.rhs``), measured alternately with it, ratio printed (goal ≤ 1.1: the
   schemes see multipliers only, computed once when they are built).
2. The one-time Funk–Hecke quadrature of a kernel given as a Python function, lmax = 255 on S¹ and S²
   (goal ≤ 50 ms), a fresh kernel per repetition (the multipliers are cached on the kernel).
3. Particle velocities by direct sums, n = 4000 on S²: a Gaussian, a formula and a Riesz kernel against the
   SA sums (``DirectSelfAttention``), ns per pair.

Run with ``OMP_NUM_THREADS=1 python benchmarks/bench_interactions.py``.
"""

from __future__ import annotations

import time

import numpy as np

import meanfield as mf
from meanfield.domains._funk_hecke import scaled_funk_hecke
from meanfield.models._self_attention_sums import DirectSelfAttention
from solvers import gegenbauer_table
from solvers._funk_hecke import gauss_jacobi

BETA = 4.0


def mean_time(func, min_time: float) -> float:
    """Mean time per call over ≥ ``min_time`` seconds."""
    count, start = 0, time.perf_counter()
    while True:
        func()
        count += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            return elapsed / count


def best_time(func, repeats: int = 5, min_time: float = 0.2) -> float:
    """Best over ``repeats`` of the mean time per call, each over ≥ ``min_time`` seconds."""
    func()
    return min(mean_time(func, min_time) for _ in range(repeats))


def paired_times(first, second, rounds: int = 9, min_time: float = 0.1) -> tuple[float, float]:
    """The best mean times of two functions measured alternately (``rounds`` rounds), so that a load on the
    machine reaches both alike."""
    first(), second()
    times = np.array([[mean_time(first, min_time), mean_time(second, min_time)] for _ in range(rounds)])
    return float(times[:, 0].min()), float(times[:, 1].min())


def usa_by_coefficients(domain) -> mf.Interaction:
    """W = -e^{βt}/β given by its coefficients to the grid's band limit: Fourier Ŵ_k = -I_k(β)/β on S¹,
    Legendre a_l = λ_l N(d, l)/|S^{d-1}| on S²."""
    ell = np.arange(domain.band_limit + 1)
    multipliers = -np.exp(BETA) * scaled_funk_hecke(ell, BETA, domain.dimension) / BETA
    if domain.dimension == 2:
        return mf.Interaction(mf.Kernel.fourier(multipliers / (2 * np.pi)))
    dimensions = gegenbauer_table(ell.size, 3, np.ones(1))[0] ** 2
    return mf.Interaction(mf.Kernel.legendre(multipliers * dimensions / (4 * np.pi), d=3))


def step_costs() -> None:
    print("1. PDE right-hand side, USA beta = 4: built-in vs the same kernel given by coefficients")
    print(f"{'grid':>24} {'method':>14} {'built-in':>12} {'coefficients':>13} {'ratio':>7}")
    for domain in (mf.Circle(256), mf.Circle(1024), mf.Sphere(31), mf.Sphere(63)):
        rho = mf.perturbed_uniform(domain, amplitude=0.1, seed=0)
        for method in ("spectral", "finite_volume"):
            calls = []
            for model in (mf.SelfAttention(BETA, normalized=False), usa_by_coefficients(domain)):
                scheme = domain.schemes[method](domain.grid, model.grid_velocity(domain), diffusion=0.0)
                y = scheme.from_grid(rho.values[None])
                calls.append(lambda s=scheme, y=y: s.rhs(y))
            times = paired_times(*calls)
            print(f"{domain!r:>24} {method:>14} {times[0] * 1e6:10.1f}µs {times[1] * 1e6:11.1f}µs "
                  f"{times[1] / times[0]:7.3f}")


def quadrature_costs() -> None:
    print("2. one-time Funk-Hecke quadrature of a function kernel, 256 degrees (goal <= 50 ms), nodes included")
    for d in (2, 3):
        for label, make in (("exp(2t) - t^2", lambda: mf.Kernel.function(lambda t: np.exp(2 * t) - t**2)),
                            ("|x-y|^1.5", lambda: mf.Kernel.riesz(1.5))):

            def fresh(make=make, d=d) -> None:
                gauss_jacobi.cache_clear()  # the Gauss–Jacobi nodes are cached across kernels: time them too
                make().multipliers(256, d)

            elapsed = best_time(fresh, repeats=3)
            nodes = make().multipliers(256, d).quadrature_nodes
            print(f"   S^{d - 1} {label:>14}: {elapsed * 1e3:7.1f} ms ({nodes} Gauss-Jacobi nodes)")


def particle_costs() -> None:
    n = 4000
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, n, 3))
    x /= np.linalg.norm(x, axis=-1, keepdims=True)
    w = np.full((1, n), 1.0 / n)
    geometry = mf.Sphere(7).geometry
    baseline = best_time(lambda: DirectSelfAttention(2.0, False, w, False)(0.0, x), repeats=3)
    print(f"3. particle velocity by direct sums, n = {n} on S^2 (baseline USA beta = 2: "
          f"{baseline / n**2 * 1e9:.2f} ns per pair)")
    for label, model in (("gaussian(1)", mf.Interaction(mf.Kernel.gaussian(1.0))),
                         ("-exp(2*t)/2", mf.Interaction("-exp(2*t)/2")),
                         ("riesz(1)", mf.Interaction(mf.Kernel.riesz(1.0)))):
        velocity = model.particle_velocity(geometry, w, None, path="direct")
        elapsed = best_time(lambda v=velocity: v(0.0, x), repeats=3)
        print(f"   {label:>12}: {elapsed / n**2 * 1e9:5.2f} ns per pair, {elapsed / baseline:5.2f} x USA")


def main() -> None:
    step_costs()
    quadrature_costs()
    particle_costs()


if __name__ == "__main__":
    main()

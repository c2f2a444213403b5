"""Cost of the S¹ spectral step: per stage against the FFT floor, a small solve against a compiled stepper,
and the FFTW plans built over repeated solves.

Workload: SA (β = 4) from a von Mises density (κ = 0.5), :class:`solvers.CircleSpectral` with 3/2-rule
dealiasing, one thread, default tolerances (rtol = 1e-8), driven by :func:`solvers.evolve`. Three
measurements, each a ratio to a baseline measured in the same process:

(a) stage: the wall time of an adaptive run with σ = 0.1 (the Lawson tables enter), t ∈ [0, 10], divided by
    its right-hand-side evaluations, at N = 256, 1024, 4096; baseline, the FFT floor of one stage: the
    bare planned pyfftw transforms a dealiased stage needs (a backward real FFT of the 3 rows ρ, A ⋆ ρ,
    B ⋆ ρ and a forward real FFT of the flux, on M = 3N/2 nodes; ``FFTW.execute()`` on buffers allocated
    once). Goal: ≤ 2.5.
(b) solve: N = 64, σ = 0.1, t ∈ [0, 10] (scheme construction and :func:`solvers.evolve`; the
    ``mf.solve`` time, which adds the xarray record, is printed beside it); baseline, a numba-compiled
    fixed-step integrating-factor RK4 (Lawson RK4) on the same Fourier ODE with the same dealiased FFTW
    transforms, with the fewest equal steps whose error at t = 10 is at most that of the adaptive solve
    (both against an rtol = 1e-12 solve). Goal: ≤ 1 ms.
(c) plans: FFTW plans built over 20 solves at N = 64 and 20 at N = 256 (after one warm-up solve of each)
    and in the warm-up itself. Goal: no plan after the warm-up (one per size and direction in all).

Run with ``OMP_NUM_THREADS=1 python benchmarks/bench_circle_spectral_step.py``.
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np
import pyfftw

import meanfield as mf
import solvers
from solvers import _fft, _fftw_compiled

BETA, KAPPA = 4.0, 0.5


def _best(func, repeats: int, number: int = 1) -> float:
    """Best wall time per call in seconds over ``repeats`` repeats of ``number`` calls."""
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            func()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def _problem(n: int, noise: float):
    model = mf.SelfAttention(BETA, noise=noise)
    rho0 = mf.von_mises(mf.Circle(n), 0.0, KAPPA)
    return model, rho0, rho0.domain.grid, model.grid_velocity(rho0.domain, None), rho0.normalized().values[None]


def fft_floor(n: int, repeats: int) -> float:
    """Seconds of the bare FFTs of one dealiased stage: backward of 3 rows and forward of 1 row, M nodes."""
    padded = solvers.CircleSpectral(solvers.CircleGrid(n), _problem(8, 0.0)[3]).n_padded
    values = pyfftw.empty_aligned((3, padded), dtype="float64")
    coefficients = pyfftw.empty_aligned((3, padded // 2 + 1), dtype="complex128")
    backward = pyfftw.FFTW(coefficients, values, axes=(-1,), direction="FFTW_BACKWARD",
                           flags=("FFTW_MEASURE", "FFTW_DESTROY_INPUT"))
    flux = pyfftw.empty_aligned((1, padded), dtype="float64")
    flux_hat = pyfftw.empty_aligned((1, padded // 2 + 1), dtype="complex128")
    forward = pyfftw.FFTW(flux, flux_hat, axes=(-1,), flags=("FFTW_MEASURE",))
    values[...] = 1.0
    flux[...] = 1.0

    def stage() -> None:
        coefficients[...] = 0.0
        backward.execute()
        forward.execute()

    return _best(stage, repeats, number=200)


def stage_cost(n: int, repeats: int) -> tuple[float, int]:
    """(seconds per right-hand-side evaluation of an adaptive run, evaluations) at N = n, σ = 0.1."""
    _, _, grid, velocity, y0 = _problem(n, 0.1)

    def run() -> solvers.Evolution:
        return solvers.evolve(solvers.CircleSpectral(grid, velocity, diffusion=0.1), y0, [0.0, 10.0])

    nfev = run().nfev
    return _best(run, repeats) / nfev, nfev


# ---------------------------------------------------------------------------- baseline of (b)
def _raw_plans(n: int, padded: int):
    """FFTW plans (backward of 3 padded rows, forward of 1) on aligned buffers, for the compiled baseline."""
    synth = _fftw_compiled.raw_plan(padded, 3, "backward")
    flux = _fftw_compiled.raw_plan(padded, 1, "forward")
    return synth, flux


@numba.njit(cache=True, error_model="numpy")
def _baseline_rhs(a, out, fields, derivative, synth_in, synth_out, synth_plan, flux_in, flux_out, flux_plan,
                  execute):
    """N(a) for one species: ρ, A ⋆ ρ, B ⋆ ρ on the padded nodes, flux ρ A⋆ρ / B⋆ρ, its derivative."""
    n_modes = a.size
    synth_in[:, n_modes:] = 0.0
    for r in range(3):
        for k in range(n_modes):
            synth_in[r, k] = fields[r, k] * a[k]
    execute(synth_plan)
    for j in range(synth_out.shape[1]):
        flux_in[0, j] = synth_out[0, j] * (synth_out[1, j] / synth_out[2, j])
    execute(flux_plan)
    for k in range(n_modes):
        out[k] = flux_out[0, k] * derivative[k]


@numba.njit(cache=True, error_model="numpy")
def _baseline_run(a, t_end, n_steps, rates, fields, derivative, synth_in, synth_out, synth_plan, flux_in,
                  flux_out, flux_plan, execute):
    """Lawson RK4 (classical RK4 on e^{-λt} a) with n_steps equal steps to t_end; returns a(t_end)."""
    h = t_end / n_steps
    half = np.exp(0.5 * h * rates)
    full = half * half
    k1, k2, k3, k4, stage = np.empty_like(a), np.empty_like(a), np.empty_like(a), np.empty_like(a), np.empty_like(a)
    for _ in range(n_steps):
        _baseline_rhs(a, k1, fields, derivative, synth_in, synth_out, synth_plan, flux_in, flux_out, flux_plan,
                      execute)
        stage[:] = half * (a + 0.5 * h * k1)
        _baseline_rhs(stage, k2, fields, derivative, synth_in, synth_out, synth_plan, flux_in, flux_out,
                      flux_plan, execute)
        stage[:] = half * a + 0.5 * h * k2
        _baseline_rhs(stage, k3, fields, derivative, synth_in, synth_out, synth_plan, flux_in, flux_out,
                      flux_plan, execute)
        stage[:] = full * a + h * half * k3
        _baseline_rhs(stage, k4, fields, derivative, synth_in, synth_out, synth_plan, flux_in, flux_out,
                      flux_plan, execute)
        a = full * a + (h / 6.0) * (full * k1 + 2.0 * half * (k2 + k3) + k4)
    return a


def solve_cost(repeats: int) -> dict[str, float]:
    """Times of the N = 64 solve, of ``mf.solve`` and of the compiled baseline at equal accuracy."""
    model, rho0, grid, velocity, y0 = _problem(64, 0.1)
    t_end = 10.0

    def run(**options) -> solvers.Evolution:
        return solvers.evolve(solvers.CircleSpectral(grid, velocity, diffusion=0.1, **options), y0, [0.0, t_end])

    adaptive = run()
    reference = run(rtol=1e-12, atol=1e-16)
    error = float(np.abs(adaptive.y[-1] - reference.y[-1]).max())

    scheme = solvers.CircleSpectral(grid, velocity, diffusion=0.1)
    synth, flux = _raw_plans(grid.n, scheme.n_padded)
    fields = np.ascontiguousarray(scheme._field_multipliers)
    rates = np.ascontiguousarray(scheme._linear, dtype=complex)
    a0 = np.ascontiguousarray(scheme.spectrum(y0)[0])
    arguments = (rates, fields, np.ascontiguousarray(scheme._flux_derivative), synth.coefficients, synth.values,
                 synth.pointer, flux.values, flux.coefficients, flux.pointer, _fftw_compiled.EXECUTE)

    def baseline(n_steps: int) -> np.ndarray:
        return _baseline_run(a0.copy(), t_end, n_steps, *arguments)

    def baseline_error(n_steps: int) -> float:
        values = scheme._synthesis(baseline(n_steps)[None])
        return float(np.abs(values - reference.y[-1]).max())

    n_steps = 8
    while baseline_error(n_steps) > error:
        n_steps = int(np.ceil(n_steps * 1.1))
    return {
        "evolve": _best(run, repeats),
        "mf.solve": _best(lambda: mf.solve(model, rho0, [0.0, t_end], method="spectral"), max(3, repeats // 4)),
        "baseline": _best(lambda: baseline(n_steps), repeats),
        "error": error,
        "baseline_error": baseline_error(n_steps),
        "steps": adaptive.n_steps,
        "nfev": adaptive.nfev,
        "baseline_steps": n_steps,
    }


def plan_count(calls: int = 20) -> tuple[int, int]:
    """(plans built by a first solve at N = 64 and one at N = 256, plans built by ``calls`` more of each)."""
    def solve_both() -> None:
        for n in (64, 256):
            _, _, grid, velocity, y0 = _problem(n, 0.1)
            solvers.evolve(solvers.CircleSpectral(grid, velocity, diffusion=0.1), y0, [0.0, 1.0])

    start = _fft.plan_builds()
    solve_both()
    warm = _fft.plan_builds()
    for _ in range(calls):
        solve_both()
    return warm - start, _fft.plan_builds() - warm


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[256, 1024, 4096])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    if not _fftw_compiled.available():
        print("note: FFTW library not found for compiled steps; the numpy path is timed")
    first, later = plan_count()
    print(f"(c) FFTW plans: {first} in a first solve at N = 64 and at N = 256, {later} in 20 more of each")
    print("(a) stage cost, SA β = 4, σ = 0.1, t ∈ [0, 10], wall time per evaluation (best of "
          f"{args.repeats}); floor = bare pyfftw backward (3 rows) + forward (1 row) on M nodes")
    print(f"{'N':>6} {'M':>6} {'floor µs':>9} {'stage µs':>9} {'ratio':>6} {'nfev':>5}")
    for n in args.sizes:
        floor = fft_floor(n, args.repeats)
        stage, nfev = stage_cost(n, args.repeats)
        padded = solvers.CircleSpectral(solvers.CircleGrid(n), _problem(8, 0.0)[3]).n_padded
        print(f"{n:>6} {padded:>6} {1e6 * floor:9.2f} {1e6 * stage:9.2f} {stage / floor:6.2f} {nfev:>5}")
    t = solve_cost(args.repeats)
    print(f"(b) N = 64 SA solve, σ = 0.1, t ∈ [0, 10]: {t['steps']} steps, {t['nfev']} evaluations, "
          f"max error {t['error']:.1e}")
    print(f"    evolve {1e3 * t['evolve']:.3f} ms; mf.solve {1e3 * t['mf.solve']:.3f} ms; compiled Lawson RK4 "
          f"baseline ({t['baseline_steps']} steps, error {t['baseline_error']:.1e}) {1e3 * t['baseline']:.3f} ms; "
          f"ratio {t['evolve'] / t['baseline']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

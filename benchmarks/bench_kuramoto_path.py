"""Path accuracy of Kuramoto particles against cost: the ``moebius`` integrator against scipy's DOP853 and RK45.

Workload (the same in every row): Kuramoto, K = 2, Lorentzian frequencies of half-width γ = 0.5
(midpoint quantiles, max|ω_i| = 318 at n = 10³), iid uniform initial phases (seed 0), t ∈ [0, 50],
101 output times.

* Path error: max over the outputs of |Z(t) - Z_ref(t)|, Z = (1/n) Σ e^{iθ_j}; Z_ref from DOP853 at
  rtol = atol = 1e-13 on the angles (n = 10³).
* ``moebius``: :func:`meanfield.simulate` with ``method="moebius"`` at rtol 1e-3 … 1e-8 (atol = rtol/100),
  its accepted and rejected steps and the rejected/accepted ratio.
* Baseline: ``scipy.integrate.solve_ivp(method="DOP853")`` on θ̇_i = ω_i + K Im(Z e^{-iθ_i}) (vectorised numpy
  right-hand side) at rtol 1e-5 … 1e-10, in the same process.
* "at 1e-7": the CPU time each method needs for a path error of 1e-7, interpolated log-log between the two
  rows that bracket it, and their ratio.
* n = 10⁴: ``moebius`` at rtol 1e-3 against RK45 at rtol 1e-4 (the scipy run of equal r∞), CPU time (best of
  three) and
  |r∞ - √(1 - 2γ/K)| (r∞ the mean of r over t ∈ [20, 50]).

Run with ``OMP_NUM_THREADS=1 python benchmarks/bench_kuramoto_path.py`` (about two minutes).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.integrate
import scipy.stats

import meanfield as mf

GAMMA, COUPLING, T_FINAL = 0.5, 2.0, 50.0
TIMES = np.linspace(0.0, T_FINAL, 101)
TARGET = 1e-7


def workload(n: int) -> tuple[mf.Kuramoto, np.ndarray, np.ndarray]:
    """The model, the initial phases and the frequencies simulate draws for them."""
    model = mf.Kuramoto(coupling=COUPLING, frequencies=scipy.stats.cauchy(0, GAMMA))
    theta0 = np.random.default_rng(0).uniform(0, 2 * np.pi, n)
    omega = mf.simulate(model, theta0, TIMES[:2], method="moebius", dt=0.5)["frequency"].values.ravel()
    return model, theta0, omega


def scipy_run(method: str, theta0: np.ndarray, omega: np.ndarray, rtol: float, atol: float):
    """(CPU seconds, Z(t) at the outputs, evaluations) of solve_ivp on the angles."""
    def rhs(_, theta):
        z = np.mean(np.exp(1j * theta))
        return omega + COUPLING * np.imag(z * np.exp(-1j * theta))

    start = time.process_time()
    sol = scipy.integrate.solve_ivp(rhs, (0.0, T_FINAL), theta0, method=method, rtol=rtol, atol=atol, t_eval=TIMES)
    return time.process_time() - start, np.mean(np.exp(1j * sol.y), axis=0), sol.nfev


def moebius_run(model: mf.Kuramoto, theta0: np.ndarray, rtol: float):
    """(CPU seconds, Z(t), accepted steps, rejected steps, r(t)) of the moebius integrator."""
    start = time.process_time()
    ds = mf.simulate(model, theta0, TIMES, method="moebius", rtol=rtol, atol=rtol * 1e-2)
    seconds = time.process_time() - start
    z = np.mean(np.exp(1j * ds["positions"].values), axis=-1).ravel()
    return seconds, z, int(ds.attrs["n_steps"]), int(ds.attrs["n_rejected"]), ds["order_parameter"].values.ravel()


def time_at(errors: list[float], seconds: list[float], target: float) -> float:
    """CPU time at path error ``target``, interpolated log-log between the bracketing rows (nan if none)."""
    for (e0, s0), (e1, s1) in zip(zip(errors, seconds), zip(errors[1:], seconds[1:])):
        if e1 <= target <= e0:
            w = np.log(e0 / target) / np.log(e0 / e1)
            return float(np.exp((1 - w) * np.log(s0) + w * np.log(s1)))
    return float("nan")


def main() -> None:
    model, theta0, omega = workload(1000)
    moebius_run(model, theta0[:50], 1e-3)  # load the compiled kernels outside the timings
    _, z_ref, _ = scipy_run("DOP853", theta0, omega, 1e-13, 1e-13)
    print(f"Kuramoto K = {COUPLING}, Lorentzian gamma = {GAMMA}, n = 1000, t in [0, {T_FINAL:g}]; "
          "path error max_t |Z - Z_ref|, Z_ref = DOP853 at 1e-13")
    print(f"{'method':>8} {'rtol':>7} {'cpu s':>8} {'steps':>7} {'rejected':>8} {'rej/acc':>7} {'path err':>9}")
    rows: dict[str, tuple[list[float], list[float]]] = {"moebius": ([], []), "DOP853": ([], [])}
    for rtol in (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8):
        seconds, z, steps, rejected, _ = moebius_run(model, theta0, rtol)
        error = float(np.abs(z - z_ref).max())
        rows["moebius"][0].append(error)
        rows["moebius"][1].append(seconds)
        print(f"{'moebius':>8} {rtol:7.0e} {seconds:8.3f} {steps:7d} {rejected:8d} {rejected / steps:7.3f} "
              f"{error:9.2e}", flush=True)
    for rtol in (1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10):
        seconds, z, nfev = scipy_run("DOP853", theta0, omega, rtol, rtol * 1e-2)
        error = float(np.abs(z - z_ref).max())
        rows["DOP853"][0].append(error)
        rows["DOP853"][1].append(seconds)
        print(f"{'DOP853':>8} {rtol:7.0e} {seconds:8.3f} {nfev:7d} {'-':>8} {'-':>7} {error:9.2e}", flush=True)
    errors = rows["moebius"][0]
    monotone = all(b < a for a, b in zip(errors, errors[1:]))
    print(f"moebius path error decreases with rtol at every row: {monotone}")
    ours, theirs = (time_at(*rows[name], TARGET) for name in ("moebius", "DOP853"))
    print(f"path error {TARGET:g}: moebius {ours:.3f} s, DOP853 {theirs:.3f} s, ratio {ours / theirs:.2f}")

    model, theta0, omega = workload(10_000)
    r_inf = np.sqrt(1 - 2 * GAMMA / COUPLING)
    late = TIMES >= 20
    runs = [moebius_run(model, theta0, 1e-3) for _ in range(3)]
    seconds = min(run[0] for run in runs)
    _, _, steps, rejected, r = runs[0]
    print(f"n = 10000: moebius rtol 1e-3 {seconds:.3f} s (best of 3; {steps} steps, {rejected} rejected), "
          f"|r_inf - theory| = {abs(r[late].mean() - r_inf):.1e}")
    baselines = [scipy_run("RK45", theta0, omega, 1e-4, 1e-6) for _ in range(3)]
    base, z = min(run[0] for run in baselines), baselines[0][1]
    print(f"n = 10000: RK45 rtol 1e-4 {base:.3f} s (best of 3), |r_inf - theory| = "
          f"{abs(np.abs(z[late]).mean() - r_inf):.1e}; ratio moebius/RK45 {seconds / base:.2f}")


if __name__ == "__main__":
    main()

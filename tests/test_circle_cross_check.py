"""Independent paths agree: spectral and finite-volume solutions of one problem."""

from __future__ import annotations

import numpy as np
import pytest

import meanfield as mf
from meanfield.measures._perturbed_uniform import perturbed_uniform


@pytest.mark.parametrize(
    "model, moment_tol, energy_tol",
    # measured at N = 64: moment errors 3.7e-4 (SA), 4.1e-5 (USA); relative energy gaps at
    # N = 128: 1.3e-4 (SA), 1.2e-5 (USA) — the bounds allow about 3× these
    [(mf.SelfAttention(4.0), 1e-3, 4e-4), (mf.SelfAttention(1.0, normalized=False, noise=0.05), 1.2e-4, 4e-5)],
    ids=["SA", "USA-noise"],
)
def test_spectral_and_finite_volume_agree_to_second_order(model, moment_tol, energy_tol):
    # smooth solution up to t = 3; the spectral result (N = 256) is exact to
    # ~1e-9, so the difference is the FV error, which must fall by ≈ 4 per
    # halving of h (second order): accept a factor ≥ 3 (order ≥ 1.58).
    t = [0.0, 1.5, 3.0]
    reference = mf.solve(model, perturbed_uniform(mf.Circle(256), 0.2, seed=7), t, method="spectral", rtol=1e-10, atol=1e-13)
    runs = {
        n: mf.solve(model, perturbed_uniform(mf.Circle(n), 0.2, seed=7), t, method="finite_volume", max_step=0.01)
        for n in (64, 128)
    }
    # compare through the first Fourier moments, independent of the grid
    ref = np.fft.rfft(reference.density.values, axis=-1)[:, 1:9] / 256
    errors = [np.max(np.abs(np.fft.rfft(run.density.values, axis=-1)[:, 1:9] / n - ref)) for n, run in runs.items()]
    assert errors[0] < moment_tol
    assert errors[0] / errors[1] > 3.0
    # energies agree too (E_β is a quadratic functional: same order)
    gap = abs(float(runs[128].energy[-1] - reference.energy[-1])) / float(reference.energy[-1])
    assert gap < energy_tol


@pytest.mark.parametrize("normalized", [True, False], ids=["SA", "USA"])
def test_solutions_are_continuous_as_beta_goes_to_zero(normalized):
    # X_β = X_0 + O(β) (DESIGN §2: c_1/β → |S¹|/2, c_l/β → 0 for l ≥ 2), so the
    # solutions at t = 1 differ by O(β): the difference must shrink 10× per decade (O(β²) terms
    # change the ratio by about 1 %).
    rho0 = perturbed_uniform(mf.Circle(64), 0.3, seed=2)
    t = [0.0, 1.0]
    at_zero = mf.solve(mf.SelfAttention(0.0, normalized), rho0, t, method="spectral", rtol=1e-11, atol=1e-14).density.values[-1]
    gaps = [
        np.max(np.abs(mf.solve(mf.SelfAttention(beta, normalized), rho0, t, method="spectral", rtol=1e-11, atol=1e-14).density.values[-1]
                      - at_zero))
        for beta in (1e-2, 1e-3)
    ]
    # measured: gaps 8.7e-5 and 8.7e-6 (SA), 8.4e-5 and 8.4e-6 (USA), ratio 10.00–10.03
    assert gaps[1] < 2e-5
    assert 9 < gaps[0] / gaps[1] < 11

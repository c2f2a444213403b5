"""Planned real FFTs: normalisation, round trips and agreement with numpy.fft for both backends."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from solvers._fft import RealFFT, available_backends, plan_builds, shared_real_fft

BACKENDS = available_backends()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n, batch", [(16, ()), (15, ()), (64, (3,)), (384, (2, 2))])
def test_forward_matches_numpy_and_round_trips(backend, n, batch, rng):
    plan = RealFFT(n, batch, backend=backend)
    x = rng.standard_normal((*batch, n))
    coeffs = plan.forward(x)
    # normalisation f̂_k = (1/n) Σ_j f_j e^{-2πijk/n}; FFTs agree to a few ulps times log n
    np.testing.assert_allclose(coeffs, np.fft.rfft(x) / n, rtol=0, atol=1e-15 * np.log2(n) * np.abs(x).max())
    np.testing.assert_allclose(plan.backward(coeffs), x, rtol=0, atol=1e-14)
    assert plan.values.shape == (*batch, n) and plan.coefficients.shape == (*batch, n // 2 + 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_raw_transforms_are_unnormalised_in_place(backend, rng):
    n = 32
    plan = RealFFT(n, (2,), backend=backend)
    x = rng.standard_normal((2, n))
    plan.values[...] = x
    plan.execute_forward()
    np.testing.assert_allclose(plan.coefficients, np.fft.rfft(x), rtol=0, atol=1e-13)
    # backward of the normalised coefficients gives node values: f_j = Σ_k f̂_k e^{ikθ_j}
    plan.coefficients[...] = np.fft.rfft(x) / n
    plan.execute_backward()
    np.testing.assert_allclose(plan.values, x, rtol=0, atol=1e-14)


def test_cosine_has_coefficient_one_half():
    theta = 2 * np.pi * np.arange(8) / 8
    for backend in BACKENDS:
        c = RealFFT(8, backend=backend).forward(3.0 + np.cos(2 * theta))
        np.testing.assert_allclose(c, [3.0, 0, 0.5, 0, 0], atol=1e-15)


def test_backends_agree_and_plans_are_reused(rng):
    x = rng.standard_normal((4, 128))
    results = [RealFFT(128, (4,), backend=b).forward(x) for b in BACKENDS]
    np.testing.assert_allclose(results[0], results[-1], rtol=0, atol=1e-14)
    plan = RealFFT(128, (4,))
    before = plan.values.ctypes.data, plan.coefficients.ctypes.data
    plan.forward(x)
    plan.backward(plan.coefficients.copy())
    assert (plan.values.ctypes.data, plan.coefficients.ctypes.data) == before


def test_scipy_fallback_can_be_forced():
    plan = RealFFT(16, backend="scipy")
    assert plan.backend == "scipy"
    assert "scipy" in available_backends()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n": 1}, "n must be an integer transform length >= 2, got 1"),
        ({"n": 8, "batch": (0,)}, "batch must be a tuple of positive sizes"),
        ({"n": 8, "threads": 0}, "threads must be a positive integer, got 0"),
        ({"n": 8, "backend": "numpy"}, "backend must be one of"),
        ({"n": 8, "directions": ("sideways",)}, "directions must be a non-empty tuple"),
    ],
)
def test_bad_arguments_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RealFFT(**kwargs)


def test_unplanned_direction_is_refused():
    plan = RealFFT(8, directions=("forward",))
    with pytest.raises(ValueError, match="without directions='backward'"):
        plan.execute_backward()


def test_wisdom_file_round_trip_and_location(tmp_path, monkeypatch):
    from solvers._fft import _pack, _unpack, wisdom_path

    parts = (b"(fftw-3.3 double wisdom)", b"", b"(long double)")
    assert _unpack(_pack(parts)) == parts
    with pytest.raises(ValueError, match="truncated wisdom file"):
        _unpack(_pack(parts)[:-3])
    monkeypatch.setenv("MEANFIELD_FFTW_WISDOM", str(tmp_path / "w.bin"))
    assert wisdom_path() == tmp_path / "w.bin"
    monkeypatch.setenv("MEANFIELD_FFTW_WISDOM", "off")
    assert wisdom_path() is None


def test_shared_plans_are_one_per_thread_and_arguments():
    plan = shared_real_fft(48, (2,))
    count = plan_builds()
    assert shared_real_fft(48, (2,)) is plan and plan_builds() == count
    assert shared_real_fft(48, (3,)) is not plan
    other = []
    thread = threading.Thread(target=lambda: other.append(shared_real_fft(48, (2,))))
    thread.start()
    thread.join()
    assert other[0] is not plan and other[0].n == 48

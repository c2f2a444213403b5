"""W_p for large p is computed in scaled form or refused, never returned as 0.0 marked exact."""

from __future__ import annotations

import re

import numpy as np
import pytest

import meanfield as mf
from meanfield.cli import main


def _sphere_points(rng, n, d=3):
    x = rng.normal(size=(n, d))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_two_atoms_on_the_sphere_are_their_distance_apart_for_every_p():
    # W_p(δ_x, δ_y) = d(x, y) for every p; the cost d^p overflowed beyond p ≈ 620 (π^p), now (d/π)^p
    angle = 3.1
    x, y = np.array([[1.0, 0.0, 0.0]]), np.array([[np.cos(angle), np.sin(angle), 0.0]])
    for p in (1.0, 2.0, 700.0, 5000.0):
        assert mf.wasserstein(x, y, p) == pytest.approx(angle, rel=1e-12)


def test_two_atoms_on_the_circle_keep_their_distance_until_it_underflows_then_are_refused():
    # on the unit-period circle the sum is (3/2π)^p: 1e-97 at p = 300, 1e-321 (subnormal) at p = 1000;
    # log(1e-292)/log(3/2π) = 909.5 is the largest p it allows
    assert mf.wasserstein(np.array([0.0]), np.array([3.0]), 300.0) == pytest.approx(3.0, rel=1e-12)
    with pytest.raises(ValueError, match=r"p = 1000 is too large for double precision.*use p <= 909\.5"):
        mf.wasserstein(np.array([0.0]), np.array([3.0]), 1000.0)


@pytest.mark.parametrize("domain", ["circle", "sphere"])
def test_huge_p_is_refused_with_a_p_that_works(domain):
    rng = np.random.default_rng(0)
    if domain == "circle":
        a, b = rng.uniform(0, 2 * np.pi, 50), rng.uniform(0, 2 * np.pi, 60)
    else:
        a, b = _sphere_points(rng, 40), _sphere_points(rng, 30)
    with pytest.raises(ValueError, match="too large for double precision") as err:
        mf.wasserstein(a, b, 1e6)
    safe = float(re.search(r"use p <= ([0-9.e+]+)", str(err.value)).group(1))
    values = [mf.wasserstein(a, b, p) for p in (1.0, 10.0, 0.99 * safe)]
    # W_p is nondecreasing in p and bounded by the largest distance, π
    assert values[0] <= values[1] <= values[2] <= np.pi


def test_identical_measures_stay_exactly_zero():
    theta = np.random.default_rng(1).uniform(0, 2 * np.pi, 30)
    assert mf.wasserstein(theta, theta, 1e6) == 0.0


def test_compare_command_fails_with_the_reason_for_huge_p(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:  # it printed "exponent nan" and returned 0
        main(["compare", "--particles", "16", "32", "--systems", "1", "--grid", "64", "--times", "0", "0.1", "--p", "1e6",
              "--scheduler", "serial", "--no-progress", "--output", str(tmp_path / "c.nc")])
    assert stop.value.code == 2
    assert "too large for double precision" in capsys.readouterr().err
    assert not (tmp_path / "c.nc").exists()


def test_a_measure_against_itself_is_zero_at_every_p_although_w1_carries_round_off():
    # hypothesis found it: W₁ of this measure against itself comes out at round-off level (not 0), and W_p's
    # sum is exactly 0, which must not be read as an underflow
    x = [0.0] * 8 + [1.0]
    for p in (1.5, 2.0, 50.0):
        assert mf.wasserstein(x, x, p) == 0.0  # measured exactly 0.0 (every quantile difference is 0)

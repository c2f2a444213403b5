"""Argument checks shared by the spectral schemes: one wording, TypeError for types, ValueError for values."""

from __future__ import annotations

import numpy as np
import pytest

import meanfield as mf
from solvers import CircleGrid, CircleSpectral, SphereGrid, SphereSpectral, ZonalGaussGrid, ZonalSpectral
from solvers import _validate as check


@pytest.mark.parametrize("value", [1, 2.5, np.float32(0.5), np.int64(3)])
def test_real_numbers_are_accepted_as_floats(value):
    out = check.positive("x", value)
    assert isinstance(out, float) and out == float(value)


@pytest.mark.parametrize(
    "func, value, error, match",
    [
        (check.positive, "1", TypeError, "x must be a real number, got '1'"),
        (check.positive, True, TypeError, "x must be a real number, got True"),
        (check.positive, None, TypeError, "x must be a real number, got None"),
        (check.positive, 1j, TypeError, r"x must be a real number, got 1j"),
        (check.positive, 0.0, ValueError, "x must be finite and > 0, got 0.0"),
        (check.positive, np.inf, ValueError, "x must be finite and > 0, got inf"),
        (check.nonnegative, -1e-3, ValueError, "x must be finite and >= 0, got -0.001"),
        (check.nonnegative, np.nan, ValueError, "x must be finite and >= 0, got nan"),
        (check.positive_int, 0, ValueError, "x must be a positive integer, got 0"),
        (check.positive_int, 2.0, TypeError, "x must be a positive integer, got 2.0"),
        (check.boolean, "yes", TypeError, "x must be True or False, got 'yes'"),
    ],
)
def test_checks_name_the_argument_and_separate_types_from_values(func, value, error, match):
    with pytest.raises(error, match=match):
        func("x", value)


def test_choice():
    assert check.choice("mode", "warn", ("raise", "warn")) == "warn"
    with pytest.raises(ValueError, match=r"mode must be 'raise' or 'warn', got 'x'"):
        check.choice("mode", "x", ("raise", "warn"))
    with pytest.raises(ValueError, match=r"mode must be one of \['a', 'b', 'c'\], got 1"):
        check.choice("mode", 1, ("a", "b", "c"))


@pytest.mark.parametrize("option", ["diffusion", "rtol"])
def test_the_same_bad_value_gives_the_same_error_in_every_spectral_scheme(option):
    schemes = [
        (CircleSpectral, CircleGrid(16), 2),
        (SphereSpectral, SphereGrid(8), 3),
        (ZonalSpectral, ZonalGaussGrid(4, 16), 4),
    ]
    for cls, grid, d in schemes:
        spec = mf.SelfAttention(1.0).velocity_spec(d)
        with pytest.raises(TypeError, match=f"{option} must be a real number, got 'abc'"):
            cls(grid, spec, **{option: "abc"})
        with pytest.raises(ValueError, match=f"{option} must be finite and "):
            cls(grid, spec, **{option: -1.0})


def test_multipliers():
    k = np.arange(5)
    np.testing.assert_array_equal(check.multipliers(lambda k: 1j * k, k, "f", real=False), 1j * k)
    real = check.multipliers(lambda k: k + 0j, k, "f", real=True, index_name="degrees")
    assert real.dtype == float and np.array_equal(real, k)
    with pytest.raises(ValueError, match=r"f must return real multipliers \(Funk–Hecke coefficients\) for degrees 0..4, "
                                         r"got complex values with max \|Im\| = 4"):
        check.multipliers(lambda k: 1j * k, k, "f", real=True, index_name="degrees")
    with pytest.raises(ValueError, match=r"f must return finite multipliers of shape \(5,\) for wavenumbers 0..4, got shape \(\)"):
        check.multipliers(lambda k: 1.0, k, "f", real=False)


def test_zonal_scheme_refuses_circle_multipliers():
    with pytest.raises(ValueError, match="velocity.numerator must return real multipliers"):
        ZonalSpectral(ZonalGaussGrid(3, 16), mf.SelfAttention(1.0).velocity_spec(2))

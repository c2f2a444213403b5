"""One vocabulary for bad input: every public entry refuses, naming the argument, what it cannot use, and a run
never reports success=1 beside a value that is not finite.

* real numbers only where numbers are meant: complex, boolean, string and object arrays are refused by name and
  dtype instead of being cast;
* sizes are checked against the memory available before anything is allocated;
* options outside their meaning (a tolerance below round-off, a negative degree on S², weights that do not sum
  to 1, a head the model does not have) are refused;
* a result whose outputs are not all finite says success=0 and names the variable;
* a property test draws inputs of the wrong dtype and shape for the array arguments of the public functions.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import meanfield as mf
from meanfield._validate import (RTOL_FLOOR, WEIGHT_SUM_TOLERANCE, as_real_array, as_weights, available_memory,
                                 check_allocation, check_rtol)

C64 = mf.Circle(64)
RHO = mf.von_mises(C64, 0.0, 1.0)
X10 = np.random.default_rng(0).uniform(0, 2 * np.pi, 10)
SPH10 = np.random.default_rng(1).normal(size=(10, 3))
SPH10 /= np.linalg.norm(SPH10, axis=1, keepdims=True)
SA = mf.SelfAttention(4.0)
T = [0.0, 0.1]


# ---------------------------------------------------------------- the vocabulary itself
@pytest.mark.parametrize("value, kind", [(np.array([1 + 1j]), "complex"), (np.array([True]), "boolean"),
                                         (np.array(["1"]), "string"), (np.array([1.0], dtype=object), "object")])
def test_real_arrays_refuse_other_dtypes_by_name(value, kind):
    with pytest.raises(TypeError, match=f"positions must be an array of real numbers, got a {kind} array"):
        as_real_array("positions", value)


def test_real_arrays_count_the_non_finite_entries():
    with pytest.raises(ValueError, match="x must be finite: 2 of its 3 entries are NaN or infinite"):
        as_real_array("x", [1.0, np.nan, -np.inf])
    assert np.isnan(as_real_array("x", [np.nan], finite=False)[0])
    assert as_real_array("x", np.arange(3)).dtype == np.float64


def test_weights_are_non_negative_and_sum_to_one_within_the_stated_tolerance():
    np.testing.assert_array_equal(as_weights("w", np.full(4, 0.25), 4), np.full(4, 0.25))
    as_weights("w", np.full(3, 1 / 3), 3)  # 3 · (1/3) rounds to 1 - 1.1e-16
    with pytest.raises(ValueError, match=r"sum is off by 1e-0?8"):
        as_weights("w", np.array([0.5, 0.5 + 1e-8]), 2)
    assert WEIGHT_SUM_TOLERANCE < 1e-8
    with pytest.raises(ValueError, match="non-negative"):
        as_weights("w", np.array([1.5, -0.5]), 2)


def test_relative_tolerances_stop_at_the_round_off_floor():
    assert RTOL_FLOOR == 100 * np.finfo(float).eps
    assert check_rtol("rtol", RTOL_FLOOR) == RTOL_FLOOR
    with pytest.raises(ValueError, match="rtol must be >= 2.2e-14"):
        check_rtol("rtol", 1e-15)


def test_allocations_beyond_the_available_memory_are_refused_with_both_numbers():
    available = available_memory()
    assert available is not None and available > 0  # Linux: MemAvailable
    check_allocation("n", 10, 80.0, "ten doubles")
    with pytest.raises(ValueError, match=r"n = 10 is too large: all of it needs about .* more than the .* available"):
        check_allocation("n", 10, 10.0 * available, "all of it")


# ---------------------------------------------------------------- the public entries
REFUSED = [
    # dtypes
    ("mf.solve(SA, RHO, np.array([0, 0.5 + 1j]))", TypeError, "t must be an array of real numbers, got a complex"),
    ("mf.solve(SA, RHO, ['0', '1'])", TypeError, "t must be an array of real numbers, got a string"),
    ("mf.simulate(SA, X10 + 1j, T)", TypeError, "x0 must be an array of real numbers, got a complex"),
    ("mf.wasserstein(X10 + 1j, X10)", TypeError, "a must be an array of real numbers, got a complex"),
    ("mf.Density(C64, np.ones(64, dtype=complex) / (2 * np.pi))", TypeError, "values must be an array of real"),
    ("mf.simulate(mf.Kuramoto(1.0), X10, T, frequencies=np.full(10, np.nan))", ValueError,
     "frequencies must be finite: 10 of its 10"),
    ("mf.simulate(mf.Kuramoto(1.0), X10, T, frequencies=np.ones(10))", ValueError,
     "the model's oscillators are identical"),
    # sizes
    ("mf.Circle(10**12)", ValueError, r"n = 1000000000000 is too large: one density on this grid"),
    ("mf.Sphere(10**6)", ValueError, "lmax = 1000000 is too large"),
    ("mf.ZonalSphere(3, 10**12)", ValueError, "n = 1000000000000 is too large"),
    ("mf.sharp_configuration('polygon', n=10**9)", ValueError, "n = 1000000000 is too large: a polygon"),
    ("mf.solve(mf.Kuramoto(1.0, st.norm(0, 0.5)), RHO, T, 'spectral', frequency_nodes=10**9)", ValueError,
     "frequency_nodes = 1000000000 is too large"),
    # options
    ("mf.simulate(SA, X10, T, rtol=1e-30)", ValueError, "rtol must be >= 2.2e-14"),
    ("mf.solve(SA, RHO, T, 'spectral', rtol=1e-30)", ValueError, "rtol must be >= 2.2e-14"),
    ("mf.wasserstein(SPH10, SPH10[::-1], method='sliced', n_projections=0)", ValueError, "n_projections"),
    ("mf.numerical_rank(np.eye(3), tolerance=-1.0)", ValueError, "tolerance must be finite and >= 0"),
    ("SA.growth_rate(-1, 3)", ValueError, "degree must be >= 0 on S"),
    ("SA.growth_rate(2.5)", TypeError, "degree must be an integer"),
    ("mf.sphere_area(-3)", ValueError, "d must be a positive integer"),
    ("mf.sphere_area(2.5)", TypeError, "d must be a positive integer"),
    ("mf.sphere_area(0)", ValueError, "d must be a positive integer"),
    ("mf.order_parameter(X10, weights=-np.ones(10) / 10)", ValueError, "weights must be non-negative"),
    ("mf.order_parameter(X10, weights=np.ones(10))", ValueError, "weights must sum to 1 .* off by 9"),
    ("mf.attention_matrix(SA, X10, head=3)", ValueError, r"head must be one of 0 … 0 \(SA has 1 head\)"),
    # messages
    ("mf.uniform('circle')", TypeError, "domain must be a grid domain"),
    ("mf.Density(C64, 'flat')", TypeError, "values must be an array of real numbers, got the string"),
    ("mf.methods('torus')", TypeError, "domain must be a grid domain"),
    ("mf.order_parameter(X10, weights=np.ones(3) / 3)", ValueError, r"weights must have one weight per atom \(10"),
    ("mf.numerical_rank(np.full((3, 3), np.nan))", ValueError, "matrix must be finite"),
    ("mf.von_mises(C64, 0.0, 1e300)", ValueError, "kappa = 1e.300 overflows .* the largest kappa this grid resolves "
                                                 "is about 1[34]"),
    ("mf.solve(mf.SelfAttention(700.0, normalized=False), RHO, [0.0, 1.0])", ValueError,
     "carries the factor e.beta = .* at beta = 700"),
]


@pytest.mark.parametrize("code, error, message", REFUSED, ids=[case[0] for case in REFUSED])
def test_the_public_entries_refuse_by_name(code, error, message):
    with pytest.raises(error, match=message):
        eval(code)  # noqa: S307 - this module's own strings


@pytest.mark.parametrize("code", ["mf.solve(mf.SelfAttention(1e4), RHO, [0.0, 1.0])",
                                  "mf.simulate(mf.SelfAttention(1e4), X10, [0.0, 1.0])"])
def test_an_energy_beyond_the_largest_double_makes_the_result_invalid(code):
    ds = eval(code)  # noqa: S307
    assert ds.attrs["success"] == 0
    assert ds.attrs["message"].startswith("invalid result: the energy is not finite (+inf (beyond the largest")


def test_the_edge_cases_of_the_vocabulary_give_their_values():
    assert SA.growth_rate(-1) == SA.growth_rate(1)  # on S¹ a wavenumber of either sign
    measure = mf.EmpiricalMeasure(SPH10, domain="circle")  # (systems, n) angles: 10 systems of 3 atoms
    assert measure.points.shape == (10, 3)
    run = mf.simulate(mf.SelfAttention(1.0, noise=0.1), X10, T, dt=0.01, seed=2**70)  # numpy takes any integer
    again = mf.simulate(mf.SelfAttention(1.0, noise=0.1), X10, T, dt=0.01, seed=2**70)
    assert run.attrs["success"] == 1 and run.attrs["seed"] == str(2**70)
    np.testing.assert_array_equal(run.positions, again.positions)


# ---------------------------------------------------------------- property test: wrong dtypes and shapes
DTYPES = [np.float64, np.int64, np.complex128, np.bool_, np.str_, object]


@hs.composite
def arrays(draw):
    """Arrays of 0 to 3 axes of 0 to 5 entries, of a numeric or wrong dtype, floats possibly NaN or inf."""
    shape = tuple(draw(hs.lists(hs.integers(0, 5), min_size=0, max_size=3)))
    dtype = draw(hs.sampled_from(DTYPES))
    values = np.asarray(draw(hs.lists(hs.sampled_from([0.0, 0.5, 1.0, -2.0, np.nan, np.inf]),
                                      min_size=int(np.prod(shape)), max_size=int(np.prod(shape)))))
    values = values.reshape(shape)
    if dtype is np.str_:
        return values.astype(str)
    if dtype in (np.int64, np.bool_):
        return np.nan_to_num(values, nan=1.0, posinf=2.0).astype(dtype)
    return values.astype(dtype)


CALLS = {
    "t": lambda a: mf.solve(SA, RHO, a),
    "x0": lambda a: mf.simulate(SA, a, T),
    "a": lambda a: mf.wasserstein(a, X10),
    "positions": lambda a: mf.order_parameter(a),
    "weights": lambda a: mf.order_parameter(X10, weights=a),
    "values": lambda a: mf.Density(C64, a),
    "matrix": lambda a: mf.numerical_rank(a),
    "points": lambda a: mf.EmpiricalMeasure(a),
}


def _valid(result) -> bool:
    """A result is valid when its numbers are finite, or (a run) when it says success=0."""
    if hasattr(result, "attrs") and hasattr(result, "data_vars"):
        return result.attrs["success"] == 0 or all(
            np.all(np.isfinite(result[v].values)) for v in result.data_vars
            if np.issubdtype(result[v].dtype, np.inexact))
    if isinstance(result, (mf.Density, mf.EmpiricalMeasure)):
        values = result.values if isinstance(result, mf.Density) else result.points
        return bool(np.all(np.isfinite(values)))
    return bool(np.all(np.isfinite(np.asarray(result, dtype=float))))


@pytest.mark.parametrize("argument", sorted(CALLS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=arrays())
def test_wrong_arrays_are_refused_by_name_or_give_a_valid_result(argument, value):
    """Complex, boolean, string and object arrays are always refused (never cast); numbers give a clear error or a
    valid result."""
    try:
        result = CALLS[argument](value)
    except (TypeError, ValueError) as err:
        assert argument in str(err), f"{argument}: {err}"
        return
    assert value.dtype.kind in "iuf", f"{argument} of dtype {value.dtype} was accepted"
    assert _valid(result), f"{argument}={value!r} gave {result!r}"

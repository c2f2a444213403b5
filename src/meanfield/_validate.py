"""Argument checks shared by the public entry points.

Every check raises ``ValueError`` or ``TypeError`` whose message names the
argument, the value given and what is allowed. The vocabulary:

* numbers: :func:`as_real`, :func:`check_positive`, :func:`check_nonnegative`, :func:`check_beta`,
  :func:`check_order`; tolerances :func:`check_rtol` (at least :data:`RTOL_FLOOR`, 100 times the round-off
  of doubles: a relative tolerance below it asks for digits a double does not have);
* counts and degrees: :func:`check_positive_int` (integers only: 2.5, "8" and True are refused),
  :func:`as_degrees` (harmonic degrees, wavenumbers on S¹);
* arrays: :func:`as_real_array` (real numbers only: complex, boolean, string and object arrays are refused,
  naming the argument and the dtype; finite unless told otherwise), :func:`as_times`, :func:`as_weights`
  (non-negative, summing to 1 within :data:`WEIGHT_SUM_TOLERANCE`);
* sizes: :func:`check_allocation` refuses, before anything is allocated, an array larger than the memory this
  machine has available (``MemAvailable`` of ``/proc/meminfo``, else ``os.sysconf``), with both numbers;
* seeds: :func:`as_rng`, whatever ``numpy.random.default_rng`` accepts.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["RTOL_FLOOR", "WEIGHT_SUM_TOLERANCE", "as_degrees", "as_real", "as_real_array", "as_rng", "as_times",
           "as_weights",
           "available_memory", "check_allocation", "check_beta", "check_flag", "check_nonnegative", "check_order",
           "check_positive", "check_positive_int", "check_rtol"]

#: the smallest relative tolerance accepted: 100 times the unit round-off of float64 (2.2e-14)
RTOL_FLOOR = 100 * float(np.finfo(float).eps)
#: weights must sum to 1 within this (relative to their number: a sum of n weights rounded to doubles is off by
#: at most n·eps)
WEIGHT_SUM_TOLERANCE = 1e-9


def check_beta(beta: float) -> float:
    """Return ``beta`` as a float, requiring 0 ≤ β < ∞."""
    return _finite_at_least("beta", beta, 0.0)


def check_order(p: float) -> float:
    """Return the order ``p`` of a Wasserstein distance W_p as a float, requiring 1 ≤ p < ∞."""
    return _finite_at_least("p", p, 1.0, "a real number >= 1")


def check_nonnegative(name: str, value: float) -> float:
    """Return ``value`` as a float, requiring it finite and ≥ 0."""
    return _finite_at_least(name, value, 0.0)


def check_positive(name: str, value: float) -> float:
    """Return ``value`` as a float, requiring it finite and > 0 (a tolerance, a step, a width)."""
    out = as_real(name, value)
    if not (np.isfinite(out) and out > 0):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return out


def _finite_at_least(name: str, value: float, minimum: float, expected: str = "a real number") -> float:
    out = as_real(name, value, expected)
    if not np.isfinite(out) or out < minimum:
        raise ValueError(f"{name} must be finite and >= {minimum:g}, got {value!r}")
    return out


def as_real(name: str, value: float, expected: str = "a real number") -> float:
    """``value`` as a float; strings, bytes and booleans are refused (TypeError naming ``name``)."""
    if isinstance(value, (str, bytes, bool, np.bool_)):
        raise TypeError(f"{name} must be {expected}, got {value!r} ({type(value).__name__})")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be {expected}, got {value!r}") from None


def check_flag(name: str, value: bool) -> bool:
    """Return ``value`` as a bool, requiring True or False."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_positive_int(name: str, value: int, minimum: int = 1) -> int:
    """Return ``value`` as an int, requiring an integer ≥ ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def check_rtol(name: str, value: float) -> float:
    """Return a relative tolerance as a float, requiring :data:`RTOL_FLOOR` ≤ value < ∞."""
    out = check_positive(name, value)
    if out < RTOL_FLOOR:
        raise ValueError(f"{name} must be >= {RTOL_FLOOR:.1e} (100 times the round-off of doubles: a smaller relative "
                         f"tolerance asks for digits a float64 does not have), got {value!r}")
    return out


def as_degrees(degree: Any, d: Any) -> np.ndarray:
    """Integer degrees l ≥ 0 of spherical harmonics on S^{d-1} (on S¹, d = 2, wavenumbers k of either sign, taken
    as |k|); ``d`` an integer ≥ 2."""
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 2:
        raise ValueError(f"d must be an integer >= 2 (S^(d-1)), got {d!r}")
    ell = np.asarray(degree)
    if ell.dtype == bool or not np.issubdtype(ell.dtype, np.integer):
        raise TypeError(f"degree must be an integer or an array of integers, got {degree!r}")
    if d == 2:
        return np.abs(ell)
    if np.any(ell < 0):
        raise ValueError(f"degree must be >= 0 on S^{d - 1}, got {degree!r}")
    return ell


def as_real_array(name: str, value: Any, *, finite: bool = True) -> np.ndarray:
    """``value`` as a float64 array of real numbers.

    Complex, boolean, string, bytes and object arrays are refused (TypeError naming ``name`` and the dtype): a
    cast would drop an imaginary part or read True as 1 without a word. With ``finite`` NaN and infinity are
    refused (ValueError with their count).
    """
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be an array of real numbers, got the string {value!r}")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be an array of real numbers, got {type(value).__name__} ({err})") from None
    if arr.dtype.kind not in "iuf":
        kind = {"c": "complex", "b": "boolean", "U": "string", "S": "bytes", "O": "object"}.get(arr.dtype.kind,
                                                                                              arr.dtype.kind)
        raise TypeError(f"{name} must be an array of real numbers, got a {kind} array (dtype {arr.dtype})")
    arr = arr.astype(float, copy=False)
    if finite and not np.all(np.isfinite(arr)):
        bad = int(np.count_nonzero(~np.isfinite(arr)))
        raise ValueError(f"{name} must be finite: {bad} of its {arr.size} entries are NaN or infinite")
    return arr


def as_weights(name: str, value: Any, size: int) -> np.ndarray:
    """Weights of ``size`` atoms: real, finite, non-negative, summing to 1 within :data:`WEIGHT_SUM_TOLERANCE`
    (the deviation is named); the last axis has ``size`` entries (leading axes: systems)."""
    w = as_real_array(name, value)
    if w.ndim == 0 or w.shape[-1] != size:
        raise ValueError(f"{name} must have one weight per atom ({size} on the last axis), got shape {w.shape}")
    if np.any(w < 0):
        raise ValueError(f"{name} must be non-negative, got {int(np.count_nonzero(w < 0))} negative entries "
                         f"(smallest {w.min():g})")
    deviation = float(np.max(np.abs(w.sum(axis=-1) - 1.0)))
    if deviation > WEIGHT_SUM_TOLERANCE:
        raise ValueError(f"{name} must sum to 1 (within {WEIGHT_SUM_TOLERANCE:g}), but the sum is off by "
                         f"{deviation:.3g}")
    return w


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (Linux ``MemAvailable``, else free physical pages), or None
    where the system does not say."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return None


def check_allocation(name: str, value: Any, n_bytes: float, what: str) -> None:
    """Refuse (ValueError naming ``name`` = ``value``) when ``what`` would need ``n_bytes``, more than the memory
    available (:func:`available_memory`)."""
    available = available_memory()
    if available is not None and n_bytes > available:
        raise ValueError(f"{name} = {value!r} is too large: {what} needs about {_bytes(n_bytes)}, more than the "
                         f"{_bytes(available)} of memory available on this machine")


def _bytes(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:.3g} {unit}"
        n /= 1000
    return f"{n:.3g} PB"


def as_times(t: Sequence[float] | np.ndarray, name: str = "t") -> np.ndarray:
    """Output times as a float array: 1-D, finite, strictly increasing, ≥ 1 entry (real numbers only)."""
    arr = as_real_array(name, t, finite=False)
    if arr.ndim == 0:
        raise ValueError(f"{name} must be an array of output times whose first entry is the initial time, got {t!r}")
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"{name} must be a 1-D array of at least two times, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain finite times, got {arr!r}")
    if not np.all(np.diff(arr) > 0):
        raise ValueError(f"{name} must be strictly increasing, got {arr!r}")
    return arr


def as_rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    """``np.random.default_rng(seed)``; a Generator is passed through."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, (bool, np.bool_, float, str, bytes)):
        raise TypeError(f"seed must be None, a non-negative integer, a sequence of them or a Generator, got {seed!r}")
    try:
        return np.random.default_rng(seed)
    except (TypeError, ValueError) as err:
        raise ValueError(f"seed must be None, a non-negative integer, a sequence of them or a Generator, "
                         f"got {seed!r} ({err})") from None

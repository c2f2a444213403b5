"""Argument checks shared by the public entry points.

Every check raises ``ValueError`` or ``TypeError`` whose message names the
argument, the value given and what is allowed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["as_real", "as_times", "check_beta", "check_flag", "check_nonnegative", "check_order", "check_positive",
           "check_positive_int", "as_rng"]


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


def as_times(t: Sequence[float] | np.ndarray, name: str = "t") -> np.ndarray:
    """Output times as a float array: 1-D, finite, strictly increasing, ≥ 1 entry."""
    arr = np.asarray(t, dtype=float)
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

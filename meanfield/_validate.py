"""Argument checks shared by the public entry points.

Every check raises ``ValueError`` or ``TypeError`` whose message names the
argument, the value given and what is allowed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["as_times", "check_beta", "check_nonnegative", "check_order", "check_positive_int", "as_rng"]


def check_beta(beta: float) -> float:
    """Return ``beta`` as a float, requiring 0 ≤ β < ∞."""
    try:
        value = float(beta)
    except (TypeError, ValueError):
        raise TypeError(f"beta must be a real number, got {beta!r}") from None
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"beta must be finite and >= 0, got {beta!r}")
    return value


def check_order(p: float) -> float:
    """Return the order ``p`` of a Wasserstein distance W_p as a float, requiring 1 ≤ p < ∞."""
    try:
        value = float(p)
    except (TypeError, ValueError):
        raise TypeError(f"p must be a real number >= 1, got {p!r}") from None
    if not np.isfinite(value) or value < 1:
        raise ValueError(f"p must be finite and >= 1, got {p!r}")
    return value


def check_nonnegative(name: str, value: float) -> float:
    """Return ``value`` as a float, requiring it finite and ≥ 0."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, got {value!r}") from None
    if not np.isfinite(out) or out < 0:
        raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
    return out


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
    return np.random.default_rng(seed)

"""Orbits of configurations on Tⁿ under rotations, permutations and the reflection θ → −θ.

A configuration's sorted angles mod 2π have gaps g_k = θ_(k+1) − θ_(k) (the last one wrapping around,
Σ g = 2π): a cyclic sequence that rotations and permutations leave unchanged up to a cyclic shift, and
the reflection reverses. Orbits are compared through these sequences.
"""

from __future__ import annotations

import numpy as np

from ..._validate import check_flag, check_positive

__all__ = ["canonical_gaps", "cluster_pattern", "cyclic_shifts", "gaps_of", "orbit_labels"]


def gaps_of(theta: np.ndarray) -> np.ndarray:
    """The cyclic gap sequences of configurations (..., n), summing to 2π."""
    angles = np.sort(np.mod(theta, 2 * np.pi), axis=-1)
    return np.diff(angles, axis=-1, append=angles[..., :1] + 2 * np.pi)


def cyclic_shifts(gaps: np.ndarray, reflection: bool) -> np.ndarray:
    """Every cyclic shift of the gap sequences (and of their reversals), shape (..., shifts, n)."""
    n = gaps.shape[-1]
    index = (np.arange(n)[:, None] + np.arange(n)[None, :]) % n
    out = gaps[..., index]
    if reflection:
        out = np.concatenate([out, gaps[..., ::-1][..., index]], axis=-2)
    return out


def canonical_gaps(theta: np.ndarray, *, reflection: bool = True, tolerance: float = 1e-9) -> np.ndarray:
    r"""Canonical form of configurations modulo rotation, permutation (and reflection θ → −θ).

    The angles are sorted mod 2π; the gaps g_k = θ_(k+1) − θ_(k) (the last one wrapping around, Σ g = 2π)
    are a cyclic sequence determined by the orbit under rotations and permutations; the reflection
    reverses it. The canonical form is the lexicographically smallest cyclic shift (or shift of the
    reversal), comparing entries within ``tolerance`` as equal, so that round-off does not change the
    choice between shifts that agree.

    Parameters
    ----------
    theta : array_like, shape (..., n)
        Angles in radians.
    reflection : bool, default True
        Also identify θ with −θ.
    tolerance : float, default 1e-9
        Entries closer than this (radians) compare as equal.

    Returns
    -------
    numpy.ndarray, shape (..., n)
        Gaps summing to 2π; the configuration is ``np.concatenate([[0], np.cumsum(gaps[:-1])])``.

    Raises
    ------
    ValueError
        Non-finite or 0-dimensional ``theta``, a non-boolean ``reflection``, a non-positive tolerance.

    Notes
    -----
    With θ_(1) ≤ … ≤ θ_(n) the angles sorted mod 2π,

    .. math::

        g_k = \theta_{(k+1)} - \theta_{(k)} \ (k < n), \qquad g_n = \theta_{(1)} + 2\pi - \theta_{(n)},
        \qquad \sum_k g_k = 2\pi,

    and the canonical form is the lexicographic minimum of the n cyclic shifts of (g_1, …, g_n) (and,
    with ``reflection``, of the n shifts of its reversal).

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.open_problems import canonical_gaps
    >>> canonical_gaps([0.0, np.pi, 0.0]).round(12).tolist() == [0.0, round(np.pi, 12), round(np.pi, 12)]
    True

    A configuration, its rotation with relabelled particles and its mirror image share one form:

    >>> theta = np.array([0.3, 1.0, 2.5])
    >>> print(canonical_gaps(np.stack([theta, np.roll(theta, 1) + 2 * np.pi, -theta])))
    [[0.7        1.5        4.08318531]
     [0.7        1.5        4.08318531]
     [0.7        1.5        4.08318531]]
    >>> print(canonical_gaps(-theta, reflection=False))
    [0.7        4.08318531 1.5       ]
    """
    theta = np.asarray(theta, dtype=float)
    if theta.ndim == 0 or not np.all(np.isfinite(theta)):
        raise ValueError(f"theta must be a finite array of angles with the particles on its last axis, got {theta!r}")
    reflection = check_flag("reflection", reflection)
    tolerance = check_positive("tolerance", tolerance)
    candidates = cyclic_shifts(gaps_of(theta), reflection)
    alive = np.ones(candidates.shape[:-1], dtype=bool)
    for k in range(theta.shape[-1]):
        entry = np.where(alive, candidates[..., k], np.inf)
        alive &= entry <= entry.min(axis=-1, keepdims=True) + tolerance
    first = np.argmax(alive, axis=-1)
    return np.take_along_axis(candidates, first[..., None, None], axis=-2)[..., 0, :]


def orbit_labels(gaps: np.ndarray, reflection: bool, tolerance: float) -> np.ndarray:
    """Orbit label of each gap sequence: greedy, each new orbit holds every sequence within ``tolerance``
    (max norm, minimised over the cyclic shifts and reversals) of its first member; one pass per orbit."""
    labels = np.full(len(gaps), -1)
    shifted = cyclic_shifts(gaps, reflection)
    label = 0
    while (remaining := np.flatnonzero(labels < 0)).size:
        distance = np.abs(shifted[remaining] - gaps[remaining[0]]).max(axis=-1).min(axis=-1)
        labels[remaining[distance <= tolerance]] = label
        label += 1
    return labels


def cluster_pattern(gaps: np.ndarray, tolerance: float, reflection: bool) -> tuple[int, str, str]:
    """Number of distinct angles, their multiplicities and the gap from each cluster to the next, in the
    cyclic order (and direction, with ``reflection``) that makes the multiplicities lexicographically
    largest, ties broken by the smallest gaps: a label of the cluster pattern that does not depend on β."""
    boundary = np.flatnonzero(gaps > tolerance)
    if boundary.size <= 1:
        return 1, str(len(gaps)), f"{2 * np.pi:.6f}"
    sizes = np.diff(boundary, prepend=boundary[-1] - len(gaps))
    between = gaps[boundary]
    orders = [(np.roll(sizes, -k), np.roll(between, -k)) for k in range(sizes.size)]
    if reflection:
        orders += [(np.roll(sizes[::-1], -k), np.roll(np.roll(between[::-1], -1), -k)) for k in range(sizes.size)]
    sizes, between = min(orders, key=lambda order: (tuple(-order[0]), tuple(order[1].round(6))))
    return boundary.size, ",".join(str(size) for size in sizes), ",".join(f"{gap:.6f}" for gap in between)

"""Exact Wasserstein distances between discrete measures on the circle S¹.

Arrays in, arrays out. Atoms are angles in radians; they are mapped to the
unit-period circle [0, 1) (u = (θ mod 2π) / 2π), where the distance is
d(u, v) = min_k |u - v + k|, and results are scaled back by 2π.

Each function takes a batch of systems: angles and weights of shape (B, n) and
(B, m), weights non-negative and summing to 1 along the last axis.

W₁ (Rabin–Delon–Gousseau; Hundrieser–Klatt–Munk): with F, G the cumulative
distribution functions on [0, 1),

    W₁(μ, ν) = min_α ∫_0^1 |F(x) - G(x) - α| dx,

the minimum attained at a median of F - G under Lebesgue measure. Exact.

W_p, p ≥ 1 (Delon–Salomon–Sobolevski 2010, eq. (6.2)): with Q_μ, Q_ν the
quantile functions of the lifted measures on R (Q(q + 1) = Q(q) + 1),

    W_p^p(μ, ν) = min_θ C(θ),  C(θ) = ∫_0^1 |Q_μ(q) - Q_ν(q + θ)|^p dq.

C is convex; for atomic measures it is piecewise linear in θ, so its one-sided
derivatives bracket the minimiser and the cutting-plane (Kelley) iteration on
the bracket [-1, 1] terminates at a kink. Every iteration keeps a certified
lower bound (the two supporting lines) and upper bound (the best value), and
the returned gap states the accuracy.
"""

from __future__ import annotations

import numpy as np

__all__ = ["circle_w1", "circle_wp"]

TWO_PI = 2.0 * np.pi


def _to_unit_period(angles: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted positions in [0, 1), their weights, and cumulative weights ending at 1 exactly."""
    u = np.mod(angles / TWO_PI, 1.0)
    u[u >= 1.0] = 0.0  # mod of a tiny negative number may round to 1
    order = np.argsort(u, axis=-1, kind="stable")
    u = np.take_along_axis(u, order, axis=-1)
    w = np.take_along_axis(weights, order, axis=-1)
    cdf = np.cumsum(w, axis=-1)
    cdf /= cdf[..., -1:]
    return u, w, cdf


def circle_w1(x: np.ndarray, wx: np.ndarray, y: np.ndarray, wy: np.ndarray) -> np.ndarray:
    """Exact W₁ on S¹ (radians) for batches of weighted angles, shape (B,)."""
    u, wu, _ = _to_unit_period(x, wx)
    v, wv, _ = _to_unit_period(y, wy)
    z = np.concatenate([u, v], axis=-1)
    signed = np.concatenate([wu, -wv], axis=-1)
    order = np.argsort(z, axis=-1, kind="stable")
    z = np.take_along_axis(z, order, axis=-1)
    diff = np.cumsum(np.take_along_axis(signed, order, axis=-1), axis=-1)
    diff[..., -1] = 0.0  # F - G after all atoms: total masses cancel
    # F - G equals diff[k] on [z_k, z_{k+1}); the last interval wraps to 1 + z_0
    length = np.empty_like(z)
    length[..., :-1] = np.diff(z, axis=-1)
    length[..., -1] = 1.0 + z[..., 0] - z[..., -1]
    by_value = np.argsort(diff, axis=-1, kind="stable")
    sorted_diff = np.take_along_axis(diff, by_value, axis=-1)
    cum_length = np.cumsum(np.take_along_axis(length, by_value, axis=-1), axis=-1)
    median_index = np.argmax(cum_length >= 0.5 * cum_length[..., -1:], axis=-1)
    alpha = np.take_along_axis(sorted_diff, median_index[..., None], axis=-1)
    return TWO_PI * np.sum(length * np.abs(diff - alpha), axis=-1)


def _rowwise_searchsorted(sorted_rows: np.ndarray, values: np.ndarray, side: str) -> np.ndarray:
    """np.searchsorted applied row by row, vectorised by offsetting rows.

    ``sorted_rows`` (B, n) with entries in [0, 2]; ``values`` (B, k) in [-1, 3].
    """
    b, n = sorted_rows.shape
    offset = 8.0 * np.arange(b)[:, None]
    flat = (sorted_rows + offset).ravel()
    idx = np.searchsorted(flat, (values + offset).ravel(), side=side).reshape(values.shape)
    return idx - n * np.arange(b)[:, None]


class _LiftedPair:
    """Quantile data of two batches of atomic measures on the unit-period circle."""

    def __init__(self, x: np.ndarray, wx: np.ndarray, y: np.ndarray, wy: np.ndarray, p: float):
        self.p = p
        self.u, _, self.a = _to_unit_period(x, wx)
        self.v, _, self.b = _to_unit_period(y, wy)
        batch = self.u.shape[0]
        # Q_μ on (a_{i-1}, a_i] is u_i; one extra lifted atom past q = 1
        self.a_ext = np.concatenate([self.a, np.full((batch, 1), 2.0)], axis=-1)
        self.u_ext = np.concatenate([self.u, self.u[:, :1] + 1.0], axis=-1)
        self.v_next = np.concatenate([self.v[:, 1:], self.v[:, :1] + 1.0], axis=-1)

    def _breakpoints(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Positions q_j ∈ (0, 1] where q ↦ Q_ν(q + θ) jumps, and the lift k_j."""
        k = np.floor(theta[:, None] - self.b) + 1.0
        q = self.b + k - theta[:, None]
        q = np.clip(q, 0.0, 1.0)
        return q, k

    def cost(self, theta: np.ndarray) -> np.ndarray:
        """C(θ) = ∫_0^1 |Q_μ(q) - Q_ν(q + θ)|^p dq for each system, shape (B,)."""
        q, _ = self._breakpoints(theta)
        grid = np.sort(np.concatenate([self.a, q], axis=-1), axis=-1)
        grid = np.concatenate([np.zeros((grid.shape[0], 1)), grid], axis=-1)
        length = np.diff(grid, axis=-1)
        mid = 0.5 * (grid[:, 1:] + grid[:, :-1])
        i = _rowwise_searchsorted(self.a_ext, mid, "left")
        qmu = np.take_along_axis(self.u_ext, i, axis=-1)
        s = mid + theta[:, None]
        lift = np.ceil(s) - 1.0
        j = _rowwise_searchsorted(self.b, s - lift, "left")
        j = np.minimum(j, self.b.shape[1] - 1)
        qnu = np.take_along_axis(self.v, j, axis=-1) + lift
        return np.sum(length * np.abs(qmu - qnu) ** self.p, axis=-1)

    def slopes(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Left and right derivatives C'(θ-), C'(θ+), each shape (B,).

        Raising θ by ε moves every jump q_j of Q_ν(· + θ) left by ε; the strip
        it sweeps changes from the value before the jump (v_j + k_j) to the
        value after it (v_{j+1} + k_j), against Q_μ just left of q_j (right
        derivative) or just right of it (left derivative).
        """
        q, k = self._breakpoints(theta)
        before = self.v + k
        after = self.v_next + k
        left_mu = np.take_along_axis(self.u_ext, _rowwise_searchsorted(self.a_ext, q, "left"), axis=-1)
        right_mu = np.take_along_axis(self.u_ext, _rowwise_searchsorted(self.a_ext, q, "right"), axis=-1)
        p = self.p
        right = np.sum(np.abs(left_mu - after) ** p - np.abs(left_mu - before) ** p, axis=-1)
        left = np.sum(np.abs(right_mu - after) ** p - np.abs(right_mu - before) ** p, axis=-1)
        return left, right


def circle_wp(
    x: np.ndarray,
    wx: np.ndarray,
    y: np.ndarray,
    wy: np.ndarray,
    p: float,
    rtol: float = 1e-13,
    max_iter: int = 200,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact W_p on S¹ (radians) for batches of weighted angles.

    Returns
    -------
    distance : ndarray, shape (B,)
        W_p = 2π (min_θ C(θ))^{1/p}.
    gap : ndarray, shape (B,)
        Certified bound on the error of ``distance`` (difference between W_p
        of the best value found and of the cutting-plane lower bound); zero
        when the iteration stopped at a kink where C'(θ-) ≤ 0 ≤ C'(θ+).
    """
    pair = _LiftedPair(x, wx, y, wy, p)
    batch = pair.u.shape[0]
    t_lo = np.full(batch, -1.0)
    t_hi = np.full(batch, 1.0)
    c_lo = pair.cost(t_lo)
    c_hi = pair.cost(t_hi)
    s_lo = pair.slopes(t_lo)[1]
    s_hi = pair.slopes(t_hi)[0]
    best = np.minimum(c_lo, c_hi)
    lower = np.zeros(batch)
    active = (s_lo < 0) & (s_hi > 0)
    lower[~active] = best[~active]
    width_before = t_hi - t_lo
    for iteration in range(max_iter):
        if not np.any(active):
            break
        idx = np.flatnonzero(active)
        tl, th, cl, ch, sl, sh = t_lo[idx], t_hi[idx], c_lo[idx], c_hi[idx], s_lo[idx], s_hi[idx]
        # intersection of the supporting lines at the bracket ends (sl < 0 < sh)
        cut = (ch - cl + sl * tl - sh * th) / (sl - sh)
        cut = np.clip(cut, tl, th)
        lower[idx] = np.maximum(lower[idx], cl + sl * (cut - tl))
        # safeguard: bisect when the bracket shrank by less than half over the last step
        slow = (th - tl) > 0.5 * width_before[idx]
        if iteration % 2 == 1:
            cut = np.where(slow, 0.5 * (tl + th), cut)
        width_before[idx] = th - tl
        sub = _subset(pair, idx)
        c_new = sub.cost(cut)
        left, right = sub.slopes(cut)
        best[idx] = np.minimum(best[idx], c_new)
        at_kink = (left <= 0) & (right >= 0)
        go_right = right < 0
        go_left = ~at_kink & ~go_right
        t_lo[idx[go_right]], c_lo[idx[go_right]], s_lo[idx[go_right]] = cut[go_right], c_new[go_right], right[go_right]
        t_hi[idx[go_left]], c_hi[idx[go_left]], s_hi[idx[go_left]] = cut[go_left], c_new[go_left], left[go_left]
        lower[idx[at_kink]] = best[idx[at_kink]]
        converged = (best[idx] - lower[idx] <= rtol * best[idx] + 1e-300) | (t_hi[idx] - t_lo[idx] <= 4e-16)
        active[idx[at_kink | converged]] = False
    lower = np.minimum(np.maximum(lower, 0.0), best)
    distance = TWO_PI * best ** (1.0 / p)
    gap = distance - TWO_PI * lower ** (1.0 / p)
    return distance, gap


def _subset(pair: _LiftedPair, idx: np.ndarray) -> _LiftedPair:
    if idx.size == pair.u.shape[0]:
        return pair
    sub = object.__new__(_LiftedPair)
    sub.p = pair.p
    for name in ("u", "a", "v", "b", "a_ext", "u_ext", "v_next"):
        setattr(sub, name, getattr(pair, name)[idx])
    return sub

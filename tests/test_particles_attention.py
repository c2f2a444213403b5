"""General attention: paper 1 Theorem 2.1, heads, feed-forward, rescaled dynamics, Q/K/V checks."""

from __future__ import annotations

import numpy as np
import pytest

import meanfield as mf


def test_paper1_theorem_2_1_boolean_low_rank_limit():
    """d = 1, V > 0, QK > 0: P(t) → Boolean, rank ≤ 2; rows of x_i → +∞ select the largest
    token (e_n), rows of x_i → -∞ the smallest (e_1)."""
    x0 = np.random.default_rng(0).standard_normal((10, 1))
    model = mf.Attention(1.0, Q=[[1.0]], K=[[2.0]], V=[[1.0]], projection=False)
    ds = mf.simulate(model, x0, np.linspace(0, 6, 7), rtol=1e-10, atol=1e-12)
    x = ds["positions"].values[-1]
    p = mf.attention_matrix(model, x)
    top, bottom = np.argmax(x[:, 0]), np.argmin(x[:, 0])
    expected = np.zeros_like(p)
    expected[x[:, 0] > 0, top] = 1.0
    expected[x[:, 0] < 0, bottom] = 1.0
    # the rows converge doubly exponentially: at t = 6, |x_i x_j| ~ 10^5 and the gaps are O(1)
    np.testing.assert_allclose(p, expected, atol=1e-12)
    assert mf.numerical_rank(p) == 2
    # P(0) was far from Boolean
    assert mf.attention_matrix(model, x0).max() < 0.9


def test_paper1_theorem_2_1_exceptional_bounded_row():
    """A particle that stays bounded (here x = 0 by symmetry) keeps a probability-vector row.

    This configuration is non-generic and unstable: round-off (1e-17 at t = 1) in x_2
    grows super-exponentially once |x_1| = |x_3| is large, so the check is made at
    t = 3, where x_2 ≈ 1e-12 and the other rows are Boolean to e^{-2β·4.36²} ≈ 1e-33.
    """
    model = mf.Attention(2.0, V=[[0.5]], projection=False)
    ds = mf.simulate(model, np.array([[-1.0], [0.0], [1.0]]), [0, 3], rtol=1e-10, atol=1e-12)
    x = ds["positions"].values[-1]
    p = mf.attention_matrix(model, x)
    np.testing.assert_allclose(p[0], [1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(p[2], [0, 0, 1], atol=1e-15)
    np.testing.assert_allclose(p[1], [1 / 3, 1 / 3, 1 / 3], atol=1e-10)
    # the exceptional row lies outside span{e_1, e_n}: rank 3, which is why Theorem 2.1's
    # rank ≤ 2 is stated for almost every initial sequence
    assert abs(x[1, 0]) < 1e-10 and mf.numerical_rank(p) == 3


def test_rescaled_dynamics_is_e_minus_tv_x():
    rng = np.random.default_rng(1)
    V = np.array([[1.0, 0.3], [0.0, 0.5]])
    Q, K = rng.standard_normal((2, 2)), rng.standard_normal((2, 2))
    x0 = rng.standard_normal((6, 2))
    times = np.linspace(0, 2, 5)
    x = mf.simulate(mf.Attention(1.0, Q=Q, K=K, V=V, projection=False), x0, times, rtol=1e-11, atol=1e-13)
    z = mf.simulate(mf.Attention(1.0, Q=Q, K=K, V=V, projection=False, rescaled=True), x0, times,
                    rtol=1e-11, atol=1e-13)
    from scipy.linalg import expm

    back = np.stack([zt @ expm(t * V).T for t, zt in zip(times, z["positions"].values)])
    np.testing.assert_allclose(back, x["positions"].values, rtol=1e-8, atol=1e-9)


def test_identity_weights_reproduce_self_attention_and_heads_add():
    x0 = mf.particles.uniform_sphere(10, 3, seed=2)
    times = np.linspace(0, 3, 4)
    a = mf.simulate(mf.Attention(2.0), x0, times, rtol=1e-11, atol=1e-13)["positions"].values
    b = mf.simulate(mf.SelfAttention(2.0), x0, times, rtol=1e-11, atol=1e-13)["positions"].values
    # same steps, sums in another order (softmax vs e^{β(<x,y>-1)}): round-off, measured 1.1e-15
    np.testing.assert_allclose(a, b, atol=3e-14)
    # two identical heads with V/2 each give the single-head dynamics
    half = np.stack([0.5 * np.eye(3)] * 2)
    c = mf.simulate(mf.Attention(2.0, V=half), x0, times, rtol=1e-11, atol=1e-13)["positions"].values
    np.testing.assert_allclose(c, b, atol=3e-14)  # round-off, measured 1.1e-15


def test_feed_forward_velocity_matches_formula():
    rng = np.random.default_rng(3)
    d, m = 3, 5
    W, A, b = rng.standard_normal((d, m)), rng.standard_normal((m, d)), rng.standard_normal(m)
    Q, K, V = rng.standard_normal((3, d, d))
    x = mf.particles.uniform_sphere(4, d, seed=4)
    model = mf.Attention(1.5, Q=Q, K=K, V=V, ffn=(W, A, b))
    v = model.velocity(x)
    s = 1.5 * (x @ Q.T) @ (x @ K.T).T
    p = np.exp(s) / np.exp(s).sum(axis=1, keepdims=True)
    raw = p @ (x @ V.T) + np.maximum(x @ A.T + b, 0) @ W.T
    expected = raw - np.sum(raw * x, axis=1, keepdims=True) * x
    np.testing.assert_allclose(v, expected, rtol=1e-12, atol=1e-14)
    ds = mf.simulate(model, x, [0, 1, 2])
    assert ds.attrs["max_sphere_deviation"] < 1e-14 and ds.attrs["ffn"] == "relu, width 5"


def test_cone_collapse_with_general_query_key():
    """Lemma 6.4 also holds for (2.3) with arbitrary Q, K and V = I."""
    rng = np.random.default_rng(6)
    x = mf.particles.uniform_sphere(100, 4, rng)
    x = x[x[:, 0] > 0.2][:12]
    Q, K = rng.standard_normal((2, 4, 4))
    ds = mf.simulate(mf.Attention(1.0, Q=Q, K=K), x, [0, 20, 40], rtol=1e-10, atol=1e-13)
    final = ds["positions"].values[-1]
    assert np.max(np.linalg.norm(final - final[0], axis=1)) < 1e-6


def test_mismatched_weights_are_rejected():
    with pytest.raises(ValueError, match="Q, K, V must have the same dimension d"):
        mf.Attention(1.0, Q=np.eye(2), K=np.eye(3))
    with pytest.raises(ValueError, match="must be a square"):
        mf.Attention(1.0, V=np.ones((2, 3)))
    with pytest.raises(ValueError, match="disagree on the number of heads"):
        mf.Attention(1.0, Q=np.stack([np.eye(2)] * 2), K=np.stack([np.eye(2)] * 3))
    with pytest.raises(ValueError, match="beta must be finite and >= 0"):
        mf.Attention(-1.0)
    with pytest.raises(ValueError, match="particles have dimension d = 3"):
        mf.simulate(mf.Attention(1.0, Q=np.eye(2)), mf.particles.uniform_sphere(4, 3, seed=0), [0, 1])
    with pytest.raises(ValueError, match="rescaled=True is paper 1's dynamics"):
        mf.Attention(1.0, rescaled=True)
    with pytest.raises(ValueError, match="ffn needs W of shape"):
        mf.Attention(1.0, ffn=(np.ones((2, 3)), np.ones((2, 2)), np.ones(3)))


def test_gram_blocks_cover_all_rows_with_at_least_64_rows():
    from meanfield.models._self_attention_sums import MIN_BLOCK_ROWS, attention_sums, blocks

    # n = 10⁵ > 65536: block_elements // n = 0 rows would loop per particle; 64 rows per block instead
    spans = list(blocks(2, 100_000, 100_000, 1 << 16))
    rows = [r.stop - r.start for _, r in spans]
    assert MIN_BLOCK_ROWS == 64 and len(spans) == 2 * -(-100_000 // 64)  # 1563 blocks per system
    assert rows.count(64) == 2 * (100_000 // 64) and rows.count(100_000 % 64) == 2
    covered = np.zeros((2, 100_000), dtype=int)
    for s, r in spans:
        covered[s, r] += 1
    assert np.all(covered == 1)
    # the blocked sums do not depend on the block size (same products, reassociated: round-off)
    x = mf.particles.uniform_sphere(150, 3, seed=4)[None]
    w = np.full((1, 150), 1 / 150)
    small = attention_sums(x, w, 2.0, block_elements=10)
    whole = attention_sums(x, w, 2.0, block_elements=150 * 150)
    for a, b in zip(small, whole):
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-16)

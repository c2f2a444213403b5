"""Permutation equivariance, energy monotonicity, cone collapse (Lemma 6.4), β = 0 consensus (Theorem 4.1)."""

from __future__ import annotations

import numpy as np
import pytest

import meanfield as mf


@pytest.mark.parametrize("kind", ["circle", "sphere"])
def test_permutation_equivariance(kind):
    rng = np.random.default_rng(5)
    x0 = rng.uniform(0, 2 * np.pi, 12) if kind == "circle" else mf.particles.uniform_sphere(12, 4, rng)
    perm = rng.permutation(12)
    model = mf.SelfAttention(3.0)
    a = mf.simulate(model, x0, np.linspace(0, 4, 5), rtol=1e-10, atol=1e-12)["positions"].values
    b = mf.simulate(model, x0[perm], np.linspace(0, 4, 5), rtol=1e-10, atol=1e-12)["positions"].values
    diff = a[:, perm] - b
    if kind == "circle":
        diff = np.angle(np.exp(1j * diff))
    # same steps (the error norm is permutation invariant): agreement to round-off
    assert np.abs(diff).max() < 1e-11


@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("kind,beta", [("circle", 5.0), ("sphere", 2.0), ("sphere", 0.0)])
def test_energy_non_decreasing(normalized, kind, beta):
    rng = np.random.default_rng(8)
    x0 = rng.uniform(0, 2 * np.pi, 24) if kind == "circle" else mf.particles.uniform_sphere(24, 3, rng)
    ds = mf.simulate(mf.SelfAttention(beta, normalized=normalized), x0, np.linspace(0, 10, 101),
                     rtol=1e-9, atol=1e-11)
    e = ds["energy"].values
    # dE/dt = Σ|X|²(Z) ≥ 0: increments may be negative only by round-off of E
    assert np.diff(e).min() > -1e-12 * np.abs(e).max()
    assert e[-1] > e[0]
    # brute force E_β = Σ_ij e^{β<x_i,x_j>} / (2βn²) (same for SA and USA), E_0 = Σ_ij <x_i,x_j> / (2n²);
    # round-off of n² = 576 terms: measured ≤ 5.6e-16 relative
    pts = np.stack([np.cos(x0), np.sin(x0)], axis=-1) if kind == "circle" else x0
    gram = pts @ pts.T
    n = len(pts)
    exact = np.exp(beta * gram).sum() / (2 * beta * n**2) if beta > 0 else gram.sum() / (2 * n**2)
    np.testing.assert_allclose(e[0], exact, rtol=1e-14)


@pytest.mark.parametrize("normalized,beta,rate", [(True, 1.0, 1.0), (True, 3.0, 1.0), (False, 1.0, np.e)])
def test_cone_collapse_at_exponential_rate(normalized, beta, rate):
    """Lemma 6.4: points in an open hemisphere collapse exponentially.

    Near consensus the attention weights tend to e^β/n (SA: 1/n), so
    ε̇_i = s(ε̄ - ε_i) with s = 1 (SA) or e^β (USA): the diameter decays like e^{-st}.
    """
    rng = np.random.default_rng(2)
    x = mf.particles.uniform_sphere(200, 3, rng)
    x = x[x[:, 2] > 0.1][:20]  # in the open hemisphere <x, e_3> > 0
    t_end = 16.0 / rate
    times = np.linspace(0, t_end, 33)
    ds = mf.simulate(mf.SelfAttention(beta, normalized=normalized), x, times, rtol=1e-11, atol=1e-14)
    pos = ds["positions"].values
    diam = np.array([np.max(np.linalg.norm(p[:, None] - p[None], axis=-1)) for p in pos])
    assert np.all(np.diff(diam) < 0)  # the cone shrinks monotonically
    late = times > t_end / 2
    slope = np.polyfit(times[late], np.log(diam[late]), 1)[0]
    # linearised rate s; the O(diam²) nonlinear correction at diam ≲ 1e-3 is far below 2 %
    assert abs(-slope - rate) < 0.02 * rate, slope
    assert mf.number_of_clusters(pos[-1], tolerance=1e-4) == 1


@pytest.mark.parametrize("kind", ["circle", "sphere"])
def test_beta_zero_consensus(kind):
    """Theorem 4.1: at β = 0, almost every initial sequence reaches consensus.

    30 uniform points on S² lie in a common hemisphere with probability
    2^{-29}(1 + 29 + 406) < 1e-6 (Wendel), so this is not cone collapse.
    """
    rng = np.random.default_rng(4)
    x0 = rng.uniform(0, 2 * np.pi, 30) if kind == "circle" else mf.particles.uniform_sphere(30, 3, rng)
    ds = mf.simulate(mf.SelfAttention(0.0), x0, np.linspace(0, 60, 7), rtol=1e-9, atol=1e-12)
    final = ds["positions"].values[-1]
    assert mf.number_of_clusters(final, tolerance=1e-6, domain=kind) == 1
    assert ds["order_parameter"].values[-1] > 1 - 1e-10
    assert np.all(np.diff(ds["energy"].values) > -1e-14)


def test_weights_merge_coincident_particles():
    """An atom of weight 2/n moves like two coincident atoms of weight 1/n each."""
    x = mf.particles.uniform_sphere(5, 3, seed=9)
    doubled = np.concatenate([x, x[:1]])
    times = np.linspace(0, 3, 4)
    a = mf.simulate(mf.SelfAttention(2.0), doubled, times, rtol=1e-11, atol=1e-13)["positions"].values
    weights = np.array([2, 1, 1, 1, 1]) / 6
    measure = mf.EmpiricalMeasure(x, weights, domain="sphere")
    b = mf.simulate(mf.SelfAttention(2.0), measure, times, rtol=1e-11, atol=1e-13, progress=True)
    np.testing.assert_allclose(b["positions"].values, a[:, :5], atol=1e-9)
    np.testing.assert_allclose(b["weights"].values, weights)


@pytest.mark.parametrize("normalized", [True, False])
def test_energy_dissipation_identity(normalized):
    """USA: dE/dt = Σ_i w_i |X_i|² (Lemma 3.7); SA: dE/dt = Σ_i w_i Z_i |X_i|² (3.6), Z_i = Σ_j w_j e^{β<x_i,x_j>}."""
    from meanfield.models._self_attention_sums import DirectSelfAttention, attention_sums

    beta, n = 2.0, 12
    x0 = mf.particles.uniform_sphere(n, 3, seed=12)
    h = 1e-3
    ds = mf.simulate(mf.SelfAttention(beta, normalized), x0, [0, 1 - h, 1, 1 + h], rtol=1e-12, atol=1e-14)
    e = ds["energy"].values
    rate = (e[3] - e[1]) / (2 * h)
    x = ds["positions"].values[2][None]
    w = np.full((1, n), 1 / n)
    v = DirectSelfAttention(beta, normalized, w, False)(1.0, x)
    weight = w * (np.exp(beta) * attention_sums(x, w, beta)[1] if normalized else 1.0)
    expected = np.sum(weight * np.sum(v * v, axis=-1))
    # central difference: O(h²) ≈ 1e-6 relative
    assert rate == pytest.approx(expected, rel=1e-5)


def test_rotation_equivariance():
    rng = np.random.default_rng(13)
    x0 = mf.particles.uniform_sphere(10, 4, rng)
    rot = mf.orthogonal_frame(4, 4, seed=14)
    times = np.linspace(0, 3, 4)
    a = mf.simulate(mf.SelfAttention(3.0), x0, times, rtol=1e-11, atol=1e-13)["positions"].values
    b = mf.simulate(mf.SelfAttention(3.0), x0 @ rot.T, times, rtol=1e-11, atol=1e-13)["positions"].values
    # rotated initial data give the rotated solution (to the integration tolerance)
    np.testing.assert_allclose(b, a @ rot.T, atol=1e-9)

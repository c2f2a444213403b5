"""The energy of Attention where the dynamics has a gradient structure (paper 2, §3.4.1):
E_β(X) = (1/2β) Σ_ij w_i w_j e^{β<Q x_i, K x_j>} with QᵀK symmetric and V = c QᵀK, for which
dE_β/dt = (1/c) Σ_i w_i Z_i |ẋ_i|², Z_i = Σ_j w_j e^{β<Q x_i, K x_j>}."""

from __future__ import annotations

import numpy as np
import pytest

import meanfield as mf


def _symmetric_weights(d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Q invertible and K = Q^{-ᵀ} M with M symmetric, so that QᵀK = M."""
    rng = np.random.default_rng(seed)
    Q = np.eye(d) + 0.3 * rng.standard_normal((d, d))
    A = rng.standard_normal((d, d))
    M = (A + A.T) / 2 / np.sqrt(d)
    return Q, np.linalg.solve(Q.T, M)


def _rate(model: mf.Attention, x: np.ndarray, c: float) -> float:
    """(1/c) Σ_i w_i Z_i |ẋ_i|² with w_i = 1/n."""
    Q, K = model.Q[0], model.K[0]
    n = x.shape[0]
    Z = np.exp(model.beta * x @ Q.T @ K @ x.T).sum(axis=1) / n
    v = model.velocity(x, domain="sphere" if model.projection else "euclidean")
    return float(np.sum(Z * np.sum(v * v, axis=1)) / n / c)


def test_identity_weights_give_the_energy_of_self_attention():
    x = np.random.default_rng(0).standard_normal((9, 3))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    for beta in (0.0, 0.7, 5.0):
        assert mf.energy(mf.Attention(beta), x) == pytest.approx(mf.energy(mf.SelfAttention(beta), x), rel=1e-14)


@pytest.mark.parametrize(("c", "projection"), [(1.0, True), (-1.0, True), (2.0, False), (-1.0, False)])
def test_energy_rate_is_the_metric_norm_of_the_velocity(c, projection):
    # the derivative of E_β along ẋ by central differences, error O(h²) ≈ 1e-10 relative at h = 1e-5
    d, n = 4, 7
    Q, K = _symmetric_weights(d, seed=1)
    model = mf.Attention(1.3, Q, K, c * (Q.T @ K), projection=projection)
    assert model.gradient_factor(d) == pytest.approx(c, rel=1e-14)
    x = np.random.default_rng(2).standard_normal((n, d))
    if projection:
        x /= np.linalg.norm(x, axis=1, keepdims=True)
    domain = "sphere" if projection else "euclidean"
    v = model.velocity(x, domain=domain)
    h = 1e-5
    # on the sphere x ± h ẋ is off it by O(h²); projecting back moves E by O(h²) as well
    options = {"domain": domain, "renormalize": True} if projection else {"domain": domain}
    energy = [float(mf.energy(model, x + s * h * v, **options)) for s in (1, -1)]
    derivative = (energy[0] - energy[1]) / (2 * h)
    assert derivative == pytest.approx(_rate(model, x, c), rel=1e-8)


@pytest.mark.parametrize("projection", [True, False])
def test_repulsive_attention_energy_decreases_along_simulate(projection):
    x0 = np.random.default_rng(3).standard_normal((12, 3))
    if projection:
        x0 /= np.linalg.norm(x0, axis=1, keepdims=True)
    out = mf.simulate(mf.Attention(2.0, V=-np.eye(3), projection=projection), x0, np.linspace(0.0, 3.0, 31),
                      rtol=1e-10, atol=1e-12)
    energy = out["energy"].values
    assert np.all(np.diff(energy) < 0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"Q": np.array([[1.0, 1.0], [0.0, 1.0]])}, "symmetric"),
        ({"V": np.diag([1.0, 2.0])}, "V = c QᵀK"),
        ({"heads": 2}, "one head"),
        ({"projection": False, "rescaled": True}, "rescaled=False"),
        ({"Q": np.zeros((2, 2))}, "not zero"),
    ],
)
def test_no_energy_without_the_gradient_structure(kwargs, match):
    model = mf.Attention(1.0, **kwargs)
    assert not model.has_energy
    x = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    with pytest.raises(ValueError, match=match):
        mf.energy(model, x, domain="sphere" if model.projection else "euclidean")

"""Random weights of the phase diagram: the ensembles, the draw rules, the Gram rank, the batched path."""

from __future__ import annotations

import numpy as np
import pytest

import meanfield as mf
from meanfield.studies import phase_diagram_tokens, random_weights
from meanfield.studies.clustering._phase_diagram import phase_diagram_block
from meanfield.studies.clustering._random_weights import ENSEMBLES, gram_rank, weighted_token_evolution

T = np.linspace(0.0, 2.0, 5)


def test_per_system_weights_do_not_depend_on_beta_or_block():
    a = phase_diagram_block(np.array([1.0, 3.0]), np.arange(6), d=3, n=5, times=T, delta=1e-3,
                            matrices="plus-qk", draw="per_system")
    b = phase_diagram_block(3.0, np.array([4]), d=3, n=5, times=T, delta=1e-3, matrices="plus-qk", draw="per_system")
    # the same system, the same weights and tokens, another block: the same steps (evolve_batch's contract)
    np.testing.assert_array_equal(a["pair_fraction"].sel(beta=3.0, seed=4).values, b["pair_fraction"].sel(seed=4))
    np.testing.assert_array_equal(a["nfev"].sel(beta=3.0, seed=4).values, b["nfev"].sel(seed=4))
    for s in range(3):
        Q, K, V = random_weights("goe", 4, 2, draw="per_system", system=s)
        assert not np.array_equal(K, random_weights("goe", 4, 2, draw="per_system", system=s + 1)[1])
        np.testing.assert_array_equal(K, random_weights("goe", 4, 2, draw="per_system", system=s)[1])


def test_per_beta_weights_differ_between_beta_and_follow_their_seed_rule():
    k0 = random_weights("ginibre", 3, 5, draw="per_beta", system=2, beta_index=0)
    k1 = random_weights("ginibre", 3, 5, draw="per_beta", system=2, beta_index=1)
    assert not np.array_equal(k0[0], k1[0])
    g = np.random.default_rng(np.random.SeedSequence([5, 1, 2, 1])).standard_normal((3, 3, 3)) / np.sqrt(3)
    np.testing.assert_array_equal(np.stack(k1), g)
    with pytest.raises(ValueError, match="needs the system and the beta index"):
        random_weights("ginibre", 3, 5, draw="per_beta", system=2)


def test_goe_is_symmetric_with_the_stated_variances():
    d, draws = 40, 50
    a = np.stack([random_weights("goe", d, 0, draw="per_system", system=s)[1] for s in range(draws)])
    np.testing.assert_array_equal(a, np.swapaxes(a, 1, 2))
    off = a[:, *np.triu_indices(d, 1)].ravel()
    diag = np.einsum("sii->si", a).ravel()
    # variances 1/d and 2/d; the sample variance of m normal values has relative sd sqrt(2/m): allow 5 sd
    for values, want in ((off, 1.0 / d), (diag, 2.0 / d)):
        assert abs(values.var() / want - 1) < 5 * np.sqrt(2.0 / values.size)


def test_value_ensembles_are_exact():
    Q, K, V = random_weights("plus-qk", 5, 3, draw="per_system", system=1)
    np.testing.assert_array_equal(V, Q.T @ K)
    Q, K, V = random_weights("minus-qk", 5, 3, draw="per_system", system=1)
    np.testing.assert_array_equal(V, -(Q.T @ K))
    assert mf.Attention(1.0, Q=Q, K=K, V=V).gradient_factor(5) == pytest.approx(-1.0, abs=1e-14)
    Q, K, V = random_weights("psd-v", 6, 3)
    np.testing.assert_array_equal(V, V.T)
    assert np.linalg.eigvalsh(V).min() >= -1e-14  # PSD to round-off of G Gᵀ/d
    Q, K, V = random_weights("gaussian-product", 6, 3)
    np.testing.assert_array_equal(V, np.eye(6))
    assert not np.allclose(Q.T @ K, K.T @ Q)


def test_ginibre_once_is_ginibre_matrices_and_keeps_its_path():
    for ensemble in ENSEMBLES:
        assert len(random_weights(ensemble, 3, 0)) == 3
    np.testing.assert_array_equal(np.stack(random_weights("ginibre", 4, 9)), np.stack(mf.studies.ginibre_matrices(4, 9)))
    ds = mf.phase_diagram(3, 6, [1.0], np.linspace(0, 1, 3), 4, matrices="ginibre", seed=3, scheduler="serial",
                          progress=False)
    assert ds.attrs["integrator"].startswith("meanfield.simulate") and ds.attrs["draw"] == "once"
    assert "rank_mean" in ds and ds.attrs["rank_tolerance"] == 1e-3


def test_gram_rank_exact_cases():
    same = np.tile([0.6, 0.8, 0.0, 0.0], (7, 1))
    orthogonal = np.eye(4)
    assert gram_rank(np.stack([same]), 1e-3).tolist() == [1]
    assert gram_rank(orthogonal, 1e-6) == 4
    assert gram_rank(orthogonal[:3], 1e-6) == 3
    # a cluster with every pair at <x_i, x_j> >= 1 - δ has rank 1 ((n - 1)δ < 1, module docstring)
    rng = np.random.default_rng(0)
    x = np.array([1.0, 0, 0]) + 0.02 * rng.standard_normal((10, 3))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    delta = 1 - (x @ x.T).min()
    assert gram_rank(x, delta) == 1


def test_diagram_with_random_weights_reports_rank_and_draw():
    t = np.linspace(0, 3, 4)
    ds = mf.phase_diagram(3, 6, [0.5, 2.0], t, 8, matrices="plus-qk", draw="per_beta", seed=1, scheduler="serial",
                          progress=False, per_system=True)
    assert ds.attrs["draw"] == "per_beta" and "per system and beta" in ds.attrs["model"]
    np.testing.assert_array_equal(ds["rank"].sel(time=0).values, 3)  # 6 iid uniform tokens span R³
    np.testing.assert_allclose(ds["rank_mean"], ds["rank"].mean("seed"))
    usa = mf.phase_diagram(3, 6, [0.5], t, 4, matrices="ginibre", normalized=False, scheduler="serial",
                           progress=False)
    assert usa.attrs["model"].startswith("USA with Ginibre") and "Q" in usa


def test_batched_velocity_is_attentions_velocity():
    x = phase_diagram_tokens(0, [0, 1], 4, 5)
    weights = [random_weights("ginibre", 4, 0, draw="per_system", system=s) for s in range(2)]
    scores = np.stack([Q.T @ K for Q, K, _ in weights])
    values = np.stack([V for *_, V in weights])
    run = weighted_token_evolution(x, scores, values, np.array([0.0, 0.5]), 2.0, True, rtol=1e-10, atol=1e-12)
    for s, (Q, K, V) in enumerate(weights):
        ref = mf.simulate(mf.Attention(2.0, Q=Q, K=K, V=V), x[s], [0.0, 0.5], rtol=1e-10, atol=1e-12,
                          domain="sphere")
        # two integrations at rtol 1e-10 of the same flow: agree to ~1e-9
        np.testing.assert_allclose(run.y[s, -1], ref["positions"].values[-1], atol=1e-8)

"""Sinkhorn (doubly stochastic) attention, ``Attention(normalization="sinkhorn")``: marginals to the tolerance at
any β, one normalisation = SA, the two-token and equiangular closed forms, the mean the column sums conserve,
non-convergence as success = 0, no energy, checkpoint/resume, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import meanfield as mf
from conftest import CheckpointStop
from meanfield.io._checkpoint import CheckpointError
from meanfield.models import sinkhorn_attention

TOL = 1e-12


def _cluster(rng, beta: float, shape: tuple[int, int, int], sphere: bool) -> np.ndarray:
    """Tokens spread by 1/√β about a centre (e_3 on the sphere, 2e_1 in R^d): β-scaled score gaps of order 1,
    raw scores up to β (sphere) or ≈ 4β (R^d)."""
    spread = rng.normal(size=shape) / np.sqrt(beta)
    if not sphere:
        return 2.0 * np.eye(shape[-1])[0] + spread
    x = np.eye(shape[-1])[-1] + 0.7 * spread
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


@pytest.mark.parametrize("beta", [1.0, 5.0, 50.0, 500.0])
@pytest.mark.parametrize("sphere", [True, False])
def test_rows_and_columns_sum_to_one_and_p_scales_k(beta, sphere):
    """Every row and column sum is 1 within the tolerance, for a batch of systems, where e^{score} overflows
    (R^d, β = 500: scores ≈ 2000); and P = diag(u) K diag(v): its cross-ratios are those of K."""
    x = _cluster(np.random.default_rng(int(beta)), beta, (3, 8, 3), sphere)
    model = mf.Attention(beta, projection=sphere, normalization="sinkhorn", sinkhorn_iterations=20_000,
                         sinkhorn_tolerance=TOL)
    p = mf.attention_matrix(model, x)
    assert np.abs(p.sum(axis=2) - 1).max() <= TOL and np.abs(p.sum(axis=1) - 1).max() <= TOL
    scores = beta * np.einsum("sid,sjd->sij", x, x)
    if not sphere and beta == 500.0:
        with np.errstate(over="ignore"):
            assert np.isinf(np.exp(scores.max()))  # the iteration in logarithms is what makes this case work
    cross = lambda a: a[:, :-1, :-1] + a[:, 1:, 1:] - a[:, :-1, 1:] - a[:, 1:, :-1]  # noqa: E731
    # log P_ij - C_ij = f_i + g_j: cross-ratios agree to round-off of the scores (~1e-16 · max |C|)
    assert np.abs(cross(np.log(p)) - cross(scores)).max() <= 1e-13 * max(np.abs(scores).max(), 1.0)


@pytest.mark.parametrize("projection", [True, False])
def test_one_normalisation_is_softmax_attention(projection):
    """k = 1 (one row normalisation, no tolerance) is SA: velocity and matrix equal bit for bit, with two heads of
    general Q, K, V."""
    rng = np.random.default_rng(3)
    Q, K, V = (rng.normal(size=(2, 3, 3)) for _ in range(3))
    x = rng.normal(size=(4, 7, 3))
    if projection:
        x /= np.linalg.norm(x, axis=-1, keepdims=True)
    sa = mf.Attention(1.5, Q=Q, K=K, V=V, projection=projection)
    one = mf.Attention(1.5, Q=Q, K=K, V=V, projection=projection, normalization="sinkhorn", sinkhorn_iterations=1,
                       sinkhorn_tolerance=None)
    assert np.array_equal(one.velocity(x), sa.velocity(x))
    assert np.array_equal(mf.attention_matrix(one, x, head=1), mf.attention_matrix(sa, x, head=1))
    # k = 2 normalises the columns too: SA's columns do not sum to 1, so the velocities differ
    two = mf.Attention(1.5, Q=Q, K=K, V=V, projection=projection, normalization="sinkhorn", sinkhorn_iterations=2,
                       sinkhorn_tolerance=None)
    assert np.abs(two.velocity(x) - sa.velocity(x)).max() > 1e-2


def test_two_tokens_closed_form():
    """Two tokens in R^d (Q = K = V = I): P = [[p, 1-p], [1-p, p]], p = 1/(1 + e^{-β|δ|²/2}), δ = x_1 - x_2 (the
    cross-ratio P_11 P_22 / P_12² = e^{β|δ|²} of K). The flow ẋ_i = Σ_j P_ij x_j gives m(t) = e^t m(0) and
    δ̇ = tanh(β|δ|²/4) δ; paper 2's (9.4) in z, ż_i = Σ_j P_ij (z_j - z_i), keeps the mean and
    δ̇ = -2δ/(1 + e^{β|δ|²/2})."""
    beta = 2.0
    x0 = np.array([[0.3, -0.2, 0.5], [0.7, 0.1, 0.3]])
    delta0 = x0[0] - x0[1]
    r0 = float(delta0 @ delta0)
    options = dict(normalization="sinkhorn", sinkhorn_tolerance=TOL, sinkhorn_iterations=100_000, projection=False)
    p = mf.attention_matrix(mf.Attention(beta, **options), x0)
    q = 1 / (1 + np.exp(-beta * r0 / 2))
    np.testing.assert_allclose(p, [[q, 1 - q], [1 - q, q]], rtol=0, atol=2 * TOL)
    assert abs(mf.attention_matrix(mf.Attention(beta, projection=False), x0)[0, 0] - q) > 0.05  # SA: 0.5200, not 0.5720

    t = np.linspace(0.0, 1.0, 5)
    rate = {"x": lambda s, r: 2 * np.tanh(beta * r / 4) * r, "z": lambda s, r: -4 * r / (1 + np.exp(beta * r / 2))}
    growth = {"x": np.exp(t), "z": np.ones_like(t)}
    for form, model in (("x", mf.Attention(beta, **options)),
                        ("z", mf.Attention(beta, rescaled=True, scores_at_z=True, **options))):
        ds = mf.simulate(model, x0, t, rtol=1e-11, atol=1e-13)
        assert ds.attrs["success"] == 1
        xt = ds["positions"].values
        r = solve_ivp(rate[form], (0, 1), [r0], t_eval=t, rtol=1e-12, atol=1e-14).y[0]
        expected_delta = delta0 * np.sqrt(r / r0)[:, None]
        expected_mean = x0.mean(axis=0) * growth[form][:, None]
        # dopri5 at rtol 1e-11 on an O(1) solution over t ≤ 1: errors ~1e-10
        np.testing.assert_allclose(xt[:, 0] - xt[:, 1], expected_delta, rtol=0, atol=1e-9)
        np.testing.assert_allclose(xt.mean(axis=1), expected_mean, rtol=0, atol=1e-9)


def test_equiangular_tokens_follow_theorem_6_8():
    """Orthogonal tokens on S^{d-1} (n ≤ d): K is symmetric with equal row sums, so the softmax is already doubly
    stochastic (the iteration stops after k = 1) and every pair's inner product γ(t) solves Theorem 6.8's SA ODE
    γ̇ = 2e^{βγ}(1-γ)((n-1)γ+1)/(e^β + (n-1)e^{βγ})."""
    beta, n = 2.0, 4
    x0 = np.eye(n)
    t = np.linspace(0.0, 3.0, 7)
    result = sinkhorn_attention(x0[None], x0[None], beta * np.eye(n), 1000, TOL)
    assert result.iterations == 1
    model = mf.Attention(beta, normalization="sinkhorn", sinkhorn_tolerance=TOL)
    ds = mf.simulate(model, x0, t, rtol=1e-11, atol=1e-13)
    x = ds["positions"].values
    gram = np.einsum("tid,tjd->tij", x, x)
    ode = solve_ivp(lambda s, g: 2 * np.exp(beta * g) * (1 - g) * ((n - 1) * g + 1)
                    / (np.exp(beta) + (n - 1) * np.exp(beta * g)), (0, 3), [0.0], t_eval=t, rtol=1e-12,
                    atol=1e-14).y[0]
    off = ~np.eye(n, dtype=bool)
    # dopri5 at rtol 1e-11: the chart integration is accurate to ~1e-10 over t ≤ 3
    np.testing.assert_allclose(gram[:, off], np.repeat(ode[:, None], off.sum(), axis=1), rtol=0, atol=1e-9)


def test_column_sums_fix_the_mean():
    """Columns summing to 1 give Σ_i Σ_j P_ij V x_j = V Σ_j x_j for any Q, K, V (no symmetry needed): on R^d the
    mean solves ṁ = V m, m(t) = e^{tV} m(0), and the rescaled tokens of (9.3) and (9.4) keep their mean, to
    n·|V|·|z|·τ per unit time (τ = 1e-12) plus round-off. Softmax attention moves the mean by O(1)."""
    rng = np.random.default_rng(7)
    Q, K = rng.normal(size=(2, 3, 3)) / 2
    V = rng.normal(size=(3, 3)) / 2
    x0 = rng.normal(size=(6, 3))
    t = np.linspace(0.0, 1.0, 5)
    options = dict(Q=Q, K=K, V=V, projection=False, normalization="sinkhorn", sinkhorn_tolerance=TOL,
                   sinkhorn_iterations=100_000)
    x = mf.simulate(mf.Attention(1.0, **options), x0, t, rtol=1e-11, atol=1e-13)["positions"].values
    expected = np.stack([mf.models._matrix_exponential.matrix_exponential(s * V) @ x0.mean(axis=0) for s in t])
    np.testing.assert_allclose(x.mean(axis=1), expected, rtol=0, atol=1e-9)  # dopri5 at rtol 1e-11, t ≤ 1
    for scores_at_z in (False, True):
        z = mf.simulate(mf.Attention(1.0, rescaled=True, scores_at_z=scores_at_z, **options), x0, t,
                        rtol=1e-9, atol=1e-11)["positions"].values
        # a linear invariant of the velocity is kept by any Runge-Kutta step: only τ and round-off remain
        assert np.abs(z.mean(axis=1) - x0.mean(axis=0)).max() <= 1e-10
    softmax = mf.simulate(mf.Attention(1.0, Q=Q, K=K, V=V, projection=False, rescaled=True), x0, t)
    assert np.abs(softmax["positions"].values.mean(axis=1) - x0.mean(axis=0)).max() > 1e-2


def test_non_convergence_ends_the_run_with_success_0():
    """Spread tokens in R^d at β = 50: the residual decays like 1/k (2.6e-3 after 1000 normalisations), so the
    run stops at its first evaluation with success = 0 and a message naming the iterations and the residual;
    the attention matrix is a ValueError."""
    x0 = np.random.default_rng(1).normal(size=(4, 3))
    model = mf.Attention(50.0, projection=False, normalization="sinkhorn", sinkhorn_iterations=1000,
                         sinkhorn_tolerance=1e-10)
    for method in ({}, dict(method="rk4", dt=0.01)):  # fixed steps too: their stability check meets it first
        ds = mf.simulate(model, x0, [0.0, 1.0], **method)
        assert ds.attrs["success"] == 0 and ds.sizes["time"] == 1
        assert "Sinkhorn attention did not converge at t = 0" in ds.attrs["message"]
        assert "sinkhorn_iterations = 1000 normalisations" in ds.attrs["message"]
        residual = float(ds.attrs["message"].split("are off by ")[1].split(" ")[0])
        assert 1e-3 < residual < 1e-2
    with pytest.raises(ValueError, match=r"did not converge .* sinkhorn_iterations = 1000"):
        mf.attention_matrix(model, x0)


def test_energy_is_refused_by_name():
    model = mf.Attention(2.0, normalization="sinkhorn")
    x = np.eye(3)
    with pytest.raises(ValueError, match="normalization='sinkhorn'.* no interaction energy"):
        mf.energy(model, x)
    assert not model.has_energy
    assert mf.energy(mf.Attention(2.0), x) > 0  # the softmax model keeps its energy


def test_checkpoint_resume_and_a_different_tolerance_refused(tmp_path, stop_after_checkpoint_writes):
    """An interrupted run resumes to the straight run bit for bit; the Sinkhorn settings are attrs, and a resume
    with another tolerance is refused naming it."""
    x = np.random.default_rng(5).normal(size=(2, 6, 3))
    x0 = x / np.linalg.norm(x, axis=-1, keepdims=True)
    model = mf.Attention(3.0, normalization="sinkhorn", sinkhorn_tolerance=1e-11)
    times = np.linspace(0.0, 2.0, 6)
    straight = mf.simulate(model, x0, times)
    assert straight.attrs["success"] == 1
    assert (straight.attrs["normalization"], straight.attrs["sinkhorn_iterations"],
            straight.attrs["sinkhorn_tolerance"]) == ("sinkhorn", 1000, 1e-11)
    path = tmp_path / "run.nc"
    stop_after_checkpoint_writes(3)
    with pytest.raises(CheckpointStop):
        mf.simulate(model, x0, times, checkpoint=path, checkpoint_interval=0.0)
    stop_after_checkpoint_writes.disarm()
    other = mf.Attention(3.0, normalization="sinkhorn", sinkhorn_tolerance=1e-10)
    with pytest.raises(CheckpointError, match="sinkhorn_tolerance=1e-11, but this run has sinkhorn_tolerance=1e-10"):
        mf.simulate(other, x0, times, checkpoint=path, resume=True)
    with pytest.raises(CheckpointError, match="normalization=sinkhorn, but this run has normalization=<absent>"):
        mf.simulate(mf.Attention(3.0), x0, times, checkpoint=path, resume=True)
    resumed = mf.simulate(model, x0, times, checkpoint=path, resume=True)
    assert resumed.attrs["success"] == 1 and resumed.attrs["resumed_at"] > 0
    assert np.array_equal(resumed["positions"].values, straight["positions"].values)


@pytest.mark.parametrize(("options", "match"), [
    (dict(normalization="doubly"), "normalization must be one of"),
    (dict(normalization="sinkhorn", sinkhorn_iterations=0), "sinkhorn_iterations must be a positive integer"),
    (dict(normalization="sinkhorn", sinkhorn_iterations=2.5), "sinkhorn_iterations must be a positive integer"),
    (dict(normalization="sinkhorn", sinkhorn_iterations=True), "sinkhorn_iterations must be a positive integer"),
    (dict(normalization="sinkhorn", sinkhorn_tolerance=0.0), "sinkhorn_tolerance must be None"),
    (dict(normalization="sinkhorn", sinkhorn_tolerance=1.0), "sinkhorn_tolerance must be None"),
    (dict(normalization="sinkhorn", sinkhorn_tolerance=float("nan")), "sinkhorn_tolerance must be None"),
    (dict(sinkhorn_iterations=5), "sinkhorn_iterations and sinkhorn_tolerance set"),
    (dict(sinkhorn_tolerance=None), "sinkhorn_iterations and sinkhorn_tolerance set"),
    (dict(normalization="sinkhorn", graph=mf.Graph.causal(3)), "pass graph=None"),
])
def test_bad_settings_are_refused_by_name(options, match):
    with pytest.raises(ValueError, match=match):
        mf.Attention(1.0, **options)


def test_unequal_weights_are_refused():
    x = np.eye(3)
    measure = mf.EmpiricalMeasure(x, weights=[0.5, 0.25, 0.25], domain="sphere")
    with pytest.raises(ValueError, match="weights: Attention\\(normalization='sinkhorn'\\)"):
        mf.simulate(mf.Attention(1.0, normalization="sinkhorn"), measure, [0.0, 1.0])

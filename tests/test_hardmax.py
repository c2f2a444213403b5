"""The hard-max dynamics (9.5)-(9.6), its Filippov stepper and the limit beta -> infinity of (9.4) (paper 2, §9.3)."""

import numpy as np
import pytest

import meanfield as mf
from meanfield.domains._geometry import EuclideanGeometry
from meanfield.models._filippov import FilippovStepper, SwitchingAccumulation
from meanfield.models._hardmax_selection import SCORE_ROUND_OFF, score_tolerance, scores, select

EXAMPLE_93 = np.array([[1.0, 1.0], [-1.0, 1.0], [0.0, 0.0]])
I1 = np.eye(1)


def example_93_branch(t):
    """The branch the symmetry selects: z3(t) = (0, 1 - e^{-t}), z1, z2 fixed."""
    out = np.broadcast_to(EXAMPLE_93, (t.size, 3, 2)).copy()
    out[:, 2, 1] = 1 - np.exp(-t)
    return out


def test_example_93_engine_follows_the_symmetric_branch():
    t = np.linspace(0.0, 5.0, 51)
    ds = mf.simulate(mf.HardmaxAttention(), EXAMPLE_93, t, rtol=1e-13, atol=1e-15)
    assert ds.attrs["success"] == 1 and ds.attrs["method"] == "filippov"
    z = ds["positions"].values
    # DOP853 at rtol 1e-13 on one smooth segment: the branch to round-off, far inside 1e-10
    assert np.abs(z - example_93_branch(t)).max() < 1e-12
    assert np.array_equal(z[:, :2], np.broadcast_to(EXAMPLE_93[:2], (t.size, 2, 2)))


def test_example_93_selection_at_the_start_is_the_right_limit():
    # at z3 = 0 all three scores tie; (9.5)'s average moves z3 up, after which only z1, z2 are maximisers
    lam = mf.attention_matrix(mf.HardmaxAttention(), EXAMPLE_93)
    assert np.array_equal(lam, [[1, 0, 0], [0, 1, 0], [0.5, 0.5, 0]])
    velocity = mf.HardmaxAttention().velocity(EXAMPLE_93)
    assert np.array_equal(velocity, [[0, 0], [0, 0], [0, 1]])


def test_example_93_limit_ladder_is_monotone_with_rate_one():
    t = np.concatenate([[0.0], np.geomspace(1e-5, 5.0, 400)])
    ds = mf.hardmax_limit(EXAMPLE_93, t)
    sup = ds["sup_error"].values
    beta = ds["beta"].values
    assert ds.attrs["success"] == 1 and ds.attrs["monotone"] == 1
    assert np.all(np.diff(sup) < 0)
    # derived in meanfield.studies.open_problems._hardmax_limit: beta e(beta) -> 1/2; measured 1/2 - beta e = 1.4/beta .. 2/beta
    big = beta >= 64
    assert np.all(np.abs(beta[big] * sup[big] - 0.5) < 2.5 / beta[big])
    assert 0.85 < ds.attrs["rate"] < 1.0
    # (9.4) keeps the reflection z1 <-> z2 exactly: z3 stays on the axis for every beta
    assert np.all(ds["positions"].values[:, :, 2, 0] == 0.0)
    assert np.array_equal(ds["positions"].values[:, :, 0, 0], -ds["positions"].values[:, :, 1, 0])


def test_near_tie_follows_the_branch_to_z1():
    # z3(0) = (1e-12, 0): S31 - S32 = 2e-12, far above the round-off of these scores (3 d eps |z3||z1| ~ 1e-27):
    # C3 = {1} and stays so (<z3, z1> = a + b > a^2 + b^2, -a + b for z3 = (a, b) in (0, 1)^2), so z3' = z1 - z3,
    # z3(t) = z1 + (z3(0) - z1) e^{-t}, the branch every finite-beta run of (9.4) follows
    z0 = EXAMPLE_93.copy()
    z0[2, 0] = 1e-12
    t = np.linspace(0.0, 5.0, 51)
    ds = mf.simulate(mf.HardmaxAttention(), z0, t, rtol=1e-13, atol=1e-15)
    exact = z0[0] + (z0[2] - z0[0]) * np.exp(-t)[:, None]
    assert ds.attrs["success"] == 1 and ds.attrs["tie_rule"] == "round-off"
    assert ds.attrs["tie_tolerance"] == SCORE_ROUND_OFF
    # one linear segment by DOP853 at rtol 1e-13: the closed form to a few ulps, far inside 1e-12
    assert np.abs(ds["positions"].values[:, 2] - exact).max() < 1e-12
    # the old fixed rule (ties within 1e-9 max(1, |S|)) takes the symmetric branch instead, and says so
    wide = mf.simulate(mf.HardmaxAttention(tie_tolerance=1e-9), z0, t, rtol=1e-13, atol=1e-15)
    assert wide.attrs["tie_rule"] == "relative" and wide.attrs["tie_tolerance"] == 1e-9
    assert np.abs(wide["positions"].values[:, 2, 1] - (1 - np.exp(-t))).max() < 1e-12


@pytest.mark.parametrize("ulps, tied", [(2, True), (700, False)])
def test_ties_are_decided_at_the_round_off_of_the_scores(ulps, tied):
    # z3 = (x, 1/2): S31 - S32 = 2x; the round-off rule ties scores within 3 d eps max_k E_3k = 3 eps (d = 2,
    # E_31 = |x| + 1/2). A gap of 2 ulps of 1/2 (2.2e-16, a third of the rule) is a tie; 700 ulps (7.8e-14, more than
    # 100 times the rule) is not
    z = EXAMPLE_93.copy()
    z[2] = [ulps * np.spacing(0.5) / 2, 0.5]
    s = scores(z, np.eye(2), np.eye(2))
    tolerance = score_tolerance(z, s, np.eye(2), np.eye(2), None)[2]
    assert tolerance == pytest.approx(3 * 2 * np.finfo(float).eps * (0.5 + z[2, 0]), rel=1e-12)
    assert (s[2, 0] - s[2, 1] <= tolerance) == tied
    if not tied:
        assert s[2, 0] - s[2, 1] >= 100 * tolerance
    lam = mf.attention_matrix(mf.HardmaxAttention(), z)
    assert np.array_equal(lam[2], [0.5, 0.5, 0.0] if tied else [1.0, 0.0, 0.0])


def test_hardmax_limit_reports_the_branches_of_example_93():
    t = np.concatenate([[0.0], np.geomspace(1e-5, 5.0, 200)])
    exact = mf.hardmax_limit(EXAMPLE_93, t, betas=[16, 64, 256])
    # the symmetric branch: z3 ties z1, z2 (token indices from 0) in the limit and, exactly, at every beta
    assert exact["limit_attends_to"].values.tolist() == [0, 1, -1]
    assert np.all(exact["attends_to"].values == [0, 1, -1])
    assert exact["limit_maximisers"].values[2].tolist() == [True, True, False]
    assert exact.attrs["branches_agree"] == 1 and exact.attrs["success"] == 1
    near = EXAMPLE_93.copy()
    near[2, 0] = 1e-12
    ds = mf.hardmax_limit(near, t, betas=[16, 64, 256])
    assert ds["limit_attends_to"].values.tolist() == [0, 1, 0]
    assert np.all(ds["attends_to"].values == [0, 1, 0]) and np.all(ds["branch_agrees"].values == 1)
    assert ds.attrs["success"] == 1 and ds.attrs["tie_rule"] == "round-off"
    # the asymmetry grows at rate ~ beta - 1 from 1e-12: z3^beta leaves the axis after t ~ 27.6/beta, so e(beta)
    # shrinks like 1/beta (measured 0.787, 0.303, 0.082: beta e ~ 21 ~ 0.75 ln(1e12)) and the runs end on the branch
    # to z1: at t = 5, |z3^beta - z3^inf| = 0.052, 0.0061, 0.00066, shrinking ~9x per 4x in beta
    sup = ds["sup_error"].values
    assert np.all(np.diff(sup) < 0) and 15 < 256 * sup[-1] < 25
    final = np.linalg.norm(ds["positions"].values[:, -1, 2] - ds["limit"].values[-1, 2], axis=-1)
    assert np.all(np.diff(final) < 0) and final[-1] < 1e-3
    # a rule wide enough to call the near tie a tie takes the symmetric branch, which no beta follows: refused
    wide = mf.hardmax_limit(near, t, betas=[16, 64, 256], tie_tolerance=1e-9)
    assert wide["limit_attends_to"].values.tolist() == [0, 1, -1]
    assert np.all(wide["branch_agrees"].values == 0)
    assert wide.attrs["branches_agree"] == 0 and wide.attrs["success"] == 0
    assert "limit claim does not hold" in wide.attrs["message"]


def test_hardmax_limit_reports_a_run_that_stopped_early(monkeypatch):
    """A run of the ladder that stops early (here: its simulate result cut after 4 of 11 outputs, as a run
    stopped by a step-size underflow is) gives success = 0 with the run's message, NaN where nothing was
    reached, and no sup, fit or branch that would need the missing outputs."""
    from meanfield.studies.open_problems import _hardmax_limit

    real = _hardmax_limit.simulate

    def stopping_at_beta_32(model, *args, **kwargs):
        run = real(model, *args, **kwargs)
        if getattr(model, "beta", None) == 32.0:
            run = run.isel(time=slice(0, 4))
            run.attrs.update(success=0, message="step size fell below the smallest step at t = 0.3")
        return run

    monkeypatch.setattr(_hardmax_limit, "simulate", stopping_at_beta_32)
    t = np.linspace(0.0, 1.0, 11)
    ds = mf.hardmax_limit(EXAMPLE_93, t, betas=[16.0, 32.0, 64.0])
    assert ds.attrs["success"] == 0 and ds.attrs["message"].startswith("a run stopped early: step size fell")
    assert np.all(np.isnan(ds["positions"].values[1, 4:])) and np.all(np.isfinite(ds["positions"].values[1, :4]))
    assert np.all(np.isfinite(ds["positions"].values[[0, 2]]))
    assert np.all(np.isnan(ds["sup_error"].values)) and np.isnan(ds.attrs["rate"])
    assert ds.attrs["branches_agree"] == 0 and ds.attrs["monotone"] == 0
    assert not ds["branch_agrees"].values.any()


def test_switch_then_sliding_has_the_exact_solution():
    # d = 1, Q = 1, K = -1, V = 1: S_ij = -z_i z_j. z1 -> z2 and z2 -> z1 (z1,2 = -+e^{-2t}); z3 heads for z1 and
    # solves z3' = -e^{-2t} - z3, z3 = e^{-t}(e^{-t} - 1/2), until z3 = 0 at t = ln 2, where the tie is attracting
    # (z3 > 0 heads for z1 < 0, z3 < 0 for z2 > 0): z3 slides at 0 with lambda_31 = lambda_32
    t = np.linspace(0.0, 3.0, 61)
    ds = mf.simulate(mf.HardmaxAttention(Q=I1, K=-I1, V=I1), np.array([[-1.0], [1.0], [0.5]]), t, rtol=1e-12,
                     atol=1e-14)
    u = np.exp(-t)
    exact = np.stack([-u**2, u**2, np.where(t < np.log(2), u * (u - 0.5), 0.0)], axis=1)
    assert ds.attrs["success"] == 1
    assert np.abs(ds["positions"].values[..., 0] - exact).max() < 1e-10


def test_attracting_tie_slides_and_is_the_limit():
    # d = 1, V = -I, z = (1, -2, 0): z3 > 0 is pushed back by z1, z3 < 0 by z2: Filippov sliding holds z3 = 0;
    # at finite beta z3 settles where e^{3 beta z} = (2 + z)/(1 - z), z ~ ln 2 / (3 beta)
    z0 = np.array([[1.0], [-2.0], [0.0]])
    selection = select(z0, I1, I1, -I1, 1e-9)
    assert selection.sliding.tolist() == [False, False, True]
    lam = selection.weights(z0)
    assert lam[2].sum() == pytest.approx(1, abs=1e-15) and lam[2] @ (-(z0[:, 0] - z0[2, 0])) == pytest.approx(0, abs=1e-14)
    ds = mf.hardmax_limit(z0, np.linspace(0.0, 3.0, 61), betas=[64, 128, 256, 512], V=-I1)
    assert np.abs(ds["limit"].values - z0).max() < 1e-12
    beta = ds["beta"].values
    # measured: beta e - ln2/3 = 0.116/beta
    assert np.all(np.abs(beta * ds["sup_error"].values - np.log(2) / 3) < 0.2 / beta)


def test_sliding_with_a_non_normal_value_matrix_holds_the_tie():
    # V = [[-1, .5], [.3, -.2]]: z3 = (0, 1/2) is pushed back to the axis from both sides (x-velocity -0.75
    # towards z1, +1.25 towards z2); the equivalent control is lambda = (5/8, 3/8), where the score rates agree
    V = np.array([[-1.0, 0.5], [0.3, -0.2]])
    z0 = np.array([[1.0, 1.0], [-1.0, 1.0], [0.0, 0.5]])
    selection = select(z0, np.eye(2), np.eye(2), V, 1e-9)
    lam = selection.weights(z0)
    assert np.allclose(lam[2], [0.625, 0.375, 0.0], atol=1e-14)
    ds = mf.simulate(mf.HardmaxAttention(V=V), z0, np.linspace(0.0, 1.0, 11), rtol=1e-12, atol=1e-14)
    assert ds.attrs["success"] == 1
    assert np.abs(ds["positions"].values[:, 2, 0]).max() < 1e-14


def test_sliding_that_ends_converges_to_the_limit():
    # V = [[-1, 1.5], [0, -1]]: z3 slides on the axis and leaves it when the equivalent control reaches the
    # edge of the simplex; (9.4) converges to the engine's run (measured 0.171, 0.058, 0.018)
    V = np.array([[-1.0, 1.5], [0.0, -1.0]])
    z0 = np.array([[1.0, 1.0], [-1.0, 1.0], [0.0, 0.5]])
    ds = mf.hardmax_limit(z0, np.linspace(0.0, 2.0, 201), betas=[64, 256, 1024], V=V)
    assert ds.attrs["success"] == 1 and ds.attrs["monotone"] == 1
    assert ds["sup_error"].values[-1] < 0.03


def test_generic_weights_converge_to_the_hardmax_run():
    rng = np.random.default_rng(4)
    d = 2
    Q, K, V = (np.eye(d) + 0.3 * rng.standard_normal((d, d)) for _ in range(3))
    z0 = rng.standard_normal((6, d))
    t = np.concatenate([[0.0], np.geomspace(1e-4, 3.0, 200)])
    ds = mf.hardmax_limit(z0, t, betas=[32, 128, 512], Q=Q, K=K, V=V)
    assert ds.attrs["success"] == 1
    sup = ds["sup_error"].values
    assert sup[-1] < sup[0] and sup[-1] < 0.05


def test_interrupted_hardmax_run_resumes_bit_for_bit(tmp_path):
    t = np.linspace(0.0, 5.0, 11)
    path = tmp_path / "run.nc"
    mf.simulate(mf.HardmaxAttention(), EXAMPLE_93, t[:6], checkpoint=path, checkpoint_interval=0)
    resumed = mf.simulate(mf.HardmaxAttention(), EXAMPLE_93, t, checkpoint=path, resume=True)
    straight = mf.simulate(mf.HardmaxAttention(), EXAMPLE_93, t)
    assert np.array_equal(resumed["positions"].values, straight["positions"].values)
    assert (resumed.attrs["nfev"], resumed.attrs["n_steps"]) == (straight.attrs["nfev"], straight.attrs["n_steps"])


def test_hyperplanes_refuses_a_run_of_94():
    ds = mf.simulate(mf.Attention(1.0, projection=False, rescaled=True, scores_at_z=True), EXAMPLE_93, [0.0, 1.0])
    with pytest.raises(ValueError, match="\\(9.4\\)"):
        mf.hyperplanes(ds)


def test_switching_accumulation_is_reported():
    stepper = FilippovStepper(I1, -I1, I1, rtol=1e-12, atol=1e-14, tie_tolerance=1e-9, max_switches=0)
    with pytest.raises(SwitchingAccumulation, match="Zeno"):
        stepper.step(0.0, np.array([[[-1.0], [1.0], [0.5]]]), 1.0)


def test_rescaled_scores_at_z_is_equation_94():
    rng = np.random.default_rng(0)
    V = np.array([[1.0, 0.3], [0.0, 0.5]])
    z = rng.standard_normal((1, 4, 2))
    model = mf.Attention(2.0, V=V, projection=False, rescaled=True, scores_at_z=True)
    s = 2.0 * z[0] @ z[0].T
    p = np.exp(s - s.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    expected = np.einsum("ij,ijk->ik", p, (z[0][None, :, :] - z[0][:, None, :]) @ V.T)
    got = model.particle_velocity(EuclideanGeometry(2), np.full((1, 4), 0.25), None)(1.7, z)
    assert np.abs(got[0] - expected).max() < 1e-14
    # (9.3) at t = 0 has the same scores, at t > 0 those of e^{tV} z
    paper1 = mf.Attention(2.0, V=V, projection=False, rescaled=True)
    assert np.allclose(mf.attention_matrix(paper1, z[0], t=0.0), p, atol=1e-15)
    assert not np.allclose(mf.attention_matrix(paper1, z[0], t=1.0), p, atol=1e-3)
    assert np.allclose(mf.attention_matrix(model, z[0], t=1.0), p, atol=1e-15)
    assert model.attrs["scores_at_z"] == 1 and paper1.attrs["scores_at_z"] == 0


@pytest.mark.parametrize("call, message", [
    (lambda: mf.Attention(1.0, projection=False, scores_at_z=True), "needs rescaled=True"),
    (lambda: mf.HardmaxAttention(tie_tolerance=0.1), "tie_tolerance"),
    (lambda: mf.HardmaxAttention(tie_tolerance=-1e-12), "tie_tolerance"),
    (lambda: mf.HardmaxAttention(tie_tolerance=float("nan")), "tie_tolerance"),
    (lambda: mf.HardmaxAttention(tie_tolerance=float("inf")), "tie_tolerance"),
    (lambda: mf.hardmax_limit(EXAMPLE_93, [0, 1], tie_tolerance=-1.0), "tie_tolerance"),
    (lambda: mf.HardmaxAttention(Q=np.eye(2), V=np.eye(3)), "same dimension"),
    (lambda: mf.simulate(mf.HardmaxAttention(), EXAMPLE_93, [0, 1], method="dopri5"), "own method"),
    (lambda: mf.simulate(mf.HardmaxAttention(), np.eye(2), [0, 1], domain="sphere"), "R\\^d"),
    (lambda: mf.simulate(mf.SelfAttention(1.0), np.zeros(4), [0, 1], method="filippov"), "method must be one of"),
    (lambda: mf.hardmax_limit(EXAMPLE_93, [0, 1], betas=[8]), "at least two"),
    (lambda: mf.hardmax_limit(EXAMPLE_93, [0, 1], betas=[8, 4]), "increasing"),
    (lambda: mf.hardmax_limit(EXAMPLE_93[0], [0, 1]), "shape \\(n, d\\)"),
])
def test_bad_input_is_refused_with_a_reason(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()

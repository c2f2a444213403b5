"""Paper 1 (arXiv 2305.05465): the hyperplane detector (Theorem 4.2), the polytope detector (Theorem 5.2)
and the hypothesis checks on (Q, K, V)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import meanfield as mf
from meanfield.studies import group_levels


def test_levels_of_constructed_coordinates_exact_count_and_residual(rng):
    exact = np.array([-2.0, 0.0, 3.0])
    labels = rng.integers(0, 3, 60)
    labels[:3] = [0, 1, 2]
    noise = 1e-6 * rng.uniform(-1, 1, 60)
    a = exact[labels] + noise
    count, levels, found, residual, scale = group_levels(a, tolerance=1e-3)
    assert count == 3
    np.testing.assert_array_equal(found, labels)
    assert scale == pytest.approx(np.max(a) - np.min(a), rel=0, abs=0)
    # levels are the group means; the residual is max |a_i - mean of its group| / scale, computed here directly
    means = np.array([a[labels == k].mean() for k in range(3)])
    np.testing.assert_allclose(levels[:3], means, rtol=0, atol=1e-15)
    assert residual == pytest.approx(np.max(np.abs(a - means[labels])) / scale, rel=1e-12)
    assert np.all(np.isnan(levels[3:]))
    # single linkage in 1-D: the same count as number_of_clusters on the points (a_i) of R^1
    assert mf.number_of_clusters(a[:, None], 1e-3 * scale, domain="euclidean") == 3


def test_levels_stack_and_scale_argument():
    a = np.array([[0.0, 1.0, 1.0 + 1e-9], [5.0, 5.0, 5.0]])
    count, _, _, residual, scale = group_levels(a, tolerance=1e-3)
    np.testing.assert_array_equal(count, [2, 1])
    np.testing.assert_array_equal(scale, [1.0 + 1e-9, 5.0])  # the width includes the level 0
    # a smaller reference scale turns the gap of 1e-9 into a separate level
    assert group_levels(a[0], tolerance=1e-3, scale=1e-7)[0] == 3
    assert residual[1] == 0.0


def _non_normal_good_V():
    S = np.array([[1.0, 0.6, 0.3], [0.2, 1.0, -0.4], [0.5, 0.1, 1.0]])
    return S, S @ np.diag([1.0, -0.5, 0.3]) @ np.linalg.inv(S)


def test_hyperplanes_of_constructed_tokens_use_the_left_eigenvector(rng):
    S, V = _non_normal_good_V()
    levels = np.array([-1.5, 0.0, 2.5])
    labels = np.resize([0, 1, 2], 30)
    a = levels[labels] + 1e-7 * rng.uniform(-1, 1, 30)
    g = 10.0 * rng.standard_normal((30, 2)) @ S[:, 1:].T  # far along the hyperplanes (span of φ_2, φ_3)
    phi = S[:, 0] / np.linalg.norm(S[:, 0])
    z = a[:, None] * phi + g
    out = mf.hyperplanes(z, V)
    assert int(out["n_hyperplanes"]) == 3
    np.testing.assert_allclose(out["levels"].values, levels, rtol=0, atol=1e-7)
    np.testing.assert_array_equal(out["label"].values, labels)
    assert float(out["residual"]) < 1e-7 / 4.0 * 2  # noise 1e-7 against the scale 4
    assert bool(out["theorem_holds"])
    # the normal is the left eigenvector: orthogonal to the other eigenvectors, not parallel to φ_1
    normal = np.array(json.loads(out.attrs["normal"]))
    np.testing.assert_allclose(normal @ S[:, 1:], 0.0, atol=1e-12)
    assert abs(normal @ phi) < 0.99
    # the orthogonal projection on φ_1 sees no levels at all: the spread along G leaks into it
    assert group_levels(z @ phi, tolerance=1e-3)[0] > 10


def test_hyperplanes_flags_a_middle_level_away_from_zero():
    out = mf.hyperplanes(np.array([[-1.0, 0.0], [0.5, 3.0], [2.0, 1.0]]), np.diag([1.0, 0.5]))
    assert int(out["n_hyperplanes"]) == 3
    assert not bool(out["middle_levels_at_zero"]) and not bool(out["theorem_holds"])


def test_two_symmetric_tokens_follow_their_exact_scalar_dynamics():
    """V = diag(λ_1, -1/2), Q = K = I, tokens (±s, y) with one y: the exponents of P are
    β(e^{2λ_1 t} a_i a_j + e^{-t} y²), so P_21 = 1/(1 + e^{2β e^{2λ_1 t} s²}), y stays put and
    ṡ = -2λ_1 s / (1 + exp(2β e^{2λ_1 t} s²)): two hyperplanes at ±lim s, found by solve_ivp independently."""
    from scipy.integrate import solve_ivp
    from scipy.special import expit

    lam, beta, s0, y = 0.8, 1.5, 0.3, 0.7
    V = np.diag([lam, -0.5])
    times = np.linspace(0.0, 10.0, 11)
    ds = mf.simulate(mf.Attention(beta, None, None, V, projection=False, rescaled=True),
                     np.array([[-s0, y], [s0, y]]), times, rtol=1e-11, atol=1e-14)
    out = mf.hyperplanes(ds)
    exact = solve_ivp(lambda t, s: -2 * lam * s * expit(-2 * beta * np.exp(2 * lam * t) * s**2),
                      (0.0, 10.0), [s0], t_eval=times, rtol=1e-12, atol=1e-15, method="DOP853").y[0]
    # the level pair is ±s(t) at every time (both integrators at rtol ≤ 1e-11; measured 6e-12)
    np.testing.assert_allclose(out["levels"].values, np.stack([-exact, exact], axis=1), rtol=0, atol=1e-10)
    np.testing.assert_array_equal(out["n_hyperplanes"].values, 2)
    np.testing.assert_allclose(ds.positions.values[..., 1], y, rtol=0, atol=1e-13)
    assert np.array(json.loads(out.attrs["normal"])) @ [1.0, 0.0] == pytest.approx(1.0, rel=1e-14)


def test_random_good_triple_gives_at_most_three_hyperplanes_converging_at_rate_lambda1():
    Q, K, V = mf.random_good_triple(2, seed=3)
    assert mf.check_good_triple(Q, K, V).holds
    z0 = np.random.default_rng(3).standard_normal((16, 2))
    times = np.linspace(0.0, 14.0, 15)
    ds = mf.simulate(mf.Attention(1.0, Q, K, V, projection=False, rescaled=True), z0, times, rtol=1e-10,
                     atol=1e-13)
    out = mf.hyperplanes(ds)
    assert out.attrs["hypotheses_hold"] == 1
    final = out.isel(time=-1)
    assert int(final["n_hyperplanes"]) <= 3 and bool(final["theorem_holds"])
    a = out["coordinate"].values
    # ȧ_i = λ_1 Σ_j P_ij (a_j - a_i): the largest coordinate decreases, the smallest increases
    assert np.all(np.diff(a.max(axis=1)) <= 1e-12) and np.all(np.diff(a.min(axis=1)) >= -1e-12)
    r = out["residual"].values
    assert r[-1] < 1e-5  # measured 8.2e-7 (relative to the initial width)
    assert np.all(np.diff(r[7:]) < 0)
    # ȧ_i ≈ λ_1 (level - a_i) once attention is concentrated: rate λ_1 = 1 (measured 1 - 7.5e-7 over t ∈ [7, 14])
    rate = -np.polyfit(times[7:], np.log(r[7:]), 1)[0]
    assert rate == pytest.approx(1.0, abs=1e-4)


def test_unrescaled_run_is_mapped_to_rescaled_tokens():
    Q, K, V = mf.random_good_triple(3, seed=1)
    x0 = np.random.default_rng(0).standard_normal((8, 3))
    times = np.linspace(0.0, 4.0, 5)
    z = mf.hyperplanes(mf.simulate(mf.Attention(2.0, Q, K, V, projection=False, rescaled=True), x0, times,
                                   rtol=1e-11, atol=1e-13))
    x = mf.hyperplanes(mf.simulate(mf.Attention(2.0, Q, K, V, projection=False), x0, times, rtol=1e-11,
                                   atol=1e-13))
    # two integrations (z, and x mapped back by e^{-tV}) agree to the integrators' tolerance (measured 3.6e-11)
    np.testing.assert_allclose(x["coordinate"].values, z["coordinate"].values, rtol=0, atol=1e-9)
    assert x.attrs["beta"] == 2.0 and x.attrs["hypotheses_hold"] == 1


def test_polytope_vertices_of_constructed_tokens(rng):
    S = np.array([[1.0, 0.3, 0.4], [-0.2, 1.0, 0.1], [0.3, -0.5, 1.0]])
    V = S @ np.diag([1.0, 1.0, -0.5]) @ np.linalg.inv(S)  # paranormal, not normal
    corners = np.array([[2.0, 0.0], [0.0, 2.0], [-1.0, -1.0], [0.2, 0.3], [0.0, 0.0]])  # 3 vertices, interior, 0
    labels = np.resize(np.arange(5), 25)
    c = corners[labels] + 1e-7 * rng.uniform(-1, 1, (25, 2))
    z = c @ S[:, :2].T + rng.standard_normal((25, 1)) * 5.0 @ S[:, 2:].T
    out = mf.polytope_vertices(z, V)
    assert int(out["n_points"]) == 5 and int(out["n_vertices"]) == 3
    basis = np.array(json.loads(out.attrs["basis"]))
    # the cluster points, mapped back to R^d, are the constructed F-components (basis-independent check)
    found = out["points"].values @ basis.T
    expected = corners @ S[:, :2].T
    def rows_in_order(p):
        return p[np.lexsort(np.round(p, 5).T[::-1])]

    np.testing.assert_allclose(rows_in_order(found), rows_in_order(expected), rtol=0, atol=1e-6)
    flags = {tuple(np.round(p, 4)): (v, o) for p, v, o in zip(found, out["vertex"].values, out["at_origin"].values)}
    assert flags[tuple(np.round(expected[3], 4))] == (False, False)  # the interior point
    assert flags[(0.0, 0.0, 0.0)] == (False, True)  # the origin, inside the triangle
    assert float(out["residual"]) < 1e-6


def test_polytope_vertices_of_the_identity_case_match_scipy_convex_hull():
    """V = I, Q = K = I (Theorem 3.1, F = R^2): the limit points are vertices of their hull; the
    detector's vertex flags agree with Qhull's on the final points."""
    from scipy.spatial import ConvexHull

    z0 = np.random.default_rng(5).standard_normal((20, 2))
    ds = mf.simulate(mf.Attention(4.0, projection=False, rescaled=True), z0, np.linspace(0.0, 12.0, 7),
                     rtol=1e-10, atol=1e-13)
    out = mf.polytope_vertices(ds, np.eye(2)).isel(time=-1)
    count = int(out["n_points"])
    points = out["points"].values[:count] @ np.array(json.loads(out.attrs["basis"])).T
    assert 3 <= count < 20 and float(out["residual"]) < 1e-5  # measured 2e-6
    flags = np.zeros(count, dtype=bool)
    flags[ConvexHull(points).vertices] = True
    np.testing.assert_array_equal(out["vertex"].values[:count], flags)
    assert flags.all()


def test_check_good_triple_rejects_bad_triples_with_reasons():
    assert mf.check_good_triple(None, None, np.diag([2.0, -1.0])).holds
    rotation = mf.check_good_triple(None, None, [[0.1, -2.0], [2.0, 0.1]])
    assert not rotation.holds and "is not real" in rotation.failures[0]
    negative = mf.check_good_triple(None, None, np.diag([-2.0, 1.0]))
    assert negative.conditions["dominant_positive"] is False
    assert "largest modulus, -2, is not positive" in negative.failures[0]
    for V in (np.diag([1.0, -1.0]), np.eye(2)):
        check = mf.check_good_triple(None, None, V)
        assert check.conditions == {**check.conditions, "dominant_simple": False}
        assert "is not simple" in check.failures[0]
    flipped = mf.check_good_triple(None, -np.eye(2), np.diag([2.0, 1.0]))
    assert flipped.conditions["positive_attention"] is False
    with pytest.raises(ValueError, match=r"fail the theorem's hypotheses: beta <Q phi_1, K phi_1>"):
        flipped.require()
    assert not mf.check_good_triple(None, None, np.diag([2.0, 1.0]), beta=0.0).conditions["positive_attention"]


def test_check_mixed_triple_rejects_bad_triples_with_reasons():
    assert mf.check_mixed_triple(None, None, np.diag([1.0, 1.0, -0.5])).holds
    jordan = mf.check_mixed_triple(None, None, [[1.0, 1.0], [0.0, 1.0]])
    assert not jordan.conditions["dominant_semisimple"] and "Jordan block" in jordan.failures[0]
    tied = mf.check_mixed_triple(None, None, np.diag([1.0, 1.0, -1.0]))
    assert not tied.conditions["rest_smaller"] and "same modulus" in tied.failures[0]
    saddle = mf.check_mixed_triple(np.diag([1.0, -1.0, 1.0]), None, np.diag([1.0, 1.0, 0.5]))
    assert not saddle.conditions["positive_attention"] and "dominant eigenspace F" in saddle.failures[0]


@pytest.mark.parametrize("d", [1, 2, 3])
def test_random_instances_satisfy_their_hypotheses(d):
    for seed in range(5):
        Q, K, V = mf.random_good_triple(d, seed=seed, dominant=2.0)
        check = mf.check_good_triple(Q, K, V, beta=0.5)
        assert check.holds and check.dominant == pytest.approx(2.0, rel=1e-12)
        if d >= 2:
            for normal in (True, False):
                Q, K, V = mf.random_mixed_triple(d, 2, seed=seed, normal=normal)
                mixed = mf.check_mixed_triple(Q, K, V)
                assert mixed.holds and mixed.multiplicity == 2
                assert np.allclose(V, V.T) == normal or d == 2  # d = 2, k = 2: V = I is symmetric either way


@pytest.mark.parametrize("call, match", [
    (lambda: mf.hyperplanes(np.ones((4, 2)), np.ones((2, 3))), r"V must be a square \(d, d\) matrix, got shape"),
    (lambda: mf.hyperplanes(np.ones((4, 2)), np.eye(2), Q=np.eye(3)), r"Q is 3 × 3 but the dimension is d = 2"),
    (lambda: mf.hyperplanes(np.ones((4, 2)), np.diag([1.0, np.nan])), r"V must be finite"),
    (lambda: mf.hyperplanes(np.full((4, 2), np.inf), np.eye(2) * [1, 0.5]), r"positions must be finite"),
    (lambda: mf.hyperplanes(np.ones((4, 3)), np.diag([1.0, 0.5])), r"positions have dimension d = 3 but V is 2 × 2"),
    (lambda: mf.hyperplanes(np.ones((4, 2)), np.diag([1.0, 0.5]), tolerance=2.0), r"tolerance must lie in \(0, 1\)"),
    (lambda: mf.hyperplanes(np.ones((4, 2)), [[0.0, -1.0], [1.0, 0.0]]), r"V has no leading direction: .*not real"),
    (lambda: mf.hyperplanes(np.ones((4, 2)), np.eye(2)), r"2-dimensional eigenspace; use polytope_vertices"),
    (lambda: mf.hyperplanes(np.ones((4, 2))), r"V is required"),
    (lambda: mf.hyperplanes(np.ones((4, 2)), np.diag([1.0, 0.5]), beta=-1.0), r"beta must be finite and >= 0"),
    (lambda: mf.polytope_vertices(np.ones((4, 2)), [[1.0, 1.0], [0.0, 1.0]]), r"acts as lambda I: .*Jordan"),
    (lambda: mf.check_good_triple(None, None, "V"), r"V must be a square matrix, got str"),
    (lambda: mf.random_good_triple(0), r"d must be >= 1"),
    (lambda: mf.random_good_triple(2, ratio=(0.5, 1.5)), r"ratio must be \(low, high\) with 0 <= low <= high < 1"),
    (lambda: mf.random_mixed_triple(2, 3), r"multiplicity must be <= d = 2, got 3"),
])
def test_bad_inputs_are_refused_naming_the_argument(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_dataset_of_another_domain_is_refused():
    ds = mf.simulate(mf.SelfAttention(1.0), np.array([[1.0, 0.0], [0.0, 1.0]]), [0.0, 0.1])
    with pytest.raises(ValueError, match=r"paper 1's dynamics on R\^d .* domain 'sphere'"):
        mf.hyperplanes(ds, np.diag([1.0, 0.5]))


# ---------------------------------------------------------------- validation/hyperplanes.py: runner and checks
def _validation_script():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "validation" / "hyperplanes.py"
    spec = importlib.util.spec_from_file_location("validation_hyperplanes", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _square(k):
    return {"summary": f"squared {k}", "value": k * k}


def _slow_square(k):
    import time

    time.sleep(0.6)
    return _square(k)


def _fails(k):
    raise ValueError(f"case {k} is broken")


@pytest.mark.parametrize("jobs", [1, 2])
def test_validation_runner_returns_results_in_order_with_progress_lines(jobs, capsys):
    script = _validation_script()
    cases = [script.Case(f"case {k}", _slow_square if k == 0 else _square, (k,)) for k in range(5)]
    progress = script.Progress(len(cases), start=0.0, heartbeat=0.2)
    results = script.run_cases(cases, jobs, progress)
    assert [r["value"] for r in results] == [0, 1, 4, 9, 16]
    lines = capsys.readouterr().out.splitlines()
    # one flushed line per finished case counting done/total, and the running case listed while it is slow
    assert sorted(line.split("] ", 1)[1] for line in lines if "squared" in line) == \
        sorted(f"case {k}: squared {k}" for k in range(5))
    assert any(line.startswith("[5/5,") for line in lines)
    assert any("running: case 0 (for" in line for line in lines)


def test_validation_runner_raises_the_error_of_a_case_in_a_worker():
    script = _validation_script()
    cases = [script.Case("good case", _square, (1,)), script.Case("bad case", _fails, (2,))]
    with pytest.raises(RuntimeError, match=r"(?s)bad case failed in a worker process.*ValueError: case 2 is broken"):
        script.run_cases(cases, 2, script.Progress(len(cases), start=0.0))


def test_validation_checks_pass_and_fail_with_exit_status(monkeypatch, tmp_path, no_figure_files, capsys):
    """The script's own checks on one cheap instance per d (--quick with a reduced grid) and one section 5 case:
    status 0 and PASS; with a residual tolerance below the measured residual (~1e-7), status 1 and FAIL."""
    script = _validation_script()
    monkeypatch.setattr(script, "QUICK_BETAS", (0.5,))
    monkeypatch.setattr(script, "QUICK_SEEDS", (0,))
    monkeypatch.setattr(script, "mixed_cases", lambda: [("V = diag(1, 1, -1/2), Q = K = I", np.eye(3), np.eye(3),
                                                         np.diag([1.0, 1.0, -0.5]))])
    assert script.main(["--quick", "--jobs", "2", "--output-dir", str(tmp_path)]) == 0
    text = (tmp_path / "hyperplanes_checks.txt").read_text()
    assert "PASS" in text and " NO" not in text
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["hyperplanes_mixed.png", "hyperplanes_theorem42.png"]
    monkeypatch.setattr(script, "RESIDUAL_TOLERANCE", 1e-12)
    assert script.main(["--quick", "--jobs", "1", "--output-dir", str(tmp_path)]) == 1
    assert "FAIL" in (tmp_path / "hyperplanes_checks.txt").read_text()
    capsys.readouterr()
    with pytest.raises(SystemExit):
        script.main(["--jobs", "0", "--output-dir", str(tmp_path)])
    assert "--jobs must be >= 1" in capsys.readouterr().err

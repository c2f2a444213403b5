"""Paper 2's phase diagram: the Theorem 6.8 curve against quadrature, the diagram's statistics, the CLI."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import quad

import meanfield as mf
from meanfield.cli import main
from meanfield.studies.clustering._phase_diagram import crossing_time, phase_diagram_block


def _rate(beta: float, n: int, normalized: bool):
    """γ' of (6.9)/(6.10) written literally from the paper."""
    if normalized:
        return lambda g: (2 * np.exp(beta * g) * (1 - g) * ((n - 1) * g + 1)
                          / (np.exp(beta) + (n - 1) * np.exp(beta * g)))
    return lambda g: 2 / n * np.exp(beta * g) * (1 - g) * ((n - 1) * g + 1)


@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("n, delta", [(2, 1e-3), (32, 1e-3), (8, 1e-6), (32, 0.3)])
def test_curve_equals_quadrature_of_the_separable_ode(normalized, n, delta):
    # t* = ∫_0^{1-δ} dg / γ'(g) (separable ODE), by adaptive Gauss–Kronrod at epsrel 1e-13.
    betas = np.array([0.0, 0.1, 1.0, 4.0, 9.0, 15.0])
    t_star = mf.equiangular_curve(betas, n, delta, normalized=normalized)
    for beta, t in zip(betas, t_star):
        rate = _rate(beta, n, normalized)
        reference, error = quad(lambda g: 1 / rate(g), 0, 1 - delta, epsabs=0, epsrel=1e-13, limit=500)
        # measured: ≤ 1.2e-12 relative (DOP853 at rtol 1e-12 in u = log(1 - γ))
        assert t == pytest.approx(reference, rel=1e-10, abs=0)


def test_beta_zero_closed_form():
    # β = 0: γ' = (2/n)(1 - γ)((n - 1)γ + 1) ⇒ γ(t) = (e^{2t} - 1)/(e^{2t} + n - 1), t* = ½ log((n - (n - 1)δ)/δ)
    for n in (2, 5, 32):
        times = np.linspace(0, 6, 13)
        exact = np.expm1(2 * times) / (np.exp(2 * times) + n - 1)
        for normalized in (True, False):
            gamma = mf.equiangular_gamma(0.0, n, times, normalized=normalized)
            np.testing.assert_allclose(gamma, exact, rtol=1e-11, atol=1e-14)  # measured ≤ 2e-13
            for delta in (1e-3, 0.5):
                t_star = mf.equiangular_curve(0.0, n, delta, normalized=normalized)
                assert t_star == pytest.approx(0.5 * np.log((n - (n - 1) * delta) / delta), rel=1e-11)


def test_curve_is_monotone_in_beta_and_gamma_in_time():
    # SA's rate 2(1-g)((n-1)g+1)/(e^{β(1-g)} + n - 1) decreases in β, USA's (2/n)e^{βg}(...) increases:
    # t* strictly increases (SA) / decreases (USA) with β; γ increases in t and stays below 1.
    betas = np.linspace(0, 12, 9)
    assert np.all(np.diff(mf.equiangular_curve(betas, 32)) > 0)
    assert np.all(np.diff(mf.equiangular_curve(betas, 32, normalized=False)) < 0)
    gamma = mf.equiangular_gamma(9.0, 32, np.linspace(0, 180, 37))  # t*(9) = 178.7 for δ = 1e-3
    assert gamma[0] == 0 and np.all(np.diff(gamma) > 0) and gamma[-1] < 1
    # the curve is where γ crosses 1 - δ
    t_star = mf.equiangular_curve(9.0, 32, 1e-3)
    assert mf.equiangular_gamma(9.0, 32, [0.0, t_star])[-1] == pytest.approx(1 - 1e-3, abs=1e-11)
    assert mf.equiangular_curve([1.0, 2.0], 4, delta=1.5).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("kwargs, match", [
    ({"delta": 0.0}, r"delta must lie in \(0, 2\), got 0.0"),
    ({"delta": 2.0}, r"delta must lie in \(0, 2\), got 2.0"),
    ({"n": 1}, "n must be >= 2, got 1"),
    ({"betas": [1.0, -1.0]}, "betas must be finite and >= 0"),
    ({"betas": [np.nan]}, "betas must be finite and >= 0"),
])
def test_curve_rejects_bad_input(kwargs, match):
    args = {"betas": [1.0], "n": 8, "delta": 1e-3, **kwargs}
    with pytest.raises(ValueError, match=match):
        mf.equiangular_curve(args["betas"], args["n"], args["delta"])


@pytest.fixture(scope="module")
def tiny():
    """d = 2, n = 8, 64 systems, three β, t ≤ 20, δ = 0.05 (about 0.5 s serially)."""
    return mf.phase_diagram(2, 8, [0.5, 2.0, 6.0], np.linspace(0, 20, 21), 64, delta=0.05, scheduler="serial",
                            progress=False, per_system=True, batch=16)


def test_diagram_dims_values_and_stderr(tiny):
    assert tiny["probability"].dims == ("beta", "time")
    assert tiny["probability"].shape == (3, 21)
    assert tiny["critical_time"].dims == ("beta",)
    np.testing.assert_array_equal(tiny["beta"], [0.5, 2.0, 6.0])
    for name in ("probability", "fraction_clustered"):
        assert float(tiny[name].min()) >= 0 and float(tiny[name].max()) <= 1
    fractions = tiny["pair_fraction"].transpose("beta", "seed", "time").values
    np.testing.assert_allclose(tiny["probability"], fractions.mean(axis=1), rtol=1e-14)
    np.testing.assert_allclose(tiny["probability_stderr"], fractions.std(axis=1, ddof=1) / np.sqrt(64), rtol=1e-12)
    clustered = tiny["clustered"].transpose("beta", "seed", "time").values
    np.testing.assert_array_equal(clustered, fractions == 1)
    np.testing.assert_allclose(tiny["fraction_clustered"], clustered.mean(axis=1), rtol=1e-14)
    assert tiny.attrs["systems"] == 64 and tiny.attrs["d"] == 2 and tiny.attrs["n"] == 8
    np.testing.assert_allclose(tiny["critical_time"], mf.equiangular_curve([0.5, 2.0, 6.0], 8, 0.05), rtol=1e-14)


def test_diagram_at_time_zero_matches_the_exact_pair_probability(tiny):
    # Two iid uniform points on S¹ satisfy cos(θ_1 - θ_2) ≥ 1 - δ with probability arccos(1 - δ)/π.
    # The indicators of distinct unordered pairs are pairwise independent (rotation invariance), so the
    # mean pair fraction over S systems has variance p(1 - p)/(S n(n-1)/2). Measured: 2.3 σ below.
    p = np.arccos(1 - 0.05) / np.pi
    sigma = np.sqrt(p * (1 - p) / (64 * 28))
    at_zero = tiny["probability"].isel(time=0).values
    assert np.all(at_zero == at_zero[0])  # the same initial tokens at every β
    assert abs(at_zero[0] - p) < 4 * sigma


def test_small_beta_clusters_completely(tiny):
    # β = 0.5 on S¹: every system has collapsed to one cluster by t = 20 (t*(0.5) = 2.6)
    final = tiny.sel(beta=0.5).isel(time=-1)
    assert float(final["probability"]) == 1.0
    assert float(final["fraction_clustered"]) == 1.0
    assert float(final["clusters_mean"]) == 1.0
    # large β stays split for the whole window (the metastable zone of Figure 3)
    late = tiny.sel(beta=6.0).isel(time=-1)
    assert 0 < float(late["probability"]) < 1 and float(late["clusters_mean"]) > 2


def test_a_system_rerun_alone_gives_the_same_statistics(tiny):
    times = np.linspace(0, 20, 21)
    for s in (5, 37):
        alone = phase_diagram_block(2.0, np.array([s]), d=2, n=8, times=times, delta=0.05)
        row = tiny.sel(beta=2.0, seed=s)
        np.testing.assert_array_equal(alone["pair_fraction"].values[0], row["pair_fraction"].values)
        np.testing.assert_array_equal(alone["clusters"].values[0], row["clusters"].values)


def test_high_dimension_crossing_time_approaches_the_curve():
    # d ≫ n: initial tokens are nearly orthogonal (Theorem 6.9), so P = 1/2 is crossed near t*(β).
    # Measured |crossing - t*|: 0.02-0.03 at d = 64, ≤ 0.008 at d = 1024 (n = 4, 32 systems, Δt = 0.05).
    betas = [0.5, 2.0]
    times = np.linspace(0, 8, 161)
    t_star = mf.equiangular_curve(betas, 4)
    gaps = []
    for d in (64, 1024):
        ds = mf.phase_diagram(d, 4, betas, times, 32, scheduler="serial", progress=False)
        assert np.all(ds["fraction_clustered"].isel(time=-1) == 1)
        gaps.append(np.abs(crossing_time(ds).values - t_star))
    assert np.all(gaps[1] < 0.02)
    assert np.all(gaps[1] < gaps[0])


def test_ginibre_weights_are_recorded_and_reproducible():
    ds = mf.phase_diagram(3, 6, [1.0], np.linspace(0, 1, 3), 4, matrices="ginibre", seed=3, scheduler="serial",
                          progress=False)
    Q, K, V = mf.studies.ginibre_matrices(3, 3)
    np.testing.assert_array_equal(ds["Q"], Q)
    np.testing.assert_array_equal(ds["V"], V)
    assert ds["K"].shape == (3, 3) and "Ginibre" in ds.attrs["model"]


@pytest.mark.parametrize("kwargs, match", [
    ({"d": 1}, "d must be >= 2, got 1"),
    ({"n": 1}, "n must be >= 2, got 1"),
    ({"systems": 0}, "systems must be >= 1, got 0"),
    ({"delta": 0.0}, r"delta must lie in \(0, 2\), got 0.0"),
    ({"delta": 2.5}, r"delta must lie in \(0, 2\), got 2.5"),
    ({"betas": []}, "betas must be a non-empty 1-D sequence"),
    ({"betas": [1.0, -0.5]}, "betas must be finite and >= 0"),
    ({"betas": [1.0, np.inf]}, "betas must be finite and >= 0"),
    ({"betas": [1.0, 1.0]}, "betas must be distinct"),
    ({"t": [0.0, 2.0, 1.0]}, "t must be strictly increasing"),
    ({"t": [1.0, 2.0]}, r"t must start at 0 \(the uniform initial tokens\), got t\[0\] = 1.0"),
    ({"matrices": "gaussian"}, "matrices must be None, one of .* or a tuple \\(Q, K, V\\), got 'gaussian'"),
    ({"draw": "per_system"}, "draw='per_system' draws random weights; it needs matrices"),
    ({"matrices": "goe", "draw": "sometimes"}, "draw must be one of"),
    ({"matrices": (np.eye(2), np.ones((2, 3)), None)}, r"matrices\[1\] \(K\) must be a square"),
    ({"matrices": (np.eye(3), None, None)}, r"matrices\[0\] \(Q\) is 3 x 3, but the tokens have d = 2"),
    ({"matrices": (None, None, np.full((2, 2), np.nan))}, r"matrices\[2\] \(V\) must be finite"),
    ({"matrices": (None, None, None), "draw": "per_beta"}, "given matrices .* are used as they are"),
    ({"batch": 0}, "batch must be >= 1, got 0"),
])
def test_diagram_rejects_bad_input(kwargs, match):
    args = {"d": 2, "n": 4, "betas": [1.0], "t": [0.0, 1.0], "systems": 2, **kwargs}
    with pytest.raises(ValueError, match=match):
        mf.phase_diagram(args.pop("d"), args.pop("n"), args.pop("betas"), args.pop("t"), args.pop("systems"),
                         scheduler="serial", progress=False, **args)


def test_cli_writes_netcdf_and_figures(tmp_path, capsys):
    out = tmp_path / "pd.nc"
    code = main(["phase-diagram", "--dimension", "2", "--particles", "6", "--systems", "8", "--betas", "0.5:4:2", "--t-final", "2",
                 "--n-times", "5", "--trajectory-times", "1", "2", "--scheduler", "serial", "--no-progress",
                 "--output", str(out)])
    assert code == 0
    assert out.exists() and (tmp_path / "pd.png").exists() and (tmp_path / "pd_trajectories.png").exists()
    import xarray as xr

    with xr.open_dataset(out) as ds:
        assert ds["probability"].shape == (2, 5)
        np.testing.assert_array_equal(ds["beta"], [0.5, 4.0])
    printed = capsys.readouterr().out
    assert "t* (Gamma)" in printed and f"wrote {out}" in printed


@pytest.mark.parametrize("argv, message", [
    (["--betas", "1:2"], "--betas must be 'start:stop:count'"),
    (["--betas", "a,b"], "--betas must be 'start:stop:count'"),
    (["--betas", "1:2:0"], "--betas count must be >= 1"),
    (["--output", "/nonexistent-dir/x.nc"], "in a directory that does not exist"),
    (["--output", "x.png"], "--output 'x.png' must end in .nc"),
])
def test_cli_refuses_bad_arguments_before_computing(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["phase-diagram", "--systems", "100000", "--scheduler", "serial", *argv])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("options, message", [
    ({"rtol": -1.0}, "rtol must be finite and > 0"),
    ({"rtol": float("nan")}, "rtol must be finite and > 0"),
    ({"atol": 0.0}, "atol must be finite and > 0"),
])
def test_tolerances_are_checked_before_any_task_runs(options, message):
    with pytest.raises(ValueError, match=message):
        mf.phase_diagram(2, 4, [1.0], [0.0, 1.0], 2, scheduler="serial", progress=False, **options)


def test_trajectories_start_from_the_diagram_tokens_and_follow_simulate():
    ds = mf.phase_diagram_trajectories(betas=(0.5, 9.0), times=(1.0, 20.0), n=8, seed=4, system=2)
    assert ds["positions"].dims == ("beta", "time", "particle") and ds["positions"].shape == (2, 3, 8)
    x0 = mf.studies.phase_diagram_tokens(4, [2], 2, 8)[0]
    start = np.exp(1j * np.arctan2(x0[:, 1], x0[:, 0]))
    np.testing.assert_allclose(np.exp(1j * ds["positions"].values[:, 0]), np.broadcast_to(start, (2, 8)), atol=1e-15,
                               rtol=0)
    direct = mf.simulate(mf.SelfAttention(9.0), np.arctan2(x0[:, 1], x0[:, 0]), [0.0, 1.0, 20.0], rtol=1e-9, atol=1e-11)
    np.testing.assert_array_equal(ds["positions"].sel(beta=9.0).values, direct["positions"].values)
    spread = np.abs(np.exp(1j * ds["positions"].sel(beta=0.5).values).mean(axis=-1))
    assert spread[-1] > 1 - 1e-6 > spread[0]
    assert len(mf.plot.phase_diagram_trajectories(ds).axes) == 4


@pytest.mark.parametrize("kwargs, match", [
    ({"betas": []}, "betas must be a non-empty sequence"),
    ({"betas": [-1.0]}, "betas must be a non-empty sequence of finite values >= 0"),
    ({"times": [2.0, 1.0]}, "times must be a non-empty increasing sequence of times > 0"),
    ({"times": [0.0, 1.0]}, "times must be a non-empty increasing sequence of times > 0"),
    ({"n": 1}, "n must be >= 2, got 1"),
])
def test_trajectories_reject_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        mf.phase_diagram_trajectories(**kwargs)


def test_trajectory_figure_refuses_other_datasets():
    with pytest.raises(ValueError, match="needs a meanfield.phase_diagram_trajectories Dataset"):
        mf.plot.phase_diagram_trajectories(mf.phase_diagram(2, 4, [1.0], [0.0, 1.0], 2, scheduler="serial",
                                                            progress=False))


def test_several_dimensions_are_one_sweep_with_the_panels_of_single_runs(tmp_path, capsys, monkeypatch):
    # d = [2, 3, 12] with n = 8: one sweep whose panels are the single-d diagrams bit for bit (same systems),
    # each in the representation that costs least (angles, points, Gram), recorded over d.
    betas, times = [0.5, 6.0], np.linspace(0, 6, 7)
    both = mf.phase_diagram([2, 3, 12], 8, betas, times, 12, scheduler="serial", progress=False)
    assert both["probability"].dims == ("d", "beta", "time") and both["critical_time"].dims == ("beta",)
    assert both["representation"].values.tolist() == ["angles", "points", "gram"]
    for d in (2, 3, 12):
        alone = mf.phase_diagram(d, 8, betas, times, 12, scheduler="serial", progress=False)
        assert alone.attrs["d"] == d and "d" not in alone.dims
        for name in ("probability", "clusters_mean", "fraction_clustered"):
            assert np.array_equal(both[name].sel(d=d).values, alone[name].values)
    figure = mf.plot.phase_diagram(both)
    assert sum(ax.get_title().startswith("d = ") for ax in figure.axes) == 3
    with pytest.raises(ValueError, match="one at a time"):
        mf.phase_diagram([3, 4], 4, [1.0], [0.0, 1.0], 2, matrices="ginibre", scheduler="serial", progress=False)
    with pytest.raises(ValueError, match="dimensions d must be distinct"):
        mf.phase_diagram([3, 3], 4, [1.0], [0.0, 1.0], 2, scheduler="serial", progress=False)
    with pytest.raises(ValueError, match="'angles' representation is for d = 2"):
        mf.phase_diagram([2, 3], 4, [1.0], [0.0, 1.0], 2, representation="angles", scheduler="serial",
                         progress=False)
    monkeypatch.chdir(tmp_path)
    code = main(["phase-diagram", "--dimension", "2,12", "--particles", "6", "--systems", "4", "--betas", "1,4",
                 "--t-final", "2", "--n-times", "3", "--trajectory-times", "1", "--scheduler", "serial",
                 "--no-progress"])
    assert code == 0
    names = {path.name for path in tmp_path.iterdir()}
    stem = "phase_diagram_d2-12_n6_s4_beta1-4x2_t2"
    assert {f"{stem}.nc", f"{stem}.png"} <= names
    printed = capsys.readouterr().out
    assert "d = 2 (angles" in printed and "d = 12 (gram" in printed


def test_representations_give_the_same_diagram_at_tight_tolerance():
    # The representation changes the state, not the dynamics: d = 12, n = 6, all three where they apply agree.
    betas, times = [1.0, 5.0], np.linspace(0, 8, 9)
    kwargs = dict(delta=0.05, rtol=1e-10, atol=1e-12, scheduler="serial", progress=False, per_system=True)
    points = mf.phase_diagram(12, 6, betas, times, 16, representation="points", **kwargs)
    gram = mf.phase_diagram(12, 6, betas, times, 16, representation="gram", **kwargs)
    assert points.attrs["representation"] == "points" and gram.attrs["representation"] == "gram"
    assert np.array_equal(points["pair_fraction"].values, gram["pair_fraction"].values)
    assert 0 < float(points["probability"].mean()) < 1

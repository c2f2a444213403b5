"""Kuramoto theory (self-consistency, K_c) and the bifurcation study r∞(K)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from scipy.integrate import quad
from scipy.optimize import brentq

import meanfield as mf
from meanfield.studies import kuramoto_run


def test_locked_state_quadrature_reproduces_ott_antonsen():
    # Student t with one degree of freedom is the Lorentzian, but goes through the general
    # σ = 0 self-consistency quadrature: it must give √(1 - 2γ/K) (quad at 1e-13; measured 4e-15)
    gamma = 0.6
    ks = np.array([0.5, 1.3, 2.0, 4.0, 9.0])
    general = mf.kuramoto_theory(ks, scipy.stats.t(1, 0, gamma))
    exact = np.sqrt(np.clip(1 - 2 * gamma / ks, 0, None))
    np.testing.assert_allclose(general, exact, atol=1e-10)


def test_gaussian_locked_state_against_independent_root():
    s, coupling = 0.5, 1.2
    law = scipy.stats.norm(0, s)

    def residual(r):
        return coupling * quad(lambda p: np.cos(p) ** 2 * law.pdf(coupling * r * np.sin(p)), -np.pi / 2,
                               np.pi / 2)[0] - 1

    assert mf.kuramoto_theory(coupling, law) == pytest.approx(brentq(residual, 1e-6, 1.0), abs=1e-9)
    assert mf.kuramoto_critical_coupling(law) == pytest.approx(2 / (np.pi * law.pdf(0)), rel=1e-14)


def _sakaguchi_by_integral(coupling: float, noise: float, law) -> float:
    """r from ρ_ω(θ) ∝ ∫_0^{2π} exp(-ωs/σ - (Kr/σ)(cos(θ+s) - cos θ)) ds, midpoint quantiles in ω."""
    omega = law.ppf((np.arange(400) + 0.5) / 400)
    omega = omega[np.abs(omega) < 3.0]  # beyond, |ω|/σ = 30 makes the s-integrand a boundary layer
    weight = 1.0 / 400
    theta = 2 * np.pi * np.arange(128) / 128
    s, ws = np.polynomial.legendre.leggauss(200)
    s, ws = np.pi * (s + 1), np.pi * ws

    def consistency(r: float) -> float:
        a = coupling * r / noise
        exponent = -omega[:, None, None] * s / noise - a * (np.cos(theta[:, None] + s) - np.cos(theta)[:, None])
        rho = np.exp(exponent) @ ws
        return float(np.sum(weight * (rho @ np.cos(theta)) / rho.sum(axis=-1)))

    return brentq(lambda r: consistency(r) - r, 1e-3, 1 - 1e-9, xtol=1e-12)


def test_noisy_lorentzian_against_the_density_integral():
    law, coupling, noise = scipy.stats.cauchy(0, 0.5), 2.5, 0.1
    # the integral route drops |ω| > 3 (mass 0.106, whose mean cos θ is ≈ K r σ/(2ω²) ≲ 0.01) and uses
    # midpoint quantiles: agreement to ~1e-3 is what it can give (measured 6.6e-4)
    assert mf.kuramoto_theory(coupling, law, noise) == pytest.approx(_sakaguchi_by_integral(coupling, noise, law),
                                                                     abs=2e-3)


def test_critical_couplings_and_noise_shift():
    gamma, noise = 0.6, 0.1
    lorentz = scipy.stats.cauchy(0, gamma)
    assert mf.kuramoto_critical_coupling(lorentz, noise) == pytest.approx(2 * (gamma + noise), rel=1e-12)
    assert mf.kuramoto_critical_coupling(lorentz) == pytest.approx(2 * gamma, rel=1e-12)
    assert mf.kuramoto_critical_coupling(None, noise) == 2 * noise
    below, above = mf.kuramoto_theory([1.39, 1.45], lorentz, noise)
    assert below == 0 and 0 < above < 0.25  # measured 0.198 just above K_c = 1.4
    # with noise the Lorentzian is not on the Ott–Antonsen manifold: √(1 - 2(γ+σ)/K) is only close
    # (measured 0.8185 against 0.8062 at K = 4)
    assert abs(mf.kuramoto_theory(4.0, lorentz, noise) - np.sqrt(1 - 2 * (gamma + noise) / 4.0)) < 0.02


def test_particle_bifurcation_dims_and_values():
    ds = mf.kuramoto_bifurcation([0.4, 3.0], "lorentzian", width=0.5, n=400, t_final=20, average_window=8,
                                 seeds=2, scheduler="serial", progress=False)
    assert ds["order_parameter"].dims == ("coupling", "seed", "time")
    assert ds["r_inf"].dims == ("coupling", "seed") and ds["r_mean"].dims == ("coupling",)
    assert ds.attrs["critical_coupling"] == pytest.approx(1.0)
    np.testing.assert_allclose(ds["r_theory"].values, [0.0, np.sqrt(1 - 1 / 3.0)])
    # n = 400: incoherent r ~ n^{-1/2} = 0.05 (measured 0.046–0.055 over seed pairs); the locked r
    # within finite-n fluctuations (std 0.02, mean of 17 samples × 2 seeds; measured |dev| ≤ 5e-4)
    assert ds["r_mean"].values[0] < 0.15
    assert abs(ds["r_mean"].values[1] - ds["r_theory"].values[1]) < 0.02
    # a run is reproducible from its seed
    again = kuramoto_run(3.0, 1, law="lorentzian", width=0.5, n=400, t_final=20, average_window=8)
    assert float(again["r_inf"]) == float(ds["r_inf"].sel(coupling=3.0, seed=1))


def test_pde_bifurcation_with_noise_matches_theory():
    ds = mf.kuramoto_bifurcation([1.0, 2.0], scipy.stats.norm(0, 0.5), noise=0.25, engine="pde", grid=64,
                                 t_final=30, average_window=5, frequency_nodes=24, scheduler="serial")
    assert "seed" not in ds.dims and ds["r_inf"].dims == ("coupling",)
    # K = 1 < K_c = 1.33: r decays to 0 (slowly near K_c: measured mean 6.3e-4 over t ∈ [25, 30]);
    # K = 2: spectral PDE with 24 Gauss–Hermite nodes is within 1e-6 of the theory (measured 4e-8)
    assert ds["r_inf"].values[0] < 2e-3
    assert ds["r_inf"].values[1] == pytest.approx(ds["r_theory"].values[1], abs=1e-6)
    assert ds.attrs["engine"] == "pde"


def test_an_unknown_engine_is_refused():
    with pytest.raises(ValueError, match="engine must be one of"):
        mf.kuramoto_bifurcation([1.0], engine="ode", scheduler="serial")


def test_recurrence_time_of_quantile_nodes():
    from meanfield.studies.kuramoto._bifurcation import recurrence_time

    nodes, _ = mf.Kuramoto(frequencies=scipy.stats.cauchy(0, 0.5)).frequency_quadrature(64)
    # central spacing of midpoint quantiles of a Lorentzian ≈ πγ/m, so T_rec ≈ 2m/γ = 256
    assert recurrence_time(nodes) == pytest.approx(256, rel=0.01)
    assert recurrence_time([0.0]) == np.inf


def test_plot_bifurcation(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    ds = mf.kuramoto_bifurcation([0.5, 2.0], "lorentzian", width=0.5, n=200, t_final=10, average_window=4,
                                 seeds=1, scheduler="serial")
    fig = mf.plot.bifurcation(ds)
    fig.savefig(tmp_path / "b.png")
    assert (tmp_path / "b.png").stat().st_size > 0
    assert len(fig.axes[0].lines) >= 2
    with pytest.raises(TypeError, match="kuramoto_bifurcation Dataset"):
        mf.plot.bifurcation([])


def test_bad_input():
    with pytest.raises(ValueError, match="couplings must be a non-empty 1-D sequence"):
        mf.kuramoto_bifurcation([], scheduler="serial")
    with pytest.raises(ValueError, match="couplings must be a non-empty 1-D sequence of finite K >= 0"):
        mf.kuramoto_bifurcation([-1.0], scheduler="serial")
    with pytest.raises(ValueError, match="frequencies must be one of"):
        mf.kuramoto_bifurcation([1.0], "uniform", scheduler="serial")
    with pytest.raises(ValueError, match="width and separation are given by the law itself"):
        mf.kuramoto_bifurcation([1.0], scipy.stats.cauchy(0, 1), width=2.0, scheduler="serial")
    with pytest.raises(ValueError, match="width must be finite and > 0"):
        mf.kuramoto_bifurcation([1.0], "gaussian", width=0.0, scheduler="serial")
    with pytest.raises(ValueError, match=r"engine must be one of \('particles', 'pde', 'ott-antonsen'\), got 'ode'"):
        mf.kuramoto_bifurcation([1.0], engine="ode", scheduler="serial")
    with pytest.raises(ValueError, match=r"average_window must lie in \(0, t_final = 10.0\]"):
        mf.kuramoto_bifurcation([1.0], t_final=10.0, average_window=20.0, scheduler="serial")
    with pytest.raises(ValueError, match="noise must be finite and >= 0"):
        mf.kuramoto_bifurcation([1.0], noise=-0.1, scheduler="serial")
    with pytest.raises(ValueError, match="seed is required for engine='particles'"):
        kuramoto_run(1.0)
    with pytest.raises(ValueError, match="symmetric about its median"):
        mf.kuramoto_theory(1.0, scipy.stats.gamma(2.0))
    with pytest.raises(ValueError, match="too small for the noisy self-consistency quadrature"):
        mf.kuramoto_theory(1.0, scipy.stats.norm(0, 1), noise=1e-4)
    with pytest.raises(ValueError, match="coupling must be finite and >= 0"):
        mf.kuramoto_theory(np.nan, None)
    with pytest.raises(TypeError, match="frequencies must be None, a number, a frozen scipy.stats law"):
        mf.kuramoto_critical_coupling("cauchy")


def test_cli_single_run_and_diagram(tmp_path, capsys):
    from meanfield.cli import main

    out = tmp_path / "run.nc"
    assert main(["kuramoto", "--coupling", "2", "--width", "0.5", "--particles", "300", "--t-final", "10",
                 "--average-window", "4", "--output", str(out)]) == 0
    assert out.exists() and out.with_suffix(".png").exists()
    assert "theory 0.7071" in capsys.readouterr().out
    diagram = tmp_path / "diagram.nc"
    assert main(["kuramoto", "--couplings", "0.5,2", "--width", "0.5", "--particles", "200", "--t-final", "10",
                 "--average-window", "4", "--systems", "1", "--scheduler", "serial", "--no-progress",
                 "--output", str(diagram)]) == 0
    assert diagram.with_suffix(".png").exists()
    import xarray as xr

    with xr.open_dataset(diagram) as ds:
        assert ds["r_inf"].dims == ("coupling", "seed")


def test_cli_refuses_bad_output_before_computing(tmp_path):
    from meanfield.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["kuramoto", "--output", str(tmp_path / "missing" / "x.nc")])
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit):
        main(["kuramoto", "--output", str(tmp_path / "x.txt")])
    with pytest.raises(SystemExit):
        main(["kuramoto", "--couplings", "1:2"])
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("options, error, message", [
    ({"n": 0}, ValueError, "n must be >= 2"),
    ({"n": 2.5}, TypeError, "n must be an integer"),
    ({"rtol": -1.0}, ValueError, "rtol must be finite and > 0"),
    ({"dt": 0.0}, ValueError, "dt must be finite and > 0"),
    ({"grid": 2}, ValueError, "grid must be >= 8"),
    ({"frequency_nodes": 0}, ValueError, "frequency_nodes must be >= 1"),
])
def test_settings_are_checked_before_any_task_runs(options, error, message):
    with pytest.raises(error, match=message):
        mf.kuramoto_bifurcation([1.0], "lorentzian", width=0.5, seeds=1, scheduler="serial", progress=False,
                                t_final=1.0, average_window=0.5, **options)


def test_pde_points_say_whether_their_grid_resolved_them():
    # noiseless locked oscillators concentrate into Diracs: above K_c = 1 the finite-volume tail grows past 1e-2
    # (measured 0.96 at K = 2 by t = 10 on 32 cells), below it stays at the perturbation's level (1.5e-4)
    with pytest.warns(RuntimeWarning, match="under-resolved"):
        ds = mf.kuramoto_bifurcation([0.5, 2.0], "lorentzian", width=0.5, engine="pde", scheduler="serial",
                                     progress=False, t_final=10.0, average_window=5.0, grid=32)
    np.testing.assert_array_equal(ds["resolved"].values, [1, 0])
    assert ds["resolution_tail"].values[0] < 1e-3 < 0.5 < ds["resolution_tail"].values[1]


def test_reduced_engine_diagram_is_one_batch_on_the_theory():
    ks = np.linspace(0, 3, 7)
    ds = mf.kuramoto_bifurcation(ks, "lorentzian", width=0.5, engine="ott-antonsen", t_final=60,
                                 average_window=20)
    assert ds["order_parameter"].dims == ("coupling", "time") and "seed" not in ds.dims
    assert ds.attrs["engine"] == "ott-antonsen" and ds.attrs["theory"] == "kuramoto_theory"
    assert np.all(ds["success"].values == 1)
    # away from K_c = 2γ = 1 the amplitude relaxes at rate |K/2 − γ| ≥ 0.25 from 0.05: e^{-10} of it is left by
    # t = 40 (measured |r∞ − theory| ≤ 5e-7 at K = 0.5, ≤ 2e-11 above K_c); at K_c itself ż = −(K/2)|z|²z
    # decays like t^{-1/2}: r(60) = (1/0.05² + 60)^{-1/2} = 0.0471 (critical slowing, not an error)
    off = np.abs(ks - 1.0) > 0.4
    np.testing.assert_allclose(ds["r_inf"].values[off], ds["r_theory"].values[off], rtol=0, atol=1e-6)
    z = ds["order_parameter"].sel(coupling=1.0)
    exact = (1 / 0.05 ** 2 + z.time.values) ** -0.5
    np.testing.assert_allclose(z.values, exact, rtol=1e-8)


def test_reduced_engine_with_phase_lag_and_a_bimodal_law():
    lagged = mf.kuramoto_bifurcation([3.0], "lorentzian", width=0.5, phase_lag=0.5, engine="ott-antonsen")
    assert float(lagged["r_inf"][0]) == pytest.approx(np.sqrt(1 - 1 / (3 * np.cos(0.5))), abs=1e-9)
    assert float(lagged["r_theory"][0]) == pytest.approx(np.sqrt(1 - 1 / (3 * np.cos(0.5))), abs=1e-12)
    bimodal = mf.kuramoto_bifurcation([2.5, 4.5], "bimodal", width=1.0, separation=0.8, engine="ott-antonsen",
                                      t_final=200, average_window=50)
    # the self-consistency theory does not cover a bimodal law: NaN and a pointer to what does
    assert np.all(np.isnan(bimodal["r_theory"].values)) and np.isnan(bimodal.attrs["critical_coupling"])
    assert bimodal.attrs["theory"].startswith("none:") and "mf.bimodal_boundaries" in bimodal.attrs["theory"]
    # below the saddle-node (3.1706) incoherence; above the pitchfork (3.28) the one stable synchronised branch
    branches = mf.kuramoto_branches(mf.Kuramoto(frequencies=mf.bimodal_lorentzian(0.8, 1.0)), [2.5, 4.5],
                                    periodic=False)
    top = branches.where((branches.point_coupling == 4.5) & (branches.stable == 1) & (branches.r > 0),
                         drop=True)
    assert float(bimodal["r_inf"][0]) < 1e-8
    assert float(bimodal["r_inf"][1]) == pytest.approx(float(top.r[0]), abs=1e-9)
    assert bimodal.attrs["law"] == "bimodal" and bimodal.attrs["separation"] == 0.8


def test_plot_bifurcation_with_branches(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    ks = np.linspace(2.5, 4.5, 5)
    ds = mf.kuramoto_bifurcation(ks, "bimodal", width=1.0, separation=0.8, engine="ott-antonsen")
    branches = mf.kuramoto_branches(mf.Kuramoto(frequencies=mf.bimodal_lorentzian(0.8, 1.0)), ks,
                                    periodic=False)
    fig = mf.plot.bifurcation(ds, branches=branches)
    fig.savefig(tmp_path / "b.png")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "stationary states, stable" in labels and "fold" in labels
    assert not any(label.startswith("theory") for label in labels)  # no theory curve for a bimodal law


def test_cli_bimodal_diagram_by_the_reduced_engine(tmp_path, capsys):
    from meanfield.cli import main
    import xarray as xr

    out = tmp_path / "bimodal.nc"
    assert main(["kuramoto", "--couplings", "2.5:4.5:5", "--law", "bimodal", "--width", "1",
                 "--separation", "0.8", "--engine", "ott-antonsen", "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "incoherence loses stability at K = 3.28," in printed and "one batch" in printed
    assert out.with_suffix(".png").exists()
    with xr.open_dataset(out) as ds:
        assert ds.attrs["engine"] == "ott-antonsen" and ds.attrs["separation"] == 0.8
    lagged = tmp_path / "lagged.nc"
    assert main(["kuramoto", "--coupling", "3", "--width", "0.5", "--phase-lag", "0.5", "--engine",
                 "ott-antonsen", "--output", str(lagged)]) == 0
    assert f"theory {np.sqrt(1 - 1 / (3 * np.cos(0.5))):.4f}" in capsys.readouterr().out


@pytest.mark.parametrize("options", [["--separation", "1"], ["--law", "bimodal"]])
def test_cli_separation_goes_with_the_bimodal_law(tmp_path, options, capsys):
    from meanfield.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["kuramoto", *options, "--output", str(tmp_path / "x.nc")])
    assert exit_info.value.code == 2
    assert "--separation goes with --law bimodal" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())

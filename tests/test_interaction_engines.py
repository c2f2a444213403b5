"""Interaction through every engine: the particle paths agree, compare, checkpoint and resume, the command
line, the resolution of non-smooth kernels, and bad input refused before any work."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import meanfield as mf
from conftest import CheckpointStop
from meanfield.cli import main
from solvers import UnderResolvedError


@pytest.mark.parametrize("kernel, normalized", [
    ("-exp(2*t)/2", False),
    ("-exp(2*t)/2", True),
    (mf.Kernel.fourier([0.0, -0.5, 0.3, -0.1]), False),
    (mf.Kernel.fourier([0.0, -0.5, -0.1]), True),   # W' = -1 - 0.8t < 0 on [-1, 1]
], ids=["exp", "exp-normalised", "daido", "daido-normalised"])
def test_the_particle_paths_on_the_circle_agree(kernel, normalized, rng):
    model = mf.Interaction(kernel, potential=mf.Potential.fourier([0.0, 0.2j]), normalized=normalized)
    theta = rng.uniform(0, 2 * np.pi, (2, 300))
    weights = np.full((2, 300), 1 / 300)
    geometry = mf.Circle(8).geometry
    direct = model.particle_velocity(geometry, weights, None, path="direct")(0.0, theta)
    for path in ("fourier", "nufft") if model.kernel.fourier_harmonics is not None else ("nufft",):
        other = model.particle_velocity(geometry, weights, None, path=path, accuracy=1e-10)(0.0, theta)
        # exact (fourier) or truncated and transformed to the requested 1e-10 of the velocity's scale (nufft; the
        # quadrature's multipliers carry 1e-12 of λ_0 each, so much less is not reachable by truncation)
        assert np.max(np.abs(other - direct)) < 1e-9 * np.max(np.abs(direct)), path


def test_the_morse_kernel_has_no_nufft_truncation_on_the_circle():
    # its velocity harmonics k Ŵ_k decay only like 1/k (a kink of e^{-r/ℓ} at r = 0): the NUFFT path is refused
    model = mf.Interaction(mf.Kernel.morse(1.0, 1.0, 0.5, 0.3))
    with pytest.raises(ValueError, match="path='direct'"):
        model.particle_velocity(mf.Circle(8).geometry, np.full((1, 300), 1 / 300), None, path="nufft")
    assert model.particle_velocity(mf.Circle(8).geometry, np.full((1, 300), 1 / 300), None).path == "direct"


def test_particle_velocity_is_the_density_velocity_of_the_nodes():
    # X at the nodes of a density is the particle velocity of its quadrature measure Σ ρ_j w_j δ_{x_j}
    model = mf.Interaction(mf.Kernel.gaussian(0.7), potential="-0.5*t")
    sphere = mf.Sphere(7)
    rho = mf.perturbed_uniform(sphere, amplitude=0.3, seed=2)
    at_nodes = model.velocity(rho)
    weights = (rho.values * sphere.weights).reshape(1, -1)
    points = sphere.points.reshape(1, -1, 3)
    particles = model.particle_velocity(sphere.geometry, weights, None, path="direct")(0.0, points)
    np.testing.assert_allclose(at_nodes.reshape(1, -1, 3), particles, rtol=0, atol=1e-14)


@pytest.mark.parametrize("kernel", ["-(1-t)**1.5", "sqrt(1-t)", "acos(t)", "(1+t)**2.5"])
def test_kernels_defined_only_on_the_interval_stay_finite_at_round_off(kernel, rng):
    # <x, x> and <x, -x> of unit vectors are ±1 only to round-off; a kernel defined on [-1, 1] alone must not see more
    x = rng.standard_normal((200, 3))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    x = np.concatenate([x, -x[:20]])  # antipodal pairs too
    model = mf.Interaction(kernel)
    velocity = model.velocity(x)
    assert np.all(np.isfinite(velocity)) and np.isfinite(mf.energy(model, x))


def test_one_harmonic_kernels_take_the_moebius_flow_on_the_circle_only(rng):
    model = mf.Interaction("-t")
    assert mf.simulate(model, rng.uniform(0, 6, 50), [0, 0.5]).attrs["method"] == "moebius"
    x = rng.standard_normal((50, 3))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    assert mf.simulate(model, x, [0, 0.5]).attrs["method"] == "dopri5"
    with pytest.raises(ValueError, match="integrates angles on the circle"):
        mf.simulate(model, x, [0, 0.5], method="moebius")


def test_growth_rate_degrees():
    model = mf.Interaction("-exp(2*t)/2")
    assert model.growth_rate(-3) == model.growth_rate(3)  # on S¹ the wavenumber's sign does not matter
    with pytest.raises(ValueError, match="degree must be >= 0"):
        model.growth_rate(np.array([-1, 3]), 3)
    with pytest.raises(TypeError, match="degree must be an integer"):
        model.growth_rate(2.5, 3)


def test_particles_and_the_pde_agree_through_compare():
    model = mf.Interaction(mf.Kernel.fourier([0.0, -0.5, 0.25]), potential=mf.Potential.fourier([0.0, 0.1]))
    rho0 = mf.von_mises(mf.Circle(256), 0.0, 2.0)
    t = np.linspace(0, 1, 3)
    pde = mf.solve(model, rho0, t, method="spectral")
    particles = mf.simulate(model, mf.sample(rho0, 4000, seed=3, method="quantile"), t)
    assert particles.attrs["path"] == "fourier"
    gap = mf.compare(pde, particles)
    # quantile sampling: W₁ of order 1/n at the start, and the flows stay together
    assert float(gap.wasserstein.max()) < 2e-3
    with pytest.raises(ValueError, match="model"):
        mf.compare(pde, mf.simulate(mf.Interaction("-t"), mf.sample(rho0, 100, seed=3), t))


def test_riesz_kernels_spectral_says_under_resolved_and_finite_volume_stays_positive():
    model = mf.Interaction(mf.Kernel.riesz(1.0) - 0.5 * mf.Kernel.riesz(3.0))
    rho0 = mf.perturbed_uniform(mf.Sphere(15), amplitude=0.5, seed=4)
    with pytest.raises(UnderResolvedError, match="kernel is under-resolved.*degree 11"):
        mf.solve(model, rho0, [0, 1.0], method="spectral")
    ds = mf.solve(model, rho0, np.linspace(0, 2.0, 5), method="finite_volume")
    assert ds.attrs["success"] and float(ds.density.min()) >= 0
    assert 0 < ds.attrs["kernel_tail"] < 1 and ds.attrs["kernel_quadrature_nodes"] > 0


def test_an_interaction_run_resumes_bit_for_bit(tmp_path, stop_after_checkpoint_writes):
    model = mf.Interaction("-exp(2*t)/2", potential="-0.3*t", noise=0.05)
    rho0 = mf.perturbed_uniform(mf.Circle(64), amplitude=0.2, seed=1)
    t = np.linspace(0, 1.0, 6)
    full = mf.solve(model, rho0, t, method="spectral")
    path = tmp_path / "run.nc"
    stop_after_checkpoint_writes(3)
    with pytest.raises(CheckpointStop):
        mf.solve(model, rho0, t, method="spectral", checkpoint=path, checkpoint_interval=0)
    stop_after_checkpoint_writes.disarm()
    resumed = mf.solve(model, rho0, t, method="spectral", checkpoint=path, resume=True)
    for name in ("density", "energy", "free_energy", "mass"):
        np.testing.assert_array_equal(resumed[name].values, full[name].values, err_msg=name)
    other = mf.Interaction("-exp(2*t)/2", potential="-0.4*t", noise=0.05)
    with pytest.raises(ValueError, match="potential"):
        mf.solve(other, rho0, t, method="spectral", checkpoint=path, resume=True)


def test_a_usa_checkpoint_without_free_energy_resumes(tmp_path, stop_after_checkpoint_writes):
    # results written before free energies were recorded: the resumed run computes them for the kept outputs
    model = mf.SelfAttention(2.0, normalized=False, noise=0.1)
    rho0 = mf.perturbed_uniform(mf.Circle(64), amplitude=0.2, seed=1)
    t = np.linspace(0, 0.5, 6)
    full = mf.solve(model, rho0, t, method="spectral")
    path = tmp_path / "old.nc"
    stop_after_checkpoint_writes(3)
    with pytest.raises(CheckpointStop):
        mf.solve(model, rho0, t, method="spectral", checkpoint=path, checkpoint_interval=0)
    stop_after_checkpoint_writes.disarm()
    with xr.open_dataset(path) as partial:
        old = partial.drop_vars("free_energy").load()
    from meanfield.io._files import write_netcdf
    write_netcdf(old, path)
    resumed = mf.solve(model, rho0, t, method="spectral", checkpoint=path, resume=True)
    np.testing.assert_array_equal(resumed.density.values, full.density.values)
    np.testing.assert_allclose(resumed.free_energy.values, full.free_energy.values, rtol=1e-14)


@pytest.mark.parametrize("coarse, fine", [(mf.Sphere(7), mf.Sphere(15)),
                                          (mf.ZonalSphere(5, 16, nodes="cells"), mf.ZonalSphere(5, 32, nodes="cells"))],
                         ids=["sphere", "zonal"])
def test_finite_volume_gibbs_states_of_a_potential_converge_at_second_order(coarse, fine):
    # W = 0, U = -x_d, σ = 1/2: ρ_∞ ∝ e^{2 x_d}, reached by t = 8 to e^{-8σ(d-1)}; the finite-volume steady state is
    # off by O(h²) in L¹ (ratio 4 per halving: measured 3.4 on S², 4.1 on the zonal S⁴)
    model = mf.Interaction(0.0, potential="-t", noise=0.5)
    errors = []
    for domain in (coarse, fine):
        ds = mf.solve(model, mf.uniform(domain), [0.0, 8.0], method="finite_volume")
        gap = np.abs(ds.density.values[-1] - mf.von_mises(domain, None, 2.0).values)
        errors.append(float(np.sum(gap * domain.weights)))
    assert 3.0 < errors[0] / errors[1] < 5.0, errors


def test_solve_command_with_a_kernel(tmp_path, capsys, no_figure_files):
    out = tmp_path / "kernel.nc"
    argv = ["solve", "--kernel", "-exp(2*t)/2", "--potential", "-0.5*t", "--grid", "64", "--t-final", "0.5",
            "--n-times", "3", "--no-progress", "--output", str(out)]
    assert main(argv) == 0
    with xr.open_dataset(out) as ds:
        assert ds.attrs["model"] == "Interaction" and ds.attrs["kernel"] == "-exp(2*t)/2"
        assert ds.attrs["potential"] == "zonal about e_d: -0.5*t" and "free_energy" in ds
    assert "Interaction W = -exp(2*t)/2" in capsys.readouterr().out
    assert main(["solve", "--kernel", "riesz:s=1", "--domain", "sphere", "--lmax", "7", "--method", "finite_volume",
                 "--t-final", "0.2", "--n-times", "2", "--no-progress", "--output", str(tmp_path / "r.nc")]) == 0


@pytest.mark.parametrize("argv, message", [
    (["--kernel", "__import__('os').system('true')"], "uses the call of"),
    (["--kernel", "open('x')"], "uses the call of 'open'"),
    (["--kernel", "t", "--beta", "2"], "--beta describes self-attention"),
    (["--potential", "-t"], "--potential applies with --kernel only"),
    (["--kernel", "riesz:q=1"], "riesz takes s"),
])
def test_solve_command_refuses_kernels_and_writes_nothing(argv, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["solve", *argv, "--no-progress", "--output", str(tmp_path / "x.nc")])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("make, message", [
    (lambda: mf.Interaction("t", noise=-1.0), "noise must be finite and >= 0"),
    (lambda: mf.Interaction("t", normalized=1), "normalized must be True or False"),
    (lambda: mf.Interaction("exp(800*t)"), "must be finite on"),
    (lambda: mf.Interaction(mf.Kernel.exponential(800.0)), "beyond the largest double"),
    (lambda: mf.Interaction(lambda t: np.ones(3)), "shaped like its argument"),
    (lambda: mf.Interaction("t", potential=mf.Potential.harmonics(np.ones(4))), "\\(lmax\\+1\\)\\(lmax\\+2\\)/2"),
    (lambda: mf.Potential.zonal("t", axis=[1.0, 1.0]), "unit vector"),
])
def test_bad_models_are_refused_by_name(make, message):
    with pytest.raises((ValueError, TypeError), match=message):
        make()


def test_a_normalised_exponential_beyond_e709_runs_in_its_scale():
    # SA-type normalisation divides the scale e^β out: β = 800 on particles, no overflow
    model = mf.Interaction(-mf.Kernel.exponential(800.0) / 800.0, normalized=True)
    theta = np.linspace(0, 0.5, 20)
    ds = mf.simulate(model, theta, [0, 0.01])
    reference = mf.simulate(mf.SelfAttention(800.0), theta, [0, 0.01])
    assert float(np.max(np.abs(ds.positions - reference.positions))) < 1e-13

"""Bad input to the particle engine: each a clear error naming the argument."""

from __future__ import annotations

import numpy as np
import pytest

import meanfield as mf


@pytest.fixture
def x_sphere():
    return mf.particles.uniform_sphere(6, 3, seed=0)


def test_points_off_the_sphere_rejected_unless_renormalize(x_sphere):
    off = x_sphere * 1.01
    # read by its shape, the array might hold 6 systems of 3 angles: domain='circle' is offered before renormalize
    with pytest.raises(ValueError, match=r"^x0 must lie on the unit sphere S\^2: max \| \|x_i\| - 1 \| = 0.01 .*; the "
                                         r"plain array of shape \(6, 3\) was read by its shape as 6 points of R\^3: if "
                                         r"its rows are systems of angles, pass domain='circle'; if they are points "
                                         r"meant for S\^2, normalise them \(x / \|x\|\) or pass renormalize=True"):
        mf.simulate(mf.SelfAttention(1.0), off, [0, 1])
    ds = mf.simulate(mf.SelfAttention(1.0), off, [0, 1], renormalize=True)
    np.testing.assert_allclose(ds["positions"].values[0], x_sphere, atol=1e-15)
    assert ds.attrs["renormalize"] == 1


def test_wrong_shapes(x_sphere):
    with pytest.raises(ValueError, match=r"x0 on the sphere domain must have shape \(n, d\) or \(systems, n, d\)"):
        mf.simulate(mf.SelfAttention(1.0), x_sphere[None, None], [0, 1])
    with pytest.raises(ValueError, match=r"x0 on the circle domain must have shape \(n,\) or \(systems, n\)"):
        mf.simulate(mf.Kuramoto(), np.zeros((2, 3, 4)), [0, 1])
    with pytest.raises(ValueError, match="Kuramoto particles are angles on the circle"):
        mf.simulate(mf.Kuramoto(), x_sphere, [0, 1], domain="sphere")
    with pytest.raises(ValueError, match="frequencies must have shape"):
        import scipy.stats

        mf.simulate(mf.Kuramoto(frequencies=scipy.stats.norm()), np.zeros(5), [0, 1], frequencies=np.zeros(3))
    with pytest.raises(ValueError, match="x0 must be finite"):
        mf.simulate(mf.SelfAttention(1.0), np.array([0.0, np.nan]), [0, 1])


def test_beta_negative_and_bad_model():
    with pytest.raises(ValueError, match="beta must be finite and >= 0, got -1"):
        mf.SelfAttention(-1.0)
    with pytest.raises(TypeError, match="model must be a meanfield model"):
        mf.simulate("SA", np.zeros(3), [0, 1])


@pytest.mark.parametrize("t", [[0, 1, 1], [1, 0], [0.0]])
def test_times_must_increase(t):
    with pytest.raises(ValueError, match="t must"):
        mf.simulate(mf.SelfAttention(1.0), np.zeros(3), t)


def test_method_options():
    x = np.linspace(0, 1, 4)
    with pytest.raises(ValueError, match="method must be one of"):
        mf.simulate(mf.SelfAttention(1.0), x, [0, 1], method="rk45")
    with pytest.raises(ValueError, match="dt must be a positive time step for method='rk4', got None"):
        mf.simulate(mf.SelfAttention(1.0), x, [0, 1], method="rk4")
    with pytest.raises(ValueError, match="noise = 0.1 > 0 needs method='euler-maruyama'"):
        mf.simulate(mf.SelfAttention(1.0, noise=0.1), x, [0, 1], method="dopri5")
    with pytest.raises(ValueError, match="rtol must be finite and > 0"):
        mf.simulate(mf.SelfAttention(1.0), x, [0, 1], rtol=0)
    with pytest.raises(ValueError, match="path must be one of"):
        mf.simulate(mf.SelfAttention(1.0), x, [0, 1], path="fmm")
    with pytest.raises(ValueError, match=r"accuracy must lie in \[1e-15, 1\)"):
        mf.simulate(mf.SelfAttention(1.0), x, [0, 1], accuracy=0.0)
    with pytest.raises(TypeError, match="seed must be an int"):
        mf.simulate(mf.SelfAttention(1.0), x, [0, 1], seed="abc")


def test_failed_run_is_reported_not_raised():
    ds = mf.simulate(mf.SelfAttention(1.0), np.linspace(0, 3, 5), np.linspace(0, 10, 11), max_steps=3)
    assert ds.attrs["success"] == 0 and "max_steps" in ds.attrs["message"]
    assert ds.sizes["time"] < 11


def test_batches_seeds_and_netcdf(tmp_path):
    x0 = np.stack([mf.particles.uniform_sphere(8, 3, seed=s) for s in range(4)])
    ds = mf.simulate(mf.SelfAttention(2.0), x0, [0, 1, 2])
    assert ds["positions"].dims == ("system", "time", "particle", "component")
    assert ds["energy"].dims == ("system", "time")
    # each system of the batch equals its own run
    one = mf.simulate(mf.SelfAttention(2.0), x0[2], [0, 1, 2])
    np.testing.assert_allclose(ds["positions"].values[2], one["positions"].values, atol=1e-7)
    ds.to_netcdf(tmp_path / "run.nc")
    noisy = [mf.simulate(mf.SelfAttention(1.0, noise=0.1), x0, [0, 1], dt=0.1, seed=5) for _ in range(2)]
    np.testing.assert_array_equal(noisy[0]["positions"].values, noisy[1]["positions"].values)
    assert noisy[0].attrs["seed"] == "5"


def test_checkpoint_and_resume(tmp_path):
    path = tmp_path / "run.nc"
    x0 = mf.particles.uniform_sphere(10, 3, seed=1)
    times = np.linspace(0, 4, 9)
    model = mf.SelfAttention(2.0)
    full = mf.simulate(model, x0, times, rtol=1e-10, atol=1e-12)
    cut = mf.simulate(model, x0, times, rtol=1e-10, atol=1e-12, max_steps=15, checkpoint=path,
                      checkpoint_interval=0.0)
    assert cut.attrs["success"] == 0 and 1 < cut.sizes["time"] < 9
    resumed = mf.simulate(model, x0, times, rtol=1e-10, atol=1e-12, checkpoint=path, resume=True)
    assert resumed.attrs["success"] == 1 and resumed.sizes["time"] == 9 and resumed.attrs["resumed_at"] > 0
    # the file of the stopped run holds its continuation: the resumed run takes the steps the full one took
    np.testing.assert_array_equal(resumed["positions"].values, full["positions"].values)
    with pytest.raises(ValueError, match="was made with beta=2.0, but this run has beta=3.0"):
        mf.simulate(mf.SelfAttention(3.0), x0, times, checkpoint=path, resume=True)
    with pytest.raises(ValueError, match="resume=True needs a checkpoint path"):
        mf.simulate(model, x0, times, resume=True)


def test_noisy_run_interrupted_and_resumed_equals_uninterrupted(tmp_path):
    # the generator state at the last saved output is stored (attr rng_state) and restored: the
    # resumed run draws the same increments as the uninterrupted one, so the states agree exactly
    path = tmp_path / "noisy.nc"
    x0 = np.stack([mf.particles.uniform_sphere(6, 3, seed=s) for s in range(3)])
    model = mf.SelfAttention(1.0, noise=0.2)
    times = np.linspace(0, 2, 5)
    full = mf.simulate(model, x0, times, dt=0.05, seed=3)
    cut = mf.simulate(model, x0, times, dt=0.05, seed=3, max_steps=25, checkpoint=path, checkpoint_interval=0.0)
    assert cut.attrs["success"] == 0 and "max_steps = 25" in cut.attrs["message"] and cut.sizes["time"] == 3
    resumed = mf.simulate(model, x0, times, dt=0.05, seed=3, checkpoint=path, resume=True)
    assert resumed.attrs["success"] == 1 and resumed.attrs["resumed_at"] == 1.0
    np.testing.assert_array_equal(resumed["positions"].values, full["positions"].values)
    assert resumed.attrs["rng_state"] == full.attrs["rng_state"]


def test_resume_refuses_another_x0_or_seed(tmp_path):
    path = tmp_path / "run.nc"
    x0 = mf.particles.uniform_sphere(6, 3, seed=1)
    model = mf.SelfAttention(1.0, noise=0.1)
    mf.simulate(model, x0, [0, 1, 2], dt=0.1, seed=4, max_steps=10, checkpoint=path, checkpoint_interval=0.0)
    with pytest.raises(ValueError, match=r"was made from a different x0 \(SHA-1 of its values"):
        mf.simulate(model, x0[::-1], [0, 1, 2], dt=0.1, seed=4, checkpoint=path, resume=True)
    with pytest.raises(ValueError, match="was made with seed=4, but this run has seed=5"):
        mf.simulate(model, x0, [0, 1, 2], dt=0.1, seed=5, checkpoint=path, resume=True)
    # seed=None continues with the checkpoint's seed
    resumed = mf.simulate(model, x0, [0, 1, 2], dt=0.1, checkpoint=path, resume=True)
    full = mf.simulate(model, x0, [0, 1, 2], dt=0.1, seed=4)
    assert resumed.attrs["seed"] == "4"
    np.testing.assert_array_equal(resumed["positions"].values, full["positions"].values)


def test_points_off_the_sphere_rejected_by_energy_velocity_and_diagnostics(x_sphere):
    off = x_sphere * 1.01
    model = mf.SelfAttention(1.0)
    read = r"must lie on the unit sphere S\^2: max \| \|x_i\| - 1 \| = 0.01 exceeds sphere_tolerance = 1e-10"
    by_shape = r"; the plain array of shape \(6, 3\) was read by its shape as 6 points of R\^3: .*domain='circle'"
    with pytest.raises(ValueError, match="^measure " + read + by_shape):
        mf.energy(model, off)
    with pytest.raises(ValueError, match="^measure " + read + by_shape):
        model.velocity(off)
    with pytest.raises(ValueError, match="^measure " + read + r"; normalise them \(x / \|x\|\) or pass renormalize=True"):
        model.velocity(mf.EmpiricalMeasure(off, domain="sphere"))
    for diagnostic in (mf.order_parameter, mf.number_of_clusters, mf.particles.pair_fraction,
                       mf.pairwise_inner_products, lambda x: mf.attention_matrix(model, x)):
        with pytest.raises(ValueError, match="^positions " + read + by_shape):
            diagnostic(off)
    # renormalize=True projects (1.01 x / |1.01 x| = x to round-off) and gives the values at x
    close = {"rtol": 0, "atol": 1e-15}
    np.testing.assert_allclose(mf.models.particle_energy(model, off, renormalize=True),
                               mf.energy(model, x_sphere), **close)
    np.testing.assert_allclose(model.velocity(off, renormalize=True), model.velocity(x_sphere), **close)
    np.testing.assert_allclose(mf.order_parameter(off, renormalize=True), mf.order_parameter(x_sphere), **close)
    np.testing.assert_allclose(mf.order_parameter(off, domain="euclidean"), 1.01 * mf.order_parameter(x_sphere),
                               rtol=1e-14)
    with pytest.raises(ValueError, match=r"^domain must be one of \['circle', 'sphere', 'euclidean'\] \(how positions"):
        mf.order_parameter(x_sphere, domain="plane")


def test_unnormalized_beta_beyond_float64_range_is_rejected():
    x = np.linspace(0, 3, 5)
    message = r"beta = 800 is too large for the unnormalized model \(USA\): .* overflows float64 for beta > 709.78"
    with pytest.raises(ValueError, match=message):
        mf.simulate(mf.SelfAttention(800.0, normalized=False), x, [0, 1])
    with pytest.raises(ValueError, match=message):
        mf.simulate(mf.SelfAttention(800.0, normalized=False), x, [0, 1], path="nufft")
    with pytest.raises(ValueError, match=message):
        mf.SelfAttention(800.0, normalized=False).velocity(x)
    # SA needs no e^β: it runs, and its energy e^β/(2β) Σ w_i w_j e^{β(<x_i,x_j>-1)} is evaluated in logs
    # (here the diagonal alone gives e^800/(1600·5) > max double: inf)
    ds = mf.simulate(mf.SelfAttention(800.0), x, [0, 1])
    assert ds.attrs["success"] == 0 and np.all(np.isinf(ds["energy"].values))  # an energy beyond the doubles
    assert np.all(np.isfinite(ds["positions"].values))
    # one cluster of mass 1 has E = e^β/(2β) exactly; beyond β = 709.78 (e^β overflows) the prefactor is
    # applied in logs, which keeps the energy while it is below the largest double (β - log 2β < 709.78);
    # exp of an argument ≈ 700 carries a relative error ≈ 700·eps ≈ 1.6e-13
    for beta in (700.0, 710.0, 716.0):
        exact = np.exp(beta - np.log(2 * beta))
        np.testing.assert_allclose(mf.energy(mf.SelfAttention(beta), np.zeros(4)), exact, rtol=1e-12)
    assert np.isinf(mf.energy(mf.SelfAttention(720.0), np.zeros(4)))


def test_dataset_has_mass_and_units(x_sphere):
    ds = mf.simulate(mf.SelfAttention(1.0), x_sphere, [0, 0.5, 1])
    np.testing.assert_allclose(ds["mass"].values, 1.0, rtol=0, atol=1e-15)
    assert ds["mass"].dims == ("time",) and ds["mass"].attrs["units"] == "1"
    assert ds["component"].attrs == {"long_name": "coordinate in R^d", "units": "1"}
    batch = mf.simulate(mf.SelfAttention(1.0), np.stack([x_sphere, x_sphere]), [0, 1])
    assert batch["mass"].dims == ("system", "time")


def test_resume_refuses_another_kuramoto_interaction(tmp_path):
    # every model parameter is compared: h = sin (ĥ = [0, -i/2]) and ĥ = [0, -i/2, -i/2]
    # (h(u) = sin u + sin 2u) are different interactions, so one run cannot continue the other
    path = tmp_path / "kuramoto.nc"
    x0 = np.linspace(0, 3, 8)
    mf.simulate(mf.Kuramoto(1.0), x0, [0, 1, 2], max_steps=3, checkpoint=path,
                checkpoint_interval=0.0)
    other = mf.Kuramoto(1.0, interaction=[0, -0.5j, -0.5j])
    with pytest.raises(ValueError, match="was made with interaction=.*but this run has interaction="):
        mf.simulate(other, x0, [0, 1, 2], checkpoint=path, resume=True)

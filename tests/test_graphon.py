"""Kuramoto on a graphon: the PDE on [0, 1] × S¹ against its exact reductions, and against particles on graphs
sampled from W (compare: W₁ of the θ-marginals)."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import meanfield as mf


def _cosine(x, y):
    return 0.5 + 0.4 * np.cos(2 * np.pi * (x - y))


def test_constant_graphon_is_the_all_to_all_model_with_coupling_kp():
    circle = mf.Circle(128)
    rho0 = mf.von_mises(circle, 0.0, 1.0)
    t = np.linspace(0, 2, 5)
    graphon = mf.solve(mf.GraphonKuramoto(2.0, 0.4, nodes=6, noise=0.05), rho0, t, method="spectral")
    alone = mf.solve(mf.Kuramoto(0.8, noise=0.05), rho0, t, method="spectral")
    assert graphon.attrs["success"] == 1 and graphon.attrs["graphon"] == "constant(0.4)"
    # every species sees the same field Kp ρ̄ and starts equal: the marginal is the all-to-all density
    np.testing.assert_allclose(graphon.density, alone.density, rtol=0, atol=1e-12)
    by_degree = mf.solve(mf.GraphonKuramoto(0.8, 0.4, nodes=6, noise=0.05, normalization="degree"), rho0, t,
                         method="spectral")
    np.testing.assert_allclose(by_degree.density, alone.density, rtol=0, atol=1e-12)


def test_constant_graphon_by_finite_volume_agrees_to_second_order():
    """Finite volume averages a callable velocity to the faces (O(h²)) where the all-to-all model's multipliers give
    the face values exactly: the two agree to O(h²) (measured 4.9e-4, 1.2e-4, 3.1e-5 at N = 64, 128, 256)."""
    t = np.linspace(0, 2, 5)
    gaps = []
    for n in (64, 128):
        rho0 = mf.von_mises(mf.Circle(n), 0.0, 1.0)
        graphon = mf.solve(mf.GraphonKuramoto(2.0, 0.4, nodes=3, noise=0.05), rho0, t, method="finite_volume")
        alone = mf.solve(mf.Kuramoto(0.8, noise=0.05), rho0, t, method="finite_volume")
        gaps.append(float(np.max(np.abs(graphon.density - alone.density))))
    assert 3.5 < gaps[0] / gaps[1] < 4.5, gaps


def test_block_graphon_is_exact_on_block_aligned_midpoints():
    """A two-block graphon (W = 0.8 within a half, 0.2 across) is piecewise constant: midpoint nodes aligned with
    the blocks integrate it exactly, so 2 nodes and 10 give the same marginal to round-off."""
    def blocks(x, y):
        return np.where((x < 0.5) == (y < 0.5), 0.8, 0.2)

    circle = mf.Circle(64)
    rho0 = mf.von_mises(circle, 1.0, 0.5)
    t = np.linspace(0, 3, 4)
    runs = [mf.solve(mf.GraphonKuramoto(1.5, blocks, nodes=m, quadrature="midpoint", noise=0.1), rho0, t,
                     method="spectral") for m in (2, 10)]
    np.testing.assert_allclose(runs[0].density, runs[1].density, rtol=0, atol=1e-12)
    assert runs[1].density_by_position.dims == ("time", "position", "theta")
    np.testing.assert_allclose(runs[1].position, (np.arange(10) + 0.5) / 10)


def test_smooth_graphon_converges_spectrally_in_the_gauss_nodes():
    """W(x, y) = xy: the species move differently (degree ∝ x) and depend analytically on x, so the Gauss rule
    converges geometrically (measured errors against 24 nodes: 1.5e-4, 2.2e-6, 3.1e-8, 3.9e-10 for m = 2 … 5)."""
    circle = mf.Circle(128)
    rho0 = mf.von_mises(circle, 0.0, 1.0)
    finals = {m: mf.solve(mf.GraphonKuramoto(3.0, lambda x, y: x * y, nodes=m, noise=0.05), rho0, [0.0, 1.0],
                          method="spectral").density.values[-1] for m in (2, 3, 4, 5, 24)}
    errors = np.array([np.max(np.abs(finals[m] - finals[24])) for m in (2, 3, 4, 5)])
    assert np.all(errors[:-1] / errors[1:] > 30), errors


def test_particles_on_sampled_graphs_approach_the_graphon_pde():
    """W₁ of the θ-marginals falls with n (iid starts and a W-random graph: n^{-1/2}, fitted over n = 256 … 4096 in
    validation/networks.py); here the mean over 3 seeds at n = 400 and 1600 must fall by 2 within [1.4, 2.9]."""
    circle = mf.Circle(512)
    rho0 = mf.von_mises(circle, 0.0, 1.0)
    t = np.linspace(0, 2, 3)
    model = mf.GraphonKuramoto(1.5, _cosine, nodes=16, graphon_name="cosine")
    pde = mf.solve(model, rho0, t, method="spectral")
    means = []
    for n in (400, 1600):
        distances = []
        for seed in range(3):
            particles = mf.simulate(model.sampled(n, seed=seed, positions="random"), mf.sample(rho0, n, seed=50 + seed),
                                    t)
            assert particles.attrs["graph"].startswith("W-random graph of graphon cosine(n=")
            distances.append(mf.compare(pde, particles).wasserstein.values[0, -1])
        means.append(np.mean(distances))
    assert 1.4 < means[0] / means[1] < 2.9, means


def test_sampled_graphs_follow_the_graphon():
    model = mf.GraphonKuramoto(1.0, _cosine, normalization="degree")
    graph = model.sampled(2000, seed=3).graph
    assert graph.symmetric and graph.n_loops == 0 and graph.normalization == "degree"
    # degree of node i ≈ Σ_j W(x_i, x_j) = n/2: binomial fluctuations of relative size 1/√(n/2)
    assert np.max(np.abs(graph.degrees / 1000 - 1)) < 5 / np.sqrt(1000)
    weighted = model.sampled(300, positions="grid", weighted=True).graph
    x = (np.arange(300) + 0.5) / 300
    expected = _cosine(x[:, None], x[None, :])
    np.fill_diagonal(expected, 0)
    np.testing.assert_allclose(weighted.adjacency.toarray(), expected, rtol=1e-15)


def test_graphon_results_resume_bit_for_bit(tmp_path):
    circle = mf.Circle(64)
    rho0 = mf.von_mises(circle, 0.0, 1.0)
    t = np.linspace(0, 2, 5)
    model = mf.GraphonKuramoto(1.5, _cosine, nodes=4, noise=0.1)
    whole = mf.solve(model, rho0, t, method="spectral")
    mf.solve(model, rho0, t[:3], method="spectral", checkpoint=tmp_path / "g.nc")
    resumed = mf.solve(model, rho0, t, method="spectral", checkpoint=tmp_path / "g.nc", resume=True)
    np.testing.assert_array_equal(resumed.density_by_position.values, whole.density_by_position.values)
    saved = xr.open_dataset(tmp_path / "g.nc")
    assert saved.attrs["graphon"] == "_cosine" and saved.attrs["graph_normalization"] == "n"


def test_bad_graphons_are_refused_by_name():
    with pytest.raises(ValueError, match=r"graphon '<lambda>' is not symmetric .* assumes an undirected graph"):
        mf.GraphonKuramoto(1.0, lambda x, y: x + 0 * y)
    with pytest.raises(ValueError, match=r"must take values in \[0, 1\], got values in \[3.7.*e-06, 1.99"):
        mf.GraphonKuramoto(1.0, lambda x, y: 2 * x * y)
    with pytest.raises(ValueError, match=r"has degree ∫ W\(x, y\) dy = 0 at x = .*normalization='degree'"):
        mf.GraphonKuramoto(1.0, lambda x, y: np.where((x < 0.5) & (y < 0.5), 1.0, 0.0), quadrature="midpoint",
                           nodes=4, normalization="degree")
    with pytest.raises(ValueError, match=r"graphon must return an array of the broadcast shape"):
        mf.GraphonKuramoto(1.0, lambda x, y: 0.5)
    with pytest.raises(TypeError, match=r"graphon must be a callable W\(x, y\) or a number"):
        mf.GraphonKuramoto(1.0, "erdos-renyi")
    with pytest.raises(ValueError, match=r"quadrature must be one of \('gauss', 'midpoint'\)"):
        mf.GraphonKuramoto(1.0, 0.5, quadrature="trapezoid")
    with pytest.raises(TypeError, match=r"its particles live on a graph sampled from the graphon"):
        mf.simulate(mf.GraphonKuramoto(1.0, 0.5), np.zeros(10), [0, 1])
    with pytest.raises(ValueError, match=r"one density per graphon node \(8 species\): node values of shape "
                                         r"\(8, 32\) are needed, got \(32,\)"):
        mf.GraphonKuramoto(1.0, 0.5, nodes=8).velocity(mf.uniform(mf.Circle(32)))
    with pytest.raises(ValueError, match=r"pde and particles must be runs of the same model, got different coupling"):
        circle = mf.Circle(32)
        model = mf.GraphonKuramoto(1.0, 0.5, noise=0.1)
        pde = mf.solve(model, mf.uniform(circle), [0, 1])
        particles = mf.simulate(mf.Kuramoto(2.0, noise=0.1, graph=model.sampled(20, seed=1).graph), np.zeros(20),
                                [0, 1], dt=0.1, seed=1)
        mf.compare(pde, particles)

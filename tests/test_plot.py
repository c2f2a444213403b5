"""meanfield.plot: each figure on a small result of each domain draws what the result holds (the plotted
arrays are compared with the dataset's), labels its axes, and names what is missing when given the wrong
dataset; animations write one GIF frame per output time shown."""

from __future__ import annotations

import subprocess
import sys

import matplotlib.pyplot as plt
import numpy as np
import pytest
import xarray as xr
from matplotlib.animation import FFMpegWriter
from matplotlib.collections import QuadMesh
from PIL import Image

import meanfield as mf
from meanfield.plot._marginal import polar_marginal_values

TIMES = np.linspace(0.0, 0.4, 5)


@pytest.fixture(scope="module")
def circle() -> xr.Dataset:
    return mf.solve(mf.SelfAttention(4.0), mf.von_mises(mf.Circle(32), 0.0, 0.5), TIMES, method="finite_volume")


@pytest.fixture(scope="module")
def zonal() -> xr.Dataset:
    rho0 = mf.von_mises(mf.ZonalSphere(5, 24, nodes="cells"), kappa=1.0)
    return mf.solve(mf.SelfAttention(2.0), rho0, TIMES, method="finite_volume")


@pytest.fixture(scope="module")
def sphere() -> xr.Dataset:
    return mf.solve(mf.SelfAttention(1.0, noise=0.1), mf.von_mises(mf.Sphere(12), [0, 0, 1], 1.0), TIMES)


@pytest.fixture(scope="module")
def circle_particles() -> xr.Dataset:
    return mf.simulate(mf.SelfAttention(4.0), np.random.default_rng(1).uniform(0, 2 * np.pi, 16), TIMES)


@pytest.fixture(scope="module")
def sphere_particles() -> xr.Dataset:
    return mf.simulate(mf.SelfAttention(4.0), mf.particles.uniform_sphere(16, 3, seed=2), TIMES)


@pytest.fixture(scope="module")
def ensemble() -> xr.Dataset:
    angles = np.random.default_rng(3).uniform(0, 2 * np.pi, (3, 8))
    return mf.simulate(mf.SelfAttention(4.0), angles, TIMES, domain="circle")


@pytest.fixture(autouse=True)
def no_pyplot_figures():
    """The library draws on Figures of its own: pyplot's list of figures stays empty."""
    yield
    assert plt.get_fignums() == []


def _mesh(ax) -> QuadMesh:
    (mesh,) = [c for c in ax.collections if isinstance(c, QuadMesh)]
    return mesh


def test_density_map_circle_draws_density_above_energy(circle):
    fig = mf.plot.density_map(circle)
    ax_map, ax_energy, _ = fig.axes  # heat map, energy curve, the colour bar of the map
    rho = circle.density.values
    top = rho.max()
    np.testing.assert_array_equal(_mesh(ax_map).get_array(), np.clip(rho.T, 1e-3 * top, None))
    assert ax_map.get_ylabel() == "angle θ [rad]"
    assert ax_energy.get_xlabel() == "time t (dimensionless)"
    np.testing.assert_array_equal(ax_energy.lines[0].get_ydata(), circle.energy.values)


def test_density_map_on_given_axes_draws_the_map_alone(zonal):
    fig = plt.figure()
    try:
        ax = fig.add_subplot()
        assert mf.plot.density_map(zonal, ax=ax) is fig
        assert len(fig.axes) == 2  # the map and its colour bar, no energy panel
        assert ax.get_xlabel() == "time t (dimensionless)" and ax.get_ylabel() == "polar angle ϑ from e_d [rad]"
    finally:
        plt.close(fig)


def test_zonal_marginal_of_the_uniform_density_is_the_sine_power():
    """ρ = 1/|S^{d-1}| has the polar law |S^{d-2}|/|S^{d-1}| sin^{d-2}ϑ exactly at the nodes."""
    d, polar = 6, np.linspace(0.05, np.pi - 0.05, 17)
    ds = xr.Dataset({"density": (("time", "polar"), np.full((2, polar.size), 1 / mf.sphere_area(d)))},
                    coords={"time": [0.0, 1.0], "polar": polar}, attrs={"dimension": d})
    angles, marginal = polar_marginal_values(ds)
    expected = mf.sphere_area(d - 1) / mf.sphere_area(d) * np.sin(polar) ** (d - 2)
    np.testing.assert_allclose(marginal, np.broadcast_to(expected, marginal.shape), rtol=1e-14)
    np.testing.assert_array_equal(angles, polar)


def test_sphere_marginal_of_the_uniform_density_is_half_the_sine():
    """On S², ρ = 1/(4π) has the polar law sin(ϑ)/2, ϑ = π/2 - lat, returned with ϑ increasing."""
    s = mf.Sphere(8)
    ds = xr.Dataset({"density": (("time", "lat", "lon"), np.full((1, *s.shape), 1 / (4 * np.pi)))},
                    coords={"time": [0.0], "lat": s.lat, "lon": s.lon})
    polar, marginal = polar_marginal_values(ds)
    assert np.all(np.diff(polar) > 0)
    np.testing.assert_allclose(marginal[0], np.sin(polar) / 2, rtol=1e-14)


def test_polar_marginal_one_curve_per_time(zonal, sphere):
    for ds in (zonal, sphere):
        fig = mf.plot.polar_marginal(ds, times=[0.0, 0.2, 0.4])
        (ax,) = fig.axes
        assert len(ax.lines) == 3 and ax.get_ylabel() == "polar marginal p(t, ϑ) [1/rad]"
        assert [t.get_text() for t in ax.get_legend().get_texts()] == ["t = 0", "t = 0.2", "t = 0.4"]


def test_sphere_map_latlon_shows_the_density_on_degrees(sphere):
    fig = mf.plot.sphere_map(sphere, 0.2, projection="latlon")
    ax = fig.axes[0]
    order = np.argsort(sphere.lat.values)
    rho = sphere.density.values[2][order]
    mesh = _mesh(ax)
    floor = min(1e-3 * rho.max(), 1 / (4 * np.pi) / 10)
    assert mesh.norm.vmin == floor and mesh.norm.vmax == rho.max()
    # Gouraud shading through the grid points, closed by a row at each pole and a column at 360° east
    np.testing.assert_array_equal(mesh.get_array()[1:-1, :-1], np.clip(rho, floor, None))
    np.testing.assert_array_equal(mesh.get_coordinates()[1:-1, 0, 1], np.degrees(sphere.lat.values[order]))
    assert ax.get_xlabel() == "longitude [degrees east]" and ax.get_ylabel() == "latitude [degrees north]"
    assert ax.get_title() == "t = 0.2"


def test_sphere_map_orthographic_faces_the_mass(sphere):
    fig = mf.plot.sphere_map(sphere)
    ax, colorbar = fig.axes
    # the mass sits about the north pole: the default view looks down on it (lat = π/2)
    assert ax.get_xlabel().startswith("view centre: latitude 90.0°, longitude ")
    assert colorbar.get_ylabel() == "density ρ [1/sr] (cyan line: uniform m/4π)"
    np.testing.assert_allclose(colorbar.lines[0].get_ydata(), 1 / (4 * np.pi), rtol=1e-15)


def test_energy_curve_of_an_ensemble_draws_each_system_and_the_mean(ensemble):
    fig = mf.plot.energy_curve(ensemble)
    (ax,) = fig.axes
    assert len(ax.lines) == 3 + 1
    np.testing.assert_allclose(ax.lines[-1].get_ydata(), ensemble.energy.values.mean(axis=0), rtol=1e-15)
    assert ax.get_ylabel() == "interaction energy E_β(t) (dimensionless)"


def test_order_parameter_curve_of_a_kuramoto_run():
    """The title names the engine."""
    ds = xr.Dataset({"order_parameter": ("time", np.linspace(0.1, 0.6, 11)), "r_inf": 0.55},
                    coords={"time": np.linspace(0, 10, 11)},
                    attrs={"t_final": 10.0, "average_window": 4.0, "law": "lorentzian", "width": 0.5,
                           "noise": 0.0, "engine": "pde", "coupling": 2.0})
    fig = mf.plot.order_parameter_curve(ds, theory=0.5)
    (ax,) = fig.axes
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["r(t)", "averaging window", "r∞ = 0.5500", "theory 0.5000"]
    assert ax.get_title() == "Kuramoto K = 2, lorentzian (0.5), σ = 0, pde"
    assert ax.get_ylim() == (0, 1.02)


def test_particle_snapshots_on_the_circle(circle_particles):
    fig = mf.plot.particle_snapshots(circle_particles, times=[0.0, 0.4])
    assert [ax.get_title() for ax in fig.axes] == ["t = 0", "t = 0.4"]
    theta = circle_particles.positions.values[-1]
    np.testing.assert_allclose(fig.axes[1].collections[0].get_offsets(),
                               np.column_stack([np.cos(theta), np.sin(theta)]), atol=1e-15)


def test_particle_snapshots_on_the_sphere_split_front_and_back(sphere_particles):
    fig = mf.plot.particle_snapshots(sphere_particles, times=[0.4], view=(0.0, 0.0))
    (ax,) = fig.axes
    back, front = (np.asarray(c.get_offsets()) for c in ax.collections)
    x = sphere_particles.positions.values[-1]
    # view (0, 0) looks along e_1 with east e_2 and north e_3: front points are those with x_1 >= 0
    # (16 particles at t = 0.4 are still apart: one marker each, in their order)
    np.testing.assert_allclose(front, x[x[:, 0] >= 0][:, 1:], atol=1e-15)
    np.testing.assert_allclose(back, x[x[:, 0] < 0][:, 1:], atol=1e-15)


def test_particle_paths_wrap_without_crossing_the_panel():
    t = np.linspace(0, 10, 101)
    ds = xr.Dataset({"positions": (("time", "particle"), np.column_stack([t, 0.5 - t]))}, coords={"time": t})
    fig = mf.plot.particle_paths(ds)
    (ax,) = fig.axes
    assert len(ax.lines) == 2
    y = np.concatenate([line.get_ydata() for line in ax.lines])
    finite = y[np.isfinite(y)]
    assert finite.min() >= 0 and finite.max() < 2 * np.pi
    # θ = t crosses 2π once in [0, 10], θ = 0.5 - t crosses 0 and -2π: three breaks
    assert np.isnan(y).sum() == 3
    assert ax.get_ylabel() == "angle θ_i(t) [rad]"


def test_comparison_draws_distances_and_gaps(circle, ensemble):
    result = mf.compare(circle, ensemble)
    fig = mf.plot.comparison(result)
    ax_w, ax_gap = fig.axes
    assert len(ax_w.lines) == 3 + 1  # one line per system and their mean
    np.testing.assert_allclose(ax_w.lines[-1].get_ydata(), result.wasserstein_mean.values, rtol=1e-15)
    np.testing.assert_array_equal(ax_gap.lines[0].get_ydata(), result.energy_gap_mean.values)
    np.testing.assert_array_equal(ax_gap.lines[1].get_ydata(), result.order_parameter_gap_mean.values)
    assert ax_w.get_ylabel() == "W_1(ρ(t), μ_n(t)) [rad]"
    with pytest.raises(ValueError, match="comparison needs the variable 'wasserstein'"):
        mf.plot.comparison(circle)


def test_inner_products_one_histogram_per_time(sphere_particles):
    fig = mf.plot.inner_products(sphere_particles, times=[0.0, 0.4])
    assert len(fig.axes[0].patches) == 2


def test_phase_diagram_and_bifurcation_figures():
    beta, time = np.linspace(1, 9, 5), np.linspace(0, 30, 7)
    diagram = xr.Dataset({"probability": (("beta", "time"), np.full((5, 7), 0.5)),
                          "critical_time": ("beta", np.full(5, 10.0))},
                         coords={"beta": beta, "time": time}, attrs={"n": 32, "delta": 1e-3, "normalized": 1})
    fig = mf.plot.phase_diagram(diagram)
    assert len(fig.axes) == 2 and fig.axes[0].get_ylabel() == "inverse temperature β"
    with pytest.raises(ValueError, match="with the variable 'fraction_clustered'"):
        mf.plot.phase_diagram(diagram, "fraction_clustered")
    fig = mf.plot.bifurcation(_bifurcation_dataset())
    assert fig.axes[0].get_xlabel() == "coupling K"


def test_bifurcation_marks_the_engine():
    """PDE points are hollow squares, particles filled circles."""
    fig = mf.plot.bifurcation([_bifurcation_dataset(), _bifurcation_dataset(engine="pde")])
    drawn = [line for line in fig.axes[0].lines if line.get_marker() in ("o", "s")]
    assert [(line.get_marker(), line.get_markerfacecolor()) for line in drawn][1:] == [("s", "none")]
    assert drawn[0].get_marker() == "o" and drawn[0].get_markerfacecolor() != "none"
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels.count("pde, lorentzian (width 0.5), σ = 0") == 1


def _bifurcation_dataset(engine: str = "particles") -> xr.Dataset:
    k = np.array([0.5, 2.0])
    return xr.Dataset({"r_mean": ("coupling", [0.05, 0.6]), "r_error": ("coupling", [0.01, 0.02])},
                      coords={"coupling": k},
                      attrs={"law": "lorentzian", "width": 0.5, "centre": 0.0, "noise": 0.0, "engine": engine})


@pytest.mark.parametrize("name", ["circle", "zonal", "sphere"])
def test_density_animation_writes_one_gif_frame_per_time(name, request, tmp_path):
    ds = request.getfixturevalue(name)
    path = mf.plot.save_animation(mf.plot.animate_density(ds, frames=3), tmp_path / "density.gif", dpi=30)
    with Image.open(path) as gif:
        assert gif.n_frames == 3
        assert gif.size == (round(6.4 * 30), round(4.4 * 30))


@pytest.mark.parametrize("name", ["circle_particles", "sphere_particles"])
def test_particle_animation_writes_every_output_time(name, request, tmp_path):
    ds = request.getfixturevalue(name)
    path = mf.plot.save_animation(mf.plot.animate_particles(ds), tmp_path / "particles.gif", dpi=30)
    with Image.open(path) as gif:
        assert gif.n_frames == TIMES.size


def test_latlon_density_animation(sphere, tmp_path):
    path = mf.plot.save_animation(mf.plot.animate_density(sphere, projection="latlon"), tmp_path / "s.gif", dpi=30)
    with Image.open(path) as gif:
        assert gif.n_frames == TIMES.size


def test_mp4_needs_ffmpeg_and_other_suffixes_are_refused(circle, tmp_path):
    animation = mf.plot.animate_density(circle, frames=2)
    with pytest.raises(ValueError, match=r"\.gif \(Pillow\) or \.mp4 \(ffmpeg\), got '.*density.avi'"):
        mf.plot.save_animation(animation, tmp_path / "density.avi")
    if FFMpegWriter.isAvailable():
        assert mf.plot.save_animation(animation, tmp_path / "density.mp4", dpi=30).stat().st_size > 0
    else:
        with pytest.raises(RuntimeError, match="needs ffmpeg, which is not installed"):
            mf.plot.save_animation(animation, tmp_path / "density.mp4")
        mf.plot.save_animation(animation, tmp_path / "density.gif", dpi=30)  # the refused one is still whole


def test_wrong_datasets_name_what_is_missing(circle, sphere, circle_particles, sphere_particles):
    with pytest.raises(ValueError, match=r"density_map needs the variable 'density' in the dataset, which has "
                                         r"\['energy', 'log_energy', 'mass', 'normalized_energy', 'order_parameter', "
                                         r"'positions', 'weights'\]"):
        mf.plot.density_map(circle_particles)
    with pytest.raises(ValueError, match="draw S² results with sphere_maps"):
        mf.plot.density_map(sphere)
    with pytest.raises(ValueError, match="sphere_map needs a dataset on the sphere"):
        mf.plot.sphere_map(circle)
    with pytest.raises(ValueError, match="energy_curve needs the variable 'energy'"):
        mf.plot.energy_curve(circle.drop_vars("energy"))
    with pytest.raises(ValueError, match="a density on the circle has no polar angle"):
        mf.plot.polar_marginal(circle)
    with pytest.raises(ValueError, match="animate_particles needs the variable 'positions'"):
        mf.plot.animate_particles(circle)
    with pytest.raises(ValueError, match="particle_paths draws angles of particles on S¹"):
        mf.plot.particle_paths(sphere_particles)
    with pytest.raises(TypeError, match="order_parameter_curve takes an xarray.Dataset .* got ndarray"):
        mf.plot.order_parameter_curve(np.zeros(3))
    with pytest.raises(ValueError, match="projection must be one of"):
        mf.plot.sphere_map(sphere, projection="mollweide")
    with pytest.raises(ValueError, match="frames must be an integer >= 1, got 0"):
        mf.plot.animate_density(circle, frames=0)
    with pytest.raises(ValueError, match=r"system must lie in \[0, 1\), got 2"):
        mf.plot.particle_snapshots(circle_particles.expand_dims(system=1), system=2)


def test_particles_on_higher_spheres_are_refused():
    ds = mf.simulate(mf.SelfAttention(1.0), mf.particles.uniform_sphere(6, 4, seed=0), [0.0, 0.1])
    with pytest.raises(ValueError, match="particle_snapshots draws particles on S¹ or S²; these lie on S\\^3"):
        mf.plot.particle_snapshots(ds)


def test_import_meanfield_leaves_matplotlib_to_meanfield_plot():
    code = ("import sys, meanfield; before = 'matplotlib' in sys.modules; meanfield.plot.density_map; "
            "print(before, 'matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]


def test_every_public_figure_has_a_literal_numpy_docstring_with_parameters_and_returns():
    """NumPy sections at the function's indentation, and no unfilled template placeholder."""
    for name in mf.plot.__all__:
        doc = getattr(mf.plot, name).__doc__
        assert doc is not None, name
        for section in ("Parameters", "Returns"):
            assert f"\n    {section}\n    {'-' * len(section)}\n" in doc, (name, section)
        assert "%(" not in doc, name

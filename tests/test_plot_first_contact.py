"""Faults a new user met in meanfield.plot, each pinned on the figure objects (norms, limits, labels, texts):
the uniform density on S² inside the colour scale, view labels with units, smooth latitude–longitude maps;
phase diagrams of few β and of random (Q, K, V); per-frame scaling of density animations; clusters of
coincident particles marked by size and count; failure messages in a wrapped box rather than the title."""

from __future__ import annotations

import gc

import matplotlib.pyplot as plt
import numpy as np
import pytest
import xarray as xr
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import QuadMesh

import meanfield as mf

# the animations below are inspected, never saved
pytestmark = pytest.mark.filterwarnings("ignore:Animation was deleted without rendering anything")

UNIFORM = 1 / (4 * np.pi)
MESSAGE = ("the step size fell below min_step = 1e-12 at t = 0.3127 while the density went negative near the "
           "south pole; refine the grid (lmax) or use method='finite_volume', which keeps the density positive "
           "and conserves mass to rounding")


@pytest.fixture(autouse=True)
def no_pyplot_figures():
    """The library draws on Figures of its own: pyplot's list of figures stays empty; the animations a test
    inspected are collected within it, under its warning filter."""
    yield
    gc.collect()
    assert plt.get_fignums() == []


@pytest.fixture(scope="module")
def concentrating() -> xr.Dataset:
    """A uniform start on S² that ends with a cluster of density ≈ 120, far above 1000/(4π)."""
    s = mf.Sphere(12)
    rho = np.full((3, *s.shape), UNIFORM)
    rho[1] *= 1 + 0.5 * np.sin(s.lat)[:, None]
    rho[2] = UNIFORM / 50
    rho[2, 0, :] = 120.0  # the ring nearest the north pole
    return xr.Dataset({"density": (("time", "lat", "lon"), rho), "mass": ("time", np.ones(3)),
                       "energy": ("time", [0.6, 0.7, 0.9])},
                      coords={"time": [0.0, 1.0, 2.0], "lat": s.lat, "lon": s.lon},
                      attrs={"model": "SA", "beta": 4.0, "noise": 0.0, "method": "spectral", "success": 1})


def _mesh(ax) -> QuadMesh:
    (mesh,) = [c for c in ax.collections if isinstance(c, QuadMesh)]
    return mesh


# 1. maps on S²

def test_sphere_maps_colour_scale_holds_the_uniform_start_a_decade_above_its_floor(concentrating):
    fig = mf.plot.sphere_maps(concentrating, times=[0.0, 2.0])
    norm = fig.axes[0].images[0].norm
    assert norm.vmax == pytest.approx(120.0)
    assert norm.vmin == pytest.approx(UNIFORM / 10)
    assert 0.1 < norm(UNIFORM) < 0.5  # inside the scale, not at its floor (0) nor its top
    assert norm is fig.axes[1].images[0].norm  # one scale for every map


def test_sphere_map_and_its_animation_share_that_colour_scale(concentrating):
    for projection in ("latlon", "orthographic"):
        fig = mf.plot.sphere_map(concentrating, 0.0, projection=projection)
        mapped = fig.axes[0].collections[0] if projection == "latlon" else fig.axes[0].images[0]
        # a single map: its own top (the uniform density) and three decades below it
        assert mapped.norm.vmin == pytest.approx(UNIFORM / 1000)
        animation = mf.plot.animate_density(concentrating, projection=projection)
        ax = animation._fig.axes[0]
        mapped = ax.collections[0] if projection == "latlon" else ax.images[0]
        assert mapped.norm.vmin == pytest.approx(UNIFORM / 10) and mapped.norm(UNIFORM) > 0.1


def test_uniform_level_follows_the_recorded_mass(concentrating):
    heavy = concentrating.assign(density=2 * concentrating.density, mass=2 * concentrating.mass)
    norm = mf.plot.sphere_maps(heavy, times=[0.0, 2.0]).axes[0].images[0].norm
    assert norm.vmin == pytest.approx(2 * UNIFORM / 10)


def test_view_labels_name_latitude_and_longitude_in_degrees(concentrating):
    fig = mf.plot.sphere_maps(concentrating, times=[2.0], view=(1.0, -1.37))
    assert "view centre: latitude 57.3°, longitude -78.5°" in fig.get_suptitle()
    fig = mf.plot.sphere_map(concentrating, view=(1.0, -1.37))
    assert fig.axes[0].get_xlabel() == "view centre: latitude 57.3°, longitude -78.5°"
    animation = mf.plot.animate_density(concentrating, view=(1.0, -1.37))
    assert animation._fig.axes[0].get_xlabel() == "view centre: latitude 57.3°, longitude -78.5°"


def test_latlon_map_is_gouraud_shaded_over_the_whole_sphere(concentrating):
    fig = mf.plot.sphere_map(concentrating, 1.0, projection="latlon")
    mesh = _mesh(fig.axes[0])
    corners = mesh.get_coordinates()
    # one value per vertex (Gouraud shading), vertices from pole to pole and over 0°…360° east
    assert np.shape(mesh.get_array()) == corners.shape[:2]
    assert corners[..., 0].min() == 0.0 and corners[..., 0].max() == 360.0
    assert corners[..., 1].min() == -90.0 and corners[..., 1].max() == 90.0
    lat = concentrating.lat.values
    rho = concentrating.density.values[1]
    k = int(np.argmax(lat))  # the northernmost ring is the last row before the pole
    np.testing.assert_allclose(mesh.get_array()[-2, :-1], rho[k], rtol=1e-15)
    np.testing.assert_allclose(mesh.get_array()[-1], rho[k].mean(), rtol=1e-14)


# 2. phase diagrams

def _diagram(betas, ginibre: bool) -> xr.Dataset:
    betas = np.asarray(betas, dtype=float)
    time = np.linspace(0, 30, 7)
    probability = 1 - np.exp(-np.outer(1 / (1 + betas), time))
    ds = xr.Dataset({"probability": (("beta", "time"), probability),
                     "critical_time": ("beta", 2.0 + betas)},
                    coords={"beta": betas, "time": time},
                    attrs={"n": 32, "delta": 1e-3, "normalized": 1, "d": 3, "systems": 16,
                           "model": "SA with Ginibre (Q, K, V)" if ginibre else "SA, Q = K = V = I",
                           "matrices": "ginibre" if ginibre else "identity"})
    if ginibre:
        for name in "QKV":
            ds[name] = (("matrix_row", "matrix_column"), np.eye(3))
    return ds


def test_ginibre_diagram_of_three_betas_draws_one_curve_per_beta_and_no_identity_curve():
    ds = _diagram([1.0, 4.0, 9.0], ginibre=True)
    fig = mf.plot.phase_diagram(ds)
    (ax,) = fig.axes  # no colour bar: the curves carry the values
    assert not [c for c in ax.collections if isinstance(c, QuadMesh)]
    assert [line.get_label() for line in ax.lines] == ["β = 1", "β = 4", "β = 9"]
    for line, row in zip(ax.lines, ds.probability.values):
        np.testing.assert_array_equal(line.get_xdata(), ds.time.values)
        np.testing.assert_array_equal(line.get_ydata(), row)
    assert ax.get_xlim() == (0.0, 30.0) and ax.get_ylim() == (0.0, 1.0)
    assert ax.get_xlabel() == "time t (dimensionless)"
    assert ax.get_ylabel() == "P(<x_1(t), x_2(t)> ≥ 1 - δ)"
    assert "Ginibre" in ax.get_title()


def test_identity_diagram_of_few_betas_marks_t_star_of_each_beta():
    ds = _diagram([1.0, 4.0, 9.0], ginibre=False)
    ax = mf.plot.phase_diagram(ds).axes[0]
    curves = [line for line in ax.lines if line.get_label().startswith("β =")]
    marks = [line for line in ax.lines if line not in curves]
    assert len(curves) == 3 and len(marks) == 3
    for mark, curve, t_star in zip(marks, curves, ds.critical_time.values):
        assert np.all(np.asarray(mark.get_xdata()) == t_star) and mark.get_color() == curve.get_color()


def test_map_cells_end_at_midpoints_between_the_betas_and_at_the_extreme_betas():
    betas = [0.0, 1.0, 2.0, 4.0, 8.0, 16.0]
    for ginibre in (False, True):
        fig = mf.plot.phase_diagram(_diagram(betas, ginibre))
        ax = fig.axes[0]
        edges = _mesh(ax).get_coordinates()[:, 0, 1]
        np.testing.assert_array_equal(edges, [0.0, 0.5, 1.5, 3.0, 6.0, 12.0, 16.0])
        assert ax.get_ylim() == (0.0, 16.0) and ax.get_xlim() == (0.0, 30.0)
        # Γ_{∞,δ} of Theorem 6.8 (Q = K = V = I) only on the identity diagram
        assert len(ax.lines) == (0 if ginibre else 1)


def test_unsorted_betas_are_drawn_in_order():
    ds = _diagram([4.0, 0.0, 2.0, 1.0, 3.0], ginibre=True)
    values = _mesh(mf.plot.phase_diagram(ds).axes[0]).get_array()
    np.testing.assert_array_equal(values, ds.sortby("beta").probability.values)


# 3. density animation

def test_density_animation_scales_each_frame_to_its_own_maximum():
    theta = np.linspace(0, 2 * np.pi, 64, endpoint=False)
    rho = np.stack([(1 + a * np.cos(theta)) / (2 * np.pi) for a in (0.05, 0.5)]
                   + [np.exp(20 * (np.cos(theta) - 1)) * 2.0])
    ds = xr.Dataset({"density": (("time", "theta"), rho)}, coords={"time": [0.0, 1.0, 2.0], "theta": theta},
                    attrs={"model": "SA", "beta": 4.0, "noise": 0.0, "method": "finite_volume"})
    animation = mf.plot.animate_density(ds)
    ax = animation._fig.axes[0]
    for i in (0, 2, 1):
        animation._func(i)
        assert ax.get_ylim() == pytest.approx((0.0, 1.05 * rho[i].max()), rel=1e-12)
        np.testing.assert_array_equal(ax.lines[0].get_ydata(), rho[i])
    assert "each frame" in mf.plot.animate_density.__doc__


# 4. clusters of particles

def test_circle_snapshot_marks_coincident_particles_by_area_and_count():
    theta = np.concatenate([np.full(10, 0.3) + 1e-9 * np.arange(10), np.full(5, 2.0), [4.0]])
    ds = xr.Dataset({"positions": (("time", "particle"), np.stack([np.linspace(0, 6, 16), theta]))},
                    coords={"time": [0.0, 1.0]}, attrs={"model": "SA", "beta": 9.0})
    fig = mf.plot.particle_snapshots(ds, times=[1.0])
    ax = fig.axes[0]
    (points,) = ax.collections
    np.testing.assert_allclose(points.get_offsets(), [[np.cos(a), np.sin(a)] for a in (0.3, 2.0, 4.0)],
                               atol=1e-8)
    np.testing.assert_allclose(points.get_sizes(), 18.0 * np.array([10, 5, 1]))
    assert sorted(text.get_text() for text in ax.texts) == ["10", "5"]
    # the start: 16 distinct particles, 16 markers of one particle each
    start = mf.plot.particle_snapshots(ds, times=[0.0]).axes[0].collections[0]
    assert len(start.get_offsets()) == 16 and set(start.get_sizes()) == {18.0}


def test_sphere_snapshot_and_animation_mark_clusters_front_and_back():
    x = np.array([[1.0, 0.0, 0.0]] * 7 + [[-1.0, 0.0, 0.0]] * 3 + [[0.6, 0.8, 0.0]])
    x[:7] += 1e-8 * np.arange(7)[:, None]
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    ds = xr.Dataset({"positions": (("time", "particle", "component"), x[None])}, coords={"time": [0.0]})
    for ax in (mf.plot.particle_snapshots(ds, view=(0.0, 0.0)).axes[0],
               mf.plot.animate_particles(ds, view=(0.0, 0.0))._fig.axes[0]):
        back, front = ax.collections
        np.testing.assert_allclose(front.get_offsets(), [[0.0, 0.0], [0.8, 0.0]], atol=1e-7)
        np.testing.assert_allclose(front.get_sizes(), [18.0 * 7, 18.0])
        np.testing.assert_allclose(back.get_offsets(), [[0.0, 0.0]], atol=1e-15)
        np.testing.assert_allclose(back.get_sizes(), [14.0 * 3])
        assert sorted(text.get_text() for text in ax.texts) == ["3", "7"]


def test_animated_clusters_update_their_counts():
    theta = np.stack([np.linspace(0, 6, 12), np.r_[np.zeros(8), np.full(4, 3.0)]])
    ds = xr.Dataset({"positions": (("time", "particle"), theta)}, coords={"time": [0.0, 1.0]})
    animation = mf.plot.animate_particles(ds)
    ax = animation._fig.axes[0]
    assert not ax.texts and len(ax.collections[0].get_offsets()) == 12
    animation._func(1)
    assert sorted(text.get_text() for text in ax.texts) == ["4", "8"]
    np.testing.assert_allclose(ax.collections[0].get_sizes(), [18.0 * 8, 18.0 * 4])


def test_marker_area_is_capped_for_very_large_clusters():
    ds = xr.Dataset({"positions": (("time", "particle"), np.zeros((1, 1000)))}, coords={"time": [0.0]})
    ax = mf.plot.particle_snapshots(ds).axes[0]
    assert ax.collections[0].get_sizes().tolist() == [400.0] and ax.texts[0].get_text() == "1000"


# 5. failure messages

def _failed(ds: xr.Dataset) -> xr.Dataset:
    return ds.assign_attrs(success=0, message=MESSAGE)


def _note(texts) -> str:
    (note,) = [text for text in texts if text.get_text().startswith("Run stopped early")]
    return note


def _renderer(fig):
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def test_failure_message_is_a_wrapped_note_inside_the_figure_below_the_axes(concentrating):
    ds = _failed(concentrating)
    fig = mf.plot.sphere_maps(ds, times=[0.0, 2.0])
    title = fig.get_suptitle()
    assert MESSAGE not in title and "\n" not in title and title.endswith("(stopped early)")
    note = _note(fig.texts)
    assert " ".join(note.get_text().split()) == f"Run stopped early: {MESSAGE}"
    assert max(len(line) for line in note.get_text().splitlines()) < len(MESSAGE)  # wrapped
    renderer = _renderer(fig)
    box = note.get_window_extent(renderer)
    assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1 and fig.bbox.y0 <= box.y0 and box.y1 <= fig.bbox.y1
    for ax in fig.axes:
        assert not box.overlaps(ax.get_tightbbox(renderer))


def test_failure_message_on_an_axes_title_goes_into_the_axes(concentrating):
    ds = _failed(concentrating)
    fig = mf.plot.energy_curve(ds)
    (ax,) = fig.axes
    assert ax.get_title() == "SA β=4.0 σ=0.0 spectral (stopped early)"
    note = _note(ax.texts)
    assert " ".join(note.get_text().split()) == f"Run stopped early: {MESSAGE}"
    renderer = _renderer(fig)
    assert ax.bbox.contains(*note.get_window_extent(renderer).p0)
    assert ax.bbox.contains(*note.get_window_extent(renderer).p1)


def test_failure_message_of_an_animation_stays_out_of_the_frame_title(concentrating):
    animation = mf.plot.animate_density(_failed(concentrating))
    fig = animation._fig
    title = fig.axes[0].get_title()
    assert MESSAGE not in title and title.count("\n") == 1  # run, then the time of the frame
    assert " ".join(_note(fig.texts).get_text().split()) == f"Run stopped early: {MESSAGE}"


def test_a_run_that_succeeded_has_no_note(concentrating):
    fig = mf.plot.sphere_maps(concentrating)
    assert fig.texts == [fig._suptitle] and "stopped" not in fig.get_suptitle()

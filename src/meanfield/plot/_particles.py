"""Particles of a :func:`meanfield.simulate` result: snapshots on S¹ or S² at chosen times, and the angles
θ_i(t) of particles on S¹ over time.

On S² a snapshot is the orthographic view from ``view``: particles on the visible hemisphere are filled,
those behind it hollow and pale, at their projected position.

Coincident particles (a cluster) would be one dot: particles are grouped instead, each group the particles
within ``CLUSTER_TOLERANCE`` (Euclidean chord, on S¹ between the points (cos θ, sin θ)) of its first
ungrouped member, and drawn as one marker at the group's normalised mean whose area is ``MARKER_AREA``
(``BACK_MARKER_AREA`` behind S²) times the number of particles in it, capped at ``MAX_MARKER_AREA``; a
group of two or more is labelled with that number.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure
from matplotlib.text import Text
from scipy.spatial import cKDTree

from ._checks import TIME_LABEL, axes_of, new_figure, particle_angles_or_points, put_title, time_indices

__all__ = ["CirclePanel", "SpherePanel", "clusters", "particle_paths", "particle_snapshots", "sphere_frame",
           "view_towards_mean"]

_RING = np.linspace(0, 2 * np.pi, 361)

#: particles closer than this chord are drawn as one marker (10⁻² ≈ 0.57°, below a marker's width)
CLUSTER_TOLERANCE = 1e-2
#: marker area [pt²] per particle, in front (and on S¹) and behind S²
MARKER_AREA, BACK_MARKER_AREA = 18.0, 14.0
#: largest marker area [pt²], about a fifth of a panel's width across; the label gives the count beyond it
MAX_MARKER_AREA = 400.0


def particle_snapshots(ds: xr.Dataset, times: Sequence[float] | None = None, *, system: int = 0,
                       view: tuple[float, float] | None = None, title: str | None = None) -> Figure:
    """The particles on S¹ or S² at chosen times, one panel per time.

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`meanfield.simulate` on S¹ (positions over (time, particle), angles in radians)
        or S² (over (time, particle, component), unit vectors of R³).
    times : sequence of float, optional
        Times to show (the nearest output times are used); default: four evenly spaced outputs.
    system : int
        Which system of an ensemble (a ``system`` dimension) to show.
    view : (float, float), optional
        Latitude and longitude [rad] of the viewing direction on S²; by default the direction of the mean
        ∑ x_i / n at the last time shown (the north pole if that mean vanishes).
    title : str, optional
        Figure title; by default built from the dataset's attrs.

    Returns
    -------
    matplotlib.figure.Figure
        One Axes per time, each with one scatter collection of the clusters (two on S²: back, front): one
        marker per group of particles within ``CLUSTER_TOLERANCE`` (chord 10⁻²) of one another, of area
        18 pt² (14 behind S²) times their number, at most 400 pt², and a count label on groups of two or more.

    Raises
    ------
    ValueError
        No ``positions``, positions on S^{d-1} with d > 3, ``system`` out of range, or ``times`` empty.

    Examples
    --------
    >>> import numpy as np, meanfield as mf
    >>> x0 = np.random.default_rng(0).uniform(0, 2 * np.pi, 32)
    >>> ds = mf.simulate(mf.SelfAttention(9.0), x0, np.linspace(0, 30, 31))
    >>> mf.plot.particle_snapshots(ds, times=[0, 10, 30]).savefig("particles.png")  # doctest: +SKIP
    """
    domain, positions = particle_angles_or_points(ds, "particle_snapshots", system)
    t = ds["time"].values
    idx = time_indices(t, times)
    if domain == "sphere" and view is None:
        view = view_towards_mean(positions[idx[-1]])
    fig = new_figure((2.4 * idx.size + 0.4, 2.9))
    axes = fig.subplots(1, idx.size, squeeze=False)[0]
    for ax, i in zip(axes, idx):
        panel = CirclePanel(ax) if domain == "circle" else SpherePanel(ax, view)
        panel.draw(positions[i])
        ax.set_title(f"t = {t[i]:.3g}", fontsize="small")
    put_title(fig, ds, title, f"n={positions.shape[1]}")
    return fig


def particle_paths(ds: xr.Dataset, *, system: int = 0, ax: Axes | None = None, title: str | None = None) -> Figure:
    """The angles θ_i(t) ∈ [0, 2π) of particles on S¹ over time: the particle counterpart of
    :func:`density_map`'s heat map.

    A path that wraps around 2π is broken there rather than drawn across the panel.

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`meanfield.simulate` on S¹ (positions over (time, particle)).
    system : int
        Which system of an ensemble to show.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new Figure with one Axes.
    title : str, optional
        Axes title; by default built from the dataset's attrs.

    Returns
    -------
    matplotlib.figure.Figure
        One line per particle.

    Raises
    ------
    ValueError
        No ``positions``, or particles not on S¹.

    Examples
    --------
    >>> import numpy as np, meanfield as mf
    >>> ds = mf.simulate(mf.SelfAttention(4.0), np.random.default_rng(0).uniform(0, 2 * np.pi, 64),
    ...                  np.linspace(0, 20, 201))
    >>> mf.plot.particle_paths(ds).savefig("paths.png")  # doctest: +SKIP
    """
    domain, theta = particle_angles_or_points(ds, "particle_paths", system)
    if domain != "circle":
        raise ValueError("particle_paths draws angles of particles on S¹; for particles on S² use "
                         "particle_snapshots or animate_particles")
    wrapped = np.mod(theta, 2 * np.pi)
    wrapped[1:][np.abs(np.diff(wrapped, axis=0)) > np.pi] = np.nan  # break a path where it wraps
    fig, ax = axes_of(ax, (6.4, 4.0))
    ax.plot(ds["time"].values, wrapped, color="k", lw=0.6, alpha=0.7)
    ax.set_xlabel(TIME_LABEL)
    ax.set_ylabel("angle θ_i(t) [rad]")
    ax.set_ylim(0, 2 * np.pi)
    ax.set_yticks([0, np.pi / 2, np.pi, 3 * np.pi / 2, 2 * np.pi], ["0", "π/2", "π", "3π/2", "2π"])
    put_title(ax, ds, title, f"n={theta.shape[1]}")
    return fig


def clusters(x: np.ndarray, tolerance: float = CLUSTER_TOLERANCE) -> tuple[np.ndarray, np.ndarray]:
    """Groups of the points x (shape (n, k), unit vectors; rows with NaN are left out): each group the
    ungrouped points within Euclidean distance ``tolerance`` of its first ungrouped member, in the order of
    those first members (so a group spans at most 2 ``tolerance`` and chains of near points do not merge).

    Returns
    -------
    centres : numpy.ndarray, shape (m, k)
        The normalised mean of each group.
    counts : numpy.ndarray of int, shape (m,)
        The number of points in each group.
    """
    x = x[np.all(np.isfinite(x), axis=1)]
    tree = cKDTree(x)
    group = np.full(len(x), -1)
    counts: list[int] = []
    for i in range(len(x)):
        if group[i] >= 0:
            continue
        ball = np.asarray(tree.query_ball_point(x[i], tolerance), dtype=int)
        ball = ball[group[ball] < 0]
        group[ball] = len(counts)
        counts.append(ball.size)
    centres = np.zeros((len(counts), x.shape[1]))
    np.add.at(centres, group, x)
    return centres / np.linalg.norm(centres, axis=1, keepdims=True), np.array(counts, dtype=int)


def _mark(ax: Axes, points: PathCollection, uv: np.ndarray, counts: np.ndarray, area: float) -> list[Text]:
    """Clusters at ``uv`` (shape (m, 2)) of ``counts`` particles as the markers of ``points`` (area ``area``
    times the count, at most ``MAX_MARKER_AREA``), labelled with the count where it is 2 or more; returns the
    labels."""
    areas = np.minimum(area * counts, MAX_MARKER_AREA)
    points.set_offsets(uv.reshape(-1, 2))
    points.set_sizes(areas)
    offset = 0.4 * np.sqrt(areas) + 1  # the marker's radius along the diagonal, and 1 pt [pt]
    return [ax.annotate(str(count), (u, v), xytext=(r, r), textcoords="offset points", fontsize=7,
                        color="0.15", alpha=points.get_alpha(), zorder=4)
            for (u, v), count, r in zip(uv, counts, offset) if count > 1]


class CirclePanel:
    """Particles on the unit circle (drawn in grey) of an Axes, as the markers of :func:`clusters`; ``draw``
    shows one configuration, replacing the previous one (an animation frame).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The panel: equal aspect, no ticks, the unit disc with a margin.
    """

    def __init__(self, ax: Axes) -> None:
        ax.plot(np.cos(_RING), np.sin(_RING), color="0.7", lw=0.8)
        self.ax = ax
        self.points = ax.scatter([], [], s=MARKER_AREA, color="tab:red", zorder=3)
        self.labels: list[Text] = []
        _unit_frame(ax)

    def draw(self, theta: np.ndarray) -> None:
        """Show the particles at the angles ``theta`` [rad], shape (n,)."""
        centres, counts = clusters(np.column_stack([np.cos(theta), np.sin(theta)]))
        for label in self.labels:
            label.remove()
        self.labels = _mark(self.ax, self.points, centres, counts, MARKER_AREA)


class SpherePanel:
    """Particles on S² of an Axes in the orthographic view from ``view``, as the markers of :func:`clusters`:
    the visible ones filled, the hidden ones hollow and pale at their projected position; ``draw`` shows one
    configuration, replacing the previous one.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The panel: equal aspect, no ticks, the unit disc (the rim of the view) with a margin.
    view : (float, float)
        Latitude and longitude [rad] of the view direction.
    """

    def __init__(self, ax: Axes, view: tuple[float, float]) -> None:
        ax.plot(np.cos(_RING), np.sin(_RING), color="0.5", lw=0.8)
        self.ax, self.view = ax, view
        self.back = ax.scatter([], [], s=BACK_MARKER_AREA, facecolors="none", edgecolors="tab:red", alpha=0.35,
                               zorder=2)
        self.front = ax.scatter([], [], s=MARKER_AREA, color="tab:red", zorder=3)
        self.labels: list[Text] = []
        _unit_frame(ax)

    def draw(self, x: np.ndarray) -> None:
        """Show the particles at the points ``x`` of S², shape (n, 3)."""
        centres, counts = clusters(x)
        u, v, w = sphere_frame(centres, self.view)
        uv, seen = np.column_stack([u, v]), w >= 0
        for label in self.labels:
            label.remove()
        self.labels = (_mark(self.ax, self.back, uv[~seen], counts[~seen], BACK_MARKER_AREA)
                       + _mark(self.ax, self.front, uv[seen], counts[seen], MARKER_AREA))


def sphere_frame(x: np.ndarray, view: tuple[float, float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Coordinates (u, v, w) of points x ∈ S² in the frame (e_east, e_north, c) of the view direction c at
    ``view`` = (lat, lon): (u, v) is the orthographic projection, w > 0 on the visible hemisphere."""
    lat0, lon0 = view
    c = np.array([np.cos(lat0) * np.cos(lon0), np.cos(lat0) * np.sin(lon0), np.sin(lat0)])
    east = np.array([-np.sin(lon0), np.cos(lon0), 0.0])
    north = np.cross(c, east)
    return x @ east, x @ north, x @ c


def view_towards_mean(x: np.ndarray) -> tuple[float, float]:
    """(lat, lon) of the mean of points x ∈ S² (shape (n, 3)); the north pole if the mean vanishes."""
    m = x.mean(axis=0)
    norm = float(np.linalg.norm(m))
    if norm < 1e-12:
        return (np.pi / 2, 0.0)
    return (float(np.arcsin(np.clip(m[2] / norm, -1, 1))), float(np.arctan2(m[1], m[0])))


def _unit_frame(ax: Axes) -> None:
    """Equal aspect, a margin around the unit disc, no ticks."""
    ax.set_aspect("equal")
    ax.set_xlim(-1.15, 1.15)
    ax.set_ylim(-1.15, 1.15)
    ax.set_xticks([])
    ax.set_yticks([])

"""Particles of a :func:`meanfield.simulate` result: snapshots on S¹ or S² at chosen times, and the angles
θ_i(t) of particles on S¹ over time.

On S² a snapshot is the orthographic view from ``view``: particles on the visible hemisphere are filled,
those behind it hollow and pale, at their projected position.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure

from ._checks import TIME_LABEL, axes_of, new_figure, particle_angles_or_points, put_title, time_indices

__all__ = ["draw_circle_panel", "draw_sphere_panel", "particle_paths", "particle_snapshots", "sphere_frame",
           "view_towards_mean"]

_RING = np.linspace(0, 2 * np.pi, 361)


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
        One Axes per time, each with one scatter collection of the n particles (two on S²: front and back).

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
        if domain == "circle":
            draw_circle_panel(ax, positions[i])
        else:
            draw_sphere_panel(ax, positions[i], view)
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


def draw_circle_panel(ax: Axes, theta: np.ndarray) -> PathCollection:
    """Particles at angles ``theta`` [rad] as points on the unit circle drawn in grey; returns the scatter."""
    ax.plot(np.cos(_RING), np.sin(_RING), color="0.7", lw=0.8)
    points = ax.scatter(np.cos(theta), np.sin(theta), s=18, color="tab:red", zorder=3)
    _unit_frame(ax)
    return points


def draw_sphere_panel(ax: Axes, x: np.ndarray, view: tuple[float, float]) -> tuple[PathCollection, PathCollection]:
    """Points ``x`` of S² (shape (n, 3)) in the orthographic view from ``view`` = (lat, lon) [rad]: the visible
    ones filled, the hidden ones hollow and pale; returns the two scatters (front, back)."""
    u, v, w = sphere_frame(x, view)
    ax.plot(np.cos(_RING), np.sin(_RING), color="0.5", lw=0.8)
    back = ax.scatter(np.where(w < 0, u, np.nan), np.where(w < 0, v, np.nan), s=14, facecolors="none",
                      edgecolors="tab:red", alpha=0.35, zorder=2)
    front = ax.scatter(np.where(w >= 0, u, np.nan), np.where(w >= 0, v, np.nan), s=18, color="tab:red", zorder=3)
    _unit_frame(ax)
    return front, back


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

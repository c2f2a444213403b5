"""Maps of a density on S²: one map in a latitude–longitude or an orthographic projection, and orthographic
maps at several times above the energy curve.

The colour scale is logarithmic from

    floor = min(10⁻³ max, m / (4π) / 10)    to    max,

max the largest value shown and m / (4π) the uniform density of the run's mass m (the ``mass`` at the first
output time, 1 without one): three decades below the top, so that clusters and the depleted regions between
them are both visible, and always at least a decade below the uniform density, so that a uniform start is
drawn in colour, not in the black of the floor. Values below the floor are drawn at the floor; the colour
bar marks the uniform density with a cyan line.

Both projections are smooth: the orthographic map interpolates the grid bilinearly onto 200 × 200 display
pixels; the latitude–longitude map is a Gouraud-shaded mesh through the grid points, closed at the poles
(the mean of the nearest ring) and across 360° east.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.cm import ScalarMappable
from matplotlib.collections import QuadMesh
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import Circle
from scipy.interpolate import RegularGridInterpolator

from ._checks import TIME_LABEL, axes_of, density_domain, energy_symbol, new_figure, put_title, time_indices
from ._curves import draw_time_series

__all__ = ["density_bar", "density_norm", "draw_latlon", "latlon_values", "orthographic_image", "sphere_map",
           "sphere_maps", "uniform_density", "view_label", "view_towards_mass"]

PROJECTIONS = ("orthographic", "latlon")

#: decades of the colour scale below the largest value shown
DECADES = 3
#: the colour floor lies at least this factor below the uniform density m / (4π)
UNIFORM_MARGIN = 10.0


def orthographic_image(
    lat: np.ndarray, lon: np.ndarray, values: np.ndarray, view: tuple[float, float] = (0.5, 0.0), size: int = 200
) -> np.ndarray:
    """Values on a (lat, lon) grid seen from direction ``view`` = (latitude, longitude) [rad], orthographic
    projection.

    Pixel (u, v) ∈ [-1, 1]² with u² + v² ≤ 1 shows the point
    x = u e_east + v e_north + √(1 - u² - v²) c of the visible hemisphere
    (c the view direction), by bilinear interpolation in (lat, lon);
    pixels outside the disc are NaN.

    Parameters
    ----------
    lat : numpy.ndarray, shape (n_lat,)
        Latitudes of the grid rows [rad], in (-π/2, π/2); the poles take the mean of the nearest ring.
    lon : numpy.ndarray, shape (n_lon,)
        Longitudes of the grid columns [rad], increasing, periodic with period 2π.
    values : numpy.ndarray, shape (n_lat, n_lon)
        The values on the grid (a density, or any field).
    view : tuple of float
        The view direction c as (latitude, longitude) [rad].
    size : int
        Pixels per side of the image.

    Returns
    -------
    numpy.ndarray, shape (size, size)
        The image, row 0 at v = 1, column 0 at u = -1; NaN outside the disc.

    Examples
    --------
    >>> import numpy as np, meanfield as mf
    >>> s = mf.Sphere(15)
    >>> image = mf.plot.orthographic_image(s.lat, s.lon, np.ones(s.shape), view=(0.5, 0.0), size=64)
    >>> image.shape
    (64, 64)
    """
    lat0, lon0 = view
    c = np.array([np.cos(lat0) * np.cos(lon0), np.cos(lat0) * np.sin(lon0), np.sin(lat0)])
    east = np.array([-np.sin(lon0), np.cos(lon0), 0.0])
    north = np.cross(c, east)
    u = np.linspace(-1, 1, size)
    uu, vv = np.meshgrid(u, u[::-1])
    inside = uu**2 + vv**2 <= (1 + 2.0 / size) ** 2  # edge pixels are kept; the caller clips to the disc
    w = np.sqrt(np.clip(1 - uu**2 - vv**2, 0, None))
    pts = uu[..., None] * east + vv[..., None] * north + w[..., None] * c
    pts /= np.linalg.norm(pts, axis=-1, keepdims=True)
    plat = np.arcsin(np.clip(pts[..., 2], -1, 1))
    plon = np.mod(np.arctan2(pts[..., 1], pts[..., 0]), 2 * np.pi)
    interp = RegularGridInterpolator(*_closed_grid(lat, lon, values))
    image = interp(np.stack([plat, plon], axis=-1))
    return np.where(inside, image, np.nan)


def _closed_grid(lat: np.ndarray, lon: np.ndarray, values: np.ndarray
                 ) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """((latitudes from -π/2 to π/2, longitudes from lon[0] to lon[0] + 2π), values) [rad]: the grid sorted by
    latitude, with a row at each pole (the mean of the nearest ring) and the first column repeated at
    lon[0] + 2π, so that it covers the whole sphere."""
    order = np.argsort(lat)
    lat_s = np.concatenate([[-np.pi / 2], lat[order], [np.pi / 2]])
    vals = values[order]
    south = vals[:1].mean(axis=1, keepdims=True).repeat(vals.shape[1], 1)
    north = vals[-1:].mean(axis=1, keepdims=True).repeat(vals.shape[1], 1)
    vals = np.concatenate([south, vals, north])
    lon_p = np.concatenate([lon, [lon[0] + 2 * np.pi]])
    return (lat_s, lon_p), np.concatenate([vals, vals[:, :1]], axis=1)


def latlon_values(lat: np.ndarray, lon: np.ndarray, values: np.ndarray, floor: float) -> np.ndarray:
    """``values`` on the closed grid of :func:`draw_latlon` (shape (n_lat + 2, n_lon + 1)), at least ``floor``."""
    return np.clip(_closed_grid(lat, lon, values)[1], floor, None)


def draw_latlon(ax: Axes, ds: xr.Dataset, rho: np.ndarray, norm: LogNorm) -> QuadMesh:
    """``rho`` (on the grid of ``ds``) as a Gouraud-shaded map of longitude [degrees east, 0…360] against
    latitude [degrees north, -90…90] on ``ax`` with the colour scale ``norm``; returns the mesh."""
    lat, lon = ds["lat"].values, ds["lon"].values
    (lat_s, lon_p), _ = _closed_grid(lat, lon, rho)
    mesh = ax.pcolormesh(np.degrees(lon_p), np.degrees(lat_s), latlon_values(lat, lon, rho, norm.vmin),
                         shading="gouraud", norm=norm, cmap="magma")
    ax.set_xlabel("longitude [degrees east]")
    ax.set_ylabel("latitude [degrees north]")
    ax.set_aspect("equal")
    return mesh


def uniform_density(ds: xr.Dataset) -> float:
    """m / (4π) [1/sr]: the uniform density of the mass m of ``ds`` (its ``mass`` at the first output time, 1
    without one)."""
    mass = float(ds["mass"].values[0]) if "mass" in ds else 1.0
    return mass / (4 * np.pi)


def density_norm(ds: xr.Dataset, rho: np.ndarray) -> LogNorm:
    """The logarithmic colour scale of the values ``rho`` of ``ds``: from min(10⁻³ max, m/(4π)/10) to max
    (see the module docstring)."""
    top = float(np.max(rho))
    return LogNorm(vmin=min(top * 10.0**-DECADES, uniform_density(ds) / UNIFORM_MARGIN), vmax=top)


def density_bar(fig: Figure, image: ScalarMappable, ax: Axes | list[Axes], ds: xr.Dataset) -> None:
    """The colour bar of a density map beside ``ax``, the uniform density m/(4π) marked by a cyan line."""
    bar = fig.colorbar(image, ax=ax, shrink=0.8, label="density ρ [1/sr] (cyan line: uniform m/4π)")
    bar.ax.axhline(uniform_density(ds), color="tab:cyan", lw=1.5)


def view_label(view: tuple[float, float]) -> str:
    """"view centre: latitude …°, longitude …°" of ``view`` = (latitude, longitude) [rad]."""
    return f"view centre: latitude {np.degrees(view[0]):.1f}°, longitude {np.degrees(view[1]):.1f}°"


def sphere_map(ds: xr.Dataset, time: float | None = None, *, projection: str = "orthographic",
               view: tuple[float, float] | None = None, ax: Axes | None = None) -> Figure:
    """One map of ρ(t, ·) on S² at the output time nearest to ``time``.

    The colour scale is logarithmic from min(10⁻³ max ρ(t), m/(4π)/10) to max ρ(t), m/(4π) the uniform
    density of the run's ``mass`` m (1 without one), so that a uniform density is drawn at least a decade
    above the floor (the colour bar marks it with a cyan line). The latitude–longitude map is
    Gouraud-shaded through the grid points, the orthographic map interpolated bilinearly onto 200 × 200
    pixels.

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`meanfield.solve` on a :class:`~meanfield.Sphere` (density over (time, lat, lon)).
    time : float, optional
        Time to show (the nearest output time is used); default the last.
    projection : {"orthographic", "latlon"}
        "orthographic": the hemisphere facing ``view`` (the x label gives the latitude and longitude of its
        centre in degrees); "latlon": the whole sphere as longitude (x, degrees east) against latitude (y,
        degrees north).
    view : (float, float), optional
        Latitude and longitude [rad] of the viewing direction of the orthographic map; by default the
        direction of the first moment ∫ x ρ dσ, so that the main cluster faces the reader.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new Figure with one Axes.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        Not a density on S², or an unknown ``projection``.

    Examples
    --------
    >>> import numpy as np, meanfield as mf
    >>> rho0 = mf.von_mises(mf.Sphere(31), [0, 0, 1], 2.0)
    >>> ds = mf.solve(mf.SelfAttention(2.0, noise=0.05), rho0, np.linspace(0, 1, 5))
    >>> mf.plot.sphere_map(ds, projection="latlon").savefig("sphere.png")  # doctest: +SKIP
    """
    if density_domain(ds, "sphere_map") != "sphere":
        raise ValueError(f"sphere_map needs a dataset on the sphere (dims 'lat', 'lon'), got dims {tuple(ds.dims)}")
    if projection not in PROJECTIONS:
        raise ValueError(f"projection must be one of {PROJECTIONS}, got {projection!r}")
    t_all = ds["time"].values
    i = t_all.size - 1 if time is None else int(time_indices(t_all, [time])[0])
    rho = np.asarray(ds["density"].values[i], dtype=float)
    norm = density_norm(ds, rho)
    fig, ax = axes_of(ax, (6.4, 3.6) if projection == "latlon" else (4.6, 4.0))
    if projection == "latlon":
        image = draw_latlon(ax, ds, rho, norm)
    else:
        view = view if view is not None else view_towards_mass(ds["lat"].values, ds["lon"].values, rho)
        image = draw_orthographic(ax, ds, rho, view, norm)
        ax.set_xlabel(view_label(view))
    density_bar(fig, image, ax, ds)
    ax.set_title(f"t = {t_all[i]:.3g}", fontsize=9)
    return fig


def sphere_maps(
    ds: xr.Dataset,
    times: Sequence[float] | None = None,
    view: tuple[float, float] | None = None,
    title: str | None = None,
) -> Figure:
    """Orthographic maps of ρ(t) on S² at chosen times above the energy curve E_β(t).

    One logarithmic colour scale for every map, from min(10⁻³ max, m/(4π)/10) to the largest value shown
    max, m/(4π) the uniform density of the run's ``mass`` m (1 without one): a uniform start is drawn at
    least a decade above the floor (the colour bar marks it with a cyan line). Each map interpolates the
    grid bilinearly onto 200 × 200 pixels.

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`meanfield.solve` on a :class:`~meanfield.Sphere` (density over (time, lat, lon)).
    times : sequence of float, optional
        Times to show (the nearest output times are used); default: four
        evenly spaced outputs from the first to the last.
    view : (float, float), optional
        Latitude and longitude [rad] of the viewing direction; by default the
        direction of the first moment ∫ x ρ dσ at the last time shown, so that
        the main cluster faces the reader. The title gives the latitude and
        longitude of the view centre in degrees.
    title : str, optional
        Figure title; by default built from the dataset's attrs.

    Returns
    -------
    matplotlib.figure.Figure
        One Axes per map, the colour bar, and the energy curve.

    Raises
    ------
    ValueError
        The dataset is not on the sphere, or ``times`` is empty.

    Examples
    --------
    >>> import numpy as np, meanfield as mf
    >>> rho0 = mf.von_mises(mf.Sphere(31), [0, 0, 1], 2.0)
    >>> ds = mf.solve(mf.SelfAttention(2.0, noise=0.05), rho0, np.linspace(0, 1, 5))
    >>> mf.plot.sphere_maps(ds, times=[0, 1]).savefig("sphere.png")  # doctest: +SKIP
    """
    if density_domain(ds, "sphere_maps") != "sphere":
        raise ValueError(f"sphere_maps needs a dataset on the sphere (dims 'lat', 'lon'), got dims {tuple(ds.dims)}")
    t_all = ds["time"].values
    idx = time_indices(t_all, times)
    rho = ds["density"].values
    if view is None:
        view = view_towards_mass(ds["lat"].values, ds["lon"].values, rho[idx[-1]])
    norm = density_norm(ds, rho[idx])
    with_energy = "energy" in ds
    fig = new_figure((2.6 * idx.size + 1.0, 5.2 if with_energy else 3.4))
    grid = fig.add_gridspec(2 if with_energy else 1, idx.size, height_ratios=[2.2, 1] if with_energy else None)
    image = None
    for k, i in enumerate(idx):
        ax = fig.add_subplot(grid[0, k])
        image = draw_orthographic(ax, ds, rho[i], view, norm)
        ax.set_title(f"t = {t_all[i]:.3g}", fontsize=9)
        ax.set_axis_off()
    density_bar(fig, image, fig.axes, ds)
    if with_energy:
        ax_e = fig.add_subplot(grid[1, :])
        draw_time_series(ax_e, ds, "energy")
        ax_e.set_ylabel(energy_symbol(ds))
        ax_e.set_xlabel(TIME_LABEL)
        ax_e.plot(t_all[idx], ds["energy"].values[idx], "o", color="C1", ms=4)
    grid_label = f"lmax={ds.sizes['lat'] - 1}, {view_label(view)}"
    put_title(fig, ds, title, grid_label)
    return fig


def draw_orthographic(ax: Axes, ds: xr.Dataset, rho: np.ndarray, view: tuple[float, float],
                      norm: LogNorm) -> AxesImage:
    """The orthographic image of ``rho`` (on the grid of ``ds``) on ``ax``, clipped to the unit disc, with the
    colour scale ``norm`` (values below its floor drawn at the floor); returns the image."""
    img = orthographic_image(ds["lat"].values, ds["lon"].values, rho, view)
    image = ax.imshow(np.clip(img, norm.vmin, None), extent=(-1, 1, -1, 1), norm=norm, cmap="magma",
                      interpolation="nearest")
    rim = Circle((0, 0), 1, fill=False, lw=0.8)
    ax.add_patch(rim)
    image.set_clip_path(rim)
    ax.set_xticks([])
    ax.set_yticks([])
    return image


def view_towards_mass(lat: np.ndarray, lon: np.ndarray, rho: np.ndarray) -> tuple[float, float]:
    """(lat, lon) of the first moment of ρ on the grid (a quadrature-free direction is enough here)."""
    weight = rho * np.cos(lat)[:, None]
    x = np.sum(weight * np.cos(lat)[:, None] * np.cos(lon)[None, :])
    y = np.sum(weight * np.cos(lat)[:, None] * np.sin(lon)[None, :])
    z = np.sum(weight * np.sin(lat)[:, None])
    norm = np.sqrt(x * x + y * y + z * z)
    if norm < 1e-12 * np.sum(np.abs(weight)):
        return (0.5, 0.0)
    return (float(np.arcsin(z / norm)), float(np.arctan2(y, x)))

"""Maps of a density on S²: one map in a latitude–longitude or an orthographic projection, and orthographic
maps at several times above the energy curve.

The colour scale is logarithmic over three decades below the largest value shown, so that clusters and the
depleted regions between them are both visible.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import Circle
from scipy.interpolate import RegularGridInterpolator

from ._checks import TIME_LABEL, axes_of, density_domain, new_figure, put_title, time_indices
from ._curves import draw_time_series

__all__ = ["orthographic_image", "sphere_map", "sphere_maps", "view_towards_mass"]

PROJECTIONS = ("orthographic", "latlon")


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
    order = np.argsort(lat)
    lat_s = np.concatenate([[-np.pi / 2], lat[order], [np.pi / 2]])
    vals = values[order]
    # poles: the mean of the nearest ring; longitude periodic
    south = vals[:1].mean(axis=1, keepdims=True).repeat(vals.shape[1], 1)
    north = vals[-1:].mean(axis=1, keepdims=True).repeat(vals.shape[1], 1)
    vals = np.concatenate([south, vals, north])
    lon_p = np.concatenate([lon, [lon[0] + 2 * np.pi]])
    vals = np.concatenate([vals, vals[:, :1]], axis=1)
    interp = RegularGridInterpolator((lat_s, lon_p), vals)
    image = interp(np.stack([plat, plon], axis=-1))
    return np.where(inside, image, np.nan)


def sphere_map(ds: xr.Dataset, time: float | None = None, *, projection: str = "orthographic",
               view: tuple[float, float] | None = None, ax: Axes | None = None) -> Figure:
    """One map of ρ(t, ·) on S² at the output time nearest to ``time``.

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`meanfield.solve` on a :class:`~meanfield.Sphere` (density over (time, lat, lon)).
    time : float, optional
        Time to show (the nearest output time is used); default the last.
    projection : {"orthographic", "latlon"}
        "orthographic": the hemisphere facing ``view``; "latlon": the whole sphere as longitude (x, degrees
        east) against latitude (y, degrees north).
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
    top = float(np.max(rho))
    fig, ax = axes_of(ax, (6.4, 3.6) if projection == "latlon" else (4.6, 4.0))
    if projection == "latlon":
        lat, lon = np.degrees(ds["lat"].values), np.degrees(ds["lon"].values)
        order = np.argsort(lat)
        image = ax.pcolormesh(lon, lat[order], np.clip(rho[order], top * 1e-3, None), shading="nearest",
                              norm=LogNorm(vmin=top * 1e-3, vmax=top), cmap="magma")
        ax.set_xlabel("longitude [degrees east]")
        ax.set_ylabel("latitude [degrees north]")
        ax.set_aspect("equal")
    else:
        view = view if view is not None else view_towards_mass(ds["lat"].values, ds["lon"].values, rho)
        image = draw_orthographic(ax, ds, rho, view, top)
        ax.set_xlabel(f"view (lat, lon) = ({view[0]:.2f}, {view[1]:.2f}) rad")
    fig.colorbar(image, ax=ax, shrink=0.8, label="density ρ [1/sr]")
    ax.set_title(f"t = {t_all[i]:.3g}", fontsize=9)
    return fig


def sphere_maps(
    ds: xr.Dataset,
    times: Sequence[float] | None = None,
    view: tuple[float, float] | None = None,
    title: str | None = None,
) -> Figure:
    """Orthographic maps of ρ(t) on S² at chosen times above the energy curve E_β(t).

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
        the main cluster faces the reader. The colour scale is logarithmic over
        three decades below the largest value shown.
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
    top = float(np.max(rho[idx]))
    with_energy = "energy" in ds
    fig = new_figure((2.6 * idx.size + 1.0, 5.2 if with_energy else 3.4))
    grid = fig.add_gridspec(2 if with_energy else 1, idx.size, height_ratios=[2.2, 1] if with_energy else None)
    image = None
    for k, i in enumerate(idx):
        ax = fig.add_subplot(grid[0, k])
        image = draw_orthographic(ax, ds, rho[i], view, top)
        ax.set_title(f"t = {t_all[i]:.3g}", fontsize=9)
        ax.set_axis_off()
    fig.colorbar(image, ax=fig.axes, shrink=0.8, label="density ρ [1/sr]")
    if with_energy:
        ax_e = fig.add_subplot(grid[1, :])
        draw_time_series(ax_e, ds, "energy")
        ax_e.set_ylabel("E_β")
        ax_e.set_xlabel(TIME_LABEL)
        ax_e.plot(t_all[idx], ds["energy"].values[idx], "o", color="C1", ms=4)
    grid_label = f"lmax={ds.sizes['lat'] - 1}, view (lat, lon) = ({view[0]:.2f}, {view[1]:.2f})"
    put_title(fig, ds, title, grid_label)
    return fig


def draw_orthographic(ax: Axes, ds: xr.Dataset, rho: np.ndarray, view: tuple[float, float], top: float) -> AxesImage:
    """The orthographic image of ``rho`` (on the grid of ``ds``) on ``ax``, clipped to the unit disc, with the
    logarithmic colour scale [10⁻³ top, top]; returns the image."""
    img = orthographic_image(ds["lat"].values, ds["lon"].values, rho, view)
    image = ax.imshow(np.clip(img, top * 1e-3, None), extent=(-1, 1, -1, 1), norm=LogNorm(vmin=top * 1e-3, vmax=top),
                      cmap="magma", interpolation="nearest")
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

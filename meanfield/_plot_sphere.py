"""Figures of PDE results on S²: orthographic maps of the density and the energy curve.

Figures are :class:`matplotlib.figure.Figure` objects, independent of any GUI
backend; save them with ``fig.savefig(path)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure
from matplotlib.patches import Circle
from scipy.interpolate import RegularGridInterpolator

from ._plot import energy_panel, run_title

__all__ = ["orthographic_image", "plot_sphere_solution"]


def orthographic_image(
    lat: np.ndarray, lon: np.ndarray, values: np.ndarray, view: tuple[float, float] = (0.5, 0.0), size: int = 200
) -> np.ndarray:
    """The density seen from direction ``view`` = (latitude, longitude) [rad], orthographic projection.

    Pixel (u, v) ∈ [-1, 1]² with u² + v² ≤ 1 shows the point
    x = u e_east + v e_north + √(1 - u² - v²) c of the visible hemisphere
    (c the view direction), by bilinear interpolation in (lat, lon);
    pixels outside the disc are NaN. Returns shape (size, size), row 0 at v = 1.
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


def plot_sphere_solution(
    ds: xr.Dataset,
    times: Sequence[float] | None = None,
    view: tuple[float, float] | None = None,
    title: str | None = None,
) -> Figure:
    """Orthographic maps of ρ(t) at chosen times above the energy curve E_β(t).

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`meanfield.solve` on a :class:`Sphere` (dims lat, lon).
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

    Raises
    ------
    ValueError
        The dataset is not on the sphere, or ``times`` is empty.
    """
    if "lat" not in ds.dims or "lon" not in ds.dims:
        raise ValueError(f"plot_sphere_solution needs a dataset on the sphere (dims 'lat', 'lon'), got dims {tuple(ds.dims)}")
    t_all = ds.time.values
    if times is None:
        idx = np.unique(np.linspace(0, t_all.size - 1, min(4, t_all.size)).round().astype(int))
    else:
        req = np.atleast_1d(np.asarray(times, dtype=float))
        if req.size == 0:
            raise ValueError("times must name at least one time to show")
        idx = np.unique(np.abs(t_all[None, :] - req[:, None]).argmin(axis=1))
    lat, lon = ds.lat.values, ds.lon.values
    rho = ds.density.values
    if view is None:
        view = _view_towards_mass(lat, lon, rho[idx[-1]])
    top = float(np.max(rho[idx]))
    fig = Figure(figsize=(2.6 * idx.size + 1.0, 5.2), layout="constrained")
    grid = fig.add_gridspec(2, idx.size, height_ratios=[2.2, 1])
    image = None
    for k, i in enumerate(idx):
        ax = fig.add_subplot(grid[0, k])
        img = orthographic_image(lat, lon, rho[i], view)
        image = ax.imshow(
            np.clip(img, top * 1e-3, None), extent=(-1, 1, -1, 1), norm=LogNorm(vmin=top * 1e-3, vmax=top),
            cmap="magma", interpolation="nearest",
        )
        rim = Circle((0, 0), 1, fill=False, lw=0.8)
        ax.add_patch(rim)
        image.set_clip_path(rim)
        ax.set_title(f"t = {t_all[i]:.3g}", fontsize=9)
        ax.set_axis_off()
    fig.colorbar(image, ax=fig.axes, shrink=0.8, label="density ρ")
    ax_e = fig.add_subplot(grid[1, :])
    energy_panel(ax_e, ds)
    ax_e.plot(t_all[idx], ds.energy.values[idx], "o", color="C1", ms=4)
    grid_label = f"lmax={ds.sizes['lat'] - 1}, view (lat, lon) = ({view[0]:.2f}, {view[1]:.2f})"
    fig.suptitle(title if title is not None else run_title(ds, grid_label), fontsize=10)
    return fig


def _view_towards_mass(lat: np.ndarray, lon: np.ndarray, rho: np.ndarray) -> tuple[float, float]:
    """(lat, lon) of the first moment of ρ on the grid (a quadrature-free direction is enough here)."""
    weight = rho * np.cos(lat)[:, None]
    x = np.sum(weight * np.cos(lat)[:, None] * np.cos(lon)[None, :])
    y = np.sum(weight * np.cos(lat)[:, None] * np.sin(lon)[None, :])
    z = np.sum(weight * np.sin(lat)[:, None])
    norm = np.sqrt(x * x + y * y + z * z)
    if norm < 1e-12 * np.sum(np.abs(weight)):
        return (0.5, 0.0)
    return (float(np.arcsin(z / norm)), float(np.arctan2(y, x)))

"""Figures of PDE results on a 1-D grid (S¹ angle, or polar angle of a
ZonalSphere): density over (time, angle) and the energy curve.

Figures are built as :class:`matplotlib.figure.Figure` objects, independent
of any GUI backend; save them with ``fig.savefig(path)``.
"""

from __future__ import annotations

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from ._domains import sphere_area

__all__ = ["plot_density_map"]


def plot_density_map(ds: xr.Dataset, title: str | None = None) -> Figure:
    """Heat map of the density over (t, θ) or (t, ϑ) above the energy E_β(t).

    The colour scale is logarithmic between 10⁻³ max ρ and max ρ, so that
    clusters and the depleted regions between them are both visible.

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`meanfield.solve` on a :class:`Circle` (dim ``theta``)
        or a ``ZonalSphere`` (dim ``polar``).
    title : str, optional
        Figure title; by default built from the dataset's attrs.
    """
    from matplotlib.colors import LogNorm

    angle = "theta" if "theta" in ds.dims else "polar" if "polar" in ds.dims else None
    if angle is None:
        raise ValueError(f"plot_density_map needs a dataset with dim 'theta' or 'polar', got dims {tuple(ds.dims)}")
    fig = Figure(figsize=(7.5, 6.5), layout="constrained")
    ax_map, ax_energy = fig.subplots(2, 1, height_ratios=[3, 1.3], sharex=True)
    rho = ds.density.values
    if angle == "polar":
        # show the polar-angle marginal |S^{d-2}| sin^{d-2}ϑ ρ(ϑ) (a density in ϑ), since
        # ρ itself (w.r.t. the area of S^{d-1}) spans many decades in high d
        d = int(ds.attrs["dimension"])
        rho = rho * sphere_area(d - 1) * np.sin(ds.polar.values) ** (d - 2)
    top = float(np.max(rho))
    norm = LogNorm(vmin=top * 1e-3, vmax=top)
    mesh = ax_map.pcolormesh(
        ds.time.values, ds[angle].values, np.clip(rho.T, top * 1e-3, None), norm=norm, shading="nearest", cmap="magma"
    )
    symbol = "θ" if angle == "theta" else "ϑ"
    label = "density ρ(t, θ)" if angle == "theta" else "polar marginal |S^{d-2}| sin^{d-2}ϑ ρ(t, ϑ)"
    fig.colorbar(mesh, ax=ax_map, label=label)
    ax_map.set_ylabel(f"{symbol} [rad]" if angle == "theta" else "polar angle ϑ from e_d [rad]")
    ticks = [0, np.pi / 2, np.pi, 3 * np.pi / 2, 2 * np.pi][: 5 if angle == "theta" else 3]
    ax_map.set_yticks(ticks, ["0", "π/2", "π", "3π/2", "2π"][: len(ticks)])
    energy_panel(ax_energy, ds)
    grid = f"N={ds.sizes[angle]}" + (f" d={ds.attrs.get('dimension')}" if angle == "polar" else "")
    fig.suptitle(title if title is not None else run_title(ds, grid), fontsize=10)
    return fig


def energy_panel(ax, ds: xr.Dataset) -> None:
    """E_β(t) of a result on ``ax``."""
    ax.plot(ds.time.values, ds.energy.values, color="k")
    ax.set_xlabel("t")
    ax.set_ylabel("E_β")
    ax.grid(alpha=0.3)


def run_title(ds: xr.Dataset, grid: str) -> str:
    """"<model> β=… σ=… <method> <grid>", with the reason when the run stopped early."""
    attrs = ds.attrs
    title = f"{attrs.get('model', '')} β={attrs.get('beta', '')} σ={attrs.get('noise', '')} {attrs.get('method', '')} {grid}"
    if not attrs.get("success", 1):
        title += f"\nstopped early: {attrs.get('message', '')}"
    return title

"""Heat map of a density over (time, angle): ρ(t, θ) on S¹, or the polar marginal p(t, ϑ) of a zonal result,
above the energy curve E_β(t)."""

from __future__ import annotations

import numpy as np
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure

from ._checks import TIME_LABEL, density_domain, energy_symbol, new_figure, put_title
from ._curves import draw_time_series
from ._marginal import MARGINAL_LABEL, polar_marginal_values

__all__ = ["density_map"]


def density_map(ds: xr.Dataset, *, ax: Axes | None = None, title: str | None = None) -> Figure:
    """Heat map of ρ(t, θ) on S¹, or of the polar marginal p(t, ϑ) = |S^{d-2}| sin^{d-2}ϑ ρ(t, ϑ) of a zonal
    result, over time (x) and angle (y), above the energy curve E_β(t).

    The colour scale is logarithmic between 10⁻³ max and max, so that clusters and the depleted regions
    between them are both visible.

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`meanfield.solve` on a :class:`~meanfield.Circle` (density over (time, theta))
        or a :class:`~meanfield.ZonalSphere` (over (time, polar)).
    ax : matplotlib.axes.Axes, optional
        Axes for the heat map alone (with its colour bar); by default a new Figure with the heat map above
        the energy curve (when the dataset has ``energy``).
    title : str, optional
        Figure title; by default built from the dataset's attrs.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        The dataset holds no density on the circle or a zonal grid (S² results: :func:`sphere_maps`).

    Examples
    --------
    >>> import numpy as np, meanfield as mf
    >>> rho0 = mf.von_mises(mf.Circle(256), 0.0, 0.5)
    >>> ds = mf.solve(mf.SelfAttention(4.0), rho0, np.linspace(0, 6, 61), method="finite_volume")
    >>> mf.plot.density_map(ds).savefig("density.png")  # doctest: +SKIP
    """
    domain = density_domain(ds, "density_map")
    if domain == "sphere":
        raise ValueError("density_map needs a dataset with dim 'theta' or 'polar', got a density over "
                         "(time, lat, lon): draw S² results with sphere_maps or sphere_map")
    below = ax is None and "energy" in ds
    if ax is None:
        fig = new_figure((7.5, 6.5))
        if below:
            ax, ax_energy = fig.subplots(2, 1, height_ratios=[3, 1.3], sharex=True)
            draw_time_series(ax_energy, ds, "energy")
            ax_energy.set_ylabel(energy_symbol(ds))
        else:
            ax = fig.add_subplot()
        grid = f"N={ds.sizes['theta' if domain == 'circle' else 'polar']}"
        put_title(fig, ds, title, grid + (f" d={ds.attrs.get('dimension')}" if domain == "zonal" else ""))
    else:
        fig = ax.figure
        if title is not None:
            ax.set_title(title, fontsize="medium")
    if domain == "circle":
        angle, rho = ds["theta"].values, ds["density"].values
        label, ylabel, ticks = "density ρ(t, θ) [1/rad]", "angle θ [rad]", 5
    else:
        angle, rho = polar_marginal_values(ds, "density_map")
        label, ylabel, ticks = MARGINAL_LABEL, "polar angle ϑ from e_d [rad]", 3
    top = float(np.max(rho))
    mesh = ax.pcolormesh(ds["time"].values, angle, np.clip(rho.T, top * 1e-3, None),
                         norm=LogNorm(vmin=top * 1e-3, vmax=top), shading="nearest", cmap="magma")
    fig.colorbar(mesh, ax=ax, label=label)
    ax.set_ylabel(ylabel)
    ax.set_yticks([0, np.pi / 2, np.pi, 3 * np.pi / 2, 2 * np.pi][:ticks], ["0", "π/2", "π", "3π/2", "2π"][:ticks])
    if not below:
        ax.set_xlabel(TIME_LABEL)
    return fig


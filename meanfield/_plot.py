"""Figures of PDE results: density over (time, θ) and the energy curve.

Figures are built as :class:`matplotlib.figure.Figure` objects, independent
of any GUI backend; save them with ``fig.savefig(path)``.
"""

from __future__ import annotations

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

__all__ = ["plot_circle_solution"]


def plot_circle_solution(ds: xr.Dataset, title: str | None = None) -> Figure:
    """Heat map of the density over (t, θ) above the energy E_β(t).

    The colour scale is logarithmic between 10⁻³ max ρ and max ρ, so that
    clusters and the depleted regions between them are both visible.

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`meanfield.solve` on the circle.
    title : str, optional
        Figure title; by default built from the dataset's attrs.
    """
    from matplotlib.colors import LogNorm

    if "theta" not in ds.dims:
        raise ValueError(f"plot_circle_solution needs a dataset on the circle (dim 'theta'), got dims {tuple(ds.dims)}")
    fig = Figure(figsize=(7.5, 6.5), layout="constrained")
    ax_map, ax_energy = fig.subplots(2, 1, height_ratios=[3, 1.3], sharex=True)
    rho = ds.density.values
    top = float(np.max(rho))
    norm = LogNorm(vmin=top * 1e-3, vmax=top)
    mesh = ax_map.pcolormesh(
        ds.time.values, ds.theta.values, np.clip(rho.T, top * 1e-3, None), norm=norm, shading="nearest", cmap="magma"
    )
    fig.colorbar(mesh, ax=ax_map, label="density ρ(t, θ)")
    ax_map.set_ylabel("θ [rad]")
    ax_map.set_yticks([0, np.pi / 2, np.pi, 3 * np.pi / 2, 2 * np.pi], ["0", "π/2", "π", "3π/2", "2π"])
    ax_energy.plot(ds.time.values, ds.energy.values, color="k")
    ax_energy.set_xlabel("t")
    ax_energy.set_ylabel("E_β")
    ax_energy.grid(alpha=0.3)
    if title is None:
        attrs = ds.attrs
        title = (
            f"{attrs.get('model', '')} β={attrs.get('beta', '')} σ={attrs.get('noise', '')} "
            f"{attrs.get('method', '')} N={ds.sizes['theta']}"
        )
        if not attrs.get("success", 1):
            title += f"\nstopped early: {attrs.get('message', '')}"
    fig.suptitle(title, fontsize=10)
    return fig

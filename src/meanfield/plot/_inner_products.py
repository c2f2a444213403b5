"""Histograms of the pairwise inner products ⟨x_i(t), x_j(t)⟩, i ≠ j, of a particle result at chosen times
(paper 2, arXiv 2312.10794, Figure 1): mass near 1 means clusters."""

from __future__ import annotations

from collections.abc import Sequence

import xarray as xr
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..particles import pairwise_inner_products
from ._checks import axes_of, system_positions, time_indices

__all__ = ["inner_products"]


def inner_products(ds: xr.Dataset, times: Sequence[float] | None = None, bins: int = 50, *, system: int = 0,
                   ax: Axes | None = None) -> Figure:
    """Histograms (densities on [-1, 1]) of {⟨x_i(t), x_j(t)⟩}_{i≠j} at chosen times, one step curve per time.

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`meanfield.simulate` (on S¹ the inner product is cos(θ_i − θ_j)).
    times : sequence of float, optional
        Times to show (the nearest output times are used); default: four evenly spaced outputs.
    bins : int
        Number of bins on [-1, 1].
    system : int
        Which system of an ensemble to show.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new Figure with one Axes.

    Returns
    -------
    matplotlib.figure.Figure
        One histogram patch per time.

    Raises
    ------
    ValueError
        No ``positions``, ``system`` out of range, or ``times`` empty.

    Examples
    --------
    >>> import meanfield as mf, numpy as np
    >>> ds = mf.simulate(mf.SelfAttention(1.0), mf.particles.uniform_sphere(16, 8, seed=3), np.linspace(0, 8, 5))
    >>> mf.plot.inner_products(ds).savefig("inner_products.png")  # doctest: +SKIP
    """
    positions = system_positions(ds, "inner_products", system)
    domain = ds.attrs.get("domain", "circle" if positions.ndim == 2 else "sphere")
    fig, ax = axes_of(ax, (6.4, 4.0))
    t = ds["time"].values
    for i in time_indices(t, times):
        ip = pairwise_inner_products(positions.isel(time=i).values, domain=domain)
        ax.hist(ip, bins=bins, range=(-1, 1), density=True, histtype="step", label=f"t = {t[i]:g}")
    ax.set_xlabel("inner product ⟨x_i, x_j⟩, i ≠ j (dimensionless)")
    ax.set_ylabel("probability density")
    ax.legend()
    return fig

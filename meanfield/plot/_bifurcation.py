"""Kuramoto bifurcation diagrams r∞(K) against the self-consistency theory."""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..studies._kuramoto import frequency_law
from ..studies._kuramoto_theory import kuramoto_critical_coupling, kuramoto_theory
from ._checks import axes_of

__all__ = ["bifurcation"]

_MARKERS = {"particles": "o", "pde": "s"}


def _label(ds: xr.Dataset) -> str:
    law = f"{ds.attrs['law']} (width {ds.attrs['width']:g})"
    return f"{ds.attrs['engine']}, {law}, σ = {ds.attrs['noise']:g}"


def bifurcation(datasets: xr.Dataset | list[xr.Dataset], *, ax: Axes | None = None) -> Figure:
    """r∞(K) of one or more :func:`~meanfield.kuramoto_bifurcation` results with their theory curves.

    Particles are drawn as points with error bars (``r_error``), the PDE as
    squares; each distinct (law, width, σ) gets its theory curve r∞(K) of the
    self-consistency equation (:func:`~meanfield.kuramoto_theory`) over the
    plotted range and a dotted line at its K_c.

    Parameters
    ----------
    datasets : xarray.Dataset or list of xarray.Dataset
        Results of :func:`meanfield.kuramoto_bifurcation` (``r_mean``, ``r_error`` over ``coupling``).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new Figure with one Axes.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    TypeError
        ``datasets`` is not a kuramoto_bifurcation Dataset or a non-empty list of them.

    Examples
    --------
    >>> import meanfield as mf
    >>> ds = mf.kuramoto_bifurcation([0.5, 1.0, 2.0], "lorentzian", width=0.5, n=500, seeds=2,
    ...                              scheduler="serial")  # doctest: +SKIP
    >>> mf.plot.bifurcation(ds).savefig("bifurcation.png")  # doctest: +SKIP
    """
    items = [datasets] if isinstance(datasets, xr.Dataset) else list(datasets)
    if not items or not all(isinstance(d, xr.Dataset) and "r_mean" in d for d in items):
        raise TypeError("datasets must be a kuramoto_bifurcation Dataset or a list of them")
    fig, ax = axes_of(ax, (6.4, 4.4))
    k_max = max(float(d["coupling"].max()) for d in items)
    k_fine = np.linspace(0, k_max, 241)
    drawn: dict[tuple, Any] = {}
    for d in items:
        key = (d.attrs["law"], float(d.attrs["width"]), float(d.attrs["centre"]), float(d.attrs["noise"]))
        if key not in drawn:
            law = frequency_law(*key[:3])
            (line,) = ax.plot(k_fine, kuramoto_theory(k_fine, law, key[3]), lw=1.5,
                              label=f"theory, {key[0]} (width {key[1]:g}), σ = {key[3]:g}")
            ax.axvline(kuramoto_critical_coupling(law, key[3]), color=line.get_color(), ls=":", lw=1)
            drawn[key] = line.get_color()
        engine = d.attrs["engine"]
        ax.errorbar(d["coupling"].values, d["r_mean"].values, yerr=d["r_error"].values,
                    fmt=_MARKERS.get(engine, "^"), ms=5, capsize=2, color=drawn[key],
                    mfc="none" if engine == "pde" else drawn[key], label=_label(d))
    ax.set_xlabel("coupling K")
    ax.set_ylabel("r∞ (time average over the final window)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("Kuramoto: r∞(K) against self-consistency theory (dotted: K_c)")
    ax.legend(fontsize=7)
    return fig

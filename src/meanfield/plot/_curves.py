"""Curves over time: the interaction energy E_β(t) and the order parameter r(t) of any result.

Both read the ``energy`` / ``order_parameter`` variable that :func:`meanfield.solve`,
:func:`meanfield.simulate` and the Kuramoto runs store; an ensemble of particle systems (a ``system``
dimension) gives one thin line per system and their mean in black.
"""

from __future__ import annotations

import xarray as xr
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ._checks import TIME_LABEL, axes_of, check_variables, energy_symbol, put_title

__all__ = ["energy_curve", "order_parameter_curve", "draw_time_series"]

ENERGY_LABEL = "interaction energy E_β(t) (dimensionless)"


def energy_curve(ds: xr.Dataset, *, ax: Axes | None = None, title: str | None = None) -> Figure:
    """The interaction energy E_β(t) of a result over time.

        E_β[μ] = (1/2β) ∬ e^{β⟨x, y⟩} dμ(x) dμ(y)      (paper 2, arXiv 2312.10794, eq. (3.5)),

    as stored by the run (see :func:`meanfield.energy`).

    Parameters
    ----------
    ds : xarray.Dataset
        A result with an ``energy`` variable over ``time``: :func:`meanfield.solve` or
        :func:`meanfield.simulate` (over (system, time) for ensembles: one line per system and their mean).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new Figure with one Axes.
    title : str, optional
        Axes title; by default built from the dataset's attrs.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        The dataset has no ``energy`` over ``time``.

    Examples
    --------
    >>> import numpy as np, meanfield as mf
    >>> ds = mf.solve(mf.SelfAttention(4.0), mf.von_mises(mf.Circle(64), 0.0, 1.0), np.linspace(0, 2, 21))
    >>> mf.plot.energy_curve(ds).savefig("energy.png")  # doctest: +SKIP
    """
    check_variables(ds, "energy_curve", "energy")
    fig, ax = axes_of(ax, (6.4, 3.6))
    draw_time_series(ax, ds, "energy")
    ax.set_ylabel(ENERGY_LABEL if energy_symbol(ds) == "E_β" else "energy E(t) = ½∬W dρ dρ + ∫U dρ")
    put_title(ax, ds, title)
    return fig


def order_parameter_curve(ds: xr.Dataset, *, ax: Axes | None = None, theory: float | None = None,
                          title: str | None = None) -> Figure:
    """The order parameter r(t) = |∫ x dμ_t| (on S¹, |∫ e^{iθ} dμ_t|) over time, in [0, 1].

    For a Kuramoto run (:func:`meanfield.studies.kuramoto_run`, with ``r_inf`` and the attrs ``t_final``,
    ``average_window``) the averaging window is shaded and r∞, the mean of r over it, drawn as a line.

    Parameters
    ----------
    ds : xarray.Dataset
        A result with an ``order_parameter`` variable over ``time``.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new Figure with one Axes.
    theory : float, optional
        A predicted value of r∞ (for instance :func:`meanfield.kuramoto_theory`), drawn dashed.
    title : str, optional
        Axes title; by default built from the dataset's attrs.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        The dataset has no ``order_parameter`` over ``time``.

    Examples
    --------
    >>> import numpy as np, meanfield as mf
    >>> ds = mf.simulate(mf.SelfAttention(4.0), np.linspace(0, 6, 32), np.linspace(0, 10, 51))
    >>> mf.plot.order_parameter_curve(ds).savefig("order.png")  # doctest: +SKIP
    """
    check_variables(ds, "order_parameter_curve", "order_parameter")
    fig, ax = axes_of(ax, (6.4, 4.0))
    draw_time_series(ax, ds, "order_parameter", label="r(t)")
    if "r_inf" in ds and {"t_final", "average_window"} <= set(ds.attrs):
        end = float(ds.attrs["t_final"])
        ax.axvspan(end - float(ds.attrs["average_window"]), end, color="0.9", label="averaging window")
        ax.axhline(float(ds["r_inf"]), color="C1", lw=1, label=f"r∞ = {float(ds['r_inf']):.4f}")
    if theory is not None:
        ax.axhline(theory, color="k", ls="--", lw=1, label=f"theory {theory:.4f}")
    ax.set_ylabel("order parameter r(t) = |∫ x dμ_t|")
    ax.set_ylim(0, 1.02)
    put_title(ax, ds, title)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    return fig


def draw_time_series(ax: Axes, ds: xr.Dataset, variable: str, label: str | None = None) -> None:
    """``ds[variable]`` against time on ``ax``: one black line, or for an ensemble one thin line per system
    and their mean in black; the x axis labelled with time."""
    values = ds[variable].transpose("time", ...)
    t = ds["time"].values
    if values.ndim == 1:
        ax.plot(t, values.values, color="k", lw=1.2, label=label)
    else:
        flat = values.values.reshape(t.size, -1)
        ax.plot(t, flat, color="C0", lw=0.6, alpha=0.4)
        ax.plot(t, flat.mean(axis=1), color="k", lw=1.2, label=f"mean over {flat.shape[1]} systems")
    ax.set_xlabel(TIME_LABEL)
    ax.grid(alpha=0.3)


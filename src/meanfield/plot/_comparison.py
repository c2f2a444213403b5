"""The figure of :func:`meanfield.compare`: how far a particle system stays from the PDE over time."""

from __future__ import annotations

import xarray as xr
from matplotlib.figure import Figure

from ._checks import TIME_LABEL, check_variables, new_figure
from ._curves import draw_time_series

__all__ = ["comparison"]


def comparison(ds: xr.Dataset, *, title: str | None = None) -> Figure:
    """W_p(ρ(t), μ_n(t)) over time above the energy and order-parameter gaps of a PDE–particles comparison.

    Top: the Wasserstein distance [rad] between the PDE density and each particle system (thin lines) and
    their mean (black). Bottom: E[μ_n] − E[ρ] and |∫ x dμ_n| − |∫ x dρ| averaged over systems, with a band
    of ± one sample standard deviation.

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`meanfield.compare` (``wasserstein``, ``energy_gap_mean``/``_std``,
        ``order_parameter_gap_mean``/``_std`` over time).
    title : str, optional
        Figure title; by default the domain, p, number of particles and systems from the attrs.

    Returns
    -------
    matplotlib.figure.Figure
        Two Axes: distances, gaps.

    Raises
    ------
    ValueError
        A variable of a comparison is missing.

    Examples
    --------
    >>> import numpy as np, meanfield as mf
    >>> model, times = mf.SelfAttention(2.0), np.linspace(0, 2, 11)
    >>> rho0 = mf.von_mises(mf.Circle(256), 0.0, 1.0)
    >>> pde = mf.solve(model, rho0, times)
    >>> runs = mf.simulate(model, np.stack([mf.sample(rho0, 500, seed=s).points for s in range(4)]), times,
    ...                    domain="circle")
    >>> mf.plot.comparison(mf.compare(pde, runs)).savefig("comparison.png")  # doctest: +SKIP
    """
    check_variables(ds, "comparison", "wasserstein", "energy_gap_mean", "energy_gap_std",
                    "order_parameter_gap_mean", "order_parameter_gap_std")
    fig = new_figure((6.4, 6.0))
    ax_w, ax_gap = fig.subplots(2, 1, sharex=True)
    draw_time_series(ax_w, ds, "wasserstein")
    p = ds.attrs.get("p", 1)
    ax_w.set_ylabel(f"W_{p:g}(ρ(t), μ_n(t)) [rad]")
    ax_w.set_xlabel("")
    t = ds["time"].values
    for name, label in (("energy_gap", "E[μ_n] − E[ρ]"), ("order_parameter_gap", "|∫ x dμ_n| − |∫ x dρ|")):
        mean, std = ds[f"{name}_mean"].values, ds[f"{name}_std"].values
        (line,) = ax_gap.plot(t, mean, lw=1.2, label=label)
        ax_gap.fill_between(t, mean - std, mean + std, color=line.get_color(), alpha=0.2)
    ax_gap.axhline(0.0, color="k", lw=0.6)
    ax_gap.set_xlabel(TIME_LABEL)
    ax_gap.set_ylabel("gap, mean ± std over systems")
    ax_gap.grid(alpha=0.3)
    ax_gap.legend(fontsize=8)
    attrs = ds.attrs
    fig.suptitle(title if title is not None else f"PDE ({attrs.get('pde_method', '')}) against particles "
                 f"({attrs.get('particle_method', '')}) on the {attrs.get('domain', '')}: "
                 f"n = {attrs.get('n_particles', '')}, {attrs.get('n_systems', '')} systems", fontsize=10)
    return fig

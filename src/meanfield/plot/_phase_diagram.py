"""Figures of paper 2's phase diagram (arXiv 2312.10794, Figures 3, 5) and of tokens on the circle at chosen
(β, t) (Figure 4)."""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..studies.clustering._equiangular import equiangular_curve
from ._checks import TIME_LABEL, new_figure
from ._particles import CirclePanel

__all__ = ["phase_diagram", "phase_diagram_trajectories"]

#: fewest β values drawn as a colour map; fewer are drawn as one curve P(t) per β
MAP_BETAS = 5

_LABELS = {"probability": "P(<x_1(t), x_2(t)> ≥ 1 - δ)", "fraction_clustered": "fraction of systems in one cluster"}


def phase_diagram(ds: xr.Dataset, variable: str = "probability", ax: Axes | None = None,
                  curve: bool = True) -> Figure:
    """The statistic of a :func:`~meanfield.phase_diagram` result over (t, β), paper 2's style.

    With at least ``MAP_BETAS`` (5) values of β: an RdBu colour map from 0
    (red) to 1 (blue) of ``variable``, t on the x axis, β on the y axis, each
    value filling the cell between the midpoints to its neighbours in t and in
    β, the first and last cells ending at the first and last value, so that
    unevenly spaced β are drawn where they are and nothing is drawn outside
    [β_min, β_max] × [t_min, t_max]. With fewer β: one curve of ``variable``
    against t per β, on [0, 1].

    For identity weights (Q = K = V = I) the curve Γ_{∞,δ} = {(t*(β), β)} of
    Theorem 6.8 (``critical_time``) is overlaid where it falls inside the time
    window (on the map recomputed on a fine β grid from the attrs ``n``,
    ``delta``, ``normalized``; on the curves as a dotted vertical line at
    t*(β) in the colour of each β). Theorem 6.8 is for Q = K = V = I only: a
    result with random weights (attrs ``matrices`` other than "identity", or
    variables ``Q``, ``K``, ``V``, as ``matrices="ginibre"`` makes them) never
    gets it. A result over several dimensions (a ``d`` dimension) is drawn as
    one panel per d side by side (with one colour bar for maps), as Figure 3
    of the paper.

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`meanfield.phase_diagram` (``variable`` over ([d,] beta, time)).
    variable : {"probability", "fraction_clustered"}
        The statistic to draw.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on (one d only); by default a new Figure.
    curve : bool
        Overlay Γ_{∞,δ} when the dataset has ``critical_time`` and identity weights.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        An unknown ``variable``, the dataset lacks it, or ``ax`` with several d.

    Examples
    --------
    >>> import numpy as np, meanfield as mf
    >>> ds = mf.phase_diagram(2, 32, np.linspace(0, 10, 11), np.linspace(0, 20, 41), systems=64)  # doctest: +SKIP
    >>> mf.plot.phase_diagram(ds).savefig("figure3.png")  # doctest: +SKIP
    """
    if variable not in _LABELS:
        raise ValueError(f"variable must be 'probability' or 'fraction_clustered', got {variable!r}")
    if not isinstance(ds, xr.Dataset) or variable not in ds:
        raise ValueError(f"phase_diagram needs a meanfield.phase_diagram Dataset with the variable {variable!r}")
    ds = ds.sortby("beta")
    panels = [ds] if "d" not in ds[variable].dims else [ds.sel(d=value) for value in ds["d"].values]
    if ax is not None and len(panels) > 1:
        raise ValueError(f"ax draws one panel; this dataset has {len(panels)} dimensions d (draw ds.sel(d=...))")
    as_map = ds.sizes["beta"] >= MAP_BETAS
    overlay = curve and "critical_time" in ds and _identity_weights(ds)
    if ax is not None:
        fig, axes = ax.figure, [ax]
    else:
        fig = new_figure((4.2 * len(panels) + 1.4, 4.4) if len(panels) > 1 else (6.4, 4.8))
        axes = list(fig.subplots(1, len(panels), sharey=True, squeeze=False)[0])
    attrs = ds.attrs
    for k, (panel, axis) in enumerate(zip(panels, axes)):
        if as_map:
            mesh = _draw_map(panel, variable, axis, overlay, legend=k == 0)
        else:
            _draw_curves(panel, variable, axis, overlay, legend=k == 0)
        axis.set_xlabel(TIME_LABEL)
        axis.set_xlim(float(ds["time"].min()), float(ds["time"].max()))
        d = int(panel["d"]) if "d" in panel.coords else attrs.get("d")
        if len(panels) > 1:
            axis.set_title(f"d = {d}", fontsize="medium")
            if k > 0:
                axis.set_ylabel("")
        else:
            axis.set_title(f"{attrs.get('model', '')}: d = {d}, n = {attrs.get('n')}, "
                           f"δ = {attrs.get('delta')}, {attrs.get('systems')} systems", fontsize="medium")
    if as_map:
        fig.colorbar(mesh, ax=axes, label=_LABELS[variable])
    if len(panels) > 1:
        fig.suptitle(f"{attrs.get('model', '')}: n = {attrs.get('n')}, δ = {attrs.get('delta')}, "
                     f"{attrs.get('systems')} systems per β", fontsize=10)
    return fig


def _identity_weights(ds: xr.Dataset) -> bool:
    """Whether ``ds`` ran with Q = K = V = I: attrs ``matrices`` "identity" or absent, and no Q, K, V."""
    return ds.attrs.get("matrices", "identity") == "identity" and not {"Q", "K", "V"} & set(ds.data_vars)


def _edges(values: np.ndarray) -> np.ndarray:
    """Cell edges of increasing ``values``: the midpoints between neighbours, and the first and last value."""
    return np.concatenate([values[:1], (values[1:] + values[:-1]) / 2, values[-1:]])


def _draw_map(ds: xr.Dataset, variable: str, ax: Axes, overlay: bool, legend: bool) -> Any:
    """The colour map of ``variable`` over (t, β) on ``ax``, with Γ_{∞,δ} if ``overlay``; returns the mesh."""
    values = ds[variable].transpose("beta", "time").values
    beta = ds["beta"].values
    mesh = ax.pcolormesh(_edges(ds["time"].values), _edges(beta), values, cmap="RdBu", vmin=0.0, vmax=1.0,
                         shading="flat", rasterized=True)
    if overlay:
        beta_fine, t_star = _fine_curve(ds)
        inside = t_star <= float(ds["time"].max())
        ax.plot(t_star[inside], beta_fine[inside], color="black", lw=1.5, ls="--",
                label=r"$\Gamma_{\infty,\delta}$: $\gamma_\beta(t) = 1 - \delta$")
        if legend:
            ax.legend(loc="upper left", fontsize="small")
    ax.set_ylabel("inverse temperature β")
    ax.set_ylim(float(beta[0]), float(beta[-1]))
    return mesh


def _draw_curves(ds: xr.Dataset, variable: str, ax: Axes, overlay: bool, legend: bool) -> None:
    """``variable`` against t on ``ax``, one curve per β, with a dotted line at t*(β) of each β if
    ``overlay``."""
    t = ds["time"].values
    values = ds[variable].transpose("beta", "time").values
    lines = [ax.plot(t, row, lw=1.4, label=f"β = {beta:g}")[0] for beta, row in zip(ds["beta"].values, values)]
    if overlay:
        for line, t_star in zip(lines, ds["critical_time"].values):
            if t_star <= t.max():
                ax.plot([t_star, t_star], [0.0, 1.0], color=line.get_color(), lw=1.0, ls=":",
                        label="_t*(β), Theorem 6.8")
    ax.set_ylabel(_LABELS[variable])
    ax.set_ylim(0.0, 1.0)
    ax.grid(alpha=0.3)
    if legend:
        ax.legend(loc="lower right", fontsize="small",
                  title="dotted: t*(β), Theorem 6.8" if overlay else None, title_fontsize="small")


def _fine_curve(ds: xr.Dataset, points: int = 80) -> tuple[np.ndarray, np.ndarray]:
    """Γ_{∞,δ} on a fine β grid spanning the diagram (recomputed from the attrs n, delta, normalized),
    or the stored ``critical_time`` when those attrs are missing."""
    beta = ds["beta"].values
    try:
        n, delta, normalized = int(ds.attrs["n"]), float(ds.attrs["delta"]), bool(int(ds.attrs["normalized"]))
    except KeyError:
        return beta, ds["critical_time"].values
    fine = np.linspace(beta.min(), beta.max(), points)
    return fine, equiangular_curve(fine, n, delta, normalized=normalized)


def phase_diagram_trajectories(ds: xr.Dataset) -> Figure:
    """Tokens on the unit circle at chosen (β, t): paper 2, Figure 4 (right panels).

    One row per β, one column per time t > 0 of a :func:`meanfield.phase_diagram_trajectories` result,
    each panel showing the n tokens on S¹.

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`meanfield.phase_diagram_trajectories`: ``positions`` over (beta, time, particle).

    Returns
    -------
    matplotlib.figure.Figure
        One Axes per (β, t > 0).

    Raises
    ------
    ValueError
        ``ds`` holds no ``positions`` over (beta, time, particle).

    Examples
    --------
    >>> import meanfield as mf
    >>> ds = mf.phase_diagram_trajectories(betas=(4, 9), times=(2.5, 18, 30), n=32)
    >>> len(mf.plot.phase_diagram_trajectories(ds).axes)
    6
    """
    if not isinstance(ds, xr.Dataset) or "positions" not in ds or ds["positions"].dims != ("beta", "time", "particle"):
        raise ValueError("phase_diagram_trajectories needs a meanfield.phase_diagram_trajectories Dataset "
                         "(positions over (beta, time, particle))")
    shown = ds.isel(time=ds["time"].values > 0)
    betas, times = shown["beta"].values, shown["time"].values
    fig = new_figure((2.4 * times.size, 2.4 * betas.size))
    axes = fig.subplots(betas.size, times.size, squeeze=False)
    for row, beta in enumerate(betas):
        for col, t in enumerate(times):
            ax = axes[row, col]
            CirclePanel(ax).draw(shown["positions"].values[row, col])
            ax.set_title(f"β = {beta:g}, t = {t:g}", fontsize="small")
    return fig

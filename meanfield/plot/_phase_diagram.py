"""Figures of paper 2's phase diagram (arXiv 2312.10794, Figures 3, 5) and of tokens on the circle at chosen
(β, t) (Figure 4)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..models._self_attention import SelfAttention
from .._validate import check_positive_int
from ..particles import simulate
from ..studies._equiangular import equiangular_curve
from ..studies._phase_diagram import phase_diagram_tokens
from ._checks import TIME_LABEL, axes_of, new_figure
from ._particles import draw_circle_panel

__all__ = ["phase_diagram", "phase_diagram_trajectories"]


def phase_diagram(ds: xr.Dataset, variable: str = "probability", ax: Axes | None = None,
                  curve: bool = True) -> Figure:
    """Colour map of a :func:`~meanfield.phase_diagram` result over (t, β), paper 2's style.

    RdBu colour map from 0 (red) to 1 (blue) of ``variable`` ("probability"
    or "fraction_clustered"), t on the x axis, β on the y axis, and the curve
    Γ_{∞,δ} = {(t*(β), β)} of Theorem 6.8 (``critical_time``) overlaid where
    it falls inside the time window (recomputed on a fine β grid from the
    attrs ``n``, ``delta``, ``normalized``).

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`meanfield.phase_diagram` (``variable`` over (beta, time)).
    variable : {"probability", "fraction_clustered"}
        The statistic to draw.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new Figure with one Axes.
    curve : bool
        Overlay Γ_{∞,δ} when the dataset has ``critical_time``.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        An unknown ``variable``, or the dataset lacks it.

    Examples
    --------
    >>> import numpy as np, meanfield as mf
    >>> ds = mf.phase_diagram(2, 32, np.linspace(0, 10, 11), np.linspace(0, 20, 41), systems=64)  # doctest: +SKIP
    >>> mf.plot.phase_diagram(ds).savefig("figure3.png")  # doctest: +SKIP
    """
    if variable not in ("probability", "fraction_clustered"):
        raise ValueError(f"variable must be 'probability' or 'fraction_clustered', got {variable!r}")
    if not isinstance(ds, xr.Dataset) or variable not in ds:
        raise ValueError(f"phase_diagram needs a meanfield.phase_diagram Dataset with the variable {variable!r}")
    fig, ax = axes_of(ax, (6.4, 4.8))
    values = ds[variable].transpose("beta", "time").values
    mesh = ax.pcolormesh(ds["time"].values, ds["beta"].values, values, cmap="RdBu", vmin=0.0, vmax=1.0,
                         shading="nearest", rasterized=True)
    label = "P(<x_1(t), x_2(t)> ≥ 1 - δ)" if variable == "probability" else "fraction of systems in one cluster"
    fig.colorbar(mesh, ax=ax, label=label)
    if curve and "critical_time" in ds:
        beta_fine, t_star = _fine_curve(ds)
        inside = t_star <= float(ds["time"].max())
        ax.plot(t_star[inside], beta_fine[inside], color="black", lw=1.5, ls="--",
                label=r"$\Gamma_{\infty,\delta}$: $\gamma_\beta(t) = 1 - \delta$")
        ax.legend(loc="upper left", fontsize="small")
    attrs = ds.attrs
    ax.set_xlabel(TIME_LABEL)
    ax.set_ylabel("inverse temperature β")
    ax.set_xlim(float(ds["time"].min()), float(ds["time"].max()))
    ax.set_title(f"{attrs.get('model', '')}: d = {attrs.get('d')}, n = {attrs.get('n')}, "
                 f"δ = {attrs.get('delta')}, {attrs.get('systems')} systems", fontsize="medium")
    return fig


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


def phase_diagram_trajectories(betas: Sequence[float] = (4.0, 9.0), times: Sequence[float] = (2.5, 18.0, 30.0),
                               n: int = 32, *, seed: int = 0, system: int = 0, normalized: bool = True,
                               rtol: float = 1e-9, atol: float = 1e-11) -> Figure:
    """Tokens on the unit circle at chosen (β, t): paper 2, Figure 4 (right panels).

    System ``system`` of a d = 2 :func:`~meanfield.phase_diagram` with base
    ``seed`` (the same initial tokens, :func:`phase_diagram_tokens`) is
    integrated with :func:`meanfield.simulate` for each β; one row per β, one
    column per time, each panel showing the n tokens on S¹.

    Parameters
    ----------
    betas : sequence of float
        Inverse temperatures β ≥ 0, one row each.
    times : sequence of float
        Increasing times t > 0, one column each.
    n : int
        Tokens, n ≥ 2.
    seed : int
        Base seed of :func:`~meanfield.phase_diagram` (its initial tokens).
    system : int
        Which system of that phase diagram to integrate.
    normalized : bool
        SA (True) or USA (False), arXiv 2312.10794 (SA), (USA).
    rtol, atol : float
        Tolerances of the adaptive integrator of :func:`meanfield.simulate`.

    Returns
    -------
    matplotlib.figure.Figure
        One Axes per (β, t).

    Raises
    ------
    ValueError
        ``betas`` or ``times`` empty, not finite, negative (β) or not increasing (t).

    Examples
    --------
    >>> import meanfield as mf
    >>> fig = mf.plot.phase_diagram_trajectories(betas=(4, 9), times=(2.5, 18, 30), n=32)
    >>> len(fig.axes)
    6
    """
    n = check_positive_int("n", n, 2)
    beta_values = np.atleast_1d(np.asarray(betas, dtype=float))
    shown = np.atleast_1d(np.asarray(times, dtype=float))
    if beta_values.ndim != 1 or beta_values.size == 0 or not np.all(np.isfinite(beta_values)) or np.any(
            beta_values < 0):
        raise ValueError(f"betas must be a non-empty sequence of finite values >= 0, got {betas!r}")
    if shown.ndim != 1 or shown.size == 0 or not np.all(np.isfinite(shown)) or np.any(shown <= 0) or np.any(
            np.diff(shown) <= 0):
        raise ValueError(f"times must be a non-empty increasing sequence of times > 0, got {times!r}")
    x0 = phase_diagram_tokens(seed, [system], 2, n)[0]
    angles0 = np.arctan2(x0[:, 1], x0[:, 0])
    fig = new_figure((2.4 * shown.size, 2.4 * beta_values.size))
    axes = fig.subplots(beta_values.size, shown.size, squeeze=False)
    for row, beta in enumerate(beta_values):
        run = simulate(SelfAttention(beta, normalized=normalized), angles0, np.concatenate([[0.0], shown]),
                       rtol=rtol, atol=atol)
        for col, t in enumerate(shown):
            ax = axes[row, col]
            draw_circle_panel(ax, run["positions"].values[col + 1])
            ax.set_title(f"β = {beta:g}, t = {t:g}", fontsize="small")
    return fig

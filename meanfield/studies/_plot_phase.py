"""Figures of paper 2's phase diagram (Figures 3, 5) and of trajectories on the circle (Figure 4)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr

from .._models import SelfAttention
from .._validate import check_positive_int
from ..particles import simulate
from ._equiangular import equiangular_curve
from ._phase_diagram import phase_diagram_tokens

__all__ = ["plot_phase_diagram", "plot_trajectories"]


def plot_phase_diagram(ds: xr.Dataset, variable: str = "probability", ax: Any = None, curve: bool = True) -> Any:
    """Colour map of a :func:`~meanfield.phase_diagram` result over (t, β), paper 2's style.

    RdBu colour map from 0 (red) to 1 (blue) of ``variable`` ("probability"
    or "fraction_clustered"), t on the x axis, β on the y axis, and the curve
    Γ_{∞,δ} = {(t*(β), β)} of Theorem 6.8 (``critical_time``) overlaid where
    it falls inside the time window (recomputed on a fine β grid from the
    attrs ``n``, ``delta``, ``normalized``).

    Returns the matplotlib Figure.
    """
    from matplotlib.figure import Figure

    if variable not in ("probability", "fraction_clustered"):
        raise ValueError(f"variable must be 'probability' or 'fraction_clustered', got {variable!r}")
    if ax is None:
        fig = Figure(figsize=(6.4, 4.8), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
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
    ax.set_xlabel("t")
    ax.set_ylabel("β")
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


def plot_trajectories(betas: Sequence[float] = (4.0, 9.0), times: Sequence[float] = (2.5, 18.0, 30.0), n: int = 32,
                      *, seed: int = 0, system: int = 0, normalized: bool = True, rtol: float = 1e-9,
                      atol: float = 1e-11) -> Any:
    """Tokens on the unit circle at chosen (β, t): paper 2, Figure 4 (right panels).

    System ``system`` of a d = 2 :func:`~meanfield.phase_diagram` with base
    ``seed`` (the same initial tokens, :func:`phase_diagram_tokens`) is
    integrated with :func:`meanfield.simulate` for each β; one row per β, one
    column per time, each panel showing the n tokens on S¹.

    Returns the matplotlib Figure.
    """
    from matplotlib.figure import Figure

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
    fig = Figure(figsize=(2.4 * shown.size, 2.4 * beta_values.size), layout="constrained")
    axes = fig.subplots(beta_values.size, shown.size, squeeze=False)
    circle = np.linspace(0, 2 * np.pi, 361)
    for row, beta in enumerate(beta_values):
        run = simulate(SelfAttention(beta, normalized=normalized), angles0, np.concatenate([[0.0], shown]),
                       rtol=rtol, atol=atol)
        for col, t in enumerate(shown):
            ax = axes[row, col]
            theta = run["positions"].values[col + 1]
            ax.plot(np.cos(circle), np.sin(circle), color="0.7", lw=0.8)
            ax.scatter(np.cos(theta), np.sin(theta), s=18, color="tab:red", zorder=3)
            ax.set_aspect("equal")
            ax.set_xlim(-1.15, 1.15)
            ax.set_ylim(-1.15, 1.15)
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_title(f"β = {beta:g}, t = {t:g}", fontsize="small")
    return fig

"""The two-parameter (ω₀, K) diagram of the bimodal Lorentzian Kuramoto model, after Martens et al. (2009)."""

from __future__ import annotations

import numpy as np
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.figure import Figure

from ._checks import axes_of

__all__ = ["bimodal_phase_diagram"]

#: colours of the attractors: incoherent, partially synchronised, standing wave
_STATE_COLOURS = ("#eeeeee", "#9ecae1", "#fdae6b")


def bimodal_phase_diagram(states: xr.Dataset, boundaries: xr.Dataset | None = None, *,
                          ax: Axes | None = None) -> Figure:
    """The attractors of :func:`~meanfield.bimodal_states` over (ω₀/Δ, K/Δ) with the exact boundaries.

    Cells are coloured by the state the first start reaches (incoherent, partially synchronised, standing
    wave; white: not settled by ``t_final``, near a bifurcation); a dot marks a bistable cell (the starts
    settle in different states). With ``boundaries`` (from
    :func:`~meanfield.bimodal_boundaries`) the incoherence boundary is drawn solid where it is a pitchfork
    (K = 2(Δ² + ω₀²)/Δ) and dashed where it is a Hopf line (K = 4Δ), the saddle-node of the stationary states
    in red, the tricritical and Bogdanov–Takens points as markers.

    Parameters
    ----------
    states : xarray.Dataset
        A result of :func:`meanfield.bimodal_states`.
    boundaries : xarray.Dataset, optional
        A result of :func:`meanfield.bimodal_boundaries` (drawn over the cells).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new Figure (6.4 × 4.8 in, made without pyplot) with one Axes.

    Returns
    -------
    matplotlib.figure.Figure
        The figure of the diagram: ``ax``'s figure when given. Axes in units of the peak width Δ
        (x: ω₀/Δ, y: K/Δ); the cells are one ``pcolormesh`` whose values are the first start's
        states (0, 1, 2; NaN when not settled), one row per coupling.

    Raises
    ------
    TypeError
        ``states`` is not a ``bimodal_states`` Dataset, or ``boundaries`` not a ``bimodal_boundaries`` one.

    Examples
    --------
    >>> import meanfield as mf
    >>> states = mf.bimodal_states([0.0, 2.0], [1.5, 5.0], width=1.0, t_final=60, window=20)
    >>> fig = mf.plot.bimodal_phase_diagram(states, mf.bimodal_boundaries([0.0, 1.0, 2.0], 1.0))
    >>> ax = fig.axes[0]
    >>> len(fig.axes), ax.get_xlabel(), ax.get_ylabel()
    (1, 'peak separation ω₀/Δ', 'coupling K/Δ')
    >>> # rows K = 1.5, 5: incoherent (0) below the boundary; above it a stationary state (1) at
    >>> # ω₀ = 0 and standing waves (2) at ω₀ = 2 > Δ, beyond the Hopf line K = 4Δ
    >>> ax.collections[0].get_array().tolist()
    [[0.0, 0.0], [1.0, 2.0]]
    >>> # drawn on a given Axes, the diagram returns that Axes' figure
    >>> from matplotlib.figure import Figure
    >>> panel = Figure().subplots(1, 2)[1]
    >>> mf.plot.bimodal_phase_diagram(states, ax=panel) is panel.figure
    True
    """
    if not isinstance(states, xr.Dataset) or states.attrs.get("study") != "bimodal_states":
        raise TypeError("states must be the Dataset of mf.bimodal_states")
    if boundaries is not None and (not isinstance(boundaries, xr.Dataset) or "incoherence_boundary" not in boundaries):
        raise TypeError("boundaries must be the Dataset of mf.bimodal_boundaries")
    fig, ax = axes_of(ax, (6.4, 4.8))
    width = float(states.attrs["width"])
    omega = states["separation"].values / width
    k = states["coupling"].values / width
    first = states["state"].isel(start=0).values.T.astype(float)
    first[first < 0] = np.nan
    ax.pcolormesh(_edges(omega), _edges(k), first, cmap=ListedColormap(_STATE_COLOURS),
                  norm=BoundaryNorm([-0.5, 0.5, 1.5, 2.5], 3), shading="flat")
    bi_w, bi_k = np.nonzero(states["bistable"].values)
    ax.plot(omega[bi_w], k[bi_k], "k.", ms=2.5, label="bistable (starts disagree)")
    for colour, name in zip(_STATE_COLOURS, ("incoherent", "partially synchronised", "standing wave")):
        ax.fill_between([], [], color=colour, label=name)
    ax.fill_between([], [], facecolor="white", edgecolor="0.6", label="not settled by t_final")
    if boundaries is not None:
        b_width = float(boundaries.attrs.get("width", width))
        w = boundaries["separation"].values / b_width
        kind = boundaries["boundary_kind"].values
        line = boundaries["incoherence_boundary"].values / b_width
        ax.plot(np.where(kind == 0, w, np.nan), line, "k-", lw=1.4, label="pitchfork K = 2(Δ²+ω₀²)/Δ")
        ax.plot(np.where(kind == 1, w, np.nan), line, "k--", lw=1.4, label="Hopf K = 4Δ")
        ax.plot(w, boundaries["saddle_node"].values / b_width, "r-", lw=1.2, label="saddle-node")
        attrs = boundaries.attrs
        ax.plot(attrs["tricritical_separation"] / b_width, attrs["tricritical_coupling"] / b_width, "kD", ms=5,
                label="tricritical point")
        ax.plot(attrs["bogdanov_takens_separation"] / b_width, attrs["bogdanov_takens_coupling"] / b_width, "k*",
                ms=9, label="Bogdanov–Takens point")
    ax.set_xlim(omega.min(), omega.max())
    ax.set_ylim(k.min(), k.max())
    ax.set_xlabel("peak separation ω₀/Δ")
    ax.set_ylabel("coupling K/Δ")
    ax.set_title("Bimodal Lorentzian: attractors of the Ott–Antonsen equations")
    ax.legend(fontsize=7, loc="upper left")
    return fig


def _edges(centres: np.ndarray) -> np.ndarray:
    """Cell edges halfway between the centres (the grid of pcolormesh)."""
    if centres.size == 1:
        return np.array([centres[0] - 0.5, centres[0] + 0.5])
    mid = 0.5 * (centres[1:] + centres[:-1])
    return np.concatenate([[2 * centres[0] - mid[0]], mid, [2 * centres[-1] - mid[-1]]])

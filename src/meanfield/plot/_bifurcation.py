"""Kuramoto bifurcation diagrams r∞(K) against the self-consistency theory and the branches of the reduced
equations."""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..studies.kuramoto._bifurcation import frequency_law
from ..studies.kuramoto._theory import kuramoto_critical_coupling, kuramoto_theory
from ._checks import axes_of

__all__ = ["bifurcation"]

_MARKERS = {"particles": "o", "pde": "s", "ott-antonsen": "D"}


def _law_label(attrs: dict) -> str:
    if "width" not in attrs:
        return str(attrs["law"])
    gap = f", ±{attrs['separation']:g}" if attrs["law"] == "bimodal" else ""
    return f"{attrs['law']} (width {attrs['width']:g}{gap})"


def _label(ds: xr.Dataset) -> str:
    lag = f", α = {ds.attrs['phase_lag']:g}" if ds.attrs.get("phase_lag", 0) else ""
    return f"{ds.attrs['engine']}, {_law_label(ds.attrs)}{lag}, σ = {ds.attrs['noise']:g}"


def bifurcation(datasets: xr.Dataset | list[xr.Dataset], *, branches: xr.Dataset | None = None,
                ax: Axes | None = None) -> Figure:
    """r∞(K) of one or more :func:`~meanfield.kuramoto_bifurcation` results with their theory and branches.

    Particles are drawn as points with error bars (``r_error``), the PDE as
    squares, the Ott–Antonsen engine as diamonds; each distinct (law, α, σ) that the
    self-consistency theory covers (attr ``theory``) gets its curve r∞(K)
    (:func:`~meanfield.kuramoto_theory`) over the plotted range and a dotted line at
    its K_c. ``branches`` (:func:`~meanfield.kuramoto_branches`) adds the stationary
    states of the reduced equations, stable solid and unstable dashed, with their folds
    and Hopf points, and the range [min r, max r] of standing waves.

    Parameters
    ----------
    datasets : xarray.Dataset or list of xarray.Dataset
        Results of :func:`meanfield.kuramoto_bifurcation` (``r_mean``, ``r_error`` over ``coupling``).
    branches : xarray.Dataset, optional
        A result of :func:`meanfield.kuramoto_branches`.
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
    if branches is not None and (not isinstance(branches, xr.Dataset) or "stable" not in branches):
        raise TypeError("branches must be the Dataset of mf.kuramoto_branches")
    fig, ax = axes_of(ax, (6.4, 4.4))
    k_max = max(float(d["coupling"].max()) for d in items)
    k_fine = np.linspace(0, k_max, 241)
    drawn: dict[tuple, Any] = {}
    for d in items:
        lag, noise = float(d.attrs.get("phase_lag", 0.0)), float(d.attrs["noise"])
        key = (_law_label(d.attrs), lag, noise)
        if key not in drawn:
            colour = f"C{len(drawn)}"
            if d.attrs.get("theory", "kuramoto_theory") == "kuramoto_theory" and "width" in d.attrs:
                law = frequency_law(d.attrs["law"], d.attrs["width"], d.attrs["centre"],
                                    d.attrs.get("separation", 0.0))
                ax.plot(k_fine, kuramoto_theory(k_fine, law, noise, lag), lw=1.5, color=colour,
                        label=f"theory, {key[0]}, σ = {noise:g}")
                ax.axvline(kuramoto_critical_coupling(law, noise, lag), color=colour, ls=":", lw=1)
            drawn[key] = colour
        engine = d.attrs["engine"]
        ax.errorbar(d["coupling"].values, d["r_mean"].values, yerr=d["r_error"].values,
                    fmt=_MARKERS.get(engine, "^"), ms=5, capsize=2, color=drawn[key],
                    mfc="none" if engine != "particles" else drawn[key], label=_label(d))
    if branches is not None:
        _draw_branches(ax, branches)
    ax.set_xlabel("coupling K")
    ax.set_ylabel("r∞ (time average over the final window)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("Kuramoto r∞(K)" + (": runs and branches" if branches is not None else ": runs and theory"))
    ax.legend(fontsize=7)
    return fig


def _draw_branches(ax: Axes, branches: xr.Dataset) -> None:
    """Stationary branches (stable solid, unstable dashed) with folds and Hopf points, continued periodic orbits
    (max and min r, orange), and the range of r of the waves the long integrations reached."""
    ids, k, r, stable = (branches[v].values for v in ("branch", "point_coupling", "r", "stable"))
    for branch in np.unique(ids):
        on = ids == branch
        ax.plot(np.where(stable[on] == 1, k[on], np.nan), r[on], "k-", lw=1.2)
        ax.plot(np.where(stable[on] == 0, k[on], np.nan), r[on], "k--", lw=0.9)
    ax.plot([], [], "k-", label="stationary states, stable")
    ax.plot([], [], "k--", label="stationary states, unstable")
    for name, marker, label in (("fold", "kv", "fold"), ("hopf", "k*", "Hopf point")):
        at = np.atleast_1d(np.asarray(branches.attrs.get(f"{name}_couplings", []), dtype=float))
        on_branch = np.atleast_1d(np.asarray(branches.attrs.get(f"{name}_branches", []), dtype=int))
        for coupling, branch in zip(at, on_branch):
            nearest = np.argmin(np.where(ids == branch, np.abs(k - coupling), np.inf))
            ax.plot(coupling, r[nearest], marker, ms=7)
        if at.size:
            ax.plot([], [], marker, ms=7, label=label)
    if branches.sizes.get("orbit_point", 0):
        ok, ko = branches["orbit_branch"].values, branches["orbit_coupling"].values
        lo, hi, good = (branches[v].values for v in ("orbit_r_min", "orbit_r_max", "orbit_stable"))
        for branch in np.unique(ok):
            on = ok == branch
            for values in (lo[on], hi[on]):
                ax.plot(np.where(good[on] == 1, ko[on], np.nan), values, "-", color="C1", lw=1.2)
                ax.plot(np.where(good[on] == 0, ko[on], np.nan), values, "--", color="C1", lw=0.9)
        ax.plot([], [], "-", color="C1", label="periodic states: min and max r")
    if "wave_r_max" in branches and np.any(np.isfinite(branches["wave_r_max"].values)):
        kw = np.broadcast_to(branches["coupling"].values[:, None], branches["wave_r_max"].shape)
        ax.vlines(kw.ravel(), branches["wave_r_min"].values.ravel(), branches["wave_r_max"].values.ravel(),
                  color="C1", alpha=0.4, lw=3, label="integrated waves: range of r")

"""What every figure first asks of its Dataset: which kind of result it is, which output times to show,
which axes to draw on, and a title built from the run's attrs.

The errors name the figure, what is missing and what the dataset has, so that passing a particle result
to a density figure (or a file without ``energy``) says so in one line.

A run that stopped early (attrs ``success`` = 0) says so in its title with "(stopped early)"; the reason
(attrs ``message``) goes in full into a note: a wrapped text box in a strip reserved below the axes of a
figure, or inside the top of a single Axes.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = ["TIME_LABEL", "axes_of", "check_variables", "density_domain", "failure_note", "new_figure",
           "particle_angles_or_points", "put_failure_note", "put_title", "run_title", "system_positions",
           "time_indices"]

TIME_LABEL = "time t (dimensionless)"

#: font size [pt] of the note of a run that stopped early
NOTE_SIZE = 8.0
#: width of an average character of the note, in units of its font size (DejaVu Sans: about 0.55)
_CHARACTER_WIDTH = 0.6

_DENSITY_DIMS = {"circle": ("theta",), "sphere": ("lat", "lon"), "zonal": ("polar",)}


def check_variables(ds: Any, who: str, *variables: str) -> None:
    """Raise unless ``ds`` is a Dataset holding every one of ``variables`` over a ``time`` dimension.

    Raises
    ------
    TypeError
        ``ds`` is not an :class:`xarray.Dataset`.
    ValueError
        A variable is missing (the message names it and lists the dataset's variables), or it has no
        ``time`` dimension.
    """
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"{who} takes an xarray.Dataset (a result of meanfield.solve or meanfield.simulate), "
                        f"got {type(ds).__name__}")
    missing = [v for v in variables if v not in ds.data_vars]
    if missing:
        raise ValueError(f"{who} needs the variable {', '.join(repr(v) for v in missing)} in the dataset, "
                         f"which has {sorted(str(v) for v in ds.data_vars)}")
    for v in variables:
        if "time" not in ds[v].dims:
            raise ValueError(f"{who} needs {v!r} over a 'time' dimension, got dims {ds[v].dims}")


def density_domain(ds: Any, who: str) -> str:
    """"circle", "sphere" or "zonal": the grid of the ``density`` of a :func:`meanfield.solve` result,
    read from its dims (time, theta), (time, lat, lon) or (time, polar)."""
    check_variables(ds, who, "density")
    dims = ds["density"].dims
    for domain, grid in _DENSITY_DIMS.items():
        if dims == ("time", *grid):
            return domain
    raise ValueError(f"{who} needs a density over (time, theta), (time, lat, lon) or (time, polar) — a result of "
                     f"meanfield.solve — got a density over {dims}")


def particle_angles_or_points(ds: Any, who: str, system: int = 0) -> tuple[str, np.ndarray]:
    """("circle", angles of shape (time, particle)) or ("sphere", points of shape (time, particle, 3)) of
    system ``system`` of a :func:`meanfield.simulate` result.

    Raises
    ------
    ValueError
        No ``positions``, ``system`` out of range, or points on S^{d-1} with d ≠ 3 (only S¹ and S² are drawn).
    """
    positions = system_positions(ds, who, system)
    if positions.dims == ("time", "particle"):
        return "circle", np.asarray(positions.values, dtype=float)
    if positions.dims == ("time", "particle", "component"):
        if positions.sizes["component"] != 3:
            raise ValueError(f"{who} draws particles on S¹ or S²; these lie on S^{positions.sizes['component'] - 1}")
        return "sphere", np.asarray(positions.values, dtype=float)
    raise ValueError(f"{who} needs positions over (time, particle) or (time, particle, component) — a result of "
                     f"meanfield.simulate — got {positions.dims}")


def system_positions(ds: Any, who: str, system: int = 0) -> xr.DataArray:
    """The ``positions`` of system ``system`` of a :func:`meanfield.simulate` result (of its only system when
    it has no ``system`` dimension).

    Raises
    ------
    ValueError
        No ``positions``, or ``system`` out of range.
    """
    check_variables(ds, who, "positions")
    positions = ds["positions"]
    if "system" not in positions.dims:
        return positions
    if not 0 <= system < positions.sizes["system"]:
        raise ValueError(f"system must lie in [0, {positions.sizes['system']}), got {system}")
    return positions.isel(system=system)


def time_indices(t_all: np.ndarray, times: Sequence[float] | None, count: int = 4) -> np.ndarray:
    """Indices of the output times nearest to ``times`` (sorted, without repeats); by default ``count`` evenly
    spaced outputs from the first to the last.

    Raises
    ------
    ValueError
        ``times`` is empty.
    """
    if times is None:
        return np.unique(np.linspace(0, t_all.size - 1, min(count, t_all.size)).round().astype(int))
    wanted = np.atleast_1d(np.asarray(times, dtype=float))
    if wanted.size == 0:
        raise ValueError("times must name at least one time to show")
    return np.unique(np.abs(t_all[None, :] - wanted[:, None]).argmin(axis=1))


def new_figure(figsize: tuple[float, float]) -> Figure:
    """A Figure of size ``figsize`` [inches] with the constrained layout, made without pyplot's global state."""
    return Figure(figsize=figsize, layout="constrained")


def axes_of(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    """``ax`` and its figure, or a :func:`new_figure` of size ``figsize`` with one Axes."""
    if ax is not None:
        return ax.figure, ax
    fig = new_figure(figsize)
    return fig, fig.add_subplot()


def put_title(target: Axes | Figure, ds: xr.Dataset, title: str | None, grid: str = "") -> None:
    """``title``, or else :func:`run_title` of ``ds`` and ``grid``, as the title of an Axes (medium size) or the
    suptitle of a Figure (size 10); and the :func:`put_failure_note` of ``ds``."""
    text = title if title is not None else run_title(ds, grid)
    if isinstance(target, Figure):
        target.suptitle(text, fontsize=10)
    else:
        target.set_title(text, fontsize="medium")
    put_failure_note(target, ds)


def failure_note(ds: xr.Dataset) -> str | None:
    """"Run stopped early: <attrs message>" when attrs ``success`` is 0, else None."""
    if ds.attrs.get("success", 1):
        return None
    return f"Run stopped early: {ds.attrs.get('message', '')}"


def put_failure_note(target: Axes | Figure, ds: xr.Dataset) -> None:
    """The :func:`failure_note` of ``ds`` in full, wrapped to the width of ``target``, in a text box (nothing
    for a run that succeeded).

    On a Figure (with the constrained layout of :func:`new_figure`) the box fills a strip reserved at the
    bottom, below every Axes; on an Axes it sits inside the Axes at its top left.
    """
    note = failure_note(ds)
    if note is None:
        return
    box = {"boxstyle": "round,pad=0.4", "facecolor": "#fff4e0", "edgecolor": "#c06000"}
    fig = target if isinstance(target, Figure) else target.figure
    width = fig.get_figwidth() * (1.0 if isinstance(target, Figure) else target.get_position().width)
    text = textwrap.fill(note, width=max(20, int(0.92 * width * 72 / (_CHARACTER_WIDTH * NOTE_SIZE))))
    if isinstance(target, Figure):
        strip = ((text.count("\n") + 1) * 1.3 * NOTE_SIZE + 16) / 72 / fig.get_figheight()  # lines + box [inch]
        fig.get_layout_engine().set(rect=(0.0, strip, 1.0, 1.0 - strip))
        fig.text(0.02, strip / 2, text, ha="left", va="center", fontsize=NOTE_SIZE, bbox=box)
    else:
        target.text(0.02, 0.97, text, transform=target.transAxes, ha="left", va="top", fontsize=NOTE_SIZE,
                    bbox={**box, "alpha": 0.92}, zorder=10)


def run_title(ds: xr.Dataset, grid: str = "") -> str:
    """"<model> β=… σ=… <method> <grid>" (or "Kuramoto K=… <law> (<width>) σ=…"), on a second line the graph
    of a run on one, ending in "(stopped early)" when the run stopped early (its reason: :func:`put_failure_note`)."""
    attrs = ds.attrs
    if "law" in attrs:
        title = (f"Kuramoto K = {_g(attrs.get('coupling', ''))}, {attrs['law']} "
                 f"({_g(attrs.get('width', ''))}), σ = {_g(attrs.get('noise', ''))}, {attrs.get('engine', '')}")
    else:
        title = f"{model_words(attrs)} {attrs.get('method', '')} {grid}".rstrip()
    if "graph" in attrs:
        title += f"\non the graph {attrs['graph']}, normalised by {attrs.get('graph_normalization', 'n')}"
    if failure_note(ds) is not None:
        title += " (stopped early)"
    return title


def model_words(attrs: dict[str, Any]) -> str:
    """"<model> β=… σ=…", or for an Interaction "W = <kernel>[, U = <potential>] σ=…"."""
    if attrs.get("model") == "Interaction":
        potential = attrs.get("potential", "none")
        return (f"W = {attrs.get('kernel', '')}" + ("" if potential == "none" else f", U = {potential}")
                + f" σ={attrs.get('noise', '')}")
    return f"{attrs.get('model', '')} β={attrs.get('beta', '')} σ={attrs.get('noise', '')}"


def energy_symbol(ds: xr.Dataset) -> str:
    """The energy's symbol: E = ½∬W dρ dρ + ∫U dρ of an Interaction, E_β otherwise."""
    return "E" if ds.attrs.get("model") == "Interaction" else "E_β"


def _g(value: Any) -> str:
    """A number in %g, anything else as it is."""
    return f"{value:g}" if isinstance(value, (int, float, np.number)) else str(value)

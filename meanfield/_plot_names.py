"""Former names of the study figures, kept for one release: each warns and draws through :mod:`meanfield.plot`.

They load matplotlib only when called, so that ``import meanfield`` does not.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from typing import Any

__all__ = ["plot_bifurcation", "plot_pairwise_inner_products", "plot_phase_diagram", "plot_trajectories"]


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"{old} is deprecated: use meanfield.plot.{new} (it returns the Figure)", DeprecationWarning,
                  stacklevel=3)


def plot_phase_diagram(ds: Any, variable: str = "probability", ax: Any = None, curve: bool = True) -> Any:
    """Deprecated name of :func:`meanfield.plot.phase_diagram` (same arguments, returns the Figure)."""
    from .plot import phase_diagram

    _deprecated("plot_phase_diagram", "phase_diagram")
    return phase_diagram(ds, variable, ax, curve)


def plot_trajectories(betas: Sequence[float] = (4.0, 9.0), times: Sequence[float] = (2.5, 18.0, 30.0), n: int = 32,
                      **options: Any) -> Any:
    """Deprecated name of :func:`meanfield.plot.phase_diagram_trajectories` (same arguments, returns the Figure)."""
    from .plot import phase_diagram_trajectories

    _deprecated("plot_trajectories", "phase_diagram_trajectories")
    return phase_diagram_trajectories(betas, times, n, **options)


def plot_bifurcation(datasets: Any, ax: Any = None, path: str | os.PathLike | None = None) -> Any:
    """Deprecated form of :func:`meanfield.plot.bifurcation`: returns the Axes, and with ``path`` also saves
    the figure there (PNG)."""
    from .plot import bifurcation

    _deprecated("plot_bifurcation", "bifurcation")
    fig = bifurcation(datasets, ax=ax)
    ax = ax if ax is not None else fig.axes[0]
    if path is not None:
        fig.savefig(path, dpi=120, bbox_inches="tight")
    return ax


def plot_pairwise_inner_products(dataset: Any, times: Any = None, bins: int = 50, ax: Any = None) -> Any:
    """Deprecated form of :func:`meanfield.plot.inner_products`: returns the Axes."""
    from .plot import inner_products

    _deprecated("plot_pairwise_inner_products", "inner_products")
    fig = inner_products(dataset, times, bins, ax=ax)
    return ax if ax is not None else fig.axes[0]

"""End points of :func:`meanfield.optimal_configurations`: energy above the sharp value per start."""

from __future__ import annotations

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

__all__ = ["optimal_configurations"]


def optimal_configurations(ds: xr.Dataset) -> Figure:
    """Two panels of an :func:`~meanfield.optimal_configurations` result: H_β of each start minus the
    nearest exact configuration's (log scale, round-off floored at 1e-17; the energy tolerance dashed),
    coloured by what the start reached, and the fraction of starts per configuration.

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`meanfield.optimal_configurations`: ``energy_gap``, ``configuration``,
        ``fraction``, the ``configuration_name`` coordinate and the attrs ``n``, ``d``, ``beta``,
        ``method``, ``energy_tolerance``.

    Returns
    -------
    matplotlib.figure.Figure
        A new figure (10 × 3.8 in, made without pyplot) with two Axes: left, |H_β - H_β[exact]| per
        start on a log scale, one colour per configuration reached; right, a bar per configuration
        (the candidates, then "other") of height ``fraction``.

    Raises
    ------
    TypeError
        ``ds`` is not a Dataset with ``fraction`` and ``energy_gap``.

    Examples
    --------
    >>> import meanfield as mf
    >>> ds = mf.optimal_configurations(4, 3, beta=1.0, starts=3, seed=0)   # 4 points on S²
    >>> fig = mf.plot.optimal_configurations(ds)
    >>> left, right = fig.axes
    >>> left.get_title(), left.get_yscale(), right.get_title()
    ('n = 4, S^2, β = 1 (minimize)', 'log', 'configurations reached')
    >>> # every start reached the regular simplex: bars of height fraction = (1, 0)
    >>> [bar.get_height() for bar in right.patches] == ds["fraction"].values.tolist() == [1.0, 0.0]
    True
    """
    if not isinstance(ds, xr.Dataset) or "fraction" not in ds or "energy_gap" not in ds:
        raise TypeError("optimal_configurations draws the Dataset of meanfield.optimal_configurations")
    names = [str(name) for name in ds["configuration_name"].values]
    fig = Figure(figsize=(10, 3.8))
    left, right = fig.subplots(1, 2)
    found = ds["configuration"].values
    gap = np.maximum(ds["energy_gap"].values, 1e-17)
    for k, name in enumerate(names):
        chosen = found == k
        if chosen.any():
            left.semilogy(ds["start"].values[chosen], gap[chosen], "o", color=f"C{k}", label=name)
    left.axhline(float(ds.attrs["energy_tolerance"]), color="k", ls="--", lw=0.8)
    left.set(xlabel="start", ylabel="|H_β - H_β[exact]|",
             title=f"n = {ds.attrs['n']}, S^{ds.attrs['d'] - 1}, β = {ds.attrs['beta']:g} ({ds.attrs['method']})")
    left.legend(fontsize=8)
    right.bar(names, ds["fraction"].values, color=[f"C{k}" for k in range(len(names))])
    right.set(ylabel="fraction of starts", ylim=(0, 1), title="configurations reached")
    fig.tight_layout()
    return fig

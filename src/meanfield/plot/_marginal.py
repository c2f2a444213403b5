"""The polar-angle marginal of a density on a sphere, and its figure at chosen times.

For a density ρ w.r.t. the area of S^{d-1} that depends on the polar angle ϑ from e_d only (a
:class:`~meanfield.ZonalSphere` result), the law of ϑ has the density

    p(t, ϑ) = |S^{d-2}| sin^{d-2}ϑ ρ(t, ϑ)  on [0, π],     ∫_0^π p dϑ = ∫ ρ dσ;

on S² (a :class:`~meanfield.Sphere` result on (lat, lon)) ϑ = π/2 − lat and

    p(t, ϑ) = sin ϑ ∫_0^{2π} ρ(t, ϑ, φ) dφ = 2π cos(lat) · mean over the longitudes of ρ.

p spans a few decades where ρ itself, in high d, spans many.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from solvers import sphere_area
from ._checks import axes_of, density_domain, put_title, time_indices

__all__ = ["polar_marginal", "polar_marginal_values"]

MARGINAL_LABEL = "polar marginal p(t, ϑ) [1/rad]"


def polar_marginal_values(ds: xr.Dataset, who: str = "polar_marginal") -> tuple[np.ndarray, np.ndarray]:
    """The polar angles ϑ (increasing, shape (m,)) and the marginal p(t, ϑ) (shape (time, m)) of a sphere or
    zonal result.

    Raises
    ------
    ValueError
        The dataset is not a density on S² or a zonal density (a circle has no polar angle).
    """
    domain = density_domain(ds, who)
    rho = np.asarray(ds["density"].values, dtype=float)
    if domain == "zonal":
        d = int(ds.attrs["dimension"])
        polar = np.asarray(ds["polar"].values, dtype=float)
        return polar, rho * sphere_area(d - 1) * np.sin(polar) ** (d - 2)
    if domain == "sphere":
        lat = np.asarray(ds["lat"].values, dtype=float)
        order = np.argsort(-lat)  # ϑ = π/2 - lat increasing
        marginal = 2 * np.pi * np.cos(lat)[None, :] * rho.mean(axis=2)
        return np.pi / 2 - lat[order], marginal[:, order]
    raise ValueError(f"{who} needs a density on a sphere ((time, lat, lon) or (time, polar)); a density on the "
                     "circle has no polar angle: draw it with density_map")


def polar_marginal(ds: xr.Dataset, times: Sequence[float] | None = None, *, ax: Axes | None = None,
                   title: str | None = None) -> Figure:
    """The polar-angle marginal p(t, ϑ) at chosen times, one curve per time.

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`meanfield.solve` on a :class:`~meanfield.ZonalSphere` (density over (time,
        polar)) or a :class:`~meanfield.Sphere` (over (time, lat, lon); ϑ is measured from the north pole).
    times : sequence of float, optional
        Times to show (the nearest output times are used); default: four evenly spaced outputs.
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
        Not a sphere or zonal density, or ``times`` is empty.

    Examples
    --------
    >>> import numpy as np, meanfield as mf
    >>> rho0 = mf.von_mises(mf.ZonalSphere(10, 128), kappa=1.0)
    >>> ds = mf.solve(mf.SelfAttention(4.0), rho0, np.linspace(0, 3, 7))
    >>> mf.plot.polar_marginal(ds, times=[0, 3]).savefig("marginal.png")  # doctest: +SKIP
    """
    polar, marginal = polar_marginal_values(ds)
    fig, ax = axes_of(ax, (6.4, 4.0))
    t = ds["time"].values
    for i in time_indices(t, times):
        ax.plot(polar, marginal[i], lw=1.2, label=f"t = {t[i]:.3g}")
    ax.set_xlabel("polar angle ϑ from the pole [rad]")
    ax.set_ylabel(MARGINAL_LABEL)
    ax.set_xlim(0, np.pi)
    ax.set_xticks([0, np.pi / 4, np.pi / 2, 3 * np.pi / 4, np.pi], ["0", "π/4", "π/2", "3π/4", "π"])
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    put_title(ax, ds, title)
    return fig

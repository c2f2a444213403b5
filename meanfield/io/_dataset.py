"""Results as :class:`xarray.Dataset`: coordinates with units, diagnostics, attrs."""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from solvers import ConvolutionVelocity

from ._conventions import COORD_ATTRS, describe, geographic_coords, history_line, with_history
from ..domains._domain import moment_points
from ..models._energy import density_energy

__all__ = ["density_dataset"]


def density_dataset(
    model: Any,
    domain: Any,
    velocity: ConvolutionVelocity,
    times: np.ndarray,
    states: np.ndarray,
    mass: np.ndarray,
    attrs: dict[str, Any],
    energies: np.ndarray | None = None,
    call: str = "meanfield.solve",
) -> xr.Dataset:
    """Dataset of a PDE run: marginal density, energy, mass, order parameter.

    ``states`` has shape (time, m, *grid) (node values); the marginal is
    ρ̄ = Σ_m w_m ρ_m. ``mass`` is the scheme's own total mass of ρ̄ (exact for
    its discretisation, e.g. the sum of cell masses of a finite-volume scheme).
    Energy is E_β of ρ̄ (NaN for a Kuramoto interaction without energy),
    computed here unless ``energies`` (one per time) are given;
    the order parameter is |∫ x ρ̄ dσ|.

    Coordinates carry the attrs of :data:`COORD_ATTRS` (on S², also
    ``latitude``/``longitude`` in degrees, :func:`geographic_coords`); the
    attrs carry every parameter's meaning (:func:`describe`) and, unless
    ``attrs`` has one, a ``history`` line naming the library ``call``.
    """
    grid_dims = tuple(domain.coords)
    marginal = np.tensordot(velocity.weights, states, axes=([0], [1]))
    weights = domain.weights
    axes = tuple(range(1, marginal.ndim))
    first_moment = np.tensordot(marginal * weights, moment_points(domain), axes=(axes, tuple(range(len(axes)))))
    order = np.linalg.norm(first_moment, axis=-1)
    if energies is None:
        energies = marginal_energy(model, domain, marginal)
    coords: dict[str, Any] = {"time": ("time", np.asarray(times, dtype=float), COORD_ATTRS["time"])}
    for name, values in domain.coords.items():
        coords[name] = (name, values, COORD_ATTRS.get(name, {}))
    coords.update(geographic_coords(domain.coords))
    data = {
        "density": (("time", *grid_dims), marginal, {"long_name": "density w.r.t. the area measure"}),
        "mass": ("time", mass, {"long_name": "total mass ∫ρ dσ"}),
        "energy": ("time", energies, {"long_name": "interaction energy E_β"}),
        "order_parameter": ("time", order, {"long_name": "|∫ x dμ|"}),
    }
    if velocity.n_species > 1:
        coords["frequency"] = ("frequency", velocity.drift, COORD_ATTRS["frequency"])
        data["density_by_frequency"] = (
            ("time", "frequency", *grid_dims),
            states,
            {"long_name": "density of the oscillators at each frequency node"},
        )
        data["frequency_weight"] = ("frequency", velocity.weights, {"long_name": "quadrature weight"})
    described = describe(netcdf_safe(attrs))
    if "history" not in described:
        described = with_history(described, history_line(f"{call}(model={model!r}, domain={domain!r}, "
                                                          f"method={attrs.get('method', '?')!r})"))
    return xr.Dataset(data, coords=coords, attrs=described)


def marginal_energy(model: Any, domain: Any, marginal: np.ndarray) -> np.ndarray:
    """E_β of each marginal density in ``marginal`` (time, *grid); NaN where the model has no energy."""
    try:
        return density_energy(model, domain, marginal)
    except ValueError:
        return np.full(marginal.shape[0], np.nan)


def netcdf_safe(attrs: dict[str, Any]) -> dict[str, Any]:
    """Attrs as NetCDF stores them: booleans as 0/1, None as "none", other objects by repr."""
    out: dict[str, Any] = {}
    for key, value in attrs.items():
        if isinstance(value, (bool, np.bool_)):
            out[key] = int(value)
        elif value is None:
            out[key] = "none"
        elif isinstance(value, (int, float, str, np.integer, np.floating)):
            out[key] = value
        else:
            out[key] = repr(value)
    return out

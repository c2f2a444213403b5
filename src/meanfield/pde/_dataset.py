"""The outputs of a PDE run and their Dataset: density, energy, mass, order parameter, steps.

:class:`DensityRecord` is the record the run driver (:func:`meanfield.runs.drive`) keeps of a
:func:`meanfield.solve` run: at every output the node values of each density (the scheme's
``to_grid``), the mass by the scheme's own quadrature, E_β of the marginal and the accepted steps;
:func:`density_dataset` makes the Dataset.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import xarray as xr

from solvers import ConvolutionVelocity

from ..io._checkpoint import snapshot_of
from ..io._conventions import describe, history_line, with_history
from ..models._energy import ENERGY_ATTRS, ENERGY_VARIABLES
from ._resolution import ResolutionMonitor
from ..runs._finite import non_finite_outputs

__all__ = ["DensityRecord", "density_dataset", "netcdf_safe"]

DENSITY_UNITS = {("theta",): "rad-1", ("lat", "lon"): "sr-1"}
"""UDUNITS of a density w.r.t. the area measure: per radian on S¹, per steradian on S²; on the zonal S^{d-1}
(grid dim ``polar``) per unit (d-1)-dimensional area of the unit sphere, which UDUNITS writes "1"."""

logger = logging.getLogger(__name__)


def density_dataset(model: Any, domain: Any, velocity: ConvolutionVelocity, times: np.ndarray, states: np.ndarray,
                    mass: np.ndarray, energies: np.ndarray, steps: np.ndarray, attrs: dict[str, Any],
                    call: str = "meanfield.solve", free_energies: np.ndarray | None = None,
                    energy_forms: np.ndarray | None = None) -> xr.Dataset:
    """Dataset of a PDE run: marginal density, energy, mass, order parameter, steps (and the free energy of a
    model that has one, ``free_energies``; the normalised energy e^{-β}E_β and log E_β of a model that reports
    them, ``energy_forms`` of shape (time, 2)).

    ``states`` has shape (time, m, *grid) (node values); the marginal is
    ρ̄ = Σ_m w_m ρ_m. ``mass`` is the scheme's own total mass of ρ̄ (exact for
    its discretisation, e.g. the sum of cell masses of a finite-volume scheme);
    ``energies`` E_β of ρ̄ (NaN for a model without energy); the order parameter is
    |∫ x ρ̄ dσ|.

    Coordinates carry units (the domain's ``dataset_coords``); the attrs carry every
    parameter's meaning (:func:`describe`) and, unless ``attrs`` has one, a ``history``
    line naming the library ``call``.
    """
    grid_dims = tuple(domain.coords)
    marginal = np.tensordot(velocity.weights, states, axes=([0], [1]))
    axes = tuple(range(1, marginal.ndim))
    first_moment = np.tensordot(marginal * domain.weights, domain.moment_points,
                                axes=(axes, tuple(range(len(axes)))))
    coords: dict[str, Any] = {**model.time_coordinates(np.asarray(times, dtype=float)), **domain.dataset_coords()}
    density = {"long_name": "density w.r.t. the area measure", "units": DENSITY_UNITS.get(grid_dims, "1")}
    data = {
        "density": (("time", *grid_dims), marginal, density),
        "mass": ("time", mass, {"long_name": "total mass ∫ρ dσ", "units": "1"}),
        "energy": ("time", energies, {"long_name": model.energy_description, "units": "1"}),
        "order_parameter": ("time", np.linalg.norm(first_moment, axis=-1), {"long_name": "|∫ x dμ|", "units": "1"}),
        "steps": ("time", steps, {"long_name": "accepted steps since the previous output", "units": "1"}),
    }
    if energy_forms is not None:
        for name, values in zip(ENERGY_VARIABLES[1:], np.moveaxis(energy_forms, -1, 0)):
            data[name] = ("time", values, ENERGY_ATTRS[name])
    if free_energies is not None:
        data["free_energy"] = ("time", free_energies, {"long_name": "free energy (energy and σ∫ρ log ρ dσ), "
                                                                    "non-increasing", "units": "1"})
    if velocity.n_species > 1:
        species = model.species_coordinate(velocity)
        dim = species["dim"]
        coords[dim] = (dim, species["values"], species["attrs"])
        data[species["variable"]] = (("time", dim, *grid_dims), states, {**density, "long_name": species["long_name"]})
        data[f"{dim}_weight"] = (dim, velocity.weights, {"long_name": "quadrature weight"})
    described = describe(netcdf_safe(attrs))
    if "history" not in described:
        described = with_history(described, history_line(f"{call}(model={model!r}, domain={domain!r}, "
                                                          f"method={attrs.get('method', '?')!r})"))
    return xr.Dataset(data, coords=coords, attrs=described)


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


class DensityRecord:
    """The outputs of a :func:`meanfield.solve` run (the record of :func:`meanfield.runs.drive`).

    Parameters
    ----------
    model, domain : the run's model and domain
    velocity : ConvolutionVelocity
        The model's specification on the domain (its species and their weights).
    scheme : solvers.Scheme
        The scheme (``to_grid``, ``mass``, ``spectral_tail``).
    steps_of : callable
        ``steps_of()`` gives the accepted steps per output of the running segment.
    times : ndarray
        The run's output times.
    """

    def __init__(self, model: Any, domain: Any, velocity: ConvolutionVelocity, scheme: Any,
                 steps_of: Any, times: np.ndarray) -> None:
        self.model, self.domain, self.velocity, self.scheme = model, domain, velocity, scheme
        self.steps_of = steps_of
        self.times = times
        self.resolution = ResolutionMonitor(scheme, domain, advice=model.resolution_advice(velocity),
                                            species=self._species_noun())
        self.previous: dict[str, np.ndarray] | None = None
        self._allocate(times)

    def _species_noun(self) -> str:
        """What the densities of a run with several species are, in words ("frequency nodes", "positions")."""
        if self.velocity.n_species == 1:
            return "densities"
        return self.model.species_coordinate(self.velocity)["noun"]

    def _allocate(self, times: np.ndarray) -> None:
        self.segment = times
        self.states = np.empty((times.size, self.velocity.n_species, *self.domain.shape))
        self.masses = np.empty(times.size)
        self.energies = np.empty(times.size)
        self.free_energies = np.empty(times.size) if self.model.has_free_energy else None
        self.energy_forms = np.empty((times.size, 2)) if self.model.has_energy_forms else None

    def record(self, index: int, t: float, y: Any) -> None:
        """Node values, mass and energy of output ``index`` of the segment; the resolution tail."""
        self.states[index] = self.scheme.to_grid(y)
        self.resolution(t, y)
        self.masses[index] = self.velocity.weights @ self.scheme.mass(y)
        marginal = np.tensordot(self.velocity.weights, self.states[index: index + 1], axes=([0], [1]))
        if self.energy_forms is not None:  # E_β, e^{-β}E_β and log E_β from one double integral
            energy, normalized, log = self.model.density_energy_forms(self.domain, marginal)
            self.energies[index], self.energy_forms[index] = energy[0], (normalized[0], log[0])
        else:
            self.energies[index] = (self.model.density_energy(self.domain, marginal)[0] if self.model.has_energy
                                    else np.nan)
        if self.free_energies is not None:
            self.free_energies[index] = self.model.density_free_energy(self.domain, marginal)[0]

    def resume_from(self, done: xr.Dataset) -> np.ndarray:
        """Keep the outputs of the checkpoint ``done``; the scheme state of its last node values (the start when
        the checkpoint holds no scheme state: the continuation then matches an uninterrupted run to the scheme's
        tolerance, not bit for bit)."""
        field = (done[self.model.species_coordinate(self.velocity)["variable"]] if self.velocity.n_species > 1
                 else done["density"].expand_dims("species", axis=1))
        self.previous = {"states": np.asarray(field.values), "times": done.time.values,
                         "masses": done.mass.values, "energies": done.energy.values, "steps": done.steps.values}
        if self.model.has_energy_forms:  # a checkpoint written before they were recorded: computed here
            saved = [done[name].values for name in ENERGY_VARIABLES[1:] if name in done]
            self.previous["energy_forms"] = np.stack(
                saved if len(saved) == 2
                else self.model.density_energy_forms(self.domain, np.asarray(done.density.values))[1:], axis=-1)
        if self.model.has_free_energy:  # a checkpoint written before free energies were recorded: computed here
            self.previous["free_energies"] = (done.free_energy.values if "free_energy" in done else np.array(
                [self.model.density_free_energy(self.domain, rho)[()] for rho in done.density.values]))
        self.resolution = ResolutionMonitor(self.scheme, self.domain, done.attrs.get("resolution_tail"),
                                            self.model.resolution_advice(self.velocity), self._species_noun())
        self._allocate(self.times[done.sizes["time"] - 1:])
        if not snapshot_of(done):
            logger.warning(
                "the checkpoint holds no scheme state: restarting from its node values, so the continuation "
                "matches an uninterrupted run to the scheme's tolerance, not bit for bit")
        return self.scheme.from_grid(self.previous["states"][-1])

    def facts(self) -> dict[str, Any]:
        return self.resolution.facts()

    def failure(self, ds: xr.Dataset) -> str | None:
        """The schemes check every step themselves (negative density, mass, resolution, CFL); what is left is an
        output that is not finite (:func:`meanfield.runs.non_finite_outputs`): a density or an order parameter
        that overflowed, an energy beyond the largest double (a model without energy holds NaN there)."""
        return non_finite_outputs(ds, undefined=() if self.model.has_energy else ("energy",))

    def dataset(self, n_outputs: int, attrs: dict[str, Any]) -> xr.Dataset:
        steps = np.asarray(self.steps_of()[:n_outputs], dtype=int)
        parts = {"states": self.states[:n_outputs], "times": self.segment[:n_outputs],
                 "masses": self.masses[:n_outputs], "energies": self.energies[:n_outputs], "steps": steps}
        if self.free_energies is not None:
            parts["free_energies"] = self.free_energies[:n_outputs]
        if self.energy_forms is not None:
            parts["energy_forms"] = self.energy_forms[:n_outputs]
        if self.previous is not None:
            parts = {name: np.concatenate([self.previous[name][:-1], part]) for name, part in parts.items()
                     if name != "steps"} | {"steps": np.concatenate([self.previous["steps"], steps[1:]])}
        return density_dataset(self.model, self.domain, self.velocity, parts["times"], parts["states"],
                               parts["masses"], parts["energies"], parts["steps"], attrs,
                               free_energies=parts.get("free_energies"), energy_forms=parts.get("energy_forms"))

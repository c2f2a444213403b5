"""The outputs of a particle run and their Dataset: positions, weights, mass, order parameter, energy.

:class:`ParticleRecord` is the record the run driver (:func:`meanfield.runs.drive`) keeps of a
:func:`meanfield.simulate` run: the positions at every output (and, with noise, the state of the
generator there, so that a resumed run continues its stream). :meth:`ParticleRecord.dataset` builds the
Dataset; its diagnostics (order parameter, energy) are computed in blocks of bounded memory
(:data:`DIAGNOSTIC_BLOCK_BYTES`), each output's energy once, and one that fails is left out, logged and
named in attr ``diagnostic_errors``, never costing the positions.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import numpy as np
import xarray as xr

from ..domains._geometry import ANGLES
from ..io._conventions import describe, history_line, with_history
from ..measures._read_particles import SPHERE_TOLERANCE
from ..models._energy import ENERGY_ATTRS, ENERGY_VARIABLES
from ..runs._finite import non_finite_outputs
from .._version import __version__
from ._compiled_statistics import order_parameters

__all__ = ["ANGLE_RESOLUTION", "DIAGNOSTIC_BLOCK_BYTES", "ParticleRecord"]

logger = logging.getLogger(__name__)

#: the coarsest spacing of doubles [rad] at which an angle still counts as known (:meth:`ParticleRecord.failure`)
ANGLE_RESOLUTION = 1e-6

#: positions per block of the diagnostics (energy, order parameter) over systems × times: the memory a
#: diagnostic needs beyond the trajectory is bounded by about this (a copy of the block and its weights)
DIAGNOSTIC_BLOCK_BYTES = 32 * 2**20


class ParticleRecord:
    """The outputs of a :func:`meanfield.simulate` run.

    Parameters
    ----------
    model : the run's model (its ``attrs``, ``has_energy`` and ``particle_energy``)
    geometry : the particles' space (how positions are stored, the order parameter's embedding)
    weights : ndarray, shape (systems, n)
    batched : bool
        Whether the input had a systems axis (the Dataset has a ``system`` dimension then).
    times : ndarray
        The run's output times.
    x0 : ndarray
        The initial positions (the first output of a fresh run, as given).
    positions : callable
        ``positions(t, y)``: the positions of the integrator's state ``y`` at ``t`` (the stepper's).
    state : callable
        ``state(t, x)``: the integrator's state of positions ``x`` at ``t`` (a checkpoint without state).
    frequencies : ndarray or None
        The particles' natural frequencies (stored as ``frequency``).
    rng : numpy Generator or None
        The generator of the noise: its state is kept at every output.
    energy_accuracy : float or None
        Relative accuracy of the energy's Fourier sums (the NUFFT path), None: exact sums.
    sphere_tolerance : float
        The largest | |x_i| - 1 | of a valid result on a sphere (:meth:`failure`).
    """

    def __init__(self, model: Any, geometry: Any, weights: np.ndarray, batched: bool, times: np.ndarray,
                 x0: np.ndarray, positions: Any, state: Any, frequencies: np.ndarray | None = None,
                 rng: np.random.Generator | None = None, energy_accuracy: float | None = None,
                 sphere_tolerance: float = SPHERE_TOLERANCE) -> None:
        self.sphere_tolerance = float(sphere_tolerance)
        self.model, self.geometry, self.weights, self.batched = model, geometry, weights, batched
        self.times, self.x0 = times, x0
        self.positions_of, self.state_of = positions, state
        self.frequencies, self.rng, self.energy_accuracy = frequencies, rng, energy_accuracy
        self.outputs: list[np.ndarray] = []
        self.rng_states: list[str] = []
        #: per energy variable (:data:`ENERGY_VARIABLES`), the values of the outputs computed so far
        self.energy_rows: dict[str, list[np.ndarray]] = {name: [] for name in ENERGY_VARIABLES}
        self.first = 0  # index into ``times`` of the segment's first output

    def record(self, index: int, t: float, y: Any) -> None:
        """Keep the positions of output ``index`` of the segment (the given x0 for a fresh run's first)."""
        if index == 0 and self.first == 0:
            positions = np.array(self.x0, dtype=float)
        else:
            positions = np.array(self.positions_of(t, y), dtype=float)
        del self.outputs[self.first + index:]
        self.outputs.append(positions)
        if self.rng is not None:
            del self.rng_states[self.first + index:]
            self.rng_states.append(json.dumps(self.rng.bit_generator.state))

    def resume_from(self, done: xr.Dataset) -> Any:
        """Keep the checkpoint's positions (and energies); continue the noise stream from its generator state;
        the integrator's state at its last output."""
        saved = np.asarray(done["positions"].values, dtype=float)
        saved = saved if self.batched else saved[None]
        self.outputs = list(np.moveaxis(saved, 1, 0))
        self.first = len(self.outputs) - 1
        for name in ENERGY_VARIABLES:  # the saved values: on S¹ the saved angles are reduced mod 2π
            if name in done:
                energy = np.asarray(done[name].values, dtype=float)
                self.energy_rows[name] = list(np.moveaxis(energy if self.batched else energy[None], -1, 0))
        if self.rng is not None:
            if "rng_state" not in done.attrs:
                raise ValueError("the checkpoint holds no noise generator state (attr rng_state); remove it or "
                                 "pass resume=False")
            self.rng.bit_generator.state = json.loads(done.attrs["rng_state"])
            self.rng_states = [""] * self.first + [done.attrs["rng_state"]]
        return self.state_of(float(self.times[self.first]), self.outputs[-1])

    def facts(self) -> dict[str, Any]:
        deviation = max((self.geometry.deviation(x) for x in self.outputs), default=0.0)
        facts: dict[str, Any] = {"max_sphere_deviation": deviation}
        if self.rng is not None and self.rng_states:
            facts["rng_state"] = self.rng_states[-1]
        return facts

    def failure(self, ds: xr.Dataset) -> str | None:
        """Why the run's outputs are not a valid result, or None.

        * points of a sphere (or of the manifold of a token normalisation, its ``deviation``) further than
          ``sphere_tolerance`` from it (``max_sphere_deviation``), the bound
          the initial positions are held to;
        * positions that are not finite;
        * angles that lost their digits: the largest unwrapped angle |θ| (or, with natural frequencies,
          2π + max_i |ω_i| (t - t_0) if larger) is so large that the spacing of doubles there exceeds
          :data:`ANGLE_RESOLUTION` rad, so θ mod 2π is round-off, whatever the integrator's own error estimate
          says (a noise or a frequency spread far beyond the time scale of the run);
        * any other output that is not finite (:func:`meanfield.runs.non_finite_outputs`): an order parameter, an
          energy beyond the largest double (e^β/(2β) of a cluster at β > 711), NaN or ±inf.
        """
        deviation = float(ds.attrs.get("max_sphere_deviation", 0.0))
        if self.geometry.unit_vectors and self.geometry.atom_ndim == 2 and not deviation <= self.sphere_tolerance:
            return (f"the particles left the sphere: max | |x_i| - 1 | = {deviation:.3g} > sphere_tolerance = "
                    f"{self.sphere_tolerance:g} (the steps are too large for the noise or the velocity)")
        if not deviation <= self.sphere_tolerance:  # a manifold of a token normalisation (its ``manifold`` in words)
            return (f"the particles left {self.geometry.manifold} = {deviation:.3g} > sphere_tolerance = "
                    f"{self.sphere_tolerance:g} (the steps are too large for the velocity)")
        largest = max((float(np.max(np.abs(x), initial=0.0)) for x in self.outputs), default=0.0)
        if not np.isfinite(largest):
            return "the positions are not finite"
        if self.geometry.atom_ndim == 1:
            if self.frequencies is not None and self.frequencies.size:
                span = float(self.times[len(self.outputs) - 1] - self.times[0])
                largest = max(largest, float(np.max(np.abs(self.frequencies))) * abs(span) + 2 * np.pi)
            if np.spacing(largest) > ANGLE_RESOLUTION:
                return (f"the angles lost their digits: |θ| reaches {largest:.3g} rad, where doubles are "
                        f"{np.spacing(largest):.2g} rad apart (> {ANGLE_RESOLUTION:g}), so θ mod 2π is round-off; "
                        "the noise or the spread of frequencies is far beyond the time scale of the run")
        return non_finite_outputs(ds)

    def dataset(self, n_outputs: int, attrs: dict[str, Any]) -> xr.Dataset:
        """The Dataset of the checkpoint's outputs and the first ``n_outputs`` of this segment."""
        count = self.first + n_outputs
        trajectory = np.stack(self.outputs[:count], axis=1)  # (systems, time, n[, d])
        facts = dict(attrs)
        if self.rng is not None:
            facts["rng_state"] = self.rng_states[count - 1]
        return self._dataset(trajectory, self.times[:count], facts)

    # ------------------------------------------------------------------ the Dataset
    def _dataset(self, traj: np.ndarray, times: np.ndarray, run_attrs: dict[str, Any]) -> xr.Dataset:
        geometry, weights, model = self.geometry, self.weights, self.model
        n_sys, n_t, n = traj.shape[:3]
        angles = geometry.atom_ndim == 1
        sys_dims = ("system",) if self.batched else ()
        sel = slice(None) if self.batched else 0
        pos_dims = (*sys_dims, "time", "particle") + (() if angles else ("component",))
        data = {
            "positions": (pos_dims, geometry.stored(traj)[sel], {
                "long_name": "angle" if angles else "position", "units": "rad" if angles else "1"}),
            "weights": ((*sys_dims, "particle"), weights[sel], {"long_name": "particle weight"}),
            "mass": ((*sys_dims, "time"), np.broadcast_to(weights.sum(axis=-1)[:, None], (n_sys, n_t))[sel],
                     {"long_name": "total weight sum_i w_i", "units": "1"}),
        }
        failures: list[str] = []
        if geometry.unit_vectors:  # the order parameter |Σ_i w_i x_i| of points of a sphere (or the circle)
            order = _diagnostic("order_parameter", failures, traj, weights,
                                lambda x, w: order_parameters(x[..., None] if angles else x, w,
                                                              geometry.code == ANGLES))
            if order is not None:
                data["order_parameter"] = ((*sys_dims, "time"), order[sel], {"long_name": "|sum_i w_i x_i|"})
        if model.has_energy:
            self._energies(data, failures, traj, sys_dims, sel)
        if self.frequencies is not None:
            data["frequency"] = ((*sys_dims, "particle"), self.frequencies[sel], {"long_name": "natural frequency"})
        coords = {
            **model.time_coordinates(times),
            "particle": ("particle", np.arange(n), {"long_name": "particle index"}),
        }
        if self.batched:
            coords["system"] = ("system", np.arange(n_sys), {"long_name": "independent system"})
        if not angles:
            coords["component"] = ("component", np.arange(traj.shape[-1]),
                                   {"long_name": "coordinate in R^d", "units": "1"})
        attrs = {**model.attrs, **run_attrs, "meanfield_version": __version__}
        if failures:
            attrs["diagnostic_errors"] = "; ".join(failures)
        attrs = with_history(describe(attrs), history_line(f"meanfield.simulate(model={model!r}, "
                                                           f"method={attrs.get('method', '?')!r})"))
        return xr.Dataset(data, coords=coords, attrs=attrs)


    def _energies(self, data: dict[str, Any], failures: list[str], traj: np.ndarray, sys_dims: tuple[str, ...],
                  sel: Any) -> None:
        """``energy`` of every output, and for a model with the finite forms ``normalized_energy`` = e^{-β}E and
        ``log_energy`` = log E, each output's computed once (the values of a checkpoint kept)."""
        model, geometry, n_t = self.model, self.geometry, traj.shape[1]
        names = ENERGY_VARIABLES if model.has_energy_forms else ENERGY_VARIABLES[:1]
        start = min(len(self.energy_rows[name]) for name in names)
        if start < n_t:
            if model.has_energy_forms:
                new = _diagnostic("energy", failures, traj[:, start:], self.weights,
                                  lambda x, w: np.stack(model.particle_energy_forms(x, w, geometry,
                                                                                    self.energy_accuracy)),
                                  count=len(names))
            else:
                new = _diagnostic("energy", failures, traj[:, start:], self.weights,
                                  lambda x, w: model.particle_energy(x, w, geometry, self.energy_accuracy))
                new = None if new is None else new[None]
            if new is not None:
                for name, values in zip(names, new):
                    rows = self.energy_rows[name]
                    rows.extend(values.T[len(rows) - start:])
        for name in names:
            rows = self.energy_rows[name]
            if len(rows) >= n_t:
                attrs = ENERGY_ATTRS.get(name, {"long_name": model.energy_description, "units": "1"})
                data[name] = ((*sys_dims, "time"), np.stack(rows[:n_t], axis=1)[sel], attrs)


def _diagnostic(name: str, failures: list[str], traj: np.ndarray, weights: np.ndarray, func: Any, count: int = 1
                ) -> np.ndarray | None:
    """``func(states, weights)`` (one value per configuration, or ``count`` > 1 values: shape (count, configurations))
    over every (system, time) of ``traj``: shape (systems, time), or (count, systems, time).

    Computed in blocks of at most :data:`DIAGNOSTIC_BLOCK_BYTES` of positions (each block copied
    once, its weights repeated once), so the memory beyond the trajectory is bounded for any
    ensemble. A diagnostic that fails (for any reason) is logged and named in ``failures``
    and None is returned: the integrated positions are never lost to a diagnostic.
    """
    n_sys, n_t = traj.shape[:2]
    per_output = max(int(np.prod(traj.shape[2:])) * 8, 1)
    per_block = max(1, DIAGNOSTIC_BLOCK_BYTES // per_output)
    t_len = min(n_t, per_block)
    s_len = max(1, per_block // t_len)
    out = np.empty((count, n_sys, n_t))
    try:
        for s0 in range(0, n_sys, s_len):
            for t0 in range(0, n_t, t_len):
                block = np.ascontiguousarray(traj[s0:s0 + s_len, t0:t0 + t_len], dtype=float)
                ns, nt = block.shape[:2]
                values = func(block.reshape(ns * nt, *block.shape[2:]), np.repeat(weights[s0:s0 + ns], nt, axis=0))
                out[:, s0:s0 + ns, t0:t0 + nt] = np.reshape(values, (count, ns, nt))
    except Exception as exc:  # noqa: BLE001 -- a diagnostic never costs the integrated result
        logger.exception("simulate: the %s diagnostic failed; positions are returned without it", name)
        failures.append(f"{name}: {type(exc).__name__}: {exc}")
        return None
    return out[0] if count == 1 else out

"""simulate's diagnostics run in blocks of bounded memory and never cost the integrated positions."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import meanfield as mf
from meanfield.domains import SphereGeometry
from meanfield.particles import _record


def _ensemble(rng, systems=12, n=16, d=8):
    x0 = rng.normal(size=(systems, n, d))
    return x0 / np.linalg.norm(x0, axis=-1, keepdims=True)


def test_energies_are_computed_in_blocks_no_larger_than_the_budget(monkeypatch):
    x0 = _ensemble(np.random.default_rng(0))
    per_output = x0[0].nbytes  # one system at one time
    budget = 3 * per_output
    sizes = []

    class Spy(mf.SelfAttention):
        def particle_energy_forms(self, states, weights, geometry, accuracy=None):
            sizes.append(states.nbytes)
            return super().particle_energy_forms(states, weights, geometry, accuracy)

    monkeypatch.setattr(_record, "DIAGNOSTIC_BLOCK_BYTES", budget)
    model = Spy(2.0)
    ds = mf.simulate(model, x0, np.linspace(0, 1, 5), progress=False)
    assert len(sizes) > 1 and max(sizes) <= budget
    # the blocks together give the energy of every system at every time, as one call on all of them does
    positions = ds["positions"].values  # (system, time, particle, component)
    flat = positions.reshape(-1, *positions.shape[2:])
    whole = mf.SelfAttention(2.0).particle_energy(flat, np.full(flat.shape[:2], 1 / flat.shape[1]), SphereGeometry(8))
    # each configuration's sum is computed alone, whatever block it is in: measured identical (0)
    np.testing.assert_allclose(ds["energy"].values, whole.reshape(positions.shape[:2]), rtol=1e-15)


def test_a_failing_diagnostic_keeps_the_positions(caplog):
    x0 = _ensemble(np.random.default_rng(1))
    times = np.linspace(0, 1, 3)
    reference = mf.simulate(mf.SelfAttention(2.0), x0, times, progress=False)

    class OutOfMemory(mf.SelfAttention):
        def particle_energy(self, *args, **kwargs):
            raise MemoryError("Unable to allocate 715 MiB")

        particle_energy_forms = particle_energy

    silenced = logging.root.manager.disable  # another test may have left logging.disable(...) in force
    logging.disable(logging.NOTSET)
    try:
        with caplog.at_level(logging.ERROR, logger=_record.__name__):
            ds = mf.simulate(OutOfMemory(2.0), x0, times, progress=False)
    finally:
        logging.disable(silenced)
    assert ds.attrs["success"] == 1
    assert not {"energy", "normalized_energy", "log_energy"} & set(ds) and "order_parameter" in ds
    assert ds.attrs["diagnostic_errors"].startswith("energy: MemoryError: Unable to allocate 715 MiB")
    np.testing.assert_array_equal(ds["positions"].values, reference["positions"].values)
    assert "energy diagnostic failed" in caplog.text


@pytest.mark.parametrize("budget", [1, 10**9])
def test_block_budget_does_not_change_order_parameters(monkeypatch, budget):
    theta = np.random.default_rng(2).uniform(0, 2 * np.pi, (5, 40))
    monkeypatch.setattr(_record, "DIAGNOSTIC_BLOCK_BYTES", budget)
    ds = mf.simulate(mf.SelfAttention(1.0), theta, [0.0, 0.5, 1.0], domain="circle", progress=False)
    z = np.abs(np.exp(1j * ds["positions"].values).mean(axis=-1))
    np.testing.assert_allclose(ds["order_parameter"].values, z, rtol=2e-15)  # measured 4.4e-16 for both budgets

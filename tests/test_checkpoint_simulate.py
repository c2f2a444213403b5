"""An interrupted and resumed ``simulate`` equals the uninterrupted run bit for bit, on every adaptive path
(and the fixed-step ones: RK4, the discrete layers).

A run is interrupted right after its periodic checkpoint holding outputs 0..k is written (an exception
raised from the write, as a kill would leave the file), resumed with ``resume=True`` to the end, and
compared with one uninterrupted run: positions and energies with ``assert_array_equal``, and the counts
(steps, rejected steps, evaluations) summed over both segments. The checkpoint carries each integrator's
own state (``scheme_*`` variables: step size, FSAL velocity, controller memory, the unreduced state);
restarted from the saved positions alone, the continuation differs by 1.4e-8 to 1.4e-7 (measured) and
takes a different number of steps.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

import meanfield as mf
import meanfield.runs._driver
from meanfield.io._checkpoint import load_checkpoint

T = np.linspace(0.0, 5.0, 11)
K = 4  # the last output in the interrupted run's checkpoint
COUNTS = ("n_steps", "n_rejected", "nfev")


class Interrupted(Exception):
    """Raised after the checkpoint with a chosen number of outputs is written."""


def _interrupt_after(monkeypatch, n_outputs):
    original = meanfield.runs._driver.Checkpoint

    class Interrupting(original):
        def write(self, n_reached):
            written = super().write(n_reached)
            if n_reached == n_outputs:
                raise Interrupted
            return written

    monkeypatch.setattr(meanfield.runs._driver, "Checkpoint", Interrupting)
    return original


def _run_interrupted(monkeypatch, checkpoint, model, x0, n_outputs, **options):
    original = _interrupt_after(monkeypatch, n_outputs)
    with pytest.raises(Interrupted):
        mf.simulate(model, x0, T, checkpoint=checkpoint, checkpoint_interval=0.0, **options)
    monkeypatch.setattr(meanfield.runs._driver, "Checkpoint", original)


def _sphere_points(systems, n, d, seed):
    x = np.random.default_rng(seed).normal(size=(systems, n, d))
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _angles(n, seed):
    return np.random.default_rng(seed).uniform(0.0, 2 * np.pi, n)


CASES = {
    "ensemble-circle": (mf.SelfAttention(beta=2.0), _angles(40, 1), {"path": "ensemble"}),
    "ensemble-sphere-batch": (mf.SelfAttention(beta=2.0), _sphere_points(3, 20, 3, 2), {"path": "ensemble"}),
    "dopri5-circle": (mf.SelfAttention(beta=2.0), _angles(40, 3), {"path": "direct"}),
    "dopri5-sphere": (mf.SelfAttention(beta=2.0, normalized=False), _sphere_points(2, 20, 3, 4), {"path": "direct"}),
    "moebius-adaptive": (mf.Kuramoto(coupling=2.0, frequencies=scipy.stats.cauchy(scale=0.3)), _angles(40, 5), {}),
    "moebius-fixed": (mf.Kuramoto(coupling=2.0, frequencies=scipy.stats.norm(scale=0.3)), _angles(40, 6),
                      {"dt": 0.05}),
    "rk4-circle": (mf.SelfAttention(beta=2.0), _angles(40, 7), {"path": "direct", "method": "rk4", "dt": 0.05}),
    "layers-compiled-sphere-batch": (mf.SelfAttention(beta=2.0), _sphere_points(3, 20, 3, 8),
                                     {"method": "layers", "dt": 0.05}),
    "layers-split": (mf.Attention(2.0, ffn=(np.eye(3)[:, :2], np.eye(3)[:2], np.zeros(2), "tanh")),
                     _sphere_points(1, 20, 3, 9)[0], {"method": "layers", "dt": 0.05, "split": "lie-trotter"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_resumed_run_equals_the_uninterrupted_one_bit_for_bit(tmp_path, monkeypatch, case):
    model, x0, options = CASES[case]
    checkpoint = tmp_path / "run.nc"
    whole = mf.simulate(model, x0, T, **options)
    _run_interrupted(monkeypatch, checkpoint, model, x0, K + 1, **options)
    saved = load_checkpoint(checkpoint)
    assert saved.sizes["time"] == K + 1
    assert any(str(name).startswith("scheme_") for name in saved.data_vars)
    resumed = mf.simulate(model, x0, T, checkpoint=checkpoint, resume=True, **options)
    assert resumed.attrs["resumed_at"] == T[K]
    assert resumed.attrs["path"] == whole.attrs["path"]
    np.testing.assert_array_equal(resumed.positions.values, whole.positions.values)
    assert ("energy" in whole) == model.has_energy  # an Attention with a feed-forward term has none
    if model.has_energy:
        np.testing.assert_array_equal(resumed.energy.values, whole.energy.values)
    for name in COUNTS:
        assert resumed.attrs[name] == whole.attrs[name], name
    assert whole.attrs["n_steps"] > 0


def test_periodic_checkpoint_records_the_counts_so_far(tmp_path, monkeypatch):
    """The counts of a periodic write are those of the run up to its last output: a run of t[:K+1]
    reaches the same state at its end (its last step lands there, as the moebius scheme's steps
    land on every output time), so its counts are the same."""
    model, x0, options = CASES["moebius-adaptive"]
    checkpoint = tmp_path / "run.nc"
    _run_interrupted(monkeypatch, checkpoint, model, x0, K + 1, **options)
    saved = load_checkpoint(checkpoint)
    short = mf.simulate(model, x0, T[:K + 1], **options)
    np.testing.assert_array_equal(saved.positions.values, short.positions.values)
    for name in COUNTS:
        assert saved.attrs[name] == short.attrs[name] > (0 if name != "n_rejected" else -1), name


def test_run_interrupted_twice_equals_the_uninterrupted_one(tmp_path, monkeypatch):
    """The second interruption comes at the resumed run's first write (its first output, the
    saved one): that checkpoint keeps the integrator state it was resumed from."""
    model, x0, options = CASES["dopri5-sphere"]
    checkpoint = tmp_path / "run.nc"
    whole = mf.simulate(model, x0, T, **options)
    _run_interrupted(monkeypatch, checkpoint, model, x0, K + 1, **options)
    original = _interrupt_after(monkeypatch, K + 1)
    with pytest.raises(Interrupted):
        mf.simulate(model, x0, T, checkpoint=checkpoint, checkpoint_interval=0.0, resume=True, **options)
    monkeypatch.setattr(meanfield.runs._driver, "Checkpoint", original)
    resumed = mf.simulate(model, x0, T, checkpoint=checkpoint, resume=True, **options)
    np.testing.assert_array_equal(resumed.positions.values, whole.positions.values)
    np.testing.assert_array_equal(resumed.energy.values, whole.energy.values)
    for name in COUNTS:
        assert resumed.attrs[name] == whole.attrs[name], name

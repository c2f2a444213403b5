"""The ``history`` of a resumed ``solve`` or ``simulate``: the checkpoint's lines, oldest first, then the
resumed call's own line; the data equal the straight run's bit for bit.

Each run is interrupted right after a periodic checkpoint write (:func:`stop_after_checkpoint_writes`),
so the file it leaves holds the history that run wrote: one line per call that made it.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import meanfield as mf
from conftest import CheckpointStop
from meanfield.io._checkpoint import load_checkpoint

TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00 "  # history_line: ISO 8601 UTC to the second


def _lines(ds) -> list[str]:
    return ds.attrs["history"].split("\n")


def _check_lines(lines: list[str], call: str, model) -> None:
    pattern = TIME + re.escape(f"{call}(model={model!r}, ") + ".+"
    assert all(re.fullmatch(pattern, line) for line in lines)
    assert lines == sorted(lines, key=lambda line: line.split(" ", 1)[0])  # times never decrease


def test_resumed_and_extended_solve_keeps_every_earlier_line(tmp_path, stop_after_checkpoint_writes):
    """Interrupted after 3 of 6 outputs (1 line), resumed to t = 1 (2 lines), extended to t = 2 (3 lines);
    each result equals the straight run to its final time bit for bit, its file holds the same history."""
    rho0 = mf.density(mf.Circle(64), lambda th: 1 + 0.3 * np.cos(2 * th) + 0.1 * np.sin(th))
    model = mf.SelfAttention(beta=2.0)
    times, later = np.linspace(0.0, 1.0, 6), np.linspace(0.0, 2.0, 11)
    path = tmp_path / "run.nc"
    stop_after_checkpoint_writes(3)
    with pytest.raises(CheckpointStop):
        mf.solve(model, rho0, times, checkpoint=path, checkpoint_interval=0.0)
    stop_after_checkpoint_writes.disarm()
    partial = _lines(load_checkpoint(path))
    assert len(partial) == 1

    resumed = mf.solve(model, rho0, times, checkpoint=path, resume=True)
    extended = mf.solve(model, rho0, later, checkpoint=path, resume=True)
    assert _lines(resumed)[:1] == partial and len(_lines(resumed)) == 2
    assert _lines(extended)[:2] == _lines(resumed) and len(_lines(extended)) == 3
    assert _lines(load_checkpoint(path)) == _lines(extended)
    _check_lines(_lines(extended), "meanfield.solve", model)
    for result, t in ((resumed, times), (extended, later)):
        straight = mf.solve(model, rho0, t)
        assert len(_lines(straight)) == 1
        for name in ("density", "mass", "energy", "order_parameter", "steps"):
            np.testing.assert_array_equal(result[name].values, straight[name].values, err_msg=name)


def test_a_run_that_does_not_resume_starts_a_new_history(tmp_path):
    """resume=False overwrites the file: nothing of the earlier run's history is kept."""
    rho0 = mf.von_mises(mf.Circle(32), kappa=1.0)
    model = mf.SelfAttention(beta=1.0)
    path = tmp_path / "run.nc"
    mf.solve(model, rho0, np.linspace(0.0, 0.2, 3), checkpoint=path)
    again = mf.solve(model, rho0, np.linspace(0.0, 0.2, 3), checkpoint=path)
    assert len(_lines(again)) == 1 and _lines(load_checkpoint(path)) == _lines(again)


def test_simulate_interrupted_twice_keeps_the_lines_of_both_interrupted_calls(tmp_path,
                                                                              stop_after_checkpoint_writes):
    """Interrupted at its 4th output (1 line), resumed and interrupted again at the resumed call's second
    write (2 lines), resumed to the end (3 lines); positions and energies equal the straight run's."""
    x = np.random.default_rng(4).normal(size=(2, 20, 3))
    x0 = x / np.linalg.norm(x, axis=-1, keepdims=True)
    model = mf.SelfAttention(beta=2.0, normalized=False)
    times = np.linspace(0.0, 5.0, 11)
    path = tmp_path / "run.nc"
    histories = []
    for resume in (False, True):
        stop_after_checkpoint_writes(4 if not resume else 2)
        with pytest.raises(CheckpointStop):
            mf.simulate(model, x0, times, path="direct", checkpoint=path, checkpoint_interval=0.0, resume=resume)
        stop_after_checkpoint_writes.disarm()
        histories.append(_lines(load_checkpoint(path)))
    resumed = mf.simulate(model, x0, times, path="direct", checkpoint=path, resume=True)
    assert [len(lines) for lines in histories] == [1, 2]
    assert histories[1][:1] == histories[0] and _lines(resumed)[:2] == histories[1] and len(_lines(resumed)) == 3
    _check_lines(_lines(resumed), "meanfield.simulate", model)
    straight = mf.simulate(model, x0, times, path="direct")
    assert len(_lines(straight)) == 1
    np.testing.assert_array_equal(resumed.positions.values, straight.positions.values)
    np.testing.assert_array_equal(resumed.energy.values, straight.energy.values)

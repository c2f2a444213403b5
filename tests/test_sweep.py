"""sweep(): the grid becomes dimensions, schedulers agree bit for bit, stores resume, bad input is refused."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import xarray as xr

import meanfield as mf
from _sweep_funcs import (ignores_its_block, keeps_the_swept_dim, malloc_environment, noisy_moments, slow_square,
                          thread_environment)
from meanfield.studies.sweeps._store import Store

GRID = {"scale": [1.0, 2.0], "shift": [0.0, 1.0, 5.0]}


def expected_draws(scale: float, shift: float, seed: int, n: int = 50) -> np.ndarray:
    return scale * np.random.default_rng(np.random.SeedSequence([seed, 7])).standard_normal(n) + shift


def test_dims_coords_values_and_attrs():
    ds = mf.sweep(noisy_moments, GRID, seeds=[3, 0, 9], fixed={"n": 50}, scheduler="serial", progress=False)
    assert ds.draws.dims == ("scale", "shift", "seed", "sample")
    assert ds["mean"].dims == ds.offset.dims == ("scale", "shift", "seed")
    np.testing.assert_array_equal(ds.seed, [3, 0, 9])
    np.testing.assert_array_equal(ds["shift"], GRID["shift"])
    # every system is the function run alone with its own seed: equal to the last bit
    for i, scale in enumerate(GRID["scale"]):
        for j, shift in enumerate(GRID["shift"]):
            for k, seed in enumerate([3, 0, 9]):
                np.testing.assert_array_equal(ds.draws.values[i, j, k], expected_draws(scale, shift, seed))
    assert ds.attrs["law"] == "normal"  # the function's own attrs are kept
    assert ds.attrs["function"] == "_sweep_funcs:noisy_moments"
    assert json.loads(ds.attrs["grid"]) == GRID and json.loads(ds.attrs["fixed"]) == {"n": 50}
    assert ds.attrs["tasks_total"] == ds.attrs["tasks_run"] == 18 and ds.attrs["tasks_skipped"] == 0
    assert ds.attrs["scheduler"] == "serial" and ds.attrs["store"] == ""
    np.testing.assert_array_equal(ds.attrs["seeds"], [3, 0, 9])
    assert "sweep_task" not in ds.attrs and "sha256" not in ds.attrs


def test_batches_receive_arrays_and_give_the_unbatched_result():
    plain = mf.sweep(noisy_moments, GRID, seeds=5, scheduler="serial", progress=False)
    batched = mf.sweep(noisy_moments, GRID, seeds=5, batch={"seed": 2, "shift": 2}, scheduler="serial",
                       progress=False)
    # blocks of 2 seeds (2, 2, 1) and of 2 shifts (2, 1): 2 x 2 x 3 tasks instead of 2 x 3 x 5
    assert batched.attrs["tasks_total"] == 12 and plain.attrs["tasks_total"] == 30
    xr.testing.assert_identical(batched.drop_attrs(), plain.drop_attrs())


def test_batched_dims_must_come_back_with_the_block_length():
    with pytest.raises(mf.SweepError, match=r"must have dimension 'x' of length 2 \(the block\), got dims \{\}"):
        mf.sweep(ignores_its_block, {"x": [1.0, 2.0, 3.0]}, batch={"x": 2}, scheduler="serial", progress=False)
    with pytest.raises(mf.SweepError, match="has dimension 'x', a scalar swept parameter"):
        mf.sweep(keeps_the_swept_dim, {"x": [1.0]}, scheduler="serial", progress=False)


def test_cluster_and_serial_agree_bit_for_bit(dask_client):
    serial = mf.sweep(noisy_moments, GRID, seeds=5, batch={"seed": 2}, scheduler="serial", progress=False)
    cluster = mf.sweep(noisy_moments, GRID, seeds=5, batch={"seed": 2}, scheduler=dask_client, progress=False)
    xr.testing.assert_identical(cluster.drop_attrs(), serial.drop_attrs())
    assert cluster.attrs["scheduler"] == dask_client.scheduler.address and cluster.attrs["n_workers"] == 2
    assert dask_client.status == "running"  # a client passed in is not closed


def test_local_cluster_is_started_with_single_threaded_workers_and_closed():
    ds = mf.sweep(thread_environment, {"x": [0.0, 1.0]}, scheduler="local", n_workers=1, progress=False)
    assert ds.attrs["scheduler"].startswith("tcp://127.0.0.1") and ds.attrs["n_workers"] == 1
    assert (ds.threads.values == "1").all()


def test_local_cluster_workers_start_with_a_fixed_mmap_threshold():
    """dask's MALLOC_TRIM_THRESHOLD_ of 64 KiB turns off glibc's dynamic mmap threshold; the workers of the
    sweep's own cluster start with both thresholds at 32 MiB, so the integrators' temporary arrays stay on the heap."""
    ds = mf.sweep(malloc_environment, {"x": [0.0]}, scheduler="local", n_workers=1, progress=False)
    assert ds.malloc.sel(x=0.0).values.tolist() == [str(2**25), str(2**25)]


def test_store_pieces_manifest_and_resume_skip_finished_tasks(tmp_path):
    store = tmp_path / "store"
    fixed = {"delay": 0.0}
    first = mf.sweep(slow_square, {"x": [1.0, 2.0, 3.0]}, seeds=2, fixed=fixed, store=store, scheduler="serial",
                     progress=False)
    manifest = json.loads((store / "manifest.json").read_text())
    assert manifest["grid"] == {"x": [1.0, 2.0, 3.0]} and manifest["seeds"] == [0, 1]
    assert manifest["function"] == "_sweep_funcs:slow_square" and manifest["fixed"] == fixed
    pieces = sorted(p.name for p in (store / "pieces").iterdir())
    assert pieces == ["0_0.nc", "0_1.nc", "1_0.nc", "1_1.nc", "2_0.nc", "2_1.nc"]
    with xr.open_dataset(store / "pieces" / "2_1.nc") as piece:
        assert list(piece.attrs["sweep_task"]) == [2, 1] and json.loads(piece.attrs["sweep_point"]) == {"x": 3.0,
                                                                                                          "seed": 1}
        assert piece.attrs["pid"] == os.getpid() and len(piece.attrs["sha256"]) == 64
        assert float(piece.value) == 3.0**2 + 1
    # damage one piece: the resumed sweep verifies every piece and runs that task alone again
    (store / "pieces" / "1_0.nc").write_bytes((store / "pieces" / "1_0.nc").read_bytes()[:100])
    again = mf.sweep(slow_square, {"x": [1.0, 2.0, 3.0]}, seeds=2, fixed=fixed, store=store, resume=True,
                     scheduler="serial", progress=False)
    assert again.attrs["tasks_run"] == 1 and again.attrs["tasks_skipped"] == 5
    xr.testing.assert_identical(again.drop_attrs(), first.drop_attrs())
    np.testing.assert_array_equal(first.value, np.array([1.0, 2.0, 3.0])[:, None] ** 2 + [0, 1])


def test_a_store_is_never_overwritten_nor_resumed_by_another_sweep(tmp_path):
    store = tmp_path / "store"
    mf.sweep(slow_square, {"x": [1.0, 2.0]}, seeds=2, fixed={"delay": 0.0}, store=store, scheduler="serial",
             progress=False)
    run = dict(store=store, scheduler="serial", progress=False)
    with pytest.raises(ValueError, match="already holds a sweep; pass resume=True"):
        mf.sweep(slow_square, {"x": [1.0, 2.0]}, seeds=2, fixed={"delay": 0.0}, **run)
    with pytest.raises(ValueError, match=r"was made with grid\['x'\] = \[1.0, 2.0\], this sweep has \[1.0, 2.5\]; "
                                         "use a new store or resume=False"):
        mf.sweep(slow_square, {"x": [1.0, 2.5]}, seeds=2, fixed={"delay": 0.0}, resume=True, **run)
    with pytest.raises(ValueError, match=r"was made with fixed\['delay'\] = 0.0, this sweep has 0.001"):
        mf.sweep(slow_square, {"x": [1.0, 2.0]}, seeds=2, fixed={"delay": 0.001}, resume=True, **run)
    with pytest.raises(ValueError, match=r"was made with seeds = \[0, 1\], this sweep has \[0, 1, 2\]"):
        mf.sweep(slow_square, {"x": [1.0, 2.0]}, seeds=3, fixed={"delay": 0.0}, resume=True, **run)
    with pytest.raises(ValueError, match=r"was made with batch\['seed'\] = <absent>, this sweep has 2"):
        mf.sweep(slow_square, {"x": [1.0, 2.0]}, seeds=2, batch={"seed": 2}, fixed={"delay": 0.0}, resume=True, **run)
    done = mf.sweep(slow_square, {"x": [1.0, 2.0]}, seeds=2, fixed={"delay": 0.0}, resume=True, **run)
    assert done.attrs["tasks_run"] == 0 and done.attrs["tasks_skipped"] == 4


def test_a_second_sweep_on_a_store_in_use_is_refused_naming_the_pid(tmp_path):
    store = tmp_path / "store"
    holder = Store(store)
    with holder.open({"function": "f", "grid": {}, "seeds": None, "batch": {}, "fixed": {}}, resume=False):
        with pytest.raises(ValueError, match=f"is in use by process {os.getpid()} on "):
            mf.sweep(slow_square, {"x": [1.0]}, seeds=1, fixed={"delay": 0.0}, store=store, resume=True,
                     scheduler="serial", progress=False)


def test_store_paths_that_cannot_be_written_are_refused_before_any_work(tmp_path):
    afile = tmp_path / "file"
    afile.write_text("x")
    run = dict(seeds=1, fixed={"delay": 60.0}, scheduler="serial", progress=False)  # a run would take a minute
    with pytest.raises(ValueError, match=f"store '{afile}' exists and is not a directory"):
        mf.sweep(slow_square, {"x": [1.0]}, store=afile, **run)
    with pytest.raises(ValueError, match="store '/dev/null' exists and is not a directory"):
        mf.sweep(slow_square, {"x": [1.0]}, store="/dev/null", **run)
    missing = tmp_path / "no" / "store"
    with pytest.raises(ValueError, match=f"store '{missing}' is in a directory that does not exist"):
        mf.sweep(slow_square, {"x": [1.0]}, store=missing, **run)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("x")
    with pytest.raises(ValueError, match=r"holds files that are not part of a sweep store \(notes.txt\)"):
        mf.sweep(slow_square, {"x": [1.0]}, store=tmp_path / "other", **run)


def test_a_read_only_parent_is_refused(tmp_path, monkeypatch):
    import meanfield.io._files

    # tests run as root, who may write anywhere: the permission check is made to answer "no"
    monkeypatch.setattr(meanfield.io._files.os, "access", lambda path, mode: False)
    with pytest.raises(ValueError, match=f"store '{tmp_path / 's'}' cannot be created: directory '{tmp_path}' is not "
                                         "writable"):
        mf.sweep(slow_square, {"x": [1.0]}, seeds=1, fixed={"delay": 60.0}, store=tmp_path / "s", scheduler="serial")
    with pytest.raises(ValueError, match=f"store '{tmp_path}' is not writable"):
        mf.sweep(slow_square, {"x": [1.0]}, seeds=1, fixed={"delay": 60.0}, store=tmp_path, scheduler="serial")


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"grid": {"beta": [1.0]}}, ValueError,
         r"grid names 'beta', which is not a parameter of _sweep_funcs:slow_square; its parameters are "
         r"\['x', 'seed', 'delay'\]"),
        ({"grid": {"x": []}}, ValueError, r"grid\['x'\] is empty"),
        ({"grid": {"x": [1.0, np.nan]}}, ValueError, r"grid\['x'\] must hold finite values, got nan"),
        ({"grid": {"x": 2.0}}, ValueError, r"grid\['x'\] must be a 1-D sequence of values, got 2.0"),
        ({"grid": {"x": [[1.0]]}}, ValueError, r"grid\['x'\] must be a 1-D sequence"),
        ({"grid": {"x": [1.0, None]}}, TypeError, r"grid\['x'\] must hold numbers or strings"),
        ({"grid": [("x", [1.0])]}, TypeError, "grid must be a dict"),
        ({"seeds": -1}, ValueError, "seeds must be a positive count or a sequence of non-negative integers, got -1"),
        ({"seeds": [0, -2]}, ValueError, r"seeds must be non-negative integers, got -2 in \[0, -2\]"),
        ({"seeds": [0, 1.5]}, ValueError, "seeds must be non-negative integers, got 1.5"),
        ({"seeds": [1, 1]}, ValueError, r"seeds must be distinct, got \[1, 1\]"),
        ({"seeds": []}, ValueError, "seeds is empty"),
        ({"seeds": 2.0}, TypeError, "seeds must be an int count"),
        ({"seeds": None}, ValueError, r"_sweep_funcs:slow_square needs 'seed', which is neither swept"),
        ({"grid": {"x": [1.0], "seed": [0]}}, ValueError, "grid has a dimension named 'seed' and seeds are given"),
        ({"batch": {"y": 2}}, ValueError, r"batch names 'y', which is not a swept dimension; swept: \['x', 'seed'\]"),
        ({"batch": {"seed": 0}}, ValueError, r"batch\['seed'\] must be a positive integer block length, got 0"),
        ({"fixed": {"x": 1.0, "delay": 0.0}}, ValueError, "fixed and the swept dimensions both name 'x'"),
        ({"fixed": {"delay": 0.0, "colour": "red"}}, ValueError, "fixed names 'colour', which is not a parameter"),
        ({"resume": True}, ValueError, "resume=True needs a store"),
        ({"scheduler": "localhost:8786"}, ValueError, "scheduler must be None, 'local', 'serial', an address like"),
        ({"scheduler": 3}, TypeError, "scheduler must be None, 'local', 'serial', an address or a distributed.Client"),
        ({"scheduler": "serial", "n_workers": 2}, ValueError, "n_workers sizes the local cluster only"),
        ({"n_workers": 0}, ValueError, "n_workers must be a positive integer, got 0"),
    ],
)
def test_bad_input_is_refused_naming_the_argument(kwargs, error, match):
    args = {"grid": {"x": [1.0, 2.0]}, "seeds": 2, "fixed": {"delay": 60.0}, "scheduler": "serial", **kwargs}
    with pytest.raises(error, match=match):
        mf.sweep(slow_square, args.pop("grid"), progress=False, **args)


def test_nothing_to_sweep_is_refused():
    with pytest.raises(ValueError, match="grid is empty and no seeds are given"):
        mf.sweep(slow_square, {}, scheduler="serial")


def test_command_line_options_map_to_sweep_arguments(tmp_path):
    import argparse

    from meanfield.cli._sweep_options import add_sweep_arguments, sweep_options

    parser = argparse.ArgumentParser()
    add_sweep_arguments(parser)
    assert sweep_options(parser.parse_args([])) == {"scheduler": "local", "n_workers": None, "store": None,
                                                     "resume": False}
    args = parser.parse_args(["--scheduler", "serial", "--store", str(tmp_path / "s"), "--resume"])
    options = sweep_options(args)
    assert options == {"scheduler": "serial", "n_workers": None, "store": tmp_path / "s", "resume": True}
    mf.sweep(slow_square, {"x": [2.0]}, seeds=1, fixed={"delay": 0.0}, progress=False, **{**options, "resume": False})
    again = mf.sweep(slow_square, {"x": [2.0]}, seeds=1, fixed={"delay": 0.0}, progress=False, **options)
    assert again.attrs["tasks_skipped"] == 1 and again.value.item() == 4.0


def test_a_refused_foreign_directory_is_left_as_it_was(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ValueError, match="holds files that are not part of a sweep store"):
        mf.sweep(slow_square, {"x": [1.0]}, seeds=1, fixed={"delay": 0.0}, store=tmp_path, scheduler="serial")
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_repeated_grid_values_and_unwritable_stores_are_refused_before_any_task(tmp_path):
    with pytest.raises(ValueError, match=r"grid\['x'\] must hold distinct values .* got 1.0 2 times"):
        mf.sweep(slow_square, {"x": [1.0, 2.0, 1.0]}, seeds=1, fixed={"delay": 0.0}, scheduler="serial",
                 progress=False)
    with pytest.raises(ValueError, match="store '/proc/meanfield-store' cannot be written: no file can be created"):
        mf.sweep(slow_square, {"x": [1.0]}, seeds=1, fixed={"delay": 0.0}, store="/proc/meanfield-store",
                 scheduler="serial", progress=False)

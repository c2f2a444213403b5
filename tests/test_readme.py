"""The README's quickstart runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parent.parent / "README.md"


def test_quickstart_runs(tmp_path, monkeypatch):
    code = re.search(r"## Quickstart\n\n```python\n(.*?)```", README.read_text(), re.S).group(1)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert (tmp_path / "sa.nc").exists()
    assert namespace["pde"].attrs["success"] == 1


def test_open_problems_block_runs():
    code = re.search(r"## Open problems as computations\n.*?```python\n(.*?)```", README.read_text(), re.S).group(1)
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert namespace["ds"].attrs["success"] == 1
    assert namespace["ladder"].attrs["monotone"] == 1
    assert set(namespace["points"]["classification"].values) == {"synchronised", "strict saddle"}


def test_interaction_block_runs():
    code = re.search(r"## Your own kernel and potential\n.*?```python\n(.*?)```", README.read_text(), re.S).group(1)
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert bool(np.all(np.diff(namespace["cap"].energy) < 0))
    assert abs(float(namespace["cap"].energy[-1]) + 0.1516187) < 1e-6
    assert float(namespace["gap"].wasserstein.max()) < 3e-4


def test_networks_block_runs():
    code = re.search(r"## Oscillators and tokens on networks\n.*?```python\n(.*?)```", README.read_text(), re.S).group(1)
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    run, clusters = namespace["run"], namespace["clusters"]
    assert run.attrs["success"] == 1 and run.attrs["graph_normalization"] == "degree"
    assert abs(float(run.order_parameter[-40:].mean()) - 0.957) < 5e-3
    assert int(clusters.largest_cluster) == 9998 and int(clusters.n_drifting) == 2

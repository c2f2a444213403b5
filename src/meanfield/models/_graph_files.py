r"""Adjacency matrices read from files and from one-line descriptions.

Files:

* ``.npz``: a scipy.sparse matrix saved by :func:`scipy.sparse.save_npz`;
* any other suffix (``.txt``, ``.csv``, ``.tsv``, ``.edges``, …): an edge list, one edge per line, ``i j`` or
  ``i j weight`` (0-based node indices, separated by spaces, tabs or commas; ``#`` starts a comment; blank
  lines are skipped). An edge i j couples both ends unless ``directed`` (then node i feels node j:
  A_ij = weight). Repeated edges add their weights. The number of nodes is ``n`` if given (nodes without
  edges included), else the largest index + 1.

Descriptions (``meanfield kuramoto --graph``), for n nodes and a seed:
``complete``, ``ring:k=2``, ``lattice:shape=40x50`` (n must equal the product), ``erdos-renyi:p=0.1``,
``small-world:k=3,p=0.1``, ``scale-free:m=3``; :data:`GRAPH_KINDS` lists them with their parameters.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse

__all__ = ["GRAPH_KINDS", "parse_graph_spec", "read_adjacency_file"]

#: the graphs a description names, with their parameters (and defaults)
GRAPH_KINDS: dict[str, dict[str, Any]] = {
    "complete": {},
    "ring": {"k": 1},
    "lattice": {"shape": None},
    "erdos-renyi": {"p": None},
    "small-world": {"k": None, "p": None},
    "scale-free": {"m": None},
}


def read_adjacency_file(path: str | os.PathLike, n: int | None = None, directed: bool = False
                        ) -> scipy.sparse.csr_array:
    """The adjacency stored in ``path`` (module docstring).

    Raises
    ------
    ValueError
        A missing file, a line that is not ``i j [weight]`` (its number named), negative or non-integer
        indices, an index beyond ``n``, a matrix in an ``.npz`` that is not square.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"graph file {str(path)!r} does not exist")
    if path.suffix == ".npz":
        try:
            matrix = scipy.sparse.load_npz(path)
        except (ValueError, OSError, KeyError) as exc:
            raise ValueError(f"graph file {str(path)!r} is not a scipy.sparse .npz file ({exc})") from None
        if n is not None and matrix.shape != (n, n):
            raise ValueError(f"graph file {str(path)!r} holds a {matrix.shape} matrix, expected ({n}, {n})")
        return scipy.sparse.csr_array(matrix, dtype=float)
    rows, cols, weights = [], [], []
    with path.open() as handle:
        for number, line in enumerate(handle, start=1):
            text = line.split("#", 1)[0].replace(",", " ").split()
            if not text:
                continue
            if len(text) not in (2, 3):
                raise ValueError(f"graph file {str(path)!r}, line {number}: expected 'i j' or 'i j weight', got "
                                 f"{line.strip()!r}")
            try:
                i, j = int(text[0]), int(text[1])
                weight = float(text[2]) if len(text) == 3 else 1.0
            except ValueError:
                raise ValueError(f"graph file {str(path)!r}, line {number}: node indices must be integers and the "
                                 f"weight a number, got {line.strip()!r}") from None
            if i < 0 or j < 0:
                raise ValueError(f"graph file {str(path)!r}, line {number}: node indices start at 0, got {i} {j}")
            rows.append(i)
            cols.append(j)
            weights.append(weight)
    size = (max(max(rows), max(cols)) + 1 if rows else 0) if n is None else n
    if rows and max(max(rows), max(cols)) >= size:
        raise ValueError(f"graph file {str(path)!r} names node {max(max(rows), max(cols))}, beyond n = {size} nodes")
    rows_a, cols_a, data = np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64), np.array(weights)
    if not directed:
        off = rows_a != cols_a
        rows_a, cols_a, data = (np.concatenate([rows_a, cols_a[off]]), np.concatenate([cols_a, rows_a[off]]),
                                np.concatenate([data, data[off]]))
    return scipy.sparse.csr_array((data, (rows_a, cols_a)), shape=(size, size))


def parse_graph_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """(kind, parameters) of a description ``kind[:name=value,…]`` (module docstring); numbers are read as
    numbers, ``shape`` as a tuple of sizes ``AxB…``.

    Raises
    ------
    ValueError
        An unknown kind (the kinds are listed), an unknown or missing parameter, a value that is not a number.
    """
    kind, _, rest = spec.partition(":")
    kind = kind.strip()
    if kind not in GRAPH_KINDS:
        raise ValueError(f"graph must be a file or one of {sorted(GRAPH_KINDS)} with its parameters "
                         f"(e.g. erdos-renyi:p=0.1), got {spec!r}")
    allowed = GRAPH_KINDS[kind]
    params: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        name, equals, value = item.partition("=")
        if not equals or name not in allowed:
            raise ValueError(f"graph {kind!r} takes {sorted(allowed) or 'no parameters'} as name=value, got {item!r}")
        try:
            params[name] = (tuple(int(v) for v in value.split("x")) if name == "shape"
                            else int(value) if name in ("k", "m") else float(value))
        except ValueError:
            raise ValueError(f"graph {kind!r}: {name} must be a number{' (sizes AxB)' if name == 'shape' else ''}, "
                             f"got {value!r}") from None
    missing = sorted(name for name, default in allowed.items() if default is None and name not in params)
    if missing:
        raise ValueError(f"graph {kind!r} needs {missing}, e.g. {kind}:" + ",".join(f"{m}=…" for m in missing))
    return kind, {**{k: v for k, v in allowed.items() if v is not None}, **params}

r"""Ensembles of self-attention systems with Q = K = V = I, integrated together, in the cheapest exact representation.

Every system of a batch has n tokens on S^{d-1} (SA or USA, paper 2, arXiv:2312.10794); all
systems of one β step together under :func:`solvers.evolve_batch` (one vectorised
Dormand–Prince 5(4), each system with its own step size and accept/reject), the attention
products as batched matrix products on BLAS (:mod:`meanfield.models._batched_velocity`).
The state of a system is one of three representations of the same dynamics:

* ``"angles"`` (d = 2): θ_i, x_i = (cos θ_i, sin θ_i), error scale 1;
* ``"points"`` (3 ≤ d < n/2): the unit vectors, stepped in the exponential chart of S^{d-1}
  (|x_i| = 1 to round-off), cost ~4n²d per evaluation;
* ``"gram"`` (d ≥ n/2): the n(n-1)/2 chords c_ik = √(1 - <x_i, x_k>) (i < k), a closed ODE whose
  cost ~2n³ does not depend on d; its start is the Gram matrix of the tokens, i.e. a sample of
  the normalised Wishart law for iid uniform tokens.

:func:`representation_for` chooses by cost; :func:`token_representation`
gives one by name. Inner products, and so pair fractions and single-linkage clusters on
1 - G, are the same functions of every representation.

Clustered systems end early (``stop_when_clustered``). If every pair of a system has
<x_i, x_k> ≥ 1 - δ with 1 - δ ≥ 0, it stays so for all later times: at a pair (i, k) where
m = min G is attained, Ġ_ik = Σ_j A_ij (G_jk - G_ij m) + Σ_j A_kj (G_ij - G_kj m) ≥ 0, since
A ≥ 0, G_jk ≥ m, G_ij ≤ 1 and m ≥ 0 (true for SA and USA alike). Its pair fraction and
cluster count are then 1 at every later output time; the system is stopped at the first
accepted step that reaches that state, and the statistics after it are filled in as 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from solvers import evolve_batch
from solvers._batched_dormand_prince import BATCH_STATUS, FINISHED, STOPPED, BatchEvolution

from ..models._batched_velocity import (
    angle_velocity,
    gram_chords,
    gram_velocity,
    pack_gram,
    packed_size,
    point_velocity,
)
from ._compiled_charts import CompiledSphereChart

__all__ = ["TokenRepresentation", "representation_for", "token_representation", "token_statistics",
           "REPRESENTATIONS", "CHUNK_VALUES"]

#: state values per call of :func:`solvers.evolve_batch`: chunks of systems small enough for the seven
#: stages to stay in cache, large enough for the loop's fixed cost per step to be shared
CHUNK_VALUES = 2**13
#: fewest systems per call: the loop's fixed cost per step (≈ 0.1 ms) outweighs the cache for larger states
#: (Gram, n = 32: 6 % less time with 32 systems per call than with 16, measured on Figure 3's workload at d = 128)
CHUNK_SYSTEMS = 32
#: slack of the quick test of :meth:`TokenRepresentation.clustered`: far above the round-off by which its inner
#: products and circular distances differ from those of the statistics (< 1e-13), far below any threshold δ
SCREEN_MARGIN = 1e-9
_TWO_PI = 2 * np.pi
REPRESENTATIONS = ("angles", "points", "gram")


@numba.njit(cache=True)
def _find(parent, i):
    root = i
    while parent[root] != root:
        root = parent[root]
    while parent[i] != root:
        parent[i], i = root, parent[i]
    return root


@numba.njit(cache=True)
def _union(parent, i, k):
    """Join the components of i and k; 1 if they were apart."""
    ri, rk = _find(parent, i), _find(parent, k)
    if ri == rk:
        return 0
    parent[max(ri, rk)] = min(ri, rk)
    return 1


@numba.njit(cache=True)
def _chord_statistics(packed, n, limit, out):
    """(pair fraction, components) of {c_ik ≤ limit} per system of packed chords (m, n(n-1)/2) into out (m, 2)."""
    m, size = packed.shape
    parent = np.empty(n, dtype=np.int64)
    for s in range(m):
        for i in range(n):
            parent[i] = i
        components = n
        linked = 0
        p = 0
        for i in range(n):
            for k in range(i + 1, n):
                if packed[s, p] <= limit:
                    linked += 1
                    components -= _union(parent, i, k)
                p += 1
        out[s, 0] = linked / size
        out[s, 1] = components


@numba.njit(cache=True)
def _point_statistics(x, threshold, out):
    """(pair fraction, components) of {<x_i, x_k> ≥ threshold} per system of points (m, n, d) into out (m, 2)."""
    m, n, d = x.shape
    parent = np.empty(n, dtype=np.int64)
    xt = np.empty((d, n))
    gram = np.empty((n, n))
    for s in range(m):
        xs = np.ascontiguousarray(x[s])
        for i in range(n):
            for k in range(d):
                xt[k, i] = xs[i, k]
        np.dot(xs, xt, gram)
        for i in range(n):
            parent[i] = i
        components = n
        linked = 0
        for i in range(n):
            for k in range(i + 1, n):
                if gram[i, k] >= threshold:
                    linked += 1
                    components -= _union(parent, i, k)
        out[s, 0] = 2.0 * linked / (n * (n - 1))
        out[s, 1] = components


@numba.njit(cache=True)
def _angle_statistics(theta, arc, out):
    """(pair fraction, components) of {circular distance |θ_i - θ_k| ≤ arc} per system of angles (m, n, 1).

    Sorted angles on [0, 2π): a pair is linked iff its circular distance is ≤ arc (arc < π); linked pairs are
    counted with two pointers over the doubled circle, and the components are the circular gaps > arc (one
    component when there is none)."""
    m, n = theta.shape[0], theta.shape[1]
    doubled = np.empty(2 * n)
    for s in range(m):
        sorted_angles = np.sort(np.remainder(theta[s, :, 0], _TWO_PI))
        for i in range(n):
            doubled[i] = sorted_angles[i]
            doubled[i + n] = sorted_angles[i] + _TWO_PI
        linked = 0
        j = 0
        for i in range(n):
            if j < i + 1:
                j = i + 1
            while j < i + n and doubled[j] - doubled[i] <= arc:
                j += 1
            linked += j - i - 1
        gaps = 0
        for i in range(n):
            if doubled[i + 1] - doubled[i] > arc:
                gaps += 1
        out[s, 0] = 2.0 * linked / (n * (n - 1))
        out[s, 1] = max(gaps, 1)


@dataclass(frozen=True)
class TokenRepresentation:
    """How the n tokens of a system on S^{d-1} are held and moved (module docstring).

    Attributes
    ----------
    name : {"angles", "points", "gram"}
    d, n : int
    """

    name: str
    d: int
    n: int

    @property
    def state_shape(self) -> tuple[int, ...]:
        return {"angles": (self.n, 1), "points": (self.n, self.d), "gram": (packed_size(self.n),)}[self.name]

    def initial(self, tokens: np.ndarray) -> np.ndarray:
        """The states of unit vectors ``tokens`` (systems, n, d)."""
        if self.name == "angles":
            return np.arctan2(tokens[..., 1], tokens[..., 0])[..., None]
        if self.name == "points":
            return np.ascontiguousarray(tokens, dtype=float)
        return pack_gram(gram_chords(tokens))

    def velocity(self, state: np.ndarray, beta: float, normalized: bool, out: np.ndarray | None = None) -> np.ndarray:
        """The time derivative of states (systems, *state_shape) (into ``out`` when given)."""
        if self.name == "angles":
            return angle_velocity(state, beta, normalized, out=out)
        if self.name == "points":
            return point_velocity(state, beta, normalized, out=out)
        return gram_velocity(state, self.n, beta, normalized, out=out)

    def chords(self, state: np.ndarray) -> np.ndarray:
        """Packed c_ik = √(1 - <x_i, x_k>) (i < k) of states (systems, *state_shape)."""
        if self.name == "gram":
            return state
        if self.name == "angles":
            theta = state[..., 0]
            points = np.stack([np.cos(theta), np.sin(theta)], axis=-1)
        else:
            points = state
        return pack_gram(gram_chords(points))

    def statistics(self, state: np.ndarray, delta: float) -> np.ndarray:
        """(pair fraction, clusters) per system, shape (systems, 2): the fraction of ordered pairs i ≠ k with
        <x_i, x_k> ≥ 1 - δ, and the components of the graph of those pairs (single linkage at chord √(2δ))."""
        out = np.empty((state.shape[0], 2))
        if self.name == "gram":
            _chord_statistics(state, self.n, np.sqrt(delta), out)
        elif self.name == "points":
            _point_statistics(state, 1.0 - delta, out)
        else:
            _angle_statistics(state, float(np.arccos(1.0 - delta)), out)
        return out

    def clustered(self, state: np.ndarray, delta: float) -> np.ndarray:
        """Every pair linked (<x_i, x_k> ≥ 1 - δ), per system.

        The pairs (1, k) first, vectorised over systems: a system with one of them unlinked by more than
        :data:`SCREEN_MARGIN` is not clustered; the others get the pair fraction of :meth:`statistics`.
        """
        screened = self._linked_to_first(state, delta)
        out = np.zeros(state.shape[0], dtype=bool)
        if np.any(screened):
            out[screened] = self.statistics(state[screened], delta)[:, 0] == 1.0
        return out

    def _linked_to_first(self, state: np.ndarray, delta: float) -> np.ndarray:
        """Per system: no pair (1, k) with <x_1, x_k> below 1 - δ by more than :data:`SCREEN_MARGIN`."""
        if self.name == "gram":
            return np.all(state[:, :self.n - 1] <= np.sqrt(delta), axis=1)
        if self.name == "points":
            inner = np.einsum("sc,skc->sk", state[:, 0], state[:, 1:])
            return np.all(inner >= 1.0 - delta - SCREEN_MARGIN, axis=1)
        theta = state[:, :, 0]
        gap = np.abs(np.remainder(theta[:, 1:] - theta[:, :1] + np.pi, _TWO_PI) - np.pi)
        return np.all(gap <= np.arccos(1.0 - delta) + SCREEN_MARGIN, axis=1)

    def evolve(self, state0: np.ndarray, t: np.ndarray, beta: float, normalized: bool, *, rtol: float, atol: float,
               record: Any = None, stop: Any = None, max_steps: int = 100_000) -> BatchEvolution:
        """:func:`solvers.evolve_batch` of the states ``state0`` (systems, *state_shape) through ``t``."""
        chart = CompiledSphereChart() if self.name == "points" else None
        return evolve_batch(lambda y, systems, out: self.velocity(y, beta, normalized, out), state0, t, rtol=rtol,
                            atol=atol, chart=chart, unit_scale=self.name == "angles", record=record, stop=stop,
                            max_steps=max_steps)


def token_representation(name: str, d: int, n: int) -> TokenRepresentation:
    """The representation ``name`` of n tokens on S^{d-1}; "angles" needs d = 2."""
    if name not in REPRESENTATIONS:
        raise ValueError(f"representation must be one of {REPRESENTATIONS}, got {name!r}")
    if name == "angles" and d != 2:
        raise ValueError(f"the 'angles' representation is for d = 2, got d = {d}")
    if name == "points" and d < 2:
        raise ValueError(f"d must be >= 2, got {d}")
    return TokenRepresentation(name, int(d), int(n))


def representation_for(d: int, n: int) -> TokenRepresentation:
    """The cheapest representation of n tokens on S^{d-1}: angles for d = 2, points for 3 ≤ d < n/2, Gram for
    2d ≥ n (cost per evaluation ~4n²d against ~2n³; measured in ``benchmarks/bench_figure3_panels.py``)."""
    if d == 2:
        return token_representation("angles", d, n)
    return token_representation("gram" if 2 * d >= n else "points", d, n)


def token_statistics(representation: TokenRepresentation, tokens: np.ndarray, t: np.ndarray, beta: float,
                     normalized: bool, delta: float, *, rtol: float, atol: float,
                     stop_when_clustered: bool = True, states: np.ndarray | None = None) -> dict[str, Any]:
    """Pair fraction and cluster count of every system at the output times ``t``.

    Parameters
    ----------
    representation : TokenRepresentation
    tokens : ndarray, shape (systems, n, d)
        Initial unit vectors.
    t : ndarray
        Output times, t[0] the start.
    beta, normalized
        β and SA (True) or USA.
    delta : float
        Pairs are linked when <x_i, x_k> ≥ 1 - δ.
    rtol, atol : float
        Tolerances of the per-system Dormand–Prince 5(4).
    stop_when_clustered : bool
        End a system once every pair is linked (module docstring; only for δ ≤ 1).
    states : ndarray, optional
        ``representation.initial(tokens)``, when already computed (several β of the same tokens share it).

    Returns
    -------
    dict
        ``pair_fraction`` (systems, times), ``clusters`` (systems, times, int), ``nfev``,
        ``n_steps``, ``n_rejected`` (systems,), ``clustered_at`` (systems,: the time a system was
        stopped as clustered, NaN if never).

    Raises
    ------
    RuntimeError
        A system stopped for a reason other than clustering (step size, max steps, non-finite).
    """
    state0 = representation.initial(tokens) if states is None else states
    stop = (lambda y, systems: representation.clustered(y, delta)) if stop_when_clustered and delta <= 1 else None

    def record(y: np.ndarray, systems: np.ndarray) -> np.ndarray:
        return representation.statistics(y, delta)

    n_sys = state0.shape[0]
    values = np.empty((n_sys, t.size, 2))
    counts = np.empty((3, n_sys), dtype=np.int64)
    clustered_at = np.full(n_sys, np.nan)
    chunk = int(np.clip(CHUNK_VALUES // int(np.prod(representation.state_shape)), CHUNK_SYSTEMS, 1024))
    for start in range(0, n_sys, chunk):
        part = slice(start, start + chunk)
        run = representation.evolve(state0[part], t, beta, normalized, rtol=rtol, atol=atol, record=record,
                                    stop=stop)
        failed = np.nonzero((run.status != FINISHED) & (run.status != STOPPED))[0]
        if failed.size:
            first = failed[0]
            raise RuntimeError(f"{failed.size} of {run.status.size} systems stopped: "
                               f"{BATCH_STATUS[int(run.status[first])]} (system {start + first} at "
                               f"t = {run.t_stop[first]:.6g}, beta = {beta})")
        done = run.status == STOPPED
        filled = np.where(np.isnan(run.y), 1.0, run.y)
        values[part] = filled
        counts[:, part] = run.nfev, run.n_steps, run.n_rejected
        clustered_at[part] = np.where(done, run.t_stop, np.nan)
    return {"pair_fraction": values[..., 0], "clusters": values[..., 1].astype(np.int64), "nfev": counts[0],
            "n_steps": counts[1], "n_rejected": counts[2], "clustered_at": clustered_at}

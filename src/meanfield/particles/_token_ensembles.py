r"""Ensembles of self-attention systems with Q = K = V = I, integrated together, in the cheapest exact representation.

Every system of a batch has n tokens on S^{d-1} (SA or USA, paper 2, arXiv:2312.10794) and its own
adaptive Dormand–Prince 5(4) (its own step size and accept/reject): :func:`token_statistics` steps one
system at a time in one compiled loop with its statistics recorded inside
(:mod:`meanfield.particles._token_dormand_prince`), :meth:`TokenRepresentation.evolve` the systems of
a batch together under :func:`solvers.evolve_batch` (the same steps, bit for bit), the attention
products on BLAS (:mod:`meanfield.models._batched_velocity`). The state of a system is one of three
representations of the same dynamics:

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
    uniform_weights,
)
from ._compiled_charts import CompiledSphereChart
from ._token_dormand_prince import evolve_statistics
from ._token_statistics import ANGLES, GRAM, POINTS, clustered_systems, representation_statistics

__all__ = ["TokenRepresentation", "representation_for", "token_representation", "token_statistics",
           "REPRESENTATIONS"]

#: slack of the quick test of :meth:`TokenRepresentation.clustered`: far above the round-off by which its inner
#: products and circular distances differ from those of the statistics (< 1e-13), far below any threshold δ
SCREEN_MARGIN = 1e-9
REPRESENTATIONS = ("angles", "points", "gram")


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

    @property
    def kind(self) -> int:
        """The representation's code in the compiled kernels (:data:`._token_statistics.ANGLES` …)."""
        return {"angles": ANGLES, "points": POINTS, "gram": GRAM}[self.name]

    def thresholds(self, delta: float) -> tuple[float, float]:
        """(limit, screen) of the pairs linked at δ in this representation: the chord √δ, the inner product 1 - δ
        or the arc arccos(1 - δ); and the quick test of the pairs (1, k), the same with :data:`SCREEN_MARGIN` of
        slack for inner products and arcs (chords are compared exactly as the statistics compare them)."""
        if self.name == "gram":
            return float(np.sqrt(delta)), float(np.sqrt(delta))
        if self.name == "points":
            return 1.0 - delta, 1.0 - delta - SCREEN_MARGIN
        arc = float(np.arccos(1.0 - delta))
        return arc, arc + SCREEN_MARGIN

    def statistics(self, state: np.ndarray, delta: float) -> np.ndarray:
        """(pair fraction, clusters) per system, shape (systems, 2): the fraction of ordered pairs i ≠ k with
        <x_i, x_k> ≥ 1 - δ, and the components of the graph of those pairs (single linkage at chord √(2δ))."""
        out = np.empty((state.shape[0], 2))
        states = np.ascontiguousarray(state, dtype=float).reshape(state.shape[0], -1)
        representation_statistics(self.kind, states, self.n, self.d, self.thresholds(delta)[0], out)
        return out

    def clustered(self, state: np.ndarray, delta: float) -> np.ndarray:
        """Every pair linked (<x_i, x_k> ≥ 1 - δ), per system.

        The pairs (1, k) first: a system with one of them unlinked by more than :data:`SCREEN_MARGIN` is not
        clustered; the others get the pair fraction of :meth:`statistics` (:func:`._token_statistics.all_linked`).
        """
        states = np.ascontiguousarray(state, dtype=float).reshape(state.shape[0], -1)
        return clustered_systems(self.kind, states, self.n, self.d, *self.thresholds(delta))

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
    n_sys = state0.shape[0]
    limit, screen = representation.thresholds(delta)
    values, counts, status, t_stop = evolve_statistics(
        representation.kind, state0.reshape(n_sys, -1), representation.n, representation.d, t, beta, normalized,
        uniform_weights(representation.n)[0], limit=limit, screen=screen, rtol=rtol, atol=atol,
        stop_clustered=stop_when_clustered and delta <= 1)
    failed = np.nonzero((status != FINISHED) & (status != STOPPED))[0]
    if failed.size:
        first = failed[0]
        raise RuntimeError(f"{failed.size} of {n_sys} systems stopped: {BATCH_STATUS[int(status[first])]} "
                           f"(system {first} at t = {t_stop[first]:.6g}, beta = {beta})")
    return {"pair_fraction": values[..., 0], "clusters": values[..., 1].astype(np.int64), "nfev": counts[0],
            "n_steps": counts[1], "n_rejected": counts[2],
            "clustered_at": np.where(status == STOPPED, t_stop, np.nan)}

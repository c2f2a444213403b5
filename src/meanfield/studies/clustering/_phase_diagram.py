"""Paper 2's phase diagram (Figures 3 and 5): P(<x_1(t), x_2(t)> ≥ 1 - δ) over (β, t).

Each system is n iid uniform tokens on S^{d-1} moved by self-attention (SA, or
USA, or SA with weights (Q, K, V)). By exchangeability, for i ≠ j,

    P(<x_1(t), x_2(t)> ≥ 1 - δ) = E[ F(t) ],   F = #{(i, j): i ≠ j, <x_i, x_j> ≥ 1 - δ} / (n(n - 1)),

so the diagram averages the pair fraction F of every system (lower
variance than the first pair alone). The work is one :func:`~meanfield.studies.sweep`
over the dimensions d, β and the systems, batched in blocks of systems; one task
integrates one block at one (d, β) and returns per-system statistics over time,
never positions. With Q = K = V = I the block's systems step together in one
vectorised Dormand–Prince 5(4) (:mod:`meanfield.particles._token_ensembles`), in the
representation that costs least at that d: angles (d = 2), points (d < n/2) or the
Gram matrix (d ≥ n/2, a cost independent of d); a system whose pairs are all linked
is finished there (linked pairs stay linked). Ginibre weights drawn once and attention masks (causal:
token i attends to j ≤ i, or any boolean matrix) run through :func:`meanfield.simulate`, with
:class:`meanfield.Attention` restricted to the edges of the mask. The other random weights (other ensembles, or
weights drawn per system or per β, SA or USA; :mod:`._random_weights`) step the systems of a block together with
each system's own (QᵀK, V) in one vectorised Dormand–Prince 5(4) in the exponential chart of S^{d-1}.
"""

from __future__ import annotations

import logging
import time as _time
from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr

from ...models._self_attention import SelfAttention
from ..._validate import as_times, check_positive, check_positive_int, check_rtol
from ..._version import __version__
from ...models._attention import Attention
from ...models._attention_weights import BETA_MAX_UNNORMALIZED
from ...models._graph import Graph
from ...particles import number_of_clusters, pair_fraction, simulate
from ...particles._token_ensembles import (REPRESENTATIONS, TokenRepresentation, representation_for,
                                            token_representation, token_statistics)
from ._equiangular import check_delta, equiangular_curve
from ._random_weights import (DRAWS, ENSEMBLES, check_weights, gram_rank, random_weights, weight_stack,
                              weighted_token_statistics)
from ..sweeps._sweep import sweep

__all__ = ["phase_diagram", "phase_diagram_block", "phase_diagram_tokens", "phase_diagram_trajectories",
           "ginibre_matrices", "crossing_time", "attention_mask",
           "span_coordinates"]

logger = logging.getLogger(__name__)

#: SeedSequence entropy of the random objects of a diagram with base seed ``seed``:
#: system s draws its tokens from [seed, TOKENS, s], the weights (Q, K, V) come from [seed, MATRICES].
TOKENS, MATRICES = 0, 1
#: largest number of float64 values of positions one task holds (the default block of systems with Ginibre
#: weights, which keep positions)
BLOCK_VALUES = 2**23
#: default systems and β per task with Q = K = V = I (about 1–3 s of work at n = 32 on one core; the tokens of
#: a block are drawn once for its β)
BLOCK_SYSTEMS, BLOCK_BETAS = 512, 6
MATRIX_CHOICES = (None, *ENSEMBLES)
MASK_CHOICES = (None, "causal")
#: the default tolerances of the per-system Dormand–Prince 5(4) (see :func:`phase_diagram`)
RTOL, ATOL = 1e-4, 3e-5


def phase_diagram_tokens(seed: int, systems: Sequence[int] | np.ndarray, d: int, n: int) -> np.ndarray:
    """The initial tokens of the given systems of a diagram: shape (len(systems), n, d).

    System s draws n iid uniform points on S^{d-1} (normalised standard
    Gaussians) from ``np.random.default_rng(np.random.SeedSequence([seed, TOKENS, s]))``,
    so its tokens do not depend on β, on the block it runs in, or on the other systems.

    Parameters
    ----------
    seed : int
        Base seed of the diagram.
    systems : sequence of int
        Indices s of the systems.
    d : int
        Dimension of the ambient space (tokens on S^{d-1}).
    n : int
        Tokens per system.

    Returns
    -------
    numpy.ndarray
        Unit vectors, shape (len(systems), n, d).

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies import phase_diagram_tokens
    >>> x = phase_diagram_tokens(0, [0, 1, 2], 3, 5)
    >>> x.shape
    (3, 5, 3)
    >>> print(np.linalg.norm(x, axis=-1).round(12))
    [[1. 1. 1. 1. 1.]
     [1. 1. 1. 1. 1.]
     [1. 1. 1. 1. 1.]]

    A system's tokens do not depend on the other systems drawn with it:

    >>> bool(np.array_equal(phase_diagram_tokens(0, [2], 3, 5)[0], x[2]))
    True
    """
    return np.stack([_tokens(seed, int(s), d, n) for s in np.atleast_1d(systems)])


def _tokens(seed: int, system: int, d: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(np.random.SeedSequence([seed, TOKENS, system]))
    g = rng.standard_normal((n, d))
    return g / np.linalg.norm(g, axis=1, keepdims=True)


def span_coordinates(tokens: np.ndarray) -> np.ndarray:
    """Coordinates (systems, n, n) of tokens (systems, n, d), d > n, in an orthonormal basis of their span.

    With Q = K = V = I every velocity is a combination of the x_j, so the
    tokens never leave their span; the R factor of the QR decomposition of
    each system's d × n matrix [x_1 … x_n] gives coordinates with the same
    inner products, and the dynamics in dimension n instead of d.
    """
    return np.swapaxes(np.linalg.qr(np.swapaxes(tokens, 1, 2), mode="r"), 1, 2)


def ginibre_matrices(d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Q, K, V) from the real Ginibre ensemble: entries iid N(0, 1/d) (paper 2, Figure 5).

    Drawn in the order Q, K, V from ``default_rng(SeedSequence([seed, MATRICES]))``.

    Parameters
    ----------
    d : int
        Size of the matrices, d ≥ 2.
    seed : int
        Base seed of the diagram.

    Returns
    -------
    Q, K, V : numpy.ndarray
        Three (d, d) matrices with entries iid N(0, 1/d).

    Raises
    ------
    ValueError
        d < 2.

    Examples
    --------
    The entries have variance 1/d, so d times their sample variance is close to 1:

    >>> import numpy as np
    >>> from meanfield.studies import ginibre_matrices
    >>> Q, K, V = ginibre_matrices(100, seed=0)
    >>> Q.shape
    (100, 100)
    >>> print(f"{100 * np.var(np.stack([Q, K, V])):.4f}")
    0.9976

    The same seed gives the same matrices:

    >>> bool(np.array_equal(ginibre_matrices(100, seed=0)[2], V))
    True
    """
    d = check_positive_int("d", d, 2)
    rng = np.random.default_rng(np.random.SeedSequence([seed, MATRICES]))
    Q, K, V = rng.standard_normal((3, d, d)) / np.sqrt(d)
    return Q, K, V


def phase_diagram_block(beta: float | np.ndarray, seed: np.ndarray, *, d: int, n: int, times: Sequence[float],
                        delta: float, normalized: bool = True, matrices: str | None = None, base_seed: int = 0,
                        rtol: float = RTOL, atol: float = ATOL, representation: str = "auto",
                        mask: Any = None, draw: str = "once", beta_grid: Sequence[float] | None = None) -> xr.Dataset:
    """Per-system statistics of one block of systems at one d and one β or a block of β (the task of
    :func:`phase_diagram`).

    Parameters
    ----------
    beta : float or array of float
        β ≥ 0; an array adds the dimension ``beta`` (the tokens are drawn once for all of them).
    seed : array of int
        The systems of the block (their indices s; tokens from
        :func:`phase_diagram_tokens` with ``base_seed``).
    d, n : int
        Dimension of R^d and number of tokens.
    times : sequence of float
        Output times, times[0] = 0.
    delta : float
        Threshold: a pair is linked when <x_i, x_j> ≥ 1 - δ.
    normalized : bool
        SA (True) or USA (False) when ``matrices`` is None.
    matrices : None, an ensemble of :data:`ENSEMBLES` or a list [Q, K, V] of (d, d) lists (None: identity)
        "ginibre" drawn once, SA: the weights (Q, K, V) of :func:`ginibre_matrices` (d, ``base_seed``),
        through :class:`meanfield.Attention` and :func:`meanfield.simulate`. Otherwise each system's
        (QᵀK, V) of :func:`~meanfield.studies.clustering._random_weights.weight_stack` (``draw``), SA or USA,
        through :func:`~meanfield.studies.clustering._random_weights.weighted_token_statistics`.
    base_seed : int
        The diagram's seed.
    rtol, atol : float
        Tolerances of each system's adaptive Dormand–Prince 5(4).
    representation : {"auto", "angles", "points", "gram"}
        The state of a system with Q = K = V = I ("auto": the cheapest at this d,
        :func:`meanfield.particles._token_ensembles.representation_for`).
    mask : None, "causal" or boolean array_like (n, n)
        Attention restricted to the pairs (i, j) with mask[i, j] true (:func:`attention_mask`), through
        :class:`meanfield.Attention` with ``graph`` and :func:`meanfield.simulate`.
    draw : {"once", "per_system", "per_beta"}
        The draw rule of random weights (:mod:`._random_weights`).
    beta_grid : sequence of float, optional
        The diagram's β values: ``draw="per_beta"`` draws system s at β = beta_grid[k] from
        [base_seed, MATRICES, s, k].

    Returns
    -------
    xarray.Dataset
        Over (seed, time): ``pair_fraction`` F = #{(i, j): i ≠ j, <x_i, x_j> ≥ 1 - δ}/(n(n - 1)),
        ``clustered`` (int8, 1 when F = 1, every pair linked), ``clusters`` (number of clusters:
        single linkage at chord √(2δ), which links exactly the pairs with <x_i, x_j> ≥ 1 - δ), with random
        weights ``rank`` (numerical rank of the Gram matrix at tolerance δ, :func:`gram_rank`);
        over seed: ``nfev`` (velocity evaluations); attrs ``representation``.

    Notes
    -----
    With Q = K = V = I a system whose pairs are all linked stops there and its later
    statistics are 1 (exact: a set of tokens with every <x_i, x_j> ≥ 1 - δ ≥ 0 stays so,
    :mod:`meanfield.particles._token_ensembles`).
    """
    systems = np.atleast_1d(np.asarray(seed, dtype=np.int64))
    x0 = phase_diagram_tokens(base_seed, systems, d, n)
    t = np.asarray(times, dtype=float)
    betas = np.atleast_1d(np.asarray(beta, dtype=float))
    rep = states = None
    graph = attention_mask(mask, n)
    if matrices is None and graph is None:
        rep = representation_for(d, n) if representation == "auto" else token_representation(representation, d, n)
        states = rep.initial(x0)
    if _batched_weights(matrices, draw, normalized):
        blocks = _weighted_blocks(betas, x0, systems, d, t, delta, normalized, matrices, draw, beta_grid, base_seed,
                                  rtol, atol, graph)
    else:
        blocks = [_block_statistics(float(b), x0, systems, d, t, delta, normalized, matrices, base_seed, rtol, atol,
                                    rep, states, graph) for b in betas]
    if np.ndim(beta) == 0:
        return blocks[0]
    return xr.concat(blocks, dim=xr.DataArray(betas, dims="beta"), combine_attrs="override")


def _block_statistics(beta: float, x0: np.ndarray, systems: np.ndarray, d: int, t: np.ndarray, delta: float,
                      normalized: bool, matrices: str | None, base_seed: int, rtol: float, atol: float,
                      rep: TokenRepresentation | None, states: np.ndarray | None, graph: Graph | None) -> xr.Dataset:
    """Per-system statistics at one β: Ginibre weights or a mask (``graph``) through :func:`simulate`, or the
    representation ``rep`` of the tokens ``x0`` (initial ``states``, shared by the β of a block)."""
    if matrices == "ginibre" or graph is not None:
        Q, K, V = ginibre_matrices(d, base_seed) if matrices == "ginibre" else (None, None, None)
        run = simulate(Attention(beta, Q=Q, K=K, V=V, graph=graph), x0, t, rtol=rtol, atol=atol, domain="sphere")
        if not run.attrs["success"]:
            raise RuntimeError(f"simulate failed at beta = {beta} for systems {systems.tolist()}: "
                               f"{run.attrs['message']}")
        positions = run["positions"].values
        fraction = pair_fraction(positions, delta, domain="sphere")
        clusters = number_of_clusters(positions, np.sqrt(2.0 * delta), domain="sphere")
        nfev = np.full(systems.size, run.attrs["nfev"] // max(systems.size, 1))
        used = "points"
        if matrices == "ginibre":
            return _statistics_dataset(systems, t, fraction, clusters, nfev, used, gram_rank(positions, delta))
    else:
        stats = token_statistics(rep, x0, t, beta, bool(normalized), float(delta), rtol=rtol, atol=atol,
                                 states=states)
        fraction, clusters, nfev, used = stats["pair_fraction"], stats["clusters"], stats["nfev"], rep.name
    return _statistics_dataset(systems, t, fraction, clusters, nfev, used)


def _statistics_dataset(systems: np.ndarray, t: np.ndarray, fraction: np.ndarray, clusters: np.ndarray,
                        nfev: np.ndarray, used: str, rank: np.ndarray | None = None) -> xr.Dataset:
    dims = ("seed", "time")
    ds = xr.Dataset(
        {
            "pair_fraction": (dims, fraction),
            "clustered": (dims, (fraction == 1.0).astype(np.int8)),
            "clusters": (dims, clusters.astype(np.int32)),
            "nfev": ("seed", np.asarray(nfev, dtype=np.int64)),
        },
        coords={"seed": systems, "time": t},
        attrs={"representation": used},
    )
    if rank is not None:
        ds["rank"] = (dims, rank.astype(np.int32))
    return ds


def _batched_weights(matrices: Any, draw: str, normalized: bool) -> bool:
    """Random or given weights that run through the batched per-system path (all but SA with Ginibre weights drawn
    once, which keeps its :func:`simulate` path)."""
    return matrices is not None and not (matrices == "ginibre" and draw == "once" and normalized)


def _weighted_blocks(betas: np.ndarray, x0: np.ndarray, systems: np.ndarray, d: int, t: np.ndarray, delta: float,
                     normalized: bool, matrices: Any, draw: str, beta_grid: Sequence[float] | None, base_seed: int,
                     rtol: float, atol: float, graph: Graph | None) -> list[xr.Dataset]:
    """Per-system statistics at each β of a block with each system's weights (:mod:`._random_weights`)."""
    mask = None if graph is None else graph.adjacency.toarray() > 0
    if isinstance(matrices, str):
        stack = None if draw == "per_beta" else weight_stack(matrices, draw, d, base_seed, systems)
    else:
        Q, K, V = check_weights(matrices, d)
        stack = (np.broadcast_to(Q.T @ K, (systems.size, d, d)), np.broadcast_to(V, (systems.size, d, d)))
    grid = None if beta_grid is None else np.asarray(beta_grid, dtype=float)
    out = []
    for b in betas:
        if stack is None:
            found = np.flatnonzero(grid == b) if grid is not None else np.array([], dtype=int)
            if found.size == 0:
                raise ValueError(f"draw='per_beta' numbers the draws by the index of beta in beta_grid; beta = {b} is "
                                 f"not in beta_grid = {beta_grid!r}")
            scores, values = weight_stack(matrices, draw, d, base_seed, systems, int(found[0]))
        else:
            scores, values = stack
        stats = weighted_token_statistics(x0, scores, values, t, float(b), bool(normalized), float(delta), rtol=rtol,
                                          atol=atol, mask=mask)
        out.append(_statistics_dataset(systems, t, stats["pair_fraction"], stats["clusters"], stats["nfev"], "points",
                                       stats["rank"]))
    return out


def phase_diagram(
    d: int | Sequence[int],
    n: int,
    betas: Sequence[float] | np.ndarray,
    t: Sequence[float] | np.ndarray,
    systems: int,
    delta: float = 1e-3,
    *,
    normalized: bool = True,
    matrices: Any = None,
    draw: str = "once",
    seed: int = 0,
    rtol: float = RTOL,
    atol: float = ATOL,
    representation: str = "auto",
    mask: Any = None,
    scheduler: Any = None,
    n_workers: int | None = None,
    store: Any = None,
    resume: bool = False,
    batch: int | None = None,
    progress: bool = True,
    per_system: bool = False,
) -> xr.Dataset:
    r"""Paper 2's phase diagram: P(<x_1(t), x_2(t)> ≥ 1 - δ) over (β, t) for iid uniform tokens (Figures 3, 5).

    For every d, every β and every system s = 0 … systems - 1, n iid uniform tokens on
    S^{d-1} (:func:`phase_diagram_tokens`; the same tokens at every β) evolve
    by (SA) (``normalized``), (USA), or SA with Ginibre weights; at each
    output time the system's pair fraction F_s(t) = #{(i, j): i ≠ j,
    <x_i, x_j> ≥ 1 - δ}/(n(n - 1)) is recorded. The diagram is

        probability(β, t) = (1/S) Σ_s F_s(t),
        probability_stderr = sd_s(F_s(t)) / √S   (sample standard deviation, ddof = 1),

    an unbiased estimate of P(<x_1(t), x_2(t)> ≥ 1 - δ) by exchangeability.

    Parameters
    ----------
    d : int or sequence of int
        Dimension: tokens on S^{d-1}, d ≥ 2. Several (e.g. [2, 8, 32, 128], the four panels of
        Figure 3) run in one sweep and add the dimension ``d`` to the result.
    n : int
        Tokens per system, n ≥ 2.
    betas : array_like
        Distinct values β ≥ 0 (1-D, non-empty).
    t : array_like
        Output times, strictly increasing, t[0] = 0.
    systems : int
        Number S of independent systems per β, S ≥ 1.
    delta : float
        Threshold δ ∈ (0, 2); the paper uses 1e-3.
    normalized : bool
        SA (True) or USA (False); the diagram is over the time t of the equation, so USA takes β ≤ 709.78
        (beyond, its factor e^β overflows a double: its systems run in s = e^β t by
        ``mf.simulate(mf.SelfAttention(beta, normalized=False, time="rescaled"), ...)``).
    matrices : None, str or tuple (Q, K, V)
        None: Q = K = V = I. A random ensemble (paper 2, Problem 2, Figure 5;
        :mod:`meanfield.studies.clustering._random_weights` gives every formula and normalisation):
        "ginibre" (Q, K, V entries iid N(0, 1/d)), "goe" (QᵀK = (G + Gᵀ)/√(2d), V = I),
        "gaussian-product" (QᵀK = Q̃ᵀK̃, Ginibre factors, V = I), "plus-qk" / "minus-qk" (QᵀK GOE,
        V = ±QᵀK: the energy E_β increases / decreases, paper 2 §3.4.1), "psd-v" (Q = K = I,
        V = GGᵀ/d). Or given weights (Q, K, V), each a (d, d) array or None (identity), one d,
        ``draw="once"``. Weights drawn once are stored in the result (``Q``, ``K``, ``V``); drawn
        once they need one d at a time. SA with "ginibre" drawn once runs through
        :func:`meanfield.simulate` (as it always has); every other choice steps the systems of a block
        together, each with its own (QᵀK, V), SA or USA.
    draw : {"once", "per_system", "per_beta"}
        Draw rule of a random ensemble: one draw for all systems and β from [seed, MATRICES]; one per
        system s from [seed, MATRICES, s], the same at every β and in any block; one per system and β
        from [seed, MATRICES, s, k], k the index of β in ``betas``.
    seed : int
        Base seed of the tokens and matrices (see :data:`TOKENS`, :data:`MATRICES`).
    rtol, atol : float
        Tolerances of each system's Dormand–Prince 5(4). The defaults (1e-4, 3e-5) keep the
        probability of Figure 3's workload (n = 32, δ = 1e-3, β ∈ [0.1, 9], t ≤ 30) within
        0.0025 of rtol = 1e-8, atol = 1e-10 on the same 256 systems at every (β, t) and for
        d = 2, 8, 32, 128 (``benchmarks/bench_figure3_panels.py`` measures it; rtol = 1e-3 is
        0.05 off at d = 128, where all systems collapse within a short time), against a
        Monte-Carlo standard error up to 6.5e-3 at 2048 systems; for many more systems, tighten them.
    representation : {"auto", "angles", "points", "gram"}
        The state of a system with Q = K = V = I: "auto" picks the cheapest for each d (angles
        for d = 2, points for d < n/2, the Gram matrix from d ≥ n/2); the choice is recorded.
    mask : None, "causal" or boolean array_like (n, n)
        Attention restricted to the pairs (i, j) with mask[i, j] true: the softmax of token i runs
        over {j : mask[i, j]} (:func:`attention_mask`). "causal" is the mask of a decoder, token i
        attends to the tokens j ≤ i (mask[i, j] = j ≤ i). Masked systems (SA only, with identity or
        Ginibre weights) run through :func:`meanfield.simulate` in the points representation; the
        mask is recorded (attr ``mask``; a matrix also as the variable ``mask``).
    scheduler, n_workers, store, resume
        Passed to :func:`meanfield.studies.sweep` (dask LocalCluster by
        default; "serial" runs in this process; ``store`` keeps one file per
        finished task so that ``resume=True`` skips them). Before the sweep starts, this process
        compiles the tasks' kernels, or loads them from numba's on-disk cache, on a two-system task
        per representation, so that the workers of a local cluster load them from that cache
        instead of each compiling them.
    batch : int, optional
        Systems per task (with Q = K = V = I or weights of the batched path a task runs them at
        :data:`BLOCK_BETAS` values of β); by default :data:`BLOCK_SYSTEMS` (with Ginibre weights drawn
        once or a mask, one β per task and the largest block up to 256 whose positions stay below
        :data:`BLOCK_VALUES` float64 values).
    progress : bool
        Passed to :func:`meanfield.studies.sweep`: show a progress bar.
    per_system : bool
        Also return the per-system statistics over (beta, seed, time).

    Returns
    -------
    xarray.Dataset
        Over ([d,] beta, time): ``probability``, ``probability_stderr``,
        ``fraction_clustered`` (systems with every pair linked, i.e. one
        cluster) and ``fraction_clustered_stderr``, ``clusters_mean`` (mean
        number of clusters: components of the graph i ~ j ⟺ <x_i, x_j> ≥ 1 - δ,
        i.e. single linkage at chord distance √(2δ)); over ([d,] beta): ``nfev_mean``
        (velocity evaluations per system); over beta: ``critical_time`` t*(β) of Γ_{∞,δ}
        (:func:`equiangular_curve`, the equiangular curve for Q = K = V = I; it does not depend
        on d); ``representation`` (attr, or a variable over d); with random weights ``rank_mean`` and
        ``rank_mean_stderr`` over ([d,] beta, time): the mean over systems of the numerical rank of the
        Gram matrix G = XXᵀ (eigenvalues of G above δ times the largest; a linked cluster has rank 1,
        :func:`~meanfield.studies.clustering._random_weights.gram_rank`; attr ``rank_tolerance``); with
        weights drawn once ``Q``, ``K``, ``V``; attrs with every parameter, the seed rule, the draw rule and
        the sweep's record.

    Raises
    ------
    ValueError, TypeError
        d < 2 (or repeated), n < 2, systems < 1, δ outside (0, 2), β negative, non-finite,
        repeated or empty, t not increasing or not starting at 0, unknown
        ``matrices``, ``draw`` or ``representation``, ``draw`` other than "once" without a random ensemble,
        given (Q, K, V) that are not square, not of size d or not finite, several d with weights
        drawn once, batch < 1;
        a ``mask`` that is neither None, "causal" nor a boolean (n, n) matrix whose every row has a
        true entry, a mask with USA or with a ``representation`` other than "auto" or "points"; USA with
        β > 709.78.

    Notes
    -----
    With F_s(t) the pair fraction of system s and S systems,

    .. math::

        F_s(t) = \frac{\#\{(i, j) : i \ne j,\ \langle x_i(t), x_j(t)\rangle \ge 1 - \delta\}}{n(n - 1)},
        \qquad
        \text{probability}(\beta, t) = \frac{1}{S} \sum_{s=1}^{S} F_s(t),
        \qquad
        \text{probability\_stderr} = \frac{\operatorname{sd}_s F_s(t)}{\sqrt{S}}.

    The ``critical_time`` t*(β) is the curve Γ_{∞,δ} = {(t, β): γ_β(t) = 1 - δ} of paper 2, (6.12),
    which approximates the boundary Γ_{d,δ} of the diagram as d → ∞ (Theorem 6.9).

    Examples
    --------
    Sixteen systems of 8 tokens on the circle at β = 0.5 and 4:

    >>> import numpy as np
    >>> import meanfield as mf
    >>> ds = mf.phase_diagram(2, 8, [0.5, 4.0], np.linspace(0, 5, 6), 16, scheduler="serial",
    ...                       progress=False)
    >>> ds["probability"].dims
    ('beta', 'time')
    >>> print(np.round(ds.probability.values, 4))
    [[0.0089 0.0179 0.0379 0.0603 0.1875 0.3839]
     [0.0089 0.0201 0.0446 0.0915 0.2388 0.3795]]

    The tokens are the same at every β, so the t = 0 column agrees; the critical time is
    the equiangular curve t*(β):

    >>> print(np.round(ds.critical_time.values, 6), np.round(mf.equiangular_curve([0.5, 4.0], 8), 6))
    [4.581464 8.36545 ] [4.581464 8.36545 ]
    """
    dims = _check_dimensions(d)
    n = check_positive_int("n", n, 2)
    systems = check_positive_int("systems", systems, 1)
    seed = check_positive_int("seed", seed, 0)
    delta = check_delta(delta)
    beta_values = _check_betas(betas)
    if not normalized and beta_values.max() > BETA_MAX_UNNORMALIZED:
        raise ValueError(f"betas: the phase diagram of USA (normalized=False) runs in the time t, whose velocity "
                         f"carries the factor e^beta, which overflows float64 for beta > {BETA_MAX_UNNORMALIZED:.2f}; "
                         f"got beta = {beta_values.max():g}; use smaller betas or normalized=True (USA systems run "
                         f"in s = e^beta t by mf.simulate(mf.SelfAttention(beta, normalized=False, time='rescaled'), "
                         f"...))")
    times = as_times(t)
    if times[0] != 0:
        raise ValueError(f"t must start at 0 (the uniform initial tokens), got t[0] = {float(times[0])!r}")
    matrices, given = _check_matrices(matrices, draw, dims)
    graph = attention_mask(mask, n)
    if graph is not None and not normalized:
        raise ValueError("mask restricts the softmax of SA to the pairs of the mask; it needs normalized=True")
    if graph is not None and representation not in ("auto", "points"):
        raise ValueError(f"a masked system runs in the points representation, got representation={representation!r}")
    mask_json = None if graph is None else mask if isinstance(mask, str) else graph.adjacency.toarray().astype(bool).tolist()
    if representation != "auto":
        if representation not in REPRESENTATIONS:
            raise ValueError(f"representation must be 'auto' or one of {REPRESENTATIONS}, got {representation!r}")
        for value in dims:
            token_representation(representation, int(value), n)
    batched = _batched_weights(matrices, draw, normalized)
    if batch is None:
        if (matrices is not None or graph is not None) and not batched:
            batch = int(max(1, min(256, systems, BLOCK_VALUES // (times.size * n * int(dims[0])))))
        else:
            batch = min(BLOCK_SYSTEMS, systems)
    batch = check_positive_int("batch", batch, 1)
    rtol, atol = check_rtol("rtol", rtol), check_positive("atol", atol)

    fixed = {"n": n, "times": times.tolist(), "delta": delta, "normalized": bool(normalized),
             "matrices": matrices, "base_seed": seed, "rtol": float(rtol), "atol": float(atol),
             "representation": representation, "mask": mask_json}
    if batched:
        fixed.update(draw=draw, beta_grid=beta_values.tolist() if draw == "per_beta" else None)
    logger.info("phase diagram d=%s n=%d: %d betas x %d systems in blocks of %d", dims.tolist(), n,
                beta_values.size, systems, batch)
    start = _time.perf_counter()
    _compile_kernels(dims, n, delta, bool(normalized), matrices, seed, representation, mask_json,
                     draw if batched else "once", beta_values)
    blocks = {"seed": batch} if (matrices is not None or graph is not None) and not batched else \
        {"seed": batch, "beta": BLOCK_BETAS}
    raw = sweep(phase_diagram_block, {"d": dims, "beta": beta_values}, seeds=systems, batch=blocks,
                fixed=fixed, store=store, resume=resume, scheduler=scheduler, n_workers=n_workers,
                progress=progress)
    ds = _reduce(raw, systems, per_system)
    used = [_representation_of(int(value), n, representation, matrices, graph is not None) for value in dims]
    ds["critical_time"] = ("beta", equiangular_curve(beta_values, n, delta, normalized=normalized), {
        "long_name": "t*(beta): gamma_beta(t*) = 1 - delta (Theorem 6.8, Q = K = V = I)"})
    if matrices == "ginibre" and draw == "once":
        for name, m in zip("QKV", ginibre_matrices(int(dims[0]), seed)):
            ds[name] = (("matrix_row", "matrix_column"), m, {"long_name": f"{name}: entries iid N(0, 1/d)"})
    elif matrices is not None and draw == "once":
        weights = check_weights(matrices, int(dims[0])) if given else random_weights(matrices, int(dims[0]), seed)
        for name, m in zip("QKV", weights):
            ds[name] = (("matrix_row", "matrix_column"), m, {
                "long_name": f"{name} of the given weights" if given else f"{name}: {ENSEMBLES[matrices]}"})
    model = "SA" if normalized else "USA"
    if graph is not None:
        ds["mask"] = (("token_i", "token_j"), graph.adjacency.toarray().astype(np.int8), {
            "long_name": "attention mask: token i attends to token j where 1"})
    attrs = {
        **{f"sweep_{k}": v for k, v in raw.attrs.items() if k != "representation"},
        "title": "P(<x_1(t), x_2(t)> >= 1 - delta) for iid uniform tokens",
        "model": model + _weights_name(matrices, given, draw) + ("" if graph is None else f", {_mask_name(mask)} mask"),
        "mask": _mask_name(mask),
        "n": n, "delta": delta, "systems": systems, "seed": seed, "normalized": int(normalized),
        "matrices": "given" if given else matrices or "identity", "rtol": rtol, "atol": atol, "batch": batch,
        "seed_rule": f"system s: tokens normalised from default_rng(SeedSequence([seed, {TOKENS}, s]))"
                     f".standard_normal((n, d)), the same at every beta; "
                     + (f"Ginibre (Q, K, V): default_rng(SeedSequence([seed, {MATRICES}]))"
                        if matrices in (None, "ginibre") and draw == "once" else _draw_rule(draw)),
        "statistic": "probability = mean over systems of the fraction of ordered pairs i != j with "
                     "<x_i, x_j> >= 1 - delta; stderr = sample sd (ddof=1) / sqrt(systems)",
        "integrator": "Dormand-Prince 5(4) per system (rtol, atol), all systems of a (d, beta) block together; "
                      "a system with every pair linked is finished there (its statistics stay 1)"
                      if matrices is None and graph is None else
                      "Dormand-Prince 5(4) per system (rtol, atol) in the exponential chart of S^{d-1}, all systems of "
                      "a (d, beta) block together, each with its own (Q^T K, V)" if batched else
                      "meanfield.simulate (Dormand-Prince 5(4) in sphere charts)",
        "wall_time": _time.perf_counter() - start,
        "meanfield_version": __version__,
    }
    if matrices is not None:
        attrs.update(draw=draw, ensemble="given (Q, K, V)" if given else ENSEMBLES[matrices], rank_tolerance=delta,
                     rank_rule="rank = #{k: lambda_k(G) > rank_tolerance * lambda_1(G)}, G = X X^T the Gram matrix "
                               "of a system's tokens; a system with every pair linked has rank 1 when "
                               "(n - 1) delta < 1")
    if isinstance(d, (int, np.integer)):
        ds = ds.squeeze("d", drop=True)
        attrs.update(d=int(dims[0]), representation=used[0])
    else:
        ds["representation"] = ("d", np.array(used, dtype=str), {
            "long_name": "state of a system: angles (d = 2), points, or the Gram matrix (chords sqrt(1 - G))"})
        ds["d"].attrs.update(long_name="dimension of the ambient space (tokens on S^{d-1})")
    ds.attrs = attrs
    return ds


def _compile_kernels(dims: np.ndarray, n: int, delta: float, normalized: bool, matrices: Any, seed: int,
                     representation: str, mask: Any, draw: str = "once", betas: np.ndarray | None = None) -> None:
    """Compile, or load from numba's on-disk cache, every kernel the sweep's tasks call, once, in this process.

    One task of two systems and three output times per representation in use (the first d that uses it)
    calls every compiled kernel of the sweep with the argument types of the real tasks. The kernels are
    compiled with ``cache=True``, so this writes them to the cache that the workers of a local cluster
    read (the ``__pycache__`` next to the sources, or numba's user-wide cache directory where that is not
    writable, or ``NUMBA_CACHE_DIR``): a first run compiles once, not once per worker, and later runs load.
    """
    firsts = {_representation_of(int(value), n, representation, matrices, mask is not None): int(value)
              for value in dims[::-1]}
    per_beta = draw == "per_beta"
    for value in firsts.values():
        phase_diagram_block(float(betas[0]) if per_beta else 1.0, np.arange(2), d=value, n=n, times=[0.0, 0.5, 1.0],
                            delta=delta, normalized=normalized, matrices=matrices, base_seed=seed,
                            representation=representation, mask=mask, draw=draw,
                            beta_grid=betas.tolist() if per_beta else None)


def _representation_of(d: int, n: int, representation: str, matrices: Any, masked: bool) -> str:
    if matrices is not None or masked:
        return "points"
    return representation_for(d, n).name if representation == "auto" else representation


def attention_mask(mask: Any, n: int) -> Graph | None:
    """The graph of an attention mask of n tokens: None (full attention), "causal" (token i attends to j ≤ i,
    :meth:`meanfield.Graph.causal`) or a boolean array_like (n, n) whose row i marks the tokens i attends to.

    Parameters
    ----------
    mask : None, "causal" or boolean array_like, shape (n, n)
        The mask; every row needs a true entry (a token attends to at least one token).
    n : int
        Tokens per system.

    Returns
    -------
    Graph or None
        The directed graph i → j of the mask (adjacency mask[i, j], softmax over each row's edges), None for
        full attention.

    Raises
    ------
    ValueError
        An unknown string, a matrix that is not boolean or not of shape (n, n), a row without a true entry.

    Examples
    --------
    >>> from meanfield.studies.clustering._phase_diagram import attention_mask
    >>> attention_mask("causal", 3).adjacency.toarray().astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    >>> attention_mask(None, 3) is None
    True
    """
    if mask is None:
        return None
    if isinstance(mask, str):
        if mask not in MASK_CHOICES:
            raise ValueError(f"mask must be None, 'causal' or a boolean matrix of shape (n, n), got {mask!r}")
        return Graph.causal(n)
    values = np.asarray(mask)
    if values.dtype != bool:
        raise ValueError(f"mask must be None, 'causal' or a boolean matrix of shape (n, n); got an array of dtype "
                         f"{values.dtype}")
    if values.shape != (n, n):
        raise ValueError(f"mask must have shape (n, n) = ({n}, {n}), got {values.shape}")
    empty = np.nonzero(~values.any(axis=1))[0]
    if empty.size:
        raise ValueError(f"mask rows {empty[:8].tolist()} have no true entry: token i must attend to at least one "
                         "token")
    return Graph(values.astype(float), name="mask")


def _check_matrices(matrices: Any, draw: Any, dims: np.ndarray) -> tuple[Any, bool]:
    """``matrices`` as the block takes it (an ensemble name, None, or [Q, K, V] as nested lists, None for the
    identity) and whether it was given as matrices; a ValueError naming ``matrices`` or ``draw``."""
    if not isinstance(draw, str) or draw not in DRAWS:
        raise ValueError(f"draw must be one of {DRAWS}, got {draw!r}")
    if isinstance(matrices, (tuple, list)):
        if dims.size > 1:
            raise ValueError(f"matrices given as (Q, K, V) have one size d; run the dimensions {dims.tolist()} one at "
                             "a time")
        if draw != "once":
            raise ValueError(f"draw={draw!r} draws random weights; given matrices (Q, K, V) are used as they are, "
                             "with draw='once'")
        weights = check_weights(matrices, int(dims[0]))
        return [None if m is None else w.tolist() for m, w in zip(matrices, weights)], True
    if matrices is not None and (not isinstance(matrices, str) or matrices not in ENSEMBLES):
        raise ValueError(f"matrices must be None, one of {tuple(ENSEMBLES)} or a tuple (Q, K, V), got {matrices!r}")
    if matrices is None and draw != "once":
        raise ValueError(f"draw={draw!r} draws random weights; it needs matrices = one of {tuple(ENSEMBLES)}")
    if matrices is not None and draw == "once" and dims.size > 1:
        raise ValueError(f"matrices={matrices!r} with draw='once' draws (Q, K, V) for one d; run the dimensions "
                         f"{dims.tolist()} one at a time, or draw per system")
    return matrices, False


def _weights_name(matrices: Any, given: bool, draw: str) -> str:
    if matrices is None:
        return ", Q = K = V = I"
    if given:
        return " with given (Q, K, V)"
    rule = {"once": "", "per_system": ", drawn per system", "per_beta": ", drawn per system and beta"}[draw]
    if matrices == "ginibre":
        return " with Ginibre (Q, K, V)" + rule
    return f" with random weights {matrices!r} ({ENSEMBLES[matrices]})" + rule


def _draw_rule(draw: str) -> str:
    return {"once": f"(Q, K, V): one draw from default_rng(SeedSequence([seed, {MATRICES}]))",
            "per_system": f"(Q, K, V) of system s: default_rng(SeedSequence([seed, {MATRICES}, s])), the same at "
                          "every beta",
            "per_beta": f"(Q, K, V) of system s at the k-th beta: default_rng(SeedSequence([seed, {MATRICES}, s, k]))"
            }[draw]


def _mask_name(mask: Any) -> str:
    return "none" if mask is None else mask if isinstance(mask, str) else "matrix"


def _check_dimensions(d: Any) -> np.ndarray:
    values = np.atleast_1d(np.asarray(d))
    if values.ndim != 1 or values.size == 0 or not np.issubdtype(values.dtype, np.integer):
        raise TypeError(f"d must be an integer >= 2 or a non-empty sequence of them, got {d!r}")
    if np.any(values < 2):
        raise ValueError(f"d must be >= 2, got {d!r}")
    if np.unique(values).size != values.size:
        raise ValueError(f"dimensions d must be distinct, got {d!r}")
    return values.astype(np.int64)


def _check_betas(betas: Any) -> np.ndarray:
    try:
        values = np.asarray(betas, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"betas must be a 1-D sequence of real numbers, got {betas!r}") from None
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"betas must be a non-empty 1-D sequence, got {betas!r}")
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise ValueError(f"betas must be finite and >= 0, got {betas!r}")
    if np.unique(values).size != values.size:
        raise ValueError(f"betas must be distinct, got {betas!r}")
    return values


def _reduce(raw: xr.Dataset, systems: int, per_system: bool) -> xr.Dataset:
    """Means over systems and their standard errors sd/√S (NaN for S = 1)."""
    out = xr.Dataset(coords={"d": raw["d"], "beta": raw["beta"], "time": raw["time"]})
    out["beta"].attrs.update(long_name="inverse temperature beta")
    out["time"].attrs.update(long_name="time", units="1")
    statistics = [
        ("probability", "pair_fraction", "P(<x_1, x_2> >= 1 - delta): mean pair fraction over systems"),
        ("fraction_clustered", "clustered", "fraction of systems with all tokens in one cluster"),
    ]
    if "rank" in raw:
        statistics.append(("rank_mean", "rank", "mean numerical rank of the Gram matrix X X^T "
                                                "(eigenvalues above rank_tolerance times the largest)"))
    for name, source, long_name in statistics:
        values = raw[source].astype(float)
        out[name] = values.mean("seed", skipna=False)
        out[name].attrs["long_name"] = long_name
        if systems > 1:
            out[f"{name}_stderr"] = values.std("seed", ddof=1, skipna=False) / np.sqrt(systems)
        else:
            out[f"{name}_stderr"] = xr.full_like(out[name], np.nan)
        out[f"{name}_stderr"].attrs["long_name"] = f"Monte-Carlo standard error of {name}"
    out["clusters_mean"] = raw["clusters"].astype(float).mean("seed", skipna=False)
    out["clusters_mean"].attrs["long_name"] = "mean number of clusters (single linkage, chord sqrt(2 delta))"
    out["nfev_mean"] = raw["nfev"].astype(float).mean("seed", skipna=False)
    out["nfev_mean"].attrs["long_name"] = "velocity evaluations per system"
    if per_system:
        for name in ("pair_fraction", "clustered", "clusters", "nfev", "rank"):
            if name in raw:
                out[name] = raw[name]
    return out.transpose("d", "beta", "time", ...)


def crossing_time(ds: xr.Dataset, level: float = 0.5, variable: str = "probability") -> xr.DataArray:
    """First time at which ``variable`` of a :func:`phase_diagram` reaches ``level``, for each β.

    Linear interpolation between the last output time below ``level`` and the
    first at or above it; 0 if it starts at or above, NaN if it never gets there.
    """
    values = ds[variable].transpose("beta", "time").values
    t = ds["time"].values
    above = values >= level
    first = np.argmax(above, axis=1)
    out = np.full(values.shape[0], np.nan)
    for k, j in enumerate(first):
        if not above[k, j]:
            continue
        if j == 0:
            out[k] = t[0]
            continue
        lo, hi = values[k, j - 1], values[k, j]
        out[k] = t[j - 1] + (level - lo) / (hi - lo) * (t[j] - t[j - 1])
    return xr.DataArray(out, dims="beta", coords={"beta": ds["beta"]}, name="crossing_time",
                        attrs={"long_name": f"first time {variable} reaches {level}"})


def phase_diagram_trajectories(betas: Sequence[float] = (4.0, 9.0), times: Sequence[float] = (2.5, 18.0, 30.0),
                               n: int = 32, *, seed: int = 0, system: int = 0, normalized: bool = True,
                               rtol: float = 1e-9, atol: float = 1e-11) -> xr.Dataset:
    """Tokens on the unit circle at chosen (β, t): paper 2, Figure 4 (right panels), drawn by
    :func:`meanfield.plot.phase_diagram_trajectories`.

    System ``system`` of a d = 2 :func:`phase_diagram` with base ``seed`` (the same initial tokens,
    :func:`phase_diagram_tokens`) is integrated with :func:`meanfield.simulate` for each β.

    Parameters
    ----------
    betas : sequence of float
        Inverse temperatures β ≥ 0.
    times : sequence of float
        Increasing times t > 0.
    n : int
        Tokens, n ≥ 2.
    seed : int
        Base seed of :func:`phase_diagram` (its initial tokens).
    system : int
        Which system of that phase diagram to integrate.
    normalized : bool
        SA (True) or USA (False), arXiv 2312.10794 (SA), (USA).
    rtol, atol : float
        Tolerances of the adaptive integrator of :func:`meanfield.simulate`.

    Returns
    -------
    xarray.Dataset
        ``positions`` (beta, time, particle): angles in [0, 2π) at t = 0 and at ``times``; attrs n, seed,
        system, the model.

    Raises
    ------
    ValueError
        ``betas`` or ``times`` empty, not finite, negative (β) or not increasing (t).

    Examples
    --------
    Eight tokens of system 0 at β = 1 and β = 4; they start at the diagram's tokens and at
    β = 1 gather into one cluster (order parameter |(1/n) Σ_j e^{iθ_j}| near 1) by t = 10:

    >>> import numpy as np
    >>> import meanfield as mf
    >>> from meanfield.studies import phase_diagram_tokens
    >>> ds = mf.phase_diagram_trajectories(betas=[1.0, 4.0], times=[1.0, 10.0], n=8)
    >>> ds.positions.shape
    (2, 3, 8)
    >>> x0 = phase_diagram_tokens(0, [0], 2, 8)[0]
    >>> bool(np.allclose(ds.positions[1, 0], np.mod(np.arctan2(x0[:, 1], x0[:, 0]), 2 * np.pi)))
    True
    >>> r = np.abs(np.exp(1j * ds.positions.values).mean(axis=-1))
    >>> print(np.round(r, 4))
    [[0.2344 0.3024 0.9999]
     [0.2344 0.2671 0.2617]]
    """
    n = check_positive_int("n", n, 2)
    beta_values = np.atleast_1d(np.asarray(betas, dtype=float))
    shown = np.atleast_1d(np.asarray(times, dtype=float))
    if beta_values.ndim != 1 or beta_values.size == 0 or not np.all(np.isfinite(beta_values)) or np.any(
            beta_values < 0):
        raise ValueError(f"betas must be a non-empty sequence of finite values >= 0, got {betas!r}")
    if shown.ndim != 1 or shown.size == 0 or not np.all(np.isfinite(shown)) or np.any(shown <= 0) or np.any(
            np.diff(shown) <= 0):
        raise ValueError(f"times must be a non-empty increasing sequence of times > 0, got {times!r}")
    x0 = phase_diagram_tokens(seed, [system], 2, n)[0]
    angles0 = np.arctan2(x0[:, 1], x0[:, 0])
    t = np.concatenate([[0.0], shown])
    runs = [simulate(SelfAttention(beta, normalized=normalized), angles0, t, rtol=rtol, atol=atol)
            for beta in beta_values]
    model = runs[0].attrs["model"]
    return xr.Dataset({"positions": (("beta", "time", "particle"), np.stack([r["positions"].values for r in runs]),
                                     {"long_name": "angle", "units": "rad"})},
                      coords={"beta": beta_values, "time": t, "particle": np.arange(n)},
                      attrs={"model": model, "n": n, "seed": seed, "system": system, "rtol": rtol, "atol": atol,
                             "meanfield_version": __version__})

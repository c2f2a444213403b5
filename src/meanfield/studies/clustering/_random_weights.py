r"""Random weights (Q, K, V) of the phase diagram (paper 2, Problem 2 and Figure 5), drawn once, per system or per β.

Only the product QᵀK enters the scores, <Q x_i, K x_j> = x_iᵀ (QᵀK) x_j, so an ensemble that specifies
A = QᵀK directly is drawn as Q = I, K = A. With G, G' independent d × d matrices of iid N(0, 1) entries:

* ``"ginibre"``: Q, K, V independent, entries iid N(0, 1/d) (the real Ginibre ensemble, Figure 5);
* ``"goe"``: QᵀK = A = (G + Gᵀ)/√(2d) (GOE: symmetric, off-diagonal entries of variance 1/d, diagonal
  2/d, spectrum → the semicircle on [-2, 2]), V = I;
* ``"gaussian-product"``: QᵀK = Q̃ᵀK̃ with Q̃ = G/√d, K̃ = G'/√d (a product of two Ginibre matrices, not
  symmetric), V = I;
* ``"plus-qk"``: QᵀK = A of ``"goe"``, V = +A: the gradient-ascent case of paper 2, §3.4.1 (c = +1);
* ``"minus-qk"``: QᵀK = A of ``"goe"``, V = -A: gradient descent of the same energy (c = -1);
* ``"psd-v"``: Q = K = I, V = W Wᵀ with W = G/√d (the Wishart matrix G Gᵀ/d: positive semidefinite,
  E V = I, spectrum → Marchenko–Pastur on [0, 4]).

Draw rules (``draw``): ``"once"`` one (Q, K, V) for every system and β, from
``default_rng(SeedSequence([seed, MATRICES]))``; ``"per_system"`` system s from
``SeedSequence([seed, MATRICES, s])``, the same at every β (and in any block); ``"per_beta"`` system s at the
k-th β of the diagram's grid from ``SeedSequence([seed, MATRICES, s, k])`` (a fresh draw at every β, the
authors' ``noanneal`` switch as the issue describes it). Every ensemble takes its normal variates from its
generator in one call, G first: ``standard_normal((3, d, d))`` for ``"ginibre"`` (Q, K, V in that order, the
draw of :func:`ginibre_matrices`), ``standard_normal((d, d))`` for ``"goe"``, ``"plus-qk"``, ``"minus-qk"`` and
``"psd-v"``, ``standard_normal((2, d, d))`` (Q̃, K̃) for ``"gaussian-product"``.

The systems of a block with their own weights step together in one vectorised Dormand–Prince 5(4)
(:func:`solvers.evolve_batch`, the exponential chart of S^{d-1}), the velocity

.. math::

    \dot x_i = P^\perp_{x_i} \sum_j P_{ij} V x_j, \qquad
    P_{ij} = \frac{e^{\beta x_i^\top A x_j}}{\sum_l e^{\beta x_i^\top A x_l}}\ \text{(SA)},\quad
    P_{ij} = \frac{e^{\beta x_i^\top A x_j}}{n}\ \text{(USA)}, \qquad A = Q^\top K,

as batched matrix products over the systems (each system its own A and V).

The rank statistic: the numerical rank of the Gram matrix G = X Xᵀ of a system's tokens X (n × d) is the
number of eigenvalues λ_k of G (the squared singular values of X) with λ_k > tol · λ_1. With tol = δ a system
whose pairs are all linked (<x_i, x_j> ≥ 1 - δ) has rank 1 whenever (n - 1)δ < 1: writing x_i = c + e_i with c
the mean token, Σ e_i = 0, XᵀX = n c cᵀ + Σ e_i e_iᵀ, so λ_2 ≤ Σ|e_i|² = (1/2n) Σ_ij |x_i - x_j|² ≤ (n - 1)δ,
while λ_1 ≥ n|c|² ≥ n - (n - 1)δ; λ_2/λ_1 < δ. Tokens that spread over k well-separated directions count k (up
to d), so the rank resolves the tokens at the scale δ of the linking threshold, not at round-off.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from solvers import evolve_batch
from solvers._batched_dormand_prince import BATCH_STATUS, FINISHED

from ..._validate import check_positive_int
from ...particles._compiled_charts import CompiledSphereChart
from ...particles._token_ensembles import TokenRepresentation

__all__ = ["ENSEMBLES", "DRAWS", "random_weights", "weight_stack", "gram_rank", "weighted_token_evolution",
           "weighted_token_statistics", "check_weights"]

#: state values per call of :func:`solvers.evolve_batch`: chunks of systems small enough for the seven
#: stages to stay in cache, large enough for the loop's fixed cost per step to be shared
CHUNK_VALUES = 2**13
#: fewest systems per call: the loop's fixed cost per step (≈ 0.1 ms) outweighs the cache for larger states
CHUNK_SYSTEMS = 32

#: SeedSequence entropy of the weights (the value of ``_phase_diagram.MATRICES``)
MATRICES = 1
#: the ensembles of :func:`random_weights`: name → formula (module docstring)
ENSEMBLES = {
    "ginibre": "Q, K, V independent, entries iid N(0, 1/d)",
    "goe": "Q = I, K = A = (G + G^T)/sqrt(2d) (GOE), V = I",
    "gaussian-product": "Q = G/sqrt(d), K = G'/sqrt(d) (Ginibre, QᵀK their product), V = I",
    "plus-qk": "Q = I, K = A = (G + G^T)/sqrt(2d) (GOE), V = +A",
    "minus-qk": "Q = I, K = A = (G + G^T)/sqrt(2d) (GOE), V = -A",
    "psd-v": "Q = K = I, V = G G^T/d (Wishart, positive semidefinite, E V = I)",
}
#: draw rules of the weights: one draw, one per system (the same at every β), one per system and β
DRAWS = ("once", "per_system", "per_beta")


def _seed_sequence(seed: int, draw: str, system: int | None, beta_index: int | None) -> np.random.SeedSequence:
    if draw == "once":
        return np.random.SeedSequence([seed, MATRICES])
    if system is None or (draw == "per_beta" and beta_index is None):
        raise ValueError(f"draw={draw!r} needs the system{' and the beta index' if draw == 'per_beta' else ''}")
    if draw == "per_system":
        return np.random.SeedSequence([seed, MATRICES, int(system)])
    return np.random.SeedSequence([seed, MATRICES, int(system), int(beta_index)])


def random_weights(ensemble: str, d: int, seed: int = 0, *, draw: str = "once", system: int | None = None,
                   beta_index: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One draw (Q, K, V) of ``ensemble`` in dimension d (module docstring: ensembles, normalisations, seeds).

    Parameters
    ----------
    ensemble : {"ginibre", "goe", "gaussian-product", "plus-qk", "minus-qk", "psd-v"}
        The law of the weights (:data:`ENSEMBLES`).
    d : int
        Size of the matrices, d ≥ 2.
    seed : int
        Base seed of the diagram.
    draw : {"once", "per_system", "per_beta"}
        Which SeedSequence: [seed, 1], [seed, 1, system] or [seed, 1, system, beta_index].
    system, beta_index : int, optional
        The system s (``per_system``, ``per_beta``) and the index of β in the diagram's grid (``per_beta``).

    Returns
    -------
    Q, K, V : numpy.ndarray
        Three (d, d) matrices.

    Raises
    ------
    ValueError
        Unknown ``ensemble`` or ``draw``, d < 2, a missing ``system`` or ``beta_index``.

    Examples
    --------
    V = -QᵀK exactly, QᵀK symmetric:

    >>> import numpy as np
    >>> from meanfield.studies import random_weights
    >>> Q, K, V = random_weights("minus-qk", 4, seed=1, draw="per_system", system=7)
    >>> bool(np.array_equal(V, -(Q.T @ K)) and np.array_equal(K, K.T))
    True

    Once-drawn Ginibre weights are those of :func:`ginibre_matrices`:

    >>> from meanfield.studies import ginibre_matrices
    >>> bool(np.array_equal(random_weights("ginibre", 4, 1)[2], ginibre_matrices(4, 1)[2]))
    True
    """
    if ensemble not in ENSEMBLES:
        raise ValueError(f"matrices must be None, one of {tuple(ENSEMBLES)} or a tuple (Q, K, V), got {ensemble!r}")
    if draw not in DRAWS:
        raise ValueError(f"draw must be one of {DRAWS}, got {draw!r}")
    d = check_positive_int("d", d, 2)
    rng = np.random.default_rng(_seed_sequence(seed, draw, system, beta_index))
    eye = np.eye(d)
    if ensemble == "ginibre":
        Q, K, V = rng.standard_normal((3, d, d)) / np.sqrt(d)
        return Q, K, V
    if ensemble == "gaussian-product":
        Q, K = rng.standard_normal((2, d, d)) / np.sqrt(d)
        return Q, K, eye
    g = rng.standard_normal((d, d))
    if ensemble == "psd-v":
        return eye, eye.copy(), g @ g.T / d
    a = (g + g.T) / np.sqrt(2 * d)
    V = {"goe": eye, "plus-qk": a, "minus-qk": -a}[ensemble]
    return eye, a, V


def check_weights(matrices: Any, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Given weights (Q, K, V), each None (the identity) or a finite (d, d) array; a ValueError naming the matrix
    (``matrices[0]`` is Q, ...) that is not square, not of the tokens' d or not finite."""
    if not isinstance(matrices, (tuple, list)) or len(matrices) != 3:
        raise ValueError(f"matrices must be None, one of {tuple(ENSEMBLES)} or a tuple (Q, K, V) of (d, d) arrays, "
                         f"got {type(matrices).__name__}")
    out = []
    for k, (name, m) in enumerate(zip("QKV", matrices)):
        if m is None:
            out.append(np.eye(d))
            continue
        arr = np.asarray(m, dtype=float)
        if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
            raise ValueError(f"matrices[{k}] ({name}) must be a square (d, d) matrix, got shape {arr.shape}")
        if arr.shape[0] != d:
            raise ValueError(f"matrices[{k}] ({name}) is {arr.shape[0]} x {arr.shape[0]}, but the tokens have d = {d}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"matrices[{k}] ({name}) must be finite")
        out.append(arr)
    return out[0], out[1], out[2]


def weight_stack(ensemble: str, draw: str, d: int, seed: int, systems: np.ndarray,
                 beta_index: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Scores A_s = Q_sᵀK_s and values V_s of the given systems, stacks (len(systems), d, d)."""
    if draw == "once":
        Q, K, V = random_weights(ensemble, d, seed)
        draws = [(Q, K, V)] * len(systems)
    else:
        draws = [random_weights(ensemble, d, seed, draw=draw, system=int(s), beta_index=beta_index) for s in systems]
    scores = np.stack([Q.T @ K for Q, K, _ in draws])
    values = np.stack([V for _, _, V in draws])
    return scores, values


def gram_rank(points: np.ndarray, tol: float) -> np.ndarray:
    """Numerical rank of the Gram matrix G = X Xᵀ of tokens X, shape (..., n, d): the number of eigenvalues
    λ_k = σ_k(X)² of G with λ_k > tol · λ_1 (module docstring; tol = δ makes a linked cluster rank 1).

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.clustering._random_weights import gram_rank
    >>> int(gram_rank(np.tile([1.0, 0, 0], (4, 1)), 1e-3)), int(gram_rank(np.eye(3), 1e-3))
    (1, 3)
    """
    s = np.linalg.svd(np.asarray(points, dtype=float), compute_uv=False)
    lam = s * s
    return np.sum(lam > tol * lam[..., :1], axis=-1)


def _velocity(scores: np.ndarray, values: np.ndarray, beta: float, normalized: bool, mask: np.ndarray | None):
    """rhs(y, systems, out) of :func:`solvers.evolve_batch`: ẋ_i = P⊥_{x_i} Σ_j P_ij V x_j with each system's
    A = βQᵀK and V (module docstring), for points (m, n, d)."""
    d = scores.shape[-1]
    both = np.ascontiguousarray(np.concatenate([beta * scores, np.swapaxes(values, 1, 2)], axis=2))  # [βA | Vᵀ]
    forbidden = None if mask is None else ~mask

    def rhs(y: np.ndarray, systems: np.ndarray, out: np.ndarray) -> None:
        yw = np.matmul(y, both[systems])  # one product: the rows x_iᵀβA and (V x_i)ᵀ
        s = np.matmul(yw[..., :d], np.swapaxes(y, 1, 2))
        if forbidden is not None:
            s[:, forbidden] = -np.inf
        if normalized:
            s -= s.max(axis=2, keepdims=True)
        p = np.exp(s, out=s)
        v = np.matmul(p, yw[..., d:])
        if normalized:
            v /= p.sum(axis=2, keepdims=True)
        else:
            v /= y.shape[1]
        v -= np.sum(v * y, axis=2, keepdims=True) * y
        out[...] = v

    return rhs


def weighted_token_evolution(tokens: np.ndarray, scores: np.ndarray, values: np.ndarray, t: np.ndarray, beta: float,
                             normalized: bool, *, rtol: float, atol: float, record: Any = None,
                             mask: np.ndarray | None = None, max_steps: int = 100_000):
    """:func:`solvers.evolve_batch` of tokens (systems, n, d) on S^{d-1}, system s with scores ``scores[s]`` = QᵀK
    and values ``values[s]`` = V, SA (``normalized``) or USA, through the output times ``t`` (exponential chart
    of the sphere; ``record(y, systems)`` what is kept at an output time, default the points; ``mask`` (n, n)
    boolean: token i attends to the j with mask[i, j], SA only)."""
    x0 = np.ascontiguousarray(tokens, dtype=float)
    return evolve_batch(_velocity(scores, values, float(beta), bool(normalized), mask), x0, np.asarray(t, float),
                        rtol=rtol, atol=atol, chart=CompiledSphereChart(), record=record, max_steps=max_steps)


def weighted_token_statistics(tokens: np.ndarray, scores: np.ndarray, values: np.ndarray, t: np.ndarray, beta: float,
                              normalized: bool, delta: float, *, rtol: float, atol: float,
                              mask: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Pair fraction, cluster count and Gram rank (tolerance δ) of every system at the output times ``t``
    (:func:`weighted_token_evolution`; no early stop: with V ≠ I linked pairs need not stay linked).

    Returns
    -------
    dict
        ``pair_fraction`` (systems, times), ``clusters`` and ``rank`` (systems, times, int), ``nfev`` (systems,).

    Raises
    ------
    RuntimeError
        A system that did not reach the final time (step size, max steps, non-finite velocity).
    """
    n, d = tokens.shape[1], tokens.shape[2]
    points = TokenRepresentation("points", d, n)

    def record(y: np.ndarray, systems: np.ndarray) -> np.ndarray:
        return np.concatenate([points.statistics(y, delta), gram_rank(y, delta)[:, None]], axis=1)

    systems = tokens.shape[0]
    values_out = np.empty((systems, np.size(t), 3))
    nfev = np.empty(systems, dtype=np.int64)
    chunk = int(np.clip(CHUNK_VALUES // (n * d), CHUNK_SYSTEMS, 1024))
    for start in range(0, systems, chunk):
        part = slice(start, start + chunk)
        run = weighted_token_evolution(tokens[part], scores[part], values[part], t, beta, normalized, rtol=rtol,
                                       atol=atol, record=record, mask=mask)
        failed = np.nonzero(run.status != FINISHED)[0]
        if failed.size:
            first = failed[0]
            raise RuntimeError(f"{failed.size} of {run.status.size} systems stopped: "
                               f"{BATCH_STATUS[int(run.status[first])]} (system {start + first} of the block at "
                               f"t = {run.t_stop[first]:.6g}, beta = {beta})"
                               + ("" if normalized else "; USA's rates grow like e^{beta x^T Q^T K x} / n, so its "
                                  "clusters are stiff for an explicit integrator at large beta"))
        values_out[part] = run.y
        nfev[part] = run.nfev
    return {"pair_fraction": values_out[..., 0], "clusters": values_out[..., 1].astype(np.int64),
            "rank": values_out[..., 2].astype(np.int64), "nfev": nfev}

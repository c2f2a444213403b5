r"""Sinkhorn (doubly stochastic) attention: the scaling of e^{β<Q x_i, K x_j>} to row and column sums 1.

Paper 2, Remark 3.5 (Sander, Ablin, Blondel, Peyré 2022, "Sinkformers"): the softmax of (2.7) makes
the attention matrix stochastic (rows sum to 1); Sinkhorn's iteration makes it doubly stochastic,

    P = diag(e^f) K diag(e^g),   K_ij = e^{C_ij},   C_ij = β<Q x_i, K x_j>,
    Σ_j P_ij = 1 (rows),   Σ_i P_ij = 1 (columns),

for equal token weights 1/n (the plan π = P/n has both marginals uniform). The scalings are carried
in logarithms f, g and each normalisation is a log-sum-exp shifted by its maximum, so nothing
overflows for any β (e^{500} would):

    normalisation k = 1, 3, 5, … (rows):    f_i ← f_i - LSE_j(C_ij + f_i + g_j),
    normalisation k = 2, 4, 6, … (columns): g_j ← g_j - LSE_i(C_ij + f_i + g_j),

from f = g = 0. The count k is that of normalisations, so k = 1 (one row normalisation) is the
softmax of (2.7): Sinkhorn attention with one iteration is softmax attention (SA). After a row
normalisation the rows sum to 1 to round-off and the columns are off by up to the residual; after a
column normalisation the roles swap. The residual is max(max_i |Σ_j P_ij - 1|, max_j |Σ_i P_ij - 1|)
of the current P. With a tolerance τ the iteration stops at the first k whose
residual is ≤ τ (both marginals are then 1 within τ), and fails when ``iterations`` normalisations
did not reach it; without one (τ = None) exactly ``iterations`` normalisations are made (Sander et
al.'s fixed-count Sinkformer) and the residual is reported, not judged. For a K with positive
entries the iteration converges (Sinkhorn 1967), linearly, at a rate that degrades as β grows.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from solvers import SchemeError

from ._self_attention_sums import BLOCK_ELEMENTS

__all__ = ["SinkhornNotConverged", "SinkhornResult", "sinkhorn_attention"]


class SinkhornNotConverged(SchemeError):
    """The Sinkhorn iteration of an attention matrix did not reach its tolerance in the allowed normalisations.

    Raised by the velocity of ``Attention(normalization="sinkhorn")``; :func:`solvers.evolve` catches it, so that
    a :func:`meanfield.simulate` run ends there with ``success = 0`` and this message.
    """


class SinkhornResult(NamedTuple):
    """Outcome of :func:`sinkhorn_attention`.

    Attributes
    ----------
    matrix : ndarray (systems, n, n)
        P after the last normalisation.
    iterations : int
        Normalisations made (the largest over the blocks of systems).
    residual : float
        max over systems of max(max_i |Σ_j P_ij - 1|, max_j |Σ_i P_ij - 1|) of the returned P.
    """

    matrix: np.ndarray
    iterations: int
    residual: float


def sinkhorn_attention(x: np.ndarray, y: np.ndarray, M: np.ndarray, iterations: int, tolerance: float | None,
                       block_elements: int = BLOCK_ELEMENTS) -> SinkhornResult:
    """Doubly stochastic P = diag(e^f) K diag(e^g) of K_ij = e^{x_iᵀ M y_j} for stacks x, y (systems, n, d).

    The log-domain Sinkhorn iteration of the module docstring, vectorised over systems (blocks of at most
    ``block_elements`` matrix entries, at least one system each): at most ``iterations`` normalisations,
    rows first, stopping at the first whose residual is ≤ ``tolerance`` (None: exactly ``iterations``).
    Convergence is judged over a whole block of systems (every system of it makes the same number of
    normalisations).
    """
    n_sys, n, _ = x.shape
    xm = x @ M
    out = np.empty((n_sys, n, y.shape[1]))
    per_block = max(1, block_elements // max(n * y.shape[1], 1))
    done, worst = 0, 0.0
    for start in range(0, n_sys, per_block):
        ss = slice(start, min(start + per_block, n_sys))
        scores = np.matmul(xm[ss], np.swapaxes(y[ss], 1, 2))
        f = np.zeros(scores.shape[:2])
        g = np.zeros((scores.shape[0], scores.shape[2]))
        for k in range(1, iterations + 1):
            log_p = scores + f[:, :, None] + g[:, None, :]
            axis = 2 if k % 2 else 1  # rows at odd k, columns at even k
            top = log_p.max(axis=axis, keepdims=True)
            np.exp(log_p - top, out=log_p)
            total = log_p.sum(axis=axis, keepdims=True)
            log_p /= total
            shift = np.squeeze(top + np.log(total), axis=axis)
            if axis == 2:
                f -= shift
            else:
                g -= shift
            residual = max(float(np.max(np.abs(log_p.sum(axis=2) - 1.0))),
                           float(np.max(np.abs(log_p.sum(axis=1) - 1.0))))
            if tolerance is not None and residual <= tolerance:
                break
        out[ss] = log_p
        done, worst = max(done, k), max(worst, residual)
    return SinkhornResult(out, done, worst)

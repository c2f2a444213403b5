r"""The matrix exponential e^A of a small real matrix, for the rescaled attention dynamics.

Paper 1 (arXiv:2305.05465, Theorem 4.2) follows the rescaled tokens z_i(t) = e^{-tV} x_i(t); their
velocity needs e^{tV} at every stage time, i.e. one exponential of a d × d matrix per
velocity evaluation. :func:`scipy.linalg.expm` computes the same Padé approximant, but it
goes through LAPACK routines that OpenBLAS runs on its thread pool even for d = 2: on a
machine whose cores are busy each call then waits for a time slice (measured 16 ms for a
2 × 2 matrix on 2 busy cores, against 0.2 ms single-threaded), which made a particle run
of 220 steps take 22 s. Here the same algorithm is written with :func:`numpy.matmul` and
:func:`numpy.linalg.solve`, which do not thread at this size.

Algorithm: scaling and squaring with the diagonal [13/13] Padé approximant (N. J. Higham,
"The scaling and squaring method for the matrix exponential revisited", SIAM J. Matrix
Anal. Appl. 26 (2005) 1179–1193, Algorithm 2.3, degree 13 only). With
s = max(0, ⌈log₂(‖A‖₁/θ₁₃)⌉), θ₁₃ = 5.371920351148152, and B = A/2^s,

    r₁₃(B) = (-U + W)⁻¹ (U + W),   U = B Σ_{k odd} b_k B^{k-1},   W = Σ_{k even} b_k B^k,
    e^A ≈ r₁₃(B)^{2^s}.

The backward error of r₁₃ for ‖B‖₁ ≤ θ₁₃ is at most the unit round-off 2^-53 (Higham,
Table 2.3), so e^A is as accurate as the conditioning of the exponential allows; the tests
check it against closed forms (rotations, nilpotent and diagonal matrices) and against
:func:`scipy.linalg.expm`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["matrix_exponential"]

THETA_13 = 5.371920351148152
"""Largest ‖B‖₁ for which the [13/13] Padé approximant has backward error ≤ 2^-53 (Higham 2005, Table 2.3)."""

PADE_13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
"""Coefficients b_0, …, b_13 of the [13/13] Padé approximant of e^x (Higham 2005, eq. (2.9))."""


def matrix_exponential(matrix: np.ndarray) -> np.ndarray:
    """e^A for a real square matrix A (d × d), by scaling and squaring with the [13/13] Padé approximant.

    Parameters
    ----------
    matrix : ndarray, shape (d, d)
        A finite real matrix.

    Returns
    -------
    ndarray, shape (d, d)
        e^A = Σ_k A^k / k!.

    Examples
    --------
    >>> import numpy as np
    >>> rotation = matrix_exponential(np.array([[0.0, -np.pi / 2], [np.pi / 2, 0.0]]))
    >>> bool(np.allclose(rotation, [[0.0, -1.0], [1.0, 0.0]], atol=1e-15))
    True
    """
    a = np.asarray(matrix, dtype=float)
    norm = float(np.abs(a).sum(axis=0).max()) if a.size else 0.0
    squarings = max(0, int(np.ceil(np.log2(norm / THETA_13)))) if norm > 0 else 0
    b = a / 2.0**squarings
    eye = np.eye(a.shape[0])
    b2 = b @ b
    b4 = b2 @ b2
    b6 = b4 @ b2
    c = PADE_13
    u = b @ (b6 @ (c[13] * b6 + c[11] * b4 + c[9] * b2) + c[7] * b6 + c[5] * b4 + c[3] * b2 + c[1] * eye)
    w = b6 @ (c[12] * b6 + c[10] * b4 + c[8] * b2) + c[6] * b6 + c[4] * b4 + c[2] * b2 + c[0] * eye
    out = np.linalg.solve(w - u, w + u)
    for _ in range(squarings):
        out = out @ out
    return out

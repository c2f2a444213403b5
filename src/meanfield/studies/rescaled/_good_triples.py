"""Hypotheses of paper 1's Theorems 4.2 and 5.2 on the weights (Q, K, V), and random instances.

Paper 1 (Geshkovski–Letrouit–Polyanskiy–Rigollet, arXiv 2305.05465) writes the
dynamics with β absorbed into Q, K: P_ij = softmax_j(<Q x_i, K x_j>). Here
P_ij = softmax_j(β <Q x_i, K x_j>) (:class:`meanfield.Attention`), so paper 1's
(Q, K) is our (√β Q, √β K) and every sign condition below is read on β QᵀK.

**Good triple (§4, hypotheses of Theorem 4.2).** With λ_1, …, λ_d the
eigenvalues of V ordered by modulus,

1. the eigenvalue of largest modulus is real, positive and simple:
   λ_1 > |λ_2| ≥ … ≥ |λ_d|;
2. β <Q φ_1, K φ_1> > 0 for φ_1 spanning ker(V - λ_1 I).

**Mixed case (§5, hypotheses of Theorem 5.2).** V is paranormal: R^d = F ⊕ G
with F, G invariant under V, V|_F = λ I (λ real, positive; F the whole
eigenspace, k = dim F ≥ 1) and the spectral radius of V|_G below λ; and
β <Q φ, K φ> > 0 for every φ ∈ F \\ {0} (the symmetric part of Φᵀ β QᵀK Φ is
positive definite, Φ a basis of F). With k = 1 this is a good triple; V = I
is Theorem 3.1's case (F = R^d).

Coordinates along F are taken in the eigenbasis: z = Φ c + g with g ∈ G,
c = (ΨᵀΦ)⁻¹ Ψᵀ z, where Ψ spans the left eigenspace ker(Vᵀ - λ I) (Ψᵀ
vanishes on G = range(V - λ I)). For k = 1, c = <ψ_1, z>/<ψ_1, φ_1>: the level
sets of c are the hyperplanes φ_1 ℝ-translates of G, i.e. perpendicular to the
left eigenvector ψ_1; they are perpendicular to φ_1 itself only when G ⊥ φ_1
(e.g. V normal).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg

from ..._validate import as_rng, check_beta, check_positive, check_positive_int

__all__ = ["TripleCheck", "check_good_triple", "check_mixed_triple", "random_good_triple", "random_mixed_triple"]

#: relative tolerance (to the spectral radius of V) under which two eigenvalues count as equal and an
#: imaginary part as zero; repeated eigenvalues of a semisimple V computed by LAPACK differ by ~1e-15
EIGENVALUE_TOLERANCE = 1e-8
#: most tries of the rejection sampling in the random instances
MAX_TRIES = 1000


@dataclass(frozen=True)
class TripleCheck:
    """Which hypotheses on (Q, K, V, β) hold (see the module docstring).

    Returned by :func:`check_good_triple` and :func:`check_mixed_triple`, a frozen record;
    ``require()`` raises ValueError listing the failures, ``attrs`` gives the check as NetCDF-safe
    attributes.

    Parameters
    ----------
    holds : bool
        All conditions hold.
    conditions : dict of str to bool
        Each condition by name.
    failures : tuple of str
        One sentence per failed condition, with the numbers.
    eigenvalues : ndarray (d,) complex
        Eigenvalues of V, by decreasing modulus.
    dominant : float
        Real part of the eigenvalue of largest modulus.
    multiplicity : int
        Algebraic multiplicity of the eigenvalues equal to it.
    basis : ndarray (d, k)
        Unit right eigenvectors spanning F = ker(V - λ I) (k = geometric multiplicity); for k = 1 the
        sign makes the largest-magnitude entry positive.
    dual : ndarray (d, k)
        Left eigenvectors with dualᵀ basis = I_k: the F-coordinates of z are dualᵀ z.

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.rescaled import check_good_triple
    >>> check = check_good_triple(None, None, [[2.0, 1.0], [0.0, -1.0]])
    >>> check.holds, check.dominant, check.multiplicity
    (True, 2.0, 1)
    >>> print(check.eigenvalues.real, check.basis.ravel() + 0.0, check.dual.ravel())
    [ 2. -1.] [1. 0.] [1.         0.33333333]

    The dual vector is the left eigenvector ψ_1 of V (ψ_1ᵀ V = 2 ψ_1ᵀ), scaled so that ψ_1ᵀ φ_1 = 1:

    >>> V = np.array([[2.0, 1.0], [0.0, -1.0]])
    >>> print(check.dual.T @ V, check.dual.T @ check.basis)
    [[2.         0.66666667]] [[1.]]
    >>> check.attrs["condition_dominant_simple"], check.attrs["hypotheses_failures"]
    (1, 'none')
    """

    holds: bool
    conditions: dict[str, bool]
    failures: tuple[str, ...]
    eigenvalues: np.ndarray = field(repr=False)
    dominant: float
    multiplicity: int
    basis: np.ndarray = field(repr=False)
    dual: np.ndarray = field(repr=False)

    def require(self) -> None:
        """Raise ValueError listing the failed conditions, if any."""
        if not self.holds:
            raise ValueError("the weights fail the theorem's hypotheses: " + "; ".join(self.failures))

    @property
    def attrs(self) -> dict[str, Any]:
        """The check as NetCDF-safe attributes."""
        out: dict[str, Any] = {"hypotheses_hold": int(self.holds),
                               "hypotheses_failures": "; ".join(self.failures) or "none",
                               "dominant_eigenvalue": self.dominant, "dominant_multiplicity": self.multiplicity,
                               "eigenvalues_of_V": repr(np.round(self.eigenvalues, 12).tolist())}
        out.update({f"condition_{name}": int(value) for name, value in self.conditions.items()})
        return out


def as_matrix(name: str, value: Any, d: int | None = None) -> np.ndarray:
    """``value`` as a finite real square matrix; None is the identity of size ``d``."""
    if value is None:
        if d is None:
            raise ValueError(f"{name} is None (the identity) but no dimension is known")
        return np.eye(d)
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be a square matrix, got {type(value).__name__}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a square matrix of real numbers, got {value!r}") from None
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.size == 0:
        raise ValueError(f"{name} must be a square (d, d) matrix, got shape {arr.shape}")
    if d is not None and arr.shape[0] != d:
        raise ValueError(f"{name} is {arr.shape[0]} × {arr.shape[0]} but the dimension is d = {d}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (found NaN or infinity)")
    return arr


def weights(Q: Any, K: Any, V: Any, beta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(Q, K, V, β) checked: V square, Q and K of V's size (None: identity), β ≥ 0."""
    V = as_matrix("V", V)
    d = V.shape[0]
    return as_matrix("Q", Q, d), as_matrix("K", K, d), V, check_beta(beta)


def _spectrum(V: np.ndarray, tolerance: float) -> tuple[np.ndarray, complex, int, np.ndarray, np.ndarray, float]:
    """Eigenvalues by decreasing modulus, the top one, its algebraic multiplicity, right/left eigenbases
    of its real part (bases of ker(V - λI), ker(Vᵀ - λI), dualᵀ basis = I), and the tolerance used."""
    values = np.linalg.eigvals(V)
    values = values[np.lexsort((-values.real, -np.abs(values)))]
    top = values[0]
    radius = abs(top)
    tol = tolerance * max(radius, 1e-300)
    multiplicity = int(np.sum(np.abs(values - top) <= tol))
    lam = float(top.real)
    shifted = V - lam * np.eye(V.shape[0])
    # an eigenvalue repeated k times is computed to ~ eps^{1/k} in a Jordan block: the null spaces use the
    # same tolerance relative to the norm, loosened to the k-th root for the rank decision
    rank_tol = max(tol, np.sqrt(np.finfo(float).eps) * max(np.linalg.norm(V, 2), 1e-300))
    basis = scipy.linalg.null_space(shifted, rcond=rank_tol / max(np.linalg.norm(shifted, 2), 1e-300))
    left = scipy.linalg.null_space(shifted.T, rcond=rank_tol / max(np.linalg.norm(shifted, 2), 1e-300))
    if basis.shape[1] == 1:
        basis = basis * np.sign(basis[np.argmax(np.abs(basis[:, 0])), 0])
    if basis.shape[1] == left.shape[1] and basis.shape[1] > 0:
        gram = left.T @ basis
        if abs(np.linalg.det(gram)) > 1e-12:
            left = left @ np.linalg.inv(gram).T
    return values, top, multiplicity, basis, left, tol


def _dominant_conditions(values: np.ndarray, top: complex, tol: float) -> tuple[dict[str, bool], list[str]]:
    conditions = {"dominant_real": bool(abs(top.imag) <= tol), "dominant_positive": bool(top.real > tol)}
    failures = []
    if not conditions["dominant_real"]:
        failures.append(f"the eigenvalue of V of largest modulus, {top:.6g}, is not real")
    if not conditions["dominant_positive"]:
        failures.append(f"the eigenvalue of V of largest modulus, {top.real:.6g}, is not positive")
    return conditions, failures


def _attention_sign(Q: np.ndarray, K: np.ndarray, beta: float, basis: np.ndarray) -> float:
    """Smallest eigenvalue of the symmetric part of Φᵀ β QᵀK Φ over the F-basis Φ, relative to
    β |Q| |K| (positive: β <Q φ, K φ> > 0 on F \\ {0})."""
    if basis.shape[1] == 0:
        return -np.inf
    A = basis.T @ (beta * Q.T @ K) @ basis
    scale = beta * np.linalg.norm(Q, 2) * np.linalg.norm(K, 2)
    if scale == 0:
        return 0.0
    return float(np.linalg.eigvalsh(0.5 * (A + A.T))[0] / scale)


def check_good_triple(Q: Any, K: Any, V: Any, beta: float = 1.0, *,
                      tolerance: float = EIGENVALUE_TOLERANCE) -> TripleCheck:
    r"""Check paper 1's good-triple conditions (hypotheses of Theorem 4.2, arXiv 2305.05465 §4).

    Conditions, by name (see the module docstring for β):

    * ``dominant_real``, ``dominant_positive``, ``dominant_simple``: the
      eigenvalue of V of largest modulus is real, positive and simple,
      λ_1 > |λ_k| for k ≥ 2;
    * ``positive_attention``: β <Q φ_1, K φ_1> > 0 on the eigenvector φ_1
      (relative to β |Q| |K|, above ``tolerance``).

    Parameters
    ----------
    Q, K : (d, d) array_like or None
        None is the identity.
    V : (d, d) array_like
        The value matrix.
    beta : float, default 1.0
        β ≥ 0 (β = 0 fails ``positive_attention``: the attention is uniform).
    tolerance : float, default 1e-8
        Relative tolerance of eigenvalue comparisons (to the spectral radius); also the threshold of
        ``positive_attention``.

    Returns
    -------
    TripleCheck
        The conditions, the failures in words, the spectrum of V, and φ_1 (``basis``) with its dual
        left eigenvector (``dual``).

    Raises
    ------
    ValueError, TypeError
        Non-square, mismatched or non-finite matrices, β < 0.

    Notes
    -----
    With λ_1, …, λ_d the eigenvalues of V by decreasing modulus and V φ_1 = λ_1 φ_1, the
    conditions are

    .. math::

        \lambda_1 \in \mathbb{R}, \qquad \lambda_1 > |\lambda_2| \ge \dots \ge |\lambda_d|,
        \qquad \frac{\beta \langle Q\varphi_1, K\varphi_1\rangle}{\beta \|Q\| \|K\|} > \mathrm{tol},

    with paper 1's (Q, K) our (√β Q, √β K); β = 0 fails the last one.

    Examples
    --------
    >>> from meanfield.studies.rescaled import check_good_triple
    >>> check_good_triple(None, None, [[2.0, 0.0], [0.0, -1.0]]).holds
    True
    >>> check_good_triple(None, None, [[1.0, 0.0], [0.0, -1.0]]).failures
    ('the dominant eigenvalue of V is not simple: eigenvalues of modulus 1: [1.0, -1.0]',)

    A non-normal V: only the leading eigenvalue and eigenvector matter.

    >>> check = check_good_triple(None, None, [[2.0, 1.0], [0.0, -1.0]], beta=0.5)
    >>> check.conditions
    {'dominant_real': True, 'dominant_positive': True, 'dominant_simple': True, 'positive_attention': True}
    """
    Q, K, V, beta = weights(Q, K, V, beta)
    tolerance = check_positive("tolerance", tolerance)
    values, top, multiplicity, basis, dual, tol = _spectrum(V, tolerance)
    conditions, failures = _dominant_conditions(values, top, tol)
    tied = values[np.abs(np.abs(values) - abs(top)) <= tol]
    conditions["dominant_simple"] = bool(tied.size == 1)
    if not conditions["dominant_simple"]:
        failures.append(f"the dominant eigenvalue of V is not simple: eigenvalues of modulus {abs(top):.6g}: "
                        f"{[complex(v).real if abs(v.imag) <= tol else complex(v) for v in np.round(tied, 10)]}")
    sign = _attention_sign(Q, K, beta, basis[:, :1]) if conditions["dominant_real"] else -np.inf
    conditions["positive_attention"] = bool(sign > tolerance)
    if conditions["dominant_real"] and not conditions["positive_attention"]:
        failures.append(f"beta <Q phi_1, K phi_1> / (beta |Q| |K|) = {sign:.3g} is not > 0 on the leading "
                        f"eigenvector phi_1 = {np.round(basis[:, 0], 6).tolist()} of V (beta = {beta:g})")
    return TripleCheck(all(conditions.values()), conditions, tuple(failures), values, float(top.real),
                       multiplicity, basis, dual)


def check_mixed_triple(Q: Any, K: Any, V: Any, beta: float = 1.0, *,
                       tolerance: float = EIGENVALUE_TOLERANCE) -> TripleCheck:
    r"""Check the hypotheses of paper 1's Theorem 5.2 (arXiv 2305.05465 §5): a paranormal V.

    Conditions, by name:

    * ``dominant_real``, ``dominant_positive``: the eigenvalue λ of V of largest modulus is real and > 0;
    * ``dominant_semisimple``: V = λ I on its eigenspace F (geometric = algebraic multiplicity k);
    * ``rest_smaller``: every other eigenvalue has modulus < λ (spectral radius of V|_G below λ);
    * ``positive_attention``: β <Q φ, K φ> > 0 for φ ∈ F ∖ {0}.

    k = 1 is a good triple (:func:`check_good_triple`); V = I with QᵀK > 0 is Theorem 3.1.

    Parameters
    ----------
    Q, K : (d, d) array_like or None
        None is the identity.
    V : (d, d) array_like
        The value matrix.
    beta : float, default 1.0
        β ≥ 0 (β = 0 fails ``positive_attention``).
    tolerance : float, default 1e-8
        Relative tolerance of eigenvalue comparisons (to the spectral radius); also the threshold of
        ``positive_attention``.

    Returns
    -------
    TripleCheck
        The conditions, the failures in words, the spectrum, and bases of F (``basis``, k columns) and
        of the left eigenspace (``dual``, dualᵀ basis = I_k).

    Raises
    ------
    ValueError, TypeError
        Non-square, mismatched or non-finite matrices, β < 0.

    Notes
    -----
    With Φ a basis of F = ker(V - λ I), ``positive_attention`` is the smallest eigenvalue of the
    symmetric part of Φᵀ β QᵀK Φ, relative to β |Q| |K|, above ``tolerance``:

    .. math::

        \lambda_{\min}\Big(\tfrac12 \Phi^\top \beta\,(Q^\top K + K^\top Q)\, \Phi\Big)
        > \mathrm{tol}\; \beta \|Q\| \|K\|,

    i.e. β <Q φ, K φ> > 0 on F ∖ {0}.

    Examples
    --------
    >>> from meanfield.studies.rescaled import check_mixed_triple
    >>> check_mixed_triple(None, None, [[1.0, 0, 0], [0, 1.0, 0], [0, 0, -0.5]]).multiplicity
    2

    V = I is Theorem 3.1's case (F = R³); a Jordan block is not λ I on F:

    >>> check_mixed_triple(None, None, [[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]]).holds
    True
    >>> print(*check_mixed_triple(None, None, [[1.0, 1.0, 0], [0, 1.0, 0], [0, 0, -0.5]]).failures)
    V is not lambda I on the eigenspace of its dominant eigenvalue 1: algebraic multiplicity 2, geometric 1
    (a Jordan block)
    """
    Q, K, V, beta = weights(Q, K, V, beta)
    tolerance = check_positive("tolerance", tolerance)
    values, top, multiplicity, basis, dual, tol = _spectrum(V, tolerance)
    conditions, failures = _dominant_conditions(values, top, tol)
    conditions["dominant_semisimple"] = bool(basis.shape[1] == multiplicity)
    if not conditions["dominant_semisimple"]:
        failures.append(f"V is not lambda I on the eigenspace of its dominant eigenvalue {top.real:.6g}: "
                        f"algebraic multiplicity {multiplicity}, geometric {basis.shape[1]} (a Jordan block)")
    others = values[np.abs(values - top) > tol]
    conditions["rest_smaller"] = bool(others.size == 0 or np.max(np.abs(others)) < abs(top) - tol)
    if not conditions["rest_smaller"]:
        failures.append(f"V has an eigenvalue other than {top.real:.6g} of the same modulus: "
                        f"{[complex(v) for v in np.round(others[np.abs(others) >= abs(top) - tol], 10)]}")
    sign = _attention_sign(Q, K, beta, basis) if conditions["dominant_real"] else -np.inf
    conditions["positive_attention"] = bool(sign > tolerance)
    if conditions["dominant_real"] and not conditions["positive_attention"]:
        failures.append(f"beta <Q phi, K phi> is not > 0 on the dominant eigenspace F of V (dimension "
                        f"{basis.shape[1]}): smallest eigenvalue of the symmetric part of beta Q^T K on F, "
                        f"relative to beta |Q| |K|, is {sign:.3g} (beta = {beta:g})")
    return TripleCheck(all(conditions.values()), conditions, tuple(failures), values, float(top.real),
                       multiplicity, basis, dual)


def _conditioned_basis(d: int, rng: np.random.Generator, condition: float) -> np.ndarray:
    for _ in range(MAX_TRIES):
        S = rng.standard_normal((d, d))
        S /= np.linalg.norm(S, axis=0)
        if np.linalg.cond(S) <= condition:
            return S
    raise ValueError(f"no random basis of R^{d} with condition number <= {condition:g} in {MAX_TRIES} tries; "
                     f"raise condition")


def _check_instance(d: int, ratio: tuple[float, float], dominant: float, condition: float) -> tuple:
    d = check_positive_int("d", d)
    dominant = check_positive("dominant", dominant)
    condition = check_positive("condition", condition)
    lo, hi = (float(r) for r in ratio)
    if not (0 <= lo <= hi < 1):
        raise ValueError(f"ratio must be (low, high) with 0 <= low <= high < 1, got {ratio!r}")
    if condition < 1:
        raise ValueError(f"condition must be >= 1 (a condition number), got {condition!r}")
    return d, (lo, hi), dominant, condition


def random_good_triple(d: int, seed: int | np.random.Generator | None = None, *, dominant: float = 1.0,
                       ratio: tuple[float, float] = (0.2, 0.8), alignment: float = 0.2,
                       condition: float = 10.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""A random good triple (Q, K, V) of size d (Theorem 4.2's hypotheses hold at every β > 0).

    V = S diag(λ_1, B) S⁻¹ with λ_1 = ``dominant``, S a random basis of unit
    columns with condition number ≤ ``condition`` (φ_1 = S e_1), and B a
    Gaussian (d-1) × (d-1) block rescaled to spectral radius ρ λ_1, ρ uniform
    in ``ratio`` (so B may carry negative or complex eigenvalues). Q, K are
    Gaussian / √d, with K's sign chosen so that <Q φ_1, K φ_1> > 0 and the
    cosine of (Q φ_1, K φ_1) at least ``alignment`` in modulus (rejection).

    Parameters
    ----------
    d : int
        Dimension, ≥ 1.
    seed : int, numpy.random.Generator or None, optional
        Randomness (``numpy.random.default_rng(seed)``).
    dominant : float, default 1.0
        λ_1 > 0, the leading eigenvalue of V.
    ratio : (float, float), default (0.2, 0.8)
        (low, high) with 0 ≤ low ≤ high < 1: the range of ρ = (spectral radius of B)/λ_1.
    alignment : float, default 0.2
        Least |cos(Q φ_1, K φ_1)|, in [0, 1).
    condition : float, default 10.0
        Largest condition number of S, ≥ 1.

    Returns
    -------
    Q, K, V : ndarray, shape (d, d)
        A good triple.

    Raises
    ------
    ValueError
        An argument out of range, or no S (or no Q, K) found in 1000 tries.

    Notes
    -----
    .. math::

        V = S \begin{pmatrix} \lambda_1 & 0 \\ 0 & B \end{pmatrix} S^{-1}, \qquad
        \rho(B) = \rho\,\lambda_1, \quad \rho \sim U(\mathrm{ratio}), \qquad
        \varphi_1 = S e_1, \quad \langle Q\varphi_1, K\varphi_1\rangle > 0.

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.rescaled import check_good_triple, random_good_triple
    >>> Q, K, V = random_good_triple(3, seed=0, dominant=2.0)
    >>> check_good_triple(Q, K, V).holds
    True

    The leading eigenvalue is ``dominant``, the others of modulus below 0.8 × 2:

    >>> moduli = np.sort(np.abs(np.linalg.eigvals(V)))[::-1]
    >>> print(f"{moduli[0]:.6f}", bool(moduli[1] < 1.6))
    2.000000 True
    """
    d, (lo, hi), dominant, condition = _check_instance(d, ratio, dominant, condition)
    if not (0 <= alignment < 1):
        raise ValueError(f"alignment must lie in [0, 1), got {alignment!r}")
    rng = as_rng(seed)
    S = _conditioned_basis(d, rng, condition)
    block = np.zeros((d, d))
    block[0, 0] = dominant
    if d > 1:
        B = rng.standard_normal((d - 1, d - 1))
        block[1:, 1:] = B * (rng.uniform(lo, hi) * dominant / max(np.max(np.abs(np.linalg.eigvals(B))), 1e-12))
    V = S @ block @ np.linalg.inv(S)
    phi = S[:, 0]
    for _ in range(MAX_TRIES):
        Q, K = rng.standard_normal((2, d, d)) / np.sqrt(d)
        qp, kp = Q @ phi, K @ phi
        cosine = qp @ kp / (np.linalg.norm(qp) * np.linalg.norm(kp))
        if abs(cosine) >= alignment:
            return Q, K * np.sign(cosine), V
    raise ValueError(f"no Q, K with |cos(Q phi_1, K phi_1)| >= alignment = {alignment:g} in {MAX_TRIES} tries")


def random_mixed_triple(d: int, multiplicity: int = 2, seed: int | np.random.Generator | None = None, *,
                        normal: bool = True, dominant: float = 1.0, ratio: tuple[float, float] = (0.2, 0.8),
                        alignment: float = 0.2, condition: float = 10.0
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""A random triple for Theorem 5.2: V = λ I on a random k-dimensional F, smaller spectrum on G.

    V = S diag(λ I_k, μ_{k+1}, …, μ_d) S⁻¹ with λ = ``dominant``, k =
    ``multiplicity`` and real μ_j = ±ρ_j λ, ρ_j uniform in ``ratio``, random
    signs. ``normal=True``: S a random orthogonal matrix (V symmetric, hence
    normal); else a random basis of condition number ≤ ``condition``. Q, K
    Gaussian / √d, redrawn until the symmetric part of Φᵀ QᵀK Φ is positive
    definite with smallest eigenvalue ≥ ``alignment`` |Q| |K| (rejection).

    Parameters
    ----------
    d : int
        Dimension, ≥ 1.
    multiplicity : int, default 2
        k = dim F, 1 ≤ k ≤ d.
    seed : int, numpy.random.Generator or None, optional
        Randomness (``numpy.random.default_rng(seed)``).
    normal : bool, default True
        S orthogonal (V symmetric) rather than a random basis of bounded condition number.
    dominant : float, default 1.0
        λ > 0, the eigenvalue of V on F.
    ratio : (float, float), default (0.2, 0.8)
        (low, high) with 0 ≤ low ≤ high < 1: the range of ρ_j = |μ_j|/λ.
    alignment : float, default 0.2
        Least margin of the symmetric part of Φᵀ QᵀK Φ, relative to |Q| |K|, in [0, 1).
    condition : float, default 10.0
        Largest condition number of S when ``normal=False``, ≥ 1.

    Returns
    -------
    Q, K, V : ndarray, shape (d, d)
        A triple satisfying Theorem 5.2's hypotheses.

    Raises
    ------
    ValueError
        An argument out of range (k > d included), or no S (or no Q, K) found in 1000 tries.

    Notes
    -----
    .. math::

        V = S\, \mathrm{diag}(\lambda I_k, \mu_{k+1}, \dots, \mu_d)\, S^{-1}, \qquad
        |\mu_j| = \rho_j \lambda < \lambda, \qquad
        \lambda_{\min}\big(\tfrac12 \Phi^\top (Q^\top K + K^\top Q) \Phi\big)
        \ge \mathrm{alignment}\, \|Q\| \|K\|,

    Φ an orthonormal basis of F = span(S e_1, …, S e_k); with ``normal=True``, V is symmetrised
    (½(V + Vᵀ), equal to V up to round-off).

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.rescaled import check_mixed_triple, random_mixed_triple
    >>> Q, K, V = random_mixed_triple(3, 2, seed=0)
    >>> check_mixed_triple(Q, K, V).multiplicity
    2
    >>> print(np.round(np.sort(np.linalg.eigvalsh(V))[-2:], 10), bool(np.allclose(V, V.T)))
    [1. 1.] True
    """
    d, (lo, hi), dominant, condition = _check_instance(d, ratio, dominant, condition)
    k = check_positive_int("multiplicity", multiplicity)
    if k > d:
        raise ValueError(f"multiplicity must be <= d = {d}, got {k}")
    if not (0 <= alignment < 1):
        raise ValueError(f"alignment must lie in [0, 1), got {alignment!r}")
    rng = as_rng(seed)
    if normal:
        S, _ = np.linalg.qr(rng.standard_normal((d, d)))
    else:
        S = _conditioned_basis(d, rng, condition)
    rest = rng.uniform(lo, hi, d - k) * dominant * rng.choice([-1.0, 1.0], d - k)
    V = S @ np.diag(np.concatenate([np.full(k, dominant), rest])) @ np.linalg.inv(S)
    if normal:
        V = 0.5 * (V + V.T)
    basis = scipy.linalg.orth(S[:, :k])
    for _ in range(MAX_TRIES):
        Q, K = rng.standard_normal((2, d, d)) / np.sqrt(d)
        A = basis.T @ Q.T @ K @ basis
        if np.linalg.eigvalsh(0.5 * (A + A.T))[0] >= alignment * np.linalg.norm(Q, 2) * np.linalg.norm(K, 2):
            return Q, K, V
    raise ValueError(f"no Q, K positive on F with margin alignment = {alignment:g} in {MAX_TRIES} tries; "
                     f"lower alignment")

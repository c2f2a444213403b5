r"""Which tokens a token attends to in the hard-max dynamics, and with what weights.

Paper 2, §9.3, (9.5)–(9.6): for weights (Q, K, V) the tokens z_i ∈ R^d move by

    ż_i = Σ_j λ_ij V (z_j - z_i),   λ_ij ≥ 0,  Σ_j λ_ij = 1,  λ_ij = 0 unless j ∈ C_i,
    C_i = argmax_j S_ij,            S_ij = <Q z_i, K z_j>,

which (9.5) writes with λ_ij = 1/|C_i| on C_i. The velocity jumps where a maximiser changes, so
solutions are taken in Filippov's sense: at a tie any convex combination over the tied set is
admitted, and solutions are not unique (Example 9.3). :func:`select` fixes one:

1. **Ties.** C_i = {j : S_ij ≥ max_k S_ik - τ_i}. By default (``tie_tolerance=None``) ties are
   decided at the round-off of the scores: the computed Q z_i and K z_j err by at most γ_d |Q||z_i|
   and γ_d |K||z_j| elementwise (γ_d = d u/(1 - d u), u = ε/2), and their d-term dot product adds
   γ_d of the product of the absolute values, so to first order

       |fl(S_ij) - S_ij| ≤ 3 γ_d E_ij,   E_ij = (|Q| |z_i|) · (|K| |z_j|),

   and the computed difference of two scores of a row errs by at most 6 γ_d max_k E_ik ≈ 3 d ε max_k E_ik:
   τ_i = 3 d ε max_k E_ik (:data:`SCORE_ROUND_OFF` = 3ε). Scores that differ by more are not tied,
   however small both are (z₃(0) = (1e-12, 0) in Example 9.3 has one maximiser, z₁); exactly equal
   scores (z₃ = 0) are. A float ``tie_tolerance`` is the wider relative rule
   τ_i = ``tie_tolerance`` · max(1, max_k |S_ik|). At a switching time the state is known only to the
   integrator's accuracy, and the stepper decides ties there with the relative rule at that accuracy
   (:func:`meanfield.models._filippov.event_tolerance`).
2. **Right-continuous maximisers.** With the uniform weights of (9.5) on C_i, the scores move at
   Ṡ_ij = <Q ż_i, K z_j> + <Q z_i, K ż_j>; a member whose score falls behind the best rate of its
   set (by more than τ'_i: by default the round-off of the rates, (4d + n + 1) ε max_k R_ik with
   R_ij = (|Q| w_i) · (|K| |z_j|) + (|Q| |z_i|) · (|K| w_j) and w_i = |V| (Σ_j λ_ij |z_j| + |z_i|) ≥ |ż_i|,
   which adds the error γ_{n+d+1} w_i of the computed ż_i to the 3 γ_d of the products; with a float
   ``tie_tolerance``, τ'_i = ``tie_tolerance`` · max(1, max |Ṡ_i·|)) leaves, and the weights are
   recomputed, until every member keeps pace. The sets are then those of the time just after:
   C_i(t+) is the lexicographic argmax of (S_ij, Ṡ_ij). A tie that the uniform weights keep
   (Example 9.3, where z₃ runs along the symmetry axis between z₁ and z₂) is kept.
3. **Sliding (Filippov's equivalent control).** When a member that left would at once overtake the
   set (an attracting tie, where the uniform rule would chatter), the row holds its set and those
   members (T_i; where no weights hold them, its whole tied set) and takes the weights closest to uniform that hold the tie:
   minimise Σ_j (λ_ij - 1/|T_i|)² subject to Ṡ_ij - Ṡ_ij₀ = -κ (S_ij - S_ij₀) for j ∈ T_i
   (κ = :data:`TIE_RESTORING_RATE`, which returns round-off drift to the tie) and λ_i· ≥ 0 on the
   simplex (a weight that reaches 0 ends the sliding: a switching time). Rows that cannot slide (the tie is crossed, no λ ≥ 0 holds it) keep the sets of step 2.

On Example 9.3 this rule gives z₃(t) = (0, 1 - e^{-t}), which is the limit β → ∞ of (9.4) (the
finite-β dynamics keeps the reflection symmetry z₁ ↔ z₂ that holds z₃ on the axis). It is the
limit wherever a tie is held by a symmetry of the data that (9.4) preserves; at a repelling tie
without such a symmetry the finite-β solutions leave it, at a side that depends on the data, and
the limit is not what a local rule can select (docs/hardmax.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.optimize

__all__ = ["ROUND_OFF", "SCORE_ROUND_OFF", "Selection", "TIE_RESTORING_RATE", "rate_tolerance", "score_rates",
           "score_scale", "score_tolerance", "scores", "select", "velocity"]

#: κ of the sliding constraint Ṡ_ij - Ṡ_ij₀ = -κ (S_ij - S_ij₀): a tie held by equivalent control
#: returns to exact equality at this rate when integration round-off moves it
TIE_RESTORING_RATE = 10.0
#: a few ulps: how far a quantity must pass a switching threshold for the crossing to count
ROUND_OFF = 64 * np.finfo(float).eps
#: 3ε: the computed difference of two scores of a row errs by at most 3 d ε max_k E_ik (module docstring, step 1)
SCORE_ROUND_OFF = 3 * np.finfo(float).eps


def scores(z: np.ndarray, Q: np.ndarray, K: np.ndarray) -> np.ndarray:
    """S_ij = <Q z_i, K z_j> of tokens z (n, d)."""
    return (z @ Q.T) @ (z @ K.T).T


def velocity(z: np.ndarray, weights: np.ndarray, V: np.ndarray) -> np.ndarray:
    """ż_i = Σ_j λ_ij V (z_j - z_i) for rows λ_i· summing to 1."""
    return (weights @ z - z) @ V.T


def score_rates(z: np.ndarray, dz: np.ndarray, Q: np.ndarray, K: np.ndarray) -> np.ndarray:
    """Ṡ_ij = <Q ż_i, K z_j> + <Q z_i, K ż_j>."""
    return (dz @ Q.T) @ (z @ K.T).T + (z @ Q.T) @ (dz @ K.T).T


@dataclass
class Selection:
    """The maximiser sets of one state and the rule for the weights until the next switching time.

    ``members`` (n, n) bool: the sets C_i (rows that slide hold their whole tied set). ``sliding``
    (n,) bool: rows whose weights are the equivalent control (recomputed at every state by
    :meth:`weights`); the other rows are uniform on their set. ``start``: the state selected at, where the
    switching gaps of :meth:`gaps` are measured from.
    """

    members: np.ndarray
    sliding: np.ndarray
    Q: np.ndarray
    K: np.ndarray
    V: np.ndarray
    start: np.ndarray

    def __post_init__(self) -> None:
        self._offsets = np.minimum(0.0, self._raw_gaps(self.start))

    def same_sets(self, other: "Selection") -> bool:
        """Whether ``other`` has the same sets and sliding rows."""
        return bool(np.array_equal(self.members, other.members) and np.array_equal(self.sliding, other.sliding))

    def uniform(self) -> np.ndarray:
        return self.members / self.members.sum(axis=1, keepdims=True)

    def weights(self, z: np.ndarray) -> np.ndarray:
        """λ at the state z: uniform rows, and the equivalent control of the sliding rows."""
        lam = self.uniform()
        if self.sliding.any():
            lam = _equivalent_control(z, lam, self.members, self.sliding, self.Q, self.K, self.V)
        return lam

    def _raw_gaps(self, z: np.ndarray) -> np.ndarray:
        s = scores(z, self.Q, self.K)
        low = np.where(self.members, s, np.inf).min(axis=1, keepdims=True)
        ulps = ROUND_OFF * np.maximum(1.0, np.abs(s).max(axis=1, keepdims=True))
        return (low - s + ulps)[~self.members]

    def gaps(self, z: np.ndarray) -> np.ndarray:
        """min_{j ∈ C_i} S_ij - S_ik + 64 ε max(1, max_k |S_ik|) for every non-member k, less its value at the
        start of the segment where that was negative: a switching time is where it turns negative, a
        non-member overtaking the set by a few ulps (a non-member that stays exactly tied, as a token stopped
        on the tie surface does, is not a switch, and a tied non-member that starts within the tie tolerance
        above a member does not hide the crossings of the others)."""
        return self._raw_gaps(z) - self._offsets

    def spreads(self, z: np.ndarray, tie_tolerance: float | None) -> np.ndarray:
        """max - min of S_ij over each set, minus its tie tolerance (a set splits where it turns positive)."""
        s = scores(z, self.Q, self.K)
        high = np.where(self.members, s, -np.inf).max(axis=1)
        low = np.where(self.members, s, np.inf).min(axis=1)
        return high - low - score_tolerance(z, s, self.Q, self.K, tie_tolerance)


def score_scale(z: np.ndarray, Q: np.ndarray, K: np.ndarray) -> np.ndarray:
    """E_ij = (|Q| |z_i|) · (|K| |z_j|) (absolute values elementwise): the scale of the round-off of S_ij."""
    return (np.abs(z) @ np.abs(Q).T) @ (np.abs(z) @ np.abs(K).T).T


def score_tolerance(z: np.ndarray, s: np.ndarray, Q: np.ndarray, K: np.ndarray,
                    tie_tolerance: float | None) -> np.ndarray:
    """τ_i of each row (module docstring, step 1): 3 d ε max_k E_ik (None), or ``tie_tolerance`` · max(1, max_k |S_ik|)."""
    if tie_tolerance is None:
        return SCORE_ROUND_OFF * z.shape[-1] * score_scale(z, Q, K).max(axis=1)
    return tie_tolerance * np.maximum(1.0, np.abs(s).max(axis=1))


def rate_tolerance(z: np.ndarray, weights: np.ndarray, rates: np.ndarray, Q: np.ndarray, K: np.ndarray,
                   V: np.ndarray, tie_tolerance: float | None) -> np.ndarray:
    """τ'_i of each row (module docstring, step 2): (4d + n + 1) ε max_k R_ik (None), or
    ``tie_tolerance`` · max(1, max_k |Ṡ_ik|)."""
    if tie_tolerance is None:
        n, d = z.shape
        a = np.abs(z)
        w = (weights @ a + a) @ np.abs(V).T
        scale = (w @ np.abs(Q).T) @ (a @ np.abs(K).T).T + (a @ np.abs(Q).T) @ (w @ np.abs(K).T).T
        return (4 * d + n + 1) * np.finfo(float).eps * scale.max(axis=1)
    return tie_tolerance * np.maximum(1.0, np.abs(rates).max(axis=1))


def select(z: np.ndarray, Q: np.ndarray, K: np.ndarray, V: np.ndarray, tie_tolerance: float | None) -> Selection:
    """The maximiser sets and weight rule at the state z (n, d) (module docstring, steps 1-3); ``tie_tolerance``
    None is the round-off rule of step 1."""
    s = scores(z, Q, K)
    tied = s >= s.max(axis=1, keepdims=True) - score_tolerance(z, s, Q, K, tie_tolerance)[:, None]
    members = tied.copy()
    while True:
        uniform = members / members.sum(axis=1, keepdims=True)
        rates = score_rates(z, velocity(z, uniform, V), Q, K)
        best = np.where(members, rates, -np.inf).max(axis=1, keepdims=True)
        slack = rate_tolerance(z, uniform, rates, Q, K, V, tie_tolerance)[:, None]
        behind = members & (rates < best - slack)
        if not behind.any():
            break
        members &= ~behind
    overtaking = tied & ~members & (rates > best + slack)
    sliding = overtaking.any(axis=1)
    if not sliding.any():
        return Selection(members, sliding, Q, K, V, z)
    for held in (members | overtaking, tied):  # the members and those that would overtake them, then every tie
        trial = Selection(np.where(sliding[:, None], held, members), sliding, Q, K, V, z)
        if np.isfinite(_equivalent_control(z, trial.uniform(), trial.members, sliding, Q, K, V)).all():
            return trial
    return Selection(members, np.zeros_like(sliding), Q, K, V, z)


def _equivalent_control(z: np.ndarray, lam: np.ndarray, members: np.ndarray, sliding: np.ndarray, Q: np.ndarray,
                        K: np.ndarray, V: np.ndarray) -> np.ndarray:
    """The weights closest to ``lam`` on the sliding rows that hold their ties (module docstring, step 3);
    NaN rows where no λ ≥ 0 does."""
    rows, cols = np.nonzero(members & sliding[:, None])
    base = lam.copy()
    base[rows, cols] = 0.0
    s = scores(z, Q, K)
    rate0 = score_rates(z, velocity(z, base, V), Q, K)
    columns = []
    for i, j in zip(rows, cols):  # the score rates are affine in λ: one column per unknown weight
        unit = np.zeros_like(lam)
        unit[i, j] = 1.0
        columns.append(score_rates(z, (unit @ z) @ V.T, Q, K))  # λ_ij adds λ_ij V z_j (base holds -V z_i)
    equations, targets = [], []
    for i in np.nonzero(sliding)[0]:
        tied = np.nonzero(members[i])[0]
        first = tied[0]
        equations.append((rows == i).astype(float))
        targets.append(1.0)
        for j in tied[1:]:
            equations.append(np.array([c[i, j] - c[i, first] for c in columns]))
            targets.append(-(rate0[i, j] - rate0[i, first]) - TIE_RESTORING_RATE * (s[i, j] - s[i, first]))
    A, b = np.array(equations), np.array(targets)
    x0 = lam[rows, cols]
    x = x0 + np.linalg.lstsq(A, b - A @ x0, rcond=None)[0]
    scale = max(1.0, float(np.abs(b).max()))
    if x.min() < -1e-12 or np.abs(A @ x - b).max() > 1e-9 * scale:
        found = scipy.optimize.minimize(lambda y: 0.5 * np.sum((y - x0) ** 2), np.clip(x, 0, 1),
                                        jac=lambda y: y - x0, method="SLSQP", bounds=[(0.0, 1.0)] * x.size,
                                        constraints={"type": "eq", "fun": lambda y: A @ y - b, "jac": lambda y: A},
                                        options={"ftol": 1e-15, "maxiter": 200})
        x = found.x
        if not found.success or np.abs(A @ x - b).max() > 1e-8 * scale:
            out = lam.copy()
            out[sliding] = np.nan
            return out
    out = base
    out[rows, cols] = x
    return out

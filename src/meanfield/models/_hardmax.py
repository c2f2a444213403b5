r"""The hard-max limit of self-attention (paper 2, §9.3, (9.5)–(9.6)).

As β → ∞ the rescaled dynamics (9.4), ż_i = Σ_j softmax_j(β<Q z_i, K z_j>) V(z_j - z_i) (in
meanfield ``Attention(beta, Q, K, V, projection=False, rescaled=True, scores_at_z=True)``), is
expected to converge on [0, T] to

    ż_i = (1/|C_i|) Σ_{j ∈ C_i} V(z_j - z_i),   C_i = argmax_j <Q z_i, K z_j>,

whose right-hand side jumps where a maximiser changes. Its solutions are taken in Filippov's sense
and selected by the rule of :mod:`._hardmax_selection`; :class:`HardmaxAttention` integrates them
with the event-driven stepper of :mod:`._filippov` (``mf.simulate(..., method="filippov")``, its
default).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..domains._geometry import EuclideanGeometry
from ._attention import _AttentionVelocity, _as_heads
from ._filippov import FILIPPOV_METHOD, FilippovStepper
from ._hardmax_selection import SCORE_ROUND_OFF, select
from ._model import Model

__all__ = ["HardmaxAttention"]


@dataclass(frozen=True, eq=False)
class HardmaxAttention(Model):
    r"""The hard-max dynamics (9.5)–(9.6) of tokens z_i ∈ R^d with weights (Q, K, V).

    Parameters
    ----------
    Q, K, V : None or (d, d) arrays
        None means the identity (Example 9.3 takes Q = K = V = I).
    tie_tolerance : None or float, default None
        The tie rule (:func:`meanfield.models._hardmax_selection.select`). None: scores tie only at their
        round-off, S_ij ≥ max_k S_ik - 3 d ε max_k (|Q| |z_i|) · (|K| |z_k|) (3 d ε bounds the error of a
        computed difference of two scores, to first order). A float in [0, 1e-3): the wider relative rule,
        scores within ``tie_tolerance`` · max(1, max_k |S_ik|) of the maximum tie. attrs ``tie_rule``
        ("round-off" or "relative") and ``tie_tolerance`` (3ε for round-off) record it.

    Raises
    ------
    ValueError
        Q, K, V not square (d, d) matrices of one dimension d, or a ``tie_tolerance`` that is negative,
        not finite or ≥ 1e-3.

    Notes
    -----
    The particles live in R^d (plain arrays (n, d) or (systems, n, d)); the only integrator is
    ``method="filippov"`` (:mod:`meanfield.models._filippov`), and :func:`meanfield.attention_matrix`
    gives the selected weights λ_ij.

    The expected β → ∞ limit of the rescaled dynamics (9.4) (paper 2, §9.3), with the scores
    S_ij = <Q z_i, K z_j>:

        ż_i = (1/|C_i|) Σ_{j ∈ C_i} V(z_j - z_i),   C_i = argmax_j S_ij,

    .. math::

        \dot z_i = \frac{1}{\lvert C_i(t)\rvert} \sum_{j \in C_i(t)} V\big(z_j - z_i\big), \qquad
        C_i(t) = \big\{ j : \langle Q z_i, K z_j\rangle \ge \langle Q z_i, K z_k\rangle \ \forall k \big\}.

    The right-hand side jumps where a maximiser changes, so solutions are taken in Filippov's sense and
    selected by the rule of :mod:`meanfield.models._hardmax_selection` (uniform on ties, right-continuous
    maximisers, Filippov sliding closest to uniform).

    Examples
    --------
    Paper 2's Example 9.3: z_1 = (1, 1) and z_2 = (-1, 1) are their own maximisers and stay. z_3 = (0, 0)
    scores 0 with every token; the rule takes the maximisers along its motion (right-continuous: at
    z_3 = (0, s), 0 < s < 1, the scores are s, s, s², so C_3 = {1, 2}) with equal weights, and z_3 moves
    towards the midpoint (0, 1) of z_1 and z_2: z_3(t) = (0, 1 - e^{-t}). From z_3 = (1e-12, 0) the
    scores 1e-12, -1e-12, 1e-24 differ far beyond their round-off: C_3 = {1} and z_3 → z_1.

    >>> import numpy as np
    >>> import meanfield as mf
    >>> z0 = np.array([[1.0, 1.0], [-1.0, 1.0], [0.0, 0.0]])
    >>> model = mf.HardmaxAttention()                  # Q = K = V = I
    >>> print(mf.attention_matrix(model, z0))          # the selected weights λ_ij
    [[1.  0.  0. ]
     [0.  1.  0. ]
     [0.5 0.5 0. ]]
    >>> run = mf.simulate(model, z0, [0.0, 1.0])
    >>> z3 = run["positions"].values[-1, 2]
    >>> print(f"{z3[0] + 0.0:.6f} {z3[1]:.6f} {1 - np.exp(-1.0):.6f}")
    0.000000 0.632121 0.632121
    >>> near = z0.copy(); near[2, 0] = 1e-12
    >>> print(mf.attention_matrix(model, near)[2], model.attrs["tie_rule"])
    [1. 0. 0.] round-off
    """

    Q: Any = None
    K: Any = None
    V: Any = None
    tie_tolerance: float | None = None

    particle_domain = "euclidean"

    def __post_init__(self) -> None:
        mats = {name: _as_heads(name, getattr(self, name)) for name in ("Q", "K", "V")}
        given = {name: m for name, m in mats.items() if m is not None}
        if any(m.shape[0] != 1 for m in given.values()):
            raise ValueError("HardmaxAttention has one head: Q, K, V must be (d, d) matrices, got shapes "
                             + ", ".join(f"{k} {v.shape}" for k, v in given.items()))
        dims = {m.shape[1] for m in given.values()}
        if len(dims) > 1:
            raise ValueError("Q, K, V must have the same dimension d, got shapes "
                             + ", ".join(f"{k} {v.shape[1:]}" for k, v in given.items()))
        for name, m in mats.items():
            object.__setattr__(self, name, None if m is None else m[0])
        object.__setattr__(self, "_dim", dims.pop() if dims else None)
        tol = self.tie_tolerance
        if tol is not None:
            if isinstance(tol, bool) or not isinstance(tol, (int, float, np.floating)) or not np.isfinite(tol) \
                    or not (0 <= tol < 1e-3):
                raise ValueError(f"tie_tolerance must be None (ties at the round-off of the scores) or a finite "
                                 f"number in [0, 1e-3), got {tol!r}")
            object.__setattr__(self, "tie_tolerance", float(tol))

    @property
    def attrs(self) -> dict[str, Any]:
        rule = "round-off" if self.tie_tolerance is None else "relative"
        out: dict[str, Any] = {"model": self.name, "noise": 0.0, "tie_rule": rule,
                               "tie_tolerance": SCORE_ROUND_OFF if self.tie_tolerance is None else self.tie_tolerance,
                               "selection": "uniform on ties, right-continuous maximisers, Filippov sliding "
                                            "closest to uniform (meanfield.models._hardmax_selection)"}
        for name in ("Q", "K", "V"):
            m = getattr(self, name)
            out[name] = "identity" if m is None else repr(np.round(m, 12).tolist())
        return out

    def matrices(self, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Q, K, V as (d, d) arrays (identity where not given)."""
        if self._dim is not None and self._dim != d:
            raise ValueError(f"particles have dimension d = {d} but Q, K, V are {self._dim} × {self._dim}")
        return tuple(np.eye(d) if m is None else m for m in (self.Q, self.K, self.V))

    def check_particles(self, geometry: Any) -> None:
        if not isinstance(geometry, EuclideanGeometry):
            raise ValueError(f"HardmaxAttention moves tokens in R^d (shape (n, d)), got domain {geometry.name!r}")

    def default_particle_method(self, geometry: Any) -> str:
        return "filippov"

    @property
    def particle_methods(self) -> dict[str, str]:
        return {"filippov": FILIPPOV_METHOD}

    def particle_stepper(self, method: str, geometry: Any, weights: np.ndarray, *, rtol: float,
                         atol: float) -> FilippovStepper:
        """The event-driven Filippov stepper (equal weights: the maximisers do not depend on w_i)."""
        if not np.allclose(weights, weights[:, :1], rtol=0, atol=1e-15):
            raise ValueError("HardmaxAttention takes equal token weights: (9.5) averages over the maximisers")
        return FilippovStepper(*self.matrices(geometry.dimension), rtol=rtol, atol=atol,
                               tie_tolerance=self.tie_tolerance)

    def attention_matrix(self, points: np.ndarray, head: int = 0, t: float = 0.0) -> np.ndarray:
        """The selected weights λ_ij of each system of tokens (systems, n, d) (rows sum to 1)."""
        Q, K, V = self.matrices(points.shape[-1])
        return np.stack([select(z, Q, K, V, self.tie_tolerance).weights(z) for z in points])

    def particle_velocity(self, geometry: Any, weights: np.ndarray, frequencies: np.ndarray | None, *,
                          path: str = "auto", accuracy: float = 1e-10, block_elements: int = 1 << 16) -> Any:
        """ż_i = Σ_j λ_ij V(z_j - z_i) with the selected weights (the velocity just after the state)."""
        V = self.matrices(geometry.dimension)[2]
        return _AttentionVelocity(lambda t, x: (self.attention_matrix(x, 0, t) @ x - x) @ V.T)

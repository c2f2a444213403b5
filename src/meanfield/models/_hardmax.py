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
from ._hardmax_selection import select
from ._model import Model

__all__ = ["HardmaxAttention"]


@dataclass(frozen=True, eq=False)
class HardmaxAttention(Model):
    """The hard-max dynamics (9.5)–(9.6) of tokens z_i ∈ R^d with weights (Q, K, V).

    Parameters
    ----------
    Q, K, V : None or (d, d) arrays
        None means the identity (Example 9.3 takes Q = K = V = I).
    tie_tolerance : float
        Scores within ``tie_tolerance`` · max(1, max_k |S_ik|) of the maximum tie
        (:func:`meanfield.models._hardmax_selection.select`).

    The particles live in R^d (plain arrays (n, d) or (systems, n, d)); the only integrator is
    ``method="filippov"`` (:mod:`meanfield.models._filippov`), and :func:`meanfield.attention_matrix`
    gives the selected weights λ_ij.
    """

    Q: Any = None
    K: Any = None
    V: Any = None
    tie_tolerance: float = 1e-9

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
        if isinstance(tol, bool) or not isinstance(tol, (int, float, np.floating)) or not (0 < tol < 1e-3):
            raise ValueError(f"tie_tolerance must be a number in (0, 1e-3), got {tol!r}")
        object.__setattr__(self, "tie_tolerance", float(tol))

    @property
    def attrs(self) -> dict[str, Any]:
        out: dict[str, Any] = {"model": self.name, "noise": 0.0, "tie_tolerance": self.tie_tolerance,
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

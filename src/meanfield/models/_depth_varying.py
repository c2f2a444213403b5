r"""Self-attention whose weights change with depth: (Q, K, V) piecewise constant in t, re-drawn every τ, or
any callable t ↦ (Q, K, V).

The dynamics is that of :class:`meanfield.Attention` (paper 2, (2.7)) with time-dependent weights,

.. math::

    \dot x_i = \Pi_{x_i}\Big(\sum_{j=1}^{n} P_{ij}(t)\, V(t) x_j\Big), \qquad
    P_{ij}(t) = \frac{e^{\beta\langle Q(t) x_i, K(t) x_j\rangle}}{\sum_{l=1}^{n} e^{\beta\langle Q(t) x_i, K(t) x_l\rangle}},

the continuous-depth form of a Transformer whose layers do not share their weights (paper 2, §2.1; the
authors' phase-diagram script re-draws its Ginibre weights every ``regen_period`` time units). Two ways to
give the weights:

* ``weights="ginibre"`` with ``period=τ``: on the piece [kτ, (k+1)τ), k = 0, 1, …, the weights are the k-th
  draw of the real Ginibre ensemble, Q, K, V with iid N(0, 1/d) entries drawn in the order Q, K, V from
  ``default_rng(SeedSequence([seed, k]))``. Draw k depends on (seed, k, d) only, never on how a run is split
  into segments or resumed; it is recomputed, never stored. τ = ∞ is one draw (k = 0) for all t.
* a callable ``weights(t) -> (Q, K, V)``: evaluated at the time of every velocity evaluation. Given
  ``period=τ`` or ``breakpoints`` b_1 < … < b_m, the caller declares that it may jump at kτ (resp. the b_k):
  those are switching times, and within the piece [s_k, s_{k+1}) of a step the callable is evaluated at the
  stage time clamped into the piece, a stage at the piece's end s_{k+1} at the largest double below it (the
  value from the left: exactly the piece's value for a piecewise-constant function).

Switching rule. The switching times s_k are declared to the integrators (:meth:`switching_times`), which end
a step exactly at every s_k and take the steps of each piece with a fresh stepper of that piece's velocity
(:class:`solvers.PiecewiseStepper`): no step straddles a switch, no stage, first-same-as-last velocity or error
estimate mixes two pieces, and an adaptive method restarts its step-size control at s_k
(:func:`solvers.evolve`). A run across s_k is the run of piece k − 1 up to s_k chained with the run of piece k
from there. Fixed-step methods split every piece between output and switching times into equal steps ≤ dt;
``method="layers"`` needs every switching time to be a whole number of layers after t[0] (its layers are the
model), else a ValueError naming dt and the period.

There is no interaction energy: with weights that change in time the dynamics is no gradient flow of a
fixed functional (paper 2, §3.4.1 needs fixed weights with V = c QᵀK).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validate import as_real_array, check_beta, check_flag
from ..domains._geometry import EuclideanGeometry, SphereGeometry
from ._attention import Attention, _AttentionVelocity
from ._model import Model
from ._self_attention_sums import BLOCK_ELEMENTS

__all__ = ["GINIBRE_RULE", "DepthVaryingAttention", "ginibre_draw"]

#: the rule of the draws of ``weights="ginibre"``, in words (attr ``weights_rule``)
GINIBRE_RULE = ("real Ginibre: Q, K, V with iid N(0, 1/d) entries, drawn in the order Q, K, V from "
                "default_rng(SeedSequence([seed, k])) for the piece k = [k*period, (k+1)*period)")


@functools.lru_cache(maxsize=16)
def ginibre_draw(seed: int, k: int, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draw k of ``weights="ginibre"``: (Q, K, V), (d, d) each, iid N(0, 1/d) entries, in the order Q, K, V from
    ``default_rng(SeedSequence([seed, k]))`` (read-only arrays).

    Examples
    --------
    >>> from meanfield.models._depth_varying import ginibre_draw
    >>> Q, K, V = ginibre_draw(0, 3, 4)
    >>> Q.shape, bool((ginibre_draw(0, 3, 4)[2] == V).all())
    ((4, 4), True)
    """
    if k < 0:
        raise ValueError(f"the Ginibre draws are numbered k = 0, 1, ... from t = 0 (piece [k*period, "
                         f"(k+1)*period)); piece k = {k} is before t = 0: start the run at t >= 0")
    rng = np.random.default_rng(np.random.SeedSequence([seed, k]))
    out = rng.standard_normal((3, d, d)) / np.sqrt(d)
    out.flags.writeable = False
    return out[0], out[1], out[2]


@dataclass(frozen=True, eq=False)
class DepthVaryingAttention(Model):
    r"""Self-attention with weights that change with depth t (module docstring).

    Parameters
    ----------
    beta : float
        β ≥ 0.
    weights : "ginibre" or callable
        "ginibre": the k-th draw of the real Ginibre ensemble on [kτ, (k+1)τ) (needs ``period`` and
        ``dimension``). A callable ``weights(t) -> (Q, K, V)``: (d, d) matrices (or (heads, d, d) stacks, None
        for the identity) at time t, checked when evaluated (first at t = 0, at construction).
    period : float, optional
        τ > 0 (``math.inf``: one draw): the switching times kτ, k integer. Required for "ginibre"; for a
        callable, a declaration that it may jump at the kτ.
    breakpoints : array_like, optional
        For a callable instead of ``period``: increasing finite switching times b_1 < … < b_m.
    seed : int
        Base seed of the Ginibre draws (≥ 0); not used by a callable.
    dimension : int, optional
        d of the Ginibre draws (required for "ginibre"); for a callable, if given, checked against its matrices.
    projection : bool
        True: tokens on S^{d-1}, velocity projected by P⊥_x. False: R^d.

    Raises
    ------
    ValueError
        β < 0 or not finite; ``period`` not > 0 (or NaN); ``breakpoints`` not increasing and finite, or given
        with ``period`` or with "ginibre"; "ginibre" without ``period`` or ``dimension``; a negative ``seed``;
        ``weights`` neither "ginibre" nor callable; a callable whose output at t = 0 (or, during a run, at
        any t) is not three square finite matrices of the one size d.

    Notes
    -----
    .. math::

        \dot x_i = \Pi_{x_i}\Big(\sum_j \operatorname{softmax}_j\big(\beta\langle Q(t) x_i, K(t) x_j\rangle\big)\,
        V(t) x_j\Big),

    with (Q, K, V)(t) = draw k for t ∈ [kτ, (k+1)τ) ("ginibre"), or ``weights(t)``. Each piece is the
    constant-weight :class:`~meanfield.Attention` (:meth:`piece_model`); the integrators end their steps at the
    switching times (module docstring). No interaction energy (:func:`meanfield.energy` refuses it by name).

    Examples
    --------
    >>> import numpy as np, meanfield as mf
    >>> model = mf.DepthVaryingAttention(1.0, period=2.0, seed=0, dimension=3)
    >>> model.switching_times(0.0, 7.0).tolist()      # steps end at t = 2, 4, 6
    [2.0, 4.0, 6.0]
    >>> x0 = mf.sample(mf.uniform(mf.ZonalSphere(3, 8)), 6, seed=1).points
    >>> ds = mf.simulate(model, x0, [0.0, 3.0])
    >>> ds.attrs["model"], ds.attrs["period"], ds.attrs["weights_seed"], ds.attrs["success"]
    ('DepthVaryingAttention', 2.0, 0, 1)
    >>> constant = mf.DepthVaryingAttention(1.0, weights=lambda t: (None, None, None))
    >>> bool(np.array_equal(constant.velocity(x0), mf.Attention(1.0).velocity(x0)))
    True
    """

    beta: float
    weights: Any = "ginibre"
    period: float | None = None
    breakpoints: Any = field(default=None, repr=False)
    seed: int = 0
    dimension: int | None = None
    projection: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "beta", check_beta(self.beta))
        check_flag("projection", self.projection)
        if self.period is not None:
            tau = self.period
            if isinstance(tau, bool) or not isinstance(tau, (int, float, np.integer, np.floating)) \
                    or not float(tau) > 0:
                raise ValueError(f"period must be a time tau > 0 between switches (math.inf: never), got {tau!r}")
            object.__setattr__(self, "period", float(tau))
        if self.breakpoints is not None:
            b = as_real_array("breakpoints", self.breakpoints)
            if b.ndim != 1 or b.size < 1 or not np.all(np.diff(b) > 0):
                raise ValueError(f"breakpoints must be a non-empty increasing 1-D array of finite times, got "
                                 f"{np.asarray(self.breakpoints)!r}")
            if self.period is not None:
                raise ValueError("give the switching times as period or as breakpoints, not both")
            object.__setattr__(self, "breakpoints", b)
        if isinstance(self.weights, str) and self.weights == "ginibre":
            self._check_ginibre()
        elif callable(self.weights):
            if self.dimension is not None:
                self._check_dimension()
            object.__setattr__(self, "_dim", self.dimension)
            first = self._attention_at(0.0)._dim
            object.__setattr__(self, "_dim", self.dimension if first is None else first)
        else:
            raise ValueError(f"weights must be 'ginibre' (draws re-drawn every period) or a callable "
                             f"t -> (Q, K, V), got {self.weights!r}")

    def _check_dimension(self) -> None:
        d = self.dimension
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
            raise ValueError(f"dimension must be a positive integer d (the size of Q, K, V), got {d!r}")
        object.__setattr__(self, "dimension", int(d))

    def _check_ginibre(self) -> None:
        if self.period is None:
            raise ValueError("weights='ginibre' draws new weights every period: give period = tau > 0 "
                             "(math.inf: one draw)")
        if self.breakpoints is not None:
            raise ValueError("weights='ginibre' is re-drawn every period; breakpoints apply to a callable")
        if self.dimension is None:
            raise ValueError("weights='ginibre' needs dimension = d, the size of the drawn Q, K, V")
        self._check_dimension()
        seed = self.seed
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer (the base seed of the draws), got {seed!r}")
        object.__setattr__(self, "seed", int(seed))
        object.__setattr__(self, "_dim", self.dimension)

    # ------------------------------------------------------------------ identity
    @property
    def name(self) -> str:
        return "DepthVaryingAttention"

    @property
    def noise(self) -> float:
        return 0.0

    @property
    def particle_domain(self) -> str | None:
        """R^d ("euclidean") without the projection; else read by shape (S^{d-1})."""
        return None if self.projection else "euclidean"

    @property
    def attrs(self) -> dict[str, Any]:
        drawn = isinstance(self.weights, str)
        out: dict[str, Any] = {
            "model": self.name, "beta": self.beta, "projection": int(self.projection), "noise": 0.0,
            "weights": "ginibre" if drawn else f"callable {getattr(self.weights, '__module__', '?')}."
                                               f"{getattr(self.weights, '__qualname__', type(self.weights).__name__)}",
            "weights_rule": GINIBRE_RULE if drawn else "weights(t) at every velocity evaluation, clamped into the "
                                                       "piece of its step",
            "period": -1.0 if self.period is None else self.period,
            "breakpoints": "none" if self.breakpoints is None else repr(self.breakpoints.tolist()),
            "switching_rule": self.switching_rule,
        }
        if drawn:
            out.update(weights_seed=self.seed, dimension=self.dimension)
        return out

    # ------------------------------------------------------------------ pieces
    @property
    def time_pieces(self) -> bool:
        """Whether the velocity switches at times (a finite period or breakpoints)."""
        return self.breakpoints is not None or (self.period is not None and np.isfinite(self.period))

    @property
    def switching_rule(self) -> str:
        if self.breakpoints is not None:
            return f"switches at the breakpoints {self.breakpoints.tolist()}"
        if self.time_pieces:
            return f"switches at k*period, period = {self.period!r}"
        return "none (weights continuous in t)" if callable(self.weights) else "none (one draw, period = inf)"

    def switching_times(self, t0: float, t1: float) -> np.ndarray:
        """The switching times s in the open interval (t0, t1), increasing: k·τ (the float product) or the
        breakpoints."""
        if self.breakpoints is not None:
            b = self.breakpoints
            return b[(b > t0) & (b < t1)]
        if not self.time_pieces:
            return np.empty(0)
        tau = self.period
        s = np.arange(np.floor(t0 / tau), np.ceil(t1 / tau) + 1) * tau
        return s[(s > t0) & (s < t1)]

    def piece_of(self, t: float) -> int:
        """The piece k with s_k ≤ t < s_{k+1} (right-continuous; 0 without switching times)."""
        if self.breakpoints is not None:
            return int(np.searchsorted(self.breakpoints, t, side="right"))
        if not self.time_pieces:
            return 0
        tau = self.period
        k = int(np.floor(t / tau))
        if (k + 1) * tau <= t:
            return k + 1
        return k - 1 if k * tau > t else k

    def _bounds(self, k: int) -> tuple[float, float]:
        if self.breakpoints is not None:
            b = self.breakpoints
            return (float(b[k - 1]) if k > 0 else -np.inf), (float(b[k]) if k < b.size else np.inf)
        if not self.time_pieces:
            return -np.inf, np.inf
        return k * self.period, (k + 1) * self.period

    def piece_model(self, k: int) -> Model:
        """The model of piece k: the constant-weight :class:`~meanfield.Attention` of draw k ("ginibre"), or the
        callable restricted to the piece."""
        if isinstance(self.weights, str):
            Q, K, V = ginibre_draw(self.seed, k, self.dimension)
            return Attention(self.beta, Q=Q, K=K, V=V, projection=self.projection)
        return _CallablePiece(self, *self._bounds(k))

    def _attention_at(self, t: float) -> Attention:
        """The constant-weight Attention of ``weights(t)``, or a ValueError naming the callable's output at t."""
        want = "" if self._dim is None else f" = {self._dim}"
        try:
            Q, K, V = self.weights(t)
            model = Attention(self.beta, Q=Q, K=K, V=V, projection=self.projection)
        except (TypeError, ValueError) as err:
            raise ValueError(f"weights({t!r}) must return (Q, K, V): square finite matrices of one size d{want} "
                             f"(or None for the identity); {err}") from None
        if self._dim is not None and model._dim is not None and model._dim != self._dim:
            raise ValueError(f"weights({t!r}) returned {model._dim} x {model._dim} matrices; the weights have "
                             f"d{want}")
        return model

    def _model_at(self, t: float) -> Attention:
        if isinstance(self.weights, str):
            return self.piece_model(self.piece_of(t))
        return self._attention_at(t)

    # ------------------------------------------------------------------ particles
    def check_particles(self, geometry: Any) -> None:
        """Points of S^{d-1} with the projection, of R^d without it; of the draws' dimension."""
        want = SphereGeometry if self.projection else EuclideanGeometry
        if not isinstance(geometry, want):
            raise ValueError(f"DepthVaryingAttention(projection={self.projection}) needs points on the "
                             f"{'sphere' if self.projection else 'euclidean'} domain (shape (n, d)), got domain "
                             f"{geometry.name!r}")
        if self._dim is not None and geometry.dimension != self._dim:
            raise ValueError(f"particles have dimension d = {geometry.dimension} but the weights are "
                             f"{self._dim} x {self._dim}")

    def particle_velocity(self, geometry: Any, weights: np.ndarray, frequencies: np.ndarray | None, *,
                          path: str = "auto", accuracy: float = 1e-10, block_elements: int = BLOCK_ELEMENTS):
        """X(t, x): without switching times the velocity of its one piece (the constant model of draw 0, or the
        callable at t); with them the velocity of the piece containing t (right-continuous). The integrators
        take the pieces' own velocities (:meth:`piece_model`) and end their steps at the switches."""
        if path not in ("auto", "direct"):
            raise ValueError(f"path={path!r} is not available for DepthVaryingAttention, whose velocity is summed "
                             f"directly; use path='auto'")
        options = {"path": path, "accuracy": accuracy, "block_elements": block_elements}
        if not self.time_pieces:
            return self.piece_model(0).particle_velocity(geometry, weights, frequencies, **options)

        def velocity(t: float, x: np.ndarray) -> np.ndarray:
            return self.piece_model(self.piece_of(t)).particle_velocity(geometry, weights, frequencies,
                                                                        **options)(t, x)

        return _AttentionVelocity(velocity)

    def attention_matrix(self, points: np.ndarray, head: int = 0, t: float = 0.0) -> np.ndarray:
        """P_ij(t) = softmax_j(β<Q(t) x_i, K(t) x_j>) of points (systems, n, d) at time t."""
        return self._model_at(t).attention_matrix(points, head, t)

    # ------------------------------------------------------------------ energy
    def _no_energy(self) -> ValueError:
        return ValueError("DepthVaryingAttention has no interaction energy: its weights change with t, and E_β of "
                          "paper 2 (3.5) is a Lyapunov function only for fixed weights with V = c QᵀK (§3.4.1); "
                          "compute the energy of one piece with mf.energy(model.piece_model(k), x)")


class _CallablePiece(Model):
    """The callable weights of a :class:`DepthVaryingAttention` on its piece [lo, hi): evaluated at the stage
    time clamped into the piece, at the largest double below hi for a stage at hi."""

    def __init__(self, parent: DepthVaryingAttention, lo: float, hi: float) -> None:
        self.parent, self.lo, self.below = parent, lo, np.nextafter(hi, -np.inf)

    @property
    def name(self) -> str:
        return self.parent.name

    @property
    def attrs(self) -> dict[str, Any]:
        return {**self.parent.attrs, "piece": f"[{self.lo!r}, {float(np.nextafter(self.below, np.inf))!r})"}

    def particle_velocity(self, geometry: Any, weights: np.ndarray, frequencies: np.ndarray | None, *,
                          path: str = "auto", accuracy: float = 1e-10, block_elements: int = BLOCK_ELEMENTS):
        """X(t, x) of the constant-weight Attention of weights(t), t clamped into the piece."""
        parent, lo, below = self.parent, self.lo, self.below

        def velocity(t: float, x: np.ndarray) -> np.ndarray:
            at = parent._attention_at(min(max(t, lo), below))
            return at.particle_velocity(geometry, weights, frequencies, path=path, accuracy=accuracy,
                                        block_elements=block_elements)(t, x)

        return _AttentionVelocity(velocity)

r"""Discrete layers: the residual step of a Transformer, x_{k+1} = Π(x_k + h v(x_k)), as a stepper.

Paper 2 (arXiv:2312.10794), §2.1: a residual network is the forward Euler discretisation of its
neural ODE, and layer normalisation puts the tokens back on the sphere after every layer. The
layer map of step h of a velocity v (the model's, :mod:`meanfield.models._model`) is

.. math::

    x_{k+1} = \Pi\big(x_k + h\, v(x_k)\big),

with Π the normalisation of the space the particles live in
(:meth:`meanfield.domains._geometry.SphereGeometry.layer` and its siblings):

* S^{d-1}: Π(y) = y/|y| (the RMS layer norm with unit gain); v is tangent, so
  x_{k+1} = (x_k + h v)/√(1 + h²|v|²);
* R^d (``Attention(projection=False)``): Π = identity, the residual step itself;
* S¹ in angles: the map acts on the unit vector u = (cos θ, sin θ), whose velocity is θ̇ u^⊥, and the
  angle is read back: θ_{k+1} = θ_k + arctan(h θ̇_k). This is *not* θ_k + h θ̇_k (the exponential-map
  Euler step of method "euler"); the two differ at O(h³) per layer.

With ``split="lie-trotter"`` (a model with a feed-forward term, paper 2 (2.8)) every layer is the
attention sub-layer followed by the feed-forward sub-layer, each normalised,

.. math::

    x \leftarrow \Pi\big(x + h\, v_{\mathrm{att}}(x)\big), \qquad x \leftarrow \Pi\big(x + h\, v_{\mathrm{ffn}}(x)\big),

the velocity parts being the model's (:meth:`meanfield.models.Model.particle_velocity_parts`).

Both are first-order approximations of the flow ẋ = v(x): the local error is O(h²) (Π(x + hv) =
exp_x(hv) + O(h³) on the sphere; a Lie–Trotter split of two fields errs by (h²/2)[v_att, v_ffn]), so the
error at a fixed time T = K h is O(h). There is no error control: the layers are the model, not an
approximation of it that a tolerance could refine.

A layer is the same map whatever the output times: the step is ``h`` itself, and every output time must be
t_0 plus a whole number of layers (:func:`layer_counts`). For the attractive SelfAttention without a graph on
S¹ and S^{d-1} each layer is one call of the compiled per-system velocity of the ensembles
(:func:`meanfield.models._compiled_kernels.attention_velocity_kernel`) and the normalisation, in parallel over
systems (path "ensemble"); otherwise one batched evaluation of the model's velocity per sub-layer (path
"direct" and its siblings).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numba
import numpy as np

from solvers import StepResult

from ..domains._geometry import ANGLES
from ..models._attention_weights import velocity_factor
from ..models._compiled_kernels import attention_velocity_kernel
from ._chart_steppers import PositionStepper

__all__ = ["LAYER_SCHEME", "SPLITS", "DiscreteLayers", "layer_counts"]

#: the scheme in words, for a result's attrs (``integrator``)
LAYER_SCHEME = "discrete layers: x_{k+1} = normalise(x_k + h v(x_k)), order 1 in h as an approximation of the flow"
#: the splittings of a layer into sub-layers, by name (None: one layer of the whole velocity)
SPLITS = {"lie-trotter": "x <- normalise(x + h v_att(x)); x <- normalise(x + h v_ffn(x)) (Lie-Trotter, order 1)"}
#: relative round-off allowed in (t_i - t_{i-1})/h, that of the fixed steps of :func:`solvers.fixed_steps`
LAYER_TIME_TOLERANCE = 1e-12

Velocity = Callable[[float, np.ndarray], np.ndarray]


def layer_counts(times: np.ndarray, h: float) -> np.ndarray:
    """The number of layers m_i = (t_i - t_{i-1})/h in each output interval, shape (len(times) - 1,).

    Raises
    ------
    ValueError
        ``dt`` (the layer step h) not positive and finite, or an interval of ``t`` that is not a whole number
        (≥ 1) of layers to a relative round-off of 1e-12.
    """
    if isinstance(h, bool) or not isinstance(h, (int, float, np.integer, np.floating)) or not (np.isfinite(h)
                                                                                               and h > 0):
        raise ValueError(f"dt must be the layer step h > 0 (finite) for method='layers', got {h!r}")
    ratios = np.diff(np.asarray(times, dtype=float)) / float(h)
    counts = np.rint(ratios)
    bad = np.nonzero((counts < 1) | (np.abs(ratios - counts) > LAYER_TIME_TOLERANCE * np.maximum(counts, 1)))[0]
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"t must advance by whole layers of dt = {h!r} for method='layers' (the layers are the "
                         f"model: a time between two layers is not computed); t[{i + 1}] - t[{i}] = "
                         f"{float(times[i + 1] - times[i])!r} is {ratios[i]:.15g} layers; take output times "
                         f"t_0 + k·dt")
    return counts.astype(int)


@numba.njit(cache=True, parallel=True)
def _attention_layer(kind, x, w, beta, normalized, factor, h):
    """One layer Π(x + h v(x)) of every system of ``x`` (systems, n, m) in place, v the SA/USA velocity."""
    for s in numba.prange(x.shape[0]):
        n, m = x.shape[1], x.shape[2]
        work = np.empty((n + m + 2, n))
        v = np.empty((n, m))
        attention_velocity_kernel(kind, x[s], w[s], beta, normalized, factor, v, work)
        for i in range(n):
            if kind == ANGLES:
                x[s, i, 0] += np.arctan(h * v[i, 0])
            else:
                size = 0.0
                for k in range(m):
                    x[s, i, k] += h * v[i, k]
                    size += x[s, i, k] * x[s, i, k]
                size = np.sqrt(size)
                for k in range(m):
                    x[s, i, k] /= size


class DiscreteLayers(PositionStepper):
    """Layers of step ``h`` (module docstring) as a fixed-step :class:`solvers.Stepper` on states (systems, n[, d]).

    Parameters
    ----------
    geometry : CircleGeometry, SphereGeometry or EuclideanGeometry
        The space, whose ``layer`` is the map Π(p + h v).
    parts : sequence of callables X(t, x)
        The velocity (one part), or the sub-layers in order (the Lie–Trotter split); one evaluation each per layer.
    h : float
        The layer step; every step of the run is a layer of exactly this h.
    kernel : (weights, beta, normalized, time), optional
        Take the layers of the compiled SA/USA velocity instead of ``parts`` (path "ensemble"); ``time`` as
        :meth:`meanfield.SelfAttention.ensemble_kernel` gives it.
    """

    name = "layers"

    def __init__(self, geometry: Any, parts: Sequence[Velocity], h: float,
                 kernel: tuple[np.ndarray, float, bool, str] | None = None) -> None:
        super().__init__()
        self.geometry = geometry
        self.parts = tuple(parts)
        self.fixed_step = float(h)
        self.kernel = kernel

    def _step_impl(self, t: float, y: np.ndarray, dt: float) -> StepResult:
        h = self.fixed_step  # the layer's own step: dt is h up to the round-off of the output times
        if self.kernel is not None:
            weights, beta, normalized, time = self.kernel
            angles = self.geometry.code == ANGLES
            x = np.array(y[..., None] if angles else y, dtype=float, order="C")
            _attention_layer(self.geometry.code, x, weights, beta, normalized, velocity_factor(beta, normalized, time),
                             h)
            self.nfev += 1
            return StepResult(True, x[..., 0] if angles else x, dt)
        x = y
        for velocity in self.parts:
            x = self.geometry.layer(x, velocity(t, x), h)
            self.nfev += 1
        return StepResult(True, x, dt)


r"""Kuramoto oscillators on a graph with the natural frequencies integrated exactly (method ``"moebius"``).

On a graph every oscillator feels its own local field (:mod:`meanfield.models._network_kuramoto`): with
u_i = e^{iθ_i}, the coupling operator B and one harmonic,

    u̇_i = i a Z_i + i ν_i u_i + i conj(a Z_i) u_i²,     Z_i = Σ_j B_ij u_j,

a = K ĥ_1 e^{-iα}, ν_i = ω_i + K ĥ_0 Σ_j B_ij. For Z_i frozen this is the Riccati equation of
:mod:`._moebius`, whose flow is an exact Möbius map of u_i for any ν_i. The scheme is that module's: the
order-4 commutator-free Lie-group method (Celledoni, Marthinsen & Owren 2003) with the frozen-field
generators at its stages, each stage's field a combination of the fields Z_k = B Y_k of the stage values
(N is linear in Z), the drift exact in every exponential; step doubling on the fields, in the frame rotating
at the median of ν. The one change is that a field is a vector: each exponential maps node i with its own
Z_i, and each new field costs one sparse product B u (O(entries); :class:`CouplingOperator`).

Fast oscillators. A drifting node j whose rate under its own field, Ω_j = (ν_j² - 4|a Z_j|²)^{1/2}, has
Ω_j h > ``resolved`` would enter its neighbours' fields with a component oscillating faster than the stages
sample. As in :mod:`._moebius` it enters instead (i) at its time average, the elliptic fixed point of its
own frozen flow, u*_j = c_j Z_j, c_j = -2a/(ν_j + sgn(ν_j) Ω_j), and (ii) through the impulse of its
oscillation about it over each half step (exact for uniform rotation). With F the fast set and S its
complement, the field then solves the linear system

    Z = B (1_S u) + B_{·F} (c_F Z_F),   i.e.  Z_F = (B (1_S u))_F + B_{FF} (c_F Z_F),

solved on the fast nodes only by a sparse LU of I - B_FF diag(c_F) per system, made once per step
(|c_j| ≤ 2|a|/Ω_j, and a node is fast only when |c_j| max_i Σ_j |B_ij| ≤ 1/2, so the matrix is diagonally
dominant: ‖B_FF diag(c_F)‖_∞ ≤ 1/2), followed by one product with the columns of B at F (O(entries at F)). The impulse of the fast set enters every
exponential of its half step through the same solve. The remainder — the fast nodes' non-uniform speed and
the timing of their impulses, estimated per node as 4|a|² Σ_{j∈F} |B_ij| |J_j| |Z_j| (h + 1/Ω_j) from the
impulse J_j of each fast neighbour over the step (the bound of :mod:`._moebius` with the fast node's own
field) — is kept below the tolerance (in the root mean square over nodes, as the error) by
refusing and shortening a step before it is tried.
As h → 0 no node is fast and the scheme is the plain order-4 method.

Error norm: the root mean square over nodes of |Z_{h/2,i} - Z_{h,i}|/15 / (atol + rtol |Z_{h/2,i}|), the
largest over systems (the chart integrators' RMS over particles).
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse
import scipy.sparse.linalg

from solvers import StepController, Stepper

from ..models._graph_operator import CouplingOperator
from ._moebius import MoebiusStepper, _Stepper, moebius_point, weighted_median

__all__ = ["CONTRACTION", "NETWORK_RESOLVED", "NetworkMoebiusStepper"]

#: nodes with Ω_j h > NETWORK_RESOLVED are fast. Measured on G(200, 0.05), K = 2, Cauchy(0, 0.5) frequencies,
#: t = 2: with 2 the root-mean-square phase error stays below rtol for rtol = 1e-2 … 1e-9 (the largest below
#: 25 rtol), with 3-5× fewer steps at rtol 1e-6 than with the 1 of the mean-field scheme (whose slaved
#: oscillators barely past Ω h = 1 cost a slow node a neighbour's 1/d of the field, not 1/n of the mean)
NETWORK_RESOLVED = 2.0
#: a node is fast only when its coefficient keeps the slaving iteration a contraction by this factor
CONTRACTION = 0.5


@numba.njit(cache=True)
def _local_moebius_kernel(u, nu, drift_weight, alpha, tau, out):  # pragma: no cover - compiled
    n_sys, n = u.shape
    for s in range(n_sys):
        for i in range(n):
            a = alpha[s, i]
            out[s, i] = moebius_point(u[s, i], 0.5 * drift_weight * nu[s, i], a, a.real * a.real + a.imag * a.imag,
                                      tau)


class _LocalFieldCore(_Stepper):
    """The CF4 steps of :class:`._moebius._Stepper` (its ``step``) with local fields Z = B u and the fast set of
    the module docstring; states (systems, n)."""

    def __init__(self, a: complex, nu: np.ndarray, operator: CouplingOperator, resolved: float) -> None:
        self.a = a
        self.nu = nu
        self.operator = operator
        self.resolved = resolved
        self.row_bound = float(np.max(np.asarray(abs(operator.matrix).sum(axis=1)))) if operator.matrix.nnz else 0.0
        self.n_maps = 0
        self._plan: dict[str, object] | None = None

    def drive(self, u: np.ndarray, h: float) -> np.ndarray:
        """Fix the fast set and its coefficients for steps ≤ h; the field Z of u with the fast set slaved."""
        z_all = self.operator(u)
        rate2 = self.nu ** 2 - 4 * abs(self.a) ** 2 * np.abs(z_all) ** 2
        fast = rate2 * h * h > self.resolved ** 2
        if fast.any():
            rate = np.where(self.nu < 0, -1.0, 1.0) * np.sqrt(np.where(fast, rate2, 1.0))
            coefficient = np.zeros(u.shape, dtype=complex)
            np.divide(-2 * self.a, self.nu + rate, out=coefficient, where=fast)
            fast &= np.abs(coefficient) * self.row_bound <= CONTRACTION
        if not fast.any():
            self._plan = None
            return z_all
        nodes = np.flatnonzero(fast.any(axis=0))
        into = self.operator.columns(nodes)
        coefficient = np.where(fast, coefficient, 0.0)[:, nodes]
        within = into.rows(nodes).matrix
        identity = scipy.sparse.eye_array(nodes.size, format="csc")
        self._plan = {
            "nodes": nodes, "fast": fast[:, nodes], "slow": ~fast, "rate": np.where(fast, rate, 1.0)[:, nodes],
            "coefficient": coefficient, "into": into,
            "into_abs": into if np.all(into.data >= 0) else CouplingOperator(abs(into.matrix)),
            # one sparse LU of I - B_FF diag(c) per system (none when no two fast nodes are joined)
            "solvers": [scipy.sparse.linalg.splu((identity - within @ scipy.sparse.diags_array(c)).tocsc())
                        for c in coefficient] if within.nnz else None,
        }
        return self._respond(self.operator(u * self._plan["slow"]))

    def _respond(self, base: np.ndarray) -> np.ndarray:
        """Z = base + B_{·F}(c_F Z_F) with (I - B_FF diag(c_F)) Z_F = base_F (sparse LU of the plan)."""
        plan = self._plan
        field = base[:, plan["nodes"]]
        if plan["solvers"] is not None:
            field = np.stack([lu.solve(np.ascontiguousarray(row)) for lu, row in zip(plan["solvers"], field)])
        return base + plan["into"](plan["coefficient"] * field)

    def impulses(self, u: np.ndarray, z: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The fast set's oscillation about u* averaged over [0, h/2] and [h/2, h] as fields, and the jitter of each
        node (module docstring)."""
        if self._plan is None:
            zero = np.zeros(u.shape, dtype=complex)
            return zero, zero, np.zeros(u.shape)
        plan = self._plan
        nodes, rate = plan["nodes"], plan["rate"]
        deviation = np.where(plan["fast"], u[:, nodes] - plan["coefficient"] * z[:, nodes], 0.0)
        phase = 0.5 * rate * h
        half_angle = 0.5 * phase
        # ∫_0^{h/2} e^{iΩt} dt = (e^{iΩh/2} - 1)/(iΩ) = 2 sin(Ωh/4)/Ω · e^{iΩh/4} (no cancellation)
        half = 2.0 * np.sin(half_angle) / rate * np.exp(1j * half_angle)
        early = deviation * half
        late = deviation * np.exp(1j * phase) * half
        # each fast node j's share of the remainder, |impulse_j| 2|a Z_j| (h + 1/Ω_j), summed with |B_ij| into node i
        share = np.abs(early + late) * np.abs(z[:, nodes]) * (h + 1 / np.abs(rate))
        jitter = 4 * abs(self.a) ** 2 * plan["into_abs"](np.where(plan["fast"], share, 0.0))
        return self._respond(plan["into"](early)) / h, self._respond(plan["into"](late)) / h, jitter

    def _map(self, u: np.ndarray, z_comb: np.ndarray, h: float, drive: bool = True
             ) -> tuple[np.ndarray, np.ndarray | None]:
        """Each node's frozen-field flow over h with the fields ``z_comb``, and (``drive``) the new fields: one
        product with B."""
        self.n_maps += 1
        out = np.empty_like(u)
        _local_moebius_kernel(u, self.nu, 0.5, np.ascontiguousarray(1j * self.a * z_comb), float(h), out)
        if not drive:
            return out, None
        if self._plan is None:
            return out, self.operator(out)
        return out, self._respond(self.operator(out * self._plan["slow"]))


class NetworkMoebiusStepper(MoebiusStepper):
    """The CF4 Möbius scheme with local fields (module docstring) as a :class:`solvers.Stepper` on u = e^{iθ}
    (systems, n) in the frame rotating at Ω_0, the weighted median of ν per system.

    Parameters
    ----------
    a : complex
        K ĥ_1 e^{-iα}.
    nu : ndarray, shape (systems, n)
        ν_i = ω_i + K ĥ_0 Σ_j B_ij.
    operator : CouplingOperator
        B, the graph's coupling operator (:meth:`meanfield.Kuramoto.local_riccati_form`).
    weights : ndarray, shape (systems, n)
        The particle weights (the frame rotates at the weighted median of ν, as in :mod:`._moebius`).
    origin, rtol, atol, dt
        As :class:`._moebius.MoebiusStepper`.
    resolved : float
        Nodes with Ω_j h > ``resolved`` are fast (:data:`NETWORK_RESOLVED`).

    ``nfev`` counts Möbius maps over all particles (each followed by one product with B).
    """

    def __init__(self, a: complex, nu: np.ndarray, operator: CouplingOperator, weights: np.ndarray, origin: float, *,
                 rtol: float = 1e-8, atol: float = 1e-10, dt: float | None = None,
                 resolved: float = NETWORK_RESOLVED) -> None:
        Stepper.__init__(self)
        nu = np.asarray(nu, dtype=float)
        self.frame = weighted_median(nu, np.broadcast_to(np.asarray(weights, dtype=float), nu.shape))
        self.origin = float(origin)
        self.a = a
        self.core = _LocalFieldCore(a, np.ascontiguousarray(nu - self.frame[:, None]), operator, resolved)
        self.rtol, self.atol = rtol, atol
        self.fixed_step = dt
        self.controller = StepController()

    def _remainder_factor(self, factor: float, excess: float) -> float:
        """At most the factor that would bring the remainder to 0.9⁵/² of the tolerance (it grows like h^{5/2}),
        so that the next step is not refused for it: the error estimate of step doubling does not see it."""
        if excess > 0:
            factor = min(factor, max(0.2, 0.9 * excess ** (-2 / 5)))
        return factor

    def _remainder_norm(self, jitter: np.ndarray, z: np.ndarray) -> float:
        """max over systems of the RMS over nodes of the remainder ``jitter`` / (atol + rtol |Z_i|)."""
        return _rms_over_nodes(jitter / (self.atol + self.rtol * np.abs(z)))

    def _error_norm(self, z_new: np.ndarray, z_big: np.ndarray) -> float:
        """max over systems of the RMS over nodes of |Z_{h/2,i} - Z_{h,i}|/15 / (atol + rtol |Z_{h/2,i}|)."""
        return _rms_over_nodes((np.abs(z_new - z_big) / 15) / (self.atol + self.rtol * np.abs(z_new)))


def _rms_over_nodes(ratio: np.ndarray) -> float:
    """max over systems of sqrt(mean over nodes of ratio²); inf if any ratio is not finite."""
    if not np.all(np.isfinite(ratio)):
        return np.inf
    return float(np.max(np.sqrt(np.mean(ratio ** 2, axis=-1))))

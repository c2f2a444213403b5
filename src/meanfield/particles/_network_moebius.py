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

Cost: a step (one step h and two of h/2) is 15 compiled Möbius passes over the nodes, each combining its
stage fields node by node, and 12 products with B, one after every pass but the first of each CF4 step's two
final exponentials; the field of the next step's start is that of the last pass (its product on the slow nodes plus
the fast set's columns), not a new product. At 10⁵ nodes of mean degree 20 a product takes about 4 ms and a
pass about 3 ms.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse
import scipy.sparse.linalg

from solvers import StepController, Stepper, StepResult

from ..models._graph_operator import CouplingOperator
from ._moebius import _FINAL_FIRST, _FINAL_SECOND, MoebiusStepper, _Stepper, moebius_point, weighted_median

__all__ = ["CONTRACTION", "NETWORK_RESOLVED", "NetworkMoebiusStepper"]

#: nodes with Ω_j h > NETWORK_RESOLVED are fast. A slow node's oscillation reaches its neighbours' fields with
#: weight 1/d (not 1/n as in the mean field), so the stages resolve it up to Ω h = 6 at less cost than slaving
#: costs in remainder; measured (``benchmarks/bench_networks.py``, Cauchy(0, 0.5) frequencies, K = 2, root mean
#: square phase error against DOP853 at rtol 1e-11) on G(200, 0.05), t = 2: error/rtol 0.2-0.7 for rtol 1e-2 … 1e-6
#: (≤ 2.4 down to 1e-9), 29 steps and 2 refused at rtol 1e-4 where a threshold of 2 took 92 and refused 164; on
#: G(2000, 0.01), t = 10: at rtol 1e-6 error 5.1e-6 in 1480 steps and 10 refused (threshold 2: 2.5e-6 in 2408
#: steps and 2173 refused, 2.9× the time), equal work for equal error at rtol ≥ 1e-4, and the error falling with
#: rtol (with 2 it rose from 4.9e-8 at rtol 1e-7 to 1.2e-7 at 1e-8); thresholds 8 and 12 cost more at 1e-5
NETWORK_RESOLVED = 6.0
#: a node is fast only when its coefficient keeps the slaving iteration a contraction by this factor
CONTRACTION = 0.5


@numba.njit(cache=True)
def _local_moebius_kernel(u, nu, drift_weight, a, fields, coefficients, tau, slow, out, masked
                          ):  # pragma: no cover - compiled
    """out = each node's frozen-field flow over τ with the field Σ_k coefficients[k] fields[k] (α = i a Z_i), and
    ``masked`` = out on the slow nodes, 0 on the others (when ``masked`` has the shape of ``out``)."""
    n_sys, n = u.shape
    mask = masked.shape == out.shape
    for s in range(n_sys):
        for i in range(n):
            z = 0j
            k = 0
            for field in numba.literal_unroll(fields):
                z += coefficients[k] * field[s, i]
                k += 1
            alpha = 1j * a * z
            v = moebius_point(u[s, i], 0.5 * drift_weight * nu[s, i], alpha,
                              alpha.real * alpha.real + alpha.imag * alpha.imag, tau)
            out[s, i] = v
            if mask:
                masked[s, i] = v if slow[s, i] else 0j


class _LocalFieldCore(_Stepper):
    """The CF4 steps of :class:`._moebius._Stepper` (its ``step``) with local fields Z = B u and the fast set of
    the module docstring; states (systems, n).

    Each map's product B u is kept with the map's result, so that the field of a step's start (the last map of
    the step before, or the same state again after a refused step) costs the products with the fast set's
    columns only: B u = B (1_S u) + B_{·F} u_F.
    """

    def __init__(self, a: complex, nu: np.ndarray, operator: CouplingOperator, resolved: float) -> None:
        self.a = a
        self.nu = nu
        self.operator = operator
        self.resolved = resolved
        self.row_bound = float(np.max(np.asarray(abs(operator.matrix).sum(axis=1)))) if operator.matrix.nnz else 0.0
        self.n_maps = 0
        self._plan: dict[str, object] | None = None
        # (state, B(1_S state), plan of S) of the last map, and (state, B state) of the last drive
        self._last_map: tuple[np.ndarray, np.ndarray, dict[str, object] | None] | None = None
        self._last_field: tuple[np.ndarray, np.ndarray] | None = None
        self._last_impulses: tuple[np.ndarray, float, tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None
        self._columns: tuple[np.ndarray, tuple[CouplingOperator, CouplingOperator, scipy.sparse.csr_array]] | None
        self._columns = None

    def _field(self, u: np.ndarray) -> np.ndarray:
        """B u, from the products kept with ``u`` when it is the last map's result or the last drive's state."""
        if self._last_field is not None and self._last_field[0] is u:
            return self._last_field[1]
        if self._last_map is not None and self._last_map[0] is u:
            _, slow_field, plan = self._last_map
            field = slow_field if plan is None else slow_field + plan["into"](np.where(plan["fast"],
                                                                                        u[:, plan["nodes"]], 0.0))
        else:
            field = self.operator(u)
        self._last_field = (u, field)
        return field

    def drive(self, u: np.ndarray, h: float) -> np.ndarray:
        """Fix the fast set and its coefficients for steps ≤ h; the field Z of u with the fast set slaved."""
        z_all = self._field(u)
        self._last_impulses = None
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
        into, into_abs, within = self._fast_columns(nodes)
        coefficient = np.where(fast, coefficient, 0.0)[:, nodes]
        identity = scipy.sparse.eye_array(nodes.size, format="csc")
        self._plan = {
            "nodes": nodes, "fast": fast[:, nodes], "slow": ~fast, "rate": np.where(fast, rate, 1.0)[:, nodes],
            "coefficient": coefficient, "into": into, "into_abs": into_abs,
            # one sparse LU of I - B_FF diag(c) per system (none when no two fast nodes are joined)
            "solvers": [scipy.sparse.linalg.splu((identity - within @ scipy.sparse.diags_array(c)).tocsc())
                        for c in coefficient] if within.nnz else None,
        }
        # B(1_S u) = B u - B_{·F} u_F
        return self._respond(z_all - into(np.where(self._plan["fast"], u[:, nodes], 0.0)))

    def _fast_columns(self, nodes: np.ndarray) -> tuple[CouplingOperator, CouplingOperator, scipy.sparse.csr_array]:
        """B_{·F}, |B_{·F}| and B_FF for the fast set F = ``nodes``, kept while the set is unchanged."""
        if self._columns is None or not np.array_equal(self._columns[0], nodes):
            into = self.operator.columns(nodes)
            into_abs = into if np.all(into.data >= 0) else CouplingOperator(abs(into.matrix))
            self._columns = (nodes, (into, into_abs, into.rows(nodes).matrix))
        return self._columns[1]

    def _respond(self, base: np.ndarray) -> np.ndarray:
        """Z = base + B_{·F}(c_F Z_F) with (I - B_FF diag(c_F)) Z_F = base_F (sparse LU of the plan)."""
        plan = self._plan
        field = base[:, plan["nodes"]]
        if plan["solvers"] is not None:
            field = np.stack([lu.solve(np.ascontiguousarray(row)) for lu, row in zip(plan["solvers"], field)])
        return base + plan["into"](plan["coefficient"] * field)

    def impulses(self, u: np.ndarray, z: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The fast set's oscillation about u* averaged over [0, h/2] and [h/2, h] as fields, and the jitter of each
        node (module docstring); kept for the next call with the same state and step."""
        if self._last_impulses is not None and self._last_impulses[0] is u and self._last_impulses[1] == h:
            return self._last_impulses[2]
        result = self._impulses(u, z, h)
        self._last_impulses = (u, h, result)
        return result

    def _impulses(self, u: np.ndarray, z: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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

    def _map(self, u: np.ndarray, fields: tuple[np.ndarray, ...], coefficients: tuple[float, ...], h: float,
             drive: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """Each node's frozen-field flow over h with the field Σ_k coefficients[k] fields[k], and (``drive``) the
        new fields: one product with B."""
        self.n_maps += 1
        out = np.empty_like(u)
        plan = self._plan
        masked = np.empty_like(u) if drive and plan is not None else np.empty((0, 0), dtype=complex)
        slow = plan["slow"] if plan is not None else np.empty((0, 0), dtype=np.bool_)
        _local_moebius_kernel(u, self.nu, 0.5, self.a, fields, coefficients, float(h), slow, out, masked)
        if not drive:
            return out, None
        slow_field = self.operator(out if plan is None else masked)
        self._last_map = (out, slow_field, plan)
        return out, slow_field if plan is None else self._respond(slow_field)

    def step(self, u: np.ndarray, z1: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """u_{n+1}, its field and the step's jitter from u_n and its field ``z1``: the steps of
        :meth:`._moebius._Stepper.step`, each exponential's field combined node by node in the compiled map."""
        early, late, jitter = self.impulses(u, z1, h)
        with_impulse = self._plan is not None

        def combine(fields, coefficients, impulse):
            """The map's fields and weights, with the fast set's impulse over the exponential's half step."""
            if with_impulse:
                fields, coefficients = (*fields, impulse), (*coefficients, 1.0)
            return tuple(np.ascontiguousarray(f) for f in fields), np.array(coefficients, dtype=float)

        y2, z2 = self._map(u, *combine((z1,), (0.5,), early), h)
        _, z3 = self._map(u, *combine((z2,), (0.5,), early), h)
        _, z4 = self._map(y2, *combine((z3, z1), (1.0, -0.5), late), h)
        zs = (z1, z2, z3, z4)
        mid, _ = self._map(u, *combine(zs, _FINAL_FIRST, early), h, drive=False)
        u_new, z_new = self._map(mid, *combine(zs, _FINAL_SECOND, late), h)
        return u_new, z_new, jitter


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

    ``nfev`` counts Möbius maps over all particles (each followed by one product with B). The steps are
    controlled by step doubling (module docstring), not by the estimate of :class:`._moebius.MoebiusStepper`,
    whose embedded and aliasing terms are written for one drive per system.
    """

    equal_steps = False

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

    def _adaptive_step(self, u: np.ndarray, z: np.ndarray, h: float,
                       impulses: tuple[np.ndarray, np.ndarray, np.ndarray], excess: float) -> StepResult:
        """The step h from u judged by step doubling on the fields (module docstring)."""
        core = self.core
        _, z_big, _ = core.step(u, z, h)
        u_half, z_half, _ = core.step(u, z, h / 2)
        u_new, z_new, _ = core.step(u_half, z_half, h / 2)
        err_norm = self._error_norm(z_new, z_big)
        accepted, factor = self.controller.decide(err_norm)
        factor = self._remainder_factor(factor, excess)
        return StepResult(accepted, u_new if accepted else None, h * factor, err_norm)

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

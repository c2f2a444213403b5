r"""Reduced cluster dynamics on S¹: clusters as weighted Diracs that merge when they meet.

A configuration of k clusters is the weighted empirical measure
μ = Σ_a m_a δ_{θ_a} (Σ_a m_a = 1). Each cluster moves with the SA/USA
velocity of the particle engine evaluated on μ itself (paper 2, arXiv:2312.10794,
(7.1) with weights; the engine's :class:`meanfield.particles._velocity.DirectSelfAttention`
on a weighted measure, summed here over angle differences, see
:func:`cluster_velocity`):

    USA:  θ̇_a = Σ_b m_b e^{β cos(θ_b-θ_a)} sin(θ_b-θ_a),
    SA:   θ̇_a = Σ_b m_b e^{β cos(θ_b-θ_a)} sin(θ_b-θ_a) / Σ_b m_b e^{β cos(θ_b-θ_a)},

with the shifted weights e^{β(cos(θ_b-θ_a) - 1)} and the SA/USA rule of
:mod:`meanfield.models._attention_weights`.

These are the exact equations of n particles whose members of each cluster
coincide, so between merges the reduced dynamics *is* the particle dynamics
of collapsed clusters. Two Diracs approach each other exponentially
(θ̇_a - θ̇_b ≈ -(θ_a - θ_b) for SA near contact) and never meet in finite
time, so a merge is declared when two clusters come within ``merge_distance``
(arc length), the same criterion as :func:`meanfield.number_of_clusters`
applied to particles (chord and arc agree to O(δ³)).

Merge rule. The two clusters a, b become one of mass m_a + m_b at the
mass-weighted mean angle θ_a + m_b/(m_a + m_b)·wrap(θ_b - θ_a) (short arc).
Mass is conserved exactly. For USA the interaction is antisymmetric, so the
mass-weighted mean angle Σ_a m_a θ_a (on the lifted line) is conserved by the
flow — d/dt Σ_a m_a θ_a = Σ_{a,b} m_a m_b e^{β cos(θ_b-θ_a)} sin(θ_b-θ_a) = 0 —
and the merge rule keeps it exactly. SA has no such invariant (each cluster
is divided by its own Z_μ(θ_a)); there the merged position differs from the
limit of the two trajectories by O(δ) only, since both move with
velocities equal to O(δ). The energy jumps at a merge by
(m_a m_b/β)(e^β - e^{β cos δ}) + O(δ) cross terms = O(m_a m_b β δ² e^β),
negligible for δ ≪ β^{-1/2}: the energy step of a merge is climbed by the
flow while the two clusters approach, not at the merge event.

Long times. Between merges the system is a smooth ODE whose velocities are
exponentially small in β on a metastable plateau (≈ e^{-β(1-cos Δ)} for
nearest separation Δ); :func:`scipy.integrate.solve_ivp` (DOP853) with
relative and absolute error control takes steps that grow with the slowness,
so a plateau of length e^{cβ} costs a number of steps that grows only like
log of the escape factor. Merges are terminal events (smallest circular gap
= ``merge_distance``) located to the solver's root-finding accuracy.

Round-off: a cluster's own term is exactly zero here (:func:`cluster_velocity`),
so even plateaus whose velocities are ≈ e^{-2β} (two near-antipodal clusters)
are escaped by their initial offset, not by round-off.

Reference: Geshkovski, Koubbi, Polyanskiy, Rigollet, *Dynamic metastability in
the self-attention model*, arXiv:2410.06833 (clusters trapped near a
multi-cluster configuration for times exponential in β, then merging).
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import xarray as xr
from scipy.integrate import solve_ivp

from ...measures._measure import EmpiricalMeasure
from ...models._attention_weights import attention_exponent, attention_velocity, velocity_factor
from ...models._self_attention import SelfAttention
from ..._validate import check_positive, check_rtol
from ..._version import __version__
from .._checks import require_self_attention
from ...models._energy import particle_energy

__all__ = ["cluster_dynamics", "cluster_velocity", "merge_clusters"]

logger = logging.getLogger(__name__)


def _wrap(x: np.ndarray | float) -> np.ndarray | float:
    """Angle difference wrapped into [-π, π)."""
    return (np.asarray(x) + np.pi) % (2 * np.pi) - np.pi


def _check_model(model: Any) -> SelfAttention:
    require_self_attention(model, "the reduced cluster dynamics")
    if model.noise != 0:
        raise ValueError(f"the reduced cluster dynamics has no noise; model.noise must be 0, got {model.noise!r}")
    if not model.beta > 0:
        raise ValueError(f"model.beta must be > 0 for clusters to be metastable, got {model.beta!r}")
    return model


def _check_clusters(angles: Any, masses: Any) -> tuple[np.ndarray, np.ndarray]:
    theta = np.asarray(angles, dtype=float)
    if theta.ndim != 1 or theta.size < 1:
        raise ValueError(f"angles must be a 1-D array of at least one cluster angle, got shape {theta.shape}")
    if not np.all(np.isfinite(theta)):
        raise ValueError("angles must be finite (found NaN or infinity)")
    if masses is None:
        m = np.full(theta.size, 1.0 / theta.size)
    else:
        m = np.array(masses, dtype=float)  # a copy: merges update it in place
        if m.shape != theta.shape:
            raise ValueError(f"masses must have the shape of angles {theta.shape}, got {m.shape}")
        if not np.all(np.isfinite(m)) or np.any(m <= 0):
            raise ValueError(f"masses must be finite and > 0, got {m}")
        if not abs(m.sum() - 1.0) <= 1e-10:
            raise ValueError(f"masses must sum to 1, got sum {m.sum()!r}")
    return np.mod(theta, 2 * np.pi), m


def cluster_velocity(theta: np.ndarray, masses: np.ndarray, beta: float, normalized: bool) -> np.ndarray:
    """θ̇_a of weighted Diracs (module docstring), summed over angle differences.

    The same velocity as the particle engine's
    :class:`meanfield.particles._velocity.DirectSelfAttention` with weights
    ``masses`` (the weights and the SA/USA rule of
    :mod:`meanfield.models._attention_weights`), written with sin(θ_b - θ_a)
    of the differences so that a cluster's own term is exactly zero: the
    engine's product form c_a s_b - s_a c_b leaves ≈ 1e-16 of it, which on a
    plateau whose velocities are ≈ e^{-2β} (β ≳ 12) is noise the step-size
    control cannot integrate through. O(k²) for k clusters (k is small).
    """
    diff = theta[None, :] - theta[:, None]  # θ_b - θ_a
    kernel = masses[None, :] * np.exp(attention_exponent.py_func(beta, np.cos(diff)))
    return attention_velocity.py_func(np.sum(kernel * np.sin(diff), axis=1), np.sum(kernel, axis=1), normalized,
                                      velocity_factor(beta, normalized))


def _gaps(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Circular gaps between consecutive sorted angles, and the sort order."""
    order = np.argsort(np.mod(theta, 2 * np.pi))
    s = np.mod(theta[order], 2 * np.pi)
    gaps = np.diff(np.append(s, s[0] + 2 * np.pi))
    return gaps, order


def merge_clusters(angles: Any, masses: Any, merge_distance: float) -> tuple[np.ndarray, np.ndarray, list]:
    """Merge every pair of clusters closer than ``merge_distance`` (see the module docstring).

    Repeatedly merges the circular neighbours with the smallest gap while
    that gap is ≤ ``merge_distance``: the merged cluster has mass m_a + m_b
    and sits at θ_a + m_b/(m_a + m_b)·wrap(θ_b - θ_a).

    Parameters
    ----------
    angles, masses : array_like, shape (k,)
    merge_distance : float
        Arc length below which two clusters are one.

    Returns
    -------
    angles, masses : ndarray
        The merged clusters, in the order of the survivors.
    merged : list of (int, int, float, float, float)
        For each merge, the indices (into the *input* arrays) of the kept
        and the absorbed cluster, their masses and their separation.

    Examples
    --------
    >>> a, m, events = merge_clusters([0.0, 1e-5, 3.0], [0.25, 0.25, 0.5], 1e-4)
    >>> a.round(7).tolist(), m.tolist()
    ([5e-06, 3.0], [0.5, 0.5])
    """
    theta, m = _check_clusters(angles, masses)
    if not (np.isfinite(merge_distance) and merge_distance > 0):
        raise ValueError(f"merge_distance must be finite and > 0, got {merge_distance!r}")
    index = np.arange(theta.size)
    merged = []
    while theta.size > 1:
        gaps, order = _gaps(theta)
        g = int(np.argmin(gaps))
        if gaps[g] > merge_distance:
            break
        a, b = order[g], order[(g + 1) % order.size]
        keep, gone = (a, b) if m[a] >= m[b] else (b, a)
        total = m[keep] + m[gone]
        merged.append((int(index[keep]), int(index[gone]), float(m[keep]), float(m[gone]), float(gaps[g])))
        theta[keep] = np.mod(theta[keep] + m[gone] / total * _wrap(theta[gone] - theta[keep]), 2 * np.pi)
        m[keep] = total
        alive = np.arange(theta.size) != gone
        theta, m, index = theta[alive], m[alive], index[alive]
    return theta, m, merged


def cluster_dynamics(
    model: SelfAttention,
    angles: Any,
    masses: Any = None,
    t_end: float = 1e6,
    *,
    merge_distance: float = 1e-3,
    n_outputs: int = 400,
    t_first: float = 1e-2,
    rtol: float = 1e-10,
    atol: float = 1e-12,
) -> xr.Dataset:
    r"""Integrate clusters as weighted Diracs on S¹ with SA/USA velocities, merging them when they meet.

    See the module docstring for the equations and the merge rule: between
    merges θ̇_a = X[μ](θ_a) with μ = Σ_b m_b δ_{θ_b} (paper 2, (7.1) weighted);
    clusters closer than ``merge_distance`` become one cluster of mass
    m_a + m_b at their mass-weighted mean angle. This is the reduced model of
    the metastable staircase (Geshkovski–Koubbi–Polyanskiy–Rigollet,
    arXiv:2410.06833): plateaus of length ~e^{cβ} separated by pairwise merges.

    Parameters
    ----------
    model : SelfAttention
        SA (``normalized=True``) or USA, β > 0, no noise.
    angles : array_like, shape (k,)
        Initial cluster angles.
    masses : array_like, shape (k,), optional
        Cluster masses m_a > 0 summing to 1 (default 1/k each).
    t_end : float
        Final time (> 0); the run stops earlier when one cluster is left.
    merge_distance : float
        Arc length at which two clusters merge (> 0).
    n_outputs : int
        Output times: 0 and ``n_outputs`` times geometrically spaced from
        ``t_first`` to ``t_end`` (the staircase is uniform in log time),
        plus the state just before and just after every merge.
    t_first : float
        First positive output time.
    rtol, atol : float
        Error tolerances of the DOP853 integrator.

    Returns
    -------
    xarray.Dataset
        Over ``time``: ``angle`` and ``mass`` (time, cluster) — a merged-away
        cluster keeps the angle of the cluster that absorbed it and mass 0 —,
        ``n_clusters`` and ``energy`` (E_β of the weighted measure, paper 2
        (3.5), by :func:`meanfield.energy`). Over ``merge``: ``merge_time``,
        ``merge_kept``/``merge_absorbed`` (cluster indices),
        ``merge_mass_kept``/``merge_mass_absorbed``, ``merge_energy_before``/
        ``merge_energy_after`` (E at the merge event, on each side). attrs:
        β, normalized, merge_distance, tolerances, ``nfev``, ``success``,
        ``message``, ``meanfield_version``.

    Raises
    ------
    TypeError
        ``model`` is not a SelfAttention model.
    ValueError
        Noise > 0, β ≤ 0, bad angles/masses, non-positive ``t_end``,
        ``merge_distance``, ``t_first`` ≥ ``t_end``, ``n_outputs`` < 1.

    Notes
    -----
    Between merges, for μ = Σ_b m_b δ_{θ_b},

    .. math::

        \text{USA:}\quad \dot\theta_a = \sum_b m_b\, e^{\beta\cos(\theta_b - \theta_a)} \sin(\theta_b - \theta_a),
        \qquad
        \text{SA:}\quad \dot\theta_a = \frac{\sum_b m_b\, e^{\beta\cos(\theta_b - \theta_a)} \sin(\theta_b - \theta_a)}
                                          {\sum_b m_b\, e^{\beta\cos(\theta_b - \theta_a)}},

    and the energy (paper 2, (3.5)) is
    E_β = (1/2β) Σ_{a,b} m_a m_b e^{β cos(θ_a - θ_b)}. A merge of a and b
    puts mass m_a + m_b at θ_a + m_b/(m_a + m_b)·wrap(θ_b - θ_a). For USA the
    mean angle Σ_a m_a θ_a (lifted to the line) is conserved by the flow and
    by the merges.

    Examples
    --------
    Two equal clusters one radian apart merge into one cluster of mass 1 at
    their midpoint (by symmetry); the energy rises from (e^β + e^{β cos 1})/(4β)
    to e^β/(2β):

    >>> import numpy as np
    >>> import meanfield as mf
    >>> ds = mf.cluster_dynamics(mf.SelfAttention(4.0), [0.0, 1.0], t_end=50.0, n_outputs=50)
    >>> int(ds.n_clusters[-1]), ds.sizes["merge"]
    (1, 1)
    >>> print(f"{float(ds.angle[-1, 0]):.6f} {float(ds.mass[-1, 0]):.6f}")
    0.500000 1.000000
    >>> print(f"{float(ds.energy[0]):.6f} {(np.exp(4) + np.exp(4 * np.cos(1))) / 16:.6f}")
    3.954986 3.954986
    >>> print(f"{float(ds.energy[-1]):.6f} {np.exp(4) / 8:.6f}")
    6.824769 6.824769

    USA conserves the mean angle: unequal clusters end at Σ_a m_a θ_a = 0.8.

    >>> usa = mf.SelfAttention(4.0, normalized=False)
    >>> ds = mf.cluster_dynamics(usa, [0.0, 1.0, 2.5], [0.5, 0.3, 0.2], t_end=50.0, n_outputs=50)
    >>> print(int(ds.n_clusters[-1]), f"{float(ds.angle[-1, 0]):.6f}")
    1 0.800000
    """
    model = _check_model(model)
    theta, m = _check_clusters(angles, masses)
    for name, value in (("t_end", t_end), ("merge_distance", merge_distance), ("t_first", t_first),
                        ("atol", atol)):
        check_positive(name, value)
    check_rtol("rtol", rtol)
    if not t_first < t_end:
        raise ValueError(f"t_first must be < t_end, got t_first={t_first!r}, t_end={t_end!r}")
    if isinstance(n_outputs, bool) or not isinstance(n_outputs, (int, np.integer)) or n_outputs < 1:
        raise ValueError(f"n_outputs must be an integer >= 1, got {n_outputs!r}")

    k = theta.size
    grid = np.concatenate([[0.0], np.geomspace(t_first, t_end, int(n_outputs))])
    times, states = [], []  # states: (angle per slot, mass per slot)
    slot_angle, slot_mass = np.zeros(k), np.zeros(k)
    alive = np.arange(k)
    events: dict[str, list] = {key: [] for key in ("time", "kept", "absorbed", "m_kept", "m_absorbed",
                                                   "e_before", "e_after")}
    nfev = 0

    def record(t: float, th: np.ndarray, mm: np.ndarray) -> None:
        slot_angle[alive] = np.mod(th, 2 * np.pi)
        slot_mass[alive] = mm
        times.append(t)
        states.append((slot_angle.copy(), slot_mass.copy()))

    def absorb(th: np.ndarray, mm: np.ndarray, t: float, event: bool) -> tuple[np.ndarray, np.ndarray]:
        """Merge the clusters within merge_distance; at an event, the located pair at least (the root
        finder places the contact to its own tolerance, possibly a hair outside merge_distance)."""
        nonlocal alive
        if th.size < 2:
            return th, mm
        e_before = particle_energy(model, EmpiricalMeasure(np.mod(th, 2 * np.pi), mm))
        reach = max(merge_distance, float(np.min(_gaps(th)[0]))) if event else merge_distance
        new_th, new_m, merged = merge_clusters(th, mm, reach * (1 + 1e-9))
        e_after = particle_energy(model, EmpiricalMeasure(new_th, new_m))
        for keep, gone, m_keep, m_gone, _ in merged:
            events["time"].append(t)
            events["kept"].append(int(alive[keep]))
            events["absorbed"].append(int(alive[gone]))
            events["m_kept"].append(m_keep)
            events["m_absorbed"].append(m_gone)
            events["e_before"].append(float(e_before))
            events["e_after"].append(float(e_after))
        gone = [g for _, g, *_ in merged]
        slot_angle[alive[gone]] = np.nan
        slot_mass[alive[gone]] = 0.0
        alive = np.delete(alive, gone)
        return new_th, new_m

    t = 0.0
    record(t, theta, m)
    theta, m = absorb(theta, m, t, event=False)
    if events["time"]:
        record(t, theta, m)
    success, message = True, "reached t_end"
    while t < t_end:
        if theta.size == 1:  # at rest from here on
            for tt in grid[grid > t]:
                record(float(tt), theta, m)
            message = "one cluster left"
            break

        def rhs(_t: float, y: np.ndarray, m: np.ndarray = m) -> np.ndarray:
            return cluster_velocity(y, m, model.beta, model.normalized)

        def contact(_t: float, y: np.ndarray) -> float:
            return float(np.min(_gaps(y)[0]) - merge_distance)

        contact.terminal = True  # type: ignore[attr-defined]
        contact.direction = -1  # type: ignore[attr-defined]
        t_eval = grid[(grid > t) & (grid <= t_end)]
        sol = solve_ivp(rhs, (t, t_end), theta, method="DOP853", t_eval=t_eval, events=contact,
                        rtol=rtol, atol=atol)
        nfev += int(sol.nfev)
        if sol.status == -1:
            success, message = False, f"integration failed at t = {sol.t[-1] if sol.t.size else t:.6g}: {sol.message}"
            break
        for j, tt in enumerate(sol.t):
            record(float(tt), np.asarray(sol.y)[:, j], m)
        if sol.status == 1 and sol.t_events[0].size:
            t = float(sol.t_events[0][0])
            y = sol.y_events[0][0]
            record(t, y, m)
            theta, m = absorb(y, m, t, event=True)
            record(t, theta, m)
            logger.info("merge at t = %.6g: %d clusters left", t, theta.size)
        else:
            t = t_end
    angle = np.array([s[0] for s in states])
    mass = np.array([s[1] for s in states])
    # an absorbed slot shows the angle of the cluster that absorbed it (mass 0); a chain of merges
    # (the absorber absorbed later) is followed by repeating the pass
    for _ in range(k):
        if not np.isnan(angle).any():
            break
        for kept, gone in zip(events["kept"], events["absorbed"]):
            rows = np.isnan(angle[:, gone])
            angle[rows, gone] = angle[rows, kept]
    energy = particle_energy(model, EmpiricalMeasure(angle, mass))
    ds = xr.Dataset(
        {
            "angle": (("time", "cluster"), angle, {"long_name": "cluster angle", "units": "rad"}),
            "mass": (("time", "cluster"), mass, {"long_name": "cluster mass"}),
            "n_clusters": ("time", (mass > 0).sum(axis=1), {"long_name": "number of clusters"}),
            "energy": ("time", np.asarray(energy), {"long_name": "interaction energy E_beta (paper 2, (3.5))"}),
            "merge_time": ("merge", np.asarray(events["time"], dtype=float)),
            "merge_kept": ("merge", np.asarray(events["kept"], dtype=int)),
            "merge_absorbed": ("merge", np.asarray(events["absorbed"], dtype=int)),
            "merge_mass_kept": ("merge", np.asarray(events["m_kept"], dtype=float)),
            "merge_mass_absorbed": ("merge", np.asarray(events["m_absorbed"], dtype=float)),
            "merge_energy_before": ("merge", np.asarray(events["e_before"], dtype=float)),
            "merge_energy_after": ("merge", np.asarray(events["e_after"], dtype=float)),
        },
        coords={"time": ("time", np.asarray(times), {"units": "1"}), "cluster": np.arange(k),
                "merge": np.arange(len(events["time"]))},
        attrs={
            "model": "SA" if model.normalized else "USA",
            "beta": float(model.beta),
            "normalized": int(model.normalized),
            "domain": "circle",
            "method": "reduced cluster dynamics: weighted Diracs, DOP853 between merges, merge at "
                      "merge_distance (arXiv:2410.06833)",
            "merge_distance": float(merge_distance),
            "rtol": float(rtol),
            "atol": float(atol),
            "t_end": float(t_end),
            "nfev": nfev,
            "success": int(success),
            "message": message,
            "meanfield_version": __version__,
        },
    )
    return ds

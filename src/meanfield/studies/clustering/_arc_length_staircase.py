r"""The large-β energy staircase on S¹ in arc-length time, with its merge jumps, for any β.

Geshkovski–Koubbi–Polyanskiy–Rigollet (arXiv:2410.06833, §"beyond metastability") plot the
energy of n = 5 SA tokens against a rescaled time: at large β the clusters sit on a plateau for a
time e^{β(1 - cos Δ)} (Δ the nearest separation), far beyond any clock t an integrator can reach
(β = 4000, Δ = 0.3: t ≈ e^{180}). The natural clock is the arc length of the trajectory,

    s(t) = ∫_0^t |ẋ(τ)| dτ,    |ẋ|² = Σ_i w_i |ẋ_i|²  (w_i = 1/n: the L²(μ) length of the velocity field),

in which every merge takes an arc of length ≈ m_b Δ/(m_a+m_b)-ish, whatever β. The clusters are
Diracs of masses m_a at angles θ_a (a cluster of SA tokens that coincide stays one), moved by

    dθ_a/ds = u_a / |u|,   u_a = e^{-c} Σ_b m_b e^{β(cos(θ_b-θ_a) - 1)} sin(θ_b-θ_a) / Σ_b m_b e^{β(cos(θ_b-θ_a) - 1)},

the SA velocity (paper 2, (7.1)) times e^{-c}, c = max_{a≠b} β(cos(θ_b-θ_a) - 1) the largest exponent
between two clusters: the direction u/|u| does not depend on the scale, and the shift keeps the
numerator at order one for any β (e^{-1645} at β = 4000, Δ = 0.94 would underflow). Two clusters closer
than ``merge_tolerance`` become one of mass m_a + m_b at their mass-weighted mean angle.

Energies are reported in the forms that are finite for every β (:func:`meanfield.energy` with
``scale="normalized"`` and ``"log"``): e^{-β}E_β = (1/2β) Σ_ab m_a m_b e^{β(cos(θ_a-θ_b) - 1)} and log E_β.

Merge jump. Merging a and b at separation Δ replaces the two pair terms (1/2β) m_a m_b e^{β cos Δ} of E_β
by (1/2β) m_a m_b e^β each, so

    e^{-β} ΔE_β = e^{-β} (m_a m_b/β)(e^β - e^{β cos Δ}) = (m_a m_b/β)(1 - e^{-β(1 - cos Δ)}),

with Δ the separation on the plateau before the merge (at the end of the previous merge); the measured
jump is the change of e^{-β}E_β from that plateau to the next. They differ by the change of the other
pair terms, (m_c m_d/β) e^{-β(1 - cos Δ_cd)} relative to m_a m_b/β: below 1e-15 when every other pair has
β(1 - cos Δ_cd) ≥ 35, and by the merge at a distance δ, (m_a m_b/2)δ² (δ = ``merge_tolerance``).

The tokens start at θ_i = c_i log β/√β, c = (0, 1, 3, 7, 10), the spacing of the follow-up's staircase
script (its gaps have β(1 - cos Δ) ≈ (c log β)²/2, so the hierarchy of plateaus is the same at every β).
"""

from __future__ import annotations

import numpy as np
import xarray as xr
from scipy.integrate import solve_ivp

from ...models._energy import energy
from ...models._self_attention import SelfAttention
from ..._validate import check_positive
from ..._version import __version__

__all__ = ["FOLLOW_UP_SPACING", "arc_length_staircase", "staircase_angles"]

#: token angles of the follow-up's staircase in units of log β/√β
FOLLOW_UP_SPACING = (0.0, 1.0, 3.0, 7.0, 10.0)
#: energy samples per merge (uniform in arc length)
SAMPLES_PER_MERGE = 200


def staircase_angles(beta: float) -> np.ndarray:
    """The five token angles θ_i = c_i log β/√β, c = :data:`FOLLOW_UP_SPACING`, of the large-β staircase.

    Parameters
    ----------
    beta : float
        β > 0.

    Returns
    -------
    ndarray of shape (5,)
        The angles [rad]; their gaps have β(1 - cos Δ) ≈ (c log β)²/2, the same hierarchy of plateaus for every β.

    Raises
    ------
    ValueError
        β not finite or ≤ 0.

    Examples
    --------
    >>> import meanfield as mf
    >>> print(mf.staircase_angles(4000.0).round(4))
    [0.     0.1311 0.3934 0.918  1.3114]
    """
    beta = check_positive("beta", beta)
    return np.asarray(FOLLOW_UP_SPACING) * np.log(beta) / np.sqrt(beta)


def _wrap(angle: np.ndarray) -> np.ndarray:
    return (angle + np.pi) % (2 * np.pi) - np.pi


def _direction(theta: np.ndarray, mass: np.ndarray, beta: float) -> np.ndarray:
    """u/|u| of the module docstring: the SA velocity of the clusters, scaled out, as a unit vector in L²(m)."""
    diff = _wrap(theta[None, :] - theta[:, None])  # θ_b - θ_a
    exponent = beta * (np.cos(diff) - 1.0)
    off = ~np.eye(theta.size, dtype=bool)
    shift = np.max(exponent[off])
    denominator = mass @ np.exp(exponent).T  # D_a = Σ_b m_b e^{β(cos - 1)} ≥ m_a
    numerator = (np.exp(np.where(off, exponent - shift, -np.inf)) * np.sin(diff)) @ mass
    u = numerator / denominator
    return u / np.sqrt(mass @ (u * u))


def arc_length_staircase(beta: float, angles: np.ndarray | None = None, *, merge_tolerance: float | None = None,
                         rtol: float = 1e-12) -> xr.Dataset:
    r"""SA tokens on S¹ run to their final merge in arc-length time: the energy staircase and its merge jumps.

    Parameters
    ----------
    beta : float
        β > 0, any size (β = 4000: E_β ≈ e^{4000} is reported as e^{-β}E_β and log E_β).
    angles : array_like (n,), optional
        Token angles (weights 1/n); default :func:`staircase_angles` (n = 5).
    merge_tolerance : float, optional
        Separation at which two clusters merge; default 1e-6/β (its energy defect (m_a m_b/2)δ² ≤ 1e-12/β²).
    rtol : float
        Relative tolerance of the DOP853 integration in arc length (absolute: ``rtol`` times 1e-3 rad).

    Returns
    -------
    xarray.Dataset
        Over ``arc_length`` s (samples, uniform within each merge): ``normalized_energy`` e^{-β}E_β,
        ``log_energy`` log E_β, ``clusters``. Over ``merge``: ``merge_arc_length``, ``mass_a``, ``mass_b``,
        ``separation`` Δ (the pair's angle on the plateau before the merge), ``energy_before`` and
        ``energy_after`` (e^{-β}E_β of the plateaus), ``measured_jump`` (their difference),
        ``predicted_jump`` (m_a m_b/β)(1 - e^{-β(1 - cos Δ)}) = e^{-β}(m_a m_b/β)(e^β - e^{β cos Δ}) and
        ``relative_error``. attrs: β, n, ``success`` (1 when the tokens ended in one cluster), the merge
        tolerance.

    Raises
    ------
    ValueError
        β not finite or ≤ 0, angles not a finite 1-D array of at least two, a merge tolerance not in (0, 0.1),
        rtol not in (0, 1e-3].

    Notes
    -----
    The clusters follow dθ_a/ds = X_a/|X| (the module docstring), |X|² = Σ_a m_a X_a², X the SA velocity,
    so s is the arc length ∫|ẋ| dt of the n tokens in L²(μ). At each merge of a and b (separation Δ),

    .. math::

        e^{-\beta}\,\Delta\mathsf{E}_\beta = e^{-\beta}\,\frac{m_a m_b}{\beta}\big(e^{\beta} - e^{\beta\cos\Delta}\big).

    Examples
    --------
    >>> import meanfield as mf
    >>> ds = mf.arc_length_staircase(1000.0)
    >>> int(ds.sizes["merge"]), bool(float(ds.relative_error.max()) < 1e-8), int(ds.attrs["success"])
    (4, True, 1)
    """
    beta = check_positive("beta", beta)
    theta0 = staircase_angles(beta) if angles is None else np.asarray(angles, dtype=float)
    if theta0.ndim != 1 or theta0.size < 2 or not np.all(np.isfinite(theta0)):
        raise ValueError(f"angles must be a finite 1-D array of at least two token angles, got shape "
                         f"{theta0.shape}")
    delta = 1e-6 / beta if merge_tolerance is None else float(merge_tolerance)
    if not 0 < delta < 0.1:
        raise ValueError(f"merge_tolerance must be in (0, 0.1) rad, got {merge_tolerance!r}")
    if not 0 < rtol <= 1e-3:
        raise ValueError(f"rtol must be in (0, 1e-3], got {rtol!r}")
    n = theta0.size
    model = SelfAttention(beta)
    label = np.arange(n)  # the cluster of each token
    theta, mass = theta0.copy(), np.full(n, 1.0 / n)
    s0, samples, merges = 0.0, [], []

    def energies(cluster_angles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        tokens = np.atleast_2d(cluster_angles)[:, label]
        return (energy(model, tokens, domain="circle", scale="normalized"),
                energy(model, tokens, domain="circle", scale="log"))

    def gap(_: float, y: np.ndarray) -> float:
        diff = np.abs(_wrap(y[None, :] - y[:, None]))
        return float(np.min(diff[np.triu_indices(y.size, 1)])) - delta

    gap.terminal, gap.direction = True, -1
    start_energy = float(energies(theta)[0][0])
    failure = ""
    while theta.size > 1:
        diff = np.abs(_wrap(theta[None, :] - theta[:, None]))
        sol = solve_ivp(lambda _, y: _direction(y, mass, beta), (0.0, 2 * np.pi), theta, method="DOP853",
                        rtol=rtol, atol=rtol * 1e-3, events=gap, dense_output=True)
        if sol.status != 1:
            failure = f"no merge within an arc length 2 pi of s = {s0:.6g} ({sol.message})"
            break
        length = float(sol.t_events[0][0])
        end = sol.y_events[0][0]
        grid = np.linspace(0.0, length, SAMPLES_PER_MERGE)
        normalized, log = energies(sol.sol(grid).T)
        samples.append((s0 + grid, normalized, log, np.full(grid.size, theta.size)))
        sep = np.abs(_wrap(end[None, :] - end[:, None]))
        sep[np.tril_indices(end.size)] = np.inf
        a, b = np.unravel_index(np.argmin(sep), sep.shape)
        merged = mass[a] + mass[b]
        angle = end[a] + mass[b] / merged * _wrap(end[b] - end[a])
        keep = np.ones(end.size, dtype=bool)
        keep[b] = False
        plateau_separation, pair = float(diff[a, b]), (float(mass[a]), float(mass[b]))
        theta = np.where(np.arange(end.size) == a, angle, end)[keep]
        label = np.searchsorted(np.flatnonzero(keep), np.where(label == b, a, label))
        mass = np.where(np.arange(end.size) == a, merged, mass)[keep]
        after = float(energies(theta)[0][0])
        predicted = pair[0] * pair[1] / beta * -np.expm1(beta * (np.cos(plateau_separation) - 1.0))
        merges.append((s0 + length, *pair, plateau_separation, start_energy, after, after - start_energy,
                       predicted))
        s0, start_energy = s0 + length, after
    s, normalized, log, count = (np.concatenate(parts) for parts in zip(*samples)) if samples else [np.empty(0)] * 4
    table = np.array(merges).reshape(-1, 8)
    relative = np.abs(table[:, 6] - table[:, 7]) / table[:, 7]
    merge_vars = ("merge_arc_length", "mass_a", "mass_b", "separation", "energy_before", "energy_after",
                  "measured_jump", "predicted_jump")
    merge_attrs = ("arc length s at the merge", "mass of the first cluster", "mass of the second cluster",
                   "their angle on the plateau before the merge [rad]", "e^(-beta) E_beta on that plateau",
                   "e^(-beta) E_beta after the merge", "energy_after - energy_before",
                   "(m_a m_b/beta)(1 - e^(-beta(1 - cos Delta))) = e^(-beta)(m_a m_b/beta)(e^beta - e^(beta cos Delta))")
    data = {name: ("merge", table[:, k], {"long_name": text}) for k, (name, text)
            in enumerate(zip(merge_vars, merge_attrs))}
    data["relative_error"] = ("merge", relative, {"long_name": "|measured - predicted| / predicted"})
    data["normalized_energy"] = ("sample", normalized, {"long_name": "e^(-beta) E_beta", "units": "1"})
    data["log_energy"] = ("sample", log, {"long_name": "log E_beta", "units": "1"})
    data["clusters"] = ("sample", count.astype(int), {"long_name": "number of clusters"})
    success = int(not failure and theta.size == 1)
    attrs = {"model": "SA", "beta": beta, "n_particles": n, "merge_tolerance": delta, "rtol": rtol,
             "success": success, "message": failure or "the tokens merged into one cluster",
             "arc_length_description": "s = int |x'| dt, |x'|^2 = sum_i |x_i'|^2 / n",
             "meanfield_version": __version__}
    return xr.Dataset(data, coords={"arc_length": ("sample", s, {"long_name": "arc length s of the trajectory"})},
                      attrs=attrs)

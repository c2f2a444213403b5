r"""The metastable energy staircase on S¹: plateaus, merges and their energy jumps.

At large β the self-attention dynamics on S¹ (paper 2, Problem 1 and
Figure 4; Geshkovski–Koubbi–Polyanskiy–Rigollet, arXiv:2410.06833) first
gathers the mass into clusters in a time that does not grow with β, then
stays near a configuration of k clusters for a time that grows like e^{cβ},
until two clusters merge; the energy E_β (paper 2, (3.5)) climbs a
staircase, one step per merge.

Clusters of a state
-------------------
* particles: single linkage at ``tolerance`` (the rule of
  :func:`meanfield.number_of_clusters`): consecutive sorted angles closer
  than ``tolerance`` belong to one cluster;
* a density: the maximal circular runs of nodes with ρ ≥ ``density_threshold``
  / 2π (ten times the uniform density by default) — "mass lumps"; every other
  node joins its nearest lump, so the lumps share all the mass; before the
  clusters form no node is that high and the count is 0 (not clustered);
* a :func:`cluster_dynamics` Dataset: its clusters of positive mass.
Each cluster has a mass m_a, a circular mean angle θ_a and an rms angular
width s_a.

Two-cluster energy jump
-----------------------
For Diracs, E = (1/2β) Σ_{a,b} m_a m_b e^{β cos(θ_a-θ_b)}. Merging a and b
(separation Δ) replaces the pair terms 2 m_a m_b e^{β cos Δ} by 2 m_a m_b e^β:

    ΔE_pair = (m_a m_b / β)(e^β - e^{β cos Δ})                        (*)

plus the change of every other inter-cluster term (a and b with the other
clusters c, and the pairs c, d that drift meanwhile), of relative size
e^{-β(1 - cos Δ_cd)}. Both X_before and X_after, X the inter-cluster energy
(1/2β) Σ_{c≠d} m_c m_d e^{β cos(θ_c-θ_d)} without the merging pair, are
positive, so |X_after - X_before| ≤ max(X_before, X_after):
:func:`energy_staircase` reports it (plus 1e-12 E for round-off) as the bound
of what (*) neglects. Finite width: for a cluster of rms width s (two independent
members differ by variance 2s²), ⟨e^{β cos u}⟩ = e^β (1 - β s² + O(β² s⁴)),
so the self-energy (m²/2β)e^β is lowered by W = (e^β/2) m² s²; the jump
predicted for clusters of measured widths is ΔE_pair - (W_after - W_before),
W = (e^β/2) Σ_a m_a² s_a². With σ = 0 the widths shrink exponentially in time
(rate 1 for SA), so on a long plateau W is negligible; a finite-volume grid
keeps at least one cell (s ≳ Δx/√12), and noise σ > 0 keeps s² ≈ σ (SA).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ...models._attention_weights import attention_exponent, interaction_energy
from ...models._self_attention import SelfAttention
from ..._version import __version__
from ...particles import number_of_clusters

__all__ = ["cluster_decomposition", "energy_staircase", "equispaced_instability_rate", "two_cluster_jump"]


def two_cluster_jump(beta: float, mass_a: float, mass_b: float, separation: float) -> float:
    r"""Energy gained when two Dirac clusters merge: (m_a m_b/β)(e^β - e^{β cos Δ}).

    From E_β = (1/2β) Σ_{a,b} m_a m_b e^{β cos(θ_a-θ_b)} (paper 2, (3.5)) with
    the cross terms with other clusters held fixed (module docstring).

    Parameters
    ----------
    beta : float
        β > 0.
    mass_a, mass_b : float
        Cluster masses in (0, 1].
    separation : float
        Angle Δ between the clusters before the merge (radians).

    Returns
    -------
    float
        The jump ΔE_pair = (m_a m_b/β)(e^β - e^{β cos Δ}) ≥ 0 of the energy E_β.

    Raises
    ------
    ValueError
        β not finite and > 0, a mass outside (0, 1], or a non-finite separation.

    Notes
    -----
    For Dirac clusters of masses m_a at angles θ_a the energy (3.5) is

    .. math::

        E_\beta = \frac{1}{2\beta} \sum_{a,b} m_a m_b\, e^{\beta\cos(\theta_a - \theta_b)},

    and merging a and b (separation Δ) replaces the two cross terms
    m_a m_b e^{β cos Δ} by m_a m_b e^β:

    .. math::

        \Delta E_{\text{pair}} = \frac{m_a m_b}{\beta}\bigl(e^{\beta} - e^{\beta\cos\Delta}\bigr).

    Examples
    --------
    Two antipodal halves at β = 4: (1/16)(e^4 - e^{-4}).

    >>> import numpy as np
    >>> import meanfield as mf
    >>> print(f"{mf.two_cluster_jump(4.0, 0.5, 0.5, np.pi):.10f}")
    3.4112396496
    >>> print(f"{(np.exp(4) - np.exp(-4)) / 16:.10f}")
    3.4112396496

    The same jump from the energies of two particles before and after the merge:

    >>> model = mf.SelfAttention(4.0)
    >>> before = mf.energy(model, np.array([0.0, np.pi]), domain="circle")
    >>> after = mf.energy(model, np.array([0.0, 0.0]), domain="circle")
    >>> print(f"{after - before:.10f}")
    3.4112396496
    """
    if not (np.isfinite(beta) and beta > 0):
        raise ValueError(f"beta must be finite and > 0, got {beta!r}")
    for name, value in (("mass_a", mass_a), ("mass_b", mass_b)):
        if not (np.isfinite(value) and 0 < value <= 1):
            raise ValueError(f"{name} must be in (0, 1], got {value!r}")
    if not np.isfinite(separation):
        raise ValueError(f"separation must be finite, got {separation!r}")
    kept = -np.expm1(attention_exponent.py_func(beta, np.cos(separation)))  # 1 - a_β across the pair
    return float(interaction_energy(beta, 2 * mass_a * mass_b * kept))


def equispaced_instability_rate(beta: float, k: int, normalized: bool = True) -> float:
    r"""Largest growth rate of k equal Dirac clusters equally spaced on S¹ (a saddle of E_β).

    The configuration θ_a = 2πa/k, m_a = 1/k is stationary. Linearising the
    reduced dynamics (:func:`cluster_dynamics`) with s(u) = e^{β cos u} sin u:

        δθ̇_a = -(1/D) Σ_b m_b s'(θ_a - θ_b)(δθ_a - δθ_b),

    D = Σ_b m_b e^{β cos(θ_a-θ_b)} (SA) or 1 (USA), a circulant system whose
    Fourier mode p has the rate

        λ_p = -(1/(k D)) Σ_{b=1}^{k-1} s'(2πb/k) (1 - cos(2πpb/k)),
        s'(u) = (cos u - β sin² u) e^{β cos u}.

    Returns max_p λ_p. For large β (neighbours at Δ = 2π/k dominate) and
    even k: λ ≈ 4(β sin²Δ - cos Δ) e^{-β(1 - cos Δ)} (SA), so the k-cluster
    plateau lasts ~ e^{β(1 - cos(2π/k))}·log(1/ε) from an offset ε. k = 2:
    λ = 2e^{-β}/(e^β + e^{-β}) (SA).

    Parameters
    ----------
    beta : float
        β > 0.
    k : int
        Number of clusters, ≥ 2.
    normalized : bool
        SA (True) or USA (False).

    Returns
    -------
    float
        max_p λ_p, the growth rate of the most unstable perturbation.

    Raises
    ------
    ValueError
        β not finite and > 0, or k not an integer ≥ 2.

    Notes
    -----
    With s(u) = e^{β cos u} sin u and D = Σ_b m_b e^{β cos(θ_a - θ_b)} (SA)
    or D = 1 (USA), the rate of the Fourier mode p of the circulant system is

    .. math::

        \lambda_p = -\frac{1}{k D} \sum_{b=1}^{k-1} s'\Bigl(\frac{2\pi b}{k}\Bigr)
                    \Bigl(1 - \cos\frac{2\pi p b}{k}\Bigr),
        \qquad
        s'(u) = (\cos u - \beta \sin^2 u)\, e^{\beta\cos u}.

    For k = 2 this is λ = 2e^{-β}/(e^β + e^{-β}) (SA) and λ = e^{-β} (USA).

    Examples
    --------
    Two antipodal clusters, against the closed forms 2e^{-β}/(e^β + e^{-β}) (SA) and e^{-β} (USA):

    >>> import numpy as np
    >>> import meanfield as mf
    >>> print(f"{mf.equispaced_instability_rate(1.0, 2):.6f} {2 * np.exp(-1) / (np.e + np.exp(-1)):.6f}")
    0.238406 0.238406
    >>> print(f"{mf.equispaced_instability_rate(1.0, 2, normalized=False):.6f} {np.exp(-1):.6f}")
    0.367879 0.367879

    Four clusters at β = 5, near the large-β estimate 4(β sin²Δ - cos Δ) e^{-β(1 - cos Δ)}, Δ = π/2:

    >>> print(f"{mf.equispaced_instability_rate(5.0, 4):.4f} {4 * 5.0 * np.exp(-5.0):.4f}")
    0.1330 0.1348
    """
    if not (np.isfinite(beta) and beta > 0):
        raise ValueError(f"beta must be finite and > 0, got {beta!r}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise ValueError(f"k must be an integer >= 2, got {k!r}")
    u = 2 * np.pi * np.arange(k) / k
    # scaled by e^{-β}: s'(u) e^{-β} and D e^{-β}
    weights = np.exp(attention_exponent.py_func(beta, np.cos(u)))
    ds = (np.cos(u) - beta * np.sin(u) ** 2) * weights
    den = np.mean(weights) if normalized else np.exp(-beta)
    p = np.arange(k)
    rates = -np.sum(ds[None, 1:] * (1 - np.cos(np.outer(p, u[1:]))), axis=1)  # p·u_b = 2πpb/k
    return float(np.max(rates / (k * den)))


def _from_groups(theta: np.ndarray, weight: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, ...]:
    """Mass, circular mean angle and rms width of each labelled group of weighted angles."""
    n = int(labels.max()) + 1
    mass = np.bincount(labels, weight, n)
    z = np.bincount(labels, weight * np.cos(theta), n) + 1j * np.bincount(labels, weight * np.sin(theta), n)
    mean = np.mod(np.angle(z), 2 * np.pi)
    dev = (theta - mean[labels] + np.pi) % (2 * np.pi) - np.pi
    width = np.sqrt(np.bincount(labels, weight * dev**2, n) / mass)
    return mass, mean, width


def _circular_runs(flag: np.ndarray) -> np.ndarray:
    """Labels 0, 1, … of the maximal circular runs of True in ``flag`` (−1 where False)."""
    labels = np.full(flag.size, -1)
    if not flag.any():
        return labels
    if flag.all():
        return np.zeros(flag.size, dtype=int)
    start = int(np.argmin(flag))  # a False node: runs do not wrap past it
    rolled = np.roll(flag, -start)
    run = np.cumsum(rolled & ~np.roll(rolled, 1)) - 1
    labels = np.roll(np.where(rolled, run, -1), start)
    return labels


def _kind(ds: xr.Dataset) -> str:
    if "density" in ds and "theta" in ds.coords:
        return "density"
    if "positions" in ds and ds.attrs.get("domain", "circle") == "circle" and ds["positions"].ndim == 2:
        return "particles"
    if "mass" in ds and "angle" in ds:
        return "clusters"
    raise ValueError("ds must be a circle Dataset of mf.solve (density over theta), mf.simulate (positions of "
                     "one system on S¹) or mf.cluster_dynamics (angle, mass)")


def cluster_decomposition(ds: xr.Dataset, index: int, *, tolerance: float = 1e-3,
                          density_threshold: float = 10.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Masses, mean angles and rms widths of the clusters of output ``index`` of ``ds``.

    See the module docstring for what a cluster is for particles, densities
    and :func:`cluster_dynamics` results. Returns three arrays of length k
    (k = 0 for a density with no node above the threshold).
    """
    kind = _kind(ds)
    if kind == "density":
        rho = np.asarray(ds["density"].isel(time=index))
        theta = np.asarray(ds["theta"])
        labels = _circular_runs(rho >= density_threshold / (2 * np.pi))
        inside = np.flatnonzero(labels >= 0)
        if inside.size == 0:
            return np.zeros(0), np.zeros(0), np.zeros(0)
        # every node joins the lump of its nearest lump node, so that the lumps hold all the mass
        n = theta.size
        pos = np.searchsorted(inside, np.arange(n)) % inside.size
        left, right = inside[pos - 1], inside[pos]
        to_left = (np.arange(n) - left) % n <= (right - np.arange(n)) % n
        labels = labels[np.where(to_left, left, right)]
        return _from_groups(theta, rho * (2 * np.pi / n), labels)
    if kind == "particles":
        theta = np.mod(np.asarray(ds["positions"].isel(time=index), dtype=float), 2 * np.pi)
        weight = np.full(theta.size, 1.0 / theta.size)
        order = np.argsort(theta)
        s = theta[order]
        gaps = np.diff(np.append(s, s[0] + 2 * np.pi))
        chord = 2 * np.sin(np.minimum(gaps, 2 * np.pi - gaps) / 2)
        cut = chord > tolerance
        if not cut.any():
            return _from_groups(s, weight, np.zeros(s.size, dtype=int))
        first = (int(np.argmax(cut)) + 1) % s.size  # a cluster starts after a cut
        rolled_cut = np.roll(cut, -first)
        labels = np.concatenate([[0], np.cumsum(rolled_cut[:-1])])
        return _from_groups(np.roll(s, -first), weight, labels)
    mass = np.asarray(ds["mass"].isel(time=index))
    keep = mass > 0
    return mass[keep], np.asarray(ds["angle"].isel(time=index))[keep], np.zeros(int(keep.sum()))


def _counts(ds: xr.Dataset, tolerance: float, density_threshold: float) -> np.ndarray:
    kind = _kind(ds)
    if kind == "density":
        above = np.asarray(ds["density"]) >= density_threshold / (2 * np.pi)
        rises = above & ~np.roll(above, 1, axis=-1)
        return np.where(above.all(axis=-1), 1, rises.sum(axis=-1))
    if kind == "particles":
        return np.asarray(number_of_clusters(np.asarray(ds["positions"]), tolerance, domain="circle"))
    return np.asarray(ds["n_clusters"])


def _pair_match(before: tuple[np.ndarray, ...], after: tuple[np.ndarray, ...]) -> tuple[int, int]:
    """The circularly adjacent pair of ``before`` whose merge best reproduces ``after`` (masses, angles)."""
    m, th, _ = before
    m2, th2, _ = after
    order = np.argsort(th)
    best, cost_best = (int(order[0]), int(order[1 % order.size])), np.inf
    for i in range(order.size):
        a, b = int(order[i]), int(order[(i + 1) % order.size])
        mm = np.append(np.delete(m, [a, b]), m[a] + m[b])
        z = m[a] * np.exp(1j * th[a]) + m[b] * np.exp(1j * th[b])
        tt = np.append(np.delete(th, [a, b]), np.angle(z))
        dist = np.abs((th2[:, None] - tt[None, :] + np.pi) % (2 * np.pi) - np.pi)
        nearest = np.argmin(dist, axis=1)
        cost = np.sum(np.abs(m2 - mm[nearest])) + np.sum(dist[np.arange(th2.size), nearest])
        if cost < cost_best:
            best, cost_best = (a, b), cost
    return best


def energy_staircase(ds: xr.Dataset, *, tolerance: float = 1e-3, density_threshold: float = 10.0,
                     min_length: float = 1.0) -> xr.Dataset:
    r"""Plateaus and merges of the energy staircase of one run on S¹.

    The number of clusters k(t) is computed at every output (module
    docstring). A plateau is a maximal stretch of outputs with the same
    k ≥ 1 lasting at least ``min_length`` (shorter stretches, e.g. stragglers
    joining during cluster formation, are dropped and their neighbours with
    equal k joined). It starts at the first output with that k and ends at the
    first output of the next plateau (the merge time, resolved to the output
    spacing); the last plateau is open (``plateau_complete`` = 0). Its
    energy level is E at the output nearest the geometric middle √(t_start t_end)
    of the plateau: a plateau is flat in log time, while near its ends the
    clusters are still collapsing or the next pair is already approaching.

    Each pair of consecutive plateaus with k → k - 1 is a merge: the merged
    pair (a, b) is the adjacent pair whose merge best reproduces the clusters
    after; the measured jump is the difference of the energy levels; the
    two-cluster formula (*) of the module docstring gives ``jump_pair`` from
    the state before, ``jump_predicted`` adds the finite-width correction
    -(W_after - W_before), and ``jump_bound`` = max(X_before, X_after) bounds
    the inter-cluster terms the formula neglects.

    Parameters
    ----------
    ds : xarray.Dataset
        One run on the circle: :func:`meanfield.solve` (``density``),
        :func:`meanfield.simulate` (``positions`` (time, particle), one
        system) or :func:`cluster_dynamics`. attrs ``beta`` and ``normalized``
        are read (SelfAttention runs only).
    tolerance : float
        Linking distance of particles (chord), as :func:`meanfield.number_of_clusters`.
    density_threshold : float
        A density's clusters are runs of nodes with ρ ≥ density_threshold/2π.
    min_length : float
        Shortest plateau (time).

    Returns
    -------
    xarray.Dataset
        Over ``plateau``: ``plateau_start``, ``plateau_end``, ``plateau_length``,
        ``plateau_clusters``, ``plateau_complete``, ``plateau_level_time``,
        ``plateau_energy``, ``plateau_width`` (largest rms cluster width), and
        ``plateau_masses``/``plateau_angles`` (plateau, slot), NaN-padded.
        Over ``merge``: ``merge_time``, ``merge_mass_a``, ``merge_mass_b``,
        ``merge_separation``, ``jump_measured``, ``jump_pair``,
        ``jump_predicted``, ``jump_bound``. Also ``n_clusters`` over ``time``.
        attrs say how the staircase was measured.

    Raises
    ------
    TypeError
        ``ds`` is not an xarray Dataset.
    ValueError
        A Dataset that is not a circle run of a SelfAttention model, bad
        ``tolerance``, ``density_threshold`` or ``min_length``.

    Notes
    -----
    For a merge of clusters a, b (masses m_a, m_b, separation Δ) of a state
    with clusters of masses m_c, angles θ_c and rms widths s_c,

    .. math::

        \Delta E_{\text{pair}} = \frac{m_a m_b}{\beta}\bigl(e^{\beta} - e^{\beta\cos\Delta}\bigr),
        \qquad
        W = \frac{e^{\beta}}{2} \sum_c m_c^2 s_c^2,
        \qquad
        X = \frac{1}{2\beta} \sum_{c \ne d} m_c m_d\, e^{\beta\cos(\theta_c - \theta_d)},

    X without the merging pair; ``jump_pair`` = ΔE_pair, ``jump_predicted`` =
    ΔE_pair - (W_after - W_before) and ``jump_bound`` = max(X_before, X_after)
    (+ 1e-12 |E| for round-off).

    Examples
    --------
    Four clusters at β = 6 merge pairwise, 4 → 3 → 2; each measured jump of
    the energy is the two-cluster formula up to the neglected inter-cluster terms:

    >>> import numpy as np
    >>> import meanfield as mf
    >>> run = mf.cluster_dynamics(mf.SelfAttention(6.0), [0.0, 1.7, 3.3, 4.8], t_end=1e4)
    >>> stairs = mf.energy_staircase(run)
    >>> stairs.plateau_clusters.values.tolist()
    [4, 3, 2]
    >>> print(np.round(stairs.jump_measured.values, 3), np.round(stairs.jump_pair.values, 3))
    [4.175 4.182] [4.185 4.183]
    >>> bool(np.all(np.abs(stairs.jump_measured - stairs.jump_pair) <= stairs.jump_bound))
    True
    """
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"ds must be an xarray.Dataset, got {type(ds).__name__}")
    for name, value in (("tolerance", tolerance), ("density_threshold", density_threshold)):
        if not (np.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    if not (np.isfinite(min_length) and min_length >= 0):
        raise ValueError(f"min_length must be finite and >= 0, got {min_length!r}")
    kind = _kind(ds)
    if "beta" not in ds.attrs or ds.attrs.get("model", "SA") not in ("SA", "USA", "SelfAttention"):
        raise ValueError("ds must come from a SelfAttention run (attrs 'beta' and 'normalized')")
    beta = float(ds.attrs["beta"])
    model = SelfAttention(beta, normalized=bool(ds.attrs.get("normalized", True)))
    time = np.asarray(ds["time"], dtype=float)
    energy = np.asarray(ds["energy"], dtype=float)
    counts = _counts(ds, tolerance, density_threshold)

    # runs of equal count, short ones dropped, equal neighbours joined
    edges = np.flatnonzero(np.diff(counts)) + 1
    starts = np.concatenate([[0], edges])
    stops = np.concatenate([edges, [time.size]])
    runs = []
    for a, b in zip(starts, stops):
        end_time = time[b] if b < time.size else time[-1]
        if counts[a] >= 1 and end_time - time[a] >= min_length:
            if runs and runs[-1][2] == counts[a]:
                runs[-1][1] = b
            else:
                runs.append([a, b, int(counts[a])])
    positive = time[time > 0]
    plateaus = []
    for a, b, k in runs:
        # the level: E at the output nearest the geometric middle of the plateau (a plateau is flat in log
        # time; its ends hold the last of the cluster formation or of the previous merge, and the approach
        # of the next merging pair)
        t_lo = max(time[a], positive[0]) if positive.size else time[a]
        t_hi = time[b] if b < time.size else time[-1]
        level = a + int(np.argmin(np.abs(np.log(np.maximum(time[a:b], t_lo) / np.sqrt(t_lo * t_hi)))))
        clusters = cluster_decomposition(ds, level, tolerance=tolerance, density_threshold=density_threshold)
        plateaus.append({"start": time[a], "end": time[b] if b < time.size else time[-1],
                         "complete": b < time.size, "k": k, "level": level, "clusters": clusters})
    n_slots = max([p["k"] for p in plateaus], default=0)
    masses = np.full((len(plateaus), n_slots), np.nan)
    angles = np.full((len(plateaus), n_slots), np.nan)
    for i, p in enumerate(plateaus):
        m, th, _ = p["clusters"]
        masses[i, :m.size], angles[i, :m.size] = m, th

    merges = {key: [] for key in ("time", "ma", "mb", "sep", "measured", "pair", "predicted", "bound")}
    for p, q in zip(plateaus[:-1], plateaus[1:]):
        if q["k"] != p["k"] - 1 or p["clusters"][0].size != p["k"] or q["clusters"][0].size != q["k"]:
            continue
        a, b = _pair_match(p["clusters"], q["clusters"])
        m, th, s = p["clusters"]
        sep = float(np.abs((th[a] - th[b] + np.pi) % (2 * np.pi) - np.pi))
        pair = two_cluster_jump(beta, m[a], m[b], sep)
        width = [0.5 * np.exp(beta) * float(np.sum(c[0] ** 2 * c[2] ** 2)) for c in (p["clusters"], q["clusters"])]
        cross_before = _cross_terms(model, m, th, (a, b))
        cross_after = _cross_terms(model, *q["clusters"][:2], None)
        merges["time"].append(p["end"])
        merges["ma"].append(m[a])
        merges["mb"].append(m[b])
        merges["sep"].append(sep)
        merges["measured"].append(energy[q["level"]] - energy[p["level"]])
        merges["pair"].append(pair)
        merges["predicted"].append(pair - (width[1] - width[0]))
        merges["bound"].append(max(cross_before, cross_after) + 1e-12 * abs(energy[q["level"]]))  # + round-off
    out = xr.Dataset(
        {
            "n_clusters": ("time", counts, {"long_name": "number of clusters"}),
            "plateau_start": ("plateau", np.array([p["start"] for p in plateaus], dtype=float)),
            "plateau_end": ("plateau", np.array([p["end"] for p in plateaus], dtype=float)),
            "plateau_length": ("plateau", np.array([p["end"] - p["start"] for p in plateaus], dtype=float)),
            "plateau_clusters": ("plateau", np.array([p["k"] for p in plateaus], dtype=int)),
            "plateau_complete": ("plateau", np.array([int(p["complete"]) for p in plateaus], dtype=int)),
            "plateau_level_time": ("plateau", np.array([time[p["level"]] for p in plateaus], dtype=float)),
            "plateau_energy": ("plateau", np.array([energy[p["level"]] for p in plateaus], dtype=float)),
            "plateau_width": ("plateau", np.array([float(np.max(p["clusters"][2], initial=0.0))
                                                   for p in plateaus], dtype=float)),
            "plateau_masses": (("plateau", "slot"), masses),
            "plateau_angles": (("plateau", "slot"), angles),
            "merge_time": ("merge", np.asarray(merges["time"], dtype=float)),
            "merge_mass_a": ("merge", np.asarray(merges["ma"], dtype=float)),
            "merge_mass_b": ("merge", np.asarray(merges["mb"], dtype=float)),
            "merge_separation": ("merge", np.asarray(merges["sep"], dtype=float)),
            "jump_measured": ("merge", np.asarray(merges["measured"], dtype=float)),
            "jump_pair": ("merge", np.asarray(merges["pair"], dtype=float)),
            "jump_predicted": ("merge", np.asarray(merges["predicted"], dtype=float)),
            "jump_bound": ("merge", np.asarray(merges["bound"], dtype=float)),
        },
        coords={"time": time, "plateau": np.arange(len(plateaus)), "merge": np.arange(len(merges["time"]))},
        attrs={"beta": beta, "normalized": int(model.normalized), "source": kind, "tolerance": float(tolerance),
               "density_threshold": float(density_threshold), "min_length": float(min_length),
               "method": "plateaus of the cluster count; jumps against (m_a m_b/beta)(e^beta - e^{beta cos D}) "
                         "(arXiv:2410.06833)", "meanfield_version": __version__},
    )
    return out


def _cross_terms(model: SelfAttention, m: np.ndarray, th: np.ndarray, pair: tuple[int, int] | None) -> float:
    """(1/2β) Σ_{c ≠ d} m_c m_d e^{β cos(θ_c - θ_d)} over ordered pairs of distinct clusters other than
    ``pair``: the inter-cluster energy that the two-cluster formula holds fixed."""
    terms = m[:, None] * m[None, :] * np.exp(attention_exponent.py_func(model.beta, np.cos(th[:, None] - th[None, :])))
    np.fill_diagonal(terms, 0.0)
    if pair is not None:
        terms[pair[0], pair[1]] = terms[pair[1], pair[0]] = 0.0
    return float(interaction_energy(model.beta, np.sum(terms)))

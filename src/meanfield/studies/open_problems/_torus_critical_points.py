"""Critical points of the interaction energy E_β on the torus Tⁿ and paper 2's Problem 3 (§7.2).

    E_β(θ) = (1/(2βn²)) Σ_{i,j} e^{β cos(θ_i − θ_j)}                                  (7.4)

Problem 3: apart from the global maxima (synchronisation, all θ_i equal), is every critical point a
strict saddle, i.e. does its Hessian have a positive eigenvalue? Proven for β ≤ 1 and β ≥ n²/π²;
open in between. This module enumerates the critical points for 2 ≤ n ≤ 8 and classifies them.

Method: plain damped Newton (:func:`newton_critical_points`) from many seeded random starts, all
advanced at once, plus the known families (synchronised, equispaced, antipodal two-cluster states,
equal clusters at the vertices of a regular k-gon, k | n), then deduplication modulo the symmetries.
Deflation is not used: it makes start k depend on the roots of starts 0 … k − 1, which serialises
the starts, and a deflation operator invariant under rotations, permutations and the reflection has
to range over the orbit of each root (n!·2 images); for n ≤ 8 the number of orbits is small, and the
completeness of the enumeration is measured instead, by the stability of the counts when the number
of starts is doubled (:func:`critical_point_count_stability`).

Symmetries: E_β is invariant under rotations θ → θ + c·1, permutations of the particles and the
reflection θ → −θ. Two critical points are the same when their cyclic gap sequences (the gaps between
consecutive sorted angles mod 2π, summing to 2π) agree up to a cyclic shift, and, with
``reflection=True`` (the default), up to reversal, within ``distinct_tolerance`` (max norm, radians).
Every count is a count of such orbits.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import xarray as xr

from ..._validate import check_flag, check_positive, check_positive_int
from ..._version import __version__
from ._torus_orbits import canonical_gaps, cluster_pattern, gaps_of, orbit_labels
from ._torus_newton import (check_beta_positive, complement_basis, newton_critical_points,
                            newton_direction, residual_of, scaled_gradient, scaled_hessian, scaled_spectrum,
                            torus_energy, torus_gradient, torus_hessian, torus_hessian_spectrum)

__all__ = ["CRITICAL_POINT_CLASSES", "CriticalPointMap", "TORUS_N_MAX", "canonical_gaps",
           "critical_point_count_stability", "critical_point_map", "default_betas", "known_critical_points",
           "torus_critical_points", "torus_energy", "torus_gradient", "torus_hessian", "torus_hessian_spectrum"]

logger = logging.getLogger(__name__)

TORUS_N_MAX = 8
"""Largest n enumerated."""
CRITICAL_POINT_CLASSES = ("synchronised", "strict saddle", "local maximum", "degenerate")
"""Classes of a critical point, in the order of the ``class`` coordinate."""
_BLOCK = 64
"""Random starts are drawn in blocks of 64, block b from SeedSequence(seed, spawn_key=(n, b))."""
_CLUSTER_NOISE = 0.05
"""Standard deviation (rad) of the particles about their cluster centre in a clustered start."""


def _check_n(n: int) -> int:
    n = check_positive_int("n", n)
    if not 2 <= n <= TORUS_N_MAX:
        raise ValueError(f"n must be between 2 and {TORUS_N_MAX} particles (the enumeration grows like n!), got n={n}")
    return n


def known_critical_points(n: int) -> dict[str, np.ndarray]:
    """The families of critical points of E_β that exist for every β > 0, by symmetry.

    * ``"synchronised"``: all θ_i = 0 (the global maximum);
    * ``"equispaced"``: θ_j = 2πj/n;
    * ``"antipodal n-a+a"``: n − a particles at 0 and a at π, 1 ≤ a ≤ n/2 (every sine vanishes);
    * ``"polygon kxm"``: m = n/k particles at each vertex 2πj/k of a regular k-gon, 2 < k < n, k | n.

    Parameters
    ----------
    n : int
        2 ≤ n ≤ 8.

    Returns
    -------
    dict of str to numpy.ndarray, shape (n,)
        One configuration per family, by name.

    Raises
    ------
    ValueError
        n outside 2…8.

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.open_problems import known_critical_points, torus_gradient
    >>> families = known_critical_points(6)
    >>> list(families)
    ['synchronised', 'equispaced', 'antipodal 5+1', 'antipodal 4+2', 'antipodal 3+3', 'polygon 3x2']
    >>> print(families["polygon 3x2"].round(6))
    [0.       2.094395 4.18879  0.       2.094395 4.18879 ]

    Each is a critical point at every β:

    >>> gradients = [torus_gradient(theta, beta) for theta in families.values() for beta in (0.5, 3.0)]
    >>> bool(np.allclose(gradients, 0.0, atol=1e-12))
    True
    """
    n = _check_n(n)
    out = {"synchronised": np.zeros(n), "equispaced": 2 * np.pi * np.arange(n) / n}
    for a in range(1, n // 2 + 1):
        if not (n == 2 and a == 1):
            out[f"antipodal {n - a}+{a}"] = np.where(np.arange(n) < n - a, 0.0, np.pi)
    for k in range(3, n):
        if n % k == 0:
            out[f"polygon {k}x{n // k}"] = 2 * np.pi * (np.arange(n) % k) / k
    return out


def _random_starts(n: int, starts: int, seed: int) -> np.ndarray:
    """``starts`` random start configurations; the first s rows do not depend on ``starts`` ≥ s.

    Half of the starts (on average) are iid uniform on Tⁿ, the others clustered: m ∈ {2, …, n} uniform
    cluster centres, each particle at a uniformly chosen centre plus N(0, 0.05²) rad."""
    blocks = []
    for block in range(-(-starts // _BLOCK)):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(n, block)))
        uniform = 2 * np.pi * rng.random((_BLOCK, n))
        clustered = rng.random(_BLOCK) < 0.5
        centres = 2 * np.pi * rng.random((_BLOCK, n))
        m = rng.integers(2, n + 1, _BLOCK)
        labels = np.floor(rng.random((_BLOCK, n)) * m[:, None]).astype(int)
        grouped = np.take_along_axis(centres, labels, axis=1) + _CLUSTER_NOISE * rng.standard_normal((_BLOCK, n))
        blocks.append(np.where(clustered[:, None], grouped, uniform))
    return np.concatenate(blocks)[:starts]


def _check_options(starts: int, seed: int, reflection: bool, tolerance: float, eigenvalue_tolerance: float,
                   distinct_tolerance: float, max_iterations: int) -> dict:
    return {"starts": check_positive_int("starts", starts), "seed": check_positive_int("seed", seed, minimum=0),
            "reflection": check_flag("reflection", reflection), "tolerance": check_positive("tolerance", tolerance),
            "eigenvalue_tolerance": check_positive("eigenvalue_tolerance", eigenvalue_tolerance),
            "distinct_tolerance": check_positive("distinct_tolerance", distinct_tolerance),
            "max_iterations": check_positive_int("max_iterations", max_iterations)}


def torus_critical_points(n: int, beta: float, *, starts: int = 512, seed: int = 0, reflection: bool = True,
                          tolerance: float = 1e-12, eigenvalue_tolerance: float = 1e-12,
                          distinct_tolerance: float = 1e-6, max_iterations: int = 100) -> xr.Dataset:
    r"""Enumerate and classify the critical points of E_β on Tⁿ, modulo the symmetries.

    Newton's method (:func:`newton_critical_points`) runs from the known families
    (:func:`known_critical_points`) and from ``starts`` seeded random starts. An end point is converged
    when |∇E_β|_∞ ≤ ``tolerance``·e^β/n² and the remaining Newton correction is ≤ 10⁻⁹ rad (full Newton
    steps polish it to the round-off floor, |∇E_β|_∞ ≈ 10⁻¹⁶–10⁻¹⁵·e^β/n²). Converged end points are
    grouped into orbits (see the module docstring), and each orbit is represented by its member of
    smallest residual, rotated to its canonical form (first particle at 0, :func:`canonical_gaps`).

    Classification by the spectrum of the Hessian on the complement of 1 (:func:`torus_hessian_spectrum`),
    in the units e^β/n², with λ_max its largest eigenvalue and τ the zero tolerance:

    * ``"synchronised"``: one distinct angle (the global maximum; spectrum −e^β/n, i.e. −n scaled);
    * ``"strict saddle"``: λ_max > τ (a local minimum of E_β, Morse index n − 1, counts too, as in the paper);
    * ``"local maximum"``: λ_max < −τ and not synchronised — a counterexample to Problem 3 (logged as a warning);
    * ``"degenerate"``: |λ_max| ≤ τ.

    τ = max(``eigenvalue_tolerance``·max_ik |H̃_ik|, 10·ε_λ), H̃ = (n²/e^β) H, where the eigenvalue error
    estimate ε_λ = ‖H̃(θ + δ) − H̃(θ)‖₂ + n·2⁻⁵²·‖H̃‖₂ adds the change of H̃ over the remaining Newton
    correction δ (the distance to the exact root) to the backward error of the symmetric eigensolver.

    Parameters
    ----------
    n : int
        Particles, 2 ≤ n ≤ 8.
    beta : float
        0 < β ≤ 700.
    starts : int, default 512
        Random starts. Blocks of 64 starts are drawn from SeedSequence(seed, spawn_key=(n, block)):
        the first s starts are the same for every ``starts`` ≥ s and every β. Half of them (on average)
        are iid uniform on Tⁿ, the others clustered (particles at 2 to n random centres plus N(0, 0.05²)
        rad).
    seed : int, default 0
        Non-negative base seed.
    reflection : bool, default True
        Identify θ with −θ (the default); False counts mirror images as distinct unless they coincide.
    tolerance : float, default 1e-12
        Newton converged: |∇E_β|_∞ ≤ tolerance · e^β/n².
    eigenvalue_tolerance : float, default 1e-12
        Relative floor of τ.
    distinct_tolerance : float, default 1e-6
        Gap sequences within this (radians, max norm) are one orbit; gaps below it join particles into
        one cluster.
    max_iterations : int, default 100
        Newton steps per start.

    Returns
    -------
    xarray.Dataset
        Dims ``point`` (the orbits, sorted by energy, descending), ``particle`` (n), ``mode`` (n − 1).
        Per point: ``theta`` (canonical representative), ``gaps``, ``energy`` E_β, ``eigenvalue``
        (scaled, ascending), ``largest_eigenvalue``, ``eigenvalue_tolerance`` (τ), ``eigenvalue_error``
        (ε_λ), ``morse_index`` (eigenvalues > τ: unstable directions of the ascent θ̇ = n∇E_β),
        ``local_minimum``, ``classification``, ``n_clusters``, ``multiplicities`` and ``cluster_gaps``
        (the gap from each cluster to the next, in the cyclic order that makes the multiplicities
        lexicographically largest), ``residual`` (scaled |∇E|_∞ at the representative), ``family`` (the
        known family's name, or "found"), ``seeded``, ``starts_reached`` (random starts converging to it) and
        ``first_start`` (the first such start, −1 if none). Attrs: the parameters, ``converged`` and
        ``not_converged`` start counts, ``seconds``, method and tolerances.

    Raises
    ------
    ValueError
        n outside 2…8, β ≤ 0, β > 700 or non-finite, a non-positive tolerance or count.

    Notes
    -----
    The critical points solve ∇E_β = 0 for (paper 2, (7.4))

    .. math::

        E_\beta(\theta) = \frac{1}{2\beta n^2} \sum_{i,j=1}^n e^{\beta\cos(\theta_i - \theta_j)} ;

    with λ_max the largest eigenvalue of (n²/e^β) H on 1^⊥, a non-synchronised point is a strict
    saddle when λ_max > τ, with

    .. math::

        \tau = \max\big(\epsilon_{\mathrm{rel}} \max_{ik} |\tilde H_{ik}|,\ 10\,\varepsilon_\lambda\big),
        \qquad
        \varepsilon_\lambda = \|\tilde H(\theta + \delta) - \tilde H(\theta)\|_2 + n\, 2^{-52} \|\tilde H\|_2,

    ε_rel = ``eigenvalue_tolerance``. Problem 3 asks whether every critical point other than the
    global maxima is a strict saddle; it is proven for β ≤ 1 and β ≥ n²/π².

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.open_problems import torus_critical_points
    >>> points = torus_critical_points(3, 0.5, starts=64)
    >>> points.classification.values.tolist()
    ['synchronised', 'strict saddle', 'strict saddle']
    >>> points.family.values.tolist(), points.multiplicities.values.tolist()
    (['synchronised', 'antipodal 2+1', 'equispaced'], ['3', '2,1', '1,1,1'])

    The energies are e^β/(2β) at synchronisation and (3e^β + 6e^{-β/2})/(9·2β) for the equispaced
    triple; the synchronised spectrum is −n in the units e^β/n²:

    >>> print(points.energy.values.round(8))
    [1.64872127 1.18552544 1.06877428]
    >>> print(f"{np.exp(0.5):.8f} {(3 * np.exp(0.5) + 6 * np.exp(-0.25)) / 9:.8f}")
    1.64872127 1.06877428
    >>> print(points.eigenvalue.values[0], points.morse_index.values.tolist())
    [-3. -3.] [0, 1, 2]
    """
    n = _check_n(n)
    beta = check_beta_positive(beta)
    options = _check_options(starts, seed, reflection, tolerance, eigenvalue_tolerance, distinct_tolerance,
                             max_iterations)
    clock = time.perf_counter()
    families = known_critical_points(n)
    theta0 = np.concatenate([np.stack(list(families.values())), _random_starts(n, starts, seed)])
    result = newton_critical_points(theta0, beta, tolerance=tolerance, max_iterations=max_iterations)
    good = np.flatnonzero(result.converged)
    labels = orbit_labels(gaps_of(result.theta[good]), reflection, distinct_tolerance)
    count = labels.max() + 1
    order = np.lexsort((result.residual[good], labels))
    best = good[order[np.r_[0, np.flatnonzero(np.diff(labels[order])) + 1]]]
    gaps = canonical_gaps(result.theta[best], reflection=reflection, tolerance=distinct_tolerance * 1e-3)
    theta = np.concatenate([np.zeros((count, 1)), np.cumsum(gaps[:, :-1], axis=-1)], axis=-1)
    hessian = scaled_hessian(theta, beta)
    basis = complement_basis(n)
    eigenvalues = scaled_spectrum(theta, beta)
    correction = newton_direction(theta, scaled_gradient(theta, beta), beta)
    change = np.linalg.norm(scaled_hessian(theta + correction, beta) - hessian, ord=2, axis=(-2, -1))
    norm = np.linalg.norm(basis.T @ hessian @ basis, ord=2, axis=(-2, -1))
    error = change + n * np.finfo(float).eps * norm
    zero = np.maximum(eigenvalue_tolerance * np.abs(hessian).max(axis=(-2, -1)), 10 * error)
    largest = eigenvalues[:, -1]
    structure = [cluster_pattern(g, distinct_tolerance, reflection) for g in gaps]
    n_clusters = np.array([s[0] for s in structure])
    synchronised, saddle, maximum, degenerate = CRITICAL_POINT_CLASSES
    classification = np.where(n_clusters == 1, synchronised, np.where(
        largest > zero, saddle, np.where(largest < -zero, maximum, degenerate)))
    names = np.array(list(families))
    family = np.full(count, "found", dtype=object)
    seeded = np.zeros(count, dtype=bool)
    reached = np.zeros(count, dtype=int)
    first = np.full(count, -1)
    for label in range(count):
        members = good[labels == label]
        from_seed = members[members < len(families)]
        if from_seed.size:
            family[label], seeded[label] = names[from_seed[0]], True
        random = members[members >= len(families)] - len(families)
        reached[label] = random.size
        first[label] = random.min() if random.size else -1
    energy = torus_energy(theta, beta)
    rank = np.argsort(-energy, kind="stable")
    for index in np.flatnonzero(classification == maximum):
        logger.warning("torus_critical_points: a non-synchronised local maximum of E_beta at n=%d, beta=%g "
                       "(a counterexample to Problem 3?): gaps %s, largest eigenvalue %.3e", n, beta, gaps[index],
                       largest[index])
    seconds = time.perf_counter() - clock
    points = xr.Dataset(
        {"theta": (("point", "particle"), theta[rank], {"units": "rad", "long_name": "canonical representative"}),
         "gaps": (("point", "particle"), gaps[rank], {"units": "rad", "long_name": "canonical cyclic gap sequence"}),
         "energy": ("point", energy[rank], {"long_name": "E_beta"}),
         "eigenvalue": (("point", "mode"), eigenvalues[rank],
                        {"units": "e^beta/n^2", "long_name": "Hessian eigenvalues on the complement of 1"}),
         "largest_eigenvalue": ("point", largest[rank], {"units": "e^beta/n^2"}),
         "eigenvalue_tolerance": ("point", zero[rank], {"units": "e^beta/n^2", "long_name": "zero tolerance tau"}),
         "eigenvalue_error": ("point", error[rank], {"units": "e^beta/n^2", "long_name": "eigenvalue error estimate"}),
         "morse_index": ("point", (eigenvalues > zero[:, None]).sum(axis=-1)[rank],
                         {"long_name": "positive Hessian eigenvalues (Morse index of -E_beta)"}),
         "local_minimum": ("point", (eigenvalues[:, 0] > zero)[rank]),
         "classification": ("point", classification[rank].astype(str)),
         "n_clusters": ("point", n_clusters[rank], {"long_name": "distinct angles"}),
         "multiplicities": ("point", np.array([s[1] for s in structure])[rank]),
         "cluster_gaps": ("point", np.array([s[2] for s in structure])[rank], {"units": "rad"}),
         "residual": ("point", residual_of(scaled_gradient(theta, beta))[rank], {"units": "e^beta/n^2"}),
         "family": ("point", family[rank].astype(str)),
         "seeded": ("point", seeded[rank]),
         "starts_reached": ("point", reached[rank]),
         "first_start": ("point", first[rank])},
        coords={"point": np.arange(count), "particle": np.arange(n), "mode": np.arange(n - 1)},
        attrs={"n": n, "beta": beta, **{k: int(v) if isinstance(v, bool) else v for k, v in options.items()},
               "converged": int(result.converged[len(families):].sum()),
               "not_converged": int((~result.converged[len(families):]).sum()),
               "seconds": seconds, "method": "damped Newton (pseudo-inverse on the complement of 1, Armijo "
               "backtracking on |grad E|_2) from the known families and seeded random starts, deduplicated "
               "modulo rotation, permutation" + (" and reflection" if reflection else ""),
               "gradient_units": "e^beta/n^2", "meanfield_version": __version__})
    return points


@dataclass(frozen=True)
class CriticalPointMap:
    """Result of :func:`critical_point_map` (and :func:`critical_point_count_stability`).

    A frozen record of two datasets.

    Parameters
    ----------
    summary : xarray.Dataset
        Dims ``n``, ``beta`` (and ``class``): counts of orbits by class and the saddle margin.
    points : xarray.Dataset
        Dim ``point``: every orbit of every (n, β), the variables of :func:`torus_critical_points`
        padded with NaN (or "" and −1) to the largest n, with ``n`` and ``beta`` per point.

    Examples
    --------
    >>> from meanfield.studies.open_problems import critical_point_map
    >>> result = critical_point_map([2, 3], [0.5], starts=16)
    >>> result.summary["count"].sizes, result.points.sizes["point"]
    (Frozen({'n': 2, 'beta': 1, 'class': 4}), 5)
    >>> result.points["n"].values.tolist(), result.points["classification"].values.tolist()
    ([2, 2, 3, 3, 3], ['synchronised', 'strict saddle', 'synchronised', 'strict saddle', 'strict saddle'])
    """

    summary: xr.Dataset
    points: xr.Dataset


def default_betas(n_max: int, size: int = 24) -> np.ndarray:
    """``size`` log-spaced β on [0.1, 2 n_max²/π²] with β = 1 and every m²/π², 2 ≤ m ≤ n_max, added (grid
    points within 2 % of an added value dropped), ascending."""
    n_max = _check_n(n_max)
    size = check_positive_int("size", size, minimum=2)
    special = np.concatenate([[1.0], np.arange(2, n_max + 1) ** 2 / np.pi**2])
    grid = np.geomspace(0.1, 2 * n_max**2 / np.pi**2, size)
    near = (np.abs(np.log(grid[:, None] / special[None, :])) < 0.02).any(axis=-1)
    near[[0, -1]] = False
    return np.unique(np.concatenate([grid[~near], special]))


def _region(n: int, beta: float) -> str:
    if beta <= 1.0:
        return "proven (beta <= 1)"
    if beta >= n**2 / np.pi**2:
        return "proven (beta >= n^2/pi^2)"
    return "open"


def _as_sizes(n: int | Sequence[int]) -> list[int]:
    sizes = [n] if isinstance(n, (int, np.integer)) and not isinstance(n, bool) else list(n)
    if not sizes:
        raise ValueError("n must be an integer or a non-empty sequence of integers between 2 and 8, got []")
    return sorted({_check_n(size) for size in sizes})


def _as_betas(beta: Sequence[float] | np.ndarray | None, sizes: list[int]) -> np.ndarray:
    if beta is None:
        return default_betas(max(sizes))
    values = np.atleast_1d(np.asarray(beta, dtype=float))
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"beta must be a non-empty 1-D sequence of values, got shape {values.shape}")
    for value in values:
        check_beta_positive(value)
    if np.any(np.diff(values) <= 0):
        raise ValueError(f"beta must be strictly increasing, got {values!r}")
    return values


def _class_counts(points: xr.Dataset, limit: int | None = None) -> np.ndarray:
    keep = np.ones(points.sizes["point"], dtype=bool) if limit is None else (
        points["seeded"].values | ((points["first_start"].values >= 0) & (points["first_start"].values < limit)))
    classification = points["classification"].values[keep]
    return np.array([(classification == name).sum() for name in CRITICAL_POINT_CLASSES])


def _pad(points: xr.Dataset, n_max: int) -> xr.Dataset:
    widths = {"particle": (0, n_max - points.sizes["particle"]), "mode": (0, n_max - 1 - points.sizes["mode"])}
    return points.drop_vars(["particle", "mode"]).pad(widths)


def critical_point_map(n: int | Sequence[int], beta: Sequence[float] | np.ndarray | None = None, *,
                       starts: int = 256, seed: int = 0, reflection: bool = True, tolerance: float = 1e-12,
                       eigenvalue_tolerance: float = 1e-12, distinct_tolerance: float = 1e-6,
                       max_iterations: int = 100) -> CriticalPointMap:
    """Critical points of E_β on Tⁿ over a grid of β: counts by class, the saddle margin, and where
    Problem 3 is proven (β ≤ 1, β ≥ n²/π²) or open.

    Each (n, β) is one :func:`torus_critical_points` run with the same options; the random starts of a
    given n are the same for every β.

    Parameters
    ----------
    n : int or sequence of int
        Particle numbers, each 2 ≤ n ≤ 8.
    beta : sequence of float, optional
        Strictly increasing β > 0. Default: :func:`default_betas` of the largest n — 24 log-spaced values
        on [0.1, 2 n²/π²] with β = 1 and every m²/π², 2 ≤ m ≤ n, added.
    starts : int, default 256
        Random starts per (n, β), as in :func:`torus_critical_points`.
    seed : int, default 0
        As in :func:`torus_critical_points`.
    reflection : bool, default True
        As in :func:`torus_critical_points`.
    tolerance : float, default 1e-12
        As in :func:`torus_critical_points`.
    eigenvalue_tolerance : float, default 1e-12
        As in :func:`torus_critical_points`.
    distinct_tolerance : float, default 1e-6
        As in :func:`torus_critical_points`.
    max_iterations : int, default 100
        As in :func:`torus_critical_points`.

    Returns
    -------
    CriticalPointMap
        ``summary`` over (n, beta): ``count`` (n, beta, class) of orbits; ``n_points``; ``n_local_minima``;
        ``saddle_margin``, the smallest largest Hessian eigenvalue among the non-synchronised orbits in
        the units e^β/n² (NaN if there are none; positive exactly when each of them is a strict saddle),
        and ``margin_orbit``, the multiplicities of the orbit attaining it;
        ``region`` ("proven (beta <= 1)", "open", "proven (beta >= n^2/pi^2)") and ``open`` (bool);
        ``counterexample`` (a non-synchronised local maximum or a degenerate orbit, in any region);
        ``not_converged`` (random starts); ``seconds``. ``points``: the per-orbit table.

    Raises
    ------
    ValueError
        An n outside 2…8, a β ≤ 0 or > 700, β not strictly increasing, a non-positive tolerance or count.

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.open_problems import critical_point_map
    >>> result = critical_point_map(3, [0.5, 2.0], starts=32)
    >>> summary = result.summary
    >>> summary["count"].sel(n=3).values.tolist()
    [[1, 2, 0, 0], [1, 2, 0, 0]]
    >>> summary["region"].values.tolist(), bool(summary["counterexample"].any())
    ([['proven (beta <= 1)', 'proven (beta >= n^2/pi^2)']], False)

    β = 2 ≥ 3²/π² ≈ 0.91; the saddle margin (positive: every non-synchronised orbit is a strict saddle)
    is attained by the 2 + 1 antipodal state:

    >>> print(summary["saddle_margin"].values.round(6), summary["margin_orbit"].values.tolist())
    [[1.103638 0.054947]] [['2,1', '2,1']]
    """
    sizes = _as_sizes(n)
    betas = _as_betas(beta, sizes)
    options = _check_options(starts, seed, reflection, tolerance, eigenvalue_tolerance, distinct_tolerance,
                             max_iterations)
    shape = (len(sizes), len(betas))
    count = np.zeros(shape + (len(CRITICAL_POINT_CLASSES),), dtype=int)
    margin, seconds = np.full(shape, np.nan), np.zeros(shape)
    margin_orbit = np.full(shape, "", dtype=object)
    minima, failed = np.zeros(shape, dtype=int), np.zeros(shape, dtype=int)
    region = np.empty(shape, dtype=object)
    tables = []
    for i, size in enumerate(sizes):
        for j, value in enumerate(betas):
            points = torus_critical_points(size, value, **options)
            count[i, j] = _class_counts(points)
            others = points["classification"].values != CRITICAL_POINT_CLASSES[0]
            if others.any():
                weakest = np.flatnonzero(others)[np.argmin(points["largest_eigenvalue"].values[others])]
                margin[i, j] = points["largest_eigenvalue"].values[weakest]
                margin_orbit[i, j] = points["multiplicities"].values[weakest]
            minima[i, j] = int(points["local_minimum"].values.sum())
            failed[i, j], seconds[i, j] = points.attrs["not_converged"], points.attrs["seconds"]
            region[i, j] = _region(size, value)
            tables.append(_pad(points, max(sizes)).assign(n=("point", np.full(points.sizes["point"], size)),
                                                          beta=("point", np.full(points.sizes["point"], value))))
            logger.info("critical_point_map: n=%d beta=%g: %s orbits in %.2f s", size, value, count[i, j].tolist(),
                        seconds[i, j])
    table = xr.concat(tables, "point", data_vars="all", coords="minimal", compat="override", join="outer")
    table = table.assign_coords(point=np.arange(table.sizes["point"]))
    attrs = {**{k: int(v) if isinstance(v, bool) else v for k, v in options.items()},
             "description": "critical points of E_beta on the torus T^n (paper 2, eq. (7.4), Problem 3)",
             "method": tables[0].attrs["method"], "gradient_units": "e^beta/n^2", "meanfield_version": __version__}
    table.attrs = attrs
    summary = xr.Dataset(
        {"count": (("n", "beta", "class"), count, {"long_name": "distinct critical points (orbits)"}),
         "n_points": (("n", "beta"), count.sum(axis=-1)),
         "n_local_minima": (("n", "beta"), minima),
         "saddle_margin": (("n", "beta"), margin, {"units": "e^beta/n^2", "long_name": "min over "
                                                   "non-synchronised points of the largest Hessian eigenvalue"}),
         "margin_orbit": (("n", "beta"), margin_orbit.astype(str),
                          {"long_name": "cluster multiplicities of the orbit attaining the saddle margin"}),
         "region": (("n", "beta"), region.astype(str)),
         "open": (("n", "beta"), region == "open"),
         "counterexample": (("n", "beta"), count[..., 2] + count[..., 3] > 0),
         "not_converged": (("n", "beta"), failed, {"long_name": "random starts not converged"}),
         "seconds": (("n", "beta"), seconds, {"units": "s"})},
        coords={"n": ("n", sizes, {"long_name": "particles"}), "beta": ("beta", betas, {"long_name": "beta"}),
                "class": ("class", list(CRITICAL_POINT_CLASSES))},
        attrs=attrs)
    return CriticalPointMap(summary=summary, points=table)


def critical_point_count_stability(n: int | Sequence[int], beta: Sequence[float] | np.ndarray | None = None, *,
                                   starts: int = 256, seed: int = 0, **options) -> CriticalPointMap:
    """Do the counts of :func:`critical_point_map` change when the number of random starts is doubled?

    One map runs with 2·``starts`` starts; since the first ``starts`` of them are exactly the starts of a
    run with ``starts`` (see :func:`torus_critical_points`), the counts with ``starts`` are those of the
    orbits that are seeded or reached by one of the first ``starts`` starts.

    Parameters
    ----------
    n : int or sequence of int
        As in :func:`critical_point_map`.
    beta : sequence of float, optional
        As in :func:`critical_point_map`.
    starts : int, default 256
        The smaller number of starts.
    seed : int, default 0
        As in :func:`torus_critical_points`.
    **options
        ``reflection``, ``tolerance``, ``eigenvalue_tolerance``, ``distinct_tolerance``,
        ``max_iterations`` of :func:`critical_point_map`.

    Returns
    -------
    CriticalPointMap
        The doubled run; its summary has ``count`` over a new dim ``starts`` = [starts, 2·starts] and
        ``stable`` (n, beta): the counts of every class agree.

    Raises
    ------
    ValueError
        As :func:`critical_point_map`.

    Examples
    --------
    >>> from meanfield.studies.open_problems import critical_point_count_stability
    >>> result = critical_point_count_stability(3, [0.5, 2.0], starts=16)
    >>> result.summary["count"].dims, result.summary["starts"].values.tolist()
    (('starts', 'n', 'beta', 'class'), [16, 32])
    >>> result.summary["stable"].values.tolist()
    [[True, True]]
    """
    starts = check_positive_int("starts", starts)
    result = critical_point_map(n, beta, starts=2 * starts, seed=seed, **options)
    summary = result.summary
    points = result.points
    half = np.zeros(summary["count"].shape, dtype=int)
    for i, size in enumerate(summary["n"].values):
        for j, value in enumerate(summary["beta"].values):
            mask = (points["n"].values == size) & (points["beta"].values == value)
            half[i, j] = _class_counts(points.isel(point=mask), limit=starts)
    count = xr.concat([summary["count"].copy(data=half), summary["count"]], "starts")
    summary = summary.assign(count=count.assign_coords(starts=[starts, 2 * starts]),
                             stable=(("n", "beta"), (half == summary["count"].values).all(axis=-1)))
    return CriticalPointMap(summary=summary, points=points)

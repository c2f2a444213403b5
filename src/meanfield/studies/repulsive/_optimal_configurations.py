"""Minimisers of the repulsive energy over n-point configurations on S^{d-1} from random starts, and
what they are (paper 2, §9.1, Theorem 9.2).

Each start, n iid uniform points, is driven downhill on H_β[X] = (1/(2β n²)) Σ_{i,j} e^{β<x_i, x_j>}:

* ``method="minimize"``: L-BFGS (scipy) on unnormalised y_i ∈ R^d with x_i = y_i/|y_i|, gradient
  ∂H/∂y_i = P⊥_{x_i} (1/n²) Σ_j e^{β<x_i, x_j>} x_j / |y_i|; reports iterations and wall time;
* ``method="flow"``: the repulsive gradient flow ẋ = -n ∇H (paper 2, (3.11) turned), i.e.
  :func:`meanfield.simulate` of ``RepulsiveSelfAttention(beta, normalized=False)``, to ``t_final``;
  reports the first output time from which H stays within ``energy_tolerance`` of its final value.

The end point is identified as an exact configuration of :func:`sharp_configuration` with the same
n and d when all three agree: its energy (within ``energy_tolerance``), its number of distinct inner
products (Gram entries grouped within ``gram_tolerance``) and its design strength (:func:`design_strength`,
at least the candidate's). Energy alone is not enough: near a high-strength configuration H_β is flat
in the directions of degree l, whose weight is c_l(β) ~ β^l/l! (the 600-cell at β = 1 is reached in
energy to 6e-11 by points that are only a 5-design).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import scipy.optimize
import xarray as xr

from ..._validate import check_positive, check_positive_int
from ...models import RepulsiveSelfAttention
from ...particles import simulate
from ._configurations import SharpConfiguration, design_strength, sharp_configuration

__all__ = ["BETA_MAX", "candidate_configurations", "optimal_configurations"]

BETA_MAX = 700.0
"""Largest β: H_β holds e^{β<x_i, x_j>} ≤ e^β, which overflows a double beyond 709."""


def candidate_configurations(n: int, d: int) -> list[SharpConfiguration]:
    """The exact configurations of :func:`sharp_configuration` with n points on S^{d-1}.

    Parameters
    ----------
    n : int
        Number of points.
    d : int
        Ambient dimension (points on S^{d-1}).

    Returns
    -------
    list of SharpConfiguration
        The polygon (d = 2, n ≥ 2), the simplex (d ≥ 3, n = d + 1), the cross-polytope (d ≥ 3, n = 2d),
        the icosahedron (12, 3), the 600-cell (120, 4) and the E₈ roots (240, 8) that fit; empty when
        none does.

    Examples
    --------
    >>> from meanfield.studies.repulsive import candidate_configurations
    >>> [c.name for c in candidate_configurations(4, 3)], [c.name for c in candidate_configurations(6, 3)]
    (['simplex'], ['cross_polytope'])
    >>> [c.name for c in candidate_configurations(12, 3)], candidate_configurations(5, 3)
    (['icosahedron'], [])
    >>> print(candidate_configurations(5, 2)[0].strength)
    4
    """
    out = []
    if d == 2 and n >= 2:
        out.append(sharp_configuration("polygon", n=n))
    if d >= 3 and n == d + 1:
        out.append(sharp_configuration("simplex", d=d))
    if d >= 3 and n == 2 * d:
        out.append(sharp_configuration("cross_polytope", d=d))
    for name, size, dim in (("icosahedron", 12, 3), ("600_cell", 120, 4), ("e8", 240, 8)):
        if (n, d) == (size, dim):
            out.append(sharp_configuration(name))
    return out


def _energy_and_gradient(flat: np.ndarray, n: int, d: int, beta: float) -> tuple[float, np.ndarray]:
    y = flat.reshape(n, d)
    norms = np.linalg.norm(y, axis=1, keepdims=True)
    x = y / norms
    kernel = np.exp(beta * (x @ x.T))
    energy = float(kernel.sum() / (2 * beta * n * n))
    force = kernel @ x / (n * n)
    tangent = force - np.sum(force * x, axis=1, keepdims=True) * x
    return energy, (tangent / norms).ravel()


def _distinct(values: np.ndarray, tolerance: float) -> np.ndarray:
    values = np.sort(values)
    breaks = np.flatnonzero(np.diff(values) > tolerance)
    return np.array([group.mean() for group in np.split(values, breaks + 1)])


def optimal_configurations(n: int, d: int, beta: float = 1.0, *, starts: int = 20, seed: int = 0,
                           method: str = "minimize", t_final: float = 200.0, energy_tolerance: float = 1e-10,
                           gram_tolerance: float = 1e-6, max_iterations: int = 20_000) -> xr.Dataset:
    r"""Drive ``starts`` random n-point configurations on S^{d-1} down the repulsive energy and identify
    their end points.

    ``method="minimize"`` runs L-BFGS (scipy) on unnormalised y_i ∈ R^d with x_i = y_i/|y_i|;
    ``method="flow"`` runs the repulsive gradient flow ẋ = -n ∇H, :func:`meanfield.simulate` of
    ``RepulsiveSelfAttention(beta, normalized=False)``, to ``t_final``. An end point is the exact
    configuration of :func:`candidate_configurations` when its energy, its number of distinct inner
    products and its design strength all agree (see Notes).

    Parameters
    ----------
    n, d : int
        Points and ambient dimension (S^{d-1}), d ≥ 2, n ≥ 2.
    beta : float
        β > 0 of H_β.
    starts, seed : int
        Start k is ``starts`` iid uniform points drawn with ``numpy.random.default_rng(seed + k)``.
    method : {"minimize", "flow"}
    t_final : float
        Length of the flow (``method="flow"``).
    energy_tolerance : float
        |H - H_exact| below which an end point is the candidate configuration.
    gram_tolerance : float
        Gram entries closer than this are one inner product.
    max_iterations : int
        L-BFGS iterations (``method="minimize"``).

    Returns
    -------
    xarray.Dataset
        Dims ``start`` and ``configuration`` (the candidates, then "other"). Per start: ``energy`` H_β,
        ``configuration`` (index into the ``configuration`` coordinate), ``energy_gap`` |H - H_exact| to
        the nearest candidate, ``n_inner_products`` (distinct values off the diagonal), ``strength``,
        ``iterations`` (minimize) or ``time_to_reach`` (flow), ``converged`` (L-BFGS's own criterion met, 0 also when
        its line search ends at round-off next to the minimum; the flow: its run succeeded), ``seconds``. Per configuration:
        ``fraction`` of starts, ``exact_energy``, ``exact_strength``. Attrs: n, d, beta, method.

    Raises
    ------
    ValueError
        n < 2 or d < 2, β ≤ 0 or β > ``BETA_MAX`` (700: e^β overflows a double beyond 709), an unknown
        method, a negative seed, or a non-positive tolerance, ``t_final``, ``starts`` or ``max_iterations``.

    Notes
    -----
    The energy descended is (paper 2, §9.1)

        H_β[X] = (1/(2β n²)) Σ_{i,j} e^{β<x_i, x_j>},

    .. math::

        H_\beta[X] = \frac{1}{2\beta n^2} \sum_{i,j=1}^n e^{\beta\langle x_i, x_j\rangle},
        \qquad
        \frac{\partial H}{\partial y_i} = \frac{1}{|y_i|}\, P^\perp_{x_i}
        \frac{1}{n^2} \sum_{j=1}^n e^{\beta\langle x_i, x_j\rangle} x_j,

    the gradient being the one L-BFGS uses. The flow is paper 2's (3.11) with time reversed; its
    ``time_to_reach`` is the first output time from which H stays within ``energy_tolerance`` of its
    final value. Energy alone does not identify an end point: near a high-strength configuration H_β
    is flat in the directions of degree l, whose weight is c_l(β) ~ β^l/l! (the 600-cell at β = 1 is
    reached in energy to 6e-11 by points that are only a 5-design); hence the inner products (Gram
    entries grouped within ``gram_tolerance``) and the strength (at least the candidate's) are checked
    too. Theorem 9.2 says a global minimiser is a sharp configuration or the 600-cell.

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.repulsive import optimal_configurations
    >>> ds = optimal_configurations(4, 3, beta=1.0, starts=3, seed=0)
    >>> ds["configuration_name"].values.tolist(), ds["fraction"].values.tolist()
    (['simplex', 'other'], [1.0, 0.0])

    Every start ends on the regular simplex, of energy H_1 = (3 e^{-1/3} + e)/8:

    >>> print(f"{ds['exact_energy'].values[0]:.10f}", f"{(3 * np.exp(-1 / 3) + np.e) / 8:.10f}")
    0.6084844700 0.6084844700
    >>> bool(ds["energy_gap"].max() < 1e-10), ds["strength"].values.tolist()
    (True, [2, 2, 2])
    """
    n = check_positive_int("n", n)
    d = check_positive_int("d", d)
    if n < 2 or d < 2:
        raise ValueError(f"optimal_configurations needs n >= 2 points on S^{{d-1}} with d >= 2, got n={n}, d={d}")
    beta = check_positive("beta", beta)
    if beta > BETA_MAX:
        raise ValueError(f"beta must be <= {BETA_MAX:g} (e^beta of H_beta overflows a double beyond), got {beta:g}")
    starts = check_positive_int("starts", starts)
    seed = check_positive_int("seed", seed, minimum=0)
    if method not in ("minimize", "flow"):
        raise ValueError(f"method must be 'minimize' or 'flow', got {method!r}")
    check_positive("t_final", t_final)
    check_positive("energy_tolerance", energy_tolerance)
    check_positive("gram_tolerance", gram_tolerance)
    check_positive_int("max_iterations", max_iterations)
    candidates = candidate_configurations(n, d)
    exact = np.array([c.energy(beta) for c in candidates])
    rows: list[dict[str, Any]] = []
    for k in range(starts):
        y0 = np.random.default_rng(seed + k).standard_normal((n, d))
        y0 /= np.linalg.norm(y0, axis=1, keepdims=True)
        clock = time.perf_counter()
        if method == "minimize":
            result = scipy.optimize.minimize(_energy_and_gradient, y0.ravel(), args=(n, d, beta), jac=True,
                                             method="L-BFGS-B",
                                             options={"maxiter": max_iterations, "gtol": 1e-13, "ftol": 1e-16,
                                                      "maxcor": 30})
            y = result.x.reshape(n, d)
            x = y / np.linalg.norm(y, axis=1, keepdims=True)
            progress = {"iterations": int(result.nit), "time_to_reach": np.nan, "converged": int(result.success)}
        else:
            times = np.linspace(0.0, t_final, 201)
            run = simulate(RepulsiveSelfAttention(beta, normalized=False), y0, times, rtol=1e-11, atol=1e-13)
            x = run["positions"].values[-1]
            path = run["energy"].values
            far = np.flatnonzero(np.abs(path - path[-1]) > energy_tolerance)
            reached = times[far[-1] + 1] if far.size else 0.0
            progress = {"iterations": -1, "time_to_reach": float(reached), "converged": int(run.attrs["success"])}
        seconds = time.perf_counter() - clock
        energy = _energy_and_gradient(x.ravel(), n, d, beta)[0]
        gram = np.clip(x @ x.T, -1.0, 1.0)[np.triu_indices(n, 1)]
        gaps = np.abs(exact - energy)
        reach = max((c.strength for c in candidates), default=0) + 1
        distinct, strength = len(_distinct(gram, gram_tolerance)), design_strength(x, max_strength=max(reach, 30))
        match = len(candidates)
        if gaps.size:
            best = candidates[int(np.argmin(gaps))]
            if (gaps.min() <= energy_tolerance and strength >= best.strength
                    and distinct == len(best.inner_products) - 1):
                match = int(np.argmin(gaps))
        rows.append(dict(energy=energy, configuration=match, energy_gap=float(gaps.min()) if gaps.size else np.nan,
                         n_inner_products=distinct, strength=strength, seconds=seconds, **progress))
    names = [c.name for c in candidates] + ["other"]
    found = np.array([row["configuration"] for row in rows])
    out = xr.Dataset(
        {key: ("start", np.array([row[key] for row in rows])) for key in rows[0]},
        coords={"start": np.arange(starts), "configuration_name": ("configuration", names)},
    )
    out["fraction"] = ("configuration", np.bincount(found, minlength=len(names)) / starts)
    out["exact_energy"] = ("configuration", np.append(exact, np.nan))
    out["exact_strength"] = ("configuration", np.array([c.strength for c in candidates] + [-1]))
    out["energy"].attrs.update(long_name="H_beta = (1/(2 beta n^2)) sum_ij exp(beta <x_i, x_j>)")
    out["time_to_reach"].attrs.update(long_name="first output time from which H stays within energy_tolerance "
                                                "of its final value (flow)")
    out.attrs.update(n=n, d=d, beta=beta, method=method, seed=seed, energy_tolerance=energy_tolerance,
                     gram_tolerance=gram_tolerance,
                     description="end points of the repulsive energy's descent from random starts (paper 2, "
                                 "Theorem 9.2)")
    return out

"""``sample``: particles drawn from a density, as an empirical measure."""

from __future__ import annotations

import numpy as np

from .._validate import as_rng, check_allocation, check_positive_int
from ._measure import Density, EmpiricalMeasure

__all__ = ["SAMPLING_METHODS", "sample"]

SAMPLING_METHODS = ("iid", "quantile")


def sample(measure: Density, n: int, seed: int | np.random.Generator | None = None,
           method: str = "iid") -> EmpiricalMeasure:
    """n particles drawn from ``measure``, as an equally weighted empirical measure.

    Parameters
    ----------
    measure : Density
        On a :class:`~meanfield.Circle`: any density. Laws with an exact
        sampler (``density.law["name"]`` = "uniform", "von_mises",
        "wrapped_cauchy") use scipy.stats; otherwise the density is
        interpolated linearly between nodes (periodically) and its
        piecewise-quadratic CDF F is inverted exactly, x = F⁻¹(u).
        On a sphere-type domain (dimension d ≥ 3): laws "uniform" and
        "von_mises" (von Mises–Fisher, Wood's algorithm).
    n : int
        Number of particles.
    seed : int, Generator or None
    method : {"iid", "quantile"}
        "iid": independent draws, u ~ U(0, 1). "quantile" (circle only):
        deterministic midpoint quantiles x_i = F⁻¹((i + 1/2)/n), i = 0..n-1
        (W₁ error O(1/n) instead of O(n^{-1/2})).

    Returns
    -------
    EmpiricalMeasure
        Angles in [0, 2π) of shape (n,) on S¹ (domain "circle"), unit
        vectors (n, d) on S^{d-1} (domain "sphere").

    Raises
    ------
    ValueError
        Unknown ``method``, ``n`` < 1, or a law without a sampler.
    """
    n = check_positive_int("n", n)
    if method not in SAMPLING_METHODS:
        raise ValueError(f"method must be one of {SAMPLING_METHODS}, got {method!r}")
    if not isinstance(measure, Density):
        raise TypeError(f"measure must be a Density, got {type(measure).__name__}")
    domain = measure.domain
    check_allocation("n", n, 8.0 * n * (domain.geometry.dimension + 4),
                     f"{n} points on {domain!r} with their weights and the sampler's work")
    points = domain.sample(measure.values, measure.law or {}, n, as_rng(seed), method == "quantile")
    return EmpiricalMeasure(points, domain=domain.geometry.name)

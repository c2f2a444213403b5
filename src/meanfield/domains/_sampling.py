"""Samplers of the domains: exact circle laws and the inverse CDF of circle node values, uniform and
von Mises–Fisher points on S^{d-1}, orthogonal frames. :func:`meanfield.sample` draws particles from a
density by its domain's ``sample``, which uses these."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.stats

from .._validate import as_rng, check_positive_int

__all__ = ["circle_sample", "law_sample", "orthogonal_frame", "uniform_sphere", "von_mises_fisher"]


def circle_sample(theta: np.ndarray, values: np.ndarray, law: dict, n: int, rng: np.random.Generator,
                  quantile: bool) -> np.ndarray:
    """n angles in [0, 2π) from a circle density: its exact law when ``law`` names one ("uniform",
    "von_mises", "wrapped_cauchy", by scipy.stats), else the periodic linear interpolant of its node
    ``values`` by the exact inverse of its piecewise-quadratic CDF; iid, or the midpoint quantiles
    F⁻¹((i + 1/2)/n) when ``quantile``."""
    u = (np.arange(n) + 0.5) / n if quantile else rng.uniform(size=n)
    frozen = _circle_law(law)
    if frozen is not None:
        x = _ppf(frozen, law, u) if quantile else frozen.rvs(size=n, random_state=rng)
    else:
        x = _grid_inverse_cdf(theta, values, u)
    return np.remainder(x, 2 * np.pi)


def law_sample(law: dict, n: int, d: int, rng: np.random.Generator, where: str) -> np.ndarray:
    """n iid points (n, d) on S^{d-1} of the law a density was made from: "uniform" or "von_mises"."""
    name = law.get("name")
    if name == "uniform":
        return uniform_sphere(n, d, rng)
    if name == "von_mises":
        return von_mises_fisher(n, law["loc"], law["kappa"], rng)
    raise ValueError(f"sampling on {where} needs a density whose law is 'uniform' or 'von_mises', got law {law!r}")


def _circle_law(law: dict) -> Any:
    name = law.get("name")
    if name == "uniform":
        return scipy.stats.uniform(0.0, 2 * np.pi)
    if name == "von_mises":
        return scipy.stats.vonmises(law["kappa"], loc=law["loc"]) if law["kappa"] > 0 else scipy.stats.uniform(
            0.0, 2 * np.pi)
    if name == "wrapped_cauchy":
        if law["r"] == 0:
            return scipy.stats.uniform(0.0, 2 * np.pi)
        return scipy.stats.wrapcauchy(law["r"], loc=law["loc"])
    return None


def _ppf(frozen: Any, law: dict, u: np.ndarray) -> np.ndarray:
    """F⁻¹(u) of an exact circle law; von Mises by Newton's method on [loc - π, loc + π]
    (scipy's generic ppf is a slow root search), started from a tabulated CDF."""
    if law.get("name") != "von_mises" or law["kappa"] == 0:
        return frozen.ppf(u)
    grid = law["loc"] + np.linspace(-np.pi, np.pi, 4097)
    x = np.interp(u, frozen.cdf(grid), grid)
    for _ in range(4):  # quadratic convergence from an O(h²) start: machine precision
        x = np.clip(x - (frozen.cdf(x) - u) / np.maximum(frozen.pdf(x), 1e-300), grid[0], grid[-1])
    return x


def _grid_inverse_cdf(theta: np.ndarray, values: np.ndarray, u: np.ndarray) -> np.ndarray:
    """F⁻¹(u) for the periodic piecewise-linear interpolant of node values on [θ_0, θ_0 + 2π)."""
    h = 2 * np.pi / theta.size
    left = np.asarray(values, dtype=float)
    right = np.roll(left, -1)
    cell_mass = 0.5 * h * (left + right)
    cdf = np.concatenate([[0.0], np.cumsum(cell_mass)])
    total = cdf[-1]
    target = np.asarray(u) * total
    j = np.clip(np.searchsorted(cdf, target, side="right") - 1, 0, theta.size - 1)
    r = target - cdf[j]
    a, slope = left[j], (right[j] - left[j]) / h
    # solve a s + slope s²/2 = r for s in [0, h] (stable form of the quadratic root)
    disc = np.sqrt(np.maximum(a * a + 2 * slope * r, 0.0))
    denom = a + disc
    s = np.divide(2 * r, denom, out=np.zeros_like(r), where=denom > 0)
    return theta[0] + j * h + np.clip(s, 0.0, h)


def uniform_sphere(n: int, d: int, seed: int | np.random.Generator | None = None) -> np.ndarray:
    """n iid uniform points on S^{d-1}: normalised standard Gaussians, shape (n, d)."""
    n = check_positive_int("n", n)
    d = check_positive_int("d", d, minimum=2)
    g = as_rng(seed).standard_normal((n, d))
    return g / np.linalg.norm(g, axis=1, keepdims=True)


def von_mises_fisher(n: int, loc: np.ndarray, kappa: float, seed: int | np.random.Generator | None = None
                     ) -> np.ndarray:
    """n iid points of the von Mises–Fisher law ∝ e^{κ<loc, x>} on S^{d-1} (Wood 1994), shape (n, d).

    The component w = <loc, x> is drawn by Wood's rejection sampler from the
    density ∝ e^{κw}(1-w²)^{(d-3)/2}; the orthogonal part is uniform on the
    sphere of loc⊥ scaled by √(1-w²).
    """
    n = check_positive_int("n", n)
    mu = np.asarray(loc, dtype=float)
    if mu.ndim != 1 or mu.size < 2 or not abs(np.linalg.norm(mu) - 1) < 1e-10:
        raise ValueError(f"loc must be a unit vector in R^d (d >= 2), got {loc!r}")
    kappa = float(kappa)
    if not np.isfinite(kappa) or kappa < 0:
        raise ValueError(f"kappa must be finite and >= 0, got {kappa!r}")
    rng = as_rng(seed)
    d = mu.size
    if kappa == 0:
        return uniform_sphere(n, d, rng)
    b = (d - 1) / (2 * kappa + np.sqrt(4 * kappa**2 + (d - 1) ** 2))
    x0 = (1 - b) / (1 + b)
    c = kappa * x0 + (d - 1) * np.log(1 - x0 * x0)
    w = np.empty(n)
    filled = 0
    while filled < n:
        m = 2 * (n - filled) + 8
        z = rng.beta((d - 1) / 2, (d - 1) / 2, size=m)
        cand = (1 - (1 + b) * z) / (1 - (1 - b) * z)
        accept = kappa * cand + (d - 1) * np.log(1 - x0 * cand) - c >= np.log(rng.uniform(size=m))
        take = cand[accept][: n - filled]
        w[filled: filled + take.size] = take
        filled += take.size
    v = rng.standard_normal((n, d))
    v -= np.outer(v @ mu, mu)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return w[:, None] * mu + np.sqrt(np.maximum(1 - w * w, 0.0))[:, None] * v


def orthogonal_frame(n: int, d: int, seed: int | np.random.Generator | None = None) -> np.ndarray:
    """n pairwise orthogonal unit vectors in R^d (n ≤ d), Haar-random: rows of shape (n, d).

    Pairwise orthogonal points are the initial tokens of paper 2's Theorem 6.8.

    Parameters
    ----------
    n : int
        Number of vectors, 1 ≤ n ≤ d.
    d : int
        Ambient dimension, d ≥ 2.
    seed : int, Generator or None
        Seed or random generator of the Gaussian matrix (None: fresh entropy).

    Returns
    -------
    ndarray, shape (n, d)
        Rows x_1, …, x_n with <x_i, x_j> = δ_ij: the first n columns of a
        Haar-random orthogonal matrix.

    Raises
    ------
    ValueError
        n > d, n < 1 or d < 2.

    Notes
    -----
    The Q factor of a Gaussian matrix with the signs of R's diagonal fixed is
    Haar distributed on O(d) (Mezzadri 2007).

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> x = mf.orthogonal_frame(3, 5, seed=0)
    >>> x.shape
    (3, 5)
    >>> print(np.allclose(x @ x.T, np.eye(3)))   # the Gram matrix is the identity
    True
    """
    n = check_positive_int("n", n)
    d = check_positive_int("d", d, minimum=2)
    if n > d:
        raise ValueError(f"an orthogonal frame needs n <= d, got n = {n}, d = {d}")
    g = as_rng(seed).standard_normal((d, d))
    q, r = np.linalg.qr(g)
    q *= np.sign(np.diag(r))
    return np.ascontiguousarray(q[:, :n].T)

r"""Concentration of the pairwise inner products around the equiangular curve (paper 2, Theorem 6.9).

For n iid uniform tokens on S^{d-1} moved by (SA), Theorem 6.9 of paper 2
(arXiv 2312.10794) states that for d ≥ d*(n, β), with probability at least
1 - 2n² d^{-1/64},

    |<x_i(t), x_j(t)> - γ_β(t)| ≤ min{ 2 c(β)^{nt} √(log d / d), C e^{-λt} },   c(β) = e^{10 max(1, β)},

for every pair i ≠ j and t ≥ 0, where γ_β solves (6.9) (the common inner
product of n orthogonal tokens, Theorem 6.8; :func:`equiangular_gamma`). The
histogram of {<x_i(t), x_j(t)>}_{i≠j} (paper 2, Figure 1) therefore
concentrates at γ_β(t), with a spread of order √(log d / d). At t = 0 the
inner products of iid uniform points have mean 0 and standard deviation
exactly 1/√d; the flow is smooth, so to first order the deviation at time t
is a linear image of the initial one and its spread stays ∝ d^{-1/2}.

:func:`equiangular_concentration` simulates batches of such systems and
returns the inner products at the requested times with γ_β(t).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import xarray as xr

from ...models._self_attention import SelfAttention
from ..._validate import as_times, check_positive, check_positive_int, check_rtol
from ..._version import __version__
from ...particles import simulate
from ._equiangular import equiangular_gamma
from ._phase_diagram import phase_diagram_tokens, span_coordinates

__all__ = ["equiangular_concentration"]

logger = logging.getLogger(__name__)


def equiangular_concentration(d: int, n: int, beta: float, t: Sequence[float] | np.ndarray, systems: int = 16, *,
                              seed: int = 0, normalized: bool = True, rtol: float = 1e-8,
                              atol: float = 1e-10) -> xr.Dataset:
    r"""Pairwise inner products of n iid uniform tokens on S^{d-1} under (SA)/(USA), against γ_β(t).

    Each system draws n iid uniform tokens (:func:`phase_diagram_tokens` with
    ``seed``: the same tokens as a phase diagram of that seed) and is moved by
    :func:`meanfield.simulate` (compiled per-system "ensemble" path; for
    d > n in the coordinates of the tokens' span, which keep every inner
    product). The result compares {<x_i(t), x_j(t)>}_{i≠j} with the curve
    γ_β(t) of Theorem 6.8 (paper 2, (6.9)/(6.10)), around which Theorem 6.9
    puts them within O(√(log d/d)).

    Parameters
    ----------
    d : int
        Dimension of the ambient space (tokens on S^{d-1}), d ≥ 2.
    n : int
        Tokens per system, n ≥ 2.
    beta : float
        β ≥ 0.
    t : array_like
        Output times, strictly increasing, t[0] = 0 allowed.
    systems : int
        Number of independent systems.
    seed : int
        Base seed of the tokens.
    normalized : bool
        SA (True, the theorem's case) or USA (Remark D.1).
    rtol, atol : float
        Tolerances of the adaptive Dormand–Prince integration.

    Returns
    -------
    xarray.Dataset
        ``inner_product`` (system, time, pair): <x_i(t), x_j(t)> over the
        n(n-1) ordered pairs i ≠ j (:func:`meanfield.pairwise_inner_products`);
        ``gamma`` (time): γ_β(t); ``mean_deviation``, ``rms_deviation``,
        ``max_deviation`` (time): mean, root mean square and maximum of
        <x_i, x_j> - γ_β (the last in absolute value) over all pairs and
        systems; ``scale``: √(log d / d). attrs: d, n, β, model, systems,
        seed, tolerances, version.

    Raises
    ------
    ValueError
        Bad d, n, systems, β or times.
    RuntimeError
        The integration failed.

    Notes
    -----
    Theorem 6.9 of paper 2, (6.11): for d ≥ d*(n, β), with probability at
    least 1 - 2n² d^{-1/64}, for every pair i ≠ j and t ≥ 0,

    .. math::

        \bigl|\langle x_i(t), x_j(t)\rangle - \gamma_\beta(t)\bigr|
        \le \min\Bigl\{ 2\, c(\beta)^{nt} \sqrt{\frac{\log d}{d}},\; C e^{-\lambda t} \Bigr\},
        \qquad c(\beta) = e^{10 \max\{1, \beta\}},

    with C, λ > 0 depending on n and β. The returned deviations are taken
    over the n(n-1) ordered pairs of every system, e.g.
    ``rms_deviation`` = (mean over systems and pairs of (<x_i, x_j> - γ_β)²)^{1/2}.

    Examples
    --------
    Two systems of 4 tokens on S^63, whose 12 ordered pairs are compared with γ_β(t):

    >>> import numpy as np
    >>> import meanfield as mf
    >>> ds = mf.equiangular_concentration(64, 4, 1.0, [0.0, 1.0], systems=2)
    >>> ds.inner_product.shape
    (2, 2, 12)
    >>> print(f"{float(ds.gamma[1]):.6f} {mf.equiangular_gamma(1.0, 4, [1.0])[0]:.6f}")
    0.479487 0.479487
    >>> print(f"{float(ds.scale):.6f} {np.sqrt(np.log(64) / 64):.6f}")
    0.254917 0.254917

    Each unordered pair appears twice, so the inner products come in equal pairs:

    >>> products = np.sort(ds.inner_product.values, axis=-1)
    >>> bool(np.allclose(products[..., ::2], products[..., 1::2]))
    True
    """
    d = check_positive_int("d", d, 2)
    n = check_positive_int("n", n, 2)
    systems = check_positive_int("systems", systems)
    times = as_times(t)
    rtol, atol = check_rtol("rtol", rtol), check_positive("atol", atol)
    model = SelfAttention(beta, normalized=normalized)
    x0 = phase_diagram_tokens(seed, np.arange(systems), d, n)
    if d > n:
        x0 = span_coordinates(x0)
    run = simulate(model, x0, times, rtol=rtol, atol=atol, domain="sphere")
    if not run.attrs["success"]:
        raise RuntimeError(f"simulate failed for d = {d}, n = {n}, beta = {beta}: {run.attrs['message']}")
    positions = run["positions"].values  # (system, time, particle, component)
    gram = positions @ np.swapaxes(positions, -1, -2)
    products = gram[..., ~np.eye(n, dtype=bool)]  # the order of pairwise_inner_products
    gamma = equiangular_gamma(model.beta, n, times, normalized=normalized)
    deviation = products - gamma[None, :, None]
    logger.info("d=%d n=%d beta=%g: max deviation %.3g", d, n, model.beta, float(np.abs(deviation).max()))
    return xr.Dataset(
        {
            "inner_product": (("system", "time", "pair"), products, {"long_name": "<x_i(t), x_j(t)>, i ≠ j"}),
            "gamma": ("time", gamma, {"long_name": "γ_β(t), paper 2 (6.9)/(6.10)"}),
            "mean_deviation": ("time", deviation.mean(axis=(0, 2)), {"long_name": "mean of <x_i, x_j> - γ_β"}),
            "rms_deviation": ("time", np.sqrt((deviation**2).mean(axis=(0, 2))),
                              {"long_name": "root mean square of <x_i, x_j> - γ_β"}),
            "max_deviation": ("time", np.abs(deviation).max(axis=(0, 2)), {"long_name": "max |<x_i, x_j> - γ_β|"}),
            "scale": ((), float(np.sqrt(np.log(d) / d)), {"long_name": "√(log d / d)"}),
        },
        coords={"system": np.arange(systems), "time": times},
        attrs={**model.attrs, "d": d, "n": n, "systems": systems, "seed": seed, "rtol": rtol, "atol": atol,
               "method": "mf.simulate (dopri5) of iid uniform tokens; paper 2 Theorem 6.9",
               "meanfield_version": __version__},
    )

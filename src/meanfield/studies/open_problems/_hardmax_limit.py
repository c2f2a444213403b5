r"""The hard-max limit β → ∞ of (9.4) (paper 2, §9.3, Problem 6), measured.

For a ladder of β the rescaled dynamics (9.4),

    ż_i = Σ_j softmax_j(β<Q z_i, K z_j>) V(z_j - z_i),

(``Attention(beta, Q, K, V, projection=False, rescaled=True, scores_at_z=True)``) runs from the same
tokens as the hard-max dynamics (9.5)–(9.6) (:class:`meanfield.HardmaxAttention`, Filippov stepper),
and the distance

    e(β) = sup_{t} max_i |z_i^β(t) - z_i^∞(t)|

over the output times is fitted by e ≈ c β^{-r} (least squares in log-log). On Example 9.3 (Q = K = V = I,
z₁ = (1, 1), z₂ = (-1, 1), z₃ = 0) the limit branch is z₃(t) = (0, 1 - e^{-t}); near t = 0, z₃ moves
at the speed 2/(2 + e^{-βs(1-s)}) (s = z₃·e₂) instead of 1, which costs
∫₀^∞ (e^{-σ}/2) dσ = 1/2 in βs, so β e(β) → 1/2 and r → 1 (measured: docs/hardmax.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from ...models import Attention, HardmaxAttention
from ...particles import simulate
from ..._validate import as_times

__all__ = ["hardmax_limit"]

DEFAULT_BETAS = (4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0)


def hardmax_limit(z0: Any, t: Any, betas: Any = DEFAULT_BETAS, *, Q: Any = None, K: Any = None, V: Any = None,
                  rtol: float = 1e-12, atol: float = 1e-14, tie_tolerance: float = 1e-9,
                  progress: bool = False) -> xr.Dataset:
    r"""Run (9.4) for each β of ``betas`` and the hard-max dynamics (9.5)–(9.6) from ``z0``; their distance.

    Parameters
    ----------
    z0 : array_like, shape (n, d)
        Initial tokens in R^d.
    t : array_like
        Output times, increasing. The sup is taken over them: resolve the initial layer of width ~1/β
        (geometric spacing near t[0]).
    betas : sequence of float, default (4, 8, 16, 32, 64, 128, 256)
        The ladder (at least two, increasing, > 0).
    Q, K, V : None or (d, d) arrays
        The weights (None: identity).
    rtol, atol : float, default 1e-12, 1e-14
        Tolerances of both integrators (dopri5 for (9.4), DOP853 segments for the hard-max run).
    tie_tolerance : float, default 1e-9
        Ties of the hard-max scores (:class:`meanfield.HardmaxAttention`).
    progress : bool, default False
        A progress bar per run.

    Returns
    -------
    xarray.Dataset
        ``limit`` (time, particle, component): z^∞; ``positions`` (beta, time, particle, component): z^β;
        ``error`` (beta, time): max_i |z_i^β - z_i^∞|; ``sup_error`` (beta); attrs ``rate`` (r of the fit
        e ≈ c β^{-r} over the ladder), ``prefactor`` (c), ``monotone`` (1 when e decreases along the
        ladder) and ``success`` (every run succeeded).

    Raises
    ------
    ValueError
        Fewer than two betas, betas not increasing and positive, ``z0`` not of shape (n, d), bad times
        or weights (from :func:`meanfield.simulate` and the models).

    Notes
    -----
    The rescaled dynamics (9.4) of paper 2, §9.3 (``Attention(beta, Q, K, V, projection=False,
    rescaled=True, scores_at_z=True)``), its hard-max limit (9.5)–(9.6) and the measured distance:

    .. math::

        \dot z_i = \sum_j \operatorname{softmax}_j\big(\beta\langle Q z_i, K z_j\rangle\big)\,
        V (z_j - z_i), \qquad
        \dot z_i = \frac{1}{|C_i|} \sum_{j \in C_i} V (z_j - z_i),
        \quad C_i = \operatorname{argmax}_j \langle Q z_i, K z_j\rangle,

    .. math::

        e(\beta) = \sup_t \max_i |z_i^\beta(t) - z_i^\infty(t)| \approx c\, \beta^{-r}.

    On Example 9.3 (Q = K = V = I, z₁ = (1, 1), z₂ = (-1, 1), z₃ = 0) the limit branch is
    z₃(t) = (0, 1 - e^{-t}), β e(β) → 1/2 and r → 1 (see the module docstring). Problem 6 asks for a
    selection principle among the non-unique solutions of (9.5)–(9.6).

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.open_problems import hardmax_limit
    >>> z0 = np.array([[1.0, 1.0], [-1.0, 1.0], [0.0, 0.0]])
    >>> out = hardmax_limit(z0, np.linspace(0.0, 1.0, 11), [16.0, 32.0, 64.0])
    >>> out["limit"].sizes, out.attrs["success"], out.attrs["monotone"]
    (Frozen({'time': 11, 'particle': 3, 'component': 2}), 1, 1)

    The limit branch of Example 9.3 at t = 1, z₃ = (0, 1 - 1/e), and β e(β) approaching 1/2:

    >>> print(out["limit"].values[-1, 2].round(8), f"{1 - np.exp(-1):.8f}")
    [0.         0.63212056] 0.63212056
    >>> print((out["beta"] * out["sup_error"]).values.round(2), round(out.attrs["rate"], 1))
    [0.44 0.45 0.47] 0.9
    """
    times = as_times(t)
    ladder = np.asarray(betas, dtype=float)
    if ladder.ndim != 1 or ladder.size < 2 or not np.all(np.isfinite(ladder)) or np.any(ladder <= 0) \
            or np.any(np.diff(ladder) <= 0):
        raise ValueError(f"betas must be at least two increasing positive numbers, got {betas!r}")
    tokens = np.asarray(z0, dtype=float)
    if tokens.ndim != 2:
        raise ValueError(f"z0 must be tokens of shape (n, d), got shape {tokens.shape}")
    limit_run = simulate(HardmaxAttention(Q, K, V, tie_tolerance=tie_tolerance), tokens, times, rtol=rtol,
                         atol=atol, progress=progress)
    limit = limit_run["positions"].values
    runs = [simulate(Attention(beta, Q, K, V, projection=False, rescaled=True, scores_at_z=True), tokens, times,
                     rtol=rtol, atol=atol, progress=progress) for beta in ladder]
    positions = np.stack([run["positions"].values for run in runs])
    error = np.linalg.norm(positions - limit[None], axis=-1).max(axis=-1)
    sup = error.max(axis=1)
    slope, intercept = np.polyfit(np.log(ladder), np.log(sup), 1)
    success = bool(limit_run.attrs["success"]) and all(bool(run.attrs["success"]) for run in runs)
    dims = ("time", "particle", "component")
    return xr.Dataset(
        {"limit": (dims, limit), "positions": (("beta",) + dims, positions), "error": (("beta", "time"), error),
         "sup_error": (("beta",), sup)},
        coords={"beta": ladder, "time": times},
        attrs={"study": "hardmax_limit", "equation": "(9.4) with scores <Q z_i, K z_j>; limit (9.5)-(9.6)",
               "rate": float(-slope), "prefactor": float(np.exp(intercept)),
               "monotone": int(np.all(np.diff(sup) < 0)), "success": int(success),
"rtol": rtol, "atol": atol,
               "tie_tolerance": tie_tolerance, **{k: limit_run.attrs[k] for k in ("Q", "K", "V")}},
    )

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
from ...models._filippov import event_tolerance
from ...models._hardmax_selection import score_tolerance, scores, select
from ...particles import simulate
from ..._validate import as_times

__all__ = ["hardmax_limit"]

DEFAULT_BETAS = (4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0)


def hardmax_limit(z0: Any, t: Any, betas: Any = DEFAULT_BETAS, *, Q: Any = None, K: Any = None, V: Any = None,
                  rtol: float = 1e-12, atol: float = 1e-14, tie_tolerance: float | None = None,
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
    tie_tolerance : None or float, default None
        The tie rule of the hard-max scores (:class:`meanfield.HardmaxAttention`): None, ties at the
        round-off of the scores; a float, the wider relative rule.
    progress : bool, default False
        A progress bar per run.

    Returns
    -------
    xarray.Dataset
        ``limit`` (time, particle, component): z^∞; ``positions`` (beta, time, particle, component): z^β;
        ``error`` (beta, time): max_i |z_i^β - z_i^∞|; ``sup_error`` (beta); attrs ``rate`` (r of the fit
        e ≈ c β^{-r} over the ladder), ``prefactor`` (c), ``monotone`` (1 when e decreases along the
        ladder). The branches, at the last output time T (token indices from 0):

        - ``limit_maximisers`` (particle, attended), bool: the maximiser set C_i(T) the hard-max run
          selects (a sliding row: the tied set its weights hold), and ``limit_sliding`` (particle);
        - ``maximisers`` (beta, particle, attended), bool: argmax_j S_ij^β(T) of each run of (9.4), ties
          at the round-off of the scores;
        - ``limit_attends_to`` (particle) and ``attends_to`` (beta, particle): the one token of the set,
          -1 where the set is a tie;
        - ``branch_agrees`` (beta): 1 when run β selected the hard-max run's branch, token by token: a
          tie the hard-max run keeps with uniform weights (held by a symmetry) is kept exactly; on a
          sliding row the set lies inside the held set (at finite β the token hovers beside the tie, on
          one side); a single maximiser j is the single maximiser of run β too, and the same one unless
          S_ij^∞(T) is within 2 max_k |S_ik^β(T) - S_ik^∞(T)| of the score of run β's choice (run β
          is not yet close enough to the limit to resolve them: e(β) measures that);

        attrs ``branches_agree`` (1 when the largest β, the run nearest the limit, agrees; smaller β may
        still sit on the other side of a near tie, e.g. inside a cluster), ``success`` (every run
        succeeded and the branches agree) and ``message`` (which β select another branch; when the
        largest does, the limit claim does not hold for these data, whatever e(β) does). A run that
        stops early keeps the outputs it reached (NaN after them); then ``success`` is 0, the message
        quotes the run's, and the sup, the fit and the branches, which need every run to the last time,
        are NaN, NaN and none agreeing.

    Raises
    ------
    ValueError
        ``tie_tolerance`` negative, non-finite or ≥ 1e-3; fewer than two betas, betas not increasing and positive, ``z0`` not of shape (n, d), bad times
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
    model = HardmaxAttention(Q, K, V, tie_tolerance=tie_tolerance)
    limit_run = simulate(model, tokens, times, rtol=rtol, atol=atol, progress=progress)
    limit = _on_times(limit_run, times)
    runs = [simulate(Attention(beta, Q, K, V, projection=False, rescaled=True, scores_at_z=True), tokens, times,
                     rtol=rtol, atol=atol, progress=progress) for beta in ladder]
    positions = np.stack([_on_times(run, times) for run in runs])
    error = np.linalg.norm(positions - limit[None], axis=-1).max(axis=-1)
    ran = bool(limit_run.attrs["success"]) and all(bool(run.attrs["success"]) for run in runs)
    n = tokens.shape[0]
    if ran:
        sup = error.max(axis=1)
        slope, intercept = np.polyfit(np.log(ladder), np.log(sup), 1)
        Qm, Km, Vm = model.matrices(tokens.shape[1])
        end = limit[-1]
        held = select(end, Qm, Km, Vm, max(tie_tolerance or 0.0, event_tolerance(end, Qm, Km, rtol, atol)))
        members, sliding = held.members, held.sliding
        chosen = np.stack([maximisers(z, Qm, Km) for z in positions[:, -1]])
        agrees = _branches_agree(chosen, members, sliding, scores(end, Qm, Km),
                                 np.stack([scores(z, Qm, Km) for z in positions[:, -1]]))
    else:  # the sup and the branches need every run to the last time
        sup, slope, intercept = np.full(ladder.size, np.nan), np.nan, np.nan
        members, chosen = np.zeros((n, n), dtype=bool), np.zeros((ladder.size, n, n), dtype=bool)
        sliding, agrees = np.zeros(n, dtype=bool), np.zeros(ladder.size, dtype=bool)
    if not ran:
        message = "a run stopped early: " + "; ".join(
            str(run.attrs["message"]) for run in [limit_run, *runs] if not run.attrs["success"])
    elif not agrees[-1]:
        message = ("the runs of (9.4) at beta = " + ", ".join(f"{b:g}" for b in ladder[~agrees])
                   + " select another branch than the hard-max run at the last time: the limit claim does not hold "
                     "for these data")
    else:
        message = "every run succeeded; the largest beta selects the hard-max run's branch" + (
            "" if agrees.all() else ", beta = " + ", ".join(f"{b:g}" for b in ladder[~agrees]) + " not yet")
    dims = ("time", "particle", "component")
    pairs = ("particle", "attended")
    return xr.Dataset(
        {"limit": (dims, limit), "positions": (("beta",) + dims, positions), "error": (("beta", "time"), error),
         "sup_error": (("beta",), sup), "limit_maximisers": (pairs, members),
         "limit_sliding": (("particle",), sliding), "maximisers": (("beta",) + pairs, chosen),
         "limit_attends_to": (("particle",), _attends_to(members)),
         "attends_to": (("beta", "particle"), _attends_to(chosen)),
         "branch_agrees": (("beta",), agrees.astype(int))},
        coords={"beta": ladder, "time": times},
        attrs={"study": "hardmax_limit", "equation": "(9.4) with scores <Q z_i, K z_j>; limit (9.5)-(9.6)",
               "rate": float(-slope), "prefactor": float(np.exp(intercept)),
               "monotone": int(ran and np.all(np.diff(sup) < 0)), "branches_agree": int(agrees[-1]),
               "success": int(ran and agrees[-1]), "message": message, "rtol": rtol, "atol": atol,
               **{k: limit_run.attrs[k] for k in ("tie_rule", "tie_tolerance", "Q", "K", "V")}},
    )


def _on_times(run: xr.Dataset, times: np.ndarray) -> np.ndarray:
    """The positions of ``run`` (time, particle, component) on all of ``times``, NaN after a run that stopped early."""
    reached = run["positions"].values
    out = np.full((times.size, *reached.shape[1:]), np.nan)
    out[:reached.shape[0]] = reached
    return out


def maximisers(z: np.ndarray, Q: np.ndarray, K: np.ndarray) -> np.ndarray:
    """argmax_j S_ij of tokens z (n, d), S_ij = <Q z_i, K z_j>, ties at the round-off of the scores (n, n) bool."""
    s = scores(z, Q, K)
    return s >= s.max(axis=1, keepdims=True) - score_tolerance(z, s, Q, K, None)[:, None]


def _branches_agree(chosen: np.ndarray, members: np.ndarray, sliding: np.ndarray, limit_scores: np.ndarray,
                    run_scores: np.ndarray) -> np.ndarray:
    """Per β, whether its maximiser sets ``chosen`` (beta, n, n) are the hard-max branch (see hardmax_limit)."""
    inside = ~np.any(chosen & ~members[None], axis=2)
    same = np.all(chosen == members[None], axis=2)
    resolution = 2 * np.abs(run_scores - limit_scores[None]).max(axis=2)
    best = limit_scores.max(axis=1)
    choice = np.where(chosen, limit_scores[None], np.inf).min(axis=2)
    near = (chosen.sum(axis=2) == 1) & (best[None] - choice <= resolution)
    single = (members.sum(axis=1) == 1)[None]
    return np.all(np.where(sliding[None], inside, same | (single & near)), axis=1)


def _attends_to(sets: np.ndarray) -> np.ndarray:
    """The one member of each set, -1 where the set holds several tokens."""
    return np.where(sets.sum(axis=-1) == 1, sets.argmax(axis=-1), -1)

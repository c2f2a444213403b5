"""A classifier of the limit sets of paper 1's rescaled tokens z = e^{-tV} x by the spectrum of V, and the
rank of the attention matrix at the end of a run.

Paper 1 (arXiv 2305.05465) integrates ẋ_i = Σ_j P_ij V x_j, P_ij = softmax_j(β <Q x_i, K x_j>),
through z_i = e^{-tV} x_i, which solve ż_i = V Σ_j P_ij(t) (z_j - z_i) with
P_ij(t) = softmax_j(β <Q e^{tV} z_i, K e^{tV} z_j>) (paper 2, (9.3)). The limit set depends on the
spectrum of V (paper 1 §3-5, §11; paper 2 Table 1 and Problem 5). With λ_1, …, λ_d the eigenvalues by
decreasing real part and a tolerance ε = 1e-8 ρ(V) for "equal" and "zero":

=============  ==========================================  ===========================================
case           spectrum of V                               limit set read
=============  ==========================================  ===========================================
``point``      Re λ_1 < 0                                  x_i = e^{tV} z_i collapse to one point (the
                                                           origin: V = -I, QᵀK = I, paper 1 Thm C.5)
``polytope``   λ_1 > 0 real, semisimple, multiplicity      F-coordinates on finitely many points of
               m ≥ 2 (V = λ_1 I on its eigenspace F)        ∂K ∪ {0} (Thm 3.1 for V = I, Thm 5.2)
``flats``      the k eigenvalues with Re λ > 0 are real,   k-vectors of leading coordinates take few
               positive and simple                         values: codimension-k flats (k = 1: Thm 4.2,
                                                           at most three hyperplanes; k ≥ 2: the
                                                           codimension conjecture, at most three)
``rotation``   λ_1 = a ± ib, a > 0, b ≠ 0                  leading-plane coordinates (no theorem)
``unclassified``  anything else (Re λ_1 = 0, a Jordan      nothing claimed
               block on top, a repeated or complex
               eigenvalue among the positive ones below a
               simple real λ_1)
=============  ==========================================  ===========================================

**Flats.** For each of the k positive eigenvalues take the right eigenvector φ_m (unit) and the left
eigenvector ψ_m scaled so that ψ_mᵀ φ_m = 1; with D = [ψ_1 … ψ_k] (d × k) the leading coordinates of
a token are c_i = Dᵀ z_i ∈ R^k: z_i = Σ_m c_im φ_m + g_i with g_i in the span G of the other
(generalised) eigenvectors. Since ψ_mᵀ V = λ_m ψ_mᵀ,

    ċ_im = λ_m Σ_j P_ij(t) (c_jm - c_im),

so each coordinate is a consensus dynamics (max_i c_im decreases, min_i c_im increases, all converge
when the attention concentrates). Tokens whose c_i agree lie on one flat
{w : Dᵀ w = a} = Σ_m a_m φ_m + G, of codimension k, parallel to G. In the hard-max regime every
token i follows a leader L (P_iL → 1) and ż_i = V (z_L - z_i): c_im - c_Lm decays like e^{-λ_m t},
so the distance to the flat decays like e^{-λ_k t}, λ_k the smallest positive eigenvalue, while the
G-components with Re λ < 0 diverge (z_i - z_L grows along them).

**Clustering.** The c_i are grouped by single linkage at ``tolerance`` · scale (scale: the diameter of
{c_i} ∪ {0}; for a run, at its first output time); a level is the mean of its group. No tie is
decided silently: ``separation`` (the least distance between two levels / scale) is reported beside
``residual`` (the largest |c_i - level(i)| / scale), and ``resolved`` says whether the levels are
separated by more than ``RESOLUTION`` times the residual; if not, the message says so.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg
import xarray as xr

from ..._validate import check_beta, check_positive, check_positive_int
from ..._version import __version__
from ...models._attention import Attention
from ...models._matrix_exponential import matrix_exponential
from ...particles import attention_matrix, simulate
from ._good_triples import EIGENVALUE_TOLERANCE, as_matrix, check_good_triple, check_mixed_triple
from ._hyperplanes import TOLERANCE, _cluster_points, _is_vertex, _read, polytope_vertices

__all__ = ["limit_set", "limit_attention_rank"]

RESOLUTION = 10.0
"""Levels count as resolved when their least separation exceeds this multiple of the residual."""
RANK_TOLERANCE = 1e-8
"""Default relative cut of the numerical rank: singular values σ_k > RANK_TOLERANCE · σ_1 count."""

_CLAIMS = {
    "point": "x = e^{tV} z collapses to one point; for V = -I, Q^T K = I it is the origin (paper 1, Theorem C.5)",
    "polytope": "coordinates in the dominant eigenspace F converge to finitely many points of the boundary of a "
                "convex polytope or 0, G free (paper 1, Theorems 3.1 and 5.2)",
    "flats": "the k-vectors of leading coordinates converge to at most three values: codimension-k flats "
             "(k = 1: paper 1, Theorem 4.2; k >= 2: the codimension conjecture of paper 1, section 4)",
    "rotation": "no theorem: the leading complex pair rotates the leading plane; its coordinates are clustered "
                "as observed (paper 1, section 11: collapse to points)",
    "unclassified": "nothing claimed",
}


def _vectors(V: np.ndarray, lam: complex, rcond: float) -> tuple[np.ndarray, np.ndarray] | None:
    """Right and left eigenvectors of a simple eigenvalue λ (complex allowed): φ unit, ψᵀ φ = 1."""
    shifted = V.astype(complex) - lam * np.eye(V.shape[0])
    right = scipy.linalg.null_space(shifted, rcond=rcond)
    left = scipy.linalg.null_space(shifted.T, rcond=rcond)
    if right.shape[1] != 1 or left.shape[1] != 1:
        return None
    phi = right[:, 0]
    phi = phi / (phi[np.argmax(np.abs(phi))] / np.abs(phi[np.argmax(np.abs(phi))]))
    psi = left[:, 0] / (left[:, 0] @ phi)
    return phi, psi


def _spectral_case(V: np.ndarray) -> tuple[str, np.ndarray, str, float]:
    """The case, the eigenvalues by decreasing real part (then imaginary part), a sentence, ε."""
    values = np.linalg.eigvals(V)
    values = values[np.lexsort((-values.imag, -values.real))]
    eps = EIGENVALUE_TOLERANCE * max(float(np.max(np.abs(values))), 1e-300)
    top = values[0]
    positive = values[values.real > eps]
    if top.real < -eps:
        return "point", values, f"every eigenvalue has negative real part (largest {top.real:.6g})", eps
    if top.real <= eps:
        return "unclassified", values, f"the largest real part is 0 within {eps:.3g}", eps
    if abs(top.imag) > eps:
        return "rotation", values, f"the leading eigenvalues are the complex pair {top:.6g} and its conjugate", eps
    multiplicity = int(np.sum(np.abs(values - top) <= eps))
    if multiplicity > 1:
        return "polytope", values, f"the leading eigenvalue {top.real:.6g} has multiplicity {multiplicity}", eps
    if np.any(np.abs(positive.imag) > eps):
        return "unclassified", values, ("a complex eigenvalue with positive real part lies below the simple "
                                        f"leading eigenvalue {top.real:.6g}"), eps
    if np.any(np.diff(positive.real) >= -eps):
        return "unclassified", values, "a positive eigenvalue below the leading one is repeated", eps
    return "flats", values, f"{positive.size} real, simple, positive eigenvalue(s)", eps


def _diameter(c: np.ndarray) -> float:
    """Diameter of {c_i} ∪ {0} (rows of c)."""
    points = np.vstack([c, np.zeros((1, c.shape[1]))])
    gaps = points[:, None, :] - points[None, :, :]
    return float(np.sqrt(np.max(np.sum(gaps**2, axis=-1))))


def _pairwise_min(levels: np.ndarray) -> float:
    """Least distance between two rows (inf for one row)."""
    if levels.shape[0] < 2:
        return float("inf")
    gaps = np.sqrt(np.sum((levels[:, None, :] - levels[None, :, :]) ** 2, axis=-1))
    return float(np.min(gaps[np.triu_indices(levels.shape[0], 1)]))


def _configuration(positions: Any, V: Any, Q: Any, K: Any, beta: Any, time: float | None
                   ) -> tuple[np.ndarray, np.ndarray | None, float | None, float | None, Any, Any, np.ndarray, float]:
    """(z at the last time, z at the first time or None, last time, first time, Q, K, V, β)."""
    flat, lead, dims, Q, K, V, beta = _read(positions, V, Q, K, beta)
    if isinstance(positions, xr.Dataset):
        if tuple(dims) != ("time",):
            raise ValueError(f"positions must be a run of one system (dims time, particle, component), got the "
                             f"leading dims {tuple(dims)}: select one, e.g. ds.isel(system=0)")
        if time is not None:
            raise ValueError("time is read from the Dataset (its last output time); pass time only with an array")
        times = np.asarray(positions["time"].values, dtype=float)
        return flat[-1], flat[0], float(times[-1]), float(times[0]), Q, K, V, beta
    if lead != (1,) and lead != ():
        raise ValueError(f"positions must be one configuration (n, d) of rescaled tokens, got a stack of shape "
                         f"{(*lead, *flat.shape[1:])}")
    if time is not None and not np.isfinite(time):
        raise ValueError(f"time must be finite, got {time!r}")
    return flat[0], None, None if time is None else float(time), None, Q, K, V, beta


def limit_set(positions: Any, V: Any = None, *, Q: Any = None, K: Any = None, beta: float | None = None,
              time: float | None = None, tolerance: float = TOLERANCE, scale: float | None = None) -> xr.Dataset:
    r"""Classify the limit set of paper 1's rescaled tokens z = e^{-tV} x by the spectrum of V.

    Reads the final configuration of a run of
    ``mf.Attention(beta, Q, K, V, projection=False, rescaled=True)`` (paper 2, (9.3)),

    .. math::

        \dot z_i = V \sum_j P_{ij}(t)\,(z_j - z_i), \qquad
        P_{ij}(t) = \operatorname{softmax}_j\big(\beta\langle Q e^{tV} z_i, K e^{tV} z_j\rangle\big),

    decides the case from the eigenvalues of V (``point``, ``polytope``, ``flats``, ``rotation`` or
    ``unclassified``: the table of the module docstring), computes the coordinates the case's limit
    statement is about (x_i for a point; c_i = Dᵀ z_i, D the dual left eigenvectors, otherwise),
    groups them by single linkage at ``tolerance`` · scale and reports the flats, the assignment of
    tokens to them and each token's Euclidean distance in R^d from its flat.

    Parameters
    ----------
    positions : array_like or xarray.Dataset
        Rescaled tokens z at one time, shape (n, d); or a :func:`meanfield.simulate` Dataset of one
        system of an ``Attention(projection=False)`` run (its last output time is classified; with
        ``rescaled=False`` its x are mapped to z = e^{-tV} x).
    V : (d, d) array_like, optional
        Value matrix; required for arrays. For a Dataset, None takes V, Q, K and β from its attrs.
    Q, K : (d, d) array_like or None
        Query and key matrices (None: identity); enter the hypothesis checks only.
    beta : float, optional
        β of the softmax (default 1); enters the hypothesis checks only.
    time : float, optional
        The time t of an array of z; needed for the ``point`` case, where x = e^{tV} z is classified.
        A Dataset supplies its last output time.
    tolerance : float, default 1e-3
        Relative clustering threshold, in (0, 1): coordinates closer than ``tolerance`` · scale (single
        linkage) share a flat.
    scale : float, optional
        Reference length of the coordinates. None: the diameter of {c_i} ∪ {0} at the Dataset's first
        output time (so a configuration that has contracted reads as converged), or of the given array.

    Returns
    -------
    xarray.Dataset
        ``eigenvalue_real``/``eigenvalue_imag`` (by decreasing real part); for every case but
        ``unclassified``: ``n_flats``, ``levels`` (flat, eigen), ``label`` and ``coordinate``
        (per particle), ``distance`` (per particle: Euclidean distance in R^d from its flat),
        ``residual`` (max_i |c_i - level(i)| / scale), ``separation`` (least distance between two
        levels / scale, inf for one level), ``resolved`` (separation > RESOLUTION · residual),
        ``at_most_three``, ``claim_holds`` (not for ``rotation``: one point; at most three flats,
        for k = 1 with the middle one at 0; every point a vertex or 0), ``scale``, ``normal`` (D:
        the flats are {w : Dᵀ w = level}) and ``direction`` (right eigenvectors). Per case:
        ``vertex``, ``at_origin`` (polytope); ``vertex``, ``radius`` (rotation: the points in the
        leading plane, |ψ_1ᵀ z_i|); ``at_origin``, ``centre``, ``spread`` (point: the mean of the x_i,
        max_i |x_i - mean| / scale); ``middle_levels_at_zero`` (flats with k = 1).
        Attrs: ``case``, ``codimension`` k, ``claim`` (what the theory says, or that it says
        nothing), ``reason``, ``tolerance``, ``eigenvalue_tolerance``, ``scale_rule``, ``time``,
        ``success`` (1 for a classified, resolved result), ``message``, the hypothesis check of the
        relevant theorem, version.

    Raises
    ------
    ValueError
        V missing, not square or not finite; Q or K not of V's size; positions of another dimension
        or not finite; a Dataset with a system axis, of several heads, not on R^d or of (9.4); an
        array in the ``point`` case without ``time``; tolerance outside (0, 1); scale not positive.

    Notes
    -----
    Distances: the flat {w : Dᵀ w = a} has distance
    :math:`\sqrt{r^\top (D^\top D)^{-1} r}`, r = Dᵀ z - a, from z (the least-norm w - z solving
    Dᵀ (w - z) = -r). In the ``point`` case D = I and the coordinates are x = e^{tV} z. In the
    ``rotation`` case D = [Re ψ_1, Im ψ_1] (codimension 2: the leading plane); the other positive
    eigenvalues are not read. When V is conformal on the leading plane (V = a I + b J there, J a
    rotation by π/2, e.g. V normal), e^{tV} = e^{at} R(bt) on it and the scores
    <e^{tV} z_i, e^{tV} z_j> ≈ e^{2at} <c_i, c_j> do not see the rotation: the leading plane then
    behaves like V = a I (polytope vertices), which is why ``vertex`` is reported.

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.rescaled import limit_set
    >>> V = np.diag([1.0, 0.5, -1.0])                   # two positive eigenvalues: codimension-2 flats
    >>> z = np.array([[2.0, 1.0, 5.0], [2.0, 1.0, -3.0], [-1.0, 0.5, 0.0], [2.0, 1.0 + 1e-7, 9.0]])
    >>> out = limit_set(z, V)
    >>> out.attrs["case"], out.attrs["codimension"], int(out["n_flats"])
    ('flats', 2, 2)
    >>> out["levels"].values.round(6).tolist(), out["label"].values.tolist()
    ([[-1.0, 0.5], [2.0, 1.0]], [1, 1, 0, 1])

    The flats are the lines {z_1 = a_1, z_2 = a_2}, parallel to e_3; the third token's distance
    from its flat is 0, the fourth's 1e-7 · 2/3:

    >>> print(np.round(out["distance"].values / 1e-7, 6))
    [0.333333 0.333333 0.       0.666667]
    """
    z, z_first, t, t_first, Q, K, V, beta = _configuration(positions, V, Q, K, beta, time)
    if not (np.isfinite(tolerance) and 0 < tolerance < 1):
        raise ValueError(f"tolerance must lie in (0, 1) (relative to the scale), got {tolerance!r}")
    if scale is not None:
        scale = check_positive("scale", scale)
    d = V.shape[0]
    case, values, reason, eps = _spectral_case(V)
    attrs: dict[str, Any] = {
        "case": case, "reason": reason, "claim": _CLAIMS[case], "tolerance": tolerance,
        "eigenvalue_tolerance": eps, "beta": beta, "time": np.nan if t is None else t,
        "source": "arXiv 2305.05465; arXiv 2312.10794 Problem 5", "meanfield_version": __version__,
        "method": "single linkage of the case's coordinates at tolerance * scale",
    }
    data: dict[str, Any] = {
        "eigenvalue_real": ("eigenvalue", values.real, {"long_name": "Re of the eigenvalues of V, decreasing"}),
        "eigenvalue_imag": ("eigenvalue", values.imag, {"long_name": "Im of the eigenvalues of V"}),
    }
    if case == "unclassified":
        attrs.update(codimension=0, success=0, message=f"not classified: {reason}", scale_rule="none")
        return xr.Dataset(data, attrs=attrs)
    rcond = np.sqrt(np.finfo(float).eps)
    extra: dict[str, Any] = {}
    if case == "point":
        if t is None:
            raise ValueError("time is required for an array when every eigenvalue of V has negative real part: "
                             "the collapse is a statement about x = e^{tV} z")
        D, Phi = np.eye(d), np.eye(d)
        c = z @ matrix_exponential(t * V).T
        first = None if z_first is None else z_first @ matrix_exponential(t_first * V).T
        attrs.update(check_good_triple(Q, K, V, beta).attrs)
    elif case == "polytope":
        check = check_mixed_triple(Q, K, V, beta)
        if not check.conditions["dominant_semisimple"]:
            attrs.update(case="unclassified", claim=_CLAIMS["unclassified"], codimension=0, success=0,
                         scale_rule="none", message="not classified: the leading eigenvalue is not semisimple "
                                                    "(a Jordan block): " + "; ".join(check.failures))
            return xr.Dataset(data, attrs=attrs)
        Phi, D = check.basis, check.dual
        c, first = z @ D, None if z_first is None else z_first @ D
        attrs.update(check.attrs)
    else:
        leading = values[:2] if case == "rotation" else values[values.real > eps]
        pairs = [_vectors(V, lam, rcond) for lam in leading[:1 if case == "rotation" else None]]
        if any(p is None for p in pairs):
            attrs.update(case="unclassified", claim=_CLAIMS["unclassified"], codimension=0, success=0,
                         scale_rule="none", message="not classified: a leading eigenvalue has no one-dimensional "
                                                    "eigenspace at the rank tolerance")
            return xr.Dataset(data, attrs=attrs)
        if case == "rotation":
            phi, psi = pairs[0]
            Phi, D = np.stack([phi.real, phi.imag], axis=1), np.stack([psi.real, psi.imag], axis=1)
        else:
            Phi = np.stack([p[0].real for p in pairs], axis=1)
            D = np.stack([p[1].real for p in pairs], axis=1)
        c, first = z @ D, None if z_first is None else z_first @ D
        attrs.update(check_good_triple(Q, K, V, beta).attrs)
        if case == "rotation":
            extra["radius"] = ("particle", np.hypot(c[:, 0], c[:, 1]), {"long_name": "|psi_1^T z_i|"})
    k = D.shape[1]
    if scale is None:
        used = _diameter(c if first is None else first)
        attrs["scale_rule"] = ("diameter of the coordinates and 0 at the first output time" if first is not None
                               else "diameter of the coordinates and 0 of the given configuration")
    else:
        used = float(scale)
        attrs["scale_rule"] = "given"
    labels, levels = _cluster_points(c, tolerance * used)
    gram = np.linalg.inv(D.T @ D)
    r = c - levels[labels]
    distance = np.sqrt(np.maximum(np.einsum("ik,kl,il->i", r, gram, r), 0.0))
    residual = float(np.max(np.linalg.norm(r, axis=1)) / used) if used > 0 else 0.0
    separation = _pairwise_min(levels) / used if used > 0 else float("inf")
    resolved = bool(separation > RESOLUTION * residual)
    count = levels.shape[0]
    if case == "polytope":
        poly = polytope_vertices(z, V, Q=Q, K=K, beta=beta, tolerance=tolerance, scale=used)
        extra["vertex"] = ("level", poly["vertex"].values[:count], {"long_name": "the point is a vertex"})
        extra["at_origin"] = ("level", poly["at_origin"].values[:count], {"long_name": "the point is 0"})
    elif case == "point":
        extra["at_origin"] = ("level", np.linalg.norm(levels, axis=1) <= tolerance * used,
                              {"long_name": "the point lies within tolerance * scale of the origin"})
        centre = c.mean(axis=0)
        extra["centre"] = ("eigen", centre, {"long_name": "mean of the x_i"})
        extra["spread"] = ((), float(np.max(np.linalg.norm(c - centre, axis=1)) / used) if used > 0 else 0.0,
                           {"long_name": "max_i |x_i - mean| / scale"})
    elif case == "rotation":
        extra["vertex"] = ("level", np.array([_is_vertex(levels, m) for m in range(count)], dtype=bool),
                           {"long_name": "the point is a vertex of the hull of the points (leading plane)"})
    elif case == "flats" and k == 1:
        inner = levels[1:-1, 0]
        extra["middle_levels_at_zero"] = ((), bool(np.all(np.abs(inner) <= tolerance * used)),
                                          {"long_name": "levels other than the extreme two lie at 0"})
    if case == "point":
        holds: Any = count == 1
    elif case == "polytope":
        holds = bool(np.all(extra["vertex"][1] | extra["at_origin"][1]))
    elif case == "flats":
        holds = count <= 3 and (k > 1 or bool(extra["middle_levels_at_zero"][1]))
    else:
        holds = None
    message = f"{case}: {count} flat(s) of codimension {k}"
    if not resolved:
        message += (f"; NOT resolved: the least separation of two levels ({separation:.3g} of the scale) is "
                    f"within {RESOLUTION:g} times the residual ({residual:.3g}): levels may be merging or the run "
                    "has not converged")
    data.update({
        "n_flats": ((), count, {"long_name": "number of flats (distinct levels of the coordinates)"}),
        "levels": (("level", "eigen"), levels, {"long_name": "levels of the coordinates, lexicographic order"}),
        "label": ("particle", labels, {"long_name": "index of the flat of each token"}),
        "coordinate": (("particle", "eigen"), c, {"long_name": "coordinates c_i = D^T z_i (x_i for a point)"}),
        "distance": ("particle", distance, {"long_name": "Euclidean distance in R^d from the token to its flat"}),
        "residual": ((), residual, {"long_name": "max_i |c_i - level(i)| / scale"}),
        "separation": ((), separation, {"long_name": "least distance between two levels / scale"}),
        "resolved": ((), resolved, {"long_name": f"separation > {RESOLUTION:g} * residual"}),
        "at_most_three": ((), count <= 3, {"long_name": "at most three flats"}),
        "scale": ((), used, {"long_name": "reference length of the coordinates"}),
        **({} if holds is None else {"claim_holds": ((), bool(holds), {"long_name": "the case's claim holds: one "
                                     "point; at most three flats (k = 1: middle level at 0); vertices or 0"})}),
        "normal": (("component", "eigen"), D, {"long_name": "D: the flats are {w : D^T w = level}"}),
        "direction": (("component", "eigen"), Phi, {"long_name": "right eigenvectors (the leading directions)"}),
        **extra,
    })
    attrs.update(codimension=k, success=int(resolved), message=message)
    return xr.Dataset(data, attrs=attrs)


def limit_attention_rank(V: Any, n_values: Any = (8, 16, 32, 64), *, Q: Any = None, K: Any = None,
                         beta: float = 1.0, t_final: float = 10.0, seeds: int = 3, seed: int = 0,
                         tolerance: float = RANK_TOLERANCE, rtol: float = 1e-10, atol: float = 1e-13) -> xr.Dataset:
    r"""Numerical rank of the attention matrix P(T) at the end of paper 1's dynamics, against n.

    For each n and each of ``seeds`` draws of n standard Gaussian tokens in R^d, integrates the
    rescaled dynamics (``mf.Attention(beta, Q, K, V, projection=False, rescaled=True)``) to T =
    ``t_final`` and computes

    .. math::

        P_{ij}(T) = \operatorname{softmax}_j\big(\beta\langle Q e^{TV} z_i, K e^{TV} z_j\rangle\big),
        \qquad \operatorname{rank} P(T) = \#\{k : \sigma_k > \text{tolerance}\cdot\sigma_1\},

    σ_k the singular values. Paper 1 proves rank P(∞) ≤ 2 (plus at most one exceptional row) for
    d = 1, V > 0 (Theorem 2.1) and observes in §11 that the rank does not grow with n for d > 1. When
    every row is Boolean (one entry 1 within ``tolerance``), P has one distinct row per leader and its
    singular values are √(number of tokens following each leader): ``n_leaders`` and
    ``boolean`` check this.

    Parameters
    ----------
    V : (d, d) array_like
        Value matrix (d ≥ 1).
    n_values : sequence of int, default (8, 16, 32, 64)
        Numbers of tokens.
    Q, K : (d, d) array_like or None
        Query and key matrices (None: identity).
    beta : float, default 1
        β of the softmax.
    t_final : float, default 10
        Final time T.
    seeds : int, default 3
        Draws per n; draw s for n uses the seed SeedSequence((seed, n, s)).
    seed : int, default 0
        Base seed.
    tolerance : float, default 1e-8
        Relative cut of the numerical rank (and of "Boolean": |P_ij - δ_{j L(i)}| ≤ tolerance).
    rtol, atol : float
        Integrator tolerances.

    Returns
    -------
    xarray.Dataset
        Over (``n``, ``seed``): ``rank``, ``n_leaders`` (distinct argmax_j P_ij), ``boolean`` (every row
        within ``tolerance`` of a basis vector), ``success`` (the run reached T), and
        ``singular_values`` (n, seed, index; NaN-padded beyond n). Attrs: the weights, β, T, tolerance.

    Raises
    ------
    ValueError
        V, Q, K not square, not finite or of different sizes; an n < 2; t_final, tolerance not positive;
        seeds < 1.

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.rescaled import limit_attention_rank
    >>> out = limit_attention_rank(np.diag([1.0, 0.5]), (4, 8), seeds=2, t_final=6.0)
    >>> out["rank"].values.tolist(), bool(out["boolean"].all())
    ([[1, 2], [1, 2]], True)

    Boolean rows: σ_k² is the number of tokens following leader k (here 5 and 3 of n = 8):

    >>> np.round(out["singular_values"].sel(n=8, seed=1).values[:2] ** 2, 9).tolist()
    [5.0, 3.0]
    """
    V = as_matrix("V", V)
    d = V.shape[0]
    Q, K = as_matrix("Q", Q, d), as_matrix("K", K, d)
    beta = check_beta(beta)
    t_final = check_positive("t_final", t_final)
    tolerance = check_positive("tolerance", tolerance)
    seeds = check_positive_int("seeds", seeds)
    ns = [check_positive_int("n_values", n) for n in np.atleast_1d(n_values)]
    if any(n < 2 for n in ns):
        raise ValueError(f"n_values must be >= 2, got {list(ns)}")
    model = Attention(beta, Q, K, V, projection=False, rescaled=True)
    width = max(ns)
    rank = np.zeros((len(ns), seeds), dtype=int)
    leaders = np.zeros((len(ns), seeds), dtype=int)
    boolean = np.zeros((len(ns), seeds), dtype=bool)
    success = np.zeros((len(ns), seeds), dtype=bool)
    sigma = np.full((len(ns), seeds, width), np.nan)
    for a, n in enumerate(ns):
        for s in range(seeds):
            x0 = np.random.default_rng(np.random.SeedSequence((seed, n, s))).standard_normal((n, d))
            ds = simulate(model, x0, [0.0, t_final], rtol=rtol, atol=atol)
            success[a, s] = bool(ds.attrs["success"]) and float(ds["time"].values[-1]) == t_final
            P = attention_matrix(model, ds["positions"].values[-1], t=float(ds["time"].values[-1]))
            values = np.linalg.svd(P, compute_uv=False)
            sigma[a, s, :n] = values
            rank[a, s] = int(np.sum(values > tolerance * values[0]))
            top = np.argmax(P, axis=1)
            leaders[a, s] = np.unique(top).size
            boolean[a, s] = bool(np.all(np.abs(P - np.eye(n)[top]) <= tolerance))
    dims = ("n", "seed")
    return xr.Dataset(
        {"rank": (dims, rank, {"long_name": f"#{{sigma_k > {tolerance:g} sigma_1}}"}),
         "n_leaders": (dims, leaders, {"long_name": "distinct argmax_j P_ij"}),
         "boolean": (dims, boolean, {"long_name": "every row within tolerance of a basis vector"}),
         "success": (dims, success, {"long_name": "the run reached t_final"}),
         "singular_values": ((*dims, "index"), sigma, {"long_name": "singular values of P(T), decreasing"})},
        coords={"n": ns, "seed": np.arange(seeds)},
        attrs={"V": repr(np.round(V, 12).tolist()), "Q": repr(np.round(Q, 12).tolist()),
               "K": repr(np.round(K, 12).tolist()), "beta": beta, "t_final": t_final, "tolerance": tolerance,
               "base_seed": seed, "rtol": rtol, "atol": atol, "tokens": "standard Gaussian in R^d",
               "source": "arXiv 2305.05465, Theorem 2.1 and section 11", "meanfield_version": __version__},
    )

r"""The BBGKY hierarchy of the USA dynamics on S¹ (paper 2, §8, eq. (8.1)) measured on particle ensembles.

M independent systems of n particles follow (7.1),

    θ̇_i = -(1/n) Σ_j e^{β cos(θ_i - θ_j)} sin(θ_i - θ_j) = (1/(nβ)) Σ_j h_β'(θ_i - θ_j),
    h_β(u) = e^{β cos u},  h_β'(u) = -β sin u e^{β cos u},

from iid uniform starts. The one-particle law is ρ^(1) = 1/(2π) at every t (rotation invariance) and the
two-particle law is ρ^(2)(t, θ_1, θ_2) = ψ(t, θ_2 - θ_1)/(2π), ψ(t, ·) an even probability density on T.
It solves

    ∂_t ψ + ∂_x(v ψ) = 0,  ψ(0) = 1/(2π),
    v(t, x) = (2/(βn)) h_β'(x) - (2(n-2)/(βn)) g(t, x),  g(t, x) = E[-h_β'(θ_3) | θ_1 = 0, θ_2 = x].   (8.1)

Fourier coefficients are f̂_k = (1/2π) ∫_T f(x) e^{-ikx} dx. By exchangeability,

    ψ̂_k      = (1/2π) E[e^{-ik(θ_j - θ_i)}]                       over ordered pairs i ≠ j,
    (h'ψ)^_k = (1/2π) E[h_β'(θ_j - θ_i) e^{-ik(θ_j - θ_i)}]        over ordered pairs,
    (gψ)^_k  = (1/2π) E[-h_β'(θ_l - θ_i) e^{-ik(θ_j - θ_i)}]       over distinct ordered triples,
    ∂_t ψ̂_k  = (1/2π) E[-ik(θ̇_j - θ̇_i) e^{-ik(θ_j - θ_i)}]       over ordered pairs,

and each system contributes the average over all its pairs (triples), computed in O(n²) from the power sums
P_k = Σ_j e^{-ikθ_j}: the pair average is (|P_k|² - n)/(n(n-1)) and Σ_{j ∉ {i,l}} e^{-ikθ_j} = P_k - e^{-ikθ_i}
- e^{-ikθ_l}. The estimate is the mean over systems and its standard error the standard deviation over
systems divided by √M (the systems are iid; the pairs of one system are not).

The residual of (8.1) in Fourier,

    r_k = ∂_t ψ̂_k + ik (vψ)^_k,   (vψ)^_k = (2/(βn)) (h'ψ)^_k - (2(n-2)/(βn)) (gψ)^_k,

has mean exactly zero for every finite n. Per system it equals -(ik/π) Re(P_k Q̄_k)/(n(n-1)) with
Q_k = Σ_j θ̇_j e^{-ikθ_j}: the velocity terms cancel identically, and what remains is a reflection-odd statistic
whose mean vanishes because the law of the ensemble is invariant under θ ↦ -θ (the symmetry step of the
derivation of v). Its estimate therefore falls like M^{-1/2}.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import xarray as xr

from ..._validate import as_times, check_positive, check_positive_int
from ..._version import __version__
from ...models import SelfAttention
from ...particles import simulate

__all__ = [
    "BBGKYAverages",
    "bbgky_averages",
    "bbgky_estimates",
    "bbgky_study",
    "bbgky_ensemble",
]

logger = logging.getLogger(__name__)

SMOOTHINGS = ("fejer", "dirichlet")
BLOCK_ELEMENTS = 4_000_000
"""Largest number of entries, configurations × n × max(n, K + 1), of one block of :func:`bbgky_averages`."""
SEED_RULE = "theta0 = 2π · numpy.random.default_rng(SeedSequence(seed)).random((systems, n))"


class BBGKYAverages(NamedTuple):
    r"""Pair and triple averages of configurations, each of shape (..., K + 1) for k = 0, …, K (no 1/(2π)).

    Attributes
    ----------
    rho1 : complex ndarray
        (1/n) Σ_j e^{-ikθ_j}.
    pair : real ndarray
        (1/(n(n-1))) Σ_{i≠j} e^{-ik(θ_j - θ_i)} = (|P_k|² - n)/(n(n-1)).
    hprime_pair : complex ndarray
        (1/(n(n-1))) Σ_{i≠j} h_β'(θ_j - θ_i) e^{-ik(θ_j - θ_i)} (purely imaginary: h_β' is odd).
    triple : complex ndarray
        (1/(n(n-1)(n-2))) Σ_{i,j,l distinct} -h_β'(θ_l - θ_i) e^{-ik(θ_j - θ_i)}.
    pair_rate : real ndarray
        (1/(n(n-1))) Σ_{i≠j} -ik(θ̇_j - θ̇_i) e^{-ik(θ_j - θ_i)} = 2k Im(Q_k P̄_k)/(n(n-1)), the exact time
        derivative of ``pair`` along (7.1), Q_k = Σ_j θ̇_j e^{-ikθ_j}.
    """

    rho1: np.ndarray
    pair: np.ndarray
    hprime_pair: np.ndarray
    triple: np.ndarray
    pair_rate: np.ndarray


def hprime(u: np.ndarray, beta: float) -> np.ndarray:
    """h_β'(u) = -β sin u e^{β cos u}, the derivative of h_β(u) = e^{β cos u}; Fourier coefficients ik I_k(β)."""
    return -beta * np.sin(u) * np.exp(beta * np.cos(u))


def bbgky_averages(theta: np.ndarray, beta: float, max_wavenumber: int) -> BBGKYAverages:
    r"""Pair and triple averages of each configuration θ (shape (..., n), n ≥ 3), for k = 0, …, K.

    With E_{jk} = e^{-ikθ_j}, H_{ij} = h_β'(θ_j - θ_i), P_k = Σ_j E_{jk}, θ̇ from (7.1) and
    Q_k = Σ_j θ̇_j E_{jk}:

        pair        = (|P_k|² - n) / (n(n-1)),
        hprime_pair = Σ_{ij} Ē_{ik} H_{ij} E_{jk} / (n(n-1)),
        triple      = [Σ_i Ē_{ik} s_i P_k - Σ_i s_i + n(n-1) hprime_pair] / (n(n-1)(n-2)),  s_i = -Σ_l H_{il},
        pair_rate   = 2k Im(Q_k P̄_k) / (n(n-1)),

    O(n²(K + 1)) per configuration, vectorised over configurations (in blocks of at most
    ``BLOCK_ELEMENTS`` entries). See :class:`BBGKYAverages`.

    Parameters
    ----------
    theta : array_like, shape (..., n)
        Angles of n ≥ 3 particles (radians) on the last axis; leading axes are configurations.
    beta : float
        β > 0 of h_β(u) = e^{β cos u} and of the velocities (7.1).
    max_wavenumber : int
        K ≥ 1: wavenumbers k = 0, …, K.

    Returns
    -------
    BBGKYAverages
        Named tuple (``rho1``, ``pair``, ``hprime_pair``, ``triple``, ``pair_rate``), each of shape
        (..., K + 1), without the factor 1/(2π) of the Fourier coefficients.

    Raises
    ------
    ValueError
        Fewer than 3 particles, β ≤ 0, K < 1, non-finite angles.

    Notes
    -----
    The averages over ordered pairs i ≠ j and distinct ordered triples (i, j, l):

    .. math::

        \mathrm{pair}_k = \frac{1}{n(n-1)} \sum_{i \ne j} e^{-ik(\theta_j - \theta_i)}
        = \frac{|P_k|^2 - n}{n(n-1)}, \qquad P_k = \sum_j e^{-ik\theta_j},

    .. math::

        \mathrm{triple}_k = \frac{1}{n(n-1)(n-2)} \sum_{i,j,l \text{ distinct}}
        -h_\beta'(\theta_l - \theta_i)\, e^{-ik(\theta_j - \theta_i)}, \qquad
        \mathrm{pair\_rate}_k = \frac{2k\, \mathrm{Im}(Q_k \bar P_k)}{n(n-1)},

    with :math:`Q_k = \sum_j \dot\theta_j e^{-ik\theta_j}` and θ̇ from (7.1); ``pair_rate`` is the
    exact time derivative of ``pair`` along (7.1).

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.open_problems import bbgky_averages
    >>> theta, beta = np.array([0.0, 0.5, 2.0, 4.0]), 2.0
    >>> averages = bbgky_averages(theta, beta, max_wavenumber=2)
    >>> print(averages.pair.round(8), averages.rho1[0])
    [ 1.         -0.24567904 -0.1914292 ] (1+0j)

    ``pair`` is the plain average over the 12 ordered pairs, and ``pair_rate`` its derivative along
    the velocities θ̇ of (7.1):

    >>> pairs = [np.exp(-1j * (theta[j] - theta[i])) for i in range(4) for j in range(4) if i != j]
    >>> print(f"{np.mean(pairs).real:.8f}")
    -0.24567904
    >>> diff = theta[:, None] - theta[None, :]
    >>> velocity = -(np.exp(beta * np.cos(diff)) * np.sin(diff)).sum(axis=1) / 4
    >>> h = 1e-6
    >>> rate = (bbgky_averages(theta + h * velocity, beta, 2).pair
    ...         - bbgky_averages(theta - h * velocity, beta, 2).pair) / (2 * h)
    >>> bool(np.allclose(rate, averages.pair_rate, atol=1e-8)), averages.pair_rate.round(8).tolist()
    (True, [0.0, 0.11297398, 0.29501423])
    """
    theta = np.asarray(theta, dtype=float)
    beta = check_positive("beta", beta)
    k_max = check_positive_int("max_wavenumber", max_wavenumber)
    if theta.ndim < 1 or theta.shape[-1] < 3:
        raise ValueError(f"theta must have a last axis of n >= 3 particles, got shape {theta.shape}")
    if not np.all(np.isfinite(theta)):
        raise ValueError("theta must contain finite angles")
    n = theta.shape[-1]
    flat = theta.reshape(-1, n)
    block = max(1, BLOCK_ELEMENTS // (n * max(n, k_max + 1)))
    parts = [_block_averages(flat[s:s + block], beta, k_max) for s in range(0, flat.shape[0], block)]
    return BBGKYAverages(*(np.concatenate(field).reshape(*theta.shape[:-1], k_max + 1) for field in zip(*parts)))


def _block_averages(theta: np.ndarray, beta: float, k_max: int) -> tuple[np.ndarray, ...]:
    n = theta.shape[-1]
    pairs, triples = n * (n - 1), n * (n - 1) * (n - 2)
    k = np.arange(k_max + 1)
    e = np.empty((*theta.shape, k_max + 1), dtype=complex)            # E_{jk} = z_j^k, z_j = e^{-iθ_j}
    e[..., 0] = 1.0
    e[..., 1:] = np.exp(-1j * theta)[..., None]
    np.cumprod(e, axis=-1, out=e)
    h = hprime(theta[:, None, :] - theta[:, :, None], beta)           # H_{ij} = h'(θ_j - θ_i), (S, n, n)
    p = e.sum(axis=1)                                                 # P_k
    s = -h.sum(axis=-1)                                               # s_i = Σ_l -h'(θ_l - θ_i) = nβ θ̇_i
    q = (s[:, :, None] * e).sum(axis=1) / (n * beta)                  # Q_k = Σ_j θ̇_j E_{jk}
    he = (h @ np.ascontiguousarray(e.real)) + 1j * (h @ np.ascontiguousarray(e.imag))   # real batched BLAS
    hprime_pair = (e.conj() * he).sum(axis=1) / pairs
    triple = (p * (e.conj() * s[:, :, None]).sum(axis=1) - s.sum(axis=-1)[:, None] + pairs * hprime_pair) / triples
    pair = (np.abs(p) ** 2 - n) / pairs
    pair_rate = 2 * k * np.imag(q * p.conj()) / pairs
    return p / n, pair, hprime_pair, triple, pair_rate


def fejer_weights(max_wavenumber: int) -> np.ndarray:
    """Fejér weights w_k = 1 - k/(K + 1), k = 0, …, K: the Cesàro mean of the Fourier partial sums."""
    k_max = check_positive_int("max_wavenumber", max_wavenumber)
    return 1.0 - np.arange(k_max + 1) / (k_max + 1)


def bbgky_ensemble(
    beta: float,
    n_particles: int,
    systems: int,
    times: Sequence[float] | np.ndarray,
    *,
    seed: int | Sequence[int] | None = None,
    rtol: float = 1e-8,
    atol: float = 1e-10,
) -> xr.Dataset:
    r"""M independent USA systems (7.1) of n particles on S¹ from iid uniform starts, by :func:`meanfield.simulate`.

    The initial angles are θ_i(0) = 2π U_i, U ~ ``default_rng(SeedSequence(seed)).random((systems, n))``; the
    batch is integrated by the per-system adaptive Dormand–Prince path.

    Parameters
    ----------
    beta : float
        β > 0 of the USA dynamics (7.1).
    n_particles : int
        n ≥ 3 particles per system.
    systems : int
        M ≥ 2 independent systems.
    times : array_like
        Output times, increasing; times[0] is the time of the uniform starts.
    seed : int, sequence of int or None, optional
        Entropy of the ``SeedSequence`` (None: fresh entropy, recorded in the attrs).
    rtol, atol : float, default 1e-8, 1e-10
        Tolerances of :func:`meanfield.simulate`.

    Returns
    -------
    xarray.Dataset
        The :func:`meanfield.simulate` result (``positions`` (system, time, particle)) with attrs ``seed`` (the
        entropy of the seed sequence, so that ``seed=None`` is reproducible too) and ``seed_rule``.

    Raises
    ------
    ValueError
        β ≤ 0, n < 3, M < 2, bad times.
    RuntimeError
        A system did not reach the final time.

    Notes
    -----
    Each system follows (7.1), the gradient ascent θ̇ = n∇E_β:

    .. math::

        \dot\theta_i = -\frac{1}{n} \sum_{j=1}^n e^{\beta\cos(\theta_i - \theta_j)} \sin(\theta_i - \theta_j).

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.open_problems import bbgky_ensemble
    >>> run = bbgky_ensemble(2.0, 5, 4, [0.0, 0.5], seed=1)
    >>> run["positions"].dims, run["positions"].shape, run.attrs["seed"]
    (('system', 'time', 'particle'), (4, 2, 5), '1')

    The starts follow the recorded seed rule:

    >>> theta0 = 2 * np.pi * np.random.default_rng(np.random.SeedSequence(1)).random((4, 5))
    >>> bool(np.allclose(run["positions"].values[:, 0], theta0))
    True
    """
    beta, n, m, times = _check_ensemble(beta, n_particles, systems, times)
    sequence = np.random.SeedSequence(seed)
    run = simulate_usa(beta, initial_angles(sequence, m, n), times, rtol=rtol, atol=atol)
    run.attrs.update(seed=str(sequence.entropy), seed_rule=SEED_RULE)
    return run


def initial_angles(sequence: np.random.SeedSequence, systems: int, n: int) -> np.ndarray:
    """iid uniform angles θ = 2π U, U = ``default_rng(sequence).random((systems, n))`` (``SEED_RULE``)."""
    return 2 * np.pi * np.random.default_rng(sequence).random((systems, n))


def simulate_usa(beta: float, theta0: np.ndarray, times: np.ndarray, *, rtol: float, atol: float) -> xr.Dataset:
    """:func:`meanfield.simulate` of USA (7.1) from angles (systems, n); RuntimeError if a system stopped early."""
    run = simulate(SelfAttention(beta, normalized=False), theta0, times, domain="circle", rtol=rtol, atol=atol)
    if int(run.attrs["success"]) != 1:
        raise RuntimeError(f"the particle ensemble did not reach the final time: {run.attrs.get('message', '')}")
    return run


def bbgky_estimates(
    theta: np.ndarray | xr.DataArray,
    beta: float,
    times: Sequence[float] | np.ndarray,
    *,
    max_wavenumber: int = 16,
    grid_size: int = 256,
    smoothing: str = "fejer",
) -> xr.Dataset:
    r"""Estimates of ρ̂^(1)_k, ψ̂_k, (h'ψ)^_k, (gψ)^_k, ∂_t ψ̂_k and the residual of (8.1) from an ensemble.

    Parameters
    ----------
    theta : array_like, shape (systems, time, n)
        Angles of M ≥ 2 iid systems at the output times (the ``positions`` of :func:`bbgky_ensemble`).
    beta : float
        β > 0 of the USA dynamics the angles follow.
    times : array_like, shape (time,)
        The output times of the angles, strictly increasing.
    max_wavenumber : int, default 16
        K ≥ 1: wavenumbers k = 0, …, K.
    grid_size : int, default 256
        Number N ≥ 4 of nodes x_j = 2πj/N of the reconstructions.
    smoothing : {"fejer", "dirichlet"}
        Weights w_k of the reconstructions: Fejér, w_k = 1 - |k|/(K+1) (a positive kernel: ψ_K ≥ 0 and g_K is
        a local weighted average of g), or the plain truncation w_k = 1.

    Returns
    -------
    xarray.Dataset
        On (time, wavenumber), each the mean over systems and ``<name>_stderr`` the standard error over systems
        (complex quantities: √(Var Re + Var Im)/√M): ``rho1_hat`` (ρ̂^(1)_k, 0 for k ≠ 0), ``psi_hat``,
        ``hprime_psi_hat``, ``g_psi_hat``, ``dpsi_hat_dt``, ``residual`` r_k (k ≥ 1; r_0 ≡ 0). On (time):
        ``residual_norm`` R(t) = (Σ_{k=1}^K |r_k|²)^{1/2} and ``residual_norm_stderr`` (Σ_k stderr(r_k)²)^{1/2},
        the expected size of R when the mean residual is 0 (E R² = Σ_k Var(r_k)/M). On (time, x):
        ``psi`` = Σ_{|k|≤K} w_k ψ̂_k e^{ikx}, ``g_psi`` = Σ_{|k|≤K} w_k i Im((gψ)^_k) e^{ikx} (the odd part:
        gψ is odd), ``g`` = g_psi/psi, each with ``_stderr`` (g: delta method of the ratio). Bias: the
        truncation and weights, Σ_{|k|≤K} (1 - w_k) f̂_k e^{ikx} + Σ_{|k|>K} f̂_k e^{ikx}; variance ∝ 1/M.

    Raises
    ------
    ValueError
        A shape that is not (systems ≥ 2, len(times), n ≥ 3), β ≤ 0, K < 1, N < 4, an unknown smoothing.

    Notes
    -----
    ψ(t, ·) is the law of θ_2 − θ_1 and solves (8.1) of paper 2, §8:

    .. math::

        \partial_t \psi + \partial_x(v\psi) = 0, \qquad
        v(t, x) = \frac{2}{\beta n} h_\beta'(x) - \frac{2(n-2)}{\beta n} g(t, x), \qquad
        g(t, x) = \mathbb{E}\big[-h_\beta'(\theta_3) \,\big|\, \theta_1 = 0, \theta_2 = x\big],

    with f̂_k = (1/2π) ∫ f(x) e^{-ikx} dx. The residual in Fourier,

    .. math::

        r_k = \partial_t \hat\psi_k + ik\,\widehat{(v\psi)}_k, \qquad
        \widehat{(v\psi)}_k = \frac{2}{\beta n} \widehat{(h'\psi)}_k
        - \frac{2(n-2)}{\beta n} \widehat{(g\psi)}_k,

    has mean exactly zero for every finite n (module docstring), so R(t) falls like M^{-1/2}.

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.open_problems import bbgky_ensemble, bbgky_estimates
    >>> times = [0.0, 0.5]
    >>> run = bbgky_ensemble(2.0, 5, 8, times, seed=1)
    >>> est = bbgky_estimates(run["positions"].values, 2.0, times, max_wavenumber=4, grid_size=16)
    >>> est["psi_hat"].dims, est["psi"].dims
    (('time', 'wavenumber'), ('time', 'x'))

    ψ is a probability density: ψ̂_0 = 1/(2π) exactly, as is ρ̂^(1)_0, and r_0 ≡ 0:

    >>> print(est["psi_hat"].values[:, 0] * 2 * np.pi, est["rho1_hat"].values[:, 0].real * 2 * np.pi)
    [1. 1.] [1. 1.]
    >>> print(np.abs(est["residual"].values[:, 0]).max())
    0.0
    """
    theta = np.asarray(theta, dtype=float)
    times = _snapshot_times(times)
    beta = check_positive("beta", beta)
    k_max = check_positive_int("max_wavenumber", max_wavenumber)
    n_grid = check_positive_int("grid_size", grid_size, minimum=4)
    if smoothing not in SMOOTHINGS:
        raise ValueError(f"smoothing must be one of {SMOOTHINGS}, got {smoothing!r}")
    if theta.ndim != 3 or theta.shape[0] < 2 or theta.shape[1] != times.size or theta.shape[2] < 3:
        raise ValueError(f"theta must have shape (systems >= 2, time = {times.size}, n >= 3), got {theta.shape}")
    m, n = theta.shape[0], theta.shape[2]
    avg = bbgky_averages(theta, beta, k_max)                           # fields (M, T, K+1)
    k = np.arange(k_max + 1)
    inv_two_pi = 1 / (2 * np.pi)                                       # a product: exact for complex values too
    per_system = {
        "rho1_hat": avg.rho1 * inv_two_pi,
        "psi_hat": avg.pair * inv_two_pi,
        "hprime_psi_hat": avg.hprime_pair * inv_two_pi,
        "g_psi_hat": avg.triple * inv_two_pi,
        "dpsi_hat_dt": avg.pair_rate * inv_two_pi,
    }
    v_psi = (2 / (beta * n)) * per_system["hprime_psi_hat"] - (2 * (n - 2) / (beta * n)) * per_system["g_psi_hat"]
    per_system["residual"] = per_system["dpsi_hat_dt"] + 1j * k * v_psi
    data: dict[str, Any] = {}
    for name, values in per_system.items():
        mean, stderr = _mean_stderr(values)
        if not np.iscomplexobj(values):
            mean = mean.real
        data[name] = (("time", "wavenumber"), mean, {"long_name": LONG_NAMES[name]})
        data[f"{name}_stderr"] = (("time", "wavenumber"), stderr,
                                  {"long_name": f"standard error over systems of {name}"})
    residual_mean = data["residual"][1]
    data["residual_norm"] = ("time", np.sqrt(np.sum(np.abs(residual_mean[:, 1:]) ** 2, axis=-1)),
                             {"long_name": "R(t) = (sum_{k=1}^K |r_k|^2)^(1/2)"})
    data["residual_norm_stderr"] = ("time", np.sqrt(np.sum(data["residual_stderr"][1][:, 1:] ** 2, axis=-1)),
                                    {"long_name": "(sum_{k=1}^K stderr(r_k)^2)^(1/2): size of R at zero mean"})
    data.update(_reconstructions(per_system["psi_hat"], per_system["g_psi_hat"], k_max, n_grid, smoothing))
    x = 2 * np.pi * np.arange(n_grid) / n_grid
    coords = {
        "time": ("time", times, {"long_name": "time", "units": "1"}),
        "wavenumber": ("wavenumber", k, {"long_name": "Fourier wavenumber k"}),
        "x": ("x", x, {"long_name": "separation x = theta_2 - theta_1", "units": "rad"}),
    }
    attrs = {
        "beta": beta, "n_particles": int(n), "systems": int(m), "max_wavenumber": int(k_max),
        "grid_size": int(n_grid), "smoothing": smoothing,
        "equation": "d_t psi + d_x(v psi) = 0, v = (2/(beta n)) h' - (2(n-2)/(beta n)) g (paper 2, eq. (8.1))",
        "fourier_convention": "f_hat_k = (1/2pi) int f(x) exp(-ikx) dx",
        "estimator": ("per system: average over all ordered pairs (psi_hat, hprime_psi_hat, dpsi_hat_dt) or "
                      "distinct ordered triples (g_psi_hat) via power sums; mean over systems, standard error "
                      "= std over systems / sqrt(systems)"),
        "time_derivative": "exact: pair average of -ik(dtheta_j/dt - dtheta_i/dt) exp(-ik(theta_j - theta_i))",
        "reconstruction": f"sum_(|k|<=K) w_k f_hat_k exp(ikx), {smoothing} weights; g_psi from its odd part",
        "meanfield_version": __version__,
    }
    return xr.Dataset(data, coords=coords, attrs=attrs)


LONG_NAMES = {
    "rho1_hat": "Fourier coefficients of the one-particle law rho^(1)",
    "psi_hat": "Fourier coefficients of psi (law of theta_2 - theta_1)",
    "hprime_psi_hat": "Fourier coefficients of h_beta' psi",
    "g_psi_hat": "Fourier coefficients of g psi (triple average)",
    "dpsi_hat_dt": "d/dt of the Fourier coefficients of psi (exact velocities)",
    "residual": "r_k = d_t psi_hat_k + ik (v psi)_hat_k, residual of (8.1)",
}


def _mean_stderr(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean over the leading (systems) axis and √(Var Re + Var Im)/√M with the unbiased variances."""
    m = values.shape[0]
    mean = values.mean(axis=0)
    variance = np.var(values.real, axis=0, ddof=1)
    if np.iscomplexobj(values):
        variance = variance + np.var(values.imag, axis=0, ddof=1)
    return mean, np.sqrt(variance / m)


def _reconstructions(psi_hat: np.ndarray, g_psi_hat: np.ndarray, k_max: int, n_grid: int,
                     smoothing: str) -> dict[str, Any]:
    """ψ, gψ and g on x_j = 2πj/N from per-system coefficients (M, T, K+1), with standard errors over systems.

    ψ = Σ_k c_k Re ψ̂_k cos(kx) and gψ = -Σ_k c_k Im (gψ)^_k sin(kx), c_k = w_k (k = 0), 2 w_k (k ≥ 1), are linear
    in the per-system coefficients, so their variances (and that of g_psi - g psi, the delta method of the ratio
    g = gψ/ψ) follow from the covariance over systems of the 2(K+1) coefficients, O(M K²) per time.
    """
    weights = fejer_weights(k_max) if smoothing == "fejer" else np.ones(k_max + 1)
    x = 2 * np.pi * np.arange(n_grid) / n_grid
    k = np.arange(k_max + 1)
    doubled = np.where(k == 0, 1.0, 2.0) * weights
    zero = np.zeros((k_max + 1, n_grid))
    basis_psi = np.concatenate([doubled[:, None] * np.cos(k[:, None] * x), zero])      # (2K+2, N)
    basis_g_psi = np.concatenate([zero, -doubled[:, None] * np.sin(k[:, None] * x)])
    features = np.concatenate([psi_hat.real, g_psi_hat.imag], axis=-1)                 # (M, T, 2K+2)
    m = features.shape[0]
    mean = features.mean(axis=0)
    centred = features - mean
    covariance = np.einsum("sta,stb->tab", centred, centred) / ((m - 1) * m)           # of the mean
    psi, g_psi = mean @ basis_psi, mean @ basis_g_psi
    with np.errstate(divide="ignore", invalid="ignore"):
        g = g_psi / psi
    contrast = basis_g_psi[None] - g[:, None, :] * basis_psi[None]                     # (T, 2K+2, N)

    def stderr(basis: np.ndarray) -> np.ndarray:
        basis = np.broadcast_to(basis, contrast.shape)
        return np.sqrt(np.maximum(np.einsum("tan,tab,tbn->tn", basis, covariance, basis), 0.0))

    with np.errstate(divide="ignore", invalid="ignore"):
        g_err = stderr(contrast) / np.abs(psi)
    return {
        "psi": (("time", "x"), psi, {"long_name": "psi(t, x), Fourier reconstruction", "units": "1/rad"}),
        "psi_stderr": (("time", "x"), stderr(basis_psi), {"long_name": "standard error of psi"}),
        "g_psi": (("time", "x"), g_psi, {"long_name": "(g psi)(t, x), odd part, Fourier reconstruction"}),
        "g_psi_stderr": (("time", "x"), stderr(basis_g_psi), {"long_name": "standard error of g_psi"}),
        "g": (("time", "x"), g, {"long_name": "g(t, x) = E[-h'(theta_3) | theta_1 = 0, theta_2 = x]"}),
        "g_stderr": (("time", "x"), g_err, {"long_name": "standard error of g (delta method of the ratio)"}),
    }


def bbgky_study(
    beta: float,
    n_particles: int,
    systems: int,
    times: Sequence[float] | np.ndarray,
    *,
    max_wavenumber: int = 16,
    seed: int | Sequence[int] | None = None,
    grid_size: int = 256,
    smoothing: str = "fejer",
    rtol: float = 1e-8,
    atol: float = 1e-10,
) -> xr.Dataset:
    r"""Run :func:`bbgky_ensemble` and return its :func:`bbgky_estimates` (attrs: the run's seed, rule, tolerances).

    Parameters
    ----------
    beta : float
        β > 0 of the USA dynamics (7.1).
    n_particles : int
        n ≥ 3 particles per system.
    systems : int
        M ≥ 2 independent systems.
    times : array_like
        Output times, increasing; times[0] is the time of the uniform starts.
    max_wavenumber : int, default 16
        K ≥ 1 of the estimates.
    seed : int, sequence of int or None, optional
        Entropy of the ``SeedSequence`` of the starts (see :func:`bbgky_ensemble`).
    grid_size : int, default 256
        Nodes of the reconstructions (see :func:`bbgky_estimates`).
    smoothing : {"fejer", "dirichlet"}
        Weights of the reconstructions (see :func:`bbgky_estimates`).
    rtol, atol : float, default 1e-8, 1e-10
        Tolerances of :func:`meanfield.simulate`.

    Returns
    -------
    xarray.Dataset
        The :func:`bbgky_estimates` Dataset, with attrs ``seed``, ``seed_rule``, ``rtol``, ``atol``,
        ``particle_path`` and ``model`` ("USA").

    Raises
    ------
    ValueError
        As :func:`bbgky_ensemble` and :func:`bbgky_estimates`.
    RuntimeError
        A system did not reach the final time.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield.studies.open_problems._bbgky as bb
    >>> ds = bb.bbgky_study(2.0, 12, 256, [0.0, 1.0], max_wavenumber=8, seed=1)
    >>> ds.psi_hat.dims, ds.psi.dims
    (('time', 'wavenumber'), ('time', 'x'))

    The residual of (8.1) has mean zero: its norm is of the size of its standard error.

    >>> print(ds["residual_norm"].values.round(4), ds["residual_norm_stderr"].values.round(4))
    [0.004  0.0302] [0.008  0.0233]
    >>> print(f"{ds['psi'].values[-1].mean() * 2 * np.pi:.6f}")
    1.000000
    """
    beta, n, m, times = _check_ensemble(beta, n_particles, systems, times)
    run = bbgky_ensemble(beta, n, m, times, seed=seed, rtol=rtol, atol=atol)
    out = bbgky_estimates(run["positions"].values, beta, times, max_wavenumber=max_wavenumber,
                          grid_size=grid_size, smoothing=smoothing)
    out.attrs.update(seed=run.attrs["seed"], seed_rule=SEED_RULE, rtol=float(rtol), atol=float(atol),
                     particle_path=str(run.attrs["path"]), model="USA")
    logger.info("BBGKY ensemble beta=%g n=%d systems=%d: R(t_end) = %.3g", beta, n, m,
                float(out["residual_norm"][-1]))
    return out


def _snapshot_times(times: Sequence[float] | np.ndarray) -> np.ndarray:
    """Times of the snapshots: a 1-D, finite, strictly increasing array of at least one time."""
    out = np.atleast_1d(np.asarray(times, dtype=float))
    if out.ndim != 1 or not np.all(np.isfinite(out)) or not np.all(np.diff(out) > 0):
        raise ValueError(f"times must be a 1-D array of finite, strictly increasing times, got {times!r}")
    return out


def _check_ensemble(beta: float, n_particles: int, systems: int,
                    times: Sequence[float] | np.ndarray) -> tuple[float, int, int, np.ndarray]:
    return (check_positive("beta", beta), check_positive_int("n_particles", n_particles, minimum=3),
            check_positive_int("systems", systems, minimum=2), as_times(times, "times"))

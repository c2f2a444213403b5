r"""The most-unstable mode of the uniform state and the linear phase that selects it.

About the uniform density, a degree-l perturbation grows like e^{λ_l t} with
(:meth:`meanfield.SelfAttention.growth_rate`)

    USA  λ_l = l(l+d-2) (c_l(β)/(β |S^{d-1}|) - σ),   SA  λ_l = l(l+d-2) (c_l(β)/(β c_0(β)) - σ),
    c_l(β) = (2π)^{d/2} β^{1-d/2} I_{l+d/2-1}(β),      on S¹: λ_k = k² I_k(β)/β (USA), k² I_k(β)/(β I_0(β)) (SA),

minus σk² with noise. Bruno, Pasqualotto and Agazzi (arXiv 2410.23228) show
that from the uniform density plus small noise the mode k* = argmax_k λ_k
dominates the linear phase, and the density forms k* clusters on S¹. With
σ = 0 the SA and USA rates differ by the factor I_0(β) (|S^{d-1}|/c_0(β) on
S^{d-1}), so k* is the same for both. For large β, I_k(β) ≈ e^β e^{-k²/2β}/√(2πβ)
gives λ_k ∝ k² e^{-k²/2β}, maximal at k* ≈ √(2β).

:func:`most_unstable_mode` evaluates the rates and their argmax;
:func:`unstable_mode_run` starts :func:`meanfield.solve` from the uniform
density plus equal-amplitude random-phase noise in the degrees 1 … K and stops
at the end of the linear phase, where the largest non-constant degree reaches a
stated fraction of the mean, and reports the dominant degree and (S¹) the
number of density peaks.
"""

from __future__ import annotations

import logging
from typing import Any, NamedTuple

import numpy as np
import xarray as xr

from ...domains._circle import Circle
from ...measures._perturbed_uniform import perturbed_uniform
from ...models._self_attention import SelfAttention
from ...pde import solve
from ..._validate import check_positive, check_positive_int
from ..._version import __version__
from .._checks import require_self_attention

__all__ = ["MostUnstableMode", "degree_amplitudes", "density_peaks", "most_unstable_mode", "unstable_mode_run"]

logger = logging.getLogger(__name__)

#: growth of the dominant amplitude between two outputs of :func:`unstable_mode_run` (10 %)
OUTPUT_GROWTH = np.log(1.1)
#: largest λ_{k*} Δt of a step in the linear phase: the Runge–Kutta amplification error
#: (λΔt)^6/720 ≈ 1e-9 per step keeps the measured rates exact to ≈ 1e-8
LINEAR_STEP = 0.1


class MostUnstableMode(NamedTuple):
    """Result of :func:`most_unstable_mode`.

    A named tuple ``(degree, rate, degrees, rates)``.

    Parameters
    ----------
    degree : int
        k* (S¹) or l* (S^{d-1}): the degree l ≥ 1 of the largest λ_l.
    rate : float
        λ_{k*}.
    degrees : numpy.ndarray
        The degrees 1 … L compared.
    rates : numpy.ndarray
        λ_l at those degrees.

    Examples
    --------
    On S¹ at β = 5 (SA), the rates are λ_k = k² I_k(β)/(β I_0(β)) and k* = 3:

    >>> import numpy as np
    >>> import meanfield as mf
    >>> from scipy.special import iv
    >>> mode = mf.most_unstable_mode(mf.SelfAttention(5.0))
    >>> mode.degree, round(mode.rate, 6)
    (3, 0.682678)
    >>> k = mode.degrees[:5]
    >>> print(np.round(mode.rates[:5], 6))
    [0.178677 0.514117 0.682678 0.600089 0.396106]
    >>> print(np.round(k**2 * iv(k, 5.0) / (5.0 * iv(0, 5.0)), 6))
    [0.178677 0.514117 0.682678 0.600089 0.396106]
    """

    degree: int
    """k* (S¹) or l* (S^{d-1}): the degree l ≥ 1 of the largest λ_l."""
    rate: float
    """λ_{k*}."""
    degrees: np.ndarray
    """The degrees 1 … L compared."""
    rates: np.ndarray
    """λ_l at those degrees."""


def most_unstable_mode(model: SelfAttention, d: int = 2, max_degree: int | None = None) -> MostUnstableMode:
    r"""The most unstable degree of the uniform state, k* = argmax_{l ≥ 1} λ_l(β).

    The rates are :meth:`SelfAttention.growth_rate`:
    λ_l = l(l+d-2) (c_l(β)/(β|S^{d-1}|) - σ) (USA) or l(l+d-2) (c_l(β)/(β c_0(β)) - σ) (SA),
    c_l(β) = (2π)^{d/2} β^{1-d/2} I_{l+d/2-1}(β); on S¹ (d = 2) λ_k = k² I_k(β)/β - σk² (USA).
    For σ = 0 the sequence λ_l is log-concave in l (I_ν(β) is log-concave in ν),
    so it has one maximum, near √(2β) for large β (Bruno–Pasqualotto–Agazzi,
    arXiv 2410.23228). With σ > 0 the uniform state is stable when the
    returned rate is ≤ 0.

    Parameters
    ----------
    model : SelfAttention
        SA or USA, with β and σ.
    d : int
        Ambient dimension (S^{d-1}); 2 for the circle.
    max_degree : int, optional
        Compare degrees 1 … ``max_degree`` only. By default the range starts
        at 2⌈√(2β)⌉ + 8 and doubles until the maximum lies strictly inside.

    Returns
    -------
    MostUnstableMode
        ``degree`` k*, ``rate`` λ_{k*}, and ``degrees``, ``rates`` compared.

    Raises
    ------
    TypeError
        ``model`` is not a SelfAttention.
    ValueError
        ``d`` < 2 or ``max_degree`` < 1.

    Notes
    -----
    The rates compared, about the uniform measure (noise σ):

    .. math::

        \lambda_l^{\text{USA}} = l(l + d - 2)\Bigl(\frac{c_l(\beta)}{\beta\,|S^{d-1}|} - \sigma\Bigr),
        \qquad
        \lambda_l^{\text{SA}} = l(l + d - 2)\Bigl(\frac{c_l(\beta)}{\beta\, c_0(\beta)} - \sigma\Bigr),
        \qquad
        c_l(\beta) = (2\pi)^{d/2} \beta^{1 - d/2} I_{l + d/2 - 1}(\beta),

    on S¹: λ_k = k² I_k(β)/β - σk² (USA) and k² I_k(β)/(β I_0(β)) - σk² (SA).

    Examples
    --------
    At β = 5 the most unstable mode on S¹ is k* = 3 for SA and USA alike; the
    rates differ by the factor I_0(β):

    >>> import meanfield as mf
    >>> from scipy.special import iv
    >>> sa = mf.most_unstable_mode(mf.SelfAttention(5.0))
    >>> usa = mf.most_unstable_mode(mf.SelfAttention(5.0, normalized=False))
    >>> sa.degree, usa.degree
    (3, 3)
    >>> print(f"{usa.rate:.6f} {sa.rate * iv(0, 5.0):.6f} {9 * iv(3, 5.0) / 5.0:.6f}")
    18.596070 18.596070 18.596070

    With noise σ the rates drop by σl(l + d - 2); large noise makes the uniform state stable:

    >>> mf.most_unstable_mode(mf.SelfAttention(5.0, noise=1.0)).rate < 0
    True
    """
    model = require_self_attention(model, "growth rates about the uniform state", rescaled_time=True)
    d = check_positive_int("d", d, 2)
    if max_degree is not None:
        top = check_positive_int("max_degree", max_degree)
        degrees = np.arange(1, top + 1)
        rates = np.asarray(model.growth_rate(degrees, d), dtype=float)
    else:
        top = 2 * int(np.ceil(np.sqrt(2.0 * model.beta))) + 8
        while True:
            degrees = np.arange(1, top + 1)
            rates = np.asarray(model.growth_rate(degrees, d), dtype=float)
            if int(np.argmax(rates)) < top - 1:
                break
            top *= 2
    best = int(np.argmax(rates))
    return MostUnstableMode(int(degrees[best]), float(rates[best]), degrees, rates)


def degree_amplitudes(domain: Any, values: np.ndarray) -> np.ndarray:
    r"""Size of each degree of node values, relative to the mean: a_l = ‖ρ_l‖ / ‖ρ_0‖ (``domain.degree_norms``).

    S¹ (N nodes): a_k = |ρ̂_k| / |ρ̂_0| with ρ̂_k = Σ_j ρ(θ_j) e^{-ikθ_j}, 0 ≤ k ≤ N/2, so
    ρ = ρ̄ (1 + 2 a cos(kθ + φ)) has a_k = a. S² (band limit L): a_l = (Σ_{|m| ≤ l} |ρ_lm|²)^{1/2} / |ρ_00|,
    ρ_lm = ∫ ρ conj(Y_lm) dσ (Gauss–Legendre quadrature), the L² norm of the
    degree-l part over that of the mean (:meth:`solvers.SphereGrid.degree_norms`, the norm of the
    resolution rule too); every degree-l part grows at the
    same rate λ_l in the linear phase, whatever its orders m.

    ``values`` has shape (..., *domain.shape); returns (..., L + 1).
    """
    values = np.asarray(values, dtype=float)
    if values.shape[values.ndim - len(domain.shape):] != tuple(domain.shape):
        raise ValueError(f"values must end with the grid's shape {domain.shape}, got {values.shape}")
    norms = domain.degree_norms(values)
    return norms / norms[..., :1]


def density_peaks(values: np.ndarray) -> np.ndarray:
    """Number of local maxima above the mean of periodic node values on S¹ (last axis).

    A node j is a peak when ρ_j > ρ_{j-1}, ρ_j ≥ ρ_{j+1} (indices mod N) and
    ρ_j > mean(ρ). Returns an int array of the leading shape.
    """
    values = np.asarray(values, dtype=float)
    peaks = ((values > np.roll(values, 1, axis=-1)) & (values >= np.roll(values, -1, axis=-1))
             & (values > values.mean(axis=-1, keepdims=True)))
    return peaks.sum(axis=-1)


def unstable_mode_run(model: SelfAttention, domain: Any, *, amplitude: float = 1e-10, fraction: float = 0.05,
                      modes: int | None = None, seed: int | np.random.Generator | None = 0,
                      method: str = "spectral", **options: Any) -> xr.Dataset:
    r"""Run the linear phase from the uniform density plus equal-amplitude noise; measure its dominant degree.

    The start is ρ_0 = |S^{d-1}|⁻¹ (1 + ε f), f the equal-amplitude random-phase
    sum of the degrees 1 … K (``perturbed_uniform(..., spectrum="flat")``),
    max|f| = 1, so every degree starts at the same relative size a_0 ≈ ε/max|Σ|
    (:func:`degree_amplitudes`). In the linear phase a_l(t) = a_0 e^{λ_l t}, so
    the largest a_l is the most unstable degree k* of :func:`most_unstable_mode`,
    ahead of the runner-up l₂ by the separation factor e^{(λ_{k*} - λ_{l₂}) t}.
    The run goes to the predicted end T = log(``fraction``/a_0)/λ_{k*} plus
    20 % more growth, with outputs 10 % of growth apart; the end of the linear
    phase is the first output at which max_{l ≥ 1} a_l ≥ ``fraction``. There the
    quadratic nonlinearity has changed the rates by O(2 ``fraction``) relative
    (the density varies by ±2 ``fraction`` about its mean).

    Parameters
    ----------
    model : SelfAttention
        SA or USA (β, σ); the most unstable rate must be positive.
    domain : Circle or Sphere
        The grid; it must resolve degree 3K (checked by the solver, which stops
        with an under-resolution error otherwise).
    amplitude : float
        ε of the noise, 0 < ε < 1. The default 1e-10 leaves six orders of
        magnitude above the rounding errors (≈ 1e-16 per step) that seed every
        degree, and makes the linear phase log(fraction/a_0) ≈ 20-25 e-folds long.
    fraction : float
        End of the linear phase: max_{l ≥ 1} a_l reaches this (0 < fraction < 0.5).
    modes : int, optional
        K, the highest noise degree; default 2 k* + 4 (every degree whose rate
        competes with λ_{k*} starts at a_0; higher ones start from rounding errors).
    seed : int, Generator or None
        Phases of the noise.
    method : str
        Scheme of :func:`meanfield.solve`.
    **options
        Passed to :func:`meanfield.solve` (e.g. ``rtol``). Unless given,
        ``max_step`` = 0.1/λ_{k*}: the Runge–Kutta error in the growth of a mode
        is then ≈ (λΔt)^6/720 ≈ 1e-9 per step.

    Returns
    -------
    xarray.Dataset
        ``amplitude`` (time, degree): a_l(t); ``predicted_rate`` (degree): λ_l;
        ``measured_rate`` (degree): log(a_l(T)/a_l(0))/T at the stop time T
        (for the noise degrees 1 … K); ``density``: ρ at T on the grid.
        attrs: ``predicted_degree`` k*, ``runner_up`` l₂, ``measured_degree``
        (argmax_{l ≥ 1} a_l(T)), ``peaks`` (S¹: :func:`density_peaks` of ρ(T);
        -1 on S²), ``stop_time`` T, ``stop_amplitude`` max a_l(T),
        ``predicted_separation`` e^{(λ_{k*} - λ_{l₂}) T}, ``measured_separation``
        a_{k*}(T)/max_{l ≠ k*} a_l(T), ``initial_amplitude`` a_0, and the
        model, grid, noise and solver parameters.

    Raises
    ------
    TypeError
        ``model`` is not a SelfAttention.
    ValueError
        A bad ``amplitude``, ``fraction`` or ``modes``, a domain other than a
        circle or a sphere, or a stable uniform state (λ_{k*} ≤ 0).
    RuntimeError
        The solver stopped (e.g. under-resolved) before the end of the linear phase.

    Notes
    -----
    In the linear phase each degree grows at its rate λ_l of
    :func:`most_unstable_mode`, so that

    .. math::

        a_l(t) = a_0\, e^{\lambda_l t},
        \qquad
        T \approx \frac{\log(\text{fraction}/a_0)}{\lambda_{k^*}},
        \qquad
        \frac{a_{k^*}(T)}{a_{l_2}(T)} \approx e^{(\lambda_{k^*} - \lambda_{l_2}) T}.

    The measured rates of degrees far below λ_{k*} (e.g. l = 1 on S¹) are
    raised by the quadratic coupling of the fastest degrees.

    Examples
    --------
    On S¹ at β = 5 the predicted k* = 3 is the dominant degree at the end of the
    linear phase, the density has three peaks, and the measured rate of degree 3
    is λ_3 = 9 I_3(5)/(5 I_0(5)):

    >>> import numpy as np
    >>> import meanfield as mf
    >>> ds = mf.unstable_mode_run(mf.SelfAttention(5.0), mf.Circle(64), amplitude=1e-6)
    >>> ds.attrs["predicted_degree"], ds.attrs["measured_degree"], ds.attrs["peaks"]
    (3, 3, 3)
    >>> print(f"{float(ds.predicted_rate[3]):.4f} {float(ds.measured_rate[3]):.4f}")
    0.6827 0.6826
    """
    model = require_self_attention(model, "growth rates about the uniform state", rescaled_time=True)
    if getattr(domain, "kind", None) not in ("circle", "sphere"):
        raise ValueError(f"domain must be a Circle or a Sphere, got {domain!r}")
    amplitude = check_positive("amplitude", amplitude)
    if amplitude >= 1:
        raise ValueError(f"amplitude must satisfy 0 < amplitude < 1, got {amplitude!r}")
    fraction = check_positive("fraction", fraction)
    if fraction >= 0.5:
        raise ValueError(f"fraction must satisfy 0 < fraction < 0.5, got {fraction!r}")
    d = domain.dimension
    prediction = most_unstable_mode(model, d)
    if prediction.rate <= 0:
        raise ValueError(f"the uniform state of {model!r} is linearly stable (largest rate "
                         f"{prediction.rate:.3g} at degree {prediction.degree}); there is no unstable mode to select")
    modes = 2 * prediction.degree + 4 if modes is None else check_positive_int("modes", modes)
    if modes < prediction.degree:
        raise ValueError(f"modes must be >= the most unstable degree {prediction.degree}, got {modes}")
    rho0 = perturbed_uniform(domain, amplitude, modes, seed, spectrum="flat")
    a0 = float(np.max(degree_amplitudes(domain, rho0.values)[1:modes + 1]))
    rate = prediction.rate
    growth = np.log(fraction / a0)
    if growth <= 0:
        raise ValueError(f"amplitude {amplitude!r} already starts the degrees at {a0:.3g} >= fraction {fraction!r}")
    n_out = int(np.ceil((growth + np.log(1.2)) / OUTPUT_GROWTH))
    times = np.linspace(0.0, n_out * OUTPUT_GROWTH / rate, n_out + 1)
    options.setdefault("max_step", LINEAR_STEP / rate)
    run = solve(model, rho0, times, method=method, **options)
    amplitudes = degree_amplitudes(domain, run.density.values)
    top = amplitudes[:, 1:].max(axis=1)
    reached = np.flatnonzero(top >= fraction)
    if reached.size == 0:
        raise RuntimeError(f"the run stopped at t = {float(run.time[-1]):.4g} before the linear phase ended "
                           f"(max a_l = {top[-1]:.3g} < {fraction}): {run.attrs.get('message', '')}")
    stop = int(reached[0])
    t_stop = float(run.time[stop])
    final = amplitudes[stop]
    measured = int(np.argmax(final[1:]) + 1)
    order = np.argsort(prediction.rates)[::-1]
    runner_up = int(prediction.degrees[order[1]])
    others = np.delete(final[1:], prediction.degree - 1)
    n_degrees = amplitudes.shape[1]
    predicted_rates = np.asarray(model.growth_rate(np.arange(n_degrees), d), dtype=float)
    measured_rates = np.full(n_degrees, np.nan)
    noise = slice(1, modes + 1)
    measured_rates[noise] = np.log(final[noise] / amplitudes[0, noise]) / t_stop
    final_density = run.density.isel(time=stop, drop=True)
    attrs = {
        **model.attrs,
        "d": d,
        "grid": repr(domain),
        "method": method,
        "noise_amplitude": amplitude,
        "noise_modes": modes,
        "noise_spectrum": "flat (equal amplitude, random phase)",
        "seed": seed if isinstance(seed, int) else -1,
        "fraction": fraction,
        "initial_amplitude": a0,
        "predicted_degree": prediction.degree,
        "predicted_rate": rate,
        "runner_up": runner_up,
        "measured_degree": measured,
        "peaks": int(density_peaks(final_density.values)) if isinstance(domain, Circle) else -1,
        "stop_time": t_stop,
        "stop_amplitude": float(top[stop]),
        "predicted_separation": float(np.exp((rate - prediction.rates[order[1]]) * t_stop)),
        "measured_separation": float(final[prediction.degree] / np.max(others)),
        "solver_success": int(run.attrs.get("success", 1)),
        "meanfield_version": __version__,
        "description": "linear phase from uniform + equal-amplitude noise (arXiv 2410.23228)",
    }
    logger.info("%s beta=%g d=%d: predicted k*=%d, measured %d at t=%.4g", model.name, model.beta, d,
                prediction.degree, measured, t_stop)
    degree = np.arange(n_degrees)
    return xr.Dataset(
        {
            "amplitude": (("time", "degree"), amplitudes[: stop + 1],
                          {"long_name": "‖ρ_l‖/‖ρ_0‖ (relative size of degree l)"}),
            "predicted_rate": ("degree", predicted_rates, {"long_name": "λ_l, linear growth rate about the uniform state"}),
            "measured_rate": ("degree", measured_rates, {"long_name": "log(a_l(T)/a_l(0))/T"}),
            "density": final_density.assign_attrs(long_name="density at the end of the linear phase"),
        },
        coords={"time": run.time.values[: stop + 1], "degree": degree},
        attrs=attrs,
    )

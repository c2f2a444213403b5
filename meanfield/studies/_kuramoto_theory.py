r"""Stationary order parameter of the Kuramoto model in the mean-field limit.

Model (paper 2, arXiv:2312.10794, (7.2), in this package's normalisation): θ̇ = ω + K Σ_j w_j sin(θ_j - θ)
plus, with noise σ, √(2σ) dW (generator σ ∂²_θ, so ∂_t ρ_ω + ∂_θ(ρ_ω X_ω) = σ ∂²_θ ρ_ω),
ω drawn from a law g symmetric about its centre ω_0 (taken as the frame: θ → θ - ω_0 t).
A stationary state with order parameter r = |∫ e^{iθ} dρ| solves r = F(K r) with,
for an oscillator of frequency ω in the field θ̇ = ω - K r sin θ:

* σ = 0 (Kuramoto 1975): locked oscillators (|ω| ≤ K r) sit at sin θ = ω/(K r);
  drifting ones contribute nothing for a symmetric g, so
  r = K r ∫_{-π/2}^{π/2} cos²φ g(K r sin φ) dφ, and r > 0 branches off at
  K_c = 2/(π g(0)). Lorentzian g (half-width γ): r = √(1 - 2γ/K), K_c = 2γ
  (also the Ott–Antonsen reduction).
* σ > 0 (Sakaguchi, Prog. Theor. Phys. 79, 39 (1988)): the stationary density
  ρ_ω = Σ_k c_k e^{ikθ} of σρ'' = ((ω - K r sin θ)ρ)' has, for k ≥ 1,
  (σk + iω) c_k + (K r/2) c_{k+1} = (K r/2) c_{k-1}, so the ratios R_k = c_k/c_{k-1}
  satisfy the continued fraction R_k = (K r/2)/(σk + iω + (K r/2) R_{k+1}), and
  r = ∫ g(ω) Re R_1(ω) dω. Identical oscillators: R_1 = I_1(K r/σ)/I_0(K r/σ).
  Linear stability of the uniform state (Strogatz–Mirollo 1991):
  K_c = 2 / ∫ g(ω) σ/(σ² + ω²) dω; Lorentzian g: K_c = 2(γ + σ).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.integrate import quad
from scipy.optimize import brentq

__all__ = ["kuramoto_theory", "kuramoto_critical_coupling"]

#: fewest Gauss–Legendre nodes in x (ω = ω_0 + w tan x); more when σ is small against the law's width w
FREQUENCY_NODES = 200
#: nodes per (quartile width / σ), so that the kernel σ/(σ² + ω²) is resolved near ω = 0
NODES_PER_WIDTH = 40
#: smallest σ / (quartile width) the σ > 0 quadrature accepts
SMALLEST_RELATIVE_NOISE = 1e-2
#: smallest r resolved by the root search; below it the theory returns 0
R_FLOOR = 1e-10


def _law(frequencies: Any):
    """(kind, centre, frozen law or None) of a frequency law; None/a number: identical oscillators."""
    if frequencies is None:
        return "identical", 0.0, None
    if isinstance(frequencies, (int, float, np.integer, np.floating)) and not isinstance(frequencies, bool):
        return "identical", float(frequencies), None
    dist = getattr(frequencies, "dist", None)
    if dist is None or not hasattr(frequencies, "pdf"):
        raise TypeError(f"frequencies must be None, a number or a scipy.stats frozen law, got "
                        f"{type(frequencies).__name__}")
    centre = float(frequencies.median())
    probe = np.array([0.3, 1.0, 2.7]) * float(frequencies.ppf(0.75) - centre)
    if not np.allclose(frequencies.pdf(centre + probe), frequencies.pdf(centre - probe), rtol=1e-9, atol=0):
        raise ValueError(f"frequencies must be a law symmetric about its median, got {dist.name}{frequencies.args}")
    return "law", centre, frequencies


def _check_noise(noise: float) -> float:
    noise = float(noise)
    if not (np.isfinite(noise) and noise >= 0):
        raise ValueError(f"noise must be finite and >= 0, got {noise!r}")
    return noise


def kuramoto_critical_coupling(frequencies: Any = None, noise: float = 0.0) -> float:
    r"""K_c at which the incoherent state ρ = 1/2π loses stability.

    σ = 0: K_c = 2/(π g(ω_0)) (0 for identical oscillators); σ > 0:
    K_c = 2 / ∫ g(ω) σ/(σ² + (ω - ω_0)²) dω (2σ for identical oscillators,
    2(γ + σ) for a Lorentzian of half-width γ).

    Examples
    --------
    >>>     >>> round(kuramoto_critical_coupling(scipy.stats.cauchy(0, 0.6), noise=0.1), 12)
    1.4
    """
    kind, centre, law = _law(frequencies)
    noise = _check_noise(noise)
    if kind == "identical":
        return 2 * noise
    if noise == 0:
        return float(2 / (np.pi * law.pdf(centre)))
    omega, weights = _nodes(kind, centre, law, noise)
    return float(2 / np.sum(weights * noise / (noise**2 + omega**2)))


def _nodes(kind: str, centre: float, law, noise: float) -> tuple[np.ndarray, np.ndarray]:
    """Nodes ω - ω_0 and weights (sum 1) of ∫ g(ω) f(ω) dω resolving σ/(σ² + ω²).

    ω - ω_0 = w tan x, x ∈ (-π/2, π/2), w the quartile width, Gauss–Legendre in x
    (the tails of g f map onto smooth ends; a Lorentzian of half-width w has a
    constant weight in x).
    """
    if kind == "identical":
        return np.zeros(1), np.ones(1)
    width = float(law.ppf(0.75)) - centre
    if noise < SMALLEST_RELATIVE_NOISE * width:
        raise ValueError(f"noise = {noise:g} is below {SMALLEST_RELATIVE_NOISE:g} times the law's quartile width "
                         f"{width:g}, too small for the noisy self-consistency quadrature; use noise=0")
    x, w = np.polynomial.legendre.leggauss(max(FREQUENCY_NODES, int(np.ceil(NODES_PER_WIDTH * width / noise))))
    x = np.pi / 2 * x
    omega = width * np.tan(x)
    weights = w * (np.pi / 2) * width / np.cos(x) ** 2 * law.pdf(centre + omega)
    return omega, weights / weights.sum()


def _first_ratio(omega: np.ndarray, field: float, noise: float) -> np.ndarray:
    """R_1 = c_1/c_0 of the stationary density for θ̇ = ω - field·sin θ with diffusion σ (continued fraction)."""
    half = field / 2
    k_max = int(40 + 4 * field / noise)
    ratio = np.zeros(omega.shape, dtype=complex)
    for k in range(k_max, 0, -1):
        ratio = half / (noise * k + 1j * omega + half * ratio)
    return ratio


def _self_consistency(kind: str, centre: float, law, noise: float):
    """F(K r)/r - 1 as a function of (coupling, r)."""
    if noise > 0:
        omega, weights = _nodes(kind, centre, law, noise)

        def residual(coupling: float, r: float) -> float:
            return float(np.sum(weights * _first_ratio(omega, coupling * r, noise).real)) / r - 1

        return residual
    if kind == "identical":
        return lambda coupling, r: 0.0 if coupling > 0 else -1.0

    def residual_locked(coupling: float, r: float) -> float:
        integral = quad(lambda p: np.cos(p) ** 2 * law.pdf(centre + coupling * r * np.sin(p)), -np.pi / 2, np.pi / 2,
                        epsabs=1e-14, epsrel=1e-13, limit=200)[0]
        return coupling * integral - 1

    return residual_locked


def kuramoto_theory(coupling: Any, frequencies: Any = None, noise: float = 0.0) -> np.ndarray:
    r"""Stationary order parameter r∞(K) of the (partially) synchronised state; 0 below K_c.

    Parameters
    ----------
    coupling : float or array_like
        K ≥ 0.
    frequencies : None, float or scipy.stats frozen law
        Law g of the natural frequencies, symmetric about its median
        (``scipy.stats.cauchy(0, γ)``: Lorentzian, ``scipy.stats.norm(0, s)``);
        None or a number for identical oscillators.
    noise : float
        σ ≥ 0 in dθ = (…) dt + √(2σ) dW.

    Returns
    -------
    numpy.ndarray
        r∞ of the shape of ``coupling``. Lorentzian with σ = 0: √(1 - 2γ/K) (exact);
        other laws and σ > 0: the root r ∈ (0, 1) of the self-consistency equation
        in the module docstring (``brentq``, |Δr| ≤ 1e-12), for σ > 0 with
        max(200, 40 w/σ) Gauss–Legendre nodes in x, ω = ω_0 + w tan x (w the quartile width);
        identical oscillators with σ = 0: 1 for K > 0.

    Raises
    ------
    ValueError, TypeError
        Negative or non-finite K or σ, a law that is not symmetric, or not a law;
        0 < σ < 1e-2 w.
    """
    kind, centre, law = _law(frequencies)
    noise = _check_noise(noise)
    ks = np.asarray(coupling, dtype=float)
    if not np.all(np.isfinite(ks)) or np.any(ks < 0):
        raise ValueError(f"coupling must be finite and >= 0, got {coupling!r}")
    if noise == 0 and kind == "law" and law.dist.name == "cauchy":
        gamma = float(law.kwds.get("scale", law.args[1] if len(law.args) > 1 else 1.0))
        return np.sqrt(np.clip(1 - 2 * gamma / np.where(ks > 0, ks, 1.0), 0, None)) * (ks > 2 * gamma)
    if noise == 0 and kind == "identical":
        return np.where(ks > 0, 1.0, 0.0)
    critical = kuramoto_critical_coupling(frequencies, noise)
    residual = _self_consistency(kind, centre, law, noise)
    out = np.zeros(ks.shape)
    for index, k in np.ndenumerate(ks):
        if k <= critical or residual(k, R_FLOOR) <= 0:
            continue
        top = 1 - 1e-15
        out[index] = brentq(lambda r: residual(k, r), R_FLOOR, top, xtol=1e-13) if residual(k, top) < 0 else top
    return out

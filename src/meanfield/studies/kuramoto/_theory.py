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
* Phase lag α (Kuramoto–Sakaguchi, coupling sin(θ_j - θ - α)), Lorentzian g = Cauchy(c, γ), σ = 0: on the
  Ott–Antonsen manifold Z = r e^{iΩt} with r² = 1 - 2γ/(K cos α) and the locked frequency
  Ω = c - (K/2) sin α (1 + r²) (:func:`kuramoto_locked_frequency`); K_c = 2(γ + σ)/cos α (with noise too:
  mode 1 of the marginal at the pole is exact). Identical oscillators: r = 1, Ω = ω - K sin α, K_c = 2σ/cos α.

These formulas hold for unimodal symmetric laws (and, with a phase lag, the Lorentzian). A law with a dip at its
centre (the bimodal Lorentzian), a discrete law, or a phase lag with another law is refused: their incoherent
state can lose stability through an oscillatory mode and their branches fold; the linear rates
(:func:`kuramoto_linear_rates`) and the branches of the reduced equations
(:func:`meanfield.kuramoto_branches`, :func:`meanfield.bimodal_boundaries`) cover them.

Linear rates about incoherence (:func:`kuramoto_linear_rates`), for a coupling function h(u - α) with Fourier
coefficients ĥ_k (ĥ_k e^{-ikα} after the lag) and noise σ: the coefficient of e^{ikθ} of a perturbation of
ρ_ω = 1/2π grows at λ with 1 = -ikK conj(ĥ_k e^{-ikα}) ∫ g(ω) dω / (λ + ik(ω + Kĥ_0) + σk²); for a law with poles
ζ_m (Lorentzian: c_m + iγ_m; atoms: γ_m = 0) the integral is Σ_m p_m / (λ + ik(conj ζ_m + Kĥ_0) + σk²), so the λ
are the eigenvalues of diag(-ik(conj ζ_m + Kĥ_0) - σk²) - ikK conj(ĥ_k e^{-ikα}) 1 pᵀ. Identical oscillators:
λ_k = -ik(ω + Kĥ_0) - ikK conj(ĥ_k e^{-ikα}) - σk² (h = sin: λ_1 = K/2 - σ - iω).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.integrate import quad
from scipy.optimize import brentq

from ...models._frequency_laws import DiscreteLaw, describe_law, is_identical, law_poles, read_frequency_law
from ...models._kuramoto import Kuramoto

__all__ = ["kuramoto_critical_coupling", "kuramoto_linear_rates", "kuramoto_locked_frequency", "kuramoto_theory"]

#: fewest Gauss–Legendre nodes in x (ω = ω_0 + w tan x); more when σ is small against the law's width w
FREQUENCY_NODES = 200
#: nodes per (quartile width / σ), so that the kernel σ/(σ² + ω²) is resolved near ω = 0
NODES_PER_WIDTH = 40
#: smallest σ / (quartile width) the σ > 0 quadrature accepts
SMALLEST_RELATIVE_NOISE = 1e-2
#: smallest r resolved by the root search; below it the theory returns 0
R_FLOOR = 1e-10


#: multiples of the quartile width at which a law is probed for symmetry and for a dip at its centre
PROBES = np.array([0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 2.7, 4.0])
#: beyond this |α| the phase lag makes the locked state of a Lorentzian law impossible (cos α ≤ 0)
ANTI_PHASE = np.pi / 2


def _law(frequencies: Any):
    """(kind, centre, law or None) of a frequency law; None/a number: identical oscillators.

    Raises
    ------
    ValueError
        A discrete law, a law not symmetric about its median, or one with a dip at its centre (bimodal).
    """
    frequencies = read_frequency_law(frequencies)
    if is_identical(frequencies):
        return "identical", 0.0 if frequencies is None else float(frequencies), None
    name = describe_law(frequencies)
    if isinstance(frequencies, DiscreteLaw):
        raise ValueError(f"the self-consistency theory covers continuous unimodal laws, got {name}; the linear rates "
                         f"of a discrete law are mf.kuramoto_linear_rates, its states mf.kuramoto_branches")
    centre = float(frequencies.median())
    probe = PROBES * float(frequencies.ppf(0.75) - centre)
    right, left = frequencies.pdf(centre + probe), frequencies.pdf(centre - probe)
    if not np.allclose(right, left, rtol=1e-9, atol=0):
        raise ValueError(f"frequencies must be a law symmetric about its median, got {name}")
    density = np.concatenate([[frequencies.pdf(centre)], right])
    if np.any(np.diff(density) > 1e-12 * density[0]):
        raise ValueError(f"the self-consistency theory (K_c = 2/(π g(0)), one branch of partial synchrony) covers "
                         f"unimodal laws, but {name} rises away from its centre (bimodal); its incoherence boundary "
                         f"(pitchfork or Hopf) and branches are mf.kuramoto_linear_rates, mf.bimodal_boundaries and "
                         f"mf.kuramoto_branches")
    return "law", centre, frequencies


def _lorentzian(kind: str, law: Any) -> tuple[float, float] | None:
    """(c, γ) of a single Lorentzian law (scipy.stats.cauchy or a one-component mixture); None otherwise."""
    if kind != "law":
        return None
    poles = law_poles(law)
    if poles is None or poles[0].size != 1 or poles[0][0].imag <= 0:
        return None
    return float(poles[0][0].real), float(poles[0][0].imag)


def _check_phase_lag(phase_lag: float, kind: str, law: Any, noise: float, what: str) -> float:
    """α, checked to be covered by ``what``: a Lorentzian law or identical oscillators, |α| < π/2."""
    alpha = float(phase_lag)
    if not np.isfinite(alpha):
        raise ValueError(f"phase_lag must be finite, got {phase_lag!r}")
    if alpha == 0:
        return alpha
    if abs(alpha) >= ANTI_PHASE:
        raise ValueError(f"{what} with a phase lag covers |α| < π/2 (attractive coupling, cos α > 0), got α = {alpha:g}")
    if kind == "law" and _lorentzian(kind, law) is None:
        raise ValueError(f"{what} with a phase lag covers Lorentzian laws (Sakaguchi–Kuramoto on the Ott–Antonsen "
                         f"manifold) and identical oscillators, got {describe_law(law)}")
    return alpha


def _check_noise(noise: float) -> float:
    noise = float(noise)
    if not (np.isfinite(noise) and noise >= 0):
        raise ValueError(f"noise must be finite and >= 0, got {noise!r}")
    return noise


def kuramoto_critical_coupling(frequencies: Any = None, noise: float = 0.0, phase_lag: float = 0.0) -> float:
    r"""K_c at which the incoherent state ρ = 1/2π loses stability.

    σ = 0: K_c = 2/(π g(ω_0)) (0 for identical oscillators); σ > 0:
    K_c = 2 / ∫ g(ω) σ/(σ² + (ω - ω_0)²) dω (2σ for identical oscillators,
    2(γ + σ) for a Lorentzian of half-width γ). A phase lag α (Lorentzian or identical
    oscillators): K_c = 2(γ + σ)/cos α. A unimodal symmetric law only (module docstring).

    Parameters
    ----------
    frequencies : None, float or scipy.stats frozen law
        Law g of the natural frequencies, symmetric about its median ω_0 and
        unimodal; None or a number for identical oscillators.
    noise : float
        σ ≥ 0 in dθ = (…) dt + √(2σ) dW.
    phase_lag : float
        α of the coupling sin(θ_j - θ - α), |α| < π/2: a Lorentzian law or identical oscillators.

    Returns
    -------
    float
        K_c.

    Raises
    ------
    ValueError, TypeError
        A law that is not symmetric or not unimodal, a discrete law, or not a law; negative or
        non-finite σ; 0 < σ < 1e-2 w (w the quartile width of g); a phase lag outside the cases above.

    Notes
    -----
    Kuramoto (σ = 0) and Strogatz–Mirollo (σ > 0), in the frame of the centre ω_0:

    .. math::

        K_c = \frac{2}{\pi g(\omega_0)} \quad (\sigma = 0),
        \qquad
        K_c = 2 \Big/ \int g(\omega)\, \frac{\sigma}{\sigma^2 + (\omega - \omega_0)^2}\, d\omega \quad (\sigma > 0),
        \qquad
        K_c = \frac{2(\gamma + \sigma)}{\cos\alpha} \quad \text{(Lorentzian, half-width } \gamma).

    Examples
    --------
    A Lorentzian of half-width γ = 0.6 with noise σ = 0.1: K_c = 2(γ + σ).

    >>> import numpy as np
    >>> import scipy.stats
    >>> import meanfield as mf
    >>> round(mf.kuramoto_critical_coupling(scipy.stats.cauchy(0, 0.6), noise=0.1), 12)
    1.4

    A standard normal law: K_c = 2/(π g(0)) = √(8/π); identical oscillators with noise: K_c = 2σ.

    >>> print(f"{mf.kuramoto_critical_coupling(scipy.stats.norm(0, 1)):.10f} {np.sqrt(8 / np.pi):.10f}")
    1.5957691216 1.5957691216
    >>> print(mf.kuramoto_critical_coupling(None, noise=0.5))
    1.0

    A phase lag α = π/3 doubles the K_c = 2γ of a Lorentzian:

    >>> round(mf.kuramoto_critical_coupling(scipy.stats.cauchy(0, 0.5), phase_lag=np.pi / 3), 12)
    2.0
    """
    kind, centre, law = _law(frequencies)
    noise = _check_noise(noise)
    alpha = _check_phase_lag(phase_lag, kind, law, noise, "kuramoto_critical_coupling")
    if kind == "identical":
        return 2 * noise / np.cos(alpha)
    lorentzian = _lorentzian(kind, law)
    if lorentzian is not None:
        return float(2 * (lorentzian[1] + noise) / np.cos(alpha))
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


def kuramoto_theory(coupling: Any, frequencies: Any = None, noise: float = 0.0, phase_lag: float = 0.0
                    ) -> np.ndarray:
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
    phase_lag : float
        α of the coupling sin(θ_j - θ - α): a Lorentzian law or identical oscillators with σ = 0, |α| < π/2.

    Returns
    -------
    numpy.ndarray
        r∞ of the shape of ``coupling``. Lorentzian with σ = 0: √(1 - 2γ/(K cos α)) (exact);
        other laws and σ > 0: the root r ∈ (0, 1) of the self-consistency equation
        in the module docstring (``brentq``, |Δr| ≤ 1e-12), for σ > 0 with
        max(200, 40 w/σ) Gauss–Legendre nodes in x, ω = ω_0 + w tan x (w the quartile width);
        identical oscillators with σ = 0: 1 for K > 0.

    Raises
    ------
    ValueError, TypeError
        Negative or non-finite K or σ, a law that is not symmetric or not unimodal, a discrete law, or not a
        law; 0 < σ < 1e-2 w; a phase lag outside the cases above.

    Notes
    -----
    r solves the self-consistency equation r = F(K r) of the module docstring: for σ = 0
    (Kuramoto 1975, locked oscillators at sin φ = (ω - ω_0)/(K r))

    .. math::

        r = K r \int_{-\pi/2}^{\pi/2} \cos^2\varphi\; g(\omega_0 + K r \sin\varphi)\, d\varphi,
        \qquad
        r = \sqrt{1 - \frac{2\gamma}{K \cos\alpha}} \quad \text{(Lorentzian)},

    and for σ > 0 (Sakaguchi 1988) r = ∫ g(ω) Re R_1(ω) dω with the continued fraction

    .. math::

        R_k = \frac{K r / 2}{\sigma k + i(\omega - \omega_0) + (K r / 2) R_{k+1}},
        \qquad
        R_1 = \frac{I_1(K r/\sigma)}{I_0(K r/\sigma)} \quad \text{(identical oscillators)}.

    Examples
    --------
    A Lorentzian of half-width γ = 0.5 (K_c = 1) against the closed form √(1 - 2γ/K):

    >>> import numpy as np
    >>> import scipy.stats
    >>> import meanfield as mf
    >>> K = np.array([0.5, 1.0, 2.0, 4.0])
    >>> print(np.round(mf.kuramoto_theory(K, scipy.stats.cauchy(0, 0.5)), 8))
    [0.         0.         0.70710678 0.8660254 ]
    >>> print(np.round(np.sqrt(np.clip(1 - 1.0 / K, 0, None)), 8))
    [0.         0.         0.70710678 0.8660254 ]

    Identical noisy oscillators: r = I_1(K r/σ)/I_0(K r/σ):

    >>> from scipy.special import iv
    >>> r = mf.kuramoto_theory([2.0, 4.0], None, noise=0.5)
    >>> x = np.array([2.0, 4.0]) * r / 0.5
    >>> print(np.round(r, 8), np.round(iv(1, x) / iv(0, x), 8))
    [0.83146202 0.9301525 ] [0.83146202 0.9301525 ]
    """
    kind, centre, law = _law(frequencies)
    noise = _check_noise(noise)
    alpha = _check_phase_lag(phase_lag, kind, law, noise, "kuramoto_theory")
    if alpha != 0 and noise > 0:
        raise ValueError("kuramoto_theory with a phase lag covers σ = 0 (with noise the stationary state is not on "
                         "the Ott–Antonsen manifold); mf.solve integrates the Fokker–Planck equation")
    ks = np.asarray(coupling, dtype=float)
    if not np.all(np.isfinite(ks)) or np.any(ks < 0):
        raise ValueError(f"coupling must be finite and >= 0, got {coupling!r}")
    lorentzian = _lorentzian(kind, law)
    if noise == 0 and lorentzian is not None:
        critical = 2 * lorentzian[1] / np.cos(alpha)
        return np.sqrt(np.clip(1 - critical / np.where(ks > 0, ks, 1.0), 0, None)) * (ks > critical)
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


def kuramoto_locked_frequency(coupling: Any, frequencies: Any = None, phase_lag: float = 0.0) -> np.ndarray:
    r"""Frequency Ω of the partially synchronised state, Z(t) = r e^{iΩt}, σ = 0; NaN where it is incoherent.

    Lorentzian Cauchy(c, γ) (Sakaguchi & Kuramoto 1986; Ott–Antonsen): Ω = c - (K/2) sin α (1 + r²) with
    r² = 1 - 2γ/(K cos α), for K > 2γ/cos α; identical oscillators at ω: Ω = ω - K sin α (K > 0). Without lag a
    symmetric unimodal law locks at its centre.

    Parameters
    ----------
    coupling : float or array_like
        K ≥ 0.
    frequencies : None, float or scipy.stats frozen law
        Law g of the natural frequencies (as in :func:`kuramoto_theory`); None or a number for
        identical oscillators.
    phase_lag : float
        α of the coupling sin(θ_j - θ - α), |α| < π/2: a Lorentzian law or identical oscillators.

    Returns
    -------
    numpy.ndarray
        Ω of the shape of ``coupling``; NaN where r∞ = 0 (incoherence).

    Raises
    ------
    ValueError
        A law or phase lag outside these cases (:func:`kuramoto_theory`), or a negative or
        non-finite K.

    Notes
    -----
    On the Ott–Antonsen manifold of a Lorentzian g = Cauchy(c, γ), σ = 0:

    .. math::

        \Omega = c - \frac{K}{2} \sin\alpha\, (1 + r^2),
        \qquad
        r^2 = 1 - \frac{2\gamma}{K \cos\alpha}.

    Examples
    --------
    A Lorentzian Cauchy(1, 0.25) with lag α = 0.3: incoherent at K = 0.5, locked at K = 2:

    >>> import numpy as np
    >>> import scipy.stats
    >>> import meanfield as mf
    >>> print(mf.kuramoto_locked_frequency([0.5, 2.0], scipy.stats.cauchy(1.0, 0.25), phase_lag=0.3))
    [       nan 0.48629365]
    >>> r2 = 1 - 0.5 / (2 * np.cos(0.3))
    >>> print(f"{1 - np.sin(0.3) * (1 + r2):.8f}")
    0.48629365

    Identical oscillators at ω = 0.5: Ω = ω - K sin α.

    >>> print(f"{mf.kuramoto_locked_frequency(1.0, 0.5, phase_lag=0.3):.8f} {0.5 - np.sin(0.3):.8f}")
    0.20447979 0.20447979
    """
    kind, centre, law = _law(frequencies)
    alpha = _check_phase_lag(phase_lag, kind, law, 0.0, "kuramoto_locked_frequency")
    ks = np.asarray(coupling, dtype=float)
    if not np.all(np.isfinite(ks)) or np.any(ks < 0):
        raise ValueError(f"coupling must be finite and >= 0, got {coupling!r}")
    r = kuramoto_theory(ks, frequencies, 0.0, alpha)
    locked = r > 0
    if kind == "identical":
        return np.where(locked, centre - ks * np.sin(alpha), np.nan)
    c = centre if alpha == 0 else _lorentzian(kind, law)[0]
    return np.where(locked, c - 0.5 * ks * np.sin(alpha) * (1 + r * r), np.nan)


def kuramoto_linear_rates(model: Kuramoto, harmonics: int | None = None) -> np.ndarray:
    r"""Growth rates λ of the Fourier modes k = 1, …, ``harmonics`` of perturbations of incoherence ρ = 1/2π.

    The coefficient of e^{ikθ} grows like e^{λt}, λ an eigenvalue of
    diag(-ik(conj ζ_m + Kĥ_0) - σk²) - ikK conj(ĥ_k e^{-ikα}) 1 pᵀ at the law's poles ζ_m with weights p_m
    (module docstring): exact for identical oscillators, Lorentzians and their mixtures and discrete laws, any
    coupling function h, any noise σ. h = sin, Lorentzian (c, γ): λ_1 = -ic - γ - σ + (K/2) e^{iα}.

    Parameters
    ----------
    model : Kuramoto
        Coupling K, function h (its coefficients ĥ_k), phase lag α, noise σ and frequency law.
    harmonics : int, optional
        Largest k (default: the number of harmonics of h; beyond them λ = -ik(conj ζ_m + Kĥ_0) - σk²).

    Returns
    -------
    numpy.ndarray of complex, shape (harmonics, M)
        Row k - 1: the M rates of mode k, by decreasing real part.

    Raises
    ------
    TypeError
        ``model`` is not a Kuramoto model.
    ValueError
        A law without poles (a normal law: its incoherent state has a continuous spectrum), or
        ``harmonics`` < 1.

    Notes
    -----
    The rates λ of mode k solve the dispersion relation (module docstring)

    .. math::

        1 = -i k K\, \overline{\hat h_k e^{-ik\alpha}}
            \sum_m \frac{p_m}{\lambda + i k (\bar\zeta_m + K \hat h_0) + \sigma k^2},

    i.e. they are the eigenvalues of
    diag(-ik(conj ζ_m + Kĥ_0) - σk²) - ikK conj(ĥ_k e^{-ikα}) 1 pᵀ. For identical oscillators
    at ω and h = sin: λ_1 = K/2 - σ - iω.

    Examples
    --------
    Kuramoto–Sakaguchi with a Lorentzian Cauchy(0.5, 0.25), K = 2, σ = 0.1, α = 0.3, against
    λ_1 = -ic - γ - σ + (K/2) e^{iα}:

    >>> import numpy as np
    >>> import scipy.stats
    >>> import meanfield as mf
    >>> model = mf.Kuramoto(2.0, scipy.stats.cauchy(0.5, 0.25), noise=0.1, phase_lag=0.3)
    >>> print(np.round(mf.kuramoto_linear_rates(model), 8))
    [[0.60533649-0.20447979j]]
    >>> print(np.round(-0.5j - 0.25 - 0.1 + np.exp(0.3j), 8))
    (0.60533649-0.20447979j)

    Identical oscillators, K = 3, σ = 0.5: λ_1 = K/2 - σ = 1 and, beyond the harmonics of sin,
    λ_2 = -4σ:

    >>> print(mf.kuramoto_linear_rates(mf.Kuramoto(3.0, noise=0.5), harmonics=2).real.ravel())
    [ 1. -2.]
    """
    if not isinstance(model, Kuramoto):
        raise TypeError(f"kuramoto_linear_rates takes a Kuramoto model, got {type(model).__name__}")
    poles = law_poles(model.frequencies)
    if poles is None:
        raise ValueError(f"kuramoto_linear_rates needs a law with poles (identical oscillators, Lorentzians and their "
                         f"mixtures, discrete laws), got {model.attrs['frequencies']}: a continuous law without "
                         f"poles has a continuous spectrum about incoherence; its K_c is kuramoto_critical_coupling")
    coefficients = model.coefficients
    k_max = coefficients.size - 1 if harmonics is None else int(harmonics)
    if k_max < 1:
        raise ValueError(f"harmonics must be >= 1, got {harmonics!r}")
    zeta, weights = poles
    rates = np.empty((k_max, zeta.size), dtype=complex)
    for k in range(1, k_max + 1):
        h_k = coefficients[k] if k < coefficients.size else 0.0
        diagonal = -1j * k * (np.conj(zeta) + model.coupling * coefficients[0].real) - model.noise * k * k
        matrix = np.diag(diagonal) - 1j * k * model.coupling * np.conj(h_k) * np.outer(np.ones(zeta.size), weights)
        values = np.linalg.eigvals(matrix)
        rates[k - 1] = values[np.argsort(-values.real, kind="stable")]
    return rates

"""The perturbed uniform density: the initial condition of the command line and the validation scripts."""

from __future__ import annotations

import numpy as np

from ._measure import Density, density
from .._validate import as_real, as_rng, check_positive_int

__all__ = ["perturbed_uniform"]


def perturbed_uniform(
    domain, amplitude: float = 0.01, modes: int = 8, seed: int | np.random.Generator | None = 0,
    spectrum: str = "smooth",
) -> Density:
    r"""The uniform density with a small, smooth random perturbation.

    On S¹:  ρ_0(θ) = (1/2π) (1 + ε Σ_{k=1}^{K} (a_k cos kθ + b_k sin kθ) / k)
    with a_k, b_k standard normal (seeded). On S^{d-1}:
    ρ_0(x) = |S^{d-1}|⁻¹ (1 + ε f(x)), f(x) = Σ_{j=1}^{K} a_j e^{2<x, v_j>} with
    v_j uniform unit vectors and a_j standard normal, its mean removed. In both
    cases f is scaled to max |f| = 1, so that ρ_0 ≥ (1 - ε)/|S^{d-1}| > 0 with
    ε = ``amplitude`` and K = ``modes``.

    ``spectrum="flat"`` (S¹ and S² only) gives every mode 1 ≤ k ≤ K the same
    amplitude with random phases: on S¹ f(θ) = Σ_{k=1}^{K} cos(kθ + φ_k), φ_k
    uniform; on S² f = Σ_{l=1}^{K} Σ_m a_lm Y_lm with Gaussian a_lm scaled to
    Σ_{|m| ≤ l} |a_lm|² = 1 for every degree l (then f scaled to max |f| = 1
    as above). Linear growth then starts every mode from the same size, so the
    largest mode at a later time is the fastest-growing one.

    Parameters
    ----------
    domain : Circle, Sphere or ZonalSphere
        The grid.
    amplitude : float
        ε, 0 ≤ ε < 1: the largest relative deviation from uniform.
    modes : int
        K ≥ 1: the number of Fourier modes (S¹), spherical-harmonic degrees
        (S², ``spectrum="flat"``) or exponential waves (S^{d-1}).
    seed : int, Generator or None
        Seed of the random coefficients (default 0: the same perturbation on
        every call; None: fresh entropy).
    spectrum : {"smooth", "flat"}
        "smooth": mode k weighted by 1/k (S¹) or exponential waves (spheres);
        "flat": every mode with the same amplitude (S¹ and S² only).

    Returns
    -------
    Density
        Of mass 1, with law ``{"name": "perturbed_uniform", "amplitude": ε,
        "modes": K, "spectrum": …}``.

    Raises
    ------
    ValueError
        ε outside [0, 1), K < 1, an unknown ``spectrum``, or "flat" on a
        ZonalSphere.

    Notes
    -----
    In both cases

    .. math::

        \rho_0 = \frac{1 + \varepsilon f}{\lvert\mathbb{S}^{d-1}\rvert}, \qquad
        \max_x \lvert f(x)\rvert = 1, \qquad
        \rho_0 \ge \frac{1 - \varepsilon}{\lvert\mathbb{S}^{d-1}\rvert} > 0,

    normalised to mass 1 by the domain's quadrature (the maximum is taken
    over the grid's nodes).

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> rho = mf.perturbed_uniform(mf.Circle(64), amplitude=0.1, modes=4, seed=0)
    >>> print(f"{rho.mass:.6f}")
    1.000000
    >>> # the largest relative deviation from 1/(2π) is ε
    >>> print(f"{np.max(np.abs(2 * np.pi * rho.values - 1)):.6f}")
    0.100000
    """
    amplitude = as_real("amplitude", amplitude)
    if not (0 <= amplitude < 1):
        raise ValueError(f"amplitude must satisfy 0 <= amplitude < 1, got {amplitude!r}")
    check_positive_int("modes", modes)
    if spectrum not in ("smooth", "flat"):
        raise ValueError(f"spectrum must be 'smooth' or 'flat', got {spectrum!r}")
    rng = as_rng(seed)
    wave = domain.perturbation(modes, rng, spectrum)
    wave = wave / np.max(np.abs(wave))
    rho = density(domain, (1 + amplitude * wave) / domain.area)
    return Density(domain, rho.values,
                   {"name": "perturbed_uniform", "amplitude": amplitude, "modes": modes, "spectrum": spectrum})

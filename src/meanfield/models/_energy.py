"""The interaction energy of a density or of particles (paper 2, arXiv:2312.10794, (3.5)): ``energy``.

    E_β[μ] = (1/2β) ∬ e^{β<x,y>} dμ(x) dμ(y) = e^β/(2β) ∬ e^{β(<x,y>-1)} dμ dμ   (β > 0),
    E_0[μ] = |m|²/2,  m = ∫ y dμ(y),

for self-attention; for Kuramoto models with an odd interaction h, E = (1/2) ∬ G(θ - φ) dμ dμ with
G' = h(-·) (K|m|²/2 for h = sin). The model computes it (``density_energy``, ``particle_energy``); for a
density the double integral is a convolution by the domain's transform (:func:`double_integral`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..measures._measure import Density, EmpiricalMeasure
from ..measures._read_particles import SPHERE_TOLERANCE, read_particles
from ._model import check_model

__all__ = ["double_integral", "energy", "entropy", "particle_energy"]


def double_integral(domain: Any, values: np.ndarray, multipliers: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """∫ ρ (K ⋆ ρ) dσ by the domain's quadrature, K given by its Funk–Hecke multipliers; one per leading index
    of ``values`` (..., *domain.shape)."""
    axes = tuple(range(values.ndim - len(domain.shape), values.ndim))
    return np.sum(values * domain.convolve(values, multipliers) * domain.weights, axis=axes)


def entropy(domain: Any, values: np.ndarray) -> np.ndarray:
    """∫ ρ log ρ dσ by the domain's quadrature (ρ log ρ = 0 where ρ = 0; a negative node value, an undershoot of a
    spectral scheme, gives NaN), one per leading index of ``values`` (..., *domain.shape)."""
    axes = tuple(range(values.ndim - len(domain.shape), values.ndim))
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(values == 0, 0.0, values * np.log(values))
    return np.sum(terms * domain.weights, axis=axes)


def particle_energy(model: Any, measure: EmpiricalMeasure | np.ndarray, *, domain: str | None = None,
                    renormalize: bool = False, sphere_tolerance: float = SPHERE_TOLERANCE) -> float | np.ndarray:
    """Interaction energy of particles, E = (1/2β) Σ_ij w_i w_j e^{β<x_i,x_j>} for self-attention.

    Parameters
    ----------
    model : a model with an energy (``model.has_energy``)
    measure : EmpiricalMeasure or ndarray
        Angles (n,) / (systems, n) on S¹, or unit vectors (n, d) / (systems, n, d).
        A plain array is read as every function reads particles
        (:mod:`meanfield.measures._read_particles`): on ``domain`` if given, on the
        model's ``particle_domain`` (the circle for a Kuramoto model), else by its shape
        (1-D angles, 2-D (n, d) points); weights are 1/n.
    domain : {"circle", "sphere", "euclidean"}, optional
        How a plain array is read ("circle" for systems of angles (systems, n); "euclidean" for
        points of R^d, which only a model moving particles there accepts).
    renormalize : bool
        Project points onto the sphere instead of rejecting points off it.
    sphere_tolerance : float
        Allowed | |x_i| - 1 | of points on S^{d-1}.

    Returns
    -------
    float, or ndarray of shape (systems,) for a batch. For β > 709.78 the
    prefactor e^β/(2β) is applied in logarithms; an energy beyond the largest
    double is returned as inf (with a logged warning).

    Raises
    ------
    ValueError
        A model without an energy, points off the unit sphere (beyond ``sphere_tolerance``),
        wrong shapes, non-finite positions, an unknown ``domain``.
    """
    check_model(model)
    read = read_particles(measure, name="measure", domain=domain, fixed=model.particle_domain,
                          renormalize=renormalize, tolerance=sphere_tolerance)
    model.check_particles(read.geometry)
    out = model.particle_energy(read.points, read.weights, read.geometry)
    return out if read.batched else float(out[0])


def energy(model: Any, measure: Density | EmpiricalMeasure | np.ndarray, **particle_options: Any) -> float | np.ndarray:
    r"""Interaction energy E_β of a density or of particles.

    Parameters
    ----------
    model : SelfAttention, RepulsiveSelfAttention, Kuramoto, or Attention with V = c QᵀK symmetric
        (any model with ``has_energy``; :meth:`Attention.particle_energy`)
    measure : Density, EmpiricalMeasure, or array of particle positions
        Densities are integrated by their domain's quadrature (spectrally
        accurate for smooth densities); particles give
        E_β = (1/2β) Σ_ij w_i w_j e^{β<x_i,x_j>} (:func:`particle_energy`).
    **particle_options
        For particles: ``domain``, ``renormalize``, ``sphere_tolerance`` (points off the
        sphere beyond the tolerance are an error unless renormalised).

    Returns
    -------
    float, or ndarray over systems for a batch of particle systems.

    Raises
    ------
    ValueError
        A model without an energy (a Kuramoto interaction that is not odd, attention weights
        without the gradient structure), or a measure the model does not live on.

    Notes
    -----
    For self-attention (paper 2, (3.5)), with m = ∫ y dμ(y),

        E_β[μ] = (1/2β) ∬ e^{β<x,y>} dμ(x) dμ(y)  (β > 0),     E_0[μ] = |m|²/2,

    .. math::

        \mathsf{E}_\beta[\mu] = \frac{1}{2\beta} \iint e^{\beta\langle x, y\rangle}\,\mathrm{d}\mu(x)\,\mathrm{d}\mu(y)
        \quad (\beta > 0), \qquad
        \mathsf{E}_0[\mu] = \tfrac{1}{2} \Big\lVert \int y\,\mathrm{d}\mu(y) \Big\rVert^2;

    for a Kuramoto model with an odd coupling function, E = (1/2) ∬ G(θ - φ) dμ dμ with G' = h(-·)
    (K|m|²/2 for h = sin, paper 2, (7.3)). A density enters as its quadrature measure; particles
    with their weights w_i, E_β = (1/2β) Σ_ij w_i w_j e^{β<x_i,x_j>}.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> from scipy.special import iv
    >>> round(mf.energy(mf.SelfAttention(0.0), mf.uniform(mf.Circle(64))), 12)   # m = 0
    0.0
    >>> # the uniform measure on S¹: E_β = I_0(β)/(2β)
    >>> print(f"{mf.energy(mf.SelfAttention(2.0), mf.uniform(mf.Circle(64))):.6f} {iv(0, 2.0) / 4:.6f}")
    0.569896 0.569896
    >>> # particles: n = 2 orthogonal unit vectors, E_β = (2e^β + 2)/(2β · 4)
    >>> x = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    >>> print(f"{mf.energy(mf.SelfAttention(2.0), x):.6f} {(2 * np.exp(2.0) + 2) / 16:.6f}")
    1.048632 1.048632
    """
    check_model(model)
    if isinstance(measure, Density):
        return float(model.density_energy(measure.domain, measure.values))
    return particle_energy(model, measure, **particle_options)

"""The interaction energy of a density or of particles (paper 2, arXiv:2312.10794, (3.5)): ``energy``.

    E_β[μ] = (1/2β) ∬ e^{β<x,y>} dμ(x) dμ(y) = e^β/(2β) ∬ e^{β(<x,y>-1)} dμ dμ   (β > 0),
    E_0[μ] = |m|²/2,  m = ∫ y dμ(y),

for self-attention; for Kuramoto models with an odd interaction h, E = (1/2) ∬ G(θ - φ) dμ dμ with
G' = h(-·) (K|m|²/2 for h = sin). The model computes it (``density_energy``, ``particle_energy``); for a
density the double integral is a convolution by the domain's transform (:func:`double_integral`).

E_β exceeds the largest double once β - log 2β > 709.78; ``scale="normalized"`` gives e^{-β}E_β and
``scale="log"`` gives log E_β instead, both finite for every β (:data:`ENERGY_SCALES`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..measures._measure import Density, EmpiricalMeasure
from ..measures._read_particles import SPHERE_TOLERANCE, read_particles
from ._model import check_model

__all__ = ["ENERGY_ATTRS", "ENERGY_SCALES", "ENERGY_VARIABLES", "double_integral", "energy", "entropy",
           "particle_energy"]

#: the forms ``energy`` reports: E_β, e^{-β}E_β (the model's ``particle_energy_forms``), log E_β
ENERGY_SCALES = ("energy", "normalized", "log")
#: the result variables of those forms (``normalized_energy`` and ``log_energy`` for self-attention models,
#: whose ``has_energy_forms``), in the order of :data:`ENERGY_SCALES`
ENERGY_VARIABLES = ("energy", "normalized_energy", "log_energy")
#: the attrs of the last two in a result (``energy`` is named by the model's ``energy_description``)
ENERGY_ATTRS = {
    "normalized_energy": {"long_name": "normalised interaction energy e^(-beta) E_beta = (1/2beta) "
                                       "sum_ij w_i w_j e^(beta(<x_i,x_j> - 1)), finite for every beta",
                          "units": "1"},
    "log_energy": {"long_name": "natural logarithm of the interaction energy, log E_beta, computed without "
                                "e^beta (finite where E_beta overflows a double)", "units": "1"},
}


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
                    renormalize: bool = False, sphere_tolerance: float = SPHERE_TOLERANCE,
                    scale: str = "energy") -> float | np.ndarray:
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
    scale : {"energy", "normalized", "log"}
        What is returned (:func:`energy`): E_β, e^{-β}E_β or log E_β.

    Returns
    -------
    float, or ndarray of shape (systems,) for a batch. For β > 709.78 the
    prefactor e^β/(2β) is applied in logarithms; an energy beyond the largest
    double is returned as inf (with a logged warning); the normalised and
    logarithmic forms are finite for every β.

    Raises
    ------
    ValueError
        A model without an energy, points off the unit sphere (beyond ``sphere_tolerance``),
        wrong shapes, non-finite positions, an unknown ``domain`` or ``scale``, a ``scale`` other than
        "energy" for a model without the normalised and logarithmic forms.
    """
    check_model(model)
    form = _check_scale(model, scale)
    read = read_particles(measure, name="measure", domain=domain, fixed=model.particle_domain,
                          renormalize=renormalize, tolerance=sphere_tolerance)
    model.check_particles(read.geometry)
    if form == 0:
        out = model.particle_energy(read.points, read.weights, read.geometry)
    else:
        out = model.particle_energy_forms(read.points, read.weights, read.geometry)[form]
    return out if read.batched else float(out[0])


def _check_scale(model: Any, scale: str) -> int:
    """The index of ``scale`` in :data:`ENERGY_SCALES`, for a model that reports that form."""
    if scale not in ENERGY_SCALES:
        raise ValueError(f"scale must be one of {list(ENERGY_SCALES)} (E, e^(-beta) E, log E), got {scale!r}")
    form = ENERGY_SCALES.index(scale)
    if form and not model.has_energy_forms:
        raise ValueError(f"scale={scale!r}: {model.name} reports its energy as E only; the normalised and "
                         f"logarithmic forms are those of E_beta = e^beta S/(2 beta) (self-attention)")
    return form


def energy(model: Any, measure: Density | EmpiricalMeasure | np.ndarray, *, scale: str = "energy",
           **particle_options: Any) -> float | np.ndarray:
    r"""Interaction energy E_β of a density or of particles.

    Parameters
    ----------
    model : SelfAttention, RepulsiveSelfAttention, Kuramoto, or Attention with V = c QᵀK symmetric
        (any model with ``has_energy``; :meth:`Attention.particle_energy`)
    measure : Density, EmpiricalMeasure, or array of particle positions
        Densities are integrated by their domain's quadrature (spectrally
        accurate for smooth densities); particles give
        E_β = (1/2β) Σ_ij w_i w_j e^{β<x_i,x_j>} (:func:`particle_energy`).
    scale : {"energy", "normalized", "log"}
        "energy": E_β itself (inf where it exceeds the largest double, β - log 2β > 709.78, with a
        logged warning); "normalized": e^{-β}E_β = (1/2β) ∬ e^{β(<x,y>-1)} dμ dμ ∈ (0, 1/(2β)];
        "log": log E_β = β + log ∬ e^{β(<x,y>-1)} dμ dμ - log 2β. The last two are computed
        without e^β (the exponent shifted by its maximum β), finite and accurate to a few ulps
        for any β; self-attention models only (at β = 0: E_0 and log E_0).
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
        without the gradient structure), a measure the model does not live on, an unknown
        ``scale``, or ``scale`` "normalized"/"log" for a model other than self-attention.

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
    >>> # one cluster at β = 4000: E_β = e^β/(2β) overflows; e^{-β}E_β = 1/(2β), log E_β = β - log 2β
    >>> sa = mf.SelfAttention(4000.0)
    >>> print(mf.energy(sa, np.zeros(5), scale="normalized"), mf.energy(sa, np.zeros(5), scale="log"))
    0.000125 3991.012803179338
    """
    check_model(model)
    if isinstance(measure, Density):
        form = _check_scale(model, scale)
        if form == 0:
            return float(model.density_energy(measure.domain, measure.values))
        return float(model.density_energy_forms(measure.domain, measure.values)[form])
    return particle_energy(model, measure, scale=scale, **particle_options)

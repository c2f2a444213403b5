"""Interaction energy of particle systems (paper 2, arXiv:2312.10794, (3.5)).

    E_β = e^β/(2β) Σ_ij w_i w_j e^{β(<x_i,x_j>-1)}  (β > 0),   E_0 = |m|²/2,  m = Σ_i w_i x_i,

the prefactor and its overflow rule those of :func:`meanfield.models._attention_weights.interaction_energy`;
for Kuramoto models with an odd interaction h, E = (1/2) Σ_ij w_i w_j G(θ_i - θ_j)
with G' = h(-·) (K|m|²/2 for h = sin). A batch of systems gives one energy per system.

On S¹ the double sum is O(n²) directly; with ``accuracy`` it is the Fourier sum of the
NUFFT velocity path, O(n + K log K) (:func:`fourier_kernel_sums`).
"""

from __future__ import annotations

from typing import Any

import finufft
import numpy as np
from scipy.special import ive

from ..measures._measure import EmpiricalMeasure
from ..models._attention_weights import interaction_energy
from ..models._dynamics import Kuramoto, SelfAttention
from ..measures._read_particles import SPHERE_TOLERANCE, read_particles
from ._compiled_statistics import kernel_sums
from ._velocity import fourier_moments, fourier_truncation

__all__ = ["particle_energy", "energy_of_states", "fourier_kernel_sums"]


def particle_energy(model: SelfAttention | Kuramoto, measure: EmpiricalMeasure | np.ndarray, *,
                    domain: str | None = None, renormalize: bool = False,
                    sphere_tolerance: float = SPHERE_TOLERANCE) -> float | np.ndarray:
    """Interaction energy of particles.

    Parameters
    ----------
    model : SelfAttention or Kuramoto
    measure : EmpiricalMeasure or ndarray
        Angles (n,) / (systems, n) on S¹, or unit vectors (n, d) / (systems, n, d).
        A plain array is read as every function reads particles
        (:mod:`meanfield.measures._read_particles`): on ``domain`` if given, on the circle for
        a Kuramoto model, else by its shape (1-D angles, 2-D (n, d) points);
        weights are 1/n.
    domain : {"circle", "sphere"}, optional
        How a plain array is read ("circle" for systems of angles (systems, n)).
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
        Points off the unit sphere (beyond ``sphere_tolerance``), wrong shapes,
        non-finite positions, an unknown ``domain``.
    """
    read = read_particles(measure, name="measure", domain=domain, model=model, kinds=("circle", "sphere"),
                          renormalize=renormalize, tolerance=sphere_tolerance)
    out = energy_of_states(model, read.points, read.weights, read.kind)
    return out if read.batched else float(out[0])


def energy_of_states(model: Any, states: np.ndarray, weights: np.ndarray, kind: str,
                     accuracy: float | None = None) -> np.ndarray:
    """Energies of a stack of systems ``states`` (systems, n[, d]); shape (systems,).

    With ``accuracy`` (SelfAttention on S¹ only) the kernel sum is the truncated Fourier
    series of :func:`fourier_kernel_sums`, relative error ≤ ``accuracy``; else exact O(n²).
    """
    if isinstance(model, Kuramoto):
        if not model.is_gradient:
            raise ValueError("the Kuramoto interaction h is not odd, so the dynamics has no interaction energy")
        ks = np.arange(model.interaction.size)
        g_hat = np.real(model.potential_multipliers(ks)) / (2 * np.pi)
        total = np.zeros(states.shape[0])
        for k, _, moment in fourier_moments(states, weights, ks.size - 1):
            total += g_hat[k] * np.abs(moment) ** 2
        return total
    if not isinstance(model, SelfAttention):
        raise TypeError(f"model must be SelfAttention or Kuramoto, got {type(model).__name__}")
    beta = model.beta
    if beta == 0:
        pts = np.stack([np.cos(states), np.sin(states)], axis=-1) if kind == "circle" else states
        m = np.einsum("sn,snd->sd", weights, pts)
        return interaction_energy(beta, np.sum(m * m, axis=-1))
    # Σ_ij w_i w_j e^{β(<x_i,x_j>-1)}, each pair once, in parallel over systems
    if kind == "circle" and accuracy is not None:
        total = fourier_kernel_sums(states, weights, float(beta), accuracy)
    else:
        stack = states[..., None] if kind == "circle" else states
        total = kernel_sums(np.ascontiguousarray(stack, dtype=float), np.ascontiguousarray(weights, dtype=float),
                            kind == "circle", float(beta))
    return interaction_energy(beta, total)


def fourier_kernel_sums(angles: np.ndarray, weights: np.ndarray, beta: float, accuracy: float) -> np.ndarray:
    r"""S_s = Σ_ij w_i w_j e^{β(cos(θ_i - θ_j) - 1)} per system by a type-1 NUFFT.

    With e^{β cos u} = Σ_k I_k(β) e^{iku} and c_k = Σ_j w_j e^{-ikθ_j},

        S = Σ_{|k|≤K} e^{-β} I_k(β) |c_k|²,

    K from :func:`._velocity.fourier_truncation` (the truncation of the NUFFT
    velocity) at ``accuracy``/2. For weights w ≥ 0 every term is ≥ 0 and
    S ≥ e^{-β} I_0(β) (Σ w)², so the dropped tail is ≤ ``accuracy``/2 · S;
    the NUFFT tolerance ε = ``accuracy`` e^{-β} I_0(β) / 4 changes each |c_k|²
    by at most 2ε (Σ w)² and the sum (Σ_k e^{-β} I_k(β) = 1) by ≤ ``accuracy``/2 · S.
    Cost O(n + K log K) per system.

    Parameters
    ----------
    angles, weights : ndarray, shape (systems, n)
    beta : float, > 0
    accuracy : float, relative accuracy of S, in [1e-15, 1)

    Returns
    -------
    ndarray, shape (systems,)
    """
    half = fourier_truncation(beta, accuracy / 2)
    scaled = ive(np.abs(np.arange(-half, half + 1)), beta)
    eps = max(accuracy * scaled[half] / 4, 1e-15)
    angles = np.remainder(np.asarray(angles, dtype=float) + np.pi, 2 * np.pi) - np.pi
    strengths = np.asarray(weights, dtype=complex)
    out = np.empty(angles.shape[0])
    for s in range(angles.shape[0]):
        c = finufft.nufft1d1(np.ascontiguousarray(angles[s]), np.ascontiguousarray(strengths[s]), 2 * half + 1,
                             eps=eps, isign=-1)
        out[s] = float(np.dot(scaled, np.abs(c) ** 2))
    return out

r"""Recurrence of a discrete frequency quadrature in Kuramoto's mean-field PDE.

With the frequencies discretised at nodes ω_m (weights w_m), the linear dynamics of the
first Fourier mode about incoherence is Σ_m w_m e^{-iω_m t}(…): a finite sum of
oscillations that rephases near T_rec = 2π/Δω (Δω the spacing of the central nodes),
although the continuum law's order parameter decays (Landau damping) below K_c. Noise σ
damps the first mode at rate σ, so a revival keeps less than e^{-σ T_rec} of its amplitude.
A run up to t is free of rephasing when T_rec ≥ 2 t or σ T_rec ≥ 5.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable

import numpy as np

logger = logging.getLogger(__name__)

__all__ = ["recurrence_time", "recurrence_free", "check_recurrence", "MAX_SUGGESTED_NODES"]

#: largest number of frequency nodes :func:`check_recurrence` searches for a suggestion
MAX_SUGGESTED_NODES = 4096


def recurrence_time(nodes: np.ndarray) -> float:
    """T_rec = 2π/Δω, Δω the spacing of the two nodes nearest the median node (inf for one node)."""
    nodes = np.sort(np.asarray(nodes, dtype=float))
    if nodes.size < 2:
        return float("inf")
    mid = nodes.size // 2
    spacing = nodes[mid] - nodes[mid - 1]
    return float(2 * np.pi / spacing)


def recurrence_free(t_rec: float, t_span: float, noise: float) -> bool:
    """T_rec ≥ 2 t_span (no rephasing within the run) or σ T_rec ≥ 5 (a revival is damped below e^{-5})."""
    return bool(t_rec >= 2 * t_span or noise * t_rec >= 5)


def check_recurrence(nodes_of: Callable[[int], np.ndarray], frequency_nodes: int, t_span: float,
                     noise: float) -> float:
    """Warn (RuntimeWarning and log) when ``t_span`` reaches the rephasing of the quadrature.

    ``nodes_of(m)`` gives the frequency nodes of a quadrature of m nodes (the drift of the model's
    velocity specification; one node for identical oscillators and for models without frequencies,
    which never rephase). The message names T_rec of ``frequency_nodes`` nodes and the smallest number
    of nodes (doubling, up to :data:`MAX_SUGGESTED_NODES`) whose quadrature is free of rephasing.
    Returns T_rec.
    """
    t_rec = recurrence_time(nodes_of(frequency_nodes))
    if recurrence_free(t_rec, t_span, noise):
        return t_rec
    needed = None
    m = frequency_nodes
    while m < MAX_SUGGESTED_NODES and needed is None:
        m = min(2 * m, MAX_SUGGESTED_NODES)
        try:
            with np.errstate(all="ignore"):  # Gauss–Hermite nodes overflow for m beyond a few hundred
                nodes = nodes_of(m)
        except ValueError:  # a quadrature the model cannot make (its nodes overflow)
            nodes = np.array([np.nan])
        if not np.all(np.isfinite(nodes)):
            m //= 2
            break
        if recurrence_free(recurrence_time(nodes), t_span, noise):
            needed = m
    advice = (f"frequency_nodes={needed} is free of it" if needed is not None else
              f"no quadrature up to {m} nodes is free of it (use particles, or noise)")
    message = (f"the frequency quadrature of {frequency_nodes} nodes rephases at T_rec = 2 pi/d_omega = {t_rec:.4g}; "
               f"a run over {t_span:g} (>= T_rec/2) shows revivals of the order parameter that the continuous "
               f"frequency law does not have; {advice}")
    logger.warning(message)
    warnings.warn(message, RuntimeWarning, stacklevel=5)
    return t_rec

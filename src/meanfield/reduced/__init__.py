"""Reduced engines: exact low-dimensional dynamics of mean-field models on invariant manifolds.

:func:`ott_antonsen` integrates Kuramoto oscillators with one-harmonic coupling and a frequency law with
poles (Lorentzians, their mixtures, atoms) on the Ott–Antonsen manifold (:mod:`._ott_antonsen`).
"""

from __future__ import annotations

from ._ott_antonsen import ENGINE, ManifoldError, evolve_amplitudes, ott_antonsen, reduced_form

__all__ = ["ENGINE", "ManifoldError", "evolve_amplitudes", "ott_antonsen", "reduced_form"]

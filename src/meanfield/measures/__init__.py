"""Probability measures on a domain: densities on its grid, empirical measures (and how a plain array of
particle positions is read as one), initial densities, particles drawn from a density, and the Wasserstein
distances between measures. Each module lists what it offers in its ``__all__``, which this package
re-exports.
"""

from __future__ import annotations

from . import _measure, _perturbed_uniform, _read_particles, _sampling, _wasserstein
from ._measure import *  # noqa: F403 (re-exports _measure.__all__)
from ._perturbed_uniform import *  # noqa: F403 (re-exports _perturbed_uniform.__all__)
from ._read_particles import *  # noqa: F403 (re-exports _read_particles.__all__)
from ._sampling import *  # noqa: F403 (re-exports _sampling.__all__)
from ._wasserstein import *  # noqa: F403 (re-exports _wasserstein.__all__)

__all__ = [*_measure.__all__, *_perturbed_uniform.__all__, *_read_particles.__all__, *_sampling.__all__,
           *_wasserstein.__all__]

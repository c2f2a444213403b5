"""meanfield: mean-field continuity equations of self-attention and Kuramoto
dynamics on the circle and on spheres, a particle engine, energies and
Wasserstein distances.

The public API is re-exported here; implementation lives in private modules.
"""

from __future__ import annotations

from ._domains import Circle, sphere_area
from ._energy import energy
from ._measures import Density, EmpiricalMeasure, density, uniform, von_mises, wrapped_cauchy
from ._models import Kuramoto, SelfAttention
from ._solve import methods, solve
from ._sphere import Sphere
from ._version import __version__

__all__ = [
    "Circle",
    "Density",
    "EmpiricalMeasure",
    "Kuramoto",
    "SelfAttention",
    "Sphere",
    "__version__",
    "density",
    "energy",
    "methods",
    "solve",
    "sphere_area",
    "uniform",
    "von_mises",
    "wrapped_cauchy",
]

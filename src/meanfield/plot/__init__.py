"""Figures and animations of meanfield results: ``import meanfield as mf; mf.plot.density_map(ds)``.

Every function takes the Dataset that :func:`meanfield.solve`, :func:`meanfield.simulate`,
:func:`meanfield.compare` or a study returns (or reads back from its NetCDF file), returns a
:class:`matplotlib.figure.Figure` (animations: a :class:`matplotlib.animation.FuncAnimation`) built without
pyplot's global state, so that it works under any backend; save it with ``fig.savefig(path)`` or
:func:`save_animation`. Functions drawing a single panel accept ``ax=`` to draw into an existing figure.

Densities (:func:`meanfield.solve`)
    :func:`density_map` (t×θ or t×ϑ heat map above E_β(t)), :func:`polar_marginal`, :func:`sphere_map`,
    :func:`sphere_maps`, :func:`orthographic_image`.
Particles (:func:`meanfield.simulate`)
    :func:`particle_snapshots`, :func:`particle_paths`, :func:`inner_products`.
Curves over time
    :func:`energy_curve`, :func:`order_parameter_curve`, :func:`comparison` (of :func:`meanfield.compare`).
Animations
    :func:`animate_density`, :func:`animate_particles`, :func:`save_animation` (GIF, or MP4 with ffmpeg).
Studies
    :func:`phase_diagram`, :func:`phase_diagram_trajectories`, :func:`bifurcation`,
    :func:`bimodal_phase_diagram`, :func:`meanfield_limit`,
    :func:`optimal_configurations`.

This sub-package imports matplotlib; ``import meanfield`` alone does not (``mf.plot`` loads it on first use).
"""

from __future__ import annotations

from ._animation import animate_density, animate_particles, save_animation
from ._bifurcation import bifurcation
from ._bimodal import bimodal_phase_diagram
from ._comparison import comparison
from ._configurations import optimal_configurations
from ._curves import energy_curve, order_parameter_curve
from ._density import density_map
from ._inner_products import inner_products
from ._marginal import polar_marginal
from ._meanfield_limit import meanfield_limit
from ._particles import particle_paths, particle_snapshots
from ._phase_diagram import phase_diagram, phase_diagram_trajectories
from ._sphere import orthographic_image, sphere_map, sphere_maps

__all__ = [
    "animate_density",
    "animate_particles",
    "bifurcation",
    "bimodal_phase_diagram",
    "comparison",
    "density_map",
    "energy_curve",
    "inner_products",
    "meanfield_limit",
    "optimal_configurations",
    "order_parameter_curve",
    "orthographic_image",
    "particle_paths",
    "particle_snapshots",
    "phase_diagram",
    "phase_diagram_trajectories",
    "polar_marginal",
    "save_animation",
    "sphere_map",
    "sphere_maps",
]

"""What a model provides, and the part every model shares: its velocity at a measure.

A model is a frozen set of parameters that answers for its physics; the engines
(:func:`meanfield.simulate`, :func:`meanfield.solve`), :func:`meanfield.energy`,
:func:`meanfield.compare` and the studies ask it, never test its type.

Identity
    ``name``; ``attrs`` (every parameter, for a result's attrs and for telling
    a resumed run from another); ``noise`` σ ≥ 0 (the PDE's σΔρ; particles
    move by dX = X dt + √(2σ) dB); ``time_coordinates(times)``: a result's
    coordinates along ``time`` (the time the model runs in, and any other form of it).
Particles
    ``particle_domain``: the domain a plain array of positions is read on when the
    caller gives none (None: by its shape; "circle"; "euclidean").
    ``check_particles(geometry)``: refuse a space the model does not move particles in.
    ``particle_velocity(geometry, weights, frequencies, *, path, accuracy, block_elements)``:
    the callable X(t, x) on states (systems, n[, d]), with attributes ``path`` (how it
    sums), ``collapse_rate`` (the rate of the velocity's linearisation at a single
    cluster, for the stability bound of fixed steps) and ``fourier_modes``.
    ``particle_velocity_parts(geometry, weights, frequencies, split, ...)``: the parts of that velocity (attention,
    feed-forward) taken one after the other by a split discrete layer, or a ValueError naming ``split``.
    ``time_pieces``, ``switching_times(t0, t1)``, ``piece_of(t)``, ``piece_model(k)``, ``switching_rule``: a velocity
    that switches at times (weights that change with depth): the switching times in (t0, t1), the piece
    containing t (right-continuous), the model of a piece, the rule in words; the integrators end a step at every
    switching time and step each piece with the velocity of its own model (:class:`solvers.PiecewiseStepper`).
    ``natural_frequencies(rule, shape, rng)``: the particles' own frequencies ω_i, or None.
    ``default_particle_method(geometry)``: the integrator a run in ``geometry`` takes when none is named.
    ``riccati_form(frequencies)``: the coefficients of the exact Möbius flow (method "moebius").
    ``local_riccati_form(frequencies, weights)``: the same with a field per particle, Z_i = Σ_j B_ij u_j (a model on
    a graph), or None (the mean field of ``riccati_form``).
    ``ensemble_kernel(geometry)``: the parameters (β, normalized, time) of the compiled per-system kernels
    (path "ensemble"), or None. ``particle_methods`` (name → description) and
    ``particle_stepper(method, geometry, weights, *, rtol, atol)``: integrators of the model's own
    (a :class:`solvers.Stepper`), the only ones a model that has them takes (the hard-max dynamics). ``attention_matrix(points, head, t)``: the softmax weights
    of self-attention models.
Energy
    ``has_energy``; ``particle_energy(states, weights, geometry, accuracy)`` (one per
    system); ``density_energy(domain, values)`` (one per leading index of the node values);
    ``has_energy_forms``, ``particle_energy_forms`` and ``density_energy_forms``: (E, e^{-β}E_β, log E_β) of an
    energy E_β = e^β S/(2β) that overflows a double at large β, the last two finite for every β (self-attention;
    E is the energy a result records, ``energy_description``: E_β, or e^{-β}E_β for a flow in s = e^β t);
    ``has_free_energy`` and ``density_free_energy(domain, values)``: the Lyapunov functional
    (energy and σ ∫ρ log ρ) of a noisy gradient flow, recorded by :func:`meanfield.solve` as ``free_energy``.
The PDE
    ``grid_velocity(domain, frequency_nodes)``: the velocity specification handed to the
    schemes of :mod:`solvers` (:class:`solvers.ConvolutionVelocity`; ``frequency_nodes`` None:
    the model's exact form of its frequency law where it has one, else
    :data:`DEFAULT_FREQUENCY_NODES` quadrature nodes);
    ``pde_attrs(velocity)``: how that specification discretises the model, for a result's attrs;
    ``scheme_arguments(scheme, velocity)``: what a scheme needs beyond the run's options (``n_species`` of a
    callable velocity of several species); ``species_coordinate(velocity)``: what the species of a result are
    (frequency nodes, positions on a graphon);
    ``density_velocity(domain, values, frequencies)``: X at the nodes of a density;
    ``concentrates(velocity)``: whether a solution concentrates into Diracs (σ = 0, unless every
    species averages its drifts over a Cauchy law), which decides ``solve(method="auto")``;
    ``resolution_advice(velocity)``: what a user does about an under-resolved run.

:class:`Model` implements the shared part (:meth:`Model.velocity`) and the defaults (no
frequencies, no exact flow, no compiled kernel, no energy, no PDE); a new model subclasses it
and provides the rest (docs/extending.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from solvers import ConvolutionVelocity, Stepper

from ..io._conventions import COORD_ATTRS
from ..measures._measure import Density
from ..measures._read_particles import SPHERE_TOLERANCE, read_particles

__all__ = ["DEFAULT_FREQUENCY_NODES", "Model", "check_model"]

#: quadrature nodes of a frequency law in ω when the caller names none and the law has no exact form
DEFAULT_FREQUENCY_NODES = 32


def check_model(model: Any, name: str = "model") -> Any:
    """``model`` itself if it is a :class:`Model`, else a TypeError naming the argument and the models."""
    if not isinstance(model, Model):
        raise TypeError(f"{name} must be a meanfield model (SelfAttention, Kuramoto, Attention, or a subclass of "
                        f"meanfield.models.Model), got {type(model).__name__}")
    return model


class Model:
    """Base of the models: the shared velocity at a measure and the defaults of :mod:`._model`."""

    particle_domain: str | None = None
    """The domain plain arrays of positions are read on when the caller gives none (None: by their shape)."""
    noise: float = 0.0

    @property
    def name(self) -> str:
        return type(self).__name__

    @property
    def attrs(self) -> dict[str, Any]:
        """Every parameter, for a result's attrs."""
        return {"model": self.name, "noise": float(self.noise)}

    def time_coordinates(self, times: np.ndarray) -> dict[str, Any]:
        """The coordinates along ``time`` of a result with output times ``times`` (here: ``time`` itself)."""
        return {"time": ("time", times, COORD_ATTRS["time"])}

    # ------------------------------------------------------------------ particles
    def check_particles(self, geometry: Any) -> None:
        """Refuse particles in ``geometry`` when the model does not move particles there (here: accepted)."""

    def particle_velocity(self, geometry: Any, weights: np.ndarray, frequencies: np.ndarray | None, *,
                          path: str = "auto", accuracy: float = 1e-10, block_elements: int = 1 << 16) -> Any:
        """X(t, x) on states (systems, n[, d]) of particles with ``weights`` (systems, n)."""
        raise TypeError(f"{self.name} has no particle velocity")

    def particle_velocity_parts(self, geometry: Any, weights: np.ndarray, frequencies: np.ndarray | None,
                                split: str, *, path: str = "auto", accuracy: float = 1e-10,
                                block_elements: int = 1 << 16) -> tuple[Any, ...]:
        """The parts of X(t, x), in the order of the sub-layers of the split ``split`` of a discrete layer
        (:mod:`meanfield.particles._layers`); here: none (a ValueError naming ``split``)."""
        raise ValueError(f"split={split!r} needs a model whose velocity has parts (attention and feed-forward: "
                         f"an Attention with ffn), got {self.name}")

    @property
    def time_pieces(self) -> bool:
        """Whether the velocity switches at times (:meth:`switching_times`; here: no)."""
        return False

    @property
    def switching_rule(self) -> str:
        """When the velocity switches, in words (here: never)."""
        return "none"

    def switching_times(self, t0: float, t1: float) -> np.ndarray:
        """The times in the open interval (t0, t1), increasing, at which the velocity switches (here: none)."""
        return np.empty(0)

    def piece_of(self, t: float) -> int:
        """The piece k of the switching times with s_k ≤ t < s_{k+1} (here: 0, the only one)."""
        return 0

    def piece_model(self, k: int) -> Model:
        """The model whose velocity holds on piece k (here: the model itself)."""
        return self

    def natural_frequencies(self, rule: Any, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray | None:
        """The particles' own frequencies (None: the model has none)."""
        return None

    def default_particle_method(self, geometry: Any) -> str:
        """The integrator of particles in ``geometry`` when none is named: geodesic Euler–Maruyama with noise,
        else adaptive Dormand–Prince 5(4)."""
        return "euler-maruyama" if self.noise > 0 else "dopri5"

    def riccati_form(self, frequencies: np.ndarray) -> tuple[complex, np.ndarray]:
        """(a, ν) of the Riccati equation u̇_i = i a Z + i ν_i u_i + i conj(a Z) u_i² of u_i = e^{iθ_i}, when the
        velocity has that form (:mod:`meanfield.particles._moebius`)."""
        raise ValueError(f"method='moebius' needs a Kuramoto model whose interaction has one harmonic "
                         f"(ĥ_k = 0 for k >= 2), got {self.name}; use method='dopri5'")

    def local_riccati_form(self, frequencies: np.ndarray, weights: np.ndarray) -> tuple[complex, np.ndarray, Any] | None:
        """(a, ν, B) of u̇_i = i a Z_i + i ν_i u_i + i conj(a Z_i) u_i² with local fields Z_i = Σ_j B_ij u_j (B a
        :class:`meanfield.models._graph_operator.CouplingOperator`), for a model whose particles feel local fields;
        None (here): the one mean field of :meth:`riccati_form`."""
        return None

    @property
    def particle_methods(self) -> dict[str, str]:
        """The model's own integrators, name → description (none: the generic methods of
        :mod:`meanfield.particles._integrators` apply)."""
        return {}

    def particle_stepper(self, method: str, geometry: Any, weights: np.ndarray, *, rtol: float,
                         atol: float) -> Stepper:
        """The :class:`solvers.Stepper` of one of :attr:`particle_methods` for states (systems, n[, d])."""
        raise ValueError(f"{self.name} has no integrator of its own named {method!r}")

    def attention_matrix(self, points: np.ndarray, head: int = 0, t: float = 0.0) -> np.ndarray:
        """The attention matrix P (systems, n, n) of points (systems, n, d), rows summing to 1."""
        raise TypeError(f"{self.name} has no attention matrix")

    def ensemble_kernel(self, geometry: Any) -> tuple[float, bool, str] | None:
        """(β, normalized, time) of the compiled SA/USA kernels for particles in ``geometry`` (None: none apply)."""
        return None

    # ------------------------------------------------------------------ energy
    @property
    def has_energy(self) -> bool:
        """Whether the dynamics has an interaction energy."""
        return False

    def _no_energy(self) -> ValueError:
        return ValueError(f"{self.name} has no interaction energy")

    def particle_energy(self, states: np.ndarray, weights: np.ndarray, geometry: Any,
                        accuracy: float | None = None) -> np.ndarray:
        """The energy of each system of particles, shape (systems,)."""
        raise self._no_energy()

    def density_energy(self, domain: Any, values: np.ndarray) -> np.ndarray:
        """The energy of node values (..., *domain.shape), one per leading index."""
        raise self._no_energy()

    @property
    def has_energy_forms(self) -> bool:
        """Whether the energy is E = e^β S/(2β) with S > 0 and is also reported as the normalised energy e^{-β}E
        and log E, finite for every β (``particle_energy_forms``, ``density_energy_forms``; here: no)."""
        return False

    def particle_energy_forms(self, states: np.ndarray, weights: np.ndarray, geometry: Any,
                              accuracy: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(E, e^{-β}E, log E) of each system of particles, each of shape (systems,)."""
        raise ValueError(f"{self.name} reports its energy as E only (no normalised or logarithmic form)")

    def density_energy_forms(self, domain: Any, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(E, e^{-β}E, log E) of node values (..., *domain.shape), one per leading index."""
        raise ValueError(f"{self.name} reports its energy as E only (no normalised or logarithmic form)")

    @property
    def energy_description(self) -> str:
        """What the ``energy`` of a result is (its ``long_name``)."""
        return "interaction energy E"

    @property
    def has_free_energy(self) -> bool:
        """Whether the noisy dynamics is the gradient flow of a free energy the model computes (here: no)."""
        return False

    def density_free_energy(self, domain: Any, values: np.ndarray) -> np.ndarray:
        """The free energy of node values (..., *domain.shape), one per leading index."""
        raise ValueError(f"{self.name} has no free energy")

    # ------------------------------------------------------------------ the PDE
    def concentrates(self, velocity: ConvolutionVelocity) -> bool:
        """Whether a solution with the specification ``velocity`` may concentrate into Diracs (clusters, locked
        oscillators): without noise, unless every species averages its drifts over a Cauchy law (whose damping
        kγ of mode k keeps the density smooth)."""
        return self.noise == 0 and not velocity.cauchy_drift

    def resolution_advice(self, velocity: ConvolutionVelocity) -> str:
        """What resolves a run that its grid does not (the end of the under-resolution warning)."""
        return "or more noise"

    def concentration_reason(self, velocity: ConvolutionVelocity) -> str:
        """Why "auto" runs finite volume for a density that :meth:`concentrates` (recorded as ``method_reason``)."""
        return ("without noise the density concentrates into Diracs (clusters, locked oscillators), which no "
                "spectral grid resolves; finite volume stays positive and converges in the grid")

    def grid_velocity(self, domain: Any, frequency_nodes: int | None = None) -> ConvolutionVelocity:
        """The velocity specification of the mean-field PDE on ``domain``."""
        raise TypeError(f"{self.name} has no mean-field PDE in meanfield: its particles are simulated by "
                        f"meanfield.simulate")

    def scheme_arguments(self, scheme: Any, velocity: Any) -> dict[str, Any]:
        """Arguments the scheme class ``scheme`` needs for the specification ``velocity`` beyond the run's options
        (here: none; a callable velocity of several species names their number, ``n_species``)."""
        return {}

    def species_coordinate(self, velocity: Any) -> dict[str, Any]:
        """What the species of ``velocity`` are, for a result with more than one: the dimension ``dim`` and its
        ``values`` and ``attrs``, the ``variable`` holding each species' density and its ``long_name``, and the
        species in words (``noun``, plural; here: the frequency nodes of a frequency law, ``density_by_frequency``)."""
        return {"dim": "frequency", "values": velocity.drift, "attrs": COORD_ATTRS["frequency"],
                "variable": "density_by_frequency", "long_name": "density of the oscillators at each frequency node",
                "noun": "frequency nodes"}

    def pde_attrs(self, velocity: ConvolutionVelocity) -> dict[str, Any]:
        """What the specification ``velocity`` of :meth:`grid_velocity` discretises, for a result's attrs
        (here: nothing beyond the model's :attr:`attrs`)."""
        return {}

    def density_velocity(self, domain: Any, values: np.ndarray, frequencies: Any) -> np.ndarray:
        """X[ρ] at the nodes of node values ``values``."""
        raise TypeError(f"{self.name} has no velocity of a density")

    # ------------------------------------------------------------------ shared
    def velocity(self, measure: Density | Any, frequencies: Any = None, *, domain: str | None = None,
                 renormalize: bool = False, sphere_tolerance: float = SPHERE_TOLERANCE) -> np.ndarray:
        """X[μ] at the nodes of a density or at the atoms of an empirical measure.

        For a density ρ on a grid, μ is the quadrature measure Σ_j ρ_j w_j δ_{x_j} of its nodes, so X is
        exact to the quadrature's accuracy (:meth:`density_velocity`); particles are read as every function
        reads them (:mod:`meanfield.measures._read_particles`) and moved by :meth:`particle_velocity`.

        Parameters
        ----------
        measure : Density, EmpiricalMeasure or array
            A density (X at its nodes), or particles: angles (n,) on S¹, unit
            vectors (n, d), or batches with a leading system axis.
        frequencies : array_like, optional
            Natural frequencies ω (default 0): per particle, or for a density the
            frequency (scalar or per node) of the oscillators whose velocity is
            returned; the model's frequency law does not enter.
        domain : {"circle", "sphere", "euclidean"}, optional
            How a plain array is read (default: the model's ``particle_domain``, else by shape;
            "circle" for systems of angles, "euclidean" for points of R^d).
        renormalize : bool
            Project particles onto the sphere instead of rejecting points off it.
        sphere_tolerance : float
            Allowed | |x_i| - 1 | of particles on S^{d-1}.

        Returns
        -------
        ndarray
            On S¹: angular velocities, shaped like the nodes or the angles. On
            S^{d-1}: tangent vectors, shape (*nodes, d) or (…, n, d).

        Raises
        ------
        ValueError
            Particles off the unit sphere (beyond ``sphere_tolerance``) or in a space
            the model does not move particles in; β > 709.78 for USA in t (e^β overflows).
        """
        if isinstance(measure, Density):
            return self.density_velocity(measure.domain, measure.values, frequencies)
        read = read_particles(measure, name="measure", domain=domain, fixed=self.particle_domain,
                              renormalize=renormalize, tolerance=sphere_tolerance)
        self.check_particles(read.geometry)
        omega = None if frequencies is None else np.broadcast_to(np.asarray(frequencies, float), read.points.shape)
        out = self.particle_velocity(read.geometry, read.weights, omega, path="direct")(0.0, read.points)
        return out if read.batched else out[0]

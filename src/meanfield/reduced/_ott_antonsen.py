r"""The Ott–Antonsen engine: the exact low-dimensional dynamics of Kuramoto oscillators on the Poisson manifold.

Model (:class:`meanfield.Kuramoto` with one harmonic, σ = 0): with u = e^{iθ}, every oscillator obeys the Riccati
equation

    u̇ = i a Z + i ν u + i conj(a Z) u²,    a = K ĥ_1 e^{-iα},  ν = ω + K ĥ_0,  Z = ∫ e^{iθ} dμ

(h(u) = sin u: a = -(i/2) K e^{-iα}, so u̇ = iωu + (K/2)(e^{-iα} Z - e^{iα} Z̄ u²)). If at t = 0 the oscillators of
frequency ω have the wrapped Cauchy (Poisson) density with ∫ e^{iθ} ρ_ω = z(ω), they keep one for all t
(Ott & Antonsen, Chaos 18 (2008) 037113), and z(ω, t) obeys the same Riccati equation as u. z is analytic and
|z| ≤ 1 for Im ω ≥ 0 (there iν z damps), so for a law with poles ζ_m in the upper half-plane — Lorentzians
c_m + iγ_m, atoms ω_m (γ_m = 0), their mixtures; :func:`meanfield.models._frequency_laws.law_poles` —
Z = ∫ g(ω) z(ω) dω = Σ_m p_m z_m with z_m = z(ζ_m), and

    ż_m = i a Z + i (ζ_m + K ĥ_0) z_m + i conj(a Z) z_m²,        m = 1, …, M                      (OA)

is closed and exact: M complex amplitudes instead of a density on (θ, ω) (Martens et al., PRE 79, 026204
(2009) for the bimodal Lorentzian: ż_± = (±iω₀ - Δ) z_± + (K/2)(Z - Z̄ z_±²), Z = (z_+ + z_-)/2). A Lorentzian
pole damps at γ_m; the locked oscillators' Diracs in θ, which no grid resolves, never appear.

The densities follow from the amplitudes: the marginal ρ̄(θ) = Σ_m p_m (1/2π) Re[(1 + z_m e^{-iθ})/(1 - z_m
e^{-iθ})] (its Fourier moments ∫ e^{ikθ} dρ̄ = Σ_m p_m z_m^k), and the density of the oscillators of a real
frequency ω is the wrapped Cauchy density of z(ω), integrated alongside (weight 0) when asked for.

The amplitudes of every system are integrated by :func:`solvers.evolve_batch` (Dormand–Prince 5(4), per-system
step control, dense output of order 4), so a bifurcation diagram over couplings is one batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from solvers import evolve_batch
from solvers._batched_dormand_prince import BATCH_STATUS, FINISHED

from ..domains._circle import Circle
from ..io._conventions import COORD_ATTRS
from ..measures._measure import Density
from ..models._kuramoto import Kuramoto
from ..runs._finite import non_finite_outputs
from .._validate import as_times, check_positive, check_rtol
from .._version import __version__

__all__ = ["ENGINE", "ManifoldError", "OttAntonsenEvolution", "evolve_amplitudes", "manifold_point",
           "ott_antonsen", "reduced_form"]

ENGINE = "ott-antonsen"
#: largest relative sup-norm distance of an initial density from the wrapped Cauchy density of its first moment
MANIFOLD_TOLERANCE = 1e-8


class ManifoldError(ValueError):
    """An initial density that is not a wrapped Cauchy density (not on the Ott–Antonsen manifold).

    Raised by :func:`ott_antonsen` when a :class:`~meanfield.Density` start ρ is farther than
    ``MANIFOLD_TOLERANCE`` = 1e-8 (relative, in the sup norm, max|ρ - ρ_z| / max|ρ|) from the wrapped
    Cauchy density ρ_z of its own first moment z = ∫ e^{iθ} ρ dθ: the reduction integrates only the
    dynamics on that manifold. A ``ValueError``, so ``except ValueError`` also catches it. It is
    constructed like any exception, with its message as the only argument; the message gives the sup
    distance and z and names the ways out (a wrapped Cauchy or complex start, :func:`meanfield.solve`
    or :func:`meanfield.simulate`).

    Examples
    --------
    >>> import scipy.stats
    >>> import meanfield as mf
    >>> model = mf.Kuramoto(2.0, frequencies=scipy.stats.cauchy(0, 0.5))
    >>> circle = mf.Circle(64)
    >>> # a von Mises density is not a wrapped Cauchy density: refused
    >>> mf.ott_antonsen(model, [0.0, 1.0], initial=mf.von_mises(circle, kappa=1.0))
    Traceback (most recent call last):
        ...
    meanfield.reduced._ott_antonsen.ManifoldError: the initial density is not a wrapped Cauchy density ...
    >>> issubclass(mf.ManifoldError, ValueError)
    True
    >>> # a wrapped Cauchy density of first moment r = 0.5 is on the manifold
    >>> ds = mf.ott_antonsen(model, [0.0, 1.0], initial=mf.wrapped_cauchy(circle, 0.0, 0.5))
    >>> print(round(float(ds.order_parameter[0]), 12), ds.attrs["success"])
    0.5 1
    """


def reduced_form(model: Kuramoto) -> tuple[complex, np.ndarray, np.ndarray]:
    """(a, ν_m, p_m) of (OA) for ``model``: a = K ĥ_1 e^{-iα}, ν_m = ζ_m + K ĥ_0 at the law's poles ζ_m.

    Raises
    ------
    ValueError
        Noise (the manifold is not invariant under diffusion: use :func:`meanfield.solve`), an interaction with
        more than one harmonic, or a law without poles (a normal law: use particles, :func:`meanfield.simulate`).
    """
    if not isinstance(model, Kuramoto):
        raise TypeError(f"the Ott–Antonsen engine integrates Kuramoto models, got {type(model).__name__}")
    if model.noise > 0:
        raise ValueError(f"the Ott–Antonsen manifold is not invariant under noise (σ = {model.noise:g}); the "
                         f"Fokker–Planck equation is mf.solve's (spectral, exact at a Lorentzian law's poles)")
    poles = model.frequency_poles
    if not model.first_harmonic:
        raise ValueError("the Ott–Antonsen reduction needs an interaction with one harmonic (ĥ_k = 0 for k >= 2), "
                         f"got ĥ = {model.interaction.tolist()}; use mf.simulate (particles)")
    if poles is None:
        raise ValueError(f"the Ott–Antonsen reduction needs a frequency law with poles (Lorentzians, their mixtures, "
                         f"atoms), got {model.attrs['frequencies']}; use mf.simulate (particles)")
    a, nu = model.riccati_form(poles[0])
    return a, np.asarray(nu, dtype=complex), poles[1]


def manifold_point(initial: Any, n_poles: int) -> np.ndarray:
    """The amplitudes z_m(0) of a start: a complex z₀ for every pole (the wrapped Cauchy density of first moment
    z₀ at every frequency), M complex values, or a Density on a Circle that is a wrapped Cauchy density.

    Raises
    ------
    ManifoldError
        A density farther than :data:`MANIFOLD_TOLERANCE` (relative, sup norm) from the wrapped Cauchy density of
        its first moment.
    ValueError
        |z| ≥ 1 or a wrong number of amplitudes.
    """
    if isinstance(initial, Density):
        if not isinstance(initial.domain, Circle):
            raise ValueError(f"the Ott–Antonsen engine lives on the circle, got a density on {initial.domain!r}")
        values = initial.values / initial.mass
        theta = initial.domain.theta
        z0 = complex(np.sum(values * np.exp(1j * theta) * initial.domain.weights))
        distance = float(np.max(np.abs(values - poisson_density(np.array([z0]), np.ones(1), theta))) /
                         np.max(np.abs(values)))
        if abs(z0) >= 1 or distance > MANIFOLD_TOLERANCE:
            raise ManifoldError(
                f"the initial density is not a wrapped Cauchy density (sup distance {distance:.2e} relative from the "
                f"one of its first moment z = {z0:.6g}): it is off the Ott–Antonsen manifold, whose dynamics this "
                f"engine integrates; start from mf.wrapped_cauchy(domain, loc, r) or a complex z, or use mf.solve "
                f"(exact at the law's poles for any start) or mf.simulate")
        return np.full(n_poles, z0)
    z = np.atleast_1d(np.asarray(initial, dtype=complex))
    if z.size == 1:
        z = np.full(n_poles, z[0])
    if z.shape != (n_poles,) or not np.all(np.isfinite(z)) or np.any(np.abs(z) >= 1):
        raise ValueError(f"initial must be a complex z with |z| < 1, {n_poles} such amplitudes (one per pole), or a "
                         f"wrapped Cauchy Density, got {initial!r}")
    return z


def poisson_density(z: np.ndarray, weights: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Σ_m p_m (1/2π) Re[(1 + z_m e^{-iθ})/(1 - z_m e^{-iθ})] at θ (the density with moments Σ p_m z_m^k)."""
    w = z[..., None] * np.exp(-1j * theta)
    return np.sum(weights[:, None] * np.real((1 + w) / (1 - w)), axis=-2) / (2 * np.pi)


@dataclass
class OttAntonsenEvolution:
    """Amplitudes z (systems, time, M) of :func:`evolve_amplitudes` and the integrator's record per system."""

    z: np.ndarray
    status: np.ndarray
    t_stop: np.ndarray
    n_steps: np.ndarray
    nfev: np.ndarray

    def order_parameter(self, weights: np.ndarray) -> np.ndarray:
        """Z = Σ_m p_m z_m, shape (systems, time)."""
        return self.z @ weights.astype(complex)


def evolve_amplitudes(a: np.ndarray, nu: np.ndarray, weights: np.ndarray, z0: np.ndarray, times: np.ndarray, *,
                      rtol: float, atol: float, max_steps: int = 100_000) -> OttAntonsenEvolution:
    """Integrate (OA) for a batch of systems: ``a`` (S,), ``nu`` (S, M), ``weights`` p (M,) of the mean field
    (0 for probes), ``z0`` (S, M); one adaptive Dormand–Prince 5(4) per system (:func:`solvers.evolve_batch`)."""
    a = np.asarray(a, dtype=complex)
    nu = np.asarray(nu, dtype=complex)

    def rhs(y: np.ndarray, systems: np.ndarray, out: np.ndarray) -> None:
        z = y[:, 0] + 1j * y[:, 1]
        az = a[systems] * (z @ weights)
        dz = 1j * (az[:, None] + nu[systems] * z + np.conj(az)[:, None] * z * z)
        out[:, 0], out[:, 1] = dz.real, dz.imag

    y0 = np.stack([z0.real, z0.imag], axis=1)
    run = evolve_batch(rhs, y0, times, rtol=rtol, atol=atol, max_steps=max_steps)
    z = run.y[:, :, 0] + 1j * run.y[:, :, 1]
    return OttAntonsenEvolution(z, run.status, run.t_stop, run.n_steps, run.nfev)


def ott_antonsen(
    model: Kuramoto,
    t: np.ndarray | Sequence[float],
    initial: Any = 0.1,
    *,
    grid: Circle | int | None = None,
    frequencies: Sequence[float] | None = None,
    rtol: float = 1e-10,
    atol: float = 1e-12,
) -> xr.Dataset:
    r"""Kuramoto dynamics on the Ott–Antonsen manifold: the amplitudes z_m at the law's poles (see Notes).

    Parameters
    ----------
    model : Kuramoto
        One harmonic (sin, Sakaguchi's sin(u - α), + ĥ_0), σ = 0, a law with poles: ``scipy.stats.cauchy``,
        :class:`meanfield.LorentzianMixture` (:func:`meanfield.bimodal_lorentzian`), a :class:`meanfield.Mixture`
        of these, :class:`meanfield.DiscreteLaw`, identical oscillators.
    t : array_like
        Output times, strictly increasing; ``t[0]`` is the initial time.
    initial : complex, sequence of complex or Density
        The start on the manifold: z₀ (every frequency's density the wrapped Cauchy density of first moment z₀;
        default 0.1, near incoherence), one amplitude per pole, or a wrapped Cauchy :class:`meanfield.Density`
        (``mf.wrapped_cauchy``; any other density is refused with :class:`ManifoldError`).
    grid : Circle or int, optional
        θ-grid on which to return the marginal density ``density`` (time, theta) (default: the grid of a Density
        start, else none).
    frequencies : sequence of float, optional
        Real frequencies ω whose oscillators' densities ρ_ω are returned as ``density_by_frequency``
        (time, frequency, theta) (needs a grid); their amplitudes z(ω) are integrated alongside.
    rtol, atol : float
        Tolerances of the adaptive Dormand–Prince 5(4) on the amplitudes' real and imaginary parts.

    Returns
    -------
    xarray.Dataset
        ``order_parameter`` r = |Z| and ``order_parameter_phase`` arg Z (unwrapped) (time), ``energy`` (time;
        an odd coupling function: E = Ĝ_1 |Z|², K|Z|²/2 for sin), ``mass`` (1), ``pole_amplitude_real``/
        ``_imag`` (time, pole) with coords ``pole_real``, ``pole_imag``, ``pole_weight``; with a grid
        ``density`` (time, theta), with ``frequencies`` also ``density_by_frequency``. attrs: the model,
        ``engine`` = "ott-antonsen", ``rtol``, ``atol``, ``success``, ``message``, ``n_steps``, ``nfev``.

    Raises
    ------
    ValueError
        A model outside the reduction (:func:`reduced_form`), a start off the manifold (:class:`ManifoldError`),
        bad times or tolerances, ``frequencies`` without a grid.

    Notes
    -----
    If at t = 0 the oscillators of frequency ω have the wrapped Cauchy density of first moment z(ω), they
    keep one (Ott & Antonsen, Chaos 18 (2008) 037113), and for a law g with poles ζ_m (weights p_m) in the
    upper half-plane (Lorentzians c_m + iγ_m, atoms ω_m) the order parameter Z = ∫ g(ω) z(ω) dω =
    Σ_m p_m z_m closes on the amplitudes z_m = z(ζ_m):

    .. math::

        \dot z_m = i a Z + i (\zeta_m + K \hat h_0)\, z_m + i\, \overline{a Z}\, z_m^2, \qquad
        a = K \hat h_1 e^{-i\alpha}, \qquad Z = \sum_{m=1}^{M} p_m z_m,

    (for h = sin: ż_m = iζ_m z_m + (K/2)(e^{-iα} Z - e^{iα} Z̄ z_m²)). The marginal density is
    ρ̄(θ) = Σ_m p_m (1/2π) Re[(1 + z_m e^{-iθ})/(1 - z_m e^{-iθ})], whose Fourier moments are Σ_m p_m z_m^k.

    Examples
    --------
    >>> import numpy as np, scipy.stats, meanfield as mf
    >>> # Kuramoto–Sakaguchi, K = 3, α = 0.5, Lorentzian frequencies of half-width γ = 0.5: one pole
    >>> model = mf.Kuramoto.sakaguchi(3.0, 0.5, scipy.stats.cauchy(0, 0.5))
    >>> ds = mf.ott_antonsen(model, np.linspace(0, 40, 81))
    >>> # partially locked state: r² = 1 - 2γ/(K cos α), and Z rotates at Ω = -(K/2) sin α (1 + r²)
    >>> r = np.sqrt(1 - 2 * 0.5 / (3 * np.cos(0.5)))
    >>> print(round(float(ds.order_parameter[-1]), 8), round(r, 8))
    0.7875079 0.7875079
    >>> phase = ds.order_parameter_phase.values
    >>> print(round((phase[-1] - phase[-2]) / 0.5, 8), round(-1.5 * np.sin(0.5) * (1 + r**2), 8))
    -1.16512537 -1.16512537
    """
    times = as_times(t)
    rtol, atol = check_rtol("rtol", rtol), check_positive("atol", atol)
    a, nu, weights = reduced_form(model)
    z0 = manifold_point(initial, nu.size)
    if grid is None and isinstance(initial, Density):
        grid = initial.domain
    if isinstance(grid, (int, np.integer)) and not isinstance(grid, bool):
        grid = Circle(int(grid))
    if grid is not None and not isinstance(grid, Circle):
        raise ValueError(f"grid must be a Circle or a number of nodes, got {grid!r}")
    probes = np.zeros(0) if frequencies is None else np.atleast_1d(np.asarray(frequencies, dtype=float))
    if probes.ndim != 1 or not np.all(np.isfinite(probes)):
        raise ValueError(f"frequencies must be a 1-D sequence of finite frequencies, got {frequencies!r}")
    if probes.size and grid is None:
        raise ValueError("frequencies asks for densities on a θ-grid: pass grid=")
    probe_nu = model.riccati_form(probes)[1].astype(complex)
    all_nu = np.concatenate([nu, probe_nu])[None, :]
    all_weights = np.concatenate([weights, np.zeros(probes.size)])
    start = np.concatenate([z0, np.full(probes.size, np.mean(z0) if probes.size else 0.0)])[None, :]
    run = evolve_amplitudes(np.array([a]), all_nu, all_weights, start, times, rtol=rtol, atol=atol)
    return _dataset(model, times, run, weights, nu.size, probes, grid, rtol, atol)


def _dataset(model: Kuramoto, times: np.ndarray, run: OttAntonsenEvolution, weights: np.ndarray, n_poles: int,
             probes: np.ndarray, grid: Circle | None, rtol: float, atol: float) -> xr.Dataset:
    ok = run.status[0] == FINISHED
    reached = times <= run.t_stop[0] + 1e-12 * max(1.0, abs(times[-1]))
    z = run.z[0][reached]
    kept = times[reached]
    poles = z[:, :n_poles]
    mean_field = poles @ weights.astype(complex)
    poles_at, _ = model.frequency_poles
    data: dict[str, Any] = {
        "order_parameter": ("time", np.abs(mean_field), {"long_name": "r = |Z|, Z = Σ_m p_m z_m = ∫ e^{iθ} dμ"}),
        "order_parameter_phase": ("time", np.unwrap(np.angle(mean_field)), {"long_name": "arg Z (unwrapped)",
                                                                             "units": "rad"}),
        "mass": ("time", np.ones(kept.size), {"long_name": "mass (exactly 1 on the manifold)"}),
        "pole_amplitude_real": (("time", "pole"), poles.real, {"long_name": "Re z_m at the pole ζ_m"}),
        "pole_amplitude_imag": (("time", "pole"), poles.imag, {"long_name": "Im z_m at the pole ζ_m"}),
    }
    if model.has_energy:
        g1 = float(np.real(model.potential_multipliers(np.array([1]))[0])) / (2 * np.pi)
        data["energy"] = ("time", g1 * np.abs(mean_field) ** 2, {"long_name": "interaction energy E = Ĝ_1 |Z|²"})
    coords: dict[str, Any] = {
        "time": ("time", kept, COORD_ATTRS["time"]),
        "pole_real": ("pole", poles_at.real, {"long_name": "Re ζ_m (Lorentzian centre or atom)"}),
        "pole_imag": ("pole", poles_at.imag, {"long_name": "Im ζ_m (Lorentzian half-width; 0 for an atom)"}),
        "pole_weight": ("pole", weights, {"long_name": "weight p_m of the pole in Z"}),
    }
    if grid is not None:
        coords["theta"] = ("theta", grid.theta, COORD_ATTRS["theta"])
        data["density"] = (("time", "theta"), poisson_density(poles, weights, grid.theta),
                           {"long_name": "marginal density ρ̄(θ) = ∫ ρ_ω g(ω) dω"})
        if probes.size:
            coords["frequency"] = ("frequency", probes, COORD_ATTRS["frequency"])
            by_frequency = np.stack([poisson_density(z[:, n_poles + j:n_poles + j + 1], np.ones(1), grid.theta)
                                     for j in range(probes.size)], axis=1)
            data["density_by_frequency"] = (("time", "frequency", "theta"), by_frequency,
                                            {"long_name": "density ρ_ω(θ) of the oscillators of frequency ω"})
    message = "reached the final time" if ok else f"stopped at t = {run.t_stop[0]:g}: {BATCH_STATUS[run.status[0]]}"
    attrs = {**model.attrs, "engine": ENGINE, "rtol": rtol, "atol": atol, "success": int(ok), "message": message,
             "n_steps": int(run.n_steps[0]), "nfev": int(run.nfev[0]), "meanfield_version": __version__}
    ds = xr.Dataset(data, coords=coords, attrs=attrs)
    invalid = non_finite_outputs(ds) if ok else None
    if invalid is not None:
        ds.attrs.update(success=0, message=f"invalid result: {invalid}")
    return ds

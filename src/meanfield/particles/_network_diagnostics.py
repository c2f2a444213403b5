r"""Diagnostics of oscillators on a graph: local order parameters, effective frequencies, frequency-locked
clusters, the time to phase locking.

* Local order parameter (the coherence a node sees among its neighbours):

      r_i = |Σ_j A_ij e^{iθ_j}| / d_i,    d_i = Σ_j |A_ij|    (NaN at an isolated node),

  one sparse product per configuration, O(entries).
* Effective frequency over a window [t_a, t_b] of outputs: Ω_i = (θ_i(t_b) - θ_i(t_a))/(t_b - t_a) with θ
  unwrapped between consecutive outputs. The stored angles are known mod 2π, so each increment is taken on
  the branch nearest the trapezoidal estimate (θ̇_i(t_k) + θ̇_i(t_{k+1})) Δt/2 of the model's velocity. That
  estimate is off by at most 2KM Δt, M = max|h| · max_i Σ_j |B_ij| bounding the coupling term, so the branch
  is exact whenever 2KM Δt < π; coarser outputs are refused, naming the largest spacing that works.
* Frequency-locked clusters: a link (i, j) of the graph is locked over the window when the phase difference
  of its ends drifts by less than π/2 there, |Ω_i - Ω_j| (t_b - t_a) < π/2 (``tolerance``); the clusters are
  the connected components of the locked links with at least two nodes (all-to-all coupling: every pair is a
  link). Nodes in no cluster drift.
* Time to phase locking (identical oscillators): the first output time from which every later output has
  max_i |θ̇_i - Σ_j w_j θ̇_j| ≤ ``tolerance`` (a state rotating rigidly: synchrony or a twisted state).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse
import scipy.sparse.csgraph
import xarray as xr

from ..measures._measure import EmpiricalMeasure
from ..models._graph import read_graph
from ..models._model import check_model
from .._validate import check_positive

__all__ = ["effective_frequencies", "frequency_clusters", "local_order_parameters", "phase_locking_time"]


def _angles(run: Any) -> tuple[np.ndarray, np.ndarray, xr.Dataset | None]:
    """Angles (systems, time, n), output times and the Dataset of a simulate result on S¹ (or an array of angles
    (…, n), times None)."""
    if isinstance(run, xr.Dataset):
        if "positions" not in run or run.attrs.get("domain", "circle") != "circle" or "component" in run.positions.dims:
            raise ValueError("run must be a simulate result of oscillators on the circle (angles (time, particle))")
        order = ("system", "time", "particle") if "system" in run.positions.dims else ("time", "particle")
        theta = run.positions.transpose(*order).values
        return (theta if theta.ndim == 3 else theta[None]), np.asarray(run.time.values, dtype=float), run
    theta = np.asarray(run, dtype=float)
    if theta.ndim < 1 or not np.all(np.isfinite(theta)):
        raise ValueError(f"angles must be a finite array (…, n), got shape {theta.shape}")
    return theta, None, None


def local_order_parameters(run: Any, graph: Any) -> xr.DataArray | np.ndarray:
    r"""Local order parameters r_i = |Σ_j A_ij e^{iθ_j}| / d_i, d_i = Σ_j |A_ij|: the coherence node i sees.

    .. math::

        r_i = \frac{\big|\sum_{j} A_{ij}\, e^{i\theta_j}\big|}{d_i}, \qquad d_i = \sum_j \lvert A_{ij}\rvert,

    with A the graph's adjacency (weights), so that r_i ∈ [0, 1] for non-negative weights, r_i = 1
    when i's neighbours share one phase. A self-loop counts θ_i itself. The graph's normalisation
    (by n or by the degree) does not enter. One sparse product per configuration, O(entries).

    Parameters
    ----------
    run : Dataset or array_like
        A :func:`meanfield.simulate` result on S¹, or angles of shape (…, n).
    graph : Graph, scipy.sparse matrix, array_like (n, n) or networkx graph
        The graph (its weights; the normalisation does not enter).

    Returns
    -------
    DataArray or ndarray
        For a Dataset, ``local_order_parameter`` with the dims of its positions; for an array, the array of
        r_i, shaped like the angles. NaN at isolated nodes.

    Raises
    ------
    ValueError
        A graph whose size differs from the number of angles, angles not finite.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> ring = mf.Graph.ring(6)                      # node i linked to i ± 1
    >>> # a twisted state θ_j = 2πj/6: each node sees e^{iθ_i}(e^{iπ/3} + e^{-iπ/3})/2, r_i = cos(π/3)
    >>> theta = 2 * np.pi * np.arange(6) / 6
    >>> print(np.round(mf.local_order_parameters(theta, ring), 12))
    [0.5 0.5 0.5 0.5 0.5 0.5]
    >>> # the twisted state is an equilibrium of identical Kuramoto oscillators on the ring: r_i stays 1/2
    >>> model = mf.Kuramoto(1.0, graph=ring)
    >>> r = mf.local_order_parameters(mf.simulate(model, theta, [0.0, 1.0, 2.0]), ring)
    >>> print(r.dims, np.allclose(r, 0.5))
    ('time', 'particle') True
    """
    graph = read_graph(graph)
    theta, _, ds = _angles(run)
    n = theta.shape[-1]
    graph.check_nodes(n, "run")
    degrees = graph.degrees
    with np.errstate(invalid="ignore", divide="ignore"):
        operator = graph.with_normalization("n").operator(np.ones(n))
        fields = operator(np.exp(1j * theta.reshape(-1, n)))
        r = np.abs(fields) / np.where(degrees > 0, degrees, np.nan)
    r = r.reshape(theta.shape)
    if ds is None:
        return r
    dims = ds.positions.dims
    values = r if "system" in dims else r[0]
    order = ("system", "time", "particle") if "system" in dims else ("time", "particle")
    return xr.DataArray(values, dims=order, coords={d: ds[d] for d in order if d in ds.coords},
                        name="local_order_parameter",
                        attrs={"long_name": "|sum_j A_ij exp(i theta_j)| / d_i", "graph": graph.name})


def _velocities(model: Any, run: xr.Dataset, theta: np.ndarray) -> np.ndarray:
    """θ̇ (systems, time, n) of the model at the outputs, with the run's weights and natural frequencies."""
    omega = None
    if "frequency" in run:
        omega = run["frequency"].values
        omega = omega if omega.ndim == 2 else omega[None]
    n_sys, n = theta.shape[0], theta.shape[-1]
    weights = run["weights"].values if "weights" in run else np.full(n, 1.0 / n)
    weights = np.broadcast_to(weights if weights.ndim == 2 else weights[None], (n_sys, n))
    out = np.empty(theta.shape)
    for k in range(theta.shape[1]):
        out[:, k] = model.velocity(EmpiricalMeasure(theta[:, k], weights, domain="circle"), frequencies=omega)
    return out


def _coupling_bound(model: Any, n: int) -> float:
    """K max|h| max_i Σ_j |B_ij|: a bound on the coupling term of θ̇ (all-to-all: Σ_j |B_ij| = 1)."""
    coefficients = np.asarray(model.coefficients)
    largest = abs(coefficients[0].real) + 2 * float(np.sum(np.abs(coefficients[1:])))
    rows = 1.0
    if getattr(model, "graph", None) is not None:
        rows = float(np.max(np.abs(model.graph.operator(np.full(n, 1.0 / n)).matrix).sum(axis=1), initial=0.0))
    return float(model.coupling) * largest * rows


def effective_frequencies(run: xr.Dataset, model: Any, window: float | None = None) -> xr.DataArray:
    r"""Effective frequencies Ω_i = (θ_i(t_b) - θ_i(t_a))/(t_b - t_a) over the last ``window`` of outputs.

    .. math::

        \Omega_i = \frac{\theta_i(t_b) - \theta_i(t_a)}{t_b - t_a},

    with θ_i unwrapped between consecutive outputs. The stored angles are known mod 2π, so each
    increment is taken on the branch nearest the trapezoidal estimate (θ̇_i(t_k) + θ̇_i(t_{k+1})) Δt/2 of
    the model's velocity. That estimate is off by at most 2KM Δt, M = max|h| · max_i Σ_j |B_ij| bounding
    the coupling term (B the coupling operator of the graph; all-to-all: Σ_j |B_ij| = 1), so the branch
    is exact whenever 2KM Δt < π; coarser outputs are refused. Natural frequencies do not limit the
    spacing (they enter the estimate exactly).

    Parameters
    ----------
    run : Dataset
        A :func:`meanfield.simulate` result of a Kuramoto model on S¹ (its ``frequency`` variable is used).
    model : Kuramoto
        The run's model (its velocity unwraps the angles between outputs).
    window : float, optional
        Length > 0 of the window ending at the last output t_b (default: the whole run): t_a is the first
        output at or after t_b - ``window`` (so t_b - t_a ≤ ``window``); the attrs record the t_a and t_b used.

    Returns
    -------
    DataArray
        ``effective_frequency`` (system, particle), or (particle,) for a run of one system, in radians per
        unit time, with attrs ``window_start`` t_a and ``window_end`` t_b.

    Raises
    ------
    ValueError
        Outputs too far apart to unwrap (the largest spacing that works is named), a window shorter than one
        output interval or longer than the run, a model of another run.
    TypeError
        ``run`` not a Dataset (the unwrapping needs its output times).

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> # uncoupled oscillators: Ω_i = ω_i, although one output step turns the first phase by 5 rad
    >>> omega = np.array([-10.0, 0.5, 3.0])
    >>> free = mf.Kuramoto(0.0, frequencies=mf.DiscreteLaw(omega))
    >>> run = mf.simulate(free, np.zeros(3), np.linspace(0.0, 5.0, 11), frequencies=omega)
    >>> np.allclose(mf.effective_frequencies(run, free), omega)
    True
    >>> # K = 1, ω = (-2, -0.1, 0.1, 2): Σ_i θ̇_i = Σ_i ω_i (h = sin is odd), so the Ω_i average to 0;
    >>> # the middle pair locks (equal Ω), the outer pair drifts
    >>> omega = np.array([-2.0, -0.1, 0.1, 2.0])
    >>> model = mf.Kuramoto(1.0, frequencies=mf.DiscreteLaw(omega))
    >>> run = mf.simulate(model, np.zeros(4), np.linspace(0.0, 40.0, 401), frequencies=omega)
    >>> Omega = mf.effective_frequencies(run, model, window=20.0)
    >>> print(abs(float(Omega.mean())) < 1e-6, abs(float(Omega[1] - Omega[2])) < 1e-2, float(Omega[3]) > 1.5)
    True True True
    >>> print(Omega.attrs["window_start"], Omega.attrs["window_end"])
    20.0 40.0
    """
    check_model(model)
    theta, times, ds = _angles(run)
    if ds is None:
        raise TypeError("run must be a simulate result (a Dataset): the unwrapping needs its output times")
    _check_same_model(model, ds)
    start = _window_start(times, window)
    theta, times = theta[:, start:], times[start:]
    spacing = float(np.max(np.diff(times)))
    bound = _coupling_bound(model, theta.shape[-1])
    if 2 * bound * spacing >= np.pi:
        raise ValueError(f"the outputs are up to {spacing:g} apart, too far to unwrap the angles (the coupling term "
                         f"moves a phase by up to {bound:.3g} per unit time); save outputs at most "
                         f"{np.pi / (2 * bound):.3g} apart")
    velocity = _velocities(model, ds, theta)
    estimate = 0.5 * (velocity[:, 1:] + velocity[:, :-1]) * np.diff(times)[None, :, None]
    step = np.diff(theta, axis=1)
    step += 2 * np.pi * np.round((estimate - step) / (2 * np.pi))
    omega = step.sum(axis=1) / (times[-1] - times[0])
    dims = ("system", "particle") if "system" in ds.positions.dims else ("particle",)
    return xr.DataArray(omega if "system" in dims else omega[0], dims=dims, name="effective_frequency",
                        coords={d: ds[d] for d in dims},
                        attrs={"long_name": "(theta(t_b) - theta(t_a)) / (t_b - t_a), unwrapped",
                               "window_start": float(times[0]), "window_end": float(times[-1])})


def _window_start(times: np.ndarray, window: float | None) -> int:
    if window is None:
        return 0
    window = check_positive("window", window)
    if window > times[-1] - times[0] + 1e-12:
        raise ValueError(f"window must be at most the run's length {times[-1] - times[0]:g}, got {window:g}")
    start = int(np.searchsorted(times, times[-1] - window - 1e-12 * max(1.0, abs(times[-1]))))
    if start >= times.size - 1:
        raise ValueError(f"window = {window:g} is shorter than the last output interval {times[-1] - times[-2]:g}")
    return start


def _check_same_model(model: Any, run: xr.Dataset) -> None:
    """Refuse a model whose recorded parameters differ from the run's."""
    differ = [key for key, value in model.attrs.items()
              if key in run.attrs and str(run.attrs[key]) != str(value)]
    if differ:
        raise ValueError(f"model must be the run's model; it differs in {differ}")


def frequency_clusters(run: xr.Dataset, model: Any, window: float | None = None,
                       tolerance: float | None = None) -> xr.Dataset:
    r"""Frequency-locked clusters: components of the graph links whose ends keep their phase difference.

    A link (i, j) of the graph (all-to-all coupling: every pair) is locked over the window [t_a, t_b]
    when the phase difference of its ends drifts by less than π/2 there,

    .. math::

        \lvert \Omega_i - \Omega_j \rvert \le \varepsilon, \qquad
        \varepsilon = \frac{\pi}{2\,(t_b - t_a)} \text{ by default},

    with the effective frequencies Ω_i of :func:`effective_frequencies`. The clusters are the
    connected components of the locked links with at least two nodes; nodes in no cluster drift.

    Parameters
    ----------
    run : Dataset
        A :func:`meanfield.simulate` result of a Kuramoto model on S¹.
    model : Kuramoto
        The run's model (its velocity unwraps the angles; its graph gives the links).
    window : float, optional
        Length of the window ending at the last output t_b (default: the whole run): t_a is the first output
        at or after t_b - ``window``, so t_b - t_a ≤ ``window``.
    tolerance : float, optional
        Largest |Ω_i - Ω_j| of a locked link (default π/(2 T), T the window's length: the phase difference
        drifts by less than π/2 over the window).

    Returns
    -------
    Dataset
        ``effective_frequency`` and ``cluster`` (system?, particle): the cluster's label (0, 1, … by decreasing
        size) or -1 for a drifting node; ``n_clusters`` (system?), clusters of at least two nodes;
        ``largest_cluster`` (nodes in the largest); ``n_drifting``; attrs ``tolerance``, the window.

    Raises
    ------
    ValueError
        As :func:`effective_frequencies`; a ``tolerance`` that is not > 0.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> # K = 1, ω = (-2, -0.1, 0.1, 2): the middle pair locks, the outer oscillators drift
    >>> omega = np.array([-2.0, -0.1, 0.1, 2.0])
    >>> model = mf.Kuramoto(1.0, frequencies=mf.DiscreteLaw(omega))
    >>> run = mf.simulate(model, np.zeros(4), np.linspace(0.0, 40.0, 401), frequencies=omega)
    >>> clusters = mf.frequency_clusters(run, model, window=20.0)
    >>> print(clusters["cluster"].values, int(clusters["n_clusters"]), int(clusters["n_drifting"]))
    [-1  0  0 -1] 1 2
    >>> # the default tolerance is π/(2 T) for the window's length T = 20
    >>> bool(np.isclose(clusters.attrs["tolerance"], np.pi / 40))
    True
    """
    omega = effective_frequencies(run, model, window)
    span = omega.attrs["window_end"] - omega.attrs["window_start"]
    tolerance = np.pi / (2 * span) if tolerance is None else check_positive("tolerance", tolerance)
    values = omega.values if omega.ndim == 2 else omega.values[None]
    n = values.shape[-1]
    graph = getattr(model, "graph", None)
    labels = np.empty(values.shape, dtype=np.int64)
    counts = np.empty(values.shape[0], dtype=np.int64)
    for s, frequency in enumerate(values):
        labels[s], counts[s] = _clusters(frequency, graph, tolerance, n)
    sizes = [np.bincount(row[row >= 0], minlength=max(count, 1)) for row, count in zip(labels, counts)]
    largest = np.array([int(size.max(initial=0)) for size in sizes])
    drifting = np.sum(labels < 0, axis=-1)
    single = omega.ndim == 1
    dims = omega.dims
    data = {
        "effective_frequency": omega,
        "cluster": (dims, labels[0] if single else labels, {"long_name": "frequency-locked cluster (-1: drifting)"}),
        "n_clusters": (dims[:-1], counts[0] if single else counts, {"long_name": "clusters of >= 2 locked nodes"}),
        "largest_cluster": (dims[:-1], largest[0] if single else largest, {"long_name": "nodes in the largest cluster"}),
        "n_drifting": (dims[:-1], drifting[0] if single else drifting, {"long_name": "nodes in no cluster"}),
    }
    attrs = {"tolerance": float(tolerance), "window_start": omega.attrs["window_start"],
             "window_end": omega.attrs["window_end"],
             "links": "graph edges" if graph is not None else "all pairs (all-to-all coupling)"}
    return xr.Dataset(data, attrs=attrs)


def _clusters(frequency: np.ndarray, graph: Any, tolerance: float, n: int) -> tuple[np.ndarray, int]:
    """Labels (by decreasing size, -1 for singletons) of the components of the locked links, and their count."""
    if graph is None:  # every pair is a link: components of sorted frequencies with gaps ≤ tolerance
        order = np.argsort(frequency)
        breaks = np.diff(frequency[order]) > tolerance
        component = np.empty(n, dtype=np.int64)
        component[order] = np.concatenate([[0], np.cumsum(breaks)])
    else:
        rows, cols, _ = graph.edges()
        locked = np.abs(frequency[rows] - frequency[cols]) <= tolerance
        links = scipy.sparse.csr_array((np.ones(int(locked.sum())), (rows[locked], cols[locked])), shape=(n, n))
        _, component = scipy.sparse.csgraph.connected_components(links, directed=True, connection="weak")
    size = np.bincount(component)
    big = np.flatnonzero(size >= 2)
    ranked = big[np.argsort(-size[big], kind="stable")]
    relabel = np.full(size.size, -1, dtype=np.int64)
    relabel[ranked] = np.arange(ranked.size)
    return relabel[component], int(ranked.size)


def phase_locking_time(run: xr.Dataset, model: Any, tolerance: float = 1e-6) -> xr.DataArray:
    r"""Time to phase locking: the first output time from which the angular velocities agree up to ``tolerance``.

    The first output time t_k such that at every output t ≥ t_k

    .. math::

        \max_i \Big\lvert \dot\theta_i(t) - \sum_j w_j \dot\theta_j(t) \Big\rvert \le \text{tolerance},

    i.e. the state rotates rigidly (synchrony or a twisted state); θ̇ is the model's velocity at the
    outputs, w the run's weights. NaN for a system that is not locked at the last output. Meant for
    identical oscillators (with distinct natural frequencies only a fully locked state qualifies).

    Parameters
    ----------
    run : Dataset
        A :func:`meanfield.simulate` result of a Kuramoto model on S¹.
    model : Kuramoto
        The run's model.
    tolerance : float
        Largest spread > 0 of the angular velocities of a locked state, in radians per unit time
        (default 1e-6).

    Returns
    -------
    DataArray
        ``phase_locking_time`` (system,), or a scalar DataArray for a run of one system, with attr
        ``tolerance``.

    Raises
    ------
    ValueError
        ``tolerance`` not > 0, a model of another run.
    TypeError
        ``run`` not a Dataset.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> model = mf.Kuramoto(1.0)                    # identical oscillators, h = sin
    >>> x0 = np.stack([np.zeros(5), np.random.default_rng(0).uniform(-1.0, 1.0, 5)])
    >>> run = mf.simulate(model, x0, np.linspace(0.0, 30.0, 61), domain="circle")
    >>> # two systems: synchronous from the start (locked at t = 0), and a spread start
    >>> t_loose = mf.phase_locking_time(run, model, tolerance=1e-3).values
    >>> t_tight = mf.phase_locking_time(run, model, tolerance=1e-8).values
    >>> print(t_loose[0], t_tight[0], bool(0 < t_loose[1] < t_tight[1]))
    0.0 0.0 True
    >>> # near synchrony the spread decays like e^{-Kt}: a tolerance 10⁵ times smaller locks ln(10⁵)/K later
    >>> print(t_tight[1] - t_loose[1], round(np.log(1e5), 2))
    11.5 11.51
    >>> # a run too short to lock gives NaN
    >>> short = mf.simulate(model, x0[1], [0.0, 0.5, 1.0])
    >>> float(mf.phase_locking_time(short, model))
    nan
    """
    check_model(model)
    tolerance = check_positive("tolerance", tolerance)
    theta, times, ds = _angles(run)
    if ds is None:
        raise TypeError("run must be a simulate result (a Dataset)")
    _check_same_model(model, ds)
    velocity = _velocities(model, ds, theta)
    weights = ds["weights"].values if "weights" in ds else np.full(theta.shape[-1], 1.0 / theta.shape[-1])
    weights = weights if weights.ndim == 2 else weights[None]
    mean = np.sum(velocity * weights[:, None, :], axis=-1, keepdims=True)
    spread = np.max(np.abs(velocity - mean), axis=-1)  # (systems, time)
    locked = spread <= tolerance
    # index of the first output from which every later one is locked
    tail = np.flip(np.cumprod(np.flip(locked, axis=1), axis=1), axis=1).astype(bool)
    first = np.argmax(tail, axis=1)
    result = np.where(tail[:, -1], times[first], np.nan)
    batched = "system" in ds.positions.dims
    return xr.DataArray(result if batched else result[0], dims=("system",) if batched else (),
                        name="phase_locking_time",
                        attrs={"long_name": "first time from which max_i |dtheta_i/dt - mean| <= tolerance",
                               "tolerance": float(tolerance)})

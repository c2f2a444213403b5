"""What a result file says about itself, in the CF (Climate and Forecast) conventions' terms.

* :data:`COORD_ATTRS`: ``units``/``long_name``/``axis`` of every coordinate.
  Grid angles are stored in radians, the units the schemes compute in, with
  ``units = "rad"`` (the UDUNITS symbol of the radian). CF tools recognise
  latitude and longitude only in degrees (``degrees_north``/``degrees_east``), so
  :func:`geographic_coords` adds auxiliary coordinates ``latitude`` and
  ``longitude`` in degrees with those ``standard_name``\\ s beside the radian
  dimension coordinates ``lat`` and ``lon``; every reader of ``lat``/``lon``
  keeps its radians, and the file's latitude is the degrees one. The circle's
  angle θ and the zonal polar angle (from e_d) have no CF standard name; they
  carry units and a long name only. Time is dimensionless (no calendar), so it
  carries ``axis = "T"`` and ``units = "1"`` rather than ``standard_name =
  "time"``, which CF reserves for ``"<unit> since <date>"``. A run in the
  rescaled time s = e^β t has the ``time`` coordinate of ``rescaled_time``
  and, beside it, the auxiliary coordinate ``log_time`` = log s - β = log t.
* :func:`describe`: every parameter of a run with its meaning beside it, as
  ``<name>_description``; the 0/1 flags (``normalized``, ``projection``,
  ``rescaled``) also as CF flag attributes ``<name>_flag_values`` /
  ``<name>_flag_meanings``, and ``Conventions``.
* :func:`history_line` / :func:`with_history`: the CF/NetCDF ``history``
  attribute, one line ``"<ISO 8601 UTC time> <command or call>"`` per
  program that made or changed the file, oldest first;
  :func:`continued_history`: a resumed run's history after the lines of the
  file it continues.

Descriptive attrs (:func:`is_descriptive`) never identify a run: a resumed
run compares parameters, not their descriptions or its history.
"""

from __future__ import annotations

import datetime as _datetime
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = [
    "CONVENTIONS",
    "COORD_ATTRS",
    "PARAMETER_MEANINGS",
    "continued_history",
    "describe",
    "described_run",
    "geographic_coords",
    "history_line",
    "is_descriptive",
    "with_history",
]

CONVENTIONS = "CF-1.8"

COORD_ATTRS: dict[str, dict[str, str]] = {
    "time": {"units": "1", "long_name": "time", "axis": "T"},
    "rescaled_time": {"units": "1", "long_name": "rescaled time s = exp(beta) t", "axis": "T"},
    "log_time": {"units": "1", "long_name": "log t = log s - beta, the logarithm of the time of the equation"},
    "theta": {"units": "rad", "long_name": "angle on the circle S^1"},
    "lat": {"units": "rad", "long_name": "latitude in radians", "axis": "Y"},
    "lon": {"units": "rad", "long_name": "longitude in radians", "axis": "X"},
    "polar": {"units": "rad", "long_name": "polar angle from the axis e_d of S^{d-1}"},
    "frequency": {"units": "rad", "long_name": "natural frequency node (radians per unit of the dimensionless time)"},
}

#: the meaning of each run parameter, written beside it as ``<name>_description``
PARAMETER_MEANINGS: dict[str, str] = {
    "model": "interaction: SA (softmax self-attention), USA (unnormalised self-attention), Kuramoto, or Attention "
             "(particles with weight matrices Q, K, V)",
    "beta": "inverse temperature beta >= 0 of the attention kernel exp(beta <x, y>) "
            "(arXiv 2312.10794, eqs. (SA), (USA))",
    "noise": "diffusion coefficient sigma >= 0: it multiplies the Laplace-Beltrami operator in "
             "d_t rho + div(rho X[rho]) = sigma Laplacian(rho); particles move by dx = X dt + sqrt(2 sigma) dW",
    "normalized": "1: SA, the velocity divided by the softmax normaliser int exp(beta <x, y>) dmu(y) "
                  "(arXiv 2312.10794, eq. (SA)); 0: USA, without it (eq. (USA))",
    "time": "the time variable of the run: t, that of the equation, or rescaled: s = exp(beta) t, in which the USA "
            "velocity is P_x^perp int exp(beta(<x, y> - 1)) y dmu(y), finite for every beta (the coordinate time "
            "is s, log_time = log s - beta = log t)",
    "coupling": "Kuramoto coupling K: dtheta_i = omega_i dt + K Im(r e^{-i theta_i}) dt + sqrt(2 sigma) dW",
    "frequencies": "law of the natural frequencies omega_i",
    "interaction": "Kuramoto interaction harmonics",
    "dimension": "d of the sphere S^{d-1} in R^d (2: the circle)",
    "domain": "circle (S^1), sphere (S^2), zonal (axisymmetric measures on S^{d-1}) or euclidean (R^d)",
    "method": "numerical method of the run",
    "engine": "what a Kuramoto study integrates: particles (the oscillators) or pde (the mean-field density)",
    "heads": "number of attention heads",
    "projection": "1: velocities projected onto the tangent space of the sphere; 0: flow in R^d",
    "rescaled": "1: the positions are paper 1's rescaled tokens z_i = exp(-t V) x_i (arXiv 2305.05465); "
                "0: the tokens x_i",
    "scores_at_z": "1: the attention scores are beta <Q z_i, K z_j> of the rescaled tokens (arXiv 2312.10794, "
                   "eq. (9.4)); 0: of x_i = exp(t V) z_i (eq. (9.3))",
    "tie_rule": "how hard-max scores S_ij = <Q z_i, K z_j> tie: round-off (S_ij >= max_k S_ik - tie_tolerance d "
                "max_k (|Q||z_i|).(|K||z_k|), the error bound of the computed scores) or relative (S_ij >= max_k S_ik "
                "- tie_tolerance max(1, max_k |S_ik|)); at switching times also within the event's accuracy",
    "tie_tolerance": "coefficient of the hard-max tie rule (tie_rule): 3 eps for round-off",
    "graph": "coupling graph A: dtheta_i = omega_i dt + (K/c_i) sum_j A_ij w_j h(theta_j - theta_i) dt (A_ij != 0: "
             "i feels j), its generator and parameters",
    "graph_normalization": "c_i of the sum over the edges: n (c_i = 1, K/n sum_j A_ij for equal weights) or degree "
                           "(c_i = sum_j |A_ij| w_j, K/d_i sum_j A_ij)",
    "graph_nodes": "number of nodes of the coupling graph",
    "graph_edges": "edges of the coupling graph (unordered pairs if undirected, ordered pairs if directed)",
    "graph_sha1": "SHA-1 of the graph's CSR arrays, normalisation and sign flag",
    "graphon": "graphon W(x, y) on [0, 1]^2 of the dense-graph limit: "
               "X_x = omega + (K/c(x)) int W(x, y) int h(phi - theta) rho(y, phi) dphi dy",
    "n_particles": "number of particles n per system",
    "n_systems": "number of independent systems",
}

#: 0/1 parameters written with CF flag attributes: (flag meaning of 0, flag meaning of 1)
FLAG_MEANINGS: dict[str, tuple[str, str]] = {
    "normalized": ("unnormalized_USA", "normalized_SA"),
    "projection": ("euclidean_flow", "projected_onto_sphere"),
    "rescaled": ("tokens_x", "rescaled_tokens_z"),
    "scores_at_z": ("scores_of_x", "scores_of_z"),
    "graph_symmetric": ("directed", "undirected"),
    "graph_signed": ("nonnegative_weights", "signed_weights"),
}

_DESCRIPTIVE_SUFFIXES = ("_description", "_flag_values", "_flag_meanings")


def describe(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """``attrs`` with ``Conventions``, ``<name>_description`` for every parameter of :data:`PARAMETER_MEANINGS`
    present, and ``<name>_flag_values`` = [0, 1], ``<name>_flag_meanings`` for its 0/1 flags."""
    out = dict(attrs)
    out.setdefault("Conventions", CONVENTIONS)
    for name, meaning in PARAMETER_MEANINGS.items():
        if name in attrs:
            out[f"{name}_description"] = meaning
    for name, (off, on) in FLAG_MEANINGS.items():
        if name in attrs:
            out[f"{name}_flag_values"] = np.array([0, 1], dtype=np.int8)
            out[f"{name}_flag_meanings"] = f"{off} {on}"
    return out


def described_run(attrs: Mapping[str, Any], command_line: str | None) -> dict[str, Any]:
    """``attrs`` with the additions of :func:`describe`, and ``command_line`` (if given) appended to ``history``
    with the present time."""
    out = describe(attrs)
    return out if command_line is None else with_history(out, history_line(command_line))


def geographic_coords(coords: Mapping[str, np.ndarray]) -> dict[str, tuple[str, np.ndarray, dict[str, str]]]:
    """Auxiliary coordinates ``latitude`` (dim ``lat``) and ``longitude`` (dim ``lon``) in degrees, with the
    CF standard names, for grid coordinates given in radians; empty for grids without lat/lon."""
    out: dict[str, tuple[str, np.ndarray, dict[str, str]]] = {}
    if "lat" in coords:
        out["latitude"] = ("lat", np.degrees(coords["lat"]),
                           {"standard_name": "latitude", "units": "degrees_north", "long_name": "latitude"})
    if "lon" in coords:
        out["longitude"] = ("lon", np.degrees(coords["lon"]),
                            {"standard_name": "longitude", "units": "degrees_east", "long_name": "longitude"})
    return out


def history_line(what: str, when: _datetime.datetime | None = None) -> str:
    """``"<ISO 8601 UTC time> <what>"``: one line of a ``history`` attribute (``what``: a command line or a call)."""
    moment = when or _datetime.datetime.now(_datetime.timezone.utc)
    return f"{moment.replace(microsecond=0).isoformat()} {what}"


def with_history(attrs: Mapping[str, Any], line: str) -> dict[str, Any]:
    """``attrs`` with ``line`` appended to its ``history`` (newline-separated, oldest first)."""
    out = dict(attrs)
    previous = str(out.get("history", "")).rstrip("\n")
    out["history"] = f"{previous}\n{line}" if previous else line
    return out


def continued_history(attrs: Mapping[str, Any], earlier: str) -> dict[str, Any]:
    """``attrs`` of a resumed run whose ``history`` continues ``earlier``, the history of the file it resumes:
    the lines of ``earlier``, then ``attrs``' own (oldest first, as CF lists them). Every line is kept, also
    one equal to an earlier line (two runs in the same second)."""
    lines = [line for text in (earlier, attrs.get("history", "")) for line in str(text).split("\n") if line]
    out = dict(attrs)
    if lines:
        out["history"] = "\n".join(lines)
    return out


def is_descriptive(name: str) -> bool:
    """Whether attr ``name`` describes a run rather than identifies it (descriptions, flag attributes,
    ``history``, ``Conventions``)."""
    return name in ("history", "Conventions") or name.endswith(_DESCRIPTIVE_SUFFIXES)

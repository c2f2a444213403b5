"""The attractors of the bimodal Lorentzian's reduced equations over (ω₀, K) (:func:`meanfield.bimodal_states`)
and their phase diagram (:func:`meanfield.plot.bimodal_phase_diagram`)."""

from __future__ import annotations

import numpy as np
import pytest

import meanfield as mf
from meanfield.studies.kuramoto._states import INCOHERENT, OSCILLATING, STATIONARY

SEPARATIONS = [0.0, 0.8, 1.5]
COUPLINGS = [2.5, 3.0, 3.15, 3.19, 3.23, 3.3, 4.0, 4.3, 5.0]


@pytest.fixture(scope="module")
def states():
    return mf.bimodal_states(SEPARATIONS, COUPLINGS, 1.0)


def test_zero_separation_is_one_lorentzian(states):
    # ω₀ = 0: one Lorentzian of half-width Δ, r∞ = √(1 − 2Δ/K) above K = 2Δ from both starts; the relaxation
    # rate is ≥ K/2 − Δ = 0.25, so e^{-75} of the start is left at t = 300 (measured error 9e-11)
    row = states.sel(separation=0.0)
    assert np.all(row.state.values == STATIONARY) and not row.bistable.values.any()
    exact = np.sqrt(1 - 2 / np.asarray(COUPLINGS))
    np.testing.assert_allclose(row.r_mean.values, np.repeat(exact[:, None], 2, axis=1), rtol=0, atol=1e-9)


def test_bistability_lies_between_the_saddle_node_and_the_pitchfork(states):
    # ω₀ = 0.8 ∈ (Δ/√3, Δ): the saddle-node at K = 3.1706 and the pitchfork at 2(Δ² + ω₀²)/Δ = 3.28 bound the
    # couplings where incoherence and partial synchrony are both stable; couplings 0.02 away from either
    # boundary are classified (nearer, the relaxation outlasts t_final and the cell is unsettled)
    bounds = mf.bimodal_boundaries([0.8], 1.0)
    saddle, pitchfork = float(bounds.saddle_node[0]), float(bounds.incoherence_boundary[0])
    assert pitchfork == pytest.approx(3.28, rel=1e-12) and 3.17 < saddle < 3.171
    row = states.sel(separation=0.8)
    k = row.coupling.values
    inside = (k > saddle + 0.01) & (k < pitchfork - 0.02)
    assert inside.sum() == 2
    np.testing.assert_array_equal(row.bistable.values, inside.astype(np.int8))
    low, high = row.state.values[:, 0], row.state.values[:, 1]
    assert np.all(low[k < pitchfork] == INCOHERENT) and np.all(high[k > saddle] == STATIONARY)
    assert np.all(low[k > pitchfork] == STATIONARY) and np.all(high[k < saddle] == INCOHERENT)
    # the synchronised state reached in the bistable region is the upper stable branch of the continuation
    branches = mf.kuramoto_branches(mf.Kuramoto(frequencies=mf.bimodal_lorentzian(0.8, 1.0)),
                                    k[inside], periodic=False)
    for coupling, r in zip(k[inside], row.r_mean.values[inside, 1]):
        on = (branches.stable.values == 1) & (branches.r.values > 0.1) & (branches.point_coupling == coupling)
        assert np.abs(branches.r.values[on.values] - r).min() < 1e-8


def test_standing_waves_above_the_hopf_line(states):
    # ω₀ = 1.5 > Δ: incoherence below K = 4Δ; standing waves (r rises and falls) between 4Δ and the saddle-node
    # at K = 4.68, partial synchrony above it
    row = states.sel(separation=1.5)
    k = row.coupling.values
    assert np.all(row.state.values[k < 4.0] == INCOHERENT)
    assert np.all(row.state.values[(k > 4.0) & (k < 4.6)] == OSCILLATING)
    assert np.all(row.state.values[k > 4.8] == STATIONARY)
    waving = row.sel(coupling=4.3)
    assert np.all(waving.r_max.values - waving.r_min.values > 0.1)
    assert states.attrs["success"] == 1 and states.state.attrs["flag_meanings"].split()[2] == "incoherent"


@pytest.mark.parametrize("arguments, match", [
    ({"separations": [-0.1]}, "separations must be a non-empty 1-D sequence of finite values >= 0"),
    ({"couplings": []}, "couplings must be a non-empty 1-D sequence"),
    ({"width": 0.0}, "width must be finite and > 0"),
    ({"window": 500.0}, r"window must lie in \(0, t_final = 400\)"),
    ({"starts": [1.0]}, r"\|z₀\| < 1"),
    ({"starts": []}, "non-empty sequence of complex"),
])
def test_bad_input(arguments, match):
    given = {"separations": [0.5], "couplings": [3.0], **arguments}
    with pytest.raises(ValueError, match=match):
        mf.bimodal_states(given.pop("separations"), given.pop("couplings"), **given)


def test_phase_diagram_draws_states_and_boundaries(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    states = mf.bimodal_states(np.linspace(0, 2, 5), np.linspace(1, 6, 6), t_final=100.0, window=40.0)
    boundaries = mf.bimodal_boundaries(np.linspace(0, 2, 41), 1.0)
    fig = mf.plot.bimodal_phase_diagram(states, boundaries)
    fig.savefig(tmp_path / "phase.png")
    assert (tmp_path / "phase.png").stat().st_size > 0
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "saddle-node" in labels and "Bogdanov–Takens point" in labels and "tricritical point" in labels
    with pytest.raises(TypeError, match="bimodal_states"):
        mf.plot.bimodal_phase_diagram(boundaries)

"""Masked attention in the phase diagram: the causal mask of a decoder and boolean masks.

Facts checked: under the causal mask the first token attends to itself only, so its velocity
P⊥(x_1) x_1 = (1 - |x_1|²) x_1 vanishes (to the round-off of |x_1| = 1) and it never moves; with Q = K = V = I on S^{d-1} every token
converges to the first; the diagram's masked systems are exactly the runs of
``Attention(beta, graph=Graph.causal(n))``.
"""

import numpy as np
import pytest
import xarray as xr

import meanfield as mf
from meanfield.cli import main
from meanfield.particles import pair_fraction
from meanfield.studies.clustering import phase_diagram_tokens
from meanfield.studies.clustering._phase_diagram import attention_mask, phase_diagram_block


def test_causal_mask_is_the_lower_triangle_with_the_diagonal():
    np.testing.assert_array_equal(attention_mask("causal", 4).adjacency.toarray(), np.tril(np.ones((4, 4))))
    assert attention_mask(None, 4) is None
    custom = np.eye(3, dtype=bool) | np.eye(3, k=1, dtype=bool)
    np.testing.assert_array_equal(attention_mask(custom, 3).adjacency.toarray(), custom.astype(float))


@pytest.mark.parametrize("mask, message", [
    ("anticausal", "mask must be None, 'causal' or a boolean matrix"),
    (np.ones((3, 3)), "got an array of dtype float64"),
    (np.ones((3, 4), dtype=bool), r"mask must have shape \(n, n\) = \(3, 3\), got \(3, 4\)"),
    (np.tril(np.ones((3, 3), dtype=bool), -1), r"mask rows \[0\] have no true entry"),
])
def test_bad_masks_are_refused_by_name(mask, message):
    with pytest.raises(ValueError, match=message):
        attention_mask(mask, 3)
    with pytest.raises(ValueError, match=message):
        mf.phase_diagram(2, 3, [1.0], [0.0, 1.0], 2, mask=mask, scheduler="serial", progress=False)


@pytest.mark.parametrize("options, message", [
    ({"normalized": False}, "mask restricts the softmax of SA"),
    ({"representation": "gram"}, "a masked system runs in the points representation"),
])
def test_masks_refuse_what_they_cannot_run(options, message):
    with pytest.raises(ValueError, match=message):
        mf.phase_diagram(4, 4, [1.0], [0.0, 1.0], 2, mask="causal", scheduler="serial", progress=False, **options)


def test_masked_block_is_the_run_of_attention_on_the_causal_graph():
    n, d, beta, t = 6, 3, 2.0, np.linspace(0.0, 4.0, 5)
    block = phase_diagram_block(beta, np.arange(5), d=d, n=n, times=t, delta=1e-2, mask="causal")
    tokens = phase_diagram_tokens(0, np.arange(5), d, n)
    run = mf.simulate(mf.Attention(beta, graph=mf.Graph.causal(n)), tokens, t, rtol=1e-4, atol=3e-5,
                      domain="sphere")
    np.testing.assert_array_equal(block["pair_fraction"].values, pair_fraction(run["positions"].values, 1e-2,
                                                                              domain="sphere"))
    assert block.attrs["representation"] == "points"


def test_first_token_never_moves_and_all_tokens_converge_to_it():
    """100 systems of 32 uniform tokens on S², β = 1: the first token stays where it is to round-off (its
    velocity (1 - |x_1|²) x_1 is O(ε) per step; measured 3e-16 after a few hundred steps), and at
    t = 60 every token is within 1e-6 of it (measured: 4e-8; the approach is exponential, and the run's
    tolerance rtol = 1e-8 bounds the error of the distances far below 1e-6)."""
    n, d, systems = 32, 3, 100
    tokens = phase_diagram_tokens(0, np.arange(systems), d, n)
    run = mf.simulate(mf.Attention(1.0, graph=mf.Graph.causal(n)), tokens, [0.0, 30.0, 60.0], rtol=1e-8,
                      atol=1e-10, domain="sphere")
    x = run["positions"].values
    assert np.abs(x[:, :, 0] - tokens[:, None, 0]).max() < 1e-14
    distance = np.linalg.norm(x[:, -1] - x[:, -1, :1], axis=-1).max(axis=-1)
    assert distance.max() < 1e-6
    assert np.linalg.norm(x[:, 0] - x[:, 0, :1], axis=-1).max() > 1.9  # they started spread over the sphere


def test_causal_phase_diagram_reaches_one_cluster():
    """The same systems through the diagram: at t = 60 every pair is linked in every system."""
    ds = mf.phase_diagram(3, 32, [1.0], np.linspace(0.0, 60.0, 4), 100, mask="causal", scheduler="serial",
                          progress=False)
    assert float(ds.probability.isel(beta=0, time=-1)) == 1.0
    assert float(ds.fraction_clustered.isel(beta=0, time=-1)) == 1.0
    assert ds.attrs["mask"] == "causal" and "causal mask" in ds.attrs["model"]
    np.testing.assert_array_equal(ds["mask"].values, np.tril(np.ones((32, 32), dtype=np.int8)))
    unmasked = mf.phase_diagram(3, 32, [1.0], [0.0, 1.0], 100, scheduler="serial", progress=False)
    assert float(ds.probability.isel(beta=0, time=0)) == float(unmasked.probability.isel(beta=0, time=0))  # same tokens at t = 0


def test_cli_runs_the_causal_diagram(tmp_path):
    out = tmp_path / "pd.nc"
    code = main(["phase-diagram", "--dimension", "3", "--particles", "6", "--systems", "4", "--betas", "1,4",
                 "--t-final", "2", "--n-times", "3", "--mask", "causal", "--scheduler", "serial", "--no-progress",
                 "--output", str(out)])
    assert code == 0
    with xr.open_dataset(out) as ds:
        assert ds.attrs["mask"] == "causal"
        assert ds["probability"].shape == (2, 3)

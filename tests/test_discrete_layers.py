"""Discrete layers x_{k+1} = Π(x_k + h v(x_k)) (``simulate(method="layers")``) and their Lie–Trotter split.

Checked against exact facts: first order in h towards the continuous flow (the least-squares slope of
log max|x_h(T) - x(T)| against log h over four h is 1 ± 0.1; the reference is dopri5 at rtol 1e-12, whose
error ≈ 1e-11 is far below the smallest layer error ≈ 1e-3); orthogonal tokens stay equiangular under the
map, their common inner product follows the closed recursion γ_{k+1} = g_h(γ_k) of
:func:`meanfield.equiangular_layers` to round-off and tends to Theorem 6.8's ODE at rate h; on S¹ the map of
angles is the map of the unit vectors read back; the compiled and the BLAS paths agree to round-off.
"""

from __future__ import annotations

import numpy as np
import pytest

import meanfield as mf
from meanfield.models._attention import FeedForward

STEPS = np.array([0.1, 0.05, 0.025, 0.0125])
T = np.array([0.0, 0.5, 1.0])
SLOPE_TOLERANCE = 0.1
"""|slope - 1| over the four h (the issue's bound); measured 0.97 … 1.04 on the cases below."""
ROUND_OFF = 1e-14
"""Equiangular tokens: spread of the off-diagonal inner products and distance to the recursion over ≤ 100
layers (measured ≤ 6e-16: a few ulp per layer, not growing)."""


def _points(shape, seed):
    x = np.random.default_rng(seed).normal(size=shape)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _feed_forward(d, width, seed):
    rng = np.random.default_rng(seed)
    return FeedForward(0.5 * rng.normal(size=(d, width)) / np.sqrt(width), rng.normal(size=(width, d)),
                       rng.normal(size=width), "tanh")


def _slope(errors):
    return float(np.polyfit(np.log(STEPS), np.log(errors), 1)[0])


def _angle_gap(a, b):
    return np.abs(np.angle(np.exp(1j * (a - b))))


CASES = {
    "SA on S^2": (mf.SelfAttention(2.0), _points((12, 3), 1), {}),
    "USA on S^2, two systems": (mf.SelfAttention(1.0, normalized=False), _points((2, 12, 3), 2), {}),
    "SA on S^1": (mf.SelfAttention(2.0), np.random.default_rng(3).uniform(0, 2 * np.pi, 16), {}),
    "Attention in R^3": (mf.Attention(1.0, projection=False), 0.5 * _points((10, 3), 4), {}),
    "ffn unsplit": (mf.Attention(2.0, ffn=_feed_forward(3, 8, 3)), _points((12, 3), 3), {}),
    "ffn lie-trotter": (mf.Attention(2.0, ffn=_feed_forward(3, 8, 3)), _points((12, 3), 3),
                        {"split": "lie-trotter"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_layers_converge_to_the_flow_at_first_order(case):
    model, x0, options = CASES[case]
    reference = mf.simulate(model, x0, T, rtol=1e-12, atol=1e-14)
    errors = []
    for h in STEPS:
        ds = mf.simulate(model, x0, T, method="layers", dt=h, **options)
        assert ds.attrs["success"] == 1 and ds.attrs["n_steps"] == round(T[-1] / h)
        gap = (_angle_gap(ds.positions.values, reference.positions.values) if ds.attrs["domain"] == "circle"
               else np.abs(ds.positions.values - reference.positions.values))
        errors.append(float(gap.max()))
    assert abs(_slope(errors) - 1.0) <= SLOPE_TOLERANCE, (errors, _slope(errors))


def test_split_is_another_map_of_the_same_order():
    """Attention then feed-forward is not the layer of the summed velocity: they differ at O(h) after
    T/h layers (each layer by (h²/2)[v_att, v_ffn] + O(h²) normalisation terms)."""
    model, x0, _ = CASES["ffn unsplit"]
    whole = mf.simulate(model, x0, T, method="layers", dt=0.05)
    split = mf.simulate(model, x0, T, method="layers", dt=0.05, split="lie-trotter")
    assert split.attrs["nfev"] == 2 * split.attrs["n_steps"] == 2 * whole.attrs["nfev"]
    assert split.attrs["split"].startswith("lie-trotter")
    assert 1e-4 < np.abs(split.positions.values - whole.positions.values).max() < 0.05


def test_attrs_say_what_was_computed():
    ds = mf.simulate(mf.SelfAttention(1.0), _points((8, 3), 5), [0.0, 0.3], method="layers", dt=0.1)
    assert ds.attrs["integrator"] == ("discrete layers: x_{k+1} = normalise(x_k + h v(x_k)), order 1 in h as an "
                                      "approximation of the flow")
    assert (ds.attrs["method"], ds.attrs["order"], ds.attrs["layer_step"], ds.attrs["split"]) == ("layers", 1, 0.1,
                                                                                                   "none")
    assert (ds.attrs["n_steps"], ds.attrs["nfev"], ds.attrs["rtol"], ds.attrs["atol"]) == (3, 3, -1.0, -1.0)
    assert ds.attrs["dt_min"] == ds.attrs["dt_max"] == pytest.approx(0.1, rel=1e-15)
    # the layer normalisation keeps the tokens on the sphere to round-off
    assert ds.attrs["max_sphere_deviation"] < 1e-15


def test_one_layer_is_the_normalised_residual_step():
    model, x0 = mf.SelfAttention(3.0), _points((7, 4), 6)
    y = x0 + 0.1 * model.velocity(x0)
    ds = mf.simulate(model, x0, [0.0, 0.1], method="layers", dt=0.1, path="direct")
    np.testing.assert_allclose(ds.positions.values[1], y / np.linalg.norm(y, axis=1, keepdims=True), rtol=0,
                               atol=1e-15)


def test_angles_take_the_layer_of_their_unit_vectors():
    """On S¹, θ_{k+1} = θ_k + arctan(h θ̇_k) equals the layer of u = (cos θ, sin θ) read back (not the Euler step
    θ + h θ̇)."""
    theta = np.random.default_rng(7).uniform(0, 2 * np.pi, 20)
    vectors = np.stack([np.cos(theta), np.sin(theta)], axis=-1)
    model, times = mf.SelfAttention(2.0), np.linspace(0.0, 2.0, 5)
    for path in ("ensemble", "direct"):
        angles = mf.simulate(model, theta, times, method="layers", dt=0.1, path=path).positions.values
        points = mf.simulate(model, vectors, times, method="layers", dt=0.1, path=path).positions.values
        assert _angle_gap(angles, np.arctan2(points[..., 1], points[..., 0])).max() < 1e-13
    euler = mf.simulate(model, theta, times, method="euler", dt=0.1, path="direct").positions.values
    assert _angle_gap(angles, euler).max() > 1e-6


@pytest.mark.parametrize("x0", [_points((3, 10, 3), 8), np.random.default_rng(9).uniform(0, 6, (3, 10))],
                         ids=["sphere", "circle"])
def test_compiled_and_blas_layers_agree(x0):
    model, times = mf.SelfAttention(4.0), np.linspace(0.0, 1.0, 3)
    domain = "circle" if x0.ndim == 2 else None
    compiled = mf.simulate(model, x0, times, method="layers", dt=0.05, domain=domain)
    direct = mf.simulate(model, x0, times, method="layers", dt=0.05, path="direct", domain=domain)
    assert (compiled.attrs["path"], direct.attrs["path"]) == ("ensemble", "direct")
    np.testing.assert_allclose(compiled.positions.values, direct.positions.values, rtol=0, atol=1e-13)
    # compiled per system: a system alone is its batch's, bit for bit
    alone = mf.simulate(model, x0[1], times, method="layers", dt=0.05, domain=domain)
    np.testing.assert_array_equal(alone.positions.values, compiled.positions.values[1])


@pytest.mark.parametrize("path", ["ensemble", "direct"])
def test_the_layers_do_not_depend_on_the_output_times(path):
    model, x0 = mf.SelfAttention(2.0), _points((2, 9, 3), 10)
    few = mf.simulate(model, x0, [0.0, 1.0], method="layers", dt=0.1, path=path)
    many = mf.simulate(model, x0, np.linspace(0.0, 1.0, 11), method="layers", dt=0.1, path=path)
    np.testing.assert_array_equal(few.positions.values[:, -1], many.positions.values[:, -1])


@pytest.mark.parametrize("normalized", [True, False], ids=["SA", "USA"])
@pytest.mark.parametrize("path", ["ensemble", "direct"])
def test_orthogonal_tokens_stay_equiangular_on_the_recursion(normalized, path):
    beta, n, d, h, layers = 1.5, 5, 7, 0.05, 100
    ds = mf.simulate(mf.SelfAttention(beta, normalized=normalized), np.eye(d)[:n], np.arange(layers + 1) * h,
                     method="layers", dt=h, path=path)
    x = ds.positions.values
    off = np.einsum("tia,tja->tij", x, x)[:, ~np.eye(n, dtype=bool)]
    assert np.ptp(off, axis=1).max() <= ROUND_OFF
    gamma = mf.equiangular_layers(beta, n, h, layers, normalized=normalized)
    assert np.abs(off - gamma[:, None]).max() <= ROUND_OFF
    assert gamma[-1] > 0.5  # the tokens have moved: γ went from 0 to above 1/2


@pytest.mark.parametrize("normalized", [True, False], ids=["SA", "USA"])
def test_equiangular_recursion_tends_to_theorem_68_at_rate_h(normalized):
    beta, n = 1.0, 4
    errors = []
    for h in STEPS:
        layers = int(round(2.0 / h))
        gamma = mf.equiangular_layers(beta, n, h, layers, normalized=normalized)
        ode = mf.equiangular_gamma(beta, n, np.arange(layers + 1) * h, normalized=normalized)
        errors.append(float(np.abs(gamma - ode).max()))
    assert abs(_slope(errors) - 1.0) <= SLOPE_TOLERANCE, errors


def test_equiangular_recursion_is_an_euler_step_to_second_order():
    """g_h(γ) = γ + h γ'(γ) + O(h²) with γ' Theorem 6.8's SA right-hand side (6.9): at γ_1 from γ_0 = 0,
    |γ_1 - 2h/(e^β + n - 1)| / h² stays bounded as h falls."""
    beta, n = 2.0, 6
    ratios = [abs(mf.equiangular_layers(beta, n, h, 1)[1] - 2 * h / (np.exp(beta) + n - 1)) / h**2
              for h in (1e-2, 1e-3, 1e-4)]
    assert max(ratios) < 2 * min(ratios)


BAD = {
    "dt = 0": ({"dt": 0.0}, "dt must be the layer step"),
    "dt < 0": ({"dt": -0.1}, "dt must be the layer step"),
    "dt nan": ({"dt": float("nan")}, "dt must be the layer step"),
    "dt inf": ({"dt": float("inf")}, "dt must be the layer step"),
    "no dt": ({}, "dt must be the layer step"),
    "times between layers": ({"dt": 0.3}, r"t must advance by whole layers of dt = 0.3 .* t\[1\] - t\[0\] = 0.5"),
    "split unknown": ({"dt": 0.1, "split": "strang"}, "split must be None or one of"),
    "split without ffn": ({"dt": 0.1, "split": "lie-trotter"},
                          "split='lie-trotter' needs a model whose velocity has parts"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_layer_settings_name_the_argument_and_write_nothing(case, tmp_path):
    options, message = BAD[case]
    checkpoint = tmp_path / "run.nc"
    with pytest.raises(ValueError, match=message):
        mf.simulate(mf.SelfAttention(1.0), _points((5, 3), 11), [0.0, 0.5, 1.0], method="layers",
                    checkpoint=checkpoint, **options)
    assert not list(tmp_path.iterdir())


def test_split_needs_layers():
    with pytest.raises(ValueError, match="split='lie-trotter' splits a discrete layer: it needs method='layers'"):
        mf.simulate(mf.Attention(1.0, ffn=_feed_forward(3, 4, 0)), _points((5, 3), 12), [0.0, 1.0],
                    split="lie-trotter")


@pytest.mark.parametrize("bad", [{"beta": -1.0}, {"n": 1}, {"h": 0.0}, {"h": float("nan")}, {"n_layers": -1}])
def test_equiangular_layers_refuses_bad_input(bad):
    arguments = {"beta": 1.0, "n": 3, "h": 0.1, "n_layers": 5, **bad}
    with pytest.raises(ValueError, match=next(iter(bad))):
        mf.equiangular_layers(**arguments)

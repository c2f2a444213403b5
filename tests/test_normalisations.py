"""Token normalisations beyond the unit sphere, ``Attention(layer_norm="rms", gain=D)`` (tokens on the ellipsoid
|D^{-1} y| = 1) and ``Attention(layer_norm="centred")`` (LayerNorm: the sphere |y| = √d in Σ_k y_k = 0): D = I is
the unit sphere to round-off, D = cI is the unit-sphere dynamics at β' = c²β in the same time, a general D is the
sphere dynamics of x = D^{-1} y with weights (QD, KD, D^{-1}VD), "centred" with identity weights is SA on S^{d-2}
at β' = dβ; the layers converge at order 1; energy, checkpoint/resume, bad input."""

from __future__ import annotations

import numpy as np
import pytest

import meanfield as mf
from conftest import CheckpointStop
from meanfield.domains._normalized import TokenNormalization
from meanfield.io._checkpoint import CheckpointError

#: round-off of a velocity of O(1) terms summed over n ≤ 8 tokens
ROUND_OFF = 1e-14
#: dopri5 at rtol = 1e-10, atol = 1e-12 over t ≤ 3: global error well below 1e-8
TIGHT = dict(rtol=1e-10, atol=1e-12)
FLOW_TOL = 1e-8


def _sphere_points(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    x = rng.standard_normal((n, d))
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _hyperplane_frame(rng: np.random.Generator, d: int) -> np.ndarray:
    """U (d, d-1): an orthonormal basis of {Σ_k y_k = 0}."""
    q = np.linalg.qr(np.column_stack([np.ones(d), rng.standard_normal((d, d - 1))]))[0]
    return q[:, 1:]


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / np.abs(b).max())


def test_unit_gain_is_the_unit_sphere_to_round_off():
    """D = I: the ellipsoid is S^{d-1}, Π_y = P⊥_y; velocity, a dopri5 run and the layers equal SA's."""
    rng = np.random.default_rng(0)
    x = _sphere_points(rng, 7, 4)
    sa = mf.SelfAttention(2.0)
    for rms in (mf.Attention(2.0, layer_norm="rms"), mf.Attention(2.0, layer_norm="rms", gain=np.ones(4))):
        assert _relative(rms.velocity(x), sa.velocity(x)) <= ROUND_OFF
        times = np.linspace(0.0, 3.0, 4)
        a = mf.simulate(rms, x, times, **TIGHT)
        b = mf.simulate(mf.Attention(2.0), x, times, **TIGHT)
        assert a.attrs["success"] == 1 and a.attrs["domain"] == "ellipsoid"
        assert _relative(a["positions"].values, b["positions"].values) <= ROUND_OFF
        la = mf.simulate(rms, x, times, method="layers", dt=0.1)
        lb = mf.simulate(sa, x, times, method="layers", dt=0.1, path="direct")
        assert _relative(la["positions"].values, lb["positions"].values) <= ROUND_OFF


@pytest.mark.parametrize("c", [0.44, 0.7, 3.0])
def test_scalar_gain_is_the_sphere_at_c2_beta_in_the_same_time(c):
    """D = cI: y = c x with x the unit-sphere dynamics at β' = c²β, time factor 1 (velocity to round-off, the flow
    to the integrator's tolerance, the layers of the same h to round-off)."""
    rng = np.random.default_rng(1)
    beta, d = 1.5, 3
    x = _sphere_points(rng, 6, d)
    rms = mf.Attention(beta, layer_norm="rms", gain=np.full(d, c))
    sphere = mf.Attention(c * c * beta)
    assert _relative(rms.velocity(c * x), c * sphere.velocity(x)) <= ROUND_OFF
    times = np.linspace(0.0, 3.0, 7)
    a = mf.simulate(rms, c * x, times, **TIGHT)
    b = mf.simulate(sphere, x, times, **TIGHT)
    assert a.attrs["success"] == 1
    assert np.abs(a["positions"].values / c - b["positions"].values).max() <= FLOW_TOL
    la = mf.simulate(rms, c * x, times, method="layers", dt=0.05)
    lb = mf.simulate(sphere, x, times, method="layers", dt=0.05)
    assert np.abs(la["positions"].values / c - lb["positions"].values).max() <= 1e-13  # round-off over 60 layers
    # the energy is E_{c²β} of x = y/c, increasing along SA (paper 2, (3.6))
    assert _relative(a["energy"].values, b["energy"].values) <= FLOW_TOL
    assert np.all(np.diff(a["energy"].values) > 0)
    # the same β without the factor c² is another flow: not a time rescaling of it
    unscaled = mf.simulate(mf.Attention(beta), x, times, **TIGHT)["positions"].values
    assert np.abs(unscaled - b["positions"].values).max() > 1e-3


def test_general_gain_is_the_sphere_flow_of_the_transformed_weights():
    """x = D^{-1} y solves ẋ = P⊥_x D^{-1} Σ_j P_ij V D x_j, P from β<QDx_i, KDx_j>: the sphere dynamics of
    Attention(β, Q=QD, K=KD, V=D^{-1}VD), an independent path; the tokens stay on the ellipsoid to round-off."""
    rng = np.random.default_rng(2)
    d, beta = 4, 1.0
    g = np.array([0.5, 1.0, 1.5, 2.0])
    D, Dinv = np.diag(g), np.diag(1 / g)
    V = rng.standard_normal((d, d))
    x = _sphere_points(rng, 8, d)
    rms = mf.Attention(beta, V=V, layer_norm="rms", gain=g)
    sphere = mf.Attention(beta, Q=D, K=D, V=Dinv @ V @ D)
    assert _relative(rms.velocity(x * g), sphere.velocity(x) * g) <= ROUND_OFF
    times = np.linspace(0.0, 2.0, 5)
    a = mf.simulate(rms, x * g, times, **TIGHT)
    b = mf.simulate(sphere, x, times, **TIGHT)
    assert a.attrs["success"] == 1 and a.attrs["max_sphere_deviation"] <= 1e-14
    assert np.abs(a["positions"].values / g - b["positions"].values).max() <= FLOW_TOL
    # Π_y is a projection onto T_y = (D^{-2} y)^⊥ along y: idempotent, oblique (not symmetric) for D ≠ cI
    geometry = TokenNormalization("rms", g).geometry(d)
    y = x[0] * g
    P = geometry.tangent(np.broadcast_to(y, (d, d)), np.eye(d)).T  # column k: Π_y e_k
    assert np.abs(P @ P - P).max() <= ROUND_OFF
    assert np.abs((y / g**2) @ P).max() <= ROUND_OFF and np.abs(P @ y).max() <= ROUND_OFF
    assert np.abs(P - P.T).max() > 0.1


def test_centred_layer_norm_is_sa_on_the_hyperplane_sphere():
    """Identity weights: y = √d U u with u the SA dynamics on S^{d-2} at β' = dβ (U a basis of Σ_k y_k = 0);
    the tokens stay centred and on |y| = √d to round-off; the energy is SA's at dβ; the layer is LayerNorm."""
    rng = np.random.default_rng(3)
    d, beta = 5, 0.8
    U = _hyperplane_frame(rng, d)
    u = _sphere_points(rng, 7, d - 1)
    y = np.sqrt(d) * u @ U.T
    ln = mf.Attention(beta, layer_norm="centred")
    sa = mf.Attention(d * beta)
    assert _relative(ln.velocity(y), np.sqrt(d) * sa.velocity(u) @ U.T) <= ROUND_OFF
    times = np.linspace(0.0, 3.0, 4)
    a = mf.simulate(ln, y, times, **TIGHT)
    b = mf.simulate(sa, u, times, **TIGHT)
    assert a.attrs["success"] == 1 and a.attrs["domain"] == "centred-sphere"
    assert np.abs(a["positions"].values - np.sqrt(d) * b["positions"].values @ U.T).max() <= FLOW_TOL
    for run in (a, mf.simulate(ln, y, times, method="layers", dt=0.1)):
        p = run["positions"].values
        assert np.abs(p.sum(axis=-1)).max() <= 1e-13  # centred to round-off
        assert np.abs(np.linalg.norm(p, axis=-1) - np.sqrt(d)).max() <= 1e-13  # radius √d
    assert _relative(a["energy"].values, b["energy"].values) <= FLOW_TOL
    assert np.all(np.diff(a["energy"].values) > 0)
    # the layer map is LayerNorm (population std, γ = 1, b = 0) of the residual step
    geometry = TokenNormalization("centred").geometry(d)
    v = rng.standard_normal(y.shape)
    z = y + 0.3 * v
    layer_norm = (z - z.mean(axis=-1, keepdims=True)) / z.std(axis=-1, keepdims=True)
    assert np.abs(geometry.layer(y, v, 0.3) - layer_norm).max() <= ROUND_OFF


def test_centred_energy_increases_with_symmetric_weights():
    """V = QᵀK symmetric: a gradient flow on the centred sphere (orthogonal projection), E increases."""
    rng = np.random.default_rng(4)
    d = 4
    A = rng.standard_normal((d, d))
    M = A @ A.T / d
    y = np.sqrt(d) * _sphere_points(rng, 6, d - 1) @ _hyperplane_frame(rng, d).T
    run = mf.simulate(mf.Attention(1.0, Q=np.eye(d), K=M, V=M, layer_norm="centred"), y, np.linspace(0, 2, 9))
    assert run.attrs["success"] == 1
    assert np.all(np.diff(run["energy"].values) > 0)


@pytest.mark.parametrize("layer_norm", ["rms", "centred"])
def test_layers_converge_at_order_one(layer_norm):
    """The layers y_{k+1} = N(y_k + h w(y_k)) approach the flow at T = 1 with slope 1 ± 0.1 over four h."""
    rng = np.random.default_rng(5)
    d = 4
    if layer_norm == "rms":
        g = np.array([0.5, 1.0, 1.5, 2.0])
        model, y = mf.Attention(1.0, layer_norm="rms", gain=g), _sphere_points(rng, 5, d) * g
    else:
        model = mf.Attention(1.0, layer_norm="centred")
        y = np.sqrt(d) * _sphere_points(rng, 5, d - 1) @ _hyperplane_frame(rng, d).T
    exact = mf.simulate(model, y, [0.0, 1.0], rtol=1e-12, atol=1e-14)["positions"].values[-1]
    steps = np.array([0.1, 0.05, 0.025, 0.0125])
    errors = [np.abs(mf.simulate(model, y, [0.0, 1.0], method="layers", dt=h)["positions"].values[-1] - exact).max()
              for h in steps]
    slope = np.polyfit(np.log(steps), np.log(errors), 1)[0]
    assert abs(slope - 1) <= 0.1, (errors, slope)


def test_checkpoint_resume_and_another_gain_refused(tmp_path, stop_after_checkpoint_writes):
    """The gain is in the attrs; an interrupted run resumes to the straight run bit for bit; a resume with
    another gain (or without the normalisation) is refused naming it."""
    rng = np.random.default_rng(6)
    g = np.array([0.5, 1.0, 2.0])
    y0 = _sphere_points(rng, 5, 3) * g
    model = mf.Attention(2.0, layer_norm="rms", gain=g)
    times = np.linspace(0.0, 2.0, 6)
    straight = mf.simulate(model, y0, times)
    assert (straight.attrs["layer_norm"], straight.attrs["gain"]) == ("rms", "[0.5, 1.0, 2.0]")
    assert "energy" not in straight  # an oblique projection: no energy
    path = tmp_path / "run.nc"
    stop_after_checkpoint_writes(3)
    with pytest.raises(CheckpointStop):
        mf.simulate(model, y0, times, checkpoint=path, checkpoint_interval=0.0)
    stop_after_checkpoint_writes.disarm()
    other = mf.Attention(2.0, layer_norm="rms", gain=[0.5, 1.0, 2.5])
    with pytest.raises(CheckpointError, match=r"gain=\[0.5, 1.0, 2.0\], but this run has gain=\[0.5, 1.0, 2.5\]"):
        mf.simulate(other, y0 * [1, 1, 1.25], times, checkpoint=path, resume=True)
    resumed = mf.simulate(model, y0, times, checkpoint=path, resume=True)
    assert resumed.attrs["success"] == 1 and resumed.attrs["resumed_at"] > 0
    assert np.array_equal(resumed["positions"].values, straight["positions"].values)


def test_energy_refused_by_name_for_an_unequal_gain():
    model = mf.Attention(2.0, layer_norm="rms", gain=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="gain D whose entries differ has no interaction energy"):
        mf.energy(model, np.eye(3) * [1.0, 2.0, 3.0])
    assert not model.has_energy
    assert mf.Attention(2.0, layer_norm="rms", gain=[2.0] * 3).has_energy


@pytest.mark.parametrize(("options", "match"), [
    (dict(layer_norm="batch"), "layer_norm must be None or one of"),
    (dict(layer_norm="rms", gain=[1.0, -1.0, 1.0]), "gain must be a 1-D array of positive finite numbers"),
    (dict(layer_norm="rms", gain=[1.0, 0.0, 1.0]), "gain must be a 1-D array of positive finite numbers"),
    (dict(layer_norm="rms", gain=[1.0, np.nan, 1.0]), "gain must be a 1-D array of positive finite numbers"),
    (dict(layer_norm="rms", gain=np.eye(3)), "gain must be a 1-D array of positive finite numbers"),
    (dict(layer_norm="rms", gain="wide"), "gain must be a 1-D array of positive finite numbers"),
    (dict(layer_norm="rms", gain=[1.0, 2.0], V=np.eye(3)), "gain has 2 entries but the tokens have dimension d = 3"),
    (dict(gain=[1.0, 2.0, 3.0]), "gain is the diagonal D of layer_norm='rms'"),
    (dict(layer_norm="centred", gain=[1.0, 2.0, 3.0]), "gain is the diagonal D of layer_norm='rms'"),
    (dict(layer_norm="rms", projection=False), "needs projection=True and rescaled=False"),
    (dict(layer_norm="centred", V=np.eye(2)), "layer_norm='centred' needs d >= 3"),
])
def test_bad_options(options, match):
    with pytest.raises(ValueError, match=match):
        mf.Attention(1.0, **options)


def test_bad_tokens():
    """Tokens off the manifold beyond sphere_tolerance, of the wrong d, or for 'centred' at d = 2 are refused
    naming x0; renormalize=True normalises them onto it."""
    rms = mf.Attention(1.0, layer_norm="rms", gain=[1.0, 2.0, 3.0])
    x = _sphere_points(np.random.default_rng(7), 4, 3)
    with pytest.raises(ValueError, match=r"x0 must lie on the ellipsoid \|D\^\{-1\} y\| = 1"):
        mf.simulate(rms, x, [0.0, 1.0])
    with pytest.raises(ValueError, match="gain has 3 entries but the tokens have dimension d = 4"):
        mf.simulate(rms, np.eye(4), [0.0, 1.0])
    ln = mf.Attention(1.0, layer_norm="centred")
    with pytest.raises(ValueError, match=r"x0 must lie on the centred sphere"):
        mf.simulate(ln, np.sqrt(3) * x, [0.0, 1.0])
    with pytest.raises(ValueError, match="layer_norm='centred' needs d >= 3"):
        mf.simulate(ln, np.array([[1.0, -1.0], [-1.0, 1.0]]), [0.0, 1.0])
    run = mf.simulate(rms, x, [0.0, 1.0], renormalize=True)
    y = run["positions"].values
    assert run.attrs["success"] == 1 and np.abs(np.linalg.norm(y / [1.0, 2.0, 3.0], axis=-1) - 1).max() <= 1e-15
    centred = mf.simulate(ln, x + 0.1, [0.0, 1.0], renormalize=True)["positions"].values[0]
    assert np.abs(centred.sum(axis=-1)).max() <= 1e-14

"""
The noisy phase transition
==========================

With noise :math:`\\sigma > 0` the self-attention equation (paper 2, arXiv:2312.10794, Problem 7)

.. math::

    \\partial_t \\rho + \\operatorname{div}(\\rho\\, X[\\rho]) = \\sigma \\Delta \\rho
    \\qquad \\text{on } S^{d-1}

has the uniform density as a stationary state for every :math:`\\sigma`. It loses stability at a
critical noise :math:`\\sigma_c(\\beta)`, and a concentrated (one-cluster) stationary state
appears. For the unnormalised model (USA) the transition is continuous below a switch
:math:`\\beta_*` and discontinuous above it: a fold, two stable states and hysteresis. This example
computes :math:`\\sigma_c` and :math:`\\beta_*`, follows branches of stationary states by
continuation, solves for a stationary state by Newton's method, and checks with ``mf.solve`` that
both stable states really are stable. Densities are taken with respect to the area measure of
:math:`S^{d-1}`; here :math:`d = 2`, the circle. See ``docs/noisy_transition.md``.
"""

import matplotlib.pyplot as plt
import numpy as np
import scipy.special

import meanfield as mf

# %%
# The critical noise
# ------------------
#
# About the uniform state the degree-:math:`l` modes grow at
# :math:`\lambda_l = l(l+d-2)(\kappa_l - \sigma)`, with
# :math:`\kappa_l = c_l(\beta)/(\beta |S^{d-1}|)` for USA and :math:`c_l` the Funk–Hecke multipliers of
# :math:`e^{\beta\langle x, y\rangle}`. The first mode to become unstable as :math:`\sigma` decreases
# is :math:`l = 1`, at :math:`\sigma_c = \kappa_1 = 2^{d/2-1}\Gamma(d/2) I_{d/2}(\beta)/\beta^{d/2}`; on
# the circle that is :math:`I_1(\beta)/\beta`.

beta = 5.0
usa = mf.SelfAttention(beta, normalized=False)
sigma_c = mf.critical_noise(usa, d=2)
print(f"sigma_c(beta = 5) = {sigma_c:.12f},  I_1(beta)/beta = {scipy.special.iv(1, beta) / beta:.12f}")

# %%
# Where the transition changes type: :math:`\beta_*`
# ---------------------------------------------------
#
# A weakly nonlinear expansion along the branch gives :math:`\sigma = \sigma_c + s_r r^2 + \dots` with
# :math:`r = |\int x\, \rho\, d\sigma|` the order parameter and the Landau coefficient :math:`s_r`
# (``mf.landau_coefficient``). :math:`s_r < 0`: the branch exists below :math:`\sigma_c` and is stable
# (continuous transition); :math:`s_r > 0`: it exists above :math:`\sigma_c`, is unstable, and turns
# at a fold :math:`\sigma_f > \sigma_c`. For USA the sign changes at
#
# .. math::
#
#     \frac{I_{d/2+1}(\beta_*)}{I_{d/2}(\beta_*)} = \frac{1}{d},
#
# :math:`\beta_* = 2.4469` on :math:`S^1` and :math:`1.8162` on :math:`S^2` (``mf.critical_beta``).

for d in (2, 3):
    b_star = mf.critical_beta(d)
    ratio = scipy.special.iv(d / 2 + 1, b_star) / scipy.special.iv(d / 2, b_star)
    print(f"d = {d}: beta_* = {b_star:.9f}, I_(d/2+1)/I_(d/2) at beta_* = {ratio:.12f} (1/d = {1 / d:.12f})")
for b in (1.5, 2.0, 3.0, 5.0):
    print(f"USA beta = {b}: s_r = {mf.landau_coefficient(mf.SelfAttention(b, normalized=False)):+.4f}")
print(f"SA  beta = 5.0: s_r = {mf.landau_coefficient(mf.SelfAttention(5.0)):+.4f}"
      "  (SA: negative at every beta, always continuous)")

# %%
# Branches by continuation
# ------------------------
#
# ``mf.continuation`` follows the branch of stationary states that leaves the uniform state at
# :math:`\sigma_c`, by pseudo-arclength continuation in the Gegenbauer (here Fourier) moments and
# :math:`\sigma`, and marks each point stable or unstable from the leading eigenvalue of the
# linearised dynamics. The first point off the uniform state measures the Landau coefficient,
# :math:`(\sigma - \sigma_c)/r^2 \approx s_r`. Two values of :math:`\beta` below :math:`\beta_*` and two above; stable parts
# solid, unstable dashed, folds as crosses, the uniform state on the axis (stable for
# :math:`\sigma > \sigma_c`).

fig, left = plt.subplots(figsize=(7, 4.5), layout="constrained")
branches = {}
for k, b in enumerate((1.5, 2.0, 3.0, 5.0)):
    model = mf.SelfAttention(b, normalized=False)
    sc = mf.critical_noise(model, d=2)
    branch = mf.continuation(model, d=2, noise_range=(0.3 * sc, 1.5 * sc), max_step=0.05)
    branches[b] = branch
    x = branch.noise.values / sc
    r = branch.order_parameter.values
    stable = branch.stable.values
    for part, style in ((stable, "-"), (~stable, "--")):
        left.plot(np.where(part, x, np.nan), np.where(part, r, np.nan), style, color=f"C{k}",
                  label=f"β = {b:g}" if style == "-" else None)
    left.plot(branch.fold_noise.values / sc, branch.fold_order_parameter.values, "x", color=f"C{k}", ms=9)
    folds = ", ".join(f"{f:.4f}" for f in branch.fold_noise.values) or "none"
    print(f"beta = {b}: sigma_c = {sc:.4f}, folds at sigma = {folds}, {branch.sizes['point']} points, "
          f"max residual {float(branch.residual.max()):.1e}")
    # the first point off the uniform state: (sigma - sigma_c)/r^2 against the Landau coefficient
    print(f"    (sigma - sigma_c)/r^2 at r = {r[1]:.4f}: {(branch.noise.values[1] - sc) / r[1] ** 2:+.4f}, "
          f"s_r = {mf.landau_coefficient(model):+.4f}")
left.plot([1, 1.5], [0, 0], "k-", lw=2)
left.plot([0.3, 1], [0, 0], "k--", lw=1)
left.set(xlim=(0.3, 1.5), ylim=(-0.02, 1), xlabel="σ / σ_c", ylabel="order parameter r",
         title="USA on S¹: stationary branches")
left.legend(fontsize=8)

# %%
# Two stable states at one noise level
# ------------------------------------
#
# At :math:`\beta = 5`, :math:`\beta > \beta_*`: between :math:`\sigma_c = 4.867` and the fold
# :math:`\sigma_f = 5.426` the uniform state and a concentrated state are both stable. At
# :math:`\sigma = 5.2`, ``mf.stationary_state`` finds the concentrated one by damped Newton on the
# self-consistency equation :math:`\rho = e^{\Psi[\rho]/\sigma} / \int e^{\Psi[\rho]/\sigma}` (for USA
# :math:`\Psi = \frac{1}{\beta}\int e^{\beta\langle x, y\rangle}\rho(y)\, d\sigma(y)`), and reports
# its order parameter, residual and stability.

sigma = 5.2
model = mf.SelfAttention(beta, normalized=False, noise=sigma)
state = mf.stationary_state(model, d=2)
print(f"Newton: {state.attrs['message']} in {int(state.iterations)} iterations, residual {float(state.residual):.1e}")
print(f"r = {float(state.order_parameter):.10f}, leading eigenvalue {float(state.leading_eigenvalue):.4f}, "
      f"stable: {bool(state.stable)}")
print(f"free energy F - F[uniform] = {float(state.free_energy):.4f} (< 0: the concentrated state is the global minimiser)")
print(f"uniform state: lambda_1 = sigma_c - sigma = {sigma_c - sigma:.4f} (< 0: stable too)")

# %%
# Both are checked by integrating the PDE with ``mf.solve`` (spectral, 128 nodes). From the Newton
# state (``mf.stationary_density`` evaluates it on the grid) the order parameter must not move; from
# the uniform density kicked in mode 1, :math:`\rho = (1 + 0.1\cos\theta)/2\pi` (:math:`r = 0.05`),
# the kick must decay at the rate
# :math:`\lambda_1 = \sigma_c - \sigma`. The concentrated state is a stiff balance of strong
# transport against strong diffusion, so its run takes small steps and is kept short.

circle = mf.Circle(128)
rho_star = mf.stationary_density(state, circle)
stay = mf.solve(model, rho_star, np.linspace(0.0, 2.0, 11), method="spectral")
print("concentrated:", stay.attrs["success"], stay.attrs["message"], "| steps:", stay.attrs["n_steps"])
print(f"  max |r(t) - r(Newton)| = {float(np.max(np.abs(stay.order_parameter - state.order_parameter))):.1e}")

kicked = mf.density(circle, (1 + 0.1 * np.cos(circle.theta)) / (2 * np.pi))
decay = mf.solve(model, kicked, np.linspace(0.0, 10.0, 41), method="spectral")
print("uniform + kick:", decay.attrs["success"], decay.attrs["message"])
late = decay.time.values >= 4
fitted = np.polyfit(decay.time.values[late], np.log(decay.order_parameter.values[late]), 1)[0]
print(f"  r: {float(decay.order_parameter[0]):.3f} -> {float(decay.order_parameter[-1]):.2e}; "
      f"fitted rate on t >= 4: {fitted:.5f}, lambda_1 = {sigma_c - sigma:.5f}")

# %%
# Middle: the two stable densities at :math:`\sigma = 5.2` on the circle. Right: the order parameter
# of both runs (``mf.plot.order_parameter_curve``) on a logarithmic axis: one flat at Newton's
# :math:`r`, one decaying to the uniform state.

fig, (middle, right) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
shifted = np.fft.fftshift(circle.theta)  # draw on [-π, π) so that the cluster at θ = 0 is in one piece
shifted = np.where(shifted >= np.pi, shifted - 2 * np.pi, shifted)
middle.plot(shifted, np.fft.fftshift(rho_star.values), label=f"concentrated, r = {float(state.order_parameter):.3f}")
middle.axhline(1 / (2 * np.pi), color="k", ls="--", label="uniform, r = 0")
middle.set(xlabel="θ [rad]", ylabel="ρ [1/rad]", title=f"two stable states, β = 5, σ = {sigma}")
middle.legend(fontsize=8)
mf.plot.order_parameter_curve(decay, ax=right, title="r(t) from both states (black: uniform + kick)")
right.plot(stay.time.values, stay.order_parameter.values, "C1", label="from Newton's state")
right.set_yscale("log")
right.set_ylim(1e-3, 1.5)
right.legend(fontsize=8)
plt.show()

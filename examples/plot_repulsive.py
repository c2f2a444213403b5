"""
Repulsive tokens and optimal configurations
===========================================

Paper 2 (arXiv:2312.10794, §9.1) turns the sign of the interaction: with :math:`V = -I` the tokens
repel, and the energy

.. math::

    E_\\beta[\\mu] = \\frac{1}{2\\beta} \\iint e^{\\beta \\langle x, y\\rangle}\\, d\\mu(x)\\, d\\mu(y)
    \\qquad \\Bigl(n \\text{ points: } H_\\beta = \\frac{1}{2\\beta n^2} \\sum_{i,j} e^{\\beta \\langle x_i, x_j\\rangle}\\Bigr)

*decreases* along the dynamics. Over probability measures its unique minimiser is the uniform
measure (Proposition 3.4); over :math:`n`-point configurations the minimisers include the sharp
configurations of Cohn and Kumar (Theorem 9.2): the regular polygon, the simplex, the
cross-polytope, the icosahedron, the 600-cell, the :math:`E_8` roots. This example shows the
density spreading to uniform, the sharp configurations with their exact energies and design
strengths, and random starts driven down :math:`H_\\beta` to the icosahedron. See
``docs/repulsive.md``. On the command line:

.. code-block:: bash

    meanfield solve --repulsive --unnormalized
    meanfield configurations --particles 12 --starts 20
"""

import matplotlib.pyplot as plt
import numpy as np
import scipy.special

import meanfield as mf

# %%
# A density spreads to uniform
# ----------------------------
#
# ``mf.RepulsiveSelfAttention`` is SA (or USA) with the velocity turned. About the uniform state
# every mode now decays; on the circle, SA mode :math:`k` at
# :math:`\lambda_k = -k^2 \bigl(I_k(\beta)/(\beta I_0(\beta)) + \sigma\bigr)`. The energy excess over
# the uniform value :math:`E_\beta[\text{uniform}] = I_0(\beta)/(2\beta)` is a sum of squared mode
# amplitudes, so it ends up decaying like :math:`e^{2\lambda_1 t}`. From a von Mises density
# (:math:`\kappa = 2`) at :math:`\beta = 2`, on 1024 nodes (the high modes are barely damped and are
# folded into fine structure; 256 nodes lose resolution at :math:`t \approx 3.75`, and the solver
# says so).

beta = 2.0
model = mf.RepulsiveSelfAttention(beta, normalized=True)
circle = mf.Circle(1024)
pde = mf.solve(model, mf.von_mises(circle, 0.0, 2.0), np.linspace(0.0, 6.0, 25))
print("success:", pde.attrs["success"], "-", pde.attrs["message"], "| method:", pde.attrs["method"])
uniform_energy = scipy.special.iv(0, beta) / (2 * beta)
print(f"E[uniform]: mf.energy = {mf.energy(model, mf.uniform(circle)):.15f}, I_0(beta)/(2 beta) = {uniform_energy:.15f}")
excess = pde.energy.values - uniform_energy
print("energy decreasing at every output:", bool(np.all(np.diff(pde.energy.values) < 0)))
late = pde.time.values >= 3.0
fitted = np.polyfit(pde.time.values[late], np.log(excess[late]), 1)[0]
lam1 = -(scipy.special.iv(1, beta) / (beta * scipy.special.iv(0, beta)))
print(f"lambda_1: model.growth_rate(1) = {model.growth_rate(1):.6f}, Bessel formula = {lam1:.6f}")
print(f"E - E[uniform]: {excess[0]:.4f} -> {excess[-1]:.2e}; fitted rate on t >= 3: {fitted:.4f}, 2 lambda_1 = {2 * lam1:.4f}")

# %%
# Left: the density map (``mf.plot.density_map``, its colour scale logarithmic). Right: the energy
# excess on a logarithmic axis against the slope :math:`2\lambda_1`.

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
mf.plot.density_map(pde, ax=left, title="SA-repulsive, β = 2, from von Mises κ = 2")
right.semilogy(pde.time.values, excess, "o-", ms=3, label="E_β(t) - E_β[uniform]")
right.semilogy(pde.time.values, excess[-1] * np.exp(2 * lam1 * (pde.time.values - pde.time.values[-1])),
               "k--", lw=0.8, label="slope 2λ_1")
right.set(xlabel="time t", ylabel="energy excess", title="the energy decays to the uniform value")
right.legend()

# %%
# Sharp configurations
# --------------------
#
# ``mf.sharp_configuration`` returns the candidates of Theorem 9.2 with the distribution of inner
# products every point sees, the exact :math:`H_\beta` and the design strength :math:`t` (the points
# integrate every polynomial of degree :math:`\le t` exactly). Both are recomputed from the points:
# :math:`H_\beta` by ``mf.energy`` of the repulsive USA model, the strength by
# ``mf.design_strength`` from the Gegenbauer moments
# :math:`M_k = \frac{1}{n^2}\sum_{i,j} P_k(\langle x_i, x_j\rangle)/P_k(1)`.

usa = mf.RepulsiveSelfAttention(1.0, normalized=False)
cases = [("polygon", {"n": 5}), ("simplex", {"d": 3}), ("cross_polytope", {"d": 3}), ("icosahedron", {}),
         ("600_cell", {})]
for name, options in cases:
    sharp = mf.sharp_configuration(name, **options)
    n, d = sharp.points.shape
    h_exact = sharp.energy(1.0)
    h_points = mf.energy(usa, sharp.points)
    print(f"{name:>14}: n = {n:3d} on S^{d - 1}, inner products {np.round(sharp.inner_products, 4)} "
          f"(x {sharp.multiplicities})")
    print(f"{'':>14}  strength {sharp.strength} (recomputed {mf.design_strength(sharp.points)}), "
          f"H_1 = {h_exact:.15f}, |H_1 - mf.energy| = {abs(h_exact - h_points):.1e}")

# %%
# Random starts down the energy
# -----------------------------
#
# ``mf.optimal_configurations`` drives random starts down :math:`H_\beta` (L-BFGS on unnormalised
# points :math:`x_i = y_i/|y_i|`) and names each end point when its energy (within 1e-10), its number
# of distinct inner products and its design strength all match a candidate. For 5 points on the
# circle and 4, 6, 12 points on :math:`S^2`, every start reaches the sharp configuration.

for n, d in ((5, 2), (4, 3), (6, 3), (12, 3)):
    found = mf.optimal_configurations(n, d, beta=1.0, starts=20, seed=11)
    names = [str(v) for v in found.configuration_name.values]
    share = ", ".join(f"{name} {frac:.0%}" for name, frac in zip(names, found.fraction.values) if frac > 0)
    print(f"n = {n:2d} on S^{d - 1}: {share}; max |H - exact| = {float(found.energy_gap.max()):.1e}, "
          f"iterations {int(found.iterations.min())}-{int(found.iterations.max())}")

# %%
# ``mf.plot.optimal_configurations`` draws the last search (12 points on :math:`S^2`): the energy of
# each start above the icosahedron's (floored at 1e-17; the identification tolerance dashed) and the
# fraction of starts per configuration.

fig = mf.plot.optimal_configurations(found)

# %%
# The repulsive flow
# ------------------
#
# The same minimum is reached by the dynamics itself: 12 particles drawn uniformly on :math:`S^2`
# and moved by the repulsive USA flow (``mf.simulate``) at :math:`\beta = 4`. The energy falls to the
# icosahedron's :math:`H_4` and the end points form a 5-design.

beta = 4.0
flow_model = mf.RepulsiveSelfAttention(beta, normalized=False)
x0 = mf.particles.uniform_sphere(12, 3, seed=1)
flow = mf.simulate(flow_model, x0, np.linspace(0.0, 30.0, 61))
icosahedron = mf.sharp_configuration("icosahedron")
print("success:", flow.attrs["success"], "-", flow.attrs["message"])
print(f"H_4(t = 30) - H_4(icosahedron) = {float(flow.energy[-1]) - icosahedron.energy(beta):.1e}")
end = flow.positions.isel(time=-1).values
print("design strength of the end points:", mf.design_strength(end))
print("distinct inner products at t = 30 (to 5 digits):", np.unique(np.round(end @ end.T, 5)))

# %%
# ``mf.plot.particle_snapshots`` shows the particles at :math:`t = 0, 2, 30` (hidden ones hollow).

fig = mf.plot.particle_snapshots(flow, times=[0.0, 2.0, 30.0])
plt.show()

r"""
Particles and the mean-field limit
==================================

The mean-field equation describes infinitely many tokens. With :math:`n` of them, the tokens
:math:`\theta_1, \dots, \theta_n` on :math:`S^1` follow the particle system (SA, no noise)

.. math::

    \dot\theta_i = \frac{\sum_j e^{\beta\cos(\theta_i - \theta_j)} \sin(\theta_j - \theta_i)}
                        {\sum_j e^{\beta\cos(\theta_i - \theta_j)}},

which is the same velocity field :math:`X[\mu]` evaluated at the empirical measure
:math:`\mu_n = \frac1n \sum_i \delta_{\theta_i}`. If :math:`\mu_n(0)` approaches :math:`\mu(0)`, then
:math:`\mu_n(t)` approaches the solution :math:`\mu(t)` of the PDE, with the stability estimate
:math:`W_1(\mu_n(t), \mu(t)) \le e^{Ct}\, W_1(\mu_n(0), \mu(0))`. This tutorial measures that:
it samples particles from a density, runs them with :func:`meanfield.simulate`, compares them
with the PDE by :func:`meanfield.compare`, fits how the distance falls with :math:`n`, and ends
with the order parameter and the clusters that form.

Distances are Wasserstein distances :math:`W_p` (not :math:`W_p^p`) with the geodesic distance on
the circle, so they are in radians; densities are with respect to arc length,
:math:`\int \rho\, d\sigma = 1`.
"""

# %%
# The PDE solution
# ----------------
#
# The initial law is a von Mises density :math:`\rho_0(\theta) \propto e^{\kappa\cos\theta}` with
# :math:`\kappa = 1` (normalised to :math:`\int\rho_0\, d\sigma = 1`), the model SA with
# :math:`\beta = 2`. Without noise ``method="auto"`` solves by finite volume; on 512 cells its error
# is far below the particle errors we are about to measure.

import matplotlib.pyplot as plt
import numpy as np

import meanfield as mf
from meanfield.particles import number_of_clusters

model = mf.SelfAttention(beta=2.0)
rho0 = mf.von_mises(mf.Circle(512), loc=0.0, kappa=1.0)
t = np.linspace(0.0, 4.0, 21)
pde = mf.solve(model, rho0, t)
print(pde.attrs["method"], "|", pde.attrs["message"])

# %%
# Sampling particles
# ------------------
#
# :func:`meanfield.sample` draws ``n`` particles from a density and returns an equally weighted
# empirical measure (``.points`` are the angles in :math:`[0, 2\pi)`, ``.weights`` are
# :math:`1/n`). A von Mises law is drawn exactly by ``scipy.stats``; any other circle density by
# inverting its CDF. The ``seed`` makes the draw reproducible.
#
# Already at :math:`t = 0` the sample differs from :math:`\rho_0`: for iid draws
# :math:`W_1(\mu_n(0), \rho_0)` is of order :math:`n^{-1/2}`. :func:`meanfield.wasserstein`
# computes it exactly (on :math:`S^1` through the cumulative distribution functions). The density
# enters either as atoms at the grid nodes (``density="atoms"``, the default) or as uniform
# cells around them (``density="cells"``, what ``compare`` uses); with 512 nodes the two differ
# in the fifth digit.

n = 1000
x0 = mf.sample(rho0, n, seed=1)
print("particles:", x0.points.shape, "weights sum to", x0.weights.sum())
print(f"W1(μ_n(0), ρ0) = {mf.wasserstein(rho0, x0, p=1):.5f} rad (atoms), "
      f"{mf.wasserstein(rho0, x0, p=1, density='cells'):.5f} rad (cells)")

# %%
# Simulating them
# ---------------
#
# :func:`meanfield.simulate` takes the same model, the particles (an empirical measure or a plain
# array of angles) and the output times. It returns a Dataset with ``positions`` over
# ``(time, particle)`` (angles), and ``energy``, ``order_parameter`` and ``mass`` over time,
# like ``solve``. Its attrs record the integrator (adaptive Dormand–Prince 5(4) by default, with
# ``rtol = 1e-8``) and the ``path`` used to evaluate the velocity: from :math:`n = 256` on the
# circle it is a non-uniform FFT (relative accuracy ``accuracy = 1e-10``) instead of the
# :math:`O(n^2)` direct sum.

particles = mf.simulate(model, x0, t)
print(particles.positions.dims, particles.positions.shape)
for name in ["method", "path", "rtol", "atol", "n_steps", "success", "message"]:
    print(f"{name:>8} = {particles.attrs[name]}")

# %%
# PDE against particles
# ---------------------
#
# :func:`meanfield.compare` evaluates, at every common output time, :math:`W_p(\rho(t), \mu_n(t))`
# (here :math:`p = 1`), the energy gap :math:`E_\beta[\mu_n] - E_\beta[\rho]`, the gap of the order
# parameters and of the first Fourier moments. Every variable has a ``system`` dimension (a
# single system here) and comes with its mean and standard deviation over systems. It refuses runs
# of different models, so a comparison cannot mix up :math:`\beta` or SA and USA.

gap = mf.compare(pde, particles)
print(gap.attrs["wasserstein_method"], "|", gap.attrs["wasserstein_algorithm"])
for k in range(0, t.size, 5):
    print(f"t = {t[k]:3.1f}: W1 = {float(gap.wasserstein[0, k]):.4f} rad, "
          f"energy gap = {float(gap.energy_gap[0, k]):+.5f}, order-parameter gap = {float(gap.order_parameter_gap[0, k]):+.5f}")

# %%
# The distance first grows, as the stability estimate allows (the dynamics amplifies differences
# while the mass concentrates), then levels off and falls as both measures gather into one
# cluster at :math:`\theta = 0`.

fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
ax.plot(gap.time, gap.wasserstein[0], "o-", ms=3)
ax.set_xlabel("time t")
ax.set_ylabel(r"$W_1(\rho(t), \mu_n(t))$ [rad]")
ax.set_title(f"SA β = 2, n = {n} iid particles against the PDE")
ax.grid(alpha=0.3)

# %%
# How the distance falls with n
# -----------------------------
#
# For each :math:`n` we run 8 independent systems at once: a 2-D array of angles of shape
# ``(systems, n)`` with ``domain="circle"`` is a batch, and ``compare`` then returns one distance
# per system. Each system draws from its own generator, seeded by ``(n, seed)``, so any system can
# be rerun alone. The slope of :math:`\log \overline{W_1}` against :math:`\log n` estimates the
# exponent; for iid starts the theory predicts :math:`-1/2` at :math:`t = 0`, and the stability
# estimate carries it to later times.

n_values = np.array([64, 256, 1024, 4096])
seeds = range(8)
t_sweep = t[::10]  # 0, 2, 4: compare needs the PDE at the same times, so select them
pde_sweep = pde.sel(time=t_sweep)
mean_w1 = []
for size in n_values:
    batch = np.stack([mf.sample(rho0, int(size), seed=np.random.default_rng([int(size), s])).points for s in seeds])
    runs = mf.simulate(model, batch, t_sweep, domain="circle")
    distances = mf.compare(pde_sweep, runs)
    mean_w1.append(distances.wasserstein_mean.values)
    print(f"n = {size:5d} ({runs.attrs['path']:>8} path): mean W1 at t = 0, 2, 4: "
          + ", ".join(f"{w:.4f}" for w in distances.wasserstein_mean.values))
mean_w1 = np.array(mean_w1)  # (n, time)

for k, tk in enumerate(t_sweep):
    slope, intercept = np.polyfit(np.log(n_values), np.log(mean_w1[:, k]), 1)
    print(f"t = {tk:.0f}: W1 ≈ {np.exp(intercept):.2f} n^({slope:.3f})")

# %%
# With 8 systems per :math:`n` the fitted exponent carries a statistical error of a few
# hundredths. (:func:`meanfield.meanfield_study` does the same study, with one sweep task per
# system, and returns the exponent with its standard error.)
#
# A deterministic start converges faster: ``method="quantile"`` places the particles at the midpoint
# quantiles :math:`F^{-1}((i + 1/2)/n)` of :math:`\rho_0`, and then :math:`W_1(\mu_n(0), \rho_0)` is
# of order :math:`1/n`. The PDE density enters as cells here, the representation in which the
# sampler is exact up to the grid.

quantile_w1 = [mf.wasserstein(rho0, mf.sample(rho0, int(size), method="quantile"), density="cells")
               for size in n_values]
quantile_slope = np.polyfit(np.log(n_values), np.log(quantile_w1), 1)[0]
print("quantile starts, W1 at t = 0:", ", ".join(f"{w:.2e}" for w in quantile_w1), f"| slope {quantile_slope:.3f}")

fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
for k, marker in zip(range(t_sweep.size), "osd"):
    ax.loglog(n_values, mean_w1[:, k], marker + "-", label=f"iid, t = {t_sweep[k]:.0f}")
ax.loglog(n_values, quantile_w1, "^-", label="quantile, t = 0")
ax.loglog(n_values, mean_w1[0, 0] * (n_values / n_values[0]) ** -0.5, "k--", lw=0.8, label=r"$n^{-1/2}$")
ax.loglog(n_values, quantile_w1[0] * (n_values / n_values[0]) ** -1.0, "k:", lw=0.8, label=r"$n^{-1}$")
ax.set_xlabel("particles n")
ax.set_ylabel(r"$W_1$ [rad]")
ax.legend(fontsize=8)

# %%
# Order parameter
# ---------------
#
# The order parameter :math:`r(t) = |\int x\, d\mu_t|` is the length of the mean of the tokens as
# points of :math:`\mathbb{R}^2`: 0 for the uniform law, 1 for a single Dirac. Both runs carry it
# as ``order_parameter``; from :math:`r(0) = I_1(1)/I_0(1) \approx 0.446` it rises towards 1 as
# the single cluster forms, and the particles follow the PDE to within the printed gap.

print(f"r(0): PDE {float(pde.order_parameter[0]):.4f}, particles {float(particles.order_parameter[0]):.4f}")
print(f"r(4): PDE {float(pde.order_parameter[-1]):.4f}, particles {float(particles.order_parameter[-1]):.4f}")
print(f"largest |gap| over time: {float(np.abs(gap.order_parameter_gap).max()):.4f}")

fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
mf.plot.order_parameter_curve(pde, ax=ax)
ax.plot(particles.time, particles.order_parameter, "o", ms=3, label=f"{n} particles")
ax.legend()

# %%
# Clusters
# --------
#
# From a nearly uniform start the picture changes: the uniform state is unstable, the fastest
# Fourier mode :math:`k^*(\beta)` of the linearised equation wins the early phase, and the tokens
# gather into a few clusters, which then merge on much longer time scales (metastability). At
# :math:`\beta = 9`, :func:`meanfield.most_unstable_mode` gives :math:`k^* = 4`.
#
# :func:`meanfield.particles.number_of_clusters` counts the groups of particles linked by chords
# shorter than a tolerance (single linkage). At :math:`t = 0` the 2000 iid uniform tokens are so
# dense that they form one linked group; later the count shows the clusters.

beta = 9.0
print("most unstable mode k* =", mf.most_unstable_mode(mf.SelfAttention(beta)).degree)
uniform_tokens = mf.sample(mf.uniform(mf.Circle(64)), 2000, seed=3)
clustering = mf.simulate(mf.SelfAttention(beta), uniform_tokens, np.linspace(0.0, 30.0, 31))
count = number_of_clusters(clustering, tolerance=0.1)
print("clusters at t = 0, 1, ..., 30:", count.values)
print("order parameter at t = 30:", round(float(clustering.order_parameter[-1]), 4))

fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
mf.plot.particle_paths(clustering, ax=ax, title=f"SA β = {beta:g}, 2000 tokens from uniform")

# %%
# A handful of clusters, of the order of :math:`k^*`, appear within a few time units, as the fastest
# modes of the random start (of size :math:`n^{-1/2}` in every mode) grow; neighbouring ones then
# merge, and the survivors stay apart for a long time. How many form and how many survive to
# :math:`t = 30` depends on the random start (rerun with another ``seed``), since clusters of
# unequal mass and spacing merge at very different times. The order parameter stays small: the
# clusters sit around the circle and nearly balance each other.

"""
The mean-field limit: particles against the PDE
===============================================

The continuity equation is the limit of the particle system as the number of particles
:math:`n \\to \\infty`. For :math:`n` particles drawn from :math:`\\rho_0` and moved by the particle
engine, with empirical measure :math:`\\mu_n(t)`, and the PDE solution :math:`\\mu(t)` from
:math:`\\rho_0`, stability of the flow gives

.. math::

    W_1(\\mu_n(t), \\mu(t)) \\le e^{Ct}\\, W_1(\\mu_n(0), \\mu(0)),

so the rate in :math:`n` is that of the initial sampling error. On the circle, iid samples have
:math:`W_1(\\mu_n(0), \\mu(0)) \\sim n^{-1/2}`; the deterministic midpoint-quantile sample has
:math:`W_1 \\sim n^{-1}`. ``mf.meanfield_study`` runs both engines over a grid of :math:`n` and seeds
and fits the exponent :math:`a` in :math:`W_1 \\approx c\\, n^{a}` at every output time; ``W_1`` is
the exact distance on :math:`S^1` (through the cumulative distribution functions), in radians.
This is ``validation/meanfield_limit.py`` on a smaller workload. On the command line:

.. code-block:: bash

    meanfield compare --beta 2 --particles 64 256 1024 4096 --systems 8
"""

import matplotlib.pyplot as plt
import numpy as np

import meanfield as mf

# %%
# iid samples
# -----------
#
# SA at :math:`\beta = 2` without noise, from the von Mises density
# :math:`\rho_0(\theta) \propto e^{\cos\theta}` on 512 nodes; :math:`n = 64, 256, 1024, 4096` particles,
# 16 seeds each, compared at :math:`t = 0, 0.5, 1` with the spectral PDE solution (the density is
# read as piecewise constant on cells, ``density="cells"``). The exponent is fitted per seed on
# log–log axes; printed is its mean over seeds with the standard error.

model = mf.SelfAttention(2.0)
rho0 = mf.von_mises(mf.Circle(512), 0.0, 1.0)
times = [0.0, 0.5, 1.0]
n_values = [64, 256, 1024, 4096]
study = mf.meanfield_study(model, rho0, times, n_values, seeds=range(16))
print(f"PDE ({study.attrs['pde_method']}): success = {study.attrs['success']}, {study.attrs['message']}")
for k, t in enumerate(study.time.values):
    a, se = float(study.exponent[k]), float(study.exponent_stderr[k])
    print(f"t = {t:.1f}: exponent {a:+.3f} +- {se:.3f}  (expected -1/2: {abs(a + 0.5) / se:.2f} standard errors off)")
print("mean W1 over seeds [rad]:")
print(study.wasserstein.mean("seed").to_pandas())

# %%
# The bound :math:`e^{Ct}` shows in the prefactor :math:`c(t)` of the fit, which grows slowly with
# :math:`t` while the exponent stays at :math:`-1/2`.

print("prefactor c(t):", np.round(study.prefactor.values, 3))

# %%
# Quantile samples
# ----------------
#
# ``sampler="quantile"`` places particle :math:`i` at the :math:`(i - 1/2)/n` quantile of
# :math:`\rho_0`. There is no randomness (one seed suffices) and the initial error is
# :math:`O(1/n)`: between consecutive atoms the two distribution functions differ by a sawtooth of
# mean height :math:`1/(4n)`, so :math:`W_1(\mu_n(0), \mu(0)) \approx 2\pi/(4n) = \pi/(2n)` whatever
# the density. The dynamics keeps the rate.

quantile = mf.meanfield_study(model, rho0, times, n_values, seeds=[0], sampler="quantile")
for k, t in enumerate(quantile.time.values):
    print(f"t = {t:.1f}: exponent {float(quantile.exponent[k]):+.4f} (expected -1)")
w0 = quantile.wasserstein.isel(seed=0, time=0).values
for n, w in zip(n_values, w0):
    print(f"n = {n:5d}: W1(0) = {w:.6e}, pi/(2n) = {np.pi / (2 * n):.6e}, ratio {w / (np.pi / (2 * n)):.6f}")

# %%
# The rate plot
# -------------
#
# ``mf.plot.meanfield_limit`` draws :math:`W_1` against :math:`n` on log–log axes at each output time,
# every seed and the mean, with the fitted slopes; left the iid study, right the quantile one.
# Given ``ax=`` it draws into the axes of one's own layout.

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
mf.plot.meanfield_limit(study, times=study.time.values, ax=left)
left.set_title("iid samples, 16 seeds", fontsize=10)
mf.plot.meanfield_limit(quantile, times=quantile.time.values, ax=right)
right.loglog(n_values, np.pi / (2 * np.array(n_values)), "k:", lw=1.5, label="π/(2n)")
right.legend(fontsize=8)
right.set_title("midpoint-quantile samples (the dashed n^(-1/2) is drawn for reference)", fontsize=10)
plt.show()

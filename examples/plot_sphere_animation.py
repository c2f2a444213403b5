"""
Self-attention on the sphere, animated
======================================

The mean-field equation of softmax self-attention (SA) on the sphere :math:`S^2`,

.. math::

    \\partial_t \\rho + \\operatorname{div}(\\rho\\, X[\\rho]) = \\sigma \\Delta \\rho, \\qquad
    X[\\rho](x) = \\frac{P^\\perp_x \\int e^{\\beta \\langle x, y\\rangle}\\, y\\, \\rho(y)\\, d\\sigma(y)}
                       {\\int e^{\\beta \\langle x, y\\rangle}\\, \\rho(y)\\, d\\sigma(y)}

(paper 2, arXiv:2312.10794, eq. (SA), with noise as in its Problem 7), solved by the spherical
harmonic scheme on a Gauss–Legendre grid. Densities are per steradian,
:math:`\\int_{S^2} \\rho\\, d\\sigma = 1`, so the uniform density is :math:`1/4\\pi`. From a slightly
perturbed uniform density the low degrees grow, the mass gathers into a few clusters, and these
then sit still (they are metastable). The noise :math:`\\sigma = 0.05` keeps every cluster at a
width the grid (band limit :math:`l_\\max = 31`) resolves. On the command line:

.. code-block:: bash

    meanfield solve --domain sphere --lmax 31 --noise 0.05 --t-final 30 --n-times 21
"""

import numpy as np

import meanfield as mf

# %%
# Solve
# -----
#
# SA at :math:`\beta = 4`, :math:`\sigma = 0.05`, from ``mf.perturbed_uniform`` (amplitude 0.01,
# seed 0: :math:`\rho_0 = (1 + 0.01 f)/4\pi` with :math:`f` a smooth random function scaled to
# :math:`\max|f| = 1`), 21 output times in :math:`[0, 30]`. ``method="auto"`` picks the spectral
# scheme here; it would stop, saying so, if the density outgrew the band limit.

model = mf.SelfAttention(4.0, noise=0.05)
sphere = mf.Sphere(31)
rho0 = mf.perturbed_uniform(sphere, amplitude=0.01, seed=0)
ds = mf.solve(model, rho0, np.linspace(0.0, 30.0, 21))
print("success:", ds.attrs["success"], "-", ds.attrs["message"])
print("method:", ds.attrs["method"], "-", ds.attrs["method_reason"])
print(f"steps: {ds.attrs['n_steps']}, max |mass - 1| = {float(np.max(np.abs(ds.mass.values - 1))):.1e}")
print(f"E_beta: {float(ds.energy[0]):.4f} -> {float(ds.energy[-1]):.4f}")

# %%
# Linear growth, measured
# -----------------------
#
# About the uniform state, degree :math:`l` grows at
# :math:`\lambda_l = l(l+1)\,(c_l(\beta)/(\beta c_0(\beta)) - \sigma)` with the Funk–Hecke multipliers
# :math:`c_l(\beta) = 4\pi\, i_l(\beta)` on :math:`S^2`; for :math:`l = 1`,
# :math:`c_1/c_0 = \coth\beta - 1/\beta`. The order parameter :math:`r = |\int x\, \rho\, d\sigma|` is
# the size of the degree-1 part, so while the perturbation is small it grows at :math:`\lambda_1`.

beta, sigma = 4.0, 0.05
lam1 = 2 * ((1 / np.tanh(beta) - 1 / beta) / beta - sigma)
print("lambda_l, l = 1..5:", np.round([model.growth_rate(l, 3) for l in range(1, 6)], 6))
print(f"lambda_1 = {model.growth_rate(1, 3):.10f}, closed form 2((coth b - 1/b)/b - sigma) = {lam1:.10f}")
t = ds.time.values
early = t <= 10
fitted = np.polyfit(t[early], np.log(ds.order_parameter.values[early]), 1)[0]
print(f"r(t) fitted on t <= 10: rate {fitted:.4f} against lambda_1 = {lam1:.4f}")

# %%
# Clusters at the end
# -------------------
#
# Counted as local maxima of the density on the grid (longitude periodic) above three times the
# uniform density.

rho_end = ds.density.isel(time=-1).values
padded = np.pad(rho_end, ((1, 1), (0, 0)), mode="constant", constant_values=-np.inf)
is_max = np.ones_like(rho_end, dtype=bool)
for dlat in (-1, 0, 1):
    for dlon in (-1, 0, 1):
        if dlat or dlon:
            neighbour = np.roll(padded, dlon, axis=1)[1 + dlat: padded.shape[0] - 1 + dlat]
            is_max &= rho_end >= neighbour
peaks = is_max & (rho_end > 3 / (4 * np.pi))
print(f"clusters at t = 30: {int(peaks.sum())}; largest density {rho_end.max():.3f} per steradian "
      f"(uniform {1 / (4 * np.pi):.4f})")
for lat, lon in zip(*np.nonzero(peaks)):
    print(f"  latitude {float(ds.latitude[lat]):+6.1f} deg, longitude {float(ds.longitude[lon]):6.1f} deg: "
          f"{rho_end[lat, lon]:.3f}")

# %%
# Static maps
# -----------
#
# ``mf.plot.sphere_maps`` draws the figure ``meanfield solve --domain sphere`` saves: orthographic
# maps at chosen times (logarithmic colour scale, viewed towards the mass) above
# :math:`E_\beta(t)`. ``mf.plot.sphere_map`` draws one map, here in latitude–longitude.

maps = mf.plot.sphere_maps(ds, times=[0.0, 15.0, 21.0, 30.0])
latlon = mf.plot.sphere_map(ds, 30.0, projection="latlon")

# %%
# The animation
# -------------
#
# ``mf.plot.animate_density`` makes a ``matplotlib.animation.FuncAnimation``, one frame per output
# time shown, each an orthographic map on one fixed logarithmic colour scale. To keep the page
# small it has 21 frames (:math:`\Delta t = 1.5`) drawn at 60 dots per inch;
# ``mf.plot.save_animation(anim, "sphere.gif")`` would write it as a GIF.

anim = mf.plot.animate_density(ds, interval=250)
anim._fig.set_dpi(60)  # the animation's figure (see the docstring of animate_density)

"""
The main job: self-attention on the circle
==========================================

This is what ``meanfield solve`` runs when it is given no options: the mean-field equation of
softmax self-attention (SA) on the circle :math:`S^1`,

.. math::

    \\partial_t \\rho + \\operatorname{div}(\\rho\\, X[\\rho]) = \\sigma \\Delta \\rho, \\qquad
    X[\\rho](x) = \\frac{P^\\perp_x \\int e^{\\beta \\langle x, y\\rangle}\\, y\\, \\rho(y)\\, d\\sigma(y)}
                       {\\int e^{\\beta \\langle x, y\\rangle}\\, \\rho(y)\\, d\\sigma(y)},

(paper 2, arXiv:2312.10794, eq. (SA) with the noise of its Problem 7) at inverse temperature
:math:`\\beta = 4` and noise :math:`\\sigma = 0.01`, from a slightly perturbed uniform density, for
:math:`t \\in [0, 20]`, by the Fourier pseudo-spectral scheme. Densities are taken with respect to
arc length: :math:`\\int_0^{2\\pi} \\rho\\, d\\theta = 1`, so the uniform density is
:math:`1/2\\pi`.

On the command line the same run is

.. code-block:: bash

    meanfield solve

which writes ``meanfield_solve_SA_beta4_noise0.01_circle_spectral.nc`` and a PNG beside it (the
density map drawn below). Here it is done through the Python API, and nothing is written to disk.
"""

import matplotlib.pyplot as plt
import numpy as np
import scipy.special

import meanfield as mf

# %%
# The initial density and the model
# ---------------------------------
#
# The command line starts from ``mf.perturbed_uniform`` on 512 nodes with amplitude
# :math:`\varepsilon = 0.01` and seed 0:
# :math:`\rho_0(\theta) = \frac{1}{2\pi}\bigl(1 + \varepsilon f(\theta)\bigr)`, where
# :math:`f = \sum_{k=1}^{8} (a_k \cos k\theta + b_k \sin k\theta)/k` with standard normal
# :math:`a_k, b_k`, scaled to :math:`\max |f| = 1`.

beta, noise = 4.0, 0.01
model = mf.SelfAttention(beta, normalized=True, noise=noise)  # SA; normalized=False would be USA
circle = mf.Circle(512)
rho0 = mf.perturbed_uniform(circle, amplitude=0.01, seed=0)
print(model)
print(f"mass of rho0 = {np.sum(rho0.values * circle.weights):.15f}")

# %%
# Linear theory: which modes grow
# -------------------------------
#
# About the uniform state, Fourier mode :math:`k` grows at the rate (DESIGN §2, the circle case
# of :math:`\lambda_l = l(l+d-2)\,(c_l(\beta)/(\beta c_0(\beta)) - \sigma)`)
#
# .. math::
#
#     \lambda_k = k^2 \left( \frac{I_k(\beta)}{\beta\, I_0(\beta)} - \sigma \right),
#
# with :math:`I_k` the modified Bessel functions. ``model.growth_rate(k)`` returns it; we check it
# against the formula written out with ``scipy.special.iv``. The fastest mode,
# :math:`k^* = 3`, and its neighbour :math:`k = 2` grow at nearly the same rate.

exact = {k: k**2 * (scipy.special.iv(k, beta) / (beta * scipy.special.iv(0, beta)) - noise) for k in range(1, 7)}
for k in range(1, 7):
    print(f"k = {k}: growth_rate = {model.growth_rate(k):+.12f}, Bessel formula = {exact[k]:+.12f}")
print("most unstable mode k* =", mf.most_unstable_mode(model).degree)

# %%
# Solve
# -----
#
# 201 output times in :math:`[0, 20]`. ``method="spectral"`` is what ``method="auto"`` picks
# here (with noise the density stays smooth); the scheme stops and says so if the spectrum's tail
# rises above its tolerance, so ``success = 1`` means the run was resolved to the end. Mass is
# conserved to round-off.

t = np.linspace(0.0, 20.0, 201)
ds = mf.solve(model, rho0, t, method="spectral")
print("success:", ds.attrs["success"], "-", ds.attrs["message"])
print("scheme:", ds.attrs["scheme"], "| steps:", ds.attrs["n_steps"], "| rejected:", ds.attrs["n_rejected"])
print(f"max |mass - 1| over the run = {float(np.max(np.abs(ds.mass.values - 1))):.1e}")
print(f"E_beta(0) = {float(ds.energy[0]):.6f},  E_beta(20) = {float(ds.energy[-1]):.6f}")
print(f"uniform density's energy I_0(beta)/(2 beta) = {scipy.special.iv(0, beta) / (2 * beta):.6f}")

# %%
# The density map
# ---------------
#
# ``mf.plot.density_map`` draws the figure that ``meanfield solve`` saves: :math:`\rho(t, \theta)`
# on a logarithmic colour scale above the interaction energy
# :math:`E_\beta[\rho] = \frac{1}{2\beta} \iint e^{\beta \langle x, y\rangle} \rho(x) \rho(y)`
# (paper 2, eq. (3.5)). The perturbation grows for a few time units, then the mass gathers into
# clusters, each kept at a width of order :math:`\sqrt{\sigma}` by the noise.
#
# The ``mf.plot`` functions return a :class:`~matplotlib.figure.Figure` built without pyplot (there is
# nothing to close, and ``plt.show()`` does not know it): a notebook shows it as the value of a cell,
# a script writes it with ``fig.savefig("density.png")``.

fig = mf.plot.density_map(ds)

# %%
# Counting the clusters at :math:`t = 20`: circular runs of nodes where the density exceeds ten
# times the uniform value. Two, not :math:`k^* = 3`: mode 2 grows almost as fast as mode 3
# (0.528 against 0.574) and this seed gives it a twice larger start (right panel below).

above = ds.density.isel(time=-1).values > 10 / (2 * np.pi)
runs = int(np.sum(above & ~np.roll(above, 1)))
print(f"clusters at t = 20: {runs}")
print(f"largest density at t = 20: {float(ds.density.isel(time=-1).max()):.2f} per radian")

# %%
# The energy and the growth rates, measured
# -----------------------------------------
#
# Left: :math:`E_\beta(t)` by ``mf.plot.energy_curve``. Right: the Fourier coefficients
# :math:`|\hat\rho_k(t)|` of the computed density for :math:`k = 1, 2, 3`, with the slopes
# :math:`e^{\lambda_k t}` of the linear theory (dashed). The rates fitted on :math:`t \le 3`,
# while the perturbation is still small, are printed against :math:`\lambda_k`. (Modes
# :math:`k \ge 4` start two orders of magnitude smaller and are soon driven by products of the
# lower modes, so their early slope is not :math:`\lambda_k`.)

coefficients = np.abs(np.fft.rfft(ds.density.values, axis=1)) / circle.n
early = t <= 3.0
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
mf.plot.energy_curve(ds, ax=left)
for k in (1, 2, 3):
    fitted = np.polyfit(t[early], np.log(coefficients[early, k]), 1)[0]
    print(f"k = {k}: fitted rate {fitted:.4f}, lambda_k = {model.growth_rate(k):.4f}, "
          f"relative difference {abs(fitted / model.growth_rate(k) - 1):.1e}")
    right.semilogy(t, coefficients[:, k], color=f"C{k}", label=f"k = {k}")
    right.semilogy(t[t <= 8], coefficients[0, k] * np.exp(model.growth_rate(k) * t[t <= 8]), "k--", lw=0.8)
right.set(xlabel="t", ylabel="|Fourier coefficient of ρ|", title="linear growth: measured (solid), exp(λ_k t) (dashed)")
right.legend()
plt.show()

"""
Your own interaction: a kernel and a potential on the circle
============================================================

``mf.Interaction`` takes an interaction kernel :math:`W(t)` of :math:`t = \\langle x, y\\rangle` and an
external potential :math:`U` as data and runs them through every engine: the density PDE (``mf.solve``),
the particles (``mf.simulate``), the energy (``mf.energy``) and their comparison (``mf.compare``). The
equation (docs/interactions.md), with densities taken with respect to arc length
(:math:`\\int_0^{2\\pi} \\rho\\, d\\theta = 1`) and :math:`P^\\perp_x y = y - \\langle x, y\\rangle x`, is

.. math::

    \\partial_t \\rho + \\operatorname{div}(\\rho\\, X[\\rho]) = \\sigma \\Delta \\rho, \\qquad
    X[\\rho](x) = -P^\\perp_x \\int W'(\\langle x, y\\rangle)\\, y\\, d\\rho(y) - \\nabla U(x),

and particles move by :math:`\\dot x_i = X[\\mu_n](x_i)`, :math:`\\mu_n = \\frac1n \\sum_j \\delta_{x_j}`; in angles,
:math:`\\dot\\theta_i = \\frac1n \\sum_j W'(\\cos(\\theta_i - \\theta_j)) \\sin(\\theta_i - \\theta_j) - U'(\\theta_i)`.
Without normalisation and noise this is the Wasserstein gradient flow of

.. math::

    E[\\rho] = \\frac12 \\iint W(\\langle x, y\\rangle)\\, d\\rho(x)\\, d\\rho(y) + \\int U\\, d\\rho .

About the uniform state (:math:`U = 0`) Fourier mode :math:`k` grows at the rate
:math:`\\lambda_k = -k^2 (\\hat\\lambda_k / 2\\pi + \\sigma)`, with :math:`\\hat\\lambda_k` the Funk–Hecke
multipliers of :math:`W`,
:math:`\\int_0^{2\\pi} W(\\cos(\\theta - \\varphi)) e^{ik\\varphi} d\\varphi = \\hat\\lambda_k e^{ik\\theta}`.
Self-attention is the case :math:`W(t) = -e^{\\beta t}/\\beta`: paper 2's (USA) without normalisation and (SA)
when the interaction is divided by :math:`\\int |W'(\\langle x, y\\rangle)|\\, d\\rho(y)` (arXiv:2312.10794).
"""

import matplotlib.pyplot as plt
import numpy as np
import scipy.special

import meanfield as mf

# %%
# A kernel written as a Python function
# -------------------------------------
#
# Attraction at short range and a weaker repulsion at long range, as Gaussians of the chord distance
# :math:`|x - y|^2 = 2 - 2t`:
#
# .. math::
#
#     W(t) = -e^{-(2 - 2t)/\varepsilon_a} + c\, e^{-(2 - 2t)/\varepsilon_r},
#     \qquad \varepsilon_a = 0.5,\ \varepsilon_r = 4,\ c = 2.
#
# ``mf.Kernel.function`` takes any vectorised function of :math:`t \in [-1, 1]`; its multipliers are computed by
# Gauss–Jacobi quadrature and its derivative from a Chebyshev interpolant. Here they have a closed form:
# :math:`e^{-(2-2t)/\varepsilon}` is :math:`e^{-\kappa} e^{\kappa t}` with :math:`\kappa = 2/\varepsilon`, whose
# multipliers on the circle are :math:`2\pi e^{-\kappa} I_k(\kappa)` (``scipy.special.ive``), so
#
# .. math::
#
#     \lambda_k = k^2 \bigl(e^{-4} I_k(4) - 2 e^{-1/2} I_k(1/2)\bigr).
#
# The same kernel from the named families, :math:`-` ``Kernel.gaussian(0.5)`` :math:`+ 2` ``Kernel.gaussian(4)``,
# and as a formula string, gives the same multipliers.

EPS_A, EPS_R, C = 0.5, 4.0, 2.0


def w(t):
    return -np.exp(-(2 - 2 * t) / EPS_A) + C * np.exp(-(2 - 2 * t) / EPS_R)


kernel = mf.Kernel.function(w)
model = mf.Interaction(kernel)
k = np.arange(9)
exact = 2 * np.pi * (-scipy.special.ive(k, 2 / EPS_A) + C * scipy.special.ive(k, 2 / EPS_R))
for name, other in (("function", kernel),
                    ("families", -mf.Kernel.gaussian(EPS_A) + C * mf.Kernel.gaussian(EPS_R)),
                    ("formula", mf.Kernel.formula("-exp(-(2 - 2*t)/0.5) + 2*exp(-(2 - 2*t)/4)"))):
    multipliers = other.multipliers(9, 2)
    values = multipliers.values * np.exp(multipliers.log_scale)
    print(f"{name:>8}: max_k |multiplier - closed form| = {np.max(np.abs(values - exact)):.1e}")
rates_exact = k[1:] ** 2 * (scipy.special.ive(k[1:], 2 / EPS_A) - C * scipy.special.ive(k[1:], 2 / EPS_R))
print("growth rates lambda_k, k = 1..8:", np.round(model.growth_rate(k[1:]), 4))
print(f"max |growth_rate - Bessel formula| = {np.max(np.abs(model.growth_rate(k[1:]) - rates_exact)):.1e}; "
      f"most unstable k = {k[1:][np.argmax(rates_exact)]}")
uniform_energy = exact[0] / (4 * np.pi)
print(f"E[uniform]: mf.energy = {mf.energy(model, mf.uniform(mf.Circle(256))):.15f}, "
      f"lambda_0/(4 pi) = {uniform_energy:.15f}")

# %%
# Mode 1 decays (the long-range repulsion), modes 2 to 8 grow, mode 3 fastest: the uniform state should
# break into three clusters.

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8), layout="constrained")
angle = np.linspace(-np.pi, np.pi, 401)
left.plot(angle, w(np.cos(angle)), label="W(cos θ)")
left.plot(angle, kernel.derivative(np.cos(angle)), "--", label="W'(cos θ)")
left.set(xlabel="θ − φ", title="the kernel as a function of the angle between x and y")
left.legend()
right.bar(k[1:], rates_exact, color="0.8", label=r"$k^2\,(e^{-4} I_k(4) - 2 e^{-1/2} I_k(1/2))$")
right.plot(k[1:], model.growth_rate(k[1:]), "C3o", label="model.growth_rate(k)")
right.axhline(0.0, color="k", lw=0.6)
right.set(xlabel="Fourier mode k", ylabel="λ_k", title="linear rates about the uniform state")
right.legend(fontsize=8)

# %%
# The density PDE
# ---------------
#
# From a perturbed uniform density (amplitude :math:`10^{-2}`, seed 0) on 1024 cells, without noise. ``mf.solve``
# picks the finite-volume scheme (the density concentrates; the reason is recorded). The density grows
# three clusters, which then contract towards Diracs; the grid resolves them up to :math:`t \approx 15.2`
# (after that the scheme warns), so the run stops at :math:`t = 15`. While the perturbation is small, the
# Fourier coefficients :math:`|\hat\rho_k(t)|` grow at the rates :math:`\lambda_k` (fitted on :math:`t \le 5`,
# for :math:`k = 2, 3`; higher modes are soon driven by products of these). The energy never increases.

circle = mf.Circle(1024)
rho0 = mf.perturbed_uniform(circle, amplitude=0.01, seed=0)
t = np.linspace(0.0, 15.0, 61)
pde = mf.solve(model, rho0, t)
print("method:", pde.attrs["method"], "-", pde.attrs["method_reason"])
print("success:", pde.attrs["success"], "-", pde.attrs["message"], "| steps:", pde.attrs["n_steps"])
coefficients = np.abs(np.fft.rfft(pde.density.values, axis=1)) / circle.n
early = t <= 5.0
for mode in (2, 3):
    fitted = np.polyfit(t[early], np.log(coefficients[early, mode]), 1)[0]
    print(f"k = {mode}: fitted rate {fitted:.4f}, lambda_k = {model.growth_rate(mode):.4f} "
          f"(relative difference {abs(fitted / model.growth_rate(mode) - 1):.1e})")
print(f"E(0) = {float(pde.energy[0]):.6f} (uniform: {uniform_energy:.6f}), E(15) = {float(pde.energy[-1]):.6f}; "
      f"non-increasing: {bool(np.all(np.diff(pde.energy.values) <= 1e-12))}")
above = pde.density.isel(time=-1).values > 10 / (2 * np.pi)
print("clusters at t = 15:", int(np.sum(above & ~np.roll(above, 1))))

fig = mf.plot.density_map(pde, title="the user's kernel W on 1024 cells, no noise")

# %%
# The particles, and the distance between the two
# -----------------------------------------------
#
# 2000 particles at the midpoint quantiles :math:`\theta_i = F_0^{-1}((i + 1/2)/n)` of :math:`\rho_0`
# (``mf.sample(..., method="quantile")``), moved by ``mf.simulate`` (Dormand–Prince; the kernel sums by NUFFT,
# its harmonics decaying fast). ``mf.compare`` gives :math:`W_1(\rho(t), \mu_n(t))` at every output: at
# :math:`t = 0` it is :math:`\pi/(2n)`, the distance of the quantile atoms to their cells, and the flow keeps it
# to three digits up to :math:`t = 12.5`. It grows as the clusters contract towards the cell width
# :math:`2\pi/1024 = 6.1 \cdot 10^{-3}`, the scale below which the finite-volume density cannot follow a Dirac.
# The energies differ by :math:`2 \cdot 10^{-5}` at most.

n = 2000
particles = mf.simulate(model, mf.sample(rho0, n, seed=1, method="quantile"), t)
print("particles:", particles.attrs["method"], "on the", particles.attrs["path"], "path, success",
      particles.attrs["success"])
gap = mf.compare(pde, particles)
w1 = gap.wasserstein.values[0]
print(f"W1 at t = 0: {w1[0]:.7f}, pi/(2n) = {np.pi / (2 * n):.7f}")
print("W1 at t = 5, 10, 12.5, 15:", np.round(w1[[20, 40, 50, 60]], 6))
print(f"max |E[mu_n] - E[rho]| = {float(np.abs(gap.energy_gap).max()):.1e}")

# %%
# ``mf.plot.comparison`` draws the distance above the energy and order-parameter gaps.

fig = mf.plot.comparison(gap)

# %%
# Adding a potential
# ------------------
#
# A zonal potential :math:`U(x) = f(\langle x, e_2\rangle)` is given by its profile :math:`f`, here the formula
# ``"-0.3*t"``: :math:`U(\theta) = -0.3 \sin\theta`, which pulls the mass towards :math:`\theta = \pi/2`. The
# energy gains :math:`\int U\, d\rho`. Three checks of the energy of particles, each computed a different way:
# by hand, :math:`E = \frac{1}{2n^2}\sum_{i,j} W(\cos(\theta_i - \theta_j)) + \frac1n \sum_i U(\theta_i)` (the
# pair :math:`i = j` included); by ``mf.energy``; and the ``energy`` recorded by ``mf.simulate``. Then the PDE and
# 2000 particles on :math:`t \in [0, 5]` (the PDE grid resolves the cluster in the well until
# :math:`t \approx 5.75`): the mass gathers into a cluster in the well at :math:`\pi/2`, and what is left
# begins to bunch on the far side.

tilted = mf.Interaction(kernel, potential="-0.3*t")
theta = mf.sample(rho0, 500, seed=2).points
by_hand = 0.5 * np.mean(w(np.cos(theta[:, None] - theta[None, :]))) + np.mean(-0.3 * np.sin(theta))
print(f"E of 500 particles: by hand {by_hand:.15f}, mf.energy {mf.energy(tilted, theta):.15f}")
print(f"potential part: mf.energy(tilted) - mf.energy(no potential) = "
      f"{mf.energy(tilted, theta) - mf.energy(model, theta):.15f}, mean of U = {np.mean(-0.3 * np.sin(theta)):.15f}")

t2 = np.linspace(0.0, 5.0, 21)
rho_tilted = mf.solve(tilted, rho0, t2)
particles_tilted = mf.simulate(tilted, mf.sample(rho0, n, seed=1, method="quantile"), t2)
gap_tilted = mf.compare(rho_tilted, particles_tilted)
end = particles_tilted.positions.isel(time=-1).values
print(f"simulate's energy at t = 5: {float(particles_tilted.energy[-1]):.12f}, "
      f"mf.energy of the positions: {mf.energy(tilted, end):.12f}")
print(f"max_t W1 = {float(gap_tilted.wasserstein.max()):.2e}; E(0) = {float(rho_tilted.energy[0]):.5f} -> "
      f"E(5) = {float(rho_tilted.energy[-1]):.5f}, non-increasing: {bool(np.all(np.diff(rho_tilted.energy) <= 1e-12))}")
print(f"order parameter |int x d rho| at t = 5: PDE {float(rho_tilted.order_parameter[-1]):.5f}, "
      f"particles {float(particles_tilted.order_parameter[-1]):.5f}")

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8), layout="constrained")
for time, colour in ((1.0, "C0"), (3.0, "C1"), (5.0, "C3")):
    left.plot(rho_tilted.theta, rho_tilted.density.sel(time=time), color=colour, label=f"PDE, t = {time:g}")
    left.hist(particles_tilted.positions.sel(time=time), bins=128, range=(0, 2 * np.pi), density=True,
              histtype="step", color=colour, alpha=0.6)
left.axvline(np.pi / 2, color="k", ls=":", lw=0.8)
left.set(xlabel="θ", ylabel="ρ(t, θ)", yscale="log", ylim=(1e-2, None),
         title="with U = −0.3 sin θ: PDE (lines), particle histograms (steps)")
left.legend(fontsize=8)
right.plot(t2, rho_tilted.energy, label="PDE")
right.plot(t2, particles_tilted.energy, "--", label=f"{n} particles")
right.set(xlabel="t", ylabel="E[ρ]", title="energy with the potential")
right.legend()

# %%
# Self-attention as a kernel
# --------------------------
#
# With :math:`W(t) = -e^{\beta t}/\beta` (``-mf.Kernel.exponential(beta) / beta``, multipliers in closed form)
# the interaction *is* self-attention: normalised, ``mf.SelfAttention(beta)`` (SA); unnormalised,
# ``mf.SelfAttention(beta, normalized=False)`` (USA). The PDE runs the same scheme on the same multipliers: the
# densities come out identical, with the same number of steps. The particles are summed differently (direct
# sums for the user's kernel, compiled per-system kernels for ``SelfAttention``) and agree to round-off.
# The energy's sign is the only difference: the user's energy is
# :math:`\frac12 \iint W = -E_\beta`, with :math:`E_\beta = \frac{1}{2\beta} \iint e^{\beta\langle x, y\rangle}`
# (paper 2, (3.5)), which the dynamics increases. :math:`\beta = 4`, :math:`\sigma = 0.01` on 256 nodes by the
# spectral scheme (SA on :math:`t \in [0, 10]`; USA, faster by the factor :math:`e^\beta`, on :math:`[0, 0.4]`), and 64
# particles without noise.

beta, noise = 4.0, 0.01
rho_sa = mf.perturbed_uniform(mf.Circle(256), amplitude=0.01, seed=0)
for normalized, t_end in ((True, 10.0), (False, 0.4)):
    times = np.linspace(0.0, t_end, 21)
    mine = mf.Interaction(-mf.Kernel.exponential(beta) / beta, noise=noise, normalized=normalized)
    builtin = mf.SelfAttention(beta, noise=noise, normalized=normalized)
    a, b = (mf.solve(m, rho_sa, times, method="spectral") for m in (mine, builtin))
    line = (f"{b.attrs['model']}: max |rho - rho_builtin| = {float(np.abs(a.density - b.density).max()):.1e}, "
            f"steps {a.attrs['n_steps']} and {b.attrs['n_steps']}, "
            f"max |E + E_beta| = {float(np.abs(a.energy + b.energy).max()):.1e}")
    if "free_energy" in a and "free_energy" in b:
        line += f", max |F - F_builtin| = {float(np.abs(a.free_energy - b.free_energy).max()):.1e}"
    print(line)
    x0 = mf.sample(rho_sa, 64, seed=3).points
    pa, pb = (mf.simulate(m, x0, times) for m in (mf.Interaction(-mf.Kernel.exponential(beta) / beta,
                                                                 normalized=normalized),
                                                  mf.SelfAttention(beta, normalized=normalized)))
    drift = np.angle(np.exp(1j * (pa.positions.values - pb.positions.values)))
    print(f"     64 particles: max |theta - theta_builtin| = {np.abs(drift).max():.1e} "
          f"({pa.attrs['path']} sums against {pb.attrs['path']})")
uniform = mf.uniform(mf.Circle(256))
print(f"mf.energy of the uniform density: user kernel {mf.energy(mine, uniform):.15f}, "
      f"SelfAttention {mf.energy(builtin, uniform):.15f}, -I_0(4)/8 = {-scipy.special.iv(0, beta) / (2 * beta):.15f}")
plt.show()

r"""
Solve your first equation
=========================

This tutorial solves the mean-field equation of self-attention on the circle :math:`S^1`,

.. math::

    \partial_t \rho + \operatorname{div}(\rho\, X[\rho]) = \sigma \Delta \rho,
    \qquad
    X[\rho](x) = \frac{P^\perp_x \int e^{\beta \langle x, y\rangle}\, y\, \rho(y)\, d\sigma(y)}
                       {\int e^{\beta \langle x, y\rangle}\, \rho(y)\, d\sigma(y)},

(the SA model; USA is the same velocity without the denominator), starting from a slightly
perturbed uniform density. Along the way it shows what :func:`meanfield.solve` returns and how to
read it, checks the linear growth rate of a Fourier mode against the exact formula, explains how
a numerical method is chosen, draws the result with :mod:`meanfield.plot`, and saves it to a
NetCDF file and reads it back.

Two normalisations hold everywhere in the library:

- a density is taken with respect to the area measure :math:`\sigma` of the domain, so
  :math:`\int \rho\, d\sigma = 1` and the uniform density on :math:`S^1` is :math:`1/2\pi`;
- angles, and so Wasserstein distances, are in radians.
"""

# %%
# The grid
# --------
#
# :class:`meanfield.Circle` with ``n`` nodes is the uniform grid
# :math:`\theta_j = 2\pi j/n` on :math:`S^1`. Its ``weights`` are the quadrature weights of the
# area measure (here all equal to :math:`2\pi/n`), so they sum to :math:`|S^1| = 2\pi`.

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import xarray as xr
from scipy.special import iv

import meanfield as mf

circle = mf.Circle(256)
print(circle)
print("first nodes [rad]:", circle.theta[:3])
print("sum of the weights:", circle.weights.sum(), " (2π =", 2 * np.pi, ")")

# %%
# An initial density
# ------------------
#
# :func:`meanfield.density` takes node values or, as here, a function of the angle, and
# normalises it to unit mass. We perturb the uniform state by a mode-3 cosine of relative size
# :math:`\varepsilon = 10^{-2}`:
#
# .. math::
#
#     \rho_0(\theta) = \frac{1 + \varepsilon \cos 3\theta}{2\pi}.
#
# After normalisation the values sit around :math:`1/2\pi \approx 0.159` and the mass is 1.

epsilon = 1e-2
rho0 = mf.density(circle, lambda theta: 1 + epsilon * np.cos(3 * theta))
print(f"min ρ0 = {rho0.values.min():.5f}, max ρ0 = {rho0.values.max():.5f}, 1/2π = {1 / (2 * np.pi):.5f}")
print(f"mass ∫ρ0 dσ = {rho0.mass:.15f}")

# %%
# A model and its energy
# ----------------------
#
# :class:`meanfield.SelfAttention` is the SA model with ``normalized=True`` (the default) and USA
# with ``normalized=False``; ``noise`` is :math:`\sigma`. We take :math:`\beta = 4` and no noise.
#
# The interaction energy is
# :math:`E_\beta[\mu] = \frac{1}{2\beta} \iint e^{\beta\langle x, y\rangle}\, d\mu(x)\, d\mu(y)`.
# For the uniform probability measure on :math:`S^1` the inner integral is
# :math:`\frac{1}{2\pi}\int_0^{2\pi} e^{\beta\cos\varphi}\, d\varphi = I_0(\beta)`, so
# :math:`E_\beta = I_0(\beta)/2\beta`. :func:`meanfield.energy` of our slightly perturbed density
# is just above that value (the perturbation adds a term of order :math:`\varepsilon^2`).

model = mf.SelfAttention(beta=4.0)  # SA; mf.SelfAttention(4.0, normalized=False) is USA
print(model)
print(f"E_β[ρ0]      = {mf.energy(model, rho0):.10f}")
print(f"I_0(β)/(2β)  = {iv(0, 4.0) / 8.0:.10f}   (the uniform state)")

# %%
# Linear growth rates
# -------------------
#
# The uniform state is a stationary solution. Linearising about it, a perturbation
# :math:`\cos k\theta` grows like :math:`e^{\lambda_k t}` with
#
# .. math::
#
#     \text{SA: } \lambda_k = k^2 \Big(\frac{I_k(\beta)}{\beta I_0(\beta)} - \sigma\Big), \qquad
#     \text{USA: } \lambda_k = k^2 \Big(\frac{I_k(\beta)}{\beta} - \sigma\Big),
#
# (on :math:`S^1`, :math:`c_k(\beta) = 2\pi I_k(\beta)` is the Funk–Hecke multiplier of the kernel).
# ``model.growth_rate(k)`` returns :math:`\lambda_k`. At :math:`\beta = 4` the fastest mode is
# :math:`k = 3`, the one we perturbed.

ks = np.arange(1, 8)
rates = model.growth_rate(ks)
for k, rate in zip(ks, rates):
    by_hand = k**2 * iv(k, 4.0) / (4.0 * iv(0, 4.0))
    print(f"k = {k}: λ_k = {rate:.10f}   (k² I_k/(β I_0) = {by_hand:.10f})")
print("fastest mode:", ks[np.argmax(rates)])

# %%
# Solve
# -----
#
# :func:`meanfield.solve` takes the model, the initial density and the output times ``t`` (the
# first entry is the initial time, as ``t_eval`` of ``scipy.integrate.solve_ivp``). We ask for
# the Fourier pseudo-spectral scheme, which is exact to round-off for smooth densities; how the
# default ``method="auto"`` chooses comes further down.

t = np.linspace(0.0, 5.0, 51)
ds = mf.solve(model, rho0, t, method="spectral")
print(ds)

# %%
# The result is an :class:`xarray.Dataset`:
#
# - ``density`` over ``(time, theta)``: :math:`\rho(t, \theta_j)`, per radian;
# - ``mass`` :math:`\int\rho\, d\sigma`, ``energy`` :math:`E_\beta`, ``order_parameter``
#   :math:`|\int x\, d\mu|`, each over ``time``;
# - ``steps``: the accepted time steps taken since the previous output.
#
# The attrs say what was run and how it went. ``success`` is 1 only when the run reached the last
# requested time with finite outputs; otherwise ``message`` says why it stopped and the outputs
# reached so far are kept. ``method_reason`` says why this method ran.

for name in ["model", "beta", "noise", "normalized", "method", "scheme", "option_rtol", "option_atol",
             "success", "message", "method_reason", "n_steps", "n_rejected", "nfev", "meanfield_version"]:
    print(f"{name:>17} = {ds.attrs[name]}")

# %%
# Reading it is ordinary xarray: select by label with ``sel``, by position with ``isel``.
# Mass is conserved to round-off, and for SA without noise the energy can only increase
# (:math:`dE_\beta/dt = \int |X[\mu]|^2 Z_\mu\, d\mu \ge 0`).

rho_t2 = ds.density.sel(time=2.0)  # a DataArray over theta
print("ρ(t=2) at θ = 0:", float(rho_t2.sel(theta=0.0)))
print("largest |mass - 1| over time:", float(np.abs(ds.mass - 1).max()))
print("energy from", float(ds.energy[0]), "to", float(ds.energy[-1]),
      "; never decreases:", bool(np.all(np.diff(ds.energy.values) >= -1e-12)))

# %%
# Check a growth rate against the exact one
# -----------------------------------------
#
# The amplitude of mode 3 is :math:`|\hat\rho_3(t)|`, read off by an FFT over ``theta`` (divided by
# the mean :math:`\hat\rho_0`, which is constant). Fitting :math:`\log|\hat\rho_3|` against
# :math:`t` on :math:`[0, 1]`, where the perturbation is still small, gives the measured rate. Later
# the mode saturates: the nonlinearity takes over and the density forms three clusters.

amplitude = np.abs(np.fft.rfft(ds.density.values, axis=-1))
mode3 = amplitude[:, 3] / amplitude[:, 0]
early = ds.time.values <= 1.0
measured = np.polyfit(ds.time.values[early], np.log(mode3[early]), 1)[0]
exact = float(model.growth_rate(3))
print(f"measured λ_3 = {measured:.8f}, exact λ_3 = {exact:.8f}, relative difference {measured / exact - 1:.1e}")
print(f"|ρ̂_3/ρ̂_0| at t = 0, 1, 5: {mode3[0]:.4f}, {mode3[10]:.4f}, {mode3[-1]:.4f}"
      f"  (linear growth would give {mode3[0] * np.exp(5 * exact):.4f} at t = 5)")

# %%
# The difference of a few :math:`10^{-5}` is the nonlinear correction of the :math:`\varepsilon = 10^{-2}`
# perturbation, not a numerical error. With :math:`\varepsilon = 10^{-6}` the same measurement
# agrees to about :math:`10^{-11}`. One detail: the step-size control measures the error of the
# whole density, of which this mode is a millionth, so it would happily take steps of 0.5 and leave
# a relative error of order :math:`(\lambda h)^6/720 \approx 10^{-6}` in the mode. ``max_step``
# caps the step.

tiny = mf.density(circle, lambda theta: 1 + 1e-6 * np.cos(3 * theta))
short = mf.solve(model, tiny, [0.0, 1.0], method="spectral", max_step=0.05)
coefficient = np.abs(np.fft.rfft(short.density.values, axis=-1)[:, 3])
measured_tiny = np.log(coefficient[1] / coefficient[0])  # over a time of 1
print(f"ε = 1e-6: measured λ_3 = {measured_tiny:.12f}, relative difference {measured_tiny / exact - 1:.1e}"
      f" ({short.attrs['n_steps']} steps)")

# %%
# Choosing a method
# -----------------
#
# On the circle there are two schemes: ``"spectral"`` (Fourier pseudo-spectral, adaptive
# Dormand–Prince, exponentially accurate while the density is smooth) and ``"finite_volume"``
# (second order, positivity preserving, made for densities that concentrate). The default
# ``method="auto"`` picks finite volume when there is no noise, because the clusters then become
# Diracs that no spectral grid resolves, and spectral when there is noise, which keeps the density
# smooth. The choice and its reason are in the attrs.

auto = mf.solve(model, rho0, t)  # method="auto"
print("method:", auto.attrs["method"])
print("reason:", auto.attrs["method_reason"])
noisy = mf.solve(mf.SelfAttention(4.0, noise=0.01), rho0, [0.0, 1.0])
print("with noise σ = 0.01:", noisy.attrs["method"], "—", noisy.attrs["method_reason"])

# %%
# Finite volume is second order, so it measures the same rate less precisely on this grid:

fv_amplitude = np.abs(np.fft.rfft(auto.density.values, axis=-1))
fv_mode3 = fv_amplitude[:, 3] / fv_amplitude[:, 0]
fv_measured = np.polyfit(auto.time.values[early], np.log(fv_mode3[early]), 1)[0]
print(f"finite volume: measured λ_3 = {fv_measured:.6f}, relative difference {fv_measured / exact - 1:.1e}")

# %%
# What happens when a scheme can no longer be trusted? Run both to :math:`t = 20`. The clusters
# sharpen exponentially; the spectral scheme watches the tail of its spectrum and stops as soon as
# it exceeds its tolerance, keeping the outputs reached so far (``success = 0``, and the
# ``message`` says why and what to do). Finite volume stays positive and reaches the end, but it
# also reports when its grid no longer resolves the density (``resolved = 0`` and the spectral
# tail in ``resolution_tail``, with a warning): the numbers after that time are not converged
# in the grid. Both reports also reach the output below as they happen: the spectral run's stop
# as a line of the library's log, the finite-volume one as a ``RuntimeWarning``.

long_t = np.linspace(0.0, 20.0, 81)
long_spectral = mf.solve(model, rho0, long_t, method="spectral")
print("spectral:      success =", long_spectral.attrs["success"], "| last time", float(long_spectral.time[-1]))
print("               message:", long_spectral.attrs["message"])
long_fv = mf.solve(model, rho0, long_t, method="finite_volume")
print("finite volume: success =", long_fv.attrs["success"], "| last time", float(long_fv.time[-1]),
      "| resolved =", long_fv.attrs["resolved"], "| resolution_tail =", f"{long_fv.attrs['resolution_tail']:.3g}")

# %%
# Plot
# ----
#
# :mod:`meanfield.plot` draws from the Dataset. Each function returns a Matplotlib figure; those
# drawing one panel take ``ax=``, so they fit into a layout of your own. ``density_map`` is the
# heat map of :math:`\rho(t, \theta)` on a logarithmic colour scale and ``energy_curve`` is
# :math:`E_\beta(t)`. Here: the finite-volume run to :math:`t = 20`. Three clusters grow where
# :math:`\cos 3\theta` was largest, and collapse into Diracs, thinner than a cell from
# :math:`t \approx 10` on; the energy saturates once they have formed. The dashed line is the energy
# of the spectral run, which stopped at :math:`t = 8`; where both exist they agree to the difference
# printed below (the second-order error of finite volume on 256 cells).

fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), height_ratios=[3, 1.3], sharex=True,
                                  layout="constrained")
mf.plot.density_map(long_fv, ax=top, title="SA, β = 4, from (1 + 0.01 cos 3θ)/2π, finite volume, N = 256")
mf.plot.energy_curve(long_fv, ax=bottom)
bottom.plot(long_spectral.time, long_spectral.energy, "--", color="tab:orange", label="spectral (stopped)")
bottom.legend()
common = long_spectral.time.values
gap = np.abs(long_fv.energy.sel(time=common).values - long_spectral.energy.values).max()
print(f"largest energy difference of the two schemes on t ≤ {common[-1]:g}: {gap:.1e}")

# %%
# Save to NetCDF and read it back
# -------------------------------
#
# The Dataset writes to NetCDF as it is, and its attrs travel with it: the file says which model,
# parameters, scheme, tolerances and package version made it, and its ``history`` records the call.
# Here the file goes into a temporary directory that is removed at the end.

with tempfile.TemporaryDirectory() as folder:
    path = Path(folder) / "first_equation.nc"
    ds.to_netcdf(path)
    print(f"wrote {path.name}: {path.stat().st_size / 1024:.0f} KiB")
    with xr.open_dataset(path) as back:
        back = back.load()
    print("density equal after the round trip:", bool(np.array_equal(back.density.values, ds.density.values)))
    print("model:", back.attrs["model"], "| β =", back.attrs["beta"], "| method:", back.attrs["method"],
          "| success:", back.attrs["success"])
    print("history:", back.attrs["history"])

# %%
# For a file that verifies itself when read, :func:`meanfield.io.write_netcdf` adds the SHA-256 of
# the contents as the attr ``sha256`` and :func:`meanfield.io.read_netcdf` refuses a file whose
# contents no longer match it; the checkpoints of the tutorial on checkpoints are written this way.

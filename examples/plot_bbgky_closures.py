"""
The BBGKY hierarchy on the circle: two closures against an ensemble
===================================================================

Paper 2, §8 (Problem 4). :math:`n` particles follow the USA dynamics (7.1) on :math:`S^1`,
:math:`\\dot\\theta_i = (1/(n\\beta)) \\sum_j h_\\beta'(\\theta_i - \\theta_j)` with
:math:`h_\\beta(u) = e^{\\beta\\cos u}`, from iid uniform starts. By rotation invariance the one-particle
law stays :math:`1/(2\\pi)` and the pair law is :math:`\\psi(t, \\theta_2 - \\theta_1)/(2\\pi)`, with
:math:`\\psi(t, \\cdot)` a probability density on the circle. It obeys (8.1),

.. math::

    \\partial_t \\psi + \\partial_x(v\\psi) = 0, \\qquad
    v(t, x) = \\frac{2}{\\beta n} h_\\beta'(x) - \\frac{2(n-2)}{\\beta n} g(t, x), \\qquad
    g(t, x) = \\mathbb E[-h_\\beta'(\\theta_3) \\mid \\theta_1 = 0, \\theta_2 = x],

which is not closed: :math:`g` involves the three-particle law. ``mf.bbgky_study`` measures every term of
(8.1) on an ensemble of independent systems; ``mf.bbgky_closed_equation`` integrates (8.1) closed by a
rule :math:`g \\approx G[\\psi]`; ``mf.bbgky_closure_distance`` compares the two (docs/bbgky.md). Fourier
coefficients are :math:`\\hat f_k = (1/2\\pi)\\int f(x) e^{-ikx}\\,dx`.
"""

# %%
# The ensemble
# ------------
#
# :math:`\beta = 2`, :math:`n = 12` (the most unstable mode of the uniform state is :math:`k = 2`; on
# :math:`[0, 3]` the pair law goes from uniform to clustered), :math:`M = 4096` systems, wavenumbers
# :math:`k \le 16`. Standard errors are over systems. Two checks of the estimators: the one-particle law
# stays uniform (:math:`|\hat\rho^{(1)}_k|` of the order of its standard error), and the residual of (8.1),
# :math:`R(t) = (\sum_{k=1}^{16} |\partial_t\hat\psi_k + ik\,\widehat{(v\psi)}_k|^2)^{1/2}`, is of the
# order of its standard error: its mean is zero and only Monte-Carlo noise is left.
import matplotlib.pyplot as plt
import numpy as np

import meanfield as mf

BETA, N, M, K = 2.0, 12, 4096, 16
times = np.linspace(0.0, 3.0, 7)
ensemble = mf.bbgky_study(BETA, N, M, times, max_wavenumber=K, seed=2026)
rho1 = np.abs(ensemble["rho1_hat"].values[:, 1:]) / ensemble["rho1_hat_stderr"].values[:, 1:]
print(f"max over k = 1..{K} and t of |rho1_hat_k| / stderr = {rho1.max():.2f}")
ratio = (ensemble["residual_norm"] / ensemble["residual_norm_stderr"]).values
psi_hat = ensemble["psi_hat"].values
print("   t   psi_hat_1  psi_hat_2  psi_hat_3   stderr   R(t)/stderr")
for i, t in enumerate(times):
    print(f"  {t:3.1f}  {psi_hat[i, 1]:9.5f}  {psi_hat[i, 2]:9.5f}  {psi_hat[i, 3]:9.5f}  "
          f"{ensemble['psi_hat_stderr'].values[i, 2]:.1e}   {ratio[i]:.2f}")

# %%
# Two closures
# ------------
#
# Both specify the law of :math:`\theta_3 - \theta_1` given :math:`\theta_2 - \theta_1 = x`:
#
# - Kirkwood's superposition (``mf.KirkwoodClosure``),
#   :math:`\rho^{(3)} \approx \rho^{(2)}\rho^{(2)}\rho^{(2)}/(\rho^{(1)})^3`, so
#   :math:`G[\psi](x) = \int -h_\beta'(y)\psi(y)\psi(y-x)\,dy / \int \psi(y)\psi(y-x)\,dy`;
# - the cluster mixture (``mf.ClusterClosure``): :math:`\theta_3` sits with :math:`\theta_1` or with
#   :math:`\theta_2`, with probability 1/2 each, so :math:`G[\psi] = -\tfrac12 (h_\beta' * \psi)`.
#
# Each closed equation is integrated from :math:`\psi(0) = 1/(2\pi)` by the circle's finite-volume scheme
# on 512 cells. The distance to the ensemble is
# :math:`d(t) = \|P_K(\psi_{\rm closed} - \psi_{\rm ensemble})\|_{L^2} = (4\pi\sum_{k=1}^K |\Delta\hat\psi_k|^2)^{1/2}`,
# beside the ensemble's noise on :math:`d` and :math:`d` relative to :math:`\|P_K(\psi_{\rm ensemble} - 1/2\pi)\|`.
closed, distance = {}, {}
for name, closure in (("Kirkwood", mf.KirkwoodClosure(BETA)), ("cluster mixture", mf.ClusterClosure(BETA))):
    run = mf.bbgky_closed_equation(closure, BETA, N, times, grid_size=512, max_wavenumber=K)
    closed[name], distance[name] = run, mf.bbgky_closure_distance(run, ensemble)
    print(f"{name}: success {run.attrs['success']} ({run.attrs['message']}), {run.attrs['n_steps']} steps, "
          f"max |mass - 1| = {np.abs(run['mass'].values - 1).max():.1e}, "
          f"max asymmetry / max psi = {run['asymmetry'].values.max() / run['psi'].values.max():.1e}")
noise = distance["Kirkwood"]["noise"].values
print("   t    d Kirkwood (rel.)   d cluster (rel.)   noise")
for i, t in enumerate(times[1:], start=1):
    dk, dc = (distance[name]["distance"].values[i] for name in closed)
    rk, rc = (distance[name]["relative"].values[i] for name in closed)
    print(f"  {t:3.1f}    {dk:.4f} ({rk:.2f})     {dc:.4f} ({rc:.2f})      {noise[i]:.4f}")
for t in (1.0, 3.0):
    dk, dc = (float(distance[name]["distance"].sel(time=t)) for name in closed)
    best, factor = ("Kirkwood", dc / dk) if dk < dc else ("cluster mixture", dk / dc)
    print(f"t = {t:g}: {best} is closer, by a factor {factor:.2f}, and still "
          f"{min(dk, dc) / float(distance['Kirkwood']['noise'].sel(time=t)):.0f}x the ensemble noise away")


# %%
# ψ at t = 1 and t = 3
# --------------------
#
# The ensemble's :math:`\psi` is a Fejér mean at :math:`K = 16`,
# :math:`\psi_K(x) = \sum_{|k| \le K} (1 - |k|/(K+1))\,\hat\psi_k e^{ikx}` (positive, with bias
# :math:`O(1/K)` at the sharp peak), drawn with :math:`\pm 2` standard errors. The closed solutions are
# drawn through the same Fejér mean of their coefficients, so that the two are compared at equal resolution.
# Kirkwood over-concentrates the peak at :math:`t = 1`; the mixture builds a spurious antipodal peak at
# :math:`x = \pi` by :math:`t = 3` (its velocity is that of a mean-field density, unstable at
# :math:`k = 2`).
def fejer_mean(coefficients, x):
    k = np.arange(coefficients.size)
    weights = 1 - k / (coefficients.size)
    return coefficients[0] + 2 * np.sum((weights * coefficients)[1:, None] * np.cos(k[1:, None] * x), axis=0)


ends = np.array([0.0, np.pi])                        # the ensemble's grid has x = 0 and x = pi at these nodes
half = ensemble.sizes["x"] // 2
for t in (1.0, 3.0):
    values = {"ensemble": ensemble["psi"].sel(time=t).values[[0, half]]}
    values.update({name: fejer_mean(run["psi_hat"].sel(time=t).values, ends) for name, run in closed.items()})
    print(f"t = {t:g}: " + ", ".join(f"{name} psi_K(0) = {v[0]:.3f}, psi_K(pi) = {v[1]:.3f}"
                                     for name, v in values.items()))

x = ensemble["x"].values
shifted = np.where(x >= np.pi, x - 2 * np.pi, x)
order = np.argsort(shifted)
fig, axes = plt.subplots(1, 3, figsize=(14, 4.3), layout="constrained")
for ax, t in zip(axes[:2], (1.0, 3.0)):
    psi, err = (ensemble[v].sel(time=t).values[order] for v in ("psi", "psi_stderr"))
    ax.fill_between(shifted[order], psi - 2 * err, psi + 2 * err, color="0.8")
    ax.plot(shifted[order], psi, "k-", label=f"ensemble, M = {M} (±2 s.e.)")
    for (name, run), colour in zip(closed.items(), ("C0", "C3")):
        ax.plot(shifted[order], fejer_mean(run["psi_hat"].sel(time=t).values, shifted[order]), color=colour,
                label=f"{name} closure")
    ax.set(xlabel="x = θ₂ − θ₁", ylabel="ψ(t, x)", title=f"t = {t:g} (Fejér means, K = {K})")
    ax.legend(fontsize=8)
for (name, d), colour in zip(distance.items(), ("C0", "C3")):
    axes[2].plot(d["time"], d["distance"], "o-", color=colour, label=name)
axes[2].plot(times, noise, "k:", label="ensemble noise of d")
axes[2].set(xlabel="t", ylabel="d(t)", title=f"distance to the ensemble (β = {BETA:g}, n = {N})")
axes[2].legend(fontsize=8)
plt.show()

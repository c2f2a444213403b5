"""
Metastability: the energy staircase
===================================

At large :math:`\\beta`, self-attention (SA) on the circle gathers its mass into a few clusters in
a time that does not grow with :math:`\\beta`, and then sits near that configuration for a time
that grows like :math:`e^{c\\beta}`, until two clusters merge; then it sits again, and so on down to
one cluster (paper 2, arXiv:2312.10794, Problem 1 and Figure 4; Geshkovski, Koubbi, Polyanskiy and
Rigollet, arXiv:2410.06833). The interaction energy

.. math::

    E_\\beta[\\mu] = \\frac{1}{2\\beta} \\iint e^{\\beta \\langle x, y\\rangle}\\, d\\mu(x)\\, d\\mu(y)

(paper 2, eq. (3.5)) climbs a staircase, one step per merge. This example follows it with the
reduced cluster dynamics (``mf.cluster_dynamics``) over many decades of time, checks it against
particles, and checks each step's height against the two-cluster formula
(``mf.two_cluster_jump``). See also the page ``docs/metastability.md`` and
``validation/metastability.py``.
"""

import matplotlib.pyplot as plt
import numpy as np

import meanfield as mf

# %%
# Four clusters, reduced dynamics
# -------------------------------
#
# Clusters are weighted Diracs :math:`\mu = \sum_a m_a \delta_{\theta_a}`, moving with the SA
# velocity evaluated on :math:`\mu` itself,
#
# .. math::
#
#     \dot\theta_a = \frac{\sum_b m_b\, e^{\beta \cos(\theta_b - \theta_a)} \sin(\theta_b - \theta_a)}
#                         {\sum_b m_b\, e^{\beta \cos(\theta_b - \theta_a)}},
#
# merged into one cluster of the summed mass when two come within ``merge_distance`` (1e-3).
# Four clusters of mass 1/4 start near the corners of a square,
# :math:`\theta_a = 2\pi a/4 + 0.05\,\xi_a` with :math:`\xi_a` standard normal (seed 1), the
# initial data of ``validation/metastability.py``. The whole staircase of one run, to
# :math:`t = 10^{30}`, costs a few thousand velocity evaluations.

centers = 2 * np.pi * np.arange(4) / 4 + 0.05 * np.random.default_rng(1).standard_normal(4)
reduced = {}
for beta in (6.0, 8.0, 10.0, 12.0, 14.0):
    reduced[beta] = mf.cluster_dynamics(mf.SelfAttention(beta), centers, t_end=1e30)
    run = reduced[beta]
    print(f"beta = {beta:4.1f}: merges at t = {np.array2string(run.merge_time.values, precision=3)}"
          f"  ({run.attrs['nfev']} evaluations, {run.attrs['message']})")

# %%
# The staircase
# -------------
#
# ``mf.energy_staircase`` finds the plateaus of the cluster count, their energy level (read at the
# geometric middle of the plateau, since a plateau is flat in :math:`\log t`) and the jump of each
# merge. For Diracs the jump of a merge of :math:`a` and :math:`b` at separation :math:`\Delta` is
#
# .. math::
#
#     \Delta E = \frac{m_a m_b}{\beta}\left(e^{\beta} - e^{\beta \cos\Delta}\right)
#                + (X_\text{after} - X_\text{before}),
#
# where the last term is the change of the energy between the other pairs, which the staircase
# bounds by :math:`\max(X_\text{before}, X_\text{after})` (``jump_bound``).

stairs = mf.energy_staircase(reduced[12.0])
print("plateaus (clusters):", stairs.plateau_clusters.values)
print("plateau energy levels:", np.round(stairs.plateau_energy.values, 4))
for m in range(stairs.sizes["merge"]):
    measured, pair, bound = (float(stairs[v][m]) for v in ("jump_measured", "jump_pair", "jump_bound"))
    print(f"merge {m + 1} at t = {float(stairs.merge_time[m]):.4g}: jump {measured:.6f}, "
          f"two-cluster formula {pair:.6f}, |difference| = {abs(measured - pair):.1e} <= bound {bound:.1e}: "
          f"{abs(measured - pair) <= bound}")
m_a, m_b, gap = (float(stairs[v][0]) for v in ("merge_mass_a", "merge_mass_b", "merge_separation"))
print(f"mf.two_cluster_jump(12, {m_a}, {m_b}, {gap:.4f}) = {mf.two_cluster_jump(12.0, m_a, m_b, gap):.6f}")

# %%
# The energy of each run against :math:`\log t`, scaled by the energy :math:`e^\beta/(2\beta)` of a
# single cluster so that all :math:`\beta` share one axis: four clusters at right angles have
# :math:`E \approx 1/4` of it, then :math:`3/8`, :math:`1/2` and :math:`1`. The steps are the same;
# only the plateaus grow with :math:`\beta`. ``mf.plot.energy_curve`` draws one run (left); the
# others are added on the right.
#
# ``mf.plot`` functions draw without pyplot; given ``ax=`` they draw into a layout of one's own.

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
mf.plot.energy_curve(reduced[12.0], ax=left, title="reduced dynamics, β = 12 (merges dotted)")
left.set_xscale("log")
left.set_xlim(1e-2, 1e14)
for t_merge in reduced[12.0].merge_time.values:
    left.axvline(t_merge, color="0.6", lw=0.8, ls=":")
for beta, run in reduced.items():
    scale = np.exp(beta) / (2 * beta)
    right.semilogx(run.time.values[1:], run.energy.values[1:] / scale, label=f"β = {beta:g}")
right.set(xlabel="time t", ylabel="E_β / (e^β / 2β)", title="the staircase at every β", xlim=(1e-2, 1e14))
right.legend(fontsize=8)

# %%
# How long the four-cluster state lives
# -------------------------------------
#
# Four equal clusters at right angles are a saddle of :math:`E_\beta`. Linearised about it, the
# alternating offset :math:`A` of the clusters from equal spacing grows at the rate
# :math:`\lambda(\beta)` of ``mf.equispaced_instability_rate``, about :math:`4\beta e^{-\beta}` for
# four clusters, until it reaches the nonlinear scale :math:`\approx 1/\beta`; so the first merge
# comes at
#
# .. math::
#
#     T_1 \approx \frac{\log(1/(\beta A)) + C}{\lambda(\beta)}
#
# with a constant :math:`C` for the nonlinear stage. :math:`T_1` grows by a factor 400 from
# :math:`\beta = 6` to 14, while :math:`T_1 \lambda + \log(\beta A)` settles to a constant once
# :math:`\beta \gtrsim 10` (below that the four-cluster state barely outlives its formation). The
# fitted slope of :math:`\log T_1` is below the asymptotic :math:`c = 1 - \cos(\pi/2) = 1`
# because :math:`\lambda` carries a factor :math:`\beta` and :math:`\log(1/(\beta A))` shrinks
# (the validation fits 0.816 over :math:`\beta = 9 \dots 16`).

offsets = centers - 2 * np.pi * np.arange(4) / 4
offsets -= offsets.mean()  # remove a rotation
amplitude = abs(np.sum(offsets * (-1.0) ** np.arange(4)) / 4)
print(f"alternating offset A = {amplitude:.4f}")
t1 = np.array([run.merge_time.values[0] for run in reduced.values()])
beta_values = np.array(list(reduced))
rates = np.array([mf.equispaced_instability_rate(b, 4) for b in beta_values])
for b, t, lam in zip(beta_values, t1, rates):
    print(f"beta = {b:4.1f}: T1 = {t:9.4g}, lambda = {lam:.4e} (4 beta e^-beta = {4 * b * np.exp(-b):.4e}), "
          f"T1 lambda = {t * lam:.3f}, T1 lambda + log(beta A) = {t * lam + np.log(b * amplitude):+.3f}")
slope = np.polyfit(beta_values, np.log(t1), 1)[0]
print(f"fitted slope of log T1 over beta = {beta_values[0]:g}..{beta_values[-1]:g}: {slope:.3f}")

# %%
# Particles
# ---------
#
# 64 particles, 16 in each of four von Mises blobs (:math:`\kappa = 400`) about the same centres,
# at :math:`\beta = 8`, with 3000 output times spaced evenly in :math:`\log t` (a merge is seen at
# the first output after it, so its time is resolved to 0.35 %). Their staircase is compared with
# the reduced dynamics started from the particles' own clusters on their first plateau (masses and
# angles from ``energy_staircase``): between merges that *is* the particle dynamics of collapsed
# clusters, so the merge times must agree.

beta = 8.0
model = mf.SelfAttention(beta)
rng = np.random.default_rng(0)
x0 = np.concatenate([rng.vonmises(c, 400.0, 16) for c in centers])
t_max = 1.3 * reduced[beta].merge_time.values[1]
times = np.concatenate([[0.0], np.geomspace(1e-2, t_max, 3000)])
particles = mf.simulate(model, x0, times)
print("particles:", particles.attrs["success"], "-", particles.attrs["message"])
part = mf.energy_staircase(particles)
start = float(part.plateau_level_time[0])
masses, angles = part.plateau_masses.values[0], part.plateau_angles.values[0]
kept = np.isfinite(masses)
own = mf.cluster_dynamics(model, angles[kept], masses[kept] / masses[kept].sum(), t_end=10 * t_max)
predicted = start + own.merge_time.values
for m, t_merge in enumerate(part.merge_time.values):
    print(f"merge {m + 1}: particles t = {t_merge:.2f}, reduced dynamics from t = {start:.1f}: "
          f"{predicted[m]:.2f} (relative difference {abs(t_merge / predicted[m] - 1):.2%})")
    print(f"         energy jump {float(part.jump_measured[m]):.4f}, two-cluster formula "
          f"{float(part.jump_pair[m]):.4f}, bound on the difference {float(part.jump_bound[m]):.1e}")

# %%
# The particles' paths :math:`\theta_i(t)` on a logarithmic time axis (``mf.plot.particle_paths``)
# and their energy staircase: the blobs collapse by :math:`t \approx 5`, then the four clusters
# hold until the first merge, the three until the second.

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
mf.plot.particle_paths(particles, ax=left, title="64 particles, β = 8 (merges dotted)")
left.set_xscale("log")
left.set_xlim(1e-2, t_max)
mf.plot.energy_curve(particles, ax=right, title="64 particles, β = 8")
right.set_xscale("log")
right.set_xlim(1e-2, t_max)
for t_merge in part.merge_time.values:
    for ax in (left, right):
        ax.axvline(t_merge, color="0.6", lw=0.8, ls=":")
plt.show()

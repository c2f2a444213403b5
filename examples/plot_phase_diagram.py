"""
Phase diagram of clustering on the circle
=========================================

Paper 2 (*A mathematical perspective on Transformers*, arXiv:2312.10794, §6.3, Figure 3) draws
:math:`n = 32` tokens independently and uniformly on :math:`S^{d-1}`, lets them move by
self-attention (SA, :math:`Q = K = V = I`),

.. math::

    \\dot x_i = P^\\perp_{x_i} \\sum_{j=1}^n
        \\frac{e^{\\beta \\langle x_i, x_j\\rangle}}{\\sum_{k=1}^n e^{\\beta \\langle x_i, x_k\\rangle}}\\, x_j,

and asks how likely two tokens are to have merged by time :math:`t`:

.. math::

    P(\\beta, t) = \\mathbb{P}\\bigl(\\langle x_1(t), x_2(t)\\rangle \\ge 1 - \\delta\\bigr),
    \\qquad \\delta = 10^{-3}.

``mf.phase_diagram`` estimates it over a grid of :math:`(\\beta, t)` from independent systems, with
every system of a task stepped together by a vectorised Dormand–Prince 5(4). This example draws the
:math:`d = 2` panel of Figure 3 with 128 systems per :math:`\\beta` and 18 values of :math:`\\beta`
(the paper: 2048 systems, 90 values), which takes a few seconds. The full figure is

.. code-block:: bash

    meanfield phase-diagram --dimension 2,8,32,128 --particles 32 --systems 2048 --betas 0.1:9:90 --t-final 30
"""

import numpy as np

import meanfield as mf

# %%
# The ensemble
# ------------
#
# System :math:`s` draws its tokens from its own seed, so every :math:`\beta` runs the same 128
# systems. For each system and output time the pair fraction
# :math:`F_s(t) = \#\{(i, j) : i \ne j,\ \langle x_i, x_j\rangle \ge 1 - \delta\} / (n(n-1))`
# is recorded; by exchangeability its mean over systems estimates :math:`P(\beta, t)`, with the
# standard error :math:`\mathrm{sd}_s(F_s)/\sqrt{S}`. ``scheduler="serial"`` runs the tasks in
# this process (the default spreads them over a dask ``LocalCluster``, worth it for the full
# figure).

delta = 1e-3
betas = np.linspace(0.5, 9.0, 18)
times = np.linspace(0.0, 30.0, 61)
ds = mf.phase_diagram(2, 32, betas, times, 128, delta=delta, seed=0, scheduler="serial", progress=False)
print(ds[["probability", "probability_stderr", "clusters_mean", "critical_time"]])
print("representation:", ds.attrs["representation"], "| wall time [s]:", round(ds.attrs["wall_time"], 2))

# %%
# A check at :math:`t = 0`
# ------------------------
#
# Two independent uniform points on the circle satisfy :math:`\cos(\theta_1 - \theta_2) \ge 1 - \delta`
# with probability exactly :math:`\arccos(1 - \delta)/\pi`. The estimate at :math:`t = 0` is the same
# for every :math:`\beta` (same tokens) and must agree within a few standard errors.

p0 = float(ds.probability.isel(beta=0, time=0))
se0 = float(ds.probability_stderr.isel(beta=0, time=0))
exact0 = np.arccos(1 - delta) / np.pi
print(f"P(t=0) = {p0:.5f} +- {se0:.5f}, exact arccos(1-delta)/pi = {exact0:.5f}, "
      f"difference = {(p0 - exact0) / se0:+.2f} standard errors")

# %%
# The diagram
# -----------
#
# ``mf.plot.phase_diagram`` draws :math:`P` in the paper's colours (red 0, blue 1), :math:`t` across
# and :math:`\beta` up, with the dashed curve :math:`\Gamma_{\infty,\delta}` of Theorem 6.8: the time
# :math:`t^*(\beta)` at which :math:`n` initially orthogonal tokens, which stay equiangular with
# inner product :math:`\gamma_\beta(t)` solving (6.9), reach :math:`\gamma_\beta = 1 - \delta`. That
# curve describes :math:`d \gg n`; at :math:`d = 2` the tokens are far from orthogonal, cluster much
# earlier at small :math:`\beta`, and at large :math:`\beta` stay in several clusters (the
# metastable zone, :math:`0 < P < 1` up to :math:`t = 30`).

fig = mf.plot.phase_diagram(ds)

# %%
# The numbers behind the picture: for some :math:`\beta`, the curve :math:`t^*(\beta)`, the first
# output time at which :math:`P \ge 1/2`, and at :math:`t = 30` the probability, the fraction of
# systems in a single cluster and the mean number of clusters (single linkage at
# :math:`\langle x_i, x_j\rangle \ge 1 - \delta`).

print(f"{'beta':>5} {'t*(beta)':>9} {'first P>=1/2':>13} {'P(30)':>14} {'one cluster':>12} {'clusters':>9}")
for beta in (0.5, 2.0, 4.0, 6.0, 9.0):
    row = ds.sel(beta=beta)
    p = row.probability.values
    crossed = times[p >= 0.5]
    first = f"{crossed[0]:.1f}" if crossed.size else "never"
    print(f"{beta:5.1f} {float(row.critical_time):9.2f} {first:>13} "
          f"{p[-1]:7.3f}+-{float(row.probability_stderr[-1]):.3f} "
          f"{float(row.fraction_clustered[-1]):12.3f} {float(row.clusters_mean[-1]):9.2f}")

# %%
# The same ensemble drawn as the fraction of systems that have collapsed to one cluster: it rises
# sharply at small :math:`\beta` and stays near zero at large :math:`\beta` by :math:`t = 30`.

fig = mf.plot.phase_diagram(ds, variable="fraction_clustered")

# %%
# Figure 4: one system's tokens
# -----------------------------
#
# ``mf.phase_diagram_trajectories`` integrates one system (seed 0, system 0, the same tokens as in
# the ensemble) at :math:`\beta = 4` and :math:`9` to tight tolerances and returns its tokens at
# :math:`t = 2.5, 18, 30`. At :math:`\beta = 9` the tokens sit in several clusters for a long time
# before merging; this is the metastability that ``plot_metastability.py`` measures.

paths = mf.phase_diagram_trajectories(betas=(4.0, 9.0), times=(2.5, 18.0, 30.0), n=32)
# <x_i, x_j> >= 1 - delta is a chord |x_i - x_j| <= sqrt(2 delta): the same linking as in the diagram
counts = mf.number_of_clusters(paths.positions.values, tolerance=np.sqrt(2 * delta), domain="circle")
for b, beta in enumerate(paths.beta.values):
    print(f"beta = {beta:g}: clusters at t = {paths.time.values} -> {counts[b]}")
fig = mf.plot.phase_diagram_trajectories(paths)

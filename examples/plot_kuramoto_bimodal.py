"""
Kuramoto with a bimodal frequency law: the phase diagram
========================================================

Oscillators :math:`\\dot\\theta_i = \\omega_i + (K/n)\\sum_j \\sin(\\theta_j - \\theta_i)` with natural
frequencies drawn from the symmetric bimodal Lorentzian

.. math::

    g(\\omega) = \\tfrac12\\,[L_\\Delta(\\omega - \\omega_0) + L_\\Delta(\\omega + \\omega_0)], \\qquad
    L_\\Delta(\\omega) = \\frac{\\Delta/\\pi}{\\omega^2 + \\Delta^2}

(``mf.bimodal_lorentzian(omega0, Delta)``). On the Ott–Antonsen manifold the mean field is exactly
:math:`Z = (z_+ + z_-)/2` with :math:`\\dot z_\\pm = (\\pm i\\omega_0 - \\Delta) z_\\pm + (K/2)(Z - \\bar Z z_\\pm^2)`
(Martens et al., PRE 79, 026204 (2009), in this package's normalisation; docs/kuramoto.md). Its
attractors are incoherence (:math:`r = 0`), partial synchrony (:math:`r` constant) and standing waves
(:math:`r` periodic). Where they sit in the :math:`(\\omega_0, K)` plane is the phase diagram of Martens
et al.'s figure 1. Below, particle runs are placed on it as markers of the state they reach.
"""

# %%
# The exact boundaries
# --------------------
#
# Incoherence has the eigenvalues :math:`\lambda = -\Delta + K/4 \pm \sqrt{K^2/16 - \omega_0^2}`. It loses
# stability at :math:`K = 2(\Delta^2 + \omega_0^2)/\Delta` through a pitchfork for
# :math:`\omega_0 \le \Delta`, and at :math:`K = 4\Delta` through a Hopf bifurcation for
# :math:`\omega_0 > \Delta`. The stationary states fold (saddle-node) for
# :math:`\omega_0 > \Delta/\sqrt3`. ``mf.bimodal_boundaries`` returns these lines and the special points.
import matplotlib.pyplot as plt
import numpy as np

import meanfield as mf

DELTA = 1.0
boundaries = mf.bimodal_boundaries(np.linspace(0, 2, 201), DELTA)
a = boundaries.attrs
print(f"tricritical point (omega0, K) = ({a['tricritical_separation']:.4f}, {a['tricritical_coupling']:.4f})"
      f"  [exact (1/sqrt 3, 8/3) = ({1 / np.sqrt(3):.4f}, {8 / 3:.4f})]")
print(f"Bogdanov-Takens point (omega0, K) = ({a['bogdanov_takens_separation']:g}, "
      f"{a['bogdanov_takens_coupling']:g})")
at = mf.bimodal_boundaries([0.5, 0.8, 1.3], DELTA)
for w0, k_inc, kind, k_sn in zip(at.separation.values, at.incoherence_boundary.values,
                                 at.boundary_kind.values, at.saddle_node.values):
    print(f"omega0 = {w0}: incoherence loses stability at K = {k_inc:.4f} "
          f"({'Hopf' if kind else 'pitchfork'}), saddle-node at K = {k_sn:.6f}")

# %%
# The attractors over the plane
# -----------------------------
#
# ``mf.bimodal_states`` integrates the reduced equations at every :math:`(\omega_0, K)` of a grid from two
# starts, :math:`|z_0| = 0.01` (near incoherence) and 0.9 (near synchrony), to :math:`t = 400`, and
# classifies :math:`r` over the last 100 time units. Cells where the starts disagree are bistable; cells
# still drifting at :math:`t = 400` (next to a bifurcation, where relaxation is slow) are reported as
# unsettled rather than guessed. All 31 × 41 × 2 runs are one batch; ``rtol=1e-7`` (the default is 1e-9)
# halves its cost and changes no cell of this grid.
states = mf.bimodal_states(np.linspace(0, 2, 31), np.linspace(1, 6, 41), DELTA, rtol=1e-7)
first = states["state"].isel(start=0).values
names = {-2: "unsettled", -1: "failed", 0: "incoherent", 1: "partially synchronised", 2: "standing wave"}
print("all runs reached t_final:", bool(states.attrs["success"]))
print("cells by the state of the start |z0| = 0.01:",
      {names[v]: int((first == v).sum()) for v in names if (first == v).any()})
print("bistable cells:", int(states["bistable"].sum()), "of", states["bistable"].size)

# %%
# Particles on the diagram
# ------------------------
#
# Each marker is one run of :math:`n = 2000` oscillators (``mf.simulate``, frequencies at the midpoint
# quantiles of :math:`g`, the exact Möbius integrator) to :math:`t = 80`. They start from iid uniform phases,
# except one run at the bistable point :math:`(\omega_0, K) = (0.8, 3.19)`, which starts from
# :math:`\theta_i = 0`. The state a run reaches is read from :math:`r(t)` over
# :math:`t \in [40, 80]`, with thresholds set by the finite-:math:`n` fluctuations :math:`n^{-1/2}`:
#
# - incoherent: mean :math:`r < 4 n^{-1/2}`;
# - standing wave: otherwise, if the standard deviation of :math:`r` exceeds :math:`3 n^{-1/2}`;
# - partially synchronised: otherwise.
#
# The reduced equations at the same point, from the matching start (0.01 for uniform phases, 0.9 for
# :math:`\theta_i = 0`), give the state and the mean :math:`r` the runs are compared with. In the bistable
# range the unstable branch separates the two basins; at smaller :math:`n` the fluctuations of a run
# from uniform phases can carry it across that branch to partial synchrony.
N = 2000
t = np.linspace(0.0, 80.0, 241)
late = t >= 40.0
runs = [(0.4, 2.0, "uniform"), (0.4, 3.5, "uniform"), (1.6, 4.6, "uniform"), (1.6, 5.5, "uniform"),
        (0.8, 3.19, "uniform"), (0.8, 3.19, "synchronised")]


def classify(r):
    if r.mean() < 4 / np.sqrt(N):
        return 0
    return 2 if r.std() > 3 / np.sqrt(N) else 1


results = []
print(" omega0     K  start         particles (mean r, std r)            Ott-Antonsen (mean r)")
for w0, k, start in runs:
    model = mf.Kuramoto(k, mf.bimodal_lorentzian(w0, DELTA))
    theta0 = np.random.default_rng(1).uniform(0, 2 * np.pi, N) if start == "uniform" else np.zeros(N)
    run = mf.simulate(model, theta0, t, rtol=1e-3, atol=1e-6)
    r = run.order_parameter.values
    state = classify(r[late])
    reduced = mf.bimodal_states([w0], [k], DELTA).isel(separation=0, coupling=0, start=0 if start == "uniform" else 1)
    results.append((w0, k, start, r, state, reduced))
    print(f"  {w0:4.1f}  {k:4.2f}  {start:12s}  {names[state]:22s} ({r[late].mean():.3f}, {r[late].std():.3f})"
          f"   {names[int(reduced.state)]:22s} ({float(reduced.r_mean):.3f})   success {run.attrs['success']}")
agree = sum(state == int(reduced.state) for *_, state, reduced in results)
print(f"particle state = Ott-Antonsen state in {agree} of {len(results)} runs")

# %%
# The diagram with the particle runs
# ----------------------------------
#
# Left: cells coloured by the attractor reached from :math:`|z_0| = 0.01`, dots on bistable cells, the
# pitchfork (solid), Hopf (dashed) and saddle-node (red) lines from ``mf.plot.bimodal_phase_diagram``.
# The markers are the particle runs, filled by the state they reach (grey: incoherent, blue: partially
# synchronised, orange: standing wave; circle: from uniform phases, square: from :math:`\theta_i = 0`,
# drawn slightly to the right). Right: their :math:`r(t)`.
colours = {0: "0.55", 1: "#2171b5", 2: "#e6550d"}
fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5), layout="constrained")
mf.plot.bimodal_phase_diagram(states, boundaries, ax=left)
for w0, k, start, r, state, _ in results:
    marker, shift = ("o", 0.0) if start == "uniform" else ("s", 0.06)
    left.plot(w0 + shift, k, marker, ms=10, mfc=colours[state], mec="k", mew=1.5)
    right.plot(t, r, lw=1, label=f"omega0 = {w0}, K = {k}, {start}: {names[state]}")
for state in (0, 1, 2):
    left.plot([], [], "o", ms=7, mfc=colours[state], mec="k", label=f"particles n = {N}: {names[state]}")
left.legend(fontsize=6, loc="upper left")
right.set(xlabel="t", ylabel="r(t)", title=f"order parameter of the particle runs (n = {N})")
right.legend(fontsize=7, loc="upper right")
plt.show()

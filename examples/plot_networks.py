"""
Oscillators on networks: rings, small worlds and a graphon
==========================================================

Kuramoto oscillators coupled along the edges of a graph with weights :math:`A_{ij}` (node :math:`i` feels node
:math:`j`), natural frequencies :math:`\\omega_i` and coupling :math:`K` (docs/networks.md):

.. math::

    \\dot\\theta_i = \\omega_i + \\frac{K}{c_i} \\sum_j A_{ij}\\, w_j \\sin(\\theta_j - \\theta_i),
    \\qquad w_j = \\frac1n, \\qquad
    c_i = 1 \\ (\\texttt{normalization="n"}) \\quad\\text{or}\\quad c_i = \\frac{d_i}{n},\\ d_i = \\sum_j A_{ij}
    \\ (\\texttt{"degree"}).

With ``"n"`` and :math:`A_{ij} = 1` for all :math:`i, j` this is the all-to-all model of paper 2 (7.2); with
``"degree"`` every node feels the mean over its neighbours. ``mf.Graph`` holds the adjacency (sparse; a
``networkx`` graph is accepted too) and ``mf.Kuramoto(K, graph=G)`` runs the particles along its edges, by the
exact Möbius flow with local fields :math:`Z_i = \\frac{1}{c_i} \\sum_j A_{ij} w_j e^{i\\theta_j}` when the
coupling is :math:`\\sin`. Besides the global order parameter :math:`r = |\\frac1n \\sum_j e^{i\\theta_j}|` a network
has local ones, :math:`r_i = |\\sum_j A_{ij} e^{i\\theta_j}| / d_i`, the coherence node :math:`i` sees. The dense
limit of graphs sampled from a graphon :math:`W(x, y)` is a PDE for :math:`\\rho(t, x, \\theta)` (Medvedev 2014;
Chiba & Medvedev 2019), ``mf.GraphonKuramoto``.
"""

import matplotlib.pyplot as plt
import numpy as np
import scipy.stats

import meanfield as mf

# %%
# The complete graph is the all-to-all model
# ------------------------------------------
#
# 500 oscillators with Gaussian natural frequencies (:math:`\sigma_\omega = 0.5`, the midpoint quantiles in
# random order) from uniform random phases, :math:`K = 1.2`. The complete graph with loops, given explicitly,
# moves them as ``mf.Kuramoto(K)`` without a graph does (which sums through the Fourier moments in
# :math:`O(n)`): the two runs agree to round-off.

n, K = 500, 1.2
law = scipy.stats.norm(0.0, 0.5)
rng = np.random.default_rng(0)
theta0 = rng.uniform(0.0, 2 * np.pi, n)
omega = rng.permutation(law.ppf((np.arange(n) + 0.5) / n))
t = np.linspace(0.0, 60.0, 301)

all_to_all = mf.Kuramoto(K, frequencies=law)
reference = mf.simulate(all_to_all, theta0, t, frequencies=omega, rtol=1e-6)
complete = mf.simulate(mf.Kuramoto(K, frequencies=law, graph=mf.Graph.complete(n)), theta0, t, frequencies=omega,
                       rtol=1e-6)
difference = np.angle(np.exp(1j * (complete.positions.values - reference.positions.values)))
print(f"complete graph ({complete.attrs['graph_edges']} edges) against all-to-all: "
      f"max |theta difference| = {np.abs(difference).max():.1e}, method {complete.attrs['method']}")

# %%
# Identical oscillators on a ring: twisted states
# -----------------------------------------------
#
# Without natural frequencies (:math:`\omega_i = 0`) the all-to-all model synchronises from almost every
# start. A ring does not have to: on the ring where node :math:`j` is linked to :math:`j \pm 1`
# (``mf.Graph.ring(n, 1)``, normalised by the degree), every *twisted state*
# :math:`\theta_j = 2\pi q j/n` is an equilibrium, and linearising about it gives the circulant Jacobian with
# eigenvalues
#
# .. math::
#
#     \lambda_m = K \cos(2\pi q/n) \bigl(\cos(2\pi m/n) - 1\bigr), \qquad m = 1, \dots, n - 1,
#
# so the twisted state is stable exactly when :math:`|q|/n < 1/4` (Wiley, Strogatz & Girvan 2006). Each node
# then sees the local order parameter :math:`r_i = |\cos(2\pi q/n)|`, although the global :math:`r` is 0.
# With :math:`n = 20`, :math:`K = 4`, a random perturbation :math:`\delta` of size :math:`10^{-6}`: its Fourier
# modes :math:`\hat\delta_m = \frac1n \sum_j \delta_j e^{-2\pi i m j/n}` evolve independently in the linear
# regime, :math:`|\hat\delta_m(t)| = |\hat\delta_m(0)|\, e^{\lambda_m t}`. About the 3-twisted state
# (:math:`3/20 < 1/4`) every mode decays, the slowest (:math:`m = 1`) at :math:`\lambda_1`; about the 6-twisted state
# (:math:`6/20 > 1/4`) every mode grows, the fastest (:math:`m = n/2`) at :math:`\lambda_{10}`. The rates fitted to
# these modes of the computed :math:`\theta(t)` are printed against :math:`\lambda_m`.
#
# A ``networkx`` graph (an optional dependency) is read into the same ``mf.Graph``: the cycle graph is this ring,
# with the same SHA-1 fingerprint of its adjacency.

n_ring, K_ring = 20, 4.0
ring = mf.Graph.ring(n_ring, 1, normalization="degree")
try:
    import networkx as nx
except ImportError:
    print("networkx is not installed")
else:
    same = mf.Graph(nx.cycle_graph(n_ring), normalization="degree").fingerprint == ring.fingerprint
    print(f"mf.Graph(nx.cycle_graph({n_ring})) is mf.Graph.ring({n_ring}, 1): {same}")
identical = mf.Kuramoto(K_ring, graph=ring)
nodes = np.arange(n_ring)
modes = np.arange(1, n_ring)
t_short = np.linspace(0.0, 10.0, 101)
kick = 1e-6 * rng.standard_normal(n_ring)
kick -= kick.mean()
amplitudes = {}
for q, m in ((3, 1), (6, n_ring // 2)):
    twisted = 2 * np.pi * q * nodes / n_ring
    rates = K_ring * np.cos(2 * np.pi * q / n_ring) * (np.cos(2 * np.pi * modes / n_ring) - 1)
    run = mf.simulate(identical, twisted + kick, t_short)
    deviation = np.angle(np.exp(1j * (run.positions.values - twisted)))
    amplitudes[q] = np.abs(np.fft.fft(deviation, axis=1)[:, m]) / n_ring
    linear = amplitudes[q] < 1e-4                                  # the linear regime
    fitted = np.polyfit(t_short[linear], np.log(amplitudes[q][linear]), 1)[0]
    local = mf.local_order_parameters(run, ring)
    print(f"q = {q}: max_m lambda_m = {rates.max():+.6f} (m = {modes[np.argmax(rates)]}), mode m = {m} fitted "
          f"{fitted:+.6f}, lambda_{m} = {rates[m - 1]:+.6f}; r_i at t = 0: {float(local.isel(time=0).mean()):.10f} "
          f"(|cos(2 pi q/n)| = {abs(np.cos(2 * np.pi * q / n_ring)):.10f})")

# %%
# Rewiring the ring
# -----------------
#
# Which state a random start reaches depends on the network. For each rewiring probability :math:`p`,
# 64 Watts–Strogatz graphs (``mf.Graph.small_world(20, 2, p)``: a ring with :math:`j` linked to :math:`j \pm 1,
# j \pm 2`, each edge's far end moved with probability :math:`p`) are run at once as one disjoint union
# (``mf.Graph.disjoint_union``), each from its own uniform random phases. At the end every network is
# locked (``mf.phase_locking_time``: from then on all :math:`\dot\theta_i` agree to :math:`10^{-6}`); its winding
# number :math:`q = \frac{1}{2\pi}\sum_j \operatorname{arg} e^{i(\theta_{j+1} - \theta_j)}` tells a twisted state
# from synchrony (:math:`q = 0`, :math:`r = 1`). On the ring (:math:`p = 0`) about a third of the starts freeze into
# a twisted state; a few shortcuts make synchrony the rule.

networks = 64
starts = rng.uniform(0.0, 2 * np.pi, networks * n_ring)
t_lock = np.linspace(0.0, 100.0, 201)
probabilities = (0.0, 0.05, 0.1, 0.2, 0.5)
synchronised, final_phases = [], {}
for p in probabilities:
    union = mf.Graph.disjoint_union(*(mf.Graph.small_world(n_ring, 2, p, seed=s, normalization="degree")
                                      for s in range(networks)))
    model = mf.Kuramoto(K_ring, graph=union)
    run = mf.simulate(model, starts, t_lock)
    phases = run.positions.isel(time=-1).values.reshape(networks, n_ring)
    winding = np.round(np.angle(np.exp(1j * np.diff(phases, axis=1, append=phases[:, :1]))).sum(axis=1) / (2 * np.pi))
    r_end = np.abs(np.exp(1j * phases).mean(axis=1))
    synchronised.append(np.mean(r_end > 1 - 1e-6))
    final_phases[p] = phases
    print(f"p = {p:4.2f}: locked by t = {float(mf.phase_locking_time(run, model)):5.1f}; "
          f"|q| = 0, 1, 2: {np.bincount(np.abs(winding).astype(int), minlength=3)[:3]}; "
          f"synchronised (r = 1): {synchronised[-1]:.0%}")

fig, (left, middle, right) = plt.subplots(1, 3, figsize=(13, 3.8), layout="constrained")
for (q, m), colour in zip(((3, 1), (6, n_ring // 2)), ("C0", "C3")):
    rate = K_ring * np.cos(2 * np.pi * q / n_ring) * (np.cos(2 * np.pi * m / n_ring) - 1)
    left.semilogy(t_short, amplitudes[q], color=colour, label=f"q = {q}: mode m = {m}")
    left.semilogy(t_short, amplitudes[q][0] * np.exp(rate * t_short), "k--", lw=0.8)
left.set(xlabel="t", ylabel="|δ̂_m(t)|", ylim=(1e-9, 10),
         title="perturbed twisted states (dashed: exp(λ_m t))")
left.legend()
middle.plot(probabilities, synchronised, "o-")
middle.set(xlabel="rewiring probability p", ylabel="fraction of networks synchronised", ylim=(0, 1.05),
           title="64 small worlds of 20 nodes, ω = 0")
twisted_end = final_phases[0.0][np.argmax(np.abs(np.exp(1j * final_phases[0.0]).mean(axis=1)) < 0.5)]
right.plot(nodes, np.unwrap(twisted_end) - twisted_end[0], "o-", label="a ring, p = 0: twisted")
right.plot(nodes, np.unwrap(final_phases[0.5][0]) - final_phases[0.5][0][0], "s-", label="p = 0.5: synchronised")
right.set(xlabel="node j", ylabel="θ_j − θ_0 (unwrapped)", title="final phases along the ring")
right.legend()

# %%
# Natural frequencies: a ring, small worlds, the all-to-all model
# ---------------------------------------------------------------
#
# Back to the 500 oscillators with Gaussian frequencies and :math:`K = 1.2`, now on graphs normalised by the
# degree: a ring with :math:`j` linked to :math:`j \pm 1, \dots, j \pm 5`, and small worlds made from it by
# rewiring with :math:`p = 0.05` and :math:`0.2`. For the all-to-all model Kuramoto's self-consistency
# :math:`r = K r \int_{-\pi/2}^{\pi/2} \cos^2\varphi\, g(K r \sin\varphi)\, d\varphi` gives :math:`r_\infty`
# (``mf.kuramoto_theory``), and the oscillators with :math:`|\omega| \le K r_\infty` lock, those outside drift at
# the mean frequency :math:`\Omega = \operatorname{sign}(\omega)\sqrt{\omega^2 - (K r_\infty)^2}`.
#
# ``mf.effective_frequencies`` measures :math:`\Omega_i = (\theta_i(t_b) - \theta_i(t_a))/(t_b - t_a)` over the
# last 30 time units (the angles unwrapped exactly) and ``mf.frequency_clusters`` groups the oscillators
# whose links stay frequency-locked (phase difference drifting by less than :math:`\pi/2` over the window).
# The all-to-all model locks as many as theory says; the ring breaks into many clusters with a low global
# :math:`r` although each node sees a coherent neighbourhood (high :math:`r_i`); shortcuts restore much of the
# global order.

r_theory = float(mf.kuramoto_theory(K, law))
locked_theory = n * (2 * law.cdf(K * r_theory) - 1)
print(f"all-to-all theory: r_inf = {r_theory:.4f}, locked |omega| <= K r_inf = {K * r_theory:.4f}: "
      f"{locked_theory:.1f} of {n} oscillators")
graphs = {"all-to-all": None,
          "ring, k = 5": mf.Graph.ring(n, 5, normalization="degree"),
          "small world, p = 0.05": mf.Graph.small_world(n, 5, 0.05, seed=1, normalization="degree"),
          "small world, p = 0.2": mf.Graph.small_world(n, 5, 0.2, seed=1, normalization="degree")}
heterogeneous = {}
print("                       r (t > 30)   mean r_i   clusters   largest   drifting")
for name, graph in graphs.items():
    if graph is None:
        model, run = all_to_all, reference
    else:
        model = mf.Kuramoto(K, frequencies=law, graph=graph)
        run = mf.simulate(model, theta0, t, frequencies=omega, rtol=1e-6)
    clusters = mf.frequency_clusters(run, model, window=30.0)
    late = run.time >= 30.0
    local = f"{float(mf.local_order_parameters(run, graph).sel(time=late).mean()):.4f}" if graph else "  -   "
    heterogeneous[name] = (run, mf.effective_frequencies(run, model, window=30.0))
    print(f"  {name:<21}  {float(run.order_parameter.sel(time=late).mean()):.4f}       {local}     "
          f"{int(clusters.n_clusters):4d}      {int(clusters.largest_cluster):4d}      {int(clusters.n_drifting):4d}")

fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2), layout="constrained")
for (name, (run, frequencies)), colour in zip(heterogeneous.items(), ("k", "C0", "C1", "C2")):
    left.plot(t, run.order_parameter, color=colour, lw=1, label=name)
    right.plot(omega, frequencies, ".", ms=3, color=colour, label=name)
left.axhline(r_theory, color="k", ls="--", lw=0.8, label="r∞ (theory, all-to-all)")
left.set(xlabel="t", ylabel="r(t)", title=f"n = {n}, K = {K:g}, Gaussian ω (σ = 0.5), normalised by the degree")
left.legend(fontsize=8)
w = np.linspace(-1.6, 1.6, 401)
right.plot(w, np.sign(w) * np.sqrt(np.maximum(w**2 - (K * r_theory) ** 2, 0.0)), "k--", lw=0.8,
           label="all-to-all theory")
right.set(xlabel="natural frequency ω_i", ylabel="effective frequency Ω_i (last 30 time units)",
          title="frequency locking")
right.legend(fontsize=8, markerscale=3)

# %%
# The graphon limit
# -----------------
#
# For the graphon :math:`W(x, y) = \frac12(1 + \cos 2\pi(x - y))` (a smooth ring of connection probabilities) and
# identical oscillators, :math:`K = 1.5`, normalised by :math:`n`, the density :math:`\rho(t, x, \theta)` obeys
#
# .. math::
#
#     \partial_t \rho(x, \cdot) + \partial_\theta\bigl(\rho(x, \cdot)\, X_x\bigr) = 0, \qquad
#     X_x(\theta) = K \int_0^1 W(x, y) \int \sin(\varphi - \theta)\, \rho(y, \varphi)\, d\varphi\, dy,
#
# which ``mf.solve`` integrates on 16 Gauss–Legendre positions :math:`x_m`, one circle density each, from a
# von Mises density (:math:`\kappa = 1`) at every :math:`x`. First a check: the constant graphon
# :math:`W \equiv p` is the all-to-all model with coupling :math:`Kp` (here with noise :math:`\sigma = 0.05` on 128
# nodes: the two spectral runs take the same steps and agree to round-off).
#
# Then ``model.sampled(n, positions="random")`` draws a :math:`W`-random graph (node :math:`i` at a uniform
# :math:`x_i`, edge :math:`i`–:math:`j` with probability :math:`W(x_i, x_j)`), and ``mf.compare`` measures
# :math:`W_1` between the PDE's :math:`\theta`-marginal and the oscillators at :math:`t = 2`. The start is the
# midpoint quantiles of the von Mises law, shuffled over the nodes, so that only the graph makes the
# difference; each node's field is then off by :math:`O(n^{-1/2})`, which moves the empirical marginal by
# :math:`O(n^{-3/4})` (docs/networks.md: fitted :math:`-0.758 \pm 0.009`). Three graphs per :math:`n`.
#
# This graphon has the same degree :math:`\int_0^1 W(x, y)\, dy = \frac12` at every :math:`x`, and the start does
# not depend on :math:`x`, so the density is the same at every position: the PDE's :math:`\theta`-marginal is the
# all-to-all density with coupling :math:`K/2`. The computed densities of the 16 positions agree to round-off in
# their smooth part; they differ by :math:`10^{-7}`–:math:`10^{-6}` only in the highest Fourier modes
# (:math:`k \gtrsim 150` of 256), noise at the grid scale that the noiseless spectral scheme's adaptive steps keep
# near their tolerance. The finite graphs are not homogeneous (the degrees scatter by :math:`O(\sqrt n)` about
# :math:`n/2`), and the distance measures that.

rho0 = mf.von_mises(mf.Circle(512), 0.0, 1.0)
t_graphon = np.linspace(0.0, 2.0, 5)
circle128 = mf.Circle(128)
rho_noisy = mf.von_mises(circle128, 0.0, 1.0)
constant = mf.solve(mf.GraphonKuramoto(2.0, 0.4, nodes=6, noise=0.05), rho_noisy, t_graphon, method="spectral")
alone = mf.solve(mf.Kuramoto(0.8, noise=0.05), rho_noisy, t_graphon, method="spectral")
print(f"constant graphon W = 0.4, K = 2 against all-to-all K = 0.8: "
      f"max |rho difference| = {float(np.abs(constant.density - alone.density).max()):.1e}")


def cosine(x, y):
    return 0.5 * (1 + np.cos(2 * np.pi * (x - y)))


graphon = mf.GraphonKuramoto(1.5, cosine, nodes=16)
pde = mf.solve(graphon, rho0, t_graphon, method="spectral")
spread = (pde.density_by_position - pde.density).isel(time=-1).values          # rho(2, x_m, .) - marginal
low = np.fft.irfft(np.where(np.arange(257) < 100, np.fft.rfft(spread, axis=-1), 0.0), n=512, axis=-1)
print("graphon PDE:", pde.attrs["method"], "| success:", pde.attrs["success"], "| r(2) =",
      round(float(pde.order_parameter[-1]), 6))
print(f"max over x_m of |rho(2, x_m, .) - marginal| = {np.abs(spread).max():.1e}; "
      f"in the Fourier modes k < 100: {np.abs(low).max():.1e}")
sizes = np.array([200, 400, 800, 1600])
distances = np.zeros((3, sizes.size))
for seed in range(3):
    for i, size in enumerate(sizes):
        sampled = graphon.sampled(int(size), seed=seed, positions="random")
        start = np.random.default_rng(100 + seed).permutation(mf.sample(rho0, int(size), method="quantile").points)
        particles = mf.simulate(sampled, start, t_graphon)
        distances[seed, i] = float(mf.compare(pde, particles).wasserstein[0, -1])
slopes = [np.polyfit(np.log(sizes), np.log(d), 1)[0] for d in distances]
print("W1 at t = 2 (rows: graphs; columns: n = 200, 400, 800, 1600):")
print(np.array2string(distances, precision=5))
print(f"fitted exponents {np.round(slopes, 3)}, mean {np.mean(slopes):.3f}")

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
left.plot(pde.theta, pde.density.isel(time=0), color="0.6", label="ρ(0, θ): von Mises, κ = 1")
left.plot(pde.theta, pde.density.isel(time=-1), "k", label="graphon PDE, t = 2")
left.hist(particles.positions.isel(time=-1), bins=64, range=(0, 2 * np.pi), density=True, histtype="step",
          color="C0", label=f"{sizes[-1]} oscillators on a W-random graph")
left.set(xlabel="θ", ylabel="θ-marginal", title="the graphon W = (1 + cos 2π(x − y))/2, K = 1.5")
left.legend(fontsize=8)
right.loglog(sizes, distances.T, "o-", color="C0", alpha=0.5)
right.loglog(sizes, distances.mean(axis=0)[0] * (sizes / sizes[0]) ** -0.75, "k--", label=r"$n^{-3/4}$")
right.set(xlabel="nodes n", ylabel="W₁(θ-marginal of ρ, oscillators) at t = 2",
          title="W-random graphs approach the graphon PDE")
right.legend()
plt.show()

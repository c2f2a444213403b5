"""
The hard-max limit: Example 9.3
===============================

Paper 2, §9.3 (Problem 6) asks what becomes of the rescaled self-attention dynamics

.. math::

    \\dot z_i = \\sum_j \\operatorname{softmax}_j\\big(\\beta\\langle Q z_i, K z_j\\rangle\\big)\\, V (z_j - z_i)
    \\qquad (9.4)

as :math:`\\beta \\to \\infty`. Formally the softmax becomes the uniform law on the maximisers,

.. math::

    \\dot z_i = \\frac{1}{|C_i|} \\sum_{j \\in C_i} V (z_j - z_i), \\qquad
    C_i = \\operatorname{argmax}_j \\langle Q z_i, K z_j \\rangle \\qquad (9.5)\\text{--}(9.6),

a right-hand side that jumps where a maximiser changes. Its solutions are taken in Filippov's sense and
are not unique. ``mf.HardmaxAttention`` integrates (9.5)–(9.6) with an event-driven stepper and one
stated selection rule (docs/hardmax.md). ``mf.hardmax_limit`` runs (9.4) on a ladder of β, which is
``mf.Attention(beta, projection=False, rescaled=True, scores_at_z=True)``, and measures the distance to
the hard-max run.

Example 9.3: :math:`d = 2`, :math:`n = 3`, :math:`Q = K = V = I`, :math:`z_1 = (1, 1)`,
:math:`z_2 = (-1, 1)`, :math:`z_3 = 0`.
"""

# %%
# The hard-max engine on Example 9.3
# ----------------------------------
#
# :math:`z_1` and :math:`z_2` are their own maximisers and stay put. At :math:`t = 0` the three scores
# of :math:`z_3` tie at 0. The engine keeps the maximisers whose scores keep pace (right-continuous
# maximisers), here :math:`C_3 = \{1, 2\}` with weights 1/2 each, and :math:`z_3` follows the
# symmetric branch :math:`z_3(t) = (0, 1 - e^{-t})`. ``mf.attention_matrix`` shows the weights the rule
# selects at the start.
import matplotlib.pyplot as plt
import numpy as np

import meanfield as mf

z0 = np.array([[1.0, 1.0], [-1.0, 1.0], [0.0, 0.0]])
engine = mf.HardmaxAttention()                       # Q = K = V = I
print("selected weights at t = 0:\n", mf.attention_matrix(engine, z0))

t = np.linspace(0.0, 5.0, 101)
symmetric = mf.simulate(engine, z0, t, rtol=1e-13, atol=1e-15)
z = symmetric["positions"].values                    # (time, particle, component)
exact = np.broadcast_to(z0, z.shape).copy()
exact[:, 2, 1] = 1 - np.exp(-t)
print("success:", bool(symmetric.attrs["success"]), "-", symmetric.attrs["message"])
print(f"max over [0, 5] of |z - (branch z3 = (0, 1 - e^-t))| = {np.abs(z - exact).max():.1e}")
print("z1, z2 fixed exactly:", bool(np.array_equal(z[:, :2], exact[:, :2])))

# %%
# Branches that (9.5) admits but that are not limits
# --------------------------------------------------
#
# (9.5) is also satisfied by :math:`z_3 \to z_1` and :math:`z_3 \to z_2`
# (:math:`z_3(t) = (1 - e^{-t})\,z_j`). The symmetric branch is unstable: from
# :math:`z_3(0) = (\pm 10^{-12}, 0)` the engine takes the branch to :math:`z_1` (resp. :math:`z_2`), as every
# finite-β run of (9.4) does: the scores of :math:`z_3` differ by :math:`2 \cdot 10^{-12}`, far above their
# round-off (about :math:`10^{-27}`), and the engine ties scores only at their round-off (docs/hardmax.md,
# "The tie rule"). The limit therefore depends discontinuously on the data at this configuration.
branches = {}
for name, sign, target in (("to z1", 1.0, z0[0]), ("to z2", -1.0, z0[1])):
    start = z0.copy()
    start[2, 0] = sign * 1e-12
    run = mf.simulate(engine, start, t, rtol=1e-13, atol=1e-15)["positions"].values
    expected = target + (start[2] - target) * np.exp(-t)[:, None]
    branches[name] = run
    print(f"branch {name} from z3(0) = ({sign * 1e-12:+.0e}, 0): max |z3 - exact| = "
          f"{np.abs(run[:, 2] - expected).max():.1e}")

# %%
# Finite β approaches the symmetric branch at rate 1/β
# ----------------------------------------------------
#
# For every β the reflection :math:`(a, b) \mapsto (-a, b)` combined with swapping :math:`z_1` and
# :math:`z_2` leaves the data and (9.4) invariant, so :math:`z_3` stays on the axis. There
# :math:`\dot s = (1 - s)/(1 + e^{-\beta s(1-s)}/2)` for :math:`s = z_3 \cdot e_2`: near :math:`s = 0`
# the speed is 2/3 instead of 1 until :math:`\beta s \approx 1`, a lag that costs
# :math:`\int_0^\infty e^{-\sigma}/2\, d\sigma = 1/2` in :math:`\beta s`. Hence
# :math:`e(\beta) = \sup_t \max_i |z_i^\beta(t) - z_i^\infty(t)| \approx 1/(2\beta)`. The sup is taken
# over output times spaced geometrically from :math:`10^{-5}` so that the initial layer of width
# :math:`\sim 1/\beta` is resolved.
times = np.concatenate([[0.0], np.geomspace(1e-5, 5.0, 400)])
ladder = mf.hardmax_limit(z0, times, betas=[4, 8, 16, 32, 64, 128, 256])
beta, sup = ladder["beta"].values, ladder["sup_error"].values
print("   beta    e(beta)   beta*e(beta)")
for b, e in zip(beta, sup):
    print(f"  {b:5.0f}   {e:.3e}   {b * e:.4f}")
print(f"all runs succeeded: {bool(ladder.attrs['success'])}; e decreases along the ladder: "
      f"{bool(ladder.attrs['monotone'])}")
print(f"least-squares fit e ~ {ladder.attrs['prefactor']:.3f} beta^-{ladder.attrs['rate']:.3f}; "
      f"beta*e at beta = {beta[-1]:.0f}: {beta[-1] * sup[-1]:.4f} (derived limit 1/2)")

# %%
# The symmetry is kept to the last bit: :math:`z_3 \cdot e_1` is exactly 0 at every output of every β,
# and the branches to :math:`z_1` and :math:`z_2` stay :math:`O(1)` away from every finite-β run.
print("max |z3 . e1| over all beta and t:", float(np.abs(ladder["positions"].values[:, :, 2, 0]).max()))
final = ladder["positions"].values[:, -1, 2]
gap = np.linalg.norm(final - branches["to z1"][-1, 2], axis=-1)
print("|z3^beta(5) - branch to z1 at t = 5| for each beta:", np.round(gap, 4))

# %%
# Figure
# ------
#
# Left: :math:`z_3` in the plane, the limit branch (solid), the two other Filippov branches (dotted)
# and (9.4) at :math:`\beta = 4` and 256. Middle: the initial layer of :math:`z_3 \cdot e_2`, of width
# :math:`\sim 1/\beta`. Right: :math:`e(\beta)` against :math:`1/(2\beta)`.
fig, (ax, bx, cx) = plt.subplots(1, 3, figsize=(13, 4.2), layout="constrained")
ax.plot(*z0[:2].T, "ks", label="z1, z2 (fixed)")
ax.plot(*z[:, 2].T, "k-", lw=2, label="hard-max: z3 = (0, 1 - e^-t)")
for name in ("to z1", "to z2"):
    ax.plot(*branches[name][:, 2].T, ":", color="gray", lw=2,
            label="branches z3 -> z1, z2 (not limits)" if name == "to z1" else None)
for b, colour in ((4.0, "C0"), (256.0, "C3")):
    ax.plot(*ladder["positions"].sel(beta=b).values[:, 2].T, "--", color=colour, lw=1.2,
            label=f"(9.4), beta = {b:.0f}")
ax.set(aspect="equal", ylim=(-0.9, 1.15), xlabel="z . e1", ylabel="z . e2", title="Example 9.3, t in [0, 5]")
ax.legend(fontsize=7, loc="lower center", ncol=2)
for b in (4.0, 16.0, 64.0, 256.0):
    bx.plot(times[1:], ladder["positions"].sel(beta=b).values[1:, 2, 1], lw=1, label=f"beta = {b:.0f}")
bx.plot(times[1:], ladder["limit"].values[1:, 2, 1], "k--", lw=1.5, label="hard-max engine")
bx.set(xscale="log", xlim=(1e-4, 5), xlabel="t", ylabel="z3 . e2", title="the initial layer")
bx.legend(fontsize=7)
cx.loglog(beta, sup, "o-", label="sup_t max_i |z^beta - z^inf|")
cx.loglog(beta, 0.5 / beta, "k--", lw=1, label="1/(2 beta)")
cx.set(xlabel="beta", ylabel="e(beta)", title=f"fitted rate {ladder.attrs['rate']:.3f}")
cx.legend(fontsize=8)
plt.show()

r"""
Checkpoints, resume and what a file says about its run
======================================================

A long run should survive an interruption, and a result file should say how it was made.
:func:`meanfield.solve` (and :func:`meanfield.simulate`) take ``checkpoint="run.nc"``: the outputs
reached so far are written to that NetCDF file as the run goes, together with the scheme's own
state, and ``resume=True`` continues from it. This tutorial

1. runs a reference solution without interruption,
2. runs it again with a checkpoint and interrupts it as Ctrl-C would,
3. reads what the interrupted file says,
4. resumes it and checks that the result equals the uninterrupted run bit for bit,
5. extends a finished run to later times,
6. reads the attrs of the file: model, scheme, tolerances, version, checksum, history,
7. and shows what is refused: a checkpoint of another run, and a file altered after it was written.

Everything is written into a temporary directory that is removed at the end.
"""

# %%
# The run
# -------
#
# SA dynamics with :math:`\beta = 4` and a little noise, :math:`\sigma = 0.002`, from a perturbed
# uniform density on 2048 nodes (its density is taken with respect to arc length,
# :math:`\int\rho\, d\sigma = 1`). With noise the default method is the spectral scheme; we give
# its tolerances explicitly, ``rtol = 1e-10`` and ``atol = 1e-13``, and ask for 81 outputs up
# to :math:`t = 40`. This is the uninterrupted reference.

import os
import signal
import tempfile
from pathlib import Path

import numpy as np
import xarray as xr

import meanfield as mf

model = mf.SelfAttention(beta=4.0, noise=0.002)
rho0 = mf.perturbed_uniform(mf.Circle(2048), amplitude=0.05, seed=3)
t = np.linspace(0.0, 40.0, 81)
options = {"method": "spectral", "rtol": 1e-10, "atol": 1e-13}

straight = mf.solve(model, rho0, t, **options)
print(f"{straight.attrs['message']}: {straight.attrs['n_steps']} steps, {straight.attrs['wall_time']:.2f} s")

# %%
# An interrupted run
# ------------------
#
# The same run now writes a checkpoint at most every 0.1 s of wall time
# (``checkpoint_interval``; the default is 30 s). To interrupt it as Ctrl-C does, without a
# keyboard, a timer sends the process SIGINT after half the reference run's wall time
# (``signal.setitimer`` is POSIX only). A SIGINT that arrives while a checkpoint is being written
# is held until the file is whole (:func:`meanfield.io.interrupts_held`); anywhere else Python
# raises :class:`KeyboardInterrupt` at once. ``solve`` catches it, marks its last checkpoint
# as interrupted and raises :class:`meanfield.RunInterrupted`, a ``KeyboardInterrupt`` that says
# where the run got to. Where exactly that is depends on the speed of the machine.

folder = tempfile.TemporaryDirectory()
path = Path(folder.name) / "run.nc"

interrupt_armed = False


def press_ctrl_c(signum, frame):
    if interrupt_armed:
        os.kill(os.getpid(), signal.SIGINT)


previous_alarm = signal.signal(signal.SIGALRM, press_ctrl_c)
previous_sigint = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in an interactive session
interrupt_armed = True
signal.setitimer(signal.ITIMER_REAL, 0.5 * straight.attrs["wall_time"])
try:
    mf.solve(model, rho0, t, checkpoint=path, checkpoint_interval=0.1, **options)
    interrupt_armed = False
    print("the run finished before the interrupt")
except mf.RunInterrupted as stop:
    interrupt_armed = False
    print(stop)
    print("t reached:", stop.t_reached)
finally:
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous_alarm)
    signal.signal(signal.SIGINT, previous_sigint)

# %%
# What the interrupted file says
# ------------------------------
#
# The file holds the outputs up to the last checkpoint (the step in progress when the interrupt
# arrived is not kept: up to ``checkpoint_interval`` seconds of work are redone on resuming).
# ``success = 0`` and the ``message`` says where it stopped and how to continue.
# :func:`meanfield.io.load_checkpoint` reads it and verifies its checksum first.

saved = mf.io.load_checkpoint(path)
if saved is not None:
    print("outputs in the file:", saved.sizes["time"], "of", t.size, "| last time:", float(saved.time[-1]))
    print("success:", saved.attrs["success"], "| message:", saved.attrs["message"])
else:
    print("no checkpoint was written before the interrupt: resuming starts from the beginning")

# %%
# Resume
# ------
#
# The same call with ``resume=True`` checks that the file was made by this run (every model
# parameter, every scheme option, the initial density), takes back its outputs and continues from
# the scheme's saved state: the spectral coefficients, the last Runge–Kutta stage and the next
# step size. So the resumed run takes exactly the steps the uninterrupted one took, and the two
# results are equal to the last bit; the step counts cover both segments.

resumed = mf.solve(model, rho0, t, checkpoint=path, resume=True, **options)
difference = np.abs(resumed.density.values - straight.density.values).max()
print("resumed at t =", resumed.attrs["resumed_at"], "|", resumed.attrs["message"])
print("max |ρ_resumed - ρ_uninterrupted| =", difference)
print("energies equal:", np.array_equal(resumed.energy.values, straight.energy.values),
      "| steps:", resumed.attrs["n_steps"], "vs", straight.attrs["n_steps"],
      "| rejected:", resumed.attrs["n_rejected"], "vs", straight.attrs["n_rejected"])

# %%
# Extending a finished run
# ------------------------
#
# A finished run can be continued too: its last write keeps the scheme's state. Here a run to
# :math:`t = 20` (the first 41 output times) is written to a second file, and the same call with
# all 81 times and ``resume=True`` carries it on to :math:`t = 40`. The requested times must begin
# with the saved ones. Again the result equals the run made to :math:`t = 40` at once.

first_half = Path(folder.name) / "first_half.nc"
half = mf.solve(model, rho0, t[:41], checkpoint=first_half, **options)
print("first segment:", half.attrs["message"], "at t =", float(half.time[-1]))
extended = mf.solve(model, rho0, t, checkpoint=first_half, resume=True, **options)
print("extended to t =", float(extended.time[-1]), "| max difference from the straight run:",
      np.abs(extended.density.values - straight.density.values).max())

# %%
# What the file says about its run
# --------------------------------
#
# The checkpoint is a complete result file. Its attrs, read here with plain xarray, say what was
# run and how:
#
# - the model and its parameters (``model``, ``beta``, ``noise``, ``normalized``), each with a
#   ``<name>_description`` in words, and the domain and grid;
# - the scheme: ``method``, ``scheme`` (the class in :mod:`solvers`), ``method_requested`` and
#   ``method_reason``, and every scheme option, given or default, as ``option_<name>``: the
#   tolerances ``option_rtol`` and ``option_atol``, the resolution limit ``option_tail_tol``, …;
# - ``rho0_sha256``: the SHA-256 of the initial density's values and grid, so a resumed run can
#   tell that it starts from the same state;
# - the run facts: ``success``, ``message``, ``n_steps``, ``n_rejected``, ``nfev``, ``dt_min``,
#   ``dt_max``, ``wall_time``, and ``resumed_at`` (the time a resume started from, -1 for none);
# - ``meanfield_version`` and ``Conventions`` (CF-1.8);
# - ``history``: one line per call that made or continued the file, oldest first;
# - ``sha256``: the digest of every variable (name, dimensions, values, attributes) and every other
#   attribute.

with xr.open_dataset(path) as stored:
    stored = stored.load()
for name in ["model", "beta", "noise", "normalized", "domain", "grid", "method", "scheme", "method_reason",
             "option_rtol", "option_atol", "option_tail_tol", "rho0_sha256", "success", "message", "n_steps",
             "n_rejected", "nfev", "dt_min", "dt_max", "resumed_at", "meanfield_version", "sha256"]:
    print(f"{name:>18} = {stored.attrs[name]}")
print("noise_description =", stored.attrs["noise_description"])
print("history:")
print(stored.attrs["history"])

# %%
# The history has two lines: the interrupted call and the call that resumed it (the call of the
# extension is in the other file). Besides the result (``density``, ``energy``, ``mass``,
# ``order_parameter``, ``steps``) the file holds the scheme's state at the last output, the
# ``scheme_*`` variables, each labelled as such. Drop them to keep the result alone.

print([name for name in stored.data_vars if name.startswith("scheme_")])
print(stored.scheme_state.attrs["long_name"])
result = stored.drop_vars([name for name in stored.data_vars if name.startswith("scheme_")])
print("result variables:", list(result.data_vars))

# %%
# The checksum can be recomputed by anyone with :func:`meanfield.io.dataset_checksum`; it is
# computed in a canonical form that survives the NetCDF round trip.

print("checksum verifies:", mf.io.dataset_checksum(stored) == stored.attrs["sha256"])

# %%
# What is refused
# ---------------
#
# Resuming from a checkpoint of a different run would splice two trajectories together, so it
# is refused with :class:`meanfield.CheckpointError` (a ``ValueError``) naming the first parameter
# that differs; nothing is computed. Here the noise differs.

try:
    mf.solve(mf.SelfAttention(beta=4.0, noise=0.003), rho0, t, checkpoint=path, resume=True, **options)
except mf.CheckpointError as refused:
    print("refused:", refused)

# %%
# A file changed after it was written fails its checksum, whatever was changed: here one density
# value in the last digit, written back with plain ``to_netcdf`` (which keeps the old ``sha256``).

altered = stored.copy(deep=True)
altered["density"][-1, 0] = np.nextafter(float(altered["density"][-1, 0]), np.inf)
altered.to_netcdf(path)
try:
    mf.solve(model, rho0, t, checkpoint=path, resume=True, **options)
except mf.CheckpointError as refused:
    print("refused:", refused)

folder.cleanup()

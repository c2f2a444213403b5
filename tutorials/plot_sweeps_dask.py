r"""
Sweeps on a dask cluster
========================

A study is usually one function run at every point of a grid of parameters and for many random
seeds. :func:`meanfield.sweep` does exactly that: it cuts the grid into tasks, runs them on a
``dask.distributed`` cluster (or in a plain loop), keeps every finished task in a store on disk so
that an interrupted sweep resumes, and returns one :class:`xarray.Dataset` whose dimensions are the
swept parameters and the seed.

Here the function counts the clusters that :math:`n = 32` tokens, drawn uniformly on
:math:`S^1`, have formed at :math:`t = 20` under SA dynamics, for six values of :math:`\beta`
and 512 seeds each. The sweep runs on a ``LocalCluster`` of two worker processes started by this
script; at the end we see how the same call runs on a cluster of other machines.
"""

# %%
# The function
# ------------
#
# ``func`` receives every swept name as a keyword argument and returns a Dataset. Three rules make
# a sweep reproducible and fast:
#
# - all randomness comes from the seed it receives, with one generator per system
#   (``SeedSequence([seed, n])``), so a system's result does not depend on the other seeds, on
#   the block it ran in or on the scheduler;
# - the seed dimension is *batched*: the function receives a block of seeds (a 1-D array) and runs
#   its systems in one call of :func:`meanfield.simulate` (a ``(systems, n)`` array of angles with
#   ``domain="circle"``, integrated by compiled kernels, each system with its own adaptive steps).
#   A task should take at least about 0.1 s, since dask costs about a millisecond per task and the
#   sweep a few more;
# - the result has the batched dimension ``seed`` with the block's length, and none of the
#   scalar swept names (the sweep adds ``beta`` itself).
#
# The tolerance ``rtol = 1e-4`` (``atol = rtol/100``) is the one docs/particle_ensembles.md
# measured for statistics of clustered tokens: looser than the default ``1e-8``, four times fewer
# evaluations, and a statistic within a fraction of its Monte-Carlo error.
#
# The function is defined at module level. Run as a script, this file is imported again by every
# worker process when it starts, so
# everything that starts a cluster or runs work below sits under ``if __name__ == "__main__":``;
# without it, every worker would start a cluster of its own.

import tempfile
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import xarray as xr
from distributed import Client, LocalCluster

import meanfield as mf
from meanfield.particles import number_of_clusters


def clusters_at_the_end(beta, seed, n=32, t_final=20.0, tolerance=1e-2, rtol=1e-4):
    """Clusters and order parameter at ``t_final`` of one SA system of n uniform tokens per seed."""
    seeds = np.atleast_1d(seed)
    x0 = np.stack([np.random.default_rng(np.random.SeedSequence([int(s), n])).uniform(0, 2 * np.pi, n)
                   for s in seeds])
    run = mf.simulate(mf.SelfAttention(beta), x0, [0.0, t_final], domain="circle", rtol=rtol, atol=rtol / 100)
    end = run.isel(time=-1)
    return xr.Dataset({
        "clusters": ("seed", number_of_clusters(end, tolerance=tolerance).values),
        "order_parameter": ("seed", end.order_parameter.values),
    })


# %%
# A local cluster
# ---------------
#
# The documentation's recommendation for a LocalCluster is one single-threaded worker process per
# core, with the numerical libraries held to one thread each, so that two workers use two cores
# and do not fight over them. ``mf.sweep(..., scheduler=None)`` starts exactly such a cluster
# itself and closes it at the end; here we start it ourselves, to reuse it for several sweeps, and
# pass the :class:`distributed.Client` (a client passed in is never closed by the sweep).
# Starting costs a few seconds, since each worker imports the package.

one_thread = {name: "1" for name in ["OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                     "NUMBA_NUM_THREADS"]}
if __name__ == "__main__":
    with warnings.catch_warnings():  # without a dashboard, the metrics server still asks for port 8787
        warnings.filterwarnings("ignore", message="Port 8787 is already in use")
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                               env=one_thread)
    client = Client(cluster)
    print("workers:", len(client.scheduler_info()["workers"]), "| scheduler:", client.scheduler.address)

# %%
# The sweep
# ---------
#
# ``grid`` names the swept parameters, ``seeds=512`` adds the seeds 0 … 511, ``batch`` cuts them
# into blocks of 128, and ``store`` is the directory that keeps one checksummed NetCDF piece per
# finished task. 6 values of :math:`\beta` times 4 blocks make 24 tasks.

betas = [0.5, 1.0, 2.0, 4.0, 6.0, 9.0]
if __name__ == "__main__":
    folder = tempfile.TemporaryDirectory()
    store = Path(folder.name) / "clusters_store"
    ds = mf.sweep(clusters_at_the_end, {"beta": betas}, seeds=512, batch={"seed": 128}, store=store,
                  scheduler=client, progress=False)
    print(ds)

# %%
# The result has dimensions ``(beta, seed)``, one value per system. Its attrs record the sweep:
# the function, the grid, the seeds, the batching, the fixed arguments, how many tasks ran or were
# taken from the store, where, and with which version.

if __name__ == "__main__":
    for name in ["function", "grid", "batch", "fixed", "tasks_total", "tasks_run", "tasks_skipped",
                 "scheduler", "n_workers", "wall_time", "meanfield_version"]:
        print(f"{name:>17} = {ds.attrs[name]}")

# %%
# What the sweep found: at small :math:`\beta` almost every system has collapsed into one cluster
# by :math:`t = 20`; as :math:`\beta` grows, several clusters survive to
# :math:`t = 20` (metastable states), more of them at larger :math:`\beta`. The error bars are
# standard errors over the 512 systems.

if __name__ == "__main__":
    mean = ds.clusters.mean("seed")
    stderr = ds.clusters.std("seed") / np.sqrt(ds.sizes["seed"])
    one = (ds.clusters == 1).mean("seed")
    for b, m, e, p in zip(betas, mean.values, stderr.values, one.values):
        print(f"β = {b:3.1f}: mean clusters {m:.2f} ± {e:.2f}, P(one cluster) = {p:.3f}")
    fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
    ax.errorbar(betas, mean, yerr=stderr, fmt="o-", capsize=3)
    ax.set_xlabel(r"$\beta$")
    ax.set_ylabel("clusters at t = 20")
    ax.set_title("SA, n = 32 uniform tokens on the circle, 512 systems per β")
    ax.grid(alpha=0.3)

# %%
# The same numbers on every scheduler
# -----------------------------------
#
# Because each system draws from its own seed, its result does not depend on where, in which block
# or beside which other seeds it ran. Running the first 64 seeds again as a plain loop in this
# process (``scheduler="serial"``, no store), in blocks of 16 instead of 128, gives the same values
# bit for bit as the corresponding part of the cluster's sweep.

if __name__ == "__main__":
    serial = mf.sweep(clusters_at_the_end, {"beta": betas}, seeds=64, batch={"seed": 16}, scheduler="serial",
                      progress=False)
    part = ds.sel(seed=serial.seed)
    difference = float(np.abs(serial.order_parameter - part.order_parameter).max())
    print("identical cluster counts:", bool((serial.clusters == part.clusters).all()),
          "| largest order-parameter difference:", difference)

# %%
# Resuming from the store
# -----------------------
#
# Called again with ``resume=True`` and the same store, the sweep verifies every piece on disk
# (its checksum and that it belongs to this sweep) and runs only the missing tasks: here none. A
# store made by a different sweep is refused, naming what differs, so results of two studies
# cannot mix.

if __name__ == "__main__":
    again = mf.sweep(clusters_at_the_end, {"beta": betas}, seeds=512, batch={"seed": 128}, store=store,
                     resume=True, scheduler=client, progress=False)
    print("tasks run:", again.attrs["tasks_run"], "| taken from the store:", again.attrs["tasks_skipped"])
    print("same result:", again.clusters.equals(ds.clusters))
    print("pieces in the store:", len(list((store / "pieces").iterdir())))
    try:
        mf.sweep(clusters_at_the_end, {"beta": betas[:3]}, seeds=512, batch={"seed": 128}, store=store,
                 resume=True, scheduler=client, progress=False)
    except ValueError as refused:
        print("refused:", refused)

# %%
# Close what we started: the client, then the cluster (its worker processes end with it), and the
# temporary directory that held the store.

if __name__ == "__main__":
    client.close()
    cluster.close()
    folder.cleanup()

# %%
# On a real cluster
# -----------------
#
# The same call runs on a dask cluster of other machines: start a scheduler on one machine and
# workers on the others (one thread each, as above), then give ``sweep`` the scheduler's address,
# or a :class:`distributed.Client` connected to it. Not executed here:
#
# .. code-block:: bash
#
#     # on the scheduler machine
#     dask scheduler                                   # listens on tcp://scheduler:8786
#     # on every worker machine
#     OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1 dask worker tcp://scheduler:8786 --nworkers 2 --nthreads 1
#
# .. code-block:: python
#
#     from distributed import Client
#     import meanfield as mf
#     from my_study import clusters_at_the_end        # a module the workers can import too
#
#     client = Client("tcp://scheduler:8786")
#     ds = mf.sweep(clusters_at_the_end, {"beta": [0.5, 1.0, 2.0, 4.0, 6.0, 9.0]}, seeds=4096,
#                   batch={"seed": 256}, store="/shared/studies/clusters_store", scheduler=client)
#     client.close()                                  # or scheduler="tcp://scheduler:8786"
#
# With ``scheduler="tcp://scheduler:8786"`` the sweep connects itself (and gives up with an error
# naming the address if nothing answers within 5 s) and closes its connection at the end. What the
# workers need:
#
# - the same Python environment as the client: ``meanfield`` at the same version (installed with
#   ``python -m pip install -e .`` from the same commit, or the same wheel) with its dependencies
#   (numpy, scipy, xarray, h5netcdf, numba, pyfftw, finufft, ducc0, POT), and the same versions of
#   ``dask`` and ``distributed`` as the client;
# - the function: a function defined in a script run as ``__main__`` (like the one in this page)
#   is shipped by value, but one defined in a module is imported by name on the worker, so that
#   module must be installed or on the workers' ``PYTHONPATH``;
# - the store: each piece is written by the worker that ran the task, so ``store`` must be a path
#   on a file system that the workers and the client share (NFS, a cluster file system), and
#   writable by the workers;
# - one thread per worker process for the numerical libraries (``OMP_NUM_THREADS=1`` and
#   ``NUMBA_NUM_THREADS=1`` in the workers' environment), with as many processes per machine as
#   cores.
#
# If a worker dies, dask reruns its tasks elsewhere; a task that fails for good does not stop the
# others, and :class:`meanfield.SweepError` lists every missing task once the rest are done. The
# finished pieces stay in the store, so the same call with ``resume=True`` runs only what is missing.

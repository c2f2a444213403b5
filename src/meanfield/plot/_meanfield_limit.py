"""The mean-field limit figure of :func:`meanfield.compare` studies: W_p(μ_n(t), μ(t)) against n on log-log
axes with the fitted power laws."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ._checks import axes_of, check_variables, model_words

__all__ = ["meanfield_limit"]


def meanfield_limit(study: xr.Dataset, times: Sequence[float] | None = None, *, ax: Axes | None = None) -> Figure:
    """Log-log plot of W_p(μ_n(t), μ(t)) against n at chosen times with the fitted power laws c n^a.

    Each time gets the distances of every seed (small dots), their geometric mean (circles), the fitted
    law (line, slope a ± its standard error in the legend), and a dashed n^(-1/2) guide.

    Parameters
    ----------
    study : xarray.Dataset
        The result of the ``meanfield compare`` command: ``wasserstein`` over (n, seed, time) with
        ``exponent``, ``exponent_stderr`` and ``prefactor`` over time.
    times : sequence of float, optional
        Times to show (nearest outputs); by default every output time after the first.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new Figure with one Axes.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        A variable of the study is missing.

    Examples
    --------
    >>> import xarray as xr, meanfield as mf
    >>> study = xr.open_dataset("meanfield_compare.nc")  # doctest: +SKIP
    >>> mf.plot.meanfield_limit(study).savefig("limit.png")  # doctest: +SKIP
    """
    check_variables(study, "meanfield_limit", "wasserstein", "exponent", "exponent_stderr", "prefactor")
    all_times = study["time"].values
    chosen = all_times[1:] if times is None else np.asarray(times, dtype=float)
    if chosen.size == 0:
        chosen = all_times
    ns = study["n"].values
    fig, ax = axes_of(ax, (6, 4.5))
    for tk in chosen:
        k = int(np.argmin(np.abs(all_times - tk)))
        w = study["wasserstein"].transpose("n", "seed", "time").values[:, :, k]
        line = ax.loglog(ns, np.exp(np.log(np.maximum(w, 1e-300)).mean(axis=1)), "o")[0]  # geometric mean
        ax.loglog(np.repeat(ns, w.shape[1]), w.ravel(), ".", color=line.get_color(), alpha=0.3)
        a, se, c = (float(study[v].values[k]) for v in ("exponent", "exponent_stderr", "prefactor"))
        if np.isfinite(a):
            ax.loglog(ns, c * ns.astype(float) ** a, "-", color=line.get_color(),
                      label=f"t = {all_times[k]:g}: slope {a:.3f} ± {se:.3f}")
    ref = ns.astype(float) ** -0.5
    mean_w = float(study["wasserstein"].values.mean())
    ax.loglog(ns, ref * mean_w / ref.mean(), "k--", lw=0.8, label="n^(-1/2)")
    ax.set_xlabel("number of particles n")
    ax.set_ylabel(f"W_{study.attrs.get('p', 1):g}(μ_n(t), μ(t))  [rad]")
    ax.set_title(f"mean-field limit: {model_words(study.attrs)}, {study.attrs.get('sampler', '')} start")
    ax.legend(fontsize=8)
    return fig

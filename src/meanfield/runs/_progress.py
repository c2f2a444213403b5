"""The progress bar of a run, an observer called at every output time.

* :class:`ProgressBar`: a tqdm bar over simulated time.

Checkpoints are written by :class:`meanfield.io._checkpoint.Checkpoint`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ProgressBar"]


class ProgressBar:
    """Progress over simulated time, shown with tqdm.

    Parameters
    ----------
    t : ndarray
        Output times; the bar runs from ``t[0]`` to ``t[-1]``.
    description : str
        Label of the bar.
    """

    def __init__(self, t: np.ndarray, description: str = "solve") -> None:
        from tqdm.auto import tqdm

        self._t0 = float(t[0])
        self._bar = tqdm(total=float(t[-1] - t[0]), desc=description, unit="t.u.", leave=False,
                         bar_format="{l_bar}{bar}| t={n:.3g}/{total:.3g} [{elapsed}<{remaining}]")
        self._last = 0.0

    def __call__(self, index: int, t: float, y: np.ndarray) -> None:
        done = float(t) - self._t0
        self._bar.update(done - self._last)
        self._last = done

    def close(self) -> None:
        self._bar.close()

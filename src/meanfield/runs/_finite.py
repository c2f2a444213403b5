"""The rule every engine's result obeys: ``success=1`` only beside finite outputs.

A value beyond the largest double (the interaction energy e^β/(2β) of a cluster at β > 711), a NaN or an
infinity in any floating output makes the result invalid; :func:`non_finite_outputs` names the first such
variable and the first time it is not finite, for the result's message.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
import xarray as xr

__all__ = ["non_finite_outputs"]


def non_finite_outputs(ds: xr.Dataset, undefined: Collection[str] = ()) -> str | None:
    """Why the floating outputs of ``ds`` are not all finite (the first variable in the dataset's order that is
    not, with the first time where it is not), or None. ``undefined``: variables the model does not define,
    held as NaN by convention (the energy of a model without one), not checked."""
    for name, variable in ds.data_vars.items():
        if name in undefined or not np.issubdtype(variable.dtype, np.inexact):
            continue
        values = variable.values
        if np.all(np.isfinite(values)):
            continue
        label = str(name).replace("_", " ")
        if "time" not in variable.dims:
            return f"the {label} is not finite"
        bad = ~np.isfinite(variable.transpose("time", ...).values.reshape(variable.sizes["time"], -1))
        first = int(np.argmax(bad.any(axis=1)))
        kinds = [kind for kind, hit in (("NaN", np.isnan(values).any()), ("+inf", np.isposinf(values).any()),
                                        ("-inf", np.isneginf(values).any())) if hit]
        beyond = " (beyond the largest double)" if kinds == ["+inf"] else ""
        return f"the {label} is not finite ({', '.join(kinds)}{beyond}) from t = {float(ds.time[first]):g}"
    return None

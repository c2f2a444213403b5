"""Parameter descriptions that several figures share, written once and filled into their docstrings.

A figure's docstring names a shared block by a line holding only ``%(name)s`` (the placeholders of
matplotlib's ``_docstring.interpd`` and of xarray's docstring templates); :func:`fill_doc` replaces that
line by the block ``name`` of :data:`SHARED`, indented as the line was. ``help(mf.plot.energy_curve)``
and the rendered documentation show the filled text.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import TypeVar

__all__ = ["SHARED", "fill_doc"]

#: the shared blocks, unindented (a parameter's description one level below its name)
SHARED: dict[str, str] = {
    "ax": "ax : matplotlib.axes.Axes, optional\n"
          "    Axes to draw on; by default a new Figure with one Axes.",
    "title": "title : str, optional\n"
             "    Axes title; by default built from the dataset's attrs.",
    "figure_title": "title : str, optional\n"
                    "    Figure title; by default built from the dataset's attrs.",
    "times": "times : sequence of float, optional\n"
             "    Times to show (the nearest output times are used); default: four evenly spaced outputs.",
    "system": "system : int\n"
              "    Which system of an ensemble to show.",
    "returns_figure": "Returns\n"
                      "-------\n"
                      "matplotlib.figure.Figure",
}

_PLACEHOLDER = re.compile(r"^([ \t]*)%\((\w+)\)s[ \t]*$", flags=re.MULTILINE)

F = TypeVar("F", bound=Callable)


def fill_doc(func: F) -> F:
    """Decorate a figure: replace each line ``%(name)s`` of its docstring by ``SHARED[name]``, indented as the
    line (a docstring removed by ``python -OO`` stays None).

    Raises
    ------
    KeyError
        A placeholder names no shared block (at import, so that a misspelt name cannot pass unnoticed).
    """
    if func.__doc__ is not None:
        func.__doc__ = _PLACEHOLDER.sub(lambda match: textwrap.indent(SHARED[match[2]], match[1]), func.__doc__)
    return func

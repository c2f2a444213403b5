"""The gallery's scraper for the figures ``meanfield.plot`` builds.

``meanfield.plot`` makes its figures with :class:`matplotlib.figure.Figure` directly, not through
pyplot, so sphinx-gallery's matplotlib scraper (which walks pyplot's figure list) does not see
them. :func:`unmanaged_figures` finds them among the example's variables instead: every
:class:`~matplotlib.figure.Figure` pyplot does not manage is saved as a PNG once, and every
:class:`~matplotlib.animation.Animation` of such a figure is embedded as a JavaScript player.
"""

from __future__ import annotations

import weakref
from pathlib import Path
from textwrap import indent


def unmanaged_figures(block, block_vars: dict, gallery_conf: dict) -> str:
    """Save the figures and animations new in ``block_vars["example_globals"]`` that pyplot does not manage.

    Parameters
    ----------
    block : tuple
        The code block just run (unused; part of sphinx-gallery's scraper signature).
    block_vars : dict
        sphinx-gallery's per-example state: ``example_globals`` (the example's namespace) and
        ``image_path_iterator`` (where to save the next image).
    gallery_conf : dict
        The gallery configuration (``src_dir`` locates the images for the reST).

    Returns
    -------
    str
        The reST that shows the new figures (and animations) of this block, or ``""``.
    """
    import matplotlib.pyplot as plt
    from matplotlib.animation import Animation
    from matplotlib.figure import Figure
    from sphinx_gallery.scrapers import figure_rst

    shown = block_vars.setdefault("meanfield_shown_figures", weakref.WeakSet())
    # pyplot's own figures are saved by the matplotlib scraper, whose closing them unsets their manager:
    # remember them now, or a later block would find them unmanaged and save them again
    shown.update(plt.figure(number) for number in plt.get_fignums())
    values = list(block_vars["example_globals"].values())
    blocks = []
    for animation in (value for value in values if isinstance(value, Animation)):
        figure = animation._fig  # Animation has no public accessor of its figure
        if figure not in shown and figure.canvas.manager is None:
            shown.add(figure)
            blocks.append(".. container:: sphx-glr-animation\n\n    .. raw:: html\n\n"
                          + indent(animation.to_jshtml(), " " * 8))
    images = []
    for figure in (value for value in values if isinstance(value, Figure)):
        if figure not in shown and figure.canvas.manager is None:
            shown.add(figure)
            path = Path(next(block_vars["image_path_iterator"]))
            figure.savefig(path)
            images.append(path)
    if images:
        blocks.insert(0, figure_rst(images, gallery_conf["src_dir"]))
    return "\n".join(blocks)

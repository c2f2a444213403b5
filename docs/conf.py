"""Sphinx configuration of the meanfield documentation site.

Build it with ``python -m sphinx -W -b html docs docs/_build/html`` (``-D plot_gallery=0`` skips
running the gallery and the tutorials). The intersphinx inventories are written from the text
lists in ``_inventories/`` because the build runs without network access.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import meanfield

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _inventories import write_inventories  # noqa: E402

project = "meanfield"
author = "the meanfield authors"
copyright = "the meanfield authors"
release = meanfield.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax served from the site itself: the formulas render with no network
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_inventories", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]

autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = True
numpydoc_xref_ignore = "all"
numpydoc_xref_aliases = {
    "ndarray": "numpy.ndarray",
    "Generator": "numpy.random.Generator",
    "Dataset": "xarray.Dataset",
    "DataArray": "xarray.DataArray",
    "Figure": "matplotlib.figure.Figure",
    "Axes": "matplotlib.axes.Axes",
    "FuncAnimation": "matplotlib.animation.FuncAnimation",
    "Client": "distributed.Client",
}

myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3

intersphinx_mapping = {
    name: (url, str(path)) for name, (url, path) in write_inventories(HERE / "_build" / "inventories").items()
}
intersphinx_timeout = 1

sphinx_gallery_conf = {
    "examples_dirs": ["../examples", "../tutorials"],
    "gallery_dirs": ["auto_examples", "auto_tutorials"],
    "filename_pattern": r"/plot_",
    "image_scrapers": ("_scrapers.unmanaged_figures", "matplotlib"),
    "matplotlib_animations": (True, "jshtml"),
    "download_all_examples": False,
    "remove_config_comments": True,
    "capture_repr": (),  # an example shows what it prints, not the repr of a cell's last value
    "show_memory": False,
    "within_subsection_order": "FileNameSortKey",
    "abort_on_example_error": True,
    "reference_url": {"meanfield": None},
}
os.environ.setdefault("MPLBACKEND", "Agg")

html_theme = "pydata_sphinx_theme"
html_title = f"meanfield {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path: list[str] = []
html_show_sourcelink = False


def write_cli_help(directory: Path) -> None:
    """Write the help of ``meanfield`` and of each of its commands as one reST file."""
    from meanfield.cli._main import build_parser

    parser = build_parser()
    subcommands = next(action for action in parser._actions if action.choices and action.dest == "command")
    sections = ["``meanfield``\n" + "-" * 13 + "\n\n::\n\n" + _indent(parser.format_help())]
    for name, subparser in subcommands.choices.items():
        title = f"``meanfield {name}``"
        sections.append(f"{title}\n{'-' * len(title)}\n\n::\n\n" + _indent(subparser.format_help()))
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "meanfield.rst").write_text("\n".join(sections))


def _indent(text: str) -> str:
    return "".join(f"   {line}\n" if line.strip() else "\n" for line in text.splitlines())


os.environ["COLUMNS"] = "100"
write_cli_help(HERE / "_build" / "cli_help")


def escape_bars(app, what, name, obj, options, lines: list[str]) -> None:
    """Read ``|x|`` in a docstring's prose as absolute-value bars, not as a reST substitution.

    Bars are left alone where reST does not substitute: in literal and directive blocks (``::``,
    ``.. math::``), in doctest blocks, in grid-table rows and in inline literals and ``:math:`` roles.
    """
    block_indent = None
    in_doctest = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if block_indent is not None and (not stripped or indent > block_indent):
            continue
        block_indent = None
        if stripped.startswith(">>>"):
            in_doctest = True
        elif not stripped:
            in_doctest = False
        if stripped.endswith("::") or stripped.startswith(".. math::"):
            block_indent = indent
        if stripped.startswith(".. "):
            continue
        table_row = stripped.startswith(("+-", "+=")) or (stripped.startswith("| ") and stripped.endswith(" |"))
        if in_doctest or table_row or "|" not in line:
            continue
        parts = _INLINE_LITERAL.split(line)
        parts[::2] = [re.sub(r"(?<!\\)\|", r"\\|", part) for part in parts[::2]]
        lines[i] = "".join(parts)


_INLINE_LITERAL = re.compile(r"(``.+?``|:math:`[^`]*`)")


def repoint_viewcode_backlinks(app, exception) -> None:
    """Point each ``[docs]`` link of a highlighted source page at the id its object has.

    viewcode keeps one module name per source file, the first it meets: when a file's objects are
    documented under two names (``meanfield.phase_diagram`` and ``meanfield.studies.phase_diagram_tokens``,
    or ``meanfield.sphere_area`` and ``solvers.ZonalGaussGrid``) the back links of the others point at
    ``#meanfield.<name>``, an id their page does not have. The id that page does have ends in the same
    qualified name; the link is repointed to it when exactly one does.
    """
    if exception is not None or app.builder.format != "html":
        return
    backlink = re.compile(r'(class="viewcode-back" href=")([^"#]+)#([^"]+)"')
    ids: dict[Path, list[str]] = {}

    def repoint(match: re.Match, page: Path) -> str:
        target = (page.parent / match.group(2)).resolve()
        if target not in ids:
            ids[target] = re.findall(r'\bid="([^"]+)"', target.read_text()) if target.exists() else []
        anchor = match.group(3)
        if anchor in ids[target]:
            return match.group(0)
        parts = anchor.split(".")
        for k in range(1, len(parts)):
            found = [i for i in ids[target] if i.endswith("." + ".".join(parts[k:]))]
            if len(found) == 1:
                return f'{match.group(1)}{match.group(2)}#{found[0]}"'
        return match.group(0)

    for page in (Path(app.outdir) / "_modules").rglob("*.html"):
        text = page.read_text()
        fixed = backlink.sub(lambda match: repoint(match, page), text)
        if fixed != text:
            page.write_text(fixed)


def setup(app) -> None:
    app.connect("autodoc-process-docstring", escape_bars, priority=400)
    app.connect("build-finished", repoint_viewcode_backlinks)

"""Intersphinx inventories written from text lists, for builds without network access.

Each ``<project>.txt`` starts with the project's documentation root URL; every further line is
``name  role  relative-url``; a role without a domain is a Python one (``class`` is ``py:class``),
``std:term`` and ``std:label`` name glossary terms and section labels. :func:`write_inventories` writes them in Sphinx's inventory format
(version 2: a four-line header, then zlib-compressed ``name domain:role priority uri dispname``
lines) so that ``intersphinx_mapping`` can read them from disk.
"""

from __future__ import annotations

import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent


def write_inventories(directory: Path) -> dict[str, tuple[str, Path]]:
    """Write ``<project>.inv`` for each text list and return ``{project: (url, path)}``."""
    directory.mkdir(parents=True, exist_ok=True)
    mapping = {}
    for listing in sorted(HERE.glob("*.txt")):
        project = listing.stem
        lines = [line.split() for line in listing.read_text().splitlines() if line.strip()]
        url = lines[0][0]
        body = "".join(f"{name} {role if ':' in role else 'py:' + role} 1 {uri} -\n" for name, role, uri in lines[1:])
        header = (
            "# Sphinx inventory version 2\n"
            f"# Project: {project}\n# Version: \n"
            "# The remainder of this file is compressed using zlib.\n"
        )
        path = directory / f"{project}.inv"
        path.write_bytes(header.encode() + zlib.compress(body.encode()))
        mapping[project] = (url, path)
    return mapping

"""Check the internal links of the built site: every relative ``href``/``src`` names a file that exists, and
every ``#fragment`` an ``id`` (or ``name``) in the page it points to.

Sphinx's ``linkcheck`` builder checks external links over the network and leaves anchors inside the site
unchecked; this script is the other half, with no network. External links (``http:``, ``https:``,
``mailto:``) are not checked, nor the templates a theme copies into ``_static/`` (not pages).

usage: ``python docs/check_links.py docs/_build/html`` — prints each broken link with the page that holds it
and exits 1 if there is one.
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

EXTERNAL_SCHEMES = ("http", "https", "mailto", "javascript", "data", "ftp")


class _Page(HTMLParser):
    """The links and anchors of one HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.anchors: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for key in ("id", "name"):
            if values.get(key):
                self.anchors.add(values[key])
        for key in ("href", "src"):
            if values.get(key) and not (tag == "link" and key == "href" and values.get("rel") == "preconnect"):
                self.links.append(values[key])


def _parse(path: Path, cache: dict[Path, _Page]) -> _Page:
    if path not in cache:
        page = _Page()
        page.feed(path.read_text(encoding="utf-8", errors="replace"))
        cache[path] = page
    return cache[path]


def _pages(site: Path) -> list[Path]:
    return sorted(path for path in site.rglob("*.html") if "_static" not in path.relative_to(site).parts)


def broken_links(site: Path) -> list[str]:
    """Return ``'page: link (reason)'`` for every internal link of ``site`` that does not resolve."""
    cache: dict[Path, _Page] = {}
    problems = []
    for page_path in _pages(site):
        for link in _parse(page_path, cache).links:
            parts = urlsplit(link)
            if parts.scheme in EXTERNAL_SCHEMES or link.startswith("//"):
                continue
            target = page_path if not parts.path else (page_path.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            where = page_path.relative_to(site)
            if not target.exists():
                problems.append(f"{where}: {link} (no such file)")
            elif parts.fragment and target.suffix == ".html":
                if unquote(parts.fragment) not in _parse(target, cache).anchors:
                    problems.append(f"{where}: {link} (no anchor #{parts.fragment})")
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    site = Path(argv[0]).resolve()
    problems = broken_links(site)
    for problem in problems:
        print(problem)
    pages = len(_pages(site))
    print(f"{pages} pages, {len(problems)} broken internal links")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

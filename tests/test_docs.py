"""The public API's docstrings: numpydoc sections that parse, examples that run, a reference page that lists them.

Every public name of ``meanfield``, ``meanfield.plot``, ``meanfield.studies`` and ``solvers`` is

* validated by numpydoc with the checks in :data:`CHECKS` (the ones that make a rendered page wrong
  or incomplete; the style checks on capitalisation, punctuation and "See Also" are not enforced);
* run as a doctest: its Examples section is code whose printed output is compared to the text;
* listed on a page of ``docs/api/`` under a name that resolves to the same object.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import inspect
import re
import warnings
from pathlib import Path

import pytest
from numpydoc.validate import validate

MODULES = ("meanfield", "meanfield.plot", "meanfield.studies", "solvers")
API_PAGES = Path(__file__).resolve().parents[1] / "docs" / "api"

CHECKS = {
    "GL06": "a section name numpydoc does not know (e.g. 'Example' for 'Examples')",
    "GL07": "sections out of numpydoc's order",
    "GL08": "no docstring",
    "SS01": "no summary line",
    "PR01": "a parameter of the signature is not documented",
    "PR02": "a documented parameter is not in the signature",
    "PR03": "parameters documented in another order than the signature's",
    "PR10": "'name:type' without the space numpydoc needs before the colon",
    "RT01": "a function that returns has no Returns section",
    "YD01": "a generator has no Yields section",
    "EX01": "no Examples section",
}


def _public_objects() -> dict[str, object]:
    """``{'source_module:qualname': object}``, one entry per documented object (aliases once)."""
    found: dict[int, tuple[str, object]] = {}
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or callable(obj)) or inspect.ismodule(obj):
                continue
            source = getattr(obj, "__module__", module_name)
            found.setdefault(id(obj), (f"{source}:{getattr(obj, '__qualname__', name)}", obj))
    return dict(sorted(found.values(), key=lambda item: item[0]))


PUBLIC = _public_objects()


@pytest.mark.parametrize("key", list(PUBLIC))
def test_numpydoc_sections(key):
    source, qualname = key.split(":")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # numpydoc warns, rather than fails, on an unknown section
        report = validate(f"{source}.{qualname}")
    errors = [f"{code} ({CHECKS[code]}): {message}" for code, message in report["errors"] if code in CHECKS]
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("key", list(PUBLIC))
def test_docstring_example_runs(key, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example that writes a file writes it here
    tests = doctest.DocTestFinder(recurse=False).find(PUBLIC[key], key, globs={})
    examples = [test for test in tests if test.examples]
    assert examples, "no example to run"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in examples:
        runner.run(test, out=lambda text: pytest.fail(text, pytrace=False))


def _documented_names() -> set[str]:
    names: set[str] = set()
    for page in API_PAGES.glob("*.rst"):
        text = page.read_text()
        module = re.search(r"^\.\. (?:current)?module:: (\S+)", text, re.M)
        prefix = module.group(1) if module else ""
        names.update(re.findall(r"^\.\. module:: (\S+)", text, re.M))
        for entry in re.findall(r"^\.\. autosummary::\n(?:   :.*\n)*\n((?:   \S.*\n)+)", text, re.M):
            for line in entry.split():
                names.add(line if line.startswith(("meanfield.", "solvers.")) else f"{prefix}.{line}")
    return names


def _resolve(dotted: str) -> object:
    try:
        return importlib.import_module(dotted)
    except ModuleNotFoundError:
        pass
    module_name, _, attribute = dotted.rpartition(".")
    while module_name:
        try:
            obj = importlib.import_module(module_name)
        except ModuleNotFoundError:
            module_name, _, head = module_name.rpartition(".")
            attribute = f"{head}.{attribute}"
            continue
        for part in attribute.split("."):
            obj = getattr(obj, part)
        return obj
    raise LookupError(dotted)


@pytest.mark.parametrize("module_name", MODULES)
def test_api_pages_list_every_public_name(module_name):
    module = importlib.import_module(module_name)
    documented = {id(_resolve(name)) for name in _documented_names()}
    missing = [name for name in module.__all__ if not name.startswith("__") and id(getattr(module, name)) not in documented]
    assert not missing, f"not on any page of docs/api/: {missing}"


def test_link_checker_finds_missing_files_and_anchors(tmp_path):
    spec = importlib.util.spec_from_file_location("check_links", API_PAGES.parent / "check_links.py")
    check_links = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check_links)
    (tmp_path / "sub").mkdir()
    (tmp_path / "index.html").write_text(
        '<a href="sub/page.html#here">ok</a> <a href="sub/page.html#gone">anchor</a> <a href="nowhere.html">file</a>'
        ' <a href="https://example.org/x">external</a> <img src="sub/"> <a href="#top">self</a><p id="top"></p>'
    )
    (tmp_path / "sub" / "page.html").write_text('<h1 id="here">x</h1><a href="../index.html#top">back</a>')
    (tmp_path / "sub" / "index.html").write_text("")
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "macros.html").write_text("<a href=\"{{ pathto('x.js', 1) }}\">a theme's template</a>")
    assert check_links.broken_links(tmp_path) == [
        "index.html: sub/page.html#gone (no anchor #gone)",
        "index.html: nowhere.html (no such file)",
    ]

"""Every validation script reproduces its exact facts (slow: run with -m slow)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPTS = sorted((Path(__file__).resolve().parent.parent / "validation").glob("*.py"))


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_validation_script_passes(script, tmp_path):
    spec = importlib.util.spec_from_file_location(script.stem, script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--output-dir", str(tmp_path)]) == 0
    assert list(tmp_path.glob("*.png")), f"{script.name} wrote no figure"

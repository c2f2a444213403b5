"""A fast subset of tests/fuzz_bad_inputs.py (the script runs all of it, with crash isolation)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

FUZZ_FILE = Path(__file__).with_name("fuzz_bad_inputs.py")
_spec = importlib.util.spec_from_file_location("fuzz_bad_inputs", FUZZ_FILE)
fuzz = importlib.util.module_from_spec(_spec)
sys.modules["fuzz_bad_inputs"] = fuzz  # dataclasses resolve their module by name
_spec.loader.exec_module(fuzz)

#: categories whose every case is refused clearly or answered correctly (a few hundred ms in all)
FAST = ("models", "energy", "velocity", "sample")


@pytest.fixture(scope="module")
def namespace():
    ns = {"FUZZ_FILE": str(FUZZ_FILE)}
    exec(fuzz.PRELUDE, ns)  # noqa: S102 - the script's own fixtures
    return ns


def test_fast_categories_are_refused_clearly_or_answered_correctly(namespace):
    picked = [case for case in fuzz.cases() if case.category in FAST]
    assert len(picked) > 90
    outcomes = {case.code: fuzz.classify(case, namespace) for case in picked}
    bad = {code: outcome for code, outcome in outcomes.items() if outcome[0] not in ("clear error", "correct")}
    assert bad == {}


def test_the_classifier_tells_the_outcomes_apart(namespace):
    case = fuzz.Case
    assert fuzz.classify(case("t", "mf.Circle(-1)", ("n",)), namespace)[0] == "clear error"
    assert fuzz.classify(case("t", "mf.Circle(-1)", ("lmax",)), namespace)[0] == "obscure"  # names another argument
    assert fuzz.classify(case("t", "1 / 0", ("x",)), namespace)[0] == "obscure"  # not a ValueError/TypeError
    assert fuzz.classify(case("t", "float('nan')", ("x",)), namespace)[0] == "silent garbage"  # bad input accepted
    assert fuzz.classify(case("t", "float('nan')", ("x",), "np.isfinite(r)"), namespace)[0] == "silent garbage"
    assert fuzz.classify(case("t", "1.0", ("x",), "np.isfinite(r)"), namespace)[0] == "correct"
    assert fuzz.classify(case("t", "1.0", ("x",), None, ("no_such_name",)), namespace)[0] == "n/a"
    assert fuzz.classify(case("t", "CLI(['solve', '--beta', 'x'])", ("beta",)), namespace)[0] == "clear error"

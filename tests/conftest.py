"""Shared test set-up: strict floating point, a seeded generator, no display."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _strict_floating_point():
    old = np.seterr(all="raise", under="ignore")
    yield
    np.seterr(**old)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261130)

"""The sub-packages of meanfield: every name they export resolves to one object."""

from __future__ import annotations

import importlib

import pytest

import meanfield as mf


@pytest.mark.parametrize("name", ['cli', 'domains', 'io', 'measures', 'models', 'particles', 'pde', 'plot', 'runs', 'studies', 'transport'])
def test_every_exported_name_resolves(name):
    package = importlib.import_module(f"meanfield.{name}")
    assert [n for n in package.__all__ if not hasattr(package, n)] == []


def test_public_names_resolve_and_are_the_sub_packages_objects():
    assert [n for n in mf.__all__ if not hasattr(mf, n)] == []
    assert mf.perturbed_uniform is mf.measures.perturbed_uniform
    assert mf.SelfAttention is mf.models.SelfAttention
    assert mf.Attention is mf.models.Attention
    assert mf.wasserstein is mf.measures.wasserstein and mf.sample is mf.measures.sample
    assert mf.sphere_area is mf.domains.sphere_area

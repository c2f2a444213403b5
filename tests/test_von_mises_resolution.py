"""von_mises refuses a grid too coarse for κ instead of returning a density of the wrong mass."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ive

import meanfield as mf


def test_coarse_circle_is_refused_naming_the_grid_that_resolves_kappa():
    # Circle(16), κ = 1e3 gave mass 4.95 silently
    with pytest.raises(ValueError, match=r"kappa = 1000 is too concentrated for Circle\(n=16\).*mass 4\.95354 .*"
                                         r"Circle\(n\) with n >= 175"):
        mf.von_mises(mf.Circle(16), 0.0, 1e3)


def test_the_suggested_grid_resolves_kappa_and_one_node_fewer_does_not():
    rho = mf.von_mises(mf.Circle(175), 0.0, 1e3)
    # mass - 1 = 2 Σ_{m≥1} I_{175 m}(κ)/I_0(κ) (periodic trapezoid rule), measured 2e-7 ≤ 1e-6
    assert rho.mass - 1 == pytest.approx(2 * ive(175, 1e3) / ive(0, 1e3), rel=1e-6)
    assert abs(rho.mass - 1) <= 1e-6
    with pytest.raises(ValueError, match="too concentrated"):
        mf.von_mises(mf.Circle(150), 0.0, 1e3)


@pytest.mark.parametrize("domain", [mf.Sphere(7), mf.ZonalSphere(3, 16)])
def test_coarse_spheres_are_refused(domain):
    with pytest.raises(ValueError, match=r"kappa = 200 is too concentrated.*finer grid"):
        mf.von_mises(domain, None, 200.0)


@pytest.mark.parametrize(("domain", "kappa"), [(mf.Circle(32), 10.0), (mf.Sphere(31), 50.0),
                                               (mf.ZonalSphere(3, 64), 200.0)])
def test_resolved_densities_are_unchanged(domain, kappa):
    rho = mf.von_mises(domain, None, kappa)
    assert abs(rho.mass - 1) < 1e-12
    assert rho.law["kappa"] == kappa and np.all(rho.values > 0)

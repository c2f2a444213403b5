"""Orthographic maps and the energy curve of S² results."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import meanfield as mf
from meanfield.plot import orthographic_image
from meanfield.plot import sphere_maps as plot_sphere_solution


def test_orthographic_image_centre_and_rim() -> None:
    s = mf.Sphere(31)
    values = np.repeat(1 + np.sin(s.lat)[:, None], s.shape[1], axis=1)  # largest at the north pole
    img = orthographic_image(s.lat, s.lon, values, view=(np.pi / 2, 0.0), size=101)
    # looking down on the north pole the centre pixel shows sin(lat) = 1: bilinear error O(Δlat²) ≈ 1e-3
    assert img[50, 50] == pytest.approx(2.0, abs=5e-3)
    assert np.isnan(img[0, 0]) and np.isnan(img[-1, -1])  # corners lie outside the disc
    # on the rim of this view lat = 0
    assert img[50, 0] == pytest.approx(1.0, abs=5e-2)


def test_plot_sphere_solution_panels() -> None:
    s = mf.Sphere(12)
    ds = mf.solve(mf.SelfAttention(1.0, noise=0.1), mf.von_mises(s, [0, 0, 1], 1.0), np.linspace(0, 0.4, 5))
    fig = plot_sphere_solution(ds, times=[0.0, 0.4])
    # two maps, the colour bar and the energy curve
    assert len(fig.axes) == 4
    assert fig.axes[0].get_title() == "t = 0" and fig.axes[1].get_title() == "t = 0.4"


def test_plot_sphere_solution_rejects_other_domains() -> None:
    ds = xr.Dataset({"density": (("time", "theta"), np.ones((1, 4)))}, coords={"time": [0.0], "theta": np.arange(4.0)})
    with pytest.raises(ValueError, match="needs a dataset on the sphere"):
        plot_sphere_solution(ds)

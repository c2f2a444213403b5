"""``meanfield plot FILE.nc``: the figure a saved result calls for, another kind on request, animations."""

from __future__ import annotations

import re

import numpy as np
import pytest
import xarray as xr
from matplotlib.animation import FFMpegWriter
from PIL import Image

import meanfield as mf
from meanfield.cli import main


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("results")
    times = np.linspace(0.0, 0.4, 5)
    circle = mf.solve(mf.SelfAttention(4.0), mf.von_mises(mf.Circle(32), 0.0, 0.5), times, method="finite_volume")
    particles = mf.simulate(mf.SelfAttention(4.0), mf.particles.uniform_sphere(12, 3, seed=1), times)
    paths = {"circle": folder / "circle.nc", "particles": folder / "particles.nc"}
    circle.to_netcdf(paths["circle"])
    particles.to_netcdf(paths["particles"])
    return paths


def test_plot_draws_the_figure_of_the_result(saved, capsys):
    assert main(["plot", str(saved["circle"])]) == 0
    png = saved["circle"].with_name("circle_density.png")
    assert capsys.readouterr().out.strip() == f"wrote {png}"
    with Image.open(png) as image:
        assert image.format == "PNG"


def test_plot_other_kinds_and_animations(saved, tmp_path):
    assert main(["plot", str(saved["circle"]), "--kind", "energy", "--output", str(tmp_path / "e.png")]) == 0
    assert (tmp_path / "e.png").stat().st_size > 0
    assert main(["plot", str(saved["particles"]), "--output", str(tmp_path / "p.gif"), "--dpi", "30"]) == 0
    with Image.open(tmp_path / "p.gif") as gif:
        assert gif.n_frames == 5
    assert main(["plot", str(saved["circle"]), "--kind", "animation", "--frames", "2", "--dpi", "30",
                 "--output", str(tmp_path / "d.gif")]) == 0
    with Image.open(tmp_path / "d.gif") as gif:
        assert gif.n_frames == 2


def test_plot_errors_name_the_problem(saved, tmp_path, capsys):
    cases = [
        ([str(tmp_path / "missing.nc")], "does not exist or is not a regular file"),
        ([str(saved["circle"]), "--output", str(saved["circle"])], "would overwrite the result it draws"),
        ([str(saved["particles"]), "--kind", "density", "--output", str(tmp_path / "x.png")],
         "density_map needs the variable 'density'"),
    ]
    xr.Dataset({"other": ("x", [1.0])}).to_netcdf(tmp_path / "other.nc")
    cases.append(([str(tmp_path / "other.nc")], r"no figure is known for a dataset with the variables \['other'\]"))
    if not FFMpegWriter.isAvailable():
        cases.append(([str(saved["circle"]), "--output", str(tmp_path / "d.mp4")], "needs ffmpeg, which is not installed"))
    for argv, message in cases:
        with pytest.raises(SystemExit) as exit_info:
            main(["plot", *argv])
        assert exit_info.value.code == 2
        assert re.search(message, capsys.readouterr().err)

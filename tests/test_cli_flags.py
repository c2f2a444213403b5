"""One option name per meaning across the subcommands; default names say what ran."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import xarray as xr

from meanfield.cli import build_parser, default_solve_output, main
from meanfield.cli._main import values_as_values

README = Path(__file__).resolve().parents[1] / "README.md"

def test_help_shows_one_name_per_meaning(capsys):
    """Grid nodes are --grid, particles per system --particles, independent systems --systems, d --dimension."""
    meanings = {"--grid": {"solve", "compare", "kuramoto"},
                "--particles": {"compare", "phase-diagram", "kuramoto", "configurations"},
                "--systems": {"compare", "phase-diagram", "kuramoto"},
                "--dimension": {"solve", "phase-diagram", "configurations"}}
    for command in ("solve", "compare", "phase-diagram", "kuramoto", "configurations"):
        with pytest.raises(SystemExit):
            build_parser().parse_args([command, "--help"])
        text = capsys.readouterr().out
        options = set(re.findall(r"^\s+(--[a-z-]+)", text, flags=re.M))
        assert not options & {"--n", "--d", "--seeds"}, command
        for name, commands in meanings.items():
            assert (name in options) == (command in commands), (command, name)


def test_method_names_a_pde_scheme_and_engine_chooses_particles_or_the_pde(capsys):
    """``--method`` is the PDE scheme of solve and compare; kuramoto's choice of particles or the PDE is
    ``--engine``."""
    for command, option in (("solve", "--method"), ("compare", "--method"), ("kuramoto", "--engine")):
        with pytest.raises(SystemExit):
            build_parser().parse_args([command, "--help"])
        options = set(re.findall(r"^\s+(--[a-z-]+)", capsys.readouterr().out, flags=re.M))
        assert option in options and ({"--method", "--engine"} - {option}).isdisjoint(options), command
    parser = build_parser()
    assert parser.parse_args(["kuramoto"]).engine == "particles"
    assert parser.parse_args(["kuramoto", "--engine", "pde"]).engine == "pde"
    with pytest.raises(SystemExit):
        parser.parse_args(["kuramoto", "--method", "pde"])
    assert "unrecognized option: --method" in capsys.readouterr().err


def _readme_commands(sub: str) -> list[list[str]]:
    lines = [shlex.split(line.split("#")[0]) for line in README.read_text().splitlines()
             if line.startswith(f"meanfield {sub} ")]
    return [words[2:] for words in lines]


def test_readme_command_lines_parse():
    commands = {sub: _readme_commands(sub) for sub in ("solve", "compare", "phase-diagram", "kuramoto")}
    assert all(commands.values()), commands
    parser = build_parser()
    for sub, lines in commands.items():
        for words in lines:
            parser.parse_args(values_as_values([sub, *words]))


def test_the_readme_solve_examples_write_three_different_files():
    parser = build_parser()
    names = [default_solve_output(parser.parse_args(values_as_values(["solve", *words])))
             for words in _readme_commands("solve")]
    assert len(names) >= 3 and len(set(names)) == len(names), names
    assert names == [Path("meanfield_solve_SA_beta9_noise0.001_circle_spectral.nc"),
                     Path("meanfield_solve_SA_beta4_noise0.05_sphere_spectral.nc"),
                     Path("meanfield_solve_SA_beta4_noise0.01_zonal_d16_spectral.nc"),
                     Path("meanfield_solve_USA-repulsive_beta4_noise0.01_circle_spectral.nc"),
                     Path("meanfield_solve_Interaction-9e04a86e_noise0.01_circle_spectral.nc"),
                     Path("meanfield_solve_Interaction-c3aa5f3f_noise0.1_sphere_finite_volume.nc")]
    bare = default_solve_output(parser.parse_args(["solve"]))  # the quick start's ``meanfield solve``
    assert bare == Path("meanfield_solve_SA_beta4_noise0.01_circle_spectral.nc") and bare not in names
    assert f"`{bare}`" in README.read_text()


def test_a_cli_run_writes_its_default_name_with_the_command_line_in_history(tmp_path, monkeypatch, no_figure_files):
    monkeypatch.chdir(tmp_path)
    argv = ["solve", "--grid", "32", "--beta", "2", "--noise", "0.1", "--t-final", "0.1", "--n-times", "2",
            "--no-progress"]
    assert main(argv) == 0
    out = tmp_path / "meanfield_solve_SA_beta2_noise0.1_circle_spectral.nc"
    assert out.with_suffix(".png").exists()
    with xr.open_dataset(out) as ds:
        history = ds.attrs["history"].split("\n")
    assert "meanfield.solve(model=SelfAttention(beta=2.0" in history[0]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00 meanfield " + re.escape(" ".join(argv)), history[-1])

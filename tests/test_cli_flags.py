"""One option name per meaning across the subcommands; the former spellings warn; default names say what ran."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import xarray as xr

from meanfield.cli._aliases import DeprecatedOptionWarning
from meanfield.cli import build_parser, default_solve_output, main

README = Path(__file__).resolve().parents[1] / "README.md"

#: (subcommand, former spelling, new spelling, arguments after the option, the parsed value)
ALIASES = [
    ("solve", "--n", "--grid", ["64"], 64),
    ("compare", "--n", "--particles", ["16", "32"], [16, 32]),
    ("compare", "--seeds", "--systems", ["3"], 3),
    ("phase-diagram", "--d", "--dimension", ["3"], 3),
    ("phase-diagram", "--n", "--particles", ["6"], 6),
    ("kuramoto", "--n", "--particles", ["300"], 300),
    ("kuramoto", "--seeds", "--systems", ["2"], 2),
    ("kuramoto", "--method", "--engine", ["pde"], "pde"),
]


@pytest.mark.parametrize("command, old, new, values, parsed", ALIASES)
def test_a_former_spelling_still_sets_the_option_and_warns_naming_the_new_one(command, old, new, values, parsed):
    parser = build_parser()
    with pytest.warns(DeprecatedOptionWarning, match=f"meanfield {command}: {old} is deprecated .* use {new}"):
        args = parser.parse_args([command, old, *values])
    assert getattr(args, new.lstrip("-")) == parsed
    assert getattr(parser.parse_args([command, new, *values]), new.lstrip("-")) == parsed


def test_help_shows_one_name_per_meaning(capsys):
    """Grid nodes are --grid, particles per system --particles, independent systems --systems, d --dimension."""
    meanings = {"--grid": {"solve", "compare", "kuramoto"}, "--particles": {"compare", "phase-diagram", "kuramoto"},
                "--systems": {"compare", "phase-diagram", "kuramoto"}, "--dimension": {"solve", "phase-diagram"}}
    for command in ("solve", "compare", "phase-diagram", "kuramoto"):
        with pytest.raises(SystemExit):
            build_parser().parse_args([command, "--help"])
        text = capsys.readouterr().out
        options = set(re.findall(r"^\s+(--[a-z-]+)", text, flags=re.M))
        assert not options & {"--n", "--d", "--seeds"}, command
        for name, commands in meanings.items():
            assert (name in options) == (command in commands), (command, name)


def test_method_names_a_pde_scheme_and_engine_chooses_particles_or_the_pde(capsys):
    """``--method`` is the PDE scheme of solve and compare; kuramoto's choice of particles or the PDE is
    ``--engine``, and its former ``--method`` keeps the choices it had."""
    for command, option in (("solve", "--method"), ("compare", "--method"), ("kuramoto", "--engine")):
        with pytest.raises(SystemExit):
            build_parser().parse_args([command, "--help"])
        options = set(re.findall(r"^\s+(--[a-z-]+)", capsys.readouterr().out, flags=re.M))
        assert option in options and ({"--method", "--engine"} - {option}).isdisjoint(options), command
    parser = build_parser()
    assert parser.parse_args(["kuramoto"]).engine == "particles"
    assert parser.parse_args(["kuramoto", "--engine", "pde"]).engine == "pde"
    with pytest.raises(SystemExit):  # refused by its choices before the deprecation is told
        parser.parse_args(["kuramoto", "--method", "spectral"])
    assert "argument --method: invalid choice: 'spectral' (choose from" in capsys.readouterr().err


def test_kuramoto_by_its_former_method_spelling_writes_the_same_named_file(tmp_path, monkeypatch, caplog,
                                                                           no_figure_files):
    import logging

    monkeypatch.chdir(tmp_path)
    argv = ["--coupling", "2", "--width", "0.5", "--grid", "16", "--frequency-nodes", "8", "--t-final", "2",
            "--average-window", "1", "--no-progress"]
    with caplog.at_level(logging.WARNING, logger="meanfield"):
        assert main(["kuramoto", "--method", "pde", *argv]) == 0
    assert "meanfield kuramoto: --method is deprecated and will be removed in the next release; use --engine" \
        in caplog.text
    former = tmp_path / "kuramoto_lorentzian0.5_pde_grid16_K2.nc"
    with xr.open_dataset(former) as ds:
        former_run = ds.load()
    former.unlink()
    assert main(["kuramoto", "--engine", "pde", *argv]) == 0
    with xr.open_dataset(former) as ds:
        assert ds.attrs["engine"] == "pde" and ds.attrs["scheme"] == "finite_volume"
        xr.testing.assert_identical(ds.drop_attrs(), former_run.drop_attrs())


def _readme_commands(sub: str) -> list[list[str]]:
    lines = [line.split("#")[0].split() for line in README.read_text().splitlines()]
    return [words[2:] for words in lines if words[:2] == ["meanfield", sub]]


def test_readme_command_lines_parse_without_deprecated_spellings():
    import warnings

    commands = {sub: _readme_commands(sub) for sub in ("solve", "compare", "phase-diagram", "kuramoto")}
    assert all(commands.values()), commands
    parser = build_parser()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecatedOptionWarning)
        for sub, lines in commands.items():
            for words in lines:
                parser.parse_args([sub, *words])


def test_the_readme_solve_examples_write_three_different_files():
    parser = build_parser()
    names = [default_solve_output(parser.parse_args(["solve", *words])) for words in _readme_commands("solve")]
    assert len(names) >= 3 and len(set(names)) == len(names), names
    assert names == [Path("meanfield_solve_SA_beta9_noise0.001_circle_spectral.nc"),
                     Path("meanfield_solve_SA_beta4_sphere_finite_volume.nc"),
                     Path("meanfield_solve_SA_beta4_zonal_d16_finite_volume.nc")]
    bare = default_solve_output(parser.parse_args(["solve"]))  # the quick start's ``meanfield solve``
    assert bare == Path("meanfield_solve_SA_beta4_circle_finite_volume.nc") and bare not in names
    assert f"`{bare}`" in README.read_text()


def test_a_cli_run_writes_its_default_name_with_the_command_line_in_history(tmp_path, monkeypatch, no_figure_files):
    monkeypatch.chdir(tmp_path)
    argv = ["solve", "--grid", "32", "--beta", "2", "--noise", "0.1", "--t-final", "0.1", "--n-times", "2",
            "--no-progress"]
    assert main(argv) == 0
    out = tmp_path / "meanfield_solve_SA_beta2_noise0.1_circle_finite_volume.nc"
    assert out.with_suffix(".png").exists()
    with xr.open_dataset(out) as ds:
        history = ds.attrs["history"].split("\n")
    assert "meanfield.solve(model=SelfAttention(beta=2.0" in history[0]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00 meanfield " + re.escape(" ".join(argv)), history[-1])


def test_the_command_tells_a_former_spelling_as_its_own_warning(caplog, tmp_path):
    import logging

    with caplog.at_level(logging.WARNING, logger="meanfield"), pytest.raises(SystemExit):
        main(["solve", "--n", "16", "--t-final", "-1", "--output", str(tmp_path / "x.nc")])  # refused after parsing
    assert "meanfield solve: --n is deprecated and will be removed in the next release; use --grid" in caplog.text

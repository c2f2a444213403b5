"""What a new user meets first on the command line: the default run resolved and quiet, help that describes every
command, options refused instead of ignored, one naming rule for result files, units in the files."""

from __future__ import annotations

import re

import pytest
import xarray as xr

from meanfield.cli import build_parser, main
from meanfield.cli._main import COMMANDS


def _exit_message(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err


def test_the_default_run_is_resolved_to_its_end_and_prints_no_warning(tmp_path, monkeypatch, capsys,
                                                                       no_figure_files):
    monkeypatch.chdir(tmp_path)
    assert main(["solve", "--no-progress"]) == 0
    printed = capsys.readouterr()
    assert "WARNING" not in printed.err + printed.out and "under-resolved" not in printed.err
    with xr.open_dataset(tmp_path / "meanfield_solve_SA_beta4_noise0.01_circle_spectral.nc") as ds:
        assert ds.attrs["success"] == 1 and ds.attrs["method"] == "spectral"
        assert float(ds.time[-1]) == 20.0
        assert ds.density.attrs["units"] == "rad-1"
        assert ds.energy.attrs["units"] == "1" and ds.mass.attrs["units"] == "1"
        scheme = [name for name in ds.data_vars if str(name).startswith("scheme_")]
        assert scheme and all("for resume" in ds[name].attrs["long_name"] for name in scheme)


def test_an_under_resolved_run_warns_once(tmp_path, capsys, no_figure_files):
    argv = ["solve", "--noise", "0", "--method", "finite_volume", "--grid", "32", "--t-final", "12", "--n-times", "13",
            "--no-progress", "--output", str(tmp_path / "coarse.nc")]
    assert main(argv) == 0
    assert capsys.readouterr().err.count("under-resolved") == 1


def test_top_level_help_describes_every_command_without_markup(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    text = capsys.readouterr().out
    assert all(name in text for name in [*COMMANDS, "plot"]) and "``" not in text
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--version"])
    assert re.fullmatch(r"meanfield \d+\.\d+\.\d+\S*\n", capsys.readouterr().out)


@pytest.mark.parametrize("command", [*COMMANDS, "plot"])
def test_help_states_each_default_once(command, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: None)" not in text and not re.search(r"default[^()]*\) \(default", text)


def test_solve_method_lists_its_choices_and_defaults_to_auto_as_the_api(capsys):
    assert build_parser().parse_args(["solve"]).method == "auto"
    message = _exit_message(["solve", "--method", "fv"], capsys)
    assert "choose from 'auto', 'spectral', 'finite_volume'" in message


@pytest.mark.parametrize("argv, message", [
    (["solve", "--domain", "sphere", "--grid", "64"], "--grid does not apply to --domain sphere"),
    (["solve", "--lmax", "31"], "--lmax does not apply to --domain circle"),
    (["solve", "--kappa", "2"], "--kappa does not apply to --domain circle"),
    (["solve", "--domain", "zonal", "--seed", "3"], "--seed does not apply to --domain zonal"),
    (["solve", "--grid", "7"], "--grid must be at least 16, got 7"),
    (["kuramoto", "--coupling", "2", "--couplings", "0:3:4"], "--coupling (one run) and --couplings (a diagram)"),
    (["phase-diagram", "--betas", "9:0.1:90"], "--betas values must increase strictly, got '9:0.1:90' "
                                               "(did you mean 0.1:9:90?)"),
    (["kuramoto", "--couplings", "3,1"], "--couplings values must increase strictly"),
    (["solve", "--bet", "9"], "unrecognized option: --bet (did you mean --beta"),
    (["solve", "--bata", "9"], "unrecognized option: --bata (did you mean --beta"),
    (["phase-diagram", "--betas", "-1,2"], "betas must be finite and >= 0"),
])
def test_options_that_do_not_apply_are_refused_by_name(argv, message, capsys, tmp_path):
    assert message in _exit_message([*argv, "--output", str(tmp_path / "x.nc")], capsys)
    assert not (tmp_path / "x.nc").exists()


@pytest.mark.parametrize("command", ["solve", "compare", "phase-diagram", "kuramoto", "configurations"])
def test_every_command_refuses_a_figure_suffix_for_its_result(command, capsys, tmp_path):
    out = tmp_path / "result.png"
    assert f"--output '{out}' must end in .nc" in _exit_message([command, "--output", str(out)], capsys)


def test_an_existing_result_is_never_replaced_without_overwrite(tmp_path, capsys, no_figure_files):
    out = tmp_path / "run.nc"
    argv = ["solve", "--grid", "32", "--t-final", "0.2", "--n-times", "3", "--no-progress", "--output", str(out)]
    assert main(argv) == 0
    capsys.readouterr()
    written = out.read_bytes()
    assert "pass --overwrite to replace it or --resume to continue it" in _exit_message(
        [*argv[:-2], "--beta", "2", "--output", str(out)], capsys)
    assert out.read_bytes() == written
    assert main([*argv[:-2], "--beta", "2", "--overwrite", "--output", str(out)]) == 0
    with xr.open_dataset(out) as ds:
        assert ds.attrs["beta"] == 2.0


def test_plot_refuses_to_replace_a_figure_without_overwrite(tmp_path, capsys, no_figure_files):
    out = tmp_path / "run.nc"
    assert main(["solve", "--grid", "32", "--t-final", "0.2", "--n-times", "3", "--no-progress",
                 "--output", str(out)]) == 0
    figure = tmp_path / "figure.png"
    figure.write_bytes(b"mine")
    assert "pass --overwrite" in _exit_message(["plot", str(out), "--output", str(figure)], capsys)
    assert figure.read_bytes() == b"mine"
    assert "must end in one of .png" in _exit_message(["plot", str(out), "--output", str(tmp_path / "f.txt")],
                                                      capsys)


def test_default_names_of_different_studies_differ():
    from meanfield.cli._compare import default_output as compare_name
    from meanfield.cli._kuramoto import default_output as kuramoto_name
    from meanfield.cli._sweep_options import parse_values
    parser = build_parser()
    first = compare_name(parser.parse_args(["compare", "--particles", "64", "256"]))
    second = compare_name(parser.parse_args(["compare", "--particles", "256", "1024", "--systems", "4"]))
    assert first != second and "_n64-256_s8" in first.name and "_n256-1024_s4" in second.name
    wide = kuramoto_name(parser.parse_args(["kuramoto"]), parse_values("0:3:13", "--couplings"))
    narrow = kuramoto_name(parser.parse_args(["kuramoto"]), parse_values("1:2:5", "--couplings"))
    assert wide != narrow and "K0-3x13_s4" in wide.name


def test_python_started_beside_a_clone_imports_the_installed_package(tmp_path):
    """The packages live in src/, so a folder named meanfield in the working directory (a clone, which has no
    __init__.py at its top) is not taken for the package."""
    import subprocess
    import sys

    (tmp_path / "meanfield").mkdir()
    (tmp_path / "meanfield" / "README.md").write_text("a clone")
    done = subprocess.run([sys.executable, "-c", "import meanfield; print(meanfield.Kuramoto.__name__)"],
                          cwd=tmp_path, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0 and done.stdout.strip() == "Kuramoto", done.stderr

"""Arguments refused at the public boundary with messages that name them."""

from __future__ import annotations

import re

import numpy as np
import pytest

import meanfield as mf

X = np.linspace(0.0, 6.0, 10)


def test_seeds():
    rho = mf.von_mises(mf.Circle(32), 0.0, 1.0)
    with pytest.raises(ValueError, match=r"^seed must be None, a non-negative integer, .* got -1"):
        mf.sample(rho, 10, seed=-1)
    with pytest.raises(TypeError, match=r"^seed must be None, a non-negative integer, .* got 1.5"):
        mf.sample(rho, 10, seed=1.5)
    with pytest.raises(ValueError, match=r"^seed must be a non-negative integer, a numpy Generator or None, got -1"):
        mf.simulate(mf.SelfAttention(1.0), X, [0.0, 0.1], seed=-1)


def test_simulate_counts_and_rules():
    with pytest.raises(ValueError, match=r"block_elements must be >= 1, got 0"):
        mf.simulate(mf.SelfAttention(1.0), X, [0.0, 0.1], block_elements=0)
    with pytest.raises(TypeError, match=r"max_steps must be an integer, got 2.5"):
        mf.simulate(mf.SelfAttention(1.0), X, [0.0, 0.1], max_steps=2.5)
    # an unknown rule is refused even when the frequency law is identical oscillators (the rule is unused)
    with pytest.raises(ValueError, match=r"frequencies must be 'quantile', 'iid' or an array, got 'random'"):
        mf.simulate(mf.Kuramoto(), X, [0.0, 0.1], frequencies="random")
    with pytest.raises(ValueError, match=r"got domain 'euclidean'; use Attention\(projection=False\)"):
        mf.simulate(mf.SelfAttention(1.0), np.ones((10, 2)), [0.0, 0.1], domain="euclidean")


def test_compare_modes():
    t = [0.0, 0.1]
    pde = mf.solve(mf.SelfAttention(1.0), mf.von_mises(mf.Circle(32), 0.0, 1.0), t)
    particles = mf.simulate(mf.SelfAttention(1.0), X, t)
    with pytest.raises(ValueError, match=r"n_modes must be >= 1, got 0"):
        mf.compare(pde, particles, n_modes=0)
    with pytest.raises(TypeError, match=r"n_modes must be an integer, got '3'"):
        mf.compare(pde, particles, n_modes="3")


def test_strings_and_booleans_are_not_numbers():
    with pytest.raises(TypeError, match=r"interaction must be an array of Fourier coefficients .* got 'sin'"):
        mf.Kuramoto(interaction="sin")
    for loc in ("4", True):
        with pytest.raises(TypeError, match=r"loc must be an angle in radians, got"):
            mf.von_mises(mf.Circle(32), loc, 1.0)


def test_options_checked_whatever_the_model_or_checkpoint():
    rho = mf.von_mises(mf.Circle(32), 0.0, 1.0)
    with pytest.raises(ValueError, match=r"frequency_nodes must be >= 1, got 0"):
        mf.solve(mf.SelfAttention(1.0), rho, [0.0, 0.1], frequency_nodes=0)
    with pytest.raises(ValueError, match=r"checkpoint_interval must be finite and >= 0, got -1.0"):
        mf.solve(mf.SelfAttention(1.0), rho, [0.0, 0.1], checkpoint_interval=-1.0)
    with pytest.raises(TypeError, match=r"progress must be True or False, got 'yes'"):
        mf.solve(mf.SelfAttention(1.0), rho, [0.0, 0.1], progress="yes")
    with pytest.raises(ValueError, match=r"checkpoint_interval must be finite and >= 0, got -1.0"):
        mf.simulate(mf.SelfAttention(1.0), X, [0.0, 0.1], checkpoint_interval=-1.0)
    with pytest.raises(TypeError, match=r"progress must be True or False, got 'yes'"):
        mf.simulate(mf.SelfAttention(1.0), X, [0.0, 0.1], progress="yes")


@pytest.mark.parametrize("argv, message", [
    (["--t-final", "-1"], r"--t-final must be a finite time > 0, got -1.0"),
    (["--t-final", "nan"], r"--t-final must be a finite time > 0, got nan"),
    (["--domain", "zonal", "--dimension", "1"], r"--dimension must be >= 3 for --domain zonal"),
])
def test_solve_command_names_the_option(argv, message, tmp_path, capsys):
    from meanfield.cli import main

    with pytest.raises(SystemExit) as info:
        main(["solve", *argv, "--output", str(tmp_path / "run.nc")])
    assert info.value.code == 2
    assert re.search(r"meanfield solve: error: " + message, capsys.readouterr().err)
    assert not (tmp_path / "run.nc").exists()

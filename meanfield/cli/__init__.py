"""The command line ``meanfield`` (``solve``, ``compare``, ``phase-diagram``, ``kuramoto``, ``plot``)."""

from __future__ import annotations

from ._main import main, build_parser, default_solve_output

__all__ = [
    "main",
    "build_parser",
    "default_solve_output",
]

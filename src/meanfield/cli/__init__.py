"""The command line ``meanfield`` (``solve``, ``compare``, ``phase-diagram``, ``kuramoto``, ``plot``)."""

from __future__ import annotations

from ._main import build_parser, default_solve_output, main

__all__ = [
    "main",
    "build_parser",
    "default_solve_output",
]

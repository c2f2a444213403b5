"""Package version, read from the installed distribution metadata."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("meanfield")
except PackageNotFoundError:
    __version__ = "0.0.0+unknown"

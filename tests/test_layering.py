"""The numerical layer must not depend on the physics layer or on xarray."""

from __future__ import annotations

import subprocess
import sys


def test_importing_solvers_imports_neither_meanfield_nor_xarray():
    code = (
        "import sys, solvers; "
        "bad = [m for m in ('meanfield', 'xarray') if m in sys.modules]; "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_schemes_are_registered_for_the_circle():
    import solvers

    assert {("circle", "spectral"), ("circle", "finite_volume")} <= set(solvers.SCHEMES)

"""The numerical layer must not depend on the physics layer or on xarray.

pyfftw imports its dask interface when dask is installed, and dask may import
xarray, so a run-time check of ``sys.modules`` would blame ``solvers`` for a
third-party import chain. The rule is checked where it lives: no module of
``solvers/`` imports ``meanfield`` or ``xarray``, and importing ``solvers``
does not import ``meanfield``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

SOLVERS = Path(__file__).resolve().parents[1] / "solvers"


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_no_solvers_module_imports_meanfield_or_xarray():
    files = sorted(SOLVERS.rglob("*.py"))
    assert len(files) > 5
    offenders = {str(f.relative_to(SOLVERS)): sorted(_imported_roots(f) & {"meanfield", "xarray"}) for f in files}
    assert {name: bad for name, bad in offenders.items() if bad} == {}


def test_importing_solvers_does_not_import_meanfield():
    code = "import sys, solvers; print('meanfield' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_schemes_are_registered_for_the_circle():
    import solvers

    assert set(solvers.schemes_for(solvers.CircleGrid(8))) == {"spectral", "finite_volume"}

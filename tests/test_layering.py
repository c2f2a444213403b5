"""The layers import one way.

``solvers`` (numerics) never imports ``meanfield`` or xarray. The physics layer ``meanfield`` is a stack of
floors, each importing only floors below it (or modules of its own package)::

    _version, _validate, _vector_math  <  io, transport  <  runs  <  domains  <  measures  <  models
        <  particles, pde, reduced  <  _compare  <  studies  <  meanfield/__init__  <  plot  <  cli

The studies are rooms on one floor (``meanfield.studies.<room>``): each room imports the sweeps room and the
shared checks (:data:`STUDY_FLOORS`), never another room.

No import sits inside a function, except of a heavy third-party module whose import is deferred until it
is used (POT, matplotlib, tqdm, distributed, dask, and the optional networkx: :data:`LAZY`), and no two modules import each other (directly
or through others). pyfftw imports its dask interface when dask is installed, and dask may import xarray,
so a run-time check of ``sys.modules`` would blame ``solvers`` for a third-party import chain: the rules are
checked where they live, in the source.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOLVERS = ROOT / "src" / "solvers"
MEANFIELD = ROOT / "src" / "meanfield"

#: the floor of each part of meanfield (a sub-package or a top-level module)
FLOORS = {
    "_version": 0, "_validate": 0, "_vector_math": 0,
    "io": 1, "transport": 1,
    "runs": 2,
    "domains": 3,
    "measures": 4,
    "models": 5,
    "particles": 6, "pde": 6, "reduced": 6,
    "_compare": 7,
    "studies": 8,
    "__init__": 9,
    "plot": 10,
    "cli": 11,
}
#: the floor of each room of ``meanfield.studies`` (a sub-package, or a module of the studies package itself)
STUDY_FLOORS = {
    "_checks": 0, "sweeps": 0,
    "clustering": 1, "noisy": 1, "limits": 1, "kuramoto": 1, "rescaled": 1, "repulsive": 1, "open_problems": 1,
    "__init__": 2,
}
#: third-party modules a function may import when it needs them (each costs ≥ 0.05 s to import; networkx is
#: also optional: a networkx graph is converted once, where one is given)
LAZY = {"ot", "matplotlib", "tqdm", "distributed", "dask", "networkx"}


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def _part(module: str) -> str:
    """The part of meanfield a dotted module ``meanfield.x.y`` belongs to (``__init__`` for the package)."""
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def _module_name(path: Path) -> str:
    relative = path.relative_to(ROOT / "src").with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[str, bool, int]]:
    """(imported meanfield module or third-party root, whether inside a function, line) of ``path``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                found.extend((alias.name, inside, child.lineno) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package[: len(package) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                    names = [f"{target}.{alias.name}" if not child.module else target for alias in child.names]
                    found.extend((name, inside, child.lineno) for name in names)
                elif child.module:
                    found.append((child.module, inside, child.lineno))
            visit(child, inside)

    visit(tree, False)
    return found


def _meanfield_modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(MEANFIELD.rglob("*.py"))}


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The meanfield module a dotted import names (``from .x import y`` may name a module or an object)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def test_no_solvers_module_imports_meanfield_or_xarray():
    files = sorted(SOLVERS.rglob("*.py"))
    assert len(files) > 5
    offenders = {str(f.relative_to(SOLVERS)): sorted(_imported_roots(f) & {"meanfield", "xarray"}) for f in files}
    assert {name: bad for name, bad in offenders.items() if bad} == {}


def test_importing_solvers_does_not_import_meanfield():
    code = "import sys, solvers; print('meanfield' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_every_part_of_meanfield_has_a_floor():
    parts = {_part(name) for name in _meanfield_modules()}
    assert parts == set(FLOORS)


def test_no_meanfield_module_imports_a_floor_above_its_own():
    modules = _meanfield_modules()
    upward = []
    for name, path in modules.items():
        for imported, _, line in _imports(path):
            target = _resolve(imported, modules) if imported.split(".")[0] == "meanfield" else None
            if target is None or _part(target) == _part(name):
                continue
            if FLOORS[_part(target)] >= FLOORS[_part(name)]:
                upward.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert upward == []


def _room(module: str) -> str:
    """The room of ``meanfield.studies`` a dotted module ``meanfield.studies.x.y`` belongs to."""
    parts = module.split(".")
    return "__init__" if len(parts) == 2 else parts[2]


def test_every_room_of_the_studies_has_a_floor():
    rooms = {_room(name) for name in _meanfield_modules() if _part(name) == "studies"}
    assert rooms == set(STUDY_FLOORS)


def test_no_room_of_the_studies_imports_a_room_on_its_floor_or_above():
    modules = _meanfield_modules()
    across = []
    for name, path in modules.items():
        if _part(name) != "studies":
            continue
        for imported, _, line in _imports(path):
            target = _resolve(imported, modules) if imported.split(".")[0] == "meanfield" else None
            if target is None or _part(target) != "studies" or _room(target) == _room(name):
                continue
            if STUDY_FLOORS[_room(target)] >= STUDY_FLOORS[_room(name)]:
                across.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert across == []


def test_no_import_inside_a_function_but_of_a_heavy_third_party_module():
    inside = [f"{path.relative_to(ROOT)}:{line} imports {imported}"
              for name, path in _meanfield_modules().items()
              for imported, in_function, line in _imports(path)
              if in_function and imported.split(".")[0] not in LAZY]
    assert inside == []


def test_no_import_circle_among_the_modules_of_meanfield():
    modules = _meanfield_modules()
    graph = {name: {target for imported, _, _ in _imports(path) if imported.split(".")[0] == "meanfield"
                    and (target := _resolve(imported, modules)) and target != name}
             for name, path in modules.items()}
    # a package's __init__ re-exports its modules: its imports of them are not arrows back up
    for name in graph:
        graph[name] = {t for t in graph[name] if not t.startswith(name + ".")}
    state: dict[str, int] = {}
    circles = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                circles.append(" -> ".join(stack[stack.index(target):] + [target]))
            elif target not in state:
                visit(target, stack + [target])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert circles == []


def test_schemes_are_registered_for_the_circle():
    import solvers

    assert set(solvers.schemes_for(solvers.CircleGrid(8))) == {"spectral", "finite_volume"}

"""The architecture's one boundary: evaluators/ (inside the image) never imports the host's world."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN_IN_EVALUATORS = {"docker", "mlflow", "leaderboard"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", sorted((ROOT / "evaluators").rglob("*.py")), ids=lambda p: p.name)
def test_evaluators_do_not_import_docker_mlflow_or_leaderboard(path):
    bad = _imports(path) & FORBIDDEN_IN_EVALUATORS
    assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}: evaluators/ runs inside the image"


def test_only_store_imports_mlflow():
    users = {p.name for p in (ROOT / "leaderboard").rglob("*.py") if "mlflow" in _imports(p)}
    assert users <= {"store.py"}, users


def test_only_images_and_the_docker_runner_import_docker():
    users = {p.name for p in (ROOT / "leaderboard").rglob("*.py") if "docker" in _imports(p)}
    assert users <= {"docker_runner.py", "images.py"}, users


# --------------------------------------------------------------------------------------------------------
# The import graph of our own packages: no cycles, sub-packages layered, small modules


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _project_imports(path: Path, known: set[str]) -> set[str]:
    """Project modules ``path`` imports, lazily or not (a function-level import is an edge too)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + [base]
                ).strip(".")
            # "from pkg import mod" imports pkg.mod when that is a module, else a name from pkg.
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    found.discard(_module_name(path))
    return found


def _graph() -> dict[str, set[str]]:
    files = [p for pkg in ("leaderboard", "evaluators") for p in (ROOT / pkg).rglob("*.py")]
    known = {_module_name(p) for p in files}
    graph = {_module_name(p): _project_imports(p, known) for p in files}
    # Importing a module runs its packages' __init__ first: that is not a cycle of the module's own making.
    return {m: {d for d in deps if not m.startswith(d + ".")} for m, deps in graph.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_in_leaderboard_or_evaluators():
    cycles = _cycles(_graph())
    assert not cycles, "import cycles: " + "; ".join(" ↔ ".join(c) for c in cycles)


# Which sub-package may import which: intake and execution never render pages; ranking is pure; the
# site reads exports, never the store, the runners or the intake's reports.
FORBIDDEN_EDGES = {
    "leaderboard.ranking": (
        "leaderboard.site",
        "leaderboard.execution",
        "leaderboard.intake",
        "leaderboard.store",
    ),
    "leaderboard.intake": ("leaderboard.site", "leaderboard.execution", "leaderboard.store"),
    "leaderboard.execution": ("leaderboard.site", "leaderboard.ranking"),
    "leaderboard.site": ("leaderboard.execution.evaluate", "leaderboard.store", "leaderboard.tools"),
    "leaderboard.store": ("leaderboard.site", "leaderboard.execution", "leaderboard.ranking"),
}


@pytest.mark.parametrize("layer", sorted(FORBIDDEN_EDGES))
def test_sub_packages_are_layered(layer):
    bad = sorted(
        f"{module} -> {dep}"
        for module, deps in _graph().items()
        if module == layer or module.startswith(layer + ".")
        for dep in deps
        if any(dep == f or dep.startswith(f + ".") for f in FORBIDDEN_EDGES[layer])
    )
    assert not bad, bad


MAX_LINES = 600


@pytest.mark.parametrize(
    "path",
    sorted(p for pkg in ("leaderboard", "evaluators") for p in (ROOT / pkg).rglob("*.py")),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_modules_stay_small(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)} has {lines} lines; split it by what it holds"

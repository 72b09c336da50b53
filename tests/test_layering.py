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
    assert users <= {"docker_runner.py", "images.py", "base_image.py"}, users


# --------------------------------------------------------------------------------------------------------
# The import graph of our own packages: no cycles, sub-packages layered, small modules


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _project_imports(path: Path, known: set[str], source: str | None = None) -> set[str]:
    """Project modules ``path`` imports, lazily or not (a function-level import is an edge too).

    ``source`` stands for the file's text (to check an edited copy of a module without writing it).
    """
    tree = ast.parse(path.read_text() if source is None else source, filename=str(path))
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
    # Data building fetches and builds sets: it runs no submission and renders no page.
    "leaderboard.data": (
        "leaderboard.site",
        "leaderboard.execution",
        "leaderboard.ranking",
        "leaderboard.store",
        "leaderboard.intake",
    ),
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


# --------------------------------------------------------------------------------------------------------
# One room per track (issue 27). A track package (``evaluators.tracks.<name>``) holds everything of that
# track that runs in the box or is pure science; shared science sits in named packages. Rules:
# - a track package imports shared packages and the core, never another track;
# - shared packages and the core import no track package (``evaluators.tracks`` itself — the Track base
#   class and the registry — is core);
# - the host imports a track package only through the registry, except the track's own site extension
#   (``leaderboard.site.extensions.<name>``), the host-side data builders (``leaderboard.data``: a set
#   only one track uses is built with that track's pure builder) and the track's benchmarks and training
#   tools (``leaderboard.tools``).

TRACKS_PACKAGE = "evaluators.tracks"
HOST_MAY_IMPORT_A_TRACK = ("leaderboard.data", "leaderboard.tools")


def _track_of(module: str) -> str | None:
    """The track package ``module`` belongs to (``evaluators.tracks.<name>``), or None."""
    parts = module.split(".")
    if module.startswith(TRACKS_PACKAGE + ".") and len(parts) >= 3:
        return ".".join(parts[:3])
    return None


def _track_violations(graph: dict[str, set[str]]) -> list[str]:
    bad = []
    for module, deps in graph.items():
        own = _track_of(module)
        for dep in deps:
            track = _track_of(dep)
            if track is None or track == own:
                continue
            name = track.rpartition(".")[2]
            if module.startswith("evaluators."):
                where = "another track" if own else "a shared or core module"
                bad.append(f"{module} -> {dep} ({where} imports track {name!r})")
            elif module.startswith("leaderboard."):
                extension = f"leaderboard.site.extensions.{name}"
                allowed = (extension, *HOST_MAY_IMPORT_A_TRACK)
                if not any(module == a or module.startswith(a + ".") for a in allowed):
                    bad.append(f"{module} -> {dep} (the host reaches track {name!r} outside the registry)")
    return sorted(bad)


def test_tracks_are_rooms_of_their_own():
    bad = _track_violations(_graph())
    assert not bad, "\n".join(bad)


def test_every_track_is_a_package():
    tracks = ROOT / "evaluators" / "tracks"
    modules = sorted(p.name for p in tracks.glob("*.py") if p.name != "__init__.py")
    assert not modules, f"track modules outside a package: {modules} (a track is evaluators/tracks/<name>/)"


def test_the_rule_catches_a_cross_track_import():
    graph = {
        "evaluators.tracks.amore": {"evaluators.tracks.consistency.metrics", "evaluators.metrics"},
        "evaluators.tracks.amore.retrieval": {"evaluators.tracks.amore"},
        "evaluators.answers": {"evaluators.tracks.consistency"},
        "leaderboard.site.extensions.amore": {"evaluators.tracks.amore"},
        "leaderboard.site.extensions.consistency": {"evaluators.tracks.amore.metrics"},
        "leaderboard.data.edit_pairs": {"evaluators.tracks.identity_blinded.pairs"},
        "leaderboard.ranking.headline": {"evaluators.tracks"},
    }
    assert _track_violations(graph) == [
        "evaluators.answers -> evaluators.tracks.consistency (a shared or core module imports track "
        "'consistency')",
        "evaluators.tracks.amore -> evaluators.tracks.consistency.metrics (another track imports track "
        "'consistency')",
        "leaderboard.site.extensions.consistency -> evaluators.tracks.amore.metrics (the host reaches track "
        "'amore' outside the registry)",
    ]


def test_a_real_cross_track_import_fails_the_rule():
    # The rule runs on the real import graph: one deliberate cross-track import added to a real module's
    # text is found.
    module = ROOT / "evaluators" / "tracks" / "amore" / "retrieval.py"
    graph = _graph()
    assert not _track_violations(graph)
    edited = "import evaluators.tracks.consistency.metrics\n" + module.read_text()
    deps = _project_imports(module, set(graph), source=edited)
    assert "evaluators.tracks.consistency.metrics" in deps
    graph["evaluators.tracks.amore.retrieval"] = deps
    assert _track_violations(graph) == [
        "evaluators.tracks.amore.retrieval -> evaluators.tracks.consistency.metrics (another track imports "
        "track 'consistency')"
    ]


MAX_LINES = 600


@pytest.mark.parametrize(
    "path",
    sorted(p for pkg in ("leaderboard", "evaluators") for p in (ROOT / pkg).rglob("*.py")),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_modules_stay_small(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)} has {lines} lines; split it by what it holds"

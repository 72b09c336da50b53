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


def test_only_images_and_runner_import_docker():
    users = {p.name for p in (ROOT / "leaderboard").rglob("*.py") if "docker" in _imports(p)}
    assert users <= {"runner.py", "images.py"}, users

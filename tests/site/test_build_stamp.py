"""An unchanged rerun keeps the pages and ``public/`` (issue 36): the build's inputs are digested, compared.

The digest covers every file the pages are made from; the test changes one at a time and checks that the
next build runs again, and that a build with nothing changed runs neither the page generation nor MkDocs.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from leaderboard.site import build_stamp
from leaderboard.site import publish as publish_module


def _repo(root: Path) -> Path:
    files = {"mkdocs.yml": "site_name: x\n", "site/index.md": "# board\n", "site/data/results.csv": "a\n",
             "submissions/m/submission.yaml": "id: m\n", "leaderboard/site/x.py": "X = 1\n",
             "evaluators/tracks/t.py": "T = 1\n"}  # fmt: skip
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_the_digest_follows_every_input_file_and_not_the_byte_caches(tmp_path) -> None:
    repo = _repo(tmp_path)
    first = build_stamp.inputs_digest(repo)
    assert build_stamp.inputs_digest(repo) == first
    (repo / "leaderboard" / "site" / "__pycache__").mkdir()
    (repo / "leaderboard" / "site" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    assert build_stamp.inputs_digest(repo) == first
    seen = {first}
    inputs = ("mkdocs.yml", "site/data/results.csv", "submissions/m/submission.yaml", "leaderboard/site/x.py",
              "evaluators/tracks/t.py")  # fmt: skip
    for rel in inputs:
        (repo / rel).write_text((repo / rel).read_text() + "# changed\n")
        seen.add(build_stamp.inputs_digest(repo))
    assert len(seen) == 6  # each change gave a digest of its own
    (repo / "site" / "new.md").write_text("new page\n")
    assert build_stamp.inputs_digest(repo) not in seen


@pytest.fixture
def counted(monkeypatch):
    """``publish`` with its merge, page generation and MkDocs build replaced by counters."""
    calls = {"pages": 0, "build": 0}
    report = SimpleNamespace(lines=lambda: ["site/data: kept 1 results, replaced 0, added 0"], shrinks=False,
                             losses=[], rows={"result keys": (1, 1)})  # fmt: skip
    monkeypatch.setattr(publish_module, "merge_exports", lambda *a, **k: report)

    def pages(site_dir, **kwargs):
        calls["pages"] += 1
        (site_dir / "index.md").write_text("# board\n")  # as generate_pages: the same page again
        return [site_dir / "index.md"]

    def build(repo_root, **kwargs):
        calls["build"] += 1
        (repo_root / "public").mkdir(exist_ok=True)
        (repo_root / "public" / "index.html").write_text("<html></html>")
        return repo_root / "public"

    monkeypatch.setattr(publish_module, "generate_pages", pages)
    monkeypatch.setattr(publish_module, "build_site", build)
    return calls


def test_a_build_with_nothing_changed_keeps_pages_and_public(tmp_path, counted) -> None:
    repo, cache, say = _repo(tmp_path / "repo"), tmp_path / "cache", []

    def run(**kw):
        site = repo / "site"
        return publish_module.publish(None, [], site, repo_root=repo, cache_dir=cache, echo=say.append, **kw)

    run()
    assert counted == {"pages": 1, "build": 1}
    done = run()
    assert counted == {"pages": 1, "build": 1}  # nothing ran again
    assert done.public == repo / "public" and "nothing the pages are made of changed" in say[-1]
    (repo / "submissions" / "m" / "submission.yaml").write_text("id: m\nname: renamed\n")
    run()
    assert counted == {"pages": 2, "build": 2}  # a manifest changed: pages and site again
    (repo / "public" / "index.html").unlink()
    run()
    assert counted == {"pages": 3, "build": 3}  # public/ gone: built again
    run(build=False)
    assert counted == {"pages": 4, "build": 3}  # without a build the pages are always written

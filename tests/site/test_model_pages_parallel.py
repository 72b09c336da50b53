"""Model pages written by forked workers (issue 36, part 4): the same files as one process writes.

The workers inherit the loaded board and report the figure ids and drawings their pages used; without that
report the figures' stale-file sweep would delete the workers' figures and the drawings index would lose
their molecules, so every file under ``site/`` is compared byte for byte with a one-process generation.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

import leaderboard.site.model_pages as model_pages
from leaderboard.site.build import generate_pages, write_exports
from tests.site import _builders as b

IDS = {"datamol-default": [f"m{i}" for i in range(6)], "chebi20": [f"c{i}" for i in range(6)]}


def _board(tmp: Path) -> Path:
    _, site = b.repo(tmp)
    ranks = b.item_ranks(IDS, n_items=6, worst=5)
    write_exports(b.results(b.BASE_SCORE), b.runs(), b.submissions(list(b.BASE_SCORE)), site,
                  tables={"item_ranks": ranks})  # fmt: skip
    return site


def _files(site: Path) -> dict[str, bytes]:
    return {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def test_workers_write_the_same_site_as_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one = _board(tmp_path / "one")
    monkeypatch.setenv("CHEMROBUST_SITE_WORKERS", "1")
    generate_pages(one)

    many = _board(tmp_path / "many")
    monkeypatch.setenv("CHEMROBUST_SITE_WORKERS", "2")
    monkeypatch.setattr(model_pages, "MIN_PARALLEL_PAGES", 1)
    # Another test's lingering thread must not turn this one into a one-process run (checked below).
    monkeypatch.setattr(model_pages, "_working_threads", lambda: False)
    in_parent: list[str] = []
    write_one = model_pages._write_one

    def spy(data, sub_id, *args):  # noqa: ANN001, ANN202 - a spy with the wrapped signature
        if os.getpid() == parent:  # a forked worker's list is its own copy
            in_parent.append(sub_id)
        return write_one(data, sub_id, *args)

    parent = os.getpid()
    monkeypatch.setattr(model_pages, "_write_one", spy)
    generate_pages(many)

    # Only the warm-up page was written here (one model covers every track of this board); the rest forked.
    assert len(in_parent) == 1 < len(b.BASE_SCORE)
    expected, got = _files(one), _files(many)
    assert any(name.startswith("data/plots/sub-") for name in expected)  # the model pages have figures
    assert "data/molecules.json" in expected and len(expected["data/molecules.json"]) > 10  # and drawings
    assert sorted(got) == sorted(expected)
    for name, content in expected.items():
        assert got[name] == content, name


def test_a_figure_id_used_by_two_workers_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = _board(tmp_path)
    monkeypatch.setattr(model_pages, "MIN_PARALLEL_PAGES", 1)
    monkeypatch.setattr(model_pages, "_working_threads", lambda: False)
    monkeypatch.setenv("CHEMROBUST_SITE_WORKERS", "2")

    def page(data, sub_id, figures, explorer):  # noqa: ANN001, ANN202 - the page function's signature
        # Every page shows a figure under the same id: unique within each worker, not across them.
        return "\n".join([f"# {sub_id}", *figures.block({"data": [], "layout": {}}, "same", caption="x")])

    monkeypatch.setattr(model_pages, "submission_page", page)
    monkeypatch.setattr(model_pages, "_warm_up_ids", lambda data, ids: [])
    with pytest.raises(ValueError, match="'same' is used twice"):
        generate_pages(site)


@pytest.mark.parametrize("raw", ["0", "-2", "two", "1.5"])
def test_workers_setting_must_be_a_positive_integer(raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHEMROBUST_SITE_WORKERS", raw)
    with pytest.raises(ValueError, match="CHEMROBUST_SITE_WORKERS"):
        model_pages.site_workers()


def test_no_fork_while_another_thread_works(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    worker = threading.Thread(target=release.wait)  # not a daemon: it could hold a lock at the fork
    watcher = threading.Thread(target=release.wait, daemon=True)  # an idle watcher, like tqdm's monitor
    main = threading.main_thread()
    # The threads this process shows, chosen here: another test's lingering thread must not decide it.
    monkeypatch.setattr(model_pages.threading, "enumerate", lambda: [main, watcher])
    assert not model_pages._working_threads()
    monkeypatch.setattr(model_pages.threading, "enumerate", lambda: [main, watcher, worker])
    assert model_pages._working_threads()


def test_a_worker_that_dies_fails_the_build_instead_of_hanging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _board(tmp_path)
    monkeypatch.setattr(model_pages, "MIN_PARALLEL_PAGES", 1)
    monkeypatch.setattr(model_pages, "_working_threads", lambda: False)
    monkeypatch.setattr(model_pages, "_warm_up_ids", lambda data, ids: [])
    monkeypatch.setenv("CHEMROBUST_SITE_WORKERS", "2")

    def page(data, sub_id, figures, explorer):  # noqa: ANN001, ANN202 - the page function's signature
        os._exit(9)  # as a worker killed for memory: no exception, no report

    monkeypatch.setattr(model_pages, "submission_page", page)
    with pytest.raises(RuntimeError, match="CHEMROBUST_SITE_WORKERS=1"):
        generate_pages(site)

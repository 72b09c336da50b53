"""The suite's two workers (issue 36, part 6): what is shared engine-wide stays in one worker.

``nox -s tests`` runs the suite with pytest-xdist (``-n auto --dist loadscope``); ``tests/conftest.py`` lists
the modules that share the Docker engine, the cluster's services or a costly session build (``GROUPS``),
its scheduler hands each group to one worker as one unit, and collection checks the list against what
every module's tests use.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import conftest

ROOT = Path(__file__).resolve().parents[1]


class _Item:
    """What the check reads of a collected test: its id, fixture closure and markers."""

    def __init__(self, nodeid: str, fixtures=(), markers=()) -> None:
        self.nodeid = nodeid
        self.fixturenames = list(fixtures)
        self._markers = [getattr(pytest.mark, name).mark for name in markers]

    def iter_markers(self):
        return iter(self._markers)


@pytest.mark.parametrize(
    ("fixtures", "markers", "group"),
    [
        (("tmp_path", "docker_client"), (), "engine"),
        (("experiment", "tracking_server"), (), "engine"),
        (("tmp_path",), ("docker",), "engine"),
        (("fresh_clone_build",), (), "fresh-clone"),
        (("public_dir", "browser"), (), "built-site"),
    ],
)
def test_a_module_using_shared_state_must_be_listed_in_its_group(fixtures, markers, group) -> None:
    items = [_Item("tests/x/test_new.py::test_a"), _Item("tests/x/test_new.py::test_b", fixtures, markers)]
    with pytest.raises(pytest.UsageError, match=rf"'tests/x/test_new.py': '{group}' to GROUPS"):
        conftest.pytest_collection_modifyitems(None, items)
    # Listed elsewhere is wrong too: it would share a worker with the wrong modules.
    other = "engine" if group != "engine" else "fresh-clone"
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(conftest.GROUPS, "tests/x/test_new.py", other)
        with pytest.raises(pytest.UsageError, match=f"in '{other}'"):
            conftest.pytest_collection_modifyitems(None, items)
        mp.setitem(conftest.GROUPS, "tests/x/test_new.py", group)
        conftest.pytest_collection_modifyitems(None, items)  # listed: accepted


def test_a_module_of_its_own_needs_no_entry() -> None:
    conftest.pytest_collection_modifyitems(None, [_Item("tests/x/test_plain.py::test_a", ("tmp_path",))])


def test_every_listed_module_exists() -> None:
    assert [m for m in conftest.GROUPS if not (ROOT / m).is_file()] == []
    scopes = set(conftest.GROUPS.values())
    assert [u for u in conftest.LONGEST_FIRST if u not in scopes and not (ROOT / u).is_file()] == []


class _Config:
    """The options pytest-xdist's scheduler reads: ``--dist`` and two workers."""

    def __init__(self, dist: str) -> None:
        self.dist = dist

    def getoption(self, name: str):
        return {"dist": self.dist}[name]

    def getvalue(self, name: str):
        return {"tx": ["2*popen"]}[name]


def test_the_scheduler_gives_a_group_one_unit_and_every_other_module_its_own() -> None:
    pytest.importorskip("xdist")
    assert conftest.pytest_xdist_make_scheduler(_Config("load"), None) is None  # other modes: xdist's own
    scope = conftest.pytest_xdist_make_scheduler(_Config("loadscope"), None)._split_scope
    assert scope("tests/execution/test_runner.py::test_a[x]") == "engine"
    assert scope("tests/cluster/test_services.py::TestUp::test_b") == "engine"
    assert scope("tests/site/test_site_pages.py::test_c") == "fresh-clone"
    assert scope("tests/site/test_site_merge.py::test_f") == "fresh-clone"
    assert scope("tests/ranking/test_copeland.py::test_d[a::b]") == "tests/ranking/test_copeland.py"
    assert scope("tests/ranking/test_copeland.py::TestX::test_e") == "tests/ranking/test_copeland.py"
    assert scope("evaluators/schema.py::evaluators.schema.TrackResult") == "evaluators/schema.py"


class _Node:
    """A worker as the scheduler drives it: it records the test indices it is sent."""

    shutting_down = False

    def __init__(self) -> None:
        self.sent: list[list[int]] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.append(list(indices))


def test_the_longest_units_are_handed_out_first() -> None:
    pytest.importorskip("xdist")
    scheduler = conftest.pytest_xdist_make_scheduler(_Config("loadscope"), None)
    ids = ["tests/a/test_many.py::t1", "tests/a/test_many.py::t2", "tests/execution/test_runner.py::t",
           "tests/test_restore.py::t"]  # fmt: skip
    node = _Node()
    scheduler.registered_collections[node] = ids
    for nodeid in ids:
        scheduler.workqueue.setdefault(scheduler._split_scope(nodeid), {})[nodeid] = False
    for _ in range(3):
        scheduler._assign_work_unit(node)
    assert node.sent == [[2], [3], [0, 1]]  # engine, then test_restore, then the rest in xdist's order

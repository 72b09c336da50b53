"""Two Slurm jobs starting on one node sweep its orphan containers at once: the race is not a job failure.

Seen in CI twice: the second job's ``remove`` met Docker's 409 "removal … is already in progress", and
docker-py's ``containers.list`` — which inspects every listed container in a second request — met a 404 for
a container another job removed in between. A fake engine stands in for Docker here, answering as the
engine does in each race; the real one is exercised by tests/cluster.
"""

from __future__ import annotations

import pytest

from leaderboard.executors.slurm_job import CONTAINER_PREFIX, sweep_orphan_containers


class _APIError(Exception):
    def __init__(self, status_code: int) -> None:
        super().__init__(f"{status_code} Client Error")
        self.status_code = status_code


class _Container:
    def __init__(self, name: str, error: int | None = None, vanishes: bool = False) -> None:
        self.name, self.error, self.vanishes, self.removed = name, error, vanishes, False
        self.id = f"id-{name}"


class _API:
    """The engine's low-level calls: one list request, one remove request per container."""

    def __init__(self, items: list[_Container]) -> None:
        self.items = items

    def containers(self, all: bool, filters: dict) -> list[dict]:  # noqa: A002 - docker's keyword
        return [{"Id": c.id, "Names": [f"/{c.name}"]} for c in self.items if filters["name"] in c.name]

    def remove_container(self, container_id: str, force: bool) -> None:
        container = next(c for c in self.items if c.id == container_id)
        if container.error is not None:
            raise _APIError(container.error)
        if container.vanishes:
            raise _APIError(404)
        container.removed = True


class _Containers:
    """docker-py's listing: it inspects each listed container, so one removed in between is a 404."""

    def __init__(self, items: list[_Container]) -> None:
        self.items = items

    def list(self, all: bool, filters: dict) -> list[_Container]:  # noqa: A002 - docker's keyword
        if any(c.vanishes for c in self.items):
            raise _APIError(404)
        return [c for c in self.items if filters["name"] in c.name]


class _Client:
    def __init__(self, items: list[_Container]) -> None:
        self.api = _API(items)
        self.containers = _Containers(items)


def test_a_container_another_job_is_removing_is_skipped():
    racing = _Container(f"{CONTAINER_PREFIX}41", error=409)
    gone = _Container(f"{CONTAINER_PREFIX}42", error=404)
    orphan = _Container(f"{CONTAINER_PREFIX}43")
    live = _Container(f"{CONTAINER_PREFIX}44")
    assert sweep_orphan_containers(_Client([racing, gone, orphan, live]), active={"44"}) == [orphan.name]
    assert orphan.removed and not live.removed


def test_a_container_removed_between_the_listing_and_the_removal_is_skipped():
    """Listed, then removed by its own job before this sweep reaches it: the sweep goes on."""
    vanishing = _Container(f"{CONTAINER_PREFIX}51", vanishes=True)
    orphan = _Container(f"{CONTAINER_PREFIX}52")
    assert sweep_orphan_containers(_Client([vanishing, orphan]), active=set()) == [orphan.name]
    assert orphan.removed


def test_only_this_boards_job_containers_are_touched():
    """The engine's name filter matches substrings: a look-alike or a non-numeric suffix stays."""
    lookalike = _Container(f"x-{CONTAINER_PREFIX}61")
    other = _Container(f"{CONTAINER_PREFIX}abc")
    ended = _Container(f"{CONTAINER_PREFIX}62")
    assert sweep_orphan_containers(_Client([lookalike, other, ended]), active=set()) == [ended.name]
    assert not lookalike.removed and not other.removed


def test_any_other_engine_error_still_fails_the_sweep():
    with pytest.raises(_APIError):
        sweep_orphan_containers(_Client([_Container(f"{CONTAINER_PREFIX}7", error=500)]), active=set())


def test_nothing_is_removed_when_slurm_does_not_answer():
    orphan = _Container(f"{CONTAINER_PREFIX}8")
    assert sweep_orphan_containers(_Client([orphan]), active=None) == []
    assert not orphan.removed

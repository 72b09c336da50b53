"""Two Slurm jobs starting on one node sweep its orphan containers at once: the race is not a job failure.

Seen in CI: the second job's ``remove`` met Docker's 409 "removal … is already in progress" and the job
failed. A fake engine stands in for Docker here; the real one is exercised by tests/cluster.
"""

from __future__ import annotations

import pytest

from leaderboard.executors.slurm_job import CONTAINER_PREFIX, sweep_orphan_containers


class _APIError(Exception):
    def __init__(self, status_code: int) -> None:
        super().__init__(f"{status_code} Client Error")
        self.status_code = status_code


class _Container:
    def __init__(self, name: str, error: int | None = None) -> None:
        self.name, self.error, self.removed = name, error, False

    def remove(self, force: bool) -> None:
        if self.error is not None:
            raise _APIError(self.error)
        self.removed = True


class _Containers:
    def __init__(self, items: list[_Container]) -> None:
        self.items = items

    def list(self, all: bool, filters: dict) -> list[_Container]:  # noqa: A002 - docker's keyword
        return [c for c in self.items if c.name.startswith(filters["name"])]


class _Client:
    def __init__(self, items: list[_Container]) -> None:
        self.containers = _Containers(items)


def test_a_container_another_job_is_removing_is_skipped():
    racing = _Container(f"{CONTAINER_PREFIX}41", error=409)
    gone = _Container(f"{CONTAINER_PREFIX}42", error=404)
    orphan = _Container(f"{CONTAINER_PREFIX}43")
    live = _Container(f"{CONTAINER_PREFIX}44")
    assert sweep_orphan_containers(_Client([racing, gone, orphan, live]), active={"44"}) == [orphan.name]
    assert orphan.removed and not live.removed


def test_any_other_engine_error_still_fails_the_sweep():
    with pytest.raises(_APIError):
        sweep_orphan_containers(_Client([_Container(f"{CONTAINER_PREFIX}7", error=500)]), active=set())

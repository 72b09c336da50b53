"""Choosing what runs the jobs: the Docker sandbox when an engine answers, else the in-process runner.

The entry point decides once, here, and hands the result (:class:`Engine`) to the orchestrator: the
:class:`~leaderboard.execution.sandbox.Runner` that runs jobs, the Docker client that builds images (``None``
in-process) and whether containers get GPUs. A Docker client can be injected (tests pass a fake engine);
otherwise one is connected from the environment the caller gives. Side effects: logs the choice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from leaderboard.execution.docker_runner import DockerRunner, docker_client_or_none, gpu_available
from leaderboard.execution.inprocess_runner import InProcessRunner
from leaderboard.execution.sandbox import Runner

RunnerKind = Literal["auto", "docker", "in-process"]
GpuChoice = Literal["auto", "on", "off"]


@dataclass(frozen=True)
class Engine:
    """What runs the jobs.

    Attributes
    ----------
    runner : Runner
        Runs one job (``runner.name`` is recorded with every result).
    client : docker.DockerClient or None
        Builds images; ``None`` for the in-process runner.
    use_gpu : bool
        Whether each container is given the GPUs.
    """

    runner: Runner
    client: Any
    use_gpu: bool

    @property
    def name(self) -> str:
        """The runner kind recorded with results (``docker`` or ``in-process``)."""
        return self.runner.name


def select_engine(
    kind: RunnerKind | Runner,
    gpu: GpuChoice,
    *,
    owner: Path,
    repo_root: Path,
    log: Callable[[str], None],
    client: Any = None,
    environment: Mapping[str, str] | None = None,
) -> Engine:
    """Choose the runner and the GPU use, and say so in ``log``.

    Parameters
    ----------
    kind : {"auto", "docker", "in-process"} or Runner
        ``auto`` uses Docker when an engine answers, else the in-process runner (loudly). A
        :class:`~leaderboard.execution.sandbox.Runner` object is used as it is.
    gpu : {"auto", "on", "off"}
        Request GPUs (``auto``: when the engine has an NVIDIA runtime).
    owner : pathlib.Path
        The state folder; labels this evaluation's containers (orphans of a killed run are removed).
    repo_root : pathlib.Path
        The repository, for the in-process runner's ``PYTHONPATH``.
    log : callable
        Receives the choice, one line each.
    client : docker.DockerClient, optional
        An engine to use instead of connecting from ``environment``.
    environment : mapping, optional
        Where the Docker connection settings are read (default: the process environment).

    Raises
    ------
    RuntimeError
        If ``docker`` is asked for and no engine answers.
    """
    if not isinstance(kind, str):
        return Engine(kind, client, gpu == "on")
    if kind != "in-process" and client is None:
        client = docker_client_or_none(environment)
    if client is None and kind == "docker":
        raise RuntimeError(
            "--runner docker was requested but no Docker engine answers; start dockerd "
            "(see README: 'Without Docker')"
        )
    if client is None or kind == "in-process":
        log(
            "WARNING: no Docker engine — running submissions IN-PROCESS, WITHOUT A SANDBOX. Results "
            "are recorded with runner=in-process. Only run code you trust this way."
        )
        return Engine(InProcessRunner(repo_root), None, False)
    has_gpu = gpu_available(client)
    use_gpu = gpu == "on" or (gpu == "auto" and has_gpu)
    if use_gpu:
        log(
            "GPU: requesting all GPUs for each container"
            + ("" if has_gpu else " (WARNING: the engine reports no 'nvidia' runtime)")
        )
    else:
        log(
            "GPU: none requested — runs use the CPU (recorded as gpu=False)"
            + (" although the engine has an 'nvidia' runtime (--gpu off)" if has_gpu else "")
        )
    return Engine(DockerRunner(client, owner=str(Path(owner).resolve())), client, use_gpu)

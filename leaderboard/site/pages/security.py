"""The security model: the adversarial suite's attack → outcome table and the "Security model" page.

``tests/execution/test_adversarial.py`` runs hostile submissions (``tests/adversarial/<id>/``) through the
real pipeline and, when every case ran and was contained, writes ``site/data/security.json`` with
:func:`write_security_table`. :func:`security_page` turns that file into the Markdown of the page and reads
the sandbox settings from :class:`leaderboard.execution.docker_runner.DockerRunner` and
:class:`leaderboard.execution.sandbox.SandboxLimits` themselves, so the page cannot drift from the code.

Invariants
----------
- ``security.json`` is deterministic: cases sorted by attack id, fixed keys, no timestamps or run ids.
- :func:`security_page` is a pure function of ``security.json`` and the code's defaults.
- Reasons are published as :func:`leaderboard.scrub.public_reason` gives them (no host paths, Docker
  storage, kernel command line, ids or addresses), both in ``security.json`` and on the page.

Side effects
------------
- :func:`write_security_table` writes ``<data_dir>/security.json`` (atomically, :mod:`leaderboard.files`).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from leaderboard.files import write_json
from leaderboard.markdown import cell, code, esc, table
from leaderboard.scrub import public_reason

__all__ = ["CASE_KEYS", "SECURITY_JSON", "format_table", "read_security_table", "security_page",
           "write_security_table"]  # fmt: skip

SECURITY_JSON = "security.json"
"""File name of the attack → outcome table under ``site/data/``."""

CASE_KEYS = ("attack", "title", "does", "expected", "outcome", "reason", "contained")
"""Keys of each case: submission id, short title, what the attack does, the expected outcome, the observed
outcome (MLflow status), the one-line reason recorded, and whether it was contained."""


def write_security_table(cases: Iterable[Mapping[str, Any]], data_dir: Path) -> Path:
    """Write the attack → outcome table to ``<data_dir>/security.json``.

    Parameters
    ----------
    cases : iterable of mapping
        One mapping per attack with the keys :data:`CASE_KEYS` (``contained`` a bool, the others str).
    data_dir : pathlib.Path
        The site's data folder (``site/data``).

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    ValueError
        If a case lacks a key, has an extra one, or repeats an attack id.
    """
    rows = []
    for case in cases:
        if set(case) != set(CASE_KEYS):
            raise ValueError(f"security case {case.get('attack')!r} must have exactly the keys {CASE_KEYS}")
        row = {k: bool(case[k]) if k == "contained" else str(case[k]) for k in CASE_KEYS}
        rows.append(row | {"reason": public_reason(row["reason"])})
    rows.sort(key=lambda r: r["attack"])
    ids = [r["attack"] for r in rows]
    if len(set(ids)) != len(ids):
        raise ValueError(f"security cases repeat an attack id: {ids}")
    target = Path(data_dir) / SECURITY_JSON
    write_json(target, {"schema_version": 1, "cases": rows})
    return target


def read_security_table(data_dir: Path) -> list[dict[str, Any]]:
    """Return the cases of ``<data_dir>/security.json`` (an empty list when the file is missing)."""
    path = Path(data_dir) / SECURITY_JSON
    if not path.is_file():
        return []
    return list(json.loads(path.read_text(encoding="utf-8"))["cases"])


def format_table(cases: Sequence[Mapping[str, Any]], *, width: int = 100) -> str:
    """Return the attack → outcome table as plain text for a terminal (reasons clipped to ``width``)."""
    lines = [f"{'attack':<26} {'outcome':<8} {'contained':<9} reason", "-" * (46 + width)]
    for case in cases:
        reason = str(case["reason"])
        reason = reason if len(reason) <= width else reason[: width - 1] + "…"
        mark = "yes" if case["contained"] else "NO"
        lines.append(f"{case['attack']:<26} {case['outcome']:<8} {mark:<9} {reason}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------------
# The page


def _mib(n: int) -> str:
    return f"{n / 1024**2:g} MiB" if n < 1024**3 else f"{n / 1024**3:g} GiB"


def sandbox_settings() -> list[tuple[str, str, str]]:
    """Return ``(setting, value, why)`` rows of the default sandbox, read from the runner's own code.

    Returns
    -------
    list of tuple of str
        Built from ``DockerRunner.create_kwargs`` with ``SandboxLimits()`` (what ``containers.create``
        receives) and the module constants of :mod:`leaderboard.execution.sandbox`.
    """
    from leaderboard.execution.docker_runner import DockerRunner
    from leaderboard.execution.outfs import MOUNT_OPTIONS, image_inodes
    from leaderboard.execution.sandbox import POLL_S, SandboxLimits

    limits = SandboxLimits()
    with tempfile.TemporaryDirectory() as tmp:
        folders = {name: Path(tmp) / name for name in ("job", "data", "models", "out")}
        kwargs = DockerRunner(client=None).create_kwargs(
            job_dir=folders["job"], data_dir=folders["data"], models_dir=folders["models"],
            out_dir=folders["out"], limits=limits, gpu=False,
        )  # fmt: skip
        gpu_kwargs = DockerRunner(client=None).create_kwargs(
            job_dir=folders["job"], data_dir=folders["data"], models_dir=folders["models"],
            out_dir=folders["out"], limits=limits, gpu=True,
        )  # fmt: skip
    mounts = ", ".join(
        f"{m['Target']} ({'read-only' if m['ReadOnly'] else 'read-write'})" for m in kwargs["mounts"]
    )
    (tmpfs_target, tmpfs_options), *_ = kwargs["tmpfs"].items()
    (request,) = gpu_kwargs["device_requests"]
    env = ", ".join(f"{k}={v}" for k, v in kwargs["environment"].items())
    log_size = kwargs["log_config"]["Config"]["max-size"]
    return [
        ("Command", " ".join(["python -m evaluators", *kwargs["command"]]),
         "the only entry point; it is PID 1, so when it exits every process left in the box is killed"),
        ("Network", f"network_mode={kwargs['network_mode']}, network_disabled={kwargs['network_disabled']}",
         "no interface but loopback: no downloads, no exfiltration, no engine API"),
        ("Root filesystem", f"read_only={kwargs['read_only']}",
         "code, evaluator and libraries cannot be changed (switch: SandboxLimits.read_only_root)"),
        ("Scratch space", f"{tmpfs_target} tmpfs {tmpfs_options}", "the only writable place besides /out"),
        ("Mounts", mounts, "inputs read-only; /out is the only way out"),
        ("User", f"user={kwargs['user']}", "not root inside the container"),
        ("Capabilities", f"cap_drop={kwargs['cap_drop']}", "no mount, chroot, raw sockets, ptrace …"),
        ("Privilege escalation", f"security_opt={kwargs['security_opt']}",
         "setuid binaries cannot raise privileges"),
        ("System calls", "Docker's default seccomp profile", "unshare, mount, kexec … refused"),
        ("Memory", f"mem_limit={kwargs['mem_limit']}, memswap_limit={kwargs['memswap_limit']}",
         "no swap on top; over it the kernel kills the run (reported as out of memory)"),
        ("Processes and threads", f"pids_limit={kwargs['pids_limit']}", "a fork bomb stops at the limit"),
        ("CPU", f"nano_cpus={kwargs['nano_cpus']} ({kwargs['nano_cpus'] / 1e9:g} cores)",
         "other work on the host keeps running"),
        ("Wall clock", f"timeout_s={limits.timeout_s:g}, then SIGKILL",
         "a run that never ends is killed and removed"),
        ("Output folder", f"its own ext4 filesystem of {_mib(limits.out_cap_bytes)} and about "
         f"{image_inodes(limits)} inodes, mounted {MOUNT_OPTIONS}; also measured every {POLL_S:g} s for "
         "the reason", "the kernel stops the write (fallocate, sparse files, many small files); a host "
         "that cannot mount it polls only, said loudly and recorded with the run (tag out_limit)"),
        ("Logs", f"last {limits.output_cap_bytes // 1024} KiB kept; engine log file max-size={log_size}",
         "a flood costs neither memory nor disk"),
        ("Environment", env, "set explicitly; the host's environment (tokens, keys) never reaches the box"),
        ("GPU", f"device_requests count={request['Count']} capabilities={request['Capabilities']}",
         "only with an NVIDIA runtime (or --gpu on); otherwise CPU, recorded as gpu=False"),
    ]  # fmt: skip


_INTRO = """\
A submission is arbitrary code: its own adapter class, `trust_remote_code` model code, pickled weights,
extra Python requirements. Maintainers run every pull request's submission on their own machines, so the
evaluation treats that code as hostile. This page is generated from the code itself (the sandbox
settings below are read from `leaderboard/execution/docker_runner.py` and `sandbox.py`) and from the last
run of the adversarial test suite (`tests/execution/test_adversarial.py`, which writes
`site/data/security.json`)."""

_WHERE = """\
## What runs where

- **On the host (trusted code only):** manifest validation (YAML parsed safely: size cap, no aliases,
  bounded nesting; nothing imported or run), the weight prefetch, the image build, the MLflow store, the
  checks of every output, and this site.
- **In the container (untrusted):** the submission's code together with the evaluator. Everything the
  container returns is checked on the host before it is stored or shown."""

_CHECKS = """\
## What the host checks before storing a run

- `/out` may hold at most 100 regular files with plain names. A symbolic link, a folder, a pipe or a
  device fails the run: the host never follows a link planted by the container (a link to
  `/proc/self/environ` would otherwise publish the orchestrator's environment).
- `result.json`: at most 64 MiB and 32 levels of nesting, valid JSON, the schema of the job and the
  result (`evaluators/schema.py`: the job's track, data set and benchmark version; every row with exactly
  the track's dimensions, values it allows, a metric it declares, no repeats, a finite value within the
  metric's registered bounds). It is stored compact, as the host checked it.
- Only `result.json` and the artifacts the track declares are stored, each within its size limit (256 MiB
  by default); other files in `/out` are left out with a note in the log. Declared `.gz` artifacts are
  decompressed as a stream with a 1 GiB cap (no gzip bombs), and per-item tables are checked row by row.
- Failure reasons are one line; control characters (terminal escapes, bells, bidirectional overrides)
  are written as visible escapes (`\\x1b`, `\\u202e`) before they reach the terminal, MLflow, the exports
  or this site (`leaderboard.text`), and the site escapes Markdown and HTML.
- MLflow keeps a failure's full reason and log tail for the maintainers. This site and the pull-request
  summary show its category and a short reason with host details replaced by placeholders: absolute
  paths other than the sandbox's own mounts, Docker storage paths, a kernel command line, container ids
  and digests, IP and MAC addresses."""

_SUPPLY = """\
## Weights and dependencies

- **Weights are fetched on the host, before the sandbox**, at the manifest's 40-character commit:
  safetensors, configuration and tokenizer files only. Pickled weights (`*.bin`, `*.pt`) only when the
  manifest sets `allow_pickle` *and* a maintainer allows it (`CHEMROBUST_ALLOW_PICKLE`); the model
  repository's `*.py` only with `trust_remote_code`, which a maintainer must allow too
  (`CHEMROBUST_ALLOW_REMOTE_CODE`). The files are verified against the commit's tree (sha256 of LFS files,
  git blob ids of the others, nothing missing or extra), copied as plain files and mounted read-only at
  `/models`. Inside the container the hub is offline (`HF_HUB_OFFLINE=1`) and there is no network anyway.
- **Extra requirements** must be exact pins; they are fetched on the host as wheels only (no build
  scripts run, on the host or in the image), constrained so they cannot move a locked package, and
  installed in an image build without network. A failed build fails that submission only, with the tail
  of its log.
- Data files are checked against their registered sha256 wherever they come from; a download that does
  not match is deleted and reported, never cached."""

_LABELS = """\
## Labels stay outside the box

A track that needs no labels — a molecule's rewritten strings are its own inputs — computes its metrics
inside the container, next to the model. Tracks that do need answers (property labels, reference
captions) must not mount them at `/data`: the container returns raw outputs (predictions, generated text,
embeddings) in `/out`, and the host scores them after the run, so submission code never reads the answers.
Such a track mounts a view the host writes instead of the data set (its sha256 in `job.json`, checked in the
box): the downstream probes (T2) `id, split, smiles` without labels; the generative tracks (T3–T5) only their
requests — an opaque id, the prompt and its decoding parameters per row, shuffled — so no name, formula,
value, target molecule or label that some question asks for enters the box except as the input another
question shows, and no id tells which questions are about the same molecule.
The consequence for such tracks is stated under *Known limits*."""

_GPU = """\
## GPU hosts

The evaluator asks the Docker engine for its runtimes: with an `nvidia` runtime (NVIDIA Container
Toolkit) every container gets all GPUs (`device_requests`) and the image gets the CUDA build of torch;
without one the runs use the CPU. Either way each run records `gpu`, the host hardware (CPU model and
count, GPU model and driver, from `nvidia-smi`) and the complete sandbox settings (tag `sandbox`).
The read-only root filesystem stays on for GPU runs. It can be switched off
(`SandboxLimits(read_only_root=False)`) only for hosts whose container hooks must write into the
container's root filesystem (older NVIDIA toolkits in legacy mode); the run is then still unprivileged
(uid 10001, no capabilities, no network), and the switch is recorded with every run."""

_FAULTS = """\
## Faults and crashes

- One failing submission never stops the others, and every failure is a FAILED MLflow run with a
  one-line reason, shown in the terminal and on the site.
- An evaluation holds a lock on its state folder; a second one stops at once with a clear message.
- If the orchestrator itself is killed, re-running finishes the work: FINISHED runs are reused, runs left
  RUNNING are marked FAILED ("interrupted"), every attempt gets a fresh job folder, and containers the
  killed orchestrator left running are removed, as are the `/out` filesystems it left mounted.
- A job folder is removed once its outcome (result, or reason and log tail) is stored, failed or not."""

_LIMITS = """\
## Known limits

- **Scores computed in the box can be forged.** A custom-code submission runs in the same process as the
  scorer of a track that scores inside the container, and can report any numbers it likes. Impossible
  values are rejected, plausible ones are not. The defences are review (the code is in the pull
  request), re-running it, and the reference baselines; tracks with labels score on the host (above).
- **Containers share the host's kernel.** A kernel exploit escapes any container; Docker's seccomp
  profile, dropped capabilities and no-new-privileges shrink that surface. For stronger isolation run the
  engine with gVisor or inside a virtual machine.
- **The in-process runner has no sandbox at all** — no output limit either. It exists for machines
  without Docker, warns on every run, and records `runner=in-process`; use it only for code you trust.
- `SandboxLimits(read_only_root=False)` lets a run write to the engine's disk without a bound; it is for
  GPU hosts whose container hooks need it, and is recorded with every run.
- Docker's default 64 MB tmpfs at `/dev/shm` is writable too; like `/tmp` it disappears with the
  container."""


def host_parsing() -> str:
    """Return the section on the host's own parsers and clients, with the limits read from the code."""
    from evaluators.answers import opsin
    from leaderboard.execution.limits import ScoringLimits

    limits = ScoringLimits()
    return f"""\
## The host's own parsers and clients

The host reads what a run wrote (completions, predictions) and calls the API servers endpoint manifests
name: both are attack surfaces too.

- **Scoring runs under limits**, like the container: reading a run's outputs and the track's host step
  run in a child process leading its own process group, with {limits.memory_bytes // 1024**3} GiB of address
  space, {limits.cpu_s} CPU seconds and a {limits.wall_s:g} s wall clock that kills the whole group (the OPSIN
  JVM included). A run whose scoring trips a limit fails with the reason; the next job goes on. This is
  the worst case one hostile run's scoring can cost.
- **Answers are capped before parsing:** at most {opsin.MAX_NAME_LENGTH} characters, brackets nested at most
  {opsin.MAX_NAME_DEPTH} deep, at most {opsin.MAX_NAME_EXPANSION} copies asked for by multiplying prefixes
  (bis, tris, …kis along nested brackets), and no structure over {opsin.MAX_ANSWER_ATOMS} atoms after
  parsing. OPSIN runs with `-Xmx{opsin.OPSIN_HEAP}`; a name stuck for {opsin.NAME_TIMEOUT_S:g} s or
  exhausting the heap is invalid with its reason, a batch over {opsin.BATCH_TIMEOUT_S:g} s fails the
  scoring. An answer that trips a cap is one invalid answer, counted with the reason; an invalid UTF-8
  completion invalidates that answer only.
- **Endpoint calls have real deadlines:** one request — name resolution, connect, headers and the whole
  body — has the manifest's `timeout_s` in all (a watchdog shuts the socket down; a resolver that never
  answers is waited on only until then), the run has the runner's wall-clock limit, and retries have a
  time budget (three timeouts, at least 30 s). The first address a name resolves to is kept for the run.
  No proxy from the environment, no redirects (they would carry the key elsewhere)."""


def security_page(data_dir: Path) -> str:
    """Return the Markdown of the "Security model" page.

    Parameters
    ----------
    data_dir : pathlib.Path
        The site's data folder holding ``security.json`` (see :func:`write_security_table`). Without the
        file the page says that the suite has not been run.

    Returns
    -------
    str
        The page body (the caller adds the generated-file header).
    """
    cases = read_security_table(data_dir)
    out = ["# Security model", "", _INTRO, "", _WHERE, "", "## The sandbox", "",
           "Every run is one container created with these settings (the defaults of `SandboxLimits`; the "
           "test suite runs with tighter ones):", ""]  # fmt: skip
    rows = ([esc(a), code(b), esc(c)] for a, b, c in sandbox_settings())
    out.append(table(["Setting", "Value", "Why"], rows))
    out += ["", "## Attacks and outcomes", ""]
    if cases:
        contained = sum(1 for c in cases if c["contained"])
        out += [
            f"The adversarial suite runs {len(cases)} hostile submissions through the real pipeline (Docker "
            "engine, image build, MLflow), next to well-behaved ones whose results must stay unchanged. "
            f"Contained: **{contained} of {len(cases)}**. An attack is contained when it ends as expected: "
            "most FAIL with a clear reason; a few (a junk file below the output cap) are meant to FINISH "
            "with the hostile part left out.",
            "",
        ]
        out.append(
            table(
                ["Attack", "What it does", "Expected", "Outcome", "Reason recorded", "Contained"],
                (
                    [
                        f"{esc(c['title'])} ({code(c['attack'])})",
                        cell(c["does"]),
                        cell(c["expected"]),
                        cell(c["outcome"]),
                        cell(public_reason(c["reason"])),
                        "yes" if c["contained"] else "**NO**",
                    ]
                    for c in cases
                ),
            )
        )
    else:
        out += ["The adversarial suite has not been run yet (no `site/data/security.json`)."]
    out += ["", _CHECKS, "", host_parsing(), "", _SUPPLY, "", _LABELS, "", _GPU, "", _FAULTS, "", _LIMITS, ""]
    return "\n".join(out)

"""Hostile submissions through the real pipeline: sandbox and result store must hold (issue 4, item 1).

The suite copies every hostile submission of ``tests/adversarial/`` next to two well-behaved ones into a
temporary submissions folder and evaluates them with :class:`leaderboard.execution.evaluate.Evaluator` and the
Docker runner (real image builds, real containers, an MLflow store of its own), with small sandbox limits.
Every attack must end as a FAILED run whose one-line reason says what stopped it — in the terminal, in
MLflow and on the generated site — while the reference submission's results stay exactly as they were.
One attack is meant to succeed (``attack-junk-artifact``: junk below the output cap, then an honest run):
it is contained when its run FINISHES with nothing but the declared artifacts stored and a note saying
what was left out. Attacks on ``/out``'s own filesystem need a root orchestrator (it mounts that
filesystem); without root they are skipped, except in CI, where they fail.
Canary secrets are put into the host's environment for the whole suite; none may appear anywhere in what
the evaluation stored or printed. When every case ran and was contained, the attack → outcome table is
printed and written to a temporary folder, and the committed ``site/data/security.json`` (the site's
"Security model" page) must publish the same table: every attack, with the same title, description,
expected and observed outcome, contained, and a reason matching the case's pattern. The suite never
writes into the repository, except on request: run it with ``CHEMROBUST_UPDATE_SECURITY=1`` to
regenerate ``site/data/security.json`` from this run (as root, so that every attack runs), then commit it.

The state folder is private (own lock, jobs, MLflow) but shares the tests' persistent caches (wheelhouse
and data, outside the repository: ``tests/execution/_state.py``) through links.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import resource
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from evaluators.tracks import TrackOptions
from leaderboard.data.prepare import prepare_dataset
from leaderboard.execution.docker_runner import OWNER_LABEL
from leaderboard.execution.evaluate import Evaluator
from leaderboard.execution.outfs import mounts_below
from leaderboard.execution.sandbox import SandboxLimits
from leaderboard.site.pages.security import CASE_KEYS, format_table, read_security_table, write_security_table
from leaderboard.store import REASON_TAG, ResultStore
from tests.execution._state import shared_state

ROOT = Path(__file__).resolve().parents[2]
ADVERSARIAL = Path(__file__).resolve().parents[1] / "adversarial"
REFERENCE = "morgan-fingerprint-reference"  # evaluated before the attacks; must be untouched after
AFTER = "char-ngram-baseline"  # evaluated after every attack; must still work
DATASET = "datamol-default"
MARKER = "chemrobust-host-marker"
MIB = 1024**2

SUITE_LIMITS = SandboxLimits(
    memory="512m",
    pids=256,
    cpus=1.0,
    timeout_s=120,
    tmpfs_size="256m",
    output_cap_bytes=64 * 1024,
    out_cap_bytes=96 * MIB,
    out_max_files=200,
)
SHORT_LIMITS = SUITE_LIMITS.model_copy(update={"timeout_s": 5})
CANARY = f"chemrobust-canary-{uuid.uuid4().hex}"
CANARIES = {
    "CHEMROBUST_HOST_SECRET": CANARY,
    "HF_TOKEN": f"hf_{CANARY}",
    "AWS_SECRET_ACCESS_KEY": f"aws-{CANARY}",
    "GITHUB_TOKEN": f"ghp_{CANARY}",
}

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@dataclass(frozen=True)
class Case:
    attack: str
    expected: str
    reason: str  # regular expression the one-line reason (or, FINISHED, the log's note) must match
    limits: SandboxLimits = SUITE_LIMITS
    status: str = "FAILED"  # the MLflow status of a contained attack
    kernel: bool = False  # needs /out's own filesystem, hence a root orchestrator


OUT_CAP = r" \(its limit: 96 MiB in 200 files\)$"
STORED = {"result.json", "log_tail.txt", "ranks.csv.gz", "recall_at_k.csv.gz", "ranks_all_layers.npz"}
ROOT_HOST = os.geteuid() == 0


CASES = [
    Case("attack-network", "FAILED: no network",
         r"^chemrobust: error: RuntimeError: network blocked: 4 of 4 connections failed \(Network is "
         r"unreachable\); DNS fails .*interfaces \['lo'\]$"),
    Case("attack-write-outside", "FAILED: read-only filesystem and mounts",
         r"^chemrobust: error: RuntimeError: nothing written outside /out: 11 of 11 targets refused "
         r"\((Permission denied, )?Read-only file system\)$"),
    Case("attack-fork-bomb", "FAILED: pids limit",
         r"^chemrobust: error: RuntimeError: fork bomb stopped by the pids limit: \[Errno 11\] "
         r"Resource temporarily unavailable$"),
    Case("attack-memory", "FAILED: out of memory", r"^out of memory \(limit 512m\)$"),
    Case("attack-timeout", "FAILED: wall-clock timeout", r"^wall-clock timeout after 5 s$", SHORT_LIMITS),
    Case("attack-flood", "FAILED, log tail capped",
         r"^chemrobust: error: RuntimeError: flooded stdout and stderr with 68 MiB$"),
    Case("attack-log-injection", "FAILED, reason sanitised",
         r"^chemrobust: error: RuntimeError: \?\[2J\?\[H\?\[1;32mALL RUNS PASSED\?\[0m\?\?\?\?forged\? "
         r"<script>"),
    Case("attack-result-garbage", "FAILED: output rejected",
         r"^invalid output: result\.json is not valid JSON: 'utf-8' codec can't decode"),
    Case("attack-result-oversized", "FAILED: output rejected",
         r"^invalid output: result\.json is 67109888 bytes, over the 67108864 limit$"),
    Case("attack-result-forged", "FAILED: output rejected",
         r"^invalid output: row 1: acc_at_1 must be a value in \[0, 1\], got 7\.5$"),
    Case("attack-nan-embeddings", "FAILED: embeddings rejected",
         r"^chemrobust: error: EmbeddingError: layer 'last': \d+ of \d+ embeddings contain NaN or inf$"),
    Case("attack-wrong-shape", "FAILED: embeddings rejected",
         r"^chemrobust: error: EmbeddingError: layer 'last': expected an array of shape \((\d+), d\), "
         r"got \(\d+, 8\)$"),
    Case("attack-env-secrets", "FAILED: no secret in the environment",
         r"^chemrobust: error: RuntimeError: no secrets in the environment; it holds only "
         r"(?!.*(SECRET|TOKEN))[A-Z0-9_, ]*HF_HUB_OFFLINE, HOME, HOSTNAME[A-Z0-9_, ]*$"),
    Case("attack-host-paths", "FAILED: nothing beyond the mounts, no privilege",
         r"^chemrobust: error: RuntimeError: no host path reached: no host file beyond the mounts, no engine "
         r"socket; setuid, mount, unshare, chroot refused \(Operation not permitted\); CapEff "
         r"0000000000000000, NoNewPrivs 1, Seccomp 2$"),
    Case("attack-symlink-out", "FAILED: output rejected, links not followed",
         r"^invalid output: 'host-environ\.txt' in the output is a symbolic link"),
    Case("attack-fill-out", "FAILED: output cap",
         r"^output limit exceeded: (/out is full|more than 96 MiB written to /out)" + OUT_CAP),
    Case("attack-fallocate-out", "FAILED: the kernel refuses the allocation",
         r"^output limit exceeded: /out is full" + OUT_CAP, kernel=True),
    Case("attack-sparse-out", "FAILED: output cap, sparse files count in full",
         r"^output limit exceeded: more than 96 MiB written to /out" + OUT_CAP, kernel=True),
    Case("attack-inode-flood", "FAILED: file limit (inodes)",
         r"^output limit exceeded: more than 200 files written to /out" + OUT_CAP, kernel=True),
    Case("attack-junk-artifact", "FINISHED: junk left out of the store",
         r"^\[chemrobust\] not stored: 2 file\(s\) in /out that track 'amore' does not declare: "
         r"embeddings\.npy \(16 MiB\), junk\.bin \(48 MiB\)$", status="FINISHED"),
]  # fmt: skip
RUN_CASES = [c for c in CASES if ROOT_HOST or not c.kernel]


def _tree_digest(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@dataclass
class Suite:
    tmp: Path
    state: Path
    store: ResultStore
    lines: list[str]
    seconds: dict[str, float]
    reference_before: dict
    reference_after: dict
    reference_rerun: tuple[int, int]
    flood_rss_growth_mib: float
    data_before: dict[str, str]
    site_index: str
    runs: dict[str, object] = field(default_factory=dict)  # latest run per submission


def _reference_snapshot(store: ResultStore) -> dict:
    (run,) = [r for r in store.latest_runs([REFERENCE])]
    artifacts = sorted(a.path for a in store.client.list_artifacts(run.info.run_id))
    return {
        "run_id": run.info.run_id,
        "status": run.info.status,
        "metrics": dict(run.data.metrics),
        "artifacts": artifacts,
        "result": store.result_of(run),
    }


@pytest.fixture(scope="module")
def suite(docker_client, tmp_path_factory) -> Suite:
    from leaderboard.execution.images import DEFAULT_BASE_IMAGE, ensure_base_image
    from leaderboard.site.build import generate_pages, write_exports

    tmp = tmp_path_factory.mktemp("adversarial")
    subs = tmp / "submissions"
    for name in (REFERENCE, AFTER):
        shutil.copytree(ROOT / "submissions" / name, subs / name)
    for case in RUN_CASES:
        shutil.copytree(ADVERSARIAL / case.attack, subs / case.attack)
    state = shared_state(tmp / "state")
    (state / "jobs").mkdir()
    # Files the host keeps beside (never inside) what it mounts; the host-path attack looks for them.
    for folder in (tmp, state, subs, state / "jobs"):
        (folder / f"{MARKER}-{folder.name}.txt").write_text(f"host-only file in {folder}\n")
    data_dir = prepare_dataset(DATASET, state) / DATASET  # built once, before the digest is taken
    data_before = _tree_digest(data_dir)

    mp = pytest.MonkeyPatch()
    for name, value in CANARIES.items():
        mp.setenv(name, value)
    lines: list[str] = []
    seconds: dict[str, float] = {}
    store = ResultStore(f"sqlite:///{tmp}/mlflow.db", artifact_root=tmp / "artifacts")
    base = ensure_base_image(docker_client, DEFAULT_BASE_IMAGE, ROOT, log=lines.append)

    def evaluate(ids: list[str], limits: SandboxLimits, step: str):
        t0 = time.perf_counter()
        evaluator = Evaluator(
            ROOT, state, store, runner="docker", gpu="off", base_image=base,
            options=TrackOptions(limit=20), submissions_dir=subs, log=lines.append, limits=limits,
        )  # fmt: skip
        summary = evaluator.run(ids, [DATASET])
        seconds[step] = round(time.perf_counter() - t0, 1)
        return summary

    try:
        first = evaluate([REFERENCE], SUITE_LIMITS, "reference")
        assert first.computed == 1 and not first.failed, "\n".join(lines[-40:])
        before = _reference_snapshot(store)

        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        evaluate(["attack-flood"], SUITE_LIMITS, "flood")
        flood_growth = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss) / 1024

        ordinary = [c.attack for c in RUN_CASES if c.limits is SUITE_LIMITS and c.attack != "attack-flood"]
        evaluate([*ordinary, AFTER], SUITE_LIMITS, "attacks")
        evaluate([c.attack for c in RUN_CASES if c.limits is SHORT_LIMITS], SHORT_LIMITS, "timeout")
        rerun = evaluate([REFERENCE], SUITE_LIMITS, "reference again")
    finally:
        mp.undo()

    after = _reference_snapshot(store)
    results, runs = store.export()
    site = tmp / "site"
    write_exports(
        results, runs, [{"id": p.name, "name": p.name} for p in sorted(subs.iterdir()) if p.is_dir()], site
    )
    generate_pages(site)
    latest = {run.data.tags["submission"]: run for run in store.latest_runs()}
    return Suite(
        tmp=tmp, state=state, store=store, lines=lines, seconds=seconds, reference_before=before,
        reference_after=after, reference_rerun=(rerun.computed, rerun.reused),
        flood_rss_growth_mib=flood_growth, data_before=data_before,
        site_index=(site / "index.md").read_text(encoding="utf-8"), runs=latest,
    )  # fmt: skip


def loot(suite: Suite, run) -> object:
    """What a run that should have failed reported about itself (its ``describe()``)."""
    return suite.store.result_of(run).get("model") if run.info.status == "FINISHED" else None


def site_row(suite: Suite, attack: str) -> str:
    """The row of the site's failed-runs table (on the index page) that links to ``attack``'s page."""
    rows = [ln for ln in suite.site_index.splitlines() if ln.startswith("|") and f"/{attack}.md)" in ln]
    return rows[0] if rows else ""


def outcome(suite: Suite, attack: str) -> tuple[str, str]:
    """The run's status and its one-line reason; for a FINISHED run, the log's note on unstored files."""
    run = suite.runs.get(attack)
    if run is None:
        return "MISSING", "no run recorded"
    if run.info.status != "FINISHED":
        return run.info.status, run.data.tags.get(REASON_TAG, "")
    names = {a.path for a in suite.store.client.list_artifacts(run.info.run_id)}
    if "log_tail.txt" not in names:
        return run.info.status, ""
    tail = suite.store.client.download_artifacts(run.info.run_id, "log_tail.txt", str(suite.tmp / attack))
    notes = [ln for ln in Path(tail).read_text().splitlines() if ln.startswith("[chemrobust] not stored")]
    return run.info.status, notes[-1] if notes else ""


def require_root(case: Case) -> None:
    """Skip an attack on /out's own filesystem without a root orchestrator; fail instead in CI."""
    if case.kernel and not ROOT_HOST:
        message = f"{case.attack} needs /out's own filesystem, which only a root orchestrator mounts"
        if os.environ.get("CI"):
            pytest.fail(f"{message}, but CI is set: CI runs as root", pytrace=False)
        pytest.skip(message)


# --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[c.attack for c in CASES])
def test_attack_is_contained_with_a_one_line_reason(suite, case):
    require_root(case)
    status, reason = outcome(suite, case.attack)
    run = suite.runs[case.attack]
    assert status == case.status, f"{case.attack} was not contained: {status}; it got {loot(suite, run)}"
    assert re.search(case.reason, reason), f"{case.attack}: unexpected reason {reason!r}"
    assert "\n" not in reason and reason.isprintable() and len(reason) <= 1000
    tags = run.data.tags
    if case.status == "FINISHED":
        # Stored: result.json, the declared artifacts and the log's note; nothing else the run wrote.
        artifacts = suite.store.client.list_artifacts(run.info.run_id)
        assert {a.path for a in artifacts} <= STORED, f"{case.attack}: stored {[a.path for a in artifacts]}"
        assert sum(a.file_size or 0 for a in artifacts) < 4 * MIB
        said = [line for line in suite.lines if f"] {case.attack} × amore × {DATASET}: [chemrobust]" in line]
        assert said and reason in said[-1], f"{case.attack}: terminal said {said}"
    else:
        # In the terminal: the run's line names the attack and the same reason.
        said = [line for line in suite.lines if f"] {case.attack} × amore × {DATASET}: FAILED" in line]
        assert said and reason in said[-1], f"{case.attack}: terminal said {said}"
        # On the site: the failed-runs table of the index lists it with its reason, escaped.
        row = site_row(suite, case.attack)
        words = re.findall(r"[A-Za-z]{5,}", reason)[:4]
        assert row and all(w in row for w in words), f"{case.attack}: site row {row!r} lacks {words}"
    # Provenance recorded with the outcome, too; /out had a filesystem of its own.
    assert tags["gpu"] == "False" and tags["runner"] == "docker"
    assert json.loads(tags["sandbox"]) == json.loads(case.limits.model_dump_json())
    assert json.loads(tags["hardware"])["cpu_model"]
    if ROOT_HOST:
        assert tags["out_limit"].startswith("kernel: /out is an ext4 filesystem of"), tags["out_limit"]
    else:
        assert tags["out_limit"].startswith("POLLING ONLY:"), tags["out_limit"]


def test_reason_with_escapes_and_markup_is_inert_everywhere(suite):
    _, reason = outcome(suite, "attack-log-injection")
    for text in [reason, *suite.lines]:
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    row = site_row(suite, "attack-log-injection")
    assert "<script>" not in row and "&lt;script&gt;" in row


def test_reference_results_are_untouched_and_later_submissions_still_run(suite):
    before, after = suite.reference_before, suite.reference_after
    assert after["run_id"] == before["run_id"] and after["status"] == "FINISHED"
    assert after["metrics"] == before["metrics"] and after["artifacts"] == before["artifacts"]
    assert after["result"] == before["result"]
    assert suite.reference_rerun == (0, 1), "the reference must be reused, not recomputed"
    assert suite.runs[AFTER].info.status == "FINISHED", "a well-behaved submission after the attacks failed"
    # Exactly one FINISHED run per well-behaved submission (and attack meant to finish), whatever ran.
    finished = suite.store.client.search_runs([suite.store.experiment_id], "attributes.status = 'FINISHED'")
    meant = [c.attack for c in RUN_CASES if c.status == "FINISHED"]
    assert sorted(r.data.tags["submission"] for r in finished) == sorted([REFERENCE, AFTER, *meant])


def test_no_job_folder_or_output_filesystem_is_left(suite):
    """Every job folder goes once its outcome is stored, failed or not; every /out filesystem is unmounted."""
    assert sorted(p.name for p in (suite.state / "jobs").iterdir()) == [f"{MARKER}-jobs.txt"]
    assert mounts_below(suite.tmp) == []


def test_no_canary_secret_reached_anything_stored_or_printed(suite):
    needles = [v.encode() for v in CANARIES.values()]
    leaks = []
    for path in sorted(suite.tmp.rglob("*")):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            leaks += [f"{path}" for needle in needles if needle in data]
    leaks += [line[:200] for line in suite.lines if any(v in line for v in CANARIES.values())]
    assert not leaks, f"host secrets leaked into: {leaks}"


def test_host_files_and_benchmark_data_are_unchanged(suite):
    for folder in (suite.tmp, suite.state, suite.tmp / "submissions", suite.state / "jobs"):
        marker = folder / f"{MARKER}-{folder.name}.txt"
        assert marker.read_text() == f"host-only file in {folder}\n"
    assert _tree_digest(prepare_dataset(DATASET, suite.state) / DATASET) == suite.data_before


def test_flood_keeps_a_capped_tail_and_host_memory_flat(suite):
    run = suite.runs["attack-flood"]
    tail_file = suite.store.client.download_artifacts(run.info.run_id, "log_tail.txt", str(suite.tmp / "dl"))
    tail = Path(tail_file).read_bytes()
    assert len(tail) <= SUITE_LIMITS.output_cap_bytes + 100
    assert b"earlier output cut" in tail
    assert suite.flood_rss_growth_mib < 64, f"host memory grew by {suite.flood_rss_growth_mib:.0f} MiB"
    assert float(run.data.tags["wall_s"]) < 60


def test_timeout_kills_in_time_and_no_container_is_left(suite, docker_client):
    assert float(suite.runs["attack-timeout"].data.tags["wall_s"]) < SHORT_LIMITS.timeout_s + 15
    left = docker_client.containers.list(
        all=True, filters={"label": f"{OWNER_LABEL}={suite.state.resolve()}"}
    )
    assert left == []


def test_attack_table_is_contained_and_published_as_committed(suite, capsys, tmp_path):
    """Runs last: prints the attack → outcome table, writes it (to tmp_path) and checks the committed one.

    ``site/data/security.json`` is read, never written — unless ``CHEMROBUST_UPDATE_SECURITY=1``.
    """
    for case in CASES:
        require_root(case)  # the table lists every attack, or is not written
    cases = []
    for case in CASES:
        status, reason = outcome(suite, case.attack)
        manifest = yaml.safe_load((ADVERSARIAL / case.attack / "submission.yaml").read_text())
        contained = status == case.status and re.search(case.reason, reason) is not None
        cases.append(
            {
                "attack": case.attack,
                "title": manifest["name"].removeprefix("Attack: "),
                "does": " ".join(manifest["description"].split()),
                "expected": case.expected,
                "outcome": status,
                "reason": reason,
                "contained": contained,
            }
        )
    assert [set(c) for c in cases] == [set(CASE_KEYS)] * len(cases)
    timings = ", ".join(f"{k} {v:g} s" for k, v in suite.seconds.items())
    with capsys.disabled():
        print(f"\n\nattack → outcome ({len(cases)} hostile submissions; {timings})\n{format_table(cases)}\n")
    assert all(c["contained"] for c in cases), "not every attack was contained"

    # The table as this run would publish it (reasons in their public form) ...
    written = write_security_table(cases, tmp_path)
    assert written.parent == tmp_path
    fresh = read_security_table(tmp_path)
    data_dir = ROOT / "site" / "data"
    if os.environ.get("CHEMROBUST_UPDATE_SECURITY") == "1":
        write_security_table(cases, data_dir)
    # ... is the one the committed Security page shows: same attacks, titles, outcomes, all contained.
    # Reasons hold run-specific text (sizes, environment listings): the committed one must match the pattern.
    committed = read_security_table(data_dir)
    stable = ("attack", "title", "does", "expected", "outcome", "contained")
    hint = "site/data/security.json is stale: rerun this suite as root with CHEMROBUST_UPDATE_SECURITY=1"
    assert [c["attack"] for c in committed] == [c["attack"] for c in fresh], hint
    for row, published in zip(fresh, committed, strict=True):
        assert {k: published[k] for k in stable} == {k: row[k] for k in stable}, f"{row['attack']}: {hint}"
        assert published["contained"] is True
    by_id = {c.attack: c for c in CASES}
    for published, row in zip(committed, fresh, strict=True):
        case = by_id[published["attack"]]
        assert published["outcome"] == case.status
        assert re.search(case.reason, row["reason"]), f"{case.attack}: public reason {row['reason']!r}"
        assert re.search(case.reason, published["reason"]), (
            f"{case.attack}: committed reason {published['reason']!r} does not match {case.reason!r}; {hint}"
        )

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

import csv
import gzip
import hashlib
import io
import json
import os
import re
import resource
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
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
from tests.execution._adversarial_cases import (
    ADVERSARIAL,
    AFTER,
    CANARIES,
    CASES,
    DATASET,
    HONEST,
    MARKER,
    MIB,
    NAMES,
    NAMES_LIMIT,
    NAMES_LIPINSKI,
    PAIRS,
    PAIRS_LIMIT,
    REFERENCE,
    ROOT,
    ROOT_HOST,
    RUN_CASES,
    SHORT_LIMITS,
    STORED,
    SUITE_LIMITS,
    Case,
)
from tests.execution._state import data_mirror, data_settings, shared_state

pytestmark = [pytest.mark.docker, pytest.mark.slow]


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
    site: Path
    runs: dict[str, object] = field(default_factory=dict)  # latest run per submission (of the case's track)
    by_track: dict[tuple[str, str], object] = field(default_factory=dict)  # latest per (submission, track)


@contextmanager
def slow_server(subs: Path, model_dir: Path) -> Iterator[None]:
    """The loopback fault server, dripping every answer; the endpoint cases' manifests point at it.

    The client's deadlines are tested fault by fault in ``tests/execution/test_endpoint_deadlines.py``;
    here one endpoint submission meets the drip through the whole evaluation.
    """
    from tests.execution._openai_server import OpenAIServer, tiny_model

    with OpenAIServer(tiny_model(model_dir), drip_s=0.5) as server:
        server.fail_next(*["drip_body"] * 1000)
        for case in RUN_CASES:
            if case.endpoint:
                manifest = subs / case.attack / "submission.yaml"
                text = manifest.read_text(encoding="utf-8")
                manifest.write_text(text.replace("http://127.0.0.1:9/v1", server.url), encoding="utf-8")
        yield


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
    for name in (REFERENCE, AFTER, HONEST):
        shutil.copytree(ROOT / "submissions" / name, subs / name)
    for case in RUN_CASES:
        shutil.copytree(ADVERSARIAL / case.attack, subs / case.attack)
    state = shared_state(tmp / "state")
    (state / "jobs").mkdir()
    # Files the host keeps beside (never inside) what it mounts; the host-path attack looks for them.
    for folder in (tmp, state, subs, state / "jobs"):
        (folder / f"{MARKER}-{folder.name}.txt").write_text(f"host-only file in {folder}\n")
    # Built once, before the digest is taken.
    data_dir = prepare_dataset(DATASET, state, mirror=data_mirror()) / DATASET
    data_before = _tree_digest(data_dir)

    mp = pytest.MonkeyPatch()
    for name, value in CANARIES.items():
        mp.setenv(name, value)
    lines: list[str] = []
    seconds: dict[str, float] = {}
    store = ResultStore(f"sqlite:///{tmp}/mlflow.db", artifact_root=tmp / "artifacts")
    base = ensure_base_image(docker_client, DEFAULT_BASE_IMAGE, ROOT, log=lines.append)

    def evaluate(ids: list[str], limits: SandboxLimits, step: str, dataset: str = DATASET, limit: int = 20):
        t0 = time.perf_counter()
        evaluator = Evaluator(
            ROOT, state, store, runner="docker", gpu="off", base_image=base,
            options=TrackOptions(limit=limit), submissions_dir=subs, log=lines.append, limits=limits,
            endpoint_options={"adapter_options": {"backoff_s": 0.01}}, settings=data_settings(state),
        )  # fmt: skip
        summary = evaluator.run(ids, [dataset])
        seconds[step] = round(time.perf_counter() - t0, 1)
        return summary

    try:
        first = evaluate([REFERENCE], SUITE_LIMITS, "reference")
        assert first.computed == 1 and not first.failed, "\n".join(lines[-40:])
        before = _reference_snapshot(store)

        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        evaluate(["attack-flood"], SUITE_LIMITS, "flood")
        flood_growth = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss) / 1024

        ordinary = [c.attack for c in RUN_CASES
                    if c.group == (SUITE_LIMITS, DATASET, 20) and c.attack != "attack-flood"]  # fmt: skip
        evaluate([*ordinary, AFTER], SUITE_LIMITS, "attacks")
        timeout = [c.attack for c in RUN_CASES if c.group == (SHORT_LIMITS, DATASET, 20)]
        evaluate(timeout, SHORT_LIMITS, "timeout")
        # The generative attacks on their own set, then the honest floor: the next job still runs.
        generative = [c.attack for c in RUN_CASES if c.group == (SUITE_LIMITS, NAMES, NAMES_LIMIT)]
        evaluate([*generative, HONEST], SUITE_LIMITS, "generative", NAMES, NAMES_LIMIT)
        # T5 on its own set: what searches the box for answers meets the honest floor there as well.
        searching = [c.attack for c in RUN_CASES if c.no_better_than]
        evaluate([*searching, HONEST], SUITE_LIMITS, "generative T5", PAIRS, PAIRS_LIMIT)
        with slow_server(subs, tmp_path_factory.mktemp("tiny_gpt2")):
            slow = [c.attack for c in RUN_CASES if c.endpoint]
            evaluate(slow, SHORT_LIMITS, "slow endpoint", NAMES, 1)
        rerun = evaluate([REFERENCE], SUITE_LIMITS, "reference again")
    finally:
        mp.undo()

    after = _reference_snapshot(store)
    results, runs = store.export()
    site = tmp / "site"
    listed = [{"id": p.name, "name": p.name} for p in sorted(subs.iterdir()) if p.is_dir()]
    write_exports(results, runs, listed, site, tables=store.export_tables())  # answers.csv.gz too
    generate_pages(site)
    by_track = {(run.data.tags["submission"], run.data.tags["track"]): run for run in store.latest_runs()}
    tracks = {REFERENCE: "amore", AFTER: "amore", HONEST: "consistency"} | {c.attack: c.track for c in CASES}
    latest = {sub: run for (sub, track), run in by_track.items() if tracks.get(sub) == track}
    return Suite(
        tmp=tmp, state=state, store=store, lines=lines, seconds=seconds, reference_before=before,
        reference_after=after, reference_rerun=(rerun.computed, rerun.reused),
        flood_rss_growth_mib=flood_growth, data_before=data_before,
        site_index=(site / "index.md").read_text(encoding="utf-8"), site=site, runs=latest, by_track=by_track,
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
    if run.data.tags["track"] != "amore":
        return run.info.status, scored_note(suite, run)
    names = {a.path for a in suite.store.client.list_artifacts(run.info.run_id)}
    if "log_tail.txt" not in names:
        return run.info.status, ""
    tail = suite.store.client.download_artifacts(run.info.run_id, "log_tail.txt", str(suite.tmp / attack))
    notes = [ln for ln in Path(tail).read_text().splitlines() if ln.startswith("[chemrobust] not stored")]
    return run.info.status, notes[-1] if notes else ""


def answers_of(suite: Suite, run) -> list[dict[str, str]]:
    """The rows of a generative run's stored per-item table (``answers.csv.gz``)."""
    folder = suite.tmp / "answers" / run.info.run_id
    local = suite.store.client.download_artifacts(run.info.run_id, "answers.csv.gz", str(folder))
    return list(csv.DictReader(io.StringIO(gzip.decompress(Path(local).read_bytes()).decode("utf-8"))))


#: What "no better" compares: metric → +1 when higher is better, −1 when lower is (T5's numeric tasks).
COMPARED = {"accuracy": 1, "mae_charged": -1}


def accuracy(suite: Suite, run, metric: str = "accuracy") -> dict[tuple, float]:
    """A run's rows of ``metric`` (default ``accuracy``), by their dimensions."""
    rows = suite.store.result_of(run)["rows"]
    return {tuple(sorted((k, v) for k, v in r.items() if k not in ("metric", "value"))): r["value"]
            for r in rows if r["metric"] == metric}  # fmt: skip


def no_better(suite: Suite, attack: str, than: str) -> list[str]:
    """Where ``attack`` scores better than ``than`` (:data:`COMPARED`, on every track both ran): empty if
    nowhere. An accuracy cell the honest run lacks counts as 0; an error cell it lacks is not compared."""
    better = []
    for (sub, track), run in suite.by_track.items():
        honest = suite.by_track.get((than, track))
        if sub != attack or honest is None or run.info.status != "FINISHED":
            continue
        for metric, sign in COMPARED.items():
            floor = accuracy(suite, honest, metric)
            for k, v in accuracy(suite, run, metric).items():
                if k not in floor and sign < 0:
                    continue  # an error the honest run lacks: nothing to compare with
                worst = floor.get(k, 0.0)
                if sign * (v - worst) > 1e-9:
                    better.append(f"{track} {metric} {dict(k)}: {v:.2f} vs {worst:.2f}")
    return better


RAW = ("\x1b", "\x07", "\u202e")  # what attack-answer-escapes answers with
SHOWN = ("\\x1b[2J", "\\x07", "\\u202eevil")  # the same, as leaderboard.text.visible publishes it


def site_escapes(suite: Suite) -> tuple[list[str], list[str]]:
    """The site's files (gzip ones decompressed) holding a raw control of :data:`RAW`, and those showing
    every one of them as a visible escape (:data:`SHOWN`)."""
    raw, shown = [], []
    for path in sorted(suite.site.rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()
        text = (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8", "replace")
        raw += [path.name] if any(c in text for c in RAW) else []
        shown += [path.name] if all(c in text for c in SHOWN) else []
    return raw, shown


def scored_note(suite: Suite, run) -> str:
    """One line on a FINISHED generative run: answers scored, invalid ones and why, what the case checks."""
    result, rows = suite.store.result_of(run), answers_of(suite, run)
    line = f"scored: {len(rows)} answers, {sum(not r['answer'] for r in rows)} invalid"
    refused = result["counts"].get("answers_refused", {})
    if refused:
        line += " (refused: " + "; ".join(f"{why} × {n}" for why, n in sorted(refused.items())) + ")"
    attack = run.data.tags["submission"]
    if attack == "attack-answer-escapes":
        raw, shown = site_escapes(suite)
        line += ", completions shown with visible escapes" if shown and not raw else f", shown raw in {raw}"
    if attack == "attack-invalid-utf8":
        yes = [r for r in rows if r["task"] == "lipinski"]
        line += f", lipinski: {sum(bool(r['answer']) for r in yes)} of {len(yes)} answered"
    if attack == "attack-answer-search":
        values = list(accuracy(suite, run).values())
        line += f", mean accuracy {sum(values) / max(len(values), 1):.2f}"
    return line


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
    assert (tags["track"], tags["dataset"]) == (case.track, case.dataset)
    job = f"] {case.attack} × {case.track} × {case.dataset}: "
    if case.status == "FINISHED":
        # Stored: result.json, the declared artifacts and the log's note; nothing else the run wrote.
        artifacts = suite.store.client.list_artifacts(run.info.run_id)
        assert {a.path for a in artifacts} <= STORED, f"{case.attack}: stored {[a.path for a in artifacts]}"
        assert sum(a.file_size or 0 for a in artifacts) < 4 * MIB
        if case.track == "amore":  # the note on junk; a generative run's note is the suite's (scored_note)
            said = [line for line in suite.lines if f"{job}[chemrobust]" in line]
            assert said and reason in said[-1], f"{case.attack}: terminal said {said}"
        # Bounded: host scoring of every hostile answer took seconds, not minutes.
        assert float(tags["wall_s"]) < 120, f"{case.attack} took {tags['wall_s']} s"
    else:
        # In the terminal: the run's line names the attack and the same reason.
        said = [line for line in suite.lines if f"{job}FAILED" in line]
        assert said and reason in said[-1], f"{case.attack}: terminal said {said}"
        # On the site: the failed-runs table of the index lists it with its reason, escaped.
        row = site_row(suite, case.attack)
        words = re.findall(r"[A-Za-z]{5,}", reason)[:4]
        assert row and all(w in row for w in words), f"{case.attack}: site row {row!r} lacks {words}"
    if case.endpoint:  # no container: the run's own wall clock held it (it once hung 600 s)
        assert tags["runner"] == "endpoint" and float(tags["wall_s"]) < case.limits.timeout_s + 15
        return
    # Provenance recorded with the outcome, too; /out had a filesystem of its own.
    assert tags["gpu"] == "False" and tags["runner"] == "docker"
    assert json.loads(tags["sandbox"]) == json.loads(case.limits.model_dump_json())
    assert json.loads(tags["hardware"])["cpu_model"]
    if ROOT_HOST:
        assert tags["out_limit"].startswith("kernel: /out is an ext4 filesystem of"), tags["out_limit"]
    else:
        assert tags["out_limit"].startswith("POLLING ONLY:"), tags["out_limit"]


def test_answer_searching_scores_no_better_than_the_constant_answerer(suite):
    """The answers are not in the box: reading every file under /data must not beat answering blindly."""
    run = suite.runs["attack-answer-search"]
    tracks = sorted(t for (sub, t) in suite.by_track if sub == "attack-answer-search")
    assert tracks == ["consistency", "identity_blinded", "prompt_robustness"]
    statuses = {(sub, t): suite.by_track[(sub, t)].info.status
                for sub in ("attack-answer-search", HONEST) for t in tracks}  # fmt: skip
    assert set(statuses.values()) == {"FINISHED"}, f"every run must be scored: {statuses}"
    assert run.info.status == "FINISHED"
    assert no_better(suite, "attack-answer-search", HONEST) == [], f"it found answers: {loot(suite, run)}"


def test_generative_attacks_stay_scored_and_the_next_job_runs(suite):
    """Each hostile answer is one invalid answer: OPSIN's caps name the bomb, one bad line spoils itself."""
    bombs = answers_of(suite, suite.runs["attack-opsin-bomb"])
    assert all(not r["answer"] for r in bombs)
    utf8 = [r for r in answers_of(suite, suite.runs["attack-invalid-utf8"]) if r["task"] == "lipinski"]
    assert sorted(r["answer"] for r in utf8) == [""] + ["yes"] * (NAMES_LIPINSKI - 1)
    assert [r["completion"] for r in utf8 if not r["answer"]] == ["\ufffd" * 3]
    for track in ("consistency", "prompt_robustness"):
        assert suite.by_track[(HONEST, track)].info.status == "FINISHED"


def test_answers_with_escapes_are_published_as_visible_escapes(suite):
    raw, shown = site_escapes(suite)
    assert raw == [], f"raw control characters published in {raw}"
    assert "answers.csv.gz" in shown, shown
    for text in suite.lines:
        assert not any(c in text for c in RAW)


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
    # Exactly one FINISHED run per well-behaved submission (and attack meant to finish) and track.
    finished = suite.store.client.search_runs([suite.store.experiment_id], "attributes.status = 'FINISHED'")
    keys = [(r.data.tags["submission"], r.data.tags["track"]) for r in finished]
    meant = {c.attack for c in RUN_CASES if c.status == "FINISHED"}
    assert len(keys) == len(set(keys)) and {sub for sub, _ in keys} == {REFERENCE, AFTER, HONEST, *meant}


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
    data_dir = prepare_dataset(DATASET, suite.state, mirror=data_mirror()) / DATASET
    assert _tree_digest(data_dir) == suite.data_before


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
        if case.no_better_than:
            contained = contained and not no_better(suite, case.attack, case.no_better_than)
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
    known = {c.attack: c.open_issue for c in CASES}
    assert all(c["contained"] or known[c["attack"]] for c in cases), "not every attack was contained"

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
        assert published["contained"] or known[published["attack"]], published["attack"]
    by_id = {c.attack: c for c in CASES}
    for published, row in zip(committed, fresh, strict=True):
        case = by_id[published["attack"]]
        assert published["outcome"] == case.status
        assert re.search(case.reason, row["reason"]), f"{case.attack}: public reason {row['reason']!r}"
        assert re.search(case.reason, published["reason"]), (
            f"{case.attack}: committed reason {published['reason']!r} does not match {case.reason!r}; {hint}"
        )

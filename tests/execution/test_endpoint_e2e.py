"""API-endpoint submissions through the whole evaluation: no image, the key kept secret, cache and budget.

A local OpenAI-compatible server (``tests/execution/_openai_server.py``, loopback only, a real tiny GPT-2)
plays the API. Two endpoint submissions are evaluated on ``pubchem-names`` (3 molecules) by the
:class:`~leaderboard.execution.evaluate.Evaluator` into a temporary state folder and sqlite MLflow store: one
whose key is a canary in the maintainer's environment, one whose request budget is too small. Afterwards
no file under the temporary folder — MLflow's database, artifacts (gzip ones read decompressed), the
response cache, logs — holds the canary, while the server saw it in every ``Authorization`` header.
Building ``pubchem-names`` runs OPSIN (Java): without Java these tests skip, except in CI.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import warnings
from pathlib import Path

import pytest
import yaml

from evaluators.schema import TrackOptions
from leaderboard.execution.endpoint_runner import dry_run
from leaderboard.execution.evaluate import Evaluator
from leaderboard.execution.sandbox import NoSandboxWarning
from leaderboard.store import KEY_TAG, REASON_TAG, ResultStore
from tests.execution._openai_server import SERVED_MODEL, OpenAIServer, tiny_model
from tests.execution._state import REPO_ROOT, shared_data

CANARY = "sk-CANARY-e2e-7d41b0c9f3a2"
VAR = "CHEMROBUST_KEY_CANARY_API"
DATASET = "pubchem-names"
LIMIT = 3
#: Questions per molecule pubchem-names serves: translation in 3 representations, formula and Lipinski in 5
#: (SMILES, IUPAC, randomized, SELFIES, InChI: every molecule of the first four writes both and reads back).
PER_MOLECULE = 3 + 5 + 5
ASKED = PER_MOLECULE * LIMIT


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if shutil.which("java") is None:
        message = "no `java` on PATH: building pubchem-names needs OPSIN (Debian: openjdk-17-jre-headless)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    with OpenAIServer(tiny_model(tmp_path_factory.mktemp("tiny_gpt2"))) as srv:
        yield srv


def _submission(root: Path, sub_id: str, url: str, **model) -> Path:
    folder = root / "submissions" / sub_id
    folder.mkdir(parents=True)
    manifest = {
        "id": sub_id, "name": sub_id, "authors": ["Test"], "contact": "test@example.org", "license": "mit",
        "model": {"source": "endpoint", "url": url, "model": SERVED_MODEL, "architecture": "decoder",
                  "capabilities": ["generate"], "timeout_s": 10, **model},
        # One track keeps the request counts these tests assert exact (T4 asks six times as much).
        "tracks": ["consistency"],
    }  # fmt: skip
    (folder / "submission.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return folder


def _evaluator(root: Path, lines: list[str], db: str = "mlflow.db") -> Evaluator:
    state = root / "state"
    store = ResultStore(f"sqlite:///{state}/{db}", artifact_root=state / "artifacts")
    return Evaluator(
        REPO_ROOT, state, store, runner="in-process", options=TrackOptions(limit=LIMIT),
        submissions_dir=root / "submissions", log=lines.append,
        endpoint_options={"adapter_options": {"backoff_s": 0.01}},
    )  # fmt: skip


def _runs(evaluator: Evaluator, sub_id: str) -> list:
    store = evaluator.store
    return [
        r for r in store.client.search_runs([store.experiment_id]) if r.data.tags.get("submission") == sub_id
    ]


def _distinct(root: Path, limit: int) -> dict[tuple[str, int], int]:
    """The distinct (prompt, max_new_tokens) the track asks on the first ``limit`` molecules."""
    from evaluators.datasets import load_dataset
    from evaluators.tracks.consistency import ConsistencyTrack
    from leaderboard.data.prepare import prepare_dataset

    data = prepare_dataset(DATASET, root / "state", log=lambda _line: None)
    # An API is asked as a chat model (the answer protocol's budget, no stop string).
    questions = ConsistencyTrack.for_model(TrackOptions(limit=limit), chat=True).questions(
        load_dataset(DATASET, data, limit=limit).records
    )
    assert len(questions) == PER_MOLECULE * limit  # questions per molecule pubchem-names serves × molecules
    return {(q.request.prompt, q.request.max_new_tokens): q.request.max_new_tokens for q in questions}


def _cached(root: Path, api: str) -> list[dict]:
    """The response cache's entries for ``api``."""
    entries = [json.loads(p.read_text()) for p in (root / "state" / "endpoint-cache").rglob("*.json")]
    return [e for e in entries if e["request"]["api"] == api]


def _holding(root: Path, needle: bytes) -> list[str]:
    """Every file under ``root`` whose bytes (decompressed, for gzip) contain ``needle``."""
    found = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or "data" in path.relative_to(root).parts[:2]:  # the shared data cache
            continue
        raw = path.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw += gzip.decompress(raw)
        if needle in raw:
            found.append(str(path))
    return found


@pytest.fixture(scope="module")
def evaluated(server, tmp_path_factory):
    """Evaluate both submissions once; return what the tests look at."""
    root = tmp_path_factory.mktemp("endpoint_e2e")
    shared_data(root / "state")
    _submission(root, "canary-api", server.url, api_key_env=VAR, max_requests=1000)
    _submission(root, "budget-api", server.url, api="completions", max_requests=5, max_concurrency=1)
    lines: list[str] = []
    os.environ[VAR] = CANARY  # the maintainer's environment: the only place the key is
    try:
        server.fail_next("echo_auth")  # a hostile API answers with the Authorization header
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            evaluator = _evaluator(root, lines)
            first = evaluator.run(["canary-api"], [DATASET])
            sent = len(server.requests)
            budget = evaluator.run(["budget-api"], [DATASET])
    finally:
        del os.environ[VAR]
    return {"root": root, "lines": lines, "first": first, "budget": budget, "sent": sent,
            "evaluator": evaluator, "warnings": caught}  # fmt: skip


def test_the_endpoint_run_is_stored_like_any_other_with_runner_endpoint(evaluated, server) -> None:
    first, evaluator = evaluated["first"], evaluated["evaluator"]
    assert (first.computed, first.failed) == (1, []), evaluated["lines"]
    (run,) = _runs(evaluator, "canary-api")
    tags = run.data.tags
    assert run.info.status == "FINISHED"
    assert tags["runner"] == "endpoint" and tags["gpu"] == "False" and tags["image_id"] == ""
    assert tags["image_tag"].startswith("endpoint/canary-api:") and tags["model_revision"] == "endpoint"
    assert run.data.params["endpoint.url"] == server.url and run.data.params["endpoint.api_key_env"] == VAR
    result = evaluator.store.result_of(run)
    assert result["counts"]["n_requests"] == ASKED and result["model"]["endpoint"] == server.url
    assert any("adjusted_consistency" in k for k in run.data.metrics), sorted(run.data.metrics)[:5]
    artifacts = {a.path for a in evaluator.store.client.list_artifacts(run.info.run_id)}
    assert {"result.json", "completions.jsonl", "answers.csv.gz"} <= artifacts
    # No image, no sandboxed or in-process submission code: the host ran the track itself.
    assert not [w for w in evaluated["warnings"] if issubclass(w.category, NoSandboxWarning)]
    # Each distinct request once (a randomized SMILES can come out canonical: the same prompt).
    distinct = _distinct(evaluated["root"], LIMIT)
    assert evaluated["sent"] == len(distinct) == len(_cached(evaluated["root"], "chat")) <= ASKED
    assert not list((evaluated["root"] / "state" / "jobs").iterdir())  # the job folder went


def test_the_canary_key_reached_the_server_and_nothing_else(evaluated, server) -> None:
    canary_requests = server.requests[: evaluated["sent"]]
    assert {r["headers"].get("Authorization") for r in canary_requests} == {f"Bearer {CANARY}"}
    assert all("Authorization" not in r["headers"] for r in server.requests[evaluated["sent"] :])
    assert not _holding(evaluated["root"], CANARY.encode())
    assert _holding(evaluated["root"], b"I saw Bearer [redacted]")  # the echo was stored, scrubbed
    assert not any(CANARY in line for line in evaluated["lines"])
    assert CANARY not in str(evaluated["first"]) + str(evaluated["budget"])


def test_the_budget_stop_fails_the_run_with_its_reason_and_keeps_the_answers(evaluated) -> None:
    budget, evaluator = evaluated["budget"], evaluated["evaluator"]
    assert budget.computed == 0 and len(budget.failed) == 1
    assert "endpoint: budget exhausted after 5 requests (model.max_requests 5)" in budget.failed[0]
    (run,) = _runs(evaluator, "budget-api")
    assert run.info.status == "FAILED"
    assert run.data.tags[REASON_TAG].startswith("endpoint: budget exhausted after 5 requests")
    assert len(_cached(evaluated["root"], "completions")) == 5


def test_a_rerun_sends_nothing_whether_mlflow_or_the_cache_answers(evaluated, server) -> None:
    root, before = evaluated["root"], len(server.requests)
    lines: list[str] = []
    os.environ[VAR] = CANARY
    try:
        again = _evaluator(root, lines).run(["canary-api"], [DATASET])  # the FINISHED run is reused
        assert (again.reused, again.computed) == (1, 0)
        fresh = _evaluator(root, lines, db="fresh.db").run(["canary-api"], [DATASET])  # only the cache
    finally:
        del os.environ[VAR]
    assert (fresh.computed, fresh.failed) == (1, []), lines
    assert len(server.requests) == before
    old = _runs(evaluated["evaluator"], "canary-api")[0]
    store = ResultStore(f"sqlite:///{root}/state/fresh.db", artifact_root=root / "state" / "artifacts")
    new = store.client.search_runs([store.experiment_id])[0]
    assert new.data.tags[KEY_TAG] == old.data.tags[KEY_TAG]  # the same result key
    assert store.result_of(new)["rows"] == evaluated["evaluator"].store.result_of(old)["rows"]


def test_a_missing_key_fails_the_run_before_anything_is_sent(evaluated, server, tmp_path) -> None:
    shared_data(tmp_path / "state")
    _submission(tmp_path, "canary-api", server.url, api_key_env=VAR, max_requests=10)
    before, lines = len(server.requests), []
    summary = _evaluator(tmp_path, lines).run(["canary-api"], [DATASET])
    assert len(summary.failed) == 1 and len(server.requests) == before
    assert f"the environment variable {VAR} is not set" in summary.failed[0]


def test_a_dry_run_counts_and_shows_without_sending_or_reading_the_key(evaluated, server) -> None:
    root, before, shown = evaluated["root"], len(server.requests), []
    os.environ[VAR] = CANARY
    try:
        (plan,) = dry_run(root / "submissions" / "canary-api", [DATASET], state_dir=root / "state",
                          options=TrackOptions(limit=LIMIT + 1), log=shown.append)  # fmt: skip
    finally:
        del os.environ[VAR]
    assert len(server.requests) == before
    new = {k: v for k, v in _distinct(root, LIMIT + 1).items() if k not in _distinct(root, LIMIT)}
    assert (plan.requests, plan.cached, plan.to_send) == (ASKED + PER_MOLECULE, ASKED, len(new))
    assert plan.examples and plan.examples[0]["headers"]["Authorization"] == f"Bearer ${VAR}"
    assert plan.completion_tokens == sum(new.values()) and plan.fits()
    assert f"{len(new)} to send" in shown[0] and CANARY not in shown[0]


def test_too_many_failed_requests_fail_the_run_and_a_rerun_asks_only_those_again(evaluated, server) -> None:
    root = evaluated["root"]
    # Another spelling of the server's address is another cache: every request is new.
    url = server.url.replace("127.0.0.1", "localhost")
    _submission(root, "flaky-api", url, max_requests=1000, max_concurrency=1)
    server.fail_next(*["malformed"] * 4)  # the first two requests break twice each: recorded as failed
    before, lines = len(server.requests), []
    summary = _evaluator(root, lines).run(["flaky-api"], [DATASET])
    assert (
        len(summary.failed) == 1
        and f"2 of {ASKED} requests failed after retries (more than 5%)" in summary.failed[0]
    )
    first = len(server.requests) - before
    again = _evaluator(root, lines).run(["flaky-api"], [DATASET])
    assert (again.computed, again.failed) == (1, []), lines
    assert len(server.requests) - before - first == 2  # only the two that failed

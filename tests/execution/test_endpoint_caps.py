"""``evaluate --max-requests / --max-tokens``: one cap across every endpoint job, enforced where requests go.

Two endpoint submissions that ask the same questions of the local OpenAI-compatible server
(``tests/execution/_openai_server.py``, loopback only; the second spells the address ``localhost``, so its
answers are cached apart) are evaluated on ``pubchem-names`` (3 molecules, track ``consistency``) through
the command line, ``python -m leaderboard evaluate``, in a repository made of this checkout's
``evaluators/`` and the two submissions. The cap stops the second job after exactly the requests left of
it; the job fails with a reason that names the option and how to resume; each endpoint job prints its
usage and the evaluation its totals (also recorded in MLflow); a rerun serves what was received from the
cache and sends only the rest. Building ``pubchem-names`` runs OPSIN (Java): without Java the tests that
evaluate skip, except in CI.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import shutil
from pathlib import Path

import pytest
import yaml

from evaluators.schema import TrackOptions
from leaderboard.execution.endpoint_spend import cost_of, dollars
from leaderboard.intake.endpoints import TokenPrice
from leaderboard.intake.manifest import ManifestError, load_submission
from leaderboard.store import REASON_TAG, ResultStore
from tests.execution._openai_server import SERVED_MODEL, OpenAIServer, tiny_model
from tests.execution._state import REPO_ROOT, shared_data

DATASET = "pubchem-names"
LIMIT = 3
PRICE = {"input": 2.0, "output": 10.0}
EXTRA = 5  # requests the cap leaves for the second job


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if shutil.which("java") is None:
        message = "no `java` on PATH: building pubchem-names needs OPSIN (Debian: openjdk-17-jre-headless)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    with OpenAIServer(tiny_model(tmp_path_factory.mktemp("tiny_gpt2"))) as srv:
        yield srv


def _repo(root: Path, url: str, **model) -> Path:
    """A repository with this checkout's evaluators and two endpoint submissions, ``first`` and ``second``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "evaluators").symlink_to(REPO_ROOT / "evaluators", target_is_directory=True)
    shared_data(root / "state")
    for sub_id, address in (("first", url), ("second", url.replace("127.0.0.1", "localhost"))):
        folder = root / "submissions" / sub_id
        folder.mkdir(parents=True)
        manifest = {
            "id": sub_id, "name": sub_id, "authors": ["Test"], "contact": "t@example.org", "license": "mit",
            "model": {"source": "endpoint", "url": address, "model": SERVED_MODEL, "architecture": "decoder",
                      "capabilities": ["generate"], "timeout_s": 10, "max_requests": 1000, **model},
            "tracks": ["consistency"],
        }  # fmt: skip
        (folder / "submission.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return root


def _evaluate(root: Path, *options: str) -> tuple[int, str]:
    """Run ``python -m leaderboard evaluate`` on both submissions in ``root``; return status and output."""
    import leaderboard.__main__ as cli

    argv = ["--state-dir", str(root / "state"), "evaluate", "--submission", "first", "--submission",
            "second", "--dataset", DATASET, "--limit", str(LIMIT), "--runner", "in-process", "--no-site",
            *options]  # fmt: skip
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        mp.setattr(cli, "REPO_ROOT", root)
        for variable in ("MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_NAME"):
            mp.delenv(variable, raising=False)
        status = cli.main(argv)
    return status, out.getvalue()


def _questions(root: Path) -> list[tuple[str, int]]:
    """The (prompt, max_new_tokens) of every question the track asks, in order (as an API is asked)."""
    from evaluators.datasets import load_dataset
    from evaluators.tracks.consistency import ConsistencyTrack
    from leaderboard.data.prepare import prepare_dataset

    data = prepare_dataset(DATASET, root / "state", log=lambda _line: None)
    questions = ConsistencyTrack.for_model(TrackOptions(limit=LIMIT), chat=True).questions(
        load_dataset(DATASET, data, limit=LIMIT).records
    )
    return [(q.request.prompt, q.request.max_new_tokens) for q in questions]


def _cache(root: Path, host: str) -> list[dict]:
    """The response cache's entries of the submission whose URL names ``host``."""
    entries = [json.loads(p.read_text()) for p in (root / "state" / "endpoint-cache").rglob("*.json")]
    return [e for e in entries if f"//{host}:" in e["request"]["url"]]


def _tokens(entries: list[dict]) -> tuple[int, int]:
    """Prompt and completion tokens of cached answers, as the server's ``usage`` reported them."""
    return (sum(e["completion"]["prompt_tokens"] for e in entries),
            sum(e["completion"]["completion_tokens"] for e in entries))  # fmt: skip


def _from(server: OpenAIServer, host: str, start: int, end: int | None = None) -> list[dict]:
    """The requests the server received from ``start`` to ``end`` whose ``Host`` names ``host``."""
    return [r for r in server.requests[start:end] if r["headers"].get("Host", "").startswith(f"{host}:")]


def _runs(root: Path, sub_id: str) -> list:
    """The MLflow runs of ``sub_id`` in ``root``'s state, oldest first."""
    store = ResultStore(f"sqlite:///{root}/state/mlflow.db", artifact_root=root / "state" / "mlruns")
    runs = store.client.search_runs([store.experiment_id])
    mine = [r for r in runs if r.data.tags.get("submission") == sub_id]
    return sorted(mine, key=lambda r: r.info.start_time)


@pytest.fixture(scope="module")
def capped(server, tmp_path_factory):
    """Evaluate both under ``--max-requests`` (one job's distinct questions + EXTRA), then again without."""
    root = _repo(tmp_path_factory.mktemp("caps"), server.url, price_per_million_tokens=PRICE)
    distinct = len(set(_questions(root)))
    cap = distinct + EXTRA
    start = len(server.requests)
    status, out = _evaluate(root, "--max-requests", str(cap))
    middle = len(server.requests)
    second = _cache(root, "localhost")  # what the capped job received, before the rerun adds the rest
    cached_second = {(e["request"]["prompt"], e["request"]["max_tokens"]) for e in second}
    again_status, again = _evaluate(root)
    end = len(server.requests)
    return {"root": root, "distinct": distinct, "cap": cap, "start": start, "middle": middle, "end": end,
            "status": status, "out": out, "second": second, "cached_second": cached_second,
            "again_status": again_status, "again": again}  # fmt: skip


def test_the_request_cap_stops_at_exactly_n_requests_across_two_jobs(capped, server) -> None:
    out, cap, distinct = capped["out"], capped["cap"], capped["distinct"]
    assert capped["middle"] - capped["start"] == cap, out  # not one more, though 4 requests fly at once
    start, middle = capped["start"], capped["middle"]
    assert len(_from(server, "127.0.0.1", start, middle)) == distinct  # the first job: all it asks
    assert len(_from(server, "localhost", start, middle)) == EXTRA  # the second: what the cap left
    assert capped["status"] == 1
    assert "first × consistency × pubchem-names: done" in out, out
    failed = re.search(r"second × consistency × pubchem-names: FAILED \(failed\) — (.*)", out)
    assert failed, out
    reason = failed.group(1)
    assert reason.startswith(f"endpoint: --max-requests {cap} reached: this evaluation's endpoint jobs sent "
                             f"{cap} request(s) together")  # fmt: skip
    assert "run the same command again with a larger --max-requests (or without it)" in reason
    run = _runs(capped["root"], "second")[0]  # the capped evaluation's (the rerun's comes after it)
    assert run.info.status == "FAILED" and "--max-requests" in run.data.tags[REASON_TAG]
    assert len(capped["second"]) == EXTRA  # every answer received is kept


def test_each_endpoint_job_prints_its_usage_and_the_evaluation_its_totals(capped) -> None:
    out, root, cap, distinct = capped["out"], capped["root"], capped["cap"], capped["distinct"]
    price = TokenPrice(**PRICE)
    first_prompt, first_completion = _tokens(_cache(root, "127.0.0.1"))
    second_prompt, second_completion = _tokens(capped["second"])
    first_cost = cost_of(price, first_prompt, first_completion)
    assert (
        f"first × consistency × pubchem-names: endpoint usage: {distinct} request(s) sent, 0 answered from "
        f"the cache, {first_prompt} prompt + {first_completion} completion tokens, estimated cost "
        f"{dollars(first_cost)} (at $2.00 / $10.00 per million input / output tokens)"
    ) in out, out
    assert (
        f"second × consistency × pubchem-names: endpoint usage: {EXTRA} request(s) sent, 0 answered from "
        f"the cache, {second_prompt} prompt + {second_completion} completion tokens"
    ) in out, out
    total_cost = first_cost + cost_of(price, second_prompt, second_completion)
    assert (
        f"endpoint totals: 2 job(s), {cap} request(s) sent, 0 answered from the cache, "
        f"{first_prompt + second_prompt} prompt + {first_completion + second_completion} completion tokens, "
        f"estimated cost {dollars(total_cost)}; --max-requests {cap}: {cap} used — --max-requests reached; "
        "every answer received is cached"
    ) in out, out
    # The same figures in each MLflow run, for the model page.
    (first,) = _runs(root, "first")  # the rerun reused it
    tags = first.data.tags
    assert (tags["endpoint.requests_sent"], tags["endpoint.requests_cached"]) == (str(distinct), "0")
    assert (tags["endpoint.prompt_tokens"], tags["endpoint.completion_tokens"]) == (
        str(first_prompt), str(first_completion),
    )  # fmt: skip
    assert math.isclose(float(tags["endpoint.cost_usd"]), first_cost, rel_tol=1e-5)
    assert _runs(root, "second")[0].data.tags["endpoint.requests_sent"] == str(EXTRA)


def test_a_rerun_after_the_cap_serves_what_was_received_from_the_cache_and_sends_only_the_rest(
    capped, server
) -> None:
    again, distinct, root = capped["again"], capped["distinct"], capped["root"]
    assert capped["again_status"] == 0, again
    assert "first × consistency × pubchem-names: up to date (MLflow run reused, no model work)" in again
    assert not _from(server, "127.0.0.1", capped["middle"], capped["end"])
    assert len(_from(server, "localhost", capped["middle"], capped["end"])) == distinct - EXTRA  # the rest
    assert len(capped["cached_second"]) == EXTRA and capped["cached_second"] <= set(_questions(root))
    # The track asks each distinct question once: the EXTRA received before are the ones from the cache.
    assert (
        f"second × consistency × pubchem-names: endpoint usage: {distinct - EXTRA} request(s) sent, {EXTRA} "
        "answered from the cache"
    ) in again, again
    assert f"endpoint totals: 1 job(s), {distinct - EXTRA} request(s) sent, {EXTRA} answered" in again
    runs = _runs(root, "second")
    assert [r.info.status for r in runs] == ["FAILED", "FINISHED"]
    assert runs[1].data.tags["endpoint.requests_cached"] == str(EXTRA)


def test_the_token_cap_stops_before_the_request_that_could_pass_it(capped, server, tmp_path) -> None:
    # One request at a time: the cap is checked against what was spent, nothing is in flight.
    root = _repo(tmp_path, server.url, max_concurrency=1)
    # The first job's exact spend, as in the other evaluation (the model answers deterministically).
    first_tokens = sum(_tokens(_cache(capped["root"], "127.0.0.1")))
    cap = first_tokens + 2000  # the first job fits (each request reserves its worst case, about 600 tokens)
    start = len(server.requests)
    status, out = _evaluate(root, "--max-tokens", str(cap))
    assert status == 1
    assert "first × consistency × pubchem-names: done" in out, out
    failed = re.search(
        r"second × consistency × pubchem-names: FAILED \(failed\) — endpoint: --max-tokens (\d+) reached: "
        r"this evaluation's endpoint jobs spent (\d+) token\(s\) together, 0 reserved in flight, and the "
        r"next request needs up to (\d+); every answer received is cached: run the same command again with "
        r"a larger --max-tokens",
        out,
    )
    assert failed, out
    named, spent, next_worst = map(int, failed.groups())
    entries = _cache(root, "127.0.0.1") + _cache(root, "localhost")
    assert named == cap and spent == sum(_tokens(entries))  # the server's usage, every answer received
    assert spent <= cap < spent + next_worst  # stopped exactly where the next request could pass it
    assert len(server.requests) - start == len(entries)  # every request sent was answered and cached
    assert 0 < len(_cache(root, "localhost")) < len(set(_questions(root)))
    assert f"--max-tokens {cap}: {spent} used — --max-tokens reached" in out


def test_evaluate_dry_run_counts_against_the_caps_and_sends_nothing(server, tmp_path) -> None:
    root = _repo(tmp_path, server.url, price_per_million_tokens=PRICE)
    distinct, before = len(set(_questions(root))), len(server.requests)
    status, out = _evaluate(root, "--dry-run", "--max-requests", str(distinct))
    assert len(server.requests) == before and not (root / "state" / "mlflow.db").exists()
    assert status == 1, out  # two jobs' requests do not fit one job's worth
    assert out.count("dry run — nothing sent.") == 2 and "estimated cost at most $" in out
    totals = f"dry run totals: 2 job(s), {2 * distinct} request(s) to send, 0 answered from the cache"
    assert totals in out, out
    assert f"--max-requests {distinct}: DOES NOT FIT" in out and ", cost at most $" in out
    status, out = _evaluate(root, "--dry-run", "--max-requests", str(2 * distinct))
    assert status == 0 and f"--max-requests {2 * distinct}: fits" in out, out


def test_the_caps_refuse_the_slurm_executor_and_bad_counts(tmp_path) -> None:
    import leaderboard.__main__ as cli

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = cli.main(["--state-dir", str(tmp_path), "evaluate", "--executor", "slurm", "--max-requests",
                           "5", "--no-site"])  # fmt: skip
    assert status == 2
    assert "--max-requests 5 caps the endpoint jobs of an evaluation run here" in err.getvalue()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit):
        cli.main(["evaluate", "--max-tokens", "0"])
    assert "--max-tokens: must be at least 1, got 0" in err.getvalue()


def _manifest(price: object) -> dict:
    return {
        "id": "acme-api", "name": "ACME", "authors": ["Ada"], "contact": "ada@example.org", "license": "mit",
        "model": {"source": "endpoint", "url": "https://api.example.org/v1", "model": "acme-chem-7b",
                  "architecture": "decoder", "capabilities": ["generate"], "max_requests": 100,
                  "price_per_million_tokens": price},
    }  # fmt: skip


@pytest.mark.parametrize(
    ("price", "field", "message"),
    [
        ({"input": -1.0, "output": 15.0}, "model.price_per_million_tokens.input", "greater than or equal"),
        ({"input": 3.0, "output": float("nan")}, "model.price_per_million_tokens.output", "finite number"),
        ({"input": float("inf"), "output": 1.0}, "model.price_per_million_tokens.input", "finite number"),
        ({"input": 3.0}, "model.price_per_million_tokens.output", "required but missing"),
    ],
)
def test_a_price_that_is_negative_or_not_finite_is_refused_naming_the_field(
    tmp_path, price, field, message
) -> None:
    folder = tmp_path / "acme-api"
    folder.mkdir()
    (folder / "submission.yaml").write_text(yaml.safe_dump(_manifest(price)))
    with pytest.raises(ManifestError) as info:
        load_submission(folder)
    (problem,) = info.value.problems
    assert problem.field == field and message in problem.message, str(problem)
    assert f"'{field}'" in str(problem) and "US dollars per million" in problem.fix


def test_a_valid_price_loads_and_prices_the_usage(tmp_path) -> None:
    folder = tmp_path / "acme-api"
    folder.mkdir()
    (folder / "submission.yaml").write_text(yaml.safe_dump(_manifest({"input": 3, "output": 0})))
    price = load_submission(folder).model.price_per_million_tokens
    assert price == TokenPrice(input=3.0, output=0.0)
    assert cost_of(price, 2_000_000, 999) == 6.0 and dollars(6.0) == "$6.00"


def test_a_request_counts_against_its_run_and_the_cap_or_against_neither() -> None:
    from concurrent.futures import ThreadPoolExecutor

    from leaderboard.execution.endpoint_cache import Budget, BudgetExhausted
    from leaderboard.execution.endpoint_spend import CapReached, SpendCap

    cap = SpendCap(max_requests=2, max_tokens=100)
    run_a, run_b = Budget(1, shared=cap), Budget(5, shared=cap)
    run_a.acquire(10)
    with pytest.raises(BudgetExhausted, match=r"model.max_requests 1\)"):
        run_a.acquire(10)  # the run's own budget refuses: the cap is not charged
    assert cap.sent == 1
    with pytest.raises(CapReached, match="--max-tokens 100 reached"):
        run_b.acquire(95)  # 10 reserved + 95 > 100: the cap refuses, the run is not charged
    assert (run_b.sent, run_b.reserved, cap.sent) == (0, 0, 1)
    run_b.acquire(10)
    with pytest.raises(CapReached, match="--max-requests 2 reached"):
        run_b.acquire(1)
    run_a.settle(10, 7)
    run_b.settle(10, 3)
    assert (cap.sent, cap.tokens, cap.reserved, cap.reached) == (2, 10, 0, "--max-requests")
    # Many threads at once: exactly the cap's requests get through.
    many = SpendCap(max_requests=100)

    def take(_: int) -> int:
        budget, taken = Budget(1000, shared=many), 0
        for _ in range(50):
            try:
                budget.acquire(1)
            except CapReached:
                break
            taken += 1
        return taken

    with ThreadPoolExecutor(8) as pool:
        assert sum(pool.map(take, range(8))) == 100 == many.sent

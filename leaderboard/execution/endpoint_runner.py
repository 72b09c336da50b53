"""Running an API-endpoint submission: the track on the host, the model behind an OpenAI-compatible API.

An endpoint submission (``model.source: endpoint``) has no code, weights or image. :class:`EndpointRunner`
is the :class:`~leaderboard.execution.sandbox.Runner` the orchestrator uses for it (``runner="endpoint"``
in the result key and the tags): it reads the same ``job.json`` as the sandbox would, runs the track's
asking half in this process with an :class:`~leaderboard.execution.endpoint.EndpointAdapter` writing into the
job's ``out`` folder, and writes ``result.json`` like :func:`evaluators.job.run_job`. The orchestrator then
checks, scores and stores it exactly as for any other run.

:func:`dry_run` (also ``python -m leaderboard.execution.endpoint_runner SUBMISSION``) says what an evaluation
would send without sending anything or reading the key; :func:`dry_run_evaluation` does so for every
endpoint submission an evaluation would run, against its cap (``python -m leaderboard evaluate --dry-run``,
``nox -s evaluate -- --dry-run``: the evaluation's own environment).

What a run spent is kept as :attr:`EndpointRunner.usage` (:class:`~.endpoint_spend.JobUsage`: requests sent
and answered from the cache, tokens, estimated cost), which the orchestrator prints and records, and added
to the evaluation's :class:`~.endpoint_spend.Spend` when one is given; its cap
(``evaluate --max-requests/--max-tokens``) is asked before every request.

Invariants
----------
- The key is read from the environment when a run starts, handed to the adapter only, and scrubbed from
  every text the run returns (reason, log tail): it never reaches MLflow, the cache or the site.
- A run never raises: every failure is a :class:`~leaderboard.execution.sandbox.RunOutcome` with a reason.

Side effects: network requests to the submission's URL; ``result.json`` and the track's files in the out
folder; the response cache (``<state>/endpoint-cache``).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from evaluators.datasets import DATASETS, load_dataset
from evaluators.job import run_job
from evaluators.progress import Progress
from evaluators.schema import TrackOptions, TrackResult
from evaluators.tracks import TRACKS
from leaderboard.execution.endpoint import (
    MAX_FAILED_SHARE,
    DryRun,
    EndpointAdapter,
    EndpointError,
    EndpointTimeout,
    ResponseCache,
    scrub_secret,
)
from leaderboard.execution.endpoint_spend import JobUsage, Spend, cost_of, dollars, plan_totals
from leaderboard.execution.images import _tree_chunks
from leaderboard.execution.sandbox import (
    REPO_ROOT,
    OutVolume,
    ProgressCallback,
    RunOutcome,
    SandboxLimits,
    hardware_info,
    printable,
)
from leaderboard.intake.endpoints import EndpointModel, TokenPrice
from leaderboard.intake.manifest import ManifestError, Submission, load_submission

__all__ = [
    "CACHE_DIR", "EndpointRunner", "dry_run", "dry_run_evaluation", "endpoint_tag", "main",
    "run_endpoint_job",
]  # fmt: skip

#: The response cache's folder in the state folder.
CACHE_DIR = "endpoint-cache"


def endpoint_tag(sub: Submission, submission_dir: Path, repo_root: Path = REPO_ROOT) -> str:
    """Return the content tag that stands for an endpoint submission's image in its result key.

    It hashes what decides the run, as an image tag does: the ``evaluators`` package (the track runs
    from it) and the submission folder (the manifest: URL, model, API kind). What the API serves behind
    its name is not hashable; results are as of their run (tags record when).

    Returns
    -------
    str
        ``endpoint/<id>:<first 16 hex digits of a sha256>``.
    """
    digest = hashlib.sha256(b"chemrobust-endpoint-v1")
    for chunk in (*_tree_chunks("evaluators", repo_root / "evaluators"),
                  *_tree_chunks("submission", Path(submission_dir))):  # fmt: skip
        digest.update(len(chunk).to_bytes(8, "big"))
        digest.update(chunk)
    return f"endpoint/{sub.id}:{digest.hexdigest()[:16]}"


def make_adapter(
    sub: Submission, cache_dir: Path, *, key: str | None, deadline: float | None = None, **options
) -> EndpointAdapter:
    """Return the adapter of an endpoint submission (``options``: retries and backoff, for tests)."""
    if not isinstance(sub.model, EndpointModel):
        raise ValueError(f"submission {sub.id!r} is not an endpoint submission (model.source)")
    return EndpointAdapter(
        sub.model,
        key=key,
        cache=ResponseCache(cache_dir),
        prompt_prefix=sub.tokenizer.prompt_prefix,
        deadline=deadline,
        **options,
    )


def run_endpoint_job(
    job_path: Path,
    *,
    data_dir: Path,
    out_dir: Path,
    submission_dir: Path,
    adapter: EndpointAdapter,
    log: Callable[[str], None],
    progress: Callable[[str, int, int], None],
) -> TrackResult:
    """Run one job with ``adapter`` in this process and write ``out_dir/result.json``.

    The host's twin of :func:`evaluators.job.run_job` (same checks, same result), with the adapter given
    instead of loaded from the job.

    Raises
    ------
    JobError
        If the job is malformed, names a track that does not generate, or the data do not hash to the
        job's benchmark version.
    """
    # evaluators.job.run_job does every check and writes result.json; the adapter is the API client.
    return run_job(
        job_path,
        data_dir=data_dir,
        models_dir=out_dir.parent / "models",
        out_dir=out_dir,
        submission_dir=submission_dir,
        log=log,
        adapter=adapter,
        progress=progress,
    )


class EndpointRunner:
    """Run an endpoint submission's jobs on the host (module docstring); ``name`` is ``"endpoint"``.

    Parameters
    ----------
    submission : Submission
        An endpoint submission.
    cache_dir : pathlib.Path
        The response cache (``<state>/endpoint-cache``).
    environ : mapping, optional
        Where the key's variable is read when a run starts (default: the process environment). Keys pass
        through no settings object, so that no settings dump can show one.
    adapter_options : dict, optional
        Passed to :class:`~leaderboard.execution.endpoint.EndpointAdapter` (retries, backoff; tests).
    spend : Spend, optional
        The evaluation's ledger: its cap (``evaluate --max-requests/--max-tokens``) is asked before every
        request, and each run's :attr:`usage` is added to it.
    """

    name = "endpoint"

    def __init__(
        self,
        submission: Submission,
        *,
        cache_dir: Path,
        environ: Mapping[str, str] | None = None,
        adapter_options: dict | None = None,
        spend: Spend | None = None,
    ) -> None:
        self.submission, self.cache_dir = submission, Path(cache_dir)
        self.environ = os.environ if environ is None else environ
        self.adapter_options = dict(adapter_options or {})
        self.spend = spend
        self.adapter: EndpointAdapter | None = None  # the last run's, for its statistics
        self.usage: JobUsage | None = None  # what the last run spent

    def remove_orphans(self) -> int:
        """Return 0: a run is threads of this process, none outlives it."""
        return 0

    def output_volume(self, out_dir: Path, limits: SandboxLimits) -> AbstractContextManager[OutVolume]:
        """Create ``out_dir``: the host itself writes there (no submission code runs), nothing to limit."""
        del limits
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        note = "not needed: an endpoint run executes no submission code; the host writes its output"
        return nullcontext(OutVolume(Path(out_dir), False, note))

    def run(
        self,
        image: str | None,
        *,
        job_dir: Path,
        data_dir: Path,
        models_dir: Path,
        out_dir: Path,
        submission_dir: Path | None = None,
        limits: SandboxLimits | None = None,
        gpu: bool = False,
        on_progress: ProgressCallback | None = None,
    ) -> RunOutcome:
        """Run the job in ``job_dir`` against the API; never raises (the outcome carries the reason).

        ``image``, ``models_dir`` and ``gpu`` are unused (shared signature); ``limits.timeout_s`` bounds the
        run's wall clock (no request starts after it).
        """
        del image, models_dir, gpu
        limits = limits or SandboxLimits()
        start = time.monotonic()
        model = self.submission.model
        assert isinstance(model, EndpointModel)  # noqa: S101 - the orchestrator routes only those here
        key = self.environ.get(model.api_key_env, "") if model.api_key_env else ""
        lines: list[str] = []
        status, reason = "failed", ""
        self.adapter = None
        cap = self.spend.cap if self.spend is not None else None
        try:
            if model.api_key_env and not key:
                raise EndpointError(
                    f"the environment variable {model.api_key_env} is not set: a maintainer sets it to the "
                    "API key before evaluating"
                )
            deadline = start + limits.timeout_s
            self.adapter = make_adapter(
                self.submission, self.cache_dir, key=key, deadline=deadline, cap=cap, **self.adapter_options
            )
            report = (lambda s, d, t: on_progress(Progress(s, d, t))) if on_progress else (lambda *_: None)
            result = run_endpoint_job(
                Path(job_dir) / "job.json", data_dir=Path(data_dir), out_dir=Path(out_dir),
                submission_dir=Path(submission_dir or out_dir), adapter=self.adapter, log=lines.append,
                progress=report,
            )  # fmt: skip
            failed = self.adapter.stats.failures
            asked = int(result.counts.get("n_requests", 0)) or 1
            if len(failed) > MAX_FAILED_SHARE * asked:
                raise EndpointError(
                    f"{len(failed)} of {asked} requests failed after retries (more than "
                    f"{MAX_FAILED_SHARE:.0%}); first: {failed[0][1]}"
                )
            status, reason = "succeeded", "all requests answered"
        except EndpointTimeout as exc:
            status, reason = "timeout", f"wall-clock timeout after {limits.timeout_s:g} s: {exc}"
        except EndpointError as exc:
            reason = f"endpoint: {exc}"
        except Exception as exc:  # noqa: BLE001 - a runner returns outcomes, never raises (Runner protocol)
            reason = f"{type(exc).__name__}: {exc}"
        if self.adapter is not None:
            lines.append(self.adapter.stats.line(self.adapter.budget))
            lines += [f"failed: {rid}: {why}" for rid, why in self.adapter.stats.failures[:20]]
        self.usage = JobUsage.of(self.adapter, model.price_per_million_tokens)
        if self.spend is not None:
            self.spend.add(self.usage)
        return RunOutcome(
            status=status,
            exit_code=0 if status == "succeeded" else None,
            reason=printable(scrub_secret(reason, key))[:1000],
            log_tail=scrub_secret("\n".join(lines), key)[-limits.output_cap_bytes :],
            wall_s=time.monotonic() - start,
            runner="endpoint",
            gpu=False,
            hardware=hardware_info(),
        )


def dry_run(
    submission_dir: Path,
    datasets: list[str],
    *,
    state_dir: Path,
    options: TrackOptions | None = None,
    mirror: Path | None = None,
    log: Callable[[str], None] = print,
) -> list[DryRun]:
    """Say what evaluating an endpoint submission would send; send nothing, never read the key.

    Parameters
    ----------
    submission_dir : pathlib.Path
        The submission folder (or its manifest).
    datasets : list of str
        Data sets to plan for (those a track does not accept are skipped).
    state_dir : pathlib.Path
        The state folder: its data cache (a data set may be built) and response cache (hits are counted).
    options : TrackOptions, optional
        Seed and molecule limit, as for the evaluation.
    mirror : pathlib.Path, optional
        A local data mirror.
    log : callable
        Receives each plan's report (:meth:`DryRun.text`).

    Returns
    -------
    list of DryRun
        One per (track, data set) with requests to plan.
    """
    from leaderboard.data.prepare import prepare_dataset

    sub = load_submission(Path(submission_dir))
    options = options or TrackOptions()
    adapter = make_adapter(sub, Path(state_dir) / CACHE_DIR, key=None)
    plans = []
    for track_name in sub.selected_tracks():
        cls = TRACKS.get(track_name)
        # An API is asked as a chat model (evaluators.asking.protocol), as the evaluation asks it.
        track = cls.for_model(options, chat=True, images="image" in sub.model.inputs)
        for name in datasets:
            if not track.accepts(DATASETS.get(name)) or not hasattr(track, "questions"):
                continue
            root = prepare_dataset(name, Path(state_dir), mirror=mirror, log=lambda _line: None)
            records = load_dataset(name, root, limit=options.limit).records
            plan = adapter.plan([q.request for q in track.questions(records)])
            price = sub.model.price_per_million_tokens  # type: ignore[union-attr]
            most = None if price is None else cost_of(price, plan.prompt_tokens, plan.completion_tokens)
            cost = "" if most is None else (
                f"\n  estimated cost at most {dollars(most)} (model.price_per_million_tokens; completions "
                "counted at their max_tokens)"
            )  # fmt: skip
            log(f"{sub.id} × {track_name} × {name}:\n{plan.text()}{cost}")
            plans.append(plan)
    return plans


def dry_run_evaluation(
    folders: list[Path],
    datasets: list[str],
    *,
    state_dir: Path,
    options: TrackOptions | None = None,
    mirror: Path | None = None,
    max_requests: int | None = None,
    max_tokens: int | None = None,
    allow_remote_code: Sequence[str] = (),
    log: Callable[[str], None] = print,
) -> int:
    """Dry-run every endpoint submission in ``folders`` (``evaluate --dry-run``); send nothing.

    Each plan is logged (:func:`dry_run`), then their totals against the evaluation's cap
    (:func:`~.endpoint_spend.plan_totals`). Other submissions are named and skipped: they send nothing.
    ``allow_remote_code``: the ids a maintainer allows ``trust_remote_code`` (as the evaluation reads the
    manifests).

    Returns
    -------
    int
        0 when every plan fits its run's budget and the totals fit the cap (retries aside); else 1 (also
        when a manifest is invalid).
    """
    plans: list[tuple[DryRun, TokenPrice | None]] = []
    skipped: list[str] = []
    invalid = 0
    for folder in folders:
        try:
            sub = load_submission(Path(folder), allow_remote_code=list(allow_remote_code))
        except ManifestError as exc:
            invalid += 1
            log(f"INVALID {folder} (skipped): {len(exc.problems)} problem(s); nox -s validate -- {folder}")
            continue
        if not isinstance(sub.model, EndpointModel):
            skipped.append(sub.id)
            continue
        for plan in dry_run(folder, datasets, state_dir=state_dir, options=options, mirror=mirror, log=log):
            plans.append((plan, sub.model.price_per_million_tokens))
    if skipped:
        log(f"dry run: {len(skipped)} submission(s) skipped, not endpoints (nothing to send): "
            f"{', '.join(skipped)}")  # fmt: skip
    line, fits = plan_totals(plans, max_requests=max_requests, max_tokens=max_tokens)
    log(line)
    return 0 if fits and not invalid and all(p.fits() for p, _ in plans) else 1


def main(argv: list[str] | None = None) -> int:
    """Command line of :func:`dry_run`; return the exit status (1 when a plan does not fit its budget)."""
    parser = argparse.ArgumentParser(
        prog="python -m leaderboard.execution.endpoint_runner",
        description="Dry run of an endpoint submission: what an evaluation would send. Sends nothing.",
    )
    parser.add_argument("submission", help="the submission folder, e.g. submissions/acme-api")
    parser.add_argument("--dataset", action="append", help="data set (repeatable; default pubchem-names)")
    parser.add_argument("--limit", type=int, help="only the first N molecules, as evaluate --limit")
    parser.add_argument("--state-dir", default=str(REPO_ROOT / ".state"), help="default: .state/")
    args = parser.parse_args(argv)
    from leaderboard.settings import Settings

    settings = Settings.from_environment(repo_root=REPO_ROOT, state_dir=Path(args.state_dir))
    plans = dry_run(
        Path(args.submission), args.dataset or ["pubchem-names"], state_dir=Path(args.state_dir),
        options=TrackOptions(limit=args.limit), mirror=settings.data_mirror,
    )  # fmt: skip
    return 0 if all(p.fits() for p in plans) else 1


if __name__ == "__main__":
    sys.exit(main())

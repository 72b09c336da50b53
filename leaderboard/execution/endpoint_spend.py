"""What the endpoint jobs of one evaluation spend: a cap across all of them, each job's usage, the totals.

An endpoint submission (an API that may cost money) has a budget per run — one track × one data set, the
manifest's ``model.max_requests`` and ``model.max_tokens_total`` (:class:`~.endpoint_cache.Budget`). On top
of it, ``python -m leaderboard evaluate --max-requests N --max-tokens N`` caps the whole evaluation:

- :class:`SpendCap` is that cap, one object shared by every endpoint job of the evaluation. Each job's
  :class:`~.endpoint_cache.Budget` asks it before every HTTP request (retries included), in the same step
  in which it counts the request: no request is ever sent past the cap, whatever the concurrency. Tokens
  are counted as the per-run budget counts them (each request's worst case reserved before it is sent,
  replaced by the API's ``usage`` when it answers), so the token cap is passed by at most the prompt
  estimate's error of the requests in flight. Once the cap is reached the running job stops with
  :class:`CapReached` (its reason names the option and how to resume); every later endpoint job stops the
  same way at its first request the cap does not allow, and a job whose requests the cache answers all
  completes (it sends nothing). Answers from the cache never count.
- :class:`JobUsage` is what one job spent: requests sent, requests answered from the cache, prompt and
  completion tokens (the API's ``usage``; an estimate for an answer without one), and the estimated cost
  when the manifest declares ``model.price_per_million_tokens``. The orchestrator prints its
  :meth:`JobUsage.line` after each endpoint job and records its :meth:`JobUsage.tags` in the MLflow run.
- :class:`Spend` is the evaluation's ledger: the cap and every job's usage; :meth:`Spend.totals_line` is
  printed at the end of the evaluation.
- :func:`plan_totals` adds up dry runs (:class:`~.endpoint_cache.DryRun`) against the cap.

Resuming costs nothing for what was done: every answer is written to the response cache as it arrives
(:class:`~.endpoint_cache.ResponseCache`, before the request counts as done), requests in flight when the
cap is reached finish and are cached too, and a rerun answers from the cache every request whose fields
(URL, model, API kind, prompt, decoding settings) are unchanged; a job that finished is reused from MLflow.

Side effects: none (the cap is counters in memory).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from leaderboard.execution.endpoint_cache import BudgetExhausted, DryRun
from leaderboard.intake.endpoints import TokenPrice

__all__ = ["CapReached", "JobUsage", "Spend", "SpendCap", "cost_of", "dollars", "plan_totals"]

#: What a message about a reached cap tells a maintainer to do.
RESUME = (
    "every answer received is cached: run the same command again with a larger {option} (or without it) "
    "and only the missing requests are sent"
)


class CapReached(BudgetExhausted):
    """The evaluation's cap (``--max-requests`` or ``--max-tokens``) is spent; nothing more is sent."""


def dollars(amount: float) -> str:
    """Return an amount of US dollars as the terminal shows it.

    Cents from 10 cents up; two significant digits below (an API run often costs less than a cent).

    Examples
    --------
    >>> dollars(1234.5), dollars(0.5), dollars(0.0373), dollars(0.000012), dollars(0)
    ('$1,234.50', '$0.50', '$0.037', '$0.000012', '$0.00')
    """
    if amount >= 0.1 or amount <= 0:
        return f"${amount:,.2f}"
    return f"${amount:.{1 - math.floor(math.log10(amount))}f}"


def cost_of(price: TokenPrice, prompt_tokens: int, completion_tokens: int) -> float:
    """Return what ``prompt_tokens`` and ``completion_tokens`` cost at ``price``, in US dollars.

    Examples
    --------
    >>> cost_of(TokenPrice(input=3.0, output=15.0), 1_000_000, 100_000)
    4.5
    """
    return (prompt_tokens * price.input + completion_tokens * price.output) / 1e6


class SpendCap:
    """The cap across every endpoint job of one evaluation (thread-safe; module docstring).

    Parameters
    ----------
    max_requests : int, optional
        HTTP requests all endpoint jobs together may send, retries included (``--max-requests``).
    max_tokens : int, optional
        Tokens (prompt + completion) they may spend together (``--max-tokens``).
    """

    def __init__(self, max_requests: int | None = None, max_tokens: int | None = None) -> None:
        self.max_requests, self.max_tokens = max_requests, max_tokens
        self.sent = self.tokens = self.reserved = 0
        self.reached = ""  # the option that stopped a job, once one did
        self._lock = threading.Lock()

    def acquire(self, worst_case: int) -> None:
        """Count one request about to be sent and reserve its worst-case tokens.

        Raises
        ------
        CapReached
            If the request or the token cap does not allow it; nothing is counted then.
        """
        with self._lock:
            if self.max_requests is not None and self.sent >= self.max_requests:
                self.reached = "--max-requests"
                raise CapReached(
                    f"--max-requests {self.max_requests} reached: this evaluation's endpoint jobs sent "
                    f"{self.sent} request(s) together (retries count, cached answers do not); "
                    + RESUME.format(option="--max-requests")
                )
            if self.max_tokens is not None and self.tokens + self.reserved + worst_case > self.max_tokens:
                self.reached = "--max-tokens"
                raise CapReached(
                    f"--max-tokens {self.max_tokens} reached: this evaluation's endpoint jobs spent "
                    f"{self.tokens} token(s) together, {self.reserved} reserved in flight, and the next "
                    f"request needs up to {worst_case}; " + RESUME.format(option="--max-tokens")
                )
            self.sent += 1
            self.reserved += worst_case

    def settle(self, worst_case: int, spent: int) -> None:
        """Replace a request's reservation by the tokens it spent."""
        with self._lock:
            self.reserved -= worst_case
            self.tokens += spent

    def describe(self) -> str:
        """Return the caps as the options that set them (empty when there is none)."""
        parts = [f"--max-requests {self.max_requests}"] * (self.max_requests is not None)
        parts += [f"--max-tokens {self.max_tokens}"] * (self.max_tokens is not None)
        return ", ".join(parts)


@dataclass(frozen=True)
class JobUsage:
    """What one endpoint job spent (module docstring).

    Attributes
    ----------
    sent : int
        HTTP requests sent, retries included.
    retries : int
        Of those, retries.
    cached : int
        Requests answered from the response cache (nothing sent for them).
    prompt_tokens, completion_tokens : int
        Tokens of the answers received, as the API's ``usage`` reports them (an estimate for an answer
        without ``usage``; attempts that got no answer are not in them).
    unmetered : int
        Answers without ``usage``, whose tokens are estimated.
    price : TokenPrice, optional
        The manifest's ``model.price_per_million_tokens``.
    """

    sent: int = 0
    retries: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    unmetered: int = 0
    price: TokenPrice | None = None

    @classmethod
    def of(cls, adapter, price: TokenPrice | None) -> JobUsage:
        """Return the usage of an :class:`~.endpoint.EndpointAdapter` after its run (``None``: nothing)."""
        if adapter is None:
            return cls(price=price)
        stats = adapter.stats
        return cls(adapter.budget.sent, stats.retries, stats.cached, stats.prompt_tokens,
                   stats.completion_tokens, stats.unmetered, price)  # fmt: skip

    def cost(self) -> float | None:
        """Return the estimated cost in US dollars, or ``None`` without a declared price."""
        return None if self.price is None else cost_of(self.price, self.prompt_tokens, self.completion_tokens)

    def line(self) -> str:
        """Return the line printed after the job.

        Examples
        --------
        >>> JobUsage(27, 0, 3, 8100, 864, 0, TokenPrice(input=3, output=15)).line()  # doctest: +ELLIPSIS
        'endpoint usage: 27 request(s) sent, 3 answered from the cache, 8100 prompt + 864 ... cost $0.037 ...'
        """
        retried = f" ({self.retries} retries)" if self.retries else ""
        line = (
            f"endpoint usage: {self.sent} request(s) sent{retried}, {self.cached} answered from the cache, "
            f"{self.prompt_tokens} prompt + {self.completion_tokens} completion tokens"
        )
        if self.unmetered:
            line += f" ({self.unmetered} answer(s) without usage: estimated)"
        cost = self.cost()
        if cost is None or self.price is None:
            return line + ", no price declared (model.price_per_million_tokens)"
        return (
            f"{line}, estimated cost {dollars(cost)} (at {dollars(self.price.input)} / "
            f"{dollars(self.price.output)} per million input / output tokens)"
        )

    def tags(self) -> dict[str, str]:
        """Return the MLflow tags that record the usage (a model page may show them)."""
        tags = {
            "endpoint.requests_sent": str(self.sent),
            "endpoint.requests_retried": str(self.retries),
            "endpoint.requests_cached": str(self.cached),
            "endpoint.prompt_tokens": str(self.prompt_tokens),
            "endpoint.completion_tokens": str(self.completion_tokens),
            "endpoint.answers_without_usage": str(self.unmetered),
        }
        cost = self.cost()
        if cost is not None and self.price is not None:
            tags["endpoint.cost_usd"] = f"{cost:.6f}"
            tags["endpoint.price_per_million_tokens"] = f"input={self.price.input},output={self.price.output}"
        return tags


@dataclass
class Spend:
    """One evaluation's ledger: the cap shared by its endpoint jobs and what each of them spent.

    Parameters
    ----------
    max_requests, max_tokens : int, optional
        The caps (``--max-requests``, ``--max-tokens``); ``None``: no cap, the usage is still added up.
    """

    max_requests: int | None = None
    max_tokens: int | None = None
    jobs: list[JobUsage] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cap = SpendCap(self.max_requests, self.max_tokens)

    def add(self, usage: JobUsage) -> None:
        """Record a finished endpoint job's usage (succeeded or not)."""
        self.jobs.append(usage)

    def totals_line(self) -> str:
        """Return the line printed at the end of the evaluation (empty when no endpoint job ran)."""
        if not self.jobs:
            return ""
        sent, cached = sum(j.sent for j in self.jobs), sum(j.cached for j in self.jobs)
        prompt = sum(j.prompt_tokens for j in self.jobs)
        completion = sum(j.completion_tokens for j in self.jobs)
        line = (
            f"endpoint totals: {len(self.jobs)} job(s), {sent} request(s) sent, {cached} answered from the "
            f"cache, {prompt} prompt + {completion} completion tokens"
        )
        costs = [c for c in (j.cost() for j in self.jobs) if c is not None]
        if costs:
            line += f", estimated cost {dollars(sum(costs))}"
            if len(costs) < len(self.jobs):
                line += f" (for the {len(costs)} of {len(self.jobs)} jobs whose manifest declares a price)"
        caps = []
        if self.max_requests is not None:
            caps.append(f"--max-requests {self.max_requests}: {self.cap.sent} used")
        if self.max_tokens is not None:
            caps.append(f"--max-tokens {self.max_tokens}: {self.cap.tokens} used")
        if caps:
            line += "; " + ", ".join(caps)
        if self.cap.reached:
            line += f" — {self.cap.reached} reached; " + RESUME.format(option=self.cap.reached)
        return line


def plan_totals(
    plans: Sequence[tuple[DryRun, TokenPrice | None]],
    *,
    max_requests: int | None = None,
    max_tokens: int | None = None,
) -> tuple[str, bool]:
    """Add up dry runs against the evaluation's cap.

    Parameters
    ----------
    plans : sequence of (DryRun, TokenPrice or None)
        Each job's plan and its manifest's price.
    max_requests, max_tokens : int, optional
        ``--max-requests`` and ``--max-tokens``.

    Returns
    -------
    line : str
        The dry run's totals: requests to send, estimated tokens, the cost at most, whether the cap fits.
    fits : bool
        Whether every request fits under the caps once (retries need more).
    """
    to_send = sum(p.to_send for p, _ in plans)
    cached = sum(p.cached for p, _ in plans)
    prompt = sum(p.prompt_tokens for p, _ in plans)
    completion = sum(p.completion_tokens for p, _ in plans)
    line = (
        f"dry run totals: {len(plans)} job(s), {to_send} request(s) to send, {cached} answered from the "
        f"cache, estimated {prompt} prompt + at most {completion} completion tokens"
    )
    priced = [(p, price) for p, price in plans if price is not None]
    if priced:
        most = sum(cost_of(price, p.prompt_tokens, p.completion_tokens) for p, price in priced)
        line += f", cost at most {dollars(most)}"
        if len(priced) < len(plans):
            line += f" (for the {len(priced)} of {len(plans)} jobs whose manifest declares a price)"
    fits = True
    if max_requests is not None:
        ok = to_send <= max_requests
        fits &= ok
        line += f"; --max-requests {max_requests}: " + ("fits" if ok else "DOES NOT FIT")
    if max_tokens is not None:
        ok = prompt + completion <= max_tokens
        fits &= ok
        line += f"; --max-tokens {max_tokens}: " + (
            "fits" if ok else "MAY NOT FIT (completions counted at their max_tokens)"
        )
    if not fits:
        line += " — the evaluation would stop at the cap (what it received is cached; a rerun resumes)"
    return line, fits

"""Hugging Face hub failures as one line with the fix, for the weight prefetch.

``huggingface_hub`` reports a missing repository, an unknown commit, a gated model, a refused or failed
request and an unreachable server as different exceptions, often wrapped (an unreachable hub surfaces as
``LocalEntryNotFoundError`` raised *from* the connection error, after the library's retries). Their text is
long, multi-line and meant for library users; :func:`explain_hub_error` turns the most specific exception of
the chain into one line that says what is wrong and what to do, for the run's failure reason and the
pull-request summary.

Invariants
----------
- One printable line, bounded; never the library's own multi-line text (only a short excerpt, for the
  unexpected case).
- Imports ``huggingface_hub`` (and its HTTP client) only when called.

Side effects: none.
"""

from __future__ import annotations

from leaderboard.text import clip, printable

__all__ = ["explain_hub_error"]

PUBLIC_HUB = "https://huggingface.co"


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from or during, outermost first (no cycles)."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 8:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _status(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def _explain_one(exc: BaseException, repo: str, revision: str, where: str) -> tuple[str, str] | None:
    """Return ``(what, fix)`` for one exception of the chain, or ``None`` when it is not one we know."""
    import httpx2
    from huggingface_hub import errors as hub

    if isinstance(exc, hub.GatedRepoError):  # before RepositoryNotFoundError, its base class
        return (
            f"{repo} is gated on {where}: only accounts its owners approve may download it.",
            "Ask the owners to open it, or publish the weights in an open repository (or a pip package) "
            "and point 'model' at that.",
        )
    if isinstance(exc, hub.DisabledRepoError):
        return f"{repo} is disabled on {where}.", "Point 'model.id' at a repository that is available."
    if isinstance(exc, hub.RepositoryNotFoundError):
        return (
            f"there is no repository {repo} on {where} (or it is private).",
            "Check 'model.id' ('org/name', as in the model's URL); a private repository must be made public.",
        )
    if isinstance(exc, hub.RevisionNotFoundError):
        return (
            f"{repo} has no commit {revision}.",
            'Copy the full 40-character commit SHA from the model\'s "Files and versions" page (History) '
            "into 'model.revision'.",
        )
    if isinstance(exc, hub.RemoteEntryNotFoundError):
        return (
            f"a file of {repo}@{revision} is listed by {where} but cannot be downloaded.",
            "Run again later; if it persists, the server does not serve that commit completely.",
        )
    if isinstance(exc, hub.OfflineModeIsEnabled):
        return (
            "HF_HUB_OFFLINE is set and the weights are not in the local cache.",
            "Unset HF_HUB_OFFLINE to fetch them, or fetch them once on a machine with network.",
        )
    status = _status(exc) if isinstance(exc, hub.HfHubHTTPError) else None
    if status in (401, 403):
        return (
            f"{where} refused access to {repo} (HTTP {status}): it is private or gated.",
            "Make the repository public (the evaluation uses no token), or publish the weights elsewhere.",
        )
    if status == 429:
        return (
            f"{where} is rate-limiting this machine (HTTP 429).",
            "Wait a few minutes and run again; files already fetched are kept.",
        )
    if status is not None and status >= 500:
        return (
            f"{where} answered HTTP {status} (a server error).",
            "Run again later, or set HF_ENDPOINT to a mirror that serves the model.",
        )
    if isinstance(exc, httpx2.TransportError | ConnectionError | TimeoutError):
        return (
            f"cannot reach {where} ({type(exc).__name__}).",
            "Check this machine's network or proxy, or set HF_ENDPOINT to a mirror that serves the model, "
            "and run again; files already fetched are kept.",
        )
    return None


def explain_hub_error(exc: BaseException, *, repo: str, revision: str, endpoint: str | None = None) -> str:
    """Return one line saying why the hub did not give the weights, and what to do.

    Parameters
    ----------
    exc : BaseException
        What ``huggingface_hub`` raised (``snapshot_download``, ``HfApi.verify_repo_checksums``).
    repo, revision : str
        The manifest's ``model.id`` and ``model.revision``.
    endpoint : str, optional
        The hub address used (``HF_ENDPOINT``); ``None``: the public hub.

    Returns
    -------
    str
        ``cannot fetch <repo>@<revision>: <exception class>: <what>. <fix>`` — the most specific
        exception of the chain (the cause of a wrapper such as ``LocalEntryNotFoundError``); for an
        exception we do not know, its class and a short excerpt of its text.
    """
    where = (endpoint or PUBLIC_HUB).rstrip("/")
    head = f"cannot fetch {repo}@{revision}"
    chain = _chain(exc)
    for link in chain:
        known = _explain_one(link, repo, revision, where)
        if known is not None:
            what, fix = known
            return printable(f"{head}: {type(link).__name__}: {what} {fix}")
    from huggingface_hub import errors as hub

    if any(isinstance(link, hub.LocalEntryNotFoundError) for link in chain):  # no cause kept: unreachable
        return printable(
            f"{head}: {type(exc).__name__}: cannot reach {where}, and the weights are not in the local "
            "cache. Check this machine's network or proxy, or set HF_ENDPOINT to a mirror, and run again."
        )
    excerpt = clip(printable(str(exc)), 200)
    return printable(f"{head}: {type(exc).__name__}: {excerpt}")

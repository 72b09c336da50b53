"""A model page's card and provenance tables, and its title.

The card holds what the manifest says about the model (authors, licence, architecture, capabilities, the
settings its adapter applies, training data, tracks); the provenance table says where the model came from
and what was evaluated, one field per row: the source (Hugging Face hub, pip package, folder, endpoint),
its repository or package with a link, the pinned revision, the adapter, the container images and their
digests, and when it was evaluated. An adapter setting is shown only where the adapter declares it and the
model has the capability it serves (``pooling`` for an embedding ``transformers`` model; never for a
fingerprint or custom code): :attr:`evaluators.adapters.Adapter.settings`, read through
:func:`leaderboard.intake.consistency.adapter_facts`.

Invariants
----------
- Every value comes from a manifest or a run record and is hostile: text through
  :func:`leaderboard.markdown.cell`, hashes and names through :func:`~leaderboard.markdown.code`; a link is
  made only to an ``https`` address built from values that matched the manifest schema's own patterns
  (a hub repository id, a 40-hex commit, a package name and version).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from leaderboard.intake.consistency import adapter_facts
from leaderboard.markdown import NO_VALUE, cell, code, esc, is_missing, table, url
from leaderboard.site.format import text
from leaderboard.site.sitedata import SiteData

__all__ = ["SOURCE_FIELDS", "SOURCE_LABELS", "card_rows", "provenance_rows", "provenance_section"]

# The manifest schema's own patterns (leaderboard/intake/schema.py): only values that match them become
# part of a link's address.
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
_SHA = re.compile(r"[0-9a-f]{40}")
_PACKAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_VERSION = re.compile(r"[0-9][A-Za-z0-9.+!_-]*")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")

#: ``model.source`` → how the provenance table names it.
SOURCE_LABELS: Mapping[str, str] = {
    "huggingface": "Hugging Face hub",
    "pip": "pip package (weights inside, never imported)",
    "local": "folder in the submission",
    "none": "none: no weights (the adapter computes everything)",
    "dataset": "a registered data set's training split (disjoint from what is scored), mounted read-only",
    "endpoint": "HTTP API called by the host",
}

Render = Callable[[Any, Mapping[str, Any]], str]


def _plain(value: Any, source: Mapping[str, Any]) -> str:
    del source
    return cell(text(value))


def _code(value: Any, source: Mapping[str, Any]) -> str:
    del source
    return code(text(value)) if not is_missing(value) else NO_VALUE


def _hub_repository(value: Any, source: Mapping[str, Any]) -> str:
    del source
    if isinstance(value, str) and _HUB_ID.fullmatch(value):
        return f"[{code(value)}](https://huggingface.co/{value})"
    return _code(value, {})


def _hub_revision(value: Any, source: Mapping[str, Any]) -> str:
    repo = source.get("id")
    if isinstance(value, str) and _SHA.fullmatch(value) and isinstance(repo, str) and _HUB_ID.fullmatch(repo):
        return f"[{code(value)}](https://huggingface.co/{repo}/tree/{value})"
    return _code(value, {})


def _pypi_package(value: Any, source: Mapping[str, Any]) -> str:
    version = source.get("version")
    if (
        isinstance(value, str) and _PACKAGE.fullmatch(value)
        and isinstance(version, str) and _VERSION.fullmatch(version)
    ):  # fmt: skip
        return f"[{code(value)}](https://pypi.org/project/{value}/{version}/)"
    return _code(value, {})


#: The fields of each kind of ``model.source`` the table shows, in order: (key, row label, renderer).
#: ``architecture`` and ``capabilities`` are on the card; keys not listed here follow as plain rows.
SOURCE_FIELDS: Mapping[str, tuple[tuple[str, str, Render], ...]] = {
    "huggingface": (
        ("id", "Repository", _hub_repository),
        ("revision", "Revision (pinned commit)", _hub_revision),
        ("allow_pickle", "Pickle weights allowed", _plain),
    ),
    "pip": (
        ("package", "Package", _pypi_package),
        ("version", "Version (pinned)", _code),
        ("path", "Weights folder in the package", _code),
        ("allow_pickle", "Pickle weights allowed", _plain),
    ),
    "local": (("path", "Weights folder in the submission", _code),),
    "dataset": (("dataset", "Data set", _code), ("split", "Training split", _code)),
    "endpoint": (
        ("url", "API address", _code),
        ("model", "Served model", _code),
        ("api", "API", _code),
        ("max_requests", "Request budget per run", _plain),
    ),
}
_ON_CARD = ("source", "type", "architecture", "capabilities")
#: What each maintainer allowance (``leaderboard/allowances.toml``) grants, as the card says it.
ALLOWANCE_TEXT: Mapping[str, str] = {
    "pickle": "pickle weights (loaded only inside the sandbox; granted in leaderboard/allowances.toml)",
    "remote_code": (
        "the model repository's own code (trust_remote_code; granted in leaderboard/allowances.toml)"
    ),
}


def card_rows(data: SiteData, sub_id: str) -> list[list[str]]:
    """Return the model card's rows (field, value), adapter settings only where they apply."""
    meta = data.submissions.get(sub_id) or {}
    rows = [
        ["Authors", cell(text(meta.get("authors")))],
        ["Contact", cell(text(meta.get("contact")))],
        ["License", cell(text(meta.get("license")))],
        ["Paper / URL", url(meta.get("url"))],
        ["Architecture", cell(text(meta.get("architecture")))],
        ["Capabilities", cell(text(meta.get("capabilities")))],
        # A card published before model.inputs existed reads text: no model then took images.
        ["Inputs", cell(text(meta.get("inputs") or ["text"]))],
    ]
    rows += [[esc(label), cell(text(value))] for label, value in _settings(meta)]
    rows += [
        ["Training data", cell(text(meta.get("training_data")))],
        ["Tracks", cell(text(meta.get("tracks")))],
    ]
    granted = meta.get("allowances")
    if isinstance(granted, list) and granted:
        kinds = ", ".join(ALLOWANCE_TEXT.get(str(g), str(g)) for g in granted)
        rows.append(["Maintainer allowances", esc(kinds)])
    return rows


def _settings(meta: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """Return the adapter's settings that apply to this model, from the adapter registry's declarations."""
    adapter = meta.get("adapter")
    facts = adapter_facts().get(adapter) if isinstance(adapter, str) else None
    if facts is None:  # no adapter (an endpoint), an unknown one, or a card older than the 'adapter' key
        return []
    capabilities = meta.get("capabilities") or []
    return [
        (name.replace("_", " ").capitalize(), meta.get(name))
        for name, capability in facts.settings.items()
        if capability in capabilities and not is_missing(meta.get(name))
    ]


def provenance_rows(data: SiteData, sub_id: str) -> list[list[str]]:
    """Return the provenance table's rows (field, value): the model's source, adapter, images and dates."""
    meta = data.submissions.get(sub_id) or {}
    source = meta.get("source") if isinstance(meta.get("source"), Mapping) else {}
    kind = source.get("source", source.get("type"))
    rows: list[list[str]] = []
    if kind is not None:
        label = SOURCE_LABELS.get(kind) if isinstance(kind, str) else None
        rows.append(["Source", esc(label) if label else cell(text(kind))])
    fields = SOURCE_FIELDS.get(kind, ()) if isinstance(kind, str) else ()
    for key, label, render in fields:
        if key in source:
            rows.append([esc(label), render(source[key], source)])
    listed = {key for key, _, _ in fields} | set(_ON_CARD)
    rows += [[cell(text(k)), cell(text(v))] for k, v in source.items() if str(k) not in listed]
    if meta.get("adapter") is not None:
        rows.append(["Adapter", code(text(meta["adapter"]))])
    runs = data.runs_by_submission.get(sub_id, [])
    for key, label in (("image_tag", "Container image"), ("image_id", "Image digest")):
        values = sorted({str(r[key]) for r in runs if not is_missing(r.get(key))})
        if values:
            rows.append([label, ", ".join(code(v) for v in values)])
    dates = sorted({str(r.get("started_at"))[:10] for r in runs if _DATE.match(str(r.get("started_at")))})
    if dates:
        rows.append(["Evaluated", esc(dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}")])
    if runs:
        n_ok = sum(r.get("status") == "FINISHED" for r in runs)
        rows.append(["Runs", f"{n_ok} finished, {len(runs) - n_ok} failed (details below)"])
    return rows


def provenance_section(data: SiteData, sub_id: str) -> list[str]:
    """Return the provenance table's Markdown lines (a sentence when nothing is known)."""
    rows = provenance_rows(data, sub_id)
    if not rows:
        return ["No provenance recorded for this submission.", ""]
    return [table(["Field", "Value"], rows), ""]

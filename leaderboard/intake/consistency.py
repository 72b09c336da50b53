"""The manifest's cross-field rules, read from what the adapters and tracks declare.

A rule relates fields that are each valid on their own: the adapter and the capabilities, architecture
and model source it can serve; ``code`` and the ``custom`` adapter; the tracks and the capabilities they
need. The facts come from the evaluators' registries, never from a list kept here: each adapter class
declares ``capabilities``, ``architectures`` and ``weights`` (:mod:`evaluators.adapters`), each track its
``capability`` (:mod:`evaluators.tracks`). An endpoint submission has its own rules
(:func:`leaderboard.intake.endpoints.endpoint_rules`).

:func:`consistency_violations` reads a mapping of the fields that passed the schema (YAML path → value):
a rule whose fields are not all there is not checked, so a typo in one field never hides a violation
between two others, and a field that failed the schema is not reported twice.

Invariants
----------
- Importing this module imports no evaluator; the registries are read on first use (numpy and RDKit,
  never torch or transformers), and an adapter class is read, never instantiated.

Side effects: none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from leaderboard.intake.endpoints import endpoint_rules

__all__ = [
    "AdapterFacts", "Violation", "adapter_capabilities", "adapter_facts", "consistency_violations",
    "track_capabilities",
]  # fmt: skip

#: ``(field, value, message, fix)`` of one broken rule.
Violation = tuple[str, Any, str, str]


@dataclass(frozen=True)
class AdapterFacts:
    """What an adapter class declares: capabilities, the architectures it runs, whether it reads weights."""

    capabilities: frozenset[str]
    architectures: frozenset[str]
    weights: str


def track_capabilities() -> dict[str, str]:
    """Return the capability each registered track needs, as its class declares it (``Track.capability``).

    Returns
    -------
    dict of str to str
        Track name → capability (``embed`` or ``generate``), in the registry's (sorted) order.

    Notes
    -----
    Reads :data:`evaluators.tracks.TRACKS`, imported on first call (it needs numpy and RDKit, not torch).
    """
    from evaluators.tracks import TRACKS

    return {name: TRACKS.get(name).capability for name in TRACKS.names()}


def adapter_facts() -> dict[str, AdapterFacts]:
    """Return what each registered adapter class declares (read from the class, never instantiated).

    Returns
    -------
    dict of str to AdapterFacts
        Adapter name → its ``capabilities``, ``architectures`` and ``weights``.

    Notes
    -----
    Reads :data:`evaluators.adapters.ADAPTERS`, imported on first call; the adapter modules import their
    heavy libraries (torch, transformers) only when an adapter is built.
    """
    from evaluators.adapters import ADAPTERS

    facts = {}
    for name in ADAPTERS.names():
        cls = ADAPTERS.get(name)
        facts[name] = AdapterFacts(frozenset(cls.capabilities), frozenset(cls.architectures), cls.weights)
    return facts


def adapter_capabilities() -> dict[str, frozenset[str]]:
    """Return the capabilities each registered adapter may offer, as its class declares them.

    Returns
    -------
    dict of str to frozenset of str
        Adapter name → ``Adapter.capabilities``.
    """
    return {name: facts.capabilities for name, facts in adapter_facts().items()}


def _names(values: Any) -> str:
    return ", ".join(repr(v) for v in sorted(values))


def _endpoint(known: Mapping[str, Any]) -> list[Violation]:
    needed = ("model", "id", "tracks", "trust_remote_code", "tokenizer.chat_template", "fields_set")
    if not all(k in known for k in needed):
        return []
    needs = track_capabilities()
    broken = endpoint_rules(
        known["model"],
        submission_id=known["id"],
        fields_set=set(known["fields_set"]),
        trust_remote_code=known["trust_remote_code"],
        chat_template=known["tokenizer.chat_template"],
        track_needs={t: needs[t] for t in known["tracks"] or []},
    )
    return [] if broken is None else [broken]


def _adapter_rules(known: Mapping[str, Any], adapter: str) -> list[Violation]:
    """Check the rules between the adapter and the model it is given."""
    every = adapter_facts()
    facts = every[adapter]
    out: list[Violation] = []
    if "model.capabilities" in known and not set(known["model.capabilities"]) <= facts.capabilities:
        declared = sorted(known["model.capabilities"])
        out.append((
            "model.capabilities",
            declared,
            f"'model.capabilities' {declared} are not all offered by adapter {adapter!r} "
            f"(it offers {sorted(facts.capabilities)}).",
            "Declare only those, or choose another 'adapter'.",
        ))  # fmt: skip
    if "code" in known and (adapter == "custom") != (known["code"] is not None):
        code = known["code"]
        out.append((
            "code",
            None if code is None else code.model_dump(),
            "'code' (file and object) is required with adapter 'custom' and only then.",
            "Add 'code: {file: <your .py file>, object: <class name>}' for 'custom', or remove 'code'.",
        ))  # fmt: skip
    architecture = known.get("model.architecture")
    if architecture is not None and architecture not in facts.architectures:
        runs = [name for name, f in every.items() if architecture in f.architectures]
        out.append((
            "model.architecture",
            architecture,
            f"'model.architecture' {architecture!r} is not one adapter {adapter!r} runs (it runs "
            f"{_names(facts.architectures)}).",
            f"Declare the model's real architecture, or choose an adapter that runs {architecture!r} "
            f"models: {_names(runs)}.",
        ))  # fmt: skip
    source = known.get("model.source")
    if source == "none" and facts.weights == "required":
        out.append((
            "model.source",
            source,
            f"'model.source' cannot be 'none' with adapter {adapter!r}, which needs weights.",
            "Use source huggingface, pip or local, or another 'adapter'.",
        ))  # fmt: skip
    if source is not None and source != "none" and facts.weights == "none":
        loaders = [name for name, f in every.items() if f.weights != "none"]
        out.append((
            "model.source",
            source,
            f"'model.source' is {source!r}, but adapter {adapter!r} reads no weights (they would be "
            "fetched for nothing).",
            f"Set 'model.source: none', or choose an adapter that loads weights: {_names(loaders)}.",
        ))  # fmt: skip
    return out


def consistency_violations(known: Mapping[str, Any]) -> list[Violation]:
    """Return every cross-field rule the manifest breaks, in a fixed order.

    Parameters
    ----------
    known : mapping of str to Any
        The fields that passed the schema, by YAML path, with their validated values: ``id``,
        ``adapter``, ``code`` (a ``CodeEntry`` or ``None``), ``tracks`` (``None``: not declared),
        ``trust_remote_code``, ``tokenizer.chat_template``, ``model`` (the whole validated model),
        ``model.source``, ``model.architecture``, ``model.capabilities``, and ``fields_set`` (the top-level
        keys the manifest gives). A rule whose fields are missing is not checked.

    Returns
    -------
    list of Violation
        ``(field, value, message, fix)`` per broken rule; empty when all hold.
    """
    if known.get("model.source") == "endpoint":  # no adapter, no image: the endpoint's own rules
        return _endpoint(known)
    out = _adapter_rules(known, known["adapter"]) if "adapter" in known else []
    architecture, source = known.get("model.architecture"), known.get("model.source")
    if (
        source == "huggingface"
        and architecture == "non-neural"
        and not any(field == "model.architecture" for field, *_ in out)
    ):
        out.append((
            "model.architecture",
            architecture,
            "'model.architecture' is 'non-neural', but 'model.source' is 'huggingface': a model on the "
            "Hugging Face hub is a neural network loaded from its weights.",
            "Declare its architecture (encoder, decoder or encoder-decoder); a model without weights uses "
            "'model.source: none'.",
        ))  # fmt: skip
    if "tracks" in known and "model.capabilities" in known:
        needs = track_capabilities()
        for track in known["tracks"] or []:
            if needs[track] not in known["model.capabilities"]:
                out.append((
                    "tracks",
                    track,
                    f"'tracks': {track!r} needs capability {needs[track]!r}, which "
                    "'model.capabilities' does not declare.",
                    "Add the capability or remove the track.",
                ))  # fmt: skip
    return out

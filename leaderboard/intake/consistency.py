"""The manifest's cross-field rules, read from what the adapters and tracks declare.

A rule relates fields that are each valid on their own: the adapter and the capabilities, architecture
and model source it can serve; ``code`` and the ``custom`` adapter; the tracks and the capabilities they
need. The facts come from the evaluators' registries, never from a list kept here: each adapter class
declares ``capabilities``, ``architectures`` and ``weights`` (:mod:`evaluators.adapters`, which also
declares what each architecture can do), each track its ``capability`` (:mod:`evaluators.tracks`). An
endpoint submission has its own rules (:func:`leaderboard.intake.endpoints.endpoint_rules`).

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
from dataclasses import dataclass, field
from typing import Any

from leaderboard.intake.endpoints import endpoint_rules

__all__ = [
    "AdapterFacts", "Violation", "adapter_capabilities", "adapter_facts", "architecture_capabilities",
    "consistency_violations", "track_capabilities",
]  # fmt: skip

#: ``(field, value, message, fix)`` of one broken rule.
Violation = tuple[str, Any, str, str]


@dataclass(frozen=True)
class AdapterFacts:
    """What an adapter class declares: capabilities, the architectures it runs, whether it reads weights.

    ``settings`` maps each top-level manifest setting the adapter applies (``pooling``) to the capability it
    serves (``embed``); the model pages show a setting only where it applies.
    """

    capabilities: frozenset[str]
    architectures: frozenset[str]
    weights: str
    settings: Mapping[str, str] = field(default_factory=dict)


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
        Adapter name → its ``capabilities``, ``architectures``, ``weights`` and ``settings``.

    Notes
    -----
    Reads :data:`evaluators.adapters.ADAPTERS`, imported on first call; the adapter modules import their
    heavy libraries (torch, transformers) only when an adapter is built.
    """
    from evaluators.adapters import ADAPTERS

    facts = {}
    for name in ADAPTERS.names():
        cls = ADAPTERS.get(name)
        facts[name] = AdapterFacts(
            frozenset(cls.capabilities), frozenset(cls.architectures), cls.weights, dict(cls.settings)
        )
    return facts


def architecture_capabilities() -> dict[str, frozenset[str]]:
    """Return the capabilities a model of each architecture can have, whatever its adapter.

    Returns
    -------
    dict of str to frozenset of str
        Architecture → capabilities (:data:`evaluators.adapters.ARCHITECTURE_CAPABILITIES`): an
        encoder only embeds.
    """
    from evaluators.adapters import ARCHITECTURE_CAPABILITIES

    return dict(ARCHITECTURE_CAPABILITIES)


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
    """Check an endpoint's rules on the fields that passed the schema (the others' rules are skipped)."""
    needs = track_capabilities()
    # Not declared (None) means every track the capabilities allow: none of them then needs 'embed'.
    tracks = [] if "tracks" not in known else known["tracks"] or []
    return endpoint_rules(
        known.get("model"),
        submission_id=known.get("id"),
        fields_set=set(known.get("fields_set", ())),
        trust_remote_code=known.get("trust_remote_code"),
        chat_template=known.get("tokenizer.chat_template"),
        track_needs={t: needs[t] for t in tracks},
    )


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


def _training_split_rule(known: Mapping[str, Any]) -> list[Violation]:
    """Check a ``model.source: dataset``: a declared training split, its tracks only, an adapter to read it.

    Only files the registry declares disjoint from what is scored may reach the box (a test split would be
    the gold answers); a model given a split runs only the tracks it was checked against.
    """
    if known.get("model.source") != "dataset" or "model.dataset" not in known or "model.split" not in known:
        return []
    from evaluators.datasets.specs import DATASETS

    name, split = known["model.dataset"], known["model.split"]
    declared = DATASETS.get(name).training_split(split)
    offered = [s.name for s in DATASETS.get(name).training_splits]
    if declared is None:
        return [(
            "model.split",
            split,
            f"'model.split' {split!r} is not a training split of data set {name!r}: only a split the data "
            "registry declares disjoint from every evaluation set may be given to a model (a test split "
            "holds the molecules and gold answers it is scored on).",
            f"Use one of {name!r}'s training splits: {_names(offered)}.",
        )]  # fmt: skip
    out: list[Violation] = []
    every = track_capabilities()
    asked = known["tracks"] if known.get("tracks") is not None else [
        t for t, cap in every.items() if cap in (known.get("model.capabilities") or ())]  # fmt: skip
    beyond = [t for t in asked if t not in declared.tracks]
    if "tracks" in known and beyond:
        out.append((
            "tracks",
            known.get("tracks"),
            f"training split {name}/{split} may be given only to a model run on {_names(declared.tracks)} "
            "(the tracks whose evaluation sets it was checked to be disjoint from), not on "
            f"{_names(beyond)}.",
            f"Declare 'tracks: [{', '.join(declared.tracks)}]'.",
        ))  # fmt: skip
    adapter = known.get("adapter")
    if adapter is not None and adapter_facts()[adapter].weights == "required":
        out.append((
            "model.source",
            "dataset",
            f"'model.source' is 'dataset', but adapter {adapter!r} loads a model's weights from /models, "
            "where a data split is mounted instead.",
            "Use 'adapter: custom' with your own class that reads the split from ModelConfig.path.",
        ))  # fmt: skip
    return out


def _architecture_rule(known: Mapping[str, Any]) -> list[Violation]:
    """Check that the declared capabilities are ones the declared architecture can have.

    Only an endpoint was checked once: an encoder declaring ``generate`` passed and failed at run time.
    """
    architecture, declared = known.get("model.architecture"), known.get("model.capabilities")
    if architecture is None or declared is None:
        return []
    can = architecture_capabilities().get(architecture, frozenset())
    beyond = sorted(set(declared) - can)
    if not beyond:
        return []
    able = [a for a, caps in architecture_capabilities().items() if set(beyond) <= caps]
    return [(
        "model.capabilities",
        sorted(declared),
        f"'model.capabilities' declares {_names(beyond)}, which an {architecture!r} model cannot do "
        f"(it can {_names(can)}; {_names(beyond)} needs one of {_names(able)}).",
        f"Remove {_names(beyond)} from 'model.capabilities', or declare the model's real "
        "'model.architecture' if it has a decoder.",
    )]  # fmt: skip


def _pre_tokenizer_rule(known: Mapping[str, Any]) -> list[Violation]:
    """Check that a SMILES pre-tokenizer is the ``transformers`` adapter's and never splits a prompt."""
    name = known.get("tokenizer.pre_tokenizer")
    if not name:
        return []
    out: list[Violation] = []
    if known.get("adapter", "transformers") != "transformers":
        out.append((
            "tokenizer.pre_tokenizer",
            name,
            f"'tokenizer.pre_tokenizer' {name!r} is an option of adapter 'transformers', not of "
            f"{known['adapter']!r} (which tokenizes, if at all, on its own).",
            "Remove 'tokenizer.pre_tokenizer', or use 'adapter: transformers'.",
        ))  # fmt: skip
    if "generate" in (known.get("model.capabilities") or ()):
        out.append((
            "tokenizer.pre_tokenizer",
            name,
            f"'tokenizer.pre_tokenizer' {name!r} splits SMILES into atom tokens; a generative track's "
            "prompts are English sentences it cannot tokenize.",
            "Declare 'model.capabilities: [embed]' only, or remove 'tokenizer.pre_tokenizer'.",
        ))  # fmt: skip
    return out


def _inputs_rule(known: Mapping[str, Any]) -> list[Violation]:
    """Check ``model.inputs``: text always; images only for a generative model (and an API's chat route)."""
    model = known.get("model")
    inputs = list(getattr(model, "inputs", None) or ["text"])
    out: list[Violation] = []
    if "text" not in inputs:
        out.append((
            "model.inputs", inputs,
            "'model.inputs' leaves out 'text': every question the board asks is written in words, and "
            "image questions come with a text prompt too.",
            "List 'text' first: 'model.inputs: [text]' or '[text, image]'.",
        ))  # fmt: skip
    if "image" in inputs and "generate" not in (getattr(model, "capabilities", None) or ()):
        out.append((
            "model.inputs", inputs,
            "'model.inputs' lists 'image', but only generative tracks show images and 'model.capabilities' "
            "does not declare 'generate'.",
            "Remove 'image' from 'model.inputs', or declare 'generate' if the model writes answers.",
        ))  # fmt: skip
    if "image" in inputs and getattr(model, "api", None) == "completions":
        out.append((
            "model.inputs", inputs,
            "'model.inputs' lists 'image', but 'model.api' is 'completions', which takes a text prompt "
            "only: images are sent as 'image_url' parts of a chat message.",
            "Use 'model.api: chat' for a model that reads images, or remove 'image' from 'model.inputs'.",
        ))  # fmt: skip
    return out


def _reference_rule(known: Mapping[str, Any]) -> list[Violation]:
    """Refuse a ``reference_note`` without ``reference: true``: it would explain nothing shown anywhere."""
    if not known.get("reference_note") or known.get("reference") is not False:
        return []
    return [(
        "reference_note",
        known["reference_note"],
        "'reference_note' says why the submission is a reference, but 'reference' is not true.",
        "Add 'reference: true' (shown on the boards as a reference row, never ranked), or remove "
        "'reference_note'.",
    )]  # fmt: skip


def consistency_violations(known: Mapping[str, Any]) -> list[Violation]:
    """Return every cross-field rule the manifest breaks, in a fixed order.

    Parameters
    ----------
    known : mapping of str to Any
        The fields that passed the schema, by YAML path, with their validated values: ``id``,
        ``adapter``, ``code`` (a ``CodeEntry`` or ``None``), ``tracks`` (``None``: not declared),
        ``trust_remote_code``, ``tokenizer.chat_template``, ``tokenizer.pre_tokenizer``, ``model`` (the whole
        validated model), ``model.source``, ``model.architecture``, ``model.capabilities``, ``reference``,
        ``reference_note``, and ``fields_set`` (the top-level keys the manifest gives). A rule whose fields
        are missing is not checked.

    Returns
    -------
    list of Violation
        ``(field, value, message, fix)`` per broken rule; empty when all hold.
    """
    if known.get("model.source") == "endpoint":  # no adapter, no image: the endpoint's own rules
        return [*_endpoint(known), *_inputs_rule(known), *_reference_rule(known)]
    out = _adapter_rules(known, known["adapter"]) if "adapter" in known else []
    out.extend(_inputs_rule(known))
    out.extend(_reference_rule(known))
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
    out.extend(_architecture_rule(known))
    out.extend(_training_split_rule(known))
    out.extend(_pre_tokenizer_rule(known))
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

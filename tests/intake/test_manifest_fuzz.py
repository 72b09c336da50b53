"""Bad manifests never produce a traceback (issue 4, item 5): property-based tests with hypothesis.

Documents are generated three ways: a valid manifest with random mutations (wrong types, unknown keys, huge
strings, path traversal in ids and paths, deleted fields), random YAML text (tags, anchors and aliases,
deep nesting, huge integers), and random bytes. Whatever the input, :func:`load_submission` either returns
a :class:`~leaderboard.intake.manifest.Submission` or raises
:class:`~leaderboard.intake.manifest.ManifestError` whose every
:class:`~leaderboard.intake.manifest.Problem` names the file and the field (or says what is wrong with
the document as a whole), holds only short printable text and prints as one line that starts with the
file's path and quotes the field — never another exception, and never slowly.
"""

from __future__ import annotations

import copy
import re
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from leaderboard.intake.manifest import (
    MAX_MANIFEST_BYTES,
    STAGES,
    ManifestError,
    Problem,
    Submission,
    load_submission,
)

FOLDER_NAME = "fuzz-sub"
VALID = {
    "id": FOLDER_NAME,
    "name": "Fuzzed submission",
    "authors": ["ChemRobust tests"],
    "contact": "https://example.org/issues",
    "license": "MIT",
    "model": {"source": "none", "architecture": "non-neural", "capabilities": ["embed"]},
    "adapter": "custom",
    "code": {"file": "embed.py", "object": "Embedder"},
    "options": {"n": 3},
    "tracks": ["amore"],
}
FIELDS = [
    "id", "name", "description", "authors", "contact", "license", "url", "model", "model.source",
    "model.id", "model.revision", "model.path", "model.package", "model.version", "model.allow_pickle",
    "model.architecture", "model.capabilities", "adapter", "code", "code.file", "code.object", "tokenizer",
    "tokenizer.max_length", "tokenizer.prompt_prefix", "pooling", "batch_size", "options",
    "trust_remote_code", "requirements", "training_data", "tracks",
]  # fmt: skip
# Problems about the document as a whole, which name no field.
WHOLE_DOCUMENT = re.compile(
    r"^(not valid YAML: |the top level must be a mapping|\d+ bytes; a manifest is at most "
    r"|line \d+: YAML aliases)"
)
TRAVERSAL = [
    "../x",
    "../../etc/passwd",
    "/etc/passwd",
    "a/../../b.py",
    "..",
    "~/x",
    "a\x00b",
    "con:",
    "\\..\\x",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**300, max_value=10**310),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.integers(min_value=4097, max_value=30000).map(lambda n: "x" * n),  # huge strings
    st.sampled_from(TRAVERSAL),
    st.sampled_from(["main", "0" * 40, "encoder", "huggingface", "pip", "local", "custom", "amore"]),
)
keys = st.one_of(st.sampled_from([f.split(".")[-1] for f in FIELDS]), st.text(max_size=30), st.integers())
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=12,
)


@st.composite
def mutated_manifests(draw) -> dict:
    doc = copy.deepcopy(VALID)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        path = draw(st.sampled_from(FIELDS)).split(".")
        parent = doc
        for part in path[:-1]:
            if not isinstance(parent.get(part), dict):
                parent[part] = {}
            parent = parent[part]
        action = draw(st.sampled_from(["set", "set", "delete", "unknown"]))
        if action == "set":
            parent[path[-1]] = draw(values)
        elif action == "delete":
            parent.pop(path[-1], None)
        else:
            parent[draw(st.text(min_size=1, max_size=20))] = draw(values)
    return doc


def bomb(levels: int = 9, width: int = 9) -> str:
    text = "a0: &a0 [" + ", ".join(["lol"] * width) + "]\n"
    for i in range(1, levels):
        text += f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]\n"
    return text


RAW = [
    bomb(),  # billion laughs: 9**9 strings if expanded
    bomb().replace(f"a{8}: &a{8}", "authors: &a8") + "id: fuzz-sub\nname: n\n",  # the bomb inside a field
    f"id: &x {FOLDER_NAME}\nname: *x\n",
    "a: " + "[" * 5000 + "]" * 5000 + "\n",  # deep nesting
    "a: " + "{b: " * 3000 + "1" + "}" * 3000 + "\n",
    "batch_size: " + "9" * 5000 + "\n",  # more digits than Python converts
    "id: !!python/object/apply:os.system ['echo pwned']\n",  # code execution through a tag
    "id: !!binary aGVsbG8=\nname: !!set {a, b}\nauthors: !!timestamp 2001-12-14\n",
    "? [complex, key]\n: value\n",
    "~: 1\n",
    "id: x\nid: y\n",  # duplicate key
    "\ufeffid: fuzz-sub\n",
    "- just\n- a\n- list\n",
    "just a string",
    "",
    "%YAML 1.1\n---\nid: a\n---\nid: b\n",  # two documents
    "id: '\x1b[2Jclear'\n",
    'id: "\\x1b[2J\\u202e"\nname: "line\\nbreak"\n"key\\nwith newline": 1\n',
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("fuzz") / FOLDER_NAME
    path.mkdir()
    (path / "embed.py").write_text("class Embedder:\n    pass\n")
    return path


def check(folder: Path, text: str | bytes) -> Submission | None:
    """Write ``text`` as the manifest, load it, and check the contract; return the submission if valid."""
    manifest = folder / "submission.yaml"
    if isinstance(text, bytes):
        manifest.write_bytes(text)
    else:
        manifest.write_text(text, encoding="utf-8", errors="surrogatepass")
    started = time.perf_counter()
    try:
        return load_submission(manifest)
    except ManifestError as exc:
        assert exc.problems, "a ManifestError must list its problems"
        for problem in exc.problems:
            assert isinstance(problem, Problem) and problem.file == str(manifest), problem
            assert problem.check in STAGES, problem
            assert len(problem.value) <= 80 and len(problem.field) <= 200, problem
            line = str(problem)
            assert line.startswith(f"{manifest}: "), line
            rest = line[len(f"{manifest}: ") :]
            assert "\n" not in line and line.isprintable(), f"not one printable line: {line!r}"
            assert len(line) <= 1500, f"problem too long ({len(line)} characters)"
            names_field = re.search(r"'[^']+'", rest) is not None and problem.field != ""
            whole = WHOLE_DOCUMENT.match(problem.message) and problem.field == "" == problem.value
            assert names_field or whole, f"names no field: {problem!r}"
        return None
    finally:
        elapsed = time.perf_counter() - started
        assert elapsed < 5, f"validation took {elapsed:.1f} s"


FUZZ = settings(
    max_examples=150, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)  # fmt: skip


def test_the_valid_base_manifest_is_valid(folder):
    assert check(folder, yaml.safe_dump(VALID)) is not None


@FUZZ
@given(doc=mutated_manifests())
def test_mutated_manifests_get_named_field_errors(folder, doc):
    text = yaml.safe_dump(doc, allow_unicode=True)
    sub = check(folder, text)
    if len(text.encode()) > MAX_MANIFEST_BYTES:
        assert sub is None


@FUZZ
@given(doc=st.dictionaries(keys, values, max_size=12))
def test_random_documents_get_named_field_errors(folder, doc):
    assert check(folder, yaml.safe_dump(doc, allow_unicode=True)) is None


YAML_TOKENS = [
    "id", "name", "model", "a", "1", "9" * 60, "1e999", "~", "null", ":", " ", "  ", "\n", "\t", "-", "[",
    "]", "{", "}", ",", "&x", "*x", "!!str", "!!binary", "!!python/name:os.system", "!x", "|", ">", "'", '"',
    "#", "%YAML 1.1", "@", "?", "...", "---", "\\x00", "\x1b", "\u202e",
]  # fmt: skip


@FUZZ
@given(text=st.lists(st.sampled_from(YAML_TOKENS), max_size=80).map("".join))
@example(text=RAW[0])
def test_random_yaml_text_never_raises_anything_else(folder, text):
    check(folder, text)


@FUZZ
@given(data=st.binary(max_size=500))
def test_random_bytes_never_raise_anything_else(folder, data):
    check(folder, data)


@pytest.mark.parametrize("text", RAW, ids=range(len(RAW)))
def test_hostile_yaml_is_refused_quickly_and_clearly(folder, text):
    assert check(folder, text) is None


def test_yaml_bombs_and_tags_are_refused_for_what_they_are(folder):
    with pytest.raises(ManifestError, match=r"line 2: YAML aliases \('\*a0'\) are not allowed"):
        load_submission(_write(folder, bomb()))
    with pytest.raises(ManifestError, match="not valid YAML: nested too deeply"):
        load_submission(_write(folder, RAW[3]))
    with pytest.raises(ManifestError, match="could not determine a constructor for the tag"):
        load_submission(_write(folder, RAW[6]))
    with pytest.raises(ManifestError, match="Exceeds the limit"):
        load_submission(_write(folder, RAW[5]))


@pytest.mark.parametrize("value", TRAVERSAL)
@pytest.mark.parametrize("field", ["id", "code.file", "model.path"])
def test_path_traversal_in_ids_and_paths_is_refused(folder, field, value):
    doc = copy.deepcopy(VALID)
    if field == "model.path":
        doc["model"] = {
            "source": "local",
            "path": value,
            "architecture": "encoder",
            "capabilities": ["embed"],
        }
    elif field == "code.file":
        doc["code"]["file"] = value
    else:
        doc["id"] = value
    with pytest.raises(ManifestError) as caught:
        load_submission(_write(folder, yaml.safe_dump(doc)))
    assert any(p.field == field and f"'{field}'" in p.message for p in caught.value.problems), (
        caught.value.problems
    )
    check(folder, yaml.safe_dump(doc))


def _write(folder: Path, text: str) -> Path:
    (folder / "submission.yaml").write_text(text)
    return folder / "submission.yaml"

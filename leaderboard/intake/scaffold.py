"""Scaffold a new submission: ``nox -s new-submission -- ID [--kind endpoint]`` writes its manifest.

``submissions/ID/submission.yaml`` is a commented template with every field of its kind and what it
means (:data:`TEMPLATES`): ``huggingface`` (the default, :data:`TEMPLATE`) for weights run in the sandbox,
``endpoint`` (:data:`ENDPOINT_TEMPLATE`) for a model behind an OpenAI-compatible API that the host calls.
The fields only the author can know are placeholders that fail validation until they are filled in, one
error each (:data:`PLACEHOLDERS`): ``~`` (null) for the display name, contact and license, an empty
``authors`` list, ``<...>`` strings for the Hugging Face model id and commit, ``~`` for an endpoint's URL
and model name. Everything else the template writes is valid as written, so ``nox -s validate --
submissions/ID`` names exactly the placeholders, each with its fix. Field-by-field documentation:
``submissions/README.md``.

Side effects: :func:`write_submission` creates ``<root>/submissions/<id>/`` and writes the manifest in it;
it never overwrites an existing folder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from leaderboard.intake.endpoints import endpoint_key_env
from leaderboard.intake.manifest import ID_PATTERN, MANIFEST_NAME
from leaderboard.reserved import RESERVED_IDS, is_reserved
from leaderboard.text import clip, printable

__all__ = [
    "DEFAULT_KIND",
    "ENDPOINT_TEMPLATE",
    "KINDS",
    "PLACEHOLDERS",
    "PLACEHOLDER_FIELDS",
    "TEMPLATE",
    "TEMPLATES",
    "ScaffoldError",
    "Scaffolded",
    "next_steps",
    "render",
    "write_submission",
]

#: The fields whose template values fail validation until the author fills them in (YAML paths), for
#: the default kind; :data:`PLACEHOLDERS` has them per kind.
PLACEHOLDER_FIELDS: tuple[str, ...] = ("name", "authors", "contact", "license", "model.id", "model.revision")

#: The manifest template; ``{id}`` is the only substitution.
TEMPLATE = """\
# ChemRobust submission manifest for '{id}' (written by `nox -s new-submission -- {id}`).
#
# Every field is explained in submissions/README.md. Fields marked REQUIRED hold placeholders (~ or <...>)
# that FAIL VALIDATION until you fill them in. Check your progress at any time, without running anything:
#
#     nox -s validate -- submissions/{id}
#
# Unknown keys are errors. Lines starting with '#' are comments; delete the ones you do not need.

# --- Who and what ----------------------------------------------------------------------------------------
id: {id}                 # must equal the folder name: lowercase letters, digits and '-'
name: ~                  # REQUIRED: display name on the leaderboard, e.g. "ChemBERTa-77M-MLM"
description: ""          # one paragraph: what the model is, how it was trained, what is special about it
authors: []              # REQUIRED: at least one, e.g. [Ada Lovelace, Alan Turing]
contact: ~               # REQUIRED: an e-mail address or URL (issue tracker) where maintainers reach you
license: ~               # REQUIRED: license of the weights, e.g. apache-2.0, mit, cc-by-4.0
url: ~                   # optional: paper or model card, http(s)://...

# --- Where the weights come from (fetched on the maintainers' machine; the evaluation has no network) ----
model:
  source: huggingface    # huggingface | pip | local | none (see submissions/README.md for each)
  id: <org>/<name>       # REQUIRED: the Hugging Face repository, e.g. DeepChem/ChemBERTa-77M-MLM
  revision: <40-hex commit SHA>  # REQUIRED: full commit from the model's "Files and versions" page
  architecture: encoder  # encoder | decoder | encoder-decoder | non-neural
  capabilities: [embed]  # what the model can do: embed (embedding tracks) and/or generate
  # allow_pickle: false  # huggingface/pip: .bin/.pt weights need a maintainer's allowance; prefer safetensors

# --- How it is run ----------------------------------------------------------------------------------------
adapter: transformers    # transformers (Hugging Face models) | morgan_fingerprint | custom (your own class)
# code:                  # only with adapter: custom, a file in this folder and the class in it
#   file: my_adapter.py
#   object: MyAdapter
tokenizer:
  max_length: 512        # truncation length in tokens (8-32768); truncated strings are counted and reported
  prompt_prefix: ""      # text put before every input string, e.g. "SMILES: "
  # pre_tokenizer: smiles-regex  # SMILES models trained on regex atom tokens over vocab.txt (rxnfp, MolBERT)
pooling: mean            # mean | cls | last_token | mean_no_special (mean: over the attention mask)
batch_size: 64           # strings per forward pass (1-4096)
options: {{}}              # adapter options, a flat mapping of names to strings, numbers or booleans
trust_remote_code: false # true runs code from the model repository: refused unless a maintainer allows it
requirements: []         # extra pip packages, each pinned exactly: ["selfies==2.1.1"]

# --- Declarations -------------------------------------------------------------------------------------------
training_data: []        # what it was trained on: free text, {{dataset: esol}} or {{corpus: uspto}}
# tracks: [amore]        # tracks to run; default: every track the model's capabilities allow
# reference: false       # true: not a model but a ceiling/floor/tool, shown on the boards, never ranked
# reference_note: ""     # with reference: true, one line on why it is a reference (at most 300 characters)
"""


#: The endpoint manifest template (``--kind endpoint``); ``{id}`` and ``{key_env}`` are substituted. It
#: leaves out every field an endpoint refuses (adapter, code, requirements, options, pooling, batch_size):
#: the default template's values for them were five errors once its source was changed to endpoint.
ENDPOINT_TEMPLATE = """\
# ChemRobust submission manifest for '{id}', a model behind an OpenAI-compatible API
# (written by `nox -s new-submission -- {id} --kind endpoint`).
#
# Nothing of yours runs on the maintainers' machine: it builds each track's prompts, sends them to your
# API and scores the answers itself. Every field is explained in submissions/README.md ("API endpoints").
# Fields marked REQUIRED hold placeholders (~ or []) that FAIL VALIDATION until you fill them in; every
# other value is valid as written. Check your progress at any time, without running anything:
#
#     nox -s validate -- submissions/{id}
#
# Unknown keys are errors, and so are adapter, code, requirements, options, pooling and batch_size (no code
# of yours runs). Lines starting with '#' are comments; delete the ones you do not need.

# --- Who and what ----------------------------------------------------------------------------------------
id: {id}                 # must equal the folder name: lowercase letters, digits and '-'
name: ~                  # REQUIRED: display name on the leaderboard, e.g. "ACME Chem 7B"
description: ""          # one paragraph: what the model is, how it was trained, what is special about it
authors: []              # REQUIRED: at least one, e.g. [Ada Lovelace, Alan Turing]
contact: ~               # REQUIRED: an e-mail address or URL (issue tracker) where maintainers reach you
license: ~               # REQUIRED: license or terms of use of the model, e.g. apache-2.0, proprietary
url: ~                   # optional: paper or model card, http(s)://...

# --- The API (called from the maintainers' machine; your key never goes in this file) --------------------
model:
  source: endpoint
  url: ~                 # REQUIRED: the API's base URL with its version path, e.g. https://api.acme.org/v1
                         #   (not .../chat/completions: the host appends the request path itself)
  model: ~               # REQUIRED: the model name the API serves (the requests' "model"), e.g. acme-chem-7b
  api: chat              # chat: POST <url>/chat/completions | completions: <url>/completions (base models)
  # The variable a maintainer puts your API key in (send the key privately); delete it for an API without one.
  api_key_env: {key_env}
  architecture: decoder  # decoder | encoder-decoder | non-neural: whatever serves the API (not encoder)
  capabilities: [generate]  # an endpoint is only asked to generate
  # inputs: [text, image]  # optional: a model that reads images too (sent as image_url parts; api: chat)
  max_requests: 20000    # hard budget of one run (one track x one data set) in requests, retries included
  max_concurrency: 4     # requests in flight at once (1-64)
  timeout_s: 60          # seconds one request may take in all (at most 600)
  # max_tokens_total: 5000000  # optional: hard budget of one run in tokens (prompt + completion)
  # price_per_million_tokens: {{input: 3.0, output: 15.0}}  # optional: US$ per million tokens (cost shown)

# --- Prompts ----------------------------------------------------------------------------------------------
tokenizer:
  prompt_prefix: ""      # text put before every prompt, e.g. "Answer with the answer only. "

# --- Declarations -------------------------------------------------------------------------------------------
training_data: []        # what it was trained on: free text, {{dataset: esol}} or {{corpus: uspto}}
# tracks: [consistency]  # generative tracks to run; default: every track the capabilities allow
# reference: false       # true: not a model but a ceiling/floor/tool, shown on the boards, never ranked
# reference_note: ""     # with reference: true, one line on why it is a reference (at most 300 characters)
"""

#: The kinds of manifest ``new-submission --kind`` writes, and the template of each.
TEMPLATES: dict[str, str] = {"huggingface": TEMPLATE, "endpoint": ENDPOINT_TEMPLATE}
KINDS: tuple[str, ...] = tuple(TEMPLATES)
#: The kind written without ``--kind``: weights from the Hugging Face hub, as before kinds existed.
DEFAULT_KIND = "huggingface"
#: The placeholder fields of each kind (YAML paths): each fails validation, with one error, until filled.
PLACEHOLDERS: dict[str, tuple[str, ...]] = {
    "huggingface": PLACEHOLDER_FIELDS,
    "endpoint": ("name", "authors", "contact", "license", "model.url", "model.model"),
}


class ScaffoldError(ValueError):
    """The id is not a valid submission id, or the submission already exists."""


@dataclass(frozen=True)
class Scaffolded:
    """What :func:`write_submission` wrote."""

    submission_id: str
    path: Path


def render(submission_id: str, kind: str = DEFAULT_KIND) -> str:
    r"""Return the template of ``kind`` filled in for ``submission_id`` (not validated: see write_submission).

    Examples
    --------
    >>> "id: acme-chem " in render("acme-chem")
    True
    >>> "  api_key_env: CHEMROBUST_KEY_ACME_API\n" in render("acme-api", "endpoint")
    True
    """
    return TEMPLATES[kind].format(id=submission_id, key_env=endpoint_key_env(submission_id))


def write_submission(submission_id: str, *, root: Path, kind: str = DEFAULT_KIND) -> Scaffolded:
    """Write ``<root>/submissions/<id>/submission.yaml`` from the template of ``kind``.

    Parameters
    ----------
    submission_id : str
        The new submission's id: lowercase letters, digits and ``-``, 1-64 characters, starting and ending
        with a letter or digit. It becomes the folder name.
    root : pathlib.Path
        Repository root (the folder that holds ``submissions/``).
    kind : str
        One of :data:`KINDS`: ``huggingface`` (default) or ``endpoint``.

    Returns
    -------
    Scaffolded
        The id and the path of the written manifest.

    Raises
    ------
    ScaffoldError
        If the id is not a valid slug, is reserved by the site (:data:`leaderboard.reserved.RESERVED_IDS`)
        or ``submissions/<id>/`` already exists (nothing is overwritten). The message is one printable
        line that quotes the id clipped; or ``kind`` is not one of :data:`KINDS`.
    """
    if kind not in TEMPLATES:  # the command line offers only KINDS; a caller may not
        raise ScaffoldError(
            f"'{clip(printable(str(kind), collapse=False), 40)}' is not a kind of submission; choose one of "
            f"{', '.join(KINDS)}."
        )
    if not re.fullmatch(ID_PATTERN, submission_id):
        raise ScaffoldError(
            f"'{clip(printable(submission_id, collapse=False), 80)}' is not a valid submission id. Use "
            "lowercase letters, digits and '-', 1-64 characters, starting and ending with a letter or "
            "digit, e.g. 'acme-chem-7b'."
        )
    if is_reserved(submission_id):
        raise ScaffoldError(
            f"'{submission_id}' is reserved: the site uses it for a page or folder (reserved: "
            f"{', '.join(sorted(RESERVED_IDS))}). Choose another id, e.g. 'acme-{submission_id}'."
        )
    folder = Path(root) / "submissions" / submission_id
    if folder.exists():
        raise ScaffoldError(
            f"{folder} already exists; nothing was written. Choose another id, or edit "
            f"{folder / MANIFEST_NAME} directly."
        )
    folder.mkdir(parents=True)
    path = folder / MANIFEST_NAME
    path.write_text(render(submission_id, kind), encoding="utf-8")
    return Scaffolded(submission_id, path)


def next_steps(submission_id: str, kind: str = DEFAULT_KIND) -> str:
    """Return the numbered next steps printed after scaffolding a manifest of ``kind`` (plain text)."""
    where = f"submissions/{submission_id}/{MANIFEST_NAME}"
    if kind == "endpoint":
        other = [
            "     Send your API key to the maintainers privately; they put it in "
            f"{endpoint_key_env(submission_id)}.",
            f"     What a run would send (nothing is sent): python -m leaderboard.execution.endpoint_runner "
            f"submissions/{submission_id} --dataset pubchem-names",
        ]
    else:
        other = [
            "     Other weight sources (pip, local, none) or an adapter class: see submissions/README.md."
        ]
    return "\n".join(
        [
            f"Next steps for {submission_id}:",
            f"  1. Fill in {where}: every field marked REQUIRED ({', '.join(PLACEHOLDERS[kind])}).",
            *other,
            f"  2. Check it (nothing is run, only read):   nox -s validate -- submissions/{submission_id}",
            f"  3. Commit on a branch:   git switch -c add-{submission_id}"
            f" && git add submissions/{submission_id} && git commit -m 'Add {submission_id}'",
            "  4. See the report your pull request will get:   "
            "nox -s validate -- --changed-since main --format markdown",
            "  5. Push and open a pull request with the 'submission' template. A bot comments the same",
            "     report; a maintainer then evaluates it in the sandbox and posts its scores and rank.",
            "  The whole path, step by step: CONTRIBUTING.md.",
        ]
    )

"""``model.source: endpoint`` in the manifest: a valid one loads, each broken one names field and fix.

The key's variable is tied to the submission id (``CHEMROBUST_KEY_<ID>``): a manifest cannot have the host
send another secret of the maintainer's to an address it chooses.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from leaderboard.intake.endpoints import EndpointModel, endpoint_key_env
from leaderboard.intake.manifest import ManifestError, load_submission

ID = "acme-api"


def _manifest() -> dict:
    return {
        "id": ID, "name": "ACME API", "authors": ["Ada"], "contact": "ada@example.org", "license": "mit",
        "model": {"source": "endpoint", "url": "https://api.example.org/v1", "model": "acme-chem-7b",
                  "architecture": "decoder", "capabilities": ["generate"],
                  "api_key_env": "CHEMROBUST_KEY_ACME_API", "max_requests": 20000},
    }  # fmt: skip


def _load(tmp_path: Path, edit: Callable[[dict], object] = lambda m: None):
    manifest = _manifest()
    edit(manifest)
    folder = tmp_path / ID
    folder.mkdir(exist_ok=True)
    (folder / "submission.yaml").write_text(yaml.safe_dump(manifest))
    return load_submission(folder)


def test_a_valid_endpoint_manifest_loads_with_its_defaults(tmp_path) -> None:
    sub = _load(tmp_path)
    assert isinstance(sub.model, EndpointModel)
    assert (sub.model.api, sub.model.max_concurrency, sub.model.timeout_s, sub.model.max_tokens_total) == (
        "chat", 4, 60.0, None,
    )  # fmt: skip
    assert sub.selected_tracks() == ["captioning", "consistency", "identity_blinded", "prompt_robustness"]
    assert endpoint_key_env("acme-gpt-4") == "CHEMROBUST_KEY_ACME_GPT_4"
    local = _load(
        tmp_path, lambda m: m["model"].update(url="http://127.0.0.1:8000/v1")
    )  # a key over loopback
    assert local.model.url == "http://127.0.0.1:8000/v1"
    keyless = _load(tmp_path, lambda m: m["model"].update(url="http://lab.example.org/v1", api_key_env=None))
    assert keyless.model.api_key_env is None  # plain http is fine without a key


CASES = {
    "embed": (lambda m: m["model"].update(capabilities=["embed", "generate"]), "model.capabilities",
              "text generation only", "capabilities: [generate]"),
    "encoder": (lambda m: m["model"].update(architecture="encoder"), "model.architecture",
                "an encoder cannot generate", "Use decoder"),
    "adapter": (lambda m: m.update(adapter="transformers"), "adapter", "does not apply to an endpoint",
                "Remove it"),
    "requirements": (lambda m: m.update(requirements=["selfies==2.1.1"]), "requirements",
                     "no submission code runs", "Remove it"),
    "chat_template": (lambda m: m.update(tokenizer={"chat_template": True}), "tokenizer.chat_template",
                      "does not apply", "model.api: chat"),
    "amore": (lambda m: m.update(tracks=["amore"]), "tracks", "needs capability 'embed'", "Remove the track"),
    "other secret": (lambda m: m["model"].update(api_key_env="GITHUB_TOKEN"), "model.api_key_env",
                     "must be 'CHEMROBUST_KEY_ACME_API'", "Set 'model.api_key_env: CHEMROBUST_KEY_ACME_API'"),
    "cleartext": (lambda m: m["model"].update(url="http://api.example.org/v1"), "model.url",
                  "the key would travel unencrypted", "https://"),
    "userinfo": (lambda m: m["model"].update(url="https://user:pw@api.example.org/v1"), "model.url",
                 "should match pattern", "no user name, password"),
    "query": (lambda m: m["model"].update(url="https://api.example.org/v1?key=x"), "model.url",
              "should match pattern", "query"),
    "api": (lambda m: m["model"].update(api="responses"), "model.api", "'chat' or 'completions'",
            "Use 'chat'"),
    "concurrency": (lambda m: m["model"].update(max_concurrency=65), "model.max_concurrency",
                    "less than or equal to 64", "1 to 64"),
    "timeout": (lambda m: m["model"].update(timeout_s=0), "model.timeout_s", "greater than 0", "at most 600"),
    "no budget": (lambda m: m["model"].pop("max_requests"), "model.max_requests", "required but missing",
                  "retries count, cached answers do not"),
    "tokens": (lambda m: m["model"].update(max_tokens_total=0), "model.max_tokens_total",
               "greater than or equal to 1", "or remove it"),
    "model name": (lambda m: m["model"].update(model=""), "model.model", "at least 1 character",
                   "model name the API serves"),
    "a key value": (lambda m: m["model"].update(api_key="sk-live"), "model.api_key", "unknown key",
                    "Remove it"),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_each_broken_endpoint_manifest_names_the_field_and_the_fix(tmp_path, case) -> None:
    edit, field, message, fix = CASES[case]
    with pytest.raises(ManifestError) as info:
        _load(tmp_path, edit)
    (problem,) = info.value.problems
    assert problem.field == field, str(problem)
    assert message in problem.message, str(problem)
    assert fix in problem.fix, str(problem)

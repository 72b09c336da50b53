"""SMILES pre-tokenizers: the atom-level regular expressions many SMILES models were trained with.

A plain ``BertTokenizer`` on such a model's ``vocab.txt`` splits SMILES wrongly (it lower-cases ``Cl`` to
``cl``, breaks ``[C@@H]`` at its brackets, and glues ``c1ccccc1`` into one unknown word), so a model trained
on regex tokens sees text it never saw. With ``tokenizer.pre_tokenizer`` in the manifest, the
``transformers`` adapter tokenizes as these models were trained: the regex splits the string into tokens,
each token is looked up whole in ``vocab.txt`` (an unknown token is ``[UNK]``), and ``[CLS] … [SEP]`` frame
the sequence — exactly ``rxnfp.tokenization.SmilesTokenizer`` (Schwaller et al. 2021) and rxnmapper's
tokenizer, which are BERT tokenizers whose ``_tokenize`` is ``re.findall`` of the pattern.

Registered patterns (:data:`PRE_TOKENIZERS`):

- ``smiles-regex``: the regular expression of Schwaller et al., "Molecular Transformer" (ACS Cent. Sci.
  2019), as shipped by ``rxnfp`` 0.1.0 (``rxnfp.tokenization.SMI_REGEX_PATTERN``): bracket atoms whole,
  ``Br``/``Cl`` as one token, ring closures ``%nn`` and ``%(nnn)`` whole, ``>>`` (reaction arrow) and ``|``
  whole, every other character its own token.
- ``rxnmapper-regex``: ``rxnmapper`` 0.4.3's copy (``rxnmapper.smiles_utils.SMI_REGEX_PATTERN``), the same
  without ``%(nnn)`` and ``|`` (which it drops).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

import numpy as np

#: Schwaller et al. 2019; identical to ``rxnfp.tokenization.SMI_REGEX_PATTERN`` (rxnfp 0.1.0).
SMILES_REGEX = (
    r"(\%\([0-9]{3}\)|\[[^\]]+]|Br?|Cl?|N|O|S|P|F|I|b|c|n|o|s|p|\||\(|\)|\.|=|#|-|\+|\\|\/|:|~|@|\?|>>?|\*|\$"
    r"|\%[0-9]{2}|[0-9])"
)
#: Identical to ``rxnmapper.smiles_utils.SMI_REGEX_PATTERN`` (rxnmapper 0.4.3).
RXNMAPPER_REGEX = (
    r"(\[[^\]]+]|Br?|Cl?|N|O|S|P|F|I|b|c|n|o|s|p|\(|\)|\.|=|#|-|\+|\\|\/|:|~|@|\?|>>?|\*|\$|\%[0-9]{2}|[0-9])"
)
#: Pre-tokenizer name → regular expression (the manifest's ``tokenizer.pre_tokenizer``).
PRE_TOKENIZERS: Mapping[str, str] = MappingProxyType(
    {"smiles-regex": SMILES_REGEX, "rxnmapper-regex": RXNMAPPER_REGEX}
)
#: The special tokens a BERT vocabulary names, in the roles the encoding uses.
SPECIAL = {"cls": "[CLS]", "sep": "[SEP]", "pad": "[PAD]", "unk": "[UNK]"}


def pre_tokenize(text: str, name: str = "smiles-regex") -> list[str]:
    """Split ``text`` into the tokens of pre-tokenizer ``name``.

    Characters no pattern matches are dropped, as ``re.findall`` drops them in the published tokenizers.

    Examples
    --------
    >>> pre_tokenize("C[C@@H](Cl)c1ccccc1Br")
    ['C', '[C@@H]', '(', 'Cl', ')', 'c', '1', 'c', 'c', 'c', 'c', 'c', '1', 'Br']
    """
    return re.findall(PRE_TOKENIZERS[name], text)


class VocabTokenizer:
    """A regex pre-tokenizer over a one-token-per-line ``vocab.txt`` (BERT's file format).

    Parameters
    ----------
    vocab_file : pathlib.Path
        The vocabulary, one token per line; a token's id is its line number (from 0).
    name : str
        A key of :data:`PRE_TOKENIZERS`.

    Raises
    ------
    ValueError
        If the pre-tokenizer is unknown, or the vocabulary lacks a special token.
    """

    def __init__(self, vocab_file: Path, name: str = "smiles-regex") -> None:
        if name not in PRE_TOKENIZERS:
            raise ValueError(f"unknown pre-tokenizer {name!r}; choose one of {sorted(PRE_TOKENIZERS)}")
        self.name = name
        self.pattern = re.compile(PRE_TOKENIZERS[name])
        lines = Path(vocab_file).read_text(encoding="utf-8").splitlines()
        self.vocab: dict[str, int] = {}
        for index, token in enumerate(lines):
            self.vocab.setdefault(token.strip(), index)  # the first line of a repeated token wins, as in BERT
        missing = [t for t in SPECIAL.values() if t not in self.vocab]
        if missing:
            raise ValueError(f"{vocab_file}: the vocabulary lacks the special token(s) {', '.join(missing)}")
        self.ids = {role: self.vocab[token] for role, token in SPECIAL.items()}
        self.pad_token_id = self.ids["pad"]

    def tokenize(self, text: str) -> list[str]:
        """Return the pre-tokenizer's tokens of ``text`` (before the vocabulary lookup)."""
        return self.pattern.findall(text)

    def token_ids(self, text: str) -> list[int]:
        """Return the ids of ``text``'s tokens, without special tokens; an unknown token is ``[UNK]``."""
        unk = self.ids["unk"]
        return [self.vocab.get(t, unk) for t in self.tokenize(text)]

    def encode(self, texts: Sequence[str], max_length: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Encode a batch: ``[CLS] tokens [SEP]``, cut to ``max_length`` and padded on the right.

        Returns
        -------
        batch : dict of numpy.ndarray
            ``input_ids``, ``attention_mask``, ``token_type_ids`` (zeros) and ``special_tokens_mask``, each
            ``(len(texts), longest)`` int64.
        truncated : numpy.ndarray
            bool per text: it had more than ``max_length - 2`` tokens (the rest was cut).
        """
        keep = max(max_length - 2, 0)
        rows = [self.token_ids(t) for t in texts]
        truncated = np.array([len(r) > keep for r in rows], dtype=bool)
        framed = [[self.ids["cls"], *r[:keep], self.ids["sep"]] for r in rows]
        width = max((len(r) for r in framed), default=2)
        ids = np.full((len(framed), width), self.pad_token_id, dtype=np.int64)
        mask = np.zeros_like(ids)
        special = np.ones_like(ids)  # padding counts as special, as in transformers' tokenizers
        for i, row in enumerate(framed):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
            special[i, 1 : len(row) - 1] = 0
        batch = {
            "input_ids": ids,
            "attention_mask": mask,
            "token_type_ids": np.zeros_like(ids),
            "special_tokens_mask": special,
        }
        return batch, truncated

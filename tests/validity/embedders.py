"""Synthetic embedders for the embedding tracks' degenerate-answerer test (issue 28, deliverable 1).

The embedding counterpart of :mod:`tests.validity.answerers`: real :class:`~evaluators.adapters.
EmbeddingAdapter` subclasses (test code, run through the tracks' own ``run`` and ``score``).

Honest: ``oracle`` — the Morgan fingerprint reference (``evaluators/adapters/morgan_fingerprint.py``), the
same vector for every way of writing a molecule; ``noisy_oracle`` — the same fingerprint, except that 30 %
of the *strings* (drawn per string, so independently for a molecule and each of its rewrites) get a random
vector instead (the fingerprint's bits shuffled, same density): an honest but imperfect model, the
counterpart of the generative noisy oracle (right on 70 %, random otherwise); ``char_ngram`` — the
character n-gram baseline of ``submissions/char-ngram-baseline`` through the ``custom`` adapter (measured,
not asserted: it reads the string, not the molecule).

Degenerate: ``constant`` (one vector for every string), ``random`` (a Gaussian vector per string, seeded by
the string: a rewrite of a molecule gets an unrelated vector), ``length`` (``[len(s)]``) and
``length_onehot`` (a one-hot of ``len(s)``). None of them reads the molecule.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from evaluators.adapters import EmbeddingAdapter, Embeddings, ModelConfig, load_adapter

ROOT = Path(__file__).resolve().parents[2]
#: Share of strings whose fingerprint the noisy oracle replaces by a random vector.
NOISE = 0.3
#: Width of the degenerate embedders' vectors (one-hot: lengths at or above it share the last slot).
WIDTH = 256


def _rng(name: str, text: str) -> np.random.Generator:
    """A generator seeded by (embedder, string): the same string always gets the same draw."""
    return np.random.default_rng(int.from_bytes(hashlib.sha256(f"{name}\0{text}".encode()).digest()[:8]))


class _Degenerate(EmbeddingAdapter):
    """An embedder computed from the string alone by :meth:`vector` (never from the molecule)."""

    name = ""

    def __init__(self) -> None:
        super().__init__(ModelConfig(adapter="custom", architecture="non-neural"))

    def vector(self, text: str) -> np.ndarray:
        """The embedding of one string."""
        raise NotImplementedError

    def embed(self, strings: Sequence[str]) -> Embeddings:  # noqa: D102
        return Embeddings({"last": np.stack([self.vector(s) for s in strings]).astype(np.float32)})


class ConstantEmbedder(_Degenerate):
    """The same vector (all ones) for every string."""

    name = "constant"

    def vector(self, text: str) -> np.ndarray:  # noqa: D102
        return np.ones(WIDTH)


class RandomEmbedder(_Degenerate):
    """A standard Gaussian vector per string, seeded by the string (a rewrite gets an unrelated one)."""

    name = "random"

    def vector(self, text: str) -> np.ndarray:  # noqa: D102
        return _rng(self.name, text).standard_normal(WIDTH)


class LengthEmbedder(_Degenerate):
    """The string's length as the only feature, ``[len(s)]``."""

    name = "length"

    def vector(self, text: str) -> np.ndarray:  # noqa: D102
        return np.array([float(len(text))])


class LengthOneHotEmbedder(_Degenerate):
    """A one-hot of the string's length (``min(len(s), WIDTH - 1)``)."""

    name = "length_onehot"

    def vector(self, text: str) -> np.ndarray:  # noqa: D102
        out = np.zeros(WIDTH)
        out[min(len(text), WIDTH - 1)] = 1.0
        return out


def morgan() -> EmbeddingAdapter:
    """The Morgan fingerprint reference, built by the adapter registry as a manifest would."""
    return load_adapter(ModelConfig(adapter="morgan_fingerprint", architecture="non-neural"))


class NoisyMorganEmbedder(EmbeddingAdapter):
    """The Morgan reference, with :data:`NOISE` of the strings (drawn per string) given a random vector.

    The random vector is the string's own fingerprint with its bits shuffled (seeded by the string): same
    number of bits set, so it is neither nearer nor farther from everything than a true fingerprint.
    """

    def __init__(self) -> None:
        super().__init__(ModelConfig(adapter="custom", architecture="non-neural"))
        self.inner = morgan()

    def embed(self, strings: Sequence[str]) -> Embeddings:  # noqa: D102
        out = self.inner.embed(strings).layers["last"].copy()
        for row, text in enumerate(strings):
            rng = _rng("noisy_oracle", text)
            if rng.random() < NOISE:
                out[row] = rng.permutation(out[row])
        return Embeddings({"last": out})


def char_ngram() -> EmbeddingAdapter:
    """The character n-gram baseline submission, loaded by the ``custom`` adapter from its own folder."""
    folder = ROOT / "submissions" / "char-ngram-baseline"
    config = ModelConfig(adapter="custom", architecture="non-neural", submission_dir=folder,
                         code={"file": "ngram.py", "object": "CharNgramAdapter"},
                         options={"n_min": 1, "n_max": 3, "buckets": 1024})  # fmt: skip
    return load_adapter(config)


#: Honest embedders: the oracle and the noisy oracle are asserted; the n-gram baseline is measured.
HONEST: dict[str, Callable[[], EmbeddingAdapter]] = {
    "oracle": morgan,
    "noisy_oracle": NoisyMorganEmbedder,
    "char_ngram": char_ngram,
}
#: Embedders that never read the molecule: each must lose every headline criterion to the noisy oracle.
DEGENERATE: dict[str, Callable[[], EmbeddingAdapter]] = {
    cls.name: cls for cls in (ConstantEmbedder, RandomEmbedder, LengthEmbedder, LengthOneHotEmbedder)
}

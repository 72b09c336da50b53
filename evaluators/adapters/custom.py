"""``custom``: an adapter class that lives in the submission's own folder.

The manifest names ``code.file`` (a Python file inside the submission folder) and ``code.object`` (a class
taking a :class:`~evaluators.adapters.ModelConfig`). The class must subclass one of the capability bases
(for example :class:`~evaluators.adapters.EmbeddingAdapter`). This code runs only inside the sandbox.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from typing import Any, ClassVar

from evaluators.adapters import (
    ADAPTERS,
    Adapter,
    Completion,
    EmbeddingAdapter,
    Embeddings,
    GenerationRequest,
    GenerativeAdapter,
    ModelConfig,
    as_completions,
)


def _load_class(config: ModelConfig) -> type[Adapter]:
    if not config.code:
        raise ValueError("adapter 'custom' needs 'code.file' and 'code.object' in the manifest")
    folder = config.submission_dir.resolve()
    path = (folder / config.code["file"]).resolve()
    if folder not in path.parents or not path.is_file():
        raise FileNotFoundError(f"custom code {config.code['file']!r} is not a file inside {folder}")
    spec = importlib.util.spec_from_file_location(f"submission_code.{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    cls = getattr(module, config.code["object"], None)
    if not (isinstance(cls, type) and issubclass(cls, Adapter)):
        raise TypeError(
            f"{config.code['file']}: {config.code['object']!r} must be a class deriving from "
            "evaluators.adapters.EmbeddingAdapter or GenerativeAdapter"
        )
    return cls


@ADAPTERS.register("custom")
class CustomAdapter(EmbeddingAdapter, GenerativeAdapter):
    """Delegates to the submission's own adapter class and exposes exactly its capabilities."""

    #: What a submission's class may offer (the manifest check reads this); an instance narrows it to
    #: the capabilities of the class it loaded.
    capabilities: ClassVar[frozenset[str]] = frozenset({"embed", "generate"})

    def __init__(self, config: ModelConfig) -> None:
        super().__init__(config)
        self.inner = _load_class(config)(config)
        self.capabilities = self.inner.capabilities

    def embed(self, strings: Sequence[str]) -> Embeddings:  # noqa: D102
        if not isinstance(self.inner, EmbeddingAdapter):
            raise TypeError("the submission's adapter has no 'embed' capability")
        self.inner.progress = self.progress
        return self.inner.embed(strings)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:  # noqa: D102
        if not isinstance(self.inner, GenerativeAdapter):
            raise TypeError("the submission's adapter has no 'generate' capability")
        self.inner.progress = self.progress
        return as_completions(requests, self.inner.generate(requests))

    def prepare(self, requests: Sequence[GenerationRequest]) -> None:  # noqa: D102
        if isinstance(self.inner, GenerativeAdapter):
            self.inner.progress = self.progress
            self.inner.prepare(requests)

    def describe(self) -> dict[str, Any]:  # noqa: D102
        return {"class": type(self.inner).__name__, **self.inner.describe()}

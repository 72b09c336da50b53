"""A small generic registry for tracks, augmentations, model adapters and data sets.

A repeated name raises; a miss raises ``KeyError`` listing close matches. Plug-in modules are found with
``pkgutil`` so that a new track, augmentation or adapter is one file with a decorator and no second mapping.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    """Name → object mapping with discovery of plug-in modules.

    Parameters
    ----------
    kind : str
        What is registered (``"augmentation"``, ``"track"`` …), used in error messages.
    package : str, optional
        Dotted package whose modules are imported on first lookup, so that their decorators run.
    """

    def __init__(self, kind: str, package: str | None = None) -> None:
        self.kind = kind
        self._package = package
        self._items: dict[str, T] = {}
        self._discovered = package is None

    def register(self, name: str) -> Callable[[T], T]:
        """Return a decorator that registers its argument under ``name``.

        Raises
        ------
        ValueError
            If ``name`` is already registered.
        """

        def decorator(obj: T) -> T:
            if name in self._items:
                raise ValueError(f"{self.kind} {name!r} is registered twice")
            self._items[name] = obj
            return obj

        return decorator

    def _discover(self) -> None:
        if self._discovered:
            return
        self._discovered = True
        package = importlib.import_module(self._package)
        for info in pkgutil.iter_modules(package.__path__):
            if not info.name.startswith("_"):
                importlib.import_module(f"{self._package}.{info.name}")

    def get(self, name: str) -> T:
        """Return the object registered as ``name``.

        Raises
        ------
        KeyError
            With the close matches among the registered names.
        """
        self._discover()
        try:
            return self._items[name]
        except KeyError:
            close = difflib.get_close_matches(name, self._items, n=3)
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            raise KeyError(
                f"unknown {self.kind} {name!r}.{hint} Known: {', '.join(sorted(self._items))}"
            ) from None

    def names(self) -> list[str]:
        """Return the registered names, sorted."""
        self._discover()
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        self._discover()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

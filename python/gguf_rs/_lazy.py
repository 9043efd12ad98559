"""A list that fills itself on first use.

The per-element ``parts`` of a 150,000-string vocabulary are 300,000 numpy
views: building them is what makes gguf-py's reader slow to open, and most
programs never look at them. gguf-py's ``ReaderField`` is a ``NamedTuple``
whose ``parts`` and ``data`` are plain lists; ours are this ``list`` subclass,
which builds its items the first time anything reads it and from then on is
an ordinary list.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

# One lock for every list's first fill: another thread reading the same list
# meanwhile waits instead of seeing it half built. Reentrant, since a loader
# may read another lazy list.
_FILL = threading.RLock()


class LazyList(list):
    """A ``list`` whose items come from ``loader()`` on first access."""

    __slots__ = ("_loader",)

    def __init__(self, loader: Callable[[], list[Any]]):
        super().__init__()
        self._loader: Callable[[], list[Any]] | None = loader

    def _load(self) -> None:
        if self._loader is None:
            return
        with _FILL:
            loader = self._loader
            if loader is not None:
                list.extend(self, loader())
                self._loader = None

    def __reduce__(self):  # pickles (and copies) as a plain list
        self._load()
        return (list, (list(list.__iter__(self)),))


def _forward(name: str) -> Callable[..., Any]:
    method = getattr(list, name)

    def forwarded(self: LazyList, *args: Any, **kwargs: Any) -> Any:
        self._load()
        return method(self, *args, **kwargs)

    forwarded.__name__ = name
    forwarded.__doc__ = method.__doc__
    return forwarded


for _name in (
    "__len__", "__getitem__", "__setitem__", "__delitem__", "__iter__", "__reversed__",
    "__contains__", "__repr__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
    "__add__", "__iadd__", "__mul__", "__rmul__", "__imul__", "__sizeof__",
    "append", "extend", "insert", "pop", "remove", "index", "count", "clear", "copy",
    "sort", "reverse",
):
    setattr(LazyList, _name, _forward(_name))
del _name
LazyList.__hash__ = None  # type: ignore[assignment]

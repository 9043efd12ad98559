"""gguf_rs: gguf-py's ``GGUFReader``, ``GGUFWriter`` and ``gguf.quants``
backed by gguf-kit, and the gguf-kit tool's commands as Python calls.

Two ways to use it:

- import ours where you would import gguf-py's::

      from gguf_rs import GGUFReader, GGUFWriter
      from gguf_rs.quants import dequantize, quantize

- or switch every user of gguf-py in the process (gguf-py's scripts,
  transformers, ComfyUI-GGUF, ...) at once, and back::

      import gguf_rs
      gguf_rs.install()      # gguf.GGUFReader, GGUFWriter, quants.(de)quantize are ours
      gguf_rs.uninstall()    # gguf-py's again

gguf-kit's own view of a model is ``gguf_rs.open(source)``: metadata as a
dict of Python values, tensors with ``to_numpy()``, ``summary()`` and
``estimate()``. ``gguf_rs.Editor(path)`` edits a file's metadata in place,
``gguf_rs.ModelEditor(path)`` a whole (split) model's;
``gguf_rs.Builder()`` writes a new file from values and numpy arrays.
The CLI's commands are calls too: ``gguf_rs.import_hf(dir, out, type=...)``
(``gguf import``), ``gguf_rs.quantize(input, output, preset, ...)``
(``gguf quantize``), ``gguf_rs.imatrix(path)`` (importance matrices), and
``model.tokenizer()`` (``encode``, ``decode``, ``token_to_piece``); and
``model.chat(messages)`` renders a conversation with the model's chat
template as llama.cpp does (``gguf chat``).

Files gguf-kit refuses raise :class:`GGUFError`, a ``ValueError`` with the
library's message and the byte offset where the file is wrong; a file that
cannot be opened raises the ``OSError`` Python's ``open()`` raises for it
(``FileNotFoundError``, ``PermissionError``, ``IsADirectoryError``, ...),
on every path, as gguf-py's ``GGUFReader`` does. ``__version__`` is the
package's version (the gguf-kit crate's).
"""

from __future__ import annotations

from typing import Any

from . import quants
from ._native import Editor, GGUFError, ModelEditor, __version__
from .builder import Builder
from .model import ChatPrompt, Model, Tensor, open
from .reader import GGUFReader, ReaderField, ReaderTensor
from .commands import Imatrix, architectures, imatrix, import_hf, quantize
from .tokenizer import Tokenizer
from .writer import GGUFWriter

__all__ = [
    "Builder",
    "ChatPrompt",
    "Editor",
    "GGUFError",
    "GGUFReader",
    "GGUFWriter",
    "Imatrix",
    "Model",
    "ModelEditor",
    "ReaderField",
    "ReaderTensor",
    "Tensor",
    "Tokenizer",
    "architectures",
    "imatrix",
    "import_hf",
    "__version__",
    "install",
    "installed",
    "open",
    "quantize",
    "quants",
    "uninstall",
]

# What install() replaced: (module, attribute, gguf-py's object), in order.
_saved: list[tuple[Any, str, Any]] = []


def _targets() -> list[tuple[Any, str, Any]]:
    import gguf
    import gguf.gguf_reader
    import gguf.quants
    import gguf.gguf_writer

    targets = [
        (gguf, "GGUFReader", GGUFReader),
        (gguf.gguf_reader, "GGUFReader", GGUFReader),
        (gguf, "dequantize", quants.dequantize),
        (gguf.quants, "dequantize", quants.dequantize),
    ]
    targets += [
        (gguf, "GGUFWriter", GGUFWriter),
        (gguf.gguf_writer, "GGUFWriter", GGUFWriter),
        (gguf.quants, "quantize", quants.quantize),
    ]
    if hasattr(gguf, "quantize"):
        targets.append((gguf, "quantize", quants.quantize))
    return targets


def install() -> None:
    """Makes ``gguf.GGUFReader``, ``gguf.GGUFWriter``,
    ``gguf.quants.dequantize`` and ``gguf.quants.quantize`` (and their
    re-exports in ``gguf``) ours, for every module that looks them up from
    now on; ``from gguf import GGUFReader`` done before keeps gguf-py's.
    Calling it twice is harmless; :func:`uninstall` undoes it."""
    if _saved:
        return
    for module, name, ours in _targets():
        _saved.append((module, name, getattr(module, name)))
        setattr(module, name, ours)


def uninstall() -> None:
    """Puts gguf-py's own ``GGUFReader``, ``GGUFWriter``, ``dequantize`` and
    ``quantize`` back."""
    while _saved:
        module, name, theirs = _saved.pop()
        setattr(module, name, theirs)


def installed() -> bool:
    """True between :func:`install` and :func:`uninstall`."""
    return bool(_saved)

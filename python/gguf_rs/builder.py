"""``gguf_rs.Builder``: a new GGUF file from values and numpy arrays,
written by gguf-kit's ``write::Builder``.

>>> import numpy as np, gguf_rs
>>> b = gguf_rs.Builder()
>>> b.set("general.architecture", "llama").set("llama.context_length", 4096, type="u32")  # doctest: +ELLIPSIS
<gguf_rs.builder.Builder object at ...>
>>> b.add_tensor("w", np.ones((2, 32), dtype=np.float32), type="Q8_0")  # doctest: +ELLIPSIS
<gguf_rs.builder.Builder object at ...>
>>> len(b.to_bytes()) > 0
True
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._native import Builder as _NativeBuilder
from ._native import ggml_type_id

__all__ = ["Builder"]

# numpy dtypes stored as they are, and the GGML type each becomes.
_NATIVE = {
    np.dtype(np.float32): "F32",
    np.dtype(np.float16): "F16",
    np.dtype(np.float64): "F64",
    np.dtype(np.int8): "I8",
    np.dtype(np.int16): "I16",
    np.dtype(np.int32): "I32",
    np.dtype(np.int64): "I64",
}


def _type_id(ty: Any) -> int:
    """A GGML type id from a name (``"Q4_K"``), an id, or a gguf-py
    ``GGMLQuantizationType``."""
    if isinstance(ty, str):
        return ggml_type_id(ty)
    return int(ty)


def _dims(shape: Sequence[int]) -> list[int]:
    """numpy's shape (rows last) as ggml's dims (innermost first)."""
    return [int(d) for d in reversed(tuple(shape))]


class Builder:
    """A GGUF file being built: metadata with :meth:`set`, tensors with
    :meth:`add_tensor`, then :meth:`write` (one pass, or data first and
    header last), :meth:`write_metadata_first` or :meth:`to_bytes`.
    Everything is checked by the library as it is added (a bad key, shape,
    type or data size raises :class:`gguf_rs.GGUFError` at once); a write
    that fails leaves the target as it was and no temporary file."""

    def __init__(self, *, version: int = 3, big_endian: bool = False, alignment: int | None = None):
        """An empty file: GGUF ``version`` 3 (or 1, 2), little-endian unless
        ``big_endian``, ``alignment`` 32 unless given (a power of two)."""
        self._native = _NativeBuilder(version, big_endian, alignment)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Builder:
        """A builder holding everything of the model at ``path`` (the
        library's ``Builder::from_model``): its version, byte order, every
        metadata entry with its GGUF type, in order, and every tensor, whose
        data is read from the file only when written (never held in
        memory). Any shard of a split model gives the whole model, merged,
        without its ``split.*`` keys. Writing it unchanged gives the file
        back byte for byte when it was laid out canonically; change it with
        :meth:`set`, :meth:`remove`, :meth:`rename_key`,
        :meth:`add_tensor`, :meth:`remove_tensor`, :meth:`rename_tensor`
        and :meth:`requantize_tensor` first. Writing over ``path`` itself
        is safe (the write is atomic; the source stays mapped)."""
        builder = cls.__new__(cls)
        builder._native = _NativeBuilder.from_file(path)
        return builder

    def set(self, key: str, value: Any, type: str | None = None) -> Builder:  # noqa: A002 - the GGUF word
        """Sets ``key``; ``type`` names the GGUF type (``"u32"``, ``"f64"``,
        ...; for a list, its elements' type), else the Python value implies
        it (bool, int as i32 (i64, u64 when too large), float as f32, str,
        list). Returns the builder."""
        self._native.set(key, value, type)
        return self

    def remove(self, key: str) -> Builder:
        """Removes ``key`` (GGUFError when absent). Returns the builder."""
        self._native.remove(key)
        return self

    def add_tensor(
        self,
        name: str,
        data: np.ndarray | bytes,
        type: Any = None,  # noqa: A002 - the GGUF word
        shape: Sequence[int] | None = None,
    ) -> Builder:
        """Adds tensor ``name`` (``shape`` in numpy order, rows last, as
        gguf-py's ``tensor.data`` has it):

        - a float32, float16, float64, int8/16/32/64 array without ``type``
          (or with its own): stored as it is, shape from the array;
        - a float32 array with another ``type`` (``"BF16"``, ``"F16"``,
          ``"Q4_K"``, ...): quantized by the library when written;
        - raw bytes (``bytes`` or a uint8 array) with ``type`` and the
          tensor's element ``shape``: stored as they are (blocks in the
          file's byte order).

        ``type`` is a name, an id or a gguf-py ``GGMLQuantizationType``.
        Returns the builder."""
        if isinstance(data, (bytes, bytearray, memoryview)) or (
            isinstance(data, np.ndarray) and data.dtype == np.uint8 and type is not None
        ):
            if type is None or shape is None:
                raise ValueError(f"{name}: raw bytes need type= and the tensor's shape=")
            raw = data.tobytes() if isinstance(data, np.ndarray) else bytes(data)
            self._native.add_raw(name, _type_id(type), _dims(shape), raw)
            return self
        array = np.asarray(data)
        dims = _dims(shape if shape is not None else array.shape)
        own = _NATIVE.get(array.dtype)
        if own is not None and (type is None or _type_id(type) == ggml_type_id(own)):
            contiguous = np.ascontiguousarray(array)
            self._native.add_native(name, ggml_type_id(own), dims, contiguous.tobytes(), array.dtype.itemsize)
        elif type is not None:
            values = np.ascontiguousarray(array, dtype=np.float32)
            self._native.add_quantized(name, _type_id(type), dims, values.tobytes())
        else:
            raise TypeError(f"{name}: a {array.dtype} array needs type= (the GGML type to store it as)")
        return self

    def rename_key(self, old: str, new: str) -> Builder:
        """Renames key ``old`` to ``new``, keeping its place and value.
        Returns the builder."""
        self._native.rename_key(old, new)
        return self

    def remove_tensor(self, name: str) -> Builder:
        """Removes tensor ``name`` (GGUFError when absent); later tensors
        move up. Returns the builder."""
        self._native.remove_tensor(name)
        return self

    def rename_tensor(self, old: str, new: str) -> Builder:
        """Renames tensor ``old`` to ``new`` in place. Returns the builder."""
        self._native.rename_tensor(old, new)
        return self

    def requantize_tensor(self, name: str, type: Any) -> Builder:  # noqa: A002 - the GGUF word
        """Stores tensor ``name`` of the model read by :meth:`from_file` as
        ``type`` (a name, id or ``GGMLQuantizationType``): decoded and
        re-encoded by the library when written, a chunk of rows at a time.
        Returns the builder."""
        self._native.requantize_tensor(name, _type_id(type))
        return self

    def add_tensor_info(self, name: str, type: Any, shape: Sequence[int]) -> Builder:  # noqa: A002
        """Declares tensor ``name`` without data; :meth:`write_metadata_first`
        asks for its bytes when its turn comes. Returns the builder."""
        self._native.add_info(name, _type_id(type), _dims(shape))
        return self

    @property
    def keys(self) -> list[str]:
        """Metadata keys in order."""
        return self._native.keys()

    @property
    def tensor_names(self) -> list[str]:
        """Tensor names in order."""
        return self._native.tensor_names()

    def to_bytes(self) -> bytes:
        """The whole file in memory."""
        return self._native.to_bytes()

    def write(self, path: str | os.PathLike[str], mode: str = "single") -> int:
        """Writes the file to ``path`` atomically (a temporary file renamed
        over it) in ``mode`` ``"single"`` (header then data, one forward
        pass) or ``"reserve"`` (data first after a hole, the header last);
        both give the same bytes. Returns the file's length."""
        return self._native.write(path, mode)

    def write_metadata_first(
        self,
        path: str | os.PathLike[str],
        data: Callable[[str], bytes | np.ndarray] | None = None,
    ) -> int:
        """The third mode: the header first, then each tensor's data in
        order, from what :meth:`add_tensor` was given or, for a tensor
        declared with :meth:`add_tensor_info`, from ``data(name)`` (bytes
        exactly as stored, or an array whose bytes are). Atomic like
        :meth:`write`. Returns the file's length."""

        def bytes_of(name: str) -> bytes:
            if data is None:
                raise ValueError(f"tensor {name!r} was declared without data and no data callback was given")
            out = data(name)
            return out.tobytes() if isinstance(out, np.ndarray) else bytes(out)

        return self._native.write_metadata_first(path, bytes_of)

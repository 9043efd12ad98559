"""``GGUFReader``: gguf-py's reader, with the file parsed by gguf-kit.

Everything gguf-py 0.19's ``gguf.GGUFReader`` exposes is here with the same
values and types, built from gguf-py's own classes (``ReaderField``,
``ReaderTensor``, ``GGUFValueType``, ``GGMLQuantizationType``, ``GGUFEndian``):
``parts`` and ``tensor.data`` are numpy views into a memory map of the file,
so writes in mode ``'r+'`` land in the file. What differs (see
``python/README.md``): a file the library refuses raises ``GGUFError`` (a
``ValueError``) with the library's message and offset; ``parts`` of a field
are built on first access; ``contents()`` of an array is decoded in Rust, and
a nested array's comes back nested.
"""

from __future__ import annotations

import math
import os
import sys
from collections import OrderedDict
from typing import Any, Callable, Literal

import numpy as np
import numpy.typing as npt
from gguf.constants import GGMLQuantizationType, GGUFEndian, GGUFValueType
from gguf.gguf_reader import GGUFReader as _GgufPyReader
from gguf.gguf_reader import ReaderField, ReaderTensor

from ._lazy import LazyList
from ._native import NativeFile

__all__ = ["GGUFReader", "ReaderField", "ReaderTensor"]

# numpy element type of each GGUF value type id (strings' bytes as uint8).
_DTYPES: dict[int, Any] = {int(t): d for t, d in _GgufPyReader.gguf_scalar_to_np.items()}
_DTYPES[int(GGUFValueType.STRING)] = np.uint8

# Tensor types whose data gguf-py shows element-wise; others are raw bytes.
_ELEMENT_TYPES: dict[GGMLQuantizationType, Any] = {
    GGMLQuantizationType.F16: np.float16,
    GGMLQuantizationType.F32: np.float32,
    GGMLQuantizationType.F64: np.float64,
    GGMLQuantizationType.I8: np.int8,
    GGMLQuantizationType.I16: np.int16,
    GGMLQuantizationType.I32: np.int32,
    GGMLQuantizationType.I64: np.int64,
}


class _Field(ReaderField):
    """A ``ReaderField`` whose ``parts`` and ``data`` are built on first use
    and whose ``contents()`` of an array is decoded by the library."""

    def contents(self, index_or_slice: int | slice = slice(None)) -> Any:
        native = self.__dict__.get("_native")
        if native is None or not self.types or self.types[0] != GGUFValueType.ARRAY:
            return ReaderField.contents(self, index_or_slice)
        if isinstance(index_or_slice, int):
            return native.element(self.name, index_or_slice)
        if isinstance(index_or_slice, slice) and index_or_slice.step in (None, 1):
            # A window (gguf_dump shows the first six): decode only that.
            window = range(native.length(self.name))[index_or_slice]
            return native.contents(self.name, window.start, max(window.stop, window.start))
        return native.contents(self.name)[index_or_slice]


def _field(
    cls: type,
    offset: int,
    name: str,
    layout: Callable[[], tuple[Callable[[], list[Any]], list[int]]],
    types: list[GGUFValueType],
    native: NativeFile | None,
) -> ReaderField:
    """A field whose ``parts`` and ``data`` fill themselves from ``layout()``
    (called once): a function building the part views, and the data indices.
    ``len(field.data)`` alone never builds the views."""
    memo: list[tuple[Callable[[], list[Any]], list[int]]] = []

    def built() -> tuple[Callable[[], list[Any]], list[int]]:
        if not memo:
            memo.append(layout())
        return memo[0]

    field = tuple.__new__(
        cls,
        (offset, name, LazyList(lambda: built()[0]()), LazyList(lambda: built()[1]), types),
    )
    if native is not None:
        field.__dict__["_native"] = native
    return field


class GGUFReader(_GgufPyReader):
    """Drop-in for ``gguf.GGUFReader`` (gguf-py 0.19): same attributes, same
    values, same types; a subclass of it, so ``isinstance`` checks hold.

    >>> import gguf_rs
    >>> reader = gguf_rs.GGUFReader("samples/tiny-llama.gguf")  # doctest: +SKIP
    >>> reader.fields["general.architecture"].contents()  # doctest: +SKIP
    'llama'
    """

    def __init__(self, path: os.PathLike[str] | str, mode: Literal["r", "r+", "c"] = "r"):
        native = NativeFile(os.fspath(path))
        version, big_endian, declared_alignment, header_len, _, _ = native.header()
        self.data = np.memmap(path, mode=mode)
        host_big = sys.byteorder == "big"
        self.byte_order = "S" if big_endian != host_big else "I"
        self.endianess = GGUFEndian.BIG if big_endian else GGUFEndian.LITTLE
        self._native = native
        self._mode = mode
        self._dtypes = {k: np.dtype(v).newbyteorder(self.byte_order) for k, v in _DTYPES.items()}
        width = native.count_width()
        length_id = int(GGUFValueType.UINT32 if width == 4 else GGUFValueType.UINT64)

        self.fields: OrderedDict[str, ReaderField] = OrderedDict()
        self.tensors: list[ReaderTensor] = []
        version_part = self._view(4, int(GGUFValueType.UINT32), 1)
        self.fields["GGUF.version"] = ReaderField(4, "GGUF.version", [version_part], [0], [GGUFValueType.UINT32])
        counts = self._view(8, length_id, 2)
        count_type = GGUFValueType(length_id)
        self.fields["GGUF.tensor_count"] = ReaderField(8, "GGUF.tensor_count", [counts[:1]], [0], [count_type])
        self.fields["GGUF.kv_count"] = ReaderField(8 + width, "GGUF.kv_count", [counts[1:]], [0], [count_type])

        # Arrays decoded by the library read the file as opened; a writable
        # reader's arrays are read back from their parts, as gguf-py does.
        contents_from = native if mode == "r" else None
        for key, offset, type_ids in native.fields():
            self.fields[key] = _field(
                _Field, offset, key, self._layout_of(key), [GGUFValueType(t) for t in type_ids], contents_from
            )

        if declared_alignment is not None:
            self.alignment = self.fields["general.alignment"].parts[-1][0]
        offs = header_len
        padding = offs % self.alignment
        if padding != 0:
            offs += self.alignment - padding
        self.data_offset = offs
        self.tensors = [self._tensor(*t) for t in native.tensors()]

    def _view(self, offset: int, type_id: int, count: int) -> npt.NDArray[Any]:
        dtype = self._dtypes[type_id]
        return self.data[offset : offset + count * dtype.itemsize].view(dtype)

    def _layout_of(self, key: str) -> Callable[[], tuple[Callable[[], list[Any]], list[int]]]:
        def layout() -> tuple[Callable[[], list[Any]], list[int]]:
            offsets, codes, counts, data = self._native.field_parts(key)

            def parts() -> list[Any]:
                view = self._view
                return [
                    view(o, c, n)
                    for o, c, n in zip(
                        np.frombuffer(offsets, "<u8").tolist(),
                        list(codes),
                        np.frombuffer(counts, "<u8").tolist(),
                    )
                ]

            return parts, data

        return layout

    def _tensor(
        self,
        name: str,
        type_id: int,
        dims: list[int],
        info_offset: int,
        data_offset: int,
        n_bytes: int,
        name_len: int,
        block_size: int,
        type_size: int,
    ) -> ReaderTensor:
        width = self._native.count_width()
        length_id = int(GGUFValueType.UINT32 if width == 4 else GGUFValueType.UINT64)
        u8, u32, u64 = int(GGUFValueType.UINT8), int(GGUFValueType.UINT32), int(GGUFValueType.UINT64)
        at_dims = info_offset + width + name_len + 4
        shape = self._view(at_dims, length_id, len(dims))
        at_type = at_dims + width * len(dims)

        def parts() -> list[Any]:
            return [
                self._view(info_offset, length_id, 1),
                self._view(info_offset + width, u8, name_len),
                self._view(info_offset + width + name_len, u32, 1),
                shape,
                self._view(at_type, u32, 1),
                self._view(at_type + 4, u64, 1),
            ]

        field = _field(ReaderField, info_offset, name, lambda: (parts, [1, 3, 4, 5]), [], None)
        ggml_type = GGMLQuantizationType(type_id)
        np_dims = tuple(reversed(dims))
        item_type = _ELEMENT_TYPES.get(ggml_type)
        if item_type is None:
            item_type = np.uint8
            if np_dims:
                np_dims = (*np_dims[:-1], np_dims[-1] // block_size * type_size)
        dtype = np.dtype(item_type).newbyteorder(self.byte_order)
        data = self.data[data_offset : data_offset + n_bytes].view(dtype).reshape(np_dims)
        return ReaderTensor(
            name=name,
            tensor_type=ggml_type,
            shape=shape,
            n_elements=math.prod(dims),
            n_bytes=n_bytes,
            data_offset=data_offset,
            data=data,
            field=field,
        )

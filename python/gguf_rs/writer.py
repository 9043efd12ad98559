"""``GGUFWriter``: gguf-py's ``gguf.GGUFWriter`` with the same files,
written by gguf-kit's writer.

Every ``add_<key>`` convenience method is gguf-py's own (this class
subclasses it); they end in :meth:`GGUFWriter.add_key_value`, which here
stores the value in the library's builder. The files are written by the
library: tensors are declared as they are added and their bytes produced
one at a time when written (a lazy tensor is computed only then), into
temporary files renamed to their names once every file is complete.

>>> import os, tempfile, numpy as np
>>> import gguf_rs
>>> path = os.path.join(tempfile.mkdtemp(), "tiny.gguf")
>>> with gguf_rs.GGUFWriter(path, "llama") as w:
...     w.add_context_length(4096)
...     w.add_tensor("output.weight", np.ones((2, 32), dtype=np.float32))
...     w.write_header_to_file()
...     w.write_kv_data_to_file()
...     w.write_tensors_to_file()
>>> r = gguf_rs.GGUFReader(path)
>>> int(r.fields["llama.context_length"].contents())
4096
>>> r.tensors[0].name, r.tensors[0].data.shape
('output.weight', (2, 32))
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import gguf.gguf_writer as _gguf_py_writer
from gguf.constants import GGMLQuantizationType, GGUFEndian, GGUFValueType
from gguf.gguf_writer import GGUFValue, TensorInfo, WriterState
from gguf.lazy import LazyBase
from gguf.quants import quant_shape_from_byte_shape

from ._native import GGUFError, WriterCore

__all__ = ["GGUFWriter"]

# gguf-py's logger, so that its messages reach the same handlers.
logger = logging.getLogger("gguf.gguf_writer")

# gguf-py's class, kept before install() replaces the name.
_GGUFPyWriter = _gguf_py_writer.GGUFWriter

_NUMPY_TYPES = {
    np.dtype(np.float16): GGMLQuantizationType.F16,
    np.dtype(np.float32): GGMLQuantizationType.F32,
    np.dtype(np.float64): GGMLQuantizationType.F64,
    np.dtype(np.int8): GGMLQuantizationType.I8,
    np.dtype(np.int16): GGMLQuantizationType.I16,
    np.dtype(np.int32): GGMLQuantizationType.I32,
    np.dtype(np.int64): GGMLQuantizationType.I64,
}

_NATIVE = GGUFEndian.BIG if sys.byteorder == "big" else GGUFEndian.LITTLE


def _as_bytes(tensor: Any, swap: bool) -> np.ndarray:
    """A tensor's bytes as ``tofile`` writes them: a lazy tensor computed
    now, in C order, byte-swapped when asked."""
    if isinstance(tensor, LazyBase):
        tensor = type(tensor).to_eager(tensor)
    a = np.asarray(tensor)
    if swap:
        a = a.byteswap(inplace=False)
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


class GGUFWriter(_GGUFPyWriter):
    """gguf-py's ``GGUFWriter`` (same arguments, methods and files), its
    state in gguf-kit's builder and its files written by gguf-kit.

    Differences (python/README.md, "GGUFWriter"): values are checked when
    added (a ``GGUFError``, a ``ValueError``, instead of ``struct.error``
    when written); files appear complete, or not at all, when written
    rather than growing from ``write_header_to_file`` on; a tensor whose
    byte count does not match its type and shape is refused.
    """

    def __init__(
        self,
        path: os.PathLike[str] | str | None,
        arch: str,
        use_temp_file: bool = False,
        endianess: GGUFEndian = GGUFEndian.LITTLE,
        split_max_tensors: int = 0,
        split_max_size: int = 0,
        dry_run: bool = False,
        small_first_shard: bool = False,
    ):
        # gguf-py's __init__ is not called: its state (kv_data, tensors)
        # lives in the builder here.
        self._core = WriterCore(endianess == GGUFEndian.BIG)
        # name -> (tensor or None, byte swap, offset in temp_file or -1, nbytes)
        self._sources: dict[str, tuple[Any, bool, int, int]] = {}
        self._closed = False
        self.fout = None
        self.path = Path(path) if path else None
        self.arch = arch
        self.endianess = endianess
        self.data_alignment = 32
        self.use_temp_file = use_temp_file
        self.temp_file = None
        self.split_max_tensors = split_max_tensors
        self.split_max_size = split_max_size
        self.dry_run = dry_run
        self.small_first_shard = small_first_shard
        logger.info(
            "gguf: This GGUF file is for {0} Endian only".format(
                "Big" if endianess == GGUFEndian.BIG else "Little"
            )
        )
        self.state = WriterState.NO_FILE
        self.add_architecture()

    def __enter__(self) -> GGUFWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self._discard()

    # ---- state ----

    def _plan(self, path: Path | None = None) -> list[tuple[Path, list[tuple[str, int, list[int], int]]]]:
        return self._core.plan(
            path or self.path or Path("model.gguf"),
            self.split_max_tensors,
            self.split_max_size,
            self.small_first_shard,
        )

    @property
    def tensors(self) -> list[dict[str, TensorInfo]]:  # type: ignore[override]
        """The tensors of each file, as gguf-py's attribute lists them."""
        return [
            {
                name: TensorInfo(shape=tuple(reversed(dims)), dtype=GGMLQuantizationType(qtype), nbytes=nbytes)
                for name, qtype, dims, nbytes in shard
            }
            for _, shard in self._plan()
        ]

    @property
    def kv_data(self) -> list[dict[str, GGUFValue]]:  # type: ignore[override]
        """The metadata, as gguf-py's attribute holds it (a copy: change it
        with the ``add_*`` methods)."""
        return [
            {k: GGUFValue(value=v, type=GGUFValueType(t), sub_type=None if s is None else GGUFValueType(s)) for k, v, t, s in self._core.items()}
        ]

    def add_key_value(self, key: str, val: Any, vtype: GGUFValueType, sub_type: GGUFValueType | None = None) -> None:
        if self._core.has_key(key):
            logger.warning(f"Duplicated key name {key!r}, overwriting it with new value {val!r} of type {vtype.name}")
        self._core.set(key, val, int(vtype), None if sub_type is None else int(sub_type))

    def add_tensor_info(
        self,
        name: str,
        tensor_shape: Sequence[int],
        tensor_dtype: np.dtype,
        tensor_nbytes: int,
        raw_dtype: GGMLQuantizationType | None = None,
    ) -> None:
        if self.state is not WriterState.NO_FILE:
            raise ValueError(f"Expected output file to be not yet opened, got {self.state}")
        if name in self._sources:
            raise ValueError(f"Duplicated tensor name {name!r}")
        if raw_dtype is None:
            dtype = _NUMPY_TYPES.get(np.dtype(tensor_dtype))
            if dtype is None:
                raise ValueError("Only F16, F32, F64, I8, I16, I32, I64 tensors are supported for now")
        else:
            dtype = raw_dtype
            if tensor_dtype == np.uint8:
                tensor_shape = quant_shape_from_byte_shape(tensor_shape, raw_dtype)
        dims = [int(d) for d in reversed(tuple(tensor_shape))]
        self._core.add_tensor(name, int(dtype), dims, int(tensor_nbytes))
        self._sources[name] = (None, False, -1, int(tensor_nbytes))

    def add_tensor(
        self,
        name: str,
        tensor: np.ndarray[Any, Any],
        raw_shape: Sequence[int] | None = None,
        raw_dtype: GGMLQuantizationType | None = None,
        tensor_endianess: GGUFEndian | None = None,
    ) -> None:
        swap = (tensor_endianess or _NATIVE) != self.endianess
        shape = raw_shape if raw_shape is not None else tensor.shape
        self.add_tensor_info(name, shape, tensor.dtype, tensor.nbytes, raw_dtype=raw_dtype)
        if not self.use_temp_file:
            self._sources[name] = (tensor, swap, -1, tensor.nbytes)
            return
        # The tensor is computed and stored now, to be read back when
        # written, as gguf-py's temporary file does.
        if self.temp_file is None:
            self.temp_file = tempfile.SpooledTemporaryFile(mode="w+b", max_size=256 * 1024 * 1024)
        fp = self.temp_file
        fp.seek(0, os.SEEK_END)
        offset = fp.tell()
        fp.write(_as_bytes(tensor, swap).tobytes())
        self._sources[name] = (None, False, offset, tensor.nbytes)

    def _data(self, name: str) -> Any:
        tensor, swap, offset, nbytes = self._sources[name]
        if offset >= 0:
            assert self.temp_file is not None
            self.temp_file.seek(offset)
            return self.temp_file.read(nbytes)
        if tensor is None:
            raise GGUFError(f"tensor {name!r} was declared with add_tensor_info: its data is written with write_tensor_data")
        # Let go once handed over: a tensor is held until written only.
        self._sources[name] = (None, False, -1, nbytes)
        return _as_bytes(tensor, swap)

    def _check_alignment(self) -> None:
        # gguf-py pads to data_alignment and stores general.alignment
        # separately; the library pads to general.alignment, so the two
        # must agree (add_custom_alignment sets both).
        if self.data_alignment != self._core.alignment():
            raise GGUFError(
                f"data_alignment is {self.data_alignment} but general.alignment is {self._core.alignment()}: "
                "set the alignment with add_custom_alignment (or both to the same value)"
            )

    # ---- files ----

    def format_shard_names(self, path: Path) -> list[Path]:
        return [p for p, _ in self._plan(path)]

    def open_output_file(self, path: Path | None = None) -> None:
        if self.state is WriterState.EMPTY and (path is None or path == self.path):
            return
        if self.state is not WriterState.NO_FILE:
            raise ValueError(f"Expected output file to be not yet opened, got {self.state}")
        if path is not None:
            self.path = path
        if self.path is not None:
            # Nothing is opened: the files are written whole, later.
            self.print_plan()
            self.state = WriterState.EMPTY

    def print_plan(self) -> list[Path]:
        logger.info("Writing the following files:")
        assert self.path is not None
        plan = self._plan()
        for name, tensors in plan:
            size = _GGUFPyWriter.format_n_bytes_to_str(sum(t[3] for t in tensors))
            logger.info(f"{name}: n_tensors = {len(tensors)}, total_size = {size}")
        if self.dry_run:
            logger.info("Dry run, not writing files")
            for name, _ in plan:
                print(name)  # noqa: NP100
            sys.exit()
        return [p for p, _ in plan]

    def add_shard_kv_data(self) -> None:
        # The library adds the split keys to each shard it writes.
        pass

    def write_header_to_file(self, path: Path | None = None) -> None:
        if len(self._plan(path)) == 1 and (self.split_max_tensors != 0 or self.split_max_size != 0):
            logger.warning("Model fails split requirements, not splitting")
        self.open_output_file(path)
        if self.state is not WriterState.EMPTY:
            raise ValueError(f"Expected output file to be empty, got {self.state}")
        self.state = WriterState.HEADER

    def write_kv_data_to_file(self) -> None:
        if self.state is not WriterState.HEADER:
            raise ValueError(f"Expected output file to contain the header, got {self.state}")
        self.state = WriterState.KV_DATA

    def write_ti_data_to_file(self) -> None:
        if self.state is not WriterState.KV_DATA:
            raise ValueError(f"Expected output file to contain KV data, got {self.state}")
        self.state = WriterState.TI_DATA

    def _split_args(self) -> tuple[Path, int, int, bool]:
        assert self.path is not None
        return self.path, self.split_max_tensors, self.split_max_size, self.small_first_shard

    def write_tensor_data(self, tensor: np.ndarray[Any, Any], tensor_endianess: GGUFEndian | None = None) -> None:
        if self.state is not WriterState.TI_DATA and self.state is not WriterState.WEIGHTS:
            raise ValueError(f"Expected output file to contain tensor info or weights, got {self.state}")
        if not self._core.streaming():
            if self.state is WriterState.WEIGHTS:
                raise GGUFError("every tensor's data was already written")
            self._check_alignment()
            self._core.start_stream(*self._split_args())
        self.state = WriterState.WEIGHTS
        swap = (tensor_endianess or _NATIVE) != self.endianess
        self._core.push(_as_bytes(tensor, swap))
        if not self._core.streaming():
            self._closed = True

    def write_tensors_to_file(self, *, progress: bool = False) -> None:
        self.write_ti_data_to_file()
        self._check_alignment()
        plan = self._plan()
        bar = shard_bar = None
        shard_of: dict[str, int] = {}
        if progress:
            from tqdm import tqdm

            total = sum(t[3] for _, s in plan for t in s)
            if len(plan) > 1:
                shard_bar = tqdm(desc=f"Shard (0/{len(plan)})", total=None, unit="byte", unit_scale=True)
                shard_of = {t[0]: i for i, (_, s) in enumerate(plan) for t in s}
            bar = tqdm(desc="Writing", total=total, unit="byte", unit_scale=True)
        current = [-1]

        def data(name: str) -> Any:
            if shard_bar is not None and shard_of[name] != current[0]:
                current[0] = shard_of[name]
                shard_bar.set_description(f"Shard ({current[0] + 1}/{len(plan)})")
                size = sum(t[3] for t in plan[current[0]][1])
                shard_bar.reset(total=(size if size > 0 else None))
            return self._data(name)

        def done(name: str) -> None:
            n = self._sources[name][3]
            if shard_bar is not None:
                shard_bar.update(n)
            if bar is not None:
                bar.update(n)

        try:
            self._core.write(*self._split_args(), data, done if progress else None)
        finally:
            if self.temp_file is not None:
                self.temp_file.close()
                self.temp_file = None
        self._closed = True
        self.state = WriterState.WEIGHTS

    def flush(self) -> None:
        # Nothing is buffered here: files are written whole.
        pass

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._core.streaming():
            self._core.finish()
        elif self.state in (WriterState.HEADER, WriterState.KV_DATA, WriterState.TI_DATA):
            self._check_alignment()
            if len(self._plan()) == 1:
                assert self.path is not None
                self._core.write_metadata_only(self.path)
            else:
                self._core.write(*self._split_args(), self._data)

    def _discard(self) -> None:
        """Ends the writer without writing anything more (a stream in
        progress fails, leaving no file)."""
        self._closed = True
        if self._core.streaming():
            try:
                self._core.finish()
            except GGUFError:
                pass
        if self.temp_file is not None:
            self.temp_file.close()
            self.temp_file = None

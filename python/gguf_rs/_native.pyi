"""Type stubs of the extension module gguf_rs._native (python/src/lib.rs)."""

from collections.abc import Callable
from os import PathLike
from pathlib import Path

import numpy as np

__version__: str
"""The package's version: the gguf-kit crate's (Cargo.toml), as the wheel's."""

class GGUFError(ValueError):
    """A file gguf-kit refuses, or a codec argument it cannot work with."""

    offset: int | None
    """Byte offset in the file where it is wrong; None when the message names none."""

class NativeFile:
    """One GGUF file opened and validated by gguf-kit."""

    def __init__(self, path: str | PathLike[str]) -> None: ...
    def header(self) -> tuple[int, bool, int | None, int, int, int]:
        """(version, big_endian, declared alignment or None, header_len, tensor_count, kv_count)."""
    def count_width(self) -> int:
        """Width in bytes of lengths and counts (4 in version 1, else 8)."""
    def fields(self) -> list[tuple[str, int, list[int]]]:
        """(key, entry offset, gguf-py's types) of every entry, in file order."""
    def field_parts(self, key: str) -> tuple[bytes, bytes, bytes, list[int]]:
        """The parts of `key`: offsets (u64 LE), value-type ids (u8), counts (u64 LE); data indices."""
    def contents(self, key: str, start: int | None = None, stop: int | None = None) -> object:
        """The value of `key` as Python objects; for an array, elements start..stop when given."""
    def length(self, key: str) -> int:
        """Number of elements of the array `key`."""
    def element(self, key: str, index: int) -> object:
        """Element `index` of the array `key` (negative counts from the end)."""
    def tensors(self) -> list[tuple[str, int, list[int], int, int, int, int, int, int]]:
        """(name, type id, dims, info offset, data offset, byte size, name length, block size, type size)."""

def block_geometry(qtype: int, op: str) -> tuple[int, int]:
    """(block size, type size) of `qtype`; NotImplementedError when there is no codec for `op`."""

class F32Buffer:
    """f32 values owned by the library, which numpy takes as an array's memory
    without copying (``np.asarray(buffer)``, through ``__array_interface__``)."""

    @property
    def __array_interface__(self) -> dict[str, object]: ...

def dequantize(data: bytes | np.ndarray, qtype: int) -> F32Buffer:
    """Little-endian `qtype` blocks (bytes, or a C-contiguous uint8 array read
    in place) to f32, on every core, GIL released."""

def quantize(data: bytes | np.ndarray, row_len: int, qtype: int) -> bytearray:
    """Native f32 values (their bytes, or a C-contiguous uint8 view of them;
    rows of `row_len`) to `qtype` blocks, on every core, GIL released."""

class Model:
    """A model (one file or every shard) opened by gguf-kit's Model::open."""

    def __init__(self, source: str | PathLike[str]) -> None: ...
    def metadata(self) -> dict[str, object]: ...
    def value_types(self) -> list[tuple[str, str]]: ...
    def tensors(self) -> list[tuple[str, int, list[int]]]: ...
    def shard_count(self) -> int: ...
    def tensor_bytes(self, name: str) -> bytes: ...
    def tensor_f32(self, name: str) -> F32Buffer: ...
    def tokenizer(self) -> Tokenizer:
        """The model's tokenizer (gguf_tokenizer::Tokenizer::from_model)."""
    def chat(
        self,
        request: str,
        add_generation_prompt: bool = True,
        enable_thinking: bool | None = None,
        template: str | None = None,
        template_source: str | None = None,
        extra: str | None = None,
    ) -> tuple[str, list[tuple[int, int]], list[int]]:
        """gguf-chat's render of a request (JSON text): prompt, input ranges, ids."""
    def chat_templates(self) -> list[str]: ...
    def summary(self) -> dict[str, object]:
        """The library's ModelSummary::of as a dict."""
    def estimate(
        self,
        context: int | None = None,
        batch: int | None = None,
        ubatch: int | None = None,
        parallel: int | None = None,
        flash_attn: str | None = None,
        cache_type_k: str | None = None,
        cache_type_v: str | None = None,
        swa_full: bool = False,
        kv_unified: bool = False,
        n_gpu_layers: int | None = None,
        tensor_split: list[float] | None = None,
        no_kv_offload: bool = False,
        no_mmap: bool = False,
        fit: int | None = None,
    ) -> dict[str, object]:
        """The library's Estimate::of as the dict `gguf estimate --json` prints
        (with `fit`, a budget in bytes: also its `"fit"` object)."""

class Editor:
    """In-place metadata edits of one file through gguf-kit's Editor.

    Edits are queued by ``set``, ``remove``, ``rename_key`` and
    ``rename_tensor`` and written by ``commit()``: in place (journaled, so a
    crash leaves the file as it was) when the new header fits in the old
    header's room, else by an atomic rewrite (a temporary file renamed over
    the original). A rewrite reserves ``reserve_on_rewrite`` bytes (4096 by
    default, 0 for none) of header slack, the u8 array
    ``gguf_rs.metadata_slack`` that other readers ignore, so that the next
    edit is in place. Files and edits the library refuses raise
    :class:`GGUFError` with its message.

    >>> ed = Editor("model.gguf")  # doctest: +SKIP
    >>> ed.set("general.name", "my model")  # doctest: +SKIP
    >>> ed.commit()  # doctest: +SKIP
    {'in_place': True, 'header_bytes': 10304, 'slack_bytes': 0}
    """

    def __init__(self, path: str | PathLike[str], *, reserve_on_rewrite: int = 4096) -> None:
        """Opens ``path``, first finishing an interrupted earlier edit.
        ``reserve_on_rewrite``: the header slack a rewrite reserves (0: none)."""
    def set(self, key: str, value: object, type: str | None = None) -> None:
        """Queues ``key = value``. ``type`` names the GGUF type (``"u32"``,
        ``"f64"``, ``"string"``, ...; for a list, its elements' type). Without
        it an existing key keeps its type, a new one takes the type the
        Python value implies (bool, int as i32 (i64, u64 when too large),
        float as f32, str, list)."""
    def remove(self, key: str) -> None:
        """Queues the removal of ``key`` (GGUFError when the file has none)."""
    def rename_key(self, old: str, new: str) -> None:
        """Queues renaming a key, keeping its place and value."""
    def rename_tensor(self, old: str, new: str) -> None:
        """Queues renaming a tensor."""
    def plan(self) -> dict[str, object]:
        """What ``commit()`` would do, without writing: the dict it returns."""
    def commit(self) -> dict[str, object]:
        """Writes the queued edits: ``{"in_place": True, "header_bytes": n,
        "slack_bytes": k}`` or ``{"in_place": False, "header_bytes": n,
        "file_bytes": m, "slack_bytes": k}``, ``slack_bytes`` the header slack
        left (after a rewrite: what it reserved). The editor is spent after
        (RuntimeError on further use)."""

class ModelEditor:
    """Metadata edits and tensor renames of a whole model (one file or every
    shard of a split one) through gguf-kit's ModelEditor: metadata edits go
    to the first shard, a tensor rename to the shard that holds it; each
    changed file is committed as :class:`Editor` commits (in place when its
    header fits, else by an atomic rewrite), first shard first. The split
    keys (``split.*``) are the split writer's and are refused.

    >>> ed = ModelEditor("model-00002-of-00003.gguf")  # doctest: +SKIP
    >>> ed.set("general.name", "my model")  # doctest: +SKIP
    >>> ed.commit()  # doctest: +SKIP
    [('model-00001-of-00003.gguf', {'in_place': True, 'header_bytes': 10304, 'slack_bytes': 0})]
    """

    def __init__(self, path: str | PathLike[str], *, reserve_on_rewrite: int = 4096) -> None:
        """Opens the model ``path`` belongs to (any shard, or one file);
        ``reserve_on_rewrite`` as :class:`Editor` takes it."""
    def paths(self) -> list[str]:
        """The model's files, in shard order."""
    def set(self, key: str, value: object, type: str | None = None) -> None:
        """Queues ``key = value`` in the first shard, typed as :meth:`Editor.set`
        types it."""
    def remove(self, key: str) -> None:
        """Queues the removal of ``key`` (GGUFError when the model has none)."""
    def rename_key(self, old: str, new: str) -> None:
        """Queues renaming a key, keeping its place and value."""
    def rename_tensor(self, old: str, new: str) -> None:
        """Queues renaming a tensor in the shard that holds it; ``new`` must be
        free in every shard."""
    def plan(self) -> list[tuple[str, dict[str, object]]]:
        """What ``commit()`` would do to each file that changes, without writing."""
    def commit(self) -> list[tuple[str, dict[str, object]]]:
        """Writes the queued edits, first shard first: ``(path, dict)`` per
        changed file, the dict as :meth:`Editor.commit` returns it. The editor
        is spent after (RuntimeError on further use)."""

class Builder:
    """gguf-kit's write::Builder (gguf_rs.Builder wraps it for numpy arrays)."""

    def __init__(self, version: int = 3, big_endian: bool = False, alignment: int | None = None) -> None: ...
    @staticmethod
    def from_file(path: str | PathLike[str]) -> Builder:
        """Everything of the model at `path` (any shard: the model merged), data read when written."""
    def rename_key(self, old: str, new: str) -> None: ...
    def remove_tensor(self, name: str) -> None: ...
    def rename_tensor(self, old: str, new: str) -> None: ...
    def requantize_tensor(self, name: str, qtype: int) -> None:
        """Re-encode a tensor of the source model to `qtype` when written."""
    def set(self, key: str, value: object, type: str | None = None) -> None: ...
    def remove(self, key: str) -> None: ...
    def add_native(self, name: str, qtype: int, dims: list[int], data: bytes, elem_size: int) -> None:
        """Native-order numbers of `elem_size` bytes (swapped for a big-endian file)."""
    def add_raw(self, name: str, qtype: int, dims: list[int], data: bytes) -> None:
        """Bytes exactly as stored."""
    def add_quantized(self, name: str, qtype: int, dims: list[int], data: bytes) -> None:
        """Native f32 bytes, quantized to `qtype` when written."""
    def add_info(self, name: str, qtype: int, dims: list[int]) -> None:
        """A tensor without data, asked for by write_metadata_first."""
    def keys(self) -> list[str]: ...
    def tensor_names(self) -> list[str]: ...
    def to_bytes(self) -> bytes: ...
    def write(self, path: str | PathLike[str], mode: str = "single") -> int: ...
    def write_metadata_first(self, path: str | PathLike[str], data: Callable[[str], bytes]) -> int: ...

def ggml_type_id(name: str) -> int:
    """The GGML type id called `name` (any case); GGUFError when there is none."""

class Tokenizer:
    """A model's tokenizer as llama.cpp runs it (python/src/tokenizer.rs)."""

    @property
    def vocab_type(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def pre(self) -> str | None: ...
    def encode(self, text: str, add_special: bool = True, parse_special: bool = False) -> list[int]: ...
    def decode_bytes(self, ids: list[int], remove_special: bool = False, unparse_special: bool = False) -> bytes: ...
    def token_to_piece(self, id: int, special: bool = False) -> bytes: ...
    def token_text(self, id: int) -> str | None: ...
    def token_score(self, id: int) -> float | None: ...
    def token_attr(self, id: int) -> int | None: ...
    def token_id(self, text: str) -> int | None: ...
    def specials(self) -> dict[str, int | None]: ...
    def flags(self) -> dict[str, bool]: ...
    def __len__(self) -> int: ...

class Imatrix:
    """An importance matrix read by gguf-llama (python/src/imatrix.rs)."""

    @property
    def format(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def datasets(self) -> list[str]: ...
    @property
    def chunk_count(self) -> int: ...
    @property
    def chunk_size(self) -> int | None: ...
    @staticmethod
    def read(path: str | PathLike[str]) -> Imatrix: ...
    def names(self) -> list[str]: ...
    def entry(self, name: str) -> tuple[F32Buffer, list[float]] | None: ...
    def weights(self, name: str) -> F32Buffer | None: ...
    def convert(self, to: str, chunk_size: int | None = None) -> tuple[Imatrix, bool]:
        """The matrix in format `to`, and whether `to` holds every count exactly."""
    def write(self, path: str | PathLike[str]) -> None: ...
    def to_bytes(self) -> bytes: ...
    def __len__(self) -> int: ...

def quantize_model(
    input: str | PathLike[str],
    output: str | PathLike[str] | None,
    preset: str,
    *,
    threads: int = 0,
    imatrix: Imatrix | str | PathLike[str] | None = None,
    include_weights: list[str] = ...,
    exclude_weights: list[str] = ...,
    output_tensor_type: str | None = None,
    token_embedding_type: str | None = None,
    tensor_type: list[str] = ...,
    leave_output_tensor: bool = False,
    pure: bool = False,
    allow_requantize: bool = False,
    keep_split: bool = False,
    override_kv: list[str] = ...,
    prune_layers: list[int] = ...,
    dry_run: bool = False,
    progress: Callable[[str, int, int], object] | None = None,
) -> dict[str, object]:
    """gguf_llama::quantize::quantize_model (or dry_run) with `gguf quantize`'s flags."""

def max_threads() -> int:
    """The most threads a quantization uses (4 per core)."""

def import_hf(
    dir: str | PathLike[str],
    output: str | PathLike[str],
    *,
    type: str = "f16",
    imatrix: Imatrix | str | PathLike[str] | None = None,
    pre_tokenizer: str | None = None,
    split_max_size: int | None = None,
    split_max_tensors: int | None = None,
    threads: int = 0,
    lora_base: str | PathLike[str] | None = None,
    mmproj: bool = False,
    progress: Callable[[str, int, int], object] | None = None,
) -> dict[str, object]:
    """gguf_import::import_model with `gguf import`'s flags."""

def import_architectures() -> list[tuple[str, str, bool, bool]]:
    """(config.json name, GGUF architecture, experts, vision projector) of each known architecture."""
class WriterCore:
    """The state and the files of gguf_rs.GGUFWriter, on gguf-kit's write::Builder."""

    def __init__(self, big_endian: bool) -> None: ...
    def set(self, key: str, value: object, vtype: int, sub_type: int | None = None) -> bool:
        """Set `key` to a value of gguf-py's GGUFValueType `vtype` (checked now); True when the key existed."""
    def items(self) -> list[tuple[str, object, int, int | None]]:
        """Every entry in order: key, value, gguf-py value type id, array item type id."""
    def has_key(self, key: str) -> bool: ...
    def alignment(self) -> int:
        """The data alignment the files get: general.alignment, or 32."""
    def add_tensor(self, name: str, qtype: int, dims: list[int], nbytes: int) -> None:
        """Declare a tensor (ggml dims, innermost first); GGUFError when `nbytes` is not its size."""
    def plan(
        self, path: str | PathLike[str], max_tensors: int, max_size: int, small_first: bool
    ) -> list[tuple[Path, list[tuple[str, int, list[int], int]]]]:
        """Each file a write makes: its path and its tensors (name, qtype, dims, nbytes), by gguf-py's split rules."""
    def write(
        self,
        path: str | PathLike[str],
        max_tensors: int,
        max_size: int,
        small_first: bool,
        data: Callable[[str], bytes | np.ndarray],
        done: Callable[[str], object] | None = None,
    ) -> list[Path]:
        """Write every file, each tensor's bytes from `data(name)` in turn; files appear only when all are complete."""
    def write_metadata_only(self, path: str | PathLike[str]) -> None:
        """A file of metadata and no tensor, unpadded (gguf-py's vocab-only file)."""
    def start_stream(self, path: str | PathLike[str], max_tensors: int, max_size: int, small_first: bool) -> None:
        """Start writing on a thread; each tensor's bytes come from push, in order."""
    def push(self, data: bytes | np.ndarray) -> None:
        """The next tensor's bytes; after the last, wait for the files."""
    def finish(self) -> None:
        """End the stream; GGUFError naming a tensor whose data never came (no file is written then)."""
    def streaming(self) -> bool: ...

"""The project's commands as Python calls: ``import_hf`` (``gguf
import``), ``quantize`` (``gguf quantize``) and ``imatrix`` (reading and
converting importance matrices, ``gguf imatrix convert``). Each runs the
library's code with the GIL released; the keyword names are the CLI's long
flags; errors are :class:`gguf_rs.GGUFError` with the CLI's message (an
``OSError`` where a file cannot be opened, ``ValueError`` for arguments that
do not fit together). Ctrl-C (``KeyboardInterrupt``) stops a call at its
next progress step, leaving the output as it was and no temporary file.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Union

import numpy as np

from . import _native, _progress

__all__ = ["Imatrix", "architectures", "imatrix", "import_hf", "quantize"]

PathArg = Union[str, "os.PathLike[str]"]

_DECIMAL = {"": 1, "B": 1, "K": 1000, "M": 1000**2, "G": 1000**3}


def _size(value: int | str | None) -> int | None:
    """``split_max_size`` as bytes: an int, or the CLI's text (``"500M"``,
    decimal units B, K, M, G)."""
    if value is None or isinstance(value, int):
        return value
    text = str(value).strip()
    digits = len(text) - len(text.lstrip("0123456789"))
    number, unit = text[:digits], text[digits:].upper()
    if not number or unit not in _DECIMAL:
        raise ValueError(f"split_max_size {value!r} is not a size: a number with an optional unit B, K, M or G")
    return int(number) * _DECIMAL[unit]


class Imatrix:
    """An importance matrix (llama-imatrix's GGUF or legacy ``.dat``
    file), read by the library. ``format`` is ``"gguf"`` or ``"dat"``;
    ``names()`` lists its tensors; ``entry(name)`` gives ``(sums, counts)``
    as numpy arrays, ``weights(name)`` what llama-quantize gives the
    quantizer; ``convert("dat")`` / ``convert("gguf", chunk_size=...)``
    the other format; ``write(path)``. Give it (or a path) to
    :func:`quantize` and :func:`import_hf` as ``imatrix=``."""

    def __init__(self, native: Any):
        self._native = native

    @property
    def format(self) -> str:
        return self._native.format

    @property
    def path(self) -> str:
        """The file it was read from (``""`` after :meth:`convert`)."""
        return self._native.path

    @property
    def datasets(self) -> list[str]:
        return self._native.datasets

    @property
    def chunk_count(self) -> int:
        return self._native.chunk_count

    @property
    def chunk_size(self) -> int | None:
        """Tokens per chunk (None for a legacy file, which does not store it)."""
        return self._native.chunk_size

    def names(self) -> list[str]:
        return self._native.names()

    def entry(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """``(sums, counts)`` of tensor ``name``: float32 sums of squared
        activations, float64 token counts (one per expert); ``KeyError``
        if the matrix has no such entry."""
        found = self._native.entry(name)
        if found is None:
            raise KeyError(name)
        sums, counts = found
        return np.asarray(sums), np.asarray(counts, dtype=np.float64)

    def weights(self, name: str) -> np.ndarray:
        """The importance weights of tensor ``name`` (sums over counts)."""
        found = self._native.weights(name)
        if found is None:
            raise KeyError(name)
        return np.asarray(found)

    def convert(self, to: str, *, chunk_size: int | None = None) -> Imatrix:
        """The matrix in format ``to`` (``"gguf"`` or ``"dat"``), as
        ``gguf imatrix convert`` converts it; ``chunk_size`` is the tokens
        per chunk a legacy matrix was computed with (512, llama-imatrix's,
        by default). Warns (``UserWarning``) when ``to`` cannot hold every
        count exactly, or when the GGUF matrix's chunk size is dropped."""
        if chunk_size is not None and self.format == "gguf":
            warnings.warn(
                f"chunk_size {chunk_size} ignored: it is for a legacy (.dat) matrix, and this one keeps "
                f"its own imatrix.chunk_size ({self.chunk_size})",
                stacklevel=2,
            )
        native, lossless = self._native.convert(to, chunk_size)
        if not lossless:
            warnings.warn(
                f"the {to} format cannot hold every count of this matrix exactly (experts with different "
                "token counts, counts that are not whole chunks, or several datasets): converted as "
                "llama-imatrix converts it",
                stacklevel=2,
            )
        if self.format == "gguf" and to == "dat" and self.chunk_size is not None:
            warnings.warn(
                f"the legacy .dat format has no chunk size: imatrix.chunk_size {self.chunk_size} is "
                f"dropped (give convert('gguf', chunk_size={self.chunk_size}) to restore it)",
                stacklevel=2,
            )
        return Imatrix(native)

    def write(self, path: PathArg) -> None:
        """Writes the matrix to ``path`` in its format (replaced atomically)."""
        self._native.write(os.fspath(path))

    def to_bytes(self) -> bytes:
        return self._native.to_bytes()

    def __len__(self) -> int:
        return len(self._native)

    def __repr__(self) -> str:
        return f"Imatrix({self.format}, {len(self)} entries, {self.chunk_count} chunks)"


def imatrix(path: PathArg) -> Imatrix:
    """Reads the importance matrix at ``path`` (either format, told apart
    by content)."""
    return Imatrix(_native.Imatrix.read(os.fspath(path)))


def _matrix(arg: Imatrix | PathArg | None) -> Any:
    if arg is None:
        return None
    if isinstance(arg, Imatrix):
        return arg._native
    return os.fspath(arg)


def _tensor_types(arg: Mapping[str, str] | Sequence[str] | None) -> list[str]:
    if arg is None:
        return []
    if isinstance(arg, str):
        return [arg]
    if isinstance(arg, Mapping):
        return [f"{name}={ty}" for name, ty in arg.items()]
    return list(arg)


def _override(key: str, value: Any) -> str:
    """An ``override_kv`` entry as the CLI's ``KEY=TYPE:VALUE`` text."""
    if isinstance(value, bool):
        return f"{key}=bool:{'true' if value else 'false'}"
    if isinstance(value, int):
        return f"{key}=int:{value}"
    if isinstance(value, float):
        return f"{key}=float:{value!r}"
    if isinstance(value, str):
        return f"{key}=str:{value}"
    raise TypeError(f"override_kv[{key!r}]: a bool, int, float or str, not {type(value).__name__}")


def quantize(
    input: PathArg,  # noqa: A002 - the CLI's name
    output: PathArg | None,
    preset: str,
    *,
    imatrix: Imatrix | PathArg | None = None,
    threads: int = 0,
    include_weights: Sequence[str] = (),
    exclude_weights: Sequence[str] = (),
    output_tensor_type: str | None = None,
    token_embedding_type: str | None = None,
    tensor_type: Mapping[str, str] | Sequence[str] | None = None,
    leave_output_tensor: bool = False,
    pure: bool = False,
    allow_requantize: bool = False,
    keep_split: bool = False,
    override_kv: Mapping[str, Any] | Sequence[str] | None = None,
    prune_layers: Sequence[int] = (),
    dry_run: bool = False,
    progress: Callable[[str, int, int], Any] | bool | None = None,
) -> dict[str, Any]:
    """Quantizes the model ``input`` (a path, any shard of a split model,
    a URL or ``ollama:NAME``) to ``output`` with a llama-quantize
    ``preset`` (``"Q4_K_M"``, ``"IQ4_XS"``, any case, or its number): the
    plan and bytes ``gguf quantize`` gives, which are llama-quantize's.
    The flags are ``gguf quantize``'s: ``imatrix`` (a path or an
    :class:`Imatrix`), ``include_weights``/``exclude_weights``,
    ``output_tensor_type``, ``token_embedding_type``, ``tensor_type``
    (``{"attn_q": "q8_0"}`` or ``["attn_q=q8_0"]``, first match wins),
    ``leave_output_tensor``, ``pure``, ``allow_requantize``, ``keep_split``,
    ``override_kv`` (``{"key": 1}`` or ``["key=int:1"]``), ``prune_layers``,
    ``threads`` (0: every core). ``dry_run=True`` writes nothing and returns
    the plan (``output`` may be None). ``progress``: a callable
    ``(stage, done, total)`` or True for a tqdm bar.

    Returns the report: ``tensors`` (each ``name``, ``shape``,
    ``source_type``, ``type``, ``input_bytes``, ``output_bytes``,
    ``fell_back``, ``imatrix``, ``file``), ``file_type``, ``files``,
    ``file_bytes``, ``input_bytes``, ``output_bytes``, ``input_bpw``,
    ``output_bpw``, ``needs_imatrix``, ``requantized``, ``elapsed``."""
    if isinstance(override_kv, Mapping):
        overrides = [_override(k, v) for k, v in override_kv.items()]
    else:
        overrides = list(override_kv or [])
    matrix = _matrix(imatrix)
    _check_threads(threads)
    report_to, done = _progress.callback(progress)
    try:
        report = _native.quantize_model(
            input if isinstance(input, str) else os.fspath(input),
            None if output is None else os.fspath(output),
            str(preset),
            threads=max(threads, 0),
            imatrix=matrix,
            include_weights=list(include_weights),
            exclude_weights=list(exclude_weights),
            output_tensor_type=output_tensor_type,
            token_embedding_type=token_embedding_type,
            tensor_type=_tensor_types(tensor_type),
            leave_output_tensor=leave_output_tensor,
            pure=pure,
            allow_requantize=allow_requantize,
            keep_split=keep_split,
            override_kv=overrides,
            prune_layers=[int(n) for n in prune_layers],
            dry_run=dry_run,
            progress=report_to,
        )
    finally:
        done()
    if dry_run:
        if report["needs_imatrix"] and imatrix is None:
            warnings.warn("this quantization will need an importance matrix (imatrix=)", stacklevel=2)
        if report["requantized"] and not allow_requantize:
            warnings.warn(
                f"{report['requantized']} tensor(s) are already quantized: the real run needs allow_requantize=True",
                stacklevel=2,
            )
    return report


def _check_threads(threads: int) -> None:
    most = _native.max_threads()
    if threads > most:
        warnings.warn(
            f"threads {threads} is more than 4 threads per core ({most // 4} core(s) available): "
            f"quantizing on {most} threads",
            stacklevel=3,
        )


def import_hf(
    dir: PathArg,  # noqa: A002 - the CLI's name
    output: PathArg,
    *,
    type: str = "f16",  # noqa: A002 - the CLI's --type
    imatrix: Imatrix | PathArg | None = None,
    pre_tokenizer: str | None = None,
    split_max_size: int | str | None = None,
    split_max_tensors: int | None = None,
    threads: int = 0,
    lora_base: PathArg | None = None,
    mmproj: bool = False,
    progress: Callable[[str, int, int], Any] | bool | None = None,
) -> dict[str, Any]:
    """Imports the Hugging Face checkpoint in ``dir`` (``config.json``,
    safetensors, tokenizer files) to ``output``: the bytes ``gguf import``
    gives, which are llama.cpp's converter's (``convert_hf_to_gguf.py
    --outtype``) for ``type`` ``"f32"``, ``"f16"``, ``"bf16"``, ``"q8_0"``,
    and llama-quantize's on that f16 file for a preset (``"q4_k_m"``, with
    ``imatrix`` for the presets that take one). ``pre_tokenizer`` names the
    BPE pre-tokenizer of an unknown tokenizer; ``split_max_size`` (bytes,
    or ``"500M"``) and ``split_max_tensors`` write shards as the
    converter's ``--split-max-*``; ``lora_base`` imports ``dir`` as a PEFT
    adapter of that base; ``mmproj=True`` writes the vision projector.
    ``progress``: a callable ``(stage, done, total)`` or True for a tqdm
    bar: stage ``"convert"`` counts the bytes written for f32, f16, bf16
    and q8_0; a preset's import is one pass, the conversion streaming into
    the quantizer, reported as ``"quantize"`` (the quantizer's work).

    Returns the report: ``hf_architecture``, ``architecture``, ``files``,
    ``metadata`` (entries), ``tensors``, ``parameters``, ``bytes``,
    ``elapsed``, ``notes`` (each also a ``UserWarning``: what the import
    knowingly did not do as the converter would)."""
    _check_threads(threads)
    report_to, done = _progress.callback(progress)
    try:
        report = _native.import_hf(
            os.fspath(dir),
            os.fspath(output),
            type=str(type),
            imatrix=_matrix(imatrix),
            pre_tokenizer=pre_tokenizer,
            split_max_size=_size(split_max_size),
            split_max_tensors=split_max_tensors,
            threads=max(threads, 0),
            lora_base=None if lora_base is None else os.fspath(lora_base),
            mmproj=mmproj,
            progress=report_to,
        )
    finally:
        done()
    for note in report["notes"]:
        warnings.warn(note, stacklevel=2)
    return report


def architectures() -> list[dict[str, Any]]:
    """The architectures :func:`import_hf` knows (``gguf import --list``):
    each ``hf_name`` (``config.json``'s), ``gguf`` (``general.architecture``),
    ``experts`` (a mixture of experts) and ``mmproj`` (a vision projector
    ``mmproj=True`` writes)."""
    return [
        {"hf_name": hf, "gguf": gguf_name, "experts": experts, "mmproj": mmproj}
        for hf, gguf_name, experts, mmproj in _native.import_architectures()
    ]

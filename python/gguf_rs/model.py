"""``gguf_rs.open(source)``: gguf-kit's own view of a model, in Python.

Where ``GGUFReader`` copies gguf-py's shape, this is the library's: one
model over one file or every shard of a split model, its metadata as a dict
of Python values (the split keys hidden), its tensors by name with
``to_numpy()``.

>>> import gguf_rs
>>> model = gguf_rs.open("samples/tiny-llama.gguf")  # doctest: +SKIP
>>> model.metadata["general.architecture"]  # doctest: +SKIP
'llama'
>>> model.tensor("token_embd.weight").to_numpy().shape  # doctest: +SKIP
(297, 64)
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from gguf.constants import GGMLQuantizationType

from ._native import Model as _NativeModel
from .tokenizer import Tokenizer

__all__ = ["ChatPrompt", "Model", "Tensor", "open"]


class Tensor:
    """One tensor of a model: ``name``, ``tensor_type`` (gguf-py's
    ``GGMLQuantizationType`` member, as ``GGUFReader``'s tensors have it; a
    type id gguf-py does not know stays an ``int``), ``shape`` (numpy order:
    rows last, as gguf-py's ``tensor.data`` has it), ``n_elements``."""

    __slots__ = ("_model", "name", "tensor_type", "shape", "n_elements")

    def __init__(self, model: _NativeModel, name: str, type_id: int, dims: list[int]):
        self._model = model
        self.name = name
        try:
            self.tensor_type: GGMLQuantizationType | int = GGMLQuantizationType(type_id)
        except ValueError:  # an id gguf-py does not know: kept as the number
            self.tensor_type = type_id
        self.shape = tuple(reversed(dims))
        self.n_elements = math.prod(dims)

    def to_numpy(self) -> np.ndarray:
        """The values as float32 of ``shape``, decoded by the library on
        every core with the GIL released."""
        return np.asarray(self._model.tensor_f32(self.name)).reshape(self.shape)

    def raw(self) -> np.ndarray:
        """The stored bytes (file byte order), as uint8."""
        return np.frombuffer(self._model.tensor_bytes(self.name), dtype=np.uint8)

    def __repr__(self) -> str:
        kind = getattr(self.tensor_type, "name", self.tensor_type)
        return f"Tensor({self.name!r}, {kind}, shape={self.shape})"


class ChatPrompt:
    """A rendered conversation (:meth:`Model.chat`): ``text``, ``ids`` and
    ``input_ranges`` (byte ranges of ``text.encode()`` from the
    conversation; the rest is the template's)."""

    __slots__ = ("text", "ids", "input_ranges")

    def __init__(self, text: str, ids: list[int], input_ranges: list[tuple[int, int]]):
        self.text = text
        self.ids = ids
        self.input_ranges = input_ranges

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"ChatPrompt({len(self.text)} characters, {len(self.ids)} tokens)"


class Model:
    """A model opened by gguf-kit (see :func:`open`)."""

    def __init__(self, source: str | os.PathLike[str]):
        self._native = _NativeModel(source)
        self.metadata: dict[str, Any] = self._native.metadata()
        """Every metadata entry in file order: ints, floats, bools, strs
        and (nested) lists."""
        self.value_types: dict[str, str] = dict(self._native.value_types())
        """Each key's GGUF value type name (``u32``, ``string``, ``array``, ...)."""
        self.tensors: list[Tensor] = [Tensor(self._native, *t) for t in self._native.tensors()]
        self._by_name = {t.name: t for t in self.tensors}
        self.shard_count: int = self._native.shard_count()

    def summary(self) -> dict[str, Any]:
        """The model at a glance, computed by the library
        (``ModelSummary::of``, what ``gguf inspect`` prints): ``architecture``,
        ``model_type``, ``name``, ``parameters`` (and ``parameters_text`` as
        llama.cpp prints it, ``"270.43 M"``), ``tensor_bytes``,
        ``bits_per_weight``, ``file_type`` (``file_type_guessed``),
        ``quantization`` (``"Q4_K - Medium"``), ``tensor_types`` (count per
        type name, most common first), ``context_length``, ``block_count``,
        ``embedding_length``, ``vocab_size``, ``tokenizer_model``; None where
        the file does not say."""
        return self._native.summary()

    def estimate(
        self,
        context: int | None = None,
        *,
        batch: int | None = None,
        ubatch: int | None = None,
        parallel: int | None = None,
        flash_attn: str | None = None,
        cache_type_k: str | None = None,
        cache_type_v: str | None = None,
        swa_full: bool = False,
        kv_unified: bool = False,
        n_gpu_layers: int | None = None,
        tensor_split: Sequence[float] | None = None,
        no_kv_offload: bool = False,
        no_mmap: bool = False,
        fit: int | None = None,
    ) -> dict[str, Any]:
        """What llama.cpp allocates for this model, computed by the library
        (``Estimate::of``): the dict ``gguf estimate --json`` prints
        (``weights_bytes``, ``kv_cache_bytes``, ``output_buffer_bytes``,
        ``compute_buffer_bytes``, ``total_bytes``, ``context``, ``caches``,
        ``devices``). The arguments are llama.cpp's ``-c``, ``-b``, ``-ub``,
        ``-np``, ``-fa`` (``"on"``, ``"off"``, ``"auto"``), ``-ctk`` and
        ``-ctv`` (``"q8_0"``, ...), ``--swa-full``, ``-kvu``, ``-ngl``,
        ``-ts`` (GPU shares, ``[3, 1]``; without it no GPU is assumed),
        ``-nkvo`` and ``--no-mmap``; None takes llama.cpp's default (context
        0 or None: the training context). ``fit`` is ``gguf estimate
        --fit`` with the budget in bytes (of host RAM without
        ``tensor_split``, else per GPU): the result then holds ``"fit"``
        (``max_ctx``, ``max_gpu_layers``, ...), as ``--json`` prints it.
        Settings llama.cpp refuses raise :class:`gguf_rs.GGUFError`."""
        return self._native.estimate(
            context,
            batch,
            ubatch,
            parallel,
            flash_attn,
            cache_type_k,
            cache_type_v,
            swa_full,
            kv_unified,
            n_gpu_layers,
            None if tensor_split is None else [float(x) for x in tensor_split],
            no_kv_offload,
            no_mmap,
            fit,
        )

    def tokenizer(self) -> Tokenizer:
        """The model's tokenizer, built from its ``tokenizer.*`` metadata
        (:class:`gguf_rs.Tokenizer`); :class:`gguf_rs.GGUFError` when the
        metadata is missing or llama.cpp would refuse it."""
        return Tokenizer(self._native.tokenizer())

    def chat(
        self,
        messages: Sequence[dict[str, Any]] | dict[str, Any],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        add_generation_prompt: bool = True,
        enable_thinking: bool | None = None,
        template: str | None = None,
        template_source: str | None = None,
        chat_template_kwargs: dict[str, Any] | None = None,
    ) -> ChatPrompt:
        """The prompt llama.cpp renders for a conversation with this model's
        chat template (``gguf chat``): ``messages`` as the OpenAI chat format
        has them (roles, content as text or parts, ``tool_calls``, tool
        results, ``reasoning_content``), or a whole llama-server request body
        (``{"messages": ..., "tools": ...}``); ``tools`` (OpenAI tool
        definitions); ``add_generation_prompt``; ``enable_thinking`` (None:
        llama.cpp's default); ``template`` a name of :meth:`chat_templates`
        or ``template_source`` a Jinja template to try;
        ``chat_template_kwargs`` extra template variables. The date the
        template sees is today (UTC), or ``SOURCE_DATE_EPOCH``'s day.

        Returns a :class:`ChatPrompt`: ``text``, ``ids`` (llama.cpp's token
        ids, special-token text typed in a message kept as text) and
        ``input_ranges`` (the byte ranges of ``text.encode()`` that came from
        the conversation). A template that does not parse, raises or
        exceeds its limits raises :class:`gguf_rs.GGUFError`."""
        import json

        request: dict[str, Any] = dict(messages) if isinstance(messages, dict) else {"messages": list(messages)}
        if tools is not None:
            request["tools"] = list(tools)
        kwargs = dict(request.get("chat_template_kwargs") or {})
        kwargs.update(chat_template_kwargs or {})
        text, ranges, ids = self._native.chat(
            json.dumps(request),
            add_generation_prompt,
            enable_thinking,
            template,
            template_source,
            json.dumps(kwargs) if kwargs else None,
        )
        return ChatPrompt(text, ids, ranges)

    def chat_templates(self) -> list[str]:
        """The names of the model's chat templates: ``default``
        (``tokenizer.chat_template``), then each ``NAME`` of
        ``tokenizer.chat_template.NAME``."""
        return self._native.chat_templates()

    def tensor(self, name: str) -> Tensor:
        """The tensor called ``name`` (``KeyError`` if there is none)."""
        return self._by_name[name]

    def __repr__(self) -> str:
        return f"Model({len(self.metadata)} keys, {len(self.tensors)} tensors, {self.shard_count} file(s))"


def open(source: str | os.PathLike[str]) -> Model:  # noqa: A001 - the library's verb
    """Opens ``source`` through gguf-kit's door: a path (any shard of a split
    model opens the whole set, local or remote), or a string naming a URL
    (``http(s)://``, ``hf://OWNER/REPO/FILE[@REV]``, ``ms://``, ``s3://``,
    ``gs://``, ``az://``, ``ollama://HOST/NAME[:TAG]``) or an entry of the
    local Ollama store (``ollama:NAME[:TAG]``). A remote model costs its
    header (at most 3 range reads) to open and one range read per tensor
    read. Broken files raise :class:`gguf_rs.GGUFError` (a ``ValueError``),
    whose message names the file and shows URLs without their credentials; a
    file that cannot be opened raises what ``open()`` and gguf-py's
    ``GGUFReader`` raise for it: ``FileNotFoundError`` (also for a shard
    missing from a split model), ``PermissionError``, ``IsADirectoryError``,
    with the path as its ``filename``."""
    return Model(source)

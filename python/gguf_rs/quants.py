"""``dequantize`` and ``quantize``: drop-ins for ``gguf.quants``'s.

Same arguments and the same numpy results (shape, dtype, values) as gguf-py
0.19 for every type it handles, and every type gguf-kit's codecs handle
beyond it (I8..I64 excepted: they are not quantized types). The work runs in
Rust on every core with the GIL released.

>>> import numpy as np
>>> from gguf import GGMLQuantizationType as T
>>> from gguf_rs import quants
>>> q = quants.quantize(np.linspace(-1, 1, 64, dtype=np.float32).reshape(2, 32), T.Q8_0)
>>> q.shape, q.dtype
((2, 34), dtype('uint8'))
>>> quants.dequantize(q, T.Q8_0).shape
(2, 32)
"""

from __future__ import annotations

import numpy as np
import gguf.quants as _gguf_py_quants
from gguf.constants import GGMLQuantizationType
from gguf.quants import QuantError

from . import _native

# gguf-py's own functions, kept before install() replaces the names: lazy
# tensors (gguf.lazy.LazyNumpyTensor, what llama.cpp's converter passes)
# go to them, since they build a graph instead of computing.
_gguf_py_dequantize = _gguf_py_quants.dequantize
_gguf_py_quantize = _gguf_py_quants.quantize

__all__ = ["dequantize", "quantize", "QuantError"]


def _geometry(qtype: GGMLQuantizationType, op: str) -> tuple[int, int]:
    """Block size and bytes per block; ``NotImplementedError`` (as gguf-py
    raises) for a type the library has no codec for."""
    return _native.block_geometry(int(qtype), op)


def dequantize(data: np.ndarray, qtype: GGMLQuantizationType) -> np.ndarray:
    """Decodes ``data`` (the raw bytes of ``qtype`` blocks, rows in the last
    axis; or the elements, for F32 and F16) to float32, as
    ``gguf.quants.dequantize`` does."""
    if not isinstance(data, np.ndarray):
        return _gguf_py_dequantize(data, qtype)
    if qtype == GGMLQuantizationType.F32:
        return data.view(np.float32)
    if qtype == GGMLQuantizationType.F16:
        return data.view(np.float16).astype(np.float32)
    block_size, type_size = _geometry(qtype, "dequantize")
    shape = data.shape
    if shape[-1] % type_size != 0:
        raise ValueError(
            f"Quantized tensor bytes per row ({shape[-1]}) is not a multiple of {qtype.name} type size ({type_size})"
        )
    out_shape = (*shape[:-1], shape[-1] // type_size * block_size)
    # Read in place (a tensor's data is a view of the file's map) and
    # returned as numpy's own array over the library's vector: no copies.
    raw = np.ascontiguousarray(data).view(np.uint8)
    return np.asarray(_native.dequantize(raw, int(qtype))).reshape(out_shape)


def quantize(data: np.ndarray, qtype: GGMLQuantizationType) -> np.ndarray:
    """Encodes ``data`` (floats, rows in the last axis) as ``qtype`` blocks:
    a uint8 array of the byte shape, as ``gguf.quants.quantize`` returns."""
    if not isinstance(data, np.ndarray):
        return _gguf_py_quantize(data, qtype)
    if qtype == GGMLQuantizationType.F32:
        return data.astype(np.float32, copy=False)
    if qtype == GGMLQuantizationType.F16:
        return data.astype(np.float16, copy=False)
    block_size, type_size = _geometry(qtype, "quantize")
    shape = data.shape
    if shape[-1] % block_size != 0:
        raise QuantError(f"Can't quantize tensor with shape {shape} to {qtype.name}")
    out_shape = (*shape[:-1], shape[-1] // block_size * type_size)
    raw = np.ascontiguousarray(data, dtype=np.float32).view(np.uint8)
    out = _native.quantize(raw, shape[-1], int(qtype))
    return np.frombuffer(out, dtype=np.uint8).reshape(out_shape)

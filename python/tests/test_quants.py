"""gguf_rs.quants against gguf.quants (gguf-py 0.19): the same shape, dtype
and bits for every type both handle, on random and real blocks."""

from __future__ import annotations

from pathlib import Path

import gguf
import gguf.quants as gq
import numpy as np
import pytest
from conftest import GEMMA, SAMPLE
from gguf import GGMLQuantizationType as T

import gguf_rs
from gguf_rs import quants

# Every type gguf-py dequantizes: F32, F16 and its per-type classes.
GGUF_PY_DEQUANTIZES = [T.F32, T.F16, *sorted(gq._type_traits, key=int)]
GGUF_PY_QUANTIZES = [T.F32, T.F16, T.BF16, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0, T.TQ1_0, T.TQ2_0, T.MXFP4]


def assert_same_bits(ours: np.ndarray, theirs: np.ndarray, what: str) -> None:
    assert ours.shape == theirs.shape, what
    assert ours.dtype == theirs.dtype, what
    o = ours.reshape(-1)
    t = theirs.reshape(-1)
    if o.dtype.kind == "f":
        o_nan, t_nan = np.isnan(o), np.isnan(t)
        assert np.array_equal(o_nan, t_nan), what
        bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[o.dtype.itemsize]
        mismatch = np.flatnonzero(o[~o_nan].view(bits) != t[~t_nan].view(bits))
        assert mismatch.size == 0, f"{what}: {mismatch.size} values differ, first at {mismatch[:5]}: {o[~o_nan][mismatch[:5]]} vs {t[~t_nan][mismatch[:5]]}"
    else:
        assert np.array_equal(o, t), what


def random_blocks(qtype: T, rows: int, blocks_per_row: int, seed: int) -> np.ndarray:
    """Random bytes, with every f16 that gguf-py reads as a scale finite:
    the bytes of a real quantization of random values, then bytes scrambled
    around them would not keep scales finite, so use real quantizations
    where the library can make them and raw random bytes otherwise."""
    block_size, type_size = gguf.GGML_QUANT_SIZES[qtype]
    rng = np.random.default_rng(seed)
    if qtype in (T.F32, T.F16):
        dtype = np.float32 if qtype == T.F32 else np.float16
        return rng.standard_normal((rows, blocks_per_row * block_size)).astype(dtype)
    return rng.integers(0, 256, size=(rows, blocks_per_row * type_size), dtype=np.uint8)


@pytest.mark.parametrize("qtype", GGUF_PY_DEQUANTIZES, ids=lambda t: t.name)
def test_dequantize_matches_gguf_py_on_random_blocks(qtype: T) -> None:
    data = random_blocks(qtype, rows=3, blocks_per_row=4, seed=int(qtype))
    assert_same_bits(quants.dequantize(data, qtype), gq.dequantize(data, qtype), qtype.name)


@pytest.mark.parametrize("qtype", GGUF_PY_QUANTIZES, ids=lambda t: t.name)
def test_quantize_matches_gguf_py(qtype: T) -> None:
    block_size = gguf.GGML_QUANT_SIZES[qtype][0]
    rng = np.random.default_rng(7)
    rows = rng.standard_normal((5, 8 * max(block_size, 32))).astype(np.float32)
    rows[0, :block_size] = 0.0  # an all-zero block
    ours, theirs = quants.quantize(rows, qtype), gq.quantize(rows, qtype)
    assert_same_bits(ours, theirs, qtype.name)
    if qtype not in (T.F32, T.F16):
        assert_same_bits(quants.dequantize(ours, qtype), gq.dequantize(theirs, qtype), qtype.name)


def test_types_beyond_gguf_py_round_trip() -> None:
    rng = np.random.default_rng(3)
    rows = rng.standard_normal((2, 512)).astype(np.float32)
    for qtype in (T.Q2_K, T.Q3_K, T.Q4_K, T.Q5_K, T.Q6_K, T.Q8_K, T.IQ4_NL, T.IQ4_XS, T.NVFP4):
        q = quants.quantize(rows, qtype)
        back = quants.dequantize(q, qtype)
        assert back.shape == rows.shape and back.dtype == np.float32, qtype.name
        assert np.abs(back - rows).mean() < 0.5, qtype.name
    with pytest.raises(NotImplementedError):
        gq.dequantize(quants.quantize(rows, T.Q8_K), T.Q8_K)  # gguf-py cannot; we can (above)


def test_errors() -> None:
    with pytest.raises(gq.QuantError):
        quants.quantize(np.zeros((2, 33), np.float32), T.Q4_0)
    with pytest.raises(ValueError):
        quants.dequantize(np.zeros((2, 17), np.uint8), T.Q4_0)
    with pytest.raises(NotImplementedError):
        quants.quantize(np.zeros((1, 256), np.float32), T.IQ2_XXS)  # needs an importance matrix


def test_real_blocks_of_the_sample_and_gemma() -> None:
    files = [SAMPLE] + ([Path(GEMMA)] if GEMMA else [])
    for path in files:
        reader = gguf_rs.GGUFReader(path)
        seen: set[T] = set()
        for tensor in reader.tensors:
            if tensor.tensor_type in seen or tensor.tensor_type not in GGUF_PY_DEQUANTIZES:
                continue
            seen.add(tensor.tensor_type)
            assert_same_bits(
                quants.dequantize(tensor.data, tensor.tensor_type),
                gq.dequantize(tensor.data, tensor.tensor_type),
                f"{path.name}:{tensor.name}",
            )
        assert seen, path
    if not GEMMA:
        print("skipped: Gemma's tensors (set GGUF_GEMMA_MODEL)")


def test_lazy_tensors_go_to_gguf_py() -> None:
    from gguf.lazy import LazyNumpyTensor

    blocks = quants.quantize(np.linspace(-1, 1, 64, dtype=np.float32).reshape(2, 32), T.Q8_0)
    lazy = quants.dequantize(LazyNumpyTensor.from_eager(blocks), T.Q8_0)
    assert isinstance(lazy, LazyNumpyTensor) and lazy.shape == (2, 32)
    assert_same_bits(LazyNumpyTensor.to_eager(lazy), quants.dequantize(blocks, T.Q8_0), "lazy")
    gguf_rs.install()
    try:
        # Installed, gguf-py's lazy path still works (no recursion into ours).
        again = gq.dequantize(LazyNumpyTensor.from_eager(blocks), T.Q8_0)
        assert_same_bits(LazyNumpyTensor.to_eager(again), quants.dequantize(blocks, T.Q8_0), "installed")
    finally:
        gguf_rs.uninstall()


def test_dequantize_reads_the_array_in_place_and_owns_its_result() -> None:
    """The input is read where numpy keeps it (a strided view is made
    contiguous first); the result is numpy's own writable float32 array
    over the library's memory, alive as long as the array is."""
    q = quants.quantize(np.linspace(-4, 4, 64 * 32, dtype=np.float32).reshape(64, 32), T.Q8_0)
    expected = gq.dequantize(q, T.Q8_0)
    out = quants.dequantize(q, T.Q8_0)
    assert_same_bits(out, expected, "contiguous")
    assert out.flags.c_contiguous and out.flags.writeable and out.flags.owndata is False
    owner = out
    while isinstance(owner, np.ndarray):
        owner = owner.base
    assert type(owner).__name__ == "F32Buffer"
    out[0, 0] = 123.0  # the memory is the array's to write
    del q
    import gc

    gc.collect()
    assert out[0, 0] == 123.0 and np.array_equal(out[1:], expected[1:])
    wide = np.zeros((64, 2 * 34), np.uint8)
    wide[:, ::2] = quants.quantize(np.ones((64, 32), np.float32), T.Q8_0)
    strided = wide[:, ::2]
    assert not strided.flags.c_contiguous
    # gguf-py refuses a strided view ("the last axis must be contiguous").
    assert np.array_equal(quants.dequantize(strided, T.Q8_0), gq.dequantize(np.ascontiguousarray(strided), T.Q8_0))


def test_native_dequantize_takes_only_real_uint8_arrays() -> None:
    """The address of the bytes comes from ndarray itself: a subclass that
    claims another address is not believed; other objects are refused."""

    class Lying(np.ndarray):
        @property
        def __array_interface__(self):  # type: ignore[override]
            return {"version": 3, "shape": (1 << 40,), "typestr": "|u1", "data": (8, True)}

    q = quants.quantize(np.ones((2, 32), np.float32), T.Q8_0)
    lying = q.reshape(-1).view(Lying)
    expected = gq.dequantize(q, T.Q8_0).reshape(-1)
    assert np.array_equal(np.asarray(gguf_rs._native.dequantize(lying, int(T.Q8_0))), expected)
    with pytest.raises(TypeError):
        gguf_rs._native.dequantize(q.view(np.uint16), int(T.Q8_0))
    with pytest.raises(TypeError):
        gguf_rs._native.dequantize([1, 2, 3], int(T.Q8_0))

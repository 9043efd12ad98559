#!/usr/bin/env python3
"""Write tests/oracles/codec_vectors.bin: tensor codec test vectors produced by
third-party implementations, for gguf-core/tests/codecs.rs.

Oracles:
  gguf-py  -- PyPI `gguf` (0.19.0): gguf.quants.dequantize / quantize (numpy).
  ggml     -- ggml's own C code in libggml-base.so from the llama-cpp-python
              package: dequantize_row_*, quantize_row_*_ref, ggml_quantize_chunk
              (IQ4_NL), ggml_fp32_to_fp16_row / ggml_fp32_to_bf16_row.
  numpy    -- plain numpy casts, for I8..I64 and F64 which neither library
              dequantizes (ggml has no to_float for them).
  convert-endian -- big-endian copies made with gguf-py's own
              gguf_convert_endian byte-swap functions (Q4_0, Q8_0, Q4_K, Q6_K,
              MXFP4, NVFP4) or, for the other types, by swapping every field
              ggml declares wider than a byte (DESIGN.md section 3, "policy").

The ggml oracle is optional at generation time only; CI reads the committed
file. Regenerate with:  python3 tests/oracles/codec_vectors.py

File format (little-endian): b"GGCV", u32 version (1), u32 record count, then
records: u8 kind (0 dequantize, 1 quantize), u8 oracle (0 gguf-py, 1 ggml,
2 numpy, 3 policy/convert-endian), u8 big_endian, u8 reserved, u32 ggml type
id, u32 len + input bytes, u32 len + expected output bytes, u32 len + label.
Dequantize: input = blocks, output = f32. Quantize: input = f32, output = blocks.
"""
import ctypes
import os
import struct
import sys
import warnings

import numpy as np
from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType as T
import gguf.quants as gq

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "codec_vectors.bin")

# ggml's sizes (gguf-py lists Q8_1 as 40 bytes; ggml's block is 36).
SIZES = dict(GGML_QUANT_SIZES)
SIZES[T.Q8_1] = (32, 36)
Q2_0_ID = 42
SIZES_BY_ID = {int(t): s for t, s in SIZES.items()}
SIZES_BY_ID[Q2_0_ID] = (64, 18)

# Byte offsets of the f16 fields inside one block: used to plant chosen scales
# (random bytes would make most scales huge or NaN) and to byte-swap.
F16_FIELDS = {
    "Q4_0": [0], "Q4_1": [0, 2], "Q5_0": [0], "Q5_1": [0, 2], "Q8_0": [0], "Q8_1": [0, 2],
    "Q2_K": [80, 82], "Q3_K": [108], "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208],
    "IQ2_XXS": [0], "IQ2_XS": [0], "IQ2_S": [0], "IQ3_XXS": [0], "IQ3_S": [0], "IQ1_S": [0],
    "IQ4_NL": [0], "IQ4_XS": [0], "TQ1_0": [52], "TQ2_0": [64], "Q1_0": [0], "Q2_0": [0],
}
# Other multi-byte fields (offset, width, count) swapped in big-endian files.
OTHER_FIELDS = {
    "IQ2_XXS": [(2, 2, 32)], "IQ2_XS": [(2, 2, 32)], "IQ1_S": [(34, 2, 8)], "IQ4_XS": [(2, 2, 1)],
    "Q8_K": [(0, 4, 1), (260, 2, 16)],
}
NAMES = {int(t): t.name for t in T}
NAMES[Q2_0_ID] = "Q2_0"

rng = np.random.default_rng(20261121)
records = []


def rec(kind, oracle, be, tid, inp, out, label):
    records.append((kind, oracle, be, tid, bytes(inp), bytes(out), label.encode()))


def nice_scales(n):
    """A mix of ordinary, tiny, subnormal, huge, zero, negative, Inf and NaN f16 scales."""
    special = np.array([0x0000, 0x8000, 0x0001, 0x03FF, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE00],
                       dtype=np.uint16)
    ordinary = np.abs(rng.normal(0, 0.02, n)).astype(np.float16).view(np.uint16)
    pick = rng.random(n) < 0.2
    ordinary[pick] = rng.choice(special, pick.sum())
    return ordinary


def random_blocks(name, nblocks):
    bs, ts = SIZES_BY_ID[tid_of(name)]
    raw = rng.integers(0, 256, size=(nblocks, ts), dtype=np.uint8)
    for off in F16_FIELDS.get(name, []):
        s = nice_scales(nblocks)
        raw[:, off] = s & 0xFF
        raw[:, off + 1] = s >> 8
    if name == "Q8_K":
        d = rng.normal(0, 0.01, nblocks).astype(np.float32)
        d[0] = np.float32("nan")
        raw[:, 0:4] = d.view(np.uint8).reshape(nblocks, 4)
    if name in ("MXFP4",):
        raw[:, 0] = rng.integers(100, 140, nblocks)
        raw[0, 0] = 0
        raw[1 % nblocks, 0] = 1
        raw[2 % nblocks, 0] = 255
    if name == "NVFP4":
        raw[0, 0:4] = [0, 0x7F, 0x7E, 0x01]
    return raw


def tid_of(name):
    return Q2_0_ID if name == "Q2_0" else int(T[name])


def swap_policy(name, raw):
    """Big-endian copy by DESIGN rule: every ggml field wider than a byte swapped."""
    be = raw.copy()
    for off in F16_FIELDS.get(name, []):
        be[:, [off, off + 1]] = be[:, [off + 1, off]]
    for off, width, count in OTHER_FIELDS.get(name, []):
        for k in range(count):
            a = off + k * width
            be[:, a:a + width] = be[:, a:a + width][:, ::-1]
    return be


def swap_convert_endian(name, raw):
    """Big-endian copy made by gguf-py's gguf_convert_endian, when it handles the type."""
    try:
        from gguf.scripts import gguf_convert_endian as ce
    except Exception:
        return None
    fn = ce.byteswap_tensors.get(T[name]) if name in T.__members__ else None
    if fn is None:
        return None

    class Tensor:
        pass

    t = Tensor()
    t.data = raw.copy().reshape(-1)
    ts = raw.shape[1]
    for b in range(raw.shape[0]):
        fn(t, b * ts)
    return t.data.reshape(raw.shape)


# ---------------- ggml (ctypes) ----------------

def load_ggml():
    try:
        import llama_cpp
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(llama_cpp.__file__), "lib", "libggml-base.so")
    if not os.path.exists(path):
        return None
    return ctypes.CDLL(path)


GGML = load_ggml()
FP = ctypes.POINTER(ctypes.c_float)


def cname(name):
    """ggml's C spelling: lower case except the K of the k-quants."""
    return name.lower().replace("_k", "_K")


def ggml_dequant(name, raw):
    bs, ts = SIZES_BY_ID[tid_of(name)]
    fn = getattr(GGML, f"dequantize_row_{cname(name)}")
    fn.argtypes = [ctypes.c_void_p, FP, ctypes.c_int64]
    src = np.ascontiguousarray(raw)
    out = np.zeros(raw.shape[0] * bs, dtype=np.float32)
    fn(src.ctypes.data, out.ctypes.data_as(FP), out.size)
    return out


def ggml_quant(name, x):
    bs, ts = SIZES_BY_ID[tid_of(name)]
    x = np.ascontiguousarray(x, dtype=np.float32)
    out = np.zeros(x.size // bs * ts, dtype=np.uint8)
    if name == "IQ4_NL":
        f = GGML.ggml_quantize_chunk
        f.argtypes = [ctypes.c_int, FP, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, FP]
        f.restype = ctypes.c_size_t
        f(tid_of(name), x.ctypes.data_as(FP), out.ctypes.data, 0, 1, x.size, None)
    elif name in ("F16", "BF16"):
        f = GGML.ggml_fp32_to_fp16_row if name == "F16" else GGML.ggml_fp32_to_bf16_row_ref
        f.argtypes = [FP, ctypes.c_void_p, ctypes.c_int64]
        f(x.ctypes.data_as(FP), out.ctypes.data, x.size)
    else:
        f = getattr(GGML, f"quantize_row_{cname(name)}_ref")
        f.argtypes = [FP, ctypes.c_void_p, ctypes.c_int64]
        f(x.ctypes.data_as(FP), out.ctypes.data, x.size)
    return out


# ---------------- inputs for quantizers ----------------

def quant_inputs(bs, nblocks):
    """Blocks of f32: gaussian, skewed, all-zero, constant, one outlier, tiny,
    subnormal, huge, mixed signs with an exact tie, Inf and NaN elements."""
    blocks = []
    for k in range(nblocks):
        blocks.append(rng.normal(0, 1, bs) * 10 ** rng.uniform(-3, 2))
    blocks.append(rng.normal(0.5, 0.1, bs))  # all positive, min > 0
    blocks.append(-np.abs(rng.normal(0, 1, bs)))  # all negative
    blocks.append(np.zeros(bs))
    blocks.append(np.full(bs, 0.3))
    b = rng.normal(0, 0.01, bs); b[bs // 3] = 50.0; blocks.append(b)
    blocks.append(rng.normal(0, 1e-20, bs))
    blocks.append(rng.normal(0, 1e-40, bs).astype(np.float32))  # f32 subnormals
    blocks.append(rng.normal(0, 1e30, bs))
    b = np.round(rng.normal(0, 4, bs)) / 4; blocks.append(b)  # many exact ties
    b = rng.normal(0, 1, bs); b[1] = np.inf; blocks.append(b)
    b = rng.normal(0, 1, bs); b[2] = np.nan; blocks.append(b)
    b = rng.normal(0, 1, bs); b[0] = -np.inf; b[3] = np.nan; blocks.append(b)
    return np.concatenate(blocks).astype(np.float32)


DEQUANT_TYPES = ["F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q8_1", "Q2_K", "Q3_K",
                 "Q4_K", "Q5_K", "Q6_K", "Q8_K", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ1_S",
                 "IQ1_M", "IQ4_NL", "IQ4_XS", "TQ1_0", "TQ2_0", "MXFP4", "NVFP4", "Q1_0", "Q2_0"]
# gguf-py cannot dequantize these (ORACLES.md); Q8_1 is skipped because
# gguf-py's Q8_1 block is 40 bytes (f32 d and s), ggml's is 36.
GGUFPY_NO_DEQUANT = {"Q8_K", "Q1_0", "Q2_0", "Q8_1"}
GGML_DEQUANT = {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_K",
                "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ1_S", "IQ1_M", "IQ4_NL", "IQ4_XS",
                "TQ1_0", "TQ2_0", "MXFP4", "NVFP4", "Q1_0", "Q2_0"}
GGUFPY_QUANT = ["F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "TQ1_0", "TQ2_0", "MXFP4"]
GGML_QUANT = ["F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q8_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K",
              "Q6_K", "Q8_K", "IQ4_NL", "TQ1_0", "TQ2_0", "MXFP4", "NVFP4", "Q1_0", "Q2_0"]


def main():
    warnings.simplefilter("ignore")
    np.seterr(all="ignore")
    if GGML is None:
        print("WARNING: llama-cpp-python's libggml-base.so not found: ggml vectors will be MISSING",
              file=sys.stderr)
    for name in DEQUANT_TYPES:
        tid = tid_of(name)
        bs, ts = SIZES_BY_ID[tid]
        nblocks = max(4, 64 // bs) if bs > 1 else 300
        raw = random_blocks(name, nblocks)
        if name in ("F16", "BF16"):
            raw = np.concatenate([raw.reshape(-1), np.array([0, 0x7C, 0x01, 0x7C, 0x00, 0x7E, 0x01, 0xFE,
                                                             0x80, 0x7F, 0x00, 0x80, 0x01, 0x00], np.uint8)])
            raw = raw.reshape(-1, ts)
        if name not in GGUFPY_NO_DEQUANT:
            want = gq.dequantize(raw.reshape(-1) if bs == 1 else raw, T[name]).astype(np.float32).reshape(-1)
            rec(0, 0, 0, tid, raw.tobytes(), want.tobytes(), f"{name} gguf-py dequantize")
        if name == "Q8_1":
            # No ggml to_float for Q8_1 and gguf-py's Q8_1 block has the wrong
            # size; its values are Q8_0's (d, qs) once the s field is dropped.
            as_q8_0 = np.concatenate([raw[:, 0:2], raw[:, 4:36]], axis=1)
            want = gq.dequantize(as_q8_0, T.Q8_0).astype(np.float32).reshape(-1)
            rec(0, 0, 0, tid, raw.tobytes(), want.tobytes(), "Q8_1 gguf-py Q8_0 dequantize (s dropped)")
            rec(0, 3, 1, tid, swap_policy(name, raw).tobytes(), want.tobytes(), "Q8_1 big-endian (policy)")
        if GGML is not None and name in GGML_DEQUANT:
            want = ggml_dequant(name, raw)
            rec(0, 1, 0, tid, raw.tobytes(), want.tobytes(), f"{name} ggml dequantize_row")
            be = swap_convert_endian(name, raw)
            src = "gguf_convert_endian"
            if be is None:
                be, src = swap_policy(name, raw), "field swap policy"
            rec(0, 3, 1, tid, be.tobytes(), want.tobytes(), f"{name} big-endian ({src}) vs ggml")
        if name in ("F32", "F16", "BF16"):
            want = gq.dequantize(raw.reshape(-1), T[name]).astype(np.float32)
            dt = {"F32": ">f4", "F16": ">u2", "BF16": ">u2"}[name]
            be = raw.reshape(-1).view("<" + dt[1:]).astype(dt).view(np.uint8)
            rec(0, 3, 1, tid, be.tobytes(), want.tobytes(), f"{name} big-endian (numpy byteswap)")
    # Plain types neither library dequantizes: numpy casts are the oracle.
    for name, dt in [("I8", np.int8), ("I16", np.int16), ("I32", np.int32), ("I64", np.int64), ("F64", np.float64)]:
        tid = tid_of(name)
        if dt == np.float64:
            v = np.concatenate([rng.normal(0, 1e3, 40), [np.inf, -np.inf, np.nan, 1e300, -1e-300, 3.4028235e38,
                                                          3.4028236e38, 1 + 2 ** -24, 1 + 3 * 2 ** -24]])
        else:
            info = np.iinfo(dt)
            v = np.concatenate([rng.integers(info.min, info.max, 60, dtype=dt, endpoint=True),
                                [info.min, info.max, 0, -1, 16777217 % (int(info.max) + 1)]])
        v = np.asarray(v).astype(dt)
        want = v.astype(np.float32)
        rec(0, 2, 0, tid, v.astype("<" + v.dtype.str[1:]).tobytes(), want.tobytes(), f"{name} numpy astype")
        rec(0, 2, 1, tid, v.astype(">" + v.dtype.str[1:]).tobytes(), want.tobytes(), f"{name} big-endian numpy")

    for name in sorted(set(GGUFPY_QUANT) | set(GGML_QUANT)):
        tid = tid_of(name)
        bs, ts = SIZES_BY_ID[tid]
        unit = bs if bs > 1 else 32
        nb = 4 if bs <= 64 else 3
        x = quant_inputs(unit, nb)
        if name == "IQ4_NL":
            # The first block must not be all-zero: see gguf-core tensor docs
            # (ggml's iq4_nl reference reads uninitialized memory there).
            x[:unit] = rng.normal(0, 1, unit)
        if name in GGUFPY_QUANT:
            # gguf-py quirk: its np.max/np.abs scale search propagates a NaN
            # element into the block scale (d = NaN, all codes 0), while ggml's
            # `amax < fabsf(v)` skips NaNs. ggml is the reference, so blocks
            # holding a NaN are compared against ggml only.
            blocks = x.reshape(-1, unit)
            xs = blocks[~np.isnan(blocks).any(axis=1)].reshape(-1)
            got = gq.quantize(xs.reshape(-1, unit) if bs > 1 else xs, T[name])
            rec(1, 0, 0, tid, xs.tobytes(), np.asarray(got).view(np.uint8).tobytes(), f"{name} gguf-py quantize")
        if GGML is not None and name in GGML_QUANT:
            rec(1, 1, 0, tid, x.tobytes(), ggml_quant(name, x).tobytes(), f"{name} ggml quantize_row_ref")

    with open(OUT, "wb") as f:
        f.write(b"GGCV" + struct.pack("<II", 1, len(records)))
        for kind, oracle, be, tid, inp, out, label in records:
            f.write(struct.pack("<BBBBI", kind, oracle, be, 0, tid))
            for blob in (inp, out, label):
                f.write(struct.pack("<I", len(blob)) + blob)
    print(f"wrote {len(records)} records, {os.path.getsize(OUT)} bytes to {OUT}")


if __name__ == "__main__":
    main()

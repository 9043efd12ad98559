#!/usr/bin/env python3
"""Write tests/oracles/ggml_quant_vectors.bin: golden bytes of ggml's
quantizers with and without importance weights, for
gguf-core/tests/ggml_quant.rs: every type whose quantizer uses the weights
(the IQ types, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K..Q6_K), and, weighted only on a
few cases, the types whose quantizer ignores them (their bytes must equal the
unweighted ones, which this script asserts).

Oracle: ggml's `ggml_quantize_chunk` (what llama-quantize calls, including its
grid initialisation) in a libggml-base.so built from the llama.cpp that
llama-cpp-python 0.3.36 vendors (benches/build_ggml_base.sh builds one).

    python3 tests/oracles/ggml_quant_vectors.py LIB_DIR [OUT]

LIB_DIR holds `lib/libggml-base.so` (or `libggml-base.so`, or a
`venv/` whose llama_cpp package ships it). OUT defaults to the committed file;
the opt-in test writes to a temporary file and compares.

Types whose ggml quantizer cannot run without weights
(`ggml_quantize_requires_imatrix`: IQ2_XXS, IQ2_XS, IQ1_S) have weighted
records only.

File format (little-endian): b"GGIQ", u32 version (1), u32 case count, then
cases: u32 label len + label, u32 nrow, u32 n_per_row, f32[nrow*n_per_row]
input, f32[n_per_row] importance weights; then u32 record count and records:
u32 ggml type id, u32 case index, u8 weighted, u32 len + quantized bytes.
"""
import ctypes
import glob
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "ggml_quant_vectors.bin")

# ggml type ids of the types whose quantizer uses importance weights.
TYPES = {
    "IQ4_XS": 23,
    "IQ3_XXS": 18,
    "IQ3_S": 21,
    "IQ2_XXS": 16,
    "IQ2_XS": 17,
    "IQ2_S": 22,
    "IQ1_S": 19,
    "IQ1_M": 29,
    "IQ4_NL": 20,
    "Q4_0": 2,
    "Q4_1": 3,
    "Q5_0": 6,
    "Q5_1": 7,
    "Q2_K": 10,
    "Q3_K": 11,
    "Q4_K": 12,
    "Q5_K": 13,
    "Q6_K": 14,
}
NEEDS_WEIGHTS = {"IQ2_XXS", "IQ2_XS", "IQ1_S"}
# The types ggml_quantize_chunk quantizes without looking at the weights:
# weighted records on the first IGNORED_CASES case(s) only.
IGNORED = {
    "F32": 0,
    "F16": 1,
    "BF16": 30,
    "Q8_0": 8,
    "TQ1_0": 34,
    "TQ2_0": 35,
    "MXFP4": 39,
    "NVFP4": 40,
    "Q1_0": 41,
    "Q2_0": 42,
}
IGNORED_CASES = 1


def find_lib(d):
    cands = [os.path.join(d, "lib", "libggml-base.so"), os.path.join(d, "libggml-base.so")]
    cands += glob.glob(os.path.join(d, "venv", "lib", "python*", "site-packages", "llama_cpp", "lib",
                                    "libggml-base.so"))
    for c in cands:
        if os.path.exists(c):
            return c
    sys.exit(f"no libggml-base.so under {d}")


def cases():
    """Fixed pseudo-random inputs: shapes of one and several blocks per row,
    zero blocks and zero elements, large and tiny magnitudes, heavy tails."""
    rng = np.random.default_rng(20261124)
    out = []

    def add(label, x, w):
        out.append((label, x.astype(np.float32), w.astype(np.float32)))

    def imatrix(n):
        # Like llama-imatrix's values: positive mean squares, a wide range.
        return rng.gamma(0.7, 1.0, n) * 10.0 ** rng.uniform(-3, 1, n)

    add("gauss-1x256", rng.normal(0, 1, (1, 256)), imatrix(256))
    add("weights-3x512", rng.normal(0, 0.02, (3, 512)), imatrix(512))
    z = rng.normal(0, 0.5, (2, 512))
    z[0, :256] = 0.0                      # a whole zero super-block
    z[1, rng.random(512) < 0.3] = 0.0     # scattered zeros
    z[1, 256 + 32:256 + 64] = 0.0         # one zero sub-block
    add("zeros-2x512", z, imatrix(512))
    big = rng.normal(0, 3e3, (1, 512))
    big[0, 7] = 6.5e4
    big[0, 300] = -4e4
    add("large-1x512", big, imatrix(512))
    tiny = rng.normal(0, 1e-6, (2, 256))
    tiny[1] *= 1e-12                      # below ggml's group epsilon
    add("tiny-2x256", tiny, imatrix(256))
    add("heavy-1x768", rng.standard_t(2.5, (1, 768)) * 0.05, imatrix(768))
    add("uniform-2x256", rng.uniform(-1, 1, (2, 256)), np.ones(256))
    zw = imatrix(512)
    zw[rng.random(512) < 0.3] = 0.0       # scattered zero weights
    zw[64:96] = 0.0                       # a block of zero weights
    zw[256:] = 0.0                        # a super-block of zero weights
    add("zero-weights-2x512", rng.normal(0, 0.1, (2, 512)), zw)
    # The codecs fuzz target's IQ1_M finding: 22 equal values then zeros,
    # where ggml too gives the zeros back as about -1045.
    f = np.zeros((1, 256))
    f[0, :22] = -104.4375
    add("fuzz-iq1m-1x256", f, np.ones(256))
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    lib = ctypes.CDLL(find_lib(sys.argv[1]))
    out_path = sys.argv[2] if len(sys.argv) > 2 else OUT
    FP = ctypes.POINTER(ctypes.c_float)
    q = lib.ggml_quantize_chunk
    q.argtypes = [ctypes.c_int, FP, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, FP]
    q.restype = ctypes.c_size_t
    row_size = lib.ggml_row_size
    row_size.argtypes = [ctypes.c_int, ctypes.c_int64]
    row_size.restype = ctypes.c_size_t

    def run(tid, x, w):
        nrow, n = x.shape
        dst = np.zeros(nrow * row_size(tid, n), dtype=np.uint8)
        xs = np.ascontiguousarray(x)
        ws = np.ascontiguousarray(w) if w is not None else None
        got = q(tid, xs.ctypes.data_as(FP), dst.ctypes.data, 0, nrow, n,
                ws.ctypes.data_as(FP) if ws is not None else None)
        assert got == dst.size, (tid, got, dst.size)
        return dst

    cs = cases()
    body = bytearray()
    body += struct.pack("<4sII", b"GGIQ", 1, len(cs))
    for label, x, w in cs:
        lb = label.encode()
        body += struct.pack("<I", len(lb)) + lb + struct.pack("<II", *x.shape)
        body += x.tobytes() + w.tobytes()
    records = bytearray()
    count = 0
    for name, tid in TYPES.items():
        for ci, (_, x, w) in enumerate(cs):
            for weighted in (False, True):
                if not weighted and name in NEEDS_WEIGHTS:
                    continue
                dst = run(tid, x, w if weighted else None)
                records += struct.pack("<IIBI", tid, ci, int(weighted), dst.size) + dst.tobytes()
                count += 1
    for name, tid in IGNORED.items():
        for ci, (_, x, w) in enumerate(cs[:IGNORED_CASES]):
            dst = run(tid, x, w)
            assert np.array_equal(dst, run(tid, x, None)), f"{name} uses the weights"
            records += struct.pack("<IIBI", tid, ci, 1, dst.size) + dst.tobytes()
            count += 1
    body += struct.pack("<I", count) + records
    with open(out_path, "wb") as f:
        f.write(body)
    print(f"wrote {out_path}: {len(cs)} cases, {count} records, {len(body)} bytes")


if __name__ == "__main__":
    main()

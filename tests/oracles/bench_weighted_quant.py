#!/usr/bin/env python3
"""ggml's side of gguf-core/benches/weighted_quant.rs: times
`ggml_quantize_chunk` with importance weights on one thread, on the input the
Rust bench wrote, and prints one line per type: `NAME MB_PER_S` (MB of f32
input, 10^6 bytes, best of the runs).

    python3 tests/oracles/bench_weighted_quant.py LIB_DIR INPUT NROW N_PER_ROW RUNS TYPE...

INPUT holds NROW*N_PER_ROW f32 values then N_PER_ROW f32 weights
(little-endian). LIB_DIR as for ggml_quant_vectors.py.
"""
import ctypes
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ggml_quant_vectors import TYPES, find_lib  # noqa: E402


def main():
    if len(sys.argv) < 7:
        sys.exit(__doc__)
    lib = ctypes.CDLL(find_lib(sys.argv[1]))
    nrow, n, runs = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    data = np.fromfile(sys.argv[2], dtype="<f4")
    x, w = data[: nrow * n], data[nrow * n:]
    assert w.size == n
    FP = ctypes.POINTER(ctypes.c_float)
    q = lib.ggml_quantize_chunk
    q.argtypes = [ctypes.c_int, FP, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, FP]
    q.restype = ctypes.c_size_t
    row_size = lib.ggml_row_size
    row_size.argtypes = [ctypes.c_int, ctypes.c_int64]
    row_size.restype = ctypes.c_size_t
    for name in sys.argv[6:]:
        tid = TYPES[name]
        dst = np.zeros(nrow * row_size(tid, n), dtype=np.uint8)
        xp, wp = x.ctypes.data_as(FP), w.ctypes.data_as(FP)
        q(tid, xp, dst.ctypes.data, 0, nrow, n, wp)  # grid set-up and warm-up
        best = float("inf")
        for _ in range(runs):
            t = time.perf_counter()
            q(tid, xp, dst.ctypes.data, 0, nrow, n, wp)
            best = min(best, time.perf_counter() - t)
        print(f"{name} {x.nbytes / best / 1e6:.1f}", flush=True)


if __name__ == "__main__":
    main()

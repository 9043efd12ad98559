#!/usr/bin/env python3
"""gguf-py (numpy) dequantize/quantize throughput on the sizes of
gguf-core/benches/codecs.rs, for the speed ratio quoted in reports.

usage: python3 tests/oracles/bench_gguf_py.py [n_elements]   (default 2**18)
"""
import sys
import time
import warnings

import numpy as np
from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType as T
import gguf.quants as gq


def best_of(fn, reps=20):
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main():
    warnings.simplefilter("ignore")
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 18
    rng = np.random.default_rng(1)
    x = (rng.random(n, dtype=np.float32) - 0.5) * 0.1
    for name in ["Q4_0", "Q8_0", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL", "IQ4_XS", "BF16", "F16"]:
        qt = T[name]
        bs, ts = GGML_QUANT_SIZES[qt]
        try:
            data = gq.quantize(x.reshape(-1, 256), qt)
        except NotImplementedError:
            # No gguf-py quantizer: random blocks with a small f16 scale.
            data = rng.integers(0, 256, (n // bs, ts), dtype=np.uint8)
            data[:, 0:2] = np.frombuffer(np.float16(0.01).tobytes(), np.uint8)
        if bs == 1:
            data = data.reshape(-1).view(np.uint8)
        t = best_of(lambda: gq.dequantize(data, qt))
        print(f"dequantize {name:7s} {n / t / 1e9:7.3f} G elem/s")
    for name in ["Q8_0"]:
        t = best_of(lambda: gq.quantize(x.reshape(-1, 256), T[name]), reps=5)
        print(f"quantize   {name:7s} {n / t / 1e9:7.3f} G elem/s")


if __name__ == "__main__":
    main()

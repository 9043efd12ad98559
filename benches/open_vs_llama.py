#!/usr/bin/env python3
"""Opening a file: our `GgufFile::open` against llama.cpp's own C reader.

    GGUF_LLAMA_TOOLS=DIR python3 benches/open_vs_llama.py [--opens N] [--rounds R] [FILE ...]

DIR holds a venv (DIR/venv) with llama-cpp-python installed, whose
libggml-base.so carries llama.cpp's GGUF reader.
Both sides do the same work: open the file, parse and validate the header,
every metadata entry and every tensor info, then free it all.
llama.cpp's side is `gguf_init_from_file` with `no_alloc` (no tensor data
is read), called through ctypes; ours is `GgufFile::open`, timed by
`cargo bench -p gguf-core --bench open_loop` (gguf-core/benches/open_loop.rs).
Each round runs N opens of each, in turn, so both see the same page cache
and machine load; the best per-open time of R rounds is reported, with
their ratio. Without FILE, gguf-py writes the llama150k fixture (150,000
tokens and merges) to a temporary directory. Nothing here is asserted:
this is a measurement.
"""
import argparse
import ctypes
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


class InitParams(ctypes.Structure):
    # struct gguf_init_params { bool no_alloc; struct ggml_context ** ctx; }
    _fields_ = [("no_alloc", ctypes.c_bool), ("ctx", ctypes.c_void_p)]


def llama_reader(tools: str):
    found = glob.glob(os.path.join(tools, "venv", "lib", "python3*", "site-packages",
                                   "llama_cpp", "lib", "libggml-base.so"))
    if not found:
        sys.exit(f"open_vs_llama: no llama_cpp/lib/libggml-base.so under {tools}/venv")
    lib = ctypes.CDLL(found[0])
    lib.gguf_init_from_file.argtypes = [ctypes.c_char_p, InitParams]
    lib.gguf_init_from_file.restype = ctypes.c_void_p
    lib.gguf_free.argtypes = [ctypes.c_void_p]
    lib.gguf_get_n_tensors.argtypes = [ctypes.c_void_p]
    lib.gguf_get_n_tensors.restype = ctypes.c_int64
    return lib


def llama_round(lib, path: str, opens: int) -> int:
    """Best nanoseconds per open over `opens` opens."""
    name = path.encode()
    params = InitParams(True, None)
    best = None
    for _ in range(opens):
        start = time.perf_counter_ns()
        ctx = lib.gguf_init_from_file(name, params)
        if not ctx:
            sys.exit(f"open_vs_llama: llama.cpp cannot open {path}")
        lib.gguf_get_n_tensors(ctx)
        lib.gguf_free(ctx)
        t = time.perf_counter_ns() - start
        best = t if best is None else min(best, t)
    return best


def our_round(path: str, opens: int) -> int:
    out = subprocess.run(
        ["cargo", "bench", "-q", "-p", "gguf-core", "--bench", "open_loop", "--", path, str(opens)],
        cwd=ROOT, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["best_ns"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*")
    ap.add_argument("--opens", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    tools = os.environ.get("GGUF_LLAMA_TOOLS")
    if not tools:
        sys.exit("open_vs_llama: set GGUF_LLAMA_TOOLS to the llama tools directory")
    lib = llama_reader(tools)
    files = args.files
    tmp = None
    if not files:
        tmp = tempfile.TemporaryDirectory()
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "oracles", "make_fixtures.py"),
                        tmp.name, "llama150k"], check=True)
        files = [os.path.join(tmp.name, "llama150k.gguf")]
    # Build once, outside the timing.
    subprocess.run(["cargo", "bench", "-q", "-p", "gguf-core", "--bench", "open_loop", "--no-run"],
                   cwd=ROOT, check=True)
    for path in files:
        ours, theirs = [], []
        for _ in range(args.rounds):
            theirs.append(llama_round(lib, path, args.opens))
            ours.append(our_round(path, args.opens))
        a, b = min(ours), min(theirs)
        print(f"{os.path.basename(path)} ({os.path.getsize(path):,} bytes): "
              f"GgufFile::open {a / 1e6:.3f} ms, llama.cpp gguf_init_from_file {b / 1e6:.3f} ms "
              f"per open (best of {args.rounds} rounds of {args.opens}): {b / a:.1f}x faster")


if __name__ == "__main__":
    main()

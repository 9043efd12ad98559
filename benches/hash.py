#!/usr/bin/env python3
"""Whole-process timing of `gguf hash` against `sha256sum` on the same file.

    python3 benches/hash.py [--mib N] [--runs R] [--gguf PATH] [FILE]

Without FILE, writes a GGUF of N MiB (default 1024) of random I8 tensors
(64 MiB each) to a temporary directory. Each round runs every command once,
in turn, so that the page cache and machine load are alike for all; the
best of R rounds (default 5) is reported with the throughput over the file
size. Timings are never asserted anywhere: this is a measurement.
"""
import argparse
import os
import shutil
import struct
import subprocess
import tempfile
import time


def write_gguf(path: str, mib: int) -> None:
    """A GGUF v3 of I8 tensors of 64 MiB each (any byte is a valid I8)."""
    per = 64 << 20
    n = max(1, mib // 64)
    align = 32

    def s(text: str) -> bytes:
        b = text.encode()
        return struct.pack("<Q", len(b)) + b

    head = b"GGUF" + struct.pack("<IQQ", 3, n, 1)
    head += s("general.architecture") + struct.pack("<I", 8) + s("bench")
    for i in range(n):
        # name, n_dims, ne[0..], type (I8 = 24), offset
        head += s(f"blk.{i}.w") + struct.pack("<IQQIQ", 2, 4096, per // 4096, 24, i * per)
    head += b"\0" * (-len(head) % align)
    with open(path, "wb") as f:
        f.write(head)
        chunk = os.urandom(per)
        for i in range(n):
            # Different data per tensor, cheaply.
            f.write(chunk[i:] + chunk[:i])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?")
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--gguf", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "gguf"))
    args = ap.parse_args()

    tmp = None
    path = args.file
    if path is None:
        tmp = tempfile.mkdtemp()
        path = os.path.join(tmp, "bench.gguf")
        write_gguf(path, args.mib)
    size = os.path.getsize(path)
    cmds = {
        "sha256sum FILE": ["sha256sum", path],
        "gguf hash FILE --algo sha256 --no-layer": [args.gguf, "hash", path, "--algo", "sha256", "--no-layer"],
        "gguf hash FILE --algo xxh64": [args.gguf, "hash", path, "--algo", "xxh64"],
        "gguf hash FILE (sha1+sha256 per tensor and whole, uuid)": [args.gguf, "hash", path],
    }
    best = {k: float("inf") for k in cmds}
    # One untimed round warms the page cache.
    for cmd in cmds.values():
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    for _ in range(args.runs):
        for name, cmd in cmds.items():
            t = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
            best[name] = min(best[name], time.perf_counter() - t)
    print(f"file: {size / 2**20:.0f} MiB, best of {args.runs} alternating runs, {os.cpu_count()} cores")
    for name, t in best.items():
        print(f"  {name:58} {t:7.3f} s  {size / t / 2**20:7.0f} MiB/s")
    if tmp:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()

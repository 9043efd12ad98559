#!/usr/bin/env python3
"""Whole-process timing and peak memory of `gguf hash` against `sha256sum`
on the same file.

    python3 benches/hash.py [--mib N] [--runs R] [--gguf PATH ...] [FILE]

Without FILE, writes a GGUF of N MiB (default 1024) of random I8 tensors
(64 MiB each) to a temporary directory. Each round runs every command once,
in turn, so that the page cache and machine load are alike for all; the
minimum and median of R rounds (default 5) are reported, with the ratio to
`sha256sum`'s and each command's peak RSS. `--gguf` may be given more than
once (say, a build before and after a change) to compare binaries in the
same run. Timings are never asserted anywhere: this is a measurement.
"""
import argparse
import os
import shutil
import statistics
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


def timed(cmd: list) -> tuple:
    """Runs `cmd` under /usr/bin/time; returns its wall time and peak RSS
    in bytes. (A child forked from Python would report Python's own RSS
    as its floor, since the peak survives exec.)"""
    t = time.perf_counter()
    out = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - t
    if out.returncode != 0:
        raise SystemExit(f"{cmd} failed with {out.returncode}: {out.stderr}")
    return elapsed, int(out.stderr.split()[-1]) * 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?")
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--gguf", action="append")
    args = ap.parse_args()
    binaries = args.gguf or [os.path.join(os.path.dirname(__file__), "..", "target", "release", "gguf")]

    tmp = None
    path = args.file
    if path is None:
        tmp = tempfile.mkdtemp()
        path = os.path.join(tmp, "bench.gguf")
        write_gguf(path, args.mib)
    size = os.path.getsize(path)
    cmds = {"sha256sum FILE": ["sha256sum", path]}
    for exe in binaries:
        tag = f"[{exe}] " if len(binaries) > 1 else ""
        cmds[f"{tag}gguf hash FILE --algo sha256 --no-layer"] = [exe, "hash", path, "--algo", "sha256", "--no-layer"]
        cmds[f"{tag}gguf hash FILE --algo xxh64"] = [exe, "hash", path, "--algo", "xxh64"]
        cmds[f"{tag}gguf hash FILE (default: 5 digests)"] = [exe, "hash", path]
    times = {k: [] for k in cmds}
    peaks = {k: 0 for k in cmds}
    # One untimed round warms the page cache.
    for cmd in cmds.values():
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    for _ in range(args.runs):
        for name, cmd in cmds.items():
            t, rss = timed(cmd)
            times[name].append(t)
            peaks[name] = max(peaks[name], rss)
    base_min = min(times["sha256sum FILE"])
    base_median = statistics.median(times["sha256sum FILE"])
    print(f"file: {size / 2**20:.0f} MiB, {args.runs} interleaved rounds, {os.cpu_count()} cores")
    print(f"  {'command':66} {'min s':>7} {'median s':>9} {'min/base':>9} {'med/base':>9} {'peak RSS':>10}")
    for name, ts in times.items():
        lo, mid = min(ts), statistics.median(ts)
        print(f"  {name:66} {lo:7.3f} {mid:9.3f} {lo / base_min:8.2f}x {mid / base_median:8.2f}x {peaks[name] / 2**20:7.1f} MiB")
    if tmp:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()

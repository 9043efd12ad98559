#!/usr/bin/env python3
"""Whole-process time and peak memory of `gguf inspect --json` against the
text `gguf inspect` of the same model.

    python3 benches/inspect_json.py [--runs R] [--gguf PATH ...] MODEL

Each round runs every command once, in turn; the minimum and median wall
time of R rounds (default 5) are reported with each command's peak RSS
(from /usr/bin/time) and its ratio to the text `inspect`'s, and the
output's size. `--gguf` may be given more than once to compare binaries
(say, before and after a change) in the same run. A model with a large
vocabulary shows the difference best (Gemma 3's 262,144 tokens print as
13 MB of JSON). Nothing is asserted: this is a measurement.
"""
import argparse
import os
import statistics
import subprocess
import time


def timed(cmd: list) -> tuple:
    """Wall time, peak RSS (bytes) and output size of one run of `cmd`."""
    t = time.perf_counter()
    out = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - t
    if out.returncode != 0:
        raise SystemExit(f"{cmd} failed with {out.returncode}: {out.stderr.decode()}")
    return elapsed, int(out.stderr.split()[-1]) * 1024, len(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--gguf", action="append")
    args = ap.parse_args()
    binaries = args.gguf or [os.path.join(os.path.dirname(__file__), "..", "target", "release", "gguf")]
    cmds = {}
    # Each binary's --json is compared with its own text inspect.
    base = {}
    for exe in binaries:
        tag = f"[{exe}] " if len(binaries) > 1 else ""
        text, js = f"{tag}gguf inspect MODEL", f"{tag}gguf inspect MODEL --json"
        cmds[text] = [exe, "inspect", args.model]
        cmds[js] = [exe, "inspect", args.model, "--json"]
        base[text] = base[js] = text
    times = {k: [] for k in cmds}
    peaks = {k: 0 for k in cmds}
    sizes = {}
    for cmd in cmds.values():
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    for _ in range(args.runs):
        for name, cmd in cmds.items():
            t, rss, size = timed(cmd)
            times[name].append(t)
            peaks[name] = max(peaks[name], rss)
            sizes[name] = size
    print(f"model: {args.model}, {args.runs} interleaved rounds; RSS/base: against the same binary's text inspect")
    print(f"  {'command':60} {'min s':>7} {'median s':>9} {'peak RSS':>10} {'RSS/base':>9} {'output':>10}")
    for name, ts in times.items():
        print(f"  {name:60} {min(ts):7.3f} {statistics.median(ts):9.3f} {peaks[name] / 2**20:6.1f} MiB "
              f"{peaks[name] / peaks[base[name]]:8.2f}x {sizes[name] / 1e6:7.2f} MB")


if __name__ == "__main__":
    main()

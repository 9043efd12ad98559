#!/usr/bin/env python3
"""gguf_rs against gguf-py 0.19 in the same run (a benchmark, not a test).

Usage: bench_vs_gguf_py.py GEMMA.gguf [BIG_VOCAB.gguf]

Each measurement runs in a fresh process, best of --repeat runs:
- open + every field's contents(): wall time and peak RSS above a process
  that only imports gguf, numpy and gguf_rs;
- dequantize every tensor of the model to float32;
- gguf-py's gguf_dump and gguf_hash scripts, whole process, under each reader.
Figures are printed as ratios gguf-py / gguf_rs (higher is better for us).
The big-vocabulary file can be made with
`tests/oracles/make_fixtures.py DIR llama150k` (150,000 tokens and merges).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

RUNNER = Path(__file__).resolve().parents[1] / "tests" / "run_script.py"

CHILD = r"""
import json, resource, sys, time
import numpy as np, gguf, gguf_rs
which, task, path = sys.argv[1:4]
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
Reader = gguf_rs.GGUFReader if which == "ours" else gguf.GGUFReader
dequantize = gguf_rs.quants.dequantize if which == "ours" else gguf.quants.dequantize
start = time.perf_counter()
if task == "open":
    reader = Reader(path)
    n = 0
    for field in reader.fields.values():
        value = field.contents()
        n += len(value) if isinstance(value, list) else 1
elif task == "dequantize":
    reader = Reader(path)
    n = 0
    for tensor in reader.tensors:
        n += dequantize(tensor.data, tensor.tensor_type).size
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": seconds, "extra_kib": peak - base, "n": n}))
"""


def child(which: str, task: str, path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, which, task, str(path)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def best(which: str, task: str, path: Path, repeat: int) -> dict:
    runs = [child(which, task, path) for _ in range(repeat)]
    result = min(runs, key=lambda r: r["seconds"])
    result["extra_kib"] = min(r["extra_kib"] for r in runs)
    return result


def script_seconds(which: str, args: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, str(RUNNER), which, *args], capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=Path)
    parser.add_argument("vocab", type=Path, nargs="?")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    files = [args.model] + ([args.vocab] if args.vocab else [])
    for path in files:
        theirs = best("theirs", "open", path, args.repeat)
        ours = best("ours", "open", path, args.repeat)
        assert theirs["n"] == ours["n"], (theirs, ours)
        print(
            f"open + contents() of every field, {path.name}: gguf-py {theirs['seconds']:.3f} s, "
            f"gguf_rs {ours['seconds']:.4f} s: {theirs['seconds'] / ours['seconds']:.0f}x faster; "
            f"memory above imports gguf-py {theirs['extra_kib'] / 1024:.1f} MiB, gguf_rs {ours['extra_kib'] / 1024:.1f} MiB: "
            f"{theirs['extra_kib'] / max(ours['extra_kib'], 1):.1f}x less"
        )
    theirs = best("theirs", "dequantize", args.model, 1)
    ours = best("ours", "dequantize", args.model, args.repeat)
    assert theirs["n"] == ours["n"]
    print(
        f"dequantize every tensor, {args.model.name} ({ours['n']:,} values): gguf-py {theirs['seconds']:.2f} s, "
        f"gguf_rs {ours['seconds']:.3f} s: {theirs['seconds'] / ours['seconds']:.0f}x faster"
    )
    for script in (["gguf_dump", str(args.model)], ["gguf_hash", str(args.model)]):
        t = script_seconds("theirs", script, 1 if script[0] == "gguf_hash" else args.repeat)
        o = script_seconds("ours", script, 1 if script[0] == "gguf_hash" else args.repeat)
        print(f"{script[0]} {args.model.name} (whole process): gguf-py's reader {t:.2f} s, gguf_rs {o:.2f} s: {t / o:.1f}x faster")


if __name__ == "__main__":
    main()

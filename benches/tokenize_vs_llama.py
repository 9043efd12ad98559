#!/usr/bin/env python3
"""`gguf tokenize` against llama.cpp's llama-tokenize, whole processes.

1. One short prompt: load the tokenizer from the model's header and encode
   (CPU time of the process, min / median of --runs).
2. 10 MB of mixed text (every script, code, emoji, numbers; fixed seed) from
   a file: encode throughput, the short prompt's time subtracted.

Both print the ids (`--ids`, to /dev/null); both must give the same ids,
which is checked first.

Usage: benches/tokenize_vs_llama.py GGUF_BIN LLAMA_TOKENIZE MODEL [--runs N] [--mb 10] [--big-runs 1]

Measured on the shared two-core machine, Gemma 3 270M (262,144 tokens):
short prompt 0.125 s vs 0.680 s (median CPU, 0.18x llama.cpp's); 10 MB mixed
text 1.0 s vs 111 s user time with the same 9.2 M ids (about 100x
llama.cpp's throughput: its special-token split, not its merges).
"""

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

SNIPPETS = [
    "The quick brown fox jumps over the lazy dog. ", "It's 3.14159, isn't it? ", "1234567890 ",
    "def main():\n    return [x ** 2 for x in range(10)]\n\n", "    if (a == b) { c++; }\n",
    "Ελληνικά κείμενα ", "Русский текст ", "עברית ", "العربية ", "हिन्दी पाठ ", "ไทย ", "日本語のテキスト",
    "中文文本", "한국어 텍스트 ", "\U0001F600\U0001F44D\U0001F3FD ", "\U0001F468\u200d\U0001F469\u200d\U0001F467 ",
    "   ", "\n", "\n\n", "\t", "Ünïcödé façade naïve ", "<b>html</b> ", "https://example.com/a?b=c ",
]


def mixed_text(n_bytes, seed=1234):
    rng = random.Random(seed)
    parts, size = [], 0
    while size < n_bytes:
        s = rng.choice(SNIPPETS)
        parts.append(s)
        size += len(s.encode())
    return "".join(parts)


def cpu_time(args, stdin=None):
    """CPU seconds (user + system) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, stdin=stdin)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def ids(args):
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return [l for l in out.splitlines() if l.startswith("[")][-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gguf")
    ap.add_argument("llama_tokenize")
    ap.add_argument("model")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--mb", type=float, default=10)
    # llama-tokenize needs about two minutes for 10 MB of text on this
    # machine (it scans the text once per special token: Gemma has
    # thousands), so the big case runs once by default.
    ap.add_argument("--big-runs", type=int, default=1)
    a = ap.parse_args()

    prompt = "Hello world, this is a short prompt."
    ours = [a.gguf, "tokenize", a.model, "-p", prompt, "--ids"]
    theirs = [a.llama_tokenize, "-m", a.model, "-p", prompt, "--ids", "--log-disable"]
    assert ids(ours) == ids(theirs), "different ids for the short prompt"

    def measure(cmd):
        t = [cpu_time(cmd) for _ in range(a.runs)]
        return min(t), statistics.median(t)

    o_min, o_med = measure(ours)
    l_min, l_med = measure(theirs)
    print(f"short prompt (load + encode, CPU s, min / median of {a.runs}):")
    print(f"  llama-tokenize {l_min:.4f} / {l_med:.4f}")
    print(f"  gguf tokenize  {o_min:.4f} / {o_med:.4f}  ({o_med / l_med:.2f}x llama.cpp's median)")

    text = mixed_text(int(a.mb * 1e6))
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write(text)
        path = f.name
    try:
        ours_f = [a.gguf, "tokenize", a.model, "-f", path, "--ids", "--no-escape"]
        theirs_f = [a.llama_tokenize, "-m", a.model, "-f", path, "--ids", "--no-escape", "--log-disable"]
        same = ids(ours_f) == ids(theirs_f)
        runs = a.big_runs
        to = min(cpu_time(ours_f) for _ in range(runs)) - o_min
        tl = min(cpu_time(theirs_f) for _ in range(runs)) - l_min
        mb = len(text.encode()) / 1e6
        print(f"{mb:.1f} MB mixed text (encode only, min of {runs}; same ids: {same}):")
        print(f"  llama-tokenize {tl:.3f} s  {mb / tl:.1f} MB/s")
        print(f"  gguf tokenize  {to:.3f} s  {mb / to:.1f} MB/s  ({tl / to:.2f}x llama.cpp's throughput)")
    finally:
        os.unlink(path)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""`gguf tokenize` against llama.cpp's tokenizer through llama-cpp-python
(`Llama(model, vocab_only=True)`), in the same run, on the same inputs.

1. One short prompt, load + encode, as whole processes: `gguf tokenize
   MODEL -p PROMPT --ids` against a python process that imports llama_cpp,
   loads the vocabulary and tokenizes (wall and CPU time, min / median of
   --runs). The python figure is also split into its start-up (interpreter
   and `import llama_cpp`) and its own load + encode, timed inside it.
2. Encode throughput on --mb MB of mixed text (every script, code, emoji,
   numbers; fixed seed): ours is the whole process less the short prompt's,
   llama.cpp's is `Llama.tokenize` timed inside the process. Both must give
   the same ids (checked).

Special tokens are added by the model's rule and parsed in both (`gguf
tokenize`'s default; `tokenize(text, add_bos=True, special=True)`).

Usage: benches/tokenize_vs_llama.py GGUF_BIN MODEL --python PY [--runs N] [--mb 10] [--big-runs 1]
(PY: a python with llama-cpp-python 0.3.36; benches/tokenize_vs_llama.sh
finds it and builds GGUF_BIN.)

Measured on the shared two-core machine (other jobs running), Gemma 3 270M
(262,144 tokens), `benches/tokenize_vs_llama.sh MODEL 10 10`:
short prompt 0.167 s against llama-cpp-python's 1.105 s (median wall, whole
processes: 0.15x; against its in-process load + encode alone, 0.687 s:
0.24x); 10 MB mixed text (3,067,187 ids, the same) in 1.44 s against
526 s (364x llama.cpp's throughput: llama.cpp's special-token split is
superlinear in the text's length, 0.5 MB takes it 1.8 s).
"""

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import tempfile
import time

SNIPPETS = [
    "The quick brown fox jumps over the lazy dog. ", "It's 3.14159, isn't it? ", "1234567890 ",
    "def main():\n    return [x ** 2 for x in range(10)]\n\n", "    if (a == b) { c++; }\n",
    "Ελληνικά κείμενα ", "Русский текст ", "עברית ", "العربية ", "हिन्दी पाठ ", "ไทย ", "日本語のテキスト",
    "中文文本", "한국어 텍스트 ", "\U0001F600\U0001F44D\U0001F3FD ", "\U0001F468\u200d\U0001F469\u200d\U0001F467 ",
    "   ", "\n", "\n\n", "\t", "Ünïcödé façade naïve ", "<b>html</b> ", "https://example.com/a?b=c ",
]

PROMPT = "Hello world, this is a short prompt."

SHORT = r"""
import sys, time
t0 = time.perf_counter()
import llama_cpp
t1 = time.perf_counter()
llm = llama_cpp.Llama(sys.argv[1], vocab_only=True, verbose=False)
ids = llm.tokenize(sys.argv[2].encode(), add_bos=True, special=True)
t2 = time.perf_counter()
print(ids)
print(f"TIMES {t1 - t0} {t2 - t1}", file=sys.stderr)
"""

BIG = r"""
import json, sys, time
import llama_cpp
llm = llama_cpp.Llama(sys.argv[1], vocab_only=True, verbose=False)
data = open(sys.argv[2], "rb").read()
t0 = time.perf_counter()
ids = llm.tokenize(data, add_bos=True, special=True)
t1 = time.perf_counter()
json.dump(ids, open(sys.argv[3], "w"))
print(t1 - t0)
"""


def mixed_text(n_bytes, seed=1234):
    rng = random.Random(seed)
    parts, size = [], 0
    while size < n_bytes:
        s = rng.choice(SNIPPETS)
        parts.append(s)
        size += len(s.encode())
    return "".join(parts)


def run(args, **kw):
    """(wall s, CPU s, completed process) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(args, capture_output=True, check=True, **kw)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, p


def last_ids(stdout):
    return json.loads([l for l in stdout.decode().splitlines() if l.startswith("[")][-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gguf")
    ap.add_argument("model")
    ap.add_argument("--python", required=True)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--mb", type=float, default=10)
    ap.add_argument("--big-runs", type=int, default=1)
    a = ap.parse_args()

    ours = [a.gguf, "tokenize", a.model, "-p", PROMPT, "--ids"]
    theirs = [a.python, "-c", SHORT, a.model, PROMPT]
    assert last_ids(run(ours)[2].stdout) == last_ids(run(theirs)[2].stdout), "different ids for the short prompt"

    o = [run(ours)[:2] for _ in range(a.runs)]
    t, inner = [], []
    for _ in range(a.runs):
        wall, cpu, p = run(theirs)
        t.append((wall, cpu))
        start, load_encode = map(float, p.stderr.decode().split("TIMES")[-1].split())
        inner.append((start, load_encode))

    def stats(rows, i):
        xs = [r[i] for r in rows]
        return min(xs), statistics.median(xs)

    print(f"short prompt, load + encode, whole process (s, min / median of {a.runs}):")
    for label, rows in (("llama-cpp-python", t), ("gguf tokenize", o)):
        (wmin, wmed), (cmin, cmed) = stats(rows, 0), stats(rows, 1)
        print(f"  {label:17} wall {wmin:.4f} / {wmed:.4f}   CPU {cmin:.4f} / {cmed:.4f}")
    print(f"  ratio (ours / llama.cpp's, median wall): {stats(o, 0)[1] / stats(t, 0)[1]:.3f}")
    s_med, le_med = stats(inner, 0)[1], stats(inner, 1)[1]
    print(f"  inside the python process: start-up + import {s_med:.4f}, Llama(vocab_only) + tokenize {le_med:.4f}"
          f" (ours whole process / that: {stats(o, 0)[1] / le_med:.3f})")
    o_short = stats(o, 0)[0]

    text = mixed_text(int(a.mb * 1e6))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "mixed.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        mb = os.path.getsize(path) / 1e6
        ours_f = [a.gguf, "tokenize", a.model, "-f", path, "--ids"]
        to, tl, same = [], [], True
        for _ in range(a.big_runs):
            wall, _, p = run(ours_f)
            to.append(wall - o_short)
            our_ids = last_ids(p.stdout)
            _, _, q = run([a.python, "-c", BIG, a.model, path, os.path.join(d, "ids.json")])
            tl.append(float(q.stdout.decode().split()[-1]))
            with open(os.path.join(d, "ids.json")) as f:
                same = same and json.load(f) == our_ids
        to, tl = min(to), min(tl)
        print(f"{mb:.1f} MB mixed text, encode (wall s, min of {a.big_runs}; same ids: {same}, {len(our_ids)} ids):")
        print(f"  llama-cpp-python  {tl:.3f} s  {mb / tl:.2f} MB/s")
        print(f"  gguf tokenize     {to:.3f} s  {mb / to:.2f} MB/s  ({tl / to:.1f}x llama.cpp's throughput)")


if __name__ == "__main__":
    main()

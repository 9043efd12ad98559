#!/usr/bin/env python3
"""Regenerates tests/data/tokenizer/: small vocabularies cut from llama.cpp's
test vocabularies, and the ids llama.cpp's llama-tokenize gives for a set of
texts with each, so the default test run checks exact tokenizations
without llama.cpp.

A cut vocabulary keeps the first N tokens (ids unchanged), then every
control / user-defined token (renumbered after them, special ids remapped),
and the merges whose two sides and result it keeps. It is a tokenizer of its
own, not the original: the goldens say what llama.cpp does with it.

Usage: tokenizer_goldens.py LLAMA_CPP_MODELS_DIR LLAMA_TOKENIZE OUT_DIR
(gguf-py for reading and writing: the llama-tools venv has it)."""

import json
import os
import subprocess
import sys
import tempfile

import gguf

# (source vocabulary, tokens kept). One per code path: SentencePiece,
# GPT-2's splitter, llama3's splitter with ignore_merges, the collapsed
# regex path with three patterns (falcon), the wide regex path
# (deepseek-llm), raw-UTF-8 BPE with <0xXX> bytes (gemma-4).
VOCABS = [
    ("llama-spm", 1000),
    ("gpt-2", 1000),
    ("llama-bpe", 1000),
    ("falcon", 1000),
    ("deepseek-llm", 1000),
    ("gemma-4", 1000),
]

EXTRA = [
    "",
    " ",
    "\u00a0\u3000x\u0085y",
    "   \n\n\n   \t\t  x  ",
    "Hello, y'all! HOW'S IT GOING? I'LL be there... 'tis",
    "1234567890 12 3.14159 -42 1,000,000",
    "def f(x):\n    return x**2  # square\n\n\nprint(f(3))\r\n",
    "\U0001F468\u200d\U0001F469\u200d\U0001F467 \U0001F44D\U0001F3FD \u2764\ufe0f flags \U0001F1EB\U0001F1F7",
    "\x01\x02 ctrl \x1b[31m red \x7f del",
    "<s> </s> <unk> <|endoftext|> <|begin_of_text|> <start_of_turn>user <|im_start|>",
    "<s><s>text</s>",
    "Ελληνικά Русский עברית العربية हिन्दी ไทย 日本語 中文 한국어",
    "e\u0301 a\u0308 n\u0303 combining \u0915\u094d\u0937",
    "Ünïcödé ÀÉÎÕÜ ßẞ ǅǈ ΐΰ",
    "mixedCASEWords camelCase snake_case KEBAB-case",
    "\u2581 already escaped \u2581\u2581",
    "tab\tsep\u000bvt\u000cff",
    "a" * 300,
    " " * 70 + "end",
]

KEEP_ATTR = {3, 4}  # control, user-defined


def read_field(reader, key):
    f = reader.fields.get(key)
    return None if f is None else f.contents()


def cut(src_path, n_keep, out_path):
    r = gguf.GGUFReader(src_path)
    tokens = read_field(r, "tokenizer.ggml.tokens")
    types = read_field(r, "tokenizer.ggml.token_type")
    scores = read_field(r, "tokenizer.ggml.scores")
    merges = read_field(r, "tokenizer.ggml.merges")
    keep = list(range(min(n_keep, len(tokens))))
    if types is not None:
        keep += [i for i in range(n_keep, len(tokens)) if types[i] in KEEP_ATTR][:100]
    new_id = {old: new for new, old in enumerate(keep)}
    kept_text = {tokens[i] for i in keep}

    arch = read_field(r, "general.architecture")
    w = gguf.GGUFWriter(out_path, arch)
    for key, field in r.fields.items():
        if key.startswith("GGUF.") or key in ("general.architecture",) or key.endswith(".vocab_size"):
            continue
        if key in ("tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.scores",
                   "tokenizer.ggml.merges", "tokenizer.chat_template"):
            continue
        if key.startswith("tokenizer.huggingface") or key.startswith("tokenizer.ggml.precompiled"):
            continue
        value = field.contents()
        vtype = field.types[0]
        if key.startswith("tokenizer.ggml.") and key.endswith("_token_id"):
            if value not in new_id:
                continue
            value = new_id[value]
        if vtype == gguf.GGUFValueType.ARRAY:
            w.add_key_value(key, value, vtype, field.types[1] if len(field.types) > 1 else None)
        else:
            w.add_key_value(key, value, vtype)
    w.add_token_list([tokens[i] for i in keep])
    if types is not None:
        w.add_token_types([types[i] for i in keep])
    if scores is not None:
        w.add_token_scores([scores[i] for i in keep])
    if merges is not None:
        kept = []
        for m in merges:
            parts = m.split(" ", 1) if m.find(" ", 1) != -1 else None
            if parts and parts[0] in kept_text and parts[1] in kept_text and parts[0] + parts[1] in kept_text:
                kept.append(m)
        w.add_token_merges(kept)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def llama_tokenize(tool, model, text, special):
    with tempfile.NamedTemporaryFile("wb", delete=False) as f:
        f.write(text.encode("utf-8"))
        path = f.name
    try:
        args = [tool, "-m", model, "-f", path, "--ids", "--no-escape", "--log-disable"]
        if not special:
            args += ["--no-bos", "--no-parse-special"]
        out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(path)
    line = [l for l in out.splitlines() if l.startswith("[")][-1]
    return json.loads(line)


def read_inputs(path):
    raw = open(path, encoding="utf-8", newline="").read()
    return raw.split("\n__ggml_vocab_test__\n")


def main():
    models_dir, tool, out_dir = sys.argv[1:4]
    os.makedirs(out_dir, exist_ok=True)
    for name, n_keep in VOCABS:
        src = os.path.join(models_dir, f"ggml-vocab-{name}.gguf")
        out = os.path.join(out_dir, f"{name}.gguf")
        cut(src, n_keep, out)
        texts = read_inputs(src + ".inp") + EXTRA
        cases = []
        for t in texts:
            cases.append({
                "text": t,
                "plain": llama_tokenize(tool, out, t, False),
                "special": llama_tokenize(tool, out, t, True),
            })
        with open(os.path.join(out_dir, f"{name}.json"), "w", encoding="utf-8") as f:
            json.dump({"vocab": f"{name}.gguf", "source": f"ggml-vocab-{name}.gguf", "cases": cases},
                      f, ensure_ascii=True, indent=0)
        print(f"{name}: {os.path.getsize(out)} bytes, {len(cases)} cases")


if __name__ == "__main__":
    main()

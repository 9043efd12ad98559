#!/usr/bin/env python3
"""Makes tests/data/tokenizer/ugm.{gguf,json}: a small T5-style Unigram
vocabulary (SentencePiece, nmt_nfkc normalization with its precompiled
character map) and llama.cpp's ids for many texts with it.

Three steps, as llama.cpp's converter would lay the vocabulary out but
written by our own Builder:

1. `tokenizer_ugm.py train SPEC.json` (python with the `sentencepiece` and
   `protobuf` packages): trains a 2,000-piece Unigram model on llama.cpp's
   docs and test inputs, and writes what `conversion/t5.py` would put in
   the GGUF (tokens, scores, types, `add_space_prefix`,
   `remove_extra_whitespaces`, the charsmap; two `added_tokens.json`
   tokens and an adversarial one as user-defined, padding as unused).
2. `GGUF_UGM_SPEC=SPEC.json GGUF_UGM_OUT=tests/data/tokenizer/ugm.gguf
   cargo test --test integration ugm_vocab_from_spec` writes the GGUF.
3. `tokenizer_ugm.py expect MODELS_DIR tests/data/tokenizer/ugm.gguf
   tests/data/tokenizer/ugm.json` (the llama-tools venv's python, with
   llama-cpp-python 0.3.36): the ids and decoded text llama.cpp gives.
"""

import glob
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# Inputs that reach the Unigram code's corners: the character map
# (full-width forms, ligatures, circled digits, compatibility spaces),
# whitespace merging, the user-defined prefix walk (`<extra_id_`, `—x`
# against `–`), unused tokens written as text, unknown characters, NUL.
UGM_EXTRA = [
    "\uff28\uff45\uff4c\uff4c\uff4f\u3000\uff37\uff4f\uff52\uff4c\uff44\uff01",
    "\ufb01nance \ufb02ow \u2460\u2461\u2462 \u2122 \u00bd \u2167 \u33a1",
    "   leading and    inner   and trailing   ",
    "\t tabs\tand\nnewlines\r\n\u00a0nbsp\u2009thin\u3000ideographic",
    "<extra_id_0> <extra_id_1><extra_id_0>x <extra_id_ <extra_id_9>",
    "\u2014x \u2014 \u2013 \u2013x \u2014\u2014x",
    "[PAD0] [PAD1][PAD2] <pad> </s> <unk> <s>",
    "<sep>a<sep> b <sep>",
    "zero\x00byte \x00\x00 end\x00",
    "\u0915\u094d\u0937 \u1100\u1161\u11a8 \ud55c\uad6d\uc5b4 \u00e9 e\u0301 \u212b A\u030a",
    "\U0001F468\u200d\U0001F469\u200d\U0001F467\U0001F44D\U0001F3FD\u2764\ufe0f",
    "\u2581 escaped \u2581\u2581 spaces\u2581",
    "ＡＢＣ１２３ｱｲｳ ｶﾞｷﾞ",
    "\U0001D518\U0001D52B\U0001D526 \U0001F130",
    "",
    " ",
    "\n",
]


def corpus_lines():
    root = os.environ.get("LLAMA_CPP_DIR", "")
    lines = []
    for path in sorted(glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))[:60]:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines += [l.strip() for l in f if l.strip()]
    for path in sorted(glob.glob(os.path.join(root, "models", "*.inp"))):
        with open(path, encoding="utf-8") as f:
            lines += [l for l in f.read().split("\n__ggml_vocab_test__\n") if l.strip()]
    return lines


def train(spec_path):
    os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] = "python"
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as model_pb2

    with tempfile.TemporaryDirectory() as d:
        corpus = os.path.join(d, "corpus.txt")
        with open(corpus, "w", encoding="utf-8") as f:
            f.write("\n".join(corpus_lines()))
        prefix = os.path.join(d, "ugm")
        spm.SentencePieceTrainer.train(
            input=corpus, model_prefix=prefix, model_type="unigram", vocab_size=2000,
            normalization_rule_name="nmt_nfkc", character_coverage=0.9995,
            pad_id=0, eos_id=1, unk_id=2, bos_id=-1, user_defined_symbols=["<sep>"],
            num_threads=1, seed_sentencepiece_size=200000, minloglevel=2,
        )
        proto = model_pb2.ModelProto()
        proto.ParseFromString(open(prefix + ".model", "rb").read())
        sp = spm.SentencePieceProcessor(model_file=prefix + ".model")

    # As conversion/t5.py: pieces with their type, then padding up to the
    # model's vocab_size as unused `[PADi]`, then added_tokens.json entries
    # as user-defined with score -1000.
    n = sp.vocab_size()
    vocab_size = n + 6
    tokens = [f"[PAD{i}]" for i in range(vocab_size)]
    scores = [-10000.0] * vocab_size
    types = [5] * vocab_size
    for i in range(n):
        t = 1
        if sp.IsUnknown(i):
            t = 2
        elif sp.IsControl(i):
            t = 3
        elif sp.IsUnused(i):
            t = 5
        elif sp.IsByte(i):
            t = 6
        tokens[i], scores[i], types[i] = sp.IdToPiece(i), sp.GetScore(i), t
    for k, text in enumerate(["<extra_id_0>", "<extra_id_1>", "\u2014x"]):
        tokens[n + 3 + k], scores[n + 3 + k], types[n + 3 + k] = text, -1000.0, 4
    spec = {
        "tokens": tokens,
        "scores": scores,
        "types": types,
        "add_space_prefix": proto.normalizer_spec.add_dummy_prefix,
        "remove_extra_whitespaces": proto.normalizer_spec.remove_extra_whitespaces,
        "charsmap": proto.normalizer_spec.precompiled_charsmap.hex(),
        "eos": 1,
        "unk": 2,
        "pad": 0,
    }
    with open(spec_path, "w", encoding="utf-8") as f:
        json.dump(spec, f)


def random_texts(count, seed=25):
    rng = random.Random(seed)
    snippets = [
        "Hello", " world", "'s", "\n", "  ", "\t", "123", "3.14", "fn main()", "<extra_id_0>",
        "</s>", "<pad>", "\u3000", "\u00a0", "\uff21", "\ufb01", "\u2460", "e\u0301", "\u2014", "\u2013",
        "\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac", "\u0420\u0443\u0441", "\u65e5\u672c\u8a9e",
        "\ud55c\uad6d\uc5b4", "\u0627\u0644\u0639\u0631\u0628\u064a\u0629", "\U0001F44D\U0001F3FD",
    ]
    out = []
    for i in range(count):
        parts = []
        for _ in range(1 + (i * 7) % 40):
            if rng.random() < 0.25:
                parts.append(chr(rng.choice([rng.randrange(0x20, 0x80), rng.randrange(0xA0, 0x3000),
                                             rng.randrange(0x3000, 0x30000)])))
            else:
                parts.append(rng.choice(snippets))
        out.append("".join(p for p in parts if not 0xD800 <= ord(p[0]) < 0xE000))
    return out


def expect(models_dir, vocab, out_path):
    texts = []
    for path in sorted(glob.glob(os.path.join(models_dir, "*.inp"))):
        with open(path, encoding="utf-8", newline="") as f:
            texts += f.read().split("\n__ggml_vocab_test__\n")
    sys.path.insert(0, HERE)
    from tokenizer_goldens import EXTRA
    texts += EXTRA + UGM_EXTRA + random_texts(120)
    seen, unique = set(), []
    for t in texts:
        if t not in seen:
            seen.add(t)
            unique.append(t)
    req = json.dumps({"model": vocab, "texts": unique, "pieces": False})
    ans = json.loads(subprocess.run([sys.executable, os.path.join(HERE, "llama_tokenizer.py")], input=req,
                                    capture_output=True, text=True, check=True).stdout)
    cases = []
    for t, c in zip(unique, ans["cases"]):
        cases.append({"text": t, "plain": c["plain"], "special": c["parsed"], "added": c["both"],
                      "decoded": c["decoded"]})
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump({"vocab": os.path.basename(vocab), "source": "tests/oracles/tokenizer_ugm.py",
                   "cases": cases}, f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    if sys.argv[1] == "train":
        train(sys.argv[2])
    elif sys.argv[1] == "expect":
        expect(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)

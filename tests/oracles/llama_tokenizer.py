#!/usr/bin/env python3
"""llama.cpp's tokenizer as an oracle, through llama-cpp-python 0.3.36
(`Llama(path, vocab_only=True)` and its C functions).

Reads one JSON request on stdin:
  {"model": PATH, "texts": [STR, ...], "pieces": BOOL}
and writes one JSON answer on stdout:
  {"add_bos": BOOL, "n_tokens": N,
   "cases": [{"plain": ids (no special tokens added or parsed),
              "parsed": ids (none added, special text parsed),
              "added": ids (added, not parsed),
              "both": ids (added and parsed),
              "decoded": hex of llama_detokenize(plain, remove_special=False, unparse_special=False),
              "decoded_both": hex of llama_detokenize(both, remove_special=True, unparse_special=True)}],
   "pieces": [hex of llama_token_to_piece(id, special=True), ...] (when asked)}
Texts are UTF-8; bytes are given as hex so that pieces which are not valid
UTF-8 alone survive JSON.

Run with the llama-tools venv's python (GGUF_LLAMA_TOOLS/venv/bin/python).
"""

import ctypes
import json
import sys

import llama_cpp
from llama_cpp import llama_cpp as C


def tokenize(vocab, data, add_special, parse_special):
    n = max(16, 2 * len(data) + 8)
    buf = (C.llama_token * n)()
    got = C.llama_tokenize(vocab, data, len(data), buf, n, add_special, parse_special)
    if got < 0:
        n = -got
        buf = (C.llama_token * n)()
        got = C.llama_tokenize(vocab, data, len(data), buf, n, add_special, parse_special)
    return list(buf[:got])


def detokenize(vocab, ids, remove_special, unparse_special):
    arr = (C.llama_token * max(1, len(ids)))(*ids)
    n = 64 + 16 * len(ids)
    while True:
        out = ctypes.create_string_buffer(n)
        got = C.llama_detokenize(vocab, arr, len(ids), out, n, remove_special, unparse_special)
        if got >= 0:
            return out.raw[:got]
        n = -got + 1


def piece(vocab, token):
    n = 64
    while True:
        out = ctypes.create_string_buffer(n)
        got = C.llama_token_to_piece(vocab, token, out, n, 0, True)
        if got >= 0:
            return out.raw[:got]
        n = -got + 1


def main():
    req = json.load(sys.stdin)
    llm = llama_cpp.Llama(req["model"], vocab_only=True, verbose=False)
    vocab = llm._model.vocab
    cases = []
    for text in req["texts"]:
        data = text.encode("utf-8")
        plain = tokenize(vocab, data, False, False)
        both = tokenize(vocab, data, True, True)
        cases.append({
            "plain": plain,
            "parsed": tokenize(vocab, data, False, True),
            "added": tokenize(vocab, data, True, False),
            "both": both,
            "decoded": detokenize(vocab, plain, False, False).hex(),
            "decoded_both": detokenize(vocab, both, True, True).hex(),
        })
    n_tokens = C.llama_vocab_n_tokens(vocab)
    answer = {"add_bos": bool(C.llama_vocab_get_add_bos(vocab)), "n_tokens": n_tokens, "cases": cases}
    if req.get("pieces"):
        answer["pieces"] = [piece(vocab, t).hex() for t in range(n_tokens)]
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()

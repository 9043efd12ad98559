"""``Model.tokenizer()`` against llama.cpp's own ids: the goldens in
``tests/data/tokenizer`` (llama.cpp's test vocabularies, tokenized by
llama-cpp-python's ``llama_tokenize``, as the Rust suite checks them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO, SAMPLE

import gguf_rs

GOLDENS = REPO / "tests" / "data" / "tokenizer"


def unhex(text: str) -> bytes:
    return bytes.fromhex(text)


@pytest.mark.parametrize("golden", sorted(GOLDENS.glob("*.json")), ids=lambda p: p.stem)
def test_ids_and_text_are_llama_cpps(golden: Path) -> None:
    doc = json.loads(golden.read_text())
    tok = gguf_rs.open(GOLDENS / doc["vocab"]).tokenizer()
    equal = 0
    for case in doc["cases"]:
        text = case["text"]
        plain = tok.encode(text, add_special=False, parse_special=False)
        assert plain == case["plain"], text
        assert tok.encode(text, add_special=tok.flags["add_bos"], parse_special=True) == case["special"], text
        if "added" in case:
            assert tok.encode(text, add_special=True, parse_special=True) == case["added"], text
        if "decoded" in case:
            assert tok.decode_bytes(plain) == unhex(case["decoded"]), text
        equal += 1
    print(f"{golden.stem}: {equal}/{len(doc['cases'])} texts as llama.cpp tokenizes them")
    assert equal == len(doc["cases"]) > 0


def test_the_tokenizer_describes_its_vocabulary() -> None:
    tok = gguf_rs.open(SAMPLE).tokenizer()
    assert len(tok) == gguf_rs.open(SAMPLE).summary()["vocab_size"]
    assert tok.vocab_type in {"SPM", "BPE", "WPM", "UGM"}
    bos = tok.specials["bos"]
    if bos is not None:
        assert tok.token_id(tok.token_text(bos)) == bos
        # A control token's piece is empty unless asked for.
        assert tok.token_to_piece(bos) == b"" and tok.token_to_piece(bos, special=True) != b""
    # The sample's 297 tokens have no space: llama.cpp gives these ids
    # and this text too (llama-cpp-python 0.3.36).
    ids = tok.encode("Hello world")
    assert ids == [1, 42, 107, 240, 89, 147, 246]
    assert tok.decode(ids, remove_special=True) == "Helloworld"
    bpe = gguf_rs.open(GOLDENS / "llama-bpe.gguf").tokenizer()
    ids = bpe.encode("Hello world<|end_of_text|>", parse_special=True)
    assert ids[0] == bpe.specials["bos"] and ids[-1] == bpe.token_id("<|end_of_text|>")
    assert bpe.decode(ids, remove_special=True) == "Hello world"
    assert bpe.decode(ids, unparse_special=True) == "<|begin_of_text|>Hello world<|end_of_text|>"
    assert isinstance(tok.decode([]), str)
    with pytest.raises(IndexError):
        tok.token_text(len(tok))
    with pytest.raises(gguf_rs.GGUFError):
        tok.token_to_piece(len(tok))
    assert repr(tok).startswith("Tokenizer(")


def test_a_model_without_a_vocabulary_says_so(tmp_path: Path) -> None:
    import numpy as np

    path = tmp_path / "bare.gguf"
    gguf_rs.Builder().set("general.architecture", "llama").add_tensor("w", np.zeros((2, 32), np.float32)).write(path)
    with pytest.raises(gguf_rs.GGUFError, match="tokenizer"):
        gguf_rs.open(path).tokenizer()

"""``Model.tokenizer()``: a model's tokenizer as llama.cpp runs it, by
gguf-kit's tokenizer (the same ids as ``llama_tokenize``, the same text as
``llama_detokenize``).

>>> import gguf_rs
>>> tok = gguf_rs.open("samples/tiny-llama.gguf").tokenizer()  # doctest: +SKIP
>>> ids = tok.encode("Hello world")  # doctest: +SKIP
>>> tok.decode(ids, remove_special=True)  # doctest: +SKIP
'Hello world'
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["Tokenizer"]


class Tokenizer:
    """Text to token ids and back, with the model's vocabulary:
    ``vocab_type`` (``SPM``, ``BPE``, ``WPM``, ``UGM``), ``model``
    (``tokenizer.ggml.model``), ``pre`` (a byte-level vocabulary's
    pre-tokenizer), ``specials`` (the special ids llama.cpp tracks: ``bos``,
    ``eos``, ``eot``, ...; None where the model has none), ``flags``
    (``add_bos``, ``add_eos``, ``add_space_prefix``, ...), ``len()``."""

    def __init__(self, native: Any):
        self._native = native
        self.vocab_type: str = native.vocab_type
        self.model: str = native.model
        self.pre: str | None = native.pre
        self.specials: dict[str, int | None] = native.specials()
        self.flags: dict[str, bool] = native.flags()

    def encode(self, text: str, *, add_special: bool = True, parse_special: bool = False) -> list[int]:
        """Token ids of ``text``, as ``llama_tokenize(vocab, text,
        add_special, parse_special)`` gives them: ``add_special`` adds the
        BOS/EOS the model's flags call for; ``parse_special`` lets control
        tokens written in the text (``"<start_of_turn>"``) become their ids
        (user-defined tokens are always matched). Raises
        :class:`gguf_rs.GGUFError` when the vocabulary lacks a token llama.cpp
        asserts on (BOS to be added, a byte token for byte fallback)."""
        return self._native.encode(text, add_special, parse_special)

    def decode_bytes(
        self, ids: Iterable[int], *, remove_special: bool = False, unparse_special: bool = False
    ) -> bytes:
        """The bytes of ``ids``, as ``llama_detokenize(vocab, ids, ...,
        remove_special, unparse_special)`` writes them (byte tokens can make
        invalid UTF-8)."""
        return self._native.decode_bytes(list(ids), remove_special, unparse_special)

    def decode(self, ids: Iterable[int], *, remove_special: bool = False, unparse_special: bool = False) -> str:
        """:meth:`decode_bytes` as text (invalid UTF-8 replaced by U+FFFD)."""
        return self.decode_bytes(ids, remove_special=remove_special, unparse_special=unparse_special).decode(
            "utf-8", errors="replace"
        )

    def token_to_piece(self, token: int, *, special: bool = False) -> bytes:
        """The bytes token ``token`` stands for (``llama_token_to_piece``):
        control and unknown tokens give ``b""`` unless ``special``."""
        return self._native.token_to_piece(token, special)

    def token_text(self, token: int) -> str:
        """Token ``token``'s stored text (``"▁a"``, ``"<s>"``); ``IndexError``
        past the vocabulary."""
        text = self._native.token_text(token)
        if text is None:
            raise IndexError(f"token {token} is past the vocabulary ({len(self)} tokens)")
        return text

    def token_id(self, text: str) -> int | None:
        """The id of the token whose stored text is ``text``, or None."""
        return self._native.token_id(text)

    def __len__(self) -> int:
        return len(self._native)

    def __repr__(self) -> str:
        pre = f", pre={self.pre!r}" if self.pre else ""
        return f"Tokenizer({self.vocab_type}, {self.model!r}{pre}, {len(self)} tokens)"

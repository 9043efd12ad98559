//! Token attributes (llama.cpp's `llama_token_attr`) and the vocabulary
//! types.

use std::fmt;

/// The attributes of a token, as llama.cpp derives them from
/// `tokenizer.ggml.token_type` and its own rules (bit values are
/// llama.cpp's `LLAMA_TOKEN_ATTR_*`).
#[derive(Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct TokenAttr(pub u32);

impl TokenAttr {
    /// No attribute (token type 0, or a type llama.cpp does not know).
    pub const UNDEFINED: TokenAttr = TokenAttr(0);
    /// The unknown token.
    pub const UNKNOWN: TokenAttr = TokenAttr(1 << 0);
    /// A reserved token no text maps to.
    pub const UNUSED: TokenAttr = TokenAttr(1 << 1);
    /// An ordinary piece of text.
    pub const NORMAL: TokenAttr = TokenAttr(1 << 2);
    /// A control token (BOS, EOS, chat markers): parsed from text only when
    /// asked, and left out of decoded text unless asked.
    pub const CONTROL: TokenAttr = TokenAttr(1 << 3);
    /// A token added by the model's authors: always matched in text first.
    pub const USER_DEFINED: TokenAttr = TokenAttr(1 << 4);
    /// One byte (`<0x0A>`), for byte fallback.
    pub const BYTE: TokenAttr = TokenAttr(1 << 5);
    /// Normalized text (unused by llama.cpp's tokenizers).
    pub const NORMALIZED: TokenAttr = TokenAttr(1 << 6);
    /// Spaces before the token are dropped when it is matched in text.
    pub const LSTRIP: TokenAttr = TokenAttr(1 << 7);
    /// Spaces after the token are dropped when it is matched in text.
    pub const RSTRIP: TokenAttr = TokenAttr(1 << 8);
    /// Matched as a whole word only (unused by llama.cpp's tokenizers).
    pub const SINGLE_WORD: TokenAttr = TokenAttr(1 << 9);

    /// Whether any bit of `other` is set.
    pub fn has(self, other: TokenAttr) -> bool {
        self.0 & other.0 != 0
    }

    /// The attribute llama.cpp gives a `tokenizer.ggml.token_type` value.
    pub fn from_token_type(token_type: i32) -> TokenAttr {
        match token_type {
            1 => TokenAttr::NORMAL,
            2 => TokenAttr::UNKNOWN,
            3 => TokenAttr::CONTROL,
            4 => TokenAttr::USER_DEFINED,
            5 => TokenAttr::UNUSED,
            6 => TokenAttr::BYTE,
            _ => TokenAttr::UNDEFINED,
        }
    }

    pub(crate) fn set(&mut self, other: TokenAttr, on: bool) {
        if on {
            self.0 |= other.0;
        } else {
            self.0 &= !other.0;
        }
    }
}

impl fmt::Debug for TokenAttr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NAMES: &[(TokenAttr, &str)] = &[
            (TokenAttr::UNKNOWN, "UNKNOWN"),
            (TokenAttr::UNUSED, "UNUSED"),
            (TokenAttr::NORMAL, "NORMAL"),
            (TokenAttr::CONTROL, "CONTROL"),
            (TokenAttr::USER_DEFINED, "USER_DEFINED"),
            (TokenAttr::BYTE, "BYTE"),
            (TokenAttr::NORMALIZED, "NORMALIZED"),
            (TokenAttr::LSTRIP, "LSTRIP"),
            (TokenAttr::RSTRIP, "RSTRIP"),
            (TokenAttr::SINGLE_WORD, "SINGLE_WORD"),
        ];
        let names: Vec<&str> = NAMES
            .iter()
            .filter(|(a, _)| self.has(*a))
            .map(|(_, n)| *n)
            .collect();
        if names.is_empty() {
            f.write_str("UNDEFINED")
        } else {
            f.write_str(&names.join("|"))
        }
    }
}

/// The vocabulary types this library builds (llama.cpp's
/// `LLAMA_VOCAB_TYPE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum VocabType {
    /// SentencePiece byte-pair merges by score with byte fallback
    /// (`tokenizer.ggml.model = llama`).
    Spm,
    /// GPT-2 style byte-level BPE by merge rank (`gpt2`, `gemma4`).
    Bpe,
    /// WordPiece (`bert`).
    Wpm,
    /// Unigram (`t5`).
    Ugm,
}

impl VocabType {
    /// llama.cpp's name for the type (`SPM`, `BPE`, `WPM`, `UGM`).
    pub fn name(self) -> &'static str {
        match self {
            VocabType::Spm => "SPM",
            VocabType::Bpe => "BPE",
            VocabType::Wpm => "WPM",
            VocabType::Ugm => "UGM",
        }
    }
}

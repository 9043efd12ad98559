//! A model's tokenizer, built from its metadata alone, that gives the token
//! ids llama.cpp gives.
//!
//! [`Tokenizer::from_model`] reads the `tokenizer.ggml.*` keys of any model
//! view ([`GgufFile`](gguf_core::GgufFile), [`Model`](gguf_core::Model), a
//! header-only remote model) and builds what llama.cpp's
//! `llama_vocab::impl::load` builds (the llama.cpp that llama-cpp-python
//! 0.3.36 vendors, as gguf-llama's `llama_load::LLAMA_CPP_VERSION` says):
//! the vocabulary type (`spm` for `llama`, `bpe` for `gpt2` and `gemma4`,
//! `wpm` for `bert`, `ugm` for `t5`), its defaults, the pre-tokenizer named by
//! `tokenizer.ggml.pre`, the special tokens and llama.cpp's fixes of their
//! attributes. [`encode`](Tokenizer::encode) and
//! [`decode`](Tokenizer::decode) follow `llama_tokenize` and
//! `llama_detokenize`, quirks included: the text is split at special
//! tokens (control ones only when asked), SentencePiece vocabularies get a
//! leading space, and byte-level ones their hand-written splitters.
//!
//! ```
//! # fn main() -> gguf_tokenizer::Result<()> {
//! # let mut b = gguf_core::write::Builder::new();
//! # use gguf_core::format::OwnedValue;
//! # b.set("tokenizer.ggml.model", "llama")?;
//! # b.set("tokenizer.ggml.tokens", OwnedValue::from(vec!["<unk>", "<s>", "</s>", "\u{2581}a", "a"]))?;
//! # b.set("tokenizer.ggml.scores", OwnedValue::from(vec![0f32, 0.0, 0.0, -1.0, -2.0]))?;
//! # b.set("tokenizer.ggml.token_type", OwnedValue::from(vec![2i32, 3, 3, 1, 1]))?;
//! # let model = b.preview()?;
//! use gguf_tokenizer::Tokenizer;
//! let tok = Tokenizer::from_model(&model)?;
//! let ids = tok.encode("a a", true, false)?;
//! assert_eq!(ids, [1, 3, 3]); // BOS (SentencePiece adds it), then "▁a" twice
//! // BOS (a control token) writes nothing; llama.cpp's leading-space
//! // removal applies to the first token only, here BOS.
//! assert_eq!(tok.decode(&ids, false, false)?, b" a a");
//! assert_eq!(tok.decode(&ids[1..], false, false)?, b"a a");
//! # Ok(()) }
//! ```
//!
//! # What is not supported
//!
//! The vocabulary types outside the four above are refused with an error
//! naming them: `rwkv` and `plamo2` (tokenizers of their own, a trie of
//! escaped byte strings and a suffix-table dynamic program),
//! `hybriddna` and `whitespace` (byte-pair sessions of their own for DNA
//! k-mers and whitespace-split words) and `test` (llama.cpp's debugging
//! vocabulary). Every `tokenizer.ggml.pre` name llama.cpp accepts is
//! supported.
//!
//! # Unicode
//!
//! Pre-tokenizers classify code points by general category. llama.cpp uses
//! a table generated from the Unicode Character Database (version 15.1);
//! we use the tables of `regex-syntax` (the `regex` crate's, a newer
//! version) less the code points Unicode 16.0 assigned, which llama.cpp
//! sees as unassigned. Both give every code point one of letter, number,
//! mark, punctuation, symbol, separator, control (`Cc`, `Cf`, `Co`, `Cs`)
//! or unassigned, the same one for every code point (checked against
//! llama.cpp's table), and whitespace is Unicode's `White_Space` in both. A
//! regex-syntax release with a newer Unicode would need the next version's
//! additions taken out too (a unit test names a few). Case folding of the
//! contraction rules (`'S`, `'LL`) only concerns ASCII in both.
//!
//! Where llama.cpp's behaviour depends on the order of a hash map or of an
//! unstable sort, we pick one order: special tokens of equal length are
//! matched in id order, and a control-looking token detected by text (FIM
//! markers) is the first of llama.cpp's list the vocabulary has.
//!
//! # Layers
//!
//! The files are layered, lowest first; a file uses only the layers before
//! it and [`gguf_core`] (`scripts/check_layers.py` holds the order and
//! checks it):
//! - `error`, `attr` (token attributes, vocabulary types), `unicode` (code
//!   points as llama.cpp classifies them);
//! - `split_custom`, `split_regex`: llama.cpp's hand-written splitters and
//!   its regex path;
//! - `pre` (every pre-tokenizer name and its patterns), `merge` (the merge
//!   loop spm and bpe share);
//! - this file: [`Tokenizer`] and its public methods, which call the files
//!   below (the crate root declares every file, so its own imports are not
//!   checked);
//! - `bpe`, `spm`, `wpm`, `ugm` (the algorithms), `special` (splitting at
//!   special tokens), `decode`: each adds its part of `Tokenizer`;
//! - `load`: the metadata to a `Tokenizer`;
//! - `lint`: a missing pre-tokenizer, for `gguf check`.
#![deny(missing_docs)]
#![deny(unsafe_code)]

mod error;

pub use error::{Error, Result, TokenizerError};

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

mod attr;
mod bpe;
mod decode;
mod lint;
mod load;
mod merge;
mod pre;
mod special;
mod split_custom;
mod split_regex;
mod spm;
mod ugm;
mod unicode;
mod wpm;

pub use attr::{TokenAttr, VocabType};
pub use lint::{pre_tokenizer_hint, PreHint};

/// One entry of the vocabulary.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenData {
    /// The token's text as stored (`▁` for spaces in SentencePiece
    /// vocabularies, GPT-2's byte characters in byte-level ones).
    pub text: String,
    /// Its score (SentencePiece merges prefer higher scores).
    pub score: f32,
    /// Its attributes.
    pub attr: TokenAttr,
}

/// The special token ids llama.cpp tracks (`None`: the model has none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Specials {
    /// Beginning of sequence.
    pub bos: Option<u32>,
    /// End of sequence.
    pub eos: Option<u32>,
    /// End of turn.
    pub eot: Option<u32>,
    /// End of message.
    pub eom: Option<u32>,
    /// Unknown.
    pub unk: Option<u32>,
    /// Separator (BERT).
    pub sep: Option<u32>,
    /// Padding.
    pub pad: Option<u32>,
    /// Mask (BERT).
    pub mask: Option<u32>,
    /// Fill-in-the-middle prefix.
    pub fim_pre: Option<u32>,
    /// Fill-in-the-middle suffix.
    pub fim_suf: Option<u32>,
    /// Fill-in-the-middle middle.
    pub fim_mid: Option<u32>,
    /// Fill-in-the-middle padding.
    pub fim_pad: Option<u32>,
    /// Fill-in-the-middle repository name.
    pub fim_rep: Option<u32>,
    /// Fill-in-the-middle file separator.
    pub fim_sep: Option<u32>,
}

/// llama.cpp's tokenizer flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Flags {
    /// A space is put before text that starts the input or follows a
    /// special token (SentencePiece), and removed again when decoding.
    pub add_space_prefix: bool,
    /// `encode(.., add_special = true, ..)` starts with BOS.
    pub add_bos: bool,
    /// `encode(.., add_special = true, ..)` ends with EOS.
    pub add_eos: bool,
    /// A separator is added (BERT-style models).
    pub add_sep: bool,
    /// A word that is a token is not merged (llama3-style pre-tokenizers).
    pub ignore_merges: bool,
    /// Decoding removes the space before `?!.,` and some contractions.
    pub clean_spaces: bool,
    /// Runs of spaces are merged (Unigram).
    pub remove_extra_whitespaces: bool,
    /// Spaces are written `▁` in the vocabulary.
    pub escape_whitespaces: bool,
}

impl Default for Flags {
    fn default() -> Flags {
        Flags {
            add_space_prefix: false,
            add_bos: false,
            add_eos: false,
            add_sep: false,
            ignore_merges: false,
            clean_spaces: false,
            remove_extra_whitespaces: false,
            escape_whitespaces: true,
        }
    }
}

/// A model's tokenizer: text to token ids and back, as llama.cpp does it.
/// See the [module](self) documentation.
pub struct Tokenizer {
    kind: VocabType,
    model: String,
    pre: Option<String>,
    family: Option<pre::Family>,
    byte_encode: bool,
    steps: Vec<pre::Step>,
    tokens: Vec<TokenData>,
    token_to_id: FxHashMap<Box<str>, u32>,
    merges: FxHashMap<Box<str>, u32>,
    specials: Specials,
    flags: Flags,
    /// Special tokens (control, user-defined, unknown), longest first.
    special_cache: Vec<u32>,
    normalizer_lowercase: bool,
    normalizer_strip_accents: bool,
    /// The longest token text, in bytes (WordPiece's search window).
    max_token_len: usize,
    /// Unigram's tries and character map (`ugm` vocabularies only).
    ugm: Option<Box<ugm::Ugm>>,
    /// The special tokens as automata, built on first use: without and
    /// with control tokens (`parse_special`). An error is the reason.
    special_matchers: [OnceLock<std::result::Result<Option<special::Matcher>, String>>; 2],
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer")
            .field("type", &self.kind)
            .field("model", &self.model)
            .field("pre", &self.pre)
            .field("n_tokens", &self.tokens.len())
            .field("n_merges", &self.merges.len())
            .field("specials", &self.specials)
            .field("flags", &self.flags)
            .finish()
    }
}

impl Tokenizer {
    /// The vocabulary type.
    pub fn vocab_type(&self) -> VocabType {
        self.kind
    }

    /// `tokenizer.ggml.model` (`llama`, `gpt2`, `gemma4`, `bert`, ...).
    pub fn model_name(&self) -> &str {
        &self.model
    }

    /// The pre-tokenizer name in effect for a byte-level vocabulary
    /// (`default` when the file names none), `None` for other types.
    pub fn pre_name(&self) -> Option<&str> {
        match self.kind {
            VocabType::Bpe => Some(self.pre.as_deref().unwrap_or("default")),
            _ => None,
        }
    }

    /// The number of tokens.
    pub fn n_tokens(&self) -> usize {
        self.tokens.len()
    }

    /// The number of merges (byte-level vocabularies).
    pub fn n_merges(&self) -> usize {
        self.merges.len()
    }

    /// A token's text, score and attributes.
    pub fn token(&self, id: u32) -> Option<&TokenData> {
        self.tokens.get(id as usize)
    }

    /// The id of a token's exact text (the last of duplicates, as in
    /// llama.cpp).
    pub fn token_id(&self, text: &str) -> Option<u32> {
        self.token_to_id.get(text).copied()
    }

    /// The special token ids.
    pub fn specials(&self) -> Specials {
        self.specials
    }

    /// The flags llama.cpp derived for this vocabulary.
    pub fn flags(&self) -> Flags {
        self.flags
    }

    /// Token ids for `text`, as `llama_tokenize(vocab, text, add_special,
    /// parse_special)` returns them.
    ///
    /// `add_special` adds the BOS / EOS / SEP tokens the vocabulary type and
    /// the model's `add_*` flags call for. `parse_special` lets control
    /// tokens written in the text (`<start_of_turn>`) become their ids;
    /// user-defined tokens are always matched.
    ///
    /// Errors only when a token llama.cpp asserts on is missing (BOS or EOS
    /// when they are to be added, a byte token for byte fallback).
    pub fn encode(&self, text: &str, add_special: bool, parse_special: bool) -> Result<Vec<u32>> {
        let mut out = Vec::with_capacity(text.len() / 3 + 2);
        let bos = || self.required(self.specials.bos, "BOS token");
        let eos = || self.required(self.specials.eos, "EOS token");
        let (first, last) = match self.kind {
            VocabType::Spm | VocabType::Bpe | VocabType::Ugm => (
                add_special && self.flags.add_bos,
                add_special && self.flags.add_eos,
            ),
            VocabType::Wpm => (add_special, add_special),
        };
        if first {
            out.push(bos()?);
        }
        let ugm = match self.kind {
            VocabType::Ugm => {
                Some(
                    self.ugm
                        .as_deref()
                        .ok_or_else(|| TokenizerError::UnsupportedModel {
                            model: self.model.clone(),
                            reason: "its Unigram tables were not built".into(),
                        })?,
                )
            }
            _ => None,
        };
        // Each fragment is tokenized as it is found: the fragments of a
        // long text are never all held at once.
        let mut prev_special = true;
        special::partition(self, text, parse_special, |f| {
            let t = match f {
                special::Fragment::Token(id) => {
                    out.push(id);
                    prev_special = true;
                    return Ok(());
                }
                special::Fragment::Text(t) => t,
            };
            match self.kind {
                VocabType::Spm => spm::tokenize_fragment(
                    self,
                    t,
                    self.flags.add_space_prefix && prev_special,
                    &mut out,
                )?,
                VocabType::Bpe => bpe::tokenize(self, t, &mut out)?,
                VocabType::Wpm => wpm::tokenize(self, t, &mut out),
                VocabType::Ugm => {
                    if let Some(ugm) = ugm {
                        ugm::tokenize(self, ugm, t, &mut out)?;
                    }
                }
            }
            prev_special = false;
            Ok(())
        })?;
        if last {
            out.push(match self.kind {
                VocabType::Wpm => self.required(self.specials.sep, "SEP token")?,
                _ => eos()?,
            });
        }
        Ok(out)
    }

    /// The automaton of the special tokens `encode` matches, built once.
    fn special_matcher(&self, parse_special: bool) -> Result<Option<&special::Matcher>> {
        let built = self.special_matchers[usize::from(parse_special)]
            .get_or_init(|| special::Matcher::new(self, parse_special));
        match built {
            Ok(m) => Ok(m.as_ref()),
            Err(reason) => Err(TokenizerError::BadKey {
                key: "tokenizer.ggml.tokens".into(),
                reason: reason.clone(),
            }
            .into()),
        }
    }

    fn required(&self, id: Option<u32>, what: &str) -> Result<u32> {
        id.ok_or_else(|| TokenizerError::MissingToken { what: what.into() }.into())
    }

    /// The token for one byte in byte fallback: `<0xXX>`, else the byte as
    /// text.
    fn byte_token(&self, b: u8) -> Result<u32> {
        let hex = format!("<0x{b:02X}>");
        if let Some(id) = self.token_id(&hex) {
            return Ok(id);
        }
        if b.is_ascii()
            && let Some(id) = self.token_id(std::str::from_utf8(&[b]).unwrap_or(""))
        {
            return Ok(id);
        }
        Err(TokenizerError::MissingToken {
            what: format!("byte token {hex}"),
        }
        .into())
    }
}

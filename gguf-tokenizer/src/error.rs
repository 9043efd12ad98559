//! The crate's error: a model whose tokenizer cannot be built, ids it does
//! not have, or the GGUF metadata it is read from.

pub(crate) use gguf_core::error::LookupError;

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong building or using a tokenizer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing the GGUF file failed (I/O, its format, a
    /// missing key or tensor, the writer): gguf-core's error, unchanged.
    #[error(transparent)]
    Gguf(#[from] gguf_core::Error),
    /// The tokenizer cannot be built from the metadata, or a token id is
    /// not in it.
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
}

impl Error {
    /// The file the error names: gguf-core's [`path`](gguf_core::Error::path)
    /// for an error of the file below; a tokenizer's own errors name none.
    ///
    /// ```
    /// let err = gguf_tokenizer::Error::from(gguf_core::GgufFile::open("no/such.gguf").unwrap_err());
    /// assert_eq!(err.path(), Some(std::path::Path::new("no/such.gguf")));
    /// ```
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            Error::Gguf(e) => e.path(),
            Error::Tokenizer(_) => None,
        }
    }

    /// The byte offset in the file the error names: gguf-core's
    /// [`offset`](gguf_core::Error::offset) for an error of the file below;
    /// a tokenizer's own errors name none.
    ///
    /// ```
    /// let err = gguf_tokenizer::Error::from(gguf_core::GgufFile::open(&b"GGUF"[..]).unwrap_err());
    /// assert_eq!(err.offset(), Some(4));
    /// ```
    pub fn offset(&self) -> Option<u64> {
        match self {
            Error::Gguf(e) => e.offset(),
            Error::Tokenizer(_) => None,
        }
    }
}

/// Why a model's tokenizer cannot be built or used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenizerError {
    /// `tokenizer.ggml.model` names a vocabulary type this library does not
    /// build (llama.cpp's `rwkv`, `plamo2`, `hybriddna`, ... or one it
    /// does not know either).
    #[error("tokenizer model {model:?} is not supported ({reason})")]
    UnsupportedModel {
        /// The value of `tokenizer.ggml.model`.
        model: String,
        /// Why.
        reason: String,
    },
    /// `tokenizer.ggml.pre` names a pre-tokenizer this library does not
    /// build, or one llama.cpp does not know.
    #[error("pre-tokenizer {pre:?} is not supported ({reason})")]
    UnsupportedPre {
        /// The value of `tokenizer.ggml.pre`.
        pre: String,
        /// Why.
        reason: String,
    },
    /// A tokenizer key is missing, has the wrong type, or a value llama.cpp
    /// refuses.
    #[error("{key}: {reason}")]
    BadKey {
        /// The metadata key.
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A token id outside the vocabulary.
    #[error("token id {id} is outside the vocabulary of {n_tokens} tokens")]
    TokenOutOfRange {
        /// The id.
        id: u32,
        /// The vocabulary size.
        n_tokens: usize,
    },
    /// A piece of the text the tokenizer has to take whole (one
    /// pre-tokenizer word, or a run of SentencePiece text with no place
    /// where it can be cut) is longer than it can hold.
    #[error("a piece of the text of {len} bytes cannot be cut and is too long to tokenize (at most {max} bytes)")]
    PieceTooLong {
        /// The piece's length in bytes.
        len: usize,
        /// The longest piece taken.
        max: usize,
    },
    /// The text needs a token the vocabulary lacks (a byte token for byte
    /// fallback, the BOS or EOS token llama.cpp asserts on).
    #[error("the vocabulary has no {what}")]
    MissingToken {
        /// Which token, e.g. `byte token <0x0A>`.
        what: String,
    },
}

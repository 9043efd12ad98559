//! `tokenizer.*`: the embedded vocabulary.

use crate::metadata::Metadata;

/// The GGML tokenizer keys (`tokenizer.ggml.*`) and the chat template.
///
/// Types are what gguf-py 0.19 writes: token ids `u32`, `scores` an array
/// of `f32`, `token_type` an array of `i32` (1 normal, 2 unknown,
/// 3 control, 4 user-defined, 5 unused, 6 byte).
///
/// ```
/// use gguf_core::Gguf;
/// # fn main() -> gguf_core::Result<()> {
/// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
/// use gguf_core::{write::Builder, FromMetadata, GgufFile, TokenizerMetadata};
/// // The tiny test file has tokens and scores but no tokenizer.ggml.model.
/// let err = TokenizerMetadata::from_gguf(&GgufFile::open(&bytes)?).unwrap_err();
/// assert_eq!(err.to_string(), r#"metadata key "tokenizer.ggml.model" not found"#);
///
/// let tok = TokenizerMetadata {
///     model: "gpt2".into(),
///     tokens: vec!["a".into(), "b".into(), "ab".into()],
///     merges: Some(vec!["a b".into()]),
///     chat_template: Some("{{ messages }}".into()),
///     ..TokenizerMetadata::default()
/// };
/// let mut b = Builder::new();
/// b.set_all(&tok)?;
/// let mut out = Vec::new();
/// b.write(&mut out)?;
/// let file = GgufFile::open(&out)?;
/// assert_eq!(file.get_str("tokenizer.chat_template")?, "{{ messages }}");
/// assert_eq!(TokenizerMetadata::from_gguf(&file)?, tok);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Metadata)]
#[gguf(prefix = "tokenizer.ggml", crate = "crate")]
pub struct TokenizerMetadata {
    /// `tokenizer.ggml.model`: `llama` (SentencePiece), `gpt2` (BPE), ...
    pub model: String,
    /// `tokenizer.ggml.pre`: the pre-tokenizer of BPE vocabularies.
    pub pre: Option<String>,
    /// `tokenizer.ggml.tokens`: the vocabulary, indexed by token id.
    pub tokens: Vec<String>,
    /// `tokenizer.ggml.scores`: one score per token.
    pub scores: Option<Vec<f32>>,
    /// `tokenizer.ggml.token_type`: one type per token.
    pub token_type: Option<Vec<i32>>,
    /// `tokenizer.ggml.merges`: BPE merges, `"a b"` each.
    pub merges: Option<Vec<String>>,
    /// `tokenizer.ggml.bos_token_id`.
    pub bos_token_id: Option<u32>,
    /// `tokenizer.ggml.eos_token_id`.
    pub eos_token_id: Option<u32>,
    /// `tokenizer.ggml.unknown_token_id`.
    pub unknown_token_id: Option<u32>,
    /// `tokenizer.ggml.padding_token_id`.
    pub padding_token_id: Option<u32>,
    /// `tokenizer.ggml.add_bos_token`.
    pub add_bos_token: Option<bool>,
    /// `tokenizer.ggml.add_eos_token`.
    pub add_eos_token: Option<bool>,
    /// `tokenizer.chat_template`: a Jinja template.
    #[gguf(key = "tokenizer.chat_template")]
    pub chat_template: Option<String>,
}

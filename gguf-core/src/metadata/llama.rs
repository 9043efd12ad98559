//! `{arch}.*`: the hyper-parameters of llama-like models.

use crate::metadata::Metadata;

/// The hyper-parameters of a llama-like model, under `{arch}.*`
/// (`llama.context_length`, `llama.attention.head_count`, ...).
///
/// Integer types follow what real files contain, not the specification
/// text: ggml's `docs/gguf.md` lists `context_length`, `embedding_length`,
/// `block_count`, `feed_forward_length`, `attention.head_count(_kv)` and
/// `rope.dimension_count` as `uint64`, but gguf-py 0.19's `GGUFWriter`
/// (`add_context_length`, `add_block_count`, ...) and llama.cpp write them
/// all as `u32`, and reading is exact about integer types (as llama.cpp's
/// is), so they are `u32` here.
///
/// ```
/// use gguf_core::Gguf;
/// # fn main() -> gguf_core::Result<()> {
/// use gguf_core::{write::Builder, FromMetadata, GgufFile, LlamaHyperParams};
/// let hp = LlamaHyperParams {
///     context_length: 2048, embedding_length: 64, block_count: 2, feed_forward_length: 128,
///     head_count: 4, head_count_kv: Some(2), layer_norm_rms_epsilon: 1e-5,
///     ..LlamaHyperParams::default()
/// };
/// let mut b = Builder::new();
/// b.set("general.architecture", "mistral")?.set_all(&hp)?;
/// let mut bytes = Vec::new();
/// b.write(&mut bytes)?;
/// let file = GgufFile::open(&bytes)?;
/// assert_eq!(file.get::<u32>("mistral.attention.head_count_kv")?, 2);
/// assert_eq!(LlamaHyperParams::from_gguf(&file)?, hp);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Metadata)]
#[gguf(prefix = "{arch}", crate = "crate")]
pub struct LlamaHyperParams {
    /// `{arch}.context_length` (`n_ctx`): the training context, in tokens.
    pub context_length: u32,
    /// `{arch}.embedding_length` (`n_embd`).
    pub embedding_length: u32,
    /// `{arch}.block_count`: number of transformer blocks.
    pub block_count: u32,
    /// `{arch}.feed_forward_length` (`n_ff`).
    pub feed_forward_length: u32,
    /// `{arch}.attention.head_count` (`n_head`).
    #[gguf(rename = "attention.head_count")]
    pub head_count: u32,
    /// `{arch}.attention.head_count_kv`: KV heads for grouped-query
    /// attention; absent means the same as `head_count`.
    #[gguf(rename = "attention.head_count_kv")]
    pub head_count_kv: Option<u32>,
    /// `{arch}.attention.layer_norm_rms_epsilon`.
    #[gguf(rename = "attention.layer_norm_rms_epsilon")]
    pub layer_norm_rms_epsilon: f32,
    /// `{arch}.rope.dimension_count`: rotated dimensions per head.
    #[gguf(rename = "rope.dimension_count")]
    pub rope_dimension_count: Option<u32>,
    /// `{arch}.rope.freq_base`: RoPE base frequency (10000 when absent).
    #[gguf(rename = "rope.freq_base")]
    pub rope_freq_base: Option<f32>,
    /// `{arch}.expert_count`: experts of a mixture-of-experts model.
    pub expert_count: Option<u32>,
    /// `{arch}.expert_used_count`: experts used per token.
    pub expert_used_count: Option<u32>,
    /// `{arch}.vocab_size`: absent in most files (the token list's length).
    pub vocab_size: Option<u32>,
}

//! [`ArchParams`]: the `{arch}.*` hyper-parameters the summary and the
//! memory estimate need, read the way llama.cpp's `load_hparams` reads them.

use gguf_core::Metadata;

use super::PerLayer;

/// The architecture hyper-parameters under `{arch}.*` that decide a
/// model's shapes and memory: every key optional, as most are optional
/// for some architecture.
///
/// Keys that llama.cpp reads with `get_key_or_arr` (head counts,
/// feed-forward lengths, experts used) are [`PerLayer`]: a scalar or one
/// value per layer.
///
/// ```
/// # fn main() -> gguf_llama::Result<()> {
/// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
/// use gguf_core::{FromMetadata, GgufFile};
/// use gguf_llama::summary::ArchParams;
/// let file = GgufFile::open(&bytes)?;
/// let hp = ArchParams::from_gguf(&file)?;
/// assert_eq!(hp.context_length, Some(4096));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Metadata)]
#[gguf(prefix = "{arch}", crate = "gguf_core")]
pub struct ArchParams {
    /// `{arch}.context_length` (`n_ctx_train`).
    pub context_length: Option<u32>,
    /// `{arch}.embedding_length` (`n_embd`).
    pub embedding_length: Option<u32>,
    /// `{arch}.block_count` (`n_layer`, NextN layers included).
    pub block_count: Option<u32>,
    /// `{arch}.nextn_predict_layers`: trailing multi-token-prediction layers.
    pub nextn_predict_layers: Option<u32>,
    /// `{arch}.feed_forward_length` (`n_ff`).
    pub feed_forward_length: Option<PerLayer>,
    /// `{arch}.attention.head_count` (`n_head`).
    #[gguf(rename = "attention.head_count")]
    pub head_count: Option<PerLayer>,
    /// `{arch}.attention.head_count_kv` (`n_head_kv`; `n_head` when absent).
    #[gguf(rename = "attention.head_count_kv")]
    pub head_count_kv: Option<PerLayer>,
    /// `{arch}.attention.key_length` (`n_embd_head_k`; `n_embd / n_head` when absent).
    #[gguf(rename = "attention.key_length")]
    pub key_length: Option<u32>,
    /// `{arch}.attention.value_length` (`n_embd_head_v`).
    #[gguf(rename = "attention.value_length")]
    pub value_length: Option<u32>,
    /// `{arch}.attention.key_length_swa`: key length of sliding-window layers.
    #[gguf(rename = "attention.key_length_swa")]
    pub key_length_swa: Option<u32>,
    /// `{arch}.attention.value_length_swa`.
    #[gguf(rename = "attention.value_length_swa")]
    pub value_length_swa: Option<u32>,
    /// `{arch}.attention.key_length_mla`: MLA (DeepSeek-style) key length.
    #[gguf(rename = "attention.key_length_mla")]
    pub key_length_mla: Option<u32>,
    /// `{arch}.attention.value_length_mla`.
    #[gguf(rename = "attention.value_length_mla")]
    pub value_length_mla: Option<u32>,
    /// `{arch}.attention.kv_lora_rank`: MLA's compressed KV width.
    #[gguf(rename = "attention.kv_lora_rank")]
    pub kv_lora_rank: Option<u32>,
    /// `{arch}.attention.sliding_window` (`n_swa`).
    #[gguf(rename = "attention.sliding_window")]
    pub sliding_window: Option<u32>,
    /// `{arch}.expert_count`.
    pub expert_count: Option<u32>,
    /// `{arch}.expert_used_count`.
    pub expert_used_count: Option<PerLayer>,
    /// `{arch}.expert_shared_count`.
    pub expert_shared_count: Option<u32>,
    /// `{arch}.vocab_size`.
    pub vocab_size: Option<u32>,
    /// `{arch}.embedding_length_out`: output embedding width when it differs.
    pub embedding_length_out: Option<u32>,
    /// `{arch}.ssm.conv_kernel` (Mamba `d_conv`).
    #[gguf(rename = "ssm.conv_kernel")]
    pub ssm_conv_kernel: Option<u32>,
    /// `{arch}.ssm.inner_size` (Mamba `d_inner`).
    #[gguf(rename = "ssm.inner_size")]
    pub ssm_inner_size: Option<u32>,
    /// `{arch}.ssm.state_size` (Mamba `d_state`).
    #[gguf(rename = "ssm.state_size")]
    pub ssm_state_size: Option<u32>,
    /// `{arch}.ssm.group_count` (Mamba-2 `n_group`).
    #[gguf(rename = "ssm.group_count")]
    pub ssm_group_count: Option<u32>,
    /// `{arch}.wkv.head_size` (RWKV).
    #[gguf(rename = "wkv.head_size")]
    pub wkv_head_size: Option<u32>,
    /// `{arch}.token_shift_count` (RWKV; 2 when absent).
    pub token_shift_count: Option<u32>,
}

//! The hyper-parameters llama.cpp derives before creating tensors, as its
//! `load_hparams` and `LLAMA_LOAD_LOCALS` compute them: the widths every
//! expected tensor shape is built from.

use gguf_core::Gguf;
use gguf_core::Value;

use super::keys::{first_of_layers, str_of, u32_of};

/// How an architecture marks its sliding-window layers
/// (`load_swa_pattern`): only layer 0 matters here, because llama.cpp
/// sizes most tensors with layer 0's head widths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Swa {
    /// No sliding-window layers.
    None,
    /// Every `period`-th layer is dense, the others slide, unless
    /// `{arch}.attention.sliding_window_pattern` says otherwise; when
    /// `needs_window`, only if `{arch}.attention.sliding_window` is above 0.
    Pattern { period: u32, needs_window: bool },
}

/// Hyper-parameters, with 0 for what the file does not say (llama.cpp's
/// zero-initialised fields).
#[derive(Debug, Clone, Default)]
pub(super) struct HParams {
    /// Layers whose tensors the architecture creates (`n_layer()`).
    pub n_layer: u64,
    pub n_embd: u64,
    pub n_ctx_train: u64,
    /// Layer 0's values, as llama.cpp's argument-less getters return.
    pub n_head: u64,
    pub n_head_kv: u64,
    pub n_ff: u64,
    pub head_k: u64,
    pub head_v: u64,
    pub n_rot: u64,
    /// Full-attention head width and rotary dimensions (`n_rot` check).
    pub head_k_full: u64,
    pub n_rot_full: u64,
    pub n_vocab: u64,
    pub n_expert: u64,
    pub n_expert_used: u64,
    pub n_ff_exp: u64,
    pub n_ff_shexp: u64,
    pub n_cls_out: u64,
    pub longrope: bool,
}

impl HParams {
    /// Reads them for architecture `arch`, whose vocabulary has `n_vocab`
    /// tokens (`None` when it has none: `{arch}.vocab_size` then).
    pub(super) fn read(
        meta: &(impl Gguf + ?Sized),
        arch: &str,
        swa: Swa,
        n_vocab: Option<u64>,
    ) -> Self {
        let key = |k: &str| format!("{arch}.{k}");
        let u32_key = |k: &str| u32_of(meta, &key(k)).map(u64::from);
        let layer0 = |k: &str| first_of_layers(meta, &key(k)).map(u64::from);

        let n_layer_all = u32_key("block_count").unwrap_or(0);
        let nextn = u32_key("nextn_predict_layers").unwrap_or(0);
        let n_embd = u32_key("embedding_length").unwrap_or(0);
        let n_head = layer0("attention.head_count").unwrap_or(0);
        // `n_head_kv_arr = n_head_arr` before the optional key is read.
        let n_head_kv = layer0("attention.head_count_kv").unwrap_or(n_head);
        // Without heads (recurrent models) llama.cpp zeroes the widths.
        let (head_k_full, head_v_full, n_rot_full) = match n_embd.checked_div(n_head) {
            Some(width) => {
                let k = u32_key("attention.key_length").unwrap_or(width);
                let v = u32_key("attention.value_length").unwrap_or(width);
                (k, v, u32_key("rope.dimension_count").unwrap_or(k))
            }
            None => (0, 0, 0),
        };
        let (head_k, head_v, n_rot) = if layer0_slides(meta, arch, swa) {
            (
                u32_key("attention.key_length_swa").unwrap_or(head_k_full),
                u32_key("attention.value_length_swa").unwrap_or(head_v_full),
                u32_key("rope.dimension_count_swa").unwrap_or(n_rot_full),
            )
        } else {
            (head_k_full, head_v_full, n_rot_full)
        };
        let n_cls_out = match meta.value(&key("classifier.output_labels")) {
            Some(Value::Array(a)) if !a.is_empty() => a.len() as u64,
            _ => 1,
        };
        HParams {
            n_layer: n_layer_all.saturating_sub(nextn),
            n_embd,
            n_ctx_train: u32_key("context_length").unwrap_or(0),
            n_head,
            n_head_kv,
            n_ff: layer0("feed_forward_length").unwrap_or(0),
            head_k,
            head_v,
            n_rot,
            head_k_full,
            n_rot_full,
            n_vocab: n_vocab.unwrap_or_else(|| u32_key("vocab_size").unwrap_or(0)),
            n_expert: u32_key("expert_count").unwrap_or(0),
            n_expert_used: layer0("expert_used_count").unwrap_or(0),
            n_ff_exp: layer0("expert_feed_forward_length").unwrap_or(0),
            n_ff_shexp: u32_key("expert_shared_feed_forward_length").unwrap_or(0),
            n_cls_out,
            longrope: str_of(meta, &key("rope.scaling.type")) == Some("longrope"),
        }
    }
}

/// Whether layer 0 is a sliding-window layer (`is_swa(0)`).
fn layer0_slides(meta: &(impl Gguf + ?Sized), arch: &str, swa: Swa) -> bool {
    let Swa::Pattern {
        period,
        needs_window,
    } = swa
    else {
        return false;
    };
    if needs_window && u32_of(meta, &format!("{arch}.attention.sliding_window")).unwrap_or(0) == 0 {
        return false;
    }
    let key = format!("{arch}.attention.sliding_window_pattern");
    let period = match meta.value(&key) {
        // Per-layer flags: layer 0's (zero-filled when the array is empty).
        Some(Value::Array(_)) => return first_of_layers(meta, &key).unwrap_or(0) != 0,
        Some(Value::U32(p)) => p,
        _ => period,
    };
    // `set_swa_pattern(p)`: layer `il` slides when `il % p < p - 1`.
    period == 0 || period >= 2
}

//! The hyper-parameters llama.cpp derives before creating tensors, as its
//! `load_hparams` and `LLAMA_LOAD_LOCALS` compute them: the widths every
//! expected tensor shape is built from. The keys are read, and their
//! defaults filled in, by the summary's one reader
//! ([`ArchParams`], [`LoaderParams`]); this adds what only the tensor
//! shapes need.

use crate::summary::{swa_layout, ArchParams, LoaderParams, PerLayer, SwaPattern};

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
    /// Derives them for architecture `arch` from its keys as llama.cpp's
    /// getters read them; its vocabulary has `n_vocab` tokens (`None` when
    /// it has none: `{arch}.vocab_size` then).
    pub(super) fn of(
        hp: &ArchParams,
        more: &LoaderParams,
        arch: &str,
        n_vocab: Option<u64>,
    ) -> Self {
        let layer0 = |v: &Option<PerLayer>| v.as_ref().map_or(0, |p| u64::from(p.first()));
        let n_head = u64::from(hp.n_head0());
        let (head_k_full, head_v_full) = hp.head_widths();
        // Without heads (recurrent models) llama.cpp zeroes the widths.
        let n_rot_full = if n_head > 0 {
            more.rope_dimension_count.unwrap_or(head_k_full)
        } else {
            0
        };
        let (head_k, head_v, n_rot) = if layer0_slides(hp, more, arch) {
            let (k, v) = hp.head_widths_swa();
            (k, v, more.rope_dimension_count_swa.unwrap_or(n_rot_full))
        } else {
            (head_k_full, head_v_full, n_rot_full)
        };
        let n_cls_out = match more.classifier_output_labels {
            Some(labels) if labels.0 > 0 => labels.0,
            _ => 1,
        };
        HParams {
            n_layer: u64::from(hp.n_layer()),
            n_embd: u64::from(hp.embedding_length.unwrap_or(0)),
            n_ctx_train: u64::from(hp.context_length.unwrap_or(0)),
            n_head,
            n_head_kv: u64::from(hp.n_head_kv0()),
            n_ff: layer0(&hp.feed_forward_length),
            head_k: u64::from(head_k),
            head_v: u64::from(head_v),
            n_rot: u64::from(n_rot),
            head_k_full: u64::from(head_k_full),
            n_rot_full: u64::from(n_rot_full),
            n_vocab: n_vocab.unwrap_or_else(|| u64::from(hp.vocab_size.unwrap_or(0))),
            n_expert: u64::from(hp.expert_count.unwrap_or(0)),
            n_expert_used: layer0(&hp.expert_used_count),
            n_ff_exp: layer0(&more.expert_feed_forward_length),
            n_ff_shexp: u64::from(more.expert_shared_feed_forward_length.unwrap_or(0)),
            n_cls_out,
            longrope: more.rope_scaling_type.as_deref() == Some("longrope"),
        }
    }
}

/// Whether layer 0 is a sliding-window layer (`is_swa(0)`): only layer 0
/// matters here, because llama.cpp sizes most tensors with layer 0's head
/// widths. An architecture whose window defaults to 0 slides only when
/// `{arch}.attention.sliding_window` is above 0.
fn layer0_slides(hp: &ArchParams, more: &LoaderParams, arch: &str) -> bool {
    let Some(layout) = swa_layout(arch) else {
        return false;
    };
    if layout.default_window == 0 && hp.sliding_window.unwrap_or(0) == 0 {
        return false;
    }
    let period = match more.sliding_window_pattern {
        Some(SwaPattern::Layer0(slides)) => return slides,
        Some(SwaPattern::Period(p)) => p,
        None => layout.period,
    };
    layout.slides(period, 0)
}

//! Phi-3.

use crate::config::Default as D;

use super::table::*;

/// `Phi3ForCausalLM` (the converter's `Phi3MiniModel`): fused QKV and
/// gate-up projections kept fused, its own key order and SentencePiece
/// reading.
pub(crate) const PHI3: Architecture = Architecture {
    hf_names: &["Phi3ForCausalLM"],
    gguf: "phi3",
    defaults: &[
        ("vocab_size", D::Int(32064)),
        ("hidden_size", D::Int(3072)),
        ("intermediate_size", D::Int(8192)),
        ("num_hidden_layers", D::Int(32)),
        ("num_attention_heads", D::Int(32)),
        ("num_key_value_heads", D::HeadCount),
        ("max_position_embeddings", D::Int(4096)),
        ("original_max_position_embeddings", D::Int(4096)),
        ("rms_norm_eps", D::Float(1e-5)),
        ("rope_theta", D::Float(10000.0)),
        ("partial_rotary_factor", D::Float(1.0)),
    ],
    steps: &[
        u32_step(
            "context_length",
            &["n_positions", "max_position_embeddings"],
        ),
        Step::RopeOriginalContext,
        u32_step("embedding_length", &["hidden_size", "n_embd"]),
        u32_step("feed_forward_length", &["intermediate_size"]),
        u32_step("block_count", BLOCKS_KEYS),
        u32_step("attention.head_count", &["num_attention_heads", "n_head"]),
        u32_step(
            "attention.head_count_kv",
            &["num_key_value_heads", "n_head_kv"],
        ),
        f32_step("attention.layer_norm_rms_epsilon", &["rms_norm_eps"]),
        Step::RopeDimensionPartial,
        Step::RopeFreqBase { default: 10000.0 },
        Step::FileType,
        Step::SlidingWindowOrZero,
    ],
    globals: LLAMA_GLOBALS,
    blocks: &[
        rule("input_layernorm", "attn_norm", &[]),
        rule("post_attention_layernorm", "ffn_norm", &[]),
        rule("self_attn.qkv_proj", "attn_qkv", &[]),
        rule("self_attn.o_proj", "attn_output", &[]),
        rule("mlp.gate_up_proj", "ffn_up", &[]),
        rule("mlp.down_proj", "ffn_down", &[]),
    ],
    generated: Generated::Phi3LongRope,
    experts: &[],
    splits: &[],
    skipped: &[],
    mxfp4: false,
    gated_query: false,
    renames: &[],
    ignored_config: &[],
    vocab: Vocab::Phi3,
    mtp: Mtp::Refused,
    hparam_overrides: &[],
};

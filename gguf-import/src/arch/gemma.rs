//! Gemma 2 and Gemma 3.

use crate::config::Default as D;

use super::table::*;

pub(super) const GEMMA3_GLOBALS: &[TensorRule] = &[
    rule(
        "model.embed_tokens",
        "token_embd",
        &[Transform::TrimToVocab],
    ),
    rule("model.norm", "output_norm", PLUS_ONE),
    rule("lm_head", "output", &[]),
];

pub(super) const GEMMA3_BLOCKS: &[TensorRule] = &[
    rule("input_layernorm", "attn_norm", PLUS_ONE),
    rule("post_attention_layernorm", "post_attention_norm", PLUS_ONE),
    rule("pre_feedforward_layernorm", "ffn_norm", PLUS_ONE),
    rule("post_feedforward_layernorm", "post_ffw_norm", PLUS_ONE),
    rule("self_attn.q_norm", "attn_q_norm", PLUS_ONE),
    rule("self_attn.k_norm", "attn_k_norm", PLUS_ONE),
    rule("self_attn.q_proj", "attn_q", &[]),
    rule("self_attn.k_proj", "attn_k", &[]),
    rule("self_attn.v_proj", "attn_v", &[]),
    rule("self_attn.o_proj", "attn_output", &[]),
    rule("mlp.gate_proj", "ffn_gate", &[]),
    rule("mlp.up_proj", "ffn_up", &[]),
    rule("mlp.down_proj", "ffn_down", &[]),
];

/// `Gemma3ForCausalLM` (the converter's `Gemma3Model`): norms + 1,
/// embedding rows cut to the vocabulary, tied output.
pub(crate) const GEMMA3: Architecture = Architecture {
    hf_names: &["Gemma3ForCausalLM", "Gemma3ForConditionalGeneration"],
    gguf: "gemma3",
    defaults: &[
        ("vocab_size", D::Int(262208)),
        ("hidden_size", D::Int(2304)),
        ("intermediate_size", D::Int(9216)),
        ("num_hidden_layers", D::Int(26)),
        ("num_attention_heads", D::Int(8)),
        ("num_key_value_heads", D::Int(4)),
        ("head_dim", D::Int(256)),
        ("max_position_embeddings", D::Int(131072)),
        ("rms_norm_eps", D::Float(1e-6)),
        ("rope_theta", D::Float(1_000_000.0)),
        ("rope_local_base_freq", D::Float(10_000.0)),
        ("sliding_window", D::Int(4096)),
    ],
    steps: &[
        Step::Common,
        Step::FileType,
        Step::U32 {
            key: "context_length",
            config: &["max_position_embeddings"],
            default: Some(131072),
        },
        Step::U32 {
            key: "attention.head_count",
            config: &["num_attention_heads"],
            default: Some(8),
        },
        Step::F32 {
            key: "attention.layer_norm_rms_epsilon",
            config: &["rms_norm_eps"],
            default: Some(1e-6),
        },
        Step::U32 {
            key: "attention.key_length",
            config: &["head_dim"],
            default: Some(256),
        },
        Step::U32 {
            key: "attention.value_length",
            config: &["head_dim"],
            default: Some(256),
        },
        Step::RopeFreqBase {
            default: 1_000_000.0,
        },
        Step::F32IfSet {
            key: "final_logit_softcapping",
            config: "final_logit_softcapping",
        },
        Step::SlidingWindow,
        Step::U32 {
            key: "attention.head_count_kv",
            config: &["num_key_value_heads"],
            default: Some(4),
        },
    ],
    globals: GEMMA3_GLOBALS,
    blocks: GEMMA3_BLOCKS,
    generated: Generated::Nothing,
    experts: &[],
    splits: &[],
    skipped: &[],
    mxfp4: false,
    gated_query: false,
    renames: &[],
    ignored_config: &[],
    vocab: Vocab::Gemma,
    mtp: Mtp::Refused,
    hparam_overrides: &[],
};

/// `Gemma2ForCausalLM` (the converter's `Gemma2Model`): its own key
/// order, every norm + 1, no `lm_head` (the output is tied).
pub(crate) const GEMMA2: Architecture = Architecture {
    hf_names: &["Gemma2ForCausalLM"],
    gguf: "gemma2",
    defaults: &[
        ("vocab_size", D::Int(256000)),
        ("hidden_size", D::Int(2304)),
        ("intermediate_size", D::Int(9216)),
        ("num_hidden_layers", D::Int(26)),
        ("num_attention_heads", D::Int(8)),
        ("num_key_value_heads", D::Int(4)),
        ("head_dim", D::Int(256)),
        ("max_position_embeddings", D::Int(8192)),
        ("rms_norm_eps", D::Float(1e-6)),
        ("rope_theta", D::Float(10000.0)),
        ("final_logit_softcapping", D::Float(30.0)),
        ("attn_logit_softcapping", D::Float(50.0)),
        ("sliding_window", D::Int(4096)),
    ],
    steps: &[
        u32_step("context_length", &["max_position_embeddings"]),
        u32_step("embedding_length", &["hidden_size"]),
        u32_step("block_count", BLOCKS_KEYS),
        u32_step("feed_forward_length", &["intermediate_size"]),
        u32_step("attention.head_count", &["num_attention_heads"]),
        u32_step(
            "attention.head_count_kv",
            &["num_key_value_heads", "num_attention_heads"],
        ),
        f32_step("attention.layer_norm_rms_epsilon", &["rms_norm_eps"]),
        u32_step("attention.key_length", &["head_dim"]),
        u32_step("attention.value_length", &["head_dim"]),
        Step::FileType,
        f32_step("attn_logit_softcapping", &["attn_logit_softcapping"]),
        f32_step("final_logit_softcapping", &["final_logit_softcapping"]),
        u32_step("attention.sliding_window", &["sliding_window"]),
    ],
    globals: &[
        rule("model.embed_tokens", "token_embd", &[]),
        rule("model.norm", "output_norm", PLUS_ONE),
    ],
    blocks: GEMMA3_BLOCKS,
    skipped: &["lm_head"],
    mxfp4: false,
    gated_query: false,
    renames: &[],
    ..GEMMA3
};

//! The Qwen family: Qwen2, Qwen3, Qwen3-MoE and Qwen3-Next.

use crate::config::Default as D;

use super::table::*;

/// `Qwen2ForCausalLM` (the converter's `Qwen2Model`): attention biases,
/// no permutation.
pub(crate) const QWEN2: Architecture = Architecture {
    hf_names: &["Qwen2ForCausalLM"],
    gguf: "qwen2",
    defaults: &[
        ("vocab_size", D::Int(151936)),
        ("hidden_size", D::Int(4096)),
        ("intermediate_size", D::Int(22016)),
        ("num_hidden_layers", D::Int(32)),
        ("num_attention_heads", D::Int(32)),
        ("num_key_value_heads", D::HeadCount),
        ("max_position_embeddings", D::Int(32768)),
        ("rms_norm_eps", D::Float(1e-6)),
        ("rope_theta", D::Float(10000.0)),
    ],
    steps: &[Step::Common, Step::FileType, Step::Pooling],
    globals: LLAMA_GLOBALS,
    blocks: QWEN2_BLOCKS,
    generated: Generated::Nothing,
    experts: &[],
    splits: &[],
    skipped: &[],
    mxfp4: false,
    gated_query: false,
    renames: &[],
    ignored_config: &[],
    vocab: Vocab::SentencePieceOrBpe,
    mtp: Mtp::Refused,
    hparam_overrides: &[],
};

pub(super) const QWEN3_BLOCKS: &[TensorRule] = &[
    rule("input_layernorm", "attn_norm", &[]),
    rule("post_attention_layernorm", "ffn_norm", &[]),
    rule("self_attn.q_proj", "attn_q", &[]),
    rule("self_attn.k_proj", "attn_k", &[]),
    rule("self_attn.v_proj", "attn_v", &[]),
    rule("self_attn.o_proj", "attn_output", &[]),
    rule("self_attn.q_norm", "attn_q_norm", &[]),
    rule("self_attn.k_norm", "attn_k_norm", &[]),
    rule("mlp.gate_proj", "ffn_gate", &[]),
    rule("mlp.up_proj", "ffn_up", &[]),
    rule("mlp.down_proj", "ffn_down", &[]),
    rule("mlp.gate", "ffn_gate_inp", &[]),
    rule("mlp.shared_expert_gate", "ffn_gate_inp_shexp", &[]),
    rule("mlp.shared_expert.gate_proj", "ffn_gate_shexp", &[]),
    rule("mlp.shared_expert.up_proj", "ffn_up_shexp", &[]),
    rule("mlp.shared_expert.down_proj", "ffn_down_shexp", &[]),
];

pub(super) const QWEN3_DEFAULTS: &[(&str, D)] = &[
    ("vocab_size", D::Int(151936)),
    ("hidden_size", D::Int(4096)),
    ("intermediate_size", D::Int(22016)),
    ("num_hidden_layers", D::Int(32)),
    ("num_attention_heads", D::Int(32)),
    ("num_key_value_heads", D::Int(32)),
    ("head_dim", D::Int(128)),
    ("max_position_embeddings", D::Int(32768)),
    ("rms_norm_eps", D::Float(1e-6)),
    ("rope_theta", D::Float(10000.0)),
];

/// `Qwen3ForCausalLM` (the converter's `Qwen3Model`, a `Qwen2Model`): Q/K
/// norms, no biases.
pub(crate) const QWEN3: Architecture = Architecture {
    hf_names: &["Qwen3ForCausalLM"],
    gguf: "qwen3",
    defaults: QWEN3_DEFAULTS,
    blocks: QWEN3_BLOCKS,
    ..QWEN2
};

/// `Qwen3MoeForCausalLM` (the converter's `Qwen2MoeModel`): Qwen3 with
/// its experts stacked, `down_proj`, `gate_proj`, `up_proj` in that
/// order.
pub(crate) const QWEN3MOE: Architecture = Architecture {
    hf_names: &["Qwen3MoeForCausalLM"],
    gguf: "qwen3moe",
    defaults: &[
        ("vocab_size", D::Int(151936)),
        ("hidden_size", D::Int(2048)),
        ("intermediate_size", D::Int(6144)),
        ("num_hidden_layers", D::Int(24)),
        ("num_attention_heads", D::Int(32)),
        ("num_key_value_heads", D::Int(4)),
        ("head_dim", D::Int(128)),
        ("max_position_embeddings", D::Int(32768)),
        ("rms_norm_eps", D::Float(1e-6)),
        ("rope_theta", D::Float(10000.0)),
        ("num_experts_per_tok", D::Int(8)),
        ("num_experts", D::Int(128)),
        ("moe_intermediate_size", D::Int(768)),
    ],
    steps: &[
        Step::Common,
        Step::FileType,
        Step::U32IfSet {
            key: "expert_feed_forward_length",
            config: "moe_intermediate_size",
        },
        Step::U32IfSet {
            key: "expert_shared_feed_forward_length",
            config: "shared_expert_intermediate_size",
        },
    ],
    experts: DOWN_GATE_UP_EXPERTS,
    ..QWEN3
};

pub(super) const QWEN3NEXT_NORM: &[Transform] = &[Transform::AddOne];

/// `Qwen3NextForCausalLM` (the converter's `Qwen3NextModel`, the base of
/// Qwen3.5): gated linear-attention blocks between full-attention ones,
/// shared and routed experts, every norm + 1 but the gated one, and its
/// multi-token-prediction layer as a block after the others.
pub(crate) const QWEN3NEXT: Architecture = Architecture {
    hf_names: &["Qwen3NextForCausalLM"],
    gguf: "qwen3next",
    defaults: &[
        ("vocab_size", D::Int(151936)),
        ("hidden_size", D::Int(2048)),
        ("intermediate_size", D::Int(5632)),
        ("num_hidden_layers", D::Int(48)),
        ("num_attention_heads", D::Int(16)),
        ("num_key_value_heads", D::Int(2)),
        ("head_dim", D::Int(256)),
        ("max_position_embeddings", D::Int(32768)),
        ("rms_norm_eps", D::Float(1e-6)),
        ("rope_theta", D::Float(10000.0)),
        ("partial_rotary_factor", D::Float(0.25)),
        ("linear_conv_kernel_dim", D::Int(4)),
        ("linear_key_head_dim", D::Int(128)),
        ("linear_value_head_dim", D::Int(128)),
        ("linear_num_key_heads", D::Int(16)),
        ("linear_num_value_heads", D::Int(32)),
        ("moe_intermediate_size", D::Int(512)),
        ("shared_expert_intermediate_size", D::Int(512)),
        ("num_experts_per_tok", D::Int(10)),
        ("num_experts", D::Int(512)),
        ("full_attention_interval", D::Int(4)),
    ],
    steps: &[
        Step::Common,
        Step::FileType,
        Step::U32IfPresent {
            key: "expert_feed_forward_length",
            config: "moe_intermediate_size",
        },
        Step::U32IfPresent {
            key: "expert_shared_feed_forward_length",
            config: "shared_expert_intermediate_size",
        },
        Step::NextnLayers,
        u32_step("ssm.conv_kernel", &["linear_conv_kernel_dim"]),
        u32_step("ssm.state_size", &["linear_key_head_dim"]),
        u32_step("ssm.group_count", &["linear_num_key_heads"]),
        u32_step("ssm.time_step_rank", &["linear_num_value_heads"]),
        Step::SsmInnerSize,
        Step::RecurrentLayers,
        Step::U32 {
            key: "full_attention_interval",
            config: &["full_attention_interval"],
            default: Some(4),
        },
        Step::RopeDimensionTimesFactor { default: 0.25 },
    ],
    globals: &[
        rule("model.embed_tokens", "token_embd", &[]),
        rule("model.norm", "output_norm", QWEN3NEXT_NORM),
        rule("lm_head", "output", &[]),
    ],
    blocks: &[
        rule("input_layernorm", "attn_norm", QWEN3NEXT_NORM),
        rule(
            "post_attention_layernorm",
            "post_attention_norm",
            QWEN3NEXT_NORM,
        ),
        rule("self_attn.q_proj", "attn_q", &[]),
        rule("self_attn.k_proj", "attn_k", &[]),
        rule("self_attn.v_proj", "attn_v", &[]),
        rule("self_attn.o_proj", "attn_output", &[]),
        rule("self_attn.q_norm", "attn_q_norm", QWEN3NEXT_NORM),
        rule("self_attn.k_norm", "attn_k_norm", QWEN3NEXT_NORM),
        rule("linear_attn.A_log", "ssm_a", &[Transform::NegExp]),
        rule("linear_attn.conv1d", "ssm_conv1d", &[Transform::Squeeze]),
        rule("linear_attn.dt_proj", "ssm_dt", &[]),
        rule("linear_attn.in_proj_ba", "ssm_ba", &[]),
        rule("linear_attn.norm", "ssm_norm", &[]),
        rule("linear_attn.out_proj", "ssm_out", &[]),
        rule("mlp.gate", "ffn_gate_inp", &[]),
        rule("mlp.shared_expert_gate", "ffn_gate_inp_shexp", &[]),
        rule("mlp.shared_expert.gate_proj", "ffn_gate_shexp", &[]),
        rule("mlp.shared_expert.up_proj", "ffn_up_shexp", &[]),
        rule("mlp.shared_expert.down_proj", "ffn_down_shexp", &[]),
        rule("eh_proj", "nextn.eh_proj", &[]),
        rule("enorm", "nextn.enorm", QWEN3NEXT_NORM),
        rule("hnorm", "nextn.hnorm", QWEN3NEXT_NORM),
        rule("shared_head.norm", "nextn.shared_head_norm", QWEN3NEXT_NORM),
    ],
    generated: Generated::Nothing,
    experts: DOWN_GATE_UP_EXPERTS,
    splits: &[SplitRule {
        hf: "linear_attn.in_proj_qkvz",
        parts: &["attn_qkv", "attn_gate"],
        cut: Cut::Qkvz,
    }],
    skipped: &[],
    mxfp4: false,
    gated_query: true,
    renames: &[(".linear_attn.dt_bias", ".linear_attn.dt_proj.bias")],
    ignored_config: &[],
    vocab: Vocab::SentencePieceOrBpe,
    mtp: Mtp::Renamed {
        count: "mtp_num_hidden_layers",
    },
    hparam_overrides: &[],
};

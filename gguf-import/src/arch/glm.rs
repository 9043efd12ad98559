//! GLM 4 and GLM 4.5.

use crate::config::Default as D;

use super::table::*;

/// GLM's special tokens (the converter's `Glm4Model.set_vocab`).
pub(super) const GLM4_SPECIALS: &[(&str, &str)] = &[
    ("eos", "<|endoftext|>"),
    ("eot", "<|user|>"),
    ("unk", "<|endoftext|>"),
    ("bos", "<|endoftext|>"),
];

/// `Glm4ForCausalLM` (the converter's `Glm4Model`): fused gate-up
/// projection, norms after attention and after the feed-forward, half the
/// head rotated.
pub(crate) const GLM4: Architecture = Architecture {
    hf_names: &["Glm4ForCausalLM"],
    gguf: "glm4",
    defaults: &[
        ("vocab_size", D::Int(151552)),
        ("hidden_size", D::Int(4096)),
        ("intermediate_size", D::Int(13696)),
        ("num_hidden_layers", D::Int(40)),
        ("num_attention_heads", D::Int(32)),
        ("num_key_value_heads", D::Int(2)),
        ("head_dim", D::Int(128)),
        ("max_position_embeddings", D::Int(32768)),
        ("rms_norm_eps", D::Float(1.5625e-07)),
        ("rope_theta", D::Float(10000.0)),
        ("partial_rotary_factor", D::Float(0.5)),
    ],
    steps: &[
        Step::Common,
        Step::FileType,
        Step::RopeDimensionTimesFactor { default: 0.5 },
    ],
    globals: LLAMA_GLOBALS,
    blocks: &[
        rule("input_layernorm", "attn_norm", &[]),
        rule("post_attention_layernorm", "ffn_norm", &[]),
        rule("post_self_attn_layernorm", "post_attention_norm", &[]),
        rule("post_mlp_layernorm", "post_ffw_norm", &[]),
        rule("self_attn.q_proj", "attn_q", &[]),
        rule("self_attn.k_proj", "attn_k", &[]),
        rule("self_attn.v_proj", "attn_v", &[]),
        rule("self_attn.o_proj", "attn_output", &[]),
        rule("mlp.gate_up_proj", "ffn_up", &[]),
        rule("mlp.down_proj", "ffn_down", &[]),
    ],
    generated: Generated::Nothing,
    experts: &[],
    splits: &[],
    skipped: &[],
    mxfp4: false,
    gated_query: false,
    renames: &[],
    ignored_config: &[],
    vocab: Vocab::BpeWithSpecials(GLM4_SPECIALS),
    mtp: Mtp::Refused,
    hparam_overrides: &[],
};

/// `Glm4MoeForCausalLM` (the converter's `Glm4MoeModel`, GLM 4.5): Q/K
/// norms, shared and routed experts, sigmoid gating, and its
/// multi-token-prediction layers as blocks.
pub(crate) const GLM4MOE: Architecture = Architecture {
    hf_names: &["Glm4MoeForCausalLM"],
    gguf: "glm4moe",
    defaults: &[
        ("vocab_size", D::Int(151552)),
        ("hidden_size", D::Int(4096)),
        ("intermediate_size", D::Int(10944)),
        ("num_hidden_layers", D::Int(46)),
        ("num_attention_heads", D::Int(96)),
        ("num_key_value_heads", D::Int(8)),
        ("max_position_embeddings", D::Int(131072)),
        ("rms_norm_eps", D::Float(1e-5)),
        ("rope_theta", D::Float(10000.0)),
        ("partial_rotary_factor", D::Float(0.5)),
        ("moe_intermediate_size", D::Int(1408)),
        ("num_experts_per_tok", D::Int(8)),
        ("n_shared_experts", D::Int(1)),
        ("n_routed_experts", D::Int(128)),
        ("routed_scaling_factor", D::Float(1.0)),
        ("n_group", D::Int(1)),
        ("topk_group", D::Int(1)),
        ("first_k_dense_replace", D::Int(1)),
        ("norm_topk_prob", D::Bool(true)),
    ],
    steps: &[
        Step::Common,
        Step::FileType,
        Step::RopeDimensionTimesFactor { default: 0.5 },
        Step::U32IfPresent {
            key: "expert_count",
            config: "n_routed_experts",
        },
        Step::U32IfPresent {
            key: "expert_feed_forward_length",
            config: "moe_intermediate_size",
        },
        Step::U32IfPresent {
            key: "expert_shared_count",
            config: "n_shared_experts",
        },
        Step::U32IfPresent {
            key: "leading_dense_block_count",
            config: "first_k_dense_replace",
        },
        Step::ConstU32 {
            key: "expert_gating_func",
            value: 2,
        },
        Step::F32IfPresent {
            key: "expert_weights_scale",
            config: "routed_scaling_factor",
        },
        Step::BoolIfPresent {
            key: "expert_weights_norm",
            config: "norm_topk_prob",
        },
        Step::U32IfPresent {
            key: "nextn_predict_layers",
            config: "num_nextn_predict_layers",
        },
    ],
    globals: LLAMA_GLOBALS,
    blocks: &[
        rule("input_layernorm", "attn_norm", &[]),
        rule("post_attention_layernorm", "post_attention_norm", &[]),
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
        rule("mlp.gate.e_score_correction", "exp_probs_b", &[]),
        rule("mlp.shared_experts.gate_proj", "ffn_gate_shexp", &[]),
        rule("mlp.shared_experts.up_proj", "ffn_up_shexp", &[]),
        rule("mlp.shared_experts.down_proj", "ffn_down_shexp", &[]),
        rule("eh_proj", "nextn.eh_proj", &[]),
        rule("embed_tokens", "nextn.embed_tokens", &[]),
        rule("enorm", "nextn.enorm", &[]),
        rule("hnorm", "nextn.hnorm", &[]),
        rule("shared_head.head", "nextn.shared_head_head", &[]),
        rule("shared_head.norm", "nextn.shared_head_norm", &[]),
    ],
    generated: Generated::Nothing,
    experts: DOWN_GATE_UP_EXPERTS,
    splits: &[],
    skipped: &[],
    mxfp4: false,
    gated_query: false,
    renames: &[],
    ignored_config: &[],
    vocab: Vocab::BpeWithSpecials(&[
        ("bos", "[gMASK]"),
        ("eot", "<|user|>"),
        ("unk", "<|endoftext|>"),
        ("eom", "<|observation|>"),
    ]),
    mtp: Mtp::Blocks {
        count: "num_nextn_predict_layers",
    },
    hparam_overrides: &[],
};

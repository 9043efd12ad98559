//! gpt-oss.

use crate::config::Default as D;

use super::table::*;

/// `GptOssForCausalLM` (the converter's `GptOssModel`) with its experts
/// in 16 bits: attention sinks, biases everywhere, stacked experts stored
/// transposed with gate and up interleaved.
pub(crate) const GPT_OSS: Architecture = Architecture {
    hf_names: &["GptOssForCausalLM"],
    gguf: "gpt-oss",
    defaults: &[
        ("vocab_size", D::Int(201088)),
        ("hidden_size", D::Int(2880)),
        ("intermediate_size", D::Int(2880)),
        ("num_hidden_layers", D::Int(36)),
        ("num_attention_heads", D::Int(64)),
        ("num_key_value_heads", D::Int(8)),
        ("head_dim", D::Int(64)),
        ("num_local_experts", D::Int(128)),
        ("num_experts_per_tok", D::Int(4)),
        ("sliding_window", D::Int(128)),
        ("max_position_embeddings", D::Int(131072)),
        ("rms_norm_eps", D::Float(1e-5)),
        ("rope_theta", D::Float(150000.0)),
    ],
    steps: &[
        Step::Common,
        Step::FileType,
        u32_step("attention.sliding_window", &["sliding_window"]),
        u32_step("expert_feed_forward_length", &["intermediate_size"]),
    ],
    globals: LLAMA_GLOBALS,
    blocks: &[
        rule("input_layernorm", "attn_norm", &[]),
        rule("post_attention_layernorm", "post_attention_norm", &[]),
        rule("self_attn.q_proj", "attn_q", &[]),
        rule("self_attn.k_proj", "attn_k", &[]),
        rule("self_attn.v_proj", "attn_v", &[]),
        rule("self_attn.o_proj", "attn_output", &[]),
        rule("self_attn.sinks", "attn_sinks", &[]),
        rule("mlp.router", "ffn_gate_inp", &[]),
        rule(
            "mlp.experts.down_proj",
            "ffn_down_exps",
            &[Transform::Transpose3d],
        ),
    ],
    generated: Generated::Nothing,
    experts: &[],
    splits: &[SplitRule {
        hf: "mlp.experts.gate_up_proj",
        parts: &["ffn_gate_exps", "ffn_up_exps"],
        cut: Cut::Interleaved,
    }],
    skipped: &[],
    mxfp4: true,
    gated_query: false,
    renames: &[
        (".self_attn.sinks", ".self_attn.sinks.weight"),
        (".mlp.experts.down_proj_bias", ".mlp.experts.down_proj.bias"),
        (
            ".mlp.experts.gate_up_proj_bias",
            ".mlp.experts.gate_up_proj.bias",
        ),
        (".mlp.experts.down_proj", ".mlp.experts.down_proj.weight"),
        (
            ".mlp.experts.gate_up_proj",
            ".mlp.experts.gate_up_proj.weight",
        ),
    ],
    ignored_config: &[],
    vocab: Vocab::Bpe,
    mtp: Mtp::Refused,
    hparam_overrides: &[],
};

//! DeepSeek V2 and V3 (and the models built on them).

use crate::config::Default as D;

use super::table::*;

/// `DeepseekV3ForCausalLM` and `DeepseekV2ForCausalLM` (the converter's
/// `DeepseekV2Model`): multi-head latent attention written as one KV head
/// with `kv_b_proj` cut per head, shared and routed experts, dense blocks
/// first; its multi-token-prediction layers dropped.
pub(crate) const DEEPSEEK2: Architecture = Architecture {
    hf_names: &["DeepseekV3ForCausalLM", "DeepseekV2ForCausalLM"],
    gguf: "deepseek2",
    defaults: &[
        ("vocab_size", D::Int(129280)),
        ("hidden_size", D::Int(7168)),
        ("intermediate_size", D::Int(18432)),
        ("moe_intermediate_size", D::Int(2048)),
        ("num_hidden_layers", D::Int(61)),
        ("num_attention_heads", D::Int(128)),
        ("num_key_value_heads", D::Int(128)),
        ("n_shared_experts", D::Int(1)),
        ("n_routed_experts", D::Int(256)),
        ("routed_scaling_factor", D::Float(2.5)),
        ("kv_lora_rank", D::Int(512)),
        ("q_lora_rank", D::Int(1536)),
        ("qk_rope_head_dim", D::Int(64)),
        ("v_head_dim", D::Int(128)),
        ("qk_nope_head_dim", D::Int(128)),
        ("n_group", D::Int(8)),
        ("topk_group", D::Int(4)),
        ("num_experts_per_tok", D::Int(8)),
        ("first_k_dense_replace", D::Int(3)),
        ("norm_topk_prob", D::Bool(true)),
        ("max_position_embeddings", D::Int(4096)),
        ("rms_norm_eps", D::Float(1e-6)),
        ("rope_theta", D::Float(10000.0)),
        ("head_dim", D::Int(64)),
    ],
    steps: &[
        Step::Common,
        Step::FileType,
        Step::LeadingDenseBlocks,
        u32_step("vocab_size", &["vocab_size"]),
        Step::U32IfPresent {
            key: "attention.q_lora_rank",
            config: "q_lora_rank",
        },
        Step::Mla,
        u32_step(
            "expert_feed_forward_length",
            &["moe_intermediate_size", "intermediate_size"],
        ),
        Step::U32IfPresent {
            key: "expert_count",
            config: "n_routed_experts",
        },
        Step::U32 {
            key: "expert_shared_count",
            config: &["n_shared_experts"],
            default: Some(0),
        },
        Step::F32IfPresent {
            key: "expert_weights_scale",
            config: "routed_scaling_factor",
        },
        Step::BoolIfTrue {
            key: "expert_weights_norm",
            config: "norm_topk_prob",
        },
        u32_step("rope.dimension_count", &["qk_rope_head_dim"]),
        Step::YarnLogMultiplier,
    ],
    globals: LLAMA_GLOBALS,
    blocks: &[
        rule("input_layernorm", "attn_norm", &[]),
        rule("post_attention_layernorm", "ffn_norm", &[]),
        rule("self_attn.q_proj", "attn_q", &[]),
        rule("self_attn.q_a_proj", "attn_q_a", &[]),
        rule("self_attn.q_a_layernorm", "attn_q_a_norm", &[]),
        rule("self_attn.q_b_proj", "attn_q_b", &[]),
        rule("self_attn.kv_a_proj_with_mqa", "attn_kv_a_mqa", &[]),
        rule("self_attn.kv_a_layernorm", "attn_kv_a_norm", &[]),
        rule("self_attn.o_proj", "attn_output", &[]),
        rule("mlp.gate_proj", "ffn_gate", &[]),
        rule("mlp.up_proj", "ffn_up", &[]),
        rule("mlp.down_proj", "ffn_down", &[]),
        rule("mlp.gate", "ffn_gate_inp", &[]),
        rule("mlp.gate.e_score_correction", "exp_probs_b", &[]),
        rule("mlp.shared_experts.gate_proj", "ffn_gate_shexp", &[]),
        rule("mlp.shared_experts.up_proj", "ffn_up_shexp", &[]),
        rule("mlp.shared_experts.down_proj", "ffn_down_shexp", &[]),
    ],
    generated: Generated::Nothing,
    experts: DOWN_GATE_UP_EXPERTS,
    splits: &[SplitRule {
        hf: "self_attn.kv_b_proj",
        parts: &["attn_k_b", "attn_v_b"],
        cut: Cut::MlaKvB,
    }],
    skipped: &[],
    mxfp4: false,
    gated_query: false,
    renames: &[],
    ignored_config: &[],
    vocab: Vocab::Bpe,
    mtp: Mtp::Skipped,
    hparam_overrides: &[("num_key_value_heads", D::Int(1))],
};

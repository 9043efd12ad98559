//! OLMo 2.

use crate::config::Default as D;

use super::table::*;

/// `Olmo2ForCausalLM` (the converter's `Olmo2Model`): norms after
/// attention and feed-forward only, Q/K norms over all heads.
pub(crate) const OLMO2: Architecture = Architecture {
    hf_names: &["Olmo2ForCausalLM"],
    gguf: "olmo2",
    defaults: &[
        ("vocab_size", D::Int(50304)),
        ("hidden_size", D::Int(4096)),
        ("intermediate_size", D::Int(11008)),
        ("num_hidden_layers", D::Int(32)),
        ("num_attention_heads", D::Int(32)),
        ("num_key_value_heads", D::HeadCount),
        ("max_position_embeddings", D::Int(2048)),
        ("rms_norm_eps", D::Float(1e-5)),
        ("rope_theta", D::Float(10000.0)),
    ],
    steps: &[Step::Common, Step::FileType, Step::SlidingWindowPattern],
    globals: LLAMA_GLOBALS,
    blocks: &[
        rule("post_attention_layernorm", "post_attention_norm", &[]),
        rule("post_feedforward_layernorm", "post_ffw_norm", &[]),
        rule("self_attn.q_proj", "attn_q", &[]),
        rule("self_attn.k_proj", "attn_k", &[]),
        rule("self_attn.v_proj", "attn_v", &[]),
        rule("self_attn.o_proj", "attn_output", &[]),
        rule("self_attn.q_norm", "attn_q_norm", &[]),
        rule("self_attn.k_norm", "attn_k_norm", &[]),
        rule("mlp.gate_proj", "ffn_gate", &[]),
        rule("mlp.up_proj", "ffn_up", &[]),
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
    vocab: Vocab::Bpe,
    mtp: Mtp::Refused,
    hparam_overrides: &[],
};

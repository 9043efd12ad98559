//! Llama and the models the converter writes as it: Mistral, Mixtral,
//! SmolLM3, Granite and Granite-MoE.

use crate::config::Default as D;

use super::table::*;

pub(super) const LLAMA_STEPS: &[Step] = &[
    Step::Common,
    Step::FileType,
    u32_step("vocab_size", &["vocab_size"]),
    Step::RopeDimensionCount,
];

/// `LlamaForCausalLM` and the Mistral checkpoints that use it (the
/// converter's `LlamaModel`; Mistral's sliding window is not written).
pub(crate) const LLAMA: Architecture = Architecture {
    hf_names: &["LlamaForCausalLM", "LLaMAForCausalLM"],
    gguf: "llama",
    defaults: &[
        ("vocab_size", D::Int(32000)),
        ("hidden_size", D::Int(4096)),
        ("intermediate_size", D::Int(11008)),
        ("num_hidden_layers", D::Int(32)),
        ("num_attention_heads", D::Int(32)),
        ("num_key_value_heads", D::HeadCount),
        ("max_position_embeddings", D::Int(2048)),
        ("rms_norm_eps", D::Float(1e-6)),
        ("rope_theta", D::Float(10000.0)),
        ("head_dim", D::HeadDim),
    ],
    steps: LLAMA_STEPS,
    globals: LLAMA_GLOBALS,
    blocks: LLAMA_BLOCKS,
    generated: Generated::Llama3Rope,
    experts: &[],
    splits: &[],
    skipped: &[],
    mxfp4: false,
    gated_query: false,
    renames: &[],
    ignored_config: &[],
    vocab: Vocab::Llama,
    mtp: Mtp::Refused,
    hparam_overrides: &[],
};

/// `MistralForCausalLM`: llama's table with `MistralConfig`'s defaults
/// (which, unlike `LlamaConfig`'s, derive no `head_dim`).
pub(crate) const MISTRAL: Architecture = Architecture {
    hf_names: &["MistralForCausalLM"],
    defaults: &[
        ("vocab_size", D::Int(32000)),
        ("hidden_size", D::Int(4096)),
        ("intermediate_size", D::Int(14336)),
        ("num_hidden_layers", D::Int(32)),
        ("num_attention_heads", D::Int(32)),
        ("num_key_value_heads", D::Int(8)),
        ("max_position_embeddings", D::Int(4096 * 32)),
        ("rms_norm_eps", D::Float(1e-6)),
        ("rope_theta", D::Float(10000.0)),
    ],
    ..LLAMA
};

pub(super) const MIXTRAL_BLOCKS: &[TensorRule] = &[
    rule("input_layernorm", "attn_norm", &[]),
    rule("post_attention_layernorm", "ffn_norm", &[]),
    rule(
        "self_attn.q_proj",
        "attn_q",
        &[Transform::Permute { heads: Q_HEADS }],
    ),
    rule(
        "self_attn.k_proj",
        "attn_k",
        &[Transform::Permute { heads: K_HEADS }],
    ),
    rule("self_attn.v_proj", "attn_v", &[]),
    rule("self_attn.o_proj", "attn_output", &[]),
    rule("block_sparse_moe.gate", "ffn_gate_inp", &[]),
];

/// `MixtralForCausalLM` (the converter's `LlamaModel`): llama with its
/// experts stacked, `w1`, `w2`, `w3` in that order.
pub(crate) const MIXTRAL: Architecture = Architecture {
    hf_names: &["MixtralForCausalLM"],
    defaults: &[
        ("vocab_size", D::Int(32000)),
        ("hidden_size", D::Int(4096)),
        ("intermediate_size", D::Int(14336)),
        ("num_hidden_layers", D::Int(32)),
        ("num_attention_heads", D::Int(32)),
        ("num_key_value_heads", D::Int(8)),
        ("max_position_embeddings", D::Int(4096 * 32)),
        ("rms_norm_eps", D::Float(1e-5)),
        ("rope_theta", D::Float(1e6)),
        ("num_experts_per_tok", D::Int(2)),
        ("num_local_experts", D::Int(8)),
    ],
    blocks: MIXTRAL_BLOCKS,
    experts: &[
        expert("block_sparse_moe.experts.", ".w1", "ffn_gate_exps"),
        expert("block_sparse_moe.experts.", ".w2", "ffn_down_exps"),
        expert("block_sparse_moe.experts.", ".w3", "ffn_up_exps"),
    ],
    ..LLAMA
};

/// `SmolLM3ForCausalLM` (the converter's `SmolLM3Model`, a `LlamaModel`).
pub(crate) const SMOLLM3: Architecture = Architecture {
    hf_names: &["SmolLM3ForCausalLM"],
    gguf: "smollm3",
    defaults: &[
        ("vocab_size", D::Int(128256)),
        ("hidden_size", D::Int(2048)),
        ("intermediate_size", D::Int(11008)),
        ("num_hidden_layers", D::Int(36)),
        ("num_attention_heads", D::Int(16)),
        ("num_key_value_heads", D::Int(4)),
        ("max_position_embeddings", D::Int(32768)),
        ("rms_norm_eps", D::Float(1e-6)),
        ("rope_theta", D::Float(2_000_000.0)),
    ],
    ..LLAMA
};

pub(super) const GRANITE_STEPS: &[Step] = &[
    Step::Common,
    Step::FileType,
    u32_step("vocab_size", &["vocab_size"]),
    Step::RopeDimensionCount,
    Step::F32IfSet {
        key: "attention.scale",
        config: "attention_multiplier",
    },
    Step::F32IfSet {
        key: "embedding_scale",
        config: "embedding_multiplier",
    },
    Step::F32IfSet {
        key: "residual_scale",
        config: "residual_multiplier",
    },
    Step::F32IfSet {
        key: "logit_scale",
        config: "logits_scaling",
    },
    // GraniteMoeShared's; a Granite config has no such key.
    Step::U32IfSet {
        key: "expert_shared_feed_forward_length",
        config: "shared_intermediate_size",
    },
];

pub(super) const GRANITE_DEFAULTS: &[(&str, D)] = &[
    ("vocab_size", D::Int(32000)),
    ("hidden_size", D::Int(4096)),
    ("intermediate_size", D::Int(11008)),
    ("num_hidden_layers", D::Int(32)),
    ("num_attention_heads", D::Int(32)),
    ("num_key_value_heads", D::HeadCount),
    ("max_position_embeddings", D::Int(2048)),
    ("rms_norm_eps", D::Float(1e-6)),
    ("rope_theta", D::Float(10000.0)),
    ("embedding_multiplier", D::Float(1.0)),
    ("logits_scaling", D::Float(1.0)),
    ("residual_multiplier", D::Float(1.0)),
    ("attention_multiplier", D::Float(1.0)),
];

/// `GraniteForCausalLM` (the converter's `GraniteModel`): llama without
/// `head_dim`, with its four multipliers.
pub(crate) const GRANITE: Architecture = Architecture {
    hf_names: &["GraniteForCausalLM"],
    gguf: "granite",
    defaults: GRANITE_DEFAULTS,
    steps: GRANITE_STEPS,
    ignored_config: &["head_dim"],
    ..LLAMA
};

pub(super) const GRANITEMOE_BLOCKS: &[TensorRule] = &[
    rule("input_layernorm", "attn_norm", &[]),
    rule("post_attention_layernorm", "ffn_norm", &[]),
    rule(
        "self_attn.q_proj",
        "attn_q",
        &[Transform::Permute { heads: Q_HEADS }],
    ),
    rule(
        "self_attn.k_proj",
        "attn_k",
        &[Transform::Permute { heads: K_HEADS }],
    ),
    rule("self_attn.v_proj", "attn_v", &[]),
    rule("self_attn.o_proj", "attn_output", &[]),
    rule("block_sparse_moe.router.layer", "ffn_gate_inp", &[]),
    rule("block_sparse_moe.output_linear", "ffn_down_exps", &[]),
    rule("shared_mlp.output_linear", "ffn_down_shexp", &[]),
];

/// `GraniteMoeForCausalLM` (the converter's `GraniteMoeModel`): Granite
/// with stacked experts whose gate and up projections are one tensor,
/// cut in two.
pub(crate) const GRANITEMOE: Architecture = Architecture {
    hf_names: &["GraniteMoeForCausalLM", "GraniteMoeSharedForCausalLM"],
    gguf: "granitemoe",
    defaults: GRANITE_DEFAULTS,
    steps: GRANITE_STEPS,
    blocks: GRANITEMOE_BLOCKS,
    splits: &[
        SplitRule {
            hf: "block_sparse_moe.input_linear",
            parts: &["ffn_gate_exps", "ffn_up_exps"],
            cut: Cut::Rows,
        },
        SplitRule {
            hf: "shared_mlp.input_linear",
            parts: &["ffn_gate_shexp", "ffn_up_shexp"],
            cut: Cut::Rows,
        },
    ],
    ignored_config: &["head_dim"],
    ..LLAMA
};

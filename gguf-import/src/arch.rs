//! The architectures, as data: one table each, with what llama.cpp's
//! converter does for it (its model class in `conversion/`): the
//! `transformers` defaults of its config, its hyper-parameter steps, its
//! tensor names and the transforms applied to its tensors.
//!
//! Adding an architecture is adding a table here (and, when its tokenizer
//! differs, a case in the tokenizer part).

use super::config::Default;

/// One hyper-parameter step of the converter's `set_gguf_parameters`, in
/// order; keys are `{arch}.` + the suffix.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Step {
    /// `TextModel.set_gguf_parameters`: block count, context, embedding and
    /// feed-forward lengths, head counts, RoPE, norm epsilons, experts,
    /// key/value lengths from `head_dim`, then `general.file_type`.
    Common,
    /// A `u32` from the first present config key; `default` when none is.
    U32 {
        key: &'static str,
        config: &'static [&'static str],
        default: Option<u32>,
    },
    /// An `f32` from the first present config key; `default` when none is.
    F32 {
        key: &'static str,
        config: &'static [&'static str],
        default: Option<f32>,
    },
    /// An `f32` written only when the config key is set and not zero.
    F32IfSet {
        key: &'static str,
        config: &'static str,
    },
    /// `rope.dimension_count`: `head_dim`, else `hidden_size /
    /// num_attention_heads` (llama).
    RopeDimensionCount,
    /// `rope.freq_base` from the full-attention RoPE parameters, with a
    /// default (gemma3's global layers).
    RopeFreqBase { default: f32 },
    /// `attention.sliding_window` unless `sliding_window_pattern` is 1
    /// (gemma3).
    SlidingWindow,
    /// The converter's `_try_set_pooling_type`: an embedding model's
    /// pooling (refused here: only causal language models are imported).
    Pooling,
}

/// A tensor transform, applied while the tensor is converted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Transform {
    /// llama's Q/K row permutation (undoing Hugging Face's RoPE layout),
    /// with the head count given by the config key.
    Permute { heads: &'static [&'static str] },
    /// Adds 1 to every value (Gemma's RMS norm stores `weight - 1`).
    AddOne,
    /// Keeps the first rows, as many as the tokenizer has tokens
    /// (gemma3's embedding rows past the vocabulary).
    TrimToVocab,
}

/// How a checkpoint tensor name (after the `model.layers.{N}.` or
/// `model.` prefix) maps to a GGUF name, and its transforms.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TensorRule {
    /// The Hugging Face name without the block prefix and the
    /// `.weight`/`.bias` suffix, e.g. `self_attn.q_proj`.
    pub hf: &'static str,
    /// The GGUF name without `blk.{N}.` and the suffix, e.g. `attn_q`.
    pub gguf: &'static str,
    /// Applied to `.weight` (and `.bias`) tensors of this name.
    pub transforms: &'static [Transform],
}

/// An architecture the importer knows.
#[derive(Debug)]
pub(crate) struct Architecture {
    /// The `architectures[0]` values of `config.json` that select it.
    pub hf_names: &'static [&'static str],
    /// The GGUF architecture (`general.architecture`).
    pub gguf: &'static str,
    /// What `transformers` (4.57.6, the version the converter pins) fills
    /// in for a key the config leaves out.
    pub defaults: &'static [(&'static str, Default)],
    /// The hyper-parameter steps, in order.
    pub steps: &'static [Step],
    /// Tensors outside the blocks (full names without the suffix).
    pub globals: &'static [TensorRule],
    /// Tensors of block N, named `model.layers.{N}.` + `hf`.
    pub blocks: &'static [TensorRule],
    /// Whether a `llama3` RoPE scaling generates `rope_freqs.weight`
    /// (the converter's `LlamaModel.generate_extra_tensors`).
    pub llama3_rope: bool,
}

const Q_HEADS: &[&str] = &["n_heads", "num_attention_heads"];
const K_HEADS: &[&str] = &["n_kv_heads", "num_key_value_heads"];

const LLAMA_GLOBALS: &[TensorRule] = &[
    rule("model.embed_tokens", "token_embd", &[]),
    rule("model.norm", "output_norm", &[]),
    rule("lm_head", "output", &[]),
];

const LLAMA_BLOCKS: &[TensorRule] = &[
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
    rule("mlp.gate_proj", "ffn_gate", &[]),
    rule("mlp.up_proj", "ffn_up", &[]),
    rule("mlp.down_proj", "ffn_down", &[]),
];

const QWEN2_BLOCKS: &[TensorRule] = &[
    rule("input_layernorm", "attn_norm", &[]),
    rule("post_attention_layernorm", "ffn_norm", &[]),
    rule("self_attn.q_proj", "attn_q", &[]),
    rule("self_attn.k_proj", "attn_k", &[]),
    rule("self_attn.v_proj", "attn_v", &[]),
    rule("self_attn.o_proj", "attn_output", &[]),
    rule("mlp.gate_proj", "ffn_gate", &[]),
    rule("mlp.up_proj", "ffn_up", &[]),
    rule("mlp.down_proj", "ffn_down", &[]),
];

const PLUS_ONE: &[Transform] = &[Transform::AddOne];

const GEMMA3_GLOBALS: &[TensorRule] = &[
    rule(
        "model.embed_tokens",
        "token_embd",
        &[Transform::TrimToVocab],
    ),
    rule("model.norm", "output_norm", PLUS_ONE),
    rule("lm_head", "output", &[]),
];

const GEMMA3_BLOCKS: &[TensorRule] = &[
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

const fn rule(
    hf: &'static str,
    gguf: &'static str,
    transforms: &'static [Transform],
) -> TensorRule {
    TensorRule {
        hf,
        gguf,
        transforms,
    }
}

use Default as D;

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
    steps: &[
        Step::Common,
        Step::U32 {
            key: "vocab_size",
            config: &["vocab_size"],
            default: None,
        },
        Step::RopeDimensionCount,
    ],
    globals: LLAMA_GLOBALS,
    blocks: LLAMA_BLOCKS,
    llama3_rope: true,
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
    steps: &[Step::Common, Step::Pooling],
    globals: LLAMA_GLOBALS,
    blocks: QWEN2_BLOCKS,
    llama3_rope: false,
};

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
    llama3_rope: false,
};

/// Every architecture the importer knows.
pub(crate) const ARCHITECTURES: &[&Architecture] = &[&LLAMA, &MISTRAL, &QWEN2, &GEMMA3];

/// The table for a `config.json` architecture name.
pub(crate) fn find(hf_name: &str) -> Option<&'static Architecture> {
    ARCHITECTURES
        .iter()
        .copied()
        .find(|a| a.hf_names.contains(&hf_name))
}

/// The supported `config.json` architecture names, for errors.
pub(crate) fn supported() -> String {
    ARCHITECTURES
        .iter()
        .flat_map(|a| a.hf_names.iter().copied())
        .collect::<Vec<_>>()
        .join(", ")
}

impl Architecture {
    /// The GGUF name (without `.weight`/`.bias`) and transforms of a
    /// checkpoint tensor name (without its suffix), or `None` when the
    /// converter could not map it either.
    pub fn map(&self, stem: &str, block_count: u32) -> Option<(String, &'static [Transform])> {
        if let Some(r) = self.globals.iter().find(|r| r.hf == stem) {
            return Some((r.gguf.to_owned(), r.transforms));
        }
        let rest = stem.strip_prefix("model.layers.")?;
        let (n, name) = rest.split_once('.')?;
        let bid: u32 = n.parse().ok()?;
        if bid >= block_count || n != bid.to_string() {
            return None;
        }
        let r = self.blocks.iter().find(|r| r.hf == name)?;
        Some((format!("blk.{bid}.{}", r.gguf), r.transforms))
    }
}

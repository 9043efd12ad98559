//! The architectures, as data: one table each, with what llama.cpp's
//! converter does for it (its model class in `conversion/`): the
//! `transformers` defaults of its config, its hyper-parameter steps, its
//! tensor names and the transforms applied to its tensors.
//!
//! Adding an architecture is adding a table here (and, when its tokenizer
//! differs, a case in the tokenizer part).

use crate::error::Result;

use super::config::{config_error, Config, Default};

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
    /// `general.file_type` (where the architecture's converter writes it).
    FileType,
    /// A `u32` written when the config key is set (not null), 0 included
    /// (Python's `if (x := hparams.get(...)) is not None`).
    U32IfPresent {
        key: &'static str,
        config: &'static str,
    },
    /// An `f32` written when the config key is set (not null).
    F32IfPresent {
        key: &'static str,
        config: &'static str,
    },
    /// A `bool` written when the config key is set and true.
    BoolIfTrue {
        key: &'static str,
        config: &'static str,
    },
    /// A `bool` written when the config key is set (not null).
    BoolIfPresent {
        key: &'static str,
        config: &'static str,
    },
    /// A fixed `u32` (GLM 4.5's sigmoid gating, written whatever the
    /// config says).
    ConstU32 { key: &'static str, value: u32 },
    /// `rope.dimension_count` as `head_dim * partial_rotary_factor`, the
    /// factor `default` when the config has none (GLM 4: 0.5, Qwen3-Next:
    /// 0.25).
    RopeDimensionTimesFactor { default: f64 },
    /// `nextn_predict_layers`: the blocks past `num_hidden_layers`, when
    /// there are any.
    NextnLayers,
    /// Qwen3-Next's `ssm.inner_size`: `linear_value_head_dim x
    /// linear_num_value_heads`.
    SsmInnerSize,
    /// Qwen3-Next's `attention.recurrent_layers`: per block, whether
    /// `layer_types` says `linear_attention` (false for the MTP blocks).
    RecurrentLayers,
    /// DeepSeek's `leading_dense_block_count`: `first_k_dense_replace`,
    /// else every block without routed experts, none with them.
    LeadingDenseBlocks,
    /// DeepSeek's multi-head latent attention keys: the KV LoRA rank (512
    /// when unset) and the key and value lengths it implies, compressed and
    /// not (`key_length`, `value_length`, `key_length_mla`,
    /// `value_length_mla`).
    Mla,
    /// DeepSeek's `rope.scaling.yarn_log_multiplier`: 0.1 times the RoPE
    /// parameters' `mscale_all_dim`, when set.
    YarnLogMultiplier,
    /// A `u32` written only when the config key is set and not zero
    /// (Python's `if x := hparams.get(...)`).
    U32IfSet {
        key: &'static str,
        config: &'static str,
    },
    /// `rope.dimension_count` as `int(partial_rotary_factor * n_embd) //
    /// n_head` (phi3).
    RopeDimensionPartial,
    /// `rope.scaling.original_context_length` from the RoPE parameters'
    /// `original_max_position_embeddings`, which must be set (phi3).
    RopeOriginalContext,
    /// `attention.sliding_window`, 0 when the config has none (phi3).
    SlidingWindowOrZero,
    /// olmo2: `attention.sliding_window` and the per-layer
    /// `attention.sliding_window_pattern`, only when the config has a
    /// `sliding_window` key.
    SlidingWindowPattern,
    /// A `u32`: the length of the list `vision_config.{list}`, `default`
    /// when the config has none (Qwen3-VL's `n_deepstack_layers`).
    VisionListLength {
        key: &'static str,
        list: &'static str,
        default: u32,
    },
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
    /// Swaps the last two dimensions of a 3-D tensor (gpt-oss's stacked
    /// `down_proj`, stored `[experts, in, out]`); 1-D and 2-D tensors of the
    /// name (its bias) are left as they are.
    Transpose3d,
    /// `-exp(x)` (Qwen3-Next's `A_log`, written as `ssm_a`).
    NegExp,
    /// Drops the dimensions of size 1 (numpy's `squeeze`: Qwen3-Next's
    /// `conv1d`, stored `[channels, 1, kernel]`).
    Squeeze,
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
    /// The tensors the converter generates (its
    /// `generate_extra_tensors`).
    pub generated: Generated,
    /// Per-expert tensors of block N that the converter stacks into one
    /// tensor per rule, written in the rules' order once every expert of
    /// the block has been read.
    pub experts: &'static [ExpertRule],
    /// Tensors of block N the converter cuts into equal parts along their
    /// rows (a fused gate and up projection).
    pub splits: &'static [SplitRule],
    /// Tensor names (full, without the suffix) the converter drops.
    pub skipped: &'static [&'static str],
    /// Whether a checkpoint with `quant_method` `mxfp4` has its stacked
    /// experts as MXFP4 blocks and scales that the converter repacks
    /// (gpt-oss).
    pub mxfp4: bool,
    /// Whether the query projection holds a gate per head, twice the rows
    /// of `heads x head_dim` (Qwen3-Next).
    pub gated_query: bool,
    /// Checkpoint name endings the converter renames before mapping:
    /// `(ending, replacement)`, the first that matches.
    pub renames: &'static [(&'static str, &'static str)],
    /// The config keys removed before the hyper-parameters are read
    /// (Granite ignores `head_dim`).
    pub ignored_config: &'static [&'static str],
    /// How the tokenizer is read (the converter's `set_vocab`).
    pub vocab: Vocab,
    /// What the converter does with layers past `num_hidden_layers`
    /// (multi-token prediction layers).
    pub mtp: Mtp,
    /// Config values the converter sets before it writes the
    /// hyper-parameters (after the tensors were converted with the
    /// checkpoint's own).
    pub hparam_overrides: &'static [(&'static str, Default)],
}

/// Layers past `num_hidden_layers`: the multi-token prediction (MTP)
/// layers some checkpoints ship.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mtp {
    /// None expected: a tensor of such a layer has no name.
    Refused,
    /// Dropped (DeepSeek).
    Skipped,
    /// Blocks like the others: the block count adds the config's `count`
    /// (GLM 4.5's `num_nextn_predict_layers`).
    Blocks { count: &'static str },
    /// Stored apart as `mtp.layers.{i}.*` and `mtp.{fc, norm,
    /// pre_fc_norm_embedding, pre_fc_norm_hidden}` (Qwen3-Next): renamed to
    /// the blocks after the last, their number the config's `count` (when
    /// it has none, the layers found; see `tensors::rename_mtp`).
    Renamed { count: &'static str },
}

/// Tensors an architecture's converter computes rather than reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Generated {
    /// None.
    Nothing,
    /// `rope_freqs.weight` for a `llama3` RoPE scaling
    /// (`LlamaModel.generate_extra_tensors`).
    Llama3Rope,
    /// `rope_factors_long.weight` and `rope_factors_short.weight`, and
    /// the `rope.scaling.attn_factor` key, for a long-context RoPE (phi3).
    Phi3LongRope,
}

/// Which of the converter's `set_vocab` paths an architecture takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Vocab {
    /// `LlamaModel.set_vocab`: SentencePiece, else a Llama 2 style
    /// `tokenizer.json`, else a byte-level BPE.
    Llama,
    /// SentencePiece when there is a `tokenizer.model`, else a byte-level
    /// BPE (Qwen2, Qwen3).
    SentencePieceOrBpe,
    /// Gemma's: SentencePiece plus `add_space_prefix = false`, else BPE.
    Gemma,
    /// `TextModel.set_vocab`: a byte-level BPE.
    Bpe,
    /// phi3's own SentencePiece reading (padding to `vocab_size`, added
    /// tokens typed user-defined or control).
    Phi3,
    /// A byte-level BPE whose special token ids are then set, where not
    /// set already, to the ids of the named added tokens (GLM):
    /// `(type, token)`.
    BpeWithSpecials(&'static [(&'static str, &'static str)]),
}

/// A tensor of block N stored once per expert, `model.layers.{N}.` +
/// `prefix` + `{expert}` + `suffix`, stacked into `blk.{N}.` + `gguf`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ExpertRule {
    /// The name before the expert number, e.g. `mlp.experts.`.
    pub prefix: &'static str,
    /// The name after it, without `.weight`, e.g. `.down_proj`.
    pub suffix: &'static str,
    /// The stacked tensor's GGUF name without `blk.{N}.` and the suffix.
    pub gguf: &'static str,
}

/// A tensor of block N cut into parts, in order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SplitRule {
    /// The Hugging Face name without the block prefix and `.weight`.
    pub hf: &'static str,
    /// The GGUF names of the parts, without `blk.{N}.` and the suffix.
    pub parts: &'static [&'static str],
    /// How it is cut.
    pub cut: Cut,
}

/// How a [`SplitRule`] cuts a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cut {
    /// Equal parts along the second-to-last dimension (for a stacked
    /// `[experts, rows, columns]` tensor, each expert's rows).
    Rows,
    /// DeepSeek's `kv_b_proj` (`[heads * (nope + v), kv_lora_rank]`): per
    /// head, the first `qk_nope_head_dim` rows transposed (`attn_k_b`, of
    /// shape `[heads, kv_lora_rank, nope]`) and the `v_head_dim` rows after
    /// them (`attn_v_b`).
    MlaKvB,
    /// gpt-oss's `gate_up_proj`: the even and the odd rows of the stacked
    /// `[experts, in, 2 * out]` weight transposed (gate, then up), and of its
    /// `[experts, 2 * out]` bias the even and the odd values.
    Interleaved,
    /// Qwen3-Next's `in_proj_qkvz`, rows grouped per key head as `[q, k,
    /// v, z]`: regrouped as every head's q, then k, then v (`attn_qkv`),
    /// and every head's z (`attn_gate`).
    Qkvz,
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

/// The config keys of the block count, in the converter's order.
const BLOCKS_KEYS: &[&str] = &["n_layers", "num_hidden_layers", "n_layer", "num_layers"];

const fn u32_step(key: &'static str, config: &'static [&'static str]) -> Step {
    Step::U32 {
        key,
        config,
        default: None,
    }
}

const fn f32_step(key: &'static str, config: &'static [&'static str]) -> Step {
    Step::F32 {
        key,
        config,
        default: None,
    }
}

const fn expert(prefix: &'static str, suffix: &'static str, gguf: &'static str) -> ExpertRule {
    ExpertRule {
        prefix,
        suffix,
        gguf,
    }
}

const LLAMA_STEPS: &[Step] = &[
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

const MIXTRAL_BLOCKS: &[TensorRule] = &[
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

const GRANITE_STEPS: &[Step] = &[
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

const GRANITE_DEFAULTS: &[(&str, Default)] = &[
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

const GRANITEMOE_BLOCKS: &[TensorRule] = &[
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

const QWEN3_BLOCKS: &[TensorRule] = &[
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

const QWEN3_DEFAULTS: &[(&str, Default)] = &[
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

/// GLM's special tokens (the converter's `Glm4Model.set_vocab`).
const GLM4_SPECIALS: &[(&str, &str)] = &[
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

const DOWN_GATE_UP_EXPERTS: &[ExpertRule] = &[
    expert("mlp.experts.", ".down_proj", "ffn_down_exps"),
    expert("mlp.experts.", ".gate_proj", "ffn_gate_exps"),
    expert("mlp.experts.", ".up_proj", "ffn_up_exps"),
];

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

const QWEN3NEXT_NORM: &[Transform] = &[Transform::AddOne];

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

/// Every architecture the importer knows.
pub(crate) const ARCHITECTURES: &[&Architecture] = &[
    &LLAMA,
    &MISTRAL,
    &MIXTRAL,
    &SMOLLM3,
    &GRANITE,
    &GRANITEMOE,
    &QWEN2,
    &QWEN3,
    &QWEN3MOE,
    &GEMMA2,
    &GEMMA3,
    &PHI3,
    &OLMO2,
    &GLM4,
    &GLM4MOE,
    &DEEPSEEK2,
    &GPT_OSS,
    &QWEN3NEXT,
    &super::arch_vl::QWEN2VL,
    &super::arch_vl::QWEN3VL,
];

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

/// What a checkpoint tensor (its name without `.weight`/`.bias`) is to
/// the converter.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Mapped {
    /// One GGUF tensor (name without the suffix), with its transforms.
    Plain(&'static str, Option<u32>, &'static [Transform]),
    /// Expert `expert` of block `block` of the stacked tensor of `rule`.
    Expert {
        block: u32,
        expert: u64,
        rule: usize,
    },
    /// A tensor of block `block` cut into parts.
    Split {
        block: u32,
        rule: &'static SplitRule,
    },
    /// A tensor the converter drops.
    Skipped,
}

impl Mapped {
    /// The GGUF name of a plain tensor (without `.weight`/`.bias`).
    pub fn plain_name(gguf: &str, block: Option<u32>) -> String {
        match block {
            Some(b) => format!("blk.{b}.{gguf}"),
            None => gguf.to_owned(),
        }
    }
}

impl Architecture {
    /// The block count the converter writes: `num_hidden_layers` (or its
    /// other names), plus the multi-token-prediction layers it keeps.
    pub fn block_count(&self, config: &Config) -> Result<u32> {
        let blocks = config.require_u32(BLOCKS_KEYS)?;
        let (Mtp::Blocks { count } | Mtp::Renamed { count }) = self.mtp else {
            return Ok(blocks);
        };
        let extra = config.find_u32(&[count])?.unwrap_or(0);
        blocks
            .checked_add(extra)
            .ok_or_else(|| config_error(&config.file, format!("{count} is too large")))
    }

    /// What the converter makes of a checkpoint tensor name (without its
    /// suffix), or `None` when it could not map it either. `block_count`
    /// is [`block_count`](Self::block_count).
    pub fn map(&self, stem: &str, block_count: u32) -> Option<Mapped> {
        if self.skipped.contains(&stem) {
            return Some(Mapped::Skipped);
        }
        if let Some(r) = self.globals.iter().find(|r| r.hf == stem) {
            return Some(Mapped::Plain(r.gguf, None, r.transforms));
        }
        let rest = stem.strip_prefix("model.layers.")?;
        let (n, name) = rest.split_once('.')?;
        let block: u32 = n.parse().ok()?;
        if n != block.to_string() {
            return None;
        }
        if block >= block_count {
            return (self.mtp == Mtp::Skipped).then_some(Mapped::Skipped);
        }
        if let Some(r) = self.blocks.iter().find(|r| r.hf == name) {
            return Some(Mapped::Plain(r.gguf, Some(block), r.transforms));
        }
        if let Some(rule) = self.splits.iter().find(|r| r.hf == name) {
            return Some(Mapped::Split { block, rule });
        }
        self.experts.iter().enumerate().find_map(|(i, r)| {
            let x = name.strip_prefix(r.prefix)?.strip_suffix(r.suffix)?;
            let expert: u64 = x.parse().ok()?;
            (x == expert.to_string()).then_some(Mapped::Expert {
                block,
                expert,
                rule: i,
            })
        })
    }
}

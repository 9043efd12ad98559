//! The vocabulary of the architecture tables: what one says (the
//! converter's steps, tensor rules, transforms, experts, cuts, tokenizer
//! path, multi-token-prediction layers), how a checkpoint name is looked up
//! in one, and the rules several tables share.

use crate::error::Result;

use crate::config::{config_error, Config, Default};

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

pub(super) const Q_HEADS: &[&str] = &["n_heads", "num_attention_heads"];

pub(super) const K_HEADS: &[&str] = &["n_kv_heads", "num_key_value_heads"];

pub(super) const LLAMA_GLOBALS: &[TensorRule] = &[
    rule("model.embed_tokens", "token_embd", &[]),
    rule("model.norm", "output_norm", &[]),
    rule("lm_head", "output", &[]),
];

pub(super) const LLAMA_BLOCKS: &[TensorRule] = &[
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

pub(super) const QWEN2_BLOCKS: &[TensorRule] = &[
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

pub(super) const fn rule(
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

/// The config keys of the block count, in the converter's order.
pub(super) const BLOCKS_KEYS: &[&str] = &["n_layers", "num_hidden_layers", "n_layer", "num_layers"];

pub(super) const fn u32_step(key: &'static str, config: &'static [&'static str]) -> Step {
    Step::U32 {
        key,
        config,
        default: None,
    }
}

pub(super) const fn f32_step(key: &'static str, config: &'static [&'static str]) -> Step {
    Step::F32 {
        key,
        config,
        default: None,
    }
}

pub(super) const fn expert(
    prefix: &'static str,
    suffix: &'static str,
    gguf: &'static str,
) -> ExpertRule {
    ExpertRule {
        prefix,
        suffix,
        gguf,
    }
}

pub(super) const DOWN_GATE_UP_EXPERTS: &[ExpertRule] = &[
    expert("mlp.experts.", ".down_proj", "ffn_down_exps"),
    expert("mlp.experts.", ".gate_proj", "ffn_gate_exps"),
    expert("mlp.experts.", ".up_proj", "ffn_up_exps"),
];

pub(super) const PLUS_ONE: &[Transform] = &[Transform::AddOne];

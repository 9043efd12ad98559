//! Metadata keys llama.cpp reads, with the types its loader accepts.
//!
//! llama.cpp's typed getter (`GGUFMeta::GKV<T>::get_kv`) compares the
//! stored type with the one it reads and throws on any difference: a key
//! read as `uint32_t` must be a GGUF `u32`, not a `u64`, an `i32` nor a
//! string. The per-layer getter (`get_key_or_arr`) takes that scalar or an
//! array of `u32`, `i32` or `bool` with exactly one entry per layer; the
//! array getter (`get_arr`) ignores a key that is not an array and throws
//! on an array of another element type.

use gguf_core::Gguf;
use gguf_core::{Value, ValueType};

use super::LoadProblem;
use crate::summary::{arch_key, key, loader_key};

/// `LLAMA_MAX_LAYERS`: the longest per-layer array llama.cpp holds.
pub(super) const MAX_LAYERS: u64 = 512;

/// What llama.cpp reads a key as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Expect {
    /// `uint16_t`: a GGUF `u16`.
    U16,
    /// `uint32_t` (and the enums read through it): a GGUF `u32`.
    U32,
    /// `float`: a GGUF `f32`.
    F32,
    /// `bool`: a GGUF `bool`.
    Bool,
    /// `std::string`: a GGUF string.
    Str,
    /// `get_key_or_arr` into a per-layer `uint32_t` array: a `u32`, or an
    /// array of `u32`, `i32` or `bool` with one entry per layer.
    U32PerLayer,
    /// `get_arr` into per-layer flags, then `get_key` as a `u32`: a `u32`,
    /// or an array of `u32`, `i32` or `bool` of at most 512 entries.
    U32OrLayerFlags,
    /// `get_arr` into strings: ignored unless an array, whose elements
    /// must then be strings.
    StrArray,
}

impl Expect {
    /// How llama.cpp's expectation reads in a message.
    pub(super) fn describe(self) -> &'static str {
        match self {
            Expect::U16 => "u16",
            Expect::U32 => "u32",
            Expect::F32 => "f32",
            Expect::Bool => "bool",
            Expect::Str => "string",
            Expect::U32PerLayer => "u32, or an array of u32/i32/bool with one entry per layer",
            Expect::U32OrLayerFlags => "u32, or an array of u32/i32/bool",
            Expect::StrArray => "an array of strings",
        }
    }
}

/// One key llama.cpp reads: its name (`{arch}` stands for the
/// architecture), its type, and whether loading fails without it.
#[derive(Debug, Clone, Copy)]
pub(super) struct KeyRule {
    pub key: &'static str,
    pub expect: Expect,
    pub required: bool,
}

/// A key llama.cpp requires.
pub(super) const fn req(key: &'static str, expect: Expect) -> KeyRule {
    KeyRule {
        key,
        expect,
        required: true,
    }
}

/// A key llama.cpp reads when present.
pub(super) const fn opt(key: &'static str, expect: Expect) -> KeyRule {
    KeyRule {
        key,
        expect,
        required: false,
    }
}

use Expect::*;

/// Keys every model's loading reads, whatever its architecture: the
/// loader's own (file type, split count) and `load_hparams` before the
/// architecture's part.
pub(super) const BASE_KEYS: &[KeyRule] = &[
    opt("general.name", Str),
    opt("general.file_type", U32),
    opt("split.count", U16),
    opt("general.tensor_extra.name", StrArray),
    req(key::context_length, U32),
    req(key::embedding_length, U32),
    opt(key::embedding_length_out, U32),
    opt("{arch}.attention.causal", Bool),
    opt("{arch}.pooling_type", U32),
    opt("{arch}.classifier.pooling_type", U32),
    req(key::block_count, U32),
    opt(key::nextn_predict_layers, U32),
    opt(key::expert_count, U32),
    opt(key::expert_used_count, U32PerLayer),
    opt(loader_key::expert_group_count, U32),
    opt(loader_key::expert_group_used_count, U32),
    opt(key::feed_forward_length, U32PerLayer),
    opt(key::head_count, U32PerLayer),
    opt(key::head_count_kv, U32PerLayer),
    opt("{arch}.rope.scaling.finetuned", Bool),
    opt(loader_key::rope_scaling_original_context_length, U32),
    opt("{arch}.rope.freq_base", F32),
    opt(loader_key::rope_scaling_type, Str),
    opt("{arch}.rope.scaling.factor", F32),
    opt("{arch}.rope.scale_linear", F32),
    opt("{arch}.rope.scaling.attn_factor", F32),
    opt("{arch}.rope.scaling.alpha", F32),
    opt(key::key_length, U32),
    opt(key::value_length, U32),
    opt(loader_key::rope_dimension_count, U32),
    opt(key::key_length_swa, U32),
    opt(key::value_length_swa, U32),
    opt(loader_key::rope_dimension_count_swa, U32),
    opt(loader_key::classifier_output_labels, StrArray),
];

/// The tokenizer's kind (`llama_vocab::load`), read for every model.
pub(super) const VOCAB_TYPE_KEYS: &[KeyRule] = &[
    req("tokenizer.ggml.model", Str),
    opt("tokenizer.ggml.pre", Str),
    opt("tokenizer.ggml.token_type_count", U32),
];

/// A model without a vocabulary (`no_vocab`, `none`) reads its size only.
pub(super) const VOCABLESS_KEYS: &[KeyRule] = &[opt(key::vocab_size, U32)];

/// The tokenizer's other scalar keys; its arrays are checked in `vocab`.
pub(super) const VOCAB_KEYS: &[KeyRule] = &[
    opt("tokenizer.ggml.add_space_prefix", Bool),
    opt("tokenizer.ggml.remove_extra_whitespaces", Bool),
    opt("tokenizer.ggml.bos_token_id", U32),
    opt("tokenizer.ggml.eos_token_id", U32),
    opt("tokenizer.ggml.eot_token_id", U32),
    opt("tokenizer.ggml.eom_token_id", U32),
    opt("tokenizer.ggml.unknown_token_id", U32),
    opt("tokenizer.ggml.seperator_token_id", U32),
    opt("tokenizer.ggml.padding_token_id", U32),
    opt("tokenizer.ggml.mask_token_id", U32),
    opt("tokenizer.ggml.fim_pre_token_id", U32),
    opt("tokenizer.ggml.fim_suf_token_id", U32),
    opt("tokenizer.ggml.fim_mid_token_id", U32),
    opt("tokenizer.ggml.fim_pad_token_id", U32),
    opt("tokenizer.ggml.fim_rep_token_id", U32),
    opt("tokenizer.ggml.fim_sep_token_id", U32),
    opt("tokenizer.ggml.prefix_token_id", U32),
    opt("tokenizer.ggml.suffix_token_id", U32),
    opt("tokenizer.ggml.middle_token_id", U32),
    opt("tokenizer.ggml.add_bos_token", Bool),
    opt("tokenizer.ggml.add_eos_token", Bool),
    opt("tokenizer.ggml.add_sep_token", Bool),
    opt("tokenizer.ggml.normalizer.lowercase", Bool),
    opt("tokenizer.ggml.normalizer.strip_accents", Bool),
];

/// The key's name for architecture `arch`.
pub(super) fn key_name(rule: &KeyRule, arch: &str) -> String {
    arch_key(rule.key, arch)
}

/// Checks one key against its rule; `n_layer` is `{arch}.block_count`,
/// the length a per-layer array must have.
pub(super) fn check(
    meta: &(impl Gguf + ?Sized),
    rule: &KeyRule,
    arch: &str,
    n_layer: Option<u64>,
    out: &mut Vec<LoadProblem>,
) {
    let key = key_name(rule, arch);
    let Some(value) = meta.value(&key) else {
        if rule.required {
            out.push(LoadProblem::MissingKey { key });
        }
        return;
    };
    let wrong = |found: String| LoadProblem::WrongType {
        key: key.clone(),
        expected: rule.expect.describe(),
        found,
    };
    let found = value.value_type();
    let problem = match (rule.expect, value) {
        (U16, Value::U16(_)) | (U32, Value::U32(_)) | (F32, Value::F32(_)) => None,
        (Bool, Value::Bool(_)) | (Str, Value::String(_)) => None,
        (U16 | U32 | F32 | Bool | Str, _) => Some(wrong(found.name().into())),
        (U32PerLayer | U32OrLayerFlags, Value::U32(_)) => None,
        (U32PerLayer | U32OrLayerFlags, Value::Array(a)) => {
            let element = a.element_type();
            let len = a.len() as u64;
            if !matches!(element, ValueType::U32 | ValueType::I32 | ValueType::Bool) {
                Some(wrong(format!("array of {element}")))
            } else if rule.expect == U32PerLayer && Some(len) != n_layer {
                Some(LoadProblem::BadValue {
                    key: key.clone(),
                    reason: format!(
                        "has {len} entries, llama.cpp wants one per layer ({})",
                        n_layer.map_or("block_count unknown".into(), |n| n.to_string())
                    ),
                })
            } else if len > MAX_LAYERS {
                Some(LoadProblem::BadValue {
                    key: key.clone(),
                    reason: format!("has {len} entries, more than llama.cpp's {MAX_LAYERS}"),
                })
            } else {
                None
            }
        }
        (U32PerLayer | U32OrLayerFlags, _) => Some(wrong(found.name().into())),
        (StrArray, Value::Array(a)) if a.element_type() != ValueType::String => {
            Some(wrong(format!("array of {}", a.element_type())))
        }
        (StrArray, _) => None,
    };
    out.extend(problem);
}

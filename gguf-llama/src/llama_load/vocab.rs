//! The tokenizer arrays llama.cpp's vocabulary loader (`llama_vocab::load`)
//! reads, and what it refuses in them.

use std::borrow::Cow;
use std::collections::HashMap;

use gguf_core::Gguf;
use gguf_core::{ArrayView, Value, ValueType};

use super::LoadProblem;
use crate::summary::str_of;

/// Tokenizer models llama.cpp knows (`tokenizer.ggml.model`); any other
/// is "unknown tokenizer".
const TOKENIZER_MODELS: &[&str] = &[
    "no_vocab",
    "none",
    "llama",
    "bert",
    "gpt2",
    "hybriddna",
    "whitespace",
    "t5",
    "rwkv",
    "test",
    "plamo2",
    "gemma4",
];

/// Models that read `tokenizer.ggml.merges` (byte-pair encoders).
const NEEDS_MERGES: &[&str] = &["gpt2", "hybriddna", "whitespace", "gemma4"];

/// Whether the tokenizer model has no vocabulary: its size then comes
/// from `{arch}.vocab_size` and no token array is read.
pub(super) fn is_vocabless(model: Option<&str>) -> bool {
    matches!(model, Some("no_vocab" | "none"))
}

/// The array at `key` if its elements have one of the `allowed` types;
/// otherwise the problem llama.cpp has with it is pushed. `None` also when
/// the key is absent.
fn typed_array<'a>(
    meta: &'a (impl Gguf + ?Sized),
    key: &str,
    allowed: &[ValueType],
    expected: &'static str,
    out: &mut Vec<LoadProblem>,
) -> Option<ArrayView<'a>> {
    let found = match meta.value(key)? {
        Value::Array(a) if allowed.contains(&a.element_type()) => return Some(a),
        Value::Array(a) => format!("array of {}", a.element_type()),
        other => other.value_type().name().into(),
    };
    out.push(LoadProblem::WrongType {
        key: key.into(),
        expected,
        found,
    });
    None
}

const STRINGS: &[ValueType] = &[ValueType::String];

/// Checks the tokenizer's model and arrays. Returns the number of tokens
/// (llama.cpp's `n_vocab`) when the token list is readable.
pub(super) fn check(meta: &(impl Gguf + ?Sized), out: &mut Vec<LoadProblem>) -> Option<u64> {
    let model = str_of(meta, "tokenizer.ggml.model");
    if let Some(m) = model
        && !TOKENIZER_MODELS.contains(&m)
    {
        out.push(LoadProblem::BadValue {
            key: "tokenizer.ggml.model".into(),
            reason: format!("is {m:?}, not a tokenizer llama.cpp knows"),
        });
        return None;
    }
    if is_vocabless(model) {
        return None;
    }
    if let Some(m) = model.filter(|m| NEEDS_MERGES.contains(m)) {
        let key = "tokenizer.ggml.merges";
        // Kimi-K2's byte-pair encoder has no merges.
        let kimi = m != "gemma4" && str_of(meta, "tokenizer.ggml.pre") == Some("kimi-k2");
        if meta.value(key).is_none() && !kimi {
            out.push(LoadProblem::MissingKey { key: key.into() });
        }
        typed_array(meta, key, STRINGS, "an array of strings", out);
    }
    if model == Some("t5") {
        charsmap(meta, out);
    }
    let suppress = "tokenizer.ggml.suppress_tokens";
    typed_array(meta, suppress, &[ValueType::I32], "an array of i32", out);

    let key = "tokenizer.ggml.tokens";
    if meta.value(key).is_none() {
        out.push(LoadProblem::MissingKey { key: key.into() });
        return None;
    }
    let tokens = typed_array(meta, key, STRINGS, "an array of strings", out)?;
    let n_tokens = tokens.len() as u64;
    for (key, allowed, expected) in [
        (
            "tokenizer.ggml.scores",
            &[ValueType::F32, ValueType::I32][..],
            "an array of f32 or i32",
        ),
        (
            "tokenizer.ggml.token_type",
            &[ValueType::I32][..],
            "an array of i32",
        ),
    ] {
        let Some(a) = typed_array(meta, key, allowed, expected, out) else {
            continue;
        };
        if (a.len() as u64) < n_tokens {
            out.push(LoadProblem::BadValue {
                key: key.into(),
                reason: format!("has {} entries, fewer than the {n_tokens} tokens", a.len()),
            });
        }
    }
    if let Some(strings) = tokens.strings() {
        duplicates(strings, out);
    }
    Some(n_tokens)
}

/// llama.cpp indexes tokens by text and asserts that no two are equal
/// (an empty token counts as `[EMPTY_<id>]`).
fn duplicates<'a>(tokens: impl Iterator<Item = &'a str>, out: &mut Vec<LoadProblem>) {
    let mut seen: HashMap<Cow<'a, str>, usize> = HashMap::new();
    for (id, text) in tokens.enumerate() {
        let text = if text.is_empty() {
            Cow::Owned(format!("[EMPTY_{id}]"))
        } else {
            Cow::Borrowed(text)
        };
        if let Some(first) = seen.get(&text) {
            out.push(LoadProblem::BadValue {
                key: "tokenizer.ggml.tokens".into(),
                reason: format!("has the token {text:?} twice (ids {first} and {id})"),
            });
            return;
        }
        seen.insert(text, id);
    }
}

/// The T5 (unigram) tokenizer's `precompiled_charsmap`: bytes, starting
/// with a little-endian `u32` blob size that must leave room after it.
fn charsmap(meta: &(impl Gguf + ?Sized), out: &mut Vec<LoadProblem>) {
    let key = "tokenizer.ggml.precompiled_charsmap";
    let allowed = [ValueType::U8, ValueType::I8];
    let Some(a) = typed_array(meta, key, &allowed, "an array of u8 or i8", out) else {
        return;
    };
    let bytes = a.raw_bytes();
    let fits = bytes
        .get(..4)
        .map(|b| u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])) + 4 < bytes.len() as u64);
    if fits != Some(true) {
        out.push(LoadProblem::BadValue {
            key: key.into(),
            reason: "has a blob size that runs past its end".into(),
        });
    }
}

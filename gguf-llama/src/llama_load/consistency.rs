//! Metadata llama.cpp relies on without checking it: [`metadata_problems`].

use std::collections::BTreeSet;
use std::fmt;

use gguf_core::Gguf;
use gguf_core::Value;

use crate::summary::{arch_key, key};

/// One inconsistency in the metadata llama.cpp relies on. llama.cpp's
/// loader does not refuse these; the model then misbehaves (a token id
/// past the vocabulary, a layer count that disagrees with the tensors).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MetadataProblem {
    /// A per-token array (`tokenizer.ggml.scores`, `token_type`) whose
    /// length is not that of `tokenizer.ggml.tokens`.
    TokenArrayLength {
        /// The array's key.
        key: String,
        /// Its length.
        len: usize,
        /// The length of `tokenizer.ggml.tokens`.
        tokens: usize,
    },
    /// A `tokenizer.ggml.*_token_id` that is not an integer.
    TokenIdNotInteger {
        /// The key.
        key: String,
        /// Its type (`"string"`, `"f32"`).
        found: String,
    },
    /// A `tokenizer.ggml.*_token_id` outside the vocabulary (-1, which
    /// llama.cpp reads as "no such token", is not one).
    TokenIdOutOfRange {
        /// The key.
        key: String,
        /// Its value.
        id: i128,
        /// The number of tokens.
        vocab: usize,
    },
    /// `{arch}.block_count` is not the number of `blk.N` layers among the
    /// tensors, or they are not numbered `0..N`.
    BlockCount {
        /// `{arch}.block_count`.
        key: String,
        /// Its value.
        declared: u64,
        /// How many distinct `blk.N` layers the tensors have.
        layers: usize,
        /// The highest `N`.
        highest: u64,
    },
    /// `{arch}.block_count` is missing (or not an integer) while tensors
    /// are named `blk.N`.
    BlockCountMissing {
        /// `{arch}.block_count`.
        key: String,
    },
}

impl fmt::Display for MetadataProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetadataProblem::TokenArrayLength { key, len, tokens } => {
                write!(f, "{key} has {len} entries, tokenizer.ggml.tokens has {tokens}")
            }
            MetadataProblem::TokenIdNotInteger { key, found } => {
                write!(f, "{key} is a {found}, not an integer")
            }
            MetadataProblem::TokenIdOutOfRange { key, id, vocab } => {
                write!(f, "{key} = {id} is outside the vocabulary of {vocab} tokens")
            }
            MetadataProblem::BlockCount {
                key,
                declared,
                layers,
                highest,
            } => write!(
                f,
                "{key} = {declared}, but the tensors have {layers} blk.N layers (highest blk.{highest})"
            ),
            MetadataProblem::BlockCountMissing { key } => write!(
                f,
                "{key} is missing (or not an integer) but the file has blk.N tensors"
            ),
        }
    }
}

/// Length of an array entry, if the key holds an array.
fn array_len(file: &(impl Gguf + ?Sized), key: &str) -> Option<usize> {
    match file.value(key)? {
        Value::Array(a) => Some(a.len()),
        _ => None,
    }
}

/// The integer a token id holds, or `None` for another type.
fn integer(value: &Value<'_>) -> Option<i128> {
    Some(match *value {
        Value::U32(v) => i128::from(v),
        Value::I32(v) => i128::from(v),
        Value::U64(v) => i128::from(v),
        Value::I64(v) => i128::from(v),
        Value::U16(v) => i128::from(v),
        Value::I16(v) => i128::from(v),
        Value::U8(v) => i128::from(v),
        Value::I8(v) => i128::from(v),
        _ => return None,
    })
}

/// Checks the metadata llama.cpp relies on: `tokenizer.ggml.tokens`,
/// `scores` and `token_type` of equal length, every
/// `tokenizer.ggml.*_token_id` within the vocabulary, and
/// `{arch}.block_count` equal to the number of `blk.N` layers among the
/// tensors. A missing architecture is not reported here: it is one of
/// [`LoadReport`](super::LoadReport)'s problems.
///
/// ```
/// # fn main() -> gguf_llama::Result<()> {
/// use gguf_llama::llama_load::{metadata_problems, MetadataProblem};
/// use gguf_core::{write::Builder, GgufFile};
/// let mut b = Builder::new();
/// b.set("tokenizer.ggml.tokens", vec!["a", "b"])?;
/// b.set("tokenizer.ggml.eos_token_id", 2u32)?;
/// let bytes = b.to_vec()?;
/// let problems = metadata_problems(&GgufFile::open(&bytes)?);
/// assert_eq!(
///     problems[0].to_string(),
///     "tokenizer.ggml.eos_token_id = 2 is outside the vocabulary of 2 tokens"
/// );
/// # Ok(()) }
/// ```
pub fn metadata_problems(file: &(impl Gguf + ?Sized)) -> Vec<MetadataProblem> {
    let mut out = Vec::new();
    if let Some(tokens) = array_len(file, "tokenizer.ggml.tokens") {
        token_problems(file, tokens, &mut out);
    }
    if let Ok(arch) = file.get_str("general.architecture")
        && let Some(p) = block_count_problem(file, arch)
    {
        out.push(p);
    }
    out
}

fn token_problems(file: &(impl Gguf + ?Sized), tokens: usize, out: &mut Vec<MetadataProblem>) {
    for key in ["tokenizer.ggml.scores", "tokenizer.ggml.token_type"] {
        match array_len(file, key) {
            Some(len) if len != tokens => out.push(MetadataProblem::TokenArrayLength {
                key: key.into(),
                len,
                tokens,
            }),
            _ => {}
        }
    }
    for (key, value) in file.metadata() {
        if !(key.starts_with("tokenizer.ggml.") && key.ends_with("_token_id")) {
            continue;
        }
        let Some(id) = integer(&value) else {
            out.push(MetadataProblem::TokenIdNotInteger {
                key: key.into(),
                found: value.value_type().to_string(),
            });
            continue;
        };
        // llama.cpp treats -1 as "no such token".
        if id != -1 && !(0..tokens as i128).contains(&id) {
            out.push(MetadataProblem::TokenIdOutOfRange {
                key: key.into(),
                id,
                vocab: tokens,
            });
        }
    }
}

fn block_count_problem(file: &(impl Gguf + ?Sized), arch: &str) -> Option<MetadataProblem> {
    let key = arch_key(key::block_count, arch);
    let layers: BTreeSet<u64> = file
        .tensors()
        .filter_map(|t| {
            t.name()
                .strip_prefix("blk.")?
                .split('.')
                .next()?
                .parse()
                .ok()
        })
        .collect();
    let declared = file.value(&key).and_then(|v| match v {
        Value::U32(n) => Some(u64::from(n)),
        Value::U64(n) => Some(n),
        Value::I32(n) => u64::try_from(n).ok(),
        _ => None,
    });
    match (declared, layers.last()) {
        (Some(n), Some(&max)) if n != layers.len() as u64 || max + 1 != n => {
            Some(MetadataProblem::BlockCount {
                key,
                declared: n,
                layers: layers.len(),
                highest: max,
            })
        }
        (None, Some(_)) => Some(MetadataProblem::BlockCountMissing { key }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gguf_core::read::GgufFile;
    use gguf_core::write::Builder;
    use gguf_core::GgmlType;

    fn problems(build: impl FnOnce(&mut Builder<'_>)) -> Vec<String> {
        let mut b = Builder::new();
        build(&mut b);
        let bytes = b.to_vec().unwrap();
        let file = GgufFile::open(&bytes).unwrap();
        metadata_problems(&file)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn layer(b: &mut Builder<'_>, name: &str) {
        b.add_tensor(name, GgmlType::F32, &[1], vec![0u8; 4])
            .unwrap();
    }

    #[test]
    fn consistent_metadata_has_no_problem() {
        let found = problems(|b| {
            b.set("general.architecture", "llama").unwrap();
            b.set("llama.block_count", 2u32).unwrap();
            b.set("tokenizer.ggml.tokens", vec!["a", "b"]).unwrap();
            b.set("tokenizer.ggml.scores", vec![0f32, 1.0]).unwrap();
            b.set("tokenizer.ggml.bos_token_id", 1u32).unwrap();
            b.set("tokenizer.ggml.padding_token_id", -1i32).unwrap();
            layer(b, "blk.0.w");
            layer(b, "blk.1.w");
        });
        assert_eq!(found, Vec::<String>::new());
    }

    #[test]
    fn per_token_arrays_must_match_the_tokens() {
        let found = problems(|b| {
            b.set("tokenizer.ggml.tokens", vec!["a", "b"]).unwrap();
            b.set("tokenizer.ggml.scores", vec![0f32]).unwrap();
            b.set("tokenizer.ggml.token_type", vec![1i32, 1, 1])
                .unwrap();
        });
        assert_eq!(
            found,
            [
                "tokenizer.ggml.scores has 1 entries, tokenizer.ggml.tokens has 2",
                "tokenizer.ggml.token_type has 3 entries, tokenizer.ggml.tokens has 2",
            ]
        );
    }

    #[test]
    fn token_ids_must_be_integers_within_the_vocabulary() {
        let found = problems(|b| {
            b.set("tokenizer.ggml.tokens", vec!["a", "b"]).unwrap();
            b.set("tokenizer.ggml.bos_token_id", 2u64).unwrap();
            b.set("tokenizer.ggml.eos_token_id", -2i8).unwrap();
            b.set("tokenizer.ggml.unk_token_id", "0").unwrap();
        });
        assert_eq!(
            found,
            [
                "tokenizer.ggml.bos_token_id = 2 is outside the vocabulary of 2 tokens",
                "tokenizer.ggml.eos_token_id = -2 is outside the vocabulary of 2 tokens",
                "tokenizer.ggml.unk_token_id is a string, not an integer",
            ]
        );
    }

    #[test]
    fn token_ids_are_not_checked_without_tokens() {
        let found = problems(|b| {
            b.set("tokenizer.ggml.bos_token_id", 99u32).unwrap();
        });
        assert_eq!(found, Vec::<String>::new());
    }

    #[test]
    fn block_count_must_match_the_layers() {
        let with = |count: Option<u32>, layers: &[&str]| {
            problems(|b| {
                b.set("general.architecture", "llama").unwrap();
                if let Some(n) = count {
                    b.set("llama.block_count", n).unwrap();
                }
                for name in layers {
                    layer(b, name);
                }
            })
        };
        assert_eq!(
            with(Some(3), &["blk.0.w", "blk.1.w"]),
            ["llama.block_count = 3, but the tensors have 2 blk.N layers (highest blk.1)"]
        );
        // Two layers, but numbered 0 and 2.
        assert_eq!(
            with(Some(2), &["blk.0.w", "blk.2.w"]),
            ["llama.block_count = 2, but the tensors have 2 blk.N layers (highest blk.2)"]
        );
        assert_eq!(
            with(None, &["blk.0.w"]),
            ["llama.block_count is missing (or not an integer) but the file has blk.N tensors"]
        );
        // No blk.N tensor: nothing to compare.
        assert_eq!(with(Some(4), &["output.weight"]), Vec::<String>::new());
    }
}

//! GGUF file names: the naming convention of ggml's GGUF specification
//! (`[<Sidecar>-]<BaseName>-<SizeLabel>-<FineTune>-<Version>-<Encoding>-<Type>-<Shard>.gguf`),
//! the shard suffix `-{k:05}-of-{n:05}.gguf` of split models, and the name
//! llama.cpp's converter gives a model ([`propose_file_name`]).
//!
//! ```
//! use gguf_core::naming::FileName;
//! let name = FileName::parse("Grok-100B-v1.0-Q4_0-00003-of-00009.gguf").unwrap();
//! assert_eq!(name.base_name, "Grok");
//! assert_eq!(name.size_label.as_deref(), Some("100B"));
//! assert_eq!(name.encoding.as_deref(), Some("Q4_0"));
//! assert_eq!(name.shard.map(|s| (s.index, s.count)), Some((3, 9)));
//! assert_eq!(name.to_string(), "Grok-100B-v1.0-Q4_0-00003-of-00009.gguf");
//! ```

use crate::read::Gguf;
use std::fmt;
use std::path::{Path, PathBuf};

/// Extension of GGUF files.
pub const EXTENSION: &str = ".gguf";

/// A shard's position in a split model: `index` of `count`, 1-based as in
/// file names (`-00003-of-00009`); the `split.no` key stores `index - 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardNo {
    /// Position of the shard, from 1.
    pub index: u32,
    /// Number of shards of the model.
    pub count: u32,
}

/// The components of a file name that follows the GGUF naming convention.
///
/// [`parse`](Self::parse) accepts exactly the names the specification's
/// validating regular expression accepts, and picks the same components
/// (the same backtracking order); `to_string` gives the name back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileName {
    /// `mmproj` or `mtp`: an auxiliary module loaded beside a base model.
    pub sidecar: Option<String>,
    /// The model's base name, dashes for spaces (`Hermes-2-Pro-Llama-3`).
    pub base_name: String,
    /// Parameter class, `<experts>x<count><scale>` (`8x7B`, `3.8B`), with an
    /// optional attribute (`3.8B-ContextLength4k`).
    pub size_label: Option<String>,
    /// Fine-tuning goal (`Instruct`, `chat`); only with a size label.
    pub fine_tune: Option<String>,
    /// `v<major>.<minor>...` (`v0.1`); the convention's validating form
    /// requires it.
    pub version: String,
    /// Weight encoding (`Q4_0`, `F16`, `Q4_K_M`).
    pub encoding: Option<String>,
    /// `LoRA` or `vocab`; absent for an ordinary model.
    pub kind: Option<String>,
    /// Which shard of a split model.
    pub shard: Option<ShardNo>,
}

impl FileName {
    /// Parses a file name (no directory) by the convention's validating
    /// regular expression; `None` when it does not match.
    ///
    /// ```
    /// use gguf_core::naming::FileName;
    /// let n = FileName::parse("Phi-3-mini-3.8B-ContextLength4k-instruct-v1.0.gguf").unwrap();
    /// assert_eq!(n.base_name, "Phi-3-mini");
    /// assert_eq!(n.size_label.as_deref(), Some("3.8B-ContextLength4k"));
    /// assert_eq!(n.fine_tune.as_deref(), Some("instruct"));
    /// assert!(FileName::parse("not-a-known-arrangement.gguf").is_none());
    /// ```
    pub fn parse(name: &str) -> Option<FileName> {
        let stem = name.strip_suffix(EXTENSION)?;
        let tokens: Vec<&str> = stem.split('-').collect();
        let with_sidecar = matches!(tokens.first(), Some(&("mmproj" | "mtp")));
        if with_sidecar && let Some(mut n) = parse_tokens(&tokens[1..]) {
            n.sidecar = Some(tokens[0].to_owned());
            return Some(n);
        }
        parse_tokens(&tokens)
    }
}

impl fmt::Display for FileName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = &self.sidecar {
            write!(f, "{s}-")?;
        }
        write!(f, "{}-", self.base_name)?;
        if let Some(s) = &self.size_label {
            f.write_str(s)?;
            if let Some(t) = &self.fine_tune {
                write!(f, "-{t}")?;
            }
        }
        write!(f, "-{}", self.version)?;
        if let Some(e) = &self.encoding {
            write!(f, "-{e}")?;
        }
        if let Some(k) = &self.kind {
            write!(f, "-{k}")?;
        }
        if let Some(s) = self.shard {
            write!(f, "-{:05}-of-{:05}", s.index, s.count)?;
        }
        f.write_str(EXTENSION)
    }
}

// ---- the validating expression, token by token ----
//
// Every component but the base name, the size label's attribute and the
// fine-tune is free of '-', and those three split on '-' into whole
// tokens, so matching the expression is choosing how many '-'-separated
// tokens each component takes. The choices are tried in the order the
// expression's backtracking tries them (greedy first), so the components
// found are the ones a regex engine would capture.

fn is_space(c: char) -> bool {
    c.is_whitespace()
}

/// `[A-Za-z0-9\s]*`
fn alnum_space(s: &str) -> bool {
    s.chars().all(|c| c.is_ascii_alphanumeric() || is_space(c))
}

/// A base-name segment after the first: `[A-Za-z\s][A-Za-z0-9\s]*` or `[0-9\s]*`.
fn base_segment(s: &str) -> bool {
    match s.chars().next() {
        None => true,
        Some(c) if c.is_ascii_alphabetic() || is_space(c) => alnum_space(s),
        Some(_) => s.chars().all(|c| c.is_ascii_digit() || is_space(c)),
    }
}

/// Consumes `\d+` from the front; `None` when no digit.
fn digits(s: &str) -> Option<&str> {
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    (n > 0).then(|| &s[n..])
}

/// `(?:\d+x)?(?:\d+\.)?\d+[A-Za-z]`
fn size_label(s: &str) -> bool {
    let body = |s: &str| -> bool {
        // (?:\d+\.)?\d+[A-Za-z]
        let simple = |s: &str| {
            digits(s).is_some_and(|r| r.len() == 1 && r.as_bytes()[0].is_ascii_alphabetic())
        };
        simple(s)
            || digits(s)
                .and_then(|r| r.strip_prefix('.'))
                .is_some_and(simple)
    };
    body(s)
        || digits(s)
            .and_then(|r| r.strip_prefix('x'))
            .is_some_and(body)
}

/// The size label's attribute: `[A-Za-z]+(\d+\.)?\d+[A-Za-z]+`
fn size_attribute(s: &str) -> bool {
    let letters = s.bytes().take_while(u8::is_ascii_alphabetic).count();
    if letters == 0 {
        return false;
    }
    let rest = &s[letters..];
    let tail = |r: &str| !r.is_empty() && r.bytes().all(|b| b.is_ascii_alphabetic());
    let simple = |r: &str| digits(r).is_some_and(tail);
    simple(rest)
        || digits(rest)
            .and_then(|r| r.strip_prefix('.'))
            .is_some_and(simple)
}

/// `v\d+(?:\.\d+)*`
fn version(s: &str) -> bool {
    let Some(mut rest) = s.strip_prefix('v').and_then(digits) else {
        return false;
    };
    while !rest.is_empty() {
        match rest.strip_prefix('.').and_then(digits) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    true
}

/// `(?!LoRA|vocab)[\w_]+`
fn encoding(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with("LoRA")
        && !s.starts_with("vocab")
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn five_digits(s: &str) -> Option<u32> {
    (s.len() == 5 && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// The tokens after the version: `(-Encoding)?(-Type)?(-Shard)?` to the end.
fn tail(t: &[&str]) -> Option<(Option<String>, Option<String>, Option<ShardNo>)> {
    for with_enc in [true, false] {
        let mut i = 0;
        let enc = if with_enc {
            match t.first() {
                Some(e) if encoding(e) => {
                    i = 1;
                    Some(e.to_string())
                }
                _ => continue,
            }
        } else {
            None
        };
        for with_kind in [true, false] {
            let mut j = i;
            let kind = if with_kind {
                match t.get(j) {
                    Some(k @ (&"LoRA" | &"vocab")) => {
                        j += 1;
                        Some(k.to_string())
                    }
                    _ => continue,
                }
            } else {
                None
            };
            let rest = &t[j..];
            if rest.is_empty() {
                return Some((enc, kind, None));
            }
            if let [k, "of", n] = rest
                && let (Some(index), Some(count)) = (five_digits(k), five_digits(n))
            {
                return Some((enc, kind, Some(ShardNo { index, count })));
            }
        }
    }
    None
}

/// Everything after the optional sidecar.
fn parse_tokens(t: &[&str]) -> Option<FileName> {
    // The base name: the first token, then as many valid segments as
    // possible (validity is prefix-closed), longest first.
    let first = t.first()?;
    if !alnum_space(first) {
        return None;
    }
    let longest = 1 + t[1..].iter().take_while(|s| base_segment(s)).count();
    for base_len in (1..=longest).rev() {
        let rest = &t[base_len..];
        let base_name = t[..base_len].join("-");
        // `-(?:SizeLabel(?:-FineTune)?)?-Version`: each arrangement as
        // (size-label tokens, fine-tune tokens), greedy first; (0, 0) is
        // the empty group, which leaves an empty token before the version.
        let mut arrangements = Vec::new();
        for sl in [2usize, 1] {
            let ok = match sl {
                2 => rest.len() >= 2 && size_label(rest[0]) && size_attribute(rest[1]),
                _ => rest.first().is_some_and(|s| size_label(s)),
            };
            if !ok {
                continue;
            }
            let max_ft = rest[sl..].iter().take_while(|s| alnum_space(s)).count();
            for ft in (1..=max_ft).rev() {
                arrangements.push((sl, ft));
            }
            arrangements.push((sl, 0));
        }
        for (sl, ft) in arrangements {
            let fine = rest[sl..sl + ft].join("-");
            if ft > 0 && fine.is_empty() {
                continue; // `[A-Za-z0-9\s-]+` needs one character
            }
            if let Some(n) = after_version(&base_name, rest, sl, ft) {
                return Some(n);
            }
        }
        if rest.first() == Some(&"")
            && let Some(n) = after_version(&base_name, rest, 1, 0).map(|mut n| {
                n.size_label = None;
                n
            })
        {
            return Some(n);
        }
    }
    None
}

/// Completes a parse whose size label takes `rest[..sl]` and fine-tune
/// `rest[sl..sl + ft]`: the version must come next, then the tail.
fn after_version(base_name: &str, rest: &[&str], sl: usize, ft: usize) -> Option<FileName> {
    let v = rest.get(sl + ft)?;
    if !version(v) {
        return None;
    }
    let (encoding, kind, shard) = tail(&rest[sl + ft + 1..])?;
    Some(FileName {
        sidecar: None,
        base_name: base_name.to_owned(),
        size_label: Some(rest[..sl].join("-")),
        fine_tune: (ft > 0).then(|| rest[sl..sl + ft].join("-")),
        version: (*v).to_owned(),
        encoding,
        kind,
        shard,
    })
}

// ---- shard names ----

/// The file name of shard `index` (1-based) of `count`:
/// `{stem}-{index:05}-of-{count:05}.gguf`, as llama.cpp and gguf-py name
/// shards.
///
/// ```
/// assert_eq!(gguf_core::naming::shard_file_name("model", 2, 5), "model-00002-of-00005.gguf");
/// ```
pub fn shard_file_name(stem: &str, index: u32, count: u32) -> String {
    format!("{stem}-{index:05}-of-{count:05}{EXTENSION}")
}

/// Splits a shard's file name into its stem and position; `None` when the
/// name does not end in `-NNNNN-of-NNNNN.gguf` with `1 <= index <= count`.
///
/// ```
/// use gguf_core::naming::{parse_shard_name, ShardNo};
/// assert_eq!(parse_shard_name("m-Q4_0-00002-of-00003.gguf"), Some(("m-Q4_0", ShardNo { index: 2, count: 3 })));
/// assert_eq!(parse_shard_name("m-00004-of-00003.gguf"), None);
/// assert_eq!(parse_shard_name("m.gguf"), None);
/// ```
pub fn parse_shard_name(name: &str) -> Option<(&str, ShardNo)> {
    let stem = name.strip_suffix(EXTENSION)?;
    // "-NNNNN-of-NNNNN" is 15 bytes; slicing only at ASCII positions.
    let cut = stem.len().checked_sub(15)?;
    let (prefix, suffix) = (stem.get(..cut)?, stem.get(cut..)?);
    let b = suffix.as_bytes();
    if b[0] != b'-' || &suffix[6..10] != "-of-" {
        return None;
    }
    let index = five_digits(&suffix[1..6])?;
    let count = five_digits(&suffix[10..15])?;
    (index >= 1 && index <= count).then_some((prefix, ShardNo { index, count }))
}

/// The path of shard `index` of `count` beside `path`, named from `path`'s
/// stem (`dir/model.gguf` -> `dir/model-00001-of-00003.gguf`), as
/// gguf-py's `GGUFWriter` names the shards of its output path.
pub fn shard_path(path: &Path, index: u32, count: u32) -> PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
    path.with_file_name(shard_file_name(stem.as_deref().unwrap_or(""), index, count))
}

// ---- the converter's name ----

use crate::format::file_type_encoding;

/// Parameter counts as gguf-py's `GGUFWriter.get_total_parameter_count`
/// computes them from tensor shapes: (total, shared, expert, expert count);
/// the total is negative for a LoRA adapter.
///
/// ```
/// let shapes = [("blk.0.ffn_up.weight", &[8u64, 4][..]), ("output_norm.weight", &[8][..])];
/// let (total, shared, expert, experts) = gguf_core::naming::parameter_counts(shapes.into_iter());
/// assert_eq!((total, shared, expert, experts), (40, 40, 0, 0));
/// ```
pub fn parameter_counts<'s>(
    tensors: impl Iterator<Item = (&'s str, &'s [u64])>,
) -> (i128, i128, i128, i128) {
    let (mut total, mut shared, mut expert) = (0i128, 0i128, 0i128);
    let (mut expert_sum, mut n_expert_tensors) = (0i128, 0i128);
    let mut last_lora_a: Option<(&str, &[u64])> = None;
    let mut lora = false;
    for (name, shape) in tensors {
        // gguf-py's shapes are numpy's: ggml's reversed.
        let mut np: Vec<i128> = shape.iter().rev().map(|&d| d.into()).collect();
        if name.ends_with(".lora_a") {
            last_lora_a = Some((name, shape));
            lora = true;
            continue;
        }
        if let Some(stem) = name.strip_suffix(".lora_b") {
            match last_lora_a {
                Some((a, a_shape)) if a.strip_suffix(".lora_a") == Some(stem) => {
                    if let (Some(last), Some(&inner)) = (np.last_mut(), a_shape.first()) {
                        *last = inner.into();
                    }
                }
                _ => return (0, 0, 0, 0),
            }
        }
        let size: i128 = np.iter().product();
        if name.contains("_exps.") && np.len() >= 3 {
            let at = if name.contains(".bias") {
                np.len() - 2
            } else {
                np.len() - 3
            };
            let count = np[at];
            if count != 0 {
                expert += size / count;
            }
            expert_sum += count;
            n_expert_tensors += 1;
        } else {
            shared += size;
        }
        total += size;
    }
    let expert_count = if n_expert_tensors > 0 {
        expert_sum / n_expert_tensors
    } else {
        0
    };
    if lora {
        total = -total;
    }
    (total, shared, expert, expert_count)
}

/// gguf-py's `model_weight_count_rounded_notation` with `min_digits = 2`:
/// `7.2B`, `13B`, `0.50K`.
fn rounded_count(n: i128) -> String {
    let x = n as f64;
    let (scaled, suffix) = if x > 1e12 {
        (x * 1e-12, "T")
    } else if x > 1e9 {
        (x * 1e-9, "B")
    } else if x > 1e6 {
        (x * 1e-6, "M")
    } else {
        (x * 1e-3, "K")
    };
    // Python's round() is half-to-even; "0" strips to no digit at all.
    let whole = format!("{}", scaled.round_ties_even());
    let digits = whole.trim_start_matches('0').len();
    let fix = 2usize.saturating_sub(digits);
    format!("{scaled:.fix$}{suffix}")
}

/// gguf-py's `size_label` from parameter counts (see [`parameter_counts`]).
///
/// ```
/// assert_eq!(gguf_core::naming::size_label_of(268_098_176, 268_098_176, 0, 0), "268M");
/// ```
pub fn size_label_of(total: i128, shared: i128, expert: i128, expert_count: i128) -> String {
    if expert_count > 0 {
        format!(
            "{expert_count}x{}",
            rounded_count(shared.abs() + expert.abs())
        )
    } else {
        rounded_count(total.abs())
    }
}

/// The file name llama.cpp's converter (`convert_hf_to_gguf.py`, through
/// gguf-py's `naming_convention`) gives a model with this metadata and
/// these tensors: `general.basename` (else `general.name`, else
/// `ggml-model`), `general.size_label` (else computed from the tensor
/// shapes as gguf-py does), `general.finetune`, `general.version`, the
/// encoding of `general.file_type`, and `-LoRA` for an adapter. A file
/// without tensors gets the vocab-only form (`<name>-vocab.gguf`).
///
/// ```
/// # fn main() -> gguf_core::Result<()> {
/// use gguf_core::{naming::propose_file_name, write::Builder, GgmlType, GgufFile};
/// let mut b = Builder::new();
/// b.set("general.architecture", "llama")?;
/// b.set("general.basename", "Tiny Llama")?;
/// b.set("general.finetune", "Chat")?;
/// b.set("general.version", "v1.0")?;
/// b.set("general.file_type", 1u32)?;
/// b.add_tensor_info("w", GgmlType::F16, &[100, 15])?;
/// let mut bytes = Vec::new();
/// b.write_metadata_first(&mut bytes)?.write_tensor("w", &[0; 3000])?;
/// let file = GgufFile::open(&bytes)?;
/// assert_eq!(propose_file_name(&file), "Tiny-Llama-1.5K-Chat-v1.0-F16.gguf");
/// # Ok(()) }
/// ```
pub fn propose_file_name(file: &(impl Gguf + ?Sized)) -> String {
    let string = |key: &str| file.value(key).and_then(|v| v.as_str().map(str::to_owned));
    let tensors: Vec<(&str, &[u64])> = file.tensors().map(|t| (t.name(), t.shape())).collect();
    propose_name(
        &string,
        &tensors,
        file.value("general.file_type").and_then(|v| v.as_integer()),
    )
}

/// [`propose_file_name`] from its inputs: a lookup of string metadata, the
/// tensors' names and shapes, and `general.file_type`.
pub(crate) fn propose_name(
    string: &dyn Fn(&str) -> Option<String>,
    tensors: &[(&str, &[u64])],
    file_type: Option<i128>,
) -> String {
    let dashed = |s: String| s.trim().replace(' ', "-");
    let name = string("general.basename")
        .or_else(|| string("general.name"))
        .map(|s| dashed(s).replace('/', "-"))
        .unwrap_or_else(|| "ggml-model".to_owned());
    let mut out = name;
    let finetune = string("general.finetune").map(dashed);
    let version = string("general.version").map(dashed);
    if tensors.is_empty() {
        for part in [finetune, version, Some("vocab".to_owned())]
            .into_iter()
            .flatten()
        {
            out.push('-');
            out.push_str(&part);
        }
        out.push_str(EXTENSION);
        return out;
    }
    let (total, shared, expert, expert_count) = parameter_counts(tensors.iter().copied());
    let size = string("general.size_label")
        .or_else(|| (total > 0).then(|| size_label_of(total, shared, expert, expert_count)));
    let encoding = file_type
        .and_then(|t| u32::try_from(t).ok())
        .and_then(file_type_encoding)
        .map(str::to_owned);
    let kind = (total < 0 || string("general.type").as_deref() == Some("adapter"))
        .then(|| "LoRA".to_owned());
    for part in [size, finetune, version, encoding, kind]
        .into_iter()
        .flatten()
    {
        out.push('-');
        out.push_str(&part);
    }
    out.push_str(EXTENSION);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(name: &str) -> Option<[Option<String>; 8]> {
        let n = FileName::parse(name)?;
        Some([
            n.sidecar,
            Some(n.base_name),
            n.size_label,
            n.fine_tune,
            Some(n.version),
            n.encoding,
            n.kind,
            n.shard.map(|s| format!("{:05}-of-{:05}", s.index, s.count)),
        ])
    }

    fn s(v: &str) -> Option<String> {
        Some(v.to_owned())
    }

    /// The test cases of the specification's own parser example.
    #[test]
    fn spec_examples() {
        let cases: [(&str, Option<[Option<String>; 8]>); 7] = [
            (
                "Mixtral-8x7B-v0.1-KQ2.gguf",
                Some([
                    None,
                    s("Mixtral"),
                    s("8x7B"),
                    None,
                    s("v0.1"),
                    s("KQ2"),
                    None,
                    None,
                ]),
            ),
            (
                "Grok-100B-v1.0-Q4_0-00003-of-00009.gguf",
                Some([
                    None,
                    s("Grok"),
                    s("100B"),
                    None,
                    s("v1.0"),
                    s("Q4_0"),
                    None,
                    s("00003-of-00009"),
                ]),
            ),
            (
                "Hermes-2-Pro-Llama-3-8B-v1.0-F16.gguf",
                Some([
                    None,
                    s("Hermes-2-Pro-Llama-3"),
                    s("8B"),
                    None,
                    s("v1.0"),
                    s("F16"),
                    None,
                    None,
                ]),
            ),
            (
                "Phi-3-mini-3.8B-ContextLength4k-instruct-v1.0.gguf",
                Some([
                    None,
                    s("Phi-3-mini"),
                    s("3.8B-ContextLength4k"),
                    s("instruct"),
                    s("v1.0"),
                    None,
                    None,
                    None,
                ]),
            ),
            (
                "mtp-Qwen3-27B-v1.0-Q4_K_M.gguf",
                Some([
                    s("mtp"),
                    s("Qwen3"),
                    s("27B"),
                    None,
                    s("v1.0"),
                    s("Q4_K_M"),
                    None,
                    None,
                ]),
            ),
            (
                "mmproj-Qwen2-VL-7B-v1.0-F16.gguf",
                Some([
                    s("mmproj"),
                    s("Qwen2-VL"),
                    s("7B"),
                    None,
                    s("v1.0"),
                    s("F16"),
                    None,
                    None,
                ]),
            ),
            ("not-a-known-arrangement.gguf", None),
        ];
        for (name, expected) in cases {
            assert_eq!(parts(name), expected, "{name}");
            if let Some(n) = FileName::parse(name) {
                assert_eq!(n.to_string(), name, "round trip of {name}");
            }
        }
    }

    #[test]
    fn more_shapes_round_trip() {
        for name in [
            "Llama-3-8B-Instruct-v3.0-Q4_K_M-LoRA.gguf",
            "Llama-3--v1.gguf", // no size label: the two dashes the expression requires
            "Model-7B-v1.0-vocab.gguf",
            "Model-7B-v1.0-LoRA-00001-of-00002.gguf",
            "Model-7B-v1.2.3-00002-of-00002.gguf",
            "a b-7B-chat-v1.0.gguf",
            "mmproj-7B-v1.0.gguf", // "mmproj" alone is a base name, not a sidecar
        ] {
            let n = FileName::parse(name).unwrap_or_else(|| panic!("{name} should parse"));
            assert_eq!(n.to_string(), name);
        }
        let n = FileName::parse("Model-7B-v1.0-LoRA-00001-of-00002.gguf").unwrap();
        assert_eq!((n.encoding, n.kind.as_deref()), (None, Some("LoRA")));
        let n = FileName::parse("mmproj-7B-v1.0.gguf").unwrap();
        assert_eq!((n.sidecar, n.base_name.as_str()), (None, "mmproj"));
    }

    #[test]
    fn malformed_names_are_rejected() {
        for name in [
            "",
            ".gguf",
            "Mixtral-8x7B-v0.1-KQ2",      // no extension
            "Mixtral-8x7B-v0.1-KQ2.GGUF", // case matters
            "Mixtral-8x7B-KQ2.gguf",      // no version
            "Mixtral-8x7B-v0.1-KQ2-0003-of-00009.gguf",
            "Mixtral-8x7B-v0.1-KQ2-00003-of-0009.gguf",
            "Mixtral-8x7B-v0.1-KQ2-LoRAx.gguf",
            "Mixtral-8x7B-v.1.gguf",
            "Mixtral-8x7B-v1.-Q4.gguf",
            "Mix.tral-8x7B-v1.0.gguf",
            "Mixtral-8x7B-v1.0-Q4.0.gguf",
            "Mixtral-7b3-v1.0.gguf",
            "-v1.0.gguf",
        ] {
            assert!(FileName::parse(name).is_none(), "{name:?} should not parse");
        }
    }

    #[test]
    fn shard_names() {
        assert_eq!(shard_file_name("a-b", 1, 12), "a-b-00001-of-00012.gguf");
        for (k, n) in [(1, 1), (3, 9), (65535, 65535)] {
            let name = shard_file_name("x.y", k, n);
            assert_eq!(
                parse_shard_name(&name),
                Some(("x.y", ShardNo { index: k, count: n }))
            );
        }
        for bad in [
            "m-00000-of-00003.gguf",
            "m-0001-of-00003.gguf",
            "m_00001-of-00003.gguf",
            "m-00001_of-00003.gguf",
            "00001-of-00003.gguf",
            "m-00001-of-00003.bin",
            "é-00001-of-0000é.gguf",
        ] {
            assert_eq!(parse_shard_name(bad), None, "{bad}");
        }
        assert_eq!(
            parse_shard_name("-00001-of-00003.gguf"),
            Some(("", ShardNo { index: 1, count: 3 }))
        );
        assert_eq!(
            shard_path(Path::new("dir/model.q8.gguf"), 2, 3),
            Path::new("dir/model.q8-00002-of-00003.gguf")
        );
    }

    #[test]
    fn rounded_counts_match_gguf_py() {
        // Values from gguf-py's model_weight_count_rounded_notation.
        for (n, s) in [
            (7_241_732_096, "7.2B"),
            (13_015_864_320, "13B"),
            (500, "0.50K"),
            (0, "0.00K"),
            (1_500_000, "1.5M"),
            (999_999_999_999, "1000B"),
            (1_100_000_000_000, "1.1T"),
            (95_000_000, "95M"),
        ] {
            assert_eq!(rounded_count(n), s, "{n}");
        }
    }

    #[test]
    fn converter_names() {
        let meta = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let dense: [(&str, &[u64]); 2] = [("a.weight", &[4096, 1000]), ("b.weight", &[4096])];
        assert_eq!(
            propose_name(&meta(&[("general.name", "My Model/x")]), &dense, Some(7)),
            "My-Model-x-4.1M-Q8_0.gguf"
        );
        assert_eq!(
            propose_name(&meta(&[]), &dense, None),
            "ggml-model-4.1M.gguf"
        );
        assert_eq!(
            propose_name(
                &meta(&[("general.basename", "B"), ("general.size_label", "8x7B")]),
                &dense,
                Some(1024)
            ),
            "B-8x7B.gguf"
        );
        let moe: [(&str, &[u64]); 2] = [
            ("blk.0.ffn_up_exps.weight", &[64, 128, 8]),
            ("tok.weight", &[64, 1000]),
        ];
        assert_eq!(
            propose_name(&meta(&[("general.name", "M")]), &moe, Some(1)),
            "M-8x72K-F16.gguf"
        );
        let lora: [(&str, &[u64]); 2] = [("w.lora_a", &[4096, 8]), ("w.lora_b", &[8, 4096])];
        assert_eq!(
            propose_name(&meta(&[("general.name", "A")]), &lora, Some(0)),
            "A-F32-LoRA.gguf"
        );
        assert_eq!(
            propose_name(
                &meta(&[("general.name", "V"), ("general.version", "v2")]),
                &[],
                Some(1)
            ),
            "V-v2-vocab.gguf"
        );
    }
}

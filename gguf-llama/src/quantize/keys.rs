//! The metadata llama-quantize writes besides the input's.
//!
//! It copies the input's entries in order, then sets
//! [`QUANTIZATION_VERSION`] and [`FILE_TYPE`] (moving them last when the
//! input had them: llama.cpp's `gguf_set_val_*` removes a key before
//! appending it), removes the `split.*` keys, then sets the
//! `--override-kv` values in the order given followed by the importance
//! matrix's [`IMATRIX_FILE`], [`IMATRIX_DATASET`] (when the file names
//! one), [`IMATRIX_ENTRIES`] and [`IMATRIX_CHUNKS`] (when above 0). With
//! `--prune-layers`, `{arch}.block_count` is set last ([`output_metadata`]).

/// `general.quantization_version`: u32 [`GGML_QNT_VERSION`].
pub const QUANTIZATION_VERSION: &str = "general.quantization_version";
/// ggml's quantization format version (`GGML_QNT_VERSION`).
pub const GGML_QNT_VERSION: u32 = 2;
/// `general.file_type`: u32, the preset's file type id.
pub const FILE_TYPE: &str = "general.file_type";
/// The importance matrix file's path as given, string, cut to 127 bytes.
pub const IMATRIX_FILE: &str = "quantize.imatrix.file";
/// The first dataset the importance matrix names, string, cut to 127 bytes.
pub const IMATRIX_DATASET: &str = "quantize.imatrix.dataset";
/// Entries of the importance matrix used (after include/exclude), u32.
pub const IMATRIX_ENTRIES: &str = "quantize.imatrix.entries_count";
/// Chunks the importance matrix was computed on, u32.
pub const IMATRIX_CHUNKS: &str = "quantize.imatrix.chunks_count";
/// The split keys llama-quantize removes.
pub const SPLIT_KEYS: [&str; 3] = ["split.no", "split.count", "split.tensors.count"];
/// Longest string an override holds: llama.cpp's 128-byte `val_str`,
/// NUL included.
pub const OVERRIDE_STR_MAX: usize = 127;

use crate::error::Result;
use crate::error::{Error, QuantizeError};
use crate::summary::{arch_key, key};
use gguf_core::format::OwnedValue;
use gguf_core::Gguf;

/// One `--override-kv KEY=TYPE:VALUE`, with the value as llama-quantize
/// writes it: `int` as u32 (the absolute value, cut to 32 bits), `float`
/// as f32, `bool`, `str` (at most 127 bytes).
#[derive(Clone, Debug, PartialEq)]
pub struct KvOverride {
    /// The key.
    pub key: String,
    /// The value written.
    pub value: OwnedValue,
}

/// The leading decimal integer of `s`, as C's `atol` reads it (0 when
/// there is none; saturated where C's is undefined).
fn atol(s: &str) -> i64 {
    let t = s.trim_start();
    let (neg, rest) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut n: i64 = 0;
    for b in rest.bytes().take_while(u8::is_ascii_digit) {
        n = n.saturating_mul(10).saturating_add(i64::from(b - b'0'));
    }
    if neg {
        -n
    } else {
        n
    }
}

/// The longest leading number of `s`, as C's `atof` reads it (0 when
/// there is none).
fn atof(s: &str) -> f64 {
    let t = s.trim_start();
    (1..=t.len())
        .rev()
        .filter(|&i| t.is_char_boundary(i))
        .find_map(|i| t[..i].parse::<f64>().ok())
        .unwrap_or(0.0)
}

impl KvOverride {
    /// Reads `KEY=TYPE:VALUE` as llama.cpp's `string_parse_kv_override`
    /// does. An empty key is refused (llama-quantize would take it for the
    /// end of its list and silently drop the overrides after it).
    ///
    /// ```
    /// use gguf_llama::quantize::keys::KvOverride;
    /// use gguf_core::format::OwnedValue;
    /// let o = KvOverride::parse("llama.context_length=int:-8192").unwrap();
    /// assert_eq!(o.value, OwnedValue::U32(8192));
    /// assert_eq!(KvOverride::parse("a=float:0.5x").unwrap().value, OwnedValue::F32(0.5));
    /// assert!(KvOverride::parse("a=bool:yes").is_err());
    /// assert!(KvOverride::parse("a=u8:1").is_err());
    /// ```
    pub fn parse(arg: &str) -> Result<KvOverride> {
        let bad = |reason: &str| {
            Error::Quantize(QuantizeError::KvOverride {
                arg: arg.to_owned(),
                reason: reason.to_owned(),
            })
        };
        let (key, rest) = arg
            .split_once('=')
            .ok_or_else(|| bad("expected KEY=TYPE:VALUE"))?;
        if key.is_empty() || key.len() >= 128 {
            return Err(bad("the key must have 1 to 127 bytes"));
        }
        let value = if let Some(v) = rest.strip_prefix("int:") {
            OwnedValue::U32(atol(v).unsigned_abs() as u32)
        } else if let Some(v) = rest.strip_prefix("float:") {
            OwnedValue::F32(atof(v) as f32)
        } else if let Some(v) = rest.strip_prefix("bool:") {
            match v {
                "true" => OwnedValue::Bool(true),
                "false" => OwnedValue::Bool(false),
                _ => return Err(bad("a bool is true or false")),
            }
        } else if let Some(v) = rest.strip_prefix("str:") {
            if v.len() > OVERRIDE_STR_MAX {
                return Err(bad("a string value cannot exceed 127 bytes"));
            }
            OwnedValue::String(v.to_owned())
        } else {
            return Err(bad("the type must be int, float, bool or str"));
        };
        Ok(KvOverride {
            key: key.to_owned(),
            value,
        })
    }
}

/// What llama-quantize records of the importance matrix it used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImatrixRecord {
    /// The path as given on the command line.
    pub file: String,
    /// The first dataset the matrix names.
    pub dataset: Option<String>,
    /// Entries used (after `--include-weights` / `--exclude-weights`).
    pub entries: u32,
    /// Chunks it was computed on (not recorded when 0).
    pub chunks: u32,
}

/// `s` cut to at most 127 bytes, as `strncpy` into llama.cpp's
/// 128-byte field cuts it (possibly inside a UTF-8 sequence: the bytes
/// are kept and decoded lossily).
fn cut_127(s: &str) -> String {
    let b = &s.as_bytes()[..s.len().min(OVERRIDE_STR_MAX)];
    String::from_utf8_lossy(b).into_owned()
}

/// The metadata of llama-quantize's output, in order, for `model`
/// quantized as `plan` says (its file type and, with `--prune-layers`,
/// block count), with the user's `--override-kv` values and the
/// importance matrix used.
///
/// ```
/// # fn main() -> gguf_llama::Result<()> {
/// use gguf_llama::quantize::keys::output_metadata;
/// let mut b = gguf_core::write::Builder::new();
/// b.set("general.architecture", "llama")?.set("general.file_type", 1u32)?.set("llama.block_count", 2u32)?;
/// let bytes = b.to_vec()?;
/// let file = gguf_core::GgufFile::open(&bytes)?;
/// let plan = gguf_llama::quantize::plan(&file, &gguf_llama::quantize::QuantizeOptions::new("Q4_K_M")?)?;
/// let meta = output_metadata(&file, &plan, &[], None);
/// let keys: Vec<&str> = meta.iter().map(|(k, _)| k.as_str()).collect();
/// assert_eq!(keys, ["general.architecture", "llama.block_count",
///                   "general.quantization_version", "general.file_type"]);
/// # Ok(()) }
/// ```
pub fn output_metadata(
    model: &impl Gguf,
    plan: &super::Plan,
    overrides: &[KvOverride],
    imatrix: Option<&ImatrixRecord>,
) -> Vec<(String, OwnedValue)> {
    let mut out: Vec<(String, OwnedValue)> = model
        .metadata()
        .map(|(k, v)| (k.to_owned(), OwnedValue::from_value(&v)))
        .collect();
    // llama.cpp's gguf_set_val_*: remove, then append.
    let set = |out: &mut Vec<(String, OwnedValue)>, key: &str, value: OwnedValue| {
        out.retain(|(k, _)| k != key);
        out.push((key.to_owned(), value));
    };
    set(
        &mut out,
        QUANTIZATION_VERSION,
        OwnedValue::U32(GGML_QNT_VERSION),
    );
    set(&mut out, FILE_TYPE, OwnedValue::U32(plan.file_type));
    out.retain(|(k, _)| !SPLIT_KEYS.contains(&k.as_str()));
    for o in overrides {
        set(&mut out, &o.key, o.value.clone());
    }
    if let Some(m) = imatrix {
        set(&mut out, IMATRIX_FILE, OwnedValue::String(cut_127(&m.file)));
        if let Some(d) = &m.dataset {
            set(&mut out, IMATRIX_DATASET, OwnedValue::String(cut_127(d)));
        }
        set(&mut out, IMATRIX_ENTRIES, OwnedValue::U32(m.entries));
        if m.chunks > 0 {
            set(&mut out, IMATRIX_CHUNKS, OwnedValue::U32(m.chunks));
        }
    }
    if let Some(n) = plan.block_count {
        let arch = model.value("general.architecture");
        let arch = arch.as_ref().and_then(|v| v.as_str()).unwrap_or_default();
        set(
            &mut out,
            &arch_key(key::block_count, arch),
            OwnedValue::U32(n),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use gguf_core::read::GgufFile;
    use gguf_core::write::Builder;

    #[test]
    fn existing_keys_move_last_split_keys_go_and_overrides_follow() {
        let mut b = Builder::new();
        b.set("general.architecture", "llama").unwrap();
        b.set("llama.block_count", 4u32).unwrap();
        b.set("general.quantization_version", 1u32).unwrap();
        b.set("general.file_type", 1u32).unwrap();
        b.set("split.no", 0u16).unwrap();
        b.set("split.count", 2u16).unwrap();
        b.set("split.tensors.count", 5i32).unwrap();
        b.set("general.name", "m").unwrap();
        let bytes = b.to_vec().unwrap();
        let file = GgufFile::open(&bytes).unwrap();
        let overrides = [
            KvOverride::parse("general.name=str:renamed").unwrap(),
            KvOverride::parse("x.flag=bool:true").unwrap(),
        ];
        let long = "p".repeat(200);
        let record = ImatrixRecord {
            file: long.clone(),
            dataset: Some("wiki.txt".into()),
            entries: 7,
            chunks: 0,
        };
        let plan = super::super::Plan {
            tensors: Vec::new(),
            file_type: 17,
            block_count: Some(3),
        };
        let meta = output_metadata(&file, &plan, &overrides, Some(&record));
        let keys: Vec<&str> = meta.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "general.architecture",
                "general.quantization_version",
                "general.file_type",
                "general.name",
                "x.flag",
                "quantize.imatrix.file",
                "quantize.imatrix.dataset",
                "quantize.imatrix.entries_count",
                "llama.block_count",
            ]
        );
        assert_eq!(meta[1].1, OwnedValue::U32(2));
        assert_eq!(meta[2].1, OwnedValue::U32(17));
        assert_eq!(meta[3].1, OwnedValue::String("renamed".into()));
        assert_eq!(meta[5].1, OwnedValue::String(long[..127].to_owned()));
        assert_eq!(meta[7].1, OwnedValue::U32(7));
        assert_eq!(meta[8].1, OwnedValue::U32(3));
    }

    #[test]
    fn overrides_read_as_llama_cpp_reads_them() {
        let v = |s: &str| KvOverride::parse(s).unwrap().value;
        assert_eq!(v("a=int:12abc"), OwnedValue::U32(12));
        assert_eq!(v("a=int:junk"), OwnedValue::U32(0));
        assert_eq!(v("a=int:4294967297"), OwnedValue::U32(1));
        assert_eq!(v("a=float: 1e3"), OwnedValue::F32(1000.0));
        assert_eq!(v("a=bool:false"), OwnedValue::Bool(false));
        assert_eq!(v("a=str:"), OwnedValue::String(String::new()));
        assert!(KvOverride::parse("=int:1").is_err());
        assert!(KvOverride::parse(&format!("{}=int:1", "k".repeat(128))).is_err());
        assert!(KvOverride::parse(&format!("a=str:{}", "s".repeat(128))).is_err());
        assert!(KvOverride::parse("a").is_err());
    }
}

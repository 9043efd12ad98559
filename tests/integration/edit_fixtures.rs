//! Files and helpers shared by the editor tests (`edit`, `edit_crash`,
//! `edit_interop`, `cli_edit`).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use gguf::write::SLACK_KEY;
use gguf::{format::OwnedValue, write::Builder};
use gguf::{Endian, GgmlType, Gguf, GgufFile};
use sha2::{Digest, Sha256};

/// What kind of model file to build.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    pub version: u32,
    pub endian: Endian,
    /// Bytes reserved with `Builder::reserve_metadata`.
    pub slack: Option<u64>,
    /// Length of `general.name`.
    pub name_len: usize,
}

impl Default for Spec {
    fn default() -> Self {
        Spec {
            version: 3,
            endian: Endian::Little,
            slack: None,
            name_len: 9,
        }
    }
}

impl Spec {
    pub fn slack(mut self, n: u64) -> Self {
        self.slack = Some(n);
        self
    }
    pub fn big_endian(mut self) -> Self {
        self.endian = Endian::Big;
        self
    }
    pub fn version(mut self, v: u32) -> Self {
        self.version = v;
        self
    }
    pub fn name_len(mut self, n: usize) -> Self {
        self.name_len = n;
        self
    }
}

pub use super::util::{noise, Rng};

/// The chat template used in the fixtures (about 300 bytes).
pub const TEMPLATE: &str = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/// A model-like file: typical metadata of several types (strings, u32,
/// f32, bool, u64, string and number arrays) and three tensors of
/// different types whose data is pseudo-random.
pub fn model(spec: Spec) -> Vec<u8> {
    let mut b = Builder::new();
    b.version(spec.version).unwrap().endian(spec.endian);
    b.set("general.architecture", "llama").unwrap();
    b.set("general.name", "n".repeat(spec.name_len)).unwrap();
    b.set("llama.context_length", 4096u32).unwrap();
    b.set("llama.rope.freq_base", 10000.0f32).unwrap();
    b.set("general.file_type", 1u32).unwrap();
    b.set("tokenizer.ggml.add_bos_token", true).unwrap();
    b.set("general.parameter_count", 123_456_789u64).unwrap();
    let tokens: Vec<String> = (0..300).map(|i| format!("tok{i}")).collect();
    b.set(
        "tokenizer.ggml.tokens",
        OwnedValue::from(tokens.iter().map(String::as_str).collect::<Vec<_>>()),
    )
    .unwrap();
    b.set(
        "tokenizer.ggml.token_type",
        (0..300).map(|i| i % 3).collect::<Vec<i32>>(),
    )
    .unwrap();
    b.set("tokenizer.chat_template", TEMPLATE).unwrap();
    b.set("llama.block_count", 2u32).unwrap();
    if let Some(n) = spec.slack {
        b.reserve_metadata(n).unwrap();
    }
    b.add_tensor("token_embd.weight", GgmlType::F32, &[16, 8], noise(1, 512))
        .unwrap();
    b.add_tensor(
        "blk.0.attn_q.weight",
        GgmlType::F16,
        &[16, 5],
        noise(2, 160),
    )
    .unwrap();
    b.add_tensor("output.weight", GgmlType::Q8_0, &[64, 3], noise(3, 34 * 6))
        .unwrap();
    let mut out = Vec::new();
    b.write(&mut out).unwrap();
    out
}

/// Writes `bytes` to `dir/name` and returns the path.
pub fn put(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

pub fn sha256(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Name and sha256 of each tensor's data, in info order.
pub fn tensor_hashes(file: &GgufFile<'_>) -> Vec<(String, String)> {
    file.tensors()
        .map(|t| (t.name().to_owned(), sha256(t.data().unwrap())))
        .collect()
}

/// Every metadata entry as (key, owned value), in file order.
pub fn metadata(file: &GgufFile<'_>) -> Vec<(String, OwnedValue)> {
    file.metadata()
        .map(|(k, v)| (k.to_owned(), OwnedValue::from_value(&v)))
        .collect()
}

/// Length of the slack array, if present.
pub fn slack_len(file: &GgufFile<'_>) -> Option<usize> {
    file.value(SLACK_KEY)
        .map(|v| v.as_array().expect("slack is an array").len())
}

/// Temporary files a failed rewrite could have left in `dir`.
pub fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| (n.starts_with(".gguf-") && n.ends_with(".tmp")) || n.ends_with(".journal"))
        .collect()
}

/// Padding bytes between the end of the tensor infos and the data.
pub fn padding(file: &GgufFile<'_>) -> u64 {
    file.data_offset() - file.header_len()
}

/// The whole file as `file` presents it: its header bytes, zero padding
/// (what the writer puts there) and its data section.
pub fn view(file: &GgufFile<'_>) -> Vec<u8> {
    let mut v = file.header_bytes().to_vec();
    v.resize(file.data_offset().min(file.file_len()) as usize, 0);
    v.extend_from_slice(file.data_section().expect("a file with data"));
    v
}

/// The error a crash-test hook stops a commit with.
pub fn simulated_crash() -> gguf::Error {
    gguf::Error::from(std::io::Error::other("simulated crash"))
}

/// True for the error of [`simulated_crash`].
pub fn is_simulated_crash<T>(r: &gguf::Result<T>) -> bool {
    matches!(r, Err(gguf::Error::Io { source: e, .. }) if e.to_string() == "simulated crash")
}

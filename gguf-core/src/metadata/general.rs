//! `general.*`: the keys every GGUF file may carry.

use crate::metadata::Metadata;

/// The `general.*` keys of the GGUF specification.
///
/// Only `general.architecture` is required; everything else is an
/// `Option` and is neither required when reading nor written when `None`.
/// Types are the specification's (`u32` for `quantization_version`,
/// `alignment` and `file_type`, strings for the rest), which is also what
/// gguf-py's `GGUFWriter` writes.
///
/// ```
/// # fn main() -> gguf_core::Result<()> {
/// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
/// use gguf_core::{FromMetadata, General, GgufFile};
/// let general = General::from_gguf(&GgufFile::open(&bytes)?)?;
/// assert_eq!(general.architecture, "llama");
/// assert_eq!(general.author, None);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Metadata)]
#[gguf(prefix = "general", crate = "crate")]
pub struct General {
    /// `general.architecture`: the model family (`llama`, `gpt2`, ...);
    /// the value of `{arch}` in architecture-specific keys.
    #[gguf(arch)]
    pub architecture: String,
    /// `general.quantization_version`: version of the quantization format;
    /// required by the spec only when some tensor is quantized.
    pub quantization_version: Option<u32>,
    /// `general.alignment`: alignment of the data section (32 when absent).
    pub alignment: Option<u32>,
    /// `general.type`: `model` or `adapter`.
    #[gguf(rename = "type")]
    pub kind: Option<String>,
    /// `general.name`: a human-readable name of the model.
    pub name: Option<String>,
    /// `general.author`.
    pub author: Option<String>,
    /// `general.version`: the model's version (a string, e.g. `v1.0`).
    pub version: Option<String>,
    /// `general.organization`.
    pub organization: Option<String>,
    /// `general.basename`: the base model name, for file naming.
    pub basename: Option<String>,
    /// `general.finetune`: what the base model was fine-tuned for.
    pub finetune: Option<String>,
    /// `general.description`.
    pub description: Option<String>,
    /// `general.quantized_by`: who quantized the model.
    pub quantized_by: Option<String>,
    /// `general.size_label`: size class such as `7B` or `8x7B`.
    pub size_label: Option<String>,
    /// `general.license`: an SPDX license expression.
    pub license: Option<String>,
    /// `general.url`: the model's home page.
    pub url: Option<String>,
    /// `general.source.url`: where the model was converted from.
    #[gguf(rename = "source.url")]
    pub source_url: Option<String>,
    /// `general.file_type`: the type of most tensors (llama.cpp's
    /// `llama_ftype`: 0 = all F32, 1 = mostly F16, 7 = mostly Q8_0, ...).
    pub file_type: Option<u32>,
    /// `general.tags`.
    pub tags: Option<Vec<String>>,
    /// `general.languages`: ISO 639 codes.
    pub languages: Option<Vec<String>>,
}

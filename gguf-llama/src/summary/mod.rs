//! What a model is, from its header alone: [`ModelSummary`].
//!
//! Everything here is a pure function of the metadata and the tensor
//! infos, reached through [`Gguf`]; tensor data is never read, so a
//! summary costs the same for a local file, a split model or a remote
//! header.
//!
//! ```
//! # fn main() -> gguf_llama::Result<()> {
//! # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
//! use gguf_core::GgufFile;
//! use gguf_llama::summary::ModelSummary;
//! let file = GgufFile::open(&bytes)?;
//! let s = ModelSummary::of(&file)?;
//! assert_eq!(s.architecture.as_deref(), Some("llama"));
//! assert_eq!(s.parameters, 8 * 4 + 8 * 2);
//! assert_eq!(s.context_length, Some(4096));
//! # Ok(()) }
//! ```

mod ftype;
mod hparams;
mod per_layer;
mod projector;

pub use hparams::ArchParams;
pub(crate) use hparams::{
    arch_key, key, loader_key, str_of, swa_layout, u32_of, LoaderParams, SwaPattern,
};
pub use per_layer::PerLayer;
pub use projector::{is_projector_type, ProjectorSummary, PROJECTOR_ARCHITECTURE, PROJECTOR_TYPES};

use crate::error::Result;
use gguf_core::format::file_type_name;
use gguf_core::format::ARCH_KEY;
use gguf_core::FromMetadata;
use gguf_core::GgmlType;
use gguf_core::Gguf;

/// A model at a glance: identity, size and the hyper-parameters that
/// decide its memory.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSummary {
    /// `general.architecture`.
    pub architecture: Option<String>,
    /// `general.type` (`model`, `adapter`, ...).
    pub model_type: Option<String>,
    /// `general.name`.
    pub name: Option<String>,
    /// Parameters: the elements of every tensor, as llama.cpp counts them
    /// (`model params`).
    pub parameters: u64,
    /// Bytes of tensor data, padding excluded (llama.cpp's `file size`).
    pub tensor_bytes: u64,
    /// `tensor_bytes * 8 / parameters` (llama.cpp's `BPW`).
    pub bits_per_weight: f64,
    /// `general.file_type`, or the value llama.cpp guesses.
    pub file_type: u32,
    /// True when `file_type` was guessed from the dominant tensor type.
    pub file_type_guessed: bool,
    /// The quantization label llama.cpp prints (`Q4_K - Medium`), or the
    /// dominant tensor type for a file type it does not know.
    pub quantization: String,
    /// Number of tensors of each type, most common first.
    pub tensor_types: Vec<(GgmlType, usize)>,
    /// `{arch}.*` hyper-parameters.
    pub params: ArchParams,
    /// Training context length.
    pub context_length: Option<u32>,
    /// Number of blocks.
    pub block_count: Option<u32>,
    /// Embedding width.
    pub embedding_length: Option<u32>,
    /// Vocabulary size (`{arch}.vocab_size`, else the token list's length).
    pub vocab_size: Option<u64>,
    /// `tokenizer.ggml.model`.
    pub tokenizer_model: Option<String>,
}

impl ModelSummary {
    /// Summarises a model from its header.
    ///
    /// Fails only when a key has a type llama.cpp would refuse.
    pub fn of(model: &(impl Gguf + ?Sized)) -> Result<Self> {
        let meta = model;
        let opt_str = |key: &str| meta.get_str(key).ok().map(String::from);
        let architecture = opt_str(ARCH_KEY);
        let params = match &architecture {
            Some(arch) => ArchParams::from_gguf_arch(meta, arch)?,
            None => ArchParams::default(),
        };

        let mut parameters = 0u64;
        let mut tensor_bytes = 0u64;
        let mut by_name: Vec<(&str, GgmlType)> = Vec::new();
        for t in model.tensors() {
            parameters = parameters.saturating_add(t.element_count());
            tensor_bytes = tensor_bytes.saturating_add(t.byte_size().unwrap_or(0));
            by_name.push((t.name(), t.ggml_type()));
        }
        let (counts, dominant) = count_types(by_name);

        let stored = meta.get::<u32>("general.file_type").ok();
        let file_type = stored.unwrap_or_else(|| ftype::guessed_file_type(dominant));
        let quantization = match file_type_name(file_type) {
            Some(name) if stored.is_some() => name.to_string(),
            Some(name) => format!("(guessed) {name}"),
            None => dominant.to_string(),
        };

        let vocab_size = params.vocab_size.map(u64::from).or_else(|| {
            meta.get_array("tokenizer.ggml.tokens")
                .ok()
                .map(|a| a.len() as u64)
        });
        let bits_per_weight = if parameters == 0 {
            0.0
        } else {
            tensor_bytes as f64 * 8.0 / parameters as f64
        };
        Ok(ModelSummary {
            model_type: opt_str("general.type"),
            name: opt_str("general.name"),
            architecture,
            parameters,
            tensor_bytes,
            bits_per_weight,
            file_type,
            file_type_guessed: stored.is_none(),
            quantization,
            tensor_types: counts,
            context_length: params.context_length,
            block_count: params.block_count,
            embedding_length: params.embedding_length,
            vocab_size,
            tokenizer_model: opt_str("tokenizer.ggml.model"),
            params,
        })
    }

    /// The parameter count as llama.cpp prints it (`270.43 M`, `6.74 B`).
    ///
    /// ```
    /// use gguf_llama::summary::ModelSummary;
    /// assert_eq!(ModelSummary::format_count(268_098_176), "268.10 M");
    /// assert_eq!(ModelSummary::format_count(36), "0.04 K");
    /// ```
    pub fn format_count(n: u64) -> String {
        let n = n as f64;
        if n < 1e6 {
            format!("{:.2} K", n * 1e-3)
        } else if n < 1e9 {
            format!("{:.2} M", n * 1e-6)
        } else if n < 1e12 {
            format!("{:.2} B", n * 1e-9)
        } else {
            format!("{:.2} T", n * 1e-12)
        }
    }
}

/// Tensor counts per type, most common first, and the type llama.cpp's
/// loader calls dominant: walking tensors in name order (its `std::map`),
/// the first type to reach the highest count.
fn count_types(mut by_name: Vec<(&str, GgmlType)>) -> (Vec<(GgmlType, usize)>, GgmlType) {
    by_name.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut counts: Vec<(GgmlType, usize)> = Vec::new();
    let (mut dominant, mut best) = (GgmlType::F32, 0);
    for (_, ty) in by_name {
        let n = match counts.iter_mut().find(|(t, _)| *t == ty) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                counts.push((ty, 1));
                1
            }
        };
        if n > best {
            best = n;
            dominant = ty;
        }
    }
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    (counts, dominant)
}

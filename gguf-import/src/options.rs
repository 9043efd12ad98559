//! What an import is told (the output type or preset, its options) and what it reports
//! (its stages, what it wrote): the types every part of the import names.

use std::path::PathBuf;
use std::time::Duration;

use gguf_core::write::SplitOptions;
use gguf_core::GgmlType;
use gguf_llama::quantize::{Imatrix, Preset, PRESETS};

use crate::error::{Error, ImportError, Result};

/// The converter's `--outtype` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutType {
    /// `f32`: every tensor F32.
    F32,
    /// `f16`: weight matrices F16.
    F16,
    /// `bf16`: weight matrices BF16.
    BF16,
    /// `q8_0`: weight matrices Q8_0 (F16 where a row is not whole blocks).
    Q8_0,
}

impl OutType {
    /// The type of the weight matrices.
    pub fn ggml_type(self) -> GgmlType {
        match self {
            OutType::F32 => GgmlType::F32,
            OutType::F16 => GgmlType::F16,
            OutType::BF16 => GgmlType::BF16,
            OutType::Q8_0 => GgmlType::Q8_0,
        }
    }

    /// `general.file_type` (llama.cpp's `LLAMA_FTYPE_*`).
    pub fn file_type(self) -> u32 {
        match self {
            OutType::F32 => 0,
            OutType::F16 => 1,
            OutType::Q8_0 => 7,
            OutType::BF16 => 32,
        }
    }
}

/// What to write: one of the converter's output types, or a quantization
/// preset (the converter's F16 output quantized by llama-quantize).
#[derive(Clone, Copy, Debug)]
pub enum Target {
    /// `f32`, `f16`, `bf16` or `q8_0`, as the converter writes them.
    Float(OutType),
    /// A `gguf quantize` / llama-quantize preset (`Q4_K_M`, `IQ4_XS`, ...).
    Preset(&'static Preset),
}

impl Target {
    /// `f32`, `f16`, `bf16`, `q8_0` (the converter's names, which win over
    /// the presets of the same names), or a preset name; any case.
    ///
    /// ```
    /// use gguf_import::{OutType, Target};
    /// assert!(matches!(Target::parse("F16")?, Target::Float(OutType::F16)));
    /// assert!(matches!(Target::parse("q4_k_m")?, Target::Preset(p) if p.name == "Q4_K_M"));
    /// assert!(Target::parse("q9").is_err());
    /// # Ok::<(), gguf_import::Error>(())
    /// ```
    pub fn parse(name: &str) -> Result<Target> {
        let float = match name.to_ascii_lowercase().as_str() {
            "f32" => Some(OutType::F32),
            "f16" => Some(OutType::F16),
            "bf16" => Some(OutType::BF16),
            "q8_0" => Some(OutType::Q8_0),
            _ => None,
        };
        if let Some(t) = float {
            return Ok(Target::Float(t));
        }
        PRESETS
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name) && !p.is_copy())
            .map(Target::Preset)
            .ok_or_else(|| {
                Error::Import(ImportError::UnknownType {
                    name: name.to_owned(),
                })
            })
    }
}

/// An import's settings.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ImportOptions<'i> {
    /// The output type.
    pub target: Target,
    /// The BPE pre-tokenizer's name, for a tokenizer whose hash is not in
    /// the converter's list (its `--pre-tokenizer` is a patch of its list).
    pub pre_tokenizer: Option<String>,
    /// Shards out (`--split-max-size`, `--split-max-tensors`), by gguf-py's
    /// rules; `None` for one file.
    pub split: Option<SplitOptions>,
    /// The importance matrix for a preset (llama-quantize's `--imatrix`).
    pub imatrix: Option<&'i Imatrix>,
    /// The importance matrix's path as given, recorded in
    /// `quantize.imatrix.file`.
    pub imatrix_file: String,
    /// Threads for a preset's quantization; 0 for every core; more than
    /// [`max_threads`](gguf_llama::quantize::max_threads) are that many.
    pub threads: usize,
    /// The base checkpoint of a LoRA adapter: when set, the directory
    /// given to [`import_model`](crate::import_model) is a PEFT adapter (`adapter_config.json`
    /// and `adapter_model.safetensors`), imported as
    /// `convert_lora_to_gguf.py --base` writes it.
    pub lora_base: Option<PathBuf>,
    /// Write the checkpoint's vision projector instead of its text model
    /// (the converter's `--mmproj`): `general.architecture` `clip`, read by
    /// llama.cpp's libmtmd beside the text model. Its target is one of the
    /// converter's types ([`Target::Float`]).
    pub mmproj: bool,
}

impl<'i> ImportOptions<'i> {
    /// An import to `target`, one file, no importance matrix.
    pub fn new(target: Target) -> Self {
        ImportOptions {
            target,
            pre_tokenizer: None,
            split: None,
            imatrix: None,
            imatrix_file: String::new(),
            threads: 0,
            lora_base: None,
            mmproj: false,
        }
    }
}

/// What an import is doing, for progress reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stage {
    /// Converting the checkpoint's tensors and writing them.
    Convert,
    /// Quantizing the converted file to a preset.
    Quantize,
}

/// What an import wrote.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ImportReport {
    /// `config.json`'s architecture.
    pub hf_architecture: String,
    /// The GGUF architecture.
    pub architecture: String,
    /// The files written (one, or the shards).
    pub files: Vec<PathBuf>,
    /// Metadata entries of the (first) file.
    pub metadata: usize,
    /// Tensors written.
    pub tensors: usize,
    /// Parameters (elements of every tensor).
    pub parameters: u64,
    /// Bytes written, all files.
    pub bytes: u64,
    /// How long it took.
    pub elapsed: Duration,
    /// What the import knowingly did not do as the converter would
    /// (e.g. a model card whose front matter is not a mapping).
    pub notes: Vec<String>,
}

//! A Hugging Face checkpoint that cannot be imported (feature `import`).

use std::path::PathBuf;

/// Why a Hugging Face checkpoint directory cannot become the GGUF file
/// llama.cpp's converter writes from it. Every variant names the file, and
/// the key or tensor when there is one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// `config.json` (or another JSON file of the checkpoint) is missing,
    /// is not JSON, or lacks a value the conversion needs.
    #[error("{}: {reason}", file.display())]
    Config {
        /// The file.
        file: PathBuf,
        /// What is wrong, and which key.
        reason: String,
    },
    /// The checkpoint's architecture has no table here.
    #[error("{}: architecture {arch:?} is not supported (supported: {supported})", file.display())]
    UnsupportedArchitecture {
        /// `config.json`.
        file: PathBuf,
        /// Its `architectures[0]`.
        arch: String,
        /// The architectures that are.
        supported: String,
    },
    /// A safetensors file is missing, unreadable or malformed, or the
    /// index and the files disagree.
    #[error("{}: {reason}", file.display())]
    Checkpoint {
        /// The file (a `.safetensors` part or `model.safetensors.index.json`).
        file: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A tensor of the checkpoint that cannot be converted: a data type
    /// or shape the architecture does not allow, or a name it cannot map.
    #[error("{}: tensor {tensor:?}: {reason}", file.display())]
    Tensor {
        /// The safetensors file holding it.
        file: PathBuf,
        /// Its name in the checkpoint.
        tensor: String,
        /// What is wrong.
        reason: String,
    },
    /// An output type that is neither one of the converter's `--outtype`
    /// values nor a quantization preset.
    #[error("unknown output type {name:?} (f32, f16, bf16, q8_0, or a `gguf quantize` preset such as q4_k_m)")]
    UnknownType {
        /// What was asked for.
        name: String,
    },
}

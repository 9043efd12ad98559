//! The crate's error: a Hugging Face checkpoint that cannot be imported (its
//! config, its safetensors files or one of their tensors), a tokenizer that
//! cannot become llama.cpp's `tokenizer.*` metadata, or the GGUF written.

use std::path::PathBuf;

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong importing a checkpoint.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing a GGUF file failed (I/O, its format, the
    /// writer): gguf-core's error, unchanged.
    #[error(transparent)]
    Gguf(#[from] gguf_core::Error),
    /// The checkpoint's config, safetensors files or tensors cannot be
    /// imported.
    #[error(transparent)]
    Import(#[from] ImportError),
    /// The checkpoint's tokenizer files cannot become the `tokenizer.*`
    /// metadata llama.cpp's converter writes.
    #[error(transparent)]
    Vocab(#[from] VocabError),
    /// Quantizing the imported model to a preset failed (an importance
    /// matrix that does not fit the model, ...): gguf-llama's error, its
    /// errors of the GGUF file below taken out as [`Error::Gguf`].
    #[error(transparent)]
    Quantize(gguf_llama::Error),
}

impl From<std::io::Error> for Error {
    /// An I/O error whose file is not known here.
    fn from(source: std::io::Error) -> Self {
        Error::Gguf(gguf_core::Error::from(source))
    }
}

impl From<gguf_llama::Error> for Error {
    /// gguf-core's errors stay [`Error::Gguf`]; gguf-llama's own are
    /// [`Error::Quantize`], whole.
    fn from(e: gguf_llama::Error) -> Self {
        match e {
            gguf_llama::Error::Gguf(e) => Error::Gguf(e),
            other => Error::Quantize(other),
        }
    }
}

impl Error {
    /// An I/O error about `path`.
    pub fn io(path: impl Into<std::path::PathBuf>, source: std::io::Error) -> Self {
        Error::Gguf(gguf_core::Error::io(path, source))
    }

    /// The I/O error inside, if this is one.
    pub fn io_error(&self) -> Option<&std::io::Error> {
        match self {
            Error::Gguf(e) => e.io_error(),
            _ => None,
        }
    }

    /// The file the error names: gguf-core's
    /// [`path`](gguf_core::Error::path) for an error of a GGUF file, the
    /// checkpoint's file (or directory) an import or tokenizer error
    /// names, gguf-llama's [`path`](gguf_llama::Error::path) for a
    /// quantization error; `None` when none is named.
    ///
    /// ```
    /// use gguf_import::{import_model, ImportOptions, OutType, Target};
    /// let options = ImportOptions::new(Target::Float(OutType::F16));
    /// let err = import_model("no/such/checkpoint", "out.gguf", &options, |_, _, _| {}).unwrap_err();
    /// assert!(err.path().is_some_and(|p| p.starts_with("no/such/checkpoint")), "{err}");
    /// ```
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            Error::Gguf(e) => e.path(),
            Error::Import(e) => e.path(),
            Error::Vocab(e) => e.path(),
            Error::Quantize(e) => e.path(),
        }
    }

    /// The byte offset in a file the error names: gguf-core's
    /// [`offset`](gguf_core::Error::offset) for an error of a GGUF file,
    /// gguf-llama's [`offset`](gguf_llama::Error::offset) for a
    /// quantization error; `None` otherwise (a checkpoint's errors say
    /// where in their message: a key, a tensor).
    ///
    /// ```
    /// let err = gguf_import::Error::from(gguf_core::GgufFile::open(&b"GGUF"[..]).unwrap_err());
    /// assert_eq!(err.offset(), Some(4));
    /// ```
    pub fn offset(&self) -> Option<u64> {
        match self {
            Error::Gguf(e) => e.offset(),
            Error::Quantize(e) => e.offset(),
            Error::Import(_) | Error::Vocab(_) => None,
        }
    }
}

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
    /// A vision projector (`mmproj`) was asked of an architecture that
    /// has none here.
    #[error("{}: architecture {arch:?} has no vision projector to write (--mmproj: {supported})", file.display())]
    NoProjector {
        /// `config.json`.
        file: PathBuf,
        /// Its `architectures[0]`.
        arch: String,
        /// The architectures that have one.
        supported: String,
    },
    /// A vision projector was asked as a quantization preset: the
    /// converter writes it as f32, f16, bf16 or q8_0 only.
    #[error("a vision projector (--mmproj) is written as f32, f16, bf16 or q8_0, as the converter writes it, not as {name}")]
    ProjectorType {
        /// The preset asked for.
        name: String,
    },
}

impl ImportError {
    /// The file the error names (see [`Error::path`]).
    fn path(&self) -> Option<&std::path::Path> {
        match self {
            ImportError::Config { file, .. }
            | ImportError::UnsupportedArchitecture { file, .. }
            | ImportError::Checkpoint { file, .. }
            | ImportError::Tensor { file, .. }
            | ImportError::NoProjector { file, .. } => Some(file),
            ImportError::UnknownType { .. } | ImportError::ProjectorType { .. } => None,
        }
    }
}

/// Why the tokenizer files of a Hugging Face checkpoint cannot be turned
/// into the `tokenizer.*` keys llama.cpp's converter writes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VocabError {
    /// A tokenizer file is missing something, or holds a value of the wrong
    /// type or out of range (the key or token index is in `reason`).
    #[error("{}: {reason}", file.display())]
    BadFile {
        /// The file (`tokenizer.json`, `tokenizer.model`, `config.json`, ...).
        file: PathBuf,
        /// What is wrong, and where in the file.
        reason: String,
    },
    /// The BPE pre-tokenizer's hash is not in the converter's list of known
    /// tokenizers, and no name was given for it.
    #[error(
        "{}: the BPE pre-tokenizer is not one llama.cpp's converter knows (check-text hash {hash}); \
         if it splits text like a known one, pass --pre-tokenizer NAME (e.g. llama-bpe, qwen2, gpt-2)",
        file.display()
    )]
    UnknownPreTokenizer {
        /// The `tokenizer.json` hashed.
        file: PathBuf,
        /// The converter's `chkhsh`: sha256 of the ids' Python list text.
        hash: String,
    },
    /// A pre-tokenizer name given by the user that llama.cpp does not know.
    #[error("pre-tokenizer {name:?} is not a name llama.cpp knows (e.g. llama-bpe, qwen2, gpt-2, default)")]
    UnknownPreTokenizerName {
        /// The name given.
        name: String,
    },
    /// No tokenizer file the converter would read for this architecture.
    #[error("{}: no tokenizer found ({expected})", dir.display())]
    NoTokenizer {
        /// The checkpoint directory.
        dir: PathBuf,
        /// The files looked for.
        expected: String,
    },
}

impl VocabError {
    /// The file or directory the error names (see [`Error::path`]).
    fn path(&self) -> Option<&std::path::Path> {
        match self {
            VocabError::BadFile { file, .. } | VocabError::UnknownPreTokenizer { file, .. } => {
                Some(file)
            }
            VocabError::NoTokenizer { dir, .. } => Some(dir),
            VocabError::UnknownPreTokenizerName { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Error;

    #[test]
    fn gguf_llama_errors_are_kept_whole_and_core_errors_lifted() {
        let e = Error::from(gguf_llama::Error::Estimate {
            reason: "why".into(),
        });
        assert!(
            matches!(&e, Error::Quantize(gguf_llama::Error::Estimate { reason }) if reason == "why"),
            "{e:?}"
        );
        assert_eq!(e.to_string(), "estimate: why");
        assert_eq!(
            (e.path(), e.offset(), e.io_error().is_none()),
            (None, None, true)
        );

        let core = gguf_core::GgufFile::open(&b"GGUF"[..]).unwrap_err();
        let e = Error::from(gguf_llama::Error::Gguf(core));
        assert!(matches!(e, Error::Gguf(_)), "{e:?}");
        assert_eq!(e.offset(), Some(4));
    }
}

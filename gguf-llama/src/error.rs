//! The crate's error: quantization settings and importance matrices that
//! cannot be used, settings llama.cpp would refuse, or the GGUF file below.

pub(crate) use gguf_core::error::{CodecError, LookupError};

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong applying llama.cpp's policies to a model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing the GGUF file failed (I/O, its format, a
    /// missing key or tensor, the writer): gguf-core's error, unchanged.
    #[error(transparent)]
    Gguf(#[from] gguf_core::Error),
    /// A quantization preset, override, model or importance matrix that
    /// llama-quantize's policy cannot work with.
    #[error(transparent)]
    Quantize(#[from] QuantizeError),
    /// Settings llama.cpp would refuse for this model (a quantized V cache
    /// without flash attention, a cache type whose blocks do not divide
    /// the row).
    #[error("estimate: {reason}")]
    Estimate {
        /// Why.
        reason: String,
    },
}

impl From<std::io::Error> for Error {
    /// An I/O error whose file is not known here.
    fn from(source: std::io::Error) -> Self {
        Error::Gguf(gguf_core::Error::from(source))
    }
}

impl Error {
    /// An I/O error about `path`.
    pub fn io(path: impl Into<std::path::PathBuf>, source: std::io::Error) -> Self {
        Error::Gguf(gguf_core::Error::io(path, source))
    }

    /// The file the error names: gguf-core's [`path`](gguf_core::Error::path)
    /// for an error of the file below, the importance matrix file of
    /// [`QuantizeError::ImatrixFile`]; `None` otherwise.
    ///
    /// ```
    /// let err = gguf_llama::quantize::Imatrix::read("no/such.imatrix").unwrap_err();
    /// assert_eq!(err.path(), Some(std::path::Path::new("no/such.imatrix")));
    /// ```
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            Error::Gguf(e) => e.path(),
            Error::Quantize(QuantizeError::ImatrixFile { path, .. }) => Some(path),
            Error::Quantize(_) | Error::Estimate { .. } => None,
        }
    }

    /// The byte offset in the file the error names: gguf-core's
    /// [`offset`](gguf_core::Error::offset) for an error of the file below
    /// (an importance matrix in GGUF included); `None` otherwise.
    ///
    /// ```
    /// let err = gguf_llama::Error::from(gguf_core::GgufFile::open(&b"GGUF"[..]).unwrap_err());
    /// assert_eq!(err.offset(), Some(4));
    /// ```
    pub fn offset(&self) -> Option<u64> {
        match self {
            Error::Gguf(e) => e.offset(),
            Error::Quantize(QuantizeError::ImatrixFile { source, .. }) => source.offset(),
            Error::Quantize(_) | Error::Estimate { .. } => None,
        }
    }
}

/// A preset, type, pattern, model or importance matrix that
/// llama-quantize's policy cannot work with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum QuantizeError {
    /// Not a preset name nor number llama-quantize lists.
    #[error("unknown quantization type {name:?} (see `llama-quantize --help` for the list)")]
    UnknownPreset {
        /// What was asked for.
        name: String,
    },
    /// Not a ggml type name.
    #[error("invalid ggml type {name:?}")]
    UnknownType {
        /// What was asked for.
        name: String,
    },
    /// A `--tensor-type NAME=TYPE` argument that cannot be read.
    #[error("tensor type {arg:?}: {reason}")]
    TensorType {
        /// The argument.
        arg: String,
        /// Why.
        reason: String,
    },
    /// A `--override-kv KEY=TYPE:VALUE` argument that cannot be read.
    #[error("metadata override {arg:?}: {reason}")]
    KvOverride {
        /// The argument.
        arg: String,
        /// Why.
        reason: String,
    },
    /// The model lacks what the per-tensor rules need, or a tensor's
    /// layer cannot be told.
    #[error("cannot choose tensor types: {reason}")]
    Model {
        /// Why.
        reason: String,
    },
    /// A tensor's rows are not whole blocks of its type, and
    /// llama-quantize defines no fallback for that type.
    #[error("tensor {tensor:?}: rows of {row} elements are not whole {ty} blocks, and no fallback type is defined for {ty}")]
    NoFallback {
        /// The tensor.
        tensor: String,
        /// Elements per row.
        row: u64,
        /// The type chosen for it.
        ty: gguf_core::GgmlType,
    },
    /// An importance matrix file that cannot be read.
    #[error("importance matrix: {reason}")]
    Imatrix {
        /// What is wrong, and where.
        reason: String,
    },
    /// The importance matrix file at `path` cannot be read: `source` says
    /// why (an I/O error, a [`QuantizeError::Imatrix`], or the GGUF
    /// reader's error for a GGUF matrix). Shown as `PATH: why`, the file
    /// named once.
    #[error("{}", file_message(path, source))]
    ImatrixFile {
        /// The file.
        path: std::path::PathBuf,
        /// What went wrong reading it.
        #[source]
        source: Box<super::Error>,
    },
    /// An importance matrix entry that does not fit the model's tensor.
    #[error("importance matrix entry for tensor {tensor:?}: {reason}")]
    ImatrixMismatch {
        /// The tensor.
        tensor: String,
        /// What does not fit.
        reason: String,
    },
    /// A tensor whose target type cannot be made without an importance
    /// matrix, and none (or no entry for it) was given: llama-quantize
    /// refuses, as the result would be garbage.
    #[error("this quantization requires an importance matrix: tensor {tensor:?} would become {ty}, which cannot be made without one (at so few bits per weight the result would be garbage); pass --imatrix with a matrix that has an entry for it")]
    ImatrixRequired {
        /// The tensor.
        tensor: String,
        /// Its target type.
        ty: gguf_core::GgmlType,
    },
    /// A quantized tensor would be quantized again without permission.
    #[error("tensor {tensor:?} is already quantized ({from}): requantizing it to {to} compounds the error of both encodings, so it is refused unless requantizing is allowed (--allow-requantize)")]
    Requantize {
        /// The tensor.
        tensor: String,
        /// Its type in the input.
        from: gguf_core::GgmlType,
        /// The type it would get.
        to: gguf_core::GgmlType,
    },
    /// A tensor that cannot be converted to its target type: no decoder
    /// for its type, or no encoder for the target.
    #[error("tensor {tensor:?}: cannot convert {from} to {to}: {reason}")]
    Unconvertible {
        /// The tensor.
        tensor: String,
        /// Its type in the input.
        from: gguf_core::GgmlType,
        /// The type it would get.
        to: gguf_core::GgmlType,
        /// Why.
        reason: String,
    },
}

/// `path: what went wrong`, without naming the path twice when the error
/// inside is an I/O error that already names it.
fn file_message(path: &std::path::Path, source: &super::Error) -> String {
    match source {
        super::Error::Gguf(gguf_core::Error::Io { path: Some(p), .. }) if p == path => {
            source.to_string()
        }
        _ => format!("{}: {source}", path.display()),
    }
}

//! [`LoadProblem`]: one thing llama.cpp's model loader would refuse.

use std::fmt;

use gguf_core::GgmlType;

/// One thing llama.cpp's model loader would refuse. Names from the file
/// are shown quoted and escaped (`{:?}`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadProblem {
    /// No `general.architecture`: llama.cpp cannot tell which model to
    /// build.
    NoArchitecture,
    /// An architecture llama.cpp builds no model for.
    UnknownArchitecture {
        /// `general.architecture`.
        name: String,
    },
    /// A key llama.cpp requires is missing.
    MissingKey {
        /// The key.
        key: String,
    },
    /// A key has another type than the one llama.cpp reads it as.
    WrongType {
        /// The key.
        key: String,
        /// What llama.cpp reads (`"u32"`, `"an array of strings"`).
        expected: &'static str,
        /// What the file holds (`"string"`, `"array of u64"`).
        found: String,
    },
    /// A key has the right type but a value llama.cpp refuses.
    BadValue {
        /// The key.
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A tensor the architecture requires is missing.
    MissingTensor {
        /// The tensor.
        tensor: String,
    },
    /// A tensor's shape is not the one the hyper-parameters give.
    WrongShape {
        /// The tensor.
        tensor: String,
        /// The shape llama.cpp expects, innermost dimension first.
        expected: Vec<u64>,
        /// The shape in the file.
        found: Vec<u64>,
    },
    /// A tensor llama.cpp does not load for this architecture; it refuses
    /// files with tensors it did not load ("wrong number of tensors").
    UnusedTensor {
        /// The tensor.
        tensor: String,
    },
    /// Tensors of a type ggml uses only for activations, the other
    /// operand of a matrix multiplication (Q8_1, Q8_K: see
    /// [`is_activation_type`](gguf_core::codec::is_activation_type)), one
    /// problem per type. llama.cpp loads the file, but its backends have no
    /// matrix multiplication (the CPU backend no dot product) with such a
    /// tensor as the weight: the model cannot run. llama-quantize has no
    /// file type for these types and never writes them.
    ActivationType {
        /// The type.
        ty: GgmlType,
        /// The tensors of that type, in file order.
        tensors: Vec<String>,
    },
}

impl LoadProblem {
    /// True for a problem llama.cpp meets only when it runs the model,
    /// after loading the file without complaint
    /// ([`ActivationType`](LoadProblem::ActivationType)).
    pub fn found_when_running(&self) -> bool {
        matches!(self, LoadProblem::ActivationType { .. })
    }
}

impl fmt::Display for LoadProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadProblem::NoArchitecture => {
                write!(f, "general.architecture is missing: llama.cpp cannot tell which model this is")
            }
            LoadProblem::UnknownArchitecture { name } => {
                write!(f, "architecture {name:?} is not one llama.cpp knows")
            }
            LoadProblem::MissingKey { key } => {
                write!(f, "key {key:?} is missing; llama.cpp requires it")
            }
            LoadProblem::WrongType {
                key,
                expected,
                found,
            } => write!(f, "key {key:?} has type {found}; llama.cpp reads it as {expected}"),
            LoadProblem::BadValue { key, reason } => write!(f, "key {key:?} {reason}"),
            LoadProblem::MissingTensor { tensor } => {
                write!(f, "tensor {tensor:?} is missing; llama.cpp requires it")
            }
            LoadProblem::WrongShape {
                tensor,
                expected,
                found,
            } => write!(
                f,
                "tensor {tensor:?} has shape {found:?}; llama.cpp expects {expected:?} from the hyper-parameters"
            ),
            LoadProblem::UnusedTensor { tensor } => write!(
                f,
                "tensor {tensor:?} is not one llama.cpp loads for this architecture \
                 (it refuses files with tensors it does not load)"
            ),
            LoadProblem::ActivationType { ty, tensors } => {
                const SHOWN: usize = 3;
                let n = tensors.len();
                let names: Vec<String> = tensors.iter().take(SHOWN).map(|t| format!("{t:?}")).collect();
                let more = match n.saturating_sub(SHOWN) {
                    0 => String::new(),
                    more => format!(", ... ({more} more)"),
                };
                write!(
                    f,
                    "{n} tensor{} of type {ty} ({}{more}), a type ggml uses only for \
                     activations: llama.cpp loads the file but cannot run the model, as it has \
                     no matrix multiplication with {ty} weights (llama-quantize never writes \
                     {ty})",
                    if n == 1 { "" } else { "s" },
                    names.join(", ")
                )
            }
        }
    }
}

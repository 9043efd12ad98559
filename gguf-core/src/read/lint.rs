//! What llama.cpp would refuse in a file this crate accepts.

use std::fmt;

use crate::format::{align_up, Endian, Value, ValueType};
use crate::read::Gguf;

use super::GgufFile;

/// One thing llama.cpp's loader (`gguf.cpp`) would refuse.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LintIssue {
    /// llama.cpp reads versions 2 and 3 only.
    Version1,
    /// llama.cpp refuses big-endian files on little-endian hosts.
    BigEndian,
    /// A metadata array whose elements are arrays.
    NestedArray {
        /// The key.
        key: String,
    },
    /// Tensor names must be shorter than 64 bytes (`GGML_MAX_NAME`).
    LongTensorName {
        /// The name.
        tensor: String,
    },
    /// A type id ggml no longer (or does not yet) know.
    UnknownType {
        /// The tensor.
        tensor: String,
        /// Its type id.
        type_id: u32,
    },
    /// llama.cpp requires each tensor to start exactly where the previous
    /// one ends, padded to the alignment.
    NonContiguous {
        /// The tensor.
        tensor: String,
        /// Offset llama.cpp expects.
        expected: u64,
        /// Offset in the file.
        found: u64,
    },
}

impl fmt::Display for LintIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LintIssue::Version1 => write!(f, "GGUF version 1 is not read by llama.cpp"),
            LintIssue::BigEndian => write!(
                f,
                "big-endian files are not read by llama.cpp on little-endian hosts"
            ),
            LintIssue::NestedArray { key } => {
                write!(f, "metadata key {key:?} holds a nested array")
            }
            LintIssue::LongTensorName { tensor } => {
                write!(f, "tensor name {tensor:?} is 64 bytes or longer")
            }
            LintIssue::UnknownType { tensor, type_id } => write!(
                f,
                "tensor {tensor:?} has unknown or removed type id {type_id}"
            ),
            LintIssue::NonContiguous {
                tensor,
                expected,
                found,
            } => {
                write!(
                    f,
                    "tensor {tensor:?} is at data offset {found}, llama.cpp expects {expected}"
                )
            }
        }
    }
}

impl GgufFile<'_> {
    /// Lists what llama.cpp would refuse in this (valid) file, so files can
    /// be checked before shipping. An empty list means llama.cpp's reader
    /// accepts it.
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// let file = gguf_core::GgufFile::open(&bytes)?;
    /// assert!(file.lint_llama_cpp().is_empty());
    /// # Ok(()) }
    /// ```
    pub fn lint_llama_cpp(&self) -> Vec<LintIssue> {
        let mut issues = Vec::new();
        if self.version() == 1 {
            issues.push(LintIssue::Version1);
        }
        if self.endian() == Endian::Big {
            issues.push(LintIssue::BigEndian);
        }
        for (key, value) in self.metadata() {
            if let Value::Array(a) = value
                && a.element_type() == ValueType::Array
            {
                issues.push(LintIssue::NestedArray { key: key.into() });
            }
        }
        let mut expected = 0u64;
        for t in self.tensors() {
            if t.name().len() > crate::format::MAX_TENSOR_NAME {
                issues.push(LintIssue::LongTensorName {
                    tensor: t.name().into(),
                });
            }
            let Ok(size) = t.byte_size() else {
                issues.push(LintIssue::UnknownType {
                    tensor: t.name().into(),
                    type_id: t.ggml_type().id(),
                });
                break; // later offsets cannot be predicted
            };
            if t.offset() != expected {
                issues.push(LintIssue::NonContiguous {
                    tensor: t.name().into(),
                    expected,
                    found: t.offset(),
                });
            }
            expected =
                align_up(t.offset().saturating_add(size), self.alignment()).unwrap_or(u64::MAX);
        }
        issues
    }
}

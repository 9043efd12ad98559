//! GGUF format types, reader, writer, editor and tensor codecs.

pub mod error;
pub mod format;
pub mod tensor;

pub use error::{Error, Result};
pub use format::{Ctx, Endian, GgmlType};

//! GGUF format types, reader, writer, editor and tensor codecs.

pub mod format;

pub use format::GgmlType;

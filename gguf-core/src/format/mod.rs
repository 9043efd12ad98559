//! Wire types of the GGUF format: what the bytes mean, not how we use them.

pub mod ctx;
pub mod ggml_type;

pub use ctx::{Ctx, Endian};
pub use ggml_type::GgmlType;

//! Wire types of the GGUF format: what the bytes mean, not how we use them.
//!
//! A GGUF file is, in order: a [`header`] (magic, version, counts),
//! the metadata key-value pairs ([`Value`]), the [tensor infos](tensor_info),
//! padding to the alignment, and the tensor data.

pub mod array;
pub mod ctx;
pub(crate) mod cursor;
pub(crate) mod element;
mod file_type;
mod ggml_type;
pub mod header;
pub mod layout;
pub mod metadata;
pub mod owned;
pub mod tensor_info;
pub mod value;
pub mod wire;

pub use array::{ArrayIter, ArrayView, Scalar, StrIter, TypedIter};
pub use ctx::{Ctx, Endian};
pub use element::TensorElement;
pub use file_type::{file_type_encoding, file_type_name, file_type_of};
pub use ggml_type::GgmlType;
pub use header::HeaderWire;
pub use layout::{align_up, tensor_nbytes, DEFAULT_ALIGNMENT, MAX_DIMS, MAX_TENSOR_NAME};
pub use metadata::{ArrayHeaderWire, KvHeaderWire};
pub use owned::{OwnedArray, OwnedValue};
pub use tensor_info::TensorInfoWire;
pub use value::{Value, ValueType};
pub use wire::{Count, Dims, GgufStr, GgufString, StrSpan};

/// The four bytes every GGUF file starts with.
pub const MAGIC: [u8; 4] = *b"GGUF";

/// The metadata key that sets the alignment of the data section.
pub const ALIGNMENT_KEY: &str = "general.alignment";
/// Key of the architecture (`llama`, ...), the prefix of the model's
/// hyper-parameter keys.
pub const ARCH_KEY: &str = "general.architecture";

#[cfg(test)]
mod tests;

//! Wire types of the GGUF format: what the bytes mean, not how we use them.
//!
//! A GGUF file is, in order: a header (magic, version, counts), the
//! metadata key-value pairs ([`Value`], each behind a key and a type tag),
//! the tensor infos, padding to the alignment, and the tensor data. The
//! wire structs of the header, a key-value header, an array header and a
//! tensor info, with their derived binrw codecs, are private to the crate:
//! binrw's types appear in no public item, so a binrw release is not a
//! breaking change of ours. [`WireFormat`] (version and byte order) is
//! what the reader and writer carry for them.
//!
//! The items every user needs ([`Value`],
//! [`ValueType`], [`ArrayView`],
//! [`GgmlType`], [`Endian`]) are defined
//! here and named at the crate root; this module names the rest.

pub(crate) mod array;
pub(crate) mod cursor;
pub(crate) mod element;
pub(crate) mod file_type;
pub(crate) mod ggml_type;
pub(crate) mod header;
pub(crate) mod layout;
pub(crate) mod metadata;
pub(crate) mod owned;
pub(crate) mod tensor_info;
pub(crate) mod value;
pub(crate) mod wire;
pub(crate) mod wire_format;

pub(crate) use array::ArrayView;
pub use array::{ArrayIter, Scalar, StrIter, TypedIter};
pub use element::TensorElement;
pub use file_type::{file_type_encoding, file_type_name, file_type_of};
pub(crate) use ggml_type::GgmlType;
pub(crate) use header::HeaderWire;
pub use layout::{
    align_up, element_count, tensor_nbytes, SizeError, DEFAULT_ALIGNMENT, MAX_DIMS, MAX_TENSOR_NAME,
};
pub(crate) use metadata::{ArrayHeaderWire, KvHeaderWire};
pub use owned::{OwnedArray, OwnedValue};
pub(crate) use tensor_info::TensorInfoWire;
pub(crate) use value::{Value, ValueType};
#[cfg(any(test, feature = "testing"))]
pub(crate) use wire::GgufString;
pub(crate) use wire::{Count, Dims, GgufStr, StrSpan};
pub(crate) use wire_format::Endian;
pub use wire_format::WireFormat;

/// The four bytes every GGUF file starts with.
pub const MAGIC: [u8; 4] = *b"GGUF";

/// The metadata key that sets the alignment of the data section.
pub const ALIGNMENT_KEY: &str = "general.alignment";
/// Key of the architecture (`llama`, ...), the prefix of the model's
/// hyper-parameter keys.
pub const ARCH_KEY: &str = "general.architecture";

#[cfg(test)]
mod tests;

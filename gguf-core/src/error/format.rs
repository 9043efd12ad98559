//! The hostile-input errors: where a file breaks the GGUF format.

use crate::format::GgmlType;

/// The bytes are not a valid GGUF file (or not one this reader accepts):
/// each variant says where, with the byte `offset` from the start of the
/// file and the key or tensor being read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// The file does not start with the magic bytes `GGUF`.
    #[error("reading header: bad magic {found:02x?} at offset 0, expected \"GGUF\"")]
    BadMagic {
        /// The four bytes found.
        found: [u8; 4],
    },
    /// The version is not 1, 2 or 3.
    #[error("reading header: unsupported GGUF version {version} at offset 4 (supported: 1, 2, 3)")]
    UnsupportedVersion {
        /// The version read (after byte-order detection).
        version: u32,
    },
    /// The file ends before a field it declares.
    #[error("reading {what}: file truncated at offset {offset}, {needed} more bytes needed")]
    Truncated {
        /// What was being read, with the key or tensor name.
        what: String,
        /// Where the missing bytes start.
        offset: u64,
        /// How many bytes were needed there.
        needed: u64,
    },
    /// A count or length cannot fit in the bytes that remain in the file.
    #[error("reading {what}: count {count} at offset {offset} needs at least {min_bytes} bytes but only {remaining} remain")]
    CountTooLarge {
        /// What was being counted.
        what: String,
        /// Offset of the count field.
        offset: u64,
        /// The count read.
        count: u64,
        /// Lower bound of the bytes the count implies (saturating).
        min_bytes: u64,
        /// Bytes left in the file after the count.
        remaining: u64,
    },
    /// A metadata key of length zero.
    #[error("reading metadata: empty key at offset {offset}")]
    EmptyKey {
        /// Offset of the key.
        offset: u64,
    },
    /// The same key appears twice.
    #[error("reading metadata: duplicate key {key:?} at offset {offset}")]
    DuplicateKey {
        /// Offset of the second occurrence.
        offset: u64,
        /// The key.
        key: String,
    },
    /// A value or array element type id above 12.
    #[error("reading metadata key {key:?}: invalid value type {type_id} at offset {offset}")]
    InvalidValueType {
        /// Offset of the type field.
        offset: u64,
        /// The key holding the value.
        key: String,
        /// The id read.
        type_id: u32,
    },
    /// A string that is not valid UTF-8.
    #[error("reading {what}: invalid UTF-8 at offset {offset}")]
    InvalidUtf8 {
        /// What was being read.
        what: String,
        /// Offset of the string bytes.
        offset: u64,
    },
    /// A bool byte other than 0 or 1.
    #[error(
        "reading metadata key {key:?}: bool byte {byte} at offset {offset} is neither 0 nor 1"
    )]
    InvalidBool {
        /// Offset of the byte.
        offset: u64,
        /// The key.
        key: String,
        /// The byte read.
        byte: u8,
    },
    /// Arrays nested deeper than [`Limits::max_array_depth`](crate::read::Limits).
    #[error("reading metadata key {key:?}: arrays nested deeper than {limit} at offset {offset}")]
    ArrayTooDeep {
        /// Offset of the too-deep array.
        offset: u64,
        /// The key.
        key: String,
        /// The limit.
        limit: u32,
    },
    /// `general.alignment` is present but not a `u32`.
    #[error(
        "reading metadata: general.alignment at offset {offset} has type {found}, expected u32"
    )]
    AlignmentType {
        /// Offset of the value.
        offset: u64,
        /// The type found.
        found: crate::format::ValueType,
    },
    /// An alignment that is zero or not a power of two.
    #[error("alignment {alignment} (at offset {offset}) is not a power of two")]
    InvalidAlignment {
        /// Offset of the value, or 0 when given through the API.
        offset: u64,
        /// The value.
        alignment: u64,
    },
    /// The same tensor name appears twice.
    #[error("reading tensor infos: duplicate tensor name {tensor:?} at offset {offset}")]
    DuplicateTensor {
        /// Offset of the second info.
        offset: u64,
        /// The name.
        tensor: String,
    },
    /// More than 4 dimensions.
    #[error(
        "reading tensor {tensor:?}: {n_dims} dimensions at offset {offset}, at most 4 allowed"
    )]
    TooManyDims {
        /// Offset of the n_dims field.
        offset: u64,
        /// The tensor.
        tensor: String,
        /// The count read.
        n_dims: u32,
    },
    /// A dimension above `i64::MAX`, or a product of dimensions that overflows.
    #[error(
        "reading tensor {tensor:?}: shape {shape:?} at offset {offset} overflows the element count"
    )]
    ElementCountOverflow {
        /// Offset of the dims.
        offset: u64,
        /// The tensor.
        tensor: String,
        /// The dims read.
        shape: Vec<u64>,
    },
    /// Element count times type size overflows.
    #[error("tensor {tensor:?}: byte size of {elements} elements of {ty} overflows")]
    ByteSizeOverflow {
        /// The tensor.
        tensor: String,
        /// Element count.
        elements: u64,
        /// Its type.
        ty: GgmlType,
    },
    /// The first dimension is not a multiple of the type's block size.
    #[error(
        "tensor {tensor:?}: row length {row} is not a multiple of the {ty} block size {block}"
    )]
    RowNotBlockMultiple {
        /// The tensor.
        tensor: String,
        /// First dimension.
        row: u64,
        /// The type.
        ty: GgmlType,
        /// Its block size.
        block: u64,
    },
    /// A tensor's data offset is not a multiple of the alignment.
    #[error(
        "tensor {tensor:?}: data at offset {offset} is not a multiple of the alignment {alignment} \
         (its info says {relative} into the data section)"
    )]
    MisalignedTensor {
        /// The tensor.
        tensor: String,
        /// Where its data would start in the file: the data section's start
        /// plus `relative` (saturating).
        offset: u64,
        /// The offset its tensor info stores, relative to the data section.
        relative: u64,
        /// The file's alignment.
        alignment: u64,
    },
    /// A tensor's data extends past the end of the file.
    #[error("tensor {tensor:?}: data at file offsets {offset}..{end} is past the end of the file ({file_len} bytes)")]
    TensorOutOfBounds {
        /// The tensor.
        tensor: String,
        /// Absolute start offset (saturating).
        offset: u64,
        /// Absolute end offset (saturating).
        end: u64,
        /// File length.
        file_len: u64,
    },
    /// Two tensors' data ranges overlap.
    #[error("tensors {first:?} and {second:?} overlap: {second:?} starts at data offset {second_start}, before {first:?} ends at {first_end}")]
    OverlappingTensors {
        /// The tensor that starts first.
        first: String,
        /// Where it ends (relative to the data section).
        first_end: u64,
        /// The tensor that starts inside it.
        second: String,
        /// Where it starts.
        second_start: u64,
    },
    /// The header region would need more bytes than the reader allows
    /// (`OpenOptions::max_header_len`, or
    /// `ReadOptions::max_header_len` of a `HeaderParser`), so it was not read.
    #[error("reading header: the header region needs at least {needed} bytes, more than the limit of {limit}")]
    HeaderTooLarge {
        /// Lower bound of the bytes the header region needs.
        needed: u64,
        /// The limit.
        limit: u64,
    },
}

impl FormatError {
    /// The byte offset the error names (see [`Error::offset`](super::Error::offset)).
    pub(crate) fn offset(&self) -> Option<u64> {
        use FormatError::*;
        match self {
            BadMagic { .. } => Some(0),
            UnsupportedVersion { .. } => Some(4),
            Truncated { offset, .. }
            | CountTooLarge { offset, .. }
            | EmptyKey { offset }
            | DuplicateKey { offset, .. }
            | InvalidValueType { offset, .. }
            | InvalidUtf8 { offset, .. }
            | InvalidBool { offset, .. }
            | ArrayTooDeep { offset, .. }
            | AlignmentType { offset, .. }
            | InvalidAlignment { offset, .. }
            | DuplicateTensor { offset, .. }
            | TooManyDims { offset, .. }
            | ElementCountOverflow { offset, .. }
            | MisalignedTensor { offset, .. }
            | TensorOutOfBounds { offset, .. } => Some(*offset),
            ByteSizeOverflow { .. }
            | RowNotBlockMultiple { .. }
            | OverlappingTensors { .. }
            | HeaderTooLarge { .. } => None,
        }
    }
}

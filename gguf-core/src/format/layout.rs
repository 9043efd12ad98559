//! Size and alignment arithmetic shared by the reader's validation and the
//! writer's layout, so the two can never disagree.

use crate::format::GgmlType;

/// Alignment of the data section when `general.alignment` is absent.
pub const DEFAULT_ALIGNMENT: u64 = 32;

/// Most dimensions a tensor may have.
pub const MAX_DIMS: usize = 4;

/// Longest tensor name llama.cpp accepts, in bytes (its `GGML_MAX_NAME`
/// is 64, including the NUL). The reader accepts longer names (the lint
/// reports them); the builder refuses them unless asked not to.
pub const MAX_TENSOR_NAME: usize = 63;

/// Rounds `offset` up to a multiple of `alignment` (a power of two);
/// `None` on overflow.
///
/// ```
/// use gguf_core::format::align_up;
/// assert_eq!(align_up(33, 32), Some(64));
/// assert_eq!(align_up(64, 32), Some(64));
/// assert_eq!(align_up(u64::MAX, 32), None);
/// ```
pub const fn align_up(offset: u64, alignment: u64) -> Option<u64> {
    debug_assert!(alignment.is_power_of_two());
    match offset.checked_add(alignment - 1) {
        Some(v) => Some(v & !(alignment - 1)),
        None => None,
    }
}

/// Why [`tensor_nbytes`] cannot give a size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeError {
    /// A dimension above `i64::MAX` or a product that overflows `i64`.
    ElementCountOverflow,
    /// The type id has no known size.
    UnknownType,
    /// The first dimension is not a multiple of the block size.
    RowNotBlockMultiple {
        /// The type's block size.
        block: u64,
    },
    /// The byte size overflows `u64`.
    ByteSizeOverflow,
}

/// Number of elements of a shape, as ggml bounds it (every dimension and
/// the product fit in `i64`).
///
/// ```
/// use gguf_core::format::element_count;
/// assert_eq!(element_count(&[4096, 32000]), Some(131_072_000));
/// assert_eq!(element_count(&[u64::MAX]), None);
/// assert_eq!(element_count(&[]), Some(1));
/// ```
pub fn element_count(shape: &[u64]) -> Option<u64> {
    shape.iter().try_fold(1u64, |acc, &d| {
        if d > i64::MAX as u64 {
            return None;
        }
        acc.checked_mul(d).filter(|&n| n <= i64::MAX as u64)
    })
}

/// Bytes of tensor data for `shape` elements of type `ty`.
///
/// ```
/// use gguf_core::{format::tensor_nbytes, GgmlType};
/// assert_eq!(tensor_nbytes(GgmlType::Q4_0, &[64, 2]), Ok(4 * 18));
/// assert!(tensor_nbytes(GgmlType::Q4_0, &[33]).is_err());
/// ```
pub fn tensor_nbytes(ty: GgmlType, shape: &[u64]) -> Result<u64, SizeError> {
    let elements = element_count(shape).ok_or(SizeError::ElementCountOverflow)?;
    let (Some(block), Some(size)) = (ty.block_size(), ty.type_size()) else {
        return Err(SizeError::UnknownType);
    };
    let row = shape.first().copied().unwrap_or(1);
    if !row.is_multiple_of(block) {
        return Err(SizeError::RowNotBlockMultiple { block });
    }
    (elements / block)
        .checked_mul(size)
        .ok_or(SizeError::ByteSizeOverflow)
}

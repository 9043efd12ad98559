//! The tensor infos: name, shape, type and data offset of each tensor, and
//! the checks that their data ranges are sane.

use indexmap::IndexMap;

use super::insert_unique;
use super::metadata::borrow;
use crate::error::{Error, FormatError, Result};
use crate::format::cursor::Cursor;
use crate::format::layout::{element_count, tensor_nbytes, SizeError};
use crate::format::{GgmlType, StrSpan, TensorInfoWire, MAX_DIMS};

/// One tensor info as read, with its size when the type is known.
#[derive(Debug, Clone)]
pub(crate) struct TensorEntry {
    /// Offset of the info in the file.
    pub info_offset: usize,
    pub n_dims: u32,
    pub dims: [u64; MAX_DIMS],
    pub ty: GgmlType,
    /// Offset of the data relative to the data section.
    pub offset: u64,
    /// Bytes of data; `None` for unknown type ids.
    pub nbytes: Option<u64>,
}

impl TensorEntry {
    pub fn shape(&self) -> &[u64] {
        &self.dims[..self.n_dims as usize]
    }
}

/// Smallest possible info: name length, a one-byte name, n_dims, type, offset.
fn min_info_size(width: usize) -> u64 {
    width as u64 + 1 + 4 + 4 + 8
}

pub(crate) fn read_tensor_infos(
    cur: &mut Cursor<'_>,
    count: u64,
    count_at: usize,
) -> Result<IndexMap<Box<str>, TensorEntry>> {
    let width = cur.wire_format().count_width();
    cur.check_count(count, min_info_size(width), count_at, || {
        "tensor count".into()
    })?;
    // As for metadata: never reserve more index than the bytes that remain.
    let fits = cur.remaining_in_file() / std::mem::size_of::<(u64, Box<str>, TensorEntry)>() as u64;
    let mut tensors = IndexMap::with_capacity(count.min(65536).min(fits) as usize);
    for i in 0..count {
        let info_offset = cur.pos();
        let info: TensorInfoWire<StrSpan> = cur
            .wire(cur.wire_format())
            .map_err(|e| tensor_info_error(cur, info_offset, i, e))?;
        let name = borrow(cur, info.name, || format!("name of tensor info {i}"))?;
        let n_dims = info.n_dims;
        let dims_at = info.name.end() + 4;
        let dims = info.dims.padded();
        let ty = GgmlType::from_id(info.ggml_type);
        let offset = info.offset;
        let shape = &dims[..n_dims as usize];
        let overflow = || {
            Error::Format(FormatError::ElementCountOverflow {
                offset: dims_at,
                tensor: name.into(),
                shape: shape.to_vec(),
            })
        };
        let nbytes = match tensor_nbytes(ty, shape) {
            Ok(n) => Some(n),
            Err(SizeError::UnknownType) => {
                // Still reject shapes no type could have.
                element_count(shape).ok_or_else(overflow)?;
                None
            }
            Err(SizeError::ElementCountOverflow) => return Err(overflow()),
            Err(SizeError::RowNotBlockMultiple { block }) => {
                return Err(Error::Format(FormatError::RowNotBlockMultiple {
                    tensor: name.into(),
                    // No dimensions: a scalar, one element.
                    row: shape.first().copied().unwrap_or(1),
                    ty,
                    block,
                }));
            }
            Err(SizeError::ByteSizeOverflow) => {
                return Err(Error::Format(FormatError::ByteSizeOverflow {
                    tensor: name.into(),
                    elements: element_count(shape).unwrap_or(u64::MAX),
                    ty,
                }))
            }
        };
        let entry = TensorEntry {
            info_offset,
            n_dims,
            dims,
            ty,
            offset,
            nbytes,
        };
        insert_unique(&mut tensors, name, entry, || {
            Error::Format(FormatError::DuplicateTensor {
                offset: info_offset as u64,
                tensor: name.into(),
            })
        })?;
    }
    Ok(tensors)
}

/// Names what failed in a tensor info: the name, or the rest of a named info.
#[cold]
fn tensor_info_error(cur: &Cursor<'_>, at: usize, i: u64, e: Error) -> Error {
    let mut name_only = cur.clone();
    name_only.set_pos(at);
    let span = match name_only.wire::<StrSpan>(cur.wire_format()) {
        Err(e) => return e.what(|| format!("name of tensor info {i}")),
        Ok(span) => span,
    };
    let name = span.get(cur.buf()).unwrap_or_default();
    match e {
        Error::Format(FormatError::TooManyDims { n_dims, .. }) => {
            Error::Format(FormatError::TooManyDims {
                offset: span.end(),
                tensor: name.into(),
                n_dims,
            })
        }
        e => e.what(|| format!("tensor info of {name:?}")),
    }
}

/// Checks alignment, bounds and overlap of every tensor's data.
///
/// `data_len` is the number of bytes from the data section's start to the
/// end of the file (`None` when the data section starts past the end).
pub(crate) fn check_data_ranges(
    tensors: &IndexMap<Box<str>, TensorEntry>,
    alignment: u64,
    data_offset: u64,
    file_len: u64,
) -> Result<()> {
    let mut ranges: Vec<(u64, u64, &str)> = Vec::with_capacity(tensors.len());
    for (name, t) in tensors {
        let start = data_offset.saturating_add(t.offset);
        if !t.offset.is_multiple_of(alignment) {
            return Err(Error::Format(FormatError::MisalignedTensor {
                tensor: name.to_string(),
                offset: start,
                relative: t.offset,
                alignment,
            }));
        }
        let Some(nbytes) = t.nbytes else {
            // Unknown size: only its start can be checked.
            if start > file_len {
                return Err(Error::Format(FormatError::TensorOutOfBounds {
                    tensor: name.to_string(),
                    offset: start,
                    end: start,
                    file_len,
                }));
            }
            continue;
        };
        let end = start.checked_add(nbytes);
        // An empty tensor holds no bytes, but its offset must still point
        // into the data section, so that offsets stay within the file (the
        // section may start past a file whose header is not padded).
        let limit = if nbytes == 0 {
            file_len.max(data_offset)
        } else {
            file_len
        };
        match end {
            Some(end) if end <= limit => {}
            _ => {
                return Err(Error::Format(FormatError::TensorOutOfBounds {
                    tensor: name.to_string(),
                    offset: start,
                    end: end.unwrap_or(u64::MAX),
                    file_len,
                }));
            }
        }
        if nbytes > 0 {
            ranges.push((t.offset, t.offset + nbytes, name));
        }
    }
    // Files almost always store data in info order; sort only when not.
    if !ranges.is_sorted_by_key(|r| r.0) {
        ranges.sort_unstable_by_key(|r| r.0);
    }
    for pair in ranges.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if b.0 < a.1 {
            return Err(Error::Format(FormatError::OverlappingTensors {
                first: a.2.to_string(),
                first_end: a.1,
                second: b.2.to_string(),
                second_start: b.0,
            }));
        }
    }
    Ok(())
}

//! Non-finite numbers in a tensor: [`Tensor::non_finite`].

use crate::error::Result;
use crate::format::{Endian, GgmlType};

use super::Tensor;

/// What [`Tensor::non_finite`] counted: values, or block scales.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FiniteUnit {
    /// Decoded values (float tensors, and quantized types whose scales
    /// are not plain f16 fields); indices are element indices.
    Values,
    /// The f16 scales of quantized blocks; indices are block indices.
    BlockScales,
}

/// Infinities and NaNs found in a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NonFinite {
    /// How many values or blocks are not finite.
    pub count: u64,
    /// The index of the first.
    pub first: u64,
    /// Whether `count` and `first` count values or blocks.
    pub unit: FiniteUnit,
}

/// Offsets of the f16 scale fields (`d`, `dmin`/`m`) in one block, for the
/// types that have plain f16 scales (ggml-common.h's `block_*` structs).
fn f16_scales(ty: GgmlType) -> Option<&'static [usize]> {
    use GgmlType as T;
    Some(match ty {
        T::Q4_0 | T::Q5_0 | T::Q8_0 | T::Q1_0 | T::Q2_0 => &[0],
        T::IQ2_XXS | T::IQ2_XS | T::IQ2_S | T::IQ3_XXS | T::IQ3_S => &[0],
        T::IQ1_S | T::IQ4_NL | T::IQ4_XS => &[0],
        T::Q4_1 | T::Q5_1 | T::Q8_1 | T::Q4_K | T::Q5_K => &[0, 2],
        T::Q2_K => &[80, 82],
        T::Q3_K => &[108],
        T::Q6_K => &[208],
        T::TQ1_0 => &[52],
        T::TQ2_0 => &[64],
        _ => return None,
    })
}

/// The blocks of `data` (whole blocks of `ty`, multi-byte fields in
/// `endian`) whose f16 scales are infinite or NaN: how many and the index
/// of the first (`(0, 0)` when none is). `None` when `ty` has no plain f16
/// scales to check.
pub fn non_finite_scales(ty: GgmlType, endian: Endian, data: &[u8]) -> Option<(u64, u64)> {
    let offsets = f16_scales(ty)?;
    let ts = ty.type_size().unwrap_or(1) as usize;
    let (mut count, mut first) = (0u64, None);
    for (i, block) in data.chunks_exact(ts).enumerate() {
        for &at in offsets {
            let b = [block[at], block[at + 1]];
            let bits = match endian {
                Endian::Big => u16::from_be_bytes(b),
                Endian::Little => u16::from_le_bytes(b),
            };
            // f16 exponent all ones: infinity or NaN.
            if bits & 0x7c00 == 0x7c00 {
                count += 1;
                first.get_or_insert(i as u64);
                break;
            }
        }
    }
    Some((count, first.unwrap_or(0)))
}

impl Tensor<'_> {
    /// Counts the infinities and NaNs in the tensor, `None` when there are
    /// none (and always for integer tensors). A quantized type with plain
    /// f16 block scales has its scales checked (a non-finite scale spoils
    /// the whole block); other types are decoded and their values checked.
    /// Fails when the data cannot be read or decoded.
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// use gguf_core::read::{FiniteUnit, NonFinite};
    /// use gguf_core::{write::Builder, GgmlType, GgufFile};
    /// let mut b = Builder::new();
    /// let values = [1.0f32, f32::NAN, 2.0, f32::INFINITY];
    /// let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    /// b.add_tensor("t", GgmlType::F32, &[4], bytes)?;
    /// let out = b.to_vec()?;
    /// let file = GgufFile::open(&out)?;
    /// let found = file.tensor("t")?.non_finite()?;
    /// assert_eq!(found, Some(NonFinite { count: 2, first: 1, unit: FiniteUnit::Values }));
    /// # Ok(()) }
    /// ```
    pub fn non_finite(&self) -> Result<Option<NonFinite>> {
        let ty = self.ggml_type();
        if matches!(
            ty,
            GgmlType::I8 | GgmlType::I16 | GgmlType::I32 | GgmlType::I64
        ) {
            return Ok(None);
        }
        let (mut count, mut first) = (0u64, None);
        let mut note = |i: usize| {
            count += 1;
            first.get_or_insert(i as u64);
        };
        let unit = match f16_scales(ty) {
            Some(_) => {
                let found = non_finite_scales(ty, self.file_endian(), self.data()?);
                if let Some((n, at)) = found.filter(|&(n, _)| n > 0) {
                    count = n;
                    first = Some(at);
                }
                FiniteUnit::BlockScales
            }
            None => {
                // Floats, and quantized types whose scales are packed in
                // other ways (Q8_K's f32, IQ1_M, MXFP4, NVFP4): the values.
                let mut row_start = 0usize;
                let mut rows = self.rows()?;
                while let Some(row) = rows.next_row() {
                    let row = row?;
                    for (i, x) in row.iter().enumerate() {
                        if !x.is_finite() {
                            note(row_start + i);
                        }
                    }
                    row_start += row.len();
                }
                FiniteUnit::Values
            }
        };
        Ok(first.map(|first| NonFinite { count, first, unit }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::{Gguf, GgufFile};
    use crate::write::Builder;

    fn scan(ty: GgmlType, shape: &[u64], data: Vec<u8>) -> Option<NonFinite> {
        let mut b = Builder::new();
        b.add_tensor("t", ty, shape, data).unwrap();
        let bytes = b.to_vec().unwrap();
        let file = GgufFile::open(&bytes).unwrap();

        file.tensor("t").unwrap().non_finite().unwrap()
    }

    #[test]
    fn finite_floats_pass_and_non_finite_ones_are_counted() {
        let f32s = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        assert_eq!(scan(GgmlType::F32, &[3], f32s(&[1.0, -2.0, 0.0])), None);
        let found = scan(
            GgmlType::F32,
            &[4],
            f32s(&[1.0, f32::NEG_INFINITY, 0.0, f32::NAN]),
        );
        assert_eq!(
            found,
            Some(NonFinite {
                count: 2,
                first: 1,
                unit: FiniteUnit::Values
            })
        );
    }

    #[test]
    fn quantized_blocks_are_checked_by_their_f16_scales() {
        // Three Q8_0 blocks (34 bytes: f16 d, then 32 int8); the second and
        // third have an infinite or NaN scale.
        let mut data = vec![0u8; 3 * 34];
        data[34..36].copy_from_slice(&0x7c00u16.to_le_bytes());
        data[68..70].copy_from_slice(&0x7e00u16.to_le_bytes());
        let found = scan(GgmlType::Q8_0, &[96], data);
        assert_eq!(
            found,
            Some(NonFinite {
                count: 2,
                first: 1,
                unit: FiniteUnit::BlockScales
            })
        );
        assert_eq!(scan(GgmlType::Q8_0, &[32], vec![0u8; 34]), None);
    }

    #[test]
    fn integer_tensors_have_nothing_to_check() {
        assert_eq!(scan(GgmlType::I32, &[2], vec![0xff; 8]), None);
    }

    #[test]
    fn every_f16_scale_lies_inside_its_block() {
        for ty in GgmlType::ALL {
            if let Some(offsets) = f16_scales(*ty) {
                let size = ty.type_size().unwrap() as usize;
                assert!(offsets.iter().all(|&at| at + 2 <= size), "{ty}");
            }
        }
    }
}

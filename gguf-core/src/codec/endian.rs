//! Byte-order conversion of tensor data of every sized type.
//!
//! Plain types (F32, F16, BF16, F64, I8..I64) swap each number. Quantized
//! blocks swap each field ggml declares wider than a byte (`ggml_half`
//! scales, `uint16_t` arrays, Q8_K's `float` and `int16_t` sums) and leave
//! byte arrays alone, which is how the decoders read big-endian blocks
//! (see the module documentation of [`tensor`](super)). For Q4_0, Q8_0,
//! Q4_K and Q6_K this is what gguf-py's `gguf_convert_endian.py` does.

use std::borrow::Cow;

use crate::error::{CodecError, Error, Result};
use crate::format::{Endian, GgmlType};

/// One run of multi-byte fields inside a block: byte offset, field width,
/// number of consecutive fields.
type Fields = &'static [(usize, usize, usize)];

/// The multi-byte fields of one block of `ty` (`None` for types without
/// a size). Offsets follow ggml's `block_*` structs in `ggml-common.h`.
fn fields(ty: GgmlType) -> Option<Fields> {
    use GgmlType as T;
    const F16: Fields = &[(0, 2, 1)];
    const TWO_F16: Fields = &[(0, 2, 2)];
    Some(match ty {
        T::F32 | T::I32 => &[(0, 4, 1)],
        T::F16 | T::BF16 | T::I16 => F16,
        T::F64 | T::I64 => &[(0, 8, 1)],
        T::I8 | T::IQ1_M | T::MXFP4 | T::NVFP4 => &[],
        // d, then bytes.
        T::Q4_0 | T::Q5_0 | T::Q8_0 | T::Q1_0 | T::Q2_0 => F16,
        T::IQ2_S | T::IQ3_XXS | T::IQ3_S | T::IQ4_NL => F16,
        // d and m (or s, or dmin), then bytes.
        T::Q4_1 | T::Q5_1 | T::Q8_1 | T::Q4_K | T::Q5_K => TWO_F16,
        // d, then `uint16_t scales_h`.
        T::IQ4_XS => TWO_F16,
        // d, then `uint16_t qs[32]`.
        T::IQ2_XXS | T::IQ2_XS => &[(0, 2, 33)],
        // d, `uint8_t qs[32]`, `uint16_t qh[8]`.
        T::IQ1_S => &[(0, 2, 1), (34, 2, 8)],
        T::Q2_K => &[(80, 2, 2)],
        T::Q3_K => &[(108, 2, 1)],
        T::Q6_K => &[(208, 2, 1)],
        // `float d`, `int8_t qs[256]`, `int16_t bsums[16]`.
        T::Q8_K => &[(0, 4, 1), (260, 2, 16)],
        T::TQ1_0 => &[(52, 2, 1)],
        T::TQ2_0 => &[(64, 2, 1)],
        _ => return None,
    })
}

/// Bytes per block of `ty`, when it has a size and a known block layout.
fn block_bytes(ty: GgmlType) -> Result<(usize, Fields)> {
    match (ty.type_size(), fields(ty)) {
        (Some(ts), Some(f)) => Ok((ts as usize, f)),
        _ => Err(Error::Codec(CodecError::UnsupportedType {
            ty,
            operation: "change the byte order of",
        })),
    }
}

/// Swaps whole blocks in place (`data.len()` a multiple of `ts`).
fn swap_blocks(data: &mut [u8], ts: usize, fields: Fields) {
    match fields {
        [] => {}
        // Plain numbers: one field per element.
        [(0, w, 1)] if *w == ts => data.chunks_exact_mut(ts).for_each(<[u8]>::reverse),
        _ => {
            for block in data.chunks_exact_mut(ts) {
                for &(at, w, n) in fields {
                    block[at..at + w * n]
                        .chunks_exact_mut(w)
                        .for_each(<[u8]>::reverse);
                }
            }
        }
    }
}

/// Converts tensor data of `ty` to the other byte order, in place. The
/// conversion is its own inverse.
///
/// Errors: `UnsupportedType` for types without a size, `PartialBlock`
/// when `data` is not a whole number of blocks.
///
/// ```
/// use gguf_core::{codec, Endian, GgmlType};
/// let le = codec::quantize(GgmlType::Q4_K, &[0.5f32; 256], &[256])?;
/// let mut be = le.clone();
/// codec::swap_byte_order(GgmlType::Q4_K, &mut be)?;
/// assert_eq!(
///     codec::dequantize_to_vec(GgmlType::Q4_K, Endian::Big, &be)?,
///     codec::dequantize_to_vec(GgmlType::Q4_K, Endian::Little, &le)?,
/// );
/// # Ok::<(), gguf_core::Error>(())
/// ```
pub fn swap_byte_order(ty: GgmlType, data: &mut [u8]) -> Result<()> {
    let (ts, f) = block_bytes(ty)?;
    super::check_whole_blocks(ty, data.len(), ts)?;
    swap_blocks(data, ts, f);
    Ok(())
}

/// `data`, stored in byte order `from`, in byte order `to`: borrowed when
/// the orders are the same (or nothing in the type needs swapping).
///
/// ```
/// use gguf_core::{codec, Endian, GgmlType};
/// let be = [0x3f, 0x80]; // BF16 1.0, big-endian
/// let le = codec::with_byte_order(GgmlType::BF16, &be, Endian::Big, Endian::Little)?;
/// assert_eq!(&le[..], [0x80, 0x3f]);
/// # Ok::<(), gguf_core::Error>(())
/// ```
pub fn with_byte_order(
    ty: GgmlType,
    data: &[u8],
    from: Endian,
    to: Endian,
) -> Result<Cow<'_, [u8]>> {
    if from == to || fields(ty).is_some_and(<[_]>::is_empty) {
        return Ok(Cow::Borrowed(data));
    }
    let mut owned = data.to_vec();
    swap_byte_order(ty, &mut owned)?;
    Ok(Cow::Owned(owned))
}

/// Swaps a stream of tensor data handed over in chunks of any length,
/// carrying a block split between chunks over to the next one.
pub(crate) struct StreamSwapper {
    ts: usize,
    fields: Fields,
    carry: Vec<u8>,
    buf: Vec<u8>,
}

impl StreamSwapper {
    /// A swapper for `ty`, or `None` when nothing needs swapping (same
    /// byte order, or a type with no multi-byte field).
    pub(crate) fn new(ty: GgmlType, swap: bool) -> Result<Option<Self>> {
        if !swap {
            return Ok(None);
        }
        let (ts, fields) = block_bytes(ty)?;
        Ok((!fields.is_empty()).then(|| StreamSwapper {
            ts,
            fields,
            carry: Vec::new(),
            buf: Vec::new(),
        }))
    }

    /// Writes `chunk` swapped, keeping a trailing partial block for later.
    pub(crate) fn write(
        &mut self,
        chunk: &[u8],
        w: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        self.buf.clear();
        self.buf.append(&mut self.carry);
        self.buf.extend_from_slice(chunk);
        let whole = self.buf.len() - self.buf.len() % self.ts;
        self.carry.extend_from_slice(&self.buf[whole..]);
        swap_blocks(&mut self.buf[..whole], self.ts, self.fields);
        w.write_all(&self.buf[..whole])
    }

    /// Bytes of a partial block still held (0 once a whole tensor passed).
    #[cfg(test)]
    pub(crate) fn pending(&self) -> usize {
        self.carry.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every sized type: the table agrees with the type sizes, swapping
    /// twice is the identity, and big-endian decoding of swapped data
    /// equals little-endian decoding of the original.
    #[test]
    fn every_sized_type_round_trips_and_decodes_alike() {
        for &ty in GgmlType::ALL {
            let Some(ts) = ty.type_size() else { continue };
            let f = fields(ty).unwrap_or_else(|| panic!("{ty} has a size but no layout"));
            for &(at, w, n) in f {
                assert!(at + w * n <= ts as usize, "{ty}: field past the block");
            }
            // Noise with finite scales: random bytes, then every 16-bit
            // field forced to a small f16 so that NaN payloads do not make
            // the comparison meaningless.
            let blocks = 3;
            let mut le: Vec<u8> = (0..ts as usize * blocks)
                .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3])
                .collect();
            if !ty.is_plain() {
                for block in le.chunks_exact_mut(ts as usize) {
                    for &(at, w, n) in f {
                        if w == 2 {
                            for k in 0..n {
                                block[at + 2 * k + 1] &= 0x3b;
                            }
                        }
                    }
                }
            }
            let mut be = le.clone();
            swap_byte_order(ty, &mut be).unwrap();
            let mut back = be.clone();
            swap_byte_order(ty, &mut back).unwrap();
            assert_eq!(back, le, "{ty}: swap twice");
            if crate::codec::can_dequantize(ty) {
                let a = crate::codec::dequantize_to_vec(ty, Endian::Little, &le).unwrap();
                let b = crate::codec::dequantize_to_vec(ty, Endian::Big, &be).unwrap();
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&a), bits(&b), "{ty}: big-endian decode");
            }
        }
    }

    #[test]
    fn stream_swapper_carries_blocks_across_chunks() {
        let ty = GgmlType::Q6_K;
        let data: Vec<u8> = (0..210 * 4).map(|i| i as u8).collect();
        let mut expected = data.clone();
        swap_byte_order(ty, &mut expected).unwrap();
        let mut s = StreamSwapper::new(ty, true).unwrap().unwrap();
        let mut out = Vec::new();
        for piece in data.chunks(97) {
            s.write(piece, &mut out).unwrap();
        }
        assert_eq!(s.pending(), 0);
        assert_eq!(out, expected);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(swap_byte_order(GgmlType::Q4_0, &mut [0u8; 17]).is_err());
        assert!(swap_byte_order(GgmlType::Unknown(4), &mut []).is_err());
    }
}

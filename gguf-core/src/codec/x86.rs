//! AVX2 kernels for the nibble types whose portable loops LLVM vectorizes
//! badly: Q4_0 (it vectorizes across blocks with byte gathers) and the IQ4
//! types (a 16-entry table lookup it cannot vectorize; `pshufb` does it in
//! one instruction). Each computes exactly the same IEEE operations as the
//! portable code (`(q - 8) as f32 * d`, `d * kvalues[q] as f32`), so the
//! output is bit-identical; the oracle tests run whichever path the CPU
//! selects, and `matches_portable` below compares the two directly.
//!
//! # Safety
//!
//! Every function here is safe Rust apart from one precondition, which the
//! compiler enforces: each is `#[target_feature(enable = "avx2")]` (F16
//! also `f16c`), so calling it from code without those features needs an
//! `unsafe` block whose `SAFETY:` comment shows the CPU has them (the
//! `simd_dispatch!` macro in `tensor/mod.rs` checks
//! `is_x86_feature_detected!` right before the call). Memory is only
//! touched through typed arrays (`&[u8; 16]` in, `&mut [f32; 16]` out),
//! converted to and from vector registers by `bytemuck::cast`, so there are
//! no raw pointers and no lengths to trust.

use std::arch::x86_64::*;

use bytemuck::cast;

use super::float::{rd_f16, rd_u16};
use super::iq_grids::KVALUES_IQ4NL;
use super::{arrays, arrays_mut};

/// Writes 16 bytes (`u8`s if `SIGNED` is false, else `i8`s) minus `offset`,
/// as f32 times `d`, to `o`.
///
/// # Safety
///
/// Safe to call where AVX2 is enabled; elsewhere the CPU must have AVX2.
#[target_feature(enable = "avx2")]
fn put16<const SIGNED: bool>(o: &mut [f32; 16], bytes: __m128i, offset: __m256i, d: __m256) {
    let hi8 = _mm_unpackhi_epi64(bytes, bytes);
    let (a, b) = if SIGNED {
        (_mm256_cvtepi8_epi32(bytes), _mm256_cvtepi8_epi32(hi8))
    } else {
        (_mm256_cvtepu8_epi32(bytes), _mm256_cvtepu8_epi32(hi8))
    };
    let a = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(a, offset)), d);
    let b = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(b, offset)), d);
    *o = cast::<[__m256; 2], [f32; 16]>([a, b]);
}

/// Low and high nibbles of 16 bytes.
///
/// # Safety
///
/// As [`put16`].
#[target_feature(enable = "avx2")]
fn nibbles(q: &[u8; 16]) -> (__m128i, __m128i) {
    let v: __m128i = cast(*q);
    let m = _mm_set1_epi8(0x0F);
    (_mm_and_si128(v, m), _mm_and_si128(_mm_srli_epi16(v, 4), m))
}

/// The two 16-element halves of a 32-element block.
#[inline(always)]
fn halves(o: &mut [f32; 32]) -> (&mut [f32; 16], &mut [f32; 16]) {
    let [lo, hi] = bytemuck::cast_mut::<[f32; 32], [[f32; 16]; 2]>(o);
    (lo, hi)
}

/// The 16 quant bytes at `at` of a block.
#[inline(always)]
fn q16<const N: usize>(b: &[u8; N], at: usize) -> [u8; 16] {
    let mut q = [0u8; 16];
    if let Some(s) = b.get(at..at + 16) {
        q.copy_from_slice(s);
    }
    q
}

/// Q4_0, bit-identical with `legacy::dequant_q4_0`.
///
/// # Safety
///
/// As [`put16`]: the CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(crate) fn dequant_q4_0<const BE: bool>(data: &[u8], out: &mut [f32]) {
    let eight = _mm256_set1_epi32(8);
    for (b, o) in arrays::<18, _>(data).zip(arrays_mut::<32, _>(out)) {
        let d = _mm256_set1_ps(rd_f16::<BE>([b[0], b[1]]));
        let (lo, hi) = nibbles(&q16(b, 2));
        let (o_lo, o_hi) = halves(o);
        put16::<false>(o_lo, lo, eight, d);
        put16::<false>(o_hi, hi, eight, d);
    }
}

/// One 32-element IQ4 sub-block: `d * kvalues[q]`.
///
/// # Safety
///
/// As [`put16`].
#[target_feature(enable = "avx2")]
fn iq4_put32(o: &mut [f32; 32], q: &[u8; 16], d: f32, table: __m128i) {
    let d = _mm256_set1_ps(d);
    let zero = _mm256_setzero_si256();
    let (lo, hi) = nibbles(q);
    let (o_lo, o_hi) = halves(o);
    put16::<true>(o_lo, _mm_shuffle_epi8(table, lo), zero, d);
    put16::<true>(o_hi, _mm_shuffle_epi8(table, hi), zero, d);
}

/// The IQ4 value table as a `pshufb` lookup table.
#[inline(always)]
fn iq4_table() -> __m128i {
    let mut t = [0u8; 16];
    for (t, &k) in t.iter_mut().zip(&KVALUES_IQ4NL) {
        *t = k as u8;
    }
    cast(t)
}

/// IQ4_NL, bit-identical with `iq::dequant_iq4_nl`.
///
/// # Safety
///
/// As [`put16`]: the CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(crate) fn dequant_iq4_nl<const BE: bool>(data: &[u8], out: &mut [f32]) {
    let table = iq4_table();
    for (b, o) in arrays::<18, _>(data).zip(arrays_mut::<32, _>(out)) {
        iq4_put32(o, &q16(b, 2), rd_f16::<BE>([b[0], b[1]]), table);
    }
}

/// IQ4_XS, bit-identical with `iq::dequant_iq4_xs`.
///
/// # Safety
///
/// As [`put16`]: the CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(crate) fn dequant_iq4_xs<const BE: bool>(data: &[u8], out: &mut [f32]) {
    let table = iq4_table();
    for (b, o) in arrays::<136, _>(data).zip(arrays_mut::<256, _>(out)) {
        let d = rd_f16::<BE>([b[0], b[1]]);
        let sh = rd_u16::<BE>([b[2], b[3]]) as i32;
        for (ib, y) in arrays_mut::<32, _>(o).enumerate() {
            let ls =
                ((b[4 + ib / 2] >> (4 * (ib % 2))) & 0xF) as i32 | (((sh >> (2 * ib)) & 3) << 4);
            iq4_put32(y, &q16(b, 8 + 16 * ib), d * (ls - 32) as f32, table);
        }
    }
}

/// Little-endian F16 with the F16C conversion instruction. `vcvtph2ps` is
/// exact for every non-NaN value and, like ggml's software conversion on
/// x86, returns NaNs quieted with their payload kept (checked for all 65536
/// inputs in `f16c_matches_software`).
///
/// # Safety
///
/// The CPU must have AVX2 and F16C.
#[target_feature(enable = "avx2,f16c")]
pub(crate) fn dequant_f16_le(data: &[u8], out: &mut [f32]) {
    let done = (data.len() / 16).min(out.len() / 8);
    for (s, d) in arrays::<16, _>(data).zip(arrays_mut::<8, _>(out)) {
        let h: __m128i = cast(*s);
        *d = cast(_mm256_cvtph_ps(h));
    }
    let (data, out) = (&data[done * 16..], &mut out[done * 8..]);
    super::float::dequant_f16::<false>(data, out);
}

#[cfg(test)]
mod tests {
    #[test]
    fn f16c_matches_software() {
        if !(std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("f16c"))
        {
            eprintln!("skipped f16c_matches_software: this CPU lacks AVX2 or F16C");
            return;
        }
        let data: Vec<u8> = (0..=u16::MAX).flat_map(|h| h.to_le_bytes()).collect();
        let (mut a, mut b) = (vec![0f32; 65536], vec![0f32; 65536]);
        super::super::float::dequant_f16::<false>(&data, &mut a);
        // SAFETY: both features were detected above.
        #[allow(unsafe_code)]
        unsafe {
            super::dequant_f16_le(&data, &mut b)
        };
        for (h, (x, y)) in a.iter().zip(&b).enumerate() {
            assert_eq!(x.to_bits(), y.to_bits(), "{h:#06x}");
        }
    }

    use crate::format::GgmlType;

    /// The AVX2 kernels against the portable ones on random blocks, in both
    /// byte orders (the oracle tests only see the path the CPU picks).
    #[test]
    fn matches_portable() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            eprintln!("skipped matches_portable: this CPU lacks AVX2");
            return;
        }
        let mut s: u32 = 1;
        let data: Vec<u8> = (0..136 * 18)
            .map(|_| {
                s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (s >> 24) as u8
            })
            .collect();
        type K = fn(&[u8], &mut [f32]);
        type U = unsafe fn(&[u8], &mut [f32]);
        let cases: [(GgmlType, K, U, K, U); 3] = [
            (
                GgmlType::Q4_0,
                super::super::legacy::dequant_q4_0::<false>,
                super::dequant_q4_0::<false>,
                super::super::legacy::dequant_q4_0::<true>,
                super::dequant_q4_0::<true>,
            ),
            (
                GgmlType::IQ4_NL,
                super::super::iq::dequant_iq4_nl::<false>,
                super::dequant_iq4_nl::<false>,
                super::super::iq::dequant_iq4_nl::<true>,
                super::dequant_iq4_nl::<true>,
            ),
            (
                GgmlType::IQ4_XS,
                super::super::iq::dequant_iq4_xs::<false>,
                super::dequant_iq4_xs::<false>,
                super::super::iq::dequant_iq4_xs::<true>,
                super::dequant_iq4_xs::<true>,
            ),
        ];
        for (ty, le, le_simd, be, be_simd) in cases {
            let n =
                data.len() / ty.type_size().unwrap() as usize * ty.block_size().unwrap() as usize;
            for (portable, simd) in [(le, le_simd), (be, be_simd)] {
                let (mut a, mut b) = (vec![0f32; n], vec![0f32; n]);
                portable(&data, &mut a);
                // SAFETY: AVX2 was detected above.
                #[allow(unsafe_code)]
                unsafe {
                    simd(&data, &mut b)
                };
                let same = a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits());
                assert!(same, "{ty}");
            }
        }
    }
}

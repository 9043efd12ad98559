//! AVX2 kernels for the nibble types whose portable loops LLVM vectorizes
//! badly: Q4_0 (it vectorizes across blocks with byte gathers) and the IQ4
//! types (a 16-entry table lookup it cannot vectorize; `pshufb` does it in
//! one instruction). Each computes exactly the same IEEE operations as the
//! portable code (`(q - 8) as f32 * d`, `d * kvalues[q] as f32`), so the
//! output is bit-identical; the oracle tests run whichever path the CPU
//! selects, and `matches_portable` below compares the two directly.
//!
//! Only reached through `decoder`, after `is_x86_feature_detected!("avx2")`.

use std::arch::x86_64::*;

use super::float::{rd_f16, rd_u16};
use super::iq_grids::KVALUES_IQ4NL;
use super::{arrays, arrays_mut};

/// Writes 16 bytes (`u8`s if `SIGNED` is false, else `i8`s) as f32 times `d`
/// to `o[0..16]`.
#[target_feature(enable = "avx2")]
unsafe fn put16<const SIGNED: bool>(o: &mut [f32], bytes: __m128i, offset: __m256i, d: __m256) {
    debug_assert!(o.len() >= 16);
    let hi8 = _mm_unpackhi_epi64(bytes, bytes);
    let (a, b) = if SIGNED {
        (_mm256_cvtepi8_epi32(bytes), _mm256_cvtepi8_epi32(hi8))
    } else {
        (_mm256_cvtepu8_epi32(bytes), _mm256_cvtepu8_epi32(hi8))
    };
    let a = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(a, offset)), d);
    let b = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(b, offset)), d);
    // SAFETY: callers pass slices of at least 16 f32 (checked above in debug
    // builds, guaranteed by the fixed-size arrays they slice from).
    unsafe {
        _mm256_storeu_ps(o.as_mut_ptr(), a);
        _mm256_storeu_ps(o.as_mut_ptr().add(8), b);
    }
}

/// Low and high nibbles of 16 bytes.
#[target_feature(enable = "avx2")]
unsafe fn nibbles(q: &[u8; 16]) -> (__m128i, __m128i) {
    // SAFETY: `q` is 16 readable bytes; loadu has no alignment requirement.
    let v = unsafe { _mm_loadu_si128(q.as_ptr().cast()) };
    let m = _mm_set1_epi8(0x0F);
    (_mm_and_si128(v, m), _mm_and_si128(_mm_srli_epi16(v, 4), m))
}

#[inline(always)]
fn q16(b: &[u8], at: usize) -> [u8; 16] {
    let mut q = [0u8; 16];
    if let Some(s) = b.get(at..at + 16) {
        q.copy_from_slice(s);
    }
    q
}

#[target_feature(enable = "avx2")]
pub(crate) unsafe fn dequant_q4_0<const BE: bool>(data: &[u8], out: &mut [f32]) {
    let eight = _mm256_set1_epi32(8);
    for (b, o) in arrays::<18, _>(data).zip(arrays_mut::<32, _>(out)) {
        let d = _mm256_set1_ps(rd_f16::<BE>([b[0], b[1]]));
        // SAFETY: AVX2 is enabled for this function; `o` holds 32 f32.
        unsafe {
            let (lo, hi) = nibbles(&q16(b, 2));
            put16::<false>(&mut o[..16], lo, eight, d);
            put16::<false>(&mut o[16..], hi, eight, d);
        }
    }
}

#[target_feature(enable = "avx2")]
unsafe fn iq4_put32(o: &mut [f32; 32], q: &[u8; 16], d: f32, table: __m128i) {
    let d = _mm256_set1_ps(d);
    let zero = _mm256_setzero_si256();
    // SAFETY: AVX2 is enabled; `o` holds 32 f32.
    unsafe {
        let (lo, hi) = nibbles(q);
        put16::<true>(&mut o[..16], _mm_shuffle_epi8(table, lo), zero, d);
        put16::<true>(&mut o[16..], _mm_shuffle_epi8(table, hi), zero, d);
    }
}

#[target_feature(enable = "avx2")]
fn iq4_table() -> __m128i {
    let mut t = [0u8; 16];
    for (t, &k) in t.iter_mut().zip(&KVALUES_IQ4NL) {
        *t = k as u8;
    }
    // SAFETY: `t` is 16 readable bytes.
    unsafe { _mm_loadu_si128(t.as_ptr().cast()) }
}

#[target_feature(enable = "avx2")]
pub(crate) unsafe fn dequant_iq4_nl<const BE: bool>(data: &[u8], out: &mut [f32]) {
    let table = iq4_table();
    for (b, o) in arrays::<18, _>(data).zip(arrays_mut::<32, _>(out)) {
        // SAFETY: AVX2 is enabled for this function.
        unsafe { iq4_put32(o, &q16(b, 2), rd_f16::<BE>([b[0], b[1]]), table) };
    }
}

#[target_feature(enable = "avx2")]
pub(crate) unsafe fn dequant_iq4_xs<const BE: bool>(data: &[u8], out: &mut [f32]) {
    let table = iq4_table();
    for (b, o) in arrays::<136, _>(data).zip(arrays_mut::<256, _>(out)) {
        let d = rd_f16::<BE>([b[0], b[1]]);
        let sh = rd_u16::<BE>([b[2], b[3]]) as i32;
        for (ib, y) in arrays_mut::<32, _>(o).enumerate() {
            let ls =
                ((b[4 + ib / 2] >> (4 * (ib % 2))) & 0xF) as i32 | (((sh >> (2 * ib)) & 3) << 4);
            // SAFETY: AVX2 is enabled for this function.
            unsafe { iq4_put32(y, &q16(b, 8 + 16 * ib), d * (ls - 32) as f32, table) };
        }
    }
}

/// Little-endian F16 with the F16C conversion instruction. `vcvtph2ps` is
/// exact for every non-NaN value and, like ggml's software conversion on
/// x86, returns NaNs quieted with their payload kept (checked for all 65536
/// inputs in `f16c_matches_software`).
#[target_feature(enable = "avx2,f16c")]
pub(crate) unsafe fn dequant_f16_le(data: &[u8], out: &mut [f32]) {
    let mut src = data.chunks_exact(16);
    let mut dst = out.chunks_exact_mut(8);
    for (s, d) in (&mut src).zip(&mut dst) {
        // SAFETY: `s` is 16 readable bytes and `d` 8 writable f32.
        unsafe {
            let h = _mm_loadu_si128(s.as_ptr().cast());
            _mm256_storeu_ps(d.as_mut_ptr(), _mm256_cvtph_ps(h));
        }
    }
    super::float::dequant_f16::<false>(src.remainder(), dst.into_remainder());
}

#[cfg(test)]
mod tests {
    #[test]
    fn f16c_matches_software() {
        if !(std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("f16c"))
        {
            return;
        }
        let data: Vec<u8> = (0..=u16::MAX).flat_map(|h| h.to_le_bytes()).collect();
        let (mut a, mut b) = (vec![0f32; 65536], vec![0f32; 65536]);
        super::super::float::dequant_f16::<false>(&data, &mut a);
        // SAFETY: both features were detected above.
        unsafe { super::dequant_f16_le(&data, &mut b) };
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
                unsafe { simd(&data, &mut b) };
                let same = a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits());
                assert!(same, "{ty}");
            }
        }
    }
}

//! The 32-element block types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1) and the
//! small 1- and 2-bit types Q1_0 (128 elements) and Q2_0 (64 elements).
//!
//! Block layouts (ggml-common.h), f16 fields little-endian unless the file
//! is big-endian:
//! - Q4_0 `d:f16, qs[16]` -> `(q - 8) * d`, low nibbles first half.
//! - Q4_1 `d:f16, m:f16, qs[16]` -> `q * d + m`.
//! - Q5_0 `d:f16, qh[4], qs[16]` -> `(q | h << 4) - 16) * d`.
//! - Q5_1 `d:f16, m:f16, qh[4], qs[16]` -> `(q | h << 4) * d + m`.
//! - Q8_0 `d:f16, qs:i8[32]` -> `q * d`.
//! - Q8_1 `d:f16, s:f16, qs:i8[32]` -> `q * d` (`s` = d * sum(q) is for dot products).
//! - Q1_0 `d:f16, qs[16]` -> bit set ? d : -d.
//! - Q2_0 `d:f16, qs[16]` -> `(q - 1) * d`, four 2-bit codes per byte, low bits first.

use super::float::{f32_to_f16, rd_f16};
use super::{arrays, arrays_mut, c_f32_to_i32};

#[inline(always)]
pub(crate) fn dequant_q4_0<const BE: bool>(data: &[u8], out: &mut [f32]) {
    // Scales first, for 64 blocks at a time: converting f16 inside the block
    // loop makes LLVM vectorize across blocks with byte gathers (3x slower).
    for (data, out) in data.chunks(64 * 18).zip(out.chunks_mut(64 * 32)) {
        let ds = scales::<BE, 18, 0>(data);
        for ((b, o), &d) in arrays::<18, _>(data).zip(arrays_mut::<32, _>(out)).zip(&ds) {
            for j in 0..16 {
                o[j] = ((b[2 + j] & 0x0F) as i32 - 8) as f32 * d;
            }
            for j in 0..16 {
                o[j + 16] = ((b[2 + j] >> 4) as i32 - 8) as f32 * d;
            }
        }
    }
}

/// The f16 field at byte `AT` of up to 64 blocks of `TS` bytes.
#[inline(always)]
pub(crate) fn scales<const BE: bool, const TS: usize, const AT: usize>(data: &[u8]) -> [f32; 64] {
    let mut ds = [0f32; 64];
    for (d, b) in ds.iter_mut().zip(arrays::<TS, _>(data)) {
        *d = rd_f16::<BE>([b[AT], b[AT + 1]]);
    }
    ds
}

#[inline(always)]
pub(crate) fn dequant_q4_1<const BE: bool>(data: &[u8], out: &mut [f32]) {
    for (b, o) in arrays::<20, _>(data).zip(arrays_mut::<32, _>(out)) {
        let d = rd_f16::<BE>([b[0], b[1]]);
        let m = rd_f16::<BE>([b[2], b[3]]);
        for j in 0..16 {
            o[j] = (b[4 + j] & 0x0F) as f32 * d + m;
        }
        for j in 0..16 {
            o[j + 16] = (b[4 + j] >> 4) as f32 * d + m;
        }
    }
}

#[inline(always)]
pub(crate) fn dequant_q5_0<const BE: bool>(data: &[u8], out: &mut [f32]) {
    for (b, o) in arrays::<22, _>(data).zip(arrays_mut::<32, _>(out)) {
        let d = rd_f16::<BE>([b[0], b[1]]);
        // qh is a byte array in ggml's struct, read as a little-endian u32.
        let qh = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
        for j in 0..16 {
            let q = b[6 + j];
            let h0 = ((qh >> j) << 4) & 0x10;
            let h1 = (qh >> (j + 12)) & 0x10;
            o[j] = (((q & 0x0F) as u32 | h0) as i32 - 16) as f32 * d;
            o[j + 16] = (((q >> 4) as u32 | h1) as i32 - 16) as f32 * d;
        }
    }
}

#[inline(always)]
pub(crate) fn dequant_q5_1<const BE: bool>(data: &[u8], out: &mut [f32]) {
    for (b, o) in arrays::<24, _>(data).zip(arrays_mut::<32, _>(out)) {
        let d = rd_f16::<BE>([b[0], b[1]]);
        let m = rd_f16::<BE>([b[2], b[3]]);
        let qh = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
        for j in 0..16 {
            let q = b[8 + j];
            let h0 = ((qh >> j) << 4) & 0x10;
            let h1 = (qh >> (j + 12)) & 0x10;
            o[j] = ((q & 0x0F) as u32 | h0) as f32 * d + m;
            o[j + 16] = ((q >> 4) as u32 | h1) as f32 * d + m;
        }
    }
}

#[inline(always)]
pub(crate) fn dequant_q8_0<const BE: bool>(data: &[u8], out: &mut [f32]) {
    for (b, o) in arrays::<34, _>(data).zip(arrays_mut::<32, _>(out)) {
        let d = rd_f16::<BE>([b[0], b[1]]);
        for j in 0..32 {
            o[j] = b[2 + j] as i8 as f32 * d;
        }
    }
}

#[inline(always)]
pub(crate) fn dequant_q8_1<const BE: bool>(data: &[u8], out: &mut [f32]) {
    for (b, o) in arrays::<36, _>(data).zip(arrays_mut::<32, _>(out)) {
        let d = rd_f16::<BE>([b[0], b[1]]);
        for j in 0..32 {
            o[j] = b[4 + j] as i8 as f32 * d;
        }
    }
}

#[inline(always)]
pub(crate) fn dequant_q1_0<const BE: bool>(data: &[u8], out: &mut [f32]) {
    for (b, o) in arrays::<18, _>(data).zip(arrays_mut::<128, _>(out)) {
        let d = rd_f16::<BE>([b[0], b[1]]);
        let nd = -d;
        for j in 0..128 {
            o[j] = if (b[2 + j / 8] >> (j % 8)) & 1 != 0 {
                d
            } else {
                nd
            };
        }
    }
}

#[inline(always)]
pub(crate) fn dequant_q2_0<const BE: bool>(data: &[u8], out: &mut [f32]) {
    for (b, o) in arrays::<18, _>(data).zip(arrays_mut::<64, _>(out)) {
        let d = rd_f16::<BE>([b[0], b[1]]);
        for j in 0..64 {
            let q = (b[2 + j / 4] >> ((j % 4) * 2)) & 3;
            o[j] = (q as i32 - 1) as f32 * d;
        }
    }
}

// ---- quantization (bit-exact with ggml's quantize_row_*_ref) ----

/// Index and value of the element with the largest magnitude; the first
/// one wins ties and NaNs never win, as in ggml's `if (amax < fabsf(v))`.
#[inline]
fn abs_max(x: &[f32]) -> (f32, f32) {
    let (mut amax, mut max) = (0.0f32, 0.0f32);
    for &v in x {
        if amax < v.abs() {
            amax = v.abs();
            max = v;
        }
    }
    (amax, max)
}

/// `MIN(hi, (int8_t)f)` as ggml computes it, stored into a `uint8_t`.
#[inline(always)]
fn to_nibble(f: f32, hi: i32) -> u8 {
    (c_f32_to_i32(f) as i8 as i32).min(hi) as u8
}

#[inline(always)]
pub(crate) fn quant_q4_0(src: &[f32], out: &mut [u8]) {
    for (x, y) in arrays::<32, _>(src).zip(out.chunks_exact_mut(18)) {
        let (_, max) = abs_max(x);
        let d = max / -8.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        y[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        for j in 0..16 {
            let x0 = to_nibble(x[j] * id + 8.5, 15);
            let x1 = to_nibble(x[16 + j] * id + 8.5, 15);
            y[2 + j] = x0 | (x1 << 4);
        }
    }
}

/// Minimum and maximum as ggml's `if (v < min) ...; if (v > max) ...`.
#[inline]
fn min_max(x: &[f32]) -> (f32, f32) {
    let (mut min, mut max) = (f32::MAX, -f32::MAX);
    for &v in x {
        if v < min {
            min = v;
        }
        if v > max {
            max = v;
        }
    }
    (min, max)
}

#[inline(always)]
pub(crate) fn quant_q4_1(src: &[f32], out: &mut [u8]) {
    for (x, y) in arrays::<32, _>(src).zip(out.chunks_exact_mut(20)) {
        let (min, max) = min_max(x);
        let d = (max - min) / 15.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        y[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        y[2..4].copy_from_slice(&f32_to_f16(min).to_le_bytes());
        for j in 0..16 {
            let x0 = to_nibble((x[j] - min) * id + 0.5, 15);
            let x1 = to_nibble((x[16 + j] - min) * id + 0.5, 15);
            y[4 + j] = x0 | (x1 << 4);
        }
    }
}

#[inline(always)]
pub(crate) fn quant_q5_0(src: &[f32], out: &mut [u8]) {
    for (x, y) in arrays::<32, _>(src).zip(out.chunks_exact_mut(22)) {
        let (_, max) = abs_max(x);
        let d = max / -16.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        y[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        let mut qh = 0u32;
        for j in 0..16 {
            let x0 = to_nibble(x[j] * id + 16.5, 31);
            let x1 = to_nibble(x[16 + j] * id + 16.5, 31);
            y[6 + j] = (x0 & 0x0F) | ((x1 & 0x0F) << 4);
            qh |= (((x0 & 0x10) >> 4) as u32) << j;
            qh |= (((x1 & 0x10) >> 4) as u32) << (j + 16);
        }
        y[2..6].copy_from_slice(&qh.to_le_bytes());
    }
}

#[inline(always)]
pub(crate) fn quant_q5_1(src: &[f32], out: &mut [u8]) {
    for (x, y) in arrays::<32, _>(src).zip(out.chunks_exact_mut(24)) {
        let (min, max) = min_max(x);
        let d = (max - min) / 31.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        y[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        y[2..4].copy_from_slice(&f32_to_f16(min).to_le_bytes());
        let mut qh = 0u32;
        for j in 0..16 {
            // ggml casts straight to uint8_t here, without a MIN.
            let x0 = c_f32_to_i32((x[j] - min) * id + 0.5) as u8;
            let x1 = c_f32_to_i32((x[16 + j] - min) * id + 0.5) as u8;
            y[8 + j] = (x0 & 0x0F) | ((x1 & 0x0F) << 4);
            qh |= (((x0 & 0x10) >> 4) as u32) << j;
            qh |= (((x1 & 0x10) >> 4) as u32) << (j + 16);
        }
        y[4..8].copy_from_slice(&qh.to_le_bytes());
    }
}

/// `amax / 127` and its inverse, as Q8_0 and Q8_1 compute them.
#[inline]
fn q8_scale(x: &[f32; 32]) -> (f32, f32) {
    let mut amax = 0.0f32;
    for &v in x {
        // C's MAX(a, b) is `a > b ? a : b`: a NaN in b is skipped.
        let a = v.abs();
        amax = if amax > a { amax } else { a };
    }
    let d = amax / 127.0;
    (d, if d != 0.0 { 1.0 / d } else { 0.0 })
}

#[inline(always)]
pub(crate) fn quant_q8_0(src: &[f32], out: &mut [u8]) {
    for (x, y) in arrays::<32, _>(src).zip(out.chunks_exact_mut(34)) {
        let (d, id) = q8_scale(x);
        y[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        for j in 0..32 {
            y[2 + j] = c_f32_to_i32((x[j] * id).round()) as u8;
        }
    }
}

#[inline(always)]
pub(crate) fn quant_q8_1(src: &[f32], out: &mut [u8]) {
    for (x, y) in arrays::<32, _>(src).zip(out.chunks_exact_mut(36)) {
        let (d, id) = q8_scale(x);
        y[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        let mut sum = 0i32;
        for j in 0..32 {
            let q = c_f32_to_i32((x[j] * id).round()) as i8;
            y[4 + j] = q as u8;
            sum += q as i32;
        }
        y[2..4].copy_from_slice(&f32_to_f16(sum as f32 * d).to_le_bytes());
    }
}

#[inline(always)]
pub(crate) fn quant_q1_0(src: &[f32], out: &mut [u8]) {
    for (x, y) in arrays::<128, _>(src).zip(out.chunks_exact_mut(18)) {
        let mut sum_abs = 0.0f32;
        for &v in x {
            sum_abs += v.abs();
        }
        let d = sum_abs / 128.0;
        y[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        y[2..].fill(0);
        for (j, &v) in x.iter().enumerate() {
            if v >= 0.0 {
                y[2 + j / 8] |= 1 << (j % 8);
            }
        }
    }
}

#[inline(always)]
pub(crate) fn quant_q2_0(src: &[f32], out: &mut [u8]) {
    for (x, y) in arrays::<64, _>(src).zip(out.chunks_exact_mut(18)) {
        let mut amax = 0.0f32;
        for &v in x {
            if v.abs() > amax {
                amax = v.abs();
            }
        }
        let d = amax;
        let id = if d > 0.0 { 1.0 / d } else { 0.0 };
        y[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        y[2..].fill(0);
        for (j, &v) in x.iter().enumerate() {
            let q = (c_f32_to_i32((v * id).round()).wrapping_add(1)).clamp(0, 3);
            y[2 + j / 4] |= (q as u8) << ((j % 4) * 2);
        }
    }
}

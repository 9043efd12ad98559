//! Ternary types (values -1, 0, +1 times an f16 scale per 256 elements).
//!
//! - TQ1_0 `qs[48], qh[4], d:f16`: five trits per byte stored as a fixed-point
//!   fraction (`byte = ceil(t * 256 / 243)`), four per byte in `qh`.
//! - TQ2_0 `qs[64], d:f16`: four 2-bit codes per byte, code - 1.

use super::float::{f32_to_f16, rd_f16};
use super::{arrays, arrays_mut};

const POW3: [u8; 6] = [1, 3, 9, 27, 81, 243];

/// Trit `n` (0 = most significant) of a TQ1_0 byte, as -1.0/0.0/+1.0 times d.
#[inline(always)]
fn trit(byte: u8, n: usize, d: f32) -> f32 {
    let q = byte.wrapping_mul(POW3[n]);
    let xi = ((q as u16 * 3) >> 8) as i16;
    (xi - 1) as f32 * d
}

#[inline(always)]
pub(crate) fn dequant_tq1_0<const BE: bool>(data: &[u8], out: &mut [f32]) {
    for (b, o) in arrays::<54, _>(data).zip(arrays_mut::<256, _>(out)) {
        let d = rd_f16::<BE>([b[52], b[53]]);
        let (head, rest) = o.split_at_mut(160);
        for (n, y) in head.chunks_exact_mut(32).enumerate() {
            for (y, &q) in y.iter_mut().zip(&b[0..32]) {
                *y = trit(q, n, d);
            }
        }
        let (mid, tail) = rest.split_at_mut(80);
        for (n, y) in mid.chunks_exact_mut(16).enumerate() {
            for (y, &q) in y.iter_mut().zip(&b[32..48]) {
                *y = trit(q, n, d);
            }
        }
        for (n, y) in tail.chunks_exact_mut(4).enumerate() {
            for (y, &q) in y.iter_mut().zip(&b[48..52]) {
                *y = trit(q, n, d);
            }
        }
    }
}

#[inline(always)]
pub(crate) fn dequant_tq2_0<const BE: bool>(data: &[u8], out: &mut [f32]) {
    for (b, o) in arrays::<66, _>(data).zip(arrays_mut::<256, _>(out)) {
        let d = rd_f16::<BE>([b[64], b[65]]);
        for (q, y) in b[..64].chunks_exact(32).zip(o.chunks_exact_mut(128)) {
            for (l, y) in y.chunks_exact_mut(32).enumerate() {
                for (y, &q) in y.iter_mut().zip(q) {
                    *y = (((q >> (2 * l)) & 3) as i32 - 1) as f32 * d;
                }
            }
        }
    }
}

/// glibc's `lroundf` on x86-64: half away from zero, `LONG_MIN` when the
/// result does not fit (NaN, infinities).
#[inline(always)]
fn lroundf(x: f32) -> i64 {
    let r = x.round();
    if !(-9.223_372e18..9.223_372e18).contains(&r) {
        i64::MIN
    } else {
        r as i64
    }
}

/// `d = amax`, `id = 1/d` as TQ1_0 and TQ2_0 compute them.
#[inline]
fn ternary_scale(x: &[f32; 256]) -> (f32, f32) {
    let mut amax = 0.0f32;
    for &v in x {
        let a = v.abs();
        amax = if amax > a { amax } else { a };
    }
    (amax, if amax != 0.0 { 1.0 / amax } else { 0.0 })
}

/// -1/0/+1 -> 0/1/2, truncated to `int` as ggml's `int xi = lroundf(..) + 1`.
#[inline(always)]
fn code(v: f32, id: f32) -> i32 {
    lroundf(v * id).wrapping_add(1) as i32
}

/// Packs five (or four, then shifted) trits into one byte as ggml does.
#[inline(always)]
fn pack_trits(codes: impl Iterator<Item = i32>, shift_last: bool) -> u8 {
    let mut q: u8 = 0;
    for xi in codes {
        q = q.wrapping_mul(3).wrapping_add(xi as u8);
    }
    if shift_last {
        q = q.wrapping_mul(3);
    }
    ((q as u16 as i32 * 256 + 242) / 243) as u8
}

#[inline(always)]
pub(crate) fn quant_tq1_0(src: &[f32], out: &mut [u8]) {
    for (x, y) in arrays::<256, _>(src).zip(out.chunks_exact_mut(54)) {
        let (d, id) = ternary_scale(x);
        for m in 0..32 {
            y[m] = pack_trits((0..5).map(|n| code(x[m + n * 32], id)), false);
        }
        for m in 0..16 {
            y[32 + m] = pack_trits((0..5).map(|n| code(x[160 + m + n * 16], id)), false);
        }
        for j in 0..4 {
            y[48 + j] = pack_trits((0..4).map(|m| code(x[240 + j + m * 4], id)), true);
        }
        y[52..54].copy_from_slice(&f32_to_f16(d).to_le_bytes());
    }
}

#[inline(always)]
pub(crate) fn quant_tq2_0(src: &[f32], out: &mut [u8]) {
    for (x, y) in arrays::<256, _>(src).zip(out.chunks_exact_mut(66)) {
        let (d, id) = ternary_scale(x);
        for (j, q) in y[..64].chunks_exact_mut(32).enumerate() {
            for (m, q) in q.iter_mut().enumerate() {
                let mut acc = 0i32;
                for n in 0..4 {
                    acc += (code(x[128 * j + m + n * 32], id) & 3) << (2 * n);
                }
                *q = acc as u8;
            }
        }
        y[64..66].copy_from_slice(&f32_to_f16(d).to_le_bytes());
    }
}

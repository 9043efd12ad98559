//! FP4 types: E2M1 values with a shared scale.
//!
//! - MXFP4 `e:e8m0, qs[16]` (32 elements): value = kvalues[q] * 2^(e-128),
//!   where kvalues are the E2M1 values doubled.
//! - NVFP4 `d:ue4m3[4], qs[32]` (64 elements, a UE4M3 scale per 16).

use super::float::{e8m0_to_f32_half, ue4m3_to_f32};
use super::iq_grids::KVALUES_FP4;
use super::{arrays, arrays_mut, c_f32_to_i32};

#[inline(always)]
fn put_fp4(y: &mut [f32], q: &[u8], d: f32) {
    let t = KVALUES_FP4.map(|k| k as f32 * d);
    let (lo, hi) = y.split_at_mut(q.len());
    for ((a, b), &q) in lo.iter_mut().zip(hi.iter_mut()).zip(q) {
        *a = t[(q & 0xF) as usize];
        *b = t[(q >> 4) as usize];
    }
}

#[inline(always)]
pub(crate) fn dequant_mxfp4<const BE: bool>(data: &[u8], out: &mut [f32]) {
    for (b, o) in arrays::<17, _>(data).zip(arrays_mut::<32, _>(out)) {
        put_fp4(o, &b[1..17], e8m0_to_f32_half(b[0]));
    }
}

#[inline(always)]
pub(crate) fn dequant_nvfp4<const BE: bool>(data: &[u8], out: &mut [f32]) {
    for (b, o) in arrays::<36, _>(data).zip(arrays_mut::<64, _>(out)) {
        for (s, y) in o.chunks_exact_mut(16).enumerate() {
            put_fp4(y, &b[4 + 8 * s..12 + 8 * s], ue4m3_to_f32(b[s]));
        }
    }
}

/// Index of the doubled-E2M1 level nearest to `x / e` (first wins ties).
#[inline]
fn best_index_fp4(x: f32, e: f32) -> u8 {
    let mut best = 0u8;
    let mut best_err = (KVALUES_FP4[0] as f32 * e - x).abs();
    for (i, &k) in KVALUES_FP4.iter().enumerate().skip(1) {
        let err = (k as f32 * e - x).abs();
        if err < best_err {
            best = i as u8;
            best_err = err;
        }
    }
    best
}

#[inline(always)]
pub(crate) fn quant_mxfp4(src: &[f32], out: &mut [u8]) {
    for (x, y) in arrays::<32, _>(src).zip(out.chunks_exact_mut(17)) {
        let mut amax = 0.0f32;
        for &v in x {
            if amax < v.abs() {
                amax = v.abs();
            }
        }
        let e = if amax > 0.0 {
            c_f32_to_i32(amax.log2().floor() - 2.0 + 127.0) as u8
        } else {
            0
        };
        let d = e8m0_to_f32_half(e);
        y[0] = e;
        for j in 0..16 {
            y[1 + j] = best_index_fp4(x[j], d) | (best_index_fp4(x[16 + j], d) << 4);
        }
    }
}

/// ggml's `ggml_fp32_to_ue4m3`: round half up on the mantissa, saturate at 448.
fn f32_to_ue4m3(mut x: f32) -> u8 {
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    if x > 448.0 {
        x = 448.0;
    }
    let bits = x.to_bits();
    let fp32_exp = ((bits >> 23) & 0xFF) as i32 - 127;
    let fp32_man = ((bits >> 20) & 0x7) as i32;
    let mut exp = fp32_exp + 7;
    if exp <= 0 {
        let man = c_f32_to_i32(x * 512.0 + 0.5).min(7);
        return if man < 1 { 0 } else { man as u8 };
    }
    if exp >= 15 {
        return 0x7E;
    }
    let mut man = fp32_man + ((bits >> 19) & 1) as i32;
    if man > 7 {
        man = 0;
        exp += 1;
        if exp >= 15 {
            return 0x7E;
        }
    }
    ((exp << 3) | man) as u8
}

#[inline(always)]
pub(crate) fn quant_nvfp4(src: &[f32], out: &mut [u8]) {
    for (x, y) in arrays::<64, _>(src).zip(out.chunks_exact_mut(36)) {
        for (s, xb) in x.chunks_exact(16).enumerate() {
            let mut amax = 0.0f32;
            for &v in xb {
                if amax < v.abs() {
                    amax = v.abs();
                }
            }
            let ue = f32_to_ue4m3(amax / 6.0);
            y[s] = ue;
            let d = ue4m3_to_f32(ue);
            for j in 0..8 {
                y[4 + 8 * s + j] = best_index_fp4(xb[j], d) | (best_index_fp4(xb[8 + j], d) << 4);
            }
        }
    }
}

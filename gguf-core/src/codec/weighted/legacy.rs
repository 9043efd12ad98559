//! Q4_0, Q4_1, Q5_0 and Q5_1 with importance weights: ggml's
//! `quantize_row_q*_impl`, what `ggml_quantize_chunk` runs for them when
//! given an imatrix row (without one it runs the reference quantizers of
//! `legacy`).
//!
//! Each function quantizes one row: the weighting's variance term is the
//! mean square of the whole row, so rows are the unit, not blocks.

use super::super::arrays;
use super::super::float::f32_to_f16;
use super::super::k_quants::{make_qkx2_quants, make_qx_quants};

/// `sum x^2 / n` over the row, added in order as ggml does.
#[inline(always)]
fn row_sigma2(x: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for &v in x {
        s += v * v;
    }
    s / x.len() as f32
}

/// The 32-element blocks of a row with their output blocks of `TS` bytes
/// and their importance weights.
#[inline(always)]
fn blocks<'a, const TS: usize>(
    src: &'a [f32],
    out: &'a mut [u8],
    qw: &'a [f32],
) -> impl Iterator<Item = ((&'a [f32; 32], &'a mut [u8]), &'a [f32; 32])> {
    arrays::<32, _>(src)
        .zip(out.chunks_exact_mut(TS))
        .zip(arrays::<32, _>(qw))
}

/// A block's weights as ggml makes them: the importance weight times
/// `sqrt(sigma2 + x^2)`.
#[inline(always)]
fn block_weights(x: &[f32; 32], qw: &[f32; 32], sigma2: f32) -> [f32; 32] {
    let mut w = [0f32; 32];
    for i in 0..32 {
        w[i] = qw[i] * (sigma2 + x[i] * x[i]).sqrt();
    }
    w
}

/// The low nibbles of 32 five-bit (or four-bit) levels, element `j` and
/// `j + 16` sharing a byte, and their fifth bits as a little-endian u32.
#[inline(always)]
fn pack_nibbles(l: &[u8; 32], qs: &mut [u8]) -> u32 {
    let mut qh = 0u32;
    for j in 0..16 {
        let (x0, x1) = (l[j] as u32, l[j + 16] as u32);
        qs[j] = ((x0 & 0x0F) | ((x1 & 0x0F) << 4)) as u8;
        qh |= ((x0 & 0x10) >> 4) << j;
        qh |= ((x1 & 0x10) >> 4) << (j + 16);
    }
    qh
}

/// Symmetric levels `0..2*nmax` of a block (ggml's `make_qx_quants`).
#[inline(always)]
fn symmetric(x: &[f32; 32], w: &[f32; 32], nmax: i32) -> (f32, [u8; 32]) {
    let mut l = [0i8; 32];
    let d = make_qx_quants(nmax, x, w, &mut l);
    (d, l.map(|v| v as u8))
}

/// Levels `0..=nmax` with a min (ggml's `make_qkx3_quants`, which equals
/// `make_qkx2_quants` on these inputs): `(d, m, levels)`.
#[inline(always)]
fn affine(x: &[f32; 32], w: &[f32; 32], nmax: i32) -> (f32, f32, [u8; 32]) {
    let mut l = [0u8; 32];
    let (d, the_min) = make_qkx2_quants(nmax, x, w, &mut l, -0.9, 0.05, 36, false);
    (d, -the_min, l)
}

/// Q4_0: `d, qs[16]`.
#[inline(always)]
pub(crate) fn quant_q4_0(src: &[f32], out: &mut [u8], qw: &[f32]) {
    let sigma2 = row_sigma2(src);
    for ((x, y), qw) in blocks::<18>(src, out, qw) {
        let w = &block_weights(x, qw, sigma2);
        let (d, l) = symmetric(x, w, 8);
        y[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        for j in 0..16 {
            y[2 + j] = l[j] | (l[j + 16] << 4);
        }
    }
}

/// Q4_1: `d, m, qs[16]`.
#[inline(always)]
pub(crate) fn quant_q4_1(src: &[f32], out: &mut [u8], qw: &[f32]) {
    let sigma2 = row_sigma2(src);
    for ((x, y), qw) in blocks::<20>(src, out, qw) {
        let w = &block_weights(x, qw, sigma2);
        let (d, m, l) = affine(x, w, 15);
        y[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        y[2..4].copy_from_slice(&f32_to_f16(m).to_le_bytes());
        for j in 0..16 {
            y[4 + j] = l[j] | (l[j + 16] << 4);
        }
    }
}

/// Q5_0: `d, qh[4], qs[16]`.
#[inline(always)]
pub(crate) fn quant_q5_0(src: &[f32], out: &mut [u8], qw: &[f32]) {
    let sigma2 = row_sigma2(src);
    for ((x, y), qw) in blocks::<22>(src, out, qw) {
        let w = &block_weights(x, qw, sigma2);
        let (d, l) = symmetric(x, w, 16);
        y[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        let qh = pack_nibbles(&l, &mut y[6..22]);
        y[2..6].copy_from_slice(&qh.to_le_bytes());
    }
}

/// Q5_1: `d, m, qh[4], qs[16]`.
#[inline(always)]
pub(crate) fn quant_q5_1(src: &[f32], out: &mut [u8], qw: &[f32]) {
    let sigma2 = row_sigma2(src);
    for ((x, y), qw) in blocks::<24>(src, out, qw) {
        let w = &block_weights(x, qw, sigma2);
        let (d, m, l) = affine(x, w, 31);
        y[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        y[2..4].copy_from_slice(&f32_to_f16(m).to_le_bytes());
        let qh = pack_nibbles(&l, &mut y[8..24]);
        y[4..8].copy_from_slice(&qh.to_le_bytes());
    }
}

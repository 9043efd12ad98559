//! IQ4_XS and IQ4_NL with optional importance weights: ggml's
//! `quantize_row_iq4_nl_impl` (7 scale refinements each way per 32-element
//! block, then, for IQ4_XS, 6-bit block scales under one f16 super-scale).

use super::super::float::f32_to_f16;
use super::super::iq_grids::KVALUES_IQ4NL;
use super::super::k_quants::nearest_int;
use super::{best_index_i8, GROUP_MAX_EPS};

const NTRY: i32 = 7;

/// Per-element weights of one 32-element block: the importance weight times
/// `sqrt(sigma2 + x^2)` with an importance matrix, else `x^2`.
#[inline(always)]
fn block_weights(xb: &[f32], qw: Option<&[f32]>, sigma2: f32, w: &mut [f32; 32]) {
    match qw {
        Some(qw) => {
            for ((w, &x), &q) in w.iter_mut().zip(xb).zip(qw) {
                *w = q * (sigma2 + x * x).sqrt();
            }
        }
        None => {
            for (w, &x) in w.iter_mut().zip(xb) {
                *w = x * x;
            }
        }
    }
}

/// The weighted error sums `(sum w*q*x, sum w*q*q)` with levels picked for
/// the inverse scale `id`; writes the picked levels to `l` when given.
#[inline(always)]
fn sums(xb: &[f32], w: &[f32; 32], id: f32, mut l: Option<&mut [u8]>) -> (f32, f32) {
    let (mut sumqx, mut sumq2) = (0.0f32, 0.0f32);
    for (j, (&x, &w)) in xb.iter().zip(w).enumerate() {
        let k = best_index_i8(&KVALUES_IQ4NL, id * x);
        if let Some(l) = l.as_deref_mut() {
            l[j] = k as u8;
        }
        let q = KVALUES_IQ4NL[k] as f32;
        sumqx += w * q * x;
        sumq2 += w * q * q;
    }
    (sumqx, sumq2)
}

/// The best scale of one 32-element block (0 for an all-but-zero block).
#[inline(always)]
fn block_scale(xb: &[f32], w: &[f32; 32]) -> f32 {
    let (mut amax, mut max) = (0.0f32, 0.0f32);
    for &x in xb {
        if x.abs() > amax {
            amax = x.abs();
            max = x;
        }
    }
    if amax < GROUP_MAX_EPS {
        return 0.0;
    }
    let v0 = KVALUES_IQ4NL[0];
    let d = -max / v0 as f32;
    let (sumqx, sumq2) = sums(xb, w, 1.0 / d, None);
    let mut d = if sumq2 > 0.0 { sumqx / sumq2 } else { 0.0 };
    let mut best = d * sumqx;
    for itry in -NTRY..=NTRY {
        let (sumqx, sumq2) = sums(xb, w, (itry + v0 as i32) as f32 / max, None);
        if sumq2 > 0.0 && sumqx * sumqx > best * sumq2 {
            d = sumqx / sumq2;
            best = d * sumqx;
        }
    }
    d
}

/// `sum x^2 * 2 / n`: the variance term of the importance weighting.
#[inline(always)]
fn sigma2(x: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for &v in x {
        s += v * v;
    }
    s * (2.0 / x.len() as f32)
}

#[inline(always)]
fn pack_nibbles(l: &[u8], q4: &mut [u8]) {
    for (l, q) in l.chunks_exact(32).zip(q4.chunks_exact_mut(16)) {
        for j in 0..16 {
            q[j] = l[j] | (l[16 + j] << 4);
        }
    }
}

/// One row of IQ4_XS (256-element super-blocks of 136 bytes);
/// `weights`, when given, has one entry per element of the row.
#[inline(always)]
pub(crate) fn quant_iq4_xs(src: &[f32], out: &mut [u8], weights: Option<&[f32]>) {
    for (ibl, (x, y)) in src
        .chunks_exact(256)
        .zip(out.chunks_exact_mut(136))
        .enumerate()
    {
        let qw = weights.map(|w| &w[256 * ibl..256 * ibl + 256]);
        let s2 = sigma2(x);
        let mut scales = [0f32; 8];
        let (mut max_scale, mut amax_scale) = (0.0f32, 0.0f32);
        let mut w = [0f32; 32];
        for (ib, xb) in x.chunks_exact(32).enumerate() {
            block_weights(xb, qw.map(|q| &q[32 * ib..32 * ib + 32]), s2, &mut w);
            let d = block_scale(xb, &w);
            scales[ib] = d;
            if d.abs() > amax_scale {
                amax_scale = d.abs();
                max_scale = d;
            }
        }
        // `-max_scale` keeps ggml's -0.0 super-scale for an all-zero block.
        let d = -max_scale / 32.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        let mut l = [0u8; 256];
        let (mut scales_h, mut scales_l) = (0u16, [0u8; 4]);
        for (ib, xb) in x.chunks_exact(32).enumerate() {
            let ls = nearest_int(id * scales[ib]).clamp(-32, 31);
            let dl = d * ls as f32;
            let idl = if dl != 0.0 { 1.0 / dl } else { 0.0 };
            for (l, &v) in l[32 * ib..32 * ib + 32].iter_mut().zip(xb) {
                *l = best_index_i8(&KVALUES_IQ4NL, idl * v) as u8;
            }
            let ls = (ls + 32) as u16;
            scales_l[ib / 2] |= ((ls & 0xF) as u8) << (4 * (ib % 2));
            scales_h |= (ls >> 4) << (2 * ib);
        }
        y[0..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        y[2..4].copy_from_slice(&scales_h.to_le_bytes());
        y[4..8].copy_from_slice(&scales_l);
        pack_nibbles(&l, &mut y[8..136]);
    }
}

/// One row of IQ4_NL (32-element blocks of 18 bytes) with importance
/// weights; without weights this equals the codec's unweighted encoder.
#[inline(always)]
pub(crate) fn quant_iq4_nl(src: &[f32], out: &mut [u8], weights: Option<&[f32]>) {
    for (ib, (xb, y)) in src
        .chunks_exact(32)
        .zip(out.chunks_exact_mut(18))
        .enumerate()
    {
        let mut w = [0f32; 32];
        block_weights(
            xb,
            weights.map(|q| &q[32 * ib..32 * ib + 32]),
            sigma2(xb),
            &mut w,
        );
        let d = block_scale(xb, &w);
        y[0..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        let mut l = [0u8; 32];
        for (l, &v) in l.iter_mut().zip(xb) {
            *l = best_index_i8(&KVALUES_IQ4NL, id * v) as u8;
        }
        pack_nibbles(&l, &mut y[2..18]);
    }
}

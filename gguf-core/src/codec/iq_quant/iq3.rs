//! IQ3_XXS and IQ3_S: ggml's `quantize_row_iq3_xxs_impl` and
//! `quantize_row_iq3_s_impl`. Each 32-element block is searched over a
//! range of scales; groups of 4 magnitudes snap to the lattice (or its
//! nearest neighbours), signs are stored apart.

use super::super::float::f32_to_f16;
use super::super::float::nearest_int;
use super::grid::{self, Lattice};

const GROUP_MAX_EPS_IQ3_XXS: f32 = 1e-8;

/// The weights of one block and their square roots (used in the neighbour
/// search), as in every IQ quantizer.
#[inline(always)]
fn weights(xb: &[f32], qw: Option<&[f32]>, sigma2: f32) -> ([f32; 32], [f32; 32]) {
    let mut w = [0f32; 32];
    match qw {
        Some(qw) => {
            for i in 0..32 {
                w[i] = qw[i] * (sigma2 + xb[i] * xb[i]).sqrt();
            }
        }
        None => {
            for i in 0..32 {
                w[i] = xb[i] * xb[i];
            }
        }
    }
    (w, w.map(f32::sqrt))
}

/// `2 * sum x^2 / 256` over a super-block.
#[inline(always)]
pub(crate) fn sigma2(xbl: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for &v in xbl {
        s += v * v;
    }
    2.0 * s / 256.0
}

/// `(sum w*x*q, sum w*q*q)` with `q = 2l + 1`.
#[inline(always)]
fn sums(w: &[f32; 32], xval: &[f32; 32], l: &[i8; 32]) -> (f32, f32) {
    let (mut sumqx, mut sumq2) = (0.0f32, 0.0f32);
    for i in 0..32 {
        let q = (2 * l[i] as i32 + 1) as f32;
        sumqx += w[i] * xval[i] * q;
        sumq2 += w[i] * q * q;
    }
    (sumqx, sumq2)
}

/// Levels of 4 magnitudes at inverse scale `id` (0..=7 each).
#[inline(always)]
fn levels(xv: &[f32], id: f32, l: &mut [i8]) {
    for i in 0..4 {
        l[i] = nearest_int(0.5 * (id * xv[i] - 1.0)).clamp(0, 7) as i8;
    }
}

/// The scale search of one block of magnitudes `xval` (ggml's loop over
/// `is`, then the re-snap of the groups that were off the lattice).
/// `all_off` is IQ3_S's variant: every group counts as off the lattice
/// until a scale is accepted, and the re-snap covers every group.
#[inline(always)]
fn search(
    g: &Lattice,
    xval: &[f32; 32],
    w: &[f32; 32],
    waux: &[f32; 32],
    max: f32,
    steps: i32,
    all_off: bool,
) -> (f32, [i8; 32]) {
    let mut best = 0.0f32;
    let mut scale = max / 15.0;
    let mut l = [0i8; 32];
    let mut on_grid = [!all_off; 8];
    for is in -steps..=steps {
        let id = (15.0 + is as f32 * 0.2) / max;
        let this_scale = 1.0 / id;
        let mut laux = [0i8; 32];
        let mut on_grid_aux = [true; 8];
        for k in 0..8 {
            let lk = &mut laux[4 * k..4 * k + 4];
            levels(&xval[4 * k..], id, lk);
            if let Err(nb) = g.lookup(g.key(lk)) {
                on_grid_aux[k] = false;
                g.best_neighbour(nb, &xval[4 * k..], &waux[4 * k..], this_scale, lk);
            }
        }
        let (sumqx, sumq2) = sums(w, xval, &laux);
        if sumq2 > 0.0 && sumqx * sumqx > best * sumq2 {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            l = laux;
            on_grid = on_grid_aux;
        }
    }
    if on_grid.iter().any(|&on| !on) && scale > 0.0 {
        let id = 1.0 / scale;
        for k in 0..8 {
            if on_grid[k] && !all_off {
                continue;
            }
            let lk = &mut l[4 * k..4 * k + 4];
            let mut fresh = [0i8; 4];
            levels(&xval[4 * k..], id, &mut fresh);
            let gi = match g.lookup(g.key(&fresh)) {
                Ok(gi) => gi,
                Err(nb) => g.best_neighbour(nb, &xval[4 * k..], &waux[4 * k..], scale, lk),
            };
            g.levels_of(gi, lk);
        }
        let (sumqx, sumq2) = sums(w, xval, &l);
        if sumq2 > 0.0 {
            scale = sumqx / sumq2;
        }
    }
    (scale, l)
}

/// Magnitudes of a block and its sign bits per 8 elements.
#[inline(always)]
fn split_signs(xb: &[f32]) -> ([f32; 32], [u8; 4]) {
    let mut xval = [0f32; 32];
    let mut signs = [0u8; 4];
    for (i, &x) in xb.iter().enumerate() {
        if x >= 0.0 {
            xval[i] = x;
        } else {
            xval[i] = -x;
            signs[i / 8] |= 1 << (i % 8);
        }
    }
    (xval, signs)
}

/// ggml's `MAX` over a slice: `a > b ? a : b` from the first element.
#[inline(always)]
fn c_max(v: &[f32]) -> f32 {
    v.iter()
        .skip(1)
        .fold(v[0], |m, &x| if m > x { m } else { x })
}

/// The grid index of levels `l` (on the lattice by construction; ggml
/// stops the process otherwise, we store index 0).
#[inline(always)]
fn index_of(g: &Lattice, l: &[i8]) -> usize {
    g.lookup(g.key(l)).unwrap_or(0)
}

/// One row of IQ3_XXS (98-byte super-blocks).
#[inline(always)]
pub(crate) fn quant_iq3_xxs(src: &[f32], out: &mut [u8], weights_row: Option<&[f32]>) {
    let g = grid::iq3_xxs();
    for (ibl, (xbl, y)) in src
        .chunks_exact(256)
        .zip(out.chunks_exact_mut(98))
        .enumerate()
    {
        let s2 = sigma2(xbl);
        let mut q3 = [0u8; 64];
        let mut scales_and_signs = [0u32; 8];
        let mut scales = [0f32; 8];
        let mut max_scale = 0.0f32;
        for (ib, xb) in xbl.chunks_exact(32).enumerate() {
            let qw = weights_row.map(|w| &w[256 * ibl + 32 * ib..256 * ibl + 32 * ib + 32]);
            let (w, waux) = weights(xb, qw, s2);
            let (mut xval, signs8) = split_signs(xb);
            // Only 7 sign bits per 8 are stored: an odd count of negatives
            // flips the least important element instead.
            let mut block_signs = [0u8; 4];
            for k in 0..4 {
                let mut s = signs8[k];
                if s.count_ones() % 2 == 1 {
                    let mut imin = 0;
                    let mut min = w[8 * k] * xb[8 * k] * xb[8 * k];
                    for i in 1..8 {
                        let ax = w[8 * k + i] * xb[8 * k + i] * xb[8 * k + i];
                        if ax < min {
                            min = ax;
                            imin = i;
                        }
                    }
                    xval[8 * k + imin] = -xval[8 * k + imin];
                    s ^= 1 << imin;
                }
                block_signs[k] = s & 127;
            }
            let max = c_max(&xval);
            if max < GROUP_MAX_EPS_IQ3_XXS {
                continue;
            }
            let (mut scale, l) = search(g, &xval, &w, &waux, max, 15, false);
            if scale < 0.0 {
                scale = -scale;
                block_signs = block_signs.map(|s| !s & 127);
            }
            for k in 0..8 {
                q3[8 * ib + k] = index_of(g, &l[4 * k..4 * k + 4]) as u8;
            }
            scales_and_signs[ib] = block_signs[0] as u32
                | (block_signs[1] as u32) << 7
                | (block_signs[2] as u32) << 14
                | (block_signs[3] as u32) << 21;
            scales[ib] = scale;
            max_scale = if max_scale > scale { max_scale } else { scale };
        }
        y.fill(0);
        if max_scale == 0.0 {
            continue;
        }
        let d = max_scale / 31.0;
        y[0..2].copy_from_slice(&f32_to_f16(d * 1.0125).to_le_bytes());
        let id = 1.0 / d;
        for (ib, ss) in scales_and_signs.iter_mut().enumerate() {
            let l = nearest_int(0.5 * (id * scales[ib] - 1.0)).clamp(0, 15);
            *ss |= (l as u32) << 28;
        }
        y[2..66].copy_from_slice(&q3);
        for (o, ss) in y[66..98].chunks_exact_mut(4).zip(scales_and_signs) {
            o.copy_from_slice(&ss.to_le_bytes());
        }
    }
}

/// One row of IQ3_S (110-byte super-blocks).
#[inline(always)]
pub(crate) fn quant_iq3_s(src: &[f32], out: &mut [u8], weights_row: Option<&[f32]>) {
    let g = grid::iq3_s();
    for (ibl, (xbl, y)) in src
        .chunks_exact(256)
        .zip(out.chunks_exact_mut(110))
        .enumerate()
    {
        y.fill(0);
        let s2 = sigma2(xbl);
        let mut scales = [0f32; 8];
        let mut max_scale = 0.0f32;
        // ggml advances the index and sign cursors only past blocks it
        // quantizes: an all-zero block shifts the later ones down.
        let (mut qs_at, mut signs_at) = (2usize, 74usize);
        for (ib, xb) in xbl.chunks_exact(32).enumerate() {
            let qw = weights_row.map(|w| &w[256 * ibl + 32 * ib..256 * ibl + 32 * ib + 32]);
            let (w, waux) = weights(xb, qw, s2);
            let (xval, mut block_signs) = split_signs(xb);
            let max = c_max(&xval);
            if max == 0.0 {
                continue;
            }
            let (mut scale, l) = search(g, &xval, &w, &waux, max, 9, true);
            if scale < 0.0 {
                scale = -scale;
                block_signs = block_signs.map(|s| !s);
            }
            for k in 0..8 {
                let gi = index_of(g, &l[4 * k..4 * k + 4]);
                y[qs_at + k] = (gi & 255) as u8;
                y[66 + ib] |= ((gi >> 8) << k) as u8;
            }
            qs_at += 8;
            y[signs_at..signs_at + 4].copy_from_slice(&block_signs);
            signs_at += 4;
            scales[ib] = scale;
            max_scale = if max_scale > scale { max_scale } else { scale };
        }
        if max_scale == 0.0 {
            continue;
        }
        let d = max_scale / 31.0;
        y[0..2].copy_from_slice(&f32_to_f16(d * 1.033).to_le_bytes());
        let id = 1.0 / d;
        for ib in (0..8).step_by(2) {
            let l1 = nearest_int(0.5 * (id * scales[ib] - 1.0)).clamp(0, 15);
            let l2 = nearest_int(0.5 * (id * scales[ib + 1] - 1.0)).clamp(0, 15);
            y[106 + ib / 2] = (l1 | (l2 << 4)) as u8;
        }
    }
}

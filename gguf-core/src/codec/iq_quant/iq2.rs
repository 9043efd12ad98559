//! IQ2_XXS and IQ2_XS: ggml's `quantize_row_iq2_xxs_impl` and
//! `quantize_row_iq2_xs_impl`. Groups of 8 magnitudes snap to a 2-bit
//! lattice; 7 sign bits per 8 (an odd count of negatives flips the least
//! important element). Both need importance weights.

use super::super::float::f32_to_f16;
use super::super::float::nearest_int;
use super::grid::{self, Lattice};
use super::GROUP_MAX_EPS;

/// `qw * sqrt(sigma2 + x^2)` per element, and the square roots.
#[inline(always)]
fn block_weights(xb: &[f32], qw: &[f32], sigma2: f32, w: &mut [f32], waux: &mut [f32]) {
    for i in 0..xb.len() {
        w[i] = qw[i] * (sigma2 + xb[i] * xb[i]).sqrt();
        waux[i] = w[i].sqrt();
    }
}

/// Magnitudes of `xb` (groups of 8) into `xval` with 7 sign bits per group;
/// a group with an odd count of negatives has its least important element
/// (smallest `w * x * x`) flipped instead of signed.
#[inline(always)]
pub(crate) fn parity_signs(xb: &[f32], w: &[f32], xval: &mut [f32], signs: &mut [u8]) {
    for (k, s_out) in signs.iter_mut().enumerate() {
        let mut s = 0u8;
        for i in 0..8 {
            let x = xb[8 * k + i];
            if x >= 0.0 {
                xval[8 * k + i] = x;
            } else {
                xval[8 * k + i] = -x;
                s |= 1 << i;
            }
        }
        if s.count_ones() % 2 == 1 {
            let ax = |i: usize| w[8 * k + i] * xb[8 * k + i] * xb[8 * k + i];
            let (mut imin, mut min) = (0, ax(0));
            for i in 1..8 {
                if ax(i) < min {
                    min = ax(i);
                    imin = i;
                }
            }
            xval[8 * k + imin] = -xval[8 * k + imin];
            s ^= 1 << imin;
        }
        *s_out = s & 127;
    }
}

/// ggml's `MAX` fold: `a > b ? a : b` from the first element.
#[inline(always)]
pub(crate) fn c_max(v: &[f32]) -> f32 {
    v.iter()
        .skip(1)
        .fold(v[0], |m, &x| if m > x { m } else { x })
}

/// `(sum w*x*q, sum w*q*q)` with `q = 2l + 1`.
#[inline(always)]
fn sums(w: &[f32], xval: &[f32], l: &[i8]) -> (f32, f32) {
    let (mut sumqx, mut sumq2) = (0.0f32, 0.0f32);
    for i in 0..w.len() {
        let q = (2 * l[i] as i32 + 1) as f32;
        sumqx += w[i] * xval[i] * q;
        sumq2 += w[i] * q * q;
    }
    (sumqx, sumq2)
}

/// Levels 0..=2 of 8 magnitudes at inverse scale `id`.
#[inline(always)]
fn levels8(xv: &[f32], id: f32, l: &mut [i8]) {
    for i in 0..8 {
        l[i] = nearest_int(0.5 * (id * xv[i] - 1.0)).clamp(0, 2) as i8;
    }
}

/// Snaps group `k` (levels already in `l`) to the lattice at `scale`;
/// returns whether it was on it.
#[inline(always)]
fn snap(g: &Lattice, xval: &[f32], waux: &[f32], scale: f32, k: usize, l: &mut [i8]) -> bool {
    let lk = &mut l[8 * k..8 * k + 8];
    match g.lookup(g.key(lk)) {
        Ok(_) => true,
        Err(nb) => {
            g.best_neighbour(nb, &xval[8 * k..], &waux[8 * k..], scale, lk);
            false
        }
    }
}

/// ggml's `make_qp_quants` (levels 0..=nmax of non-negative values, here
/// with one possibly negative element): the best scale. ggml keeps the
/// levels in bytes, so a negative level wraps there and is read back
/// wrapped in the refinement; this keeps that.
#[inline(always)]
pub(crate) fn make_qp_quants(nmax: i32, x: &[f32], w: &[f32]) -> f32 {
    let n = x.len();
    let mut max = 0.0f32;
    for &v in x {
        max = if max > v { max } else { v };
    }
    if max < GROUP_MAX_EPS {
        return 0.0;
    }
    let mut iscale = nmax as f32 / max;
    let mut l = [0u8; 32];
    for i in 0..n {
        l[i] = nearest_int(iscale * x[i]) as u8;
    }
    let scale = 1.0 / iscale;
    let mut best_mse = 0.0f32;
    for i in 0..n {
        let diff = x[i] - scale * l[i] as f32;
        best_mse += w[i] * diff * diff;
    }
    for is in -4..=4 {
        if is == 0 {
            continue;
        }
        let iscale_is = (0.1 * is as f32 + nmax as f32) / max;
        let scale_is = 1.0 / iscale_is;
        let mut mse = 0.0f32;
        for i in 0..n {
            let li = nearest_int(iscale_is * x[i]).min(nmax);
            let diff = x[i] - scale_is * li as f32;
            mse += w[i] * diff * diff;
        }
        if mse < best_mse {
            best_mse = mse;
            iscale = iscale_is;
        }
    }
    let (mut sumlx, mut suml2) = (0.0f32, 0.0f32);
    for i in 0..n {
        let li = nearest_int(iscale * x[i]).min(nmax);
        l[i] = li as u8;
        sumlx += w[i] * x[i] * li as f32;
        suml2 += w[i] * li as f32 * li as f32;
    }
    for _ in 0..5 {
        let mut changed = false;
        for i in 0..n {
            let li = l[i] as f32;
            let mut slx = sumlx - w[i] * x[i] * li;
            let mut sl2 = suml2 - w[i] * li * li;
            if slx > 0.0 && sl2 > 0.0 {
                let new_l = nearest_int(x[i] * sl2 / slx).min(nmax);
                if new_l != l[i] as i32 {
                    slx += w[i] * x[i] * new_l as f32;
                    sl2 += w[i] * new_l as f32 * new_l as f32;
                    if slx * slx * suml2 > sumlx * sumlx * sl2 {
                        l[i] = new_l as u8;
                        sumlx = slx;
                        suml2 = sl2;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    if suml2 > 0.0 {
        sumlx / suml2
    } else {
        0.0
    }
}

/// `sum x^2 / 256` over a super-block (IQ2's variance term has no factor 2).
#[inline(always)]
fn sigma2(xbl: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for &v in xbl {
        s += v * v;
    }
    s / 256.0
}

/// One row of IQ2_XXS (66-byte super-blocks). Without weights (refused by
/// the callers, as by ggml) the row is left zero.
#[inline(always)]
pub(crate) fn quant_iq2_xxs(src: &[f32], out: &mut [u8], weights: Option<&[f32]>) {
    let Some(weights) = weights else { return };
    let g = grid::iq2_xxs();
    for (ibl, (xbl, y)) in src
        .chunks_exact(256)
        .zip(out.chunks_exact_mut(66))
        .enumerate()
    {
        y.fill(0);
        let s2 = sigma2(xbl);
        let mut q2 = [0u32; 16];
        let mut scales = [0f32; 8];
        let mut max_scale = 0.0f32;
        for (ib, xb) in xbl.chunks_exact(32).enumerate() {
            let qw = &weights[256 * ibl + 32 * ib..256 * ibl + 32 * ib + 32];
            let (mut w, mut waux, mut xval) = ([0f32; 32], [0f32; 32], [0f32; 32]);
            block_weights(xb, qw, s2, &mut w, &mut waux);
            let mut signs = [0u8; 4];
            parity_signs(xb, &w, &mut xval, &mut signs);
            if c_max(&xval) < GROUP_MAX_EPS {
                continue;
            }
            let mut scale = make_qp_quants(4, &xval, &w);
            let eff_max = scale * 3.0;
            if eff_max <= 0.0 {
                continue;
            }
            let mut best = 0.0f32;
            let mut l = [0i8; 32];
            for is in -6..=6 {
                let id = (5.0 + is as f32 * 0.1) / eff_max;
                let this_scale = 1.0 / id;
                let mut laux = [0i8; 32];
                for k in 0..4 {
                    levels8(&xval[8 * k..], id, &mut laux[8 * k..]);
                    snap(g, &xval, &waux, this_scale, k, &mut laux);
                }
                let (sumqx, sumq2) = sums(&w, &xval, &laux);
                if sumq2 > 0.0 && sumqx * sumqx > best * sumq2 {
                    scale = sumqx / sumq2;
                    best = scale * sumqx;
                    l = laux;
                }
            }
            if scale > 0.0 {
                let id = 1.0 / scale;
                for k in 0..4 {
                    let mut fresh = [0i8; 8];
                    levels8(&xval[8 * k..], id, &mut fresh);
                    let gi = match g.lookup(g.key(&fresh)) {
                        Ok(gi) => gi,
                        Err(nb) => g.best_neighbour(
                            nb,
                            &xval[8 * k..],
                            &waux[8 * k..],
                            scale,
                            &mut l[8 * k..8 * k + 8],
                        ),
                    };
                    g.levels_of(gi, &mut l[8 * k..8 * k + 8]);
                }
                let (sumqx, sumq2) = sums(&w, &xval, &l);
                if sumq2 > 0.0 {
                    scale = sumqx / sumq2;
                }
            }
            if scale < 0.0 {
                scale = -scale;
                signs = signs.map(|s| !s & 127);
            }
            for k in 0..4 {
                let gi = g.lookup(g.key(&l[8 * k..8 * k + 8])).unwrap_or(0) as u32;
                q2[2 * ib] |= gi << (8 * k);
                q2[2 * ib + 1] |= (signs[k] as u32) << (7 * k);
            }
            scales[ib] = scale;
            max_scale = if max_scale > scale { max_scale } else { scale };
        }
        if max_scale == 0.0 {
            continue;
        }
        let d = max_scale / 31.0;
        y[0..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        let id = 1.0 / d;
        for ib in 0..8 {
            let l = nearest_int(0.5 * (id * scales[ib] - 1.0)).clamp(0, 15);
            q2[2 * ib + 1] |= (l as u32) << 28;
        }
        for (o, q) in y[2..66].chunks_exact_mut(4).zip(q2) {
            o.copy_from_slice(&q.to_le_bytes());
        }
    }
}

/// One row of IQ2_XS (74-byte super-blocks of 16-element blocks). Without
/// weights (refused by the callers, as by ggml) the row is left zero.
#[inline(always)]
pub(crate) fn quant_iq2_xs(src: &[f32], out: &mut [u8], weights: Option<&[f32]>) {
    let Some(weights) = weights else { return };
    let g = grid::iq2_xs();
    for (ibl, (xbl, y)) in src
        .chunks_exact(256)
        .zip(out.chunks_exact_mut(74))
        .enumerate()
    {
        y.fill(0);
        let s2 = sigma2(xbl);
        let mut q2 = [0u16; 32];
        let mut scales = [0f32; 16];
        let mut max_scale = 0.0f32;
        for (ib, xb) in xbl.chunks_exact(16).enumerate() {
            let qw = &weights[256 * ibl + 16 * ib..256 * ibl + 16 * ib + 16];
            let (mut w, mut waux, mut xval) = ([0f32; 16], [0f32; 16], [0f32; 16]);
            block_weights(xb, qw, s2, &mut w, &mut waux);
            let mut signs = [0u8; 2];
            parity_signs(xb, &w, &mut xval, &mut signs);
            let max = c_max(&xval);
            if max < GROUP_MAX_EPS {
                continue;
            }
            let mut best = 0.0f32;
            let mut scale = max / 5.0;
            let mut l = [0i8; 16];
            let mut on_grid = [true; 2];
            for is in -9..=9 {
                let id = (5.0 + is as f32 * 0.1) / max;
                let this_scale = 1.0 / id;
                let mut laux = [0i8; 16];
                let mut on_aux = [true; 2];
                for k in 0..2 {
                    levels8(&xval[8 * k..], id, &mut laux[8 * k..]);
                    on_aux[k] = snap(g, &xval, &waux, this_scale, k, &mut laux);
                }
                let (sumqx, sumq2) = sums(&w, &xval, &laux);
                if sumq2 > 0.0 && sumqx * sumqx > best * sumq2 {
                    scale = sumqx / sumq2;
                    best = scale * sumqx;
                    l = laux;
                    on_grid = on_aux;
                }
            }
            if on_grid.iter().any(|&on| !on) && scale > 0.0 {
                let id = 1.0 / scale;
                for k in 0..2 {
                    if on_grid[k] {
                        continue;
                    }
                    levels8(&xval[8 * k..], id, &mut l[8 * k..]);
                    snap(g, &xval, &waux, scale, k, &mut l);
                }
                let (sumqx, sumq2) = sums(&w, &xval, &l);
                if sumq2 > 0.0 {
                    scale = sumqx / sumq2;
                }
            }
            if scale < 0.0 {
                scale = -scale;
                signs = signs.map(|s| !s & 127);
            }
            for k in 0..2 {
                let gi = g.lookup(g.key(&l[8 * k..8 * k + 8])).unwrap_or(0) as u16;
                q2[2 * ib + k] = gi | (signs[k] as u16) << 9;
            }
            scales[ib] = scale;
            max_scale = if max_scale > scale { max_scale } else { scale };
        }
        if max_scale == 0.0 {
            continue;
        }
        let d = max_scale / 31.0;
        y[0..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        let id = 1.0 / d;
        for ib in 0..16 {
            let l = nearest_int(0.5 * (id * scales[ib] - 1.0)).clamp(0, 15) as u8;
            y[66 + ib / 2] |= l << (4 * (ib % 2));
        }
        for (o, q) in y[2..66].chunks_exact_mut(2).zip(q2) {
            o.copy_from_slice(&q.to_le_bytes());
        }
    }
}

const GROUP_MAX_EPS_IQ2_S: f32 = 1e-8;

/// One row of IQ2_S (82-byte super-blocks of 16-element blocks, 8 sign
/// bits per 8). Works without weights too.
#[inline(always)]
pub(crate) fn quant_iq2_s(src: &[f32], out: &mut [u8], weights: Option<&[f32]>) {
    let g = grid::iq2_s();
    for (ibl, (xbl, y)) in src
        .chunks_exact(256)
        .zip(out.chunks_exact_mut(82))
        .enumerate()
    {
        y.fill(0);
        let s2 = 2.0 * sigma2(xbl);
        let mut scales = [0f32; 16];
        let mut max_scale = 0.0f32;
        for (ib, xb) in xbl.chunks_exact(16).enumerate() {
            let (mut w, mut waux, mut xval) = ([0f32; 16], [0f32; 16], [0f32; 16]);
            match weights {
                Some(qw) => block_weights(xb, &qw[256 * ibl + 16 * ib..], s2, &mut w, &mut waux),
                None => {
                    for i in 0..16 {
                        w[i] = 0.25 * s2 + xb[i] * xb[i];
                        waux[i] = w[i].sqrt();
                    }
                }
            }
            let mut signs = [0u8; 2];
            for (i, &x) in xb.iter().enumerate() {
                if x >= 0.0 {
                    xval[i] = x;
                } else {
                    xval[i] = -x;
                    signs[i / 8] |= 1 << (i % 8);
                }
            }
            let max = c_max(&xval);
            if max < GROUP_MAX_EPS_IQ2_S {
                continue;
            }
            let mut best = 0.0f32;
            let mut scale = max / 5.0;
            let mut l = [0i8; 16];
            let mut on_grid = [true; 2];
            for is in -9..=9 {
                let id = (5.0 + is as f32 * 0.1) / max;
                let this_scale = 1.0 / id;
                let mut laux = [0i8; 16];
                let mut on_aux = [true; 2];
                for k in 0..2 {
                    levels8(&xval[8 * k..], id, &mut laux[8 * k..]);
                    on_aux[k] = snap(g, &xval, &waux, this_scale, k, &mut laux);
                }
                let (sumqx, sumq2) = sums(&w, &xval, &laux);
                if sumq2 > 0.0 && sumqx * sumqx > best * sumq2 {
                    scale = sumqx / sumq2;
                    best = scale * sumqx;
                    l = laux;
                    on_grid = on_aux;
                }
            }
            if on_grid.iter().any(|&on| !on) && scale > 0.0 {
                let id = 1.0 / scale;
                for k in 0..2 {
                    if on_grid[k] {
                        continue;
                    }
                    levels8(&xval[8 * k..], id, &mut l[8 * k..]);
                    snap(g, &xval, &waux, scale, k, &mut l);
                }
                let (sumqx, sumq2) = sums(&w, &xval, &l);
                if sumq2 > 0.0 {
                    scale = sumqx / sumq2;
                }
            }
            if scale < 0.0 {
                scale = -scale;
                signs = signs.map(|s| !s);
            }
            for k in 0..2 {
                let gi = g.lookup(g.key(&l[8 * k..8 * k + 8])).unwrap_or(0);
                let i8 = 2 * ib + k;
                y[2 + i8] = (gi & 255) as u8;
                y[66 + i8 / 4] |= ((gi >> 8) << (2 * (i8 % 4))) as u8;
                y[2 + 32 + i8] = signs[k];
            }
            scales[ib] = scale;
            max_scale = if max_scale > scale { max_scale } else { scale };
        }
        if max_scale == 0.0 {
            continue;
        }
        let d = max_scale / 31.0;
        y[0..2].copy_from_slice(&f32_to_f16(d * 0.9875).to_le_bytes());
        let id = 1.0 / d;
        for ib in 0..16 {
            let l = nearest_int(0.5 * (id * scales[ib] - 1.0)).clamp(0, 15) as u8;
            y[74 + ib / 2] |= l << (4 * (ib % 2));
        }
    }
}

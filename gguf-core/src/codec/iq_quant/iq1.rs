//! IQ1_S and IQ1_M: ggml's `quantize_row_iq1_s_impl` and
//! `quantize_row_iq1_m_impl`. Three levels (-1, 0, 1) shifted by ±1/8: the
//! best split of each block's sorted values into the three groups is found
//! exhaustively, then groups of 8 snap to the 2048-point lattice.

use super::super::float::f32_to_f16;
use super::super::float::nearest_int;
use super::grid::{self, Lattice};

const DELTA: f32 = 0.125;
pub(crate) const X_P: [f32; 3] = [-1.0 + DELTA, DELTA, 1.0 + DELTA];
pub(crate) const X_M: [f32; 3] = [-1.0 - DELTA, -DELTA, 1.0 - DELTA];
const GROUP_MAX_EPS_IQ1_S: f32 = 1e-12;
const GROUP_MAX_EPS_IQ1_M: f32 = 1e-7;

/// Sorts `(value, index)` pairs by value as glibc's `qsort` (what ggml
/// calls) does for small arrays: a top-down merge sort, stable, so equal
/// values keep their order (it decides the prefix sums' rounding).
#[inline(always)]
fn merge_sort(v: &mut [(f32, usize)], tmp: &mut [(f32, usize)]) {
    let n = v.len();
    if n <= 1 {
        return;
    }
    let n1 = n / 2;
    merge_sort(&mut v[..n1], tmp);
    merge_sort(&mut v[n1..], tmp);
    let (mut i, mut j, mut k) = (0, n1, 0);
    while i < n1 && j < n {
        // glibc takes the left one unless the comparison says "greater".
        if v[i].0 > v[j].0 {
            tmp[k] = v[j];
            j += 1;
        } else {
            tmp[k] = v[i];
            i += 1;
        }
        k += 1;
    }
    let rest = n1 - i;
    tmp[k..k + rest].copy_from_slice(&v[i..n1]);
    k += rest;
    v[..k].copy_from_slice(&tmp[..k]);
}

/// The block's values (at most 32) sorted, as indices into the block: the
/// first `xb.len()` entries. On the stack: this runs for every block.
#[inline(always)]
fn sorted_order(xb: &[f32]) -> [usize; 32] {
    let n = xb.len().min(32);
    let mut pairs = [(0f32, 0usize); 32];
    for (p, (i, &x)) in pairs.iter_mut().zip(xb.iter().enumerate()) {
        *p = (x, i);
    }
    let mut tmp = [(0f32, 0usize); 32];
    merge_sort(&mut pairs[..n], &mut tmp);
    let mut order = [0usize; 32];
    for (o, p) in order.iter_mut().zip(&pairs[..n]) {
        *o = p.1;
    }
    order
}

/// ggml's `MAX` fold of `|x|`.
#[inline(always)]
fn abs_max(xb: &[f32]) -> f32 {
    xb.iter()
        .skip(1)
        .fold(xb[0].abs(), |m, &x| if m > x.abs() { m } else { x.abs() })
}

/// ggml's `iq1_find_best_neighbour2`: the neighbour whose values
/// `scale * xx[l]` are nearest (weighted) to `xb`; writes its levels.
#[inline(always)]
fn best_neighbour2(
    g: &Lattice,
    neighbours: &[u16],
    xb: &[f32],
    w: &[f32],
    scale: f32,
    xx: &[f32; 3],
    l: &mut [i8],
) -> usize {
    let mut values = [0f32; 8];
    values[..3].copy_from_slice(xx);
    let best = g.nearest(neighbours, xb, w, scale, &values);
    g.levels_of(best, l);
    best
}

/// Snaps the groups of 8 levels in `l` to the lattice (`xx_of(k)` the
/// shifted levels of group `k`); returns the indices and whether all were
/// on it already.
#[inline(always)]
fn snap_groups<const K: usize>(
    g: &Lattice,
    xb: &[f32],
    w: &[f32],
    scale: f32,
    xx_of: impl Fn(usize) -> &'static [f32; 3],
    l: &mut [i8],
) -> ([usize; K], bool) {
    let mut index = [0usize; K];
    let mut all_on = true;
    for (k, index) in index.iter_mut().enumerate() {
        let lk = &mut l[8 * k..8 * k + 8];
        *index = match g.lookup(g.key(lk)) {
            Ok(gi) => gi,
            Err(nb) => {
                all_on = false;
                best_neighbour2(g, nb, &xb[8 * k..], &w[8 * k..], scale, xx_of(k), lk)
            }
        };
    }
    (index, all_on)
}

/// The least-squares scale of the snapped groups (`None` unless positive).
#[inline(always)]
fn refit<const K: usize>(
    g: &Lattice,
    xb: &[f32],
    w: &[f32],
    index: &[usize; K],
    xx_of: impl Fn(usize) -> &'static [f32; 3],
) -> Option<f32> {
    let (mut sumqx, mut sumq2) = (0.0f32, 0.0f32);
    for (k, &gi) in index.iter().enumerate() {
        for (j, &p) in g.point(gi).iter().enumerate() {
            let q = xx_of(k)[((p - 1) / 2) as usize];
            sumqx += w[8 * k + j] * q * xb[8 * k + j];
            sumq2 += w[8 * k + j] * q * q;
        }
    }
    (sumqx > 0.0 && sumq2 > 0.0).then(|| sumqx / sumq2)
}

/// Levels from the split points of the sorted order.
#[inline(always)]
fn split_levels(order: &[usize], i1: usize, i2: usize, l: &mut [i8]) {
    for (j, &i) in order.iter().enumerate() {
        l[i] = if j < i1 {
            0
        } else if j < i2 {
            1
        } else {
            2
        };
    }
}

#[inline(always)]
fn sigma2(xbl: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for &v in xbl {
        s += v * v;
    }
    2.0 * s / 256.0
}

#[inline(always)]
fn block_weights(xb: &[f32], qw: Option<&[f32]>, sigma2: f32, w: &mut [f32]) {
    for i in 0..xb.len() {
        w[i] = match qw {
            Some(qw) => qw[i] * (sigma2 + xb[i] * xb[i]).sqrt(),
            None => xb[i] * xb[i],
        };
    }
}

/// One candidate of IQ1_S's split search: `(sumqx, sumq2)` with the
/// elements below sorted position `i1` at level 0, up to `i2` at 1, the
/// rest at 2, of the shifted levels `xs`.
#[inline(always)]
pub(crate) fn split_sums(
    sumx: &[f32; 33],
    sumw: &[f32; 33],
    i1: usize,
    i2: usize,
    xs: &[f32; 3],
) -> (f32, f32) {
    let sumqx = (sumx[i1] - sumx[0]) * xs[0]
        + (sumx[i2] - sumx[i1]) * xs[1]
        + (sumx[32] - sumx[i2]) * xs[2];
    let sumq2 = (sumw[i1] - sumw[0]) * xs[0] * xs[0]
        + (sumw[i2] - sumw[i1]) * xs[1] * xs[1]
        + (sumw[32] - sumw[i2]) * xs[2] * xs[2];
    (sumqx, sumq2)
}

/// IQ1_S's search over every split `i1 <= i2` of the sorted elements and
/// both shifts, in ggml's order: the scale (`max` when nothing is picked)
/// and the pick. With AVX2, 8 splits at once: a run of 8 where no lane
/// passes ggml's test against the best so far changes nothing (the best
/// only changes when a candidate passes), so it is skipped; any other run
/// is taken one candidate at a time as here.
#[inline(always)]
pub(crate) fn split_search(
    sumx: &[f32; 33],
    sumw: &[f32; 33],
    max: f32,
) -> (f32, Option<(usize, usize, i8)>) {
    let mut best_score = -f32::MAX;
    let mut scale = max;
    let mut best: Option<(usize, usize, i8)> = None;
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    let lanes = super::super::avx2();
    #[cfg(not(all(feature = "simd", target_arch = "x86_64")))]
    let lanes = false;
    for i1 in 0..=32 {
        let mut i2 = i1;
        while i2 <= 32 {
            let run = (33 - i2).min(8);
            #[cfg(all(feature = "simd", target_arch = "x86_64"))]
            if lanes {
                // SAFETY: `avx2()` saw the CPU has AVX2.
                #[allow(unsafe_code)]
                let any = unsafe {
                    super::super::x86::iq1_split_passes(sumx, sumw, i1, i2, run, best_score)
                };
                if !any {
                    i2 += run;
                    continue;
                }
            }
            for i2 in i2..i2 + if lanes { run } else { 1 } {
                for (xs, shift) in [(&X_P, 1i8), (&X_M, -1)] {
                    let (sumqx, sumq2) = split_sums(sumx, sumw, i1, i2, xs);
                    if sumq2 > 0.0 && sumqx * sumqx > best_score * sumq2 {
                        scale = sumqx / sumq2;
                        best_score = scale * sumqx;
                        best = Some((i1, i2, shift));
                    }
                }
            }
            i2 += if lanes { run } else { 1 };
        }
    }
    (scale, best)
}

/// One row of IQ1_S (50-byte super-blocks). Without weights (refused by
/// the callers, as by ggml) the row is left zero.
#[inline(always)]
pub(crate) fn quant_iq1_s(src: &[f32], out: &mut [u8], weights: Option<&[f32]>) {
    let Some(weights) = weights else { return };
    let g = grid::iq1();
    for (ibl, (xbl, y)) in src
        .chunks_exact(256)
        .zip(out.chunks_exact_mut(50))
        .enumerate()
    {
        y.fill(0);
        let s2 = sigma2(xbl);
        let mut scales = [0f32; 8];
        let mut shifts = [1i8; 8];
        let mut qh = [0u16; 8];
        let mut max_scale = 0.0f32;
        for (ib, xb) in xbl.chunks_exact(32).enumerate() {
            let mut w = [0f32; 32];
            block_weights(xb, Some(&weights[256 * ibl + 32 * ib..]), s2, &mut w);
            let max = abs_max(xb);
            if max < GROUP_MAX_EPS_IQ1_S {
                continue;
            }
            let order = sorted_order(xb);
            let order = &order[..xb.len()];
            let (mut sumx, mut sumw) = ([0f32; 33], [0f32; 33]);
            for (j, &i) in order.iter().enumerate() {
                sumx[j + 1] = sumx[j] + w[i] * xb[i];
                sumw[j + 1] = sumw[j] + w[i];
            }
            let (mut scale, best) = split_search(&sumx, &sumw, max);
            let Some((i1, i2, mut shift)) = best else {
                continue;
            };
            let mut l = [0i8; 32];
            split_levels(order, i1, i2, &mut l);
            if scale < 0.0 {
                l = l.map(|l| 2 - l);
                scale = -scale;
                shift = -shift;
            }
            let xx: &'static [f32; 3] = if shift == 1 { &X_P } else { &X_M };
            let (index, all_on) = snap_groups::<4>(g, xb, &w, scale, |_| xx, &mut l);
            if !all_on && let Some(s) = refit(g, xb, &w, &index, |_| xx) {
                scale = s;
            }
            let mut h = 0u16;
            for (k, &gi) in index.iter().enumerate() {
                y[2 + 4 * ib + k] = (gi & 255) as u8;
                h |= ((gi >> 8) as u16) << (3 * k);
            }
            qh[ib] = h;
            scales[ib] = scale;
            shifts[ib] = shift;
            max_scale = if max_scale > scale { max_scale } else { scale };
        }
        if max_scale != 0.0 {
            let d = max_scale / 15.0;
            y[0..2].copy_from_slice(&f32_to_f16(d * 1.125).to_le_bytes());
            let id = 1.0 / d;
            for ib in 0..8 {
                let mut l = nearest_int(0.5 * (id * scales[ib] - 1.0)).clamp(0, 7);
                if shifts[ib] == -1 {
                    l |= 8;
                }
                qh[ib] |= (l as u16) << 12;
            }
        }
        for (o, h) in y[34..50].chunks_exact_mut(2).zip(qh) {
            o.copy_from_slice(&h.to_le_bytes());
        }
    }
}

/// IQ1_M's shifted levels for group `k` (0 or 1) of a block with sign
/// choice `shift` (bit 1: first group minus, bit 0: second group minus).
#[inline(always)]
fn xx_m(shift: usize, k: usize) -> &'static [f32; 3] {
    let minus = if k == 0 { shift >= 2 } else { shift % 2 == 1 };
    if minus {
        &X_M
    } else {
        &X_P
    }
}

/// One row of IQ1_M (56-byte super-blocks of 16-element blocks).
#[inline(always)]
pub(crate) fn quant_iq1_m(src: &[f32], out: &mut [u8], weights: Option<&[f32]>) {
    const MASKS: [u8; 4] = [0x00, 0x80, 0x08, 0x88];
    let g = grid::iq1();
    for (ibl, (xbl, y)) in src
        .chunks_exact(256)
        .zip(out.chunks_exact_mut(56))
        .enumerate()
    {
        y.fill(0);
        let s2 = sigma2(xbl);
        let qw_of = |ib: usize| weights.map(|w| &w[256 * ibl + 16 * ib..]);
        let mut scales = [0f32; 16];
        let mut shifts = [0usize; 16];
        let mut max_scale = 0.0f32;
        for (ib, xb) in xbl.chunks_exact(16).enumerate() {
            let mut w = [0f32; 16];
            block_weights(xb, qw_of(ib), s2, &mut w);
            let max = abs_max(xb);
            if max < GROUP_MAX_EPS_IQ1_M {
                continue;
            }
            let order = sorted_order(xb);
            let order = &order[..xb.len()];
            // Prefix sums per half: each half has its own shift.
            let (mut px, mut pw) = ([[0f32; 17]; 2], [[0f32; 17]; 2]);
            for (j, &i) in order.iter().enumerate() {
                let h = usize::from(i >= 8);
                px[h][j + 1] = px[h][j] + w[i] * xb[i];
                px[1 - h][j + 1] = px[1 - h][j];
                pw[h][j + 1] = pw[h][j] + w[i];
                pw[1 - h][j + 1] = pw[1 - h][j];
            }
            let txs = [px[0][16], px[1][16]];
            let tws = [pw[0][16], pw[1][16]];
            let (p2, m2) = (X_P[2], X_M[2]);
            let cp1 = X_P[0] * X_P[0] - X_P[1] * X_P[1];
            let cp2 = X_P[1] * X_P[1] - X_P[2] * X_P[2];
            let cm1 = X_M[0] * X_M[0] - X_M[1] * X_M[1];
            let cm2 = X_M[1] * X_M[1] - X_M[2] * X_M[2];
            let mut best_score = -f32::MAX;
            let mut scale = max;
            let mut best: Option<(usize, usize, usize)> = None;
            for i1 in 0..=16 {
                for i2 in i1..=16 {
                    let (mut qx_p, mut qx_m, mut q2_p, mut q2_m) =
                        ([0f32; 2], [0f32; 2], [0f32; 2], [0f32; 2]);
                    for h in 0..2 {
                        let sx = px[h][i1] + px[h][i2];
                        qx_p[h] = txs[h] * p2 - sx;
                        qx_m[h] = txs[h] * m2 - sx;
                        q2_p[h] = tws[h] * p2 * p2 + pw[h][i1] * cp1 + pw[h][i2] * cp2;
                        q2_m[h] = tws[h] * m2 * m2 + pw[h][i1] * cm1 + pw[h][i2] * cm2;
                    }
                    let sumqx = [
                        qx_p[0] + qx_p[1],
                        qx_p[0] + qx_m[1],
                        qx_m[0] + qx_p[1],
                        qx_m[0] + qx_m[1],
                    ];
                    let sumq2 = [
                        q2_p[0] + q2_p[1],
                        q2_p[0] + q2_m[1],
                        q2_m[0] + q2_p[1],
                        q2_m[0] + q2_m[1],
                    ];
                    for k in 0..4 {
                        if sumq2[k] > 0.0 && sumqx[k] * sumqx[k] > best_score * sumq2[k] {
                            scale = sumqx[k] / sumq2[k];
                            best_score = scale * sumqx[k];
                            best = Some((i1, i2, k));
                        }
                    }
                }
            }
            let Some((i1, i2, mut best_k)) = best else {
                continue;
            };
            let mut l = [0i8; 16];
            split_levels(order, i1, i2, &mut l);
            if scale < 0.0 {
                l = l.map(|l| 2 - l);
                scale = -scale;
                best_k = 3 - best_k;
            }
            let (index, all_on) = snap_groups::<2>(g, xb, &w, scale, |k| xx_m(best_k, k), &mut l);
            if !all_on && let Some(s) = refit(g, xb, &w, &index, |k| xx_m(best_k, k)) {
                scale = s;
            }
            y[2 * ib] = (index[0] & 255) as u8;
            y[2 * ib + 1] = (index[1] & 255) as u8;
            y[32 + ib] = ((index[0] >> 8) | ((index[1] >> 8) << 4)) as u8;
            scales[ib] = scale;
            shifts[ib] = best_k;
            max_scale = if max_scale > scale { max_scale } else { scale };
        }
        if max_scale == 0.0 {
            continue;
        }
        let mut sc = [0u16; 4];
        let mut d = max_scale / 15.0;
        let id = 1.0 / d;
        let (mut sumqx, mut sumq2) = (0.0f32, 0.0f32);
        for (ib, xb) in xbl.chunks_exact(16).enumerate() {
            let l = nearest_int(0.5 * (id * scales[ib] - 1.0)).clamp(0, 7);
            sc[ib / 4] |= (l as u16) << (3 * (ib % 4));
            y[32 + ib] |= MASKS[shifts[ib]];
            let mut w = [0f32; 16];
            block_weights(xb, qw_of(ib), s2, &mut w);
            let qh = y[32 + ib] as usize;
            for k in 0..2 {
                let gi = y[2 * ib + k] as usize | ((qh << (8 - 4 * k)) & 0x700);
                let xx = xx_m(shifts[ib], k);
                for (j, &p) in g.point(gi).iter().enumerate() {
                    let q = xx[((p - 1) / 2) as usize] * (2 * l + 1) as f32;
                    sumqx += w[8 * k + j] * q * xb[8 * k + j];
                    sumq2 += w[8 * k + j] * q * q;
                }
            }
        }
        if sumq2 > 0.0 {
            d = sumqx / sumq2;
        }
        let s = f32_to_f16(d * 1.1125);
        sc[0] |= (s & 0x000f) << 12;
        sc[1] |= (s & 0x00f0) << 8;
        sc[2] |= (s & 0x0f00) << 4;
        sc[3] |= s & 0xf000;
        for (o, v) in y[48..56].chunks_exact_mut(2).zip(sc) {
            o.copy_from_slice(&v.to_le_bytes());
        }
    }
}

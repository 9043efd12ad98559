//! IQ4_XS and IQ4_NL with optional importance weights: ggml's
//! `quantize_row_iq4_nl_impl` (7 scale refinements each way per 32-element
//! block, then, for IQ4_XS, 6-bit block scales under one f16 super-scale).

use super::super::float::f32_to_f16;
use super::super::float::nearest_int;
use super::super::iq_grids::KVALUES_IQ4NL;
use super::GROUP_MAX_EPS;

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

/// The levels ggml's `best_index_int8` picks for `id * x` of each of the
/// (at most 32) elements of `xb`, with their values.
///
/// `best_index_int8` bisects to the pair of neighbouring levels around its
/// argument, the lower one being the last level `<= x`, and then takes the
/// nearer (ties up; at or beyond either end, that end; NaN, the last).
/// Counting the levels `<= x` finds the same pair without the bisection's
/// unpredictable branches, for all 32 elements at once (this runs for every
/// element on each of the 15 scales tried), and the final comparison is
/// ggml's, so the levels are the same (a unit test compares the two).
#[inline(always)]
fn nearest_levels(xb: &[f32], id: f32) -> ([u8; 32], [f32; 32]) {
    const N: usize = KVALUES_IQ4NL.len();
    let v = KVALUES_IQ4NL.map(|k| k as f32);
    let mut xs = [0f32; 32];
    for (o, &x) in xs.iter_mut().zip(xb) {
        *o = id * x;
    }
    let (mut idx, mut q) = ([0u8; 32], [0f32; 32]);
    for j in 0..32 {
        let x = xs[j];
        let (mut c, mut lo, mut hi) = (0u8, v[0], v[N - 1]);
        for &vi in &v[1..N - 1] {
            let le = vi <= x;
            c += u8::from(le);
            lo = if le { vi } else { lo };
        }
        for &vi in v[1..N - 1].iter().rev() {
            hi = if vi > x { vi } else { hi };
        }
        let down = x - lo < hi - x;
        let nan = x.is_nan();
        idx[j] = if nan {
            (N - 1) as u8
        } else {
            c + u8::from(!down)
        };
        q[j] = if nan {
            v[N - 1]
        } else if down {
            lo
        } else {
            hi
        };
    }
    (idx, q)
}

/// The weighted error sums `(sum w*q*x, sum w*q*q)` with levels picked for
/// the inverse scale `id`.
#[inline(always)]
fn sums(xb: &[f32], w: &[f32; 32], id: f32) -> (f32, f32) {
    let (_, q) = nearest_levels(xb, id);
    let (mut sumqx, mut sumq2) = (0.0f32, 0.0f32);
    for ((&x, &w), &q) in xb.iter().zip(w).zip(&q) {
        sumqx += w * q * x;
        sumq2 += w * q * q;
    }
    (sumqx, sumq2)
}

/// The best scale of one 32-element block (0 for an all-but-zero block).
#[inline(always)]
pub(crate) fn block_scale(xb: &[f32], w: &[f32; 32]) -> f32 {
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
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    if let (true, Ok(x32)) = (super::super::avx2(), <&[f32; 32]>::try_from(xb)) {
        // The 16 trials (the first, then 7 each way) 8 at a time, picked
        // in ggml's order with ggml's tests.
        let mut cands = [1.0 / d; 16];
        for (c, itry) in cands[1..].iter_mut().zip(-NTRY..=NTRY) {
            *c = (itry + v0 as i32) as f32 / max;
        }
        let (mut sqx, mut sq2) = ([0f32; 16], [0f32; 16]);
        for g in 0..2 {
            let mut c = [0f32; 8];
            c.copy_from_slice(&cands[8 * g..8 * g + 8]);
            // SAFETY: `avx2()` saw the CPU has AVX2.
            #[allow(unsafe_code)]
            let (a, b) = unsafe { super::super::x86::iq4_candidates(x32, w, c) };
            sqx[8 * g..8 * g + 8].copy_from_slice(&a);
            sq2[8 * g..8 * g + 8].copy_from_slice(&b);
        }
        let mut d = if sq2[0] > 0.0 { sqx[0] / sq2[0] } else { 0.0 };
        let mut best = d * sqx[0];
        for k in 1..16 {
            if sq2[k] > 0.0 && sqx[k] * sqx[k] > best * sq2[k] {
                d = sqx[k] / sq2[k];
                best = d * sqx[k];
            }
        }
        return d;
    }
    let (sumqx, sumq2) = sums(xb, w, 1.0 / d);
    let mut d = if sumq2 > 0.0 { sumqx / sumq2 } else { 0.0 };
    let mut best = d * sumqx;
    for itry in -NTRY..=NTRY {
        let (sumqx, sumq2) = sums(xb, w, (itry + v0 as i32) as f32 / max);
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
            l[32 * ib..32 * ib + 32].copy_from_slice(&nearest_levels(xb, idl).0);
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
        let (l, _) = nearest_levels(xb, id);
        pack_nibbles(&l, &mut y[2..18]);
    }
}

#[cfg(test)]
mod tests {
    use super::nearest_levels;
    use crate::codec::iq_grids::KVALUES_IQ4NL;

    /// ggml's `best_index_int8`, as written there (a bisection).
    fn bisect(val: &[i8; 16], x: f32) -> usize {
        if x <= val[0] as f32 {
            return 0;
        }
        if x >= val[15] as f32 {
            return 15;
        }
        let (mut ml, mut mu) = (0usize, 15usize);
        while mu - ml > 1 {
            let mav = (ml + mu) / 2;
            if x < val[mav] as f32 {
                mu = mav;
            } else {
                ml = mav;
            }
        }
        if x - (val[mu - 1] as f32) < val[mu] as f32 - x {
            mu - 1
        } else {
            mu
        }
    }

    #[test]
    fn nearest_levels_equal_ggml_bisection() {
        let mut xs = vec![
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -0.0,
            0.0,
            1e30,
            -1e30,
        ];
        // Every level, every midpoint between integers, and their float
        // neighbours.
        for i in -2600..=2600 {
            let v = i as f32 / 20.0;
            xs.extend([v, v.next_up(), v.next_down()]);
        }
        for chunk in xs.chunks(32) {
            let mut xb = [0f32; 32];
            xb[..chunk.len()].copy_from_slice(chunk);
            let (idx, q) = nearest_levels(&xb, 1.0);
            for j in 0..32 {
                let k = bisect(&KVALUES_IQ4NL, xb[j]);
                assert_eq!(idx[j] as usize, k, "x = {}", xb[j]);
                assert_eq!(q[j], KVALUES_IQ4NL[k] as f32, "x = {}", xb[j]);
            }
        }
    }
}

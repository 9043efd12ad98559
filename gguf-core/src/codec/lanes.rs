//! Search kernels that evaluate several candidates (trial scales) at once,
//! one per AVX2 lane, for `k_quants`' `make_qkx2_quants` and
//! `make_qx_quants`: within each lane the portable code's float operations
//! in its order, the pick between candidates the portable one. `agree`
//! proves them (and `x86`'s other kernels) equal to the portable code.

#[cfg(all(feature = "simd", target_arch = "x86_64"))]
use super::{float::nearest_int, x86};

/// `make_qkx2_quants`'s state when its search starts (after the first
/// trial scale).
#[cfg(all(feature = "simd", target_arch = "x86_64"))]
pub(crate) struct Qkx2Start {
    pub max: f32,
    pub min: f32,
    pub scale: f32,
    pub best_error: f32,
    pub sum_w: f32,
    pub sum_x: f32,
}

/// `make_qkx2_quants`'s search over `nstep + 1` scales, 8 at a time
/// (`x86::qkx_candidates`), picked in ggml's order with ggml's test. A
/// pick that moves the min changes the later candidates (their levels are
/// of `x - min`, their scales over `max - min`), so the lanes after it are
/// dropped and the search goes on from the next scale with the new min:
/// each candidate is evaluated with the state ggml evaluates it with.
/// Writes the winner's levels (made again from its scale and min, as its
/// trial made them) to `l_out`; returns `(scale, -min)`.
///
/// # Safety
///
/// The CPU must have AVX2.
#[cfg(all(feature = "simd", target_arch = "x86_64"))]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn qkx2_search<const N: usize>(
    nmax: i32,
    x: &[f32; N],
    weights: &[f32; N],
    l_out: &mut [u8],
    rmin: f32,
    rdelta: f32,
    nstep: i32,
    use_mad: bool,
    start: Qkx2Start,
) -> (f32, f32) {
    let Qkx2Start {
        max,
        mut min,
        mut scale,
        mut best_error,
        sum_w,
        sum_x,
    } = start;
    let nmaxf = nmax as f32;
    let mut xm = [0f32; N];
    for (d, &v) in xm.iter_mut().zip(x) {
        *d = v - min;
    }
    let mut winner: Option<(f32, f32)> = None;
    let mut is = 0i32;
    while is <= nstep {
        let count = ((nstep - is + 1) as usize).min(8);
        let base = min;
        let mut cands = [0f32; 8];
        for (k, c) in cands.iter_mut().enumerate() {
            let step = is + k.min(count - 1) as i32;
            *c = (rmin + rdelta * step as f32 + nmaxf) / (max - min);
        }
        let r = x86::qkx_candidates(x, weights, &xm, cands, nmax, sum_w, sum_x, use_mad);
        let mut next = is + count as i32;
        for (k, &cand) in cands.iter().enumerate().take(count) {
            if r.dd[k] > 0.0 && r.err[k] < best_error {
                best_error = r.err[k];
                scale = r.scale[k];
                min = r.min[k];
                winner = Some((cand, base));
                if min.to_bits() != base.to_bits() {
                    for (d, &v) in xm.iter_mut().zip(x) {
                        *d = v - min;
                    }
                    next = is + k as i32 + 1;
                    break;
                }
            }
        }
        is = next;
    }
    if let Some((iscale, m)) = winner {
        for (o, &v) in l_out.iter_mut().zip(x) {
            *o = nearest_int(iscale * (v - m)).min(nmax).max(0) as u8;
        }
    }
    (scale, -min)
}

/// `make_qx_quants`'s 19 trial scales (the first, then 9 each way), 8 at
/// a time (`x86::qx_candidates`), picked in ggml's order with ggml's
/// tests: `(the winner's inverse scale, the scale)`. The trials do not
/// depend on one another, only the pick does.
///
/// # Safety
///
/// The CPU must have AVX2.
#[cfg(all(feature = "simd", target_arch = "x86_64"))]
#[target_feature(enable = "avx2")]
pub(crate) fn qx_search<const N: usize>(
    nmax: i32,
    max: f32,
    x: &[f32; N],
    w: &[f32; N],
    wx: &[f32; N],
) -> (f32, f32) {
    let nmaxf = nmax as f32;
    let mut cands = [-nmaxf / max; 24];
    for (c, is) in cands[1..].iter_mut().zip((-9i32..=9).filter(|&is| is != 0)) {
        *c = -(nmaxf + 0.1 * is as f32) / max;
    }
    let (mut slx, mut sl2) = ([0f32; 24], [0f32; 24]);
    for g in 0..3 {
        let mut c = [0f32; 8];
        c.copy_from_slice(&cands[8 * g..8 * g + 8]);
        let (a, b) = x86::qx_candidates(x, w, wx, c, nmax);
        slx[8 * g..8 * g + 8].copy_from_slice(&a);
        sl2[8 * g..8 * g + 8].copy_from_slice(&b);
    }
    let mut scale = if sl2[0] != 0.0 { slx[0] / sl2[0] } else { 0.0 };
    let mut best = scale * slx[0];
    let mut iscale = cands[0];
    for k in 1..19 {
        let (sumlx, suml2) = (slx[k], sl2[k]);
        if suml2 > 0.0 && sumlx * sumlx > best * suml2 {
            scale = sumlx / suml2;
            best = scale * sumlx;
            iscale = cands[k];
        }
    }
    (iscale, scale)
}

//! Search kernels that evaluate several candidates (trial scales) at once,
//! one per AVX2 lane, for `k_quants`' `make_qkx2_quants` and
//! `make_qx_quants`: within each lane the portable code's float operations
//! in its order, the pick between candidates the portable one. `agree`
//! proves them (and `x86`'s other kernels) equal to the portable code.

#[cfg(all(feature = "simd", target_arch = "x86_64"))]
use super::{float::nearest_int, x86};

/// `make_qkx2_quants`' state when its search starts (after the first
/// trial scale).
#[derive(Clone, Copy, Debug)]
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
    let mut s = Search::new(x, weights, nmax, start);
    while s.is <= nstep {
        batch::<N>(&mut s, nmax, (rmin, rdelta, nstep), use_mad);
    }
    s.finish(nmax, l_out)
}

/// One batch of 8 candidates of a search, in one kernel call.
#[cfg(all(feature = "simd", target_arch = "x86_64"))]
#[inline(always)]
fn batch<const N: usize>(s: &mut Search<'_, N>, nmax: i32, steps: (f32, f32, i32), use_mad: bool) {
    let cands = s.candidates(nmax, steps);
    // SAFETY: a `Search` runs inside the AVX2 kernels only.
    #[allow(unsafe_code)]
    let r = unsafe {
        x86::qkx_candidates::<N>(
            s.x,
            s.weights,
            &s.xm,
            cands,
            nmax,
            (s.sum_w, s.sum_x),
            s.best_error,
            use_mad,
        )
    };
    s.take(&r, &cands);
}

/// One `make_qkx2_quants` search under way: the next trial scale, the
/// best so far, and `x - min` for the current min.
#[cfg(all(feature = "simd", target_arch = "x86_64"))]
struct Search<'a, const N: usize> {
    x: &'a [f32; N],
    weights: &'a [f32; N],
    xm: [f32; N],
    max: f32,
    min: f32,
    scale: f32,
    best_error: f32,
    sum_w: f32,
    sum_x: f32,
    /// The winner's inverse scale and the min its levels were made with.
    winner: (f32, f32),
    /// The next trial scale's step.
    is: i32,
    /// Trials in the batch under way, and the min they were made with.
    count: usize,
    base: f32,
}

#[cfg(all(feature = "simd", target_arch = "x86_64"))]
impl<'a, const N: usize> Search<'a, N> {
    #[inline(always)]
    fn new(x: &'a [f32; N], w: &'a [f32; N], nmax: i32, start: Qkx2Start) -> Self {
        let mut xm = [0f32; N];
        for (d, &v) in xm.iter_mut().zip(x) {
            *d = v - start.min;
        }
        Search {
            x,
            weights: w,
            xm,
            max: start.max,
            min: start.min,
            scale: start.scale,
            best_error: start.best_error,
            sum_w: start.sum_w,
            sum_x: start.sum_x,
            // The first trial's levels, made again by `finish` if no
            // later trial wins.
            winner: (nmax as f32 / (start.max - start.min), start.min),
            is: 0,
            count: 0,
            base: start.min,
        }
    }

    /// The next batch's inverse scales (the last repeated past `nstep`).
    #[inline(always)]
    fn candidates(&mut self, nmax: i32, (rmin, rdelta, nstep): (f32, f32, i32)) -> [f32; 8] {
        self.count = ((nstep - self.is + 1) as usize).min(8);
        self.base = self.min;
        // SAFETY: a `Search` runs inside the AVX2 kernels only.
        #[allow(unsafe_code)]
        unsafe {
            x86::qkx_iscales(
                self.is,
                self.count,
                (rmin, rdelta),
                nmax,
                self.max - self.min,
            )
        }
    }

    /// The batch's results taken in ggml's order, up to the first pick
    /// that moves the min.
    #[inline(always)]
    fn take(&mut self, r: &x86::Qkx8, cands: &[f32; 8]) {
        let mut next = self.is + self.count as i32;
        // Only the lanes `better` marks can pass ggml's test; among them,
        // in order, each against the best as the picks before it left it.
        let mut lanes = r.better & ((1u32 << self.count) - 1);
        while lanes != 0 {
            let k = lanes.trailing_zeros() as usize;
            lanes &= lanes - 1;
            if r.err[k] < self.best_error {
                self.best_error = r.err[k];
                self.scale = r.scale[k];
                self.min = r.min[k];
                self.winner = (cands[k], self.base);
                if self.min.to_bits() != self.base.to_bits() {
                    for (d, &v) in self.xm.iter_mut().zip(self.x) {
                        *d = v - self.min;
                    }
                    next = self.is + k as i32 + 1;
                    break;
                }
            }
        }
        self.is = next;
    }

    /// Writes the winner's levels; `(scale, -min)`.
    #[inline(always)]
    fn finish(&self, nmax: i32, l_out: &mut [u8]) -> (f32, f32) {
        let (iscale, m) = self.winner;
        for (o, &v) in l_out.iter_mut().zip(self.x) {
            *o = nearest_int(iscale * (v - m)).min(nmax).max(0) as u8;
        }
        (self.scale, -self.min)
    }
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

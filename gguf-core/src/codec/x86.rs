//! AVX2 kernels for the codecs whose portable loops LLVM vectorizes badly.
//!
//! Decoders: Q4_0 (it vectorizes across blocks with byte gathers) and the
//! IQ4 types (a 16-entry table lookup it cannot vectorize; `pshufb` does it
//! in one instruction). Each computes exactly the same IEEE operations as
//! the portable code (`(q - 8) as f32 * d`, `d * kvalues[q] as f32`), so the
//! output is bit-identical; the oracle tests run whichever path the CPU
//! selects, and `matches_portable` below compares the two directly.
//!
//! Quantizers: the Q8_0 encoder, and the searches ggml runs one candidate
//! at a time with a chain of dependent float adds per candidate (the
//! lattice neighbour search of the IQ grids, the trial scales of
//! `make_qkx2_quants`, `make_qx_quants`, `make_qp_quants` and IQ4, IQ1_S's
//! splits). Their kernels evaluate 8 candidates at once, one per lane, each
//! lane with the portable code's operations in its order, so each
//! candidate's result is the same bits; the callers pick among them as the
//! portable code does (`agree.rs` says why that is exact and checks it).
//!
//! # Safety
//!
//! Every function here is safe Rust apart from one precondition, which the
//! compiler enforces: each is `#[target_feature(enable = "avx2")]` (F16
//! also `f16c`), so calling it from code without those features needs an
//! `unsafe` block whose `SAFETY:` comment shows the CPU has them (the
//! `simd_dispatch!` macro in `codec/mod.rs` checks
//! `is_x86_feature_detected!` right before the call; the searches call
//! after `codec::avx2()` has). Memory is only touched through typed arrays
//! and checked slices (`&[u8; 16]` in, `&mut [f32; 16]` out, `get` for a
//! lattice point), converted to and from vector registers by
//! `bytemuck::cast`, so there are no raw pointers and no lengths to trust.

use std::arch::x86_64::*;

use bytemuck::cast;

use super::float::{f32_to_f16, rd_f16, rd_u16};
use super::iq_grids::KVALUES_IQ4NL;
use super::{arrays, arrays_mut};

/// Writes 16 bytes (`u8`s if `SIGNED` is false, else `i8`s) minus `offset`,
/// as f32 times `d`, to `o`.
///
/// # Safety
///
/// Safe to call where AVX2 is enabled; elsewhere the CPU must have AVX2.
#[target_feature(enable = "avx2")]
fn put16<const SIGNED: bool>(o: &mut [f32; 16], bytes: __m128i, offset: __m256i, d: __m256) {
    let hi8 = _mm_unpackhi_epi64(bytes, bytes);
    let (a, b) = if SIGNED {
        (_mm256_cvtepi8_epi32(bytes), _mm256_cvtepi8_epi32(hi8))
    } else {
        (_mm256_cvtepu8_epi32(bytes), _mm256_cvtepu8_epi32(hi8))
    };
    let a = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(a, offset)), d);
    let b = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(b, offset)), d);
    *o = cast::<[__m256; 2], [f32; 16]>([a, b]);
}

/// Low and high nibbles of 16 bytes.
///
/// # Safety
///
/// As [`put16`].
#[target_feature(enable = "avx2")]
fn nibbles(q: &[u8; 16]) -> (__m128i, __m128i) {
    let v: __m128i = cast(*q);
    let m = _mm_set1_epi8(0x0F);
    (_mm_and_si128(v, m), _mm_and_si128(_mm_srli_epi16(v, 4), m))
}

/// The two 16-element halves of a 32-element block.
#[inline(always)]
fn halves(o: &mut [f32; 32]) -> (&mut [f32; 16], &mut [f32; 16]) {
    let [lo, hi] = bytemuck::cast_mut::<[f32; 32], [[f32; 16]; 2]>(o);
    (lo, hi)
}

/// The 16 quant bytes at `at` of a block.
#[inline(always)]
fn q16<const N: usize>(b: &[u8; N], at: usize) -> [u8; 16] {
    let mut q = [0u8; 16];
    if let Some(s) = b.get(at..at + 16) {
        q.copy_from_slice(s);
    }
    q
}

/// Q4_0, bit-identical with `legacy::dequant_q4_0`.
///
/// # Safety
///
/// As [`put16`]: the CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(crate) fn dequant_q4_0<const BE: bool>(data: &[u8], out: &mut [f32]) {
    let eight = _mm256_set1_epi32(8);
    for (b, o) in arrays::<18, _>(data).zip(arrays_mut::<32, _>(out)) {
        let d = _mm256_set1_ps(rd_f16::<BE>([b[0], b[1]]));
        let (lo, hi) = nibbles(&q16(b, 2));
        let (o_lo, o_hi) = halves(o);
        put16::<false>(o_lo, lo, eight, d);
        put16::<false>(o_hi, hi, eight, d);
    }
}

/// One 32-element IQ4 sub-block: `d * kvalues[q]`.
///
/// # Safety
///
/// As [`put16`].
#[target_feature(enable = "avx2")]
fn iq4_put32(o: &mut [f32; 32], q: &[u8; 16], d: f32, table: __m128i) {
    let d = _mm256_set1_ps(d);
    let zero = _mm256_setzero_si256();
    let (lo, hi) = nibbles(q);
    let (o_lo, o_hi) = halves(o);
    put16::<true>(o_lo, _mm_shuffle_epi8(table, lo), zero, d);
    put16::<true>(o_hi, _mm_shuffle_epi8(table, hi), zero, d);
}

/// The IQ4 value table as a `pshufb` lookup table.
#[inline(always)]
fn iq4_table() -> __m128i {
    let mut t = [0u8; 16];
    for (t, &k) in t.iter_mut().zip(&KVALUES_IQ4NL) {
        *t = k as u8;
    }
    cast(t)
}

/// IQ4_NL, bit-identical with `iq::dequant_iq4_nl`.
///
/// # Safety
///
/// As [`put16`]: the CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(crate) fn dequant_iq4_nl<const BE: bool>(data: &[u8], out: &mut [f32]) {
    let table = iq4_table();
    for (b, o) in arrays::<18, _>(data).zip(arrays_mut::<32, _>(out)) {
        iq4_put32(o, &q16(b, 2), rd_f16::<BE>([b[0], b[1]]), table);
    }
}

/// IQ4_XS, bit-identical with `iq::dequant_iq4_xs`.
///
/// # Safety
///
/// As [`put16`]: the CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(crate) fn dequant_iq4_xs<const BE: bool>(data: &[u8], out: &mut [f32]) {
    let table = iq4_table();
    for (b, o) in arrays::<136, _>(data).zip(arrays_mut::<256, _>(out)) {
        let d = rd_f16::<BE>([b[0], b[1]]);
        let sh = rd_u16::<BE>([b[2], b[3]]) as i32;
        for (ib, y) in arrays_mut::<32, _>(o).enumerate() {
            let ls =
                ((b[4 + ib / 2] >> (4 * (ib % 2))) & 0xF) as i32 | (((sh >> (2 * ib)) & 3) << 4);
            iq4_put32(y, &q16(b, 8 + 16 * ib), d * (ls - 32) as f32, table);
        }
    }
}

/// Little-endian F16 with the F16C conversion instruction. `vcvtph2ps` is
/// exact for every non-NaN value and, like ggml's software conversion on
/// x86, returns NaNs quieted with their payload kept (checked for all 65536
/// inputs in `f16c_matches_software`).
///
/// # Safety
///
/// The CPU must have AVX2 and F16C.
#[target_feature(enable = "avx2,f16c")]
pub(crate) fn dequant_f16_le(data: &[u8], out: &mut [f32]) {
    let done = (data.len() / 16).min(out.len() / 8);
    for (s, d) in arrays::<16, _>(data).zip(arrays_mut::<8, _>(out)) {
        let h: __m128i = cast(*s);
        *d = cast(_mm256_cvtph_ps(h));
    }
    let (data, out) = (&data[done * 16..], &mut out[done * 8..]);
    super::float::dequant_f16::<false>(data, out);
}

/// Q8_0, byte-identical with `legacy::quant_q8_0`. The block's `amax` is
/// a C `MAX` fold, whose result depends on the order only through NaNs (a
/// NaN is taken, and the fold restarts after it); without one the
/// maximum of the magnitudes is the same in any order, so it is taken
/// across lanes, and a block with a NaN runs the portable code. Each
/// element's `round(x * id)` is the portable expression: the product,
/// then rounding half away from zero (truncation plus one step where the
/// exact remainder is at least a half), then `cvttps2dq`, which gives C's
/// `INT_MIN` for NaN and out-of-range values as `c_f32_to_i32` does.
///
/// # Safety
///
/// As [`put16`]: the CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(crate) fn quant_q8_0(src: &[f32], out: &mut [u8]) {
    let abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff));
    let (half, one) = (_mm256_set1_ps(0.5), _mm256_set1_ps(1.0));
    let sign_mask = _mm256_castsi256_ps(_mm256_set1_epi32(i32::MIN));
    for (x, y) in arrays::<32, _>(src).zip(out.chunks_exact_mut(34)) {
        let v: [__m256; 4] = cast(*x);
        let a = [
            _mm256_and_ps(v[0], abs_mask),
            _mm256_and_ps(v[1], abs_mask),
            _mm256_and_ps(v[2], abs_mask),
            _mm256_and_ps(v[3], abs_mask),
        ];
        let nan = _mm256_or_ps(
            _mm256_or_ps(
                _mm256_cmp_ps::<_CMP_UNORD_Q>(a[0], a[0]),
                _mm256_cmp_ps::<_CMP_UNORD_Q>(a[1], a[1]),
            ),
            _mm256_or_ps(
                _mm256_cmp_ps::<_CMP_UNORD_Q>(a[2], a[2]),
                _mm256_cmp_ps::<_CMP_UNORD_Q>(a[3], a[3]),
            ),
        );
        if _mm256_movemask_ps(nan) != 0 {
            super::legacy::quant_q8_0(x, y);
            continue;
        }
        let m = _mm256_max_ps(_mm256_max_ps(a[0], a[1]), _mm256_max_ps(a[2], a[3]));
        let m = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps::<1>(m));
        let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
        let m = _mm_max_ss(m, _mm_shuffle_ps::<1>(m, m));
        let amax = _mm_cvtss_f32(m);
        let d = amax / 127.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        y[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        let idv = _mm256_set1_ps(id);
        let mut q = [0i32; 32];
        for (k, q) in bytemuck::cast_mut::<[i32; 32], [[i32; 8]; 4]>(&mut q)
            .iter_mut()
            .enumerate()
        {
            let p = _mm256_mul_ps(v[k], idv);
            let t = _mm256_round_ps::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(p);
            let frac = _mm256_and_ps(_mm256_sub_ps(p, t), abs_mask);
            let step = _mm256_or_ps(_mm256_and_ps(p, sign_mask), one);
            let up = _mm256_and_ps(_mm256_cmp_ps::<_CMP_GE_OQ>(frac, half), step);
            *q = cast(_mm256_cvttps_epi32(_mm256_add_ps(t, up)));
        }
        for (o, &q) in y[2..34].iter_mut().zip(&q) {
            *o = q as u8;
        }
    }
}

/// Whether any of the `run` (at most 8) IQ1_S split candidates
/// `(i1, i2..i2 + run)`, with either shift, passes the search's test
/// against `best`: each lane computes `iq1::split_sums` for one `i2` with
/// its operations in its order.
///
/// # Safety
///
/// As [`put16`]: the CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(crate) fn iq1_split_passes(
    sumx: &[f32; 33],
    sumw: &[f32; 33],
    i1: usize,
    i2: usize,
    run: usize,
    best: f32,
) -> bool {
    use super::iq_quant::iq1::{X_M, X_P};
    let (mut x2, mut w2) = ([0f32; 8], [0f32; 8]);
    for k in 0..run.min(8) {
        x2[k] = sumx.get(i2 + k).copied().unwrap_or(0.0);
        w2[k] = sumw.get(i2 + k).copied().unwrap_or(0.0);
    }
    let (x2, w2): (__m256, __m256) = (cast(x2), cast(w2));
    let s = |v: f32| _mm256_set1_ps(v);
    let (x0, x1, x32) = (s(sumx[0]), s(sumx[i1]), s(sumx[32]));
    let (w0, w1, w32) = (s(sumw[0]), s(sumw[i1]), s(sumw[32]));
    let (a, b, c) = (
        _mm256_sub_ps(x1, x0),
        _mm256_sub_ps(x2, x1),
        _mm256_sub_ps(x32, x2),
    );
    let (aw, bw, cw) = (
        _mm256_sub_ps(w1, w0),
        _mm256_sub_ps(w2, w1),
        _mm256_sub_ps(w32, w2),
    );
    let bestv = s(best);
    let mut pass = _mm256_setzero_ps();
    for xs in [&X_P, &X_M] {
        let (p0, p1, p2) = (s(xs[0]), s(xs[1]), s(xs[2]));
        let sumqx = _mm256_add_ps(
            _mm256_add_ps(_mm256_mul_ps(a, p0), _mm256_mul_ps(b, p1)),
            _mm256_mul_ps(c, p2),
        );
        let sumq2 = _mm256_add_ps(
            _mm256_add_ps(
                _mm256_mul_ps(_mm256_mul_ps(aw, p0), p0),
                _mm256_mul_ps(_mm256_mul_ps(bw, p1), p1),
            ),
            _mm256_mul_ps(_mm256_mul_ps(cw, p2), p2),
        );
        let ok = _mm256_and_ps(
            _mm256_cmp_ps::<_CMP_GT_OQ>(sumq2, _mm256_setzero_ps()),
            _mm256_cmp_ps::<_CMP_GT_OQ>(_mm256_mul_ps(sumqx, sumqx), _mm256_mul_ps(bestv, sumq2)),
        );
        pass = _mm256_or_ps(pass, ok);
    }
    _mm256_movemask_ps(pass) & ((1 << run.min(8)) - 1) != 0
}

/// In-lane 4x4 transposes of `r`: lane half `h` of output `k` holds
/// element `k` of half `h` of each of `r[0..4]`.
#[target_feature(enable = "avx2")]
fn transpose4(r: [__m256; 4]) -> [__m256; 4] {
    let t0 = _mm256_unpacklo_ps(r[0], r[1]);
    let t1 = _mm256_unpackhi_ps(r[0], r[1]);
    let t2 = _mm256_unpacklo_ps(r[2], r[3]);
    let t3 = _mm256_unpackhi_ps(r[2], r[3]);
    [
        _mm256_shuffle_ps::<0x44>(t0, t2),
        _mm256_shuffle_ps::<0xEE>(t0, t2),
        _mm256_shuffle_ps::<0x44>(t1, t3),
        _mm256_shuffle_ps::<0xEE>(t1, t3),
    ]
}

/// The 8x8 transpose of `r`: output `k` holds element `k` of each row.
#[target_feature(enable = "avx2")]
fn transpose8(r: [__m256; 8]) -> [__m256; 8] {
    let lo = transpose4([r[0], r[1], r[2], r[3]]);
    let hi = transpose4([r[4], r[5], r[6], r[7]]);
    std::array::from_fn(|k| {
        if k < 4 {
            _mm256_permute2f128_ps::<0x20>(lo[k], hi[k])
        } else {
            _mm256_permute2f128_ps::<0x31>(lo[k - 4], hi[k - 4])
        }
    })
}

/// `quant_k4_scales`' searches: `make_qkx2_quants` with squared errors
/// and the weights `sqrt(mean of x²) + |x|` for the 8 sub-blocks of 32 of
/// a Q4_K/Q5_K block, lane `j` sub-block `j`. Each lane runs ggml's loop
/// for its sub-block, the portable code's operations in its order: the
/// first trial, then the trial scales one after another, each with the
/// min the picks before it left (so no trial is wasted, as one per lane
/// of a single sub-block's would be after a pick that moves the min).
/// Writes each sub-block's levels to its 32 of `l`; returns each one's
/// `(scale, -min)`.
///
/// # Safety
///
/// As [`put16`]: the CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(crate) fn k4_search(
    x: &[f32; 256],
    nmax: i32,
    (rmin, rdelta, nstep): (f32, f32, i32),
    l: &mut [u8; 256],
) -> [(f32, f32); 8] {
    let rows: &[[[f32; 8]; 4]; 8] = bytemuck::cast_ref(x);
    // v[i]: element i of every sub-block.
    let mut v = [_mm256_setzero_ps(); 32];
    for c in 0..4 {
        let t = transpose8(std::array::from_fn(|j| cast(rows[j][c])));
        v[8 * c..8 * c + 8].copy_from_slice(&t);
    }
    let (zero, abs) = (
        _mm256_setzero_ps(),
        _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff)),
    );
    let nmax_i = _mm256_set1_epi32(nmax);
    let levels = |iscale: __m256, min: __m256, v: __m256| {
        qkx_levels(_mm256_mul_ps(iscale, _mm256_sub_ps(v, min)), nmax_i)
    };
    // The weights.
    let mut sum_x2 = zero;
    for &v in &v {
        sum_x2 = _mm256_add_ps(sum_x2, _mm256_mul_ps(v, v));
    }
    let av_x = _mm256_sqrt_ps(_mm256_div_ps(sum_x2, _mm256_set1_ps(32.0)));
    let mut w = [zero; 32];
    for (w, &v) in w.iter_mut().zip(&v) {
        *w = _mm256_add_ps(av_x, _mm256_and_ps(v, abs));
    }
    // The first trial.
    let (mut min, mut max) = (v[0], v[0]);
    let mut sum_w = w[0];
    let mut sum_x = _mm256_mul_ps(sum_w, v[0]);
    for i in 1..32 {
        // `minps a, b` is `a < b ? a : b`: `if x < min { min = x }`, NaNs
        // included.
        min = _mm256_min_ps(v[i], min);
        max = _mm256_max_ps(v[i], max);
        sum_w = _mm256_add_ps(sum_w, w[i]);
        sum_x = _mm256_add_ps(sum_x, _mm256_mul_ps(w[i], v[i]));
    }
    min = _mm256_blendv_ps(min, zero, _mm256_cmp_ps::<_CMP_GT_OQ>(min, zero));
    let flat = _mm256_cmp_ps::<_CMP_EQ_OQ>(max, min);
    let iscale = _mm256_div_ps(_mm256_set1_ps(nmax as f32), _mm256_sub_ps(max, min));
    let mut scale = _mm256_div_ps(_mm256_set1_ps(1.0), iscale);
    let mut best = zero;
    for i in 0..32 {
        let l = _mm256_cvtepi32_ps(levels(iscale, min, v[i]));
        let diff = _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(scale, l), min), v[i]);
        best = _mm256_add_ps(best, _mm256_mul_ps(w[i], _mm256_mul_ps(diff, diff)));
    }
    // The winner's inverse scale and the min its levels were made with.
    let (mut win_iscale, mut win_min) = (iscale, min);
    let mut lf = [zero; 32];
    // A block of flat sub-blocks only (zeros, say) has nothing to search.
    let searched = if _mm256_movemask_ps(flat) == 0xFF {
        -1
    } else {
        nstep
    };
    for is in 0..=searched {
        let r = _mm256_set1_ps(rmin + rdelta * is as f32 + nmax as f32);
        let iscale = _mm256_div_ps(r, _mm256_sub_ps(max, min));
        let (mut s_l, mut s_l2, mut s_xl) = (zero, zero, zero);
        for i in 0..32 {
            let l = _mm256_cvtepi32_ps(levels(iscale, min, v[i]));
            let a = _mm256_mul_ps(w[i], l);
            s_l = _mm256_add_ps(s_l, a);
            s_l2 = _mm256_add_ps(s_l2, _mm256_mul_ps(a, l));
            s_xl = _mm256_add_ps(s_xl, _mm256_mul_ps(a, v[i]));
            lf[i] = l;
        }
        let (dd, this_scale, this_min) = qkx_fit((sum_w, sum_x), (s_l, s_l2, s_xl));
        let mut err = zero;
        for i in 0..32 {
            let diff = _mm256_sub_ps(
                _mm256_add_ps(_mm256_mul_ps(this_scale, lf[i]), this_min),
                v[i],
            );
            err = _mm256_add_ps(err, _mm256_mul_ps(w[i], _mm256_mul_ps(diff, diff)));
        }
        let better = _mm256_andnot_ps(
            flat,
            _mm256_and_ps(
                _mm256_cmp_ps::<_CMP_GT_OQ>(dd, zero),
                _mm256_cmp_ps::<_CMP_LT_OQ>(err, best),
            ),
        );
        best = _mm256_blendv_ps(best, err, better);
        scale = _mm256_blendv_ps(scale, this_scale, better);
        win_iscale = _mm256_blendv_ps(win_iscale, iscale, better);
        win_min = _mm256_blendv_ps(win_min, min, better);
        min = _mm256_blendv_ps(min, this_min, better);
    }
    // A flat sub-block has no search: levels 0 (its scale is 1 / inf).
    let mut out = [[0i32; 8]; 32];
    for (o, &v) in out.iter_mut().zip(&v) {
        let l = levels(win_iscale, win_min, v);
        *o = cast(_mm256_andnot_si256(_mm256_castps_si256(flat), l));
    }
    for (j, l) in l.chunks_exact_mut(32).enumerate() {
        for (l, o) in l.iter_mut().zip(&out) {
            *l = o[j] as u8;
        }
    }
    let scale: [f32; 8] = cast(scale);
    let min: [f32; 8] = cast(min);
    std::array::from_fn(|j| (scale[j], -min[j]))
}

/// `values[(p - 1) / 2]` of 8 lattice values `p` (odd, positive).
#[target_feature(enable = "avx2")]
fn point_values(p: [i8; 8], table: __m256) -> __m256 {
    let v = _mm256_cvtepi8_epi32(_mm_cvtsi64_si128(i64::from_le_bytes(p.map(|b| b as u8))));
    let idx = _mm256_srai_epi32::<1>(_mm256_sub_epi32(v, _mm256_set1_epi32(1)));
    _mm256_permutevar8x32_ps(table, idx)
}

/// The `dims` values of point `j` from `at` on in `out` (ones, the value
/// of level 0, past the end of `points`, which a lattice never reaches).
#[inline(always)]
fn put_point(points: &[i8], dims: usize, j: u16, out: &mut [i8]) {
    let at = j as usize * dims;
    match points.get(at..at + dims) {
        Some(p) => out[..dims].copy_from_slice(p),
        None => out[..dims].fill(1),
    }
}

/// `Lattice::nearest_portable` for 8- and 4-value points, 8 neighbours at
/// a time: each lane computes one neighbour's `w * diff * diff` terms and
/// adds them from 0 in the portable loop's order (the terms are made a row
/// per neighbour and transposed, so that the adds run across lanes), and
/// the pick scans the lanes in neighbour order with the portable test.
/// Other point sizes run the portable loop.
///
/// # Safety
///
/// As [`put16`]: the CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(crate) fn nearest_point(
    points: &[i8],
    dims: usize,
    neighbours: &[u16],
    x: &[f32],
    w: &[f32],
    scale: f32,
    values: &[f32; 8],
) -> usize {
    let mut best_d2 = f32::MAX;
    let mut best = neighbours.first().copied().unwrap_or(0) as usize;
    let table: __m256 = cast(*values);
    let sc = _mm256_set1_ps(scale);
    // `x` and `w` as vectors: 8 values, or 4 twice.
    let (xv, wv) = match (dims, x, w) {
        (8, &[x0, x1, x2, x3, x4, x5, x6, x7], &[w0, w1, w2, w3, w4, w5, w6, w7]) => (
            cast::<[f32; 8], __m256>([x0, x1, x2, x3, x4, x5, x6, x7]),
            cast::<[f32; 8], __m256>([w0, w1, w2, w3, w4, w5, w6, w7]),
        ),
        (4, &[x0, x1, x2, x3], &[w0, w1, w2, w3]) => (
            cast::<[f32; 8], __m256>([x0, x1, x2, x3, x0, x1, x2, x3]),
            cast::<[f32; 8], __m256>([w0, w1, w2, w3, w0, w1, w2, w3]),
        ),
        _ => {
            for &j in neighbours {
                let mut p = [1i8; 8];
                put_point(points, dims.min(8), j, &mut p);
                let mut d2 = 0.0f32;
                for ((&p, &x), &w) in p.iter().zip(x).zip(w).take(dims) {
                    let diff = scale * values[((p - 1) / 2) as usize & 7] - x;
                    d2 += w * diff * diff;
                }
                if d2 < best_d2 {
                    best_d2 = d2;
                    best = j as usize;
                }
            }
            return best;
        }
    };
    let term = |p: [i8; 8]| {
        let diff = _mm256_sub_ps(_mm256_mul_ps(sc, point_values(p, table)), xv);
        _mm256_mul_ps(_mm256_mul_ps(wv, diff), diff)
    };
    for chunk in neighbours.chunks(8) {
        // Lanes past the chunk's end score its first neighbour again,
        // unread.
        let j = |i: usize| chunk.get(i).copied().unwrap_or(chunk[0]);
        let mut acc = _mm256_setzero_ps();
        if dims == 8 {
            let mut rows = [_mm256_setzero_ps(); 8];
            for (i, r) in rows.iter_mut().enumerate() {
                let mut p = [1i8; 8];
                put_point(points, 8, j(i), &mut p);
                *r = term(p);
            }
            let a = transpose4([rows[0], rows[1], rows[2], rows[3]]);
            let b = transpose4([rows[4], rows[5], rows[6], rows[7]]);
            let cols = [
                _mm256_permute2f128_ps::<0x20>(a[0], b[0]),
                _mm256_permute2f128_ps::<0x20>(a[1], b[1]),
                _mm256_permute2f128_ps::<0x20>(a[2], b[2]),
                _mm256_permute2f128_ps::<0x20>(a[3], b[3]),
                _mm256_permute2f128_ps::<0x31>(a[0], b[0]),
                _mm256_permute2f128_ps::<0x31>(a[1], b[1]),
                _mm256_permute2f128_ps::<0x31>(a[2], b[2]),
                _mm256_permute2f128_ps::<0x31>(a[3], b[3]),
            ];
            for c in cols {
                acc = _mm256_add_ps(acc, c);
            }
        } else {
            // Row `i` holds neighbour `i` in its low half and `i + 4` in
            // its high half, so the in-lane transpose gives lanes in
            // neighbour order.
            let mut rows = [_mm256_setzero_ps(); 4];
            for (i, r) in rows.iter_mut().enumerate() {
                let mut p = [1i8; 8];
                put_point(points, 4, j(i), &mut p[..4]);
                put_point(points, 4, j(i + 4), &mut p[4..]);
                *r = term(p);
            }
            for c in transpose4(rows) {
                acc = _mm256_add_ps(acc, c);
            }
        }
        // Only a lane below the best so far can be picked (the best only
        // falls), so a chunk without one is skipped unread.
        let below = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LT_OQ>(acc, _mm256_set1_ps(best_d2)));
        if below & ((1 << chunk.len()) - 1) == 0 {
            continue;
        }
        let d2: [f32; 8] = cast(acc);
        for (&d2, &j) in d2.iter().zip(chunk) {
            if d2 < best_d2 {
                best_d2 = d2;
                best = j as usize;
            }
        }
    }
    best
}

/// ggml's `nearest_int` (the 1.5 * 2^23 trick) in each lane, as
/// `float::nearest_int` computes it.
#[target_feature(enable = "avx2")]
fn nearest_int8(v: __m256) -> __m256i {
    let val = _mm256_castps_si256(_mm256_add_ps(v, _mm256_set1_ps(12_582_912.0)));
    _mm256_sub_epi32(
        _mm256_and_si256(val, _mm256_set1_epi32(0x007f_ffff)),
        _mm256_set1_epi32(0x0040_0000),
    )
}

/// `make_qkx2_quants`' levels of the products `iscale * (x - min)`:
/// `nearest_int`, clamped to `0..=nmax`.
#[target_feature(enable = "avx2")]
fn qkx_levels(v: __m256, nmax: __m256i) -> __m256i {
    _mm256_max_epi32(
        _mm256_min_epi32(nearest_int8(v), nmax),
        _mm256_setzero_si256(),
    )
}

/// `make_qkx2_quants`' least-squares fit of a trial from its weighted sums
/// `(sum w, sum w*x)` and `(sum w*l, sum w*l*l, sum w*l*x)`: the
/// determinant, the scale and the min (a min above 0 becomes 0 and the
/// scale is refitted), as ggml computes them.
#[target_feature(enable = "avx2")]
fn qkx_fit(
    (sum_w, sum_x): (__m256, __m256),
    (s_l, s_l2, s_xl): (__m256, __m256, __m256),
) -> (__m256, __m256, __m256) {
    let zero = _mm256_setzero_ps();
    let dd = _mm256_sub_ps(_mm256_mul_ps(sum_w, s_l2), _mm256_mul_ps(s_l, s_l));
    let sc = _mm256_div_ps(
        _mm256_sub_ps(_mm256_mul_ps(sum_w, s_xl), _mm256_mul_ps(sum_x, s_l)),
        dd,
    );
    let mn = _mm256_div_ps(
        _mm256_sub_ps(_mm256_mul_ps(s_l2, sum_x), _mm256_mul_ps(s_l, s_xl)),
        dd,
    );
    let pos = _mm256_cmp_ps::<_CMP_GT_OQ>(mn, zero);
    let scale = _mm256_blendv_ps(sc, _mm256_div_ps(s_xl, s_l2), pos);
    (dd, scale, _mm256_blendv_ps(mn, zero, pos))
}

/// Eight candidates of `make_qkx2_quants`'s scale search, one per lane.
pub(crate) struct Qkx8 {
    /// The weighted error.
    pub err: [f32; 8],
    /// The least-squares scale and min.
    pub scale: [f32; 8],
    pub min: [f32; 8],
    /// Bit `k` set where lane `k` has a positive determinant and an error
    /// below the best error the call was given: the only lanes ggml's
    /// test can pick (the best only falls).
    pub better: u32,
}

/// `make_qkx2_quants`'s trial inverse scales
/// `(rmin + rdelta * step + nmax) / range` for the steps `first..`, one
/// per lane, the `count`th repeated in the lanes past it; each lane the
/// portable expression's operations in its order.
///
/// # Safety
///
/// As [`put16`]: the CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(crate) fn qkx_iscales(
    first: i32,
    count: usize,
    (rmin, rdelta): (f32, f32),
    nmax: i32,
    range: f32,
) -> [f32; 8] {
    let iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let last = _mm256_set1_epi32(count as i32 - 1);
    let step = _mm256_add_epi32(_mm256_set1_epi32(first), _mm256_min_epi32(iota, last));
    let r = _mm256_add_ps(
        _mm256_set1_ps(rmin),
        _mm256_mul_ps(_mm256_set1_ps(rdelta), _mm256_cvtepi32_ps(step)),
    );
    let r = _mm256_add_ps(r, _mm256_set1_ps(nmax as f32));
    cast(_mm256_div_ps(r, _mm256_set1_ps(range)))
}

/// `make_qkx2_quants`'s search step for 8 inverse scales `iscale` at
/// once, each lane doing what its loop body does for one, in its order:
/// levels of `xm` (`x - min`), the three weighted sums from 0 over the
/// elements in order, the least-squares scale and min, and the error over
/// the elements in order.
///
/// # Safety
///
/// As [`put16`]: the CPU must have AVX2.
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn qkx_candidates<const N: usize>(
    x: &[f32; N],
    w: &[f32; N],
    xm: &[f32; N],
    iscale: [f32; 8],
    nmax: i32,
    (sum_w, sum_x): (f32, f32),
    best: f32,
    use_mad: bool,
) -> Qkx8 {
    let (zero, nmax_i) = (_mm256_setzero_ps(), _mm256_set1_epi32(nmax));
    let is: __m256 = cast(iscale);
    let (mut s_l, mut s_l2, mut s_xl) = (zero, zero, zero);
    // A plain loop keeps the sums in registers: a closure passed to
    // `array::from_fn` is compiled without the kernel's features, so it
    // stays a call whose sums go through memory.
    let mut lf = [zero; N];
    for i in 0..N {
        let l = _mm256_cvtepi32_ps(qkx_levels(_mm256_mul_ps(is, _mm256_set1_ps(xm[i])), nmax_i));
        let a = _mm256_mul_ps(_mm256_set1_ps(w[i]), l);
        s_l = _mm256_add_ps(s_l, a);
        s_l2 = _mm256_add_ps(s_l2, _mm256_mul_ps(a, l));
        s_xl = _mm256_add_ps(s_xl, _mm256_mul_ps(a, _mm256_set1_ps(x[i])));
        lf[i] = l;
    }
    let abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff));
    let sums = (_mm256_set1_ps(sum_w), _mm256_set1_ps(sum_x));
    let (dd, scale, min) = qkx_fit(sums, (s_l, s_l2, s_xl));
    let mut err = zero;
    for i in 0..N {
        let diff = _mm256_sub_ps(
            _mm256_add_ps(_mm256_mul_ps(scale, lf[i]), min),
            _mm256_set1_ps(x[i]),
        );
        let diff = if use_mad {
            _mm256_and_ps(diff, abs)
        } else {
            _mm256_mul_ps(diff, diff)
        };
        err = _mm256_add_ps(err, _mm256_mul_ps(_mm256_set1_ps(w[i]), diff));
    }
    let better = _mm256_and_ps(
        _mm256_cmp_ps::<_CMP_GT_OQ>(dd, zero),
        _mm256_cmp_ps::<_CMP_LT_OQ>(err, _mm256_set1_ps(best)),
    );
    Qkx8 {
        err: cast(err),
        scale: cast(scale),
        min: cast(min),
        better: _mm256_movemask_ps(better) as u32,
    }
}

/// `make_qx_quants`'s trial of the inverse scales `iscale`, one per lane:
/// levels in `-nmax..nmax` and the sums `(sum wx*l, sum w*l*l)` from 0 over
/// the elements in order.
///
/// # Safety
///
/// As [`put16`]: the CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(crate) fn qx_candidates<const N: usize>(
    x: &[f32; N],
    w: &[f32; N],
    wx: &[f32; N],
    iscale: [f32; 8],
    nmax: i32,
) -> ([f32; 8], [f32; 8]) {
    let is: __m256 = cast(iscale);
    let (lo, hi) = (_mm256_set1_epi32(-nmax), _mm256_set1_epi32(nmax - 1));
    let (mut slx, mut sl2) = (_mm256_setzero_ps(), _mm256_setzero_ps());
    for i in 0..N {
        let l = nearest_int8(_mm256_mul_ps(is, _mm256_set1_ps(x[i])));
        let l = _mm256_cvtepi32_ps(_mm256_max_epi32(_mm256_min_epi32(l, hi), lo));
        slx = _mm256_add_ps(slx, _mm256_mul_ps(_mm256_set1_ps(wx[i]), l));
        sl2 = _mm256_add_ps(
            sl2,
            _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(w[i]), l), l),
        );
    }
    (cast(slx), cast(sl2))
}

/// `make_qp_quants`'s trial of the inverse scales `iscale`, one per lane:
/// levels up to `nmax` and the weighted squared error from 0 over the
/// elements in order.
///
/// # Safety
///
/// As [`put16`]: the CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(crate) fn qp_candidates<const N: usize>(
    x: &[f32; N],
    w: &[f32; N],
    iscale: [f32; 8],
    nmax: i32,
) -> [f32; 8] {
    let is: __m256 = cast(iscale);
    let scale = _mm256_div_ps(_mm256_set1_ps(1.0), is);
    let hi = _mm256_set1_epi32(nmax);
    let mut mse = _mm256_setzero_ps();
    for i in 0..N {
        let xi = _mm256_set1_ps(x[i]);
        let l = nearest_int8(_mm256_mul_ps(is, xi));
        let l = _mm256_cvtepi32_ps(_mm256_min_epi32(l, hi));
        let diff = _mm256_sub_ps(xi, _mm256_mul_ps(scale, l));
        mse = _mm256_add_ps(
            mse,
            _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(w[i]), diff), diff),
        );
    }
    cast(mse)
}

/// Entry `i` (0..=15) of the 16 values `t_lo ++ t_hi`, in each lane.
#[target_feature(enable = "avx2")]
fn level(i: __m256i, t_lo: __m256, t_hi: __m256) -> __m256 {
    let high = _mm256_castsi256_ps(_mm256_cmpgt_epi32(i, _mm256_set1_epi32(7)));
    _mm256_blendv_ps(
        _mm256_permutevar8x32_ps(t_lo, i),
        _mm256_permutevar8x32_ps(t_hi, i),
        high,
    )
}

/// The IQ4 scale search's trial of the inverse scales `id`, one per lane:
/// each element's nearest level as `iq4::nearest_levels` picks it (the
/// last level at or below, the first above, the nearer of the two with
/// ties up, the top level for NaN) and the sums `(sum w*q*x, sum w*q*q)`
/// from 0 over the elements in order.
///
/// # Safety
///
/// As [`put16`]: the CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(crate) fn iq4_candidates(xb: &[f32; 32], w: &[f32; 32], id: [f32; 8]) -> ([f32; 8], [f32; 8]) {
    let v = KVALUES_IQ4NL.map(|k| _mm256_set1_ps(k as f32));
    let kv = KVALUES_IQ4NL.map(|k| k as f32);
    let t_lo: __m256 = cast([kv[0], kv[1], kv[2], kv[3], kv[4], kv[5], kv[6], kv[7]]);
    let t_hi: __m256 = cast([kv[8], kv[9], kv[10], kv[11], kv[12], kv[13], kv[14], kv[15]]);
    let ids: __m256 = cast(id);
    let (mut sqx, mut sq2) = (_mm256_setzero_ps(), _mm256_setzero_ps());
    for j in 0..32 {
        let xj = _mm256_set1_ps(xb[j]);
        let x = _mm256_mul_ps(ids, xj);
        // The levels are increasing, so with `c` the count of inner
        // levels at or below `x`, the last level at or below is `v[c]`
        // (`v[0]` for none) and the first above is `v[c + 1]` (`v[15]`
        // past the inner ones): `nearest_levels`' `lo` and `hi`.
        let mut c = _mm256_setzero_si256();
        for &vi in &v[1..15] {
            c = _mm256_sub_epi32(c, _mm256_castps_si256(_mm256_cmp_ps::<_CMP_LE_OQ>(vi, x)));
        }
        let lo = level(c, t_lo, t_hi);
        let hi = level(_mm256_add_epi32(c, _mm256_set1_epi32(1)), t_lo, t_hi);
        let down = _mm256_cmp_ps::<_CMP_LT_OQ>(_mm256_sub_ps(x, lo), _mm256_sub_ps(hi, x));
        let q = _mm256_blendv_ps(hi, lo, down);
        let q = _mm256_blendv_ps(q, v[15], _mm256_cmp_ps::<_CMP_UNORD_Q>(x, x));
        let wq = _mm256_mul_ps(_mm256_set1_ps(w[j]), q);
        sqx = _mm256_add_ps(sqx, _mm256_mul_ps(wq, xj));
        sq2 = _mm256_add_ps(sq2, _mm256_mul_ps(wq, q));
    }
    (cast(sqx), cast(sq2))
}

#[cfg(test)]
mod tests {
    #[test]
    fn f16c_matches_software() {
        if !(std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("f16c"))
        {
            eprintln!("skipped f16c_matches_software: this CPU lacks AVX2 or F16C");
            return;
        }
        let data: Vec<u8> = (0..=u16::MAX).flat_map(|h| h.to_le_bytes()).collect();
        let (mut a, mut b) = (vec![0f32; 65536], vec![0f32; 65536]);
        super::super::float::dequant_f16::<false>(&data, &mut a);
        // SAFETY: both features were detected above.
        #[allow(unsafe_code)]
        unsafe {
            super::dequant_f16_le(&data, &mut b)
        };
        for (h, (x, y)) in a.iter().zip(&b).enumerate() {
            assert_eq!(x.to_bits(), y.to_bits(), "{h:#06x}");
        }
    }

    use crate::format::GgmlType;

    /// The AVX2 kernels against the portable ones on random blocks, in both
    /// byte orders (the oracle tests only see the path the CPU picks).
    #[test]
    fn matches_portable() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            eprintln!("skipped matches_portable: this CPU lacks AVX2");
            return;
        }
        let mut s: u32 = 1;
        let data: Vec<u8> = (0..136 * 18)
            .map(|_| {
                s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (s >> 24) as u8
            })
            .collect();
        type K = fn(&[u8], &mut [f32]);
        type U = unsafe fn(&[u8], &mut [f32]);
        let cases: [(GgmlType, K, U, K, U); 3] = [
            (
                GgmlType::Q4_0,
                super::super::legacy::dequant_q4_0::<false>,
                super::dequant_q4_0::<false>,
                super::super::legacy::dequant_q4_0::<true>,
                super::dequant_q4_0::<true>,
            ),
            (
                GgmlType::IQ4_NL,
                super::super::iq::dequant_iq4_nl::<false>,
                super::dequant_iq4_nl::<false>,
                super::super::iq::dequant_iq4_nl::<true>,
                super::dequant_iq4_nl::<true>,
            ),
            (
                GgmlType::IQ4_XS,
                super::super::iq::dequant_iq4_xs::<false>,
                super::dequant_iq4_xs::<false>,
                super::super::iq::dequant_iq4_xs::<true>,
                super::dequant_iq4_xs::<true>,
            ),
        ];
        for (ty, le, le_simd, be, be_simd) in cases {
            let n =
                data.len() / ty.type_size().unwrap() as usize * ty.block_size().unwrap() as usize;
            for (portable, simd) in [(le, le_simd), (be, be_simd)] {
                let (mut a, mut b) = (vec![0f32; n], vec![0f32; n]);
                portable(&data, &mut a);
                // SAFETY: AVX2 was detected above.
                #[allow(unsafe_code)]
                unsafe {
                    simd(&data, &mut b)
                };
                let same = a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits());
                assert!(same, "{ty}");
            }
        }
    }
}

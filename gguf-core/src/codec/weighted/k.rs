//! The K-quants with importance weights: ggml's `quantize_row_q*_K_impl`,
//! what `ggml_quantize_chunk` runs for Q2_K..Q6_K when given an imatrix
//! row (without one it runs the reference quantizers of `k_quants`).
//!
//! Each function quantizes one row (whole 256-element super-blocks) with
//! `qw`, the importance weights of that row's columns. Float operations
//! follow ggml's order exactly: any reordering changes the bytes.

use super::super::arrays;
use super::super::float::nearest_int;
use super::super::k_quants::{
    k4_pack_scales, k4_requantize, make_qkx2_quants, make_qx_quants, pack_2bit, pack_q4_k,
    pack_q5_k, put_f16, q3_k_finish, q6_k_finish, sub_f, GROUP_MAX_EPS,
};

/// `sum x^2` over a super-block, added in order as ggml does.
#[inline(always)]
fn sum_sq(x: &[f32; 256]) -> f32 {
    let mut s = 0.0f32;
    for &v in x {
        s += v * v;
    }
    s
}

/// ggml's weighting of one group: `qw * sqrt(sigma2 + x^2)`, and the sum of
/// those weights (added in order).
#[inline(always)]
fn group_weights<const N: usize>(
    qw: &[f32; N],
    x: &[f32; N],
    sigma2: f32,
    w: &mut [f32; N],
) -> f32 {
    for i in 0..N {
        w[i] = qw[i] * (sigma2 + x[i] * x[i]).sqrt();
    }
    let mut sum = 0.0f32;
    for &v in w.iter() {
        sum += v;
    }
    sum
}

/// ggml's `make_qp_quants`: the scale of `x` (non-negative in practice:
/// sub-block scales or mins) on levels `0..=nmax` minimising the
/// `qw`-weighted error, levels written to `l_out`.
///
/// `l_out` is a byte as in ggml: a negative level wraps (as a C `uint8_t`
/// store does) and the refinement reads the wrapped value back, which is
/// what keeps the bytes equal on odd inputs.
#[inline(always)]
pub(crate) fn make_qp_quants<const N: usize>(
    nmax: i32,
    x: &[f32; N],
    l_out: &mut [u8; N],
    qw: &[f32; N],
) -> f32 {
    let mut max = 0.0f32;
    for &v in x {
        // C's MAX(a, b): `a > b ? a : b`, so a NaN can win.
        max = if max > v { max } else { v };
    }
    if max < GROUP_MAX_EPS {
        *l_out = [0; N];
        return 0.0;
    }
    let nmaxf = nmax as f32;
    let mut iscale = nmaxf / max;
    for (l, &v) in l_out.iter_mut().zip(x) {
        *l = nearest_int(iscale * v) as u8;
    }
    let scale = 1.0 / iscale;
    let mut best_mse = 0.0f32;
    for i in 0..N {
        let diff = x[i] - scale * l_out[i] as f32;
        best_mse += qw[i] * diff * diff;
    }
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    let lanes = super::super::avx2();
    #[cfg(not(all(feature = "simd", target_arch = "x86_64")))]
    let lanes = false;
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    if lanes {
        let cands = [-4i32, -3, -2, -1, 1, 2, 3, 4].map(|is| (0.1 * is as f32 + nmaxf) / max);
        // SAFETY: `avx2()` saw the CPU has AVX2.
        #[allow(unsafe_code)]
        let mse = unsafe { super::super::x86::qp_candidates(x, qw, cands, nmax) };
        for (&mse, &iscale_is) in mse.iter().zip(&cands) {
            if mse < best_mse {
                best_mse = mse;
                iscale = iscale_is;
            }
        }
    }
    for is in -4i32..=4 {
        if is == 0 || lanes {
            continue;
        }
        let iscale_is = (0.1 * is as f32 + nmaxf) / max;
        let scale_is = 1.0 / iscale_is;
        let mut mse = 0.0f32;
        for i in 0..N {
            let l = nearest_int(iscale_is * x[i]).min(nmax);
            let diff = x[i] - scale_is * l as f32;
            mse += qw[i] * diff * diff;
        }
        if mse < best_mse {
            best_mse = mse;
            iscale = iscale_is;
        }
    }
    let (mut sumlx, mut suml2) = (0.0f32, 0.0f32);
    for i in 0..N {
        let l = nearest_int(iscale * x[i]).min(nmax);
        l_out[i] = l as u8;
        let (w, lf) = (qw[i], l as f32);
        sumlx += w * x[i] * lf;
        suml2 += w * lf * lf;
    }
    for _ in 0..5 {
        let mut n_changed = 0;
        for i in 0..N {
            let w = qw[i];
            let li = l_out[i] as f32;
            let mut slx = sumlx - w * x[i] * li;
            let mut sl2 = suml2 - w * li * li;
            if slx > 0.0 && sl2 > 0.0 {
                let new_l = nearest_int(x[i] * sl2 / slx).min(nmax);
                if new_l != l_out[i] as i32 {
                    let nl = new_l as f32;
                    slx += w * x[i] * nl;
                    sl2 += w * nl * nl;
                    if slx * slx * suml2 > sumlx * sumlx * sl2 {
                        l_out[i] = new_l as u8;
                        sumlx = slx;
                        suml2 = sl2;
                        n_changed += 1;
                    }
                }
            }
        }
        if n_changed == 0 {
            break;
        }
    }
    if suml2 > 0.0 {
        sumlx / suml2
    } else {
        0.0
    }
}

/// The super-blocks of a row with their importance weights and output
/// blocks of `TS` bytes.
#[inline(always)]
fn super_blocks<'a, const TS: usize>(
    src: &'a [f32],
    out: &'a mut [u8],
    qw: &'a [f32],
) -> impl Iterator<Item = ((&'a [f32; 256], &'a mut [u8]), &'a [f32; 256])> {
    arrays::<256, _>(src)
        .zip(out.chunks_exact_mut(TS))
        .zip(arrays::<256, _>(qw))
}

/// Q2_K: `scales[16], qs[64], d, dmin`.
#[inline(always)]
pub(crate) fn quant_q2_k(src: &[f32], out: &mut [u8], qw: &[f32]) {
    for ((x, y), qw) in super_blocks::<84>(src, out, qw) {
        let sigma2 = sum_sq(x) / 256.0;
        let mut l = [0u8; 256];
        let (mut scales, mut mins, mut sw) = ([0f32; 16], [0f32; 16], [0f32; 16]);
        for j in 0..16 {
            let xs = sub_f::<16>(x, 16 * j);
            let mut w = [0f32; 16];
            sw[j] = group_weights(sub_f::<16>(qw, 16 * j), xs, sigma2, &mut w);
            let (s, m) = make_qkx2_quants(
                3,
                xs,
                &w,
                &mut l[16 * j..16 * j + 16],
                -0.9,
                0.05,
                36,
                false,
            );
            scales[j] = s;
            mins[j] = m;
        }
        let (mut ls, mut lm) = ([0u8; 16], [0u8; 16]);
        let dm = make_qp_quants(15, &scales, &mut ls, &sw);
        let mm = make_qp_quants(15, &mins, &mut lm, &sw);
        put_f16(y, 80, dm);
        put_f16(y, 82, mm);
        let dm = super::super::k_quants::get_f16(y, 80);
        let mm = super::super::k_quants::get_f16(y, 82);
        for j in 0..16 {
            y[j] = (ls[j] as u32 | ((lm[j] as u32) << 4)) as u8;
        }
        for j in 0..16 {
            let d = dm * (y[j] & 0xF) as f32;
            if d == 0.0 {
                continue;
            }
            let m = mm * (y[j] >> 4) as f32;
            for ii in 0..16 {
                let q = nearest_int((x[16 * j + ii] + m) / d);
                l[16 * j + ii] = q.clamp(0, 3) as u8;
            }
        }
        pack_2bit(&l, &mut y[16..80]);
    }
}

/// Q3_K: `hmask[32], qs[64], scales[12], d`.
#[inline(always)]
pub(crate) fn quant_q3_k(src: &[f32], out: &mut [u8], qw: &[f32]) {
    for ((x, y), qw) in super_blocks::<110>(src, out, qw) {
        let sigma2 = 2.0 * sum_sq(x) / 256.0;
        let mut l = [0i8; 256];
        let (mut scales, mut sw) = ([0f32; 16], [0f32; 16]);
        for j in 0..16 {
            let xs = sub_f::<16>(x, 16 * j);
            let mut w = [0f32; 16];
            sw[j] = group_weights(sub_f::<16>(qw, 16 * j), xs, sigma2, &mut w);
            scales[j] = make_qx_quants(4, xs, &w, &mut l[16 * j..16 * j + 16]);
        }
        let mut ls = [0i8; 16];
        let d_block = make_qx_quants(32, &scales, &sw, &mut ls);
        let sc = &mut y[96..108];
        sc.fill(0);
        for (j, &l) in ls.iter().enumerate() {
            let l = l as i32;
            if j < 8 {
                sc[j] = (l & 0xF) as u8;
            } else {
                sc[j - 8] |= ((l & 0xF) << 4) as u8;
            }
            sc[j % 4 + 8] |= ((l >> 4) << (2 * (j / 4))) as u8;
        }
        put_f16(y, 108, d_block);
        q3_k_finish(x, &mut l, y);
    }
}

/// Q4_K and Q5_K share everything up to the level packing: 8 sub-blocks of
/// 32 with a scale and a min each, 6-bit under two f16 super-scales.
#[inline(always)]
fn k4_block(x: &[f32; 256], qw: &[f32; 256], nmax: i32, y: &mut [u8], l: &mut [u8; 256]) {
    let sigma2 = 2.0 * sum_sq(x) / 256.0;
    let (mut scales, mut mins, mut sw) = ([0f32; 8], [0f32; 8], [0f32; 8]);
    for j in 0..8 {
        let xs = sub_f::<32>(x, 32 * j);
        let mut w = [0f32; 32];
        sw[j] = group_weights(sub_f::<32>(qw, 32 * j), xs, sigma2, &mut w);
        let (s, m) = make_qkx2_quants(
            nmax,
            xs,
            &w,
            &mut l[32 * j..32 * j + 32],
            -0.9,
            0.05,
            36,
            false,
        );
        scales[j] = s;
        mins[j] = m;
    }
    let (mut ls, mut lm) = ([0u8; 8], [0u8; 8]);
    let d_block = make_qp_quants(63, &scales, &mut ls, &sw);
    let m_block = make_qp_quants(63, &mins, &mut lm, &sw);
    if nmax == 31 {
        // Q5_K caps the levels at 63 before packing; Q4_K packs them as
        // they come (a wrapped negative level spills, as in ggml).
        for v in ls.iter_mut().chain(lm.iter_mut()) {
            *v = (*v).min(63);
        }
    }
    k4_pack_scales(&ls, &lm, y);
    put_f16(y, 0, d_block);
    put_f16(y, 2, m_block);
    k4_requantize(x, nmax, y, l);
}

/// Q4_K: `d, dmin, scales[12], qs[128]`.
#[inline(always)]
pub(crate) fn quant_q4_k(src: &[f32], out: &mut [u8], qw: &[f32]) {
    for ((x, y), qw) in super_blocks::<144>(src, out, qw) {
        let mut l = [0u8; 256];
        k4_block(x, qw, 15, y, &mut l);
        pack_q4_k(&l, y);
    }
}

/// Q5_K: `d, dmin, scales[12], qh[32], qs[128]`.
#[inline(always)]
pub(crate) fn quant_q5_k(src: &[f32], out: &mut [u8], qw: &[f32]) {
    for ((x, y), qw) in super_blocks::<176>(src, out, qw) {
        let mut l = [0u8; 256];
        k4_block(x, qw, 31, y, &mut l);
        pack_q5_k(&l, y);
    }
}

/// Q6_K: the reference quantizer with the importance weights as they come
/// (no `sigma2` term: ggml uses `qw` directly here).
#[inline(always)]
pub(crate) fn quant_q6_k(src: &[f32], out: &mut [u8], qw: &[f32]) {
    for ((x, y), qw) in super_blocks::<210>(src, out, qw) {
        let mut l = [0i8; 256];
        let mut scales = [0f32; 16];
        let (mut max_scale, mut max_abs_scale) = (0.0f32, 0.0f32);
        for ib in 0..16 {
            let s = make_qx_quants(
                32,
                sub_f::<16>(x, 16 * ib),
                sub_f::<16>(qw, 16 * ib),
                &mut l[16 * ib..16 * ib + 16],
            );
            scales[ib] = s;
            if s.abs() > max_abs_scale {
                max_abs_scale = s.abs();
                max_scale = s;
            }
        }
        q6_k_finish(x, &scales, max_scale, max_abs_scale, &mut l, y);
    }
}

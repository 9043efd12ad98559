//! I-quants: lattice (grid) codebooks and non-linear 4-bit levels.
//!
//! Layouts (ggml-common.h); `u16` fields follow the file's byte order,
//! byte arrays never do:
//! - IQ2_XXS `d:f16, qs:u16[32]`
//! - IQ2_XS  `d:f16, qs:u16[32], scales[8]`
//! - IQ2_S   `d:f16, qs[64], qh[8], scales[8]`
//! - IQ3_XXS `d:f16, qs[96]`
//! - IQ3_S   `d:f16, qs[64], qh[8], signs[32], scales[4]`
//! - IQ1_S   `d:f16, qs[32], qh:u16[8]`
//! - IQ1_M   `qs[32], qh[16], scales[8]` (the f16 scale is spread over the
//!   top nibbles of `scales`, read as little-endian u16s)
//! - IQ4_NL  `d:f16, qs[16]` (32 elements)
//! - IQ4_XS  `d:f16, scales_h:u16, scales_l[4], qs[128]`

use super::float::{f16_to_f32, rd_f16, rd_u16};
use super::iq_grids::{
    IQ1S_GRID, IQ2S_GRID, IQ2XS_GRID, IQ2XXS_GRID, IQ3S_GRID, IQ3XXS_GRID, KSIGNS_IQ2XS,
    KVALUES_IQ4NL,
};
use super::{arrays, arrays_mut};

const IQ1S_DELTA: f32 = 0.125;

/// `db * grid[j] * (sign bit j ? -1 : 1)` for 8 values, multiplying by -1.0
/// (not negating) so NaN scales keep ggml's bits.
#[inline(always)]
fn put8_signed(y: &mut [f32], db: f32, grid: &[u8; 8], signs: u8) {
    for (j, y) in y.iter_mut().take(8).enumerate() {
        let s = if signs & (1 << j) != 0 { -1.0f32 } else { 1.0 };
        *y = db * grid[j] as f32 * s;
    }
}

#[inline(always)]
fn grid_at<const N: usize, T: Copy + Default>(g: &[[T; N]], i: usize) -> [T; N] {
    g.get(i).copied().unwrap_or([T::default(); N])
}

#[inline(always)]
fn ksign(i: u32) -> u8 {
    KSIGNS_IQ2XS[(i & 127) as usize]
}

#[inline(always)]
pub(crate) fn dequant_iq2_xxs<const BE: bool>(data: &[u8], out: &mut [f32]) {
    for (b, o) in arrays::<66, _>(data).zip(arrays_mut::<256, _>(out)) {
        let d = rd_f16::<BE>([b[0], b[1]]);
        for (q, y) in b[2..66].chunks_exact(8).zip(o.chunks_exact_mut(32)) {
            let u = |k: usize| rd_u16::<BE>([q[2 * k], q[2 * k + 1]]) as u32;
            let aux0 = u(0) | (u(1) << 16);
            let aux1 = u(2) | (u(3) << 16);
            let db = d * (0.5 + (aux1 >> 28) as f32) * 0.25;
            for (l, y) in y.chunks_exact_mut(8).enumerate() {
                let idx = ((aux0 >> (8 * l)) & 0xFF) as usize;
                put8_signed(y, db, &grid_at(&IQ2XXS_GRID, idx), ksign(aux1 >> (7 * l)));
            }
        }
    }
}

#[inline(always)]
pub(crate) fn dequant_iq2_xs<const BE: bool>(data: &[u8], out: &mut [f32]) {
    for (b, o) in arrays::<74, _>(data).zip(arrays_mut::<256, _>(out)) {
        let d = rd_f16::<BE>([b[0], b[1]]);
        let scales = &b[66..74];
        for ((q, &sc), y) in b[2..66]
            .chunks_exact(8)
            .zip(scales)
            .zip(o.chunks_exact_mut(32))
        {
            let db = [
                d * (0.5 + (sc & 0xF) as f32) * 0.25,
                d * (0.5 + (sc >> 4) as f32) * 0.25,
            ];
            for (l, y) in y.chunks_exact_mut(8).enumerate() {
                let v = rd_u16::<BE>([q[2 * l], q[2 * l + 1]]);
                let grid = grid_at(&IQ2XS_GRID, (v & 511) as usize);
                put8_signed(y, db[l / 2], &grid, ksign((v >> 9) as u32));
            }
        }
    }
}

#[inline(always)]
pub(crate) fn dequant_iq2_s<const BE: bool>(data: &[u8], out: &mut [f32]) {
    for (b, o) in arrays::<82, _>(data).zip(arrays_mut::<256, _>(out)) {
        let d = rd_f16::<BE>([b[0], b[1]]);
        let qs = &b[2..34];
        let signs = &b[34..66];
        let qh = &b[66..74];
        let scales = &b[74..82];
        for (ib, y) in o.chunks_exact_mut(32).enumerate() {
            let sc = scales[ib];
            let db = [
                d * (0.5 + (sc & 0xF) as f32) * 0.25,
                d * (0.5 + (sc >> 4) as f32) * 0.25,
            ];
            for (l, y) in y.chunks_exact_mut(8).enumerate() {
                let idx = qs[4 * ib + l] as usize | (((qh[ib] as usize) << (8 - 2 * l)) & 0x300);
                put8_signed(y, db[l / 2], &grid_at(&IQ2S_GRID, idx), signs[4 * ib + l]);
            }
        }
    }
}

/// Two 4-value grid rows with one 8-bit sign mask, as IQ3 types store them.
#[inline(always)]
fn put_iq3(y: &mut [f32], db: f32, g1: [u8; 4], g2: [u8; 4], signs: u8) {
    let mut g = [0u8; 8];
    g[..4].copy_from_slice(&g1);
    g[4..].copy_from_slice(&g2);
    put8_signed(y, db, &g, signs);
}

#[inline(always)]
pub(crate) fn dequant_iq3_xxs<const BE: bool>(data: &[u8], out: &mut [f32]) {
    for (b, o) in arrays::<98, _>(data).zip(arrays_mut::<256, _>(out)) {
        let d = rd_f16::<BE>([b[0], b[1]]);
        let qs = &b[2..66];
        let ss = &b[66..98];
        for ((q, s), y) in qs
            .chunks_exact(8)
            .zip(ss.chunks_exact(4))
            .zip(o.chunks_exact_mut(32))
        {
            let aux = u32::from_le_bytes([s[0], s[1], s[2], s[3]]);
            let db = d * (0.5 + (aux >> 28) as f32) * 0.5;
            for (l, y) in y.chunks_exact_mut(8).enumerate() {
                let g1 = grid_at(&IQ3XXS_GRID, q[2 * l] as usize);
                let g2 = grid_at(&IQ3XXS_GRID, q[2 * l + 1] as usize);
                put_iq3(y, db, g1, g2, ksign(aux >> (7 * l)));
            }
        }
    }
}

#[inline(always)]
pub(crate) fn dequant_iq3_s<const BE: bool>(data: &[u8], out: &mut [f32]) {
    for (b, o) in arrays::<110, _>(data).zip(arrays_mut::<256, _>(out)) {
        let d = rd_f16::<BE>([b[0], b[1]]);
        let qs = &b[2..66];
        let qh = &b[66..74];
        let signs = &b[74..106];
        let scales = &b[106..110];
        for (ib, y) in o.chunks_exact_mut(32).enumerate() {
            let sc = scales[ib / 2];
            let db = d * (1 + 2 * if ib % 2 == 0 { sc & 0xF } else { sc >> 4 } as i32) as f32;
            let h = qh[ib] as usize;
            for (l, y) in y.chunks_exact_mut(8).enumerate() {
                let i1 = qs[8 * ib + 2 * l] as usize | ((h << (8 - 2 * l)) & 256);
                let i2 = qs[8 * ib + 2 * l + 1] as usize | ((h << (7 - 2 * l)) & 256);
                put_iq3(
                    y,
                    db,
                    grid_at(&IQ3S_GRID, i1),
                    grid_at(&IQ3S_GRID, i2),
                    signs[4 * ib + l],
                );
            }
        }
    }
}

#[inline(always)]
fn put_iq1(y: &mut [f32], dl: f32, grid: [i8; 8], delta: f32) {
    for (y, g) in y.iter_mut().zip(grid) {
        *y = dl * (g as f32 + delta);
    }
}

#[inline(always)]
pub(crate) fn dequant_iq1_s<const BE: bool>(data: &[u8], out: &mut [f32]) {
    for (b, o) in arrays::<50, _>(data).zip(arrays_mut::<256, _>(out)) {
        let d = rd_f16::<BE>([b[0], b[1]]);
        let qs = &b[2..34];
        for ((ib, y), h) in o
            .chunks_exact_mut(32)
            .enumerate()
            .zip(b[34..50].chunks_exact(2))
        {
            let qh = rd_u16::<BE>([h[0], h[1]]) as usize;
            let dl = d * (2 * ((qh >> 12) & 7) + 1) as f32;
            let delta = if qh & 0x8000 != 0 {
                -IQ1S_DELTA
            } else {
                IQ1S_DELTA
            };
            for (l, y) in y.chunks_exact_mut(8).enumerate() {
                let idx = qs[4 * ib + l] as usize | (((qh >> (3 * l)) & 7) << 8);
                put_iq1(y, dl, grid_at(&IQ1S_GRID, idx), delta);
            }
        }
    }
}

#[inline(always)]
pub(crate) fn dequant_iq1_m<const BE: bool>(data: &[u8], out: &mut [f32]) {
    for (b, o) in arrays::<56, _>(data).zip(arrays_mut::<256, _>(out)) {
        let qs = &b[0..32];
        let qh = &b[32..48];
        let s = &b[48..56];
        let sc = [0, 1, 2, 3].map(|k| u16::from_le_bytes([s[2 * k], s[2 * k + 1]]) as u32);
        let scale =
            (sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000);
        let d = f16_to_f32(scale as u16);
        for (ib, y) in o.chunks_exact_mut(32).enumerate() {
            let w = sc[ib / 2] >> (6 * (ib % 2));
            let dl1 = d * (2 * (w & 7) + 1) as f32;
            let dl2 = d * (2 * ((w >> 3) & 7) + 1) as f32;
            let (h0, h1) = (qh[2 * ib] as usize, qh[2 * ib + 1] as usize);
            let q = &qs[4 * ib..4 * ib + 4];
            let idx = [
                q[0] as usize | ((h0 << 8) & 0x700),
                q[1] as usize | ((h0 << 4) & 0x700),
                q[2] as usize | ((h1 << 8) & 0x700),
                q[3] as usize | ((h1 << 4) & 0x700),
            ];
            let delta = [h0 & 0x08, h0 & 0x80, h1 & 0x08, h1 & 0x80].map(|bit| {
                if bit != 0 {
                    -IQ1S_DELTA
                } else {
                    IQ1S_DELTA
                }
            });
            for (l, y) in y.chunks_exact_mut(8).enumerate() {
                let dl = if l < 2 { dl1 } else { dl2 };
                put_iq1(y, dl, grid_at(&IQ1S_GRID, idx[l]), delta[l]);
            }
        }
    }
}

/// `d * kvalues[i]` for the 16 levels: the same single product ggml forms
/// per element, so a table lookup is bit-identical.
#[inline(always)]
fn iq4_table(d: f32) -> [f32; 16] {
    KVALUES_IQ4NL.map(|k| d * k as f32)
}

#[inline(always)]
fn iq4_put32(y: &mut [f32; 32], t: &[f32; 16], q: &[u8; 16]) {
    for j in 0..16 {
        y[j] = t[(q[j] & 0xF) as usize];
        y[j + 16] = t[(q[j] >> 4) as usize];
    }
}

#[inline(always)]
pub(crate) fn dequant_iq4_nl<const BE: bool>(data: &[u8], out: &mut [f32]) {
    for (b, o) in arrays::<18, _>(data).zip(arrays_mut::<32, _>(out)) {
        let t = iq4_table(rd_f16::<BE>([b[0], b[1]]));
        let mut q = [0u8; 16];
        q.copy_from_slice(&b[2..18]);
        iq4_put32(o, &t, &q);
    }
}

#[inline(always)]
pub(crate) fn dequant_iq4_xs<const BE: bool>(data: &[u8], out: &mut [f32]) {
    for (b, o) in arrays::<136, _>(data).zip(arrays_mut::<256, _>(out)) {
        let d = rd_f16::<BE>([b[0], b[1]]);
        let sh = rd_u16::<BE>([b[2], b[3]]) as i32;
        let sl = &b[4..8];
        for (ib, (q, y)) in b[8..136]
            .chunks_exact(16)
            .zip(arrays_mut::<32, _>(o))
            .enumerate()
        {
            let ls = ((sl[ib / 2] >> (4 * (ib % 2))) & 0xF) as i32 | (((sh >> (2 * ib)) & 3) << 4);
            let t = iq4_table(d * (ls - 32) as f32);
            let mut qa = [0u8; 16];
            qa.copy_from_slice(q);
            iq4_put32(y, &t, &qa);
        }
    }
}

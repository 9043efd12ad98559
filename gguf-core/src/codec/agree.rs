//! The proof that the AVX2 search kernels (`x86`, `lanes`) equal the portable
//! searches they replace: [`agree`] runs both on inputs made from arbitrary
//! bytes and reports the first difference. The unit test below runs it on
//! pseudo-random inputs; the `lane_searches` fuzz target
//! (`testing::lane_searches_agree`) on whatever the fuzzer finds.
//!
//! Each kernel evaluates several candidates (neighbours of a lattice
//! point, trial scales) at once, one per vector lane, with the portable
//! code's float operations in the portable code's order within each lane;
//! only the order *between* candidates changes, and candidates do not
//! interact until the portable pick, which the kernels keep. So the results
//! are the same bits, which is what [`agree`] checks.

/// Floats drawn from fuzz bytes: raw bit patterns (NaN, infinities,
/// subnormals) or, in the finite mode, values of varied magnitude, and
/// small numbers for choices.
#[cfg(all(
    any(test, feature = "testing"),
    feature = "simd",
    target_arch = "x86_64"
))]
struct Draw<'a> {
    bytes: &'a [u8],
    at: usize,
    raw: bool,
}

#[cfg(all(
    any(test, feature = "testing"),
    feature = "simd",
    target_arch = "x86_64"
))]
impl<'a> Draw<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        let raw = bytes.first().is_some_and(|b| b & 0x80 != 0);
        Draw { bytes, at: 1, raw }
    }

    fn byte(&mut self) -> u8 {
        let b = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    fn f32(&mut self) -> f32 {
        let b = [self.byte(), self.byte(), self.byte(), self.byte()];
        if self.raw {
            return f32::from_le_bytes(b);
        }
        // A mantissa from three bytes, a sign and a magnitude from 2^-16
        // to 2^15 from the fourth; zero now and then.
        if b[3] & 0x7F == 0 {
            return 0.0;
        }
        let m = u32::from_le_bytes([b[0], b[1], b[2], 0]) as f32 / 16_777_216.0;
        let v = m * 2f32.powi((b[3] % 32) as i32 - 16);
        if b[3] & 0x80 != 0 {
            -v
        } else {
            v
        }
    }

    /// A non-negative float in the finite mode (weights, magnitudes).
    fn nonneg(&mut self) -> f32 {
        let v = self.f32();
        if self.raw {
            v
        } else {
            v.abs()
        }
    }

    fn array<const N: usize>(&mut self, nonneg: bool) -> [f32; N] {
        let mut a = [0f32; N];
        for v in &mut a {
            *v = if nonneg { self.nonneg() } else { self.f32() };
        }
        a
    }

    fn done(&self) -> bool {
        self.at >= self.bytes.len()
    }
}

/// The same float, or both NaN (whose sign and payload the compilers are
/// free to pick, in the portable code as in ggml's).
#[cfg(all(
    any(test, feature = "testing"),
    feature = "simd",
    target_arch = "x86_64"
))]
fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Runs every lane kernel's search and its portable reference on inputs
/// drawn from `bytes`: `Err` names the first search whose result differs.
/// Without AVX2 (or the `simd` feature) there is nothing to compare.
#[cfg(any(test, feature = "testing"))]
pub(crate) fn agree(bytes: &[u8]) -> Result<(), String> {
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    if std::arch::is_x86_feature_detected!("avx2") {
        let mut d = Draw::new(bytes);
        while !d.done() {
            let pick = d.byte();
            check_one(pick, &mut d)?;
        }
    }
    let _ = bytes;
    Ok(())
}

/// Both runs of `f`: the portable code's result, then the dispatched one.
#[cfg(all(
    any(test, feature = "testing"),
    feature = "simd",
    target_arch = "x86_64"
))]
fn both<R>(mut f: impl FnMut() -> R) -> (R, R) {
    (super::portable(&mut f), f())
}

#[cfg(all(
    any(test, feature = "testing"),
    feature = "simd",
    target_arch = "x86_64"
))]
fn check_one(pick: u8, d: &mut Draw<'_>) -> Result<(), String> {
    use super::iq_quant::{grid, iq1, iq4};
    use super::k_quants::{make_qkx2_quants, make_qx_quants};
    use super::weighted::k::make_qp_quants;
    match pick % 9 {
        0 | 1 => {
            // A neighbour search of one of the lattices, at a lattice key
            // (most keys are off the lattice) or over a window of points;
            // the lattice's values or arbitrary ones (IQ1's shifted levels).
            let lats = [
                grid::iq2_xxs(),
                grid::iq2_xs(),
                grid::iq2_s(),
                grid::iq3_xxs(),
                grid::iq3_s(),
                grid::iq1(),
            ];
            let g = lats[(pick as usize / 8) % lats.len()];
            let key = d.u16() as usize;
            let window: Vec<u16>;
            let nb: &[u16] = match g.lookup(key) {
                Err(nb) if !nb.is_empty() => nb,
                _ => {
                    let n = g.points_of().len() / g.dims();
                    let len = 1 + d.byte() as usize % 40;
                    window = (0..len).map(|i| ((key + 7 * i) % n) as u16).collect();
                    &window
                }
            };
            let x: Vec<f32> = (0..g.dims()).map(|_| d.f32()).collect();
            let w: Vec<f32> = (0..g.dims()).map(|_| d.nonneg()).collect();
            let scale = d.f32();
            let mut values = grid::ODD;
            if pick & 1 == 1 {
                values = d.array::<8>(false);
            }
            let (a, b) = both(|| g.nearest(nb, &x, &w, scale, &values));
            if a != b {
                return Err(format!(
                    "nearest point: portable {a}, AVX2 {b} (x {x:?}, w {w:?}, scale {scale})"
                ));
            }
        }
        2 | 3 => {
            // make_qkx2_quants with each caller's parameters.
            const PARAMS: [(i32, f32, f32, i32, bool); 6] = [
                (15, -0.9, 0.05, 36, false),
                (31, -0.9, 0.05, 36, false),
                (3, -0.9, 0.05, 36, false),
                (3, -0.5, 0.1, 15, true),
                (15, -1.0, 0.1, 20, false),
                (31, -0.5, 0.1, 15, false),
            ];
            let (nmax, rmin, rdelta, nstep, mad) = PARAMS[(pick as usize / 8) % PARAMS.len()];
            let bad = |n: usize, a: &(f32, f32, Vec<u8>), b: &(f32, f32, Vec<u8>)| {
                let ok = same(a.0, b.0) && same(a.1, b.1) && a.2 == b.2;
                (!ok).then(|| {
                    format!("make_qkx2_quants N={n} nmax={nmax}: portable {a:?}, AVX2 {b:?}")
                })
            };
            if pick & 1 == 0 {
                let (x, w) = (d.array::<32>(false), d.array::<32>(true));
                let (a, b) = both(|| {
                    let mut l = vec![0u8; 32];
                    let (s, m) = make_qkx2_quants(nmax, &x, &w, &mut l, rmin, rdelta, nstep, mad);
                    (s, m, l)
                });
                if let Some(e) = bad(32, &a, &b) {
                    return Err(e);
                }
            } else {
                let (x, w) = (d.array::<16>(false), d.array::<16>(true));
                let (a, b) = both(|| {
                    let mut l = vec![0u8; 16];
                    let (s, m) = make_qkx2_quants(nmax, &x, &w, &mut l, rmin, rdelta, nstep, mad);
                    (s, m, l)
                });
                if let Some(e) = bad(16, &a, &b) {
                    return Err(e);
                }
            }
        }
        4 => {
            let nmax = [4, 8, 16, 32][(pick as usize / 8) % 4];
            let (a, b) = if pick & 8 == 0 {
                let (x, w) = (d.array::<32>(false), d.array::<32>(true));
                both(|| {
                    let mut l = vec![0i8; 32];
                    (make_qx_quants(nmax, &x, &w, &mut l), l)
                })
            } else {
                let (x, w) = (d.array::<16>(false), d.array::<16>(true));
                both(|| {
                    let mut l = vec![0i8; 16];
                    (make_qx_quants(nmax, &x, &w, &mut l), l)
                })
            };
            if !same(a.0, b.0) || a.1 != b.1 {
                return Err(format!(
                    "make_qx_quants nmax={nmax}: portable {a:?}, AVX2 {b:?}"
                ));
            }
        }
        5 => {
            let (a, b) = if pick & 8 == 0 {
                let (x, w) = (d.array::<16>(true), d.array::<16>(true));
                both(|| {
                    let mut l = [0u8; 16];
                    (make_qp_quants(15, &x, &mut l, &w), l.to_vec())
                })
            } else {
                let (x, w) = (d.array::<8>(true), d.array::<8>(true));
                both(|| {
                    let mut l = [0u8; 8];
                    (make_qp_quants(63, &x, &mut l, &w), l.to_vec())
                })
            };
            if !same(a.0, b.0) || a.1 != b.1 {
                return Err(format!("make_qp_quants: portable {a:?}, AVX2 {b:?}"));
            }
        }
        6 => {
            let (x, w) = (d.array::<32>(false), d.array::<32>(true));
            let (a, b) = both(|| iq4::block_scale(&x, &w));
            if !same(a, b) {
                return Err(format!(
                    "IQ4 block scale: portable {a}, AVX2 {b} (x {x:?}, w {w:?})"
                ));
            }
        }
        7 => {
            // IQ1_S's split search over prefix sums of weighted values.
            let (mut sumx, mut sumw) = ([0f32; 33], [0f32; 33]);
            for j in 0..32 {
                let (w, x) = (d.nonneg(), d.f32());
                sumx[j + 1] = sumx[j] + w * x;
                sumw[j + 1] = sumw[j] + w;
            }
            let max = d.nonneg();
            let (a, b) = both(|| iq1::split_search(&sumx, &sumw, max));
            if !same(a.0, b.0) || a.1 != b.1 {
                return Err(format!("IQ1_S split search: portable {a:?}, AVX2 {b:?}"));
            }
        }
        _ => {
            // A whole row through the quantizer the kernels serve, with
            // and without importance weights (finite inputs: with NaN
            // scales the stored bytes carry a NaN's payload).
            use crate::format::GgmlType as T;
            const TYPES: [T; 19] = [
                T::IQ1_S,
                T::IQ1_M,
                T::Q8_0,
                T::Q4_0,
                T::Q4_1,
                T::Q5_0,
                T::Q5_1,
                T::Q2_K,
                T::Q3_K,
                T::Q4_K,
                T::Q5_K,
                T::Q6_K,
                T::IQ4_NL,
                T::IQ4_XS,
                T::IQ3_XXS,
                T::IQ3_S,
                T::IQ2_XXS,
                T::IQ2_XS,
                T::IQ2_S,
            ];
            let ty = TYPES[(pick as usize / 8) % TYPES.len()];
            // Q8_0 keeps a NaN block's bytes exact (its kernel hands such a
            // block to the portable code), so it gets raw floats too.
            let keep = d.raw && ty == T::Q8_0;
            let raw = std::mem::replace(&mut d.raw, keep);
            // Now and then runs of 32 equal values (a Q4_K/Q5_K sub-block
            // with nothing to search when they are not above zero).
            let runs = if d.byte() & 3 == 0 { d.byte() } else { 0 };
            let mut x = d.array::<256>(false);
            if runs != 0 {
                for (j, run) in x.chunks_exact_mut(32).enumerate() {
                    if runs & (1 << j) != 0 {
                        let v = if runs & 1 == 0 { run[0] } else { 0.0 };
                        run.fill(v);
                    }
                }
            }
            let w = (d.byte() & 1 == 0).then(|| d.array::<256>(true));
            d.raw = raw;
            let (a, b) =
                both(|| super::quantize_weighted(ty, &x, &[256], w.as_ref().map(|w| &w[..])).ok());
            if a != b {
                return Err(format!(
                    "{ty} row (weights: {}): portable and AVX2 bytes differ",
                    w.is_some()
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn lane_kernels_match_the_portable_searches() {
        let mut next = crate::testing::random_below(0x9E37_79B9_7F4A_7C15);
        for round in 0..3000 {
            let bytes: Vec<u8> = (0..1200).map(|_| next(256) as u8).collect();
            if let Err(e) = super::agree(&bytes) {
                panic!("round {round}: {e}");
            }
        }
    }

    /// Blocks whose sub-blocks have nothing to search (all equal, not above
    /// zero), all of them or some, through the Q4_K/Q5_K kernel.
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    #[test]
    fn flat_k4_blocks_match_the_portable_code() {
        use crate::format::GgmlType;
        if !std::arch::is_x86_feature_detected!("avx2") {
            eprintln!("skipped: this CPU has no AVX2, so there is no kernel to compare");
            return;
        }
        let mut blocks: Vec<[f32; 256]> = vec![[0.0; 256], [-0.25; 256], [3.0; 256]];
        let mut some = [0f32; 256];
        for (i, v) in some.iter_mut().enumerate().skip(64) {
            *v = ((i * 37 % 101) as f32 - 50.0) / 64.0;
        }
        blocks.push(some);
        for ty in [GgmlType::Q4_K, GgmlType::Q5_K] {
            for x in &blocks {
                let (a, b) = super::both(|| super::super::quantize(ty, x, &[256]).ok());
                assert!(a.is_some(), "{ty} of a flat block");
                assert_eq!(a, b, "{ty}: portable and AVX2 bytes differ (x[0] {})", x[0]);
            }
        }
    }
}

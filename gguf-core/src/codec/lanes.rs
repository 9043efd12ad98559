//! The proof that the AVX2 search kernels of `x86` equal the portable
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
/// subnormals) or, in the finite mode, small values of varied magnitude,
/// and small numbers for choices.
pub(crate) struct Draw<'a> {
    bytes: &'a [u8],
    at: usize,
    raw: bool,
}

impl<'a> Draw<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        let raw = bytes.first().is_some_and(|b| b & 0x80 != 0);
        Draw { bytes, at: 1, raw }
    }

    pub(crate) fn byte(&mut self) -> u8 {
        let b = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    pub(crate) fn f32(&mut self) -> f32 {
        let b = [self.byte(), self.byte(), self.byte(), self.byte()];
        if self.raw {
            return f32::from_le_bytes(b);
        }
        // A mantissa and a sign from three bytes, a magnitude from 2^-16
        // to 2^15 from the fourth; zero now and then.
        if b[3] == 0 {
            return 0.0;
        }
        let m = u32::from_le_bytes([b[0], b[1], b[2], 0]) as f32 / 16_777_216.0;
        let e = (b[3] % 32) as i32 - 16;
        let v = m * 2f32.powi(e);
        if b[3] & 0x80 != 0 { -v } else { v }
    }

    /// A non-negative float (importance weights, magnitudes).
    pub(crate) fn nonneg(&mut self) -> f32 {
        let v = self.f32();
        if self.raw { v } else { v.abs() }
    }

    fn done(&self) -> bool {
        self.at >= self.bytes.len()
    }
}

/// Runs every lane kernel and its portable reference on inputs drawn from
/// `bytes`: `Err` names the first kernel whose result differs. Without
/// AVX2 (or the `simd` feature) there is nothing to compare.
pub(crate) fn agree(bytes: &[u8]) -> Result<(), String> {
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    if std::arch::is_x86_feature_detected!("avx2") {
        let mut d = Draw::new(bytes);
        while !d.done() {
            let start = d.at;
            let pick = d.byte();
            check_one(pick, &mut d)?;
            if d.at == start {
                break;
            }
        }
    }
    let _ = bytes;
    Ok(())
}

#[cfg(all(feature = "simd", target_arch = "x86_64"))]
fn check_one(pick: u8, d: &mut Draw<'_>) -> Result<(), String> {
    use super::iq_quant::grid;
    match pick % 1 {
        _ => {
            // A neighbour search of one of the lattices, at a lattice key
            // (most keys are off the lattice) or over a window of points.
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
                values = [0.0; 8];
                for v in &mut values {
                    *v = d.f32();
                }
            }
            let a = g.nearest_portable(nb, &x, &w, scale, &values);
            // SAFETY: AVX2 was detected by the caller.
            #[allow(unsafe_code)]
            let b = unsafe {
                super::x86::nearest_point(g.points_of(), g.dims(), nb, &x, &w, scale, &values)
            };
            if a != b {
                return Err(format!(
                    "nearest point: portable {a}, AVX2 {b} (x {x:?}, w {w:?}, scale {scale})"
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
        for round in 0..4000 {
            let bytes: Vec<u8> = (0..600).map(|_| next(256) as u8).collect();
            if let Err(e) = super::agree(&bytes) {
                panic!("round {round}: {e}");
            }
        }
    }
}

//! Scalar conversions shared by every codec (f16, bf16, e8m0, ue4m3) and the
//! plain numeric types (F32, F16, BF16, F64, I8..I64).
//!
//! The conversions reproduce ggml's own bit tricks rather than calling the
//! `half` crate, because bit-exactness with ggml includes NaN payloads:
//! ggml turns every f32 NaN into the f16 `0x7E00` (sign kept), `half` keeps
//! the payload's top bits.

/// Reads a little- or big-endian `u16` from two bytes.
#[inline(always)]
pub(crate) fn rd_u16<const BE: bool>(b: [u8; 2]) -> u16 {
    if BE {
        u16::from_be_bytes(b)
    } else {
        u16::from_le_bytes(b)
    }
}

/// Reads a little- or big-endian f16 stored at `b[0..2]` and widens it.
#[inline(always)]
pub(crate) fn rd_f16<const BE: bool>(b: [u8; 2]) -> f32 {
    f16_to_f32(rd_u16::<BE>(b))
}

/// ggml's branch-free f16 -> f32 (`ggml_compute_fp16_to_fp32`). Exact for
/// every finite value; NaNs come out quiet, as on the x86 hosts ggml targets.
#[inline(always)]
pub fn f16_to_f32(h: u16) -> f32 {
    let w = (h as u32) << 16;
    let sign = w & 0x8000_0000;
    let two_w = w.wrapping_add(w);
    let exp_offset: u32 = 0xE0 << 23;
    let exp_scale = f32::from_bits(0x0780_0000); // 2^-112
    let normalized = f32::from_bits((two_w >> 4) + exp_offset) * exp_scale;
    let magic_mask: u32 = 126 << 23;
    let denormalized = f32::from_bits((two_w >> 17) | magic_mask) - 0.5;
    let cutoff: u32 = 1 << 27;
    let bits = if two_w < cutoff {
        denormalized.to_bits()
    } else {
        normalized.to_bits()
    };
    f32::from_bits(sign | bits)
}

/// ggml's f32 -> f16 (`ggml_compute_fp32_to_fp16`): round to nearest even,
/// overflow to infinity, every NaN to `0x7E00` with the sign kept.
#[inline(always)]
pub fn f32_to_f16(f: f32) -> u16 {
    let scale_to_inf = f32::from_bits(0x7780_0000); // 2^112
    let scale_to_zero = f32::from_bits(0x0880_0000); // 2^-110
    let mut base = (f.abs() * scale_to_inf) * scale_to_zero;
    let w = f.to_bits();
    let shl1_w = w.wrapping_add(w);
    let sign = w & 0x8000_0000;
    let mut bias = shl1_w & 0xFF00_0000;
    if bias < 0x7100_0000 {
        bias = 0x7100_0000;
    }
    base += f32::from_bits((bias >> 1) + 0x0780_0000);
    let bits = base.to_bits();
    let exp_bits = (bits >> 13) & 0x0000_7C00;
    let mantissa_bits = bits & 0x0000_0FFF;
    let nonsign = exp_bits + mantissa_bits;
    ((sign >> 16)
        | if shl1_w > 0xFF00_0000 {
            0x7E00
        } else {
            nonsign
        }) as u16
}

/// bf16 -> f32: the bf16 bits are the top half of the f32.
#[inline(always)]
pub fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

/// ggml's f32 -> bf16 (`ggml_compute_fp32_to_bf16`): round to nearest even,
/// NaNs truncated and forced quiet.
#[inline(always)]
pub fn f32_to_bf16(s: f32) -> u16 {
    let u = s.to_bits();
    if (u & 0x7fff_ffff) > 0x7f80_0000 {
        return ((u >> 16) | 64) as u16;
    }
    (u.wrapping_add(0x7fff + ((u >> 16) & 1)) >> 16) as u16
}

/// E8M0 exponent byte -> 2^(e-127) / 2, the scale ggml pairs with the
/// doubled E2M1 table (`ggml_e8m0_to_fp32_half`). 0xFF is not treated as NaN,
/// as in ggml.
#[inline(always)]
pub(crate) fn e8m0_to_f32_half(x: u8) -> f32 {
    let bits = if x < 2 {
        0x0020_0000u32 << x
    } else {
        ((x as u32) - 1) << 23
    };
    f32::from_bits(bits)
}

/// UE4M3 scale byte -> value / 2 (`ggml_ue4m3_to_fp32`); 0 and 0x7F map to 0.
#[inline(always)]
pub(crate) fn ue4m3_to_f32(x: u8) -> f32 {
    if x == 0 || x == 0x7F {
        return 0.0;
    }
    let exp = ((x >> 3) & 0xF) as i32;
    let man = (x & 0x7) as i32;
    // Powers of two are exact in f32, so multiplying by 2^k equals ldexpf.
    let raw = if exp == 0 {
        man as f32 * pow2(-9)
    } else {
        (1.0 + man as f32 / 8.0) * pow2(exp - 7)
    };
    raw * 0.5
}

/// 2^e for e in the normal f32 exponent range.
#[inline(always)]
fn pow2(e: i32) -> f32 {
    f32::from_bits(((e + 127) as u32) << 23)
}

// ---- plain numeric types ----

macro_rules! plain_decoder {
    ($name:ident, $n:literal, $conv:expr) => {
        #[inline(always)]
        pub(crate) fn $name<const BE: bool>(data: &[u8], out: &mut [f32]) {
            let conv = $conv;
            // Groups of 32 keep the inner loop a fixed-size body LLVM vectorizes.
            let mut src = data.chunks_exact($n * 32);
            let mut dst = out.chunks_exact_mut(32);
            for (s, d) in (&mut src).zip(&mut dst) {
                for (x, b) in d.iter_mut().zip(s.chunks_exact($n)) {
                    let mut a = [0u8; $n];
                    a.copy_from_slice(b);
                    if BE {
                        a.reverse();
                    }
                    *x = conv(a);
                }
            }
            for (x, b) in dst
                .into_remainder()
                .iter_mut()
                .zip(src.remainder().chunks_exact($n))
            {
                let mut a = [0u8; $n];
                a.copy_from_slice(b);
                if BE {
                    a.reverse();
                }
                *x = conv(a);
            }
        }
    };
}

plain_decoder!(dequant_f32, 4, |a: [u8; 4]| f32::from_le_bytes(a));
plain_decoder!(dequant_f16, 2, |a: [u8; 2]| f16_to_f32(u16::from_le_bytes(
    a
)));
plain_decoder!(dequant_bf16, 2, |a: [u8; 2]| bf16_to_f32(
    u16::from_le_bytes(a)
));
plain_decoder!(dequant_f64, 8, |a: [u8; 8]| f64::from_le_bytes(a) as f32);
plain_decoder!(dequant_i8, 1, |a: [u8; 1]| a[0] as i8 as f32);
plain_decoder!(dequant_i16, 2, |a: [u8; 2]| i16::from_le_bytes(a) as f32);
plain_decoder!(dequant_i32, 4, |a: [u8; 4]| i32::from_le_bytes(a) as f32);
plain_decoder!(dequant_i64, 8, |a: [u8; 8]| i64::from_le_bytes(a) as f32);

/// f32 -> F16 bytes (little-endian).
#[inline(always)]
pub(crate) fn quant_f16(src: &[f32], out: &mut [u8]) {
    for (x, o) in src.iter().zip(out.chunks_exact_mut(2)) {
        o.copy_from_slice(&f32_to_f16(*x).to_le_bytes());
    }
}

/// f32 -> BF16 bytes (little-endian).
#[inline(always)]
pub(crate) fn quant_bf16(src: &[f32], out: &mut [u8]) {
    for (x, o) in src.iter().zip(out.chunks_exact_mut(2)) {
        o.copy_from_slice(&f32_to_bf16(*x).to_le_bytes());
    }
}

/// ggml's `nearest_int`: round half to even via the 1.5 * 2^23 trick. Only
/// meaningful for |f| <= 2^22; outside that (and for NaN) it returns the
/// same garbage ggml does, which is what bit-exactness needs.
#[inline(always)]
pub(crate) fn nearest_int(f: f32) -> i32 {
    let val = f + 12_582_912.0;
    (val.to_bits() as i32 & 0x007f_ffff) - 0x0040_0000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_round_trips_every_non_nan() {
        for h in 0..=u16::MAX {
            let f = f16_to_f32(h);
            if f.is_nan() {
                assert_eq!(f32_to_f16(f) & 0x8000, h & 0x8000);
                continue;
            }
            assert_eq!(f32_to_f16(f), h, "{h:#06x}");
            assert_eq!(
                f.to_bits(),
                half::f16::from_bits(h).to_f32().to_bits(),
                "{h:#06x}"
            );
        }
    }

    #[test]
    fn f32_to_f16_matches_half_except_nan() {
        let mut x: u32 = 0x1234_5678;
        for _ in 0..1_000_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let f = f32::from_bits(x);
            if f.is_nan() {
                assert_eq!(f32_to_f16(f), ((x >> 16) & 0x8000) as u16 | 0x7E00);
            } else {
                assert_eq!(f32_to_f16(f), half::f16::from_f32(f).to_bits(), "{x:#010x}");
            }
        }
    }

    #[test]
    fn bf16_rounds_to_nearest_even() {
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f80_8000)), 0x3f80);
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f81_8000)), 0x3f82);
        assert_eq!(f32_to_bf16(f32::from_bits(0x7f80_0001)), 0x7fc0);
        assert_eq!(f32_to_bf16(f32::INFINITY), 0x7f80);
    }
}

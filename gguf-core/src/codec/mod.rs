//! Tensor data codecs: dequantize any sized [`GgmlType`] to `f32`, and
//! quantize `f32` to the types ggml has a deterministic reference quantizer
//! for, bit-exact with ggml.
//!
//! | operation | types |
//! |---|---|
//! | [`dequantize`] | every type with a size (`GgmlType::ALL`) |
//! | [`swap_byte_order`], [`with_byte_order`] | every type with a size |
//! | [`quantize`] | F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K, IQ4_NL, IQ4_XS, IQ3_XXS, IQ3_S, IQ2_S, IQ1_M, TQ1_0, TQ2_0, MXFP4, NVFP4, Q1_0, Q2_0 |
//! | [`quantize_weighted`] with importance weights | Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, IQ3_XXS, IQ3_S, IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M use them; F32, F16, BF16, Q8_0, Q1_0, Q2_0, TQ1_0, TQ2_0, MXFP4, NVFP4 ignore them, as ggml does |
//!
//! [`quantize_weighted`] equals `ggml_quantize_chunk` (what llama-quantize
//! calls) with and without importance weights: for the types listed as
//! using them, ggml's weighted quantizers (`quantize_row_*_impl`), and for
//! the IQ types the lattices and neighbour tables ggml builds at start-up
//! (built here once, on first use). IQ2_XXS, IQ2_XS and IQ1_S have no
//! quantizer without weights in ggml: [`quantize`] refuses them with
//! `ImatrixRequired`.
//!
//! Quantized output equals ggml's `quantize_row_*_ref` (what
//! `ggml_quantize_chunk` writes without an importance matrix) byte for
//! byte, including NaN and infinity handling. For IQ4_NL it equals
//! `ggml_quantize_chunk` (7 scale refinements, as llama-quantize writes it);
//! ggml's separate `quantize_row_iq4_nl_ref` reads uninitialized memory for
//! all-zero blocks and is not reproducible.
//!
//! Dequantized values equal ggml's `dequantize_row_*` bit for bit; the one
//! latitude is the sign and payload of NaN outputs (a NaN scale times a
//! negative grid sign), which C compilers and LLVM are both free to produce
//! either way.
//!
//! On x86-64, with the `simd` feature (on by default), the decoders and
//! encoders run an AVX2 copy when the CPU has it (checked at run time), with
//! hand-written decoders for Q4_0, IQ4_NL, IQ4_XS and (with F16C) F16, a
//! hand-written Q8_0 encoder, and the quantizers' scale and lattice
//! searches evaluating 8 candidates at once; every path computes the same
//! IEEE operations for each value or candidate, so the output is the same
//! bytes with the feature or without. With the `parallel` feature (on by default)
//! [`dequantize_par`] and the writer's quantize-on-write use every core
//! (rayon); without it they run on the calling thread.
//!
//! Big-endian files ([`Endian::Big`]) store plain numbers byte-swapped and,
//! inside quantized blocks, every field ggml declares wider than a byte
//! (`ggml_half` scales, `uint16_t` arrays, Q8_K's `float` and `int16_t`)
//! big-endian too; byte arrays are never swapped (ARCHITECTURE.md, "Format facts").
//! [`quantize`] always produces little-endian blocks; [`swap_byte_order`]
//! converts blocks of any sized type between the two orders.
//!
//! ```
//! use gguf_core::{codec, Endian, GgmlType};
//! let x: Vec<f32> = (0..64).map(|i| i as f32 / 8.0 - 4.0).collect();
//! let q = codec::quantize(GgmlType::Q8_0, &x, &[64])?;
//! assert_eq!(q.len(), 2 * 34);
//! let y = codec::dequantize_to_vec(GgmlType::Q8_0, Endian::Little, &q)?;
//! assert!(x.iter().zip(&y).all(|(a, b)| (a - b).abs() < 0.02));
//! # Ok::<(), gguf_core::Error>(())
//! ```

pub(crate) mod agree;
mod endian;
mod float;
mod fp4;
mod iq;
mod iq_grids;
mod iq_quant;
mod k_quants;
pub(crate) mod lanes;
mod legacy;
mod ternary;
mod weighted;
#[cfg(all(feature = "simd", target_arch = "x86_64"))]
mod x86;

pub(crate) use endian::StreamSwapper;
pub use endian::{swap_byte_order, with_byte_order};
pub use float::{bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};
pub use weighted::ignores_weights;
pub use weighted::{quantize_rows_into, quantize_weighted};

use crate::error::{CodecError, Error, Result};
use crate::format::{Endian, GgmlType};

/// A block decoder: `data` holds whole blocks, `out` the matching elements.
type Decoder = fn(&[u8], &mut [f32]);
/// A block encoder: `src` holds whole blocks of elements, `out` their bytes.
type Encoder = fn(&[f32], &mut [u8]);

/// Iterates over the fixed-size arrays of `s` (a trailing partial chunk is
/// skipped; callers check lengths first).
#[inline(always)]
pub(crate) fn arrays<const N: usize, T>(s: &[T]) -> impl Iterator<Item = &[T; N]> {
    s.chunks_exact(N).filter_map(|c| c.try_into().ok())
}

/// Mutable counterpart of [`arrays`].
#[inline(always)]
pub(crate) fn arrays_mut<const N: usize, T>(s: &mut [T]) -> impl Iterator<Item = &mut [T; N]> {
    s.chunks_exact_mut(N).filter_map(|c| c.try_into().ok())
}

/// C's float -> int conversion as x86 `cvttss2si` performs it (what ggml's
/// casts compile to): truncation, and `INT_MIN` for NaN or out of range.
/// Rust's `as` saturates instead, which would change the stored bytes.
#[inline(always)]
pub(crate) fn c_f32_to_i32(f: f32) -> i32 {
    if (-2_147_483_648.0..2_147_483_648.0).contains(&f) {
        f as i32
    } else {
        i32::MIN
    }
}

/// A function with the given parameters whose body runs as `$fast`,
/// compiled with the listed x86 target features enabled, when the CPU has
/// them all (checked on each call: a cached atomic load), and as `$slow`
/// otherwise. `$fast` may call the `#[target_feature]` kernels of `x86`
/// safely; with a single body, that body is compiled twice, and since the
/// codecs are `#[inline(always)]` the AVX2 copy gets 8-lane vectors
/// instead of SSE2's 4 (and `roundss` instead of a libm call for
/// `f32::round`). Without the `simd` feature (or off x86-64) `$fast` is not
/// compiled at all and `$slow` always runs.
macro_rules! simd_dispatch {
    ([$($feat:tt),+] fn($($a:ident: $t:ty),*) $body:block) => {
        simd_dispatch!([$($feat),+] fn($($a: $t),*) $body else $body)
    };
    ([$($feat:tt),+] fn($($a:ident: $t:ty),*) $fast:block else $slow:block) => {{
        #[cfg(all(feature = "simd", target_arch = "x86_64"))]
        $(#[target_feature(enable = $feat)])+
        fn fast($($a: $t),*) $fast
        fn dispatch($($a: $t),*) {
            #[cfg(all(feature = "simd", target_arch = "x86_64"))]
            if !portable_only() && $(std::arch::is_x86_feature_detected!($feat))&&+ {
                // SAFETY: `fast` needs exactly these target features, and
                // the CPU was just seen to have them all.
                #[allow(unsafe_code)]
                return unsafe { fast($($a),*) };
            }
            $slow
        }
        dispatch
    }};
}

// Tests of this crate (and, through `testing`, the fuzz targets) set this
// to run the portable code where the AVX2 copy would run, and compare the
// two.
#[cfg(all(
    any(test, feature = "testing"),
    feature = "simd",
    target_arch = "x86_64"
))]
thread_local!(static PORTABLE_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });

#[cfg(all(
    any(test, feature = "testing"),
    feature = "simd",
    target_arch = "x86_64"
))]
fn portable_only() -> bool {
    PORTABLE_ONLY.get()
}

#[cfg(all(
    not(any(test, feature = "testing")),
    feature = "simd",
    target_arch = "x86_64"
))]
#[inline(always)]
fn portable_only() -> bool {
    false
}

/// Runs `f` with every dispatch taking the portable code.
#[cfg(all(
    any(test, feature = "testing"),
    feature = "simd",
    target_arch = "x86_64"
))]
pub(crate) fn portable<R>(f: impl FnOnce() -> R) -> R {
    PORTABLE_ONLY.set(true);
    let r = f();
    PORTABLE_ONLY.set(false);
    r
}

/// Whether the hand-written AVX2 search kernels of `x86` may run: the CPU
/// has AVX2 and no test asked for the portable code. The quantizers ask
/// this per search (a cached atomic load) rather than taking a proof of it
/// as a parameter, so that one body serves both of `simd_dispatch!`'s
/// copies; inside the AVX2 copy the kernel call inlines.
#[cfg(all(feature = "simd", target_arch = "x86_64"))]
#[inline(always)]
pub(crate) fn avx2() -> bool {
    !portable_only() && std::arch::is_x86_feature_detected!("avx2")
}

fn decoder(ty: GgmlType, endian: Endian) -> Option<Decoder> {
    let be = endian == Endian::Big;
    // The portable decoder `$m::$f` (for the file's byte order), with an
    // AVX2 copy of it or the hand-written AVX2 kernel `$k` in `x86`.
    macro_rules! pick {
        ($m:ident :: $f:ident) => {
            pick!($m::$f, $m::$f)
        };
        ($m:ident :: $f:ident, $k:ident :: $kf:ident) => {
            Some(if be {
                simd_dispatch!(["avx2"] fn(d: &[u8], o: &mut [f32]) {
                    $k::$kf::<true>(d, o)
                } else {
                    $m::$f::<true>(d, o)
                }) as Decoder
            } else {
                simd_dispatch!(["avx2"] fn(d: &[u8], o: &mut [f32]) {
                    $k::$kf::<false>(d, o)
                } else {
                    $m::$f::<false>(d, o)
                }) as Decoder
            })
        };
    }
    use GgmlType as T;
    match ty {
        T::F32 => pick!(float::dequant_f32),
        // Every AVX2 CPU made has F16C; without both, the portable code.
        T::F16 if !be => Some(
            simd_dispatch!(["avx2", "f16c"] fn(d: &[u8], o: &mut [f32]) {
                x86::dequant_f16_le(d, o)
            } else {
                float::dequant_f16::<false>(d, o)
            }) as Decoder,
        ),
        T::F16 => pick!(float::dequant_f16),
        T::BF16 => pick!(float::dequant_bf16),
        T::F64 => pick!(float::dequant_f64),
        T::I8 => pick!(float::dequant_i8),
        T::I16 => pick!(float::dequant_i16),
        T::I32 => pick!(float::dequant_i32),
        T::I64 => pick!(float::dequant_i64),
        T::Q4_0 => pick!(legacy::dequant_q4_0, x86::dequant_q4_0),
        T::Q4_1 => pick!(legacy::dequant_q4_1),
        T::Q5_0 => pick!(legacy::dequant_q5_0),
        T::Q5_1 => pick!(legacy::dequant_q5_1),
        T::Q8_0 => pick!(legacy::dequant_q8_0),
        T::Q8_1 => pick!(legacy::dequant_q8_1),
        T::Q1_0 => pick!(legacy::dequant_q1_0),
        T::Q2_0 => pick!(legacy::dequant_q2_0),
        T::Q2_K => pick!(k_quants::dequant_q2_k),
        T::Q3_K => pick!(k_quants::dequant_q3_k),
        T::Q4_K => pick!(k_quants::dequant_q4_k),
        T::Q5_K => pick!(k_quants::dequant_q5_k),
        T::Q6_K => pick!(k_quants::dequant_q6_k),
        T::Q8_K => pick!(k_quants::dequant_q8_k),
        T::IQ2_XXS => pick!(iq::dequant_iq2_xxs),
        T::IQ2_XS => pick!(iq::dequant_iq2_xs),
        T::IQ2_S => pick!(iq::dequant_iq2_s),
        T::IQ3_XXS => pick!(iq::dequant_iq3_xxs),
        T::IQ3_S => pick!(iq::dequant_iq3_s),
        T::IQ1_S => pick!(iq::dequant_iq1_s),
        T::IQ1_M => pick!(iq::dequant_iq1_m),
        T::IQ4_NL => pick!(iq::dequant_iq4_nl, x86::dequant_iq4_nl),
        T::IQ4_XS => pick!(iq::dequant_iq4_xs, x86::dequant_iq4_xs),
        T::TQ1_0 => pick!(ternary::dequant_tq1_0),
        T::TQ2_0 => pick!(ternary::dequant_tq2_0),
        T::MXFP4 => pick!(fp4::dequant_mxfp4),
        T::NVFP4 => pick!(fp4::dequant_nvfp4),
        _ => None,
    }
}

pub(crate) fn encoder(ty: GgmlType) -> Option<Encoder> {
    macro_rules! pick {
        ($m:ident :: $f:ident) => {
            Some(simd_dispatch!(["avx2"] fn(s: &[f32], o: &mut [u8]) { $m::$f(s, o) }) as Encoder)
        };
    }
    use GgmlType as T;
    match ty {
        T::F32 => Some(quant_f32 as Encoder),
        T::F16 => pick!(float::quant_f16),
        T::BF16 => pick!(float::quant_bf16),
        T::Q4_0 => pick!(legacy::quant_q4_0),
        T::Q4_1 => pick!(legacy::quant_q4_1),
        T::Q5_0 => pick!(legacy::quant_q5_0),
        T::Q5_1 => pick!(legacy::quant_q5_1),
        T::Q8_0 => Some(simd_dispatch!(["avx2"] fn(s: &[f32], o: &mut [u8]) {
            x86::quant_q8_0(s, o)
        } else {
            legacy::quant_q8_0(s, o)
        }) as Encoder),
        T::Q8_1 => pick!(legacy::quant_q8_1),
        T::Q1_0 => pick!(legacy::quant_q1_0),
        T::Q2_0 => pick!(legacy::quant_q2_0),
        T::Q2_K => pick!(k_quants::quant_q2_k),
        T::Q3_K => pick!(k_quants::quant_q3_k),
        T::Q4_K => pick!(k_quants::quant_q4_k),
        T::Q5_K => pick!(k_quants::quant_q5_k),
        T::Q6_K => pick!(k_quants::quant_q6_k),
        T::Q8_K => pick!(k_quants::quant_q8_k),
        T::IQ4_NL => pick!(iq_quant::iq4_nl_unweighted),
        T::IQ4_XS => pick!(iq_quant::iq4_xs_unweighted),
        T::IQ3_XXS => pick!(iq_quant::iq3_xxs_unweighted),
        T::IQ3_S => pick!(iq_quant::iq3_s_unweighted),
        T::IQ2_S => pick!(iq_quant::iq2_s_unweighted),
        T::IQ1_M => pick!(iq_quant::iq1_m_unweighted),
        T::TQ1_0 => pick!(ternary::quant_tq1_0),
        T::TQ2_0 => pick!(ternary::quant_tq2_0),
        T::MXFP4 => pick!(fp4::quant_mxfp4),
        T::NVFP4 => pick!(fp4::quant_nvfp4),
        _ => None,
    }
}

/// A weighted row encoder: `src` one row (whole blocks), `out` its bytes,
/// `weights` the importance weight of each of the row's columns.
type RowEncoder = fn(&[f32], &mut [u8], &[f32]);

/// The row quantizer `ggml_quantize_chunk` runs for `ty` with importance
/// weights, for the types whose quantizer uses them (see
/// [`quantize_weighted`] for the others).
fn row_encoder(ty: GgmlType) -> Option<RowEncoder> {
    macro_rules! pick {
        (iq $($f:ident)::+) => {
            Some(simd_dispatch!(["avx2"] fn(s: &[f32], o: &mut [u8], w: &[f32]) {
                iq_quant::$($f)::+(s, o, Some(w))
            }) as RowEncoder)
        };
        ($($f:ident)::+) => {
            Some(simd_dispatch!(["avx2"] fn(s: &[f32], o: &mut [u8], w: &[f32]) {
                $($f)::+(s, o, w)
            }) as RowEncoder)
        };
    }
    use GgmlType as T;
    match ty {
        T::Q4_0 => pick!(weighted::legacy::quant_q4_0),
        T::Q4_1 => pick!(weighted::legacy::quant_q4_1),
        T::Q5_0 => pick!(weighted::legacy::quant_q5_0),
        T::Q5_1 => pick!(weighted::legacy::quant_q5_1),
        T::Q2_K => pick!(weighted::k::quant_q2_k),
        T::Q3_K => pick!(weighted::k::quant_q3_k),
        T::Q4_K => pick!(weighted::k::quant_q4_k),
        T::Q5_K => pick!(weighted::k::quant_q5_k),
        T::Q6_K => pick!(weighted::k::quant_q6_k),
        T::IQ4_XS => pick!(iq iq4::quant_iq4_xs),
        T::IQ4_NL => pick!(iq iq4::quant_iq4_nl),
        T::IQ3_XXS => pick!(iq iq3::quant_iq3_xxs),
        T::IQ3_S => pick!(iq iq3::quant_iq3_s),
        T::IQ2_XXS => pick!(iq iq2::quant_iq2_xxs),
        T::IQ2_XS => pick!(iq iq2::quant_iq2_xs),
        T::IQ2_S => pick!(iq iq2::quant_iq2_s),
        T::IQ1_S => pick!(iq iq1::quant_iq1_s),
        T::IQ1_M => pick!(iq iq1::quant_iq1_m),
        _ => None,
    }
}

fn quant_f32(src: &[f32], out: &mut [u8]) {
    for (x, o) in src.iter().zip(out.chunks_exact_mut(4)) {
        o.copy_from_slice(&x.to_le_bytes());
    }
}

/// True when [`dequantize`] supports `ty` (every type with a known size).
pub fn can_dequantize(ty: GgmlType) -> bool {
    decoder(ty, Endian::Little).is_some()
}

/// Whether `ty` is one of the types ggml uses only for activations, the
/// quantized copy of the other operand that a matrix multiplication makes
/// of its input (Q8_1 for Q4_1 and Q5_1 weights, Q8_K for the K-quants
/// and most IQ types). ggml can encode them, but no backend multiplies
/// with them as the weight (the CPU backend has no dot product for them),
/// llama-quantize has no file type for them, and a model whose tensors
/// have one of them loads but cannot run
/// (gguf-llama's `llama_load::LoadProblem::ActivationType`).
///
/// ```
/// use gguf_core::{codec::is_activation_type, GgmlType};
/// assert!(is_activation_type(GgmlType::Q8_1) && is_activation_type(GgmlType::Q8_K));
/// assert!(!is_activation_type(GgmlType::Q8_0));
/// ```
pub fn is_activation_type(ty: GgmlType) -> bool {
    matches!(ty, GgmlType::Q8_1 | GgmlType::Q8_K)
}

/// True when [`quantize`] supports `ty`.
///
/// ```
/// use gguf_core::{codec, GgmlType};
/// assert!(codec::can_quantize(GgmlType::Q4_K));
/// assert!(!codec::can_quantize(GgmlType::IQ2_XXS));
/// ```
pub fn can_quantize(ty: GgmlType) -> bool {
    encoder(ty).is_some()
}

/// `ImatrixRequired` for the types ggml cannot quantize without importance
/// weights (see [`quantize_weighted`]).
fn refuse_without_weights(ty: GgmlType) -> Result<()> {
    if iq_quant::needs_weights(ty) {
        return Err(Error::Codec(CodecError::ImatrixRequired { ty }));
    }
    Ok(())
}

/// The block size and the bytes of one block of `ty`, or
/// [`CodecError::UnsupportedType`] naming `operation` for a type without a
/// fixed block (a removed or unknown type).
///
/// ```
/// use gguf_core::{codec, GgmlType};
/// assert_eq!(codec::geometry(GgmlType::Q4_K, "quantize")?, (256, 144));
/// # Ok::<(), gguf_core::Error>(())
/// ```
pub fn geometry(ty: GgmlType, operation: &'static str) -> Result<(usize, usize)> {
    match (ty.block_size(), ty.type_size()) {
        (Some(bs), Some(ts)) => Ok((bs as usize, ts as usize)),
        _ => Err(Error::Codec(CodecError::UnsupportedType { ty, operation })),
    }
}

/// Fails unless `len` bytes are whole blocks of `ts` bytes.
pub(crate) fn check_whole_blocks(ty: GgmlType, len: usize, ts: usize) -> Result<()> {
    if len.is_multiple_of(ts) {
        return Ok(());
    }
    Err(Error::Codec(CodecError::PartialBlock {
        ty,
        what: "tensor data bytes",
        len: len as u64,
        unit: ts as u64,
    }))
}

/// Checks `data` holds whole blocks and returns the element count.
fn element_count(ty: GgmlType, data: &[u8], operation: &'static str) -> Result<usize> {
    let (bs, ts) = geometry(ty, operation)?;
    check_whole_blocks(ty, data.len(), ts)?;
    (data.len() / ts).checked_mul(bs).ok_or_else(|| {
        Error::Codec(CodecError::LengthMismatch {
            what: format!("{ty} element count"),
            expected: u64::MAX,
            actual: data.len() as u64,
        })
    })
}

fn check_out(ty: GgmlType, expected: usize, actual: usize) -> Result<()> {
    if expected != actual {
        return Err(Error::Codec(CodecError::LengthMismatch {
            what: format!("dequantize output for {} bytes of {ty}", "whole blocks"),
            expected: expected as u64,
            actual: actual as u64,
        }));
    }
    Ok(())
}

/// Decodes `data` (whole blocks of `ty`, byte order `endian`) into `out`.
///
/// `out.len()` must equal the element count the data holds
/// (`data.len() / type_size * block_size`). Does not allocate.
///
/// ```
/// use gguf_core::{codec, Endian, GgmlType};
/// // One Q4_0 block: f16 scale 0.5, then 16 bytes of nibbles (8 = zero).
/// let mut block = vec![0x00, 0x38];
/// block.extend([0x98u8; 16]); // low nibble 8 -> 0.0, high nibble 9 -> 0.5
/// let mut out = [0f32; 32];
/// codec::dequantize(GgmlType::Q4_0, Endian::Little, &block, &mut out)?;
/// assert_eq!(out[0], 0.0);
/// assert_eq!(out[16], 0.5);
/// # Ok::<(), gguf_core::Error>(())
/// ```
pub fn dequantize(ty: GgmlType, endian: Endian, data: &[u8], out: &mut [f32]) -> Result<()> {
    let dec = decoder(ty, endian).ok_or(Error::Codec(CodecError::UnsupportedType {
        ty,
        operation: "dequantize",
    }))?;
    let n = element_count(ty, data, "dequantize")?;
    check_out(ty, n, out.len())?;
    dec(data, out);
    Ok(())
}

/// [`dequantize`] into a new vector.
///
/// ```
/// use gguf_core::{codec, Endian, GgmlType};
/// let v = codec::dequantize_to_vec(GgmlType::BF16, Endian::Big, &[0x3f, 0x80])?;
/// assert_eq!(v, [1.0]);
/// # Ok::<(), gguf_core::Error>(())
/// ```
pub fn dequantize_to_vec(ty: GgmlType, endian: Endian, data: &[u8]) -> Result<Vec<f32>> {
    decoder(ty, endian).ok_or(Error::Codec(CodecError::UnsupportedType {
        ty,
        operation: "dequantize",
    }))?;
    let n = element_count(ty, data, "dequantize")?;
    let mut out = vec![0f32; n];
    dequantize(ty, endian, data, &mut out)?;
    Ok(out)
}

/// [`dequantize`] on all rayon threads, split on block boundaries.
///
/// Each task decodes about 64 KiB of output, small enough to balance and
/// large enough that scheduling costs nothing measurable. Without the
/// `parallel` feature it decodes on the calling thread; the output is the
/// same either way.
///
/// ```
/// use gguf_core::{codec, Endian, GgmlType};
/// let q = codec::quantize(GgmlType::Q4_K, &vec![0.25f32; 4096], &[4096])?;
/// let mut out = vec![0f32; 4096];
/// codec::dequantize_par(GgmlType::Q4_K, Endian::Little, &q, &mut out)?;
/// assert!(out.iter().all(|&v| (v - 0.25).abs() < 1e-3));
/// # Ok::<(), gguf_core::Error>(())
/// ```
pub fn dequantize_par(ty: GgmlType, endian: Endian, data: &[u8], out: &mut [f32]) -> Result<()> {
    let dec = decoder(ty, endian).ok_or(Error::Codec(CodecError::UnsupportedType {
        ty,
        operation: "dequantize",
    }))?;
    let n = element_count(ty, data, "dequantize")?;
    check_out(ty, n, out.len())?;
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        let (bs, ts) = geometry(ty, "dequantize")?;
        let blocks_per_task = (16 * 1024 / bs).max(1);
        if n > blocks_per_task * bs {
            data.par_chunks(blocks_per_task * ts)
                .zip(out.par_chunks_mut(blocks_per_task * bs))
                .for_each(|(d, o)| dec(d, o));
            return Ok(());
        }
    }
    // One task's worth (not worth waking the pool), or no pool.
    dec(data, out);
    Ok(())
}

/// Checks that `src` holds a tensor of `shape` whose rows (`shape[0]`) are
/// whole blocks of `ty`; returns the row length and the quantized size.
pub(crate) fn quantized_shape(ty: GgmlType, src: &[f32], shape: &[u64]) -> Result<(u64, usize)> {
    let (bs, ts) = geometry(ty, "quantize")?;
    let row = shape.first().copied().unwrap_or(1);
    if row % bs as u64 != 0 {
        return Err(Error::Codec(CodecError::PartialBlock {
            ty,
            what: "row length",
            len: row,
            unit: bs as u64,
        }));
    }
    let total = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
    if total != Some(src.len() as u64) {
        return Err(Error::Codec(CodecError::LengthMismatch {
            what: format!("f32 elements for shape {shape:?}"),
            expected: total.unwrap_or(u64::MAX),
            actual: src.len() as u64,
        }));
    }
    Ok((row, src.len() / bs * ts))
}

/// Quantizes `src`, a tensor of `shape` (`shape[0]` is the row length, ggml's
/// `ne[0]`), to `ty`, row by row. Output blocks are little-endian.
///
/// Errors: `UnsupportedType` for types without a reference quantizer,
/// `ImatrixRequired` for IQ2_XXS, IQ2_XS and IQ1_S (use
/// [`quantize_weighted`] with an importance matrix),
/// `PartialBlock` when the row length is not a multiple of the block size,
/// `LengthMismatch` when `src.len()` is not the product of `shape`.
///
/// ```
/// use gguf_core::{codec, GgmlType};
/// let x = vec![1.0f32; 512];
/// let q = codec::quantize(GgmlType::Q6_K, &x, &[256, 2])?;
/// assert_eq!(q.len(), 2 * 210);
/// assert!(codec::quantize(GgmlType::Q4_0, &x, &[16, 32]).is_err()); // 16 % 32 != 0
/// # Ok::<(), gguf_core::Error>(())
/// ```
pub fn quantize(ty: GgmlType, src: &[f32], shape: &[u64]) -> Result<Vec<u8>> {
    refuse_without_weights(ty)?;
    encoder(ty).ok_or(Error::Codec(CodecError::UnsupportedType {
        ty,
        operation: "quantize",
    }))?;
    let (_, out_len) = quantized_shape(ty, src, shape)?;
    // Every reference quantizer treats blocks independently, so quantizing
    // the whole buffer equals quantizing it row by row once rows are whole
    // blocks.
    let mut out = vec![0u8; out_len];
    quantize_into(ty, src, &mut out)?;
    Ok(out)
}

/// Quantizes `src` (a whole number of blocks) into `out`, which must hold
/// exactly `src.len() / block_size * type_size` bytes. Does not allocate.
///
/// ```
/// use gguf_core::{codec, GgmlType};
/// let mut out = [0u8; 18];
/// codec::quantize_into(GgmlType::IQ4_NL, &[0.5f32; 32], &mut out)?;
/// # Ok::<(), gguf_core::Error>(())
/// ```
pub fn quantize_into(ty: GgmlType, src: &[f32], out: &mut [u8]) -> Result<()> {
    refuse_without_weights(ty)?;
    let enc = encoder(ty).ok_or(Error::Codec(CodecError::UnsupportedType {
        ty,
        operation: "quantize",
    }))?;
    let (bs, ts) = geometry(ty, "quantize")?;
    if !src.len().is_multiple_of(bs) {
        return Err(Error::Codec(CodecError::PartialBlock {
            ty,
            what: "f32 elements",
            len: src.len() as u64,
            unit: bs as u64,
        }));
    }
    let expected = src.len() / bs * ts;
    if out.len() != expected {
        return Err(Error::Codec(CodecError::LengthMismatch {
            what: format!("quantize output for {} elements of {ty}", src.len()),
            expected: expected as u64,
            actual: out.len() as u64,
        }));
    }
    enc(src, out);
    Ok(())
}

/// Dequantizes then rounds to IEEE half precision (ggml's rounding).
///
/// ```
/// use gguf_core::{codec, Endian, GgmlType};
/// let h = codec::to_f16(GgmlType::F32, Endian::Little, &1.5f32.to_le_bytes())?;
/// assert_eq!(h[0].to_f32(), 1.5);
/// # Ok::<(), gguf_core::Error>(())
/// ```
pub fn to_f16(ty: GgmlType, endian: Endian, data: &[u8]) -> Result<Vec<half::f16>> {
    let v = dequantize_to_vec(ty, endian, data)?;
    Ok(v.into_iter()
        .map(|x| half::f16::from_bits(f32_to_f16(x)))
        .collect())
}

/// Dequantizes then rounds to bfloat16 (ggml's rounding, NaNs kept quiet).
///
/// ```
/// use gguf_core::{codec, Endian, GgmlType};
/// let h = codec::to_bf16(GgmlType::F32, Endian::Little, &1.5f32.to_le_bytes())?;
/// assert_eq!(h[0].to_f32(), 1.5);
/// # Ok::<(), gguf_core::Error>(())
/// ```
pub fn to_bf16(ty: GgmlType, endian: Endian, data: &[u8]) -> Result<Vec<half::bf16>> {
    let v = dequantize_to_vec(ty, endian, data)?;
    Ok(v.into_iter()
        .map(|x| half::bf16::from_bits(f32_to_bf16(x)))
        .collect())
}

#[cfg(all(test, feature = "simd", target_arch = "x86_64"))]
mod simd_tests {
    use super::*;

    /// Runs `f` with every dispatch taking the portable code.
    fn portable<R>(f: impl FnOnce() -> R) -> R {
        PORTABLE_ONLY.set(true);
        let r = f();
        PORTABLE_ONLY.set(false);
        r
    }

    fn same_bits(a: &[f32], b: &[f32]) -> bool {
        // The one latitude the module docs allow: the sign and payload of
        // a NaN.
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
    }

    /// Every decoder and encoder gives the same output through its AVX2
    /// copy (or hand-written kernel) as through the portable code, in both
    /// byte orders: what lets the `simd` feature be turned off without
    /// changing a byte.
    #[test]
    fn accelerated_codecs_match_the_portable_code() -> Result<()> {
        if !(std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("f16c"))
        {
            eprintln!(
                "skipped accelerated_codecs_match_the_portable_code: this CPU lacks AVX2 or F16C"
            );
            return Ok(());
        }
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (mut decoded, mut encoded) = (0, 0);
        for &ty in GgmlType::ALL {
            let Ok((bs, ts)) = geometry(ty, "test") else {
                continue;
            };
            let blocks = 4096 / bs + 3;
            let data: Vec<u8> = (0..blocks * ts).map(|_| next() as u8).collect();
            for endian in [Endian::Little, Endian::Big] {
                if decoder(ty, endian).is_none() {
                    continue;
                }
                let fast = dequantize_to_vec(ty, endian, &data)?;
                let slow = portable(|| dequantize_to_vec(ty, endian, &data))?;
                assert!(same_bits(&fast, &slow), "dequantize {ty} {endian:?}");
                decoded += 1;
            }
            if !can_quantize(ty) {
                continue;
            }
            // Spread magnitudes, with zeros, infinities and NaNs among them.
            let mut x: Vec<f32> = (0..blocks * bs)
                .map(|_| {
                    let r = next();
                    let mantissa = (r >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
                    mantissa * 2f32.powi((r % 24) as i32 - 12)
                })
                .collect();
            for (i, special) in [0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN]
                .into_iter()
                .enumerate()
            {
                x[bs + 7 * i] = special;
            }
            x[..bs].fill(0.0);
            let shape = [x.len() as u64];
            let fast = quantize(ty, &x, &shape)?;
            let slow = portable(|| quantize(ty, &x, &shape))?;
            assert!(fast == slow, "quantize {ty}");
            encoded += 1;
        }
        assert!(
            decoded >= 70 && encoded >= 20,
            "{decoded} decoders, {encoded} encoders"
        );
        Ok(())
    }

    /// The weighted row quantizers give the same bytes through their AVX2
    /// copy as through the portable code.
    #[test]
    fn accelerated_weighted_quantizers_match_the_portable_code() -> Result<()> {
        if !std::arch::is_x86_feature_detected!("avx2") {
            eprintln!("skipped accelerated_weighted_quantizers_match_the_portable_code: no AVX2");
            return Ok(());
        }
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 24) as f32
        };
        let n = 512;
        let x: Vec<f32> = (0..2 * n).map(|_| (next() - 0.5) * 0.2).collect();
        let w: Vec<f32> = (0..n)
            .map(|i| if i % 7 == 0 { 0.0 } else { next() * 3.0 })
            .collect();
        let mut checked = 0;
        for &ty in GgmlType::ALL {
            if row_encoder(ty).is_none() {
                continue;
            }
            let shape = [n as u64, 2];
            let fast = quantize_weighted(ty, &x, &shape, Some(&w))?;
            let slow = portable(|| quantize_weighted(ty, &x, &shape, Some(&w)))?;
            assert!(fast == slow, "weighted quantize {ty}");
            checked += 1;
        }
        assert_eq!(checked, 18);
        Ok(())
    }
}

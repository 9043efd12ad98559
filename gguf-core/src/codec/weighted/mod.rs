//! Quantizing with importance weights (an imatrix row per tensor), as
//! llama-quantize does with `--imatrix`: ggml's `ggml_quantize_chunk` with
//! `quant_weights`.

pub(crate) mod k;
pub(crate) mod legacy;

use super::iq_quant::needs_weights;
use super::{encoder, geometry, quantized_shape, row_encoder};
use crate::error::{CodecError, Error, Result};
use crate::format::GgmlType;

/// Quantizes `src`, a tensor of `shape` (`shape[0]` is the row length), to
/// `ty` with optional importance `weights` (one per column, `shape[0]`
/// values, applied to every row), bit-exact with ggml's
/// `ggml_quantize_chunk`.
///
/// Without weights it equals [`quantize`](super::quantize). With weights,
/// the types whose ggml quantizer uses them (Q4_0, Q4_1, Q5_0, Q5_1, Q2_K
/// to Q6_K and the IQ types) run ggml's weighted quantizer; the types whose
/// quantizer ignores them (F32, F16, BF16, Q8_0, Q1_0, Q2_0, TQ1_0, TQ2_0,
/// MXFP4, NVFP4) give their unweighted bytes, as ggml does; Q8_1 and Q8_K,
/// which `ggml_quantize_chunk` has no quantizer for, fail with
/// `UnsupportedType`. IQ2_XXS, IQ2_XS and IQ1_S fail with
/// `ImatrixRequired` without weights.
///
/// ```
/// use gguf_core::{codec, GgmlType};
/// let x: Vec<f32> = (0..512).map(|i| ((i * 37 % 101) as f32 - 50.0) / 64.0).collect();
/// let w = vec![1.0f32; 256];
/// let q = codec::quantize_weighted(GgmlType::IQ4_XS, &x, &[256, 2], Some(&w))?;
/// assert_eq!(q.len(), 2 * 136);
/// assert!(codec::quantize_weighted(GgmlType::IQ2_XXS, &x, &[256, 2], None).is_err());
/// # Ok::<(), gguf_core::Error>(())
/// ```
pub fn quantize_weighted(
    ty: GgmlType,
    src: &[f32],
    shape: &[u64],
    weights: Option<&[f32]>,
) -> Result<Vec<u8>> {
    let (row, out_len) = quantized_shape(ty, src, shape)?;
    let mut out = vec![0u8; out_len];
    quantize_rows_into(ty, src, row as usize, weights, &mut out)?;
    Ok(out)
}

/// [`quantize_weighted`] of whole rows of `row_len` elements into `out`
/// (exactly the quantized size). Does not allocate.
///
/// ```
/// use gguf_core::{codec, GgmlType};
/// let mut out = [0u8; 136];
/// codec::quantize_rows_into(GgmlType::IQ4_XS, &[0.5f32; 256], 256, Some(&[2.0; 256]), &mut out)?;
/// # Ok::<(), gguf_core::Error>(())
/// ```
pub fn quantize_rows_into(
    ty: GgmlType,
    src: &[f32],
    row_len: usize,
    weights: Option<&[f32]>,
    out: &mut [u8],
) -> Result<()> {
    let (bs, ts) = geometry(ty, "quantize")?;
    if row_len == 0 || !row_len.is_multiple_of(bs) || !src.len().is_multiple_of(row_len) {
        return Err(Error::Codec(CodecError::PartialBlock {
            ty,
            what: "row length",
            len: row_len as u64,
            unit: bs as u64,
        }));
    }
    let out_row = row_len / bs * ts;
    let expected = src.len() / row_len * out_row;
    if out.len() != expected {
        return Err(Error::Codec(CodecError::LengthMismatch {
            what: format!("quantize output for {} elements of {ty}", src.len()),
            expected: expected as u64,
            actual: out.len() as u64,
        }));
    }
    if let Some(w) = weights
        && w.len() != row_len
    {
        return Err(Error::Codec(CodecError::LengthMismatch {
            what: format!("importance weights for rows of {row_len} elements"),
            expected: row_len as u64,
            actual: w.len() as u64,
        }));
    }
    let Some(weights) = weights else {
        if needs_weights(ty) {
            return Err(Error::Codec(CodecError::ImatrixRequired { ty }));
        }
        let enc = encoder(ty).ok_or(Error::Codec(CodecError::UnsupportedType {
            ty,
            operation: "quantize",
        }))?;
        enc(src, out);
        return Ok(());
    };
    if let Some(enc) = row_encoder(ty) {
        for (s, o) in src.chunks_exact(row_len).zip(out.chunks_exact_mut(out_row)) {
            enc(s, o, weights);
        }
        return Ok(());
    }
    match encoder(ty) {
        Some(enc) if ignores_weights(ty) => {
            enc(src, out);
            Ok(())
        }
        _ => Err(Error::Codec(CodecError::UnsupportedType {
            ty,
            operation: "quantize with importance weights",
        })),
    }
}

/// The types `ggml_quantize_chunk` quantizes the same with importance
/// weights as without (its quantizer for them takes no weights).
pub fn ignores_weights(ty: GgmlType) -> bool {
    use GgmlType as T;
    matches!(
        ty,
        T::F32
            | T::F16
            | T::BF16
            | T::Q8_0
            | T::Q1_0
            | T::Q2_0
            | T::TQ1_0
            | T::TQ2_0
            | T::MXFP4
            | T::NVFP4
    )
}

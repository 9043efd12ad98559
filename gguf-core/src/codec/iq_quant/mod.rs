//! ggml's IQ quantizers with optional importance weights (an imatrix row):
//! the bytes `ggml_quantize_chunk` writes, hence llama-quantize.
//!
//! Each row quantizer takes one row (whole 256-element super-blocks, or
//! 32-element blocks for IQ4_NL) and, when given, the importance weights of
//! that row's columns (one per element; the same for every row of a tensor).

pub(crate) mod grid;
pub(crate) mod iq1;
pub(crate) mod iq2;
pub(crate) mod iq3;
pub(crate) mod iq4;

use crate::format::GgmlType;

/// Below this magnitude a block counts as zero (ggml's `GROUP_MAX_EPS`).
pub(crate) const GROUP_MAX_EPS: f32 = 1e-15;

/// IQ4_NL without weights (ggml's `quantize_iq4_nl`: 7 scale refinements
/// each way, then every element re-picked with the final scale).
#[inline(always)]
pub(crate) fn iq4_nl_unweighted(src: &[f32], out: &mut [u8]) {
    iq4::quant_iq4_nl(src, out, None)
}

/// IQ4_XS without weights, for the codec's block encoders (its blocks are
/// independent then, so any run of whole blocks may be passed).
#[inline(always)]
pub(crate) fn iq4_xs_unweighted(src: &[f32], out: &mut [u8]) {
    iq4::quant_iq4_xs(src, out, None)
}

/// IQ3_XXS without weights (independent blocks).
pub(crate) fn iq3_xxs_unweighted(src: &[f32], out: &mut [u8]) {
    iq3::quant_iq3_xxs(src, out, None)
}

/// IQ3_S without weights (independent blocks).
pub(crate) fn iq3_s_unweighted(src: &[f32], out: &mut [u8]) {
    iq3::quant_iq3_s(src, out, None)
}

/// IQ2_S without weights (independent blocks).
pub(crate) fn iq2_s_unweighted(src: &[f32], out: &mut [u8]) {
    iq2::quant_iq2_s(src, out, None)
}

/// IQ1_M without weights (independent blocks).
pub(crate) fn iq1_m_unweighted(src: &[f32], out: &mut [u8]) {
    iq1::quant_iq1_m(src, out, None)
}

/// True for the types whose ggml quantizer has no fallback without
/// importance weights (`ggml_quantize_requires_imatrix`): it stops the
/// process rather than guess, and llama-quantize refuses them.
pub(crate) fn needs_weights(ty: GgmlType) -> bool {
    matches!(ty, GgmlType::IQ2_XXS | GgmlType::IQ2_XS | GgmlType::IQ1_S)
}

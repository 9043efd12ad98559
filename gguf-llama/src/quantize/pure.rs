//! llama-quantize `--pure`: every weight matrix to one type, with its
//! per-tensor fallbacks.

use gguf_core::codec::can_dequantize;
use gguf_core::GgmlType;

use super::rules::allows_quantization;

/// ggml's `ggml_n_dims`: dimensions up to the last one above 1.
fn effective_dims(shape: &[u64]) -> usize {
    shape.iter().rposition(|&d| d > 1).map_or(1, |i| i + 1)
}

/// True for what llama-quantize calls a weight matrix: a tensor named
/// `*weight` with at least two dimensions above 1 (ggml's `ggml_n_dims`),
/// so not a norm, a bias or another vector. `shape` is innermost first.
///
/// ```
/// use gguf_llama::quantize::is_weight_matrix;
/// assert!(is_weight_matrix("token_embd.weight", &[2048, 32000]));
/// assert!(!is_weight_matrix("output_norm.weight", &[2048]));
/// assert!(!is_weight_matrix("blk.0.attn_q.bias", &[2048, 2048]));
/// assert!(!is_weight_matrix("blk.0.ssm_a.weight", &[16, 1, 1]));
/// ```
pub fn is_weight_matrix(name: &str, shape: &[u64]) -> bool {
    name.ends_with("weight") && effective_dims(shape) >= 2
}

/// The type a tensor whose rows hold `row` elements gets when `ty` is
/// asked for: `ty` when a row is a whole number of its blocks, else the
/// type llama-quantize falls back to (a 32-element block type of about
/// the same size, or F16 when even that does not divide the row); `None`
/// where llama-quantize has no fallback and stops.
///
/// ```
/// use gguf_llama::quantize::fallback;
/// use gguf_core::GgmlType;
/// assert_eq!(fallback(GgmlType::Q4_K, 4096), Some(GgmlType::Q4_K));
/// assert_eq!(fallback(GgmlType::Q4_K, 96), Some(GgmlType::Q5_0));
/// assert_eq!(fallback(GgmlType::Q4_K, 40), Some(GgmlType::F16));
/// ```
pub fn fallback(ty: GgmlType, row: u64) -> Option<GgmlType> {
    use GgmlType as T;
    let fits = |t: GgmlType| t.block_size().is_some_and(|b| row.is_multiple_of(b));
    if fits(ty) {
        return Some(ty);
    }
    let next = match ty {
        T::IQ1_S
        | T::IQ1_M
        | T::IQ2_XXS
        | T::IQ2_XS
        | T::IQ2_S
        | T::IQ3_XXS
        | T::IQ3_S
        | T::IQ4_XS => T::IQ4_NL,
        T::Q2_0 | T::Q2_K | T::Q3_K | T::TQ1_0 | T::TQ2_0 => T::Q4_0,
        T::Q4_K => T::Q5_0,
        T::Q5_K => T::Q5_1,
        T::Q6_K => T::Q8_0,
        // Already a block of 32 or fewer: nothing smaller to go to.
        _ if ty.block_size().is_some_and(|b| b <= 32) => ty,
        _ => return None,
    };
    Some(if fits(next) { next } else { T::F16 })
}

/// Why [`choose_pure`] leaves a tensor as it is.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[non_exhaustive]
pub enum Kept {
    /// Already of the target type.
    AlreadyTarget,
    /// Not a weight matrix: norms, biases, other vectors, integer tensors
    /// (llama-quantize leaves them too).
    NotAMatrix,
    /// A weight matrix llama-quantize leaves as it is (not
    /// [`allows_quantization`](super::allows_quantization)).
    LeftByLlama,
    /// Quantized, and the target is quantized: re-quantizing compounds the
    /// error of both encodings, so the caller must allow it.
    Quantized,
    /// A row is not a whole number of the target's blocks, and
    /// llama-quantize has no fallback type for the target.
    PartialRow,
    /// No decoder for the source type in this crate.
    NoDecoder,
}

impl Kept {
    /// A weight matrix left at another type than asked for: what a user
    /// does not expect, and what keeps the file type as it was
    /// ([`output_file_type`](super::output_file_type)).
    ///
    /// ```
    /// use gguf_llama::quantize::Kept;
    /// assert!(Kept::Quantized.is_weight_left_behind());
    /// assert!(!Kept::NotAMatrix.is_weight_left_behind());
    /// ```
    pub fn is_weight_left_behind(self) -> bool {
        matches!(self, Kept::Quantized | Kept::PartialRow | Kept::NoDecoder)
    }
}

fn is_float(ty: GgmlType) -> bool {
    matches!(ty, GgmlType::F32 | GgmlType::F16 | GgmlType::BF16)
}

/// What llama-quantize `--pure` does with tensor `name` of `shape`
/// (innermost first) and type `src`, in a model of architecture `arch`,
/// when `target` is asked for: `Ok(type)` to re-encode it to `type`, or
/// why it is kept.
///
/// A weight matrix ([`is_weight_matrix`], of a float or quantized type)
/// that llama-quantize may quantize ([`allows_quantization`], the rule
/// [`plan`](super::plan) follows too) gets `target`, or its [`fallback`]
/// when a row is not a whole number of `target` blocks.
/// Quantized sources are re-encoded to a float target always, to a
/// quantized one only with `allow_requantize`.
///
/// ```
/// use gguf_llama::quantize::{choose_pure, Kept};
/// use gguf_core::GgmlType as T;
/// let q8 = |name, shape: &[u64], src| choose_pure(name, shape, "llama", src, T::Q8_0, false);
/// assert_eq!(q8("output.weight", &[2048, 32000], T::F16), Ok(T::Q8_0));
/// assert_eq!(q8("output.weight", &[2048, 32000], T::Q4_K), Err(Kept::Quantized));
/// assert_eq!(q8("blk.0.ffn_gate_inp.weight", &[2048, 8], T::F32), Err(Kept::LeftByLlama));
/// ```
pub fn choose_pure(
    name: &str,
    shape: &[u64],
    arch: &str,
    src: GgmlType,
    target: GgmlType,
    allow_requantize: bool,
) -> Result<GgmlType, Kept> {
    if src == target {
        return Err(Kept::AlreadyTarget);
    }
    let quantized = !src.is_plain();
    if !(is_float(src) || quantized) || !is_weight_matrix(name, shape) {
        return Err(Kept::NotAMatrix);
    }
    if !allows_quantization(name, shape, arch, true) {
        return Err(Kept::LeftByLlama);
    }
    let row = shape.first().copied().unwrap_or(1);
    let to = fallback(target, row).ok_or(Kept::PartialRow)?;
    if src == to {
        return Err(Kept::AlreadyTarget);
    }
    if !can_dequantize(src) {
        return Err(Kept::NoDecoder);
    }
    if quantized && !is_float(to) && !allow_requantize {
        return Err(Kept::Quantized);
    }
    Ok(to)
}

#[cfg(test)]
mod tests {
    use super::*;
    use GgmlType as T;

    const MATRIX: &[u64] = &[256, 64];

    #[test]
    fn a_weight_matrix_gets_the_target() {
        assert_eq!(
            choose_pure(
                "blk.0.attn_q.weight",
                MATRIX,
                "llama",
                T::F32,
                T::Q8_0,
                false
            ),
            Ok(T::Q8_0)
        );
        assert_eq!(
            choose_pure("token_embd.weight", MATRIX, "llama", T::BF16, T::F16, false),
            Ok(T::F16)
        );
    }

    #[test]
    fn a_tensor_of_the_target_type_is_kept() {
        let c = choose_pure(
            "blk.0.attn_q.weight",
            MATRIX,
            "llama",
            T::Q8_0,
            T::Q8_0,
            true,
        );
        assert_eq!(c, Err(Kept::AlreadyTarget));
        // Its fallback being its own type counts the same.
        let c = choose_pure(
            "blk.0.attn_q.weight",
            &[96, 64],
            "llama",
            T::Q5_0,
            T::Q4_K,
            true,
        );
        assert_eq!(c, Err(Kept::AlreadyTarget));
    }

    #[test]
    fn vectors_biases_and_integer_tensors_are_not_matrices() {
        let kept = |name, shape: &[u64], src| choose_pure(name, shape, "llama", src, T::Q8_0, true);
        assert_eq!(
            kept("output_norm.weight", &[256], T::F32),
            Err(Kept::NotAMatrix)
        );
        // Trailing dimensions of 1 do not make a matrix (ggml_n_dims).
        assert_eq!(
            kept("blk.0.x.weight", &[256, 1, 1], T::F32),
            Err(Kept::NotAMatrix)
        );
        assert_eq!(
            kept("blk.0.attn_q.bias", MATRIX, T::F32),
            Err(Kept::NotAMatrix)
        );
        assert_eq!(
            kept("blk.0.x.weight", MATRIX, T::I32),
            Err(Kept::NotAMatrix)
        );
        // A leading dimension of 1 with a later one above 1 is a matrix.
        assert_eq!(kept("blk.0.x.weight", &[1, 64], T::F32), Ok(T::F16));
    }

    #[test]
    fn what_llama_quantize_leaves_is_kept_by_its_own_rule() {
        // One rule for `--pure` and the presets: `allows_quantization`.
        for name in [
            "blk.0.ffn_gate_inp.weight",
            "blk.0.altup_proj.weight",
            "position_embd.weight",
            "blk.0.time_mix_w1.weight",
            "v.blk.0.patch_embd.weight",
        ] {
            assert!(!allows_quantization(name, MATRIX, "llama", true), "{name}");
            let c = choose_pure(name, MATRIX, "llama", T::F32, T::Q8_0, false);
            assert_eq!(c, Err(Kept::LeftByLlama), "{name}");
        }
        // Architecture-dependent: GLM5-next keeps its indexer projections.
        let name = "blk.0.indexer.proj.weight";
        assert_eq!(
            choose_pure(name, MATRIX, "glm5-next", T::F32, T::Q8_0, false),
            Err(Kept::LeftByLlama)
        );
        assert_eq!(
            choose_pure(name, MATRIX, "llama", T::F32, T::Q8_0, false),
            Ok(T::Q8_0)
        );
        // An exact name in llama-quantize, not a fragment.
        assert_eq!(
            choose_pure(
                "blk.0.token_types.weight",
                MATRIX,
                "llama",
                T::F32,
                T::Q8_0,
                false
            ),
            Ok(T::Q8_0)
        );
    }

    #[test]
    fn fallbacks_follow_llama_quantize() {
        // Row of 96: not a multiple of 256, a multiple of 32.
        for (ty, to) in [
            (T::Q2_K, T::Q4_0),
            (T::Q3_K, T::Q4_0),
            (T::Q4_K, T::Q5_0),
            (T::Q5_K, T::Q5_1),
            (T::Q6_K, T::Q8_0),
            (T::TQ1_0, T::Q4_0),
            (T::TQ2_0, T::Q4_0),
            (T::IQ4_XS, T::IQ4_NL),
            (T::IQ2_XXS, T::IQ4_NL),
        ] {
            assert_eq!(fallback(ty, 96), Some(to), "{ty}");
            assert_eq!(fallback(ty, 512), Some(ty), "{ty}");
        }
        // Q2_0's block is 64: 96 is not whole, 32-element Q4_0 is.
        assert_eq!(fallback(T::Q2_0, 96), Some(T::Q4_0));
        // Not even the 32-element fallback fits: F16.
        assert_eq!(fallback(T::Q4_K, 40), Some(T::F16));
        // A 32-element type has no smaller block type to go to: F16.
        assert_eq!(fallback(T::Q8_0, 40), Some(T::F16));
        assert_eq!(fallback(T::MXFP4, 40), Some(T::F16));
        // A larger block with no fallback in llama-quantize.
        assert_eq!(fallback(T::NVFP4, 32), None);
        let c = choose_pure(
            "blk.0.attn_q.weight",
            &[32, 8],
            "llama",
            T::F32,
            T::NVFP4,
            false,
        );
        assert_eq!(c, Err(Kept::PartialRow));
        let c = choose_pure(
            "blk.0.attn_q.weight",
            &[96, 8],
            "llama",
            T::F16,
            T::Q6_K,
            false,
        );
        assert_eq!(c, Ok(T::Q8_0));
    }

    #[test]
    fn requantizing_needs_permission_unless_the_target_is_a_float() {
        let c = |to, allow| choose_pure("blk.0.attn_q.weight", MATRIX, "llama", T::Q4_0, to, allow);
        assert_eq!(c(T::Q8_0, false), Err(Kept::Quantized));
        assert_eq!(c(T::Q8_0, true), Ok(T::Q8_0));
        assert_eq!(c(T::F16, false), Ok(T::F16));
        assert_eq!(c(T::F32, false), Ok(T::F32));
    }

    #[test]
    fn a_type_without_a_decoder_is_kept() {
        let unknown = T::from_id(1000);
        let c = choose_pure(
            "blk.0.attn_q.weight",
            MATRIX,
            "llama",
            unknown,
            T::F16,
            true,
        );
        assert_eq!(c, Err(Kept::NoDecoder));
    }

    #[test]
    fn only_weights_at_other_types_are_left_behind() {
        for (kept, behind) in [
            (Kept::AlreadyTarget, false),
            (Kept::NotAMatrix, false),
            (Kept::LeftByLlama, false),
            (Kept::Quantized, true),
            (Kept::PartialRow, true),
            (Kept::NoDecoder, true),
        ] {
            assert_eq!(kept.is_weight_left_behind(), behind, "{kept:?}");
        }
    }
}

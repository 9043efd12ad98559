//! Which types llama-quantize refuses to make without an importance matrix
//! (the type part of its `tensor_requires_imatrix`; the per-tensor rule is
//! [`requires_imatrix`](super::requires_imatrix)).

use gguf_core::GgmlType;

/// True for the types whose tensors llama-quantize quantizes only with an
/// importance matrix: IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S and IQ3_XXS (at
/// these few bits per weight the result without one is garbage).
///
/// ```
/// use gguf_core::GgmlType;
/// use gguf_llama::quantize;
/// assert!(quantize::type_requires_imatrix(GgmlType::IQ2_XXS));
/// assert!(!quantize::type_requires_imatrix(GgmlType::IQ3_S));
/// ```
pub fn type_requires_imatrix(ty: GgmlType) -> bool {
    use GgmlType as T;
    matches!(
        ty,
        T::IQ3_XXS | T::IQ2_XXS | T::IQ2_XS | T::IQ2_S | T::IQ1_M | T::IQ1_S
    )
}

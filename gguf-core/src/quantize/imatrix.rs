//! Which tensors llama-quantize refuses to quantize without an importance
//! matrix (its `tensor_requires_imatrix`).

use crate::format::GgmlType;

/// llama-quantize's file type id of the `Q2_K_S` preset, whose Q2_K
/// tensors need an importance matrix (plain `Q2_K` ones do not).
const FILE_TYPE_Q2_K_S: u32 = 21;

/// True for the types whose tensors llama-quantize quantizes only with an
/// importance matrix: IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S and IQ3_XXS (at
/// these few bits per weight the result without one is garbage).
///
/// ```
/// use gguf_core::{quantize, GgmlType};
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

/// True when llama-quantize refuses to quantize tensor `name` to `ty`
/// without an importance matrix, for output file type `file_type` (the
/// `general.file_type` id): the types of [`type_requires_imatrix`], and
/// Q2_K in a `Q2_K_S` file, except for the token embeddings and the output
/// matrix (`token_embd.weight`, `per_layer_token_embd.weight`,
/// `output.weight`), which it quantizes without weights.
///
/// ```
/// use gguf_core::{quantize, GgmlType};
/// assert!(quantize::requires_imatrix("blk.0.ffn_down.weight", GgmlType::IQ2_S, 31));
/// assert!(!quantize::requires_imatrix("token_embd.weight", GgmlType::IQ2_S, 31));
/// assert!(quantize::requires_imatrix("blk.0.attn_v.weight", GgmlType::Q2_K, 21));
/// assert!(!quantize::requires_imatrix("blk.0.attn_v.weight", GgmlType::Q2_K, 10));
/// ```
pub fn requires_imatrix(name: &str, ty: GgmlType, file_type: u32) -> bool {
    if matches!(
        name,
        "token_embd.weight" | "per_layer_token_embd.weight" | "output.weight"
    ) {
        return false;
    }
    type_requires_imatrix(ty) || (ty == GgmlType::Q2_K && file_type == FILE_TYPE_Q2_K_S)
}

//! The quantization label llama.cpp prints as `file type`.

use gguf_core::format::file_type_of;
use gguf_core::GgmlType;

/// The file type llama.cpp's loader guesses from the most common tensor
/// type when `general.file_type` is absent: the file type of that type
/// ([`file_type_of`]; K-quants give their "Medium" mix), except MXFP4,
/// which its guess does not list, and types with no file type: both give
/// `0` ("all F32"), as the loader falls back to.
pub(super) fn guessed_file_type(dominant: GgmlType) -> u32 {
    match dominant {
        GgmlType::MXFP4 => 0,
        ty => file_type_of(ty).unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guess_follows_llama_cpp_s_loader() {
        use GgmlType as T;
        for (ty, guess) in [
            (T::F32, 0),
            (T::F16, 1),
            (T::BF16, 32),
            (T::Q4_K, 15),
            (T::Q3_K, 12),
            (T::IQ2_XXS, 19),
            (T::IQ4_XS, 30),
            (T::TQ2_0, 37),
            (T::NVFP4, 39),
            (T::Q1_0, 40),
            (T::Q2_0, 41),
            // Not in the loader's guess: "all F32".
            (T::MXFP4, 0),
            (T::Q8_K, 0),
            (T::I32, 0),
        ] {
            assert_eq!(guessed_file_type(ty), guess, "{ty}");
        }
    }
}

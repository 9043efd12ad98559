//! The quantization label llama.cpp prints as `file type`.

use crate::format::GgmlType;

pub use crate::format::file_type_name;

/// The file type llama.cpp guesses from the most common tensor type when
/// `general.file_type` is absent (its loader maps the dominant type to a
/// `LLAMA_FTYPE_MOSTLY_*`, K-quants to their "Medium" mix).
pub(super) fn guessed_file_type(dominant: GgmlType) -> u32 {
    match dominant.name().unwrap_or("") {
        "F16" => 1,
        "BF16" => 32,
        "Q4_0" => 2,
        "Q4_1" => 3,
        "Q5_0" => 8,
        "Q5_1" => 9,
        "Q8_0" => 7,
        "Q2_K" => 10,
        "Q3_K" => 12,
        "Q4_K" => 15,
        "Q5_K" => 17,
        "Q6_K" => 18,
        "TQ1_0" => 36,
        "TQ2_0" => 37,
        "IQ2_XXS" => 19,
        "IQ2_XS" => 20,
        "IQ2_S" => 28,
        "IQ3_XXS" => 23,
        "IQ1_S" => 24,
        "IQ1_M" => 31,
        "IQ4_NL" => 25,
        "IQ4_XS" => 30,
        "IQ3_S" => 26,
        _ => 0,
    }
}

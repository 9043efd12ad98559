//! The quantization label llama.cpp prints as `file type`.

use crate::format::GgmlType;

/// llama.cpp's name for a `general.file_type` value (`llama_ftype_name`),
/// or `None` for a value it does not know.
///
/// ```
/// use gguf_core::summary::file_type_name;
/// assert_eq!(file_type_name(15), Some("Q4_K - Medium"));
/// assert_eq!(file_type_name(1), Some("F16"));
/// assert_eq!(file_type_name(5), None);
/// ```
pub fn file_type_name(ftype: u32) -> Option<&'static str> {
    Some(match ftype {
        0 => "all F32",
        1 => "F16",
        2 => "Q4_0",
        3 => "Q4_1",
        7 => "Q8_0",
        8 => "Q5_0",
        9 => "Q5_1",
        10 => "Q2_K - Medium",
        11 => "Q3_K - Small",
        12 => "Q3_K - Medium",
        13 => "Q3_K - Large",
        14 => "Q4_K - Small",
        15 => "Q4_K - Medium",
        16 => "Q5_K - Small",
        17 => "Q5_K - Medium",
        18 => "Q6_K",
        19 => "IQ2_XXS - 2.0625 bpw",
        20 => "IQ2_XS - 2.3125 bpw",
        21 => "Q2_K - Small",
        22 => "IQ3_XS - 3.3 bpw",
        23 => "IQ3_XXS - 3.0625 bpw",
        24 => "IQ1_S - 1.5625 bpw",
        25 => "IQ4_NL - 4.5 bpw",
        26 => "IQ3_S - 3.4375 bpw",
        27 => "IQ3_S mix - 3.66 bpw",
        28 => "IQ2_S - 2.5 bpw",
        29 => "IQ2_M - 2.7 bpw",
        30 => "IQ4_XS - 4.25 bpw",
        31 => "IQ1_M - 1.75 bpw",
        32 => "BF16",
        36 => "TQ1_0 - 1.69 bpw ternary",
        37 => "TQ2_0 - 2.06 bpw ternary",
        38 => "MXFP4 MoE",
        39 => "NVFP4",
        40 => "Q1_0",
        41 => "Q2_0",
        _ => return None,
    })
}

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

//! `general.file_type`: the model's overall quantization, an id of
//! llama.cpp's `llama_ftype`, with the two names tools print for it.

/// Each known id, the encoding part of file names llama.cpp's converter
/// writes (gguf-py's `LlamaFileType` member after `MOSTLY_`), and the label
/// llama.cpp prints as `file type` (`llama_model_ftype_name`).
const FILE_TYPES: &[(u32, Option<&str>, Option<&str>)] = &[
    (0, Some("F32"), Some("all F32")),
    (1, Some("F16"), Some("F16")),
    (2, Some("Q4_0"), Some("Q4_0")),
    (3, Some("Q4_1"), Some("Q4_1")),
    (7, Some("Q8_0"), Some("Q8_0")),
    (8, Some("Q5_0"), Some("Q5_0")),
    (9, Some("Q5_1"), Some("Q5_1")),
    (10, Some("Q2_K"), Some("Q2_K - Medium")),
    (11, Some("Q3_K_S"), Some("Q3_K - Small")),
    (12, Some("Q3_K_M"), Some("Q3_K - Medium")),
    (13, Some("Q3_K_L"), Some("Q3_K - Large")),
    (14, Some("Q4_K_S"), Some("Q4_K - Small")),
    (15, Some("Q4_K_M"), Some("Q4_K - Medium")),
    (16, Some("Q5_K_S"), Some("Q5_K - Small")),
    (17, Some("Q5_K_M"), Some("Q5_K - Medium")),
    (18, Some("Q6_K"), Some("Q6_K")),
    (19, Some("IQ2_XXS"), Some("IQ2_XXS - 2.0625 bpw")),
    (20, Some("IQ2_XS"), Some("IQ2_XS - 2.3125 bpw")),
    (21, Some("Q2_K_S"), Some("Q2_K - Small")),
    (22, Some("IQ3_XS"), Some("IQ3_XS - 3.3 bpw")),
    (23, Some("IQ3_XXS"), Some("IQ3_XXS - 3.0625 bpw")),
    (24, Some("IQ1_S"), Some("IQ1_S - 1.5625 bpw")),
    (25, Some("IQ4_NL"), Some("IQ4_NL - 4.5 bpw")),
    (26, Some("IQ3_S"), Some("IQ3_S - 3.4375 bpw")),
    (27, Some("IQ3_M"), Some("IQ3_S mix - 3.66 bpw")),
    (28, Some("IQ2_S"), Some("IQ2_S - 2.5 bpw")),
    (29, Some("IQ2_M"), Some("IQ2_M - 2.7 bpw")),
    (30, Some("IQ4_XS"), Some("IQ4_XS - 4.25 bpw")),
    (31, Some("IQ1_M"), Some("IQ1_M - 1.75 bpw")),
    (32, Some("BF16"), Some("BF16")),
    (36, Some("TQ1_0"), Some("TQ1_0 - 1.69 bpw ternary")),
    (37, Some("TQ2_0"), Some("TQ2_0 - 2.06 bpw ternary")),
    (38, Some("MXFP4_MOE"), Some("MXFP4 MoE")),
    (39, Some("NVFP4"), Some("NVFP4")),
    (40, Some("Q1_0"), Some("Q1_0")),
    (41, None, Some("Q2_0")),
];

fn row(file_type: u32) -> Option<&'static (u32, Option<&'static str>, Option<&'static str>)> {
    FILE_TYPES.iter().find(|r| r.0 == file_type)
}

/// The encoding llama.cpp's converter writes in file names for a
/// `general.file_type` value (`15` -> `Q4_K_M`); `None` for values gguf-py
/// does not define.
///
/// ```
/// use gguf_core::format::file_type_encoding;
/// assert_eq!(file_type_encoding(15), Some("Q4_K_M"));
/// assert_eq!(file_type_encoding(0), Some("F32"));
/// assert_eq!(file_type_encoding(4), None);
/// ```
pub fn file_type_encoding(file_type: u32) -> Option<&'static str> {
    row(file_type).and_then(|r| r.1)
}

/// llama.cpp's label for a `general.file_type` value, as it prints
/// `file type` (`15` -> `Q4_K - Medium`); `None` for values it does not know.
///
/// ```
/// use gguf_core::format::file_type_name;
/// assert_eq!(file_type_name(15), Some("Q4_K - Medium"));
/// assert_eq!(file_type_name(1), Some("F16"));
/// assert_eq!(file_type_name(5), None);
/// ```
pub fn file_type_name(file_type: u32) -> Option<&'static str> {
    row(file_type).and_then(|r| r.2)
}

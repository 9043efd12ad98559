//! `general.file_type`: the model's overall quantization, an id of
//! llama.cpp's `llama_ftype`, with the two names tools print for it and
//! the ggml type of its weights where it has one.

use super::GgmlType;
use GgmlType as T;

/// Id, encoding, label, weight type: see [`FILE_TYPES`].
type Row = (
    u32,
    Option<&'static str>,
    Option<&'static str>,
    Option<GgmlType>,
);

/// Each known id, the encoding part of file names llama.cpp's converter
/// writes (gguf-py's `LlamaFileType` member after `MOSTLY_`), the label
/// llama.cpp prints as `file type` (`llama_model_ftype_name`), and the
/// ggml type of its weight matrices when the id stands for one type
/// (`LLAMA_FTYPE_MOSTLY_<type>`; a uniform K-quant is the `_M` id, as
/// llama.cpp's tools label it). The ids of mixtures (`_S`, `_L`, `IQ3_M`,
/// ...) have none.
const FILE_TYPES: &[Row] = &[
    (0, Some("F32"), Some("all F32"), Some(T::F32)),
    (1, Some("F16"), Some("F16"), Some(T::F16)),
    (2, Some("Q4_0"), Some("Q4_0"), Some(T::Q4_0)),
    (3, Some("Q4_1"), Some("Q4_1"), Some(T::Q4_1)),
    (7, Some("Q8_0"), Some("Q8_0"), Some(T::Q8_0)),
    (8, Some("Q5_0"), Some("Q5_0"), Some(T::Q5_0)),
    (9, Some("Q5_1"), Some("Q5_1"), Some(T::Q5_1)),
    (10, Some("Q2_K"), Some("Q2_K - Medium"), Some(T::Q2_K)),
    (11, Some("Q3_K_S"), Some("Q3_K - Small"), None),
    (12, Some("Q3_K_M"), Some("Q3_K - Medium"), Some(T::Q3_K)),
    (13, Some("Q3_K_L"), Some("Q3_K - Large"), None),
    (14, Some("Q4_K_S"), Some("Q4_K - Small"), None),
    (15, Some("Q4_K_M"), Some("Q4_K - Medium"), Some(T::Q4_K)),
    (16, Some("Q5_K_S"), Some("Q5_K - Small"), None),
    (17, Some("Q5_K_M"), Some("Q5_K - Medium"), Some(T::Q5_K)),
    (18, Some("Q6_K"), Some("Q6_K"), Some(T::Q6_K)),
    (
        19,
        Some("IQ2_XXS"),
        Some("IQ2_XXS - 2.0625 bpw"),
        Some(T::IQ2_XXS),
    ),
    (
        20,
        Some("IQ2_XS"),
        Some("IQ2_XS - 2.3125 bpw"),
        Some(T::IQ2_XS),
    ),
    (21, Some("Q2_K_S"), Some("Q2_K - Small"), None),
    (22, Some("IQ3_XS"), Some("IQ3_XS - 3.3 bpw"), None),
    (
        23,
        Some("IQ3_XXS"),
        Some("IQ3_XXS - 3.0625 bpw"),
        Some(T::IQ3_XXS),
    ),
    (
        24,
        Some("IQ1_S"),
        Some("IQ1_S - 1.5625 bpw"),
        Some(T::IQ1_S),
    ),
    (
        25,
        Some("IQ4_NL"),
        Some("IQ4_NL - 4.5 bpw"),
        Some(T::IQ4_NL),
    ),
    (
        26,
        Some("IQ3_S"),
        Some("IQ3_S - 3.4375 bpw"),
        Some(T::IQ3_S),
    ),
    (27, Some("IQ3_M"), Some("IQ3_S mix - 3.66 bpw"), None),
    (28, Some("IQ2_S"), Some("IQ2_S - 2.5 bpw"), Some(T::IQ2_S)),
    (29, Some("IQ2_M"), Some("IQ2_M - 2.7 bpw"), None),
    (
        30,
        Some("IQ4_XS"),
        Some("IQ4_XS - 4.25 bpw"),
        Some(T::IQ4_XS),
    ),
    (31, Some("IQ1_M"), Some("IQ1_M - 1.75 bpw"), Some(T::IQ1_M)),
    (32, Some("BF16"), Some("BF16"), Some(T::BF16)),
    (
        36,
        Some("TQ1_0"),
        Some("TQ1_0 - 1.69 bpw ternary"),
        Some(T::TQ1_0),
    ),
    (
        37,
        Some("TQ2_0"),
        Some("TQ2_0 - 2.06 bpw ternary"),
        Some(T::TQ2_0),
    ),
    (38, Some("MXFP4_MOE"), Some("MXFP4 MoE"), Some(T::MXFP4)),
    (39, Some("NVFP4"), Some("NVFP4"), Some(T::NVFP4)),
    (40, Some("Q1_0"), Some("Q1_0"), Some(T::Q1_0)),
    (41, None, Some("Q2_0"), Some(T::Q2_0)),
];

fn row(file_type: u32) -> Option<&'static Row> {
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

/// The `general.file_type` of a model whose weight matrices are all of
/// type `ty` (`Q4_K` -> `15`, `Q4_K_M`), as llama-quantize labels its
/// output and llama.cpp's loader guesses a missing one; `None` for types
/// with no file type in llama.cpp (`Q8_K`, `I32`, ...).
///
/// ```
/// use gguf_core::format::file_type_of;
/// use gguf_core::GgmlType;
/// assert_eq!(file_type_of(GgmlType::Q4_K), Some(15));
/// assert_eq!(file_type_of(GgmlType::F32), Some(0));
/// assert_eq!(file_type_of(GgmlType::Q8_K), None);
/// ```
pub fn file_type_of(ty: GgmlType) -> Option<u32> {
    FILE_TYPES.iter().find(|r| r.3 == Some(ty)).map(|r| r.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_type_has_one_file_type_named_after_it() {
        for ty in GgmlType::ALL {
            let rows: Vec<_> = FILE_TYPES.iter().filter(|r| r.3 == Some(*ty)).collect();
            assert!(rows.len() <= 1, "{ty} has {} file types", rows.len());
            if let Some(&&(id, _, label, _)) = rows.first() {
                let name = ty.name().unwrap();
                assert!(label.unwrap().contains(name), "{ty}: {id} {label:?}");
            }
        }
    }

    #[test]
    fn uniform_types_map_to_llama_h_ids() {
        // What llama-quantize writes for a file of one type (K-quants: _M).
        for (ty, id) in [
            (T::F32, 0),
            (T::F16, 1),
            (T::Q4_0, 2),
            (T::Q8_0, 7),
            (T::Q2_K, 10),
            (T::Q3_K, 12),
            (T::Q4_K, 15),
            (T::Q5_K, 17),
            (T::Q6_K, 18),
            (T::IQ4_NL, 25),
            (T::BF16, 32),
            (T::TQ1_0, 36),
            (T::MXFP4, 38),
            (T::NVFP4, 39),
            (T::Q1_0, 40),
            (T::Q2_0, 41),
        ] {
            assert_eq!(file_type_of(ty), Some(id), "{ty}");
        }
        for ty in [T::Q8_K, T::Q8_1, T::I8, T::F64] {
            assert_eq!(file_type_of(ty), None, "{ty}");
        }
    }
}

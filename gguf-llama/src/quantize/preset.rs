//! llama-quantize's presets: the names and numbers its `--help` lists, the
//! file type (`llama_ftype`) each stands for, and that file type's default
//! weight type.

use gguf_core::GgmlType;

/// A `llama_ftype` llama-quantize can produce: what a preset asks for and
/// what it writes to `general.file_type` ([`Ftype::id`]).
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[non_exhaustive]
pub enum Ftype {
    /// `ALL_F32` (0).
    F32,
    /// `MOSTLY_F16` (1).
    F16,
    /// `MOSTLY_Q4_0` (2).
    Q4_0,
    /// `MOSTLY_Q4_1` (3).
    Q4_1,
    /// `MOSTLY_Q8_0` (7).
    Q8_0,
    /// `MOSTLY_Q5_0` (8).
    Q5_0,
    /// `MOSTLY_Q5_1` (9).
    Q5_1,
    /// `MOSTLY_Q2_K` (10).
    Q2_K,
    /// `MOSTLY_Q3_K_S` (11).
    Q3_K_S,
    /// `MOSTLY_Q3_K_M` (12).
    Q3_K_M,
    /// `MOSTLY_Q3_K_L` (13).
    Q3_K_L,
    /// `MOSTLY_Q4_K_S` (14).
    Q4_K_S,
    /// `MOSTLY_Q4_K_M` (15).
    Q4_K_M,
    /// `MOSTLY_Q5_K_S` (16).
    Q5_K_S,
    /// `MOSTLY_Q5_K_M` (17).
    Q5_K_M,
    /// `MOSTLY_Q6_K` (18).
    Q6_K,
    /// `MOSTLY_IQ2_XXS` (19).
    IQ2_XXS,
    /// `MOSTLY_IQ2_XS` (20).
    IQ2_XS,
    /// `MOSTLY_Q2_K_S` (21).
    Q2_K_S,
    /// `MOSTLY_IQ3_XS` (22).
    IQ3_XS,
    /// `MOSTLY_IQ3_XXS` (23).
    IQ3_XXS,
    /// `MOSTLY_IQ1_S` (24).
    IQ1_S,
    /// `MOSTLY_IQ4_NL` (25).
    IQ4_NL,
    /// `MOSTLY_IQ3_S` (26).
    IQ3_S,
    /// `MOSTLY_IQ3_M` (27).
    IQ3_M,
    /// `MOSTLY_IQ2_S` (28).
    IQ2_S,
    /// `MOSTLY_IQ2_M` (29).
    IQ2_M,
    /// `MOSTLY_IQ4_XS` (30).
    IQ4_XS,
    /// `MOSTLY_IQ1_M` (31).
    IQ1_M,
    /// `MOSTLY_BF16` (32).
    BF16,
    /// `MOSTLY_TQ1_0` (36).
    TQ1_0,
    /// `MOSTLY_TQ2_0` (37).
    TQ2_0,
    /// `MOSTLY_MXFP4_MOE` (38).
    MXFP4_MOE,
    /// `MOSTLY_Q1_0` (40).
    Q1_0,
    /// `MOSTLY_Q2_0` (41).
    Q2_0,
}

/// Each file type with its id and default weight type
/// (`llama_ftype_get_default_type`).
const FTYPES: &[(Ftype, u32, GgmlType)] = {
    use Ftype as F;
    use GgmlType as T;
    &[
        (F::F32, 0, T::F32),
        (F::F16, 1, T::F16),
        (F::Q4_0, 2, T::Q4_0),
        (F::Q4_1, 3, T::Q4_1),
        (F::Q8_0, 7, T::Q8_0),
        (F::Q5_0, 8, T::Q5_0),
        (F::Q5_1, 9, T::Q5_1),
        (F::Q2_K, 10, T::Q2_K),
        (F::Q3_K_S, 11, T::Q3_K),
        (F::Q3_K_M, 12, T::Q3_K),
        (F::Q3_K_L, 13, T::Q3_K),
        (F::Q4_K_S, 14, T::Q4_K),
        (F::Q4_K_M, 15, T::Q4_K),
        (F::Q5_K_S, 16, T::Q5_K),
        (F::Q5_K_M, 17, T::Q5_K),
        (F::Q6_K, 18, T::Q6_K),
        (F::IQ2_XXS, 19, T::IQ2_XXS),
        (F::IQ2_XS, 20, T::IQ2_XS),
        (F::Q2_K_S, 21, T::Q2_K),
        (F::IQ3_XS, 22, T::IQ3_S),
        (F::IQ3_XXS, 23, T::IQ3_XXS),
        (F::IQ1_S, 24, T::IQ1_S),
        (F::IQ4_NL, 25, T::IQ4_NL),
        (F::IQ3_S, 26, T::IQ3_S),
        (F::IQ3_M, 27, T::IQ3_S),
        // IQ2_S's weights default to IQ2_XS; IQ2_M's to IQ2_S.
        (F::IQ2_S, 28, T::IQ2_XS),
        (F::IQ2_M, 29, T::IQ2_S),
        (F::IQ4_XS, 30, T::IQ4_XS),
        (F::IQ1_M, 31, T::IQ1_M),
        (F::BF16, 32, T::BF16),
        (F::TQ1_0, 36, T::TQ1_0),
        (F::TQ2_0, 37, T::TQ2_0),
        (F::MXFP4_MOE, 38, T::MXFP4),
        (F::Q1_0, 40, T::Q1_0),
        (F::Q2_0, 41, T::Q2_0),
    ]
};

impl Ftype {
    fn row(self) -> &'static (Ftype, u32, GgmlType) {
        // FTYPES lists the variants in declaration order, one row each
        // (`every_variant_has_its_row_at_its_index`).
        &FTYPES[self as usize]
    }

    /// The id written to `general.file_type`.
    ///
    /// ```
    /// use gguf_llama::quantize::Ftype;
    /// assert_eq!(Ftype::Q4_K_M.id(), 15);
    /// ```
    pub fn id(self) -> u32 {
        self.row().1
    }

    /// The file type of id `id`, if llama-quantize can produce it.
    pub fn from_id(id: u32) -> Option<Ftype> {
        FTYPES.iter().find(|r| r.1 == id).map(|r| r.0)
    }

    /// The type of the weight matrices the mixture rules start from
    /// (llama.cpp's `llama_ftype_get_default_type`).
    ///
    /// ```
    /// use gguf_llama::quantize::Ftype;
    /// use gguf_core::GgmlType;
    /// assert_eq!(Ftype::IQ3_XS.default_type(), GgmlType::IQ3_S);
    /// assert_eq!(Ftype::IQ2_S.default_type(), GgmlType::IQ2_XS);
    /// ```
    pub fn default_type(self) -> GgmlType {
        self.row().2
    }
}

/// One line of llama-quantize's list of allowed quantization types.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Preset {
    /// The name it is asked for by (case-insensitive).
    pub name: &'static str,
    /// The file type it produces.
    pub ftype: Ftype,
}

impl Preset {
    /// `COPY`: every tensor copied as it is, the input's file type kept.
    pub fn is_copy(&self) -> bool {
        self.name == "COPY"
    }
}

/// The presets in the order llama-quantize's `--help` lists them (its
/// `QUANT_OPTIONS`), aliases and `COPY` included. A number stands for the
/// first preset of that file type, so `0` is `F32`, never `COPY`.
pub const PRESETS: &[Preset] = {
    use Ftype as F;
    const fn p(name: &'static str, ftype: Ftype) -> Preset {
        Preset { name, ftype }
    }
    &[
        p("Q1_0", F::Q1_0),
        p("Q2_0", F::Q2_0),
        p("Q4_0", F::Q4_0),
        p("Q4_1", F::Q4_1),
        p("MXFP4_MOE", F::MXFP4_MOE),
        p("Q5_0", F::Q5_0),
        p("Q5_1", F::Q5_1),
        p("IQ2_XXS", F::IQ2_XXS),
        p("IQ2_XS", F::IQ2_XS),
        p("IQ2_S", F::IQ2_S),
        p("IQ2_M", F::IQ2_M),
        p("IQ1_S", F::IQ1_S),
        p("IQ1_M", F::IQ1_M),
        p("TQ1_0", F::TQ1_0),
        p("TQ2_0", F::TQ2_0),
        p("Q2_K", F::Q2_K),
        p("Q2_K_S", F::Q2_K_S),
        p("IQ3_XXS", F::IQ3_XXS),
        p("IQ3_S", F::IQ3_S),
        p("IQ3_M", F::IQ3_M),
        p("Q3_K", F::Q3_K_M),
        p("IQ3_XS", F::IQ3_XS),
        p("Q3_K_S", F::Q3_K_S),
        p("Q3_K_M", F::Q3_K_M),
        p("Q3_K_L", F::Q3_K_L),
        p("IQ4_NL", F::IQ4_NL),
        p("IQ4_XS", F::IQ4_XS),
        p("Q4_K", F::Q4_K_M),
        p("Q4_K_S", F::Q4_K_S),
        p("Q4_K_M", F::Q4_K_M),
        p("Q5_K", F::Q5_K_M),
        p("Q5_K_S", F::Q5_K_S),
        p("Q5_K_M", F::Q5_K_M),
        p("Q6_K", F::Q6_K),
        p("Q8_0", F::Q8_0),
        p("F16", F::F16),
        p("BF16", F::BF16),
        p("F32", F::F32),
        p("COPY", F::F32),
    ]
};

/// The preset asked for by `text`: a name (any case) or a file type number,
/// as llama-quantize reads its `type` argument. `None` when neither.
///
/// ```
/// use gguf_llama::quantize::{parse_preset, Ftype};
/// assert_eq!(parse_preset("q4_k_m").unwrap().ftype, Ftype::Q4_K_M);
/// assert_eq!(parse_preset("15").unwrap().name, "Q4_K");
/// assert_eq!(parse_preset("0").unwrap().name, "F32");
/// assert!(parse_preset("COPY").unwrap().is_copy());
/// assert!(parse_preset("Q4_K_X").is_none());
/// ```
pub fn parse_preset(text: &str) -> Option<&'static Preset> {
    if let Some(p) = PRESETS.iter().find(|p| p.name.eq_ignore_ascii_case(text)) {
        return Some(p);
    }
    // As C's stoi: optional blanks and sign, then digits; trailing text ignored.
    let t = text.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    let n: i64 = digits[..end].parse().ok()?;
    if neg {
        return None;
    }
    PRESETS.iter().find(|p| i64::from(p.ftype.id()) == n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_has_its_row_at_its_index() {
        for (i, (f, _, _)) in FTYPES.iter().enumerate() {
            assert_eq!(*f as usize, i, "{f:?}");
        }
        // The last variant's row is the table's last: no variant lacks one.
        assert_eq!(Ftype::Q2_0 as usize + 1, FTYPES.len());
    }

    #[test]
    fn ids_follow_llama_h() {
        for (f, id, _) in FTYPES {
            assert_eq!(Ftype::from_id(*id), Some(*f));
            assert_eq!(f.id(), *id);
        }
        // Removed or not produced by llama-quantize's list.
        for id in [4, 5, 6, 33, 34, 35, 39, 1024] {
            assert_eq!(Ftype::from_id(id), None, "{id}");
        }
    }

    #[test]
    fn the_labels_of_uniform_file_types_match_the_format_table() {
        for (f, id, ty) in FTYPES {
            if let Some(ft) = gguf_core::format::file_type_of(*ty) {
                // Where the default type has a file type of its own, it is
                // this one unless this is a mixture of that type.
                if ft != *id {
                    assert!(
                        matches!(
                            f,
                            Ftype::Q3_K_S
                                | Ftype::Q3_K_L
                                | Ftype::Q4_K_S
                                | Ftype::Q5_K_S
                                | Ftype::Q2_K_S
                                | Ftype::IQ3_XS
                                | Ftype::IQ3_M
                                | Ftype::IQ2_S
                                | Ftype::IQ2_M
                                | Ftype::MXFP4_MOE
                        ),
                        "{f:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_preset_parses_by_name_and_numbers_go_to_the_first() {
        for p in PRESETS {
            assert_eq!(parse_preset(p.name), Some(p));
            assert_eq!(parse_preset(&p.name.to_lowercase()), Some(p));
        }
        assert_eq!(parse_preset("12").unwrap().name, "Q3_K");
        assert_eq!(parse_preset("17").unwrap().name, "Q5_K");
        assert_eq!(parse_preset("38").unwrap().name, "MXFP4_MOE");
        assert_eq!(parse_preset(" 7").unwrap().name, "Q8_0");
        assert_eq!(parse_preset("7x").unwrap().name, "Q8_0");
        assert_eq!(parse_preset("4"), None);
        assert_eq!(parse_preset("39"), None);
        assert_eq!(parse_preset("-1"), None);
        assert_eq!(parse_preset(""), None);
        assert_eq!(PRESETS.len(), 39);
    }
}

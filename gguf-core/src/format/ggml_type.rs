//! The ggml tensor element types: ids, names and block geometry.
//!
//! Sizes follow ggml's `ggml-common.h` / `ggml.c` type traits (not gguf-py's
//! table, which lists Q8_1 as 40 bytes per block; ggml's block is 36).

use std::fmt;

macro_rules! ggml_types {
    ($( $(#[$doc:meta])* $variant:ident = $id:literal, $name:literal, $block:literal, $bytes:literal; )*) => {
        /// A ggml tensor type, as stored in a tensor info's `u32` type field.
        ///
        /// Built from file bytes by [`GgmlType::from_id`], never by transmute: an id
        /// this crate does not know (or one ggml removed) becomes
        /// [`GgmlType::Unknown`], so the file still opens and only size-dependent
        /// operations on that tensor fail.
        ///
        /// ```
        /// use gguf_core::GgmlType;
        /// let t = GgmlType::from_id(12);
        /// assert_eq!(t, GgmlType::Q4_K);
        /// assert_eq!(t.block_size(), Some(256));
        /// assert_eq!(t.type_size(), Some(144));
        /// assert_eq!(GgmlType::from_id(36), GgmlType::Unknown(36));
        /// assert_eq!(GgmlType::from_id(36).type_size(), None);
        /// ```
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum GgmlType {
            $( $(#[$doc])* $variant, )*
            /// An id this crate has no size for: removed by ggml (4, 5, 31-33,
            /// 36-38) or newer than this crate. Kept so it survives read -> write.
            Unknown(u32),
        }

        impl GgmlType {
            /// Every type with a known size, in id order.
            pub const ALL: &'static [GgmlType] = &[$(GgmlType::$variant),*];

            /// The type for a raw id; never fails.
            pub const fn from_id(id: u32) -> Self {
                match id {
                    $( $id => GgmlType::$variant, )*
                    other => GgmlType::Unknown(other),
                }
            }

            /// The raw id stored in the file.
            pub const fn id(self) -> u32 {
                match self {
                    $( GgmlType::$variant => $id, )*
                    GgmlType::Unknown(id) => id,
                }
            }

            /// ggml's name for the type (`"Q4_K"`), or `None` for unknown ids.
            pub const fn name(self) -> Option<&'static str> {
                match self {
                    $( GgmlType::$variant => Some($name), )*
                    GgmlType::Unknown(_) => None,
                }
            }

            /// The type with ggml's name `name` (case-insensitive).
            pub fn from_name(name: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|t| t.name().is_some_and(|n| n.eq_ignore_ascii_case(name)))
            }

            /// Elements per block (1 for plain numeric types), `None` for unknown ids.
            pub const fn block_size(self) -> Option<u64> {
                match self {
                    $( GgmlType::$variant => Some($block), )*
                    GgmlType::Unknown(_) => None,
                }
            }

            /// Bytes per block, `None` for unknown ids.
            pub const fn type_size(self) -> Option<u64> {
                match self {
                    $( GgmlType::$variant => Some($bytes), )*
                    GgmlType::Unknown(_) => None,
                }
            }
        }
    };
}

ggml_types! {
    /// 32-bit IEEE float.
    F32 = 0, "F32", 1, 4;
    /// 16-bit IEEE float.
    F16 = 1, "F16", 1, 2;
    /// 4-bit, one f16 scale per 32 elements.
    Q4_0 = 2, "Q4_0", 32, 18;
    /// 4-bit, f16 scale and min per 32 elements.
    Q4_1 = 3, "Q4_1", 32, 20;
    /// 5-bit, one f16 scale per 32 elements.
    Q5_0 = 6, "Q5_0", 32, 22;
    /// 5-bit, f16 scale and min per 32 elements.
    Q5_1 = 7, "Q5_1", 32, 24;
    /// 8-bit, one f16 scale per 32 elements.
    Q8_0 = 8, "Q8_0", 32, 34;
    /// 8-bit, f16 scale and f16 sum per 32 elements (36 bytes, as in ggml).
    Q8_1 = 9, "Q8_1", 32, 36;
    /// 2-bit k-quant.
    Q2_K = 10, "Q2_K", 256, 84;
    /// 3-bit k-quant.
    Q3_K = 11, "Q3_K", 256, 110;
    /// 4-bit k-quant.
    Q4_K = 12, "Q4_K", 256, 144;
    /// 5-bit k-quant.
    Q5_K = 13, "Q5_K", 256, 176;
    /// 6-bit k-quant.
    Q6_K = 14, "Q6_K", 256, 210;
    /// 8-bit k-quant (f32 scale, used for dot products).
    Q8_K = 15, "Q8_K", 256, 292;
    /// 2.06 bpw i-quant.
    IQ2_XXS = 16, "IQ2_XXS", 256, 66;
    /// 2.31 bpw i-quant.
    IQ2_XS = 17, "IQ2_XS", 256, 74;
    /// 3.06 bpw i-quant.
    IQ3_XXS = 18, "IQ3_XXS", 256, 98;
    /// 1.56 bpw i-quant.
    IQ1_S = 19, "IQ1_S", 256, 50;
    /// 4-bit non-linear, 32 elements per block.
    IQ4_NL = 20, "IQ4_NL", 32, 18;
    /// 3.44 bpw i-quant.
    IQ3_S = 21, "IQ3_S", 256, 110;
    /// 2.5 bpw i-quant.
    IQ2_S = 22, "IQ2_S", 256, 82;
    /// 4.25 bpw non-linear.
    IQ4_XS = 23, "IQ4_XS", 256, 136;
    /// 8-bit signed integer.
    I8 = 24, "I8", 1, 1;
    /// 16-bit signed integer.
    I16 = 25, "I16", 1, 2;
    /// 32-bit signed integer.
    I32 = 26, "I32", 1, 4;
    /// 64-bit signed integer.
    I64 = 27, "I64", 1, 8;
    /// 64-bit IEEE float.
    F64 = 28, "F64", 1, 8;
    /// 1.75 bpw i-quant.
    IQ1_M = 29, "IQ1_M", 256, 56;
    /// bfloat16.
    BF16 = 30, "BF16", 1, 2;
    /// Ternary, 1.69 bpw.
    TQ1_0 = 34, "TQ1_0", 256, 54;
    /// Ternary, 2.06 bpw.
    TQ2_0 = 35, "TQ2_0", 256, 66;
    /// Microscaling FP4 (e2m1 values, e8m0 scale per 32).
    MXFP4 = 39, "MXFP4", 32, 17;
    /// NVIDIA FP4 (e2m1 values, fp8 scales per 16, 64 per block).
    NVFP4 = 40, "NVFP4", 64, 36;
    /// 1-bit, one f16 scale per 128 elements.
    Q1_0 = 41, "Q1_0", 128, 18;
    /// 2-bit, one f16 scale per 64 elements.
    Q2_0 = 42, "Q2_0", 64, 18;
}

impl GgmlType {
    /// True for types whose elements are plain numbers (one element per
    /// block), which big-endian files store byte-swapped.
    pub const fn is_plain(self) -> bool {
        matches!(self.block_size(), Some(1))
    }
}

impl fmt::Display for GgmlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "unknown({})", self.id()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_round_trips() {
        for id in 0..=64u32 {
            assert_eq!(GgmlType::from_id(id).id(), id);
        }
    }

    #[test]
    fn removed_ids_have_no_size() {
        for id in [4u32, 5, 31, 32, 33, 36, 37, 38, 43] {
            let t = GgmlType::from_id(id);
            assert_eq!(t, GgmlType::Unknown(id));
            assert_eq!(t.type_size(), None, "id {id}");
        }
    }

    #[test]
    fn names_are_unique_and_parse_back() {
        for &t in GgmlType::ALL {
            assert_eq!(GgmlType::from_name(t.name().unwrap()), Some(t));
        }
        assert_eq!(GgmlType::ALL.len(), 35);
    }
}

//! Code points as llama.cpp's tokenizer classifies them: one general
//! category per code point (letter, number, mark, punctuation, symbol,
//! separator, control, or unassigned), a whitespace flag, and GPT-2's
//! byte-to-character map.
//!
//! The categories come from regex-syntax's Unicode tables (the ones the
//! `regex` crate matches `\p{L}` with), not from a table of our own, less
//! the code points Unicode 16.0 assigned: llama.cpp's generated table is
//! Unicode 15.1's. With that they equal llama.cpp's for every code point;
//! see the module documentation of [`tokenizer`](super).

use std::sync::OnceLock;

/// The category and whitespace bits of one code point, with llama.cpp's
/// bit values, so "no flags at all" means "outside the text".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Flags(u16);

impl Flags {
    pub(crate) const UNDEFINED: u16 = 0x0001;
    pub(crate) const NUMBER: u16 = 0x0002;
    pub(crate) const LETTER: u16 = 0x0004;
    pub(crate) const SEPARATOR: u16 = 0x0008;
    pub(crate) const MARK: u16 = 0x0010;
    pub(crate) const PUNCTUATION: u16 = 0x0020;
    pub(crate) const SYMBOL: u16 = 0x0040;
    pub(crate) const CONTROL: u16 = 0x0080;
    const CATEGORIES: u16 = 0x00FF;
    pub(crate) const WHITESPACE: u16 = 0x0100;

    /// No code point: what the splitters see past the end of a chunk.
    pub(crate) const NONE: Flags = Flags(0);

    pub(crate) fn is_letter(self) -> bool {
        self.0 & Self::LETTER != 0
    }
    pub(crate) fn is_number(self) -> bool {
        self.0 & Self::NUMBER != 0
    }
    pub(crate) fn is_mark(self) -> bool {
        self.0 & Self::MARK != 0
    }
    pub(crate) fn is_whitespace(self) -> bool {
        self.0 & Self::WHITESPACE != 0
    }
    /// A code point of the text (any category, even unassigned).
    pub(crate) fn exists(self) -> bool {
        self.0 != 0
    }
    /// The category bits alone.
    pub(crate) fn category(self) -> u16 {
        self.0 & Self::CATEGORIES
    }
}

/// The general-category groups, each with the regex-syntax class that
/// defines it. Unassigned code points (`Cn`) are the default.
const GROUPS: &[(&str, u16)] = &[
    (r"\p{L}", Flags::LETTER),
    (r"\p{N}", Flags::NUMBER),
    (r"\p{M}", Flags::MARK),
    (r"\p{P}", Flags::PUNCTUATION),
    (r"\p{S}", Flags::SYMBOL),
    (r"\p{Z}", Flags::SEPARATOR),
    // Surrogates (`Cs`, control to llama.cpp too) cannot be in a `str`.
    (r"\p{Cc}", Flags::CONTROL),
    (r"\p{Cf}", Flags::CONTROL),
    (r"\p{Co}", Flags::CONTROL),
];

/// The code points Unicode 16.0 assigned (inclusive ranges). llama.cpp's
/// table is Unicode 15.1's, so to it they are unassigned; regex-syntax's
/// tables are newer, so they are taken out again to give llama.cpp's
/// splits.
const UNICODE_16_ADDITIONS: &[(u32, u32)] = &[
    (0x00897, 0x00897),
    (0x01B4E, 0x01B4F),
    (0x01B7F, 0x01B7F),
    (0x01C89, 0x01C8A),
    (0x02427, 0x02429),
    (0x031E4, 0x031E5),
    (0x0A7CB, 0x0A7CD),
    (0x0A7DA, 0x0A7DC),
    (0x105C0, 0x105F3),
    (0x10D40, 0x10D65),
    (0x10D69, 0x10D85),
    (0x10D8E, 0x10D8F),
    (0x10EC2, 0x10EC4),
    (0x10EFC, 0x10EFC),
    (0x11380, 0x11389),
    (0x1138B, 0x1138B),
    (0x1138E, 0x1138E),
    (0x11390, 0x113B5),
    (0x113B7, 0x113C0),
    (0x113C2, 0x113C2),
    (0x113C5, 0x113C5),
    (0x113C7, 0x113CA),
    (0x113CC, 0x113D5),
    (0x113D7, 0x113D8),
    (0x113E1, 0x113E2),
    (0x116D0, 0x116E3),
    (0x11BC0, 0x11BE1),
    (0x11BF0, 0x11BF9),
    (0x11F5A, 0x11F5A),
    (0x13460, 0x143FA),
    (0x16100, 0x16139),
    (0x16D40, 0x16D79),
    (0x18CFF, 0x18CFF),
    (0x1CC00, 0x1CCF9),
    (0x1CD00, 0x1CEB3),
    (0x1E5D0, 0x1E5FA),
    (0x1E5FF, 0x1E5FF),
    (0x1F8B2, 0x1F8BB),
    (0x1F8C0, 0x1F8C1),
    (0x1FA89, 0x1FA89),
    (0x1FA8F, 0x1FA8F),
    (0x1FABE, 0x1FABE),
    (0x1FAC6, 0x1FAC6),
    (0x1FADC, 0x1FADC),
    (0x1FADF, 0x1FADF),
    (0x1FAE9, 0x1FAE9),
    (0x1FBCB, 0x1FBEF),
];

/// `ranges` (start, end, flags; sorted, disjoint) less the code points of
/// `holes` (sorted, disjoint).
fn subtract(ranges: &[(u32, u32, u16)], holes: &[(u32, u32)]) -> Vec<(u32, u32, u16)> {
    let mut out = Vec::with_capacity(ranges.len() + holes.len());
    for &(start, end, f) in ranges {
        let mut from = start;
        for &(h0, h1) in holes.iter().filter(|&&(h0, h1)| h1 >= start && h0 <= end) {
            if h0 > from {
                out.push((from, h0 - 1, f));
            }
            from = from.max(h1.saturating_add(1));
        }
        if from <= end {
            out.push((from, end, f));
        }
    }
    out
}

/// The flags of every code point of the Basic Multilingual Plane, and the
/// ranges above it (start, end inclusive, flags), sorted.
struct Table {
    bmp: Vec<u16>,
    astral: Vec<(u32, u32, u16)>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(build_table)
}

fn class_ranges(pattern: &str) -> Vec<(u32, u32)> {
    use regex_syntax::hir::{Class, HirKind};
    // The patterns are constants that regex-syntax's own tests parse; a
    // failure would be a build without the `unicode-gencat` feature.
    let Ok(hir) = regex_syntax::Parser::new().parse(pattern) else {
        return Vec::new();
    };
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => class
            .ranges()
            .iter()
            .map(|r| (u32::from(r.start()), u32::from(r.end())))
            .collect(),
        _ => Vec::new(),
    }
}

fn build_table() -> Table {
    let mut bmp = vec![Flags::UNDEFINED; 0x10000];
    let mut astral = Vec::new();
    for &(pattern, flag) in GROUPS {
        for (start, end) in class_ranges(pattern) {
            let bmp_end = end.min(0xFFFF);
            if start <= bmp_end {
                for cpt in start..=bmp_end {
                    bmp[cpt as usize] = flag;
                }
            }
            if end > 0xFFFF {
                astral.push((start.max(0x10000), end, flag));
            }
        }
    }
    for cpt in ['\t', '\n', '\u{b}', '\u{c}', '\r', ' '] {
        bmp[cpt as usize] |= Flags::WHITESPACE;
    }
    for cpt in 0x80..0x10000u32 {
        if char::from_u32(cpt).is_some_and(char::is_whitespace) {
            bmp[cpt as usize] |= Flags::WHITESPACE;
        }
    }
    for &(start, end) in UNICODE_16_ADDITIONS.iter().filter(|r| r.0 <= 0xFFFF) {
        for cpt in start..=end.min(0xFFFF) {
            bmp[cpt as usize] = Flags::UNDEFINED;
        }
    }
    astral.sort_unstable();
    let astral = subtract(&astral, UNICODE_16_ADDITIONS);
    Table { bmp, astral }
}

/// The flags of a code point.
pub(crate) fn flags(cpt: u32) -> Flags {
    let t = table();
    if let Some(&f) = t.bmp.get(cpt as usize) {
        return Flags(f);
    }
    let i = t.astral.partition_point(|&(start, _, _)| start <= cpt);
    match i.checked_sub(1).and_then(|i| t.astral.get(i)) {
        Some(&(_, end, f)) if cpt <= end => Flags(f),
        _ => Flags(Flags::UNDEFINED),
    }
}

/// llama.cpp's `unicode_tolower`, for the contraction rules (`'S`, `'LL`):
/// only what lowers to an ASCII letter matters there, and nothing outside
/// ASCII lowers to `s`, `t`, `m`, `d`, `r`, `e`, `v` or `l`.
pub(crate) fn ascii_lower(cpt: u32) -> u32 {
    if (u32::from(b'A')..=u32::from(b'Z')).contains(&cpt) {
        cpt + 32
    } else {
        cpt
    }
}

/// GPT-2's map from a byte to the character that stands for it in a
/// byte-level BPE vocabulary: printable Latin-1 bytes stand for
/// themselves, the others for U+0100 onwards in byte order.
pub(crate) fn byte_to_char(byte: u8) -> char {
    byte_maps().0[byte as usize]
}

/// The byte a GPT-2 character stands for, if it is one of the 256.
pub(crate) fn char_to_byte(c: char) -> Option<u8> {
    let cpt = u32::from(c);
    if cpt < 0x100 {
        let b = cpt as u8;
        return is_printable_byte(b).then_some(b);
    }
    byte_maps().1.get((cpt - 0x100) as usize).copied()
}

fn is_printable_byte(b: u8) -> bool {
    matches!(b, 0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF)
}

fn byte_maps() -> &'static ([char; 256], Vec<u8>) {
    static MAPS: OnceLock<([char; 256], Vec<u8>)> = OnceLock::new();
    MAPS.get_or_init(|| {
        let mut to_char = ['\0'; 256];
        let mut shifted = Vec::new();
        for b in 0..=255u8 {
            if is_printable_byte(b) {
                to_char[b as usize] = char::from(b);
            } else {
                let cpt = 0x100 + shifted.len() as u32;
                to_char[b as usize] = char::from_u32(cpt).unwrap_or('\0');
                shifted.push(b);
            }
        }
        (to_char, shifted)
    })
}

/// The length of the UTF-8 sequence a lead byte starts, as llama.cpp's
/// `unicode_len_utf8` reads it (a continuation byte counts as one).
pub(crate) fn utf8_len(lead: u8) -> usize {
    const LOOKUP: [usize; 16] = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4];
    LOOKUP[usize::from(lead >> 4)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_of_a_few_code_points() {
        assert_eq!(flags(u32::from('a')).category(), Flags::LETTER);
        assert_eq!(flags(u32::from('7')).category(), Flags::NUMBER);
        assert_eq!(flags(u32::from('!')).category(), Flags::PUNCTUATION);
        assert_eq!(flags(u32::from('$')).category(), Flags::SYMBOL);
        assert_eq!(flags(0x301).category(), Flags::MARK);
        assert_eq!(flags(0x0).category(), Flags::CONTROL);
        assert_eq!(flags(0x20).category(), Flags::SEPARATOR);
        assert!(flags(0x20).is_whitespace());
        assert!(flags(0x3000).is_whitespace());
        assert!(flags(0x85).is_whitespace());
        assert!(!flags(0x1C).is_whitespace());
        assert_eq!(flags(0x1F600).category(), Flags::SYMBOL); // emoji
        assert_eq!(flags(0x20000).category(), Flags::LETTER); // CJK ext. B
        assert_eq!(flags(0x378).category(), Flags::UNDEFINED); // unassigned
        assert_eq!(flags(0xE000).category(), Flags::CONTROL); // private use
        assert_eq!(flags(0x10FFFD).category(), Flags::CONTROL); // private use
        assert_eq!(flags(0x10FFFF).category(), Flags::UNDEFINED); // noncharacter
    }

    #[test]
    fn gpt2_byte_map_round_trips() {
        assert_eq!(byte_to_char(b' '), '\u{120}');
        assert_eq!(byte_to_char(b'a'), 'a');
        assert_eq!(byte_to_char(b'\n'), '\u{10A}');
        for b in 0..=255u8 {
            assert_eq!(char_to_byte(byte_to_char(b)), Some(b));
        }
        assert_eq!(char_to_byte('\u{200}'), None);
        assert_eq!(char_to_byte(' '), None);
    }
}

#[cfg(test)]
mod llama_table_tests {
    use super::*;

    #[test]
    fn unicode_16_additions_are_unassigned() {
        // A hieroglyph of Egyptian Hieroglyphs Extended-A and a symbol of
        // Symbols for Legacy Computing Supplement (Unicode 16.0), and
        // their older neighbours.
        assert_eq!(flags(0x13460), Flags(Flags::UNDEFINED));
        assert_eq!(flags(0x1CC00), Flags(Flags::UNDEFINED));
        assert_eq!(flags(0x0897), Flags(Flags::UNDEFINED));
        assert!(flags(0x13000).is_letter());
        assert!(flags(0x0898).is_mark());
        assert_eq!(
            subtract(&[(10, 20, 1), (30, 40, 2)], &[(12, 13), (18, 32), (40, 40)]),
            [(10, 11, 1), (14, 17, 1), (33, 39, 2)]
        );
    }

    /// Prints the category of every code point as ranges (`start flags`),
    /// to compare with llama.cpp's table.
    #[test]
    #[ignore]
    fn dump_category_ranges() {
        let mut prev = u16::MAX;
        for cpt in 0..=0x10FFFFu32 {
            let f = super::flags(cpt).category();
            if f != prev {
                println!("RANGE {cpt:06X} {f:04X}");
                prev = f;
            }
        }
    }
}

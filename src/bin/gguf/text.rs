//! Text from files and servers, made safe to show on a terminal.
//!
//! Key names, tensor names, string values, paths and server messages can
//! hold control characters: ESC and BEL sequences retitle or clear a
//! terminal, a newline forges an output line. The tool escapes them
//! where it prints, in one place: [`crate::print`] and
//! [`crate::print_json`] (stdout) and [`crate::message`] (stderr, every
//! error included) pass everything they write through [`write`] or
//! [`escape`], and the commands escape
//! each untrusted string they lay out in columns ([`escape`]) so that a
//! newline in a name is shown as `\n` and widths count what is shown.
//!
//! Why here and not in the library's `Error` Display: the library cannot
//! know where its text goes (a log, a GUI, a terminal) and already quotes
//! most names with `{:?}`; the terminal is the tool's concern, and its two
//! print functions see every byte it writes, whatever built the text (the
//! library, the tool itself, the operating system's messages, a server).

use std::borrow::Cow;
use std::io;

/// How control characters are written.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Style {
    /// As Rust escapes them (`\n`, `\t`, `\u{1b}`, `\u{9b}`), line feeds
    /// included: for one name, value or message.
    Rust,
    /// As Rust escapes them but line feeds, which are kept: for a whole
    /// output whose lines the command laid out itself.
    RustLines,
    /// As JSON escapes them (`\u007f`, `\u009b`), line feeds kept: for
    /// serde_json's text, which leaves DEL and C1 raw in strings (the same
    /// document to a parser) and writes no other line feed.
    Json,
}

impl Style {
    fn keeps_line_feeds(self) -> bool {
        self != Style::Rust
    }

    fn escaped(self, c: char) -> String {
        match self {
            Style::Rust | Style::RustLines => c.escape_debug().collect(),
            Style::Json => format!("\\u{:04x}", u32::from(c)),
        }
    }
}

/// `text` with every C0 and C1 control character and DEL escaped as Rust
/// escapes them (`\n`, `\t`, `\u{1b}`, `\u{9b}`, ...), so the same name
/// reads the same in a table and in an error message (which quotes names
/// with `{:?}`). Borrowed when there is nothing to escape.
pub fn escape(text: &str) -> Cow<'_, str> {
    if next_control(text.as_bytes(), 0, false).is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (plain, control) in pieces(text, Style::Rust) {
        out.push_str(plain);
        out.extend(control.map(|c| Style::Rust.escaped(c)));
    }
    Cow::Owned(out)
}

/// Writes `text` to `out` with its control characters escaped in
/// `style`, piece by piece: a 13 MB JSON document is not copied.
pub fn write(out: &mut impl io::Write, text: &str, style: Style) -> io::Result<()> {
    for (plain, control) in pieces(text, style) {
        out.write_all(plain.as_bytes())?;
        if let Some(c) = control {
            out.write_all(style.escaped(c).as_bytes())?;
        }
    }
    Ok(())
}

/// `text` cut before each character to escape in `style`: the plain text
/// up to it and the character, then the rest with `None`.
fn pieces(text: &str, style: Style) -> impl Iterator<Item = (&str, Option<char>)> {
    let keep_lf = style.keeps_line_feeds();
    let mut from = Some(0);
    std::iter::from_fn(move || {
        let start = from?;
        match next_control(text.as_bytes(), start, keep_lf) {
            // `i` starts a character: an ASCII byte or the lead byte C2.
            Some((i, len)) => {
                from = Some(i + len);
                Some((&text[start..i], text[i..].chars().next()))
            }
            None => {
                from = None;
                Some((&text[start..], None))
            }
        }
    })
}

/// Where the next character to escape starts at or after `from`, and its
/// length in bytes: a C0 control or DEL (one byte; line feeds kept when
/// `keep_lf`), or a C1 control (U+0080..U+009F, the two bytes C2 80..C2
/// 9F in UTF-8).
fn next_control(bytes: &[u8], from: usize, keep_lf: bool) -> Option<(usize, usize)> {
    let mut i = from;
    while let Some(&b) = bytes.get(i) {
        // Eight bytes at a time while none can start a control: a 13 MB
        // `inspect --json` is scanned in a few milliseconds.
        if let Some(word) = bytes
            .get(i..i + 8)
            .and_then(|w| <[u8; 8]>::try_from(w).ok())
            && !may_hold_control(u64::from_le_bytes(word))
        {
            i += 8;
            continue;
        }
        if (b < 0x20 && !(keep_lf && b == b'\n')) || b == 0x7f {
            return Some((i, 1));
        }
        if b == 0xc2 && matches!(bytes.get(i + 1), Some(0x80..=0x9f)) {
            return Some((i, 2));
        }
        i += 1;
    }
    None
}

/// Whether any byte of `w` is below 0x20, 0x7f, or 0xc2 (the lead byte of
/// C1 controls, and of U+00A0..U+00BF, told apart byte by byte): the
/// "has less than" and "has zero byte" word tests, exact for "any byte".
fn may_hold_control(w: u64) -> bool {
    const ONES: u64 = u64::MAX / 255;
    const HIGHS: u64 = ONES * 0x80;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS != 0;
    let has_below_0x20 = w.wrapping_sub(ONES * 0x20) & !w & HIGHS != 0;
    has_below_0x20 || has_zero(w ^ (ONES * 0x7f)) || has_zero(w ^ (ONES * 0xc2))
}

/// The width of `text` as [`escape`] shows it, in characters (what `{:w$}`
/// pads by).
pub fn width(text: &str) -> usize {
    escape(text).chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_c0_c1_and_del_only() {
        assert_eq!(
            escape("a\x1b]0;T\x07b\u{9b}c\x7fd\ne\tf\r\0"),
            r"a\u{1b}]0;T\u{7}b\u{9b}c\u{7f}d\ne\tf\r\0"
        );
        assert!(matches!(escape("plain é ✓ \\"), Cow::Borrowed(_)));
        let mut lines = Vec::new();
        write(&mut lines, "a\x1b[2J\nb\r\n", Style::RustLines).unwrap();
        assert_eq!(lines, b"a\\u{1b}[2J\nb\\r\n");
        assert_eq!(width("é\x07"), 6);
    }

    #[test]
    fn the_word_test_finds_every_control_byte_wherever_it_is() {
        for at in 0..8 {
            for b in (0u8..0x20).chain([0x7f, 0xc2]) {
                let mut word = *b"abcdefgh";
                word[at] = b;
                assert!(may_hold_control(u64::from_le_bytes(word)), "{b:#x} at {at}");
            }
            for b in (0x20u8..=0xff).filter(|&b| b != 0x7f && b != 0xc2) {
                let mut word = *b"abcdefgh";
                word[at] = b;
                assert!(
                    !may_hold_control(u64::from_le_bytes(word)),
                    "{b:#x} at {at}"
                );
            }
        }
        // Controls found at every position of a longer text.
        for at in 0..20 {
            let mut text = "x".repeat(20);
            text.insert(at, '\u{9b}');
            assert_eq!(next_control(text.as_bytes(), 0, false), Some((at, 2)));
        }
    }

    #[test]
    fn json_stays_json() {
        let value = serde_json::json!({"k\x1b": "a\u{9b}\x7f\x07\n"});
        let text = serde_json::to_string_pretty(&value).unwrap();
        let mut safe = Vec::new();
        write(&mut safe, &text, Style::Json).unwrap();
        let safe = String::from_utf8(safe).unwrap();
        assert!(!safe.chars().any(|c| c.is_control() && c != '\n'), "{safe}");
        assert!(safe.contains(r"a\u009b\u007f\u0007\n"), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
    }
}

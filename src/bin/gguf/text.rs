//! Text from files and servers, made safe to show on a terminal.
//!
//! Key names, tensor names, string values, paths and server messages can
//! hold control characters: ESC and BEL sequences retitle or clear a
//! terminal, a newline forges an output line. The tool escapes them
//! where it prints, in one place: [`crate::print`] (stdout) and
//! [`crate::message`] (stderr, every error included) pass everything they
//! write through [`escape_lines`] or [`escape`], and the commands escape
//! each untrusted string they lay out in columns ([`escape`]) so that a
//! newline in a name is shown as `\n` and widths count what is shown.
//!
//! Why here and not in the library's `Error` Display: the library cannot
//! know where its text goes (a log, a GUI, a terminal) and already quotes
//! most names with `{:?}`; the terminal is the tool's concern, and its two
//! print functions see every byte it writes, whatever built the text (the
//! library, the tool itself, the operating system's messages, a server).

use std::borrow::Cow;

/// `text` with every C0 and C1 control character and DEL escaped as Rust
/// escapes them (`\n`, `\t`, `\u{1b}`, `\u{9b}`, ...), so the same name
/// reads the same in a table and in an error message (which quotes names
/// with `{:?}`). Borrowed when there is nothing to escape.
pub fn escape(text: &str) -> Cow<'_, str> {
    escape_with(text, false, |c, out| out.extend(c.escape_debug()))
}

/// [`escape`], keeping line feeds: for a whole output whose lines the
/// command laid out itself (the strings inside already escaped).
pub fn escape_lines(text: &str) -> Cow<'_, str> {
    escape_with(text, true, |c, out| out.extend(c.escape_debug()))
}

/// JSON text (as serde_json writes it) with the control characters JSON
/// allows raw in strings, DEL and C1, written as `\u007f`, `\u009b`: the
/// same document to a parser, nothing a terminal acts on. serde_json has
/// already escaped C0; line feeds are the pretty printer's own.
pub fn escape_json(json: &str) -> Cow<'_, str> {
    escape_with(json, true, |c, out| {
        out.push_str(&format!("\\u{:04x}", u32::from(c)));
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
        {
            if !may_hold_control(u64::from_le_bytes(word)) {
                i += 8;
                continue;
            }
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

/// `text` with each character [`next_control`] finds written by `esc`.
fn escape_with(text: &str, keep_lf: bool, esc: impl Fn(char, &mut String)) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let Some(mut at) = next_control(bytes, 0, keep_lf) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 16);
    let mut done = 0;
    loop {
        let (i, len) = at;
        // `i` starts a character: an ASCII byte or the lead byte C2.
        out.push_str(&text[done..i]);
        if let Some(c) = text[i..].chars().next() {
            esc(c, &mut out);
        }
        done = i + len;
        match next_control(bytes, done, keep_lf) {
            Some(next) => at = next,
            None => break,
        }
    }
    out.push_str(&text[done..]);
    Cow::Owned(out)
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
        assert_eq!(escape_lines("a\x1b[2J\nb\r\n"), "a\\u{1b}[2J\nb\\r\n");
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
        let safe = escape_json(&text);
        assert!(!safe.chars().any(|c| c.is_control() && c != '\n'), "{safe}");
        assert!(safe.contains(r"a\u009b\u007f\u0007\n"), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
    }
}

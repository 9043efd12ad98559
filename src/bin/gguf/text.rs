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

/// Whether `c` is shown escaped: C0 and C1 control characters and DEL.
fn unsafe_char(c: char) -> bool {
    c.is_control()
}

/// `text` with every C0 and C1 control character and DEL escaped as Rust
/// escapes them (`\n`, `\t`, `\u{1b}`, `\u{9b}`, ...), so the same name
/// reads the same in a table and in an error message (which quotes names
/// with `{:?}`). Borrowed when there is nothing to escape.
pub fn escape(text: &str) -> Cow<'_, str> {
    escape_except(text, None)
}

/// [`escape`], keeping line feeds: for a whole output whose lines the
/// command laid out itself (the strings inside already escaped).
pub fn escape_lines(text: &str) -> Cow<'_, str> {
    escape_except(text, Some('\n'))
}

fn escape_except(text: &str, keep: Option<char>) -> Cow<'_, str> {
    let hit = |c: char| unsafe_char(c) && Some(c) != keep;
    if !text.chars().any(hit) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if hit(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// JSON text (as serde_json writes it) with the control characters JSON
/// allows raw in strings, DEL and C1, written as `\u007f`, `\u009b`: the
/// same document to a parser, nothing a terminal acts on. serde_json has
/// already escaped C0; line feeds are the pretty printer's own.
pub fn escape_json(json: &str) -> Cow<'_, str> {
    if !json.chars().any(|c| unsafe_char(c) && c != '\n') {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if unsafe_char(c) && c != '\n' {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
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

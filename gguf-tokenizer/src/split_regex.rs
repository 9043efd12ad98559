//! The pre-tokenizer patterns llama.cpp hands to `std::regex`, applied the
//! way it applies them.
//!
//! llama.cpp's regex engine knows no Unicode categories, so a pattern that
//! uses `\p{L}`, `\p{N}`, `\p{P}`, `\p{M}`, `\p{S}` (or the letter
//! subcategories, which all count as `\p{L}`) runs on a "collapsed" text:
//! every code point above ASCII becomes one marker per category (or a
//! vertical tab when it is whitespace), and each `\p{..}` in the pattern
//! becomes a class of that marker plus the category's ASCII members. A
//! pattern without categories runs on the code points themselves, with
//! non-ASCII whitespace turned into a vertical tab. Both are reproduced
//! here, with `fancy-regex` (backtracking, lookarounds) as the engine:
//! leftmost-first alternation, like ECMAScript's.

use fancy_regex::Regex;

use super::unicode::{flags, Flags};

/// The marker standing for a non-ASCII code point of a category in the
/// collapsed text (llama.cpp's bytes 0xD0..0xD5, here the characters of
/// the same values).
fn marker(category: u16) -> char {
    match category {
        Flags::NUMBER => '\u{D1}',
        Flags::LETTER => '\u{D2}',
        Flags::PUNCTUATION => '\u{D3}',
        Flags::MARK => '\u{D4}',
        Flags::SYMBOL => '\u{D5}',
        _ => '\u{D0}',
    }
}

/// The categories a pattern may name, with the category each stands for.
const CATEGORIES: &[(&str, u16)] = &[
    (r"\p{N}", Flags::NUMBER),
    (r"\p{L}", Flags::LETTER),
    (r"\p{P}", Flags::PUNCTUATION),
    (r"\p{M}", Flags::MARK),
    (r"\p{S}", Flags::SYMBOL),
    (r"\p{Lu}", Flags::LETTER),
    (r"\p{Ll}", Flags::LETTER),
    (r"\p{Lt}", Flags::LETTER),
    (r"\p{Lm}", Flags::LETTER),
    (r"\p{Lo}", Flags::LETTER),
];

/// The ASCII members of each category, as class contents.
fn ascii_members(category: u16) -> &'static str {
    match category {
        Flags::NUMBER => "0-9",
        Flags::LETTER => "A-Za-z",
        Flags::PUNCTUATION => r"!-#%-*,-/:-;?-@\[-\]_\{\}",
        Flags::SYMBOL => r"\$\+<->\^`\|\~",
        _ => "",
    }
}

/// One compiled pattern and the text it runs on.
pub(crate) struct Pattern {
    regex: Regex,
    collapsed: bool,
}

/// Whether a pattern names a category (and so runs on the collapsed text).
fn uses_categories(pattern: &str) -> bool {
    CATEGORIES.iter().any(|(name, _)| pattern.contains(name))
}

impl Pattern {
    /// Compiles a llama.cpp pattern. Errors are for patterns of our own
    /// table, so they are bugs; the message says which pattern.
    pub(crate) fn new(pattern: &str) -> Result<Pattern, String> {
        let collapsed = uses_categories(pattern);
        let source = if collapsed {
            collapse_pattern(pattern)
        } else {
            pattern.to_owned()
        };
        let source = ecmascript_classes(&source);
        let regex = Regex::new(&source).map_err(|e| format!("pattern {pattern:?}: {e}"))?;
        Ok(Pattern { regex, collapsed })
    }

    /// Splits each chunk of `offsets` at the pattern's matches: matched
    /// words and the text between them, in order, as code point counts.
    pub(crate) fn split(&self, cpts: &[u32], offsets: &[usize]) -> Vec<usize> {
        let text: String = cpts
            .iter()
            .map(|&c| {
                if c < 0x80 {
                    return char::from(c as u8);
                }
                let f = flags(c);
                if f.is_whitespace() {
                    '\u{b}'
                } else if self.collapsed {
                    marker(f.category())
                } else {
                    char::from_u32(c).unwrap_or('\u{FFFD}')
                }
            })
            .collect();
        // Each chunk's bytes, found by walking the text once (a table of
        // every code point's offset would cost 8 bytes per code point).
        let mut out = Vec::with_capacity(offsets.len());
        let mut chars = text.char_indices();
        let mut start_byte = 0;
        for &len in offsets {
            let end_byte = if len == 0 {
                start_byte
            } else {
                chars.nth(len - 1);
                chars.offset()
            };
            self.split_chunk(&text[start_byte..end_byte], &mut out);
            start_byte = end_byte;
        }
        out
    }

    /// llama.cpp's loop over `std::regex_iterator`: the gap before each
    /// match, the match (even empty), and what is left at the end.
    fn split_chunk(&self, chunk: &str, out: &mut Vec<usize>) {
        let count = |s: &str| s.chars().count();
        let mut last = 0;
        let mut pos = 0;
        while pos <= chunk.len() {
            // A pattern of our table cannot fail at run time except on
            // fancy-regex's backtrack limit; the rest of the chunk then
            // stays one word.
            let Ok(Some(m)) = self.regex.find_from_pos(chunk, pos) else {
                break;
            };
            if m.start() > last {
                out.push(count(&chunk[last..m.start()]));
            }
            out.push(count(m.as_str()));
            last = m.end();
            pos = if m.end() > m.start() {
                m.end()
            } else {
                // After an empty match, go on from the next character.
                match chunk[m.end()..].chars().next() {
                    Some(ch) => m.end() + ch.len_utf8(),
                    None => break,
                }
            };
        }
        if last < chunk.len() {
            out.push(count(&chunk[last..]));
        }
    }
}

/// llama.cpp's rewrite of a pattern for the collapsed text: each category
/// becomes its marker and ASCII members, inside a class or as a class.
fn collapse_pattern(pattern: &str) -> String {
    let bytes = pattern.as_bytes();
    let mut out = String::with_capacity(pattern.len() * 2);
    let mut inside = false;
    let mut i = 0;
    while i < bytes.len() {
        let escaped = i > 0 && bytes[i - 1] == b'\\';
        if bytes[i] == b'[' && !escaped {
            out.push('[');
            inside = true;
            i += 1;
            continue;
        }
        if inside && bytes[i] == b']' && !escaped {
            out.push(']');
            inside = false;
            i += 1;
            continue;
        }
        if let Some(&(name, category)) = CATEGORIES
            .iter()
            .find(|(name, _)| pattern[i..].starts_with(name))
        {
            if !inside {
                out.push('[');
            }
            out.push(marker(category));
            out.push_str(ascii_members(category));
            if !inside {
                out.push(']');
            }
            i += name.len();
            continue;
        }
        // Patterns with categories are ASCII (llama.cpp refuses others),
        // so a byte is a character here.
        out.push(char::from(bytes[i]));
        i += 1;
    }
    out
}

/// ECMAScript's `\d` and `\w` are ASCII; the Rust engine's are Unicode.
/// Also escapes what the Rust engine would read as class syntax.
/// Rewrites them (in and out of classes) to their ASCII sets. `\s` needs
/// no rewrite: the texts hold no whitespace beyond ASCII.
fn ecmascript_classes(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut inside = false;
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(next) = chars.next() else {
                    out.push(c);
                    break;
                };
                let (in_class, as_class) = match next {
                    'd' => ("0-9", "[0-9]"),
                    'D' => ("", "[^0-9]"),
                    'w' => ("0-9A-Za-z_", "[0-9A-Za-z_]"),
                    'W' => ("", "[^0-9A-Za-z_]"),
                    _ => {
                        out.push(c);
                        out.push(next);
                        continue;
                    }
                };
                if inside && !in_class.is_empty() {
                    out.push_str(in_class);
                } else if !inside {
                    out.push_str(as_class);
                } else {
                    // A negated shorthand inside a class: none of our patterns.
                    out.push(c);
                    out.push(next);
                }
            }
            '[' if !inside => {
                inside = true;
                out.push(c);
            }
            ']' if inside => {
                inside = false;
                out.push(c);
            }
            // Inside a class the Rust engine reads `[` as a nested class
            // and `&&`, `~~` as set operations; ECMAScript reads literals.
            '[' | '&' | '~' if inside => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(pattern: &str, text: &str) -> Vec<String> {
        let p = Pattern::new(pattern).unwrap();
        let cpts: Vec<u32> = text.chars().map(u32::from).collect();
        let mut start = 0;
        p.split(&cpts, &[cpts.len()])
            .into_iter()
            .map(|len| {
                let w: String = text.chars().skip(start).take(len).collect();
                start += len;
                w
            })
            .collect()
    }

    #[test]
    fn collapsed_categories() {
        assert_eq!(collapse_pattern(r"\p{N}+"), "[\u{D1}0-9]+");
        assert_eq!(collapse_pattern(r"[^\s\p{L}]"), "[^\\s\u{D2}A-Za-z]");
        assert_eq!(words(r"\p{N}+", "ab١٢3c"), ["ab", "١٢3", "c"]);
        assert_eq!(
            words(r"[\p{P}\$\+<=>\^~\|]+", "a+b..c"),
            ["a", "+", "b", "..", "c"]
        );
    }

    #[test]
    fn wide_patterns_and_lookahead() {
        assert_eq!(words("[0-9][0-9][0-9]", "12345"), ["123", "45"]);
        assert_eq!(words(r"\s+(?!\S)|\s+", "a   b"), ["a", "  ", " ", "b"]);
        assert_eq!(words(r"\d+", "1٢3"), ["1", "٢", "3"]);
    }
}

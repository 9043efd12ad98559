//! WordPiece (llama.cpp's `llm_tokenizer_wpm_session`): BERT's normalizer
//! (lowercase, accents stripped, control characters dropped, punctuation
//! and CJK split off), then the longest tokens from the left of each word,
//! which starts with `▁`; a word that cannot be covered is the unknown
//! token.

use super::unicode::{flags, Flags};
use super::Tokenizer;

/// BERT's "Chinese character" ranges, as llama.cpp has them (including
/// the Hugging Face code's 0x2B920 for what should be 0x2B820).
fn is_chinese_char(cpt: u32) -> bool {
    matches!(cpt,
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B920..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

/// The first code point of a character's canonical decomposition
/// (llama.cpp's `unicode_cpts_normalize_nfd` keeps only that one).
fn nfd_first(c: char) -> char {
    // What llama.cpp's Unicode sees as unassigned has no decomposition.
    if flags(u32::from(c)).category() == Flags::UNDEFINED {
        return c;
    }
    let mut first = None;
    unicode_normalization::char::decompose_canonical(c, |d| {
        first.get_or_insert(d);
    });
    first.unwrap_or(c)
}

/// A code point's simple lowercase mapping (UnicodeData's, one code point).
fn lower(c: char) -> char {
    // Nor a lowercase mapping.
    if flags(u32::from(c)).category() == Flags::UNDEFINED {
        return c;
    }
    let mut it = c.to_lowercase();
    match (it.next(), it.next()) {
        (Some(l), None) => l,
        // Only U+0130 lowers to two code points; its simple mapping is `i`.
        _ if c == '\u{130}' => 'i',
        _ => c,
    }
}

/// llama.cpp's `preprocess`: hands `word` each word of the text in turn
/// (never empty), one buffer reused.
fn words(tok: &Tokenizer, text: &str, mut word: impl FnMut(&str)) {
    let mut cur = String::new();
    let mut end_word = |cur: &mut String| {
        if !cur.is_empty() {
            word(cur);
            cur.clear();
        }
    };
    for c in text.chars() {
        let c = if tok.normalizer_strip_accents {
            nfd_first(c)
        } else {
            c
        };
        let cpt = u32::from(c);
        let f = flags(cpt);
        if f.is_whitespace() {
            end_word(&mut cur);
            continue;
        }
        if cpt == 0 || cpt == 0xFFFD || f.category() == Flags::CONTROL {
            continue;
        }
        if tok.normalizer_strip_accents && f.is_mark() {
            continue;
        }
        let c = if tok.normalizer_lowercase {
            lower(c)
        } else {
            c
        };
        let alone = f.category() == Flags::PUNCTUATION
            || (cpt < 0x7F && f.category() == Flags::SYMBOL)
            || is_chinese_char(cpt);
        if alone {
            end_word(&mut cur);
            cur.push(c);
            end_word(&mut cur);
        } else {
            cur.push(c);
        }
    }
    end_word(&mut cur);
}

/// Tokenizes `text` onto `out`, one word at a time.
pub(crate) fn tokenize(tok: &Tokenizer, text: &str, out: &mut Vec<u32>) {
    let max_len = tok.max_token_len;
    let mut word1 = String::new();
    words(tok, text, |word| {
        word1.clear();
        word1.push('\u{2581}');
        word1.push_str(word);
        let n = word1.len();
        let start = out.len();
        let mut i = 0;
        while i < n {
            let mut matched = false;
            let mut j = n.min(i + max_len + 1);
            while j > i {
                if let Some(id) = word1.get(i..j).and_then(|s| tok.token_id(s)) {
                    out.push(id);
                    matched = true;
                    i = j - 1;
                    break;
                }
                j -= 1;
            }
            if !matched {
                out.truncate(start);
                break;
            }
            i += 1;
        }
        if out.len() == start {
            out.extend(tok.specials.unk);
        }
    });
}

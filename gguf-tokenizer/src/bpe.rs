//! Byte-level BPE (llama.cpp's `llm_tokenizer_bpe_session`): split the text
//! into words with the pre-tokenizer, then in each word merge the adjacent
//! pair of lowest merge rank (leftmost first on ties) until none is left.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::error::{Result, TokenizerError};

use super::merge::{merge, push_chars, Symbol, MAX_WORD, NONE};
use super::pre::{Family, Step};
use super::unicode::byte_to_char;
use super::Tokenizer;

/// The pre-tokenizer's words of `text`, as lengths in code points.
fn word_lengths(steps: &[Step], text: &str) -> Vec<usize> {
    let cpts: Vec<u32> = text.chars().map(u32::from).collect();
    let mut offsets = vec![cpts.len()];
    for step in steps {
        offsets = step.split(&cpts, &offsets);
    }
    offsets
}

/// Fragments longer than twice this are pre-tokenized in pieces of about
/// this many bytes, each cut where the pre-tokenizer's words never change.
const CHUNK: usize = 1 << 16;

/// Tokenizes `text` onto `out`, one word at a time (the words are never
/// all held as text at once), a long text in pieces: the pre-tokenizer
/// holds several bytes per byte of what it splits, so memory is bounded by
/// the piece, not the fragment. Spaces become `▁` first when the
/// vocabulary escapes them (piece by piece too: a space is never next to a
/// cut, so the places are the same in the escaped text).
pub(crate) fn tokenize(tok: &Tokenizer, text: &str, out: &mut Vec<u32>) -> Result<()> {
    tokenize_in_pieces(tok, text, CHUNK, out)
}

fn tokenize_in_pieces(tok: &Tokenizer, text: &str, chunk: usize, out: &mut Vec<u32>) -> Result<()> {
    let mut pos = 0;
    loop {
        let end = next_cut(tok.family, text, pos, chunk);
        let piece = &text[pos..end];
        if tok.flags.escape_whitespaces {
            tokenize_piece(tok, &piece.replace(' ', "\u{2581}"), out)?;
        } else {
            tokenize_piece(tok, piece, out)?;
        }
        pos = end;
        if pos >= text.len() {
            return Ok(());
        }
    }
}

/// Where the piece that starts at `pos` ends: the first safe place (see
/// [`safe_cut`]) at least `chunk` bytes on, or the end of the text when
/// there is none or the family's words may cross any place.
fn next_cut(family: Option<Family>, text: &str, pos: usize, chunk: usize) -> usize {
    // SuperBPE's words are whatever lies between runs of digits, line
    // breaks included: no place but a digit's edge is a word boundary.
    if text.len() - pos <= 2 * chunk || matches!(family, None | Some(Family::Superbpe)) {
        return text.len();
    }
    let bytes = text.as_bytes();
    (pos + chunk..text.len())
        .find(|&x| safe_cut(bytes, x))
        .unwrap_or(text.len())
}

/// Whether the words of every pre-tokenizer but SuperBPE's are the same
/// when the text is split at `x` first: `x` is just after a line feed that
/// follows a visible ASCII character and precedes an ASCII letter.
///
/// Why, for each kind of step (the regexes of `pre.rs` and the splitters
/// standing for them): no match takes in both the line feed and the
/// letter (an optional leading character of a word is never `\r` or `\n`,
/// punctuation runs end in line breaks, whitespace runs stop at the
/// letter, `[^\n]+|[\n]+` and `[\r\n]` end there, the digit and CJK
/// runs contain neither). The line feed is one word ending at `x`, or
/// ends the punctuation run before it, or lies between matches: it is
/// never the start of a longer whitespace match, since the character
/// before is not whitespace, so no `\s+(?!\S)` reads past `x` (at the end
/// of the left piece the lookahead would see nothing and take more). The
/// matches that start at or after `x` are found the same from `x` (no
/// pattern looks behind). And a step that leaves `x` inside a word (a
/// stretch between matches) leaves the same words elsewhere, and the next
/// step puts `x` at a boundary (each family ends with one that does).
fn safe_cut(bytes: &[u8], x: usize) -> bool {
    x >= 2
        && x < bytes.len()
        && bytes[x - 1] == b'\n'
        && (0x21..=0x7E).contains(&bytes[x - 2])
        && bytes[x].is_ascii_alphabetic()
}

/// Tokenizes `text` onto `out` whole.
fn tokenize_piece(tok: &Tokenizer, text: &str, out: &mut Vec<u32>) -> Result<()> {
    let lengths = word_lengths(&tok.steps, text);
    let mut key = String::new();
    let mut word = String::new();
    let mut symbols: Vec<Symbol> = Vec::new();
    let mut queue = BinaryHeap::new();
    let mut chars = text
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()));
    let mut start_byte = chars.next().unwrap_or(0);
    for len in lengths {
        // `len` code points from `start_byte`.
        let mut end_byte = start_byte;
        for _ in 0..len {
            end_byte = chars.next().unwrap_or(text.len());
        }
        let raw = &text[start_byte..end_byte];
        start_byte = end_byte;
        word.clear();
        if tok.byte_encode {
            word.extend(raw.bytes().map(byte_to_char));
        } else {
            word.push_str(raw);
        }
        if word.len() > MAX_WORD {
            return Err(TokenizerError::PieceTooLong {
                len: word.len(),
                max: MAX_WORD,
            }
            .into());
        }
        let word = word.as_str();
        symbols.clear();
        let bytes = word.as_bytes();
        let whole = (tok.flags.ignore_merges && tok.token_id(word).is_some())
            || (tok.family == Some(Family::Gemma4)
                && bytes.iter().all(|&b| b == b'\n')
                && tok.token_id(word).is_some());
        if whole {
            symbols.push(Symbol {
                start: 0,
                len: bytes.len() as u32,
                prev: NONE,
                next: NONE,
            });
        } else {
            push_chars(bytes, &mut symbols);
        }
        // The lower rank merges first.
        merge(&mut symbols, &mut queue, |l, r| {
            key.clear();
            key.push_str(&word[l.range()]);
            key.push(' ');
            key.push_str(&word[r.range()]);
            tok.merges.get(key.as_str()).map(|&rank| Reverse(rank))
        });
        for s in symbols.iter().filter(|s| s.len > 0) {
            let piece = &word[s.range()];
            if let Some(id) = tok.token_id(piece) {
                out.push(id);
                continue;
            }
            // Not a token: its bytes, each as a token if there is one
            // (GPT-2 vocabularies: the byte as text, which only ASCII can
            // be; raw UTF-8 ones: `<0xXX>`), silently dropped otherwise.
            for &b in piece.as_bytes() {
                let id = if tok.byte_encode {
                    if b.is_ascii() {
                        tok.token_id(std::str::from_utf8(&[b]).unwrap_or(""))
                    } else {
                        None
                    }
                } else {
                    tok.token_id(&format!("<0x{b:02X}>"))
                };
                out.extend(id);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pre::{self, tests::ALL};
    use gguf_core::format::OwnedValue;

    /// A byte-level BPE vocabulary: every byte, its `<0xXX>` token, and
    /// random merges of what is already there.
    fn random_vocab(next: &mut impl FnMut(u64) -> u64) -> Tokenizer {
        let mut texts: Vec<String> = (0..=255u8).map(|b| byte_to_char(b).to_string()).collect();
        texts.extend((0..=255u8).map(|b| format!("<0x{b:02X}>")));
        for c in ['a', 'b', 'Z', 's', 'é', '中', '\u{2581}'] {
            texts.push(c.to_string());
        }
        let mut merges = Vec::new();
        // Merge among the ASCII letters, digits, space and newline ones
        // and what they made.
        let mut pool: Vec<String> = "abZst12 \n'."
            .chars()
            .map(|c| byte_to_char(c as u8).to_string())
            .collect();
        for _ in 0..next(80) {
            let l = pool[next(pool.len() as u64) as usize].clone();
            let r = pool[next(pool.len() as u64) as usize].clone();
            let m = format!("{l}{r}");
            if texts.contains(&m) {
                continue;
            }
            merges.push(format!("{l} {r}"));
            texts.push(m.clone());
            pool.push(m);
        }
        let n = texts.len();
        let mut b = gguf_core::write::Builder::new();
        b.set("tokenizer.ggml.model", "gpt2").unwrap();
        b.set("tokenizer.ggml.pre", "gpt-2").unwrap();
        b.set("tokenizer.ggml.tokens", OwnedValue::from(texts))
            .unwrap();
        b.set("tokenizer.ggml.merges", OwnedValue::from(merges))
            .unwrap();
        b.set("tokenizer.ggml.token_type", OwnedValue::from(vec![1i32; n]))
            .unwrap();
        Tokenizer::from_model(&b.preview().unwrap()).unwrap()
    }

    /// The words of `text`, pre-tokenized whole or in pieces of `chunk`.
    fn words(tok: &Tokenizer, text: &str, chunk: usize) -> Vec<String> {
        let mut words = Vec::new();
        let mut pos = 0;
        while pos < text.len() {
            let end = next_cut(tok.family, text, pos, chunk);
            let mut chars = text[pos..end].chars();
            for len in word_lengths(&tok.steps, &text[pos..end]) {
                words.push(chars.by_ref().take(len).collect());
            }
            pos = end;
        }
        words
    }

    /// For every pre-tokenizer, random texts split at the safe places give
    /// the words and ids of the whole text.
    #[test]
    fn pieces_give_the_words_and_ids_of_the_whole() {
        let mut next = gguf_core::testing::random_below(0x9E37_79B9_7F4A_7C15u64);
        let alphabet: Vec<&str> = vec![
            "a", "b", "Z", "s", "t", "x", " ", "  ", "\n", "\n", "\n", "\r\n", "\r", "\t", "1",
            "2", "345", "'", "'s", "'LL", ".", "/", ",", "!", "-", "_", "(", "é", "e\u{301}", "中",
            "文", "한", "ア", "\u{2581}", "\u{a0}", "\u{3000}", "٣", "…", "$", "+", "<",
            "sentinel", "IMGIMGAZ", "    ",
        ];
        let mut tok = random_vocab(&mut next);
        for &family in ALL {
            tok.family = Some(family);
            tok.steps = pre::patterns(family)
                .iter()
                .map(|p| Step::new(p).unwrap())
                .collect();
            tok.byte_encode = pre::byte_encode(family);
            tok.flags.escape_whitespaces = matches!(family, Family::Gemma4 | Family::SarvamMoe);
            let mut cuts = 0;
            for _ in 0..40 {
                let len = 20 + next(200) as usize;
                let text: String = (0..len)
                    .map(|_| alphabet[next(alphabet.len() as u64) as usize])
                    .collect();
                assert_eq!(
                    words(&tok, &text, 8),
                    words(&tok, &text, usize::MAX / 4),
                    "{family:?}: {text:?}"
                );
                let mut whole = Vec::new();
                tokenize_in_pieces(&tok, &text, usize::MAX / 4, &mut whole).unwrap();
                let mut pieces = Vec::new();
                tokenize_in_pieces(&tok, &text, 8, &mut pieces).unwrap();
                assert_eq!(pieces, whole, "{family:?}: {text:?}");
                cuts += usize::from(next_cut(tok.family, &text, 0, 8) < text.len());
            }
            if family == Family::Superbpe {
                assert_eq!(cuts, 0);
            } else {
                assert!(
                    cuts > 10,
                    "{family:?}: {cuts} texts cut, the test tests little"
                );
            }
        }
    }

    #[test]
    fn safe_places() {
        let at = |s: &str| {
            let x = s.find('|').unwrap();
            let t = s.replace('|', "");
            safe_cut(t.as_bytes(), x)
        };
        assert!(at("a;\n|b"));
        assert!(at("a\n|Bc"));
        // Whitespace before the line feed: `\s+(?!\S)` would take it along
        // at the end of the left piece.
        assert!(!at("a \n|b"));
        assert!(!at("a\n\n|b"));
        assert!(!at("a\n| b"));
        assert!(!at("a\n|1"));
        assert!(!at("é\n|b"));
        assert!(!at("a\r\n|b"));
        assert!(!at("|a"));
    }
}

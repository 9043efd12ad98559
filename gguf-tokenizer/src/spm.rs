//! SentencePiece BPE (llama.cpp's `llm_tokenizer_spm_session`): start from
//! single characters, merge the adjacent pair whose merged text is the
//! highest-scoring token (leftmost first on ties) until no pair is a token,
//! then fall back to byte tokens for what is left.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::error::{Result, TokenizerError};

use super::merge::{merge, push_chars, Symbol, MAX_WORD, NONE};
use super::Tokenizer;

/// A merged token's score as a merge priority: the higher first; equal or
/// unordered (NaN) scores are ties, left to position as llama.cpp's
/// comparator leaves them.
struct Score(f32);

impl PartialEq for Score {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Score {}
impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Score {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.partial_cmp(&other.0).unwrap_or(Ordering::Equal)
    }
}

/// Tokenizes `text` (spaces already escaped) onto `out`.
pub(crate) fn tokenize(tok: &Tokenizer, text: &str, out: &mut Vec<u32>) -> Result<()> {
    if text.len() > MAX_WORD {
        return Err(TokenizerError::PieceTooLong {
            len: text.len(),
            max: MAX_WORD,
        }
        .into());
    }
    let mut symbols: Vec<Symbol> = Vec::with_capacity(text.len());
    push_chars(text.as_bytes(), &mut symbols);
    merge(&mut symbols, &mut BinaryHeap::new(), |l, r| {
        let merged = text.get(l.start as usize..(l.start + l.len + r.len) as usize)?;
        let id = tok.token_id(merged)?;
        Some(Score(tok.tokens[id as usize].score))
    });
    let mut i = if symbols.is_empty() { NONE } else { 0 };
    while i != NONE {
        let s = symbols[i as usize];
        let piece = &text[s.range()];
        match tok.token_id(piece) {
            Some(id) => out.push(id),
            // Merges only make tokens, so what is not a token is one
            // character: its bytes.
            None => {
                for &b in piece.as_bytes() {
                    out.push(tok.byte_token(b)?);
                }
            }
        }
        i = s.next;
    }
    Ok(())
}

/// Fragments longer than twice this are tokenized in pieces of about this
/// many bytes, each cut where no token of the vocabulary spans the cut.
const CHUNK: usize = 1 << 16;

/// Places tried in each `CHUNK` bytes before a piece is let grow by
/// another `CHUNK`.
const TRIES: usize = 32;

/// Tokenizes one text fragment onto `out`: spaces escaped, `▁` put first
/// when `prefix`.
///
/// Merges only ever make tokens, so where no token of the vocabulary spans
/// a place of the text, no merge crosses it: the text on either side
/// merges the same alone (each side's pairs are queued in the same order,
/// the other side's never compete with them). A long fragment is cut at
/// such places, and memory is bounded by the piece, not the fragment.
pub(crate) fn tokenize_fragment(
    tok: &Tokenizer,
    text: &str,
    prefix: bool,
    out: &mut Vec<u32>,
) -> Result<()> {
    tokenize_in_pieces(tok, text, prefix, CHUNK, out)
}

fn tokenize_in_pieces(
    tok: &Tokenizer,
    text: &str,
    prefix: bool,
    chunk: usize,
    out: &mut Vec<u32>,
) -> Result<()> {
    let mut piece = String::new();
    let mut pos = 0;
    loop {
        let end = next_cut(tok, text, pos, chunk);
        piece.clear();
        if pos == 0 && prefix {
            piece.push('\u{2581}');
        }
        piece.extend(
            text[pos..end]
                .chars()
                .map(|c| if c == ' ' { '\u{2581}' } else { c }),
        );
        tokenize(tok, &piece, out)?;
        pos = end;
        if pos >= text.len() {
            return Ok(());
        }
    }
}

/// Where the piece that starts at `pos` ends: a place at least `chunk`
/// bytes on that no token spans, or the end of the text.
fn next_cut(tok: &Tokenizer, text: &str, pos: usize, chunk: usize) -> usize {
    let bytes = text.as_bytes();
    // A vocabulary with a token as long as a piece is not cut.
    if text.len() - pos <= 2 * chunk || tok.max_token_len * 4 > chunk {
        return text.len();
    }
    let mut window = pos + chunk;
    while window + chunk < text.len() {
        let window_end = window + chunk;
        // Before a space first (SentencePiece words start there), then
        // places spread over the window.
        let spaces = (window..window_end).filter(|&x| bytes[x] == b' ');
        let spread = (0..TRIES / 2).map(|k| window + k * (chunk / (TRIES / 2)));
        for x in spaces.take(TRIES / 2).chain(spread) {
            if text.is_char_boundary(x) && no_token_spans(tok, text, x) {
                return x;
            }
        }
        window = window_end;
    }
    text.len()
}

/// Whether no token of the vocabulary covers both the byte before `x` and
/// the byte at `x` of the escaped text.
fn no_token_spans(tok: &Tokenizer, text: &str, x: usize) -> bool {
    let max = tok.max_token_len;
    let floor = |mut i: usize| {
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let ceil = |mut i: usize| {
        while !text.is_char_boundary(i) {
            i += 1;
        }
        i
    };
    // Escaping only lengthens the text, so `max` bytes of it on each side
    // hold every token that could cover `x`.
    let lo = floor(x.saturating_sub(max));
    let hi = ceil((x + max).min(text.len()));
    let escape = |s: &str| -> String {
        s.chars()
            .map(|c| if c == ' ' { '\u{2581}' } else { c })
            .collect()
    };
    let left = escape(&text[lo..x]);
    let window = left.clone() + &escape(&text[x..hi]);
    let cut = left.len();
    let starts = window[..cut].char_indices().map(|(i, _)| i);
    for i in starts.filter(|&i| cut - i < max) {
        let ends = window[cut..]
            .char_indices()
            .map(|(j, c)| cut + j + c.len_utf8());
        for j in ends.take_while(|&j| j - i <= max) {
            if tok.token_id(&window[i..j]).is_some() {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use gguf_core::format::OwnedValue;

    /// A SentencePiece vocabulary of random short tokens over a few
    /// characters, with random scores and byte tokens for fallback.
    fn random_vocab(next: &mut impl FnMut(u64) -> u64) -> Tokenizer {
        let alphabet = ['a', 'b', 'c', '\u{2581}', 'é'];
        let mut texts: Vec<String> = vec!["<unk>".into(), "<s>".into(), "</s>".into()];
        let mut types = vec![2i32, 3, 3];
        for b in 0..=255u8 {
            texts.push(format!("<0x{b:02X}>"));
            types.push(6);
        }
        for c in alphabet {
            texts.push(c.to_string());
            types.push(1);
        }
        for _ in 0..next(60) {
            let len = 2 + next(4);
            texts.push(
                (0..len)
                    .map(|_| alphabet[next(alphabet.len() as u64) as usize])
                    .collect(),
            );
            types.push(1);
        }
        let scores: Vec<f32> = (0..texts.len())
            .map(|_| -(next(1000) as f32) / 100.0)
            .collect();
        let mut b = gguf_core::write::Builder::new();
        b.set("tokenizer.ggml.model", "llama").unwrap();
        b.set("tokenizer.ggml.tokens", OwnedValue::from(texts))
            .unwrap();
        b.set("tokenizer.ggml.scores", OwnedValue::from(scores))
            .unwrap();
        b.set("tokenizer.ggml.token_type", OwnedValue::from(types))
            .unwrap();
        Tokenizer::from_model(&b.preview().unwrap()).unwrap()
    }

    /// Long random texts tokenized in small pieces give the ids of the
    /// whole text tokenized at once.
    #[test]
    fn pieces_give_the_ids_of_the_whole() {
        let mut next = gguf_core::testing::random_below(0x2545_F491_4F6C_DD1Du64);
        let alphabet = ['a', 'b', 'c', ' ', 'é', 'x'];
        let mut cut_somewhere = false;
        for _ in 0..60 {
            let tok = random_vocab(&mut next);
            for _ in 0..4 {
                let len = 200 + next(3000) as usize;
                let text: String = (0..len)
                    .map(|_| alphabet[next(alphabet.len() as u64) as usize])
                    .collect();
                let prefix = next(2) == 0;
                let mut whole = Vec::new();
                tokenize_in_pieces(&tok, &text, prefix, usize::MAX / 4, &mut whole).unwrap();
                let mut pieces = Vec::new();
                tokenize_in_pieces(&tok, &text, prefix, 64, &mut pieces).unwrap();
                assert_eq!(pieces, whole, "{text:?}");
                cut_somewhere |= next_cut(&tok, &text, 0, 64) < text.len();
            }
        }
        assert!(cut_somewhere, "no text was cut: the test tests nothing");
    }

    #[test]
    fn a_token_across_the_place_forbids_the_cut() {
        let mut b = gguf_core::write::Builder::new();
        let texts = vec!["<unk>", "a", "b", "ab", "\u{2581}", "b\u{2581}"];
        b.set("tokenizer.ggml.model", "llama").unwrap();
        b.set("tokenizer.ggml.tokens", OwnedValue::from(texts))
            .unwrap();
        b.set("tokenizer.ggml.scores", OwnedValue::from(vec![0f32; 6]))
            .unwrap();
        b.set(
            "tokenizer.ggml.token_type",
            OwnedValue::from(vec![2i32, 1, 1, 1, 1, 1]),
        )
        .unwrap();
        let tok = Tokenizer::from_model(&b.preview().unwrap()).unwrap();
        let text = "aab bba";
        assert!(!no_token_spans(&tok, text, 2)); // a|b: "ab"
        assert!(!no_token_spans(&tok, text, 3)); // b|▁: "b▁"
        assert!(no_token_spans(&tok, text, 1)); // a|a
        assert!(no_token_spans(&tok, text, 4)); // ▁|b
    }
}

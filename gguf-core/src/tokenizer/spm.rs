//! SentencePiece BPE (llama.cpp's `llm_tokenizer_spm_session`): start from
//! single characters, merge the adjacent pair whose merged text is the
//! highest-scoring token (leftmost first on ties) until no pair is a token,
//! then fall back to byte tokens for what is left.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::error::Result;

use super::merge::{merge, push_chars, Symbol};
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
    let mut symbols: Vec<Symbol> = Vec::with_capacity(text.len());
    push_chars(text.as_bytes(), &mut symbols);
    merge(&mut symbols, &mut BinaryHeap::new(), |l, r| {
        let merged = text.get(l.start..l.start + l.len + r.len)?;
        let id = tok.token_id(merged)?;
        Some(Score(tok.tokens[id as usize].score))
    });
    let mut i: isize = if symbols.is_empty() { -1 } else { 0 };
    while i >= 0 {
        let s = symbols[i as usize];
        let piece = &text[s.start..s.start + s.len];
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

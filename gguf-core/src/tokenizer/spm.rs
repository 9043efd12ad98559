//! SentencePiece BPE (llama.cpp's `llm_tokenizer_spm_session`): start from
//! single characters, merge the adjacent pair whose merged text is the
//! highest-scoring token (leftmost first on ties) until no pair is a token,
//! then fall back to byte tokens for what is left.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::error::Result;

use super::unicode::utf8_len;
use super::Tokenizer;

#[derive(Clone, Copy)]
struct Symbol {
    prev: isize,
    next: isize,
    start: usize,
    len: usize,
}

struct Bigram {
    left: usize,
    right: usize,
    score: f32,
    size: usize,
}

impl PartialEq for Bigram {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Bigram {}
impl PartialOrd for Bigram {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Bigram {
    /// The greatest is popped first: the higher score, then the leftmost
    /// (equal or unordered scores compare by position, as llama.cpp's
    /// comparator does).
    fn cmp(&self, other: &Self) -> Ordering {
        if self.score < other.score {
            Ordering::Less
        } else if self.score > other.score {
            Ordering::Greater
        } else {
            other.left.cmp(&self.left)
        }
    }
}

/// Tokenizes `text` (spaces already escaped) onto `out`.
pub(crate) fn tokenize(tok: &Tokenizer, text: &str, out: &mut Vec<u32>) -> Result<()> {
    let bytes = text.as_bytes();
    let mut symbols: Vec<Symbol> = Vec::with_capacity(text.len());
    let mut offs = 0;
    while offs < bytes.len() {
        let len = utf8_len(bytes[offs]).min(bytes.len() - offs);
        let index = symbols.len() as isize;
        offs += len;
        symbols.push(Symbol {
            prev: index - 1,
            next: if offs == bytes.len() { -1 } else { index + 1 },
            start: offs - len,
            len,
        });
    }
    let mut queue = BinaryHeap::new();
    let try_add =
        |symbols: &[Symbol], queue: &mut BinaryHeap<Bigram>, left: isize, right: isize| {
            if left < 0 || right < 0 {
                return;
            }
            let (l, r) = (symbols[left as usize], symbols[right as usize]);
            let Some(merged) = text.get(l.start..l.start + l.len + r.len) else {
                return;
            };
            if let Some(id) = tok.token_id(merged) {
                queue.push(Bigram {
                    left: left as usize,
                    right: right as usize,
                    score: tok.tokens[id as usize].score,
                    size: merged.len(),
                });
            }
        };
    for i in 1..symbols.len() {
        try_add(&symbols, &mut queue, i as isize - 1, i as isize);
    }
    while let Some(b) = queue.pop() {
        let (l, r) = (symbols[b.left], symbols[b.right]);
        if l.len == 0 || r.len == 0 || l.len + r.len != b.size {
            continue;
        }
        symbols[b.left].len += r.len;
        symbols[b.right].len = 0;
        symbols[b.left].next = r.next;
        if r.next >= 0 {
            symbols[r.next as usize].prev = b.left as isize;
        }
        let prev = symbols[b.left].prev;
        let next = symbols[b.left].next;
        try_add(&symbols, &mut queue, prev, b.left as isize);
        try_add(&symbols, &mut queue, b.left as isize, next);
    }
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

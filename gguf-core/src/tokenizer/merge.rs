//! The merge loop both BPE flavours share (llama.cpp's spm and bpe
//! sessions): a word starts as one symbol per character, and the adjacent
//! pair with the best priority is merged, leftmost first on ties, until
//! no pair has one. The flavours differ only in the priority: SentencePiece
//! takes the merged token's score, GPT-2 BPE the merge's rank.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::unicode::utf8_len;

/// A run of bytes of the word, linked to its neighbours (`-1`: none). A
/// merged-away symbol keeps its place with `len` 0.
#[derive(Clone, Copy)]
pub(super) struct Symbol {
    pub(super) start: usize,
    pub(super) len: usize,
    pub(super) prev: isize,
    pub(super) next: isize,
}

/// A candidate merge of `left` and `right`; `size` is their length when it
/// was queued, so that a pair changed since is recognised and skipped.
pub(super) struct Bigram<P> {
    left: usize,
    right: usize,
    priority: P,
    size: usize,
}

impl<P: Ord> PartialEq for Bigram<P> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl<P: Ord> Eq for Bigram<P> {}
impl<P: Ord> PartialOrd for Bigram<P> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<P: Ord> Ord for Bigram<P> {
    /// The greatest is popped first: the better priority, then the
    /// leftmost.
    fn cmp(&self, other: &Self) -> Ordering {
        self.priority
            .cmp(&other.priority)
            .then(other.left.cmp(&self.left))
    }
}

/// Appends one symbol per UTF-8 character of `bytes` (a truncated sequence
/// at the end is one symbol) to the empty `symbols`, each linked to its
/// neighbours.
pub(super) fn push_chars(bytes: &[u8], symbols: &mut Vec<Symbol>) {
    let mut offset = 0;
    while offset < bytes.len() {
        let len = utf8_len(bytes[offset]).min(bytes.len() - offset);
        let index = symbols.len() as isize;
        offset += len;
        symbols.push(Symbol {
            start: offset - len,
            len,
            prev: index - 1,
            next: if offset == bytes.len() { -1 } else { index + 1 },
        });
    }
}

/// Merges `symbols` in place: `priority(left, right)` says whether the
/// pair may merge and how good that is (greater is better). `queue` is
/// scratch space, cleared first.
pub(super) fn merge<P: Ord>(
    symbols: &mut [Symbol],
    queue: &mut BinaryHeap<Bigram<P>>,
    mut priority: impl FnMut(Symbol, Symbol) -> Option<P>,
) {
    queue.clear();
    let mut add =
        |symbols: &[Symbol], queue: &mut BinaryHeap<Bigram<P>>, left: isize, right: isize| {
            if left < 0 || right < 0 {
                return;
            }
            let (l, r) = (symbols[left as usize], symbols[right as usize]);
            if let Some(priority) = priority(l, r) {
                queue.push(Bigram {
                    left: left as usize,
                    right: right as usize,
                    priority,
                    size: l.len + r.len,
                });
            }
        };
    for i in 1..symbols.len() {
        add(symbols, queue, i as isize - 1, i as isize);
    }
    while let Some(b) = queue.pop() {
        let (l, r) = (symbols[b.left], symbols[b.right]);
        // Outdated: one side merged since (the left one keeps its start,
        // so equal lengths mean the same text).
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
        add(symbols, queue, prev, b.left as isize);
        add(symbols, queue, b.left as isize, next);
    }
}

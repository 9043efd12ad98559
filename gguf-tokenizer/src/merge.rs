//! The merge loop both BPE flavours share (llama.cpp's spm and bpe
//! sessions): a word starts as one symbol per character, and the adjacent
//! pair with the best priority is merged, leftmost first on ties, until
//! no pair has one. The flavours differ only in the priority: SentencePiece
//! takes the merged token's score, GPT-2 BPE the merge's rank.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::unicode::utf8_len;

/// No neighbour.
pub(super) const NONE: u32 = u32::MAX;

/// The longest word the merge takes: offsets and links are 32-bit (half
/// the memory of a long word's symbols and queue).
pub(super) const MAX_WORD: usize = u32::MAX as usize - 1;

/// A run of bytes of the word, linked to its neighbours ([`NONE`]: none).
/// A merged-away symbol keeps its place with `len` 0.
#[derive(Clone, Copy)]
pub(super) struct Symbol {
    pub(super) start: u32,
    pub(super) len: u32,
    pub(super) prev: u32,
    pub(super) next: u32,
}

impl Symbol {
    /// The symbol's bytes in `word`.
    pub(super) fn range(self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// A candidate merge of `left` and `right`; `size` is their length when it
/// was queued, so that a pair changed since is recognised and skipped.
pub(super) struct Bigram<P> {
    left: u32,
    right: u32,
    priority: P,
    size: u32,
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
/// neighbours. `bytes` is at most [`MAX_WORD`] long (the callers check).
pub(super) fn push_chars(bytes: &[u8], symbols: &mut Vec<Symbol>) {
    debug_assert!(bytes.len() <= MAX_WORD);
    let mut offset = 0;
    while offset < bytes.len() {
        let len = utf8_len(bytes[offset]).min(bytes.len() - offset);
        let index = symbols.len() as u32;
        offset += len;
        symbols.push(Symbol {
            start: (offset - len) as u32,
            len: len as u32,
            prev: index.checked_sub(1).unwrap_or(NONE),
            next: if offset == bytes.len() {
                NONE
            } else {
                index + 1
            },
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
    let mut add = |symbols: &[Symbol], queue: &mut BinaryHeap<Bigram<P>>, left: u32, right: u32| {
        if left == NONE || right == NONE {
            return;
        }
        let (l, r) = (symbols[left as usize], symbols[right as usize]);
        if let Some(priority) = priority(l, r) {
            queue.push(Bigram {
                left,
                right,
                priority,
                size: l.len + r.len,
            });
        }
    };
    for i in 1..symbols.len() as u32 {
        add(symbols, queue, i - 1, i);
    }
    while let Some(b) = queue.pop() {
        let (l, r) = (symbols[b.left as usize], symbols[b.right as usize]);
        // Outdated: one side merged since (the left one keeps its start,
        // so equal lengths mean the same text).
        if l.len == 0 || r.len == 0 || l.len + r.len != b.size {
            continue;
        }
        let left = &mut symbols[b.left as usize];
        left.len += r.len;
        left.next = r.next;
        let (prev, next) = (left.prev, left.next);
        symbols[b.right as usize].len = 0;
        if next != NONE {
            symbols[next as usize].prev = b.left;
        }
        add(symbols, queue, prev, b.left);
        add(symbols, queue, b.left, next);
    }
}
